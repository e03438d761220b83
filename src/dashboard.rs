//! The full-screen front end: the terminal, the event loop, and the effects of the update
//! step.
//!
//! One loop `select!`s over the terminal's events, the agent's events and a frame timer.
//! Every event goes through [`update`] (pure); the effects it returns are carried out here
//! (send to the agent, answer an approval, ring the bell, quit). Redraws are coalesced: an
//! event marks the screen dirty and a frame is drawn at most every [`FRAME`] after a key, or
//! every [`STREAM_FRAME`] while only the agent's output changes it; with nothing happening
//! there is no timer at all, so an idle dashboard uses no CPU. The terminal is
//! restored on every way out: normal exit, error, and panic (the hook restores it before
//! the report is printed).

use std::io::{self, Write};
use std::time::{Duration, Instant};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture, Event,
    EventStream, KeyEventKind, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use crossterm::execute;
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use futures_util::StreamExt;
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

use crate::agent::{AgentCommand, AgentHandle};
use crate::app::update::update;
use crate::app::{App, AppEvent, Effect};

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

/// Run the dashboard until the user quits. `agent` is `None` when no model is configured
/// (the first-run screen explains how to set one).
pub async fn run(
    mut app: App,
    mut agent: Option<AgentHandle>,
    attention: Attention,
) -> io::Result<()> {
    let mut terminal = enter()?;
    let result = event_loop(&mut terminal, &mut app, agent.as_mut(), attention).await;
    if let Some(agent) = &agent {
        agent.send(AgentCommand::Shutdown);
    }
    leave();
    result
}

/// Raw mode, the alternate screen, bracketed paste; and a panic hook that undoes them
/// before the previous hook (color-eyre's report) prints.
fn enter() -> io::Result<Term> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        leave();
        previous(info);
    }));
    enable_raw_mode()?;
    let mut stdout = io::stdout();
    // The keyboard protocol lets Shift+Enter differ from Enter; terminals without it ignore
    // the request (asking first would cost a round trip at startup).
    if let Err(e) = execute!(
        stdout,
        EnterAlternateScreen,
        EnableBracketedPaste,
        PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
    ) {
        leave();
        return Err(e);
    }
    match Terminal::new(CrosstermBackend::new(io::BufWriter::with_capacity(
        64 * 1024,
        stdout,
    ))) {
        Ok(t) => Ok(t),
        Err(e) => {
            leave();
            Err(e)
        }
    }
}

