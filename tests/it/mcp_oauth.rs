//! OAuth login for HTTP MCP servers through the real binary, against an in-process fake:
//! one port serves a protected MCP endpoint (`/mcp`, 401 without the token), its
//! protected-resource metadata, and an authorization server (metadata, dynamic
//! registration, `/authorize` that redirects the browser back at once, `/token`). The
//! "browser" is `$BROWSER` = curl following redirects, as a person's browser would.
//!
//! `rein mcp login` discovers, registers, authorizes with PKCE S256 and `resource`, and
//! keeps the token private; `rein mcp list` then connects with it; `rein mcp logout`
//! forgets it and the server needs a login again, which print mode reports with the
//! command to run. Hostile servers: a token endpoint that never answers fails the login
//! within the server's startup timeout; an authorization URL that would send the browser
//! back anywhere but 127.0.0.1 is refused before a browser opens.
//!
//! The fake's tokens can be short-lived (refreshed without a login), its refresh token
//! revoked (print mode logs in once more, and only once), its tools may want a wider scope
//! (at most `MAX_STEP_UPS` step-ups), and its resource may move to another authorization
//! server (the tokens are dropped, the refresh token never sent there). The dashboard
//! logs in with `/mcp login NAME` (in tmux) and the server's tool appears.

use crate::support;

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use support::{Reply, ScriptedServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The first access token the fake issues.
const TOKEN: &str = "tok-fake-1";

/// How the fake misbehaves.
#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    /// `/oauth/token` reads the request and never answers.
    HangingToken,
    /// The metadata's authorization endpoint already carries a redirect to elsewhere.
    ForeignRedirect,
    /// The login's token has expired when issued (`expires_in` 0, refused by `/mcp`);
    /// refreshed ones live an hour.
    ShortLived,
    /// As `ShortLived`, and the refresh token is refused (`invalid_grant`): revoked.
    RevokedRefresh,
    /// `/mcp` refuses every token, and the refresh token is refused.
    RejectAll,
    /// `tools/call` always answers 403 `insufficient_scope`, asking for a wider scope.
    InsufficientScope,
    /// A 2025-03-26 server: no protected-resource metadata (the challenge names none),
    /// its authorization server's metadata at the root of its origin, naming the issuer
    /// `/as1` of that same origin.
    Legacy,
    /// As `Legacy`, the root metadata naming an issuer on another origin.
    LegacyForeign,
    /// As `Legacy`, but after the first read the root metadata is 300 KB (padding in an
    /// extra field): what rein reads of it itself is over its limit.
    LegacyHuge,
}

#[derive(Clone, Debug)]
struct Seen {
    method: String,
    path: String,
    query: HashMap<String, String>,
    headers: HashMap<String, String>,
    body: String,
}

/// What the fake remembers.
#[derive(Default)]
struct Book {
    seen: Vec<Seen>,
    /// Access tokens issued so far.
    issued: u32,
    /// The access tokens `/mcp` accepts.
    live: HashSet<String>,
    /// The protected resource names the second authorization server (issuer `/as2`)
    /// instead of the first (`/as1`).
    second_issuer: bool,
}

struct Fake {
    port: u16,
    book: Arc<Mutex<Book>>,
}

impl Fake {
    async fn start(fault: Fault) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let book = Arc::new(Mutex::new(Book::default()));
        let shared = book.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(serve(stream, port, fault, shared.clone()));
            }
        });
        Fake { port, book }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn seen(&self, path: &str) -> Vec<Seen> {
        let book = self.book.lock().unwrap();
        book.seen
            .iter()
            .filter(|s| s.path == path)
            .cloned()
            .collect()
    }

    /// The token requests of this grant type.
    fn grants(&self, grant: &str) -> Vec<Seen> {
        self.seen("/oauth/token")
            .into_iter()
            .filter(|s| s.body.contains(&format!("grant_type={grant}")))
            .collect()
    }

    /// From now on the protected resource names another authorization server.
    fn move_to_second_issuer(&self) {
        self.book.lock().unwrap().second_issuer = true;
    }
}

/// Issue the next access token: (its value, `expires_in`).
fn issue(book: &mut Book, fault: Fault) -> (String, u64) {
    book.issued += 1;
    let token = format!("tok-fake-{}", book.issued);
    let expired = match fault {
        Fault::ShortLived | Fault::RevokedRefresh => book.issued == 1,
        Fault::RejectAll => true,
        _ => false,
    };
    if expired {
        (token, 0)
    } else {
        book.live.insert(token.clone());
        (token, 3600)
    }
}

