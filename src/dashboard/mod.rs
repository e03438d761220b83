//! The full-screen front end: the terminal, the event loop, and the effects of the update
//! step.
//!
//! One loop `select!`s over the terminal's events (read by a task of their own,
//! `TerminalEvents`), the agent's events and a frame timer; frames are drawn by
//! [`crate::ui::screen::Screen`].
//! Every event goes through [`update`] (pure); the effects it returns are carried out here
//! (send to the agent, answer an approval, ring the bell, list the sessions or the models
//! for a picker, switch to a resumed session by starting a new agent on it, resolve a model
//! name for `/model`, quit); what they find comes back as events. What takes time (asking a
//! model's server for its context window, up to two seconds) runs in a task of its own and
//! comes back on the loop's background channel, so the loop never waits on the network.
//! Redraws are coalesced: an event marks the screen dirty and a frame is drawn at most
//! every `FRAME` after a key, or every `STREAM_FRAME` while only the agent's output
//! changes it; while a frame is pending, and for a frame's time after a frame of the
//! agent's output, the agent's events wait in their channel and are applied together just
//! before the next frame, so a fast stream wakes the loop once a frame, not once a delta
//! (nor for the first delta after each frame); with nothing happening there is no timer
//! at all, so an idle dashboard uses no CPU. The terminal is restored on every way out: normal exit, error, and panic (the
//! hook restores it before the report is printed). Ctrl-G hands the terminal to the user's
//! editor ([`external_editor`]) and takes it back through the same setup code
//! (`setup_terminal`, `leave`); the terminal's focus reports become `AppEvent::Focus`.

pub mod external_editor;
pub mod input_history;
mod mcp_login;
mod models;
mod rewind;
mod sessions;
mod terminal;

use std::collections::VecDeque;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::execute;
use tokio::sync::mpsc;

use crate::app::update::update;
use crate::app::{App, AppEvent, Effect};
use crate::ui::screen::Screen;
pub use models::usage_prices;
use models::{list_models, model_switched, resolve_model, server_models, window_learnt};
use rein_core::agent::{AgentCommand, AgentConfig, AgentHandle};
use rein_core::config::Config;
use rein_core::hooks::EndReason;
use sessions::{list_sessions, switch_session};
use terminal::{
    draw, enter, leave, next_term_event, notify, run_editor, translate, Term, TerminalEvents,
};

/// The shortest time between two frames after a key (about 60 a second: typing feels
/// immediate).
const FRAME: Duration = Duration::from_millis(16);
/// The shortest time between two frames while only the agent changes the screen (about 30
/// a second: a stream reads smoothly, and a long one costs half the drawing).
const STREAM_FRAME: Duration = Duration::from_millis(33);
/// How often the status line's clocks advance while the agent works.
const TICK: Duration = Duration::from_secs(1);

/// How the dashboard gets the user's attention when an approval is needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attention {
    /// Ring the terminal bell.
    pub bell: bool,
    /// Post a desktop notification (OSC 9).
    pub notifications: bool,
}

/// What the dashboard needs to list sessions and switch between them (`/resume`).
#[derive(Clone)]
pub struct Sessions {
    /// Where the session files are.
    pub data_dir: PathBuf,
    /// How to start an agent on a resumed session.
    pub agent_config: AgentConfig,
    /// The session file the agent records into now, left out of the picker (after `/clear`
    /// the agent announces its new file with `SessionStarted`).
    pub current: Option<PathBuf>,
    /// Open the picker before the first frame (`rein --resume` without an id).
    pub pick_at_start: bool,
    /// The current session holds a conversation worth resuming: a resumed one with
    /// messages, or one where a turn started (a new conversation starts without).
    pub resumable: bool,
    /// The server is still being asked for the window (`rein_core::agent::window`): an agent
    /// started on a resumed session meanwhile learns it too. `None` once it is known.
    pub window: Option<rein_core::agent::window::WindowWatch>,
}

/// How the dashboard ended.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ended {
    /// The id of the session to name in the hint printed after the dashboard closes, when
    /// it holds a conversation worth resuming.
    pub resume: Option<String>,
}

