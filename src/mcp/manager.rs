//! [`McpManager`]: every configured server, its state, its tools, and calls to them.
//!
//! Each enabled server gets a task of its own (started by [`McpManager::start`], which
//! returns at once): start the transport, handshake and list the tools within
//! `startup_timeout`, then wait for the connection to end, re-listing on
//! `tools/list_changed` (and once, shortly after connecting, over HTTP, where the early
//! notification can be lost). A restart bumps the server's generation, so whatever the old
//! task still reports is ignored.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    PaginatedRequestParams, ServerResult, Tool,
};
use rmcp::service::{PeerRequestOptions, RoleClient};
use rmcp::{Peer, ServiceError};
use tokio::sync::{mpsc, watch};

use super::connection::{self, Handler, ProgressRoutes, StderrTail};
use super::result::{self, McpOutput};
use super::workdir::Workdirs;
use super::{
    names, schema, Held, McpAnnotations, McpError, McpEvent, McpProgress, McpTool, ServerConfig,
    ServerState, Transport,
};

/// A cheaply clonable handle on the servers; the last one dropped kills every server's
/// process group (SIGTERM, then SIGKILL after 2 s, on a plain thread).
#[derive(Clone)]
pub struct McpManager {
    inner: Arc<Inner>,
}

struct Inner {
    root: PathBuf,
    /// The neutral folders the user's stdio servers start in (`workdir.rs`).
    workdirs: Workdirs,
    events: mpsc::UnboundedSender<McpEvent>,
    slots: Mutex<Vec<Slot>>,
}

/// One configured server.
struct Slot {
    config: ServerConfig,
    state: ServerState,
    generation: u64,
    /// The server's offered tools (allow/deny applied), as it listed them.
    tools: Vec<Tool>,
    live: Option<Live>,
    /// The process group of a stdio server that is still starting.
    starting_pgid: Option<u32>,
    /// Its first start was launched (by [`McpManager::launch`]).
    launched: bool,
}

/// What a call needs of a ready server.
#[derive(Clone)]
struct Live {
    peer: Peer<RoleClient>,
    progress: ProgressRoutes,
    /// Becomes `true` when the connection has ended.
    closed: watch::Receiver<bool>,
    stderr: StderrTail,
    /// The process group of a stdio server.
    pgid: Option<u32>,
    /// Ends the connection (rmcp's cancellation token, wrapped: it is not `Clone`).
    stop: Arc<Mutex<Option<rmcp::service::RunningServiceCancellationToken>>>,
}

impl McpManager {
    /// Start every enabled server in the background, for the project at `root` (what
    /// `${project}` means, and where a project's server runs). Never waits for a server:
    /// the states and tools arrive through the events.
    pub fn start(
        servers: Vec<ServerConfig>,
        root: &Path,
    ) -> (McpManager, mpsc::UnboundedReceiver<McpEvent>) {
        McpManager::start_holding(servers, Vec::new(), root)
    }

    /// [`start`](Self::start) `servers`, and list `held` without starting them: a
    /// project's servers the user has not allowed (yet, or for what they declare now),
    /// started by [`allow`](Self::allow) once they are.
    pub fn start_holding(
        servers: Vec<ServerConfig>,
        held: Vec<Held>,
        root: &Path,
    ) -> (McpManager, mpsc::UnboundedReceiver<McpEvent>) {
        let (manager, events) = McpManager::prepare(servers, held, root, None);
        manager.launch();
        (manager, events)
    }