async fn serve(mut stream: TcpStream, port: u16, fault: Fault, book: Arc<Mutex<Book>>) {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        let Ok(n) = stream.read(&mut buf).await else {
            return;
        };
        if n == 0 {
            return;
        }
        data.extend_from_slice(&buf[..n]);
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&data[..head_end]).to_string();
    let mut lines = head.lines();
    let mut first = lines.next().unwrap_or("").split(' ');
    let method = first.next().unwrap_or("").to_string();
    let target = first.next().unwrap_or("").to_string();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while data.len() < head_end + length {
        let Ok(n) = stream.read(&mut buf).await else {
            return;
        };
        if n == 0 {
            break;
        }
        data.extend_from_slice(&buf[..n]);
    }
    let body = String::from_utf8_lossy(&data[head_end..]).to_string();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let query: HashMap<String, String> = reqwest::Url::parse(&format!("http://x/?{query}"))
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect();
    let seen = Seen {
        method: method.clone(),
        path: path.to_string(),
        query: query.clone(),
        headers: headers.clone(),
        body: body.clone(),
    };
    book.lock().unwrap().seen.push(seen);
    let base = format!("http://127.0.0.1:{port}");
    // The protected-resource metadata is only where the challenge says (not at a
    // well-known path), and the token endpoint is not the 2025-03-26 fallback `/token`:
    // a reconnection that did not discover as the login did would not find them.
    let challenge = if matches!(
        fault,
        Fault::Legacy | Fault::LegacyForeign | Fault::LegacyHuge
    ) {
        "Bearer".to_string()
    } else {
        format!("Bearer resource_metadata=\"{base}/prm/mcp\"")
    };
    let authorization_server_metadata = |issuer: String| {
        let authorize = if fault == Fault::ForeignRedirect {
            format!("{base}/authorize?redirect_uri=https%3A%2F%2Fevil.example%2Fcb")
        } else {
            format!("{base}/authorize")
        };
        json!({
            "issuer": issuer,
            "authorization_endpoint": authorize,
            "token_endpoint": format!("{base}/oauth/token"),
            "registration_endpoint": format!("{base}/register"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
        })
        .to_string()
    };
    let (status, extra, body): (u16, Vec<(String, String)>, String) = match (method.as_str(), path)
    {
        ("POST", "/mcp") => {
            let token = headers
                .get("authorization")
                .and_then(|v| v.strip_prefix("Bearer "))
                .unwrap_or("");
            let live = book.lock().unwrap().live.contains(token);
            let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            if !live {
                (
                    401,
                    vec![("WWW-Authenticate".into(), challenge)],
                    String::new(),
                )
            } else if fault == Fault::InsufficientScope && request["method"] == "tools/call" {
                (
                    403,
                    vec![(
                        "WWW-Authenticate".into(),
                        format!(
                            "Bearer error=\"insufficient_scope\", scope=\"docs:read docs:write\", resource_metadata=\"{base}/prm/mcp\""
                        ),
                    )],
                    String::new(),
                )
            } else {
                mcp(&body)
            }
        }
        ("GET", "/prm/mcp") => {
            let server = if book.lock().unwrap().second_issuer {
                format!("{base}/as2")
            } else {
                format!("{base}/as1")
            };
            (
                200,
                vec![],
                json!({"resource": format!("{base}/mcp"), "authorization_servers": [server]})
                    .to_string(),
            )
        }
        ("GET", "/.well-known/oauth-authorization-server") if fault == Fault::Legacy => (
            200,
            vec![],
            authorization_server_metadata(format!("{base}/as1")),
        ),
        ("GET", "/.well-known/oauth-authorization-server") if fault == Fault::LegacyHuge => {
            let reads = book
                .lock()
                .unwrap()
                .seen
                .iter()
                .filter(|s| s.path == "/.well-known/oauth-authorization-server")
                .count();
            let mut metadata: Value =
                serde_json::from_str(&authorization_server_metadata(format!("{base}/as1")))
                    .unwrap();
            if reads > 1 {
                metadata["padding"] = json!("p".repeat(300_000));
            }
            (200, vec![], metadata.to_string())
        }
        ("GET", "/.well-known/oauth-authorization-server") if fault == Fault::LegacyForeign => (
            200,
            vec![],
            authorization_server_metadata("https://as.example/as1".to_string()),
        ),
        ("GET", "/.well-known/oauth-authorization-server/as1") => (
            200,
            vec![],
            authorization_server_metadata(format!("{base}/as1")),
        ),
        ("GET", "/.well-known/oauth-authorization-server/as2") => (
            200,
            vec![],
            authorization_server_metadata(format!("{base}/as2")),
        ),
        ("POST", "/register") => {
            let asked: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            (
                201,
                vec![],
                json!({"client_id": "client-fake", "redirect_uris": asked["redirect_uris"]})
                    .to_string(),
            )
        }
        ("GET", "/authorize") => {
            let back = query.get("redirect_uri").cloned().unwrap_or_default();
            let state = query.get("state").cloned().unwrap_or_default();
            (
                302,
                vec![(
                    "Location".into(),
                    format!("{back}?code=code-fake&state={state}"),
                )],
                String::new(),
            )
        }
        ("POST", "/oauth/token") => {
            if fault == Fault::HangingToken {
                // Never answers; the connection stays open until the test ends.
                std::future::pending::<()>().await;
            }
            let refresh = body.contains("grant_type=refresh_token");
            if refresh && matches!(fault, Fault::RevokedRefresh | Fault::RejectAll) {
                (
                    400,
                    vec![],
                    json!({"error": "invalid_grant", "error_description": "revoked"}).to_string(),
                )
            } else {
                let (token, expires_in) = issue(&mut book.lock().unwrap(), fault);
                (
                    200,
                    vec![],
                    json!({"access_token": token, "token_type": "Bearer", "expires_in": expires_in, "refresh_token": "ref-fake"})
                        .to_string(),
                )
            }
        }
        _ => (404, vec![], String::new()),
    };
    let mut answer = format!(
        "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !body.is_empty() {
        answer.push_str("Content-Type: application/json\r\n");
    }
    for (k, v) in extra {
        answer.push_str(&format!("{k}: {v}\r\n"));
    }
    answer.push_str("\r\n");
    answer.push_str(&body);
    let _ = stream.write_all(answer.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// The MCP endpoint once logged in: initialize, tools/list with one tool, tools/call.
fn mcp(body: &str) -> (u16, Vec<(String, String)>, String) {
    let request: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let Some(id) = request.get("id").cloned() else {
        return (202, vec![], String::new());
    };
    let result = match request["method"].as_str().unwrap_or("") {
        "initialize" => json!({
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "1"}
        }),
        "tools/list" => json!({"tools": [{
            "name": "whoami",
            "description": "Who the caller is logged in as",
            "inputSchema": {"type": "object", "properties": {}}
        }]}),
        "tools/call" => {
            json!({"content": [{"type": "text", "text": "logged in as the fake user"}]})
        }
        _ => json!({}),
    };
    (
        200,
        vec![],
        json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
    )
}

/// A home with a config naming the fake as the HTTP server `docs`, and a `$BROWSER`
/// that follows the redirects.
fn home_for(fake: &Fake, extra: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("rein-home")).unwrap();
    std::fs::write(
        home.path().join("rein-home/config.toml"),
        format!("[mcp_servers.docs]\nurl = \"{}\"\n{extra}", fake.url()),
    )
    .unwrap();
    home
}

