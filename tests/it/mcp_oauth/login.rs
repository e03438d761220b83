//! Logging in: discovery, registration and authorization with the token reaching only its
//! server, a token endpoint that hangs, a 2025-03-26 server's metadata, an authorization URL
//! that sends the browser elsewhere.

use crate::support;

use std::os::unix::fs::PermissionsExt;

use serde_json::Value;
use support::{Reply, ScriptedServer};

use super::{call_whoami, home_allowing, home_for, login, rein, run, text, Fake, Fault, TOKEN};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_discovers_registers_authorizes_and_the_token_reaches_only_its_server() {
    let fake = Fake::start(Fault::None).await;
    let home = home_for(&fake, "");
    let project = tempfile::tempdir().unwrap();

    // Before the login: the server needs one, and print mode says what to run.
    let model = ScriptedServer::start(vec![Reply::text("Nothing to call yet.")])
        .await
        .unwrap();
    let mut headless = rein(home.path(), project.path());
    headless.args(["--base-url", &model.base_url(), "--model", "m", "-p", "hi"]);
    let out = run(headless).await;
    assert!(
        text(&out.stderr)
            .contains("MCP server docs needs a login (OAuth); run `rein mcp login docs`"),
        "{}",
        text(&out.stderr)
    );

    let mut login = rein(home.path(), project.path());
    login.args(["mcp", "login", "docs"]);
    let out = run(login).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("logged in to docs"),
        "{}",
        text(&out.stdout)
    );
    // The URL is always printed.
    assert!(
        text(&out.stderr).contains("/authorize?"),
        "{}",
        text(&out.stderr)
    );

    let registered: Value = serde_json::from_str(&fake.seen("/register")[0].body).unwrap();
    let redirect = registered["redirect_uris"][0].as_str().unwrap().to_string();
    assert!(redirect.starts_with("http://127.0.0.1:"), "{redirect}");
    let authorize = &fake.seen("/authorize")[0];
    assert_eq!(authorize.query["code_challenge_method"], "S256");
    assert_eq!(authorize.query["resource"], fake.url());
    assert_eq!(authorize.query["client_id"], "client-fake");
    assert_eq!(authorize.query["redirect_uri"], redirect);
    let token = &fake.seen("/oauth/token")[0];
    assert_eq!(token.method, "POST");
    assert!(token.body.contains("code=code-fake"), "{}", token.body);
    assert!(token.body.contains("code_verifier="), "{}", token.body);
    assert!(token.body.contains("resource="), "{}", token.body);

    // The token is kept private, with the URL it is for, and nowhere in the config.
    let file = home.path().join("rein-home/mcp-oauth/docs.json");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let kept = std::fs::read_to_string(&file).unwrap();
    assert!(kept.contains(TOKEN) && kept.contains(&fake.url()));
    let config = std::fs::read_to_string(home.path().join("rein-home/config.toml")).unwrap();
    assert!(!config.contains(TOKEN));

    // Connected with it.
    let mut list = rein(home.path(), project.path());
    list.args(["mcp", "list"]);
    let out = run(list).await;
    assert!(
        text(&out.stdout).contains("docs: ready, 1 tool"),
        "{}",
        text(&out.stdout)
    );
    assert!(text(&out.stdout).contains("mcp__docs__whoami"));
    assert!(fake
        .seen("/mcp")
        .iter()
        .any(|s| s.headers.get("authorization") == Some(&format!("Bearer {TOKEN}"))));

    // The same name at another URL gets no token: nothing is sent to another host.
    let other = Fake::start(Fault::None).await;
    std::fs::write(
        home.path().join("rein-home/config.toml"),
        format!("[mcp_servers.docs]\nurl = \"{}\"\n", other.url()),
    )
    .unwrap();
    let mut list = rein(home.path(), project.path());
    list.args(["mcp", "list"]);
    let out = run(list).await;
    assert!(
        text(&out.stdout).contains("docs: needs login"),
        "{}",
        text(&out.stdout)
    );
    assert!(other
        .seen("/mcp")
        .iter()
        .all(|s| !s.headers.contains_key("authorization")));

    // Logging out forgets it.
    std::fs::write(
        home.path().join("rein-home/config.toml"),
        format!("[mcp_servers.docs]\nurl = \"{}\"\n", fake.url()),
    )
    .unwrap();
    let mut logout = rein(home.path(), project.path());
    logout.args(["mcp", "logout", "docs"]);
    let out = run(logout).await;
    assert!(
        text(&out.stdout).contains("logged out of docs"),
        "{}",
        text(&out.stdout)
    );
    assert!(!file.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_endpoint_that_hangs_fails_the_login_within_the_servers_timeout() {
    let fake = Fake::start(Fault::HangingToken).await;
    let home = home_for(&fake, "startup_timeout_secs = 2\n");
    let project = tempfile::tempdir().unwrap();
    let mut login = rein(home.path(), project.path());
    login.args(["mcp", "login", "docs"]);
    let out = run(login).await;
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("exchanging the authorization code for a token: the authorization server did not answer within 2 s"),
        "{stderr}"
    );
    assert_eq!(fake.seen("/oauth/token").len(), 1);
    assert!(
        !home.path().join("rein-home/mcp-oauth/docs.json").exists()
            || !std::fs::read_to_string(home.path().join("rein-home/mcp-oauth/docs.json"))
                .unwrap()
                .contains(TOKEN)
    );
}

