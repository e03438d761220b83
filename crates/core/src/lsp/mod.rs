//! Language servers: what the compiler sees, after every edit.
//!
//! A server starts when the session first needs it, for a file of its language the model
//! reads or edits ([`spec`]: the defaults found on `PATH`, and the user's `[lsp.NAME]`
//! tables), one per server and project folder, in the sandbox with no network
//! ([`crate::sandbox::Sandbox::for_tool`]); it stops with the session. After an edit
//! ([`Lsp::edited`]) the server is told the new text, and rein waits, at most the
//! configured bound, for its diagnostics of that version and of the other files they
//! touch; what the edit introduced ([`diagnostics::introduced`]) is told after the
//! edit's result. A file the server has not seen yet is first opened with its old text,
//! so an error that was there before is never blamed on the edit.
//!
//! Faults are notices, never failed edits: a server that cannot start is tried again with
//! a growing pause, and left alone after [`MAX_TRIES`] (said once); one that dies, hangs or
//! floods is bounded by time and size ([`server`]).

mod check;
pub mod diagnostics;
pub mod navigate;
pub mod server;
pub mod spec;
pub mod wire;

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;

use diagnostics::Diag;
use server::{Launch, Server};
use spec::ServerSpec;

/// How often a server that cannot start or keeps dying is tried before it is left alone.
pub const MAX_TRIES: u32 = 3;
/// How long a server may take to answer `initialize`, unless configured.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(20);
/// The default bound on the wait for an edit's diagnostics.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(3);
/// How long a freshly started server must say nothing more before its first check of
/// the project counts as done.
const WARM_QUIET: Duration = Duration::from_secs(1);
/// The largest file opened in a server.
pub const MAX_OPEN_BYTES: u64 = 4 * 1024 * 1024;
/// Once the edited file's diagnostics came, how long no further ones must come before the
/// others are taken as complete.
const QUIET: Duration = Duration::from_millis(300);

/// One file's errors and warnings, as the servers last published them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FileCount {
    /// Relative to the project when inside it.
    pub path: String,
    pub errors: usize,
    pub warnings: usize,
}

/// A server as `/lsp` shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ServerInfo {
    pub name: String,
    /// The folder it serves, relative to the project (`.` for the project).
    pub root: String,
    /// `running`, or why it is not.
    pub state: String,
    /// The last thing it said (a log message, or its last line on stderr).
    pub note: Option<String>,
}

/// The errors and warnings of the files the session touched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub errors: usize,
    pub warnings: usize,
    pub files: Vec<FileCount>,
}

/// The `[lsp]` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LspSettings {
    /// `lsp.enabled = false` turns every server off.
    pub enabled: bool,
    /// The user's `[lsp.NAME]` tables.
    pub servers: Vec<ServerSpec>,
    /// The most an edit waits for its diagnostics (`lsp.diagnostics_wait_ms`).
    pub wait: Duration,
    /// The servers a project's config names, which are not run.
    pub held: Vec<String>,
    /// How long a server may take to start (`lsp.start_timeout_ms`).
    pub start_timeout: Duration,
}

impl Default for LspSettings {
    fn default() -> Self {
        LspSettings {
            enabled: true,
            servers: Vec::new(),
            wait: DEFAULT_WAIT,
            held: Vec::new(),
            start_timeout: DEFAULT_START_TIMEOUT,
        }
    }
}

/// A server as the session has it.
enum Slot {
    Running(Arc<Running>),
    /// It could not start, or died: tried again after `retry`, unless it was tried
    /// [`MAX_TRIES`] times.
    Failed {
        why: String,
        tries: u32,
        retry: Instant,
        told: bool,
    },
}

/// A running server and the documents it has open, with their versions.
struct Running {
    server: Server,
    docs: tokio::sync::Mutex<HashMap<PathBuf, i64>>,
    /// It has checked the project once ([`Lsp::warm_up`]).
    warm: tokio::sync::OnceCell<()>,
    /// A hash of the text last sent for each open document.
    sent: std::sync::Mutex<HashMap<PathBuf, u64>>,
}

impl Running {
    /// Note that the server was told `text` for `path`.
    fn told(&self, path: &Path, text: &str) {
        let mut sent = self
            .sent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        sent.insert(path.to_path_buf(), text_hash(text));
    }

    /// Whether `text` is what the server was last told for `path`.
    fn knows(&self, path: &Path, text: &str) -> bool {
        let sent = self
            .sent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        sent.get(path) == Some(&text_hash(text))
    }
}