    /// [`start_holding`](Self::start_holding) without starting anything yet: the servers
    /// are listed (`Starting`, `Disabled` or held) and start at [`launch`](Self::launch).
    /// The dashboard launches them once its first frame is drawn, so three servers'
    /// start-up (node and Python take a second of CPU) never delays it. `data_dir` is
    /// rein's data folder, one of the places the neutral folder of the user's servers may
    /// go (`workdir.rs`).
    pub fn prepare(
        servers: Vec<ServerConfig>,
        held: Vec<Held>,
        root: &Path,
        data_dir: Option<&Path>,
    ) -> (McpManager, mpsc::UnboundedReceiver<McpEvent>) {
        let (events, receiver) = mpsc::unbounded_channel();
        let mut all: Vec<(ServerConfig, ServerState)> = servers
            .into_iter()
            .map(|config| {
                let state = if config.enabled {
                    ServerState::Starting
                } else {
                    ServerState::Disabled
                };
                (config, state)
            })
            .chain(held.into_iter().map(|h| {
                (
                    h.config,
                    ServerState::NotAllowed {
                        launch: h.launch,
                        why: h.why,
                    },
                )
            }))
            .collect();
        all.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        let slots = all
            .into_iter()
            .map(|(config, state)| Slot {
                state,
                config,
                generation: 0,
                tools: Vec::new(),
                live: None,
                starting_pgid: None,
                launched: false,
            })
            .collect();
        let manager = McpManager {
            inner: Arc::new(Inner {
                root: root.to_path_buf(),
                workdirs: Workdirs::new(root, data_dir),
                events,
                slots: Mutex::new(slots),
            }),
        };
        for (name, state) in manager.states() {
            manager.emit(McpEvent::ServerState { name, state });
        }
        (manager, receiver)
    }

    /// Start every server [`prepare`](Self::prepare) listed as starting; a second call
    /// starts nothing.
    pub fn launch(&self) {
        let due: Vec<String> = {
            let mut slots = self.slots();
            slots
                .iter_mut()
                .filter(|s| s.state == ServerState::Starting && s.generation == 0 && !s.launched)
                .map(|s| {
                    s.launched = true;
                    s.config.name.clone()
                })
                .collect()
        };
        for name in due {
            self.spawn_server(&name, 0);
        }
    }

    /// The process group of the stdio server `name`, while it runs (for tests and
    /// diagnostics).
    pub fn process_group(&self, name: &str) -> Option<u32> {
        self.slots()
            .iter()
            .find(|s| s.config.name == name)
            .and_then(|s| s.live.as_ref().and_then(|l| l.pgid).or(s.starting_pgid))
    }

    /// Every configured server and its state, in name order.
    pub fn states(&self) -> Vec<(String, ServerState)> {
        self.slots()
            .iter()
            .map(|s| (s.config.name.clone(), s.state.clone()))
            .collect()
    }

    /// The servers a project's config declared (the approval prompt says they run outside
    /// rein's sandbox).
    pub fn project_servers(&self) -> Vec<String> {
        self.slots()
            .iter()
            .filter(|s| matches!(s.config.origin, super::Origin::Project(_)))
            .map(|s| s.config.name.clone())
            .collect()
    }

    /// The tools of every ready server as the model sees them, in name order; the
    /// qualified names are unique across servers.
    pub fn tools(&self) -> Vec<McpTool> {
        let slots = self.slots();
        let mut raw: Vec<(&ServerConfig, &Tool)> = slots
            .iter()
            .filter(|s| matches!(s.state, ServerState::Ready { .. }))
            .flat_map(|s| s.tools.iter().map(move |t| (&s.config, t)))
            .collect();
        raw.sort_by(|a, b| (&a.0.name, &a.1.name).cmp(&(&b.0.name, &b.1.name)));
        let pairs: Vec<(&str, &str)> = raw
            .iter()
            .map(|(s, t)| (s.name.as_str(), t.name.as_ref()))
            .collect();
        let qualified = names::qualify(&pairs);
        raw.iter()
            .zip(qualified)
            .map(|((server, tool), name)| describe_tool(server, tool, name))
            .collect()
    }

