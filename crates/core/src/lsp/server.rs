//! One language server: its process (in the sandbox), the connection to it, the documents
//! it has open and what it last published.
//!
//! Messages from the server are read on a task of their own, each bounded
//! ([`MAX_MESSAGE`]); responses go to whoever asked, `publishDiagnostics` to the store
//! (at most [`MAX_DIAGS`] a file), `$/progress` marks work in progress, and the server's
//! own requests are answered (`workspace/configuration` with the spec's settings, the
//! rest with nothing or "not supported"). A server that closes, breaks the framing or
//! floods is marked dead with why; what waited on it is told at once.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot, watch};

use super::diagnostics::{Diag, Severity};
use super::spec::ServerSpec;
use super::wire;

/// The largest message read from a server (a workspace's diagnostics can be large).
pub const MAX_MESSAGE: usize = 16 * 1024 * 1024;
/// The most diagnostics kept of one file.
pub const MAX_DIAGS: usize = 500;
/// The most diagnostics kept of all files together (a server that floods many files is
/// bounded in memory too: a message is at most 1,000 characters).
pub const MAX_ALL_DIAGS: usize = 50_000;
/// The most files whose diagnostics are kept.
const MAX_FILES: usize = 20_000;
/// The most bytes kept of what the server wrote on its standard error.
pub const STDERR_TAIL: usize = 4096;
/// The most characters kept of the server's last message.
const MAX_NOTE: usize = 300;

/// What the server last published for one file.
#[derive(Debug, Clone, Default)]
pub struct Published {
    /// The document version it was for, when the server says.
    pub version: Option<i64>,
    /// When it came, in the order of all publishes ([`State::seq`]).
    pub seq: u64,
    pub diags: Vec<Diag>,
}

/// What the reader task keeps.
#[derive(Debug, Default)]
pub struct State {
    /// Publishes by file path.
    pub published: HashMap<PathBuf, Published>,
    /// Counts every publish.
    pub seq: u64,
    /// The diagnostics kept, of every file together (at most [`MAX_ALL_DIAGS`]).
    pub diags_kept: usize,
    /// When the last one came.
    pub last_at: Option<std::time::Instant>,
    /// Work the server reported begun and not yet ended (`$/progress` tokens).
    pub progress: HashSet<String>,
    /// The last thing it said (`window/logMessage`, `showMessage`), bounded.
    pub note: Option<String>,
    /// The last lines it wrote on its standard error, at most [`STDERR_TAIL`] bytes.
    pub stderr: String,
    /// Why it can no longer be talked to.
    pub dead: Option<String>,
}

type Pending = Mutex<HashMap<i64, oneshot::Sender<Result<Value, String>>>>;

/// A running server.
pub struct Server {
    pub spec: ServerSpec,
    /// The folder it serves.
    pub root: PathBuf,
    out: mpsc::UnboundedSender<Vec<u8>>,
    pending: Arc<Pending>,
    state: Arc<Mutex<State>>,
    /// Bumped whenever `state` changes.
    changed: watch::Receiver<u64>,
    next_id: AtomicI64,
    /// The `capabilities` of its `initialize` answer.
    pub capabilities: Value,
    /// Its process group, killed when the server is dropped.
    pgid: Option<libc::pid_t>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(pgid) = self.pgid {
            let _ = std::thread::Builder::new()
                .name("lsp-kill".into())
                .spawn(move || crate::host::process_tree::kill(pgid));
        }
    }
}

/// How a server is started.
pub struct Launch<'a> {
    pub spec: &'a ServerSpec,
    pub program: &'a Path,
    /// The folder it serves.
    pub root: &'a Path,
    pub sandbox: &'a crate::sandbox::Sandbox,
    /// Where it may keep a cache (writable in the sandbox; its `XDG_CACHE_HOME`).
    pub cache: &'a Path,
    pub secrets: &'a [String],
    /// How long `initialize` may take.
    pub init_timeout: Duration,
}