/// Run the dashboard until the user quits. `agent` is `None` when no model is configured
/// (the first-run screen explains how to set one); `sessions` is `None` when this dashboard
/// does not record sessions (the demo, no model), and `/resume` then says so; `config` is
/// the settings `/model` lists and resolves models with (`None` for the demo, which runs
/// on its scripted model only). A prompt in `app.first_prompt` is submitted as the
/// dashboard starts (held while the question about the project's hooks is open).
pub async fn run(
    mut app: App,
    mut agent: Option<AgentHandle>,
    attention: Attention,
    mut sessions: Option<Sessions>,
    mut config: Option<Config>,
    mcp: Option<(
        rein_core::mcp::McpManager,
        mpsc::UnboundedReceiver<rein_core::mcp::McpEvent>,
    )>,
) -> io::Result<Ended> {
    let mut terminal = enter()?;
    let (background, mut finished) = mpsc::unbounded_channel();
    let (mcp, mcp_events) = match mcp {
        Some((manager, events)) => (Some(manager), Some(events)),
        None => (None, None),
    };
    if let Some(mut events) = mcp_events {
        // The MCP servers' states, as they change, into the update step.
        let background = background.clone();
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                if background.send(AppEvent::Mcp(event)).is_err() {
                    break;
                }
            }
        });
    }
    if let Some(file) = app.input_history.clone() {
        // The earlier sessions' inputs: read off the loop, so the first frame never waits.
        let project = app.info.project.clone();
        let background = background.clone();
        tokio::task::spawn_blocking(move || {
            let earlier = input_history::load(&file, &project);
            let _ = background.send(AppEvent::HistoryLoaded(earlier));
        });
    }
    let mut ctx = Loop {
        agent: &mut agent,
        sessions: sessions.as_mut(),
        config: config.as_mut(),
        attention,
        background,
        finished: &mut finished,
        edit: None,
        mcp,
    };
    let result = event_loop(&mut terminal, &mut app, &mut ctx).await;
    let reason = result.as_ref().map_or(EndReason::Other, |reason| *reason);
    if let Some(agent) = &agent {
        // The session ends: its turn stops and its SessionEnd hooks start at once.
        agent.send(AgentCommand::End(reason));
        // Quit or a signal: no background command outlives the dashboard (the agent stops
        // them too as it ends, but rein may exit before it gets there).
        agent.background.kill_all();
    }
    leave();
    if let Some(agent) = agent.take() {
        // On the restored terminal: what the SessionEnd hooks say, and that rein waits for
        // them when they take a while (a Ctrl-C or a signal stops waiting).
        let give_up = async {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = rein_core::host::signals::termination() => {}
            }
        };
        agent
            .end(reason, give_up, |event| {
                if let Some(line) = crate::describe::at_end(&event) {
                    eprintln!(
                        "rein: {}",
                        rein_core::text::sanitize::sanitize(&rein_core::text::clip(&line, 500))
                    );
                }
            })
            .await;
    }
    let resume = sessions
        .as_ref()
        .filter(|s| s.resumable)
        .and_then(|s| s.current.as_deref())
        .and_then(|path| path.file_stem())
        .map(|id| id.to_string_lossy().into_owned());
    result.map(|_| Ended { resume })
}

/// What carrying out effects needs besides the state.
struct Loop<'a> {
    /// The running agent; replaced when the user resumes another session.
    agent: &'a mut Option<AgentHandle>,
    sessions: Option<&'a mut Sessions>,
    /// The settings, the model in effect kept up to date as the agent switches.
    config: Option<&'a mut Config>,
    attention: Attention,
    /// Where work done off the loop sends its result.
    background: mpsc::UnboundedSender<AppEvent>,
    finished: &'a mut mpsc::UnboundedReceiver<AppEvent>,
    /// The input's text to open in the external editor ([`Effect::EditInput`]), once the
    /// events at hand are handled.
    edit: Option<String>,
    /// The session's MCP servers (`/mcp restart NAME`).
    mcp: Option<rein_core::mcp::McpManager>,
}