    /// Call the tool the model knows as `name` with `arguments` (an object, or null for
    /// none). Progress notifications go to `progress`; when `cancel` completes first, the
    /// server is sent `notifications/cancelled` and the call ends with
    /// [`McpError::Cancelled`]. The server's `tool_timeout` applies to the time without a
    /// result or progress.
    pub async fn call(
        &self,
        name: &str,
        arguments: serde_json::Value,
        progress: Option<mpsc::UnboundedSender<McpProgress>>,
        cancel: impl Future<Output = ()>,
    ) -> Result<McpOutput, McpError> {
        let tool = self
            .tools()
            .into_iter()
            .find(|t| t.name == name)
            .ok_or_else(|| McpError::UnknownTool(name.to_string()))?;
        let (live, timeout, generation) = {
            let slots = self.slots();
            let slot = slots
                .iter()
                .find(|s| s.config.name == tool.server)
                .ok_or_else(|| McpError::UnknownTool(name.to_string()))?;
            if !slot.config.offers(&tool.tool) {
                return Err(McpError::UnknownTool(name.to_string()));
            }
            match (&slot.state, &slot.live) {
                (ServerState::Ready { .. }, Some(live)) => {
                    (live.clone(), slot.config.tool_timeout, slot.generation)
                }
                (state, _) => {
                    return Err(McpError::NotReady {
                        server: tool.server.clone(),
                        state: state.clone(),
                    })
                }
            }
        };
        let arguments = match arguments {
            serde_json::Value::Object(map) => Some(map),
            serde_json::Value::Null => None,
            other => {
                return Err(McpError::BadArguments(format!(
                    "the arguments must be a JSON object, got {other}"
                )))
            }
        };
        let mut params = CallToolRequestParams::new(tool.tool.clone());
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        let options = PeerRequestOptions::with_timeout(timeout).reset_timeout_on_progress();
        let handle = live
            .peer
            .send_cancellable_request(
                ClientRequest::CallToolRequest(CallToolRequest::new(params)),
                options,
            )
            .await
            .map_err(|e| self.call_failed(&tool, &live, generation, e, timeout))?;
        let token = handle.progress_token.0.clone();
        if let Some(sender) = progress {
            lock(&live.progress).insert(token.clone(), sender);
        }
        let (id, peer) = (handle.id.clone(), handle.peer.clone());
        let mut closed = live.closed.clone();
        let outcome = tokio::select! {
            response = handle.await_response() => match response {
                Ok(ServerResult::CallToolResult(r)) => Ok(result::convert(&r, result::MAX_RESULT_BYTES)),
                Ok(_) => Err(McpError::Protocol {
                    server: tool.server.clone(),
                    message: "the server answered tools/call with something else".into(),
                }),
                Err(e) => Err(self.call_failed(&tool, &live, generation, e, timeout)),
            },
            () = cancel => {
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(Some(id), Some("the user interrupted".into())))
                    .await;
                Err(McpError::Cancelled)
            }
            // The watch's guard is dropped in here: the call's future stays `Send`.
            () = async { let _ = closed.wait_for(|c| *c).await; } => {
                Err(self.exited(&tool.server, &live, generation))
            }
        };
        lock(&live.progress).remove(&token);
        outcome
    }

    /// The configuration of the server `name`.
    pub fn config(&self, name: &str) -> Option<ServerConfig> {
        self.slots()
            .iter()
            .find(|s| s.config.name == name)
            .map(|s| s.config.clone())
    }

    /// Start the held server `name` (the user allowed it; remembering that is the
    /// caller's). Returns at once; a server that is not held is left as it is.
    pub fn allow(&self, name: &str) -> Result<(), McpError> {
        self.start_again(name, |slot| {
            matches!(slot.state, ServerState::NotAllowed { .. })
        })
    }

    /// Stop the server `name` (if it runs) and start it again; a disabled server stays
    /// disabled, and a held one held. Returns at once; an unknown name is an error.
    pub fn restart(&self, name: &str) -> Result<(), McpError> {
        self.start_again(name, |slot| {
            slot.config.enabled && !matches!(slot.state, ServerState::NotAllowed { .. })
        })
    }

    /// Stop whatever runs of `name` and start a new generation of it, when `may` says
    /// its slot may start; an unknown name is an error.
    fn start_again(&self, name: &str, may: impl FnOnce(&Slot) -> bool) -> Result<(), McpError> {
        let generation = {
            let mut slots = self.slots();
            let slot = slots
                .iter_mut()
                .find(|s| s.config.name == name)
                .ok_or_else(|| McpError::UnknownServer(name.to_string()))?;
            if !may(slot) {
                return Ok(());
            }
            slot.generation += 1;
            if let Some(live) = slot.live.take() {
                stop(&live);
            }
            if let Some(pgid) = slot.starting_pgid.take() {
                connection::kill_group_in_background(pgid);
            }
            slot.tools.clear();
            slot.state = ServerState::Starting;
            slot.generation
        };
        self.begin(name, generation);
        Ok(())
    }

    /// Say that `name` is starting (again), and start its `generation`.
    fn begin(&self, name: &str, generation: u64) {
        self.emit(McpEvent::ServerState {
            name: name.to_string(),
            state: ServerState::Starting,
        });
        self.spawn_server(name, generation);
    }

    /// [`restart`](Self::restart) every server that runs, starts or failed (a new
    /// conversation starts with fresh servers: whatever state one kept for the old one is
    /// gone with its process group). Disabled and held servers stay as they are.
    pub fn restart_all(&self) {
        let names: Vec<String> = self
            .slots()
            .iter()
            .filter(|s| {
                s.config.enabled
                    && matches!(
                        s.state,
                        ServerState::Starting
                            | ServerState::Ready { .. }
                            | ServerState::Failed { .. }
                    )
            })
            .map(|s| s.config.name.clone())
            .collect();
        for name in names {
            let _ = self.restart(&name);
        }
    }

    /// Close every connection and kill every server's process group (SIGTERM, SIGKILL
    /// after 2 s); returns when they are gone. The servers stay listed, stopped.
    pub async fn shutdown(&self) {
        let (lives, starting): (Vec<Live>, Vec<u32>) = {
            let mut slots = self.slots();
            let mut starting = Vec::new();
            let lives = slots
                .iter_mut()
                .filter_map(|s| {
                    s.generation += 1;
                    s.tools.clear();
                    if s.config.enabled && !matches!(s.state, ServerState::NotAllowed { .. }) {
                        s.state = ServerState::Stopped;
                    }
                    starting.extend(s.starting_pgid.take());
                    s.live.take()
                })
                .collect();
            (lives, starting)
        };
        let groups = lives
            .iter()
            .filter_map(|l| l.pgid)
            .chain(starting)
            .collect::<Vec<_>>();
        for live in &lives {
            if let Some(token) = lock(&live.stop).take() {
                token.cancel();
            }
        }
        let kills = groups.into_iter().map(connection::kill_group);
        futures_util::future::join_all(kills).await;
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, Vec<Slot>> {
        lock(&self.inner.slots)
    }

    fn emit(&self, event: McpEvent) {
        let _ = self.inner.events.send(event);
    }

    /// Set the state of `name`'s `generation` (ignored when a restart made it stale) and
    /// report it when it changed.
    fn set_state(&self, name: &str, generation: u64, state: ServerState) {
        {
            let mut slots = self.slots();
            let Some(slot) = slots
                .iter_mut()
                .find(|s| s.config.name == name && s.generation == generation)
            else {
                return;
            };
            if slot.state == state {
                return;
            }
            if !matches!(state, ServerState::Ready { .. }) {
                slot.starting_pgid = None;
                slot.tools.clear();
                if let Some(live) = slot.live.take() {
                    stop(&live);
                }
            }
            slot.state = state.clone();
        }
        self.emit(McpEvent::ServerState {
            name: name.to_string(),
            state,
        });
    }

    /// The error for a failed request; a closed transport marks the server failed.
    fn call_failed(
        &self,
        tool: &McpTool,
        live: &Live,
        generation: u64,
        error: ServiceError,
        timeout: Duration,
    ) -> McpError {
        match error {
            ServiceError::Timeout { .. } => McpError::Timeout {
                server: tool.server.clone(),
                tool: tool.tool.clone(),
                secs: timeout.as_secs(),
            },
            ServiceError::McpError(e) => McpError::Rejected {
                server: tool.server.clone(),
                message: e.message.to_string(),
            },
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                self.exited(&tool.server, live, generation)
            }
            other => McpError::Protocol {
                server: tool.server.clone(),
                message: other.to_string(),
            },
        }
    }

    /// The server's connection ended under a call: it is marked failed.
    fn exited(&self, server: &str, live: &Live, generation: u64) -> McpError {
        let stderr = live.stderr.lines();
        let reason = "the connection to the server ended (it exited or closed its output)";
        self.set_state(
            server,
            generation,
            ServerState::Failed {
                reason: reason.into(),
                stderr: stderr.clone(),
            },
        );
        McpError::ServerExited {
            server: server.to_string(),
            stderr,
        }
    }

    fn spawn_server(&self, name: &str, generation: u64) {
        let config = {
            let slots = self.slots();
            match slots.iter().find(|s| s.config.name == name) {
                Some(slot) => slot.config.clone(),
                None => return,
            }
        };
        let manager = self.clone();
        // The task holds only a weak handle between steps, so dropping every McpManager
        // still kills the servers.
        let weak = Arc::downgrade(&manager.inner);
        drop(manager);
        tokio::spawn(async move { run_server(weak, config, generation).await });
    }
}

