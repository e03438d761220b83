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
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use support::{Reply, ScriptedServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

mod dashboard;
mod login;
mod tokens;

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
    /// `/mcp` answers everything without a token, and publishes no metadata: no login.
    Open,
    /// `/mcp` answers `initialize` without a token (the rest asks for one) and publishes
    /// its protected-resource metadata at the well-known URL: a login by that metadata.
    OpenInitialize,
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
            let open = match fault {
                Fault::Open => true,
                Fault::OpenInitialize => request["method"] == "initialize",
                _ => false,
            };
            if !live && !open {
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
        ("GET", "/prm/mcp") | ("GET", "/.well-known/oauth-protected-resource/mcp")
            if path == "/prm/mcp" || fault == Fault::OpenInitialize =>
        {
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
