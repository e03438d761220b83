//! The connection: JSON-RPC over stdin and stdout through the official SDK, which answers
//! malformed and unknown messages with JSON-RPC errors. Each handler answers at once or
//! hands its request to the session's task, so the dispatch loop never waits on a turn.
//! When the client goes away (stdin closes) every session's agent is stopped, with the
//! processes it started.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, CloseSessionRequest, CloseSessionResponse,
    Implementation, InitializeRequest, InitializeResponse, ListSessionsRequest,
    ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, McpCapabilities,
    NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest, ResumeSessionRequest,
    ResumeSessionResponse, SessionCapabilities, SessionCloseCapabilities, SessionInfo,
    SessionListCapabilities, SessionMode, SessionModeState, SessionNotification,
    SessionResumeCapabilities, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Agent, Client, Error};
use rein_core::config::{Environment, Overrides};
use rein_core::permissions::ApprovalMode;
use tokio::sync::mpsc;

use super::replay;
use super::session::{self, ToSession};
use super::start;
use super::updates::mode_id;

/// A running session as the connection knows it: where its requests go, its project,
/// how much a prompt may embed and whether its model takes images.
#[derive(Clone)]
struct Known {
    to: mpsc::UnboundedSender<ToSession>,
    root: PathBuf,
    attach_cap: usize,
    images: bool,
}

/// The sessions of this connection: where each one's requests go.
type Sessions = Arc<Mutex<HashMap<String, Known>>>;

/// The session `id`, or the error for an unknown one.
fn session(sessions: &Sessions, id: &str) -> Result<Known, Error> {
    sessions
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(id)
        .cloned()
        .ok_or_else(|| Error::invalid_params().data(format!("no session {id}")))
}

/// `initialize`: who rein is and what it takes; an error naming the setting when no model
/// is configured for the folder rein was started in.
fn initialize(
    overrides: &Overrides,
    request: &InitializeRequest,
) -> Result<InitializeResponse, Error> {
    let project = rein_core::start::Project::open(None, overrides, Environment::from_process())
        .map_err(|e| Error::internal_error().data(e))?;
    if project.config.model.value.trim().is_empty() {
        return Err(Error::auth_required().data(
            "rein has no model configured: set `model` (and `base_url`, with the key in REIN_API_KEY) in ~/.config/rein/config.toml, or pass --model NAME --base-url URL to `rein acp`",
        ));
    }
    let config = &project.config;
    // A provider that takes a key, with none set: say which variable, before any session.
    if config.api_key.value.trim().is_empty() {
        if let Some(provider) = config
            .providers
            .iter()
            .find(|p| p.name == config.provider.value && !p.api_key_env.value.is_empty())
        {
            return Err(Error::auth_required().data(format!(
                "the model {} is served by {}, which needs its API key in {}; set it in the environment rein acp starts in (the editor's agent settings can pass it)",
                config.model_name, provider.name, provider.api_key_env.value
            )));
        }
    }
    let version = request.protocol_version.min(ProtocolVersion::V1);
    Ok(InitializeResponse::new(version)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .prompt_capabilities(
                    PromptCapabilities::new()
                        .embedded_context(true)
                        .image(config.images),
                )
                .mcp_capabilities(McpCapabilities::new().http(true))
                .session_capabilities(
                    SessionCapabilities::new()
                        .resume(SessionResumeCapabilities::new())
                        .list(SessionListCapabilities::new())
                        .close(SessionCloseCapabilities::new()),
                ),
        )
        .agent_info(Implementation::new("rein", env!("CARGO_PKG_VERSION"))))
}

/// How many sessions a `session/list` page holds.
const LIST_PAGE: usize = 100;

