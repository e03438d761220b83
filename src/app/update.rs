//! The update step: state + event in, new state + effects out. Pure: no I/O, no waiting,
//! no clock: [`update_at`] takes the instant it runs at (tests pass fixed ones), and
//! [`update`] reads the clock once for it.
//!
//! Keys, pastes and the mouse go to the layer on top ([`Layer::top`]; the order is in
//! [`super::layer`]), by one routing table (`route`): the approval modal's handlers
//! ([`super::approval`]), a picker's ([`super::picker`], [`super::model_picker`]), the
//! `/context` layer's ([`super::context_view`]), or the main screen's, where the keymap's
//! `global` and `composer` bindings come first and every other key edits the input (with
//! the `/` completion list open, its `slash` bindings come before them:
//! [`super::slash_menu`]). Agent events are applied in [`super::agent_events`]; slash commands in
//! [`super::commands`]; model switches in [`super::model_switch`].

use std::time::{Duration, Instant};

use crossterm::event::{KeyEvent, KeyEventKind, MouseEvent, MouseEventKind};

use super::agent_events;
use super::approval;
use super::composer;
use super::context_view;
use super::editor;
use super::event::{AppEvent, Effect};
use super::finder;
use super::history_search;
use super::keymap::{keymap, Action};
use super::layer::Layer;
use super::model_picker;
use super::model_switch;
use super::picker;
use super::resume;
use super::state::{App, Cell, NoticeKind, ResultText, Scroll};
use crate::agent::AgentCommand;

/// A second Ctrl-C within this long quits.
pub const DOUBLE_CTRL_C: Duration = Duration::from_secs(1);
/// Shown after a Ctrl-C that did not quit.
pub const CTRL_C_HINT: &str = "press Ctrl-C again to quit";
/// Lines the mouse wheel scrolls by.
pub const WHEEL_LINES: usize = 3;
/// Lines of the screen that are not transcript (status, gauge, input, footer): a page is
/// the rest.
const CHROME_LINES: u16 = 8;
/// Keys arriving this soon after a paste, each after the one before, are taken as the rest
/// of it: a terminal delivers a paste in one burst, and no one presses Enter 50 ms after
/// pasting.
pub const PASTE_TAIL: Duration = Duration::from_millis(50);

/// Where Home puts the view: past any real top (the UI clamps it when drawing).
pub const TOP: usize = usize::MAX / 2;

/// Apply one event to the state; what must happen outside comes back as effects.
pub fn update(app: &mut App, event: AppEvent) -> Vec<Effect> {
    update_at(app, event, Instant::now())
}

/// [`update`] at a given instant: the time stamps of new cells, activities and Ctrl-C
/// presses. A tick carries its own instant.
pub fn update_at(app: &mut App, event: AppEvent, now: Instant) -> Vec<Effect> {
    let mut effects = Vec::new();
    match event {
        AppEvent::Key(key) => handle_key(app, key, now, &mut effects),
        AppEvent::Paste(text) => {
            app.paste_tail = Some(now);
            route(app, Input::Paste(&text), now, &mut effects);
        }
        AppEvent::Resize { width, height } => app.size = (width, height),
        AppEvent::Mouse(mouse) => route(app, Input::Mouse(mouse), now, &mut effects),
        AppEvent::Agent(event) => agent_events::handle(app, event, now, &mut effects),
        AppEvent::Tick(at) => {
            let expired = app
                .last_ctrl_c
                .is_none_or(|t| at.saturating_duration_since(t) > DOUBLE_CTRL_C);
            if expired && app.hint.as_deref() == Some(CTRL_C_HINT) {
                app.hint = None;
            }
        }
        AppEvent::Sessions(list) => picker::open(app, list),
        AppEvent::Resumed(Ok(mut session)) => {
            resume::reset(app);
            resume::restore(app, &mut session);
            // The new agent runs on the model in use; the session goes on with the one it
            // last ran on.
            if let Some(recorded) = session.model_name() {
                if recorded != app.info.model {
                    model_switch::begin(app, recorded, &mut effects);
                }
            }
        }
        AppEvent::Resumed(Err(message)) => {
            app.transcript
                .cells
                .push(Cell::notice(NoticeKind::Error, message));
            app.transcript.scroll = Scroll::default();
        }
        AppEvent::FilesIndexed(index) => finder::indexed(app, *index, now),
        AppEvent::Models(list) => model_picker::open(app, list),
        AppEvent::ModelResolved(answer) => model_switch::resolved(app, *answer, now, &mut effects),
        AppEvent::CommandsLoaded(commands) => {
            for notice in &commands.notices {
                app.transcript
                    .cells
                    .push(Cell::notice(NoticeKind::Info, notice.clone()));
            }
            app.custom_commands = commands;
        }
        AppEvent::Focus(focused) => app.focused = Some(focused),
        AppEvent::Mcp(event) => super::mcp_view::event(app, event),
        AppEvent::HistoryLoaded(earlier) => composer::earlier_inputs(app, earlier),
        AppEvent::Edited(result) => editor::edited(app, result),
        AppEvent::ResultRead { id, at, text } => result_read(app, &id, &at, text),
    }
    effects
}