/// `/mcp allow NAME`: remember (in the data folder's trust file) that this project's
/// server `name` may run as its table declares it now (the table the session loaded, the
/// one `/mcp` showed) with the project files it names as they are now, then start it.
fn allow_mcp(
    mcp: Option<&rein_core::mcp::McpManager>,
    data_dir: Option<std::path::PathBuf>,
    app: &App,
    name: &str,
) -> Result<(), String> {
    let mcp = mcp.ok_or("no MCP server runs in this session")?;
    let data_dir = data_dir.ok_or("this session keeps no data folder")?;
    let server = mcp
        .config(name)
        .ok_or_else(|| format!("no MCP server named {name} is configured"))?;
    let (mut trust, _) = rein_core::consent::trust::TrustStore::load(&data_dir);
    rein_core::mcp::external::approve(&server, &app.info.project, &mut trust)?;
    mcp.allow(name).map_err(|e| e.to_string())
}

/// Run until the dashboard closes; why the session ends: the user left at the prompt
/// (`/quit`, Ctrl-D, Ctrl-C twice), or something else did (a signal, the terminal gone).
async fn event_loop(
    terminal: &mut Term,
    app: &mut App,
    ctx: &mut Loop<'_>,
) -> io::Result<EndReason> {
    let mut events = Some(TerminalEvents::start());
    let mut terminated = std::pin::pin!(rein_core::host::signals::termination());
    if let Ok(size) = terminal.size() {
        app.size = (size.width, size.height);
    }
    if let Some(sessions) = ctx.sessions.as_deref_mut() {
        if std::mem::take(&mut sessions.pick_at_start) {
            let listed = list_sessions(sessions);
            handle(app, listed, ctx)?;
        }
    }
    if let Some(prompt) = app.first_prompt.take() {
        if handle(app, AppEvent::Prompt(prompt), ctx)? {
            return Ok(EndReason::PromptInputExit);
        }
    }
    let mut screen = Screen::new();
    let mut dirty = true;
    // A key asks for the next frame sooner than agent output does.
    let mut urgent = true;
    let mut last_frame = Instant::now() - FRAME;
    let mut next_tick = Instant::now() + TICK;
    let mut launched = false;
    // The last frame showed the agent's output: until the next stream frame is due its
    // events wait in their channel (a stream wakes the loop once a frame, not for the first
    // delta after each frame as well); then they go in together, or, if none came, the
    // loop waits for the agent again.
    let mut streaming = false;
    // The agent's events went in since the last frame.
    let mut agent_output = false;
    loop {
        let interval = if urgent { FRAME } else { STREAM_FRAME };
        if dirty && last_frame.elapsed() >= interval {
            // What the agent sent while the frame waited goes in before it is drawn.
            let drained = drain_agent_events(app, ctx)?;
            if drained.closed {
                return Ok(EndReason::PromptInputExit);
            }
            agent_output |= drained.applied > 0;
            draw(terminal, &mut screen, app)?;
            last_frame = Instant::now();
            streaming = agent_output && !urgent;
            agent_output = false;
            dirty = false;
            urgent = false;
            if !launched {
                launched = true;
                // The first frame is out: now the servers may take the CPU to start.
                if let Some(mcp) = &ctx.mcp {
                    mcp.launch();
                }
            }
        }
        let frame_due = last_frame + interval;
        // Ticks run the status line's clocks while the agent works, and take back "press
        // Ctrl-C again to quit" when its time is up; idle, nothing wakes the loop.
        let ticking = app.busy() || app.last_ctrl_c.is_some();
        let event = tokio::select! {
            term = next_term_event(&mut events) => match term {
                Some(Ok(event)) => match translate(event) {
                    Some(event) => event,
                    None => continue,
                },
                Some(Err(e)) => return Err(e),
                None => return Ok(EndReason::Other),
            },
            // While a frame is pending the agent's events wait in their channel and go in
            // together just before it (above): a stream of 5 000 deltas a second wakes
            // this loop for each frame, not for each delta.
            agent_event = next_agent_event(ctx.agent), if !dirty && !streaming => match agent_event {
                Some(event) => AppEvent::Agent(event),
                None => {
                    // The agent task ended; keep the dashboard up so the user can read it.
                    *ctx.agent = None;
                    continue;
                }
            },
            Some(event) = ctx.finished.recv() => event,
            // SIGTERM, SIGHUP, SIGQUIT: end the turn as Ctrl-C does and leave cleanly (the
            // caller restores the terminal and shuts the agent down).
            _ = &mut terminated => {
                if let Some(agent) = ctx.agent.as_ref() {
                    agent.send(AgentCommand::Interrupt);
                }
                return Ok(EndReason::Other);
            }
            _ = tokio::time::sleep_until(frame_due.into()), if dirty => continue,
            _ = tokio::time::sleep_until((last_frame + STREAM_FRAME).into()), if !dirty && streaming => {
                streaming = false;
                let drained = drain_agent_events(app, ctx)?;
                if drained.closed {
                    return Ok(EndReason::PromptInputExit);
                }
                // Nothing came: the stream paused or ended; wait for the agent again.
                dirty = drained.applied > 0;
                agent_output |= dirty;
                continue;
            }
            _ = tokio::time::sleep_until(next_tick.into()), if ticking => {
                next_tick = Instant::now() + TICK;
                AppEvent::Tick(Instant::now())
            }
        };
        dirty = true;
        urgent |= !matches!(event, AppEvent::Agent(_) | AppEvent::Tick(_));
        agent_output |= matches!(event, AppEvent::Agent(_));
        if handle(app, event, ctx)? {
            return Ok(EndReason::PromptInputExit);
        }
        // Take every agent event already waiting before drawing: a burst of deltas
        // costs one frame, not one frame each.
        let drained = drain_agent_events(app, ctx)?;
        if drained.closed {
            return Ok(EndReason::PromptInputExit);
        }
        agent_output |= drained.applied > 0;
        if let Some(text) = ctx.edit.take() {
            let edited = run_editor(terminal, &mut events, app, &text, ctx).await?;
            // The editor had the screen (and it was cleared after): draw every cell.
            screen.cleared();
            if handle(app, edited, ctx)? {
                return Ok(EndReason::PromptInputExit);
            }
            urgent = true;
        }
    }
}

