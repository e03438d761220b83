//! One live connection to one server: starting it (a child process in its own process
//! group, or a streamable HTTP session), the notifications it sends, its stderr tail, and
//! killing its process group.
//!
//! rmcp does the protocol; this file only builds its transports and the client handler.
//! The handler routes `notifications/progress` to the call that owns the token (unknown
//! tokens are dropped: servers keep reporting progress for calls already cancelled),
//! `notifications/message` (a log line, cut and sanitised) to every call of the server in
//! flight, and turns `notifications/tools/list_changed` and `…/resources/list_changed`
//! into messages for the server's task, which lists them again. A server's `elicitation/create` goes to its call in flight
//! (`elicit.rs`). It answers `roots/list` with the project folder, the one root rein
//! declares, and refuses `sampling/createMessage` saying rein does not offer it (the user
//! is told once per connection): sampling would let a server spend the user's model
//! budget.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use process_wrap::tokio::{CommandWrap, ProcessGroup};
// rmcp marks roots, sampling and logging deprecated by SEP-2577, a protocol version after
// the one rein speaks (2025-11-25), where they are still the protocol.
#[allow(deprecated)]
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationCapability, ErrorData, FormElicitationCapability,
    Implementation, ListRootsResult, LoggingMessageNotificationParam, NumberOrString,
    ProgressNotificationParam, ProtocolVersion, Root, RootsCapabilities,
};
use rmcp::service::{
    ClientInitializeError, NotificationContext, RequestContext, RoleClient, RunningService,
};
use rmcp::transport::auth::AuthError;
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, StreamableHttpClientTransportConfig,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ServiceExt};
use tokio::io::AsyncBufReadExt;
use tokio::sync::mpsc;

use super::elicit::{self, FormRoutes};
use super::http_error::HttpProblem;
use super::stdio::StdioTransport;
use super::workdir::Workdirs;
use super::{oauth, spawn, McpEvent, McpProgress, ServerConfig, Transport};

/// How many of a server's last stderr lines are kept for error messages.
pub(super) const STDERR_LINES: usize = 20;
/// The longest stderr line kept, in bytes (a server printing a megabyte on one line must
/// not make every error message that long).
const STDERR_LINE_BYTES: usize = 500;
/// Between SIGTERM and SIGKILL for a server's process group.
pub(super) const KILL_GRACE: Duration = Duration::from_secs(2);

pub(super) type Service = RunningService<RoleClient, Handler>;

/// Progress senders of the calls in flight, by progress token.
pub(super) type ProgressRoutes =
    Arc<Mutex<HashMap<NumberOrString, mpsc::UnboundedSender<McpProgress>>>>;

/// The longest log line a server's `notifications/message` shows, in characters.
pub const LOG_LINE_CHARS: usize = 200;

/// What rein answers a server's `sampling/createMessage` with.
pub const NO_SAMPLING: &str =
    "rein does not offer sampling: a server cannot use the user's model (sampling/createMessage is declined)";

/// rmcp's client handler: what the server may tell rein.
pub(super) struct Handler {
    pub(super) progress: ProgressRoutes,
    pub(super) tools_changed: mpsc::UnboundedSender<()>,
    /// `notifications/resources/list_changed`: the server's task lists them again.
    pub(super) resources_changed: mpsc::UnboundedSender<()>,
    /// The server's configured name (in the notices, and who a form says asks).
    pub(super) server: String,
    /// The project folder: the one root offered (`roots/list`).
    pub(super) root: std::path::PathBuf,
    /// Where a notice goes (the manager's events).
    pub(super) events: mpsc::UnboundedSender<McpEvent>,
    /// The user was told this connection asked for sampling.
    pub(super) sampling_told: std::sync::atomic::AtomicBool,
    /// The calls in flight that can put a form to the user.
    pub(super) forms: FormRoutes,
}

impl Handler {
    pub(super) fn new(
        server: &str,
        root: &Path,
        progress: ProgressRoutes,
        tools_changed: mpsc::UnboundedSender<()>,
        resources_changed: mpsc::UnboundedSender<()>,
        events: mpsc::UnboundedSender<McpEvent>,
        forms: FormRoutes,
    ) -> Handler {
        Handler {
            progress,
            tools_changed,
            resources_changed,
            server: server.to_string(),
            root: root.to_path_buf(),
            events,
            sampling_told: std::sync::atomic::AtomicBool::new(false),
            forms,
        }
    }
}

/// The project folder as the `file://` URI of a root (`None` when it cannot be one: a
/// relative path).
pub(super) fn root_uri(root: &Path) -> Option<String> {
    reqwest::Url::from_directory_path(root)
        .ok()
        .map(|u| u.to_string().trim_end_matches('/').to_string())
}

