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
//! editor ([`crate::external_editor`]) and takes it back through the same setup code
//! (`setup_terminal`, `leave`); the terminal's focus reports become `AppEvent::Focus`.

mod mcp_login;
mod rewind;

use std::collections::VecDeque;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, EnableMouseCapture, Event, EventStream, KeyEventKind,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::execute;
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use futures_util::StreamExt;
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;
use tokio::sync::mpsc;

use crate::agent::{AgentCommand, AgentConfig, AgentEvent, AgentHandle, ModelSwitch, SessionSetup};
use crate::app::event::{ModelResolved, ResolvedModel};
use crate::app::model_picker::{ModelChoice, ModelList, ServerModels};
use crate::app::picker::SessionList;
use crate::app::update::update;
use crate::app::{App, AppEvent, Effect};
use crate::config::{discover, Config, Discovery, ModelTarget, Source};
use crate::hooks::EndReason;
use crate::session::{LoadedSession, SessionWriter};
use crate::ui::screen::Screen;

/// The shortest time between two frames after a key (about 60 a second: typing feels
/// immediate).
const FRAME: Duration = Duration::from_millis(16);
/// The shortest time between two frames while only the agent changes the screen (about 30
/// a second: a stream reads smoothly, and a long one costs half the drawing).
const STREAM_FRAME: Duration = Duration::from_millis(33);
/// How often the status line's clocks advance while the agent works.
const TICK: Duration = Duration::from_secs(1);

/// Output is buffered: a frame goes to the terminal in one write, not one per escape.
type Term = Terminal<CrosstermBackend<io::BufWriter<io::Stdout>>>;

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
    /// The server is still being asked for the window (`crate::agent::window`): an agent
    /// started on a resumed session meanwhile learns it too. `None` once it is known.
    pub window: Option<crate::agent::window::WindowWatch>,
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
        crate::mcp::McpManager,
        mpsc::UnboundedReceiver<crate::mcp::McpEvent>,
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
            let earlier = crate::input_history::load(&file, &project);
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
                _ = crate::signals::termination() => {}
            }
        };
        agent
            .end(reason, give_up, |event| {
                if let Some(line) = crate::describe::at_end(&event) {
                    eprintln!(
                        "rein: {}",
                        crate::sanitize::sanitize(&crate::text::clip(&line, 500))
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
    mcp: Option<crate::mcp::McpManager>,
}

/// `/mcp allow NAME`: remember (in the data folder's trust file) that this project's
/// server `name` may run as its table declares it now (the table the session loaded, the
/// one `/mcp` showed) with the project files it names as they are now, then start it.
fn allow_mcp(
    mcp: Option<&crate::mcp::McpManager>,
    data_dir: Option<std::path::PathBuf>,
    app: &App,
    name: &str,
) -> Result<(), String> {
    let mcp = mcp.ok_or("no MCP server runs in this session")?;
    let data_dir = data_dir.ok_or("this session keeps no data folder")?;
    let server = mcp
        .config(name)
        .ok_or_else(|| format!("no MCP server named {name} is configured"))?;
    let (mut trust, _) = crate::trust::TrustStore::load(&data_dir);
    crate::mcp::external::approve(&server, &app.info.project, &mut trust)?;
    mcp.allow(name).map_err(|e| e.to_string())
}

/// Raw mode, the alternate screen, bracketed paste, focus reporting; and a panic hook that
/// undoes them before the previous hook (color-eyre's report) prints.
fn enter() -> io::Result<Term> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        leave();
        previous(info);
    }));
    setup_terminal()?;
    match Terminal::new(CrosstermBackend::new(io::BufWriter::with_capacity(
        64 * 1024,
        io::stdout(),
    ))) {
        Ok(t) => Ok(t),
        Err(e) => {
            leave();
            Err(e)
        }
    }
}

/// The terminal as the dashboard wants it: raw mode, the alternate screen, bracketed
/// paste, focus reporting, the keyboard protocol. Undone by [`leave`] on failure. Used at
/// start and when the external editor hands the terminal back.
fn setup_terminal() -> io::Result<()> {
    enable_raw_mode()?;
    // The keyboard protocol lets Shift+Enter differ from Enter; terminals without it ignore
    // the request (asking first would cost a round trip at startup), and so do terminals
    // without focus reporting.
    if let Err(e) = execute!(
        io::stdout(),
        EnterAlternateScreen,
        EnableBracketedPaste,
        EnableFocusChange,
        PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
    ) {
        leave();
        return Err(e);
    }
    Ok(())
}