fn handle_key(app: &mut App, key: KeyEvent, now: Instant, effects: &mut Vec<Effect>) {
    if key.kind == KeyEventKind::Release {
        return;
    }
    // Pasted text that holds the end-of-paste marker itself ends the paste early, and
    // the rest arrives as keys, at once: none of them may send the message or answer an
    // approval. Each such key keeps the window open for the next.
    let in_paste = app
        .paste_tail
        .is_some_and(|t| now.saturating_duration_since(t) < PASTE_TAIL);
    app.paste_tail = in_paste.then_some(now);
    route(app, Input::Key { key, in_paste }, now, effects);
}

/// Input for the layer on top.
enum Input<'a> {
    /// A key, and whether it is the tail of a paste.
    Key {
        key: KeyEvent,
        in_paste: bool,
    },
    Paste(&'a str),
    Mouse(MouseEvent),
}

/// Hand `input` to the layer on top ([`Layer::top`]): each layer's handlers, in one place.
fn route(app: &mut App, input: Input, now: Instant, effects: &mut Vec<Effect>) {
    let top = Layer::top(app);
    match (top, input) {
        // The tail of a paste must not answer an approval.
        (Layer::Approval | Layer::Feedback, Input::Key { in_paste: true, .. }) => {}
        (Layer::Approval | Layer::Feedback, Input::Key { key, .. }) => {
            approval::handle_key(app, key, now, effects)
        }
        (Layer::Approval | Layer::Feedback, Input::Paste(text)) => approval::paste(app, text),
        (Layer::Approval | Layer::Feedback, Input::Mouse(mouse)) => approval::mouse(app, mouse),
        (Layer::Sessions, Input::Key { key, .. }) => picker::handle_key(app, key, effects),
        (Layer::Sessions, Input::Paste(text)) => picker::paste(app, text),
        (Layer::Sessions, Input::Mouse(mouse)) => picker::mouse(app, mouse),
        (Layer::Models, Input::Key { key, .. }) => model_picker::handle_key(app, key, effects),
        (Layer::Models, Input::Paste(text)) => model_picker::paste(app, text),
        (Layer::Models, Input::Mouse(mouse)) => model_picker::mouse(app, mouse),
        (Layer::Context, Input::Key { key, .. }) => context_view::handle_key(app, key),
        // The layer has no text field and does not scroll.
        (Layer::Context, Input::Paste(_) | Input::Mouse(_)) => {}
        (Layer::Search, Input::Key { key, .. }) => history_search::handle_key(app, key),
        (Layer::Search, Input::Paste(text)) => history_search::paste(app, text),
        (Layer::Search, Input::Mouse(mouse)) => main_mouse(app, mouse),
        // The finder's own keys, else the main screen's (the tail of a paste edits).
        (Layer::Finder, Input::Key { key, in_paste }) => {
            if in_paste || !finder::handle_key(app, &key, now, effects) {
                main_key(app, key, in_paste, now, effects)
            }
        }
        // The completion list's keys come first (its mode is first in its modes); the
        // rest are the main screen's.
        (Layer::Main | Layer::Slash, Input::Key { key, in_paste }) => {
            main_key(app, key, in_paste, now, effects)
        }
        (Layer::Main | Layer::Slash | Layer::Finder, Input::Paste(text)) => {
            composer::paste(app, text)
        }
        (Layer::Main | Layer::Slash | Layer::Finder, Input::Mouse(mouse)) => main_mouse(app, mouse),
    }
    // The input may have changed: the `@` finder follows the cursor.
    if matches!(top, Layer::Main | Layer::Slash | Layer::Finder) {
        finder::sync(app, now, effects);
    }
}