/// A server's log notification in one line: `LEVEL[ LOGGER]: DATA` (a string as it is,
/// anything else as JSON), sanitised and cut to [`LOG_LINE_CHARS`].
pub fn log_line(level: &str, logger: Option<&str>, data: &serde_json::Value) -> String {
    let data = match data {
        serde_json::Value::String(text) => text.clone(),
        other => {
            // At most a few times the line's length of JSON is written out.
            let mut text = other.to_string();
            if text.len() > LOG_LINE_CHARS * 4 {
                let mut end = LOG_LINE_CHARS * 4;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                text.truncate(end);
            }
            text
        }
    };
    let whole = match logger {
        Some(logger) => format!("{level} {logger}: {data}"),
        None => format!("{level}: {data}"),
    };
    crate::text::sanitize::line(&whole, LOG_LINE_CHARS)
}

#[allow(deprecated)] // roots, sampling, logging: see the imports
impl ClientHandler for Handler {
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let roots = root_uri(&self.root)
            .map(|uri| {
                let mut root = Root::new(uri);
                root.name = self
                    .root
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned());
                root
            })
            .into_iter()
            .collect();
        Ok(ListRootsResult::new(roots))
    }

    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        if !self
            .sampling_told
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            let _ = self.events.send(McpEvent::Notice {
                name: self.server.clone(),
                message: "it asked to use your model (sampling); rein declined: it does not offer sampling to servers"
                    .into(),
            });
        }
        Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            NO_SAMPLING,
            None,
        ))
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| "log".into());
        let line = log_line(&level, params.logger.as_deref(), &params.data);
        let routes = self.progress.lock().unwrap_or_else(|e| e.into_inner());
        for sender in routes.values() {
            let _ = sender.send(McpProgress {
                progress: 0.0,
                total: None,
                message: Some(line.clone()),
                log: true,
            });
        }
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let routes = self.progress.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(sender) = routes.get(&params.progress_token.0) {
            let _ = sender.send(McpProgress {
                progress: params.progress,
                total: params.total,
                message: params
                    .message
                    .as_deref()
                    .map(|m| crate::text::sanitize::line(m, LOG_LINE_CHARS)),
                log: false,
            });
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.tools_changed.send(());
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.resources_changed.send(());
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let gave_up = context.ct.cancelled();
        Ok(elicit::answer(&self.server, &self.forms, request, gave_up).await)
    }

    fn get_info(&self) -> ClientConfig {
        // Roots (the project folder) and forms (elicitation, `elicit.rs`). No sampling (a
        // `sampling/createMessage` is declined) and no URL elicitation.
        let mut capabilities = ClientCapabilities::default();
        capabilities.roots = Some(RootsCapabilities::default());
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        ClientConfig::new(
            capabilities,
            Implementation::new("rein", env!("CARGO_PKG_VERSION")),
        )
        // The newest version that still has an `initialize` handshake (2025-11-25).
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

/// The last [`STDERR_LINES`] lines a server wrote to stderr.
#[derive(Clone, Default)]
pub(super) struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    /// Read `stderr` to its end in the background. A line ends at `\n` or `\r` (a
    /// progress bar redraws itself with `\r` and may never write `\n`), and only its first
    /// [`STDERR_LINE_BYTES`] are kept while it is read: a server writing without line ends
    /// costs no memory.
    fn read_from(&self, stderr: tokio::process::ChildStderr) {
        let lines = self.0.clone();
        tokio::spawn(async move {
            let mut reader = tokio::io::BufReader::new(stderr);
            // Raw bytes: a server's stderr need not be UTF-8.
            let mut line = Vec::new();
            let mut cut = false;
            loop {
                let (used, ended) = {
                    let Ok(available) = reader.fill_buf().await else {
                        break;
                    };
                    if available.is_empty() {
                        break;
                    }
                    let end = memchr::memchr2(b'\n', b'\r', available);
                    let piece = &available[..end.unwrap_or(available.len())];
                    let room = (STDERR_LINE_BYTES + 4).saturating_sub(line.len());
                    line.extend_from_slice(&piece[..piece.len().min(room)]);
                    cut |= piece.len() > room;
                    (end.map_or(available.len(), |i| i + 1), end.is_some())
                };
                reader.consume(used);
                if ended {
                    keep_line(&lines, &line, cut);
                    line.clear();
                    cut = false;
                }
            }
            keep_line(&lines, &line, cut);
        });
    }

    pub(super) fn lines(&self) -> Vec<String> {
        let kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.iter().cloned().collect()
    }
}

