//! One server's task, from its start to the end of its connection: start the transport,
//! handshake and list the tools within `startup_timeout` (a server that does not is
//! failed, its process group killed), then follow the connection, re-listing on
//! `tools/list_changed` (and once, shortly after connecting, over HTTP, where the early
//! notification can be lost). The task holds only a weak handle between steps, and every
//! report carries its generation: a restarted or dropped manager ignores the old task.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use rmcp::model::{
    ClientRequest, CustomResult, ListToolsRequest, PaginatedRequestParams, ServerResult, Tool,
};
use rmcp::service::RoleClient;
use rmcp::{Peer, ServiceError};
use tokio::sync::{mpsc, watch};

use super::{stop, Inner, Live, McpManager};
use crate::mcp::connection::{self, Failure, Handler, ProgressRoutes, StderrTail};
use crate::mcp::elicit::FormRoutes;
use crate::mcp::http_error::request_failed;
use crate::mcp::{oauth, stdio};
use crate::mcp::{McpEvent, ServerConfig, ServerState, Transport};

/// What keeps `config` from starting now in `root`, as the state it gets instead: a
/// project's server whose table or named files are not as the user allowed them (held,
/// as at start: `/mcp allow` allows it again), or a stdio server starting in the project
/// after a host-tool file there changed without the user's approval. `None` without
/// `data_dir` (a manager the caller vouches for: nothing to compare with).
fn held(
    config: &ServerConfig,
    root: &std::path::Path,
    data_dir: Option<&std::path::Path>,
) -> Option<ServerState> {
    let data_dir = data_dir?;
    if matches!(config.origin, crate::mcp::Origin::Project(_)) {
        let (trust, _) = crate::consent::trust::TrustStore::load(data_dir);
        if let Some(why) = crate::mcp::external::unapproved(config, &trust, root) {
            return Some(ServerState::NotAllowed {
                launch: crate::mcp::external::launch(config),
                why,
            });
        }
    }
    if crate::mcp::spawn::starts_in_project(config, root) {
        let changes = crate::consent::host_tools::check(data_dir, root);
        if !changes.is_empty() {
            let lines: Vec<String> = changes.iter().map(ToString::to_string).collect();
            return Some(ServerState::Failed {
                reason: format!(
                    "not started: it starts in the project, and {}; check it, run `{}` in \
                     the project, then /mcp restart {}",
                    lines.join("; "),
                    crate::consent::host_tools::ALLOW_COMMAND,
                    config.name
                ),
                stderr: Vec::new(),
            });
        }
    }
    None
}