/// What [`drain_agent_events`] did.
struct Drained {
    /// How many events it applied.
    applied: usize,
    /// The dashboard should close.
    closed: bool,
}

/// Apply every agent event waiting in the channel.
fn drain_agent_events(app: &mut App, ctx: &mut Loop<'_>) -> io::Result<Drained> {
    let mut applied = 0;
    while let Some(agent) = ctx.agent.as_mut() {
        match agent.events.try_recv() {
            Ok(event) => {
                applied += 1;
                if handle(app, AppEvent::Agent(event), ctx)? {
                    return Ok(Drained {
                        applied,
                        closed: true,
                    });
                }
            }
            Err(_) => break,
        }
    }
    Ok(Drained {
        applied,
        closed: false,
    })
}

async fn next_agent_event(agent: &mut Option<AgentHandle>) -> Option<rein_core::agent::AgentEvent> {
    match agent {
        Some(handle) => handle.events.recv().await,
        None => std::future::pending().await,
    }
}

/// Apply one event and carry out its effects (and those of the events they lead to); true
/// when the dashboard should close.
fn handle(app: &mut App, event: AppEvent, ctx: &mut Loop<'_>) -> io::Result<bool> {
    let mut quit = false;
    let mut pending = VecDeque::from([event]);
    while let Some(event) = pending.pop_front() {
        for effect in update(app, event) {
            match effect {
                Effect::Agent(command) => {
                    if matches!(command, AgentCommand::NewConversation) {
                        if let Some(sessions) = ctx.sessions.as_deref_mut() {
                            sessions.current = None;
                        }
                        // `/clear`: the new conversation gets fresh servers.
                        if let Some(mcp) = &ctx.mcp {
                            mcp.restart_all();
                        }
                    }
                    if let Some(agent) = ctx.agent.as_ref() {
                        agent.send(command);
                    }
                }
                Effect::Recording(path) => {
                    if let Some(sessions) = ctx.sessions.as_deref_mut() {
                        sessions.current = Some(path);
                        sessions.resumable = false;
                    }
                }
                Effect::Resumable => {
                    if let Some(sessions) = ctx.sessions.as_deref_mut() {
                        sessions.resumable = true;
                    }
                }
                Effect::ModelInUse { name, window } => model_switched(&name, window, ctx),
                Effect::WindowKnown { window, url } => window_learnt(window, url.as_deref(), ctx),
                Effect::Notify { message } => notify(&message, ctx.attention),
                Effect::MouseCapture(on) => {
                    let mut stdout = io::stdout();
                    if on {
                        execute!(stdout, EnableMouseCapture)?;
                    } else {
                        execute!(stdout, DisableMouseCapture)?;
                    }
                }
                Effect::OpenPicker => {
                    match ctx.sessions.as_deref() {
                        Some(sessions) => pending.push_back(list_sessions(sessions)),
                        None => app.hint = Some(
                            "this dashboard does not record sessions, so there is none to resume"
                                .to_string(),
                        ),
                    }
                }
                Effect::OpenRewind => rewind::open(app, ctx),
                Effect::PreviewRewind { turn, what } => rewind::preview(app, ctx, turn, what),
                Effect::Rewind { turn, what } => rewind::rewind(app, ctx, turn, what, &mut pending),
                Effect::ShowDiff => rewind::diff(app, ctx),
                Effect::ResumeSession(path) => {
                    pending.push_back(AppEvent::Resumed(switch_session(&path, ctx)))
                }
                Effect::ListModels => match ctx.config.as_deref() {
                    Some(config) => pending.push_back(AppEvent::Models(list_models(config))),
                    None => {
                        app.hint = Some("this dashboard runs on its one model only".to_string())
                    }
                },
                Effect::ListServerModels => {
                    if let Some(config) = ctx.config.as_deref() {
                        let target = config.target();
                        let background = ctx.background.clone();
                        tokio::spawn(async move {
                            let answer = server_models(&target).await;
                            let _ = background.send(AppEvent::ServerModels(answer));
                        });
                    }
                }
                Effect::SwitchModel(name) => {
                    if let Some(event) = resolve_model(name, ctx) {
                        pending.push_back(event);
                    }
                }
                Effect::ReloadCommands => {
                    let home = std::env::var_os("HOME").map(PathBuf::from);
                    let commands = rein_core::custom_commands::CommandSet::discover(
                        home.as_deref(),
                        &app.info.project,
                        &crate::app::commands::is_builtin,
                    );
                    pending.push_back(AppEvent::CommandsLoaded(commands));
                }
                Effect::EditInput { text } => ctx.edit = Some(text),
                Effect::ReadResult { id, at } => {
                    // One line at a known offset: a read as quick as a frame.
                    let text = rein_core::session::read_result(&at.path, at.offset, &id);
                    pending.push_back(AppEvent::ResultRead { id, at, text });
                }
                Effect::IndexFiles { root, cap } => {
                    // A walk of a large tree takes a while: on a thread, never on the loop.
                    let background = ctx.background.clone();
                    tokio::task::spawn_blocking(move || {
                        let index = rein_core::file_index::scan(&root, cap);
                        let _ = background.send(AppEvent::FilesIndexed(Box::new(index)));
                    });
                }
                Effect::RestartMcp(name) => match ctx.mcp.as_ref().map(|m| m.restart(&name)) {
                    Some(Ok(())) => {}
                    Some(Err(e)) => app.hint = Some(e.to_string()),
                    None => app.hint = Some("no MCP server runs in this session".to_string()),
                },
                Effect::KillBackground(id) => {
                    let Some(agent) = ctx.agent.as_ref() else {
                        continue;
                    };
                    let said = if id == "all" {
                        let stopped = agent.background.kill_all();
                        Ok(match stopped.len() {
                            0 => "no background command was running".to_string(),
                            n => format!(
                                "stopped {n} background command{}: {}",
                                if n == 1 { "" } else { "s" },
                                stopped
                                    .iter()
                                    .map(|t| t.id.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        })
                    } else {
                        agent.background.kill(&id)
                    };
                    let (kind, text) = match said {
                        Ok(text) => (crate::app::state::NoticeKind::Info, text),
                        Err(e) => (crate::app::state::NoticeKind::Error, e),
                    };
                    app.transcript
                        .cells
                        .push(crate::app::state::Cell::notice(kind, text));
                }
                Effect::AllowMcp(name) => {
                    let data_dir = ctx.config.as_ref().map(|c| c.data_dir.clone());
                    match allow_mcp(ctx.mcp.as_ref(), data_dir.clone(), app, &name) {
                        Err(problem) => app.transcript.cells.push(crate::app::state::Cell::notice(
                            crate::app::state::NoticeKind::Error,
                            format!("the MCP server {name} was not allowed: {problem}"),
                        )),
                        Ok(()) => {
                            let agent = ctx.sessions.as_ref().map(|s| &s.agent_config);
                            if let (Some(agent), Some(data_dir)) = (agent, data_dir) {
                                protect_pinned(agent, &data_dir);
                            }
                        }
                    }
                }
                Effect::LoginMcp(name) => mcp_login::login(ctx, name, &mut pending),
                Effect::LogoutMcp(name) => mcp_login::logout(ctx, name, &mut pending),
                Effect::AllowHooks(held) => {
                    let agent = ctx.sessions.as_ref().map(|s| &s.agent_config);
                    let hooks = agent.map(|a| a.hooks.clone());
                    let data_dir = ctx.config.as_ref().map(|c| c.data_dir.clone());
                    let result = match (hooks, data_dir) {
                        (Some(hooks), Some(data_dir)) => {
                            let allowed = held.allow(&hooks, &data_dir);
                            if let Some(agent) = agent.filter(|_| allowed.is_ok()) {
                                protect_pinned(agent, &data_dir);
                            }
                            // Allowed or not, a session waiting to start goes on.
                            hooks.answered();
                            allowed.map(|()| {
                                hooks.all().iter().map(rein_core::hooks::describe).collect()
                            })
                        }
                        _ => Err("this dashboard runs no agent".to_string()),
                    };
                    crate::app::update::hooks::allowed(app, result);
                }
                Effect::ReapproveHooks => {
                    let agent = ctx.sessions.as_ref().map(|s| &s.agent_config);
                    let data_dir = ctx.config.as_ref().map(|c| c.data_dir.clone());
                    let result = match (agent, data_dir) {
                        (Some(agent), Some(data_dir)) => {
                            let allowed = rein_core::hooks::allow_project(&agent.root, &data_dir);
                            if allowed.is_ok() {
                                protect_pinned(agent, &data_dir);
                            }
                            allowed.map(|a| a.files)
                        }
                        _ => Err("this dashboard runs no agent".to_string()),
                    };
                    crate::app::update::hooks::reapproved(app, result);
                }
                Effect::HooksAnswered => {
                    if let Some(sessions) = ctx.sessions.as_ref() {
                        sessions.agent_config.hooks.answered();
                    }
                }
                Effect::SaveInput(text) => {
                    if let Some(file) = &app.input_history {
                        if let Err(e) = input_history::append(file, &app.info.project, &text) {
                            // Said once; the inputs stay in this dashboard's memory.
                            app.hint = Some(format!(
                                "inputs are no longer saved to {} ({e}); Up and Ctrl-R still \
                                 reach this session's",
                                file.display()
                            ));
                            app.input_history = None;
                        }
                    }
                }
                Effect::Quit => quit = true,
            }
        }
    }
    Ok(quit)
}

pub use rein_core::context::git::git_branch;

/// The project files approved hooks and servers run (their scripts, pinned by the approval)
/// are the user's word: from now on writing one asks and commands cannot change them.
fn protect_pinned(agent: &rein_core::agent::AgentConfig, data_dir: &Path) {
    let pinned = rein_core::consent::trust::TrustStore::load(data_dir)
        .0
        .pinned_files(&agent.root);
    agent
        .policy
        .add_steering_files(&pinned, rein_core::consent::steering::Kind::HostTool);
    agent.sandbox.add_steering_files(&pinned);
}
