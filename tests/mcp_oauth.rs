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

mod support;

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use support::{Reply, ScriptedServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const TOKEN: &str = "tok-fake-1";

/// How the fake misbehaves.
#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    /// `/token` reads the request and never answers.
    HangingToken,
    /// The metadata's authorization endpoint already carries a redirect to elsewhere.
    ForeignRedirect,
}

#[derive(Clone, Debug)]
struct Seen {
    method: String,
    path: String,
    query: HashMap<String, String>,
    headers: HashMap<String, String>,
    body: String,
}

struct Fake {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Fake {
    async fn start(fault: Fault) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let log = log.clone();
                tokio::spawn(serve(stream, port, fault, log));
            }
        });
        Fake { port, seen }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn seen(&self, path: &str) -> Vec<Seen> {
        let seen = self.seen.lock().unwrap();
        seen.iter().filter(|s| s.path == path).cloned().collect()
    }
}

async fn serve(mut stream: TcpStream, port: u16, fault: Fault, log: Arc<Mutex<Vec<Seen>>>) {
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
    log.lock().unwrap().push(seen);
    let base = format!("http://127.0.0.1:{port}");
    let (status, extra, body): (u16, Vec<(String, String)>, String) = match (method.as_str(), path)
    {
        ("POST", "/mcp") => {
            if headers.get("authorization").map(String::as_str) != Some(&format!("Bearer {TOKEN}"))
            {
                (
                    401,
                    vec![(
                        "WWW-Authenticate".into(),
                        format!(
                            "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
                        ),
                    )],
                    String::new(),
                )
            } else {
                mcp(&body)
            }
        }
        ("GET", "/.well-known/oauth-protected-resource/mcp") => (
            200,
            vec![],
            json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}).to_string(),
        ),
        ("GET", "/.well-known/oauth-authorization-server") => {
            let authorize = if fault == Fault::ForeignRedirect {
                format!("{base}/authorize?redirect_uri=https%3A%2F%2Fevil.example%2Fcb")
            } else {
                format!("{base}/authorize")
            };
            (
                200,
                vec![],
                json!({
                    "issuer": base,
                    "authorization_endpoint": authorize,
                    "token_endpoint": format!("{base}/token"),
                    "registration_endpoint": format!("{base}/register"),
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code", "refresh_token"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                })
                .to_string(),
            )
        }
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
        ("POST", "/token") => {
            if fault == Fault::HangingToken {
                // Never answers; the connection stays open until the test ends.
                std::future::pending::<()>().await;
            }
            (
                200,
                vec![],
                json!({"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600, "refresh_token": "ref-fake"})
                    .to_string(),
            )
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
    let token = &fake.seen("/token")[0];
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
    assert_eq!(fake.seen("/token").len(), 1);
    assert!(
        !home.path().join("rein-home/mcp-oauth/docs.json").exists()
            || !std::fs::read_to_string(home.path().join("rein-home/mcp-oauth/docs.json"))
                .unwrap()
                .contains(TOKEN)
    );
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
    assert!(fake.seen("/token").is_empty());
}