/// Put the terminal back as it was. Safe to call more than once.
fn leave() {
    let _ = execute!(
        io::stdout(),
        PopKeyboardEnhancementFlags,
        DisableMouseCapture,
        DisableBracketedPaste,
        DisableFocusChange,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = disable_raw_mode();
}

/// Ctrl-G: hand the terminal to the user's editor on `text` and take it back as the
/// dashboard had it (mouse capture too, when on), then draw the whole screen anew. The
/// terminal's events are not read meanwhile (`events` is dropped, so its reader thread
/// stops taking the editor's keys); the agent goes on, its events wait in their channel.
async fn run_editor(
    terminal: &mut Term,
    events: &mut Option<TerminalEvents>,
    app: &App,
    text: &str,
    ctx: &Loop<'_>,
) -> io::Result<AppEvent> {
    let dir = match ctx.sessions.as_deref() {
        Some(sessions) => sessions.data_dir.join("tmp"),
        None => std::env::temp_dir().join(format!("rein-{}", std::process::id())),
    };
    let visual = std::env::var("VISUAL").ok();
    let editor = std::env::var("EDITOR").ok();
    let command = crate::external_editor::editor_command(visual.as_deref(), editor.as_deref());
    let result = match command {
        Err(why) => Err(why),
        Ok(command) => {
            if let Some(reader) = events.take() {
                reader.stop().await;
            }
            leave();
            // The loop waits for the editor on the blocking pool; the agent's task goes on
            // meanwhile, on any runtime.
            let text = text.to_string();
            let result = tokio::task::spawn_blocking(move || {
                crate::external_editor::edit(&command, &dir, &text)
            })
            .await
            .unwrap_or_else(|e| {
                Err(format!(
                    "the editor did not finish ({e}); the input is unchanged"
                ))
            });
            setup_terminal()?;
            if app.mouse_capture {
                execute!(io::stdout(), EnableMouseCapture)?;
            }
            *events = Some(TerminalEvents::start());
            terminal.clear()?;
            result
        }
    };
    Ok(AppEvent::Edited(result))
}

/// Run until the dashboard closes; why the session ends: the user left at the prompt
/// (`/quit`, Ctrl-D, Ctrl-C twice), or something else did (a signal, the terminal gone).
async fn event_loop(
    terminal: &mut Term,
    app: &mut App,
    ctx: &mut Loop<'_>,
) -> io::Result<EndReason> {
    let mut events = Some(TerminalEvents::start());
    let mut terminated = std::pin::pin!(crate::signals::termination());
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

/// The terminal's events, read by a task of their own and handed over on a channel.
///
/// crossterm's `EventStream` checks the terminal (a zero-timeout poll, behind a lock its
/// reader thread holds while it waits) every time it is polled; polled as a branch of the
/// loop's `select!`, that was every time the loop woke, for a frame or an agent event.
/// Its own task polls it only when the terminal has something. Stopping it (Ctrl-G hands
/// the terminal to the editor) drops the stream, and with it its reader thread.
struct TerminalEvents {
    events: mpsc::UnboundedReceiver<io::Result<Event>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl TerminalEvents {
    fn start() -> TerminalEvents {
        let (tx, events) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            let mut stream = EventStream::new();
            while let Some(event) = stream.next().await {
                if tx.send(event).is_err() {
                    break;
                }
            }
        });
        TerminalEvents {
            events,
            task: Some(task),
        }
    }

    /// Stop reading, and wait until the stream is gone (the editor gets every key).
    async fn stop(mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let _ = task.await;
        }
    }
}

