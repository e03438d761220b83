//! Providers and models without a config file (issue 10, section 4): presets picked by a
//! model name's prefix, `[providers.NAME]` tables, which key goes where, the context
//! window's precedence, asking the server for the window, `rein models` and `rein config`
//! through the real binary, and the provider's headers reaching the server.

use crate::support;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rein_core::config::{Config, ConfigError, Environment, Overrides, Source};
use serde_json::Value;
use support::write;
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

mod cli;
mod project;
mod resolve;
mod window;

/// A project root, a `REIN_HOME` and an empty home, and the variables of the "process".
struct Fixture {
    root: TempDir,
    rein_home: TempDir,
    home: TempDir,
    vars: HashMap<String, String>,
}

impl Fixture {
    fn new() -> Self {
        let rein_home = TempDir::new().unwrap();
        let vars = HashMap::from([(
            "REIN_HOME".to_string(),
            rein_home.path().display().to_string(),
        )]);
        Fixture {
            root: TempDir::new().unwrap(),
            rein_home,
            home: TempDir::new().unwrap(),
            vars,
        }
    }

    fn set(&mut self, var: &str, value: &str) -> &mut Self {
        self.vars.insert(var.to_string(), value.to_string());
        self
    }

    fn user_file(&self) -> PathBuf {
        self.rein_home.path().join("config.toml")
    }

    fn project_file(&self) -> PathBuf {
        self.root.path().join(".rein").join("config.toml")
    }

    fn write_user(&self, text: &str) {
        write(&self.user_file(), text);
    }

    fn write_project(&self, text: &str) {
        write(&self.project_file(), text);
    }

    fn try_load(&self, overrides: &Overrides) -> Result<Config, ConfigError> {
        let env = Environment {
            vars: self.vars.clone(),
            home: Some(self.home.path().to_path_buf()),
        };
        Config::load(self.root.path(), overrides, &env)
    }

    fn load(&self, overrides: &Overrides) -> Config {
        self.try_load(overrides).unwrap()
    }

    /// Allow the project file's routing settings as they are now (`rein config allow`).
    fn allow_project(&self) {
        let c = self.load(&Overrides::default());
        let routing = c.project_routing.expect("something to allow");
        rein_core::config::planted::allow_routing(
            &c.data_dir,
            &self.project_file(),
            routing.pinned(),
        )
        .unwrap();
    }

    fn error(&self) -> String {
        let message = self
            .try_load(&Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(!message.contains('\n'), "one line: {message}");
        message
    }
}

fn model(name: &str) -> Overrides {
    Overrides {
        model: Some(name.to_string()),
        ..Overrides::default()
    }
}

fn flag(name: &str) -> Source {
    Source::Flag(name.to_string())
}

fn env(name: &str) -> Source {
    Source::Env(name.to_string())
}

// ---- asking the server for the window ----

/// A tiny HTTP server: `routes` maps "METHOD /path" to a JSON body (anything else is a
/// 404); every request's "METHOD /path", headers and body are recorded.
struct TinyServer {
    addr: std::net::SocketAddr,
    seen: Arc<Mutex<Vec<(String, String, String)>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TinyServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl TinyServer {
    async fn start(routes: Vec<(&str, Value)>) -> TinyServer {
        let routes: HashMap<String, Value> = routes
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else {
                    continue;
                };
                let routes = routes.clone();
                let log = log.clone();
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    let (head, body) = loop {
                        let n = stream.read(&mut chunk).await.unwrap_or(0);
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        let text = String::from_utf8_lossy(&buf).into_owned();
                        if let Some((head, body)) = text.split_once("\r\n\r\n") {
                            let length = head
                                .lines()
                                .find_map(|l| {
                                    let (k, v) = l.split_once(':')?;
                                    k.eq_ignore_ascii_case("content-length")
                                        .then(|| v.trim().parse::<usize>().ok())?
                                })
                                .unwrap_or(0);
                            if body.len() >= length {
                                break (head.to_string(), body.to_string());
                            }
                        }
                    };
                    let request_line = head.lines().next().unwrap_or("").to_string();
                    let mut parts = request_line.split_whitespace();
                    let route = format!(
                        "{} {}",
                        parts.next().unwrap_or(""),
                        parts.next().unwrap_or("")
                    );
                    log.lock().unwrap().push((route.clone(), head, body));
                    let (status, body) = match routes.get(&route) {
                        Some(v) => ("200 OK", v.to_string()),
                        None => ("404 Not Found", "{\"error\":\"no route\"}".to_string()),
                    };
                    let reply = format!(
                        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(reply.as_bytes()).await;
                });
            }
        });
        TinyServer { addr, seen, task }
    }

    fn root(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn routes_seen(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|s| s.0.clone())
            .collect()
    }
}

// ---- the real binary ----

async fn run(cmd: &mut tokio::process::Command) -> (i32, String, String) {
    let out = tokio::time::timeout(support::GIVE_UP, cmd.output())
        .await
        .expect("rein finished")
        .expect("rein ran");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