/// RFC 8414 §3.3 wants the metadata's issuer to be the one its URL was made from; a
/// 2025-03-26 server's root metadata naming an issuer under a path of its own origin is
/// taken (nobody else can have written it), one naming another origin is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_03_26_servers_root_metadata_may_name_an_issuer_of_its_own_origin_only() {
    let fake = Fake::start(Fault::Legacy).await;
    let home = home_allowing(&fake);
    let project = tempfile::tempdir().unwrap();
    login(home.path(), project.path()).await;
    let kept: Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join("rein-home/mcp-oauth/docs.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        kept["credentials"]["issuer"],
        format!("http://127.0.0.1:{}/as1", fake.port)
    );
    // A reconnection discovers the same way and finds the same issuer.
    let (out, _model) = call_whoami(home.path(), project.path(), 1).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(fake.grants("authorization_code").len(), 1, "one login");

    let foreign = Fake::start(Fault::LegacyForeign).await;
    let home = home_for(&foreign, "");
    let mut login = rein(home.path(), project.path());
    login.args(["mcp", "login", "docs"]);
    let out = run(login).await;
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "its metadata names the issuer https://as.example/as1, not http://127.0.0.1:"
        ),
        "{stderr}"
    );
    assert!(foreign.seen("/register").is_empty());
    assert!(foreign.seen("/authorize").is_empty());

    // The same server whose root metadata, read again by rein itself, is 300 KB: over
    // what rein reads of one, so refused, before any registration.
    let huge = Fake::start(Fault::LegacyHuge).await;
    let home = home_for(&huge, "");
    let mut login = rein(home.path(), project.path());
    login.args(["mcp", "login", "docs"]);
    let out = run(login).await;
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("(RFC 8414 §3.3)"), "{stderr}");
    assert!(huge.seen("/.well-known/oauth-authorization-server").len() >= 2);
    assert!(huge.seen("/register").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authorization_url_that_sends_the_browser_elsewhere_is_refused() {
    let fake = Fake::start(Fault::ForeignRedirect).await;
    let home = home_for(&fake, "");
    let project = tempfile::tempdir().unwrap();
    let mut login = rein(home.path(), project.path());
    login.args(["mcp", "login", "docs"]);
    let out = run(login).await;
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("refused: the authorization URL sends the browser back to Some(\"https://evil.example/cb\")"),
        "{stderr}"
    );
    // No browser was opened, and no token asked for.
    assert!(fake.seen("/authorize").is_empty());
    assert!(fake.seen("/oauth/token").is_empty());
}

/// A server that answers without a token needs no login, and says so; one that lets
/// `initialize` through but publishes its metadata is logged in to by that metadata.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_a_challenge_is_logged_in_to_only_when_it_publishes_metadata() {
    let open = Fake::start(Fault::Open).await;
    let home = home_for(&open, "");
    let project = tempfile::tempdir().unwrap();
    let mut command = rein(home.path(), project.path());
    command.args(["mcp", "login", "docs"]);
    let out = run(command).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("answers without a login"),
        "{}",
        text(&out.stdout)
    );
    assert!(open.seen("/authorize").is_empty());

    let published = Fake::start(Fault::OpenInitialize).await;
    let home = home_for(&published, "");
    login(home.path(), project.path()).await;
    assert_eq!(published.grants("authorization_code").len(), 1);
}

/// Logging in again to the same authorization server keeps the client rein registered
/// with it: one registration for two logins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_login_to_the_same_issuer_keeps_the_registered_client() {
    let fake = Fake::start(Fault::None).await;
    let home = home_for(&fake, "");
    let project = tempfile::tempdir().unwrap();
    login(home.path(), project.path()).await;
    login(home.path(), project.path()).await;
    assert_eq!(fake.grants("authorization_code").len(), 2);
    assert_eq!(fake.seen("/register").len(), 1, "registered once");
    let second = &fake.seen("/authorize")[1];
    assert_eq!(second.query["client_id"], "client-fake");
}