/// One server's task: connect, list, then follow the connection until it ends.
async fn run_server(weak: std::sync::Weak<Inner>, config: ServerConfig, generation: u64) {
    let upgrade = || weak.upgrade().map(|inner| McpManager { inner });
    let Some(manager) = upgrade() else { return };
    let name = config.name.clone();
    let stderr = StderrTail::default();
    let fail = |manager: &McpManager, reason: String, stderr: &StderrTail| {
        manager.set_state(
            &name,
            generation,
            ServerState::Failed {
                reason,
                stderr: stderr.lines(),
            },
        );
    };
    let started = match connection::start(
        &config,
        &manager.inner.root,
        &manager.inner.workdirs,
        &stderr,
    ) {
        Ok(started) => started,
        Err(reason) => return fail(&manager, reason, &stderr),
    };
    let pgid = match &started {
        connection::Started::Stdio { pgid, .. } => *pgid,
        connection::Started::Http(_) => None,
    };
    {
        let mut slots = manager.slots();
        if let Some(slot) = slots
            .iter_mut()
            .find(|s| s.config.name == name && s.generation == generation)
        {
            slot.starting_pgid = pgid;
        }
    }
    let progress = ProgressRoutes::default();
    let (changed_tx, mut changed) = mpsc::unbounded_channel();
    let handler = Handler {
        progress: progress.clone(),
        tools_changed: changed_tx,
    };
    drop(manager);
    let startup = async {
        let service = connection::handshake(started, handler).await?;
        let tools = list_tools(service.peer())
            .await
            .map_err(|e| format!("tools/list failed: {e}"))?;
        Ok::<_, String>((service, tools))
    };
    let outcome = tokio::time::timeout(config.startup_timeout, startup).await;
    let Some(manager) = upgrade() else {
        if let Some(pgid) = pgid {
            connection::kill_group_in_background(pgid);
        }
        return;
    };
    let (service, tools) = match outcome {
        Ok(Ok(connected)) => connected,
        Ok(Err(reason)) => {
            if let Some(pgid) = pgid {
                connection::kill_group(pgid).await;
            }
            return fail(&manager, reason, &stderr);
        }
        Err(_) => {
            if let Some(pgid) = pgid {
                connection::kill_group(pgid).await;
            }
            let reason = format!(
                "did not start within {} s (initialize and tools/list); raise mcp_servers.{name}.startup_timeout_secs if it needs longer",
                config.startup_timeout.as_secs()
            );
            return fail(&manager, reason, &stderr);
        }
    };
    let (closed_tx, closed_rx) = watch::channel(false);
    let peer = service.peer().clone();
    let live = Live {
        peer: peer.clone(),
        progress,
        closed: closed_rx,
        stderr: stderr.clone(),
        pgid,
        stop: Arc::new(Mutex::new(Some(service.cancellation_token()))),
    };
    let current = {
        let mut slots = manager.slots();
        match slots
            .iter_mut()
            .find(|s| s.config.name == name && s.generation == generation)
        {
            Some(slot) => {
                slot.live = Some(live.clone());
                slot.starting_pgid = None;
                true
            }
            None => false,
        }
    };
    if !current {
        // Restarted or shut down meanwhile.
        stop(&live);
        if let Some(pgid) = pgid {
            connection::kill_group(pgid).await;
        }
        return;
    }
    store_tools(&manager, &name, generation, &config, tools);
    drop(manager);

    let waiting = service.waiting();
    tokio::pin!(waiting);
    let relist_http = tokio::time::sleep(Duration::from_millis(500));
    tokio::pin!(relist_http);
    let mut relisted = !matches!(config.transport, Transport::Http { .. });
    loop {
        tokio::select! {
            _ = &mut waiting => break,
            Some(()) = changed.recv() => relist(&weak, &peer, &name, generation, &config).await,
            () = &mut relist_http, if !relisted => {
                relisted = true;
                relist(&weak, &peer, &name, generation, &config).await;
            }
        }
    }
    let _ = closed_tx.send(true);
    if let Some(pgid) = pgid {
        connection::kill_group(pgid).await;
    }
    if let Some(manager) = upgrade() {
        fail(
            &manager,
            "the server closed the connection (it exited)".into(),
            &stderr,
        );
    }
}