/// A file path as the protocol's `file://` URI.
pub fn uri(path: &Path) -> String {
    let mut out = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A `file://` URI as a path (`None`: another scheme, or not UTF-8 once decoded).
pub fn path_of(uri: &str) -> Option<PathBuf> {
    let raw = uri.strip_prefix("file://")?;
    // `file://host/path`: only the local host.
    let raw = raw.strip_prefix("localhost").unwrap_or(raw);
    crate::text::percent_decoded(raw).map(PathBuf::from)
}

impl Server {
    /// Start the server and initialize it; `Err` says why it could not be had.
    pub async fn start(launch: Launch<'_>) -> Result<Server, String> {
        let sandbox = launch.sandbox.for_tool(launch.cache, launch.program);
        let mut cmd = sandbox.program(launch.program, launch.secrets)?;
        cmd.args(&launch.spec.args)
            .current_dir(launch.root)
            .env("XDG_CACHE_HOME", launch.cache)
            .envs(&launch.spec.env)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mark = crate::host::process_tree::mark(&mut cmd);
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", launch.program.display()))?;
        let pgid = child.id().and_then(|id| libc::pid_t::try_from(id).ok());
        if let Some(pgid) = pgid {
            mark.register(pgid);
        }
        let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("its pipes could not be opened".into());
        };
        let stderr = child.stderr.take();
        let (out, mut to_write) = mpsc::unbounded_channel::<Vec<u8>>();
        tokio::spawn(async move {
            while let Some(bytes) = to_write.recv().await {
                if stdin.write_all(&bytes).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
            }
        });
        let pending: Arc<Pending> = Arc::default();
        let state: Arc<Mutex<State>> = Arc::default();
        let (bump, changed) = watch::channel(0u64);
        let reader = Reader {
            out: out.clone(),
            pending: pending.clone(),
            state: state.clone(),
            bump,
            settings: launch.spec.settings.clone(),
        };
        if let Some(stderr) = stderr {
            tokio::spawn(keep_stderr(stderr, state.clone()));
        }
        tokio::spawn(async move {
            // The child is kept here so it is reaped when the server goes.
            let _child = child;
            reader.run(stdout).await;
        });
        let mut server = Server {
            spec: launch.spec.clone(),
            root: launch.root.to_path_buf(),
            out,
            pending,
            state,
            changed,
            next_id: AtomicI64::new(1),
            capabilities: Value::Null,
            pgid,
        };
        let params = initialize_params(launch.root, launch.spec);
        let answer = match server
            .request("initialize", params, launch.init_timeout)
            .await
        {
            Ok(answer) => answer,
            Err(e) => {
                // What it wrote before it went says why (a missing toolchain, a bad flag).
                tokio::time::sleep(Duration::from_millis(50)).await;
                let last = server
                    .state()
                    .stderr
                    .trim()
                    .lines()
                    .last()
                    .map(|l| l.trim().chars().take(200).collect::<String>())
                    .filter(|l| !l.is_empty());
                return Err(match last {
                    Some(line) => format!("initialize failed: {e} (it said: {line})"),
                    None => format!("initialize failed: {e}"),
                });
            }
        };
        server.capabilities = answer.get("capabilities").cloned().unwrap_or(Value::Null);
        server.notify("initialized", json!({}));
        Ok(server)
    }

    /// Send a notification.
    pub fn notify(&self, method: &str, params: Value) {
        let _ = self.out.send(wire::frame(
            &json!({"jsonrpc": "2.0", "method": method, "params": params}),
        ));
    }

    /// Send a request and wait at most `timeout` for its answer.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, String> {
        if let Some(why) = self.dead() {
            return Err(why);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, tx);
        let _ = self.out.send(wire::frame(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        ));
        let answer = tokio::time::timeout(timeout, rx).await;
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
        match answer {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(self.dead().unwrap_or_else(|| "it stopped".into())),
            Err(_) => {
                self.notify("$/cancelRequest", json!({"id": id}));
                Err(format!(
                    "it did not answer {method} within {:.1} s",
                    timeout.as_secs_f64()
                ))
            }
        }
    }

    /// Why the server can no longer be talked to, if it cannot.
    pub fn dead(&self) -> Option<String> {
        self.state().dead.clone()
    }

    /// The reader's state, locked.
    pub fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wait until `done` holds of the state, it dies, or `deadline` passes; true when
    /// `done` held.
    pub async fn wait_until(
        &self,
        deadline: tokio::time::Instant,
        mut done: impl FnMut(&State) -> bool,
    ) -> bool {
        let mut changed = self.changed.clone();
        loop {
            {
                let state = self.state();
                if done(&state) {
                    return true;
                }
                if state.dead.is_some() {
                    return false;
                }
            }
            tokio::select! {
                r = changed.changed() => if r.is_err() { return false },
                () = tokio::time::sleep_until(deadline) => return false,
            }
        }
    }

    /// Ask politely to stop: `shutdown`, then `exit` (the process group goes when the
    /// server is dropped).
    pub async fn stop(&self) {
        if self.dead().is_none() {
            let _ = self
                .request("shutdown", Value::Null, Duration::from_millis(500))
                .await;
            self.notify("exit", Value::Null);
        }
    }
}