/// [`home_for`], with the fake's tool allowed (print mode calls it without asking).
fn home_allowing(fake: &Fake) -> tempfile::TempDir {
    let home = home_for(fake, "");
    let config = home.path().join("rein-home/config.toml");
    let table = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!(
            "[[permissions.tools]]\npattern = \"mcp__docs__whoami\"\naction = \"allow\"\n\n{table}"
        ),
    )
    .unwrap();
    home
}

/// `rein mcp login docs`, which must succeed.
async fn login(home: &Path, project: &Path) {
    let mut login = rein(home, project);
    login.args(["mcp", "login", "docs"]);
    let out = run(login).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// `rein -p` with a scripted model that calls the fake's tool `calls` times, then answers.
async fn call_whoami(home: &Path, project: &Path, calls: usize) -> (Output, ScriptedServer) {
    let mut replies: Vec<Reply> = (0..calls)
        .map(|_| Reply::tool_calls(&[("mcp__docs__whoami", "{}")]))
        .collect();
    replies.push(Reply::text("Done."));
    let model = ScriptedServer::start(replies).await.unwrap();
    let mut headless = rein(home, project);
    headless.args([
        "--base-url",
        &model.base_url(),
        "--model",
        "m",
        "-p",
        "who am I?",
    ]);
    (run(headless).await, model)
}

fn rein(home: &Path, project: &Path) -> Command {
    let browser = support::script(home, "browser", "exec curl -s -L -o /dev/null \"$1\"\n");
    let mut command = support::rein_in(home, project);
    command.env("BROWSER", browser);
    command
}

async fn run(mut command: Command) -> Output {
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).to_string()
}

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