async fn relist(
    weak: &std::sync::Weak<Inner>,
    peer: &Peer<RoleClient>,
    name: &str,
    generation: u64,
    config: &ServerConfig,
) {
    let listed = list_tools(peer).await;
    let Some(inner) = weak.upgrade() else { return };
    let manager = McpManager { inner };
    match listed {
        Ok(tools) => store_tools(&manager, name, generation, config, tools),
        Err(e) => manager.emit(McpEvent::Notice {
            name: name.to_string(),
            message: format!("re-listing its tools failed: {e}"),
        }),
    }
}

/// Keep the offered tools and report the server ready with their count.
fn store_tools(
    manager: &McpManager,
    name: &str,
    generation: u64,
    config: &ServerConfig,
    tools: Vec<Tool>,
) {
    let offered: Vec<Tool> = tools
        .into_iter()
        .filter(|t| config.offers(&t.name))
        .collect();
    let count = offered.len();
    let changed = {
        let mut slots = manager.slots();
        let Some(slot) = slots
            .iter_mut()
            .find(|s| s.config.name == name && s.generation == generation)
        else {
            return;
        };
        let names = |tools: &[Tool]| tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>();
        let changed = slot.state != (ServerState::Ready { tools: count })
            || names(&slot.tools) != names(&offered);
        slot.tools = offered;
        slot.state = ServerState::Ready { tools: count };
        changed
    };
    if changed {
        manager.emit(McpEvent::ServerState {
            name: name.to_string(),
            state: ServerState::Ready { tools: count },
        });
    }
}