/// One server's task: connect, list, then follow the connection until it ends.
pub(super) async fn run_server(weak: Weak<Inner>, config: ServerConfig, generation: u64) {
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
    // What the user approved, and the project's host-tool files, are checked each time it
    // is about to start (a restart too): the model may have rewritten its script since.
    if let Some(state) = held(
        &config,
        &manager.inner.root,
        manager.inner.data_dir.as_deref(),
    ) {
        manager.set_state(&name, generation, state);
        return;
    }
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
    let url = url(&config);
    let progress = ProgressRoutes::default();
    let (changed_tx, mut changed) = mpsc::unbounded_channel();
    let (resources_changed_tx, mut resources_changed) = mpsc::unbounded_channel();
    let forms = FormRoutes::default();
    let handler = Handler::new(
        &name,
        &manager.inner.root,
        progress.clone(),
        changed_tx,
        resources_changed_tx,
        manager.inner.events.clone(),
        forms.clone(),
    );
    let login = manager.inner.data_dir.as_deref().and_then(|data_dir| {
        Some(connection::Login {
            target: oauth::Target::of(&config, data_dir)?,
            browser: manager
                .inner
                .browser_login
                .load(std::sync::atomic::Ordering::SeqCst),
        })
    });
    drop(manager);
    let startup = async {
        let service = connection::handshake(started, handler, login).await?;
        let tools = list_tools(service.peer()).await.map_err(|e| match &e {
            ServiceError::TransportSend(error) if connection::needs_login(error) => {
                Failure::NeedsLogin
            }
            _ => Failure::Reason(request_failed(&e, url.as_deref(), "tools/list")),
        })?;
        // Its prompts, when it says it has some: a listing that fails is told, not fatal.
        let offers_prompts = service
            .peer_info()
            .is_some_and(|info| info.capabilities.prompts.is_some());
        let prompts = if offers_prompts {
            super::prompts::list_prompts(service.peer())
                .await
                .map_err(|e| request_failed(&e, url.as_deref(), "prompts/list"))
        } else {
            Ok(Vec::new())
        };
        Ok::<_, Failure>((service, tools, prompts))
    };
    let outcome = tokio::time::timeout(config.startup_timeout, startup).await;
    let Some(manager) = upgrade() else {
        if let Some(pgid) = pgid {
            connection::kill_group_in_background(pgid);
        }
        return;
    };
    let (service, tools, prompts) = match outcome {
        Ok(Ok(connected)) => connected,
        Ok(Err(Failure::NeedsLogin)) => {
            manager.set_state(
                &name,
                generation,
                ServerState::NeedsLogin { name: name.clone() },
            );
            return;
        }
        Ok(Err(Failure::Reason(reason))) => {
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
        forms,
        closed: closed_rx,
        stderr: stderr.clone(),
        pgid,
        url: url.clone(),
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
                slot.prompts = prompts.as_ref().cloned().unwrap_or_default();
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
    if let Err(why) = prompts {
        manager.emit(McpEvent::Notice {
            name: name.clone(),
            message: format!("its prompts are not offered: {why}"),
        });
    }
    store_tools(&manager, &name, generation, &config, tools);
    drop(manager);
    // Its resources, for the `@` finder, listed while the connection goes on (a slow or
    // failing listing holds nothing up).
    let offers_resources = service
        .peer_info()
        .is_some_and(|info| info.capabilities.resources.is_some());
    let listing = super::resources::list_resources(&live, &name, config.tool_timeout);
    tokio::pin!(listing);
    let mut resources_listed = !offers_resources;

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
            listed = &mut listing, if !resources_listed => {
                resources_listed = true;
                store_resources(&weak, &name, generation, listed);
            }
            // Listed again (a listing still running starts over).
            Some(()) = resources_changed.recv(), if offers_resources => {
                listing.set(super::resources::list_resources(&live, &name, config.tool_timeout));
                resources_listed = false;
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

/// A ready server's listed resources kept and told (or why they could not be listed).
fn store_resources(
    weak: &Weak<Inner>,
    name: &str,
    generation: u64,
    listed: Result<Vec<super::resources::McpResource>, crate::mcp::McpError>,
) {
    let Some(inner) = weak.upgrade() else { return };
    let manager = McpManager { inner };
    match listed {
        Ok(resources) => {
            let stored = {
                let mut slots = manager.slots();
                match slots.iter_mut().find(|s| {
                    s.config.name == name
                        && s.generation == generation
                        && matches!(s.state, ServerState::Ready { .. })
                }) {
                    Some(slot) => {
                        slot.resources = resources;
                        true
                    }
                    None => false,
                }
            };
            if stored {
                manager.emit_offers();
            }
        }
        Err(why) => manager.emit(McpEvent::Notice {
            name: name.to_string(),
            message: format!("its resources are not listed for @: {why}"),
        }),
    }
}

/// The URL of an HTTP server.
fn url(config: &ServerConfig) -> Option<String> {
    match &config.transport {
        Transport::Http { url, .. } => Some(url.clone()),
        Transport::Stdio { .. } => None,
    }
}

async fn relist(
    weak: &Weak<Inner>,
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
            message: format!(
                "re-listing its tools failed: {}",
                request_failed(&e, url(config).as_deref(), "tools/list")
            ),
        }),
    }
}

/// Keep the offered tools and report the server ready with their count.
fn store_tools(
    manager: &McpManager,
    name: &str,
    generation: u64,
    config: &ServerConfig,
    listed: Listed,
) {
    if !listed.left_out.is_empty() {
        let n = listed.left_out.len();
        manager.emit(McpEvent::Notice {
            name: name.to_string(),
            message: format!(
                "left out {n} of its tools that rein cannot read: {}",
                listed.left_out.join("; ")
            ),
        });
    }
    let offered: Vec<Tool> = listed
        .tools
        .into_iter()
        .filter(|t| config.offers(&t.name))
        .collect();
    let count = offered.len();
    let tokens = definition_tokens(config, &offered);
    let (changed, warn) = {
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
        let warn = tokens > LARGE_TOOLS_TOKENS && !slot.warned_large;
        slot.warned_large |= warn;
        (changed, warn)
    };
    // Before the state, so a front end that waits for the servers' start sees it.
    if warn {
        manager.emit(McpEvent::Notice {
            name: name.to_string(),
            message: format!(
                "its {count} tools take about {}k tokens of every request (rein warns above \
                 {}k): offer only the ones you need with mcp_servers.{name}.allow or .deny",
                tokens.div_ceil(1000),
                LARGE_TOOLS_TOKENS / 1000
            ),
        });
    }
    if changed {
        manager.emit(McpEvent::ServerState {
            name: name.to_string(),
            state: ServerState::Ready { tools: count },
        });
        manager.emit_offers();
    }
}

/// Above this estimate of one server's tool definitions (name, description and schema
/// of each, sent with every request), the user is told once: Claude Code warns about
/// large MCP tool contexts above the same 25k tokens.
const LARGE_TOOLS_TOKENS: u64 = 25_000;

/// About how many tokens `tools` take of every request, as the model is sent them.
fn definition_tokens(config: &ServerConfig, tools: &[Tool]) -> u64 {
    let chars: usize = tools
        .iter()
        .map(|tool| {
            let described = super::describe_tool(config, tool, String::new());
            // The qualified name and the function wrapper's JSON around them.
            let wrapper = 2 * (config.name.len() + tool.name.len()) + 60;
            wrapper + described.description.len() + described.parameters.to_string().len()
        })
        .sum();
    crate::context::budget::tokens_at(chars, crate::context::budget::DEFAULT_CHARS_PER_TOKEN)
}

/// A server's tools as listed: those rein can read, and what it left out of the others
/// (`stdio.rs` mends a listing tool by tool).
struct Listed {
    tools: Vec<Tool>,
    left_out: Vec<String>,
}

/// `tools/list`, every page; a server that repeats a cursor is an error, not a loop.
async fn list_tools(peer: &Peer<RoleClient>) -> Result<Listed, ServiceError> {
    let mut tools = Vec::new();
    let mut left_out = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = Vec::new();
    loop {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        let page = match peer.list_tools(Some(params.clone())).await {
            Ok(page) => page,
            // A listing rmcp could not read as one (a tool's schema not an object, over
            // HTTP: over stdio `stdio.rs` mended it already): asked for again as it is,
            // and mended here.
            Err(ServiceError::UnexpectedResponse) => {
                let request = ListToolsRequest::with_param(params);
                match peer
                    .send_request(ClientRequest::ListToolsRequest(request))
                    .await?
                {
                    ServerResult::ListToolsResult(page) => page,
                    ServerResult::CustomResult(CustomResult(mut result)) => {
                        stdio::mend_tools(&mut result);
                        serde_json::from_value(result).map_err(|e| {
                            ServiceError::McpError(rmcp::model::ErrorData::invalid_request(
                                format!("rein cannot read its tools/list answer: {e}"),
                                None,
                            ))
                        })?
                    }
                    _ => return Err(ServiceError::UnexpectedResponse),
                }
            }
            Err(e) => return Err(e),
        };
        tools.extend(page.tools);
        if let Some(serde_json::Value::Array(out)) = page
            .meta
            .as_ref()
            .and_then(|meta| meta.0.get(stdio::LEFT_OUT))
        {
            left_out.extend(out.iter().filter_map(|o| o.as_str()).map(str::to_string));
        }
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
            None => return Ok(Listed { tools, left_out }),
        }
    }
}