/// Keep one stderr line (raw bytes, perhaps cut while read) in the tail, at most
/// [`STDERR_LINE_BYTES`] of it and `…` where it was cut; blank lines are not kept.
fn keep_line(lines: &Mutex<VecDeque<String>>, line: &[u8], cut: bool) {
    let mut text = String::from_utf8_lossy(line).trim_end().to_string();
    if text.is_empty() {
        return;
    }
    if cut || text.len() > STDERR_LINE_BYTES {
        let mut end = STDERR_LINE_BYTES.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    let mut kept = lines.lock().unwrap_or_else(|e| e.into_inner());
    if kept.len() == STDERR_LINES {
        kept.pop_front();
    }
    kept.push_back(text);
}

/// A started transport, before the handshake.
pub(super) enum Started {
    Stdio {
        transport: StdioTransport,
        pgid: Option<u32>,
    },
    /// The transport is built at the handshake (its client type is rmcp's reqwest).
    Http(StreamableHttpClientTransportConfig),
}

/// Start the server's process (or prepare its HTTP transport). Errors are one line.
pub(super) fn start(
    config: &ServerConfig,
    root: &Path,
    workdirs: &Workdirs,
    stderr: &StderrTail,
) -> Result<Started, String> {
    match &config.transport {
        Transport::Stdio { command, .. } => {
            // Where it runs, what it runs and with what: decided in `spawn.rs`, so nothing
            // of the project is reached unless the table names it.
            let plan = spawn::plan(
                config,
                root,
                || workdirs.for_server(&config.name),
                std::env::vars_os(),
            )?;
            let mut cmd = tokio::process::Command::new(&plan.program);
            cmd.arg0(&plan.arg0)
                .args(&plan.args)
                .kill_on_drop(true)
                .current_dir(&plan.cwd)
                .env_clear()
                .envs(plan.env);
            dies_with_rein(&mut cmd);
            // What the server starts carries its mark: what leaves its group dies with it.
            let mark = crate::host::process_tree::mark(&mut cmd);
            let mut wrap = CommandWrap::from(cmd);
            // setpgid(0, 0) before exec; rein's kill then reaches the whole group.
            wrap.wrap(ProcessGroup::leader());
            let (transport, err, pgid) = StdioTransport::spawn(wrap).map_err(|e| {
                format!("cannot start `{command}` ({}): {e}", plan.program.display())
            })?;
            if let Some(err) = err {
                stderr.read_from(err);
            }
            if let Some(pgid) = pgid.and_then(|p| libc::pid_t::try_from(p).ok()) {
                mark.register(pgid);
            }
            Ok(Started::Stdio { transport, pgid })
        }
        Transport::Http {
            url,
            headers,
            bearer_token_env,
            ..
        } => {
            // rmcp's reqwest (0.13, rustls without a provider) needs one installed first;
            // a second install is refused harmlessly.
            let _ = rustls::crypto::ring::default_provider().install_default();
            let mut map = HashMap::new();
            for (name, value) in headers {
                let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| format!("header {name:?} is not a valid HTTP header name"))?;
                let value = reqwest::header::HeaderValue::from_str(value)
                    .map_err(|_| format!("header {name}: not a valid HTTP header value"))?;
                map.insert(name, value);
            }
            let mut transport_config =
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(map);
            if let Some(var) = bearer_token_env {
                match std::env::var(var) {
                    Ok(token) if !token.trim().is_empty() => {
                        transport_config = transport_config.auth_header(token.trim());
                    }
                    _ => {
                        return Err(format!(
                            "the environment variable {var} (bearer_token_env) is not set"
                        ))
                    }
                }
            }
            Ok(Started::Http(transport_config))
        }
    }
}