/// `session/list`: rein's recorded sessions, newest first, of the project `cwd` names (or
/// every project), a page at a time (the cursor is where the next page starts).
fn list(
    overrides: &Overrides,
    request: &ListSessionsRequest,
) -> Result<ListSessionsResponse, Error> {
    let project = rein_core::start::Project::open(
        request.cwd.as_deref(),
        overrides,
        Environment::from_process(),
    )
    .map_err(|e| Error::internal_error().data(e))?;
    let from: usize = match &request.cursor {
        Some(cursor) => cursor.parse().map_err(|_| {
            Error::invalid_params().data(format!("not a cursor rein gave: {cursor}"))
        })?,
        None => 0,
    };
    let all: Vec<_> = rein_core::session::list(&project.config.data_dir)
        .into_iter()
        .filter(|s| request.cwd.is_none() || s.project == project.root)
        .collect();
    let page: Vec<SessionInfo> = all
        .iter()
        .skip(from)
        .take(LIST_PAGE)
        .map(|s| {
            SessionInfo::new(s.id.clone(), s.project.clone())
                .title(s.title.clone())
                .updated_at(rein_core::text::stamp::rfc3339(s.updated))
        })
        .collect();
    let next = from + page.len();
    Ok(ListSessionsResponse::new(page).next_cursor((next < all.len()).then(|| next.to_string())))
}

/// The modes a session offers, `current` the one it is in.
fn mode_state(current: ApprovalMode, sandbox_works: bool) -> SessionModeState {
    SessionModeState::new(
        mode_id(current),
        start::modes(sandbox_works)
            .into_iter()
            .map(|m| SessionMode::new(mode_id(m), m.name()).description(m.describe().to_string()))
            .collect(),
    )
}

/// The running sessions' tasks, awaited when the client goes away.
/// The running sessions' tasks by session id: awaited when one closes, or when the client
/// goes away.
type Tasks = Arc<Mutex<HashMap<String, tokio::task::JoinHandle<()>>>>;

/// How long a closing session may take to stop its agent and its MCP servers.
const CLOSE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Run a started session for the client: its id and the modes it offers.
fn open(
    started: start::Started,
    cx: ConnectionTo<Client>,
    sessions: &Sessions,
    tasks: &Tasks,
) -> (String, SessionModeState) {
    let (tx, rx) = mpsc::unbounded_channel();
    let id = started.id.clone();
    sessions
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(
            id.clone(),
            Known {
                to: tx,
                root: started.root.clone(),
                attach_cap: started.attach_cap,
                images: started.images,
            },
        );
    let modes = mode_state(started.mode, started.sandbox_works);
    let task = tokio::spawn(session::run(started, cx, rx));
    tasks
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(id.clone(), task);
    (id, modes)
}

/// The editor's files for a session, when the client offered them.
fn files_for(
    offered: &std::sync::atomic::AtomicBool,
    cx: &ConnectionTo<Client>,
) -> impl Fn(&str) -> Option<Arc<dyn rein_core::tools::editor::EditorFiles>> {
    let offered = offered.load(std::sync::atomic::Ordering::Relaxed);
    let cx = cx.clone();
    move |session: &str| {
        offered.then(|| {
            Arc::new(super::files::ClientFiles {
                cx: cx.clone(),
                session: session.to_string(),
            }) as Arc<dyn rein_core::tools::editor::EditorFiles>
        })
    }
}

/// What starting a session needs of the connection.
#[derive(Clone)]
struct Begin {
    overrides: Overrides,
    sessions: Sessions,
    tasks: Tasks,
    files: Arc<std::sync::atomic::AtomicBool>,
}

impl Begin {
    /// End the session `id` of this connection, if it runs: its prompts are answered
    /// `cancelled`, its agent and MCP servers stopped, its session file let go.
    async fn close(&self, id: &str) {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        let task = self
            .tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        if let Some(task) = task {
            let _ = tokio::time::timeout(CLOSE_WAIT, task).await;
        }
    }

    /// Start a session in `cwd` (the recorded one `resume` names, its conversation told
    /// again first with `replay`) and run it for the client: its id and modes. A session
    /// this connection runs already is closed first (its file is let go).
    async fn session(
        &self,
        cwd: &std::path::Path,
        resume: Option<&str>,
        servers: &[agent_client_protocol::v1::schema::McpServer],
        cx: ConnectionTo<Client>,
        replay: bool,
    ) -> Result<(String, SessionModeState), Error> {
        if let Some(id) = resume {
            self.close(id).await;
        }
        let started = start::start(
            cwd,
            &self.overrides,
            resume,
            &files_for(&self.files, &cx),
            servers,
        )
        .map_err(|why| Error::internal_error().data(why))?;
        if replay {
            // The conversation told again before the answer, as the protocol asks.
            for update in replay::updates(&started.transcript, &started.todos, &started.root) {
                let _ = cx.send_notification(SessionNotification::new(started.id.clone(), update));
            }
        }
        Ok(open(started, cx, &self.sessions, &self.tasks))
    }
}