/// Put the terminal back as it was. Safe to call more than once.
fn leave() {
    let _ = execute!(
        io::stdout(),
        PopKeyboardEnhancementFlags,
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = disable_raw_mode();
}

async fn event_loop(
    terminal: &mut Term,
    app: &mut App,
    mut agent: Option<&mut AgentHandle>,
    attention: Attention,
) -> io::Result<()> {
    let mut events = EventStream::new();
    if let Ok(size) = terminal.size() {
        app.size = (size.width, size.height);
    }
    let mut dirty = true;
    // A key asks for the next frame sooner than agent output does.
    let mut urgent = true;
    let mut last_frame = Instant::now() - FRAME;
    let mut next_tick = Instant::now() + TICK;
    loop {
        let interval = if urgent { FRAME } else { STREAM_FRAME };
        if dirty && last_frame.elapsed() >= interval {
            draw(terminal, app)?;
            last_frame = Instant::now();
            dirty = false;
            urgent = false;
        }
        let frame_due = last_frame + interval;
        let busy = app.busy();
        let event = tokio::select! {
            term = events.next() => match term {
                Some(Ok(event)) => match translate(event) {
                    Some(event) => event,
                    None => continue,
                },
                Some(Err(e)) => return Err(e),
                None => return Ok(()),
            },
            agent_event = next_agent_event(&mut agent) => match agent_event {
                Some(event) => AppEvent::Agent(event),
                None => {
                    // The agent task ended; keep the dashboard up so the user can read it.
                    agent = None;
                    continue;
                }
            },
            _ = tokio::time::sleep_until(frame_due.into()), if dirty => continue,
            _ = tokio::time::sleep_until(next_tick.into()), if busy => {
                next_tick = Instant::now() + TICK;
                AppEvent::Tick(Instant::now())
            }
        };
        dirty = true;
        urgent |= !matches!(event, AppEvent::Agent(_) | AppEvent::Tick(_));
        if handle(app, event, agent.as_deref_mut(), attention)? {
            return Ok(());
        }
        // Take every agent event already waiting before drawing: a burst of deltas
        // costs one frame, not one frame each.
        while let Some(handle_ref) = agent.as_deref_mut() {
            match handle_ref.events.try_recv() {
                Ok(event) => {
                    if handle(app, AppEvent::Agent(event), agent.as_deref_mut(), attention)? {
                        return Ok(());
                    }
                }
                Err(_) => break,
            }
        }
    }
}

async fn next_agent_event(
    agent: &mut Option<&mut AgentHandle>,
) -> Option<crate::agent::AgentEvent> {
    match agent {
        Some(handle) => handle.events.recv().await,
        None => std::future::pending().await,
    }
}

/// Apply one event and carry out its effects; true when the dashboard should close.
fn handle(
    app: &mut App,
    event: AppEvent,
    agent: Option<&mut AgentHandle>,
    attention: Attention,
) -> io::Result<bool> {
    let mut quit = false;
    for effect in update(app, event) {
        match effect {
            Effect::Agent(command) => {
                if let Some(agent) = &agent {
                    agent.send(command);
                }
            }
            Effect::Answer { reply, decision } => {
                reply.send(decision);
            }
            Effect::Notify { message } => notify(&message, attention),
            Effect::MouseCapture(on) => {
                let mut stdout = io::stdout();
                if on {
                    execute!(stdout, EnableMouseCapture)?;
                } else {
                    execute!(stdout, DisableMouseCapture)?;
                }
            }
            Effect::Quit => quit = true,
        }
    }
    Ok(quit)
}

/// The terminal bell and a desktop notification (OSC 9, understood by iTerm2, kitty,
/// WezTerm, foot and others; ignored elsewhere).
fn notify(message: &str, attention: Attention) {
    let mut out = String::new();
    if attention.bell {
        out.push('\x07');
    }
    if attention.notifications {
        let clean: String = message
            .chars()
            .filter(|c| !c.is_control())
            .take(200)
            .collect();
        out.push_str(&format!("\x1b]9;{clean}\x07"));
    }
    if !out.is_empty() {
        let mut stdout = io::stdout();
        let _ = stdout.write_all(out.as_bytes());
        let _ = stdout.flush();
    }
}

fn draw(terminal: &mut Term, app: &App) -> io::Result<()> {
    let now = Instant::now();
    terminal.draw(|frame| crate::ui::render(app, frame, now))?;
    Ok(())
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
        Event::FocusGained | Event::FocusLost => None,
    }
}

/// The current branch of the git repository at `root`, read from `.git/HEAD` (no git
/// process): the branch name, or the short commit for a detached head.
pub fn git_branch(root: &std::path::Path) -> Option<String> {
    let git = root.join(".git");
    let dir = if git.is_file() {
        let text = std::fs::read_to_string(&git).ok()?;
        let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
        root.join(target)
    } else {
        git
    };
    let head = std::fs::read_to_string(dir.join("HEAD")).ok()?;
    let head = head.trim();
    match head.strip_prefix("ref: ") {
        Some(reference) => Some(
            reference
                .strip_prefix("refs/heads/")
                .unwrap_or(reference)
                .to_string(),
        ),
        None => Some(head.chars().take(7).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_from_head() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(git_branch(dir.path()), None);
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/feature/x\n").unwrap();
        assert_eq!(git_branch(dir.path()).as_deref(), Some("feature/x"));
        std::fs::write(
            dir.path().join(".git/HEAD"),
            "0123456789abcdef0123456789abcdef01234567\n",
        )
        .unwrap();
        assert_eq!(git_branch(dir.path()).as_deref(), Some("0123456"));
    }
}