/// Keep the tail of what the server writes on its standard error (read in bounded
/// pieces, so a flood costs nothing but the reading).
async fn keep_stderr(mut stderr: tokio::process::ChildStderr, state: Arc<Mutex<State>>) {
    use tokio::io::AsyncReadExt;
    let mut buf = vec![0u8; 8192];
    loop {
        let n = match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
        state.stderr.push_str(&String::from_utf8_lossy(&buf[..n]));
        if state.stderr.len() > STDERR_TAIL {
            let mut cut = state.stderr.len() - STDERR_TAIL;
            while !state.stderr.is_char_boundary(cut) {
                cut += 1;
            }
            state.stderr.drain(..cut);
        }
    }
}

/// `initialize`'s parameters: the folder, and what rein takes.
fn initialize_params(root: &Path, spec: &ServerSpec) -> Value {
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut params = json!({
        // Not rein's: in the sandbox's process namespace no such process is seen, and a
        // server that watches its parent (every vscode-languageserver one) would exit.
        // rein ends the server itself.
        "processId": null,
        "clientInfo": {"name": "rein", "version": env!("CARGO_PKG_VERSION")},
        "rootUri": uri(root),
        "rootPath": root,
        "workspaceFolders": [{"uri": uri(root), "name": name}],
        "capabilities": {
            "general": {"positionEncodings": ["utf-16"]},
            "window": {"workDoneProgress": true},
            "workspace": {
                "configuration": true,
                "workspaceFolders": true,
                "symbol": {"dynamicRegistration": false},
                "didChangeWatchedFiles": {"dynamicRegistration": false},
            },
            "textDocument": {
                "synchronization": {"didSave": true, "dynamicRegistration": false},
                "publishDiagnostics": {"versionSupport": true, "relatedInformation": false},
                "hover": {"contentFormat": ["plaintext", "markdown"]},
                "definition": {"linkSupport": false},
                "references": {},
                "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
            },
        },
    });
    if let Some(options) = &spec.initialization_options {
        params["initializationOptions"] = options.clone();
    }
    params
}

/// The task that reads what the server sends.
struct Reader {
    out: mpsc::UnboundedSender<Vec<u8>>,
    pending: Arc<Pending>,
    state: Arc<Mutex<State>>,
    bump: watch::Sender<u64>,
    settings: Option<Value>,
}

impl Reader {
    async fn run(self, stdout: tokio::process::ChildStdout) {
        let mut reader = BufReader::new(stdout);
        let why = loop {
            let body = match wire::read(&mut reader, MAX_MESSAGE).await {
                Ok(body) => body,
                Err(e) => break e.to_string(),
            };
            let Ok(message) = serde_json::from_slice::<Value>(&body) else {
                break "it sent a message that is not JSON".to_string();
            };
            self.take(message);
        };
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .dead = Some(why);
        // Whoever waits for an answer hears at once.
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        self.bump.send_modify(|n| *n += 1);
    }