impl Drop for TerminalEvents {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// The terminal's next event; none while the external editor has the terminal.
async fn next_term_event(events: &mut Option<TerminalEvents>) -> Option<io::Result<Event>> {
    match events {
        Some(reader) => reader.events.recv().await,
        None => std::future::pending().await,
    }
}

async fn next_agent_event(agent: &mut Option<AgentHandle>) -> Option<crate::agent::AgentEvent> {
    match agent {
        Some(handle) => handle.events.recv().await,
        None => std::future::pending().await,
    }
}

/// Apply one event and carry out its effects (and those of the events they lead to); true
/// when the dashboard should close.
fn handle(app: &mut App, event: AppEvent, ctx: &mut Loop<'_>) -> io::Result<bool> {
    let mut quit = false;
    if let AppEvent::Agent(AgentEvent::SessionStarted { path, .. }) = &event {
        if let Some(sessions) = ctx.sessions.as_deref_mut() {
            sessions.current = Some(path.clone());
            sessions.resumable = false;
        }
    }
    if let AppEvent::Agent(AgentEvent::TurnStarted { .. }) = &event {
        if let Some(sessions) = ctx.sessions.as_deref_mut() {
            sessions.resumable = true;
        }
    }
    if let AppEvent::Agent(AgentEvent::ModelSwitched { name, window, .. }) = &event {
        model_switched(name, *window, ctx);
    }
    if let AppEvent::Agent(AgentEvent::WindowLearnt { window, url }) = &event {
        window_learnt(*window, url.as_deref(), ctx);
    }
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
                    let commands = crate::custom_commands::CommandSet::discover(
                        home.as_deref(),
                        &app.info.project,
                        &crate::app::commands::is_builtin,
                    );
                    pending.push_back(AppEvent::CommandsLoaded(commands));
                }
                Effect::EditInput { text } => ctx.edit = Some(text),
                Effect::ReadResult { id, at } => {
                    // One line at a known offset: a read as quick as a frame.
                    let text = crate::session::read_result(&at.path, at.offset, &id);
                    pending.push_back(AppEvent::ResultRead { id, at, text });
                }
                Effect::IndexFiles { root, cap } => {
                    // A walk of a large tree takes a while: on a thread, never on the loop.
                    let background = ctx.background.clone();
                    tokio::task::spawn_blocking(move || {
                        let index = crate::file_index::scan(&root, cap);
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
                            allowed
                                .map(|()| hooks.all().iter().map(crate::hooks::describe).collect())
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
                            let allowed = crate::hooks::allow_project(&agent.root, &data_dir);
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
                        if let Err(e) = crate::input_history::append(file, &app.info.project, &text)
                        {
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

/// The sessions on disk, for the picker.
fn list_sessions(sessions: &Sessions) -> AppEvent {
    // The picker shows exact counts: those the sidecars no longer cover are counted from
    // the files' tails.
    let mut listed = crate::session::list(&sessions.data_dir);
    for summary in &mut listed {
        summary.messages = crate::session::exact_count(summary);
    }
    AppEvent::Sessions(SessionList {
        sessions: listed,
        now: SystemTime::now(),
        home: std::env::var_os("HOME").map(PathBuf::from),
        current: sessions.current.clone(),
    })
}

/// Load the session at `path` and put a new agent on it in place of the running one. On
/// failure the running agent and its session go on, and the reason comes back.
fn switch_session(path: &Path, ctx: &mut Loop<'_>) -> Result<Box<LoadedSession>, String> {
    let Some(sessions) = ctx.sessions.as_deref_mut() else {
        return Err("this dashboard does not record sessions".to_string());
    };
    // A session another rein has open goes on in a copy: the picker marked it, so
    // choosing it is choosing the copy.
    let opened = match SessionWriter::resume_with(path, crate::app::resume::SHOWN) {
        Err(e) if crate::session::in_use(&e).is_some() => {
            let busy = e.to_string();
            SessionWriter::fork_with(&sessions.data_dir, path, crate::app::resume::SHOWN).map(
                |(writer, mut loaded)| {
                    loaded.notices.push(format!(
                        "{busy}, so this is a copy of it: session {}",
                        loaded.id()
                    ));
                    (writer, loaded)
                },
            )
        }
        opened => opened,
    };
    let (writer, mut loaded) = opened.map_err(|e| {
        format!(
            "cannot resume {}: {e}; still in the current session",
            path.display()
        )
    })?;
    // The agent starts on the model in use; the update step then switches it to the one
    // the session last ran on, when that still leads where it ran. When it does not, the
    // session goes on with the model in use, and says why.
    if let Some(config) = ctx.config.as_deref() {
        let recorded = loaded
            .model
            .as_ref()
            .map(|m| (m.name.as_str(), m.base_url.as_str()));
        let decision = config.model_for_resume(recorded, false);
        if decision.target.is_none() && !decision.notices.is_empty() {
            loaded.model = None;
            loaded.notices.extend(decision.notices);
        }
    }
    // The agent needs no transcript (the dashboard keeps it as its cells): not copied.
    let transcript = std::mem::take(&mut loaded.transcript);
    let folds = std::mem::take(&mut loaded.folds);
    let for_agent = loaded.clone();
    (loaded.transcript, loaded.folds) = (transcript, folds);
    let setup = SessionSetup {
        writer,
        resumed: Some(for_agent),
        data_dir: sessions.data_dir.clone(),
    };
    let agent = crate::agent::spawn_learning_window(
        sessions.agent_config.clone(),
        Some(setup),
        sessions.window.clone(),
    )
    .map_err(|e| format!("cannot start the agent on {}: {e}", path.display()))?;
    if let Some(old) = ctx.agent.replace(agent) {
        old.send(AgentCommand::Shutdown);
    }
    sessions.current = Some(loaded.path.clone());
    sessions.resumable = loaded.message_count > 0;
    Ok(Box::new(loaded))
}

/// The models `/model` offers: the one in use with the window in effect, then every
/// `[providers.NAME.models.MODEL]` entry with its configured window (or the
/// `--context-window` that applies to all) and prices.
fn list_models(config: &Config) -> ModelList {
    let explicit_window = matches!(
        config.context_window.source,
        Source::Flag(_) | Source::Env(_)
    )
    .then_some(config.context_window.value);
    let models = config
        .providers
        .iter()
        .flat_map(|p| p.models.iter().map(move |m| (p, m)))
        .map(|(p, m)| ModelChoice {
            name: format!("{}/{}", p.name, m.name),
            window: explicit_window.or(m.context_window.as_ref().map(|w| w.value)),
            prices: usage_prices(&m.prices()),
        })
        .collect();
    // A model with a server to ask: one whose base URL is there (the demo's is not).
    let server_url = (!config.model.value.is_empty() && !config.base_url.value.is_empty())
        .then(|| crate::config::server_models::models_url(&config.target()));
    ModelList {
        current: ModelChoice {
            name: config.model_name.clone(),
            window: Some(config.context_window.value),
            prices: usage_prices(&config.prices),
        },
        models,
        server_url,
    }
}

/// What `target`'s server lists, named as `--model` takes them: with the provider's prefix
/// when the model in use was named with it (`openrouter/…`), else as the server says (a
/// name without a prefix goes to the same `base_url`).
async fn server_models(target: &crate::config::ModelTarget) -> ServerModels {
    let url = crate::config::server_models::models_url(target);
    let prefix = Some(target.provider.value.as_str())
        .filter(|p| !p.is_empty() && target.name.starts_with(&format!("{p}/")))
        .map(|p| format!("{p}/"))
        .unwrap_or_default();
    let result = crate::config::server_models::list(target)
        .await
        .map(|models| {
            models
                .into_iter()
                .map(|m| ModelChoice {
                    name: format!("{prefix}{}", m.id),
                    window: m.window,
                    prices: None,
                })
                .collect()
        });
    ServerModels { url, result }
}

/// Resolve `name` for a switch. The answer comes back at once, unless the server must be
/// asked for the window: then a task asks it (within `discover::TIMEOUT`) and the answer
/// arrives on the background channel.
fn resolve_model(name: String, ctx: &mut Loop<'_>) -> Option<AppEvent> {
    let answer =
        |name: String, result| AppEvent::ModelResolved(Box::new(ModelResolved { name, result }));
    let Some(config) = ctx.config.as_deref() else {
        return Some(answer(
            name,
            Err("this dashboard runs on its one model only".to_string()),
        ));
    };
    let target = match config.resolve_model(&name) {
        Ok(target) => target,
        Err(e) => {
            let message = format!(
                "cannot switch to {name}: {e}; still using {}",
                config.model_name
            );
            return Some(answer(name, Err(message)));
        }
    };
    let warnings = config.model_warnings(&target);
    if target.discovery == Discovery::None {
        return Some(answer(name, Ok(ready(target, None, warnings))));
    }
    let background = ctx.background.clone();
    tokio::spawn(async move {
        let found = discover::context_window(&target).await.map(|d| d.tokens);
        let _ = background.send(answer(name, Ok(ready(target, found, warnings))));
    });
    None
}

/// What the agent needs to switch to `target`; `window` is what its server reported.
fn ready(target: ModelTarget, window: Option<u64>, warnings: Vec<String>) -> ResolvedModel {
    ResolvedModel {
        switch: ModelSwitch {
            window_known: window.is_some_and(|w| w > 0) || target.context_window.is_known(),
            window: window
                .filter(|&w| w > 0)
                .unwrap_or(target.context_window.value),
            prices: usage_prices(&target.prices),
            images: target.images,
            api: target.api_settings(),
            name: target.name,
            model: target.model.value,
            base_url: target.base_url.value,
            api_key: target.api_key.value,
            headers: target.headers,
        },
        warnings,
    }
}

/// The agent runs on `name` now: so do the settings a resumed session starts from and
/// the next `/model` list.
fn model_switched(name: &str, window: u64, ctx: &mut Loop<'_>) {
    let Some(config) = ctx.config.as_deref_mut() else {
        return;
    };
    let Ok(mut target) = config.resolve_model(name) else {
        return;
    };
    target.context_window.value = window;
    target.discovery = Discovery::None;
    config.set_target(target);
    if let Some(sessions) = ctx.sessions.as_deref_mut() {
        let agent = &mut sessions.agent_config;
        agent.client.base_url = config.base_url.value.clone();
        agent.client.api_key = config.api_key.value.clone();
        agent.client.model = config.model.value.clone();
        agent.client.name = config.model_name.clone();
        agent.client.extra_headers = config.headers.clone();
        agent.context.window = window;
        // The switch brought its window: the question about the first model is moot.
        sessions.window = None;
    }
}

/// The server answered the question about the window (or did not in time): the settings
/// `/model` lists and an agent started later on a resumed session run on `window`.
fn window_learnt(window: u64, url: Option<&str>, ctx: &mut Loop<'_>) {
    if let (Some(config), Some(url)) = (ctx.config.as_deref_mut(), url) {
        config.set_discovered_window(window, url.to_string());
    }
    if let Some(sessions) = ctx.sessions.as_deref_mut() {
        sessions.agent_config.context.window = window;
        sessions.window = None;
    }
}

/// A model's prices for the cost shown in `/cost`, `/context`, the model picker and the
/// headless summary: `None` unless both the input and the output price are configured.
pub fn usage_prices(prices: &crate::config::Prices) -> Option<crate::agent::Prices> {
    Some(crate::agent::Prices {
        input: prices.input?,
        cached_input: prices.cached_input,
        cache_write: prices.cache_write,
        output: prices.output?,
    })
}

/// The terminal bell and a desktop notification (OSC 9, understood by iTerm2, kitty,
/// WezTerm, foot and others; ignored elsewhere).
/// A desktop notification's text: through the one sanitiser like everything rein prints
/// (so no control character or bidirectional override ends the OSC 9 early or reorders
/// it), on one line, at most 200 characters.
fn notification_text(message: &str) -> String {
    crate::sanitize::sanitize(message)
        .chars()
        .map(|c| if c == '\n' || c == '\t' { ' ' } else { c })
        .take(200)
        .collect()
}

fn notify(message: &str, attention: Attention) {
    let mut out = String::new();
    if attention.bell {
        out.push('\x07');
    }
    if attention.notifications {
        out.push_str(&format!("\x1b]9;{}\x07", notification_text(message)));
    }
    if !out.is_empty() {
        let mut stdout = io::stdout();
        let _ = stdout.write_all(out.as_bytes());
        let _ = stdout.flush();
    }
}

fn draw(terminal: &mut Term, screen: &mut Screen, app: &App) -> io::Result<()> {
    screen.draw(terminal, app, Instant::now())
}

/// Terminal events the update step cares about.
fn translate(event: Event) -> Option<AppEvent> {
    match event {
        // Key releases and repeats arrive on some terminals; only presses count.
        Event::Key(key) if key.kind != KeyEventKind::Release => Some(AppEvent::Key(key)),
        Event::Key(_) => None,
        Event::Paste(text) => Some(AppEvent::Paste(text)),
        Event::Resize(width, height) => Some(AppEvent::Resize { width, height }),
        Event::Mouse(mouse) => Some(AppEvent::Mouse(mouse)),
        Event::FocusGained => Some(AppEvent::Focus(true)),
        Event::FocusLost => Some(AppEvent::Focus(false)),
    }
}

pub use crate::context::git::git_branch;

/// The project files approved hooks and servers run (their scripts, pinned by the approval)
/// are the user's word: from now on writing one asks and commands cannot change them.
fn protect_pinned(agent: &crate::agent::AgentConfig, data_dir: &Path) {
    let pinned = crate::trust::TrustStore::load(data_dir)
        .0
        .pinned_files(&agent.root);
    agent
        .policy
        .add_steering_files(&pinned, crate::steering::Kind::HostTool);
    agent.sandbox.add_steering_files(&pinned);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notification_cannot_end_its_escape_or_reorder_itself() {
        assert_eq!(
            notification_text("rm\x07\x1b]0;x\u{9c}\u{202e}a\nb"),
            "rm^G^[]0;x\\u{9c}\\u{202e}a b"
        );
        assert_eq!(notification_text(&"x".repeat(300)).len(), 200);
    }
}