/// A hash of a document's text (to tell whether the server has it already).
fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// The session's language servers.
#[derive(Clone)]
pub struct Lsp {
    inner: Arc<Inner>,
}

struct Inner {
    project: PathBuf,
    sandbox: Arc<crate::sandbox::Sandbox>,
    secrets: Vec<String>,
    settings: LspSettings,
    specs: Vec<ServerSpec>,
    path_var: Option<OsString>,
    /// Where the servers keep their caches (one folder each).
    cache: PathBuf,
    slots: tokio::sync::Mutex<HashMap<(String, PathBuf), Slot>>,
    /// Where each command was found on `PATH` (`None`: it was not).
    programs: std::sync::Mutex<HashMap<String, Option<PathBuf>>>,
    /// The first word ([`Lsp::first_word`]) was said.
    told: std::sync::atomic::AtomicBool,
    /// What the user is to be told ([`Lsp::take_notices`]), at most [`MAX_NOTICES`].
    notices: std::sync::Mutex<Vec<String>>,
    /// What [`Lsp::servers_changed`] last said.
    servers: std::sync::Mutex<Vec<ServerInfo>>,
    /// Edits their server had not reported on in time ([`Lsp::late`]).
    late: std::sync::Mutex<Vec<Late>>,
    /// The files the session read or edited that a server serves, and what
    /// [`Lsp::counts_changed`] last said of them.
    touched: std::sync::Mutex<(std::collections::BTreeSet<PathBuf>, Counts)>,
}

/// An edit whose report did not come in time: what is needed to tell it when it does.
struct Late {
    running: Arc<Running>,
    path: PathBuf,
    /// A command changed the file (rather than an edit of the model's).
    by_command: bool,
    /// The version the edit made.
    version: i64,
    /// The publish count before the edit.
    seq: u64,
    before: HashMap<PathBuf, Vec<Diag>>,
}

/// The most edits waited for at once.
const MAX_LATE: usize = 8;

/// The most notices kept until they are taken.
const MAX_NOTICES: usize = 20;

impl std::fmt::Debug for Lsp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Lsp")
    }
}

impl Lsp {
    /// The language servers of the project `project`, run in `sandbox` without the
    /// `secrets`; `None` when they are turned off. Their caches go under the user's cache
    /// folder (`~/.cache/rein/lsp/NAME`).
    pub fn new(
        settings: &LspSettings,
        project: &Path,
        sandbox: Arc<crate::sandbox::Sandbox>,
        secrets: Vec<String>,
    ) -> Option<Lsp> {
        let cache = directories::BaseDirs::new()
            .map(|d| d.cache_dir().join("rein").join("lsp"))
            .unwrap_or_else(|| std::env::temp_dir().join("rein-lsp"));
        Lsp::with_cache(settings, project, sandbox, secrets, cache)
    }

    /// [`Lsp::new`] with the caches in `cache`.
    pub fn with_cache(
        settings: &LspSettings,
        project: &Path,
        sandbox: Arc<crate::sandbox::Sandbox>,
        secrets: Vec<String>,
        cache: PathBuf,
    ) -> Option<Lsp> {
        if !settings.enabled {
            return None;
        }
        let specs = spec::merged(&settings.servers);
        Some(Lsp {
            inner: Arc::new(Inner {
                project: project.to_path_buf(),
                sandbox,
                secrets,
                settings: settings.clone(),
                specs,
                path_var: std::env::var_os("PATH"),
                cache,
                slots: tokio::sync::Mutex::new(HashMap::new()),
                programs: std::sync::Mutex::new(HashMap::new()),
                told: std::sync::atomic::AtomicBool::new(false),
                notices: std::sync::Mutex::new(Vec::new()),
                touched: std::sync::Mutex::new(Default::default()),
                late: std::sync::Mutex::new(Vec::new()),
                servers: std::sync::Mutex::new(Vec::new()),
            }),
        })
    }

    /// The server for `path` and its program: the first enabled one that serves its
    /// extension and is installed (each program looked up once).
    fn spec_for(&self, path: &Path) -> Option<(&ServerSpec, PathBuf)> {
        let mut programs = self
            .inner
            .programs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.inner
            .specs
            .iter()
            .filter(|s| s.enabled && s.serves(path))
            .find_map(|s| {
                programs
                    .entry(s.command.clone())
                    .or_insert_with(|| {
                        spec::find_program(&s.command, self.inner.path_var.as_deref())
                    })
                    .clone()
                    .map(|p| (s, p))
            })
    }