/// A tmux session running one command; killed on drop.
struct Tmux {
    name: String,
    /// No real model runs beside a session (`support::machine`).
    _machine: support::machine::Share,
}

impl Tmux {
    fn start(command: &[String]) -> Tmux {
        let machine = support::machine::share();
        let name = format!("rein-oauth-{}-{}", std::process::id(), TOKEN.len());
        let out = Command::new("tmux")
            .args([
                "new-session",
                "-d",
                "-s",
                &name,
                "-x",
                "120",
                "-y",
                "40",
                "--",
            ])
            .args(command)
            .output()
            .expect("tmux runs (install it: apt install tmux)");
        assert!(out.status.success(), "{}", text(&out.stderr));
        Tmux {
            name,
            _machine: machine,
        }
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["capture-pane", "-p", "-J", "-S", "-200", "-t", &self.name])
            .output()
            .expect("tmux capture-pane");
        text(&out.stdout)
    }

    /// Press one key (a tmux key name, or a character), nothing after it.
    fn key(&self, key: &str) {
        let status = Command::new("tmux")
            .args(["send-keys", "-t", &self.name, key])
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }

    fn send(&self, typed: &str) {
        for args in [vec!["-l", typed], vec!["Enter"]] {
            let status = Command::new("tmux")
                .args(["send-keys", "-t", &self.name])
                .args(args)
                .status()
                .expect("tmux send-keys");
            assert!(status.success());
        }
    }

    /// Wait until the screen satisfies `check`; fail with the screen otherwise.
    async fn wait_for(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let screen = self.screen();
            if check(&screen) {
                return screen;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting for {what}; the screen:\n{screen}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.name])
            .status();
    }
}

/// The dashboard says the server needs a login; `l` in `/mcp`'s layer logs in through the
/// browser in the background, the server restarts with its tool (offered to the model
/// from the next turn), and `/mcp logout docs` forgets the tokens: it needs a login again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_logs_in_with_slash_mcp_login_and_the_tool_appears() {
    if Command::new("tmux").arg("-V").output().is_err() {
        return;
    }
    let fake = Fake::start(Fault::None).await;
    let home = home_for(&fake, "");
    let project = tempfile::tempdir().unwrap();
    let model = ScriptedServer::start(vec![Reply::text("Hello there.")])
        .await
        .unwrap();
    let browser = support::script(
        home.path(),
        "browser",
        "exec curl -s -L -o /dev/null \"$1\"\n",
    );
    let command: Vec<String> = vec![
        "env".into(),
        "-i".into(),
        format!("PATH={}", std::env::var("PATH").unwrap_or_default()),
        format!("HOME={}", home.path().display()),
        format!("REIN_HOME={}", home.path().join("rein-home").display()),
        format!("BROWSER={browser}"),
        "TERM=xterm-256color".into(),
        "LANG=C.UTF-8".into(),
        env!("CARGO_BIN_EXE_rein").into(),
        "--base-url".into(),
        model.base_url(),
        "--model".into(),
        "m".into(),
        "--cwd".into(),
        project.path().display().to_string(),
    ];
    let tmux = Tmux::start(&command);
    tmux.wait_for("the server needing a login", |s| {
        s.contains("MCP server docs: needs login") && s.contains("/mcp login docs")
    })
    .await;
    // `/mcp` opens the servers' layer, which says so too; `l` logs in.
    tmux.send("/mcp");
    tmux.wait_for("the servers' layer", |s| {
        s.contains("MCP servers (1)") && s.contains("› docs: needs login") && s.contains("l log in")
    })
    .await;
    tmux.key("l");
    let screen = tmux
        .wait_for("the server ready", |s| {
            s.contains("MCP server docs: ready, 1 tool")
        })
        .await;
    assert!(
        screen.contains("open this URL in a browser to log in") && screen.contains("/authorize?"),
        "{screen}"
    );
    assert!(
        screen.contains("logged in to the MCP server docs; restarting it"),
        "{screen}"
    );
    assert_eq!(fake.seen("/authorize").len(), 1);
    assert!(home.path().join("rein-home/mcp-oauth/docs.json").exists());

    tmux.send("hi");
    tmux.wait_for("the reply", |s| s.contains("Hello there."))
        .await;
    let tools: Vec<String> = model.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        tools.contains(&"mcp__docs__whoami".to_string()),
        "{tools:?}"
    );

    tmux.send("/mcp logout docs");
    tmux.wait_for("the logout", |s| {
        s.contains("logged out of the MCP server docs")
            && s.matches("MCP server docs: needs login").count() >= 2
    })
    .await;
    assert!(!home.path().join("rein-home/mcp-oauth/docs.json").exists());
}