    fn take(&self, message: Value) {
        let method = message.get("method").and_then(Value::as_str);
        match (method, message.get("id")) {
            (Some(method), Some(id)) => {
                let result = self.answer(method, message.get("params"));
                let reply = match result {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Err(code) => json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": code, "message": format!("rein does not support {method}")}}),
                };
                let _ = self.out.send(wire::frame(&reply));
            }
            (Some(method), None) => self.notice(method, message.get("params")),
            (None, Some(id)) => {
                let Some(id) = id.as_i64() else { return };
                let sender = self
                    .pending
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&id);
                if let Some(sender) = sender {
                    let answer = match message.get("error") {
                        Some(error) => Err(error
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("an error")
                            .chars()
                            .take(MAX_NOTE)
                            .collect()),
                        None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                    };
                    let _ = sender.send(answer);
                }
            }
            (None, None) => {}
        }
    }

    /// The answer to the server's own request (`Err`: the JSON-RPC error code).
    fn answer(&self, method: &str, params: Option<&Value>) -> Result<Value, i64> {
        match method {
            "workspace/configuration" => {
                let items = params
                    .and_then(|p| p.get("items"))
                    .and_then(Value::as_array)
                    .map_or(&[][..], Vec::as_slice);
                Ok(Value::Array(
                    items
                        .iter()
                        .map(|item| {
                            let section = item.get("section").and_then(Value::as_str);
                            section_of(self.settings.as_ref(), section)
                        })
                        .collect(),
                ))
            }
            "window/workDoneProgress/create"
            | "client/registerCapability"
            | "client/unregisterCapability"
            | "workspace/diagnostic/refresh"
            | "workspace/semanticTokens/refresh"
            | "workspace/inlayHint/refresh"
            | "workspace/codeLens/refresh" => Ok(Value::Null),
            "workspace/workspaceFolders" => Ok(Value::Null),
            "window/showMessageRequest" => Ok(Value::Null),
            _ => Err(-32601),
        }
    }

    fn notice(&self, method: &str, params: Option<&Value>) {
        let Some(params) = params else { return };
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match method {
            "textDocument/publishDiagnostics" => {
                let Some(path) = params.get("uri").and_then(Value::as_str).and_then(path_of) else {
                    return;
                };
                if state.published.len() >= MAX_FILES && !state.published.contains_key(&path) {
                    return;
                }
                // Within the bound on all files together, less what this file had.
                let had = state.published.get(&path).map_or(0, |p| p.diags.len());
                let room = MAX_ALL_DIAGS.saturating_sub(state.diags_kept - had);
                let diags: Vec<Diag> = params
                    .get("diagnostics")
                    .and_then(Value::as_array)
                    .map_or(&[][..], Vec::as_slice)
                    .iter()
                    .take(MAX_DIAGS.min(room))
                    .filter_map(diag)
                    .collect();
                state.diags_kept = state.diags_kept - had + diags.len();
                state.seq += 1;
                state.last_at = Some(std::time::Instant::now());
                let published = Published {
                    version: params.get("version").and_then(Value::as_i64),
                    seq: state.seq,
                    diags,
                };
                state.published.insert(path, published);
            }
            "$/progress" => {
                let token = match params.get("token") {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => return,
                };
                match params.pointer("/value/kind").and_then(Value::as_str) {
                    Some("begin") => {
                        if state.progress.len() < 1000 {
                            state.progress.insert(token);
                        }
                    }
                    Some("end") => {
                        state.progress.remove(&token);
                    }
                    _ => return,
                }
            }
            "window/logMessage" | "window/showMessage" => {
                if let Some(text) = params.get("message").and_then(Value::as_str) {
                    state.note = Some(text.trim().chars().take(MAX_NOTE).collect());
                }
                return;
            }
            _ => return,
        }
        drop(state);
        self.bump.send_modify(|n| *n += 1);
    }
}

/// What `workspace/configuration` answers for `section` (`python.analysis`) from the
/// spec's settings.
fn section_of(settings: Option<&Value>, section: Option<&str>) -> Value {
    let Some(settings) = settings else {
        return Value::Null;
    };
    let Some(section) = section else {
        return settings.clone();
    };
    section
        .split('.')
        .try_fold(settings, |v, key| v.get(key))
        .cloned()
        .unwrap_or(Value::Null)
}