    /// What the session is told once, the first time a server is needed: the project's
    /// servers that are held, and why none runs without the sandbox. `Err` when none may
    /// run.
    fn first_word(&self) -> Result<Option<String>, String> {
        let first = !self
            .inner
            .told
            .swap(true, std::sync::atomic::Ordering::Relaxed);
        if !matches!(
            self.inner.sandbox.state(),
            crate::sandbox::SandboxState::On { .. }
        ) {
            return if first {
                Err("language servers run only inside the sandbox, which is not on here: edits are not checked (`rein doctor` says why)".into())
            } else {
                Ok(None)
            };
        }
        let held = &self.inner.settings.held;
        Ok((first && !held.is_empty()).then(|| {
            format!(
                "the project's language servers {} are not run: a project's config may not name programs rein runs",
                held.join(", ")
            )
        }))
    }

    /// The running server for `path`, started if need be. `Ok(None)`: none serves it;
    /// `Err`: one does, and cannot be had now (said once, then `Ok(None)`).
    async fn server_for(&self, path: &Path) -> Result<Option<Arc<Running>>, String> {
        let Some((spec, program)) = self.spec_for(path) else {
            return Ok(None);
        };
        if !matches!(
            self.inner.sandbox.state(),
            crate::sandbox::SandboxState::On { .. }
        ) {
            if let Err(word) = self.first_word() {
                self.tell(word);
            }
            return Ok(None);
        }
        let root = spec::root_for(path, &self.inner.project, &spec.root_markers);
        let key = (spec.name.clone(), root.clone());
        let mut slots = self.inner.slots.lock().await;
        let tries = match slots.get_mut(&key) {
            Some(Slot::Running(running)) if running.server.dead().is_none() => {
                return Ok(Some(running.clone()));
            }
            Some(Slot::Running(running)) => {
                let why = running.server.dead().unwrap_or_default();
                slots.insert(
                    key.clone(),
                    Slot::Failed {
                        why: format!("it stopped: {why}"),
                        tries: 1,
                        retry: Instant::now(),
                        told: false,
                    },
                );
                1
            }
            Some(Slot::Failed {
                why,
                tries,
                retry,
                told,
            }) => {
                if *tries >= MAX_TRIES || Instant::now() < *retry {
                    if *told {
                        return Ok(None);
                    }
                    *told = true;
                    let again = if *tries >= MAX_TRIES {
                        "rein has stopped trying it for this session".to_string()
                    } else {
                        "rein tries it again later".to_string()
                    };
                    return Err(format!("{} is not available ({why}); {again}", spec.name));
                }
                *tries
            }
            None => 0,
        };
        let cache = self.inner.cache.join(&spec.name);
        let _ = std::fs::create_dir_all(&cache);
        let started = Server::start(Launch {
            spec,
            program: &program,
            root: &root,
            sandbox: &self.inner.sandbox,
            cache: &cache,
            secrets: &self.inner.secrets,
            init_timeout: self.inner.settings.start_timeout,
        })
        .await;
        match started {
            Ok(server) => {
                let running = Arc::new(Running {
                    server,
                    docs: tokio::sync::Mutex::new(HashMap::new()),
                    warm: tokio::sync::OnceCell::new(),
                    sent: std::sync::Mutex::new(HashMap::new()),
                });
                slots.insert(key, Slot::Running(running.clone()));
                Ok(Some(running))
            }
            Err(why) => {
                let tries = tries + 1;
                let pause = Duration::from_secs(2u64.saturating_pow(tries));
                slots.insert(
                    key,
                    Slot::Failed {
                        why: why.clone(),
                        tries,
                        retry: Instant::now() + pause,
                        told: true,
                    },
                );
                Err(format!("{} could not start: {why}", spec.name))
            }
        }
    }

    /// Whether a server may check edits of `path` (one serves it, is installed, and the
    /// sandbox is on): only then is the old text of a whole-file write read.
    pub fn serves(&self, path: &Path) -> bool {
        matches!(
            self.inner.sandbox.state(),
            crate::sandbox::SandboxState::On { .. }
        ) && self.spec_for(path).is_some()
    }