/// A key on the main screen: the keymap's `global` and `composer` bindings, else the input
/// box's editing.
fn main_key(app: &mut App, key: KeyEvent, in_paste: bool, now: Instant, effects: &mut Vec<Effect>) {
    match keymap().action(app, &key) {
        Some(Action::Send | Action::SlashAccept) if in_paste => {
            app.composer.textarea.insert_newline()
        }
        Some(action) => run_action(app, action, now, effects),
        None => {
            if app.composer.textarea.input(key) {
                app.hint = None;
            }
        }
    }
}

/// A main-screen action. Actions of the modal do nothing here.
fn run_action(app: &mut App, action: Action, now: Instant, effects: &mut Vec<Effect>) {
    match action {
        Action::Cancel => cancel(app, now, effects),
        Action::Interrupt => {
            if app.busy() {
                effects.push(Effect::Agent(AgentCommand::Interrupt));
            } else {
                app.hint = None;
            }
        }
        Action::Quit => effects.push(Effect::Quit),
        Action::Help => super::commands::run(app, super::commands::SlashCommand::Help, effects),
        Action::Send => composer::submit(app, now, effects),
        Action::Newline => app.composer.textarea.insert_newline(),
        Action::HistoryPrev => composer::history_prev(app),
        Action::HistoryNext => composer::history_next(app),
        Action::ScrollUp => scroll_up(app, 1),
        Action::ScrollDown => scroll_down(app, 1),
        Action::PageUp => scroll_up(app, page(app)),
        Action::PageDown => scroll_down(app, page(app)),
        Action::ScrollTop => {
            app.transcript.scroll = Scroll {
                from_bottom: TOP,
                follow: false,
                from_top: Some(0),
            }
        }
        Action::ScrollBottom => app.transcript.scroll = Scroll::default(),
        Action::ToggleToolOutput => {
            // The last cell with something folded: a tool's output (or its subagent's
            // calls), or a compaction's handoff note.
            let last = app.transcript.cells.iter_mut().rev().find(|c| match c {
                Cell::Tool(t) => t.result.is_some() || t.subagent.is_some(),
                Cell::Compaction(c) => !c.note.trim().is_empty(),
                _ => false,
            });
            match last {
                Some(Cell::Tool(tool)) => {
                    let tool: &mut crate::app::state::ToolCell = tool;
                    tool.expanded = !tool.expanded;
                    if let Some(ResultText::Stored(stored)) = &mut tool.result {
                        if !tool.expanded {
                            // Folded again: only the head is kept.
                            stored.whole = None;
                        } else if stored.whole.is_none() {
                            effects.push(Effect::ReadResult {
                                id: tool.id.clone(),
                                at: stored.at.clone(),
                            });
                        }
                    }
                }
                Some(Cell::Compaction(cell)) => {
                    cell.expanded = !cell.expanded;
                }
                _ => {}
            }
        }
        Action::ToggleReasoning => {
            let last = app.transcript.cells.iter_mut().rev().find_map(|c| match c {
                Cell::Reasoning(r) => Some(r),
                _ => None,
            });
            if let Some(reasoning) = last {
                reasoning.expanded = !reasoning.expanded;
            }
        }
        Action::ToggleTodos => app.show_todos = !app.show_todos,
        Action::SlashNext
        | Action::SlashPrev
        | Action::SlashComplete
        | Action::SlashAccept
        | Action::SlashClose => super::slash_menu::run(app, action, now, effects),
        Action::CycleMode => super::modes::cycle(app, effects),
        Action::EditInEditor => editor::open(app, effects),
        Action::HistorySearch => history_search::open(app),
        Action::ToggleMouse => {
            app.mouse_capture = !app.mouse_capture;
            app.hint = Some(if app.mouse_capture {
                "mouse scrolling on (hold Shift to select text)".to_string()
            } else {
                "mouse scrolling off: the terminal selects text".to_string()
            });
            effects.push(Effect::MouseCapture(app.mouse_capture));
        }
        Action::Approve
        | Action::ApproveSession
        | Action::ApproveProject
        | Action::Deny
        | Action::DenyWithFeedback
        | Action::SubmitFeedback
        | Action::CloseFeedback
        | Action::Resume
        | Action::ClosePicker
        | Action::ClearFilter
        | Action::ChooseModel
        | Action::CloseContext
        | Action::SearchOlder
        | Action::SearchNewer
        | Action::AcceptSearch
        | Action::CancelSearch
        | Action::InsertPath => {}
    }
}