/// Serve the client on stdin and stdout until it goes away.
pub async fn serve(overrides: Overrides) -> Result<(), String> {
    let sessions: Sessions = Arc::default();
    let tasks: Tasks = Arc::default();
    // Whether the client offered its files (read and write) at initialize.
    let files = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let begin = Begin {
        overrides: overrides.clone(),
        sessions: sessions.clone(),
        tasks: tasks.clone(),
        files: files.clone(),
    };
    let result = Agent
        .v1()
        .name("rein")
        .on_receive_request(
            {
                let (overrides, files) = (overrides.clone(), files.clone());
                async move |request: InitializeRequest, responder, _cx| {
                    let fs = &request.client_capabilities.fs;
                    files.store(
                        fs.read_text_file && fs.write_text_file,
                        std::sync::atomic::Ordering::Relaxed,
                    );
                    responder.respond_with_result(initialize(&overrides, &request))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let begin = begin.clone();
                async move |request: NewSessionRequest, responder, cx| {
                    let started = begin
                        .session(&request.cwd, None, &request.mcp_servers, cx, false)
                        .await;
                    match started {
                        Ok((id, modes)) => {
                            responder.respond(NewSessionResponse::new(id).modes(modes))
                        }
                        Err(e) => responder.respond_with_error(e),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let begin = begin.clone();
                async move |request: LoadSessionRequest, responder, cx| {
                    let id = request.session_id.0.to_string();
                    match begin
                        .session(&request.cwd, Some(&id), &request.mcp_servers, cx, true)
                        .await
                    {
                        Ok((_, modes)) => {
                            responder.respond(LoadSessionResponse::new().modes(modes))
                        }
                        Err(e) => responder.respond_with_error(e),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let begin = begin.clone();
                async move |request: ResumeSessionRequest, responder, cx| {
                    let id = request.session_id.0.to_string();
                    match begin
                        .session(&request.cwd, Some(&id), &request.mcp_servers, cx, false)
                        .await
                    {
                        Ok((_, modes)) => {
                            responder.respond(ResumeSessionResponse::new().modes(modes))
                        }
                        Err(e) => responder.respond_with_error(e),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let overrides = overrides.clone();
                async move |request: ListSessionsRequest, responder, _cx| {
                    responder.respond_with_result(list(&overrides, &request))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let begin = begin.clone();
                async move |request: CloseSessionRequest, responder, _cx| {
                    begin.close(&request.session_id.0).await;
                    responder.respond(CloseSessionResponse::new())
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let sessions = sessions.clone();
                async move |request: PromptRequest, responder, _cx| {
                    let known = session(&sessions, &request.session_id.0)?;
                    let reading = super::prompt::Reading {
                        root: &known.root,
                        cap: known.attach_cap,
                        images: known.images,
                    };
                    let prompt = super::prompt::message(&request.prompt, reading);
                    let _ = known.to.send(ToSession::Prompt {
                        prompt,
                        responder: Box::new(responder),
                    });
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let sessions = sessions.clone();
                async move |request: SetSessionModeRequest, responder, _cx| {
                    let to = session(&sessions, &request.session_id.0)?.to;
                    let Some(mode) = ApprovalMode::ALL
                        .into_iter()
                        .find(|m| mode_id(*m) == &*request.mode_id.0)
                    else {
                        return responder.respond_with_error(
                            Error::invalid_params().data(format!("no mode {}", request.mode_id.0)),
                        );
                    };
                    let _ = to.send(ToSession::SetMode(mode));
                    responder.respond(SetSessionModeResponse::new())
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            {
                let sessions = sessions.clone();
                async move |note: CancelNotification, _cx| {
                    if let Ok(known) = session(&sessions, &note.session_id.0) {
                        let _ = known.to.send(ToSession::Cancel);
                    }
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(super::pipes::stdio())
        .await;
    // The client is gone: every session's agent stops, and its processes with it.
    sessions
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clear();
    let tasks = std::mem::take(&mut *tasks.lock().unwrap_or_else(PoisonError::into_inner));
    for task in tasks.into_values() {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), task).await;
    }
    result.map_err(|e| e.to_string())
}
