//! [`McpManager`]: every configured server, its state, its tools, and calls to them.
//!
//! Each enabled server gets a task of its own (`server_task.rs`, started by
//! [`McpManager::start`], which returns at once): start the transport, handshake and list
//! the tools within `startup_timeout`, then wait for the connection to end, re-listing on
//! `tools/list_changed`. A restart bumps the server's generation, so whatever the old task
//! still reports is ignored. Here: the servers' slots and their states, the tools as the
//! model sees them, restarts and shutdown; a call to a tool is in `call.rs`.

mod call;
pub(super) mod prompts;
pub(super) mod resources;
mod server_task;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rmcp::model::Tool;
use rmcp::service::RoleClient;
use rmcp::Peer;
use tokio::sync::{mpsc, watch};

use super::connection::{self, ProgressRoutes, StderrTail};
use super::workdir::Workdirs;
use super::{
    names, schema, Held, McpAnnotations, McpError, McpEvent, McpTool, ServerConfig, ServerState,
};
use server_task::run_server;

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
    /// rein's data folder: where the OAuth token files are (`oauth/store.rs`); without
    /// it no server logs in.
    data_dir: Option<PathBuf>,
    /// A person can answer a browser login while servers run (print mode):
    /// a refused token or a wider scope leads to one (`oauth/client.rs`).
    browser_login: std::sync::atomic::AtomicBool,
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
    /// The user was told its tools take much of every request (once a session).
    warned_large: bool,
    /// Its prompts, as it listed them when it started (`prompts.rs`).
    prompts: Vec<rmcp::model::Prompt>,
    /// Its resources, as it listed them once ready (`resources.rs`).
    resources: Vec<resources::McpResource>,
}

/// What a call needs of a ready server.
#[derive(Clone)]
struct Live {
    peer: Peer<RoleClient>,
    progress: ProgressRoutes,
    /// The calls in flight that can put a server's form to the user (`elicit.rs`).
    forms: super::elicit::FormRoutes,
    /// Becomes `true` when the connection has ended.
    closed: watch::Receiver<bool>,
    stderr: StderrTail,
    /// The process group of a stdio server.
    pgid: Option<u32>,
    /// The URL of an HTTP server.
    url: Option<String>,
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
                warned_large: false,
                prompts: Vec::new(),
                resources: Vec::new(),
            })
            .collect();
        let manager = McpManager {
            inner: Arc::new(Inner {
                root: root.to_path_buf(),
                workdirs: Workdirs::new(root, data_dir),
                events,
                slots: Mutex::new(slots),
                data_dir: data_dir.map(Path::to_path_buf),
                browser_login: std::sync::atomic::AtomicBool::new(false),
            }),
        };
        for (name, state) in manager.states() {
            manager.emit(McpEvent::ServerState { name, state });
        }
        (manager, receiver)
    }

    /// Let a server whose token is refused, or that asks for a wider scope, open the
    /// browser for a new login (print mode: a person can answer, and the URL is printed
    /// on stderr). Before [`launch`](Self::launch).
    pub fn allow_browser_login(&self) {
        self.inner
            .browser_login
            .store(true, std::sync::atomic::Ordering::SeqCst);
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
        ready_tools(&slots)
            .into_iter()
            .map(|(server, tool, name)| describe_tool(server, tool, name))
            .collect()
    }

    /// The tool the model knows as `name`, as [`tools`](Self::tools) describes it, when a
    /// ready server offers it: found by its name, without describing the others (their
    /// schemas are only converted for the listing).
    pub fn tool(&self, name: &str) -> Option<McpTool> {
        let slots = self.slots();
        ready_tools(&slots)
            .into_iter()
            .find(|(_, _, qualified)| qualified == name)
            .map(|(server, tool, name)| describe_tool(server, tool, name))
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
                slot.prompts.clear();
                slot.resources.clear();
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
        self.emit_offers();
    }

    /// Tell the front ends every ready server's prompts and resources (after a change of
    /// state, or a listing).
    fn emit_offers(&self) {
        self.emit(McpEvent::Prompts {
            prompts: self.prompts(),
        });
        self.emit(McpEvent::Resources {
            resources: self.listed_resources(),
        });
    }

    /// Every ready server's resources as they were listed when it became ready, by server.
    pub fn listed_resources(&self) -> Vec<resources::McpResource> {
        self.slots()
            .iter()
            .filter(|s| matches!(s.state, ServerState::Ready { .. }))
            .flat_map(|s| s.resources.iter().cloned())
            .collect()
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

/// The offered tools of every ready server with the names the model knows them by, in
/// (server, tool) name order.
fn ready_tools(slots: &[Slot]) -> Vec<(&ServerConfig, &Tool, String)> {
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
    raw.into_iter()
        .zip(qualified)
        .map(|((server, tool), name)| (server, tool, name))
        .collect()
}

/// One offered tool as the model sees it, its input schema converted for the model.
fn describe_tool(server: &ServerConfig, tool: &Tool, name: String) -> McpTool {
    let mut description = tool.description.as_deref().unwrap_or_default().to_string();
    // A schema that was not an object (`stdio.rs` says so in the tool's `_meta`).
    let mended = tool
        .meta
        .as_ref()
        .and_then(|meta| meta.0.get(super::stdio::SCHEMA_NOTE))
        .and_then(serde_json::Value::as_str);
    let converted = match mended {
        Some(why) => Err(why.to_string()),
        None => schema::for_model(&tool.input_schema),
    };
    let (parameters, note) = match converted {
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
        } else {
            connection::kill_left(pgid);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &'static str) -> Tool {
        let schema = serde_json::json!({"type": "object", "properties": {}});
        let serde_json::Value::Object(schema) = schema else {
            unreachable!("an object literal")
        };
        Tool::new(name, "does a thing", Arc::new(schema))
    }

    #[test]
    fn one_tool_is_found_by_its_name_as_the_listing_describes_it() {
        let root = tempfile::tempdir().unwrap();
        let servers = vec![
            ServerConfig::stdio("b", "true", &[]),
            ServerConfig::stdio("a", "true", &[]),
        ];
        let (manager, _events) = McpManager::prepare(servers, Vec::new(), root.path(), None);
        for slot in manager.slots().iter_mut() {
            slot.tools = vec![tool("echo"), tool("time")];
            slot.state = ServerState::Ready { tools: 2 };
        }
        let all = manager.tools();
        assert_eq!(all.len(), 4);
        for listed in &all {
            let found = manager.tool(&listed.name).unwrap();
            assert_eq!(
                (&found.name, &found.server, &found.tool, &found.parameters),
                (
                    &listed.name,
                    &listed.server,
                    &listed.tool,
                    &listed.parameters
                )
            );
        }
        assert!(manager.tool("mcp__c__echo").is_none());
        // A server that is not ready offers nothing, by name or in the listing.
        manager.slots()[0].state = ServerState::Stopped;
        assert_eq!(manager.tools().len(), 2);
        assert!(manager.tool(&all[0].name).is_none());
    }
}