/// `tools/list`, every page; a server that repeats a cursor is an error, not a loop.
async fn list_tools(peer: &Peer<RoleClient>) -> Result<Vec<Tool>, ServiceError> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = Vec::new();
    loop {
        let page = peer
            .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor)))
            .await?;
        tools.extend(page.tools);
        match page.next_cursor {
            Some(next) if seen.contains(&next) => {
                return Err(ServiceError::McpError(
                    rmcp::model::ErrorData::invalid_request(
                        format!("tools/list returned the cursor {next:?} twice"),
                        None,
                    ),
                ))
            }
            Some(next) => {
                seen.push(next.clone());
                cursor = Some(next);
            }
            None => return Ok(tools),
        }
    }
}

fn describe_tool(server: &ServerConfig, tool: &Tool, name: String) -> McpTool {
    let mut description = tool.description.as_deref().unwrap_or_default().to_string();
    let (parameters, note) = match schema::for_model(&tool.input_schema) {
        Ok(schema) => (schema, None),
        Err(why) => {
            let note = format!(
                "rein could not pass on this tool's input schema ({why}); it takes any JSON object"
            );
            description.push_str(&format!("\n\n({note})"));
            (schema::permissive(), Some(note))
        }
    };
    let a = tool.annotations.as_ref();
    let read_only = a.and_then(|a| a.read_only_hint).unwrap_or(false);
    McpTool {
        name,
        server: server.name.clone(),
        subagents: server.offers_subagents(&tool.name, read_only),
        tool: tool.name.to_string(),
        title: tool.title.clone(),
        description,
        parameters,
        annotations: McpAnnotations {
            read_only,
            destructive: a.and_then(|a| a.destructive_hint).unwrap_or(true),
            idempotent: a.and_then(|a| a.idempotent_hint).unwrap_or(false),
            open_world: a.and_then(|a| a.open_world_hint).unwrap_or(true),
        },
        note,
    }
}

fn stop(live: &Live) {
    if let Some(token) = lock(&live.stop).take() {
        token.cancel();
    }
    if let Some(pgid) = live.pgid {
        if connection::group_alive(pgid) {
            connection::kill_group_in_background(pgid);
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Drop for Inner {
    /// The last handle is gone: kill every server's process group, synchronously enough
    /// to work without a runtime.
    fn drop(&mut self) {
        let slots = self.slots.get_mut().unwrap_or_else(|e| e.into_inner());
        for slot in slots.iter_mut() {
            if let Some(live) = slot.live.take() {
                stop(&live);
            }
            if let Some(pgid) = slot.starting_pgid.take() {
                connection::kill_group_in_background(pgid);
            }
        }
    }
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpManager")
            .field("servers", &self.states())
            .finish()
    }
}
