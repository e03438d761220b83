//! The dashboard's terminal: taking it (raw mode, the alternate screen, the panic hook)
//! and giving it back, lending it to the user's editor (Ctrl-G), its events read by a task
//! of their own and translated for the update step, a frame drawn, and the bell or desktop
//! notification that asks for the user's attention.

use std::io::{self, Write};
use std::time::Instant;

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

use super::{Attention, Loop};
use crate::app::{App, AppEvent};
use crate::ui::screen::Screen;

/// Output is buffered: a frame goes to the terminal in one write, not one per escape.
pub(super) type Term = Terminal<CrosstermBackend<io::BufWriter<io::Stdout>>>;

/// Raw mode, the alternate screen, bracketed paste, focus reporting; and a panic hook that
/// undoes them before the previous hook (color-eyre's report) prints.
pub(super) fn enter() -> io::Result<Term> {
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
pub(super) fn leave() {
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
pub(super) async fn run_editor(
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
    let command = super::external_editor::editor_command(visual.as_deref(), editor.as_deref());
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
                super::external_editor::edit(&command, &dir, &text)
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

/// The terminal's events, read by a task of their own and handed over on a channel.
///
/// crossterm's `EventStream` checks the terminal (a zero-timeout poll, behind a lock its
/// reader thread holds while it waits) every time it is polled; polled as a branch of the
/// loop's `select!`, that was every time the loop woke, for a frame or an agent event.
/// Its own task polls it only when the terminal has something. Stopping it (Ctrl-G hands
/// the terminal to the editor) drops the stream, and with it its reader thread.
pub(super) struct TerminalEvents {
    events: mpsc::UnboundedReceiver<io::Result<Event>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl TerminalEvents {
    pub(super) fn start() -> TerminalEvents {
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
pub(super) async fn next_term_event(
    events: &mut Option<TerminalEvents>,
) -> Option<io::Result<Event>> {
    match events {
        Some(reader) => reader.events.recv().await,
        None => std::future::pending().await,
    }
}

/// A desktop notification's text: through the one sanitiser like everything rein prints
/// (so no control character or bidirectional override ends the OSC 9 early or reorders
/// it), on one line, at most 200 characters.
fn notification_text(message: &str) -> String {
    rein_core::text::sanitize::sanitize(message)
        .chars()
        .map(|c| if c == '\n' || c == '\t' { ' ' } else { c })
        .take(200)
        .collect()
}

/// The terminal bell and a desktop notification (OSC 9, understood by iTerm2, kitty,
/// WezTerm, foot and others; ignored elsewhere).
pub(super) fn notify(message: &str, attention: Attention) {
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

pub(super) fn draw(terminal: &mut Term, screen: &mut Screen, app: &App) -> io::Result<()> {
    screen.draw(terminal, app, Instant::now())
}

/// Terminal events the update step cares about.
pub(super) fn translate(event: Event) -> Option<AppEvent> {
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