    /// The model read `path` (`text`: as the editor has it; `None`: as on disk): its
    /// server (started in the background on first need) opens it, so its diagnostics are
    /// known before an edit.
    pub fn read(&self, path: &Path, text: Option<String>) {
        let sandboxed = matches!(
            self.inner.sandbox.state(),
            crate::sandbox::SandboxState::On { .. }
        );
        if !sandboxed || self.spec_for(path).is_none() {
            return;
        }
        self.touch(path);
        let lsp = self.clone();
        let path = path.to_path_buf();
        tokio::spawn(async move {
            if let Ok(Some(running)) = lsp.server_for(&path).await {
                let mut docs = running.docs.lock().await;
                if docs.contains_key(&path) {
                    return;
                }
                let text = match text {
                    Some(text) => text,
                    None => match crate::host::safe_fs::read_text_exactly(&path, MAX_OPEN_BYTES) {
                        Some(text) => text,
                        None => return,
                    },
                };
                open(&running.server, &path, &text, 1);
                running.told(&path, &text);
                docs.insert(path, 1);
            }
        });
    }

    /// `path` was edited from `before` (`None`: it did not exist, or is not known) to
    /// `after`: what the edit introduced, as the lines to add to its result (`None`:
    /// nothing to say, or no server for it).
    pub async fn edited(&self, path: &Path, before: Option<&str>, after: &str) -> Option<String> {
        let running = match self.server_for(path).await {
            Ok(Some(running)) => running,
            Ok(None) => return None,
            Err(notice) => {
                self.tell(notice);
                return None;
            }
        };
        if let Ok(Some(word)) = self.first_word() {
            self.tell(word);
        }
        self.touch(path);
        self.check(&running, path, before, after).await
    }