/// A diagnostic as rein keeps it (`None`: not one).
fn diag(value: &Value) -> Option<Diag> {
    let start = value.pointer("/range/start")?;
    let line = start.get("line")?.as_u64()?;
    let col = start.get("character")?.as_u64()?;
    let message: String = value.get("message")?.as_str()?.chars().take(1000).collect();
    let code = match value.get("code") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    Some(Diag {
        line: u32::try_from(line.saturating_add(1)).unwrap_or(u32::MAX),
        col: u32::try_from(col.saturating_add(1)).unwrap_or(u32::MAX),
        severity: Severity::from_lsp(value.get("severity").and_then(Value::as_u64)),
        message,
        source: value
            .get("source")
            .and_then(Value::as_str)
            .map(|s| s.chars().take(100).collect()),
        code: code.map(|c| c.chars().take(100).collect()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_uris_go_both_ways() {
        let p = Path::new("/tmp/a b/é#.py");
        let u = uri(p);
        assert_eq!(u, "file:///tmp/a%20b/%C3%A9%23.py");
        assert_eq!(path_of(&u).as_deref(), Some(p));
        assert_eq!(
            path_of("file://localhost/x/y.py").as_deref(),
            Some(Path::new("/x/y.py"))
        );
        assert_eq!(path_of("untitled:1"), None);
    }

    #[test]
    fn a_diagnostic_is_read_defensively() {
        let good = json!({"range": {"start": {"line": 2, "character": 4}, "end": {}},
            "severity": 1, "message": "bad", "source": "Pyright", "code": "reportX"});
        let d = diag(&good).unwrap();
        assert_eq!((d.line, d.col, d.severity), (3, 5, Severity::Error));
        assert_eq!(d.code.as_deref(), Some("reportX"));
        let numeric = json!({"range": {"start": {"line": 0, "character": 0}},
            "message": "m", "code": 2304});
        assert_eq!(diag(&numeric).unwrap().code.as_deref(), Some("2304"));
        assert_eq!(diag(&json!({"message": "no range"})), None);
        // Positions past any file: kept at the largest, never an overflow.
        let huge = json!({"range": {"start": {"line": u64::MAX, "character": u64::MAX}},
            "message": "far"});
        let d = diag(&huge).unwrap();
        assert_eq!((d.line, d.col), (u32::MAX, u32::MAX));
        assert_eq!(diag(&json!("nonsense")), None);
    }

    #[test]
    fn a_server_that_floods_many_files_is_bounded_in_all() {
        let (out, _rx) = mpsc::unbounded_channel();
        let (bump, _changed) = watch::channel(0u64);
        let reader = Reader {
            out,
            pending: Arc::default(),
            state: Arc::default(),
            bump,
            settings: None,
        };
        let one = json!({"range": {"start": {"line": 0, "character": 0}}, "message": "m"});
        let many: Vec<Value> = (0..MAX_DIAGS + 10).map(|_| one.clone()).collect();
        let files = 2 * MAX_ALL_DIAGS / MAX_DIAGS;
        for n in 0..files {
            reader.notice(
                "textDocument/publishDiagnostics",
                Some(&json!({"uri": format!("file:///p/f{n}.py"), "diagnostics": many})),
            );
        }
        let kept = |r: &Reader| {
            let s = r.state.lock().unwrap();
            (
                s.diags_kept,
                s.published.values().map(|p| p.diags.len()).sum::<usize>(),
            )
        };
        assert_eq!(kept(&reader), (MAX_ALL_DIAGS, MAX_ALL_DIAGS));
        // A file cleared makes room again.
        reader.notice(
            "textDocument/publishDiagnostics",
            Some(&json!({"uri": "file:///p/f0.py", "diagnostics": []})),
        );
        assert_eq!(kept(&reader).0, MAX_ALL_DIAGS - MAX_DIAGS);
    }

    #[test]
    fn configuration_sections_are_looked_up_by_their_dotted_name() {
        let settings = json!({"python": {"analysis": {"diagnosticMode": "workspace"}}});
        assert_eq!(
            section_of(Some(&settings), Some("python.analysis")),
            json!({"diagnosticMode": "workspace"})
        );
        assert_eq!(section_of(Some(&settings), Some("other")), Value::Null);
        assert_eq!(section_of(None, Some("python")), Value::Null);
        assert_eq!(section_of(Some(&settings), None), settings);
    }
}