/// Linux: the server is killed when rein dies, however it dies (SIGKILL, or a signal
/// that came before rein watched for it), as a bash command's shell is (`tools::bash`).
/// Only the server's own process: its children are killed with its group by
/// [`kill_group`] when rein exits in order. The parent-death signal follows the thread
/// that started the server, a runtime worker that lives as long as rein's runtime.
fn dies_with_rein(cmd: &mut tokio::process::Command) {
    #[cfg(target_os = "linux")]
    {
        let Ok(rein) = libc::pid_t::try_from(std::process::id()) else {
            return;
        };
        // SAFETY: in the child between fork and exec, only async-signal-safe calls that
        // allocate nothing: prctl, getppid, and an error built from a number.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                // rein died before the guard was set: nothing would stop the server.
                if libc::getppid() != rein {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

/// Why a handshake did not give a connection.
pub(super) enum Failure {
    /// Said in one line.
    Reason(String),
    /// An HTTP server answered 401 and rein has no token it accepts.
    NeedsLogin,
}

impl From<String> for Failure {
    fn from(reason: String) -> Failure {
        Failure::Reason(reason)
    }
}

/// An HTTP server's OAuth login, when rein keeps one for it: its settings, and whether a
/// person can answer a new login while it runs.
pub(super) struct Login {
    pub(super) target: oauth::Target,
    pub(super) browser: bool,
}

/// Run the MCP handshake over a started transport.
pub(super) async fn handshake(
    started: Started,
    handler: Handler,
    login: Option<Login>,
) -> Result<Service, Failure> {
    match started {
        Started::Stdio { transport, .. } => handler
            .serve(transport)
            .await
            .map_err(|e| Failure::Reason(format!("initialize failed: {e}"))),
        Started::Http(config) => {
            let url = config.uri.to_string();
            let client = match login {
                Some(Login { target, browser }) => match oauth::stored(&target).await {
                    Ok(Some(manager)) => {
                        let relogin = browser.then(|| oauth::Relogin {
                            target,
                            prompt: Box::new(oauth::StderrPrompt),
                        });
                        Some(oauth::OAuthHttpClient::new(manager, relogin))
                    }
                    Ok(None) => None,
                    Err(why) => {
                        return Err(Failure::Reason(format!(
                        "its OAuth login cannot be used ({why}); `rein mcp login {}` logs in again",
                        target.name
                    )))
                    }
                },
                None => None,
            };
            let served = match client {
                Some(client) => {
                    handler
                        .serve(StreamableHttpClientTransport::with_client(client, config))
                        .await
                }
                None => {
                    handler
                        .serve(StreamableHttpClientTransport::from_config(config))
                        .await
                }
            };
            served.map_err(|e| match &e {
                ClientInitializeError::TransportError { error, .. } if needs_login(error) => {
                    Failure::NeedsLogin
                }
                // In plain words, without rmcp's type names.
                ClientInitializeError::TransportError { error, .. } => Failure::Reason(format!(
                    "{url} {}",
                    HttpProblem::of(error).describe("initialize")
                )),
                _ => Failure::Reason(format!("initialize failed: {e}")),
            })
        }
    }
}

/// Whether a transport error is the server's 401 (rmcp's `AuthRequired`, or its
/// `AuthorizationRequired` when a stored token could not be renewed).
pub(super) fn needs_login(error: &rmcp::transport::DynamicTransportError) -> bool {
    let mut chain: Option<&(dyn std::error::Error + 'static)> = Some(error.error.as_ref());
    while let Some(e) = chain {
        if e.downcast_ref::<AuthRequiredError>().is_some()
            || matches!(
                e.downcast_ref::<AuthError>(),
                Some(AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_))
            )
        {
            return true;
        }
        chain = e.source();
    }
    false
}

/// Send `signal` to the process group `pgid`.
pub(super) fn signal_group(pgid: u32, signal: i32) {
    if let Ok(pgid) = libc::pid_t::try_from(pgid) {
        if pgid > 1 {
            // The group, and what its members started that left it.
            crate::host::process_tree::signal(pgid, signal);
        }
    }
}

/// Whether any live (not zombie) process is left in the group `pgid`.
pub fn group_alive(pgid: u32) -> bool {
    #[cfg(target_os = "linux")]
    {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return false;
        };
        for entry in entries.flatten() {
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // pid (comm) state ppid pgrp ...: comm may hold spaces, so split after ')'.
            let Some((_, rest)) = stat.rsplit_once(')') else {
                continue;
            };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            if fields.len() > 2 && fields[2] == pgid.to_string() && fields[0] != "Z" {
                return true;
            }
        }
        false
    }
    #[cfg(not(target_os = "linux"))]
    {
        let Ok(pgid) = libc::pid_t::try_from(pgid) else {
            return false;
        };
        // SAFETY: signal 0 only checks that the group exists.
        unsafe { libc::killpg(pgid, 0) == 0 }
    }
}

/// SIGTERM to the group now, SIGKILL after [`KILL_GRACE`] if anything is left; on a
/// plain thread, so it works while the runtime shuts down or is gone (a drop).
pub(super) fn kill_group_in_background(pgid: u32) {
    signal_group(pgid, libc::SIGTERM);
    std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + KILL_GRACE;
        while std::time::Instant::now() < deadline {
            if !group_alive(pgid) {
                kill_left(pgid);
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        signal_group(pgid, libc::SIGKILL);
    });
}

/// The group `pgid` ended: what its members started that left it goes too.
pub(super) fn kill_left(pgid: u32) {
    if let Ok(pgid) = libc::pid_t::try_from(pgid) {
        crate::host::process_tree::kill_left(pgid);
    }
}

/// SIGTERM, wait up to [`KILL_GRACE`], SIGKILL; returns once the group is gone (or a
/// short while after the SIGKILL).
pub(super) async fn kill_group(pgid: u32) {
    signal_group(pgid, libc::SIGTERM);
    let deadline = tokio::time::Instant::now() + KILL_GRACE;
    while tokio::time::Instant::now() < deadline {
        if !group_alive(pgid) {
            kill_left(pgid);
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    signal_group(pgid, libc::SIGKILL);
    for _ in 0..40 {
        if !group_alive(pgid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