/// Ctrl-C: a second press within a second quits; busy, it interrupts; idle, it clears the
/// input, or quits when there is nothing to clear.
fn cancel(app: &mut App, now: Instant, effects: &mut Vec<Effect>) {
    let again = app
        .last_ctrl_c
        .is_some_and(|t| now.saturating_duration_since(t) <= DOUBLE_CTRL_C);
    if again {
        effects.push(Effect::Quit);
        return;
    }
    if app.busy() {
        effects.push(Effect::Agent(AgentCommand::Interrupt));
    } else if !app.composer.textarea.is_empty() {
        composer::clear(&mut app.composer.textarea);
        app.composer.history_pos = None;
    } else {
        effects.push(Effect::Quit);
        return;
    }
    app.last_ctrl_c = Some(now);
    app.hint = Some(CTRL_C_HINT.to_string());
}

/// The mouse on the main screen: the wheel scrolls the transcript.
/// The whole of a stored result came back: its cell shows it, if it is still expanded
/// (folded meanwhile, or the transcript replaced, it is dropped).
fn result_read(
    app: &mut App,
    id: &str,
    at: &crate::session::EntryAt,
    text: Result<String, String>,
) {
    let cell = app.transcript.cells.iter_mut().rev().find_map(|c| match c {
        Cell::Tool(t) if t.id == id && t.expanded => Some(t),
        _ => None,
    });
    if let Some(cell) = cell {
        if let Some(ResultText::Stored(stored)) = &mut cell.result {
            if stored.at == *at && stored.whole.is_none() {
                stored.whole = Some(text);
            }
        }
    }
}

fn main_mouse(app: &mut App, mouse: MouseEvent) {
    match mouse.kind {
        MouseEventKind::ScrollUp => scroll_up(app, WHEEL_LINES),
        MouseEventKind::ScrollDown => scroll_down(app, WHEEL_LINES),
        _ => {}
    }
}

/// A page of the transcript: the terminal's height less the other panes.
fn page(app: &App) -> usize {
    usize::from(app.size.1.saturating_sub(CHROME_LINES).max(1))
}

/// Away from the bottom: stop following. Once the last frame found the top, the view is
/// anchored there (see [`Scroll::from_top`]).
fn scroll_up(app: &mut App, lines: usize) {
    let shown = app.transcript.shown_from_bottom.get();
    if let Some(n) = anchored_at(&app.transcript) {
        app.transcript.scroll.from_top = Some(n.saturating_sub(lines));
        return;
    }
    let scroll = &mut app.transcript.scroll;
    if shown.is_some_and(|s| s < scroll.from_bottom) {
        // The top showed already (the view was clamped there): anchor at it.
        scroll.from_top = Some(0);
        scroll.from_bottom = TOP;
        scroll.follow = false;
        return;
    }
    scroll.from_bottom = scroll.from_bottom.saturating_add(lines).min(TOP);
    scroll.follow = scroll.from_bottom == 0;
}

/// Anchored at the top: how far below it the view is, as the last frame showed it
/// (clamped to the end when it reached the end).
fn anchored_at(transcript: &crate::app::state::Transcript) -> Option<usize> {
    let n = transcript.scroll.from_top?;
    Some(
        transcript
            .shown_from_top
            .get()
            .map_or(n, |shown| n.min(shown)),
    )
}

/// Toward the bottom; reaching it follows again. Past the top (many pages up) the view
/// starts from where the last frame showed it, so the first step down moves it; the
/// renderer found that place, so no cell is measured here. Anchored at the top, the view
/// moves down from it until a frame reaches the end.
fn scroll_down(app: &mut App, lines: usize) {
    let shown = app.transcript.shown_from_bottom.get();
    if let Some(n) = anchored_at(&app.transcript) {
        match shown {
            // The last frame reached the end: measured from there now.
            Some(rest) => {
                let from_bottom = rest.saturating_sub(lines);
                app.transcript.scroll = Scroll {
                    from_bottom,
                    follow: from_bottom == 0,
                    from_top: None,
                };
            }
            None => app.transcript.scroll.from_top = Some(n.saturating_add(lines)),
        }
        return;
    }
    let current = app.transcript.scroll.from_bottom;
    let start = match shown {
        Some(shown) => current.min(shown),
        None => current,
    };
    let scroll = &mut app.transcript.scroll;
    scroll.from_bottom = start.saturating_sub(lines);
    scroll.follow = scroll.from_bottom == 0;
}