    /// `path` as the model names it: relative to the project when inside it.
    fn shown(&self, path: &Path) -> String {
        path.strip_prefix(&self.inner.project)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// Count `path` among the files the session touched.
    fn touch(&self, path: &Path) {
        let mut touched = self
            .inner
            .touched
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if touched.0.len() < 10_000 {
            touched.0.insert(path.to_path_buf());
        }
    }

    /// The errors and warnings of the touched files now, when they differ from what the
    /// last call returned (`None`: no change, or the servers are busy starting).
    pub fn counts_changed(&self) -> Option<Counts> {
        let slots = self.inner.slots.try_lock().ok()?;
        let mut touched = self
            .inner
            .touched
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut now = Counts::default();
        for path in &touched.0 {
            let mut count = (0, 0);
            for slot in slots.values() {
                let Slot::Running(running) = slot else {
                    continue;
                };
                let state = running.server.state();
                if let Some(published) = state.published.get(path) {
                    for d in &published.diags {
                        match d.severity {
                            diagnostics::Severity::Error => count.0 += 1,
                            diagnostics::Severity::Warning => count.1 += 1,
                            _ => {}
                        }
                    }
                }
            }
            if count != (0, 0) {
                now.errors += count.0;
                now.warnings += count.1;
                now.files.push(FileCount {
                    path: self.shown(path),
                    errors: count.0,
                    warnings: count.1,
                });
            }
        }
        if now == touched.1 {
            return None;
        }
        touched.1 = now.clone();
        Some(now)
    }

    /// The servers started in this session and how they are, when that differs from what
    /// the last call returned (`None`: no change, or one is starting).
    pub fn servers_changed(&self) -> Option<Vec<ServerInfo>> {
        let slots = self.inner.slots.try_lock().ok()?;
        let mut now: Vec<ServerInfo> = slots
            .iter()
            .map(|((name, root), slot)| {
                let root = match root.strip_prefix(&self.inner.project) {
                    Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
                    Ok(rel) => rel.display().to_string(),
                    Err(_) => root.display().to_string(),
                };
                let (state, note) = match slot {
                    Slot::Running(running) => {
                        let s = running.server.state();
                        let note = s.note.clone().or_else(|| {
                            s.stderr.trim().lines().last().map(|l| l.trim().to_string())
                        });
                        match &s.dead {
                            None => ("running".to_string(), note),
                            Some(why) => (format!("stopped: {why}"), note),
                        }
                    }
                    Slot::Failed { why, tries, .. } => {
                        let again = if *tries >= MAX_TRIES {
                            "given up".to_string()
                        } else {
                            format!("tried {tries} of {MAX_TRIES} times")
                        };
                        (format!("not running ({again}): {why}"), None)
                    }
                };
                ServerInfo {
                    name: name.clone(),
                    root,
                    state,
                    note: note.filter(|n| !n.is_empty()),
                }
            })
            .collect();
        now.sort_by(|a, b| (&a.name, &a.root).cmp(&(&b.name, &b.root)));
        let mut last = self
            .inner
            .servers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if *last == now {
            return None;
        }
        *last = now.clone();
        Some(now)
    }

    /// Keep `notice` for the user.
    fn tell(&self, notice: String) {
        let mut notices = self
            .inner
            .notices
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if notices.len() < MAX_NOTICES {
            notices.push(notice);
        }
    }

    /// What the user is to be told since the last call: servers that could not start or
    /// stopped, the project's servers held, edits not checked without the sandbox.
    pub fn take_notices(&self) -> Vec<String> {
        std::mem::take(
            &mut *self
                .inner
                .notices
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Files a command changed (the checkpoint after a batch of calls found them, relative
    /// to the project): a running server is told each one it serves whose text is not
    /// what it was last told (an open document changes; another is announced as changed
    /// on disk), and what that introduced comes with a later tool result ([`Lsp::late`]).
    /// No server is started for this.
    pub fn changed_on_disk(&self, paths: Vec<PathBuf>) {
        let lsp = self.clone();
        tokio::spawn(async move {
            for path in paths {
                let path = lsp.inner.project.join(path);
                lsp.disk_change(&path).await;
            }
        });
    }

    async fn disk_change(&self, path: &Path) {
        let Some((spec, _)) = self.spec_for(path) else {
            return;
        };
        let root = spec::root_for(path, &self.inner.project, &spec.root_markers);
        let running = {
            let slots = self.inner.slots.lock().await;
            match slots.get(&(spec.name.clone(), root)) {
                Some(Slot::Running(r)) if r.server.dead().is_none() => r.clone(),
                _ => return,
            }
        };
        let server = &running.server;
        let text = crate::host::safe_fs::read_text_exactly(path, MAX_OPEN_BYTES);
        let mut docs = running.docs.lock().await;
        let open_version = docs.get(path).copied();
        if let (Some(text), Some(_)) = (&text, open_version) {
            if running.knows(path, text) {
                return;
            }
        }
        let (before, seq) = check::snapshot(server);
        let version = match (open_version, &text) {
            (Some(v), Some(text)) => {
                let next = v + 1;
                docs.insert(path.to_path_buf(), next);
                server.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": server::uri(path), "version": next},
                           "contentChanges": [{"text": text}]}),
                );
                running.told(path, text);
                next
            }
            // Not open (or gone): the server reads the disk itself.
            _ => {
                let kind = if text.is_none() { 3 } else { 2 };
                server.notify(
                    "workspace/didChangeWatchedFiles",
                    json!({"changes": [{"uri": server::uri(path), "type": kind}]}),
                );
                0
            }
        };
        drop(docs);
        self.wait_late(Late {
            running: running.clone(),
            path: path.to_path_buf(),
            by_command: true,
            version,
            seq,
            before,
        });
    }

    /// The servers running now.
    async fn running(&self) -> Vec<Arc<Running>> {
        let slots = self.inner.slots.lock().await;
        slots
            .values()
            .filter_map(|slot| match slot {
                Slot::Running(r) if r.server.dead().is_none() => Some(r.clone()),
                _ => None,
            })
            .collect()
    }

    /// Whether any server runs (the `lsp` tool is offered from then on).
    pub fn any_running(&self) -> bool {
        self.inner
            .slots
            .try_lock()
            .map(|slots| {
                slots
                    .values()
                    .any(|s| matches!(s, Slot::Running(r) if r.server.dead().is_none()))
            })
            .unwrap_or(true)
    }

    /// Stop every server (politely, then their process groups).
    pub async fn shutdown(&self) {
        let mut slots = self.inner.slots.lock().await;
        for (_, slot) in slots.drain() {
            if let Slot::Running(running) = slot {
                running.server.stop().await;
            }
        }
    }
}

/// Tell `server` that `path` is open with `text`.
fn open(server: &Server, path: &Path, text: &str, version: i64) {
    server.notify(
        "textDocument/didOpen",
        json!({"textDocument": {
            "uri": server::uri(path),
            "languageId": language_id(path),
            "version": version,
            "text": text,
        }}),
    );
}

/// The protocol's language id for `path`'s extension.
fn language_id(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "py" | "pyi" => "python",
        "rs" => "rust",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "go" => "go",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
        _ => "plaintext",
    }
}
