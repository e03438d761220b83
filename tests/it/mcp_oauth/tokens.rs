//! Tokens after the login: refreshed when expired, a revoked refresh token, a server that
//! keeps asking for a wider scope, another issuer.

use crate::support;

use serde_json::Value;

use super::{call_whoami, home_allowing, home_for, login, rein, run, text, Fake, Fault, TOKEN};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_is_refreshed_without_a_login_at_the_endpoints_the_login_found() {
    let fake = Fake::start(Fault::ShortLived).await;
    let home = home_for(&fake, "");
    let project = tempfile::tempdir().unwrap();
    login(home.path(), project.path()).await;
    let file = home.path().join("rein-home/mcp-oauth/docs.json");
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let base = format!("http://127.0.0.1:{}", fake.port);
    assert_eq!(kept["resource_metadata"], format!("{base}/prm/mcp"));
    assert_eq!(kept["credentials"]["issuer"], format!("{base}/as1"));

    // The login's token has expired: the first connection refreshes it (at the token
    // endpoint only the challenge's metadata names), the second uses the new one.
    for _ in 0..2 {
        let mut list = rein(home.path(), project.path());
        list.args(["mcp", "list"]);
        let out = run(list).await;
        assert!(
            text(&out.stdout).contains("docs: ready, 1 tool"),
            "{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }
    assert_eq!(fake.seen("/authorize").len(), 1, "no second login");
    let refreshes = fake.grants("refresh_token");
    assert_eq!(refreshes.len(), 1);
    assert!(refreshes[0].body.contains("refresh_token=ref-fake"));
    assert!(
        refreshes[0].body.contains("resource="),
        "{}",
        refreshes[0].body
    );
    let bearers: Vec<String> = fake
        .seen("/mcp")
        .iter()
        .filter_map(|s| s.headers.get("authorization").cloned())
        .collect();
    assert!(
        bearers.iter().all(|b| b != &format!("Bearer {TOKEN}")),
        "{bearers:?}"
    );
    assert!(
        bearers.contains(&"Bearer tok-fake-2".to_string()),
        "{bearers:?}"
    );
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains("tok-fake-2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_refresh_token_in_print_mode_leads_to_exactly_one_new_login() {
    // The new login mends it: the tool answers.
    let fake = Fake::start(Fault::RevokedRefresh).await;
    let home = home_allowing(&fake);
    let project = tempfile::tempdir().unwrap();
    login(home.path(), project.path()).await;
    let (out, model) = call_whoami(home.path(), project.path(), 1).await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("asks for a new login"), "{stderr}");
    assert_eq!(fake.grants("refresh_token").len(), 1);
    assert_eq!(fake.seen("/authorize").len(), 2, "{stderr}");
    assert_eq!(
        support::last_tool_results(&model.requests()),
        vec!["logged in as the fake user".to_string()]
    );

    // The new login does not mend it: one attempt, then the server needs a login.
    let fake = Fake::start(Fault::RejectAll).await;
    let home = home_allowing(&fake);
    login(home.path(), project.path()).await;
    let (out, _model) = call_whoami(home.path(), project.path(), 1).await;
    let stderr = text(&out.stderr);
    assert_eq!(fake.seen("/authorize").len(), 2, "{stderr}");
    assert!(
        stderr.contains("MCP server docs needs a login (OAuth); run `rein mcp login docs`"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_keeps_asking_for_a_wider_scope_gets_at_most_the_step_up_limit() {
    let fake = Fake::start(Fault::InsufficientScope).await;
    let home = home_allowing(&fake);
    let project = tempfile::tempdir().unwrap();
    login(home.path(), project.path()).await;
    let (out, _model) = call_whoami(home.path(), project.path(), 4).await;
    let stderr = text(&out.stderr);
    let authorizations = fake.seen("/authorize");
    assert_eq!(
        authorizations.len() as u32,
        1 + rein_core::mcp::oauth::MAX_STEP_UPS,
        "{stderr}"
    );
    // Each step-up asks for the scope the challenge names.
    for step_up in &authorizations[1..] {
        let scope = &step_up.query["scope"];
        assert!(
            scope.contains("docs:read") && scope.contains("docs:write"),
            "{scope}"
        );
    }
    assert!(
        stderr.contains(&format!(
            "rein stopped after {} step-up logins",
            rein_core::mcp::oauth::MAX_STEP_UPS
        )),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_issuer_means_a_new_login_and_the_refresh_token_is_never_sent_to_it() {
    let fake = Fake::start(Fault::ShortLived).await;
    let home = home_for(&fake, "");
    let project = tempfile::tempdir().unwrap();
    login(home.path(), project.path()).await;
    fake.move_to_second_issuer();

    let mut list = rein(home.path(), project.path());
    list.args(["mcp", "list"]);
    let out = run(list).await;
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("its authorization server is now")
            && stdout.contains("/as2")
            && stdout.contains("that issued rein's tokens; rein dropped them"),
        "{stdout}"
    );
    assert!(fake.grants("refresh_token").is_empty());
    assert!(!home.path().join("rein-home/mcp-oauth/docs.json").exists());

    let mut list = rein(home.path(), project.path());
    list.args(["mcp", "list"]);
    let out = run(list).await;
    assert!(
        text(&out.stdout).contains("docs: needs login"),
        "{}",
        text(&out.stdout)
    );
}

/// What a refresh request carries of a client secret: the body's `client_secret`, or the
/// Basic authorization header.
fn secret_sent(refresh: &super::Seen) -> (bool, Option<String>) {
    (
        refresh.body.contains("client_secret="),
        refresh.headers.get("authorization").cloned(),
    )
}

/// `rein mcp list` with the secret variable set to `secret`, which must find the server
/// ready.
async fn list_with_secret(home: &std::path::Path, project: &std::path::Path, secret: &str) {
    let mut list = rein(home, project);
    list.args(["mcp", "list"]).env("DOCS_SECRET", secret);
    let out = run(list).await;
    assert!(
        text(&out.stdout).contains("docs: ready, 1 tool"),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// A client the user registered: a refresh sends its secret as the variable holds it now
/// (a rotated secret is used at once); a secret configured for another client is never
/// sent with the one rein registered itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresh_sends_the_configured_clients_secret_as_it_is_now_and_no_other() {
    let client = "oauth_client_id = \"pre-1\"\noauth_client_secret_env = \"DOCS_SECRET\"\n";
    let fake = Fake::start(Fault::ShortLived).await;
    let home = home_for(&fake, client);
    let project = tempfile::tempdir().unwrap();
    let mut command = rein(home.path(), project.path());
    command
        .args(["mcp", "login", "docs"])
        .env("DOCS_SECRET", "s3cret-old");
    let out = run(command).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    list_with_secret(home.path(), project.path(), "s3cret-new").await;
    let refreshes = fake.grants("refresh_token");
    assert_eq!(refreshes.len(), 1);
    // "pre-1:s3cret-new", as HTTP Basic has it.
    let basic = Some("Basic cHJlLTE6czNjcmV0LW5ldw==".to_string());
    let (in_body, header) = secret_sent(&refreshes[0]);
    assert!(
        refreshes[0].body.contains("client_secret=s3cret-new") || header == basic,
        "{in_body} {header:?} {}",
        refreshes[0].body
    );

    // Registered by rein (no secret), then the config names another client: the refresh
    // goes with rein's client and no secret.
    let fake = Fake::start(Fault::ShortLived).await;
    let home = home_for(&fake, "");
    login(home.path(), project.path()).await;
    let config = home.path().join("rein-home/config.toml");
    let table = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{table}{client}")).unwrap();
    list_with_secret(home.path(), project.path(), "s3cret-new").await;
    let refreshes = fake.grants("refresh_token");
    assert_eq!(refreshes.len(), 1);
    assert!(
        refreshes[0].body.contains("client_id=client-fake"),
        "{}",
        refreshes[0].body
    );
    assert_eq!(
        secret_sent(&refreshes[0]),
        (false, None),
        "{}",
        refreshes[0].body
    );
}
