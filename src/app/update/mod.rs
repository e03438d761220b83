//! The update step: state + event in, new state + effects out. Pure: no I/O, no waiting,
//! no clock: [`update_at`] takes the instant it runs at (tests pass fixed ones), and
//! [`update`] reads the clock once for it.
//!
//! The router: the one place, with the agent-event handling beside it, that changes the
//! [`App`] as a whole. Keys, pastes and the mouse go to the layer on top ([`Layer::top`];
//! the order is in [`crate::app::layer`]), by one routing table (`route`). Each layer is a
//! leaf module that handles its keys on its own state and returns an outcome (the
//! approval modal's [`ApprovalOutcome`], a picker's [`PickerOutcome`], the search's
//! [`SearchOutcome`], …); what an outcome means for the rest of the dashboard (close the
//! layer, answer the agent, ask the loop for something) is decided here. On the main
//! screen the keymap's `global` and `composer` bindings come first (with the `/` list open,
//! its `slash` bindings before them) and every other key edits the input.
//!
//! The submodules are the router's too: agent events ([`agent_events`]), an approval's
//! answer ([`answer`]), Enter in the input box ([`send`]), the messages queued during a turn
//! ([`queue`]), slash commands ([`slash`]), model
//! switches ([`model_switch`]), approval modes and `!COMMAND`s ([`modes`]), the plan
//! review's answer ([`plan`]), MCP servers
//! ([`mcp`]), the external editor ([`editor`]) and a resumed session ([`resume`]).

pub mod agent_events;
pub mod answer;
pub mod editor;
pub mod form;
pub mod hooks;
pub mod mcp;
pub mod model_switch;
pub mod modes;
pub mod plan;
pub mod queue;
pub mod resume;
pub mod rewind;
pub mod send;
pub mod slash;

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, MouseEvent, MouseEventKind};

use crate::app::approval::{self, ApprovalOutcome};
use crate::app::commands::SlashCommand;
use crate::app::context_view;
use crate::app::event::{AppEvent, Effect};
use crate::app::form::FormOutcome;
use crate::app::help::HelpOutcome;
use crate::app::history_search::{HistorySearch, SearchOutcome};
use crate::app::hook_trust::HookTrustOutcome;
use crate::app::keymap::{keymap, Action, Mode};
use crate::app::layer::Layer;
use crate::app::model_picker::{ModelPicker, ModelPickerOutcome, ServerState};
use crate::app::pager::{Pager, PagerOutcome};
use crate::app::picker::{self, Picker, PickerOutcome};
use crate::app::plan_review::PlanOutcome;
use crate::app::slash_menu::SlashOutcome;
use crate::app::state::App;
use crate::app::transcript::{Cell, NoticeKind, ResultText, ToolCell};
use rein_core::file_index::DEFAULT_CAP;

/// A second Ctrl-C within this long quits (the hint saying so goes then, or at the next
/// other key).
pub const DOUBLE_CTRL_C: Duration = Duration::from_secs(2);
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
pub use crate::app::transcript::TOP;

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
            if expired {
                disarm_quit(app);
            }
        }
        AppEvent::Sessions(list) => match Picker::open(list) {
            Some(picker) => {
                app.picker = Some(picker);
                app.hint = None;
            }
            None => app.hint = Some(picker::NOTHING_TO_RESUME.to_string()),
        },
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
        AppEvent::Resumed(Err(message)) => app.transcript.notice(NoticeKind::Error, message),
        AppEvent::FilesIndexed(index) => app.finder.indexed(*index, now),
        AppEvent::Models(list) => {
            let mut picker = ModelPicker::open(list);
            // The server's models: from this session's answer when it is for this server,
            // else asked now.
            if let ServerState::Asking(url) = &picker.server {
                match app.server_models.as_ref().filter(|s| s.url == *url) {
                    Some(kept) => picker.server_answered(kept),
                    None => effects.push(Effect::ListServerModels),
                }
            }
            app.model_picker = Some(picker);
            app.hint = None;
        }
        AppEvent::ServerModels(answer) => {
            if let Some(picker) = app.model_picker.as_mut() {
                picker.server_answered(&answer);
            }
            if answer.result.is_ok() {
                app.server_models = Some(answer);
            }
        }
        AppEvent::ModelResolved(answer) => model_switch::resolved(app, *answer, now, &mut effects),
        AppEvent::CommandsLoaded(commands) => {
            for notice in &commands.notices {
                app.transcript
                    .cells
                    .push(Cell::notice(NoticeKind::Info, notice.clone()));
            }
            // The MCP servers' prompts stay: they come with the servers, not the files.
            let prompts = app.custom_commands.mcp();
            app.custom_commands = commands;
            app.custom_commands.set_mcp(prompts);
        }
        AppEvent::Focus(focused) => app.focused = Some(focused),
        AppEvent::Mcp(event) => {
            mcp::event(app, event);
            send::release_first_prompt(app, now, &mut effects);
        }
        AppEvent::McpLogin { name, step } => mcp::login_step(app, name, step, &mut effects),
        AppEvent::HistoryLoaded(earlier) => app.composer.earlier_inputs(earlier),
        AppEvent::Edited(result) => editor::edited(app, result),
        AppEvent::ResultRead { id, at, text } => result_read(app, &id, &at, text),
        AppEvent::RewindTurns(turns) => rewind::turns(app, turns),
        AppEvent::RewindPreview {
            turn,
            what,
            preview,
        } => rewind::preview(app, turn, what, preview),
        AppEvent::RewindForked { turn, message } => rewind::forked(app, turn, message),
        AppEvent::Diff(diff) => rewind::diff(app, diff),
        AppEvent::Prompt(text) => send::first_prompt(app, text, now, &mut effects),
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
    // Any other key than the one that quits takes back "press Ctrl-C again to quit".
    let cancel = keymap()
        .lookup(&[Mode::Global], &key)
        .any(|b| b.action == Action::Cancel);
    if !cancel {
        disarm_quit(app);
    }
    route(app, Input::Key { key, in_paste }, now, effects);
}

/// A Ctrl-C no longer counts towards quitting: its hint goes.
fn disarm_quit(app: &mut App) {
    app.last_ctrl_c = None;
    if app.hint.as_deref() == Some(CTRL_C_HINT) {
        app.hint = None;
    }
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

/// Hand `input` to the layer on top ([`Layer::top`]): each layer's handlers, in one place,
/// and what their outcomes mean for the rest of the dashboard.
fn route(app: &mut App, input: Input, now: Instant, effects: &mut Vec<Effect>) {
    let top = Layer::top(app);
    match (top, input) {
        // The tail of a paste must not answer an approval.
        (Layer::Approval | Layer::Feedback, Input::Key { in_paste: true, .. }) => {}
        (Layer::Approval, Input::Key { key, .. }) if typing_past_question(app, &key, now) => {}
        (Layer::Approval | Layer::Feedback, Input::Key { key, .. }) => {
            let outcome = app
                .approvals
                .handle_key(&key, app.size, &app.composer.textarea);
            match outcome {
                ApprovalOutcome::Stay => {}
                ApprovalOutcome::FeedbackOpened => app.hint = None,
                ApprovalOutcome::Hint(hint) => app.hint = Some(hint),
                ApprovalOutcome::Answer(decision) => answer::answer(app, decision, now, effects),
            }
        }
        (Layer::Approval | Layer::Feedback, Input::Paste(text)) => app.approvals.paste(text),
        (Layer::Approval | Layer::Feedback, Input::Mouse(mouse)) => {
            app.approvals.mouse(&mouse, app.size)
        }
        // The tail of a paste must not answer a server's form.
        (Layer::Form, Input::Key { in_paste: true, .. }) => {}
        (Layer::Form, Input::Key { key, .. }) => {
            let outcome = app
                .forms
                .handle_key(&key, app.size.1, &app.composer.textarea);
            if let FormOutcome::Answer(answer) = outcome {
                form::answer(app, answer, effects);
            }
        }
        (Layer::Form, Input::Paste(text)) => app.forms.paste(text),
        (Layer::Form, Input::Mouse(mouse)) => app.forms.mouse(&mouse),
        // The tail of a paste must not answer the question either.
        (Layer::Hooks, Input::Key { in_paste: true, .. } | Input::Paste(_)) => {}
        (Layer::Hooks, Input::Key { key, .. }) => {
            let rows = app.size.1;
            let outcome = app
                .hook_trust
                .as_mut()
                .map(|t| t.handle_key(&key, rows, &app.composer.textarea));
            if let Some(outcome) = outcome {
                hooks::answer(app, outcome, effects);
                // A first prompt held for the answer goes once the question closes.
                if outcome != HookTrustOutcome::Stay {
                    send::release_first_prompt(app, now, effects);
                }
            }
        }
        (Layer::Hooks, Input::Mouse(mouse)) => {
            app.hook_trust.iter_mut().for_each(|t| t.mouse(&mouse))
        }
        // The tail of a paste must not approve a plan.
        (Layer::Plan, Input::Key { in_paste: true, .. }) => {}
        (Layer::Plan, Input::Key { key, .. }) if typing_past_question(app, &key, now) => {}
        (Layer::Plan, Input::Key { key, .. }) => {
            let rows = app.size.1;
            let outcome = app
                .plan_review
                .as_mut()
                .map(|r| r.handle_key(&key, rows, &app.composer.textarea));
            match outcome {
                None | Some(PlanOutcome::Stay) => {}
                Some(PlanOutcome::Hint(hint)) => app.hint = Some(hint),
                Some(outcome) => plan::answer(app, outcome, now, effects),
            }
        }
        (Layer::Plan, Input::Paste(text)) => app.plan_review.iter_mut().for_each(|r| r.paste(text)),
        (Layer::Plan, Input::Mouse(mouse)) => {
            app.plan_review.iter_mut().for_each(|r| r.mouse(&mouse))
        }
        (Layer::Pager, Input::Key { key, .. }) => {
            let rows = app.size.1;
            let outcome = app
                .pager
                .as_mut()
                .map(|p| p.handle_key(&key, rows, &app.composer.textarea));
            if outcome == Some(PagerOutcome::Close) {
                app.pager = None;
            }
        }
        // Nothing to type into.
        (Layer::Pager, Input::Paste(_)) => {}
        (Layer::Pager, Input::Mouse(mouse)) => app.pager.iter_mut().for_each(|p| p.mouse(&mouse)),
        (Layer::Sessions, Input::Key { key, .. }) => {
            let page = picker::page(app.size.1);
            let outcome = app.picker.as_mut().map(|p| p.handle_key(&key, page));
            match outcome {
                None | Some(PickerOutcome::Stay) => {}
                Some(PickerOutcome::Close) => app.picker = None,
                // A running turn must end first (the picker stays).
                Some(PickerOutcome::Resume(_)) if app.busy() => {
                    app.hint = Some(picker::busy_hint())
                }
                Some(PickerOutcome::Resume(path)) => {
                    app.picker = None;
                    app.hint = None;
                    effects.push(Effect::ResumeSession(path));
                }
            }
        }
        (Layer::Sessions, Input::Paste(text)) => app.picker.iter_mut().for_each(|p| p.paste(text)),
        (Layer::Sessions, Input::Mouse(mouse)) => {
            app.picker.iter_mut().for_each(|p| p.mouse(&mouse))
        }
        (Layer::Rewind, Input::Key { key, .. }) => {
            if let Some(outcome) = app.rewind.as_mut().map(|r| r.handle_key(&key)) {
                rewind::outcome(app, outcome, effects);
            }
        }
        // The layer has no text field; the wheel does nothing.
        (Layer::Rewind, Input::Paste(_) | Input::Mouse(_)) => {}
        (Layer::Mcp, Input::Key { key, .. }) => {
            let count = app.mcp_servers.len();
            let outcome = app
                .mcp_panel
                .as_mut()
                .map(|p| p.handle_key(&key, count, &app.composer.textarea));
            if let Some(outcome) = outcome {
                mcp::panel(app, outcome, effects);
            }
        }
        // Nothing to type into.
        (Layer::Mcp, Input::Paste(_)) => {}
        (Layer::Mcp, Input::Mouse(mouse)) => {
            let count = app.mcp_servers.len();
            app.mcp_panel
                .iter_mut()
                .for_each(|p| p.mouse(&mouse, count))
        }
        (Layer::Models, Input::Key { key, .. }) => {
            let page = picker::page(app.size.1);
            let outcome = app.model_picker.as_mut().map(|p| p.handle_key(&key, page));
            match outcome {
                None | Some(ModelPickerOutcome::Stay) => {}
                Some(ModelPickerOutcome::Close) => app.model_picker = None,
                Some(ModelPickerOutcome::Choose(name)) => {
                    app.model_picker = None;
                    model_switch::begin(app, &name, effects);
                }
            }
        }
        (Layer::Models, Input::Paste(text)) => {
            app.model_picker.iter_mut().for_each(|p| p.paste(text))
        }
        (Layer::Models, Input::Mouse(mouse)) => {
            app.model_picker.iter_mut().for_each(|p| p.mouse(&mouse))
        }
        (Layer::Context, Input::Key { key, .. }) => {
            if context_view::closes(&key, &app.composer.textarea) {
                app.context_open = false;
            }
        }
        // The layer has no text field and does not scroll.
        (Layer::Context, Input::Paste(_) | Input::Mouse(_)) => {}
        (Layer::Help, Input::Key { key, .. }) => {
            let rows = app.size.1;
            let outcome = app
                .help
                .as_mut()
                .map(|h| h.handle_key(&key, rows, &app.composer.textarea));
            if outcome == Some(HelpOutcome::Close) {
                app.help = None;
            }
        }
        (Layer::Help, Input::Paste(_)) => {}
        (Layer::Help, Input::Mouse(mouse)) => app.help.iter_mut().for_each(|h| h.mouse(&mouse)),
        (Layer::Search, Input::Key { key, .. }) => search_key(app, &key),
        (Layer::Search, Input::Paste(text)) => {
            let history = &app.composer.history;
            app.search.iter_mut().for_each(|s| s.paste(text, history))
        }
        (Layer::Search, Input::Mouse(mouse)) => main_mouse(app, mouse),
        // The finder's own keys, else the main screen's (the tail of a paste edits).
        (Layer::Finder, Input::Key { key, in_paste }) => {
            let taken = match in_paste {
                true => None,
                false => app.finder.handle_key(&key, &mut app.composer.textarea, now),
            };
            match taken {
                Some(done) => {
                    if done.inserted {
                        app.hint = None;
                    }
                    if done.scan {
                        request_scan(app, effects);
                    }
                }
                None => main_key(app, key, in_paste, now, effects),
            }
        }
        // The completion list's keys come first (its mode is first in its modes); the
        // rest are the main screen's.
        (Layer::Main | Layer::Slash, Input::Key { key, in_paste }) => {
            main_key(app, key, in_paste, now, effects)
        }
        (Layer::Main | Layer::Slash | Layer::Finder, Input::Paste(text)) => {
            app.composer.paste(text);
            app.hint = None;
        }
        (Layer::Main | Layer::Slash | Layer::Finder, Input::Mouse(mouse)) => main_mouse(app, mouse),
    }
    // The input may have changed: the `@` finder follows the cursor.
    if matches!(top, Layer::Main | Layer::Slash | Layer::Finder)
        && app.finder.sync(&app.composer.textarea, now)
    {
        request_scan(app, effects);
    }
}

/// Ask the loop to scan the project's files for the `@` finder.
fn request_scan(app: &App, effects: &mut Vec<Effect>) {
    effects.push(Effect::IndexFiles {
        root: app.info.project.clone(),
        cap: DEFAULT_CAP,
    });
}

/// A key while the Ctrl-R search is open.
fn search_key(app: &mut App, key: &KeyEvent) {
    let Some(search) = app.search.as_mut() else {
        return;
    };
    match search.handle_key(key, &app.composer.history, &app.composer.textarea) {
        SearchOutcome::Stay => {}
        SearchOutcome::Close => app.search = None,
        SearchOutcome::Accept(found) => {
            // The match into the input box (the text there before becomes the draft that
            // Down past the newest entry brings back), and the search closes.
            app.search = None;
            if found.is_some_and(|index| app.composer.recall(index)) {
                app.hint = None;
            }
        }
    }
}

/// A key on the main screen: the keymap's bindings for the layer on top (the `/` list's,
/// then `global` and `composer`), else the input box's editing.
/// A question (an approval, the plan review) opened: while the user was typing (a
/// character within [`approval::TYPING_WINDOW`], not yet sent), their typing goes on past
/// it ([`typing_past_question`]).
pub(super) fn question_opened(app: &mut App, now: Instant) {
    app.typing_past = app
        .typed_at
        .filter(|typed| now.saturating_duration_since(*typed) < approval::TYPING_WINDOW);
}

/// The question on top opened while the user was typing, and this key is more of it (a
/// typing key less than [`approval::TYPING_PAUSE`] after the last): it goes into the input
/// box, as it was meant to, and answers nothing. A pause ends that; the next key answers.
fn typing_past_question(app: &mut App, key: &KeyEvent, now: Instant) -> bool {
    let Some(last) = app.typing_past else {
        return false;
    };
    if now.saturating_duration_since(last) >= approval::TYPING_PAUSE {
        app.typing_past = None;
        return false;
    }
    if !approval::is_typing(key) {
        return false;
    }
    app.typing_past = Some(now);
    if matches!(key.code, KeyCode::Char(_) | KeyCode::Backspace) {
        app.composer.textarea.input(*key);
        app.typed_at = Some(now);
    }
    app.hint = Some(approval::TYPING_HINT.to_string());
    true
}

fn main_key(app: &mut App, key: KeyEvent, in_paste: bool, now: Instant, effects: &mut Vec<Effect>) {
    let modes = Layer::top(app).modes();
    let before = app.composer.textarea.cursor();
    match keymap().action(modes, &key, &app.composer.textarea) {
        Some(Action::Send | Action::SlashAccept) if in_paste => {
            app.composer.textarea.insert_newline()
        }
        // `\` then Enter: a new line in place of the backslash, as in a shell.
        Some(Action::Send) if crate::app::input::backslash_newline(&mut app.composer.textarea) => {}
        Some(action) => run_action(app, action, now, effects),
        None => {
            let plain = key.modifiers.is_empty();
            let edited = match key.code {
                // A big paste's placeholder goes whole.
                KeyCode::Backspace if plain => app.composer.delete_paste_before(),
                KeyCode::Delete if plain => app.composer.delete_paste_after(),
                _ => false,
            };
            if edited || app.composer.textarea.input(key) {
                app.hint = None;
                if !in_paste && matches!(key.code, KeyCode::Char(_)) {
                    app.typed_at = Some(now);
                }
            }
        }
    }
    app.composer.keep_out_of_pastes(before);
}

/// A main-screen action. Actions of the modal do nothing here.
fn run_action(app: &mut App, action: Action, now: Instant, effects: &mut Vec<Effect>) {
    match action {
        Action::Cancel => cancel(app, now, effects),
        Action::Interrupt => {
            if app.busy() {
                queue::interrupt(app, effects);
            } else {
                rewind::esc(app, now, effects);
            }
        }
        Action::Quit => effects.push(Effect::Quit),
        Action::Help => slash::run(app, SlashCommand::Help, effects),
        Action::Send => send::submit(app, now, effects),
        Action::Newline => app.composer.textarea.insert_newline(),
        Action::HistoryPrev => app.composer.history_prev(),
        Action::HistoryNext => app.composer.history_next(),
        Action::ScrollUp => app.transcript.scroll_up(1),
        Action::ScrollDown => app.transcript.scroll_down(1),
        Action::PageUp => app.transcript.scroll_up(page(app)),
        Action::PageDown => app.transcript.scroll_down(page(app)),
        Action::ScrollTop => app.transcript.scroll_to_top(),
        Action::ScrollBottom => app.transcript.scroll = Default::default(),
        Action::ToggleToolOutput => toggle_tool_output(app, effects),
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
        Action::OpenPager => {
            app.pager = Some(Pager::default());
            app.hint = None;
        }
        Action::SlashNext
        | Action::SlashPrev
        | Action::SlashComplete
        | Action::SlashAccept
        | Action::SlashClose => {
            let outcome =
                app.slash_menu
                    .handle(action, &mut app.composer.textarea, &app.custom_commands);
            match outcome {
                SlashOutcome::Stay => {}
                SlashOutcome::Completed => app.hint = None,
                SlashOutcome::Submit => send::submit(app, now, effects),
            }
        }
        Action::CycleMode => modes::cycle(app, effects),
        Action::EditInEditor => editor::open(app, effects),
        Action::DeleteToLineStart => {
            if app.composer.textarea.delete_line_by_head() {
                app.hint = None;
            }
        }
        Action::Undo => {
            app.composer.textarea.undo();
        }
        Action::Unqueue => {
            if !queue::take_back(app, effects) {
                app.hint = Some("nothing is queued".to_string());
            }
        }
        Action::HistorySearch => {
            app.search = Some(HistorySearch::default());
            app.hint = None;
        }
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
        | Action::InsertPath
        | Action::RewindChoose
        | Action::AllowHooks
        | Action::KeepHooksHeld
        | Action::CloseHelp
        | Action::ApprovePlan
        | Action::ApprovePlanAuto
        | Action::KeepPlanning
        | Action::PlanFeedback
        | Action::ClosePager
        | Action::FormNext
        | Action::FormPrev
        | Action::FormChoiceNext
        | Action::FormChoicePrev
        | Action::FormAccept
        | Action::FormDecline
        | Action::FormCancel
        | Action::McpLogin
        | Action::McpLogout
        | Action::McpRestart
        | Action::McpAllow => {}
    }
}

/// The last cell with something folded, opened or folded again: a tool's output (or its
/// subagent's calls), or a compaction's handoff note. A long stored result is read back
/// from the session file when opened.
fn toggle_tool_output(app: &mut App, effects: &mut Vec<Effect>) {
    let last = app.transcript.cells.iter_mut().rev().find(|c| match c {
        Cell::Tool(t) => t.result.is_some() || t.subagent.is_some(),
        Cell::Compaction(c) => !c.note.trim().is_empty(),
        _ => false,
    });
    match last {
        Some(Cell::Tool(tool)) => {
            let tool: &mut ToolCell = tool;
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

/// Ctrl-C: a second press within [`DOUBLE_CTRL_C`] quits; busy, it interrupts; idle, it
/// clears the input; idle on an empty input, it only says how to quit. The hint goes when
/// the time is up (a tick, which the loop sends while a Ctrl-C is armed) or at another key.
fn cancel(app: &mut App, now: Instant, effects: &mut Vec<Effect>) {
    let again = app
        .last_ctrl_c
        .is_some_and(|t| now.saturating_duration_since(t) <= DOUBLE_CTRL_C);
    if again {
        effects.push(Effect::Quit);
        return;
    }
    if app.busy() {
        queue::interrupt(app, effects);
    } else if !app.composer.textarea.is_empty() {
        app.composer.clear();
    }
    app.last_ctrl_c = Some(now);
    app.hint = Some(CTRL_C_HINT.to_string());
}

/// The whole of a stored result came back: its cell shows it, if it is still expanded
/// (folded meanwhile, or the transcript replaced, it is dropped).
fn result_read(
    app: &mut App,
    id: &str,
    at: &rein_core::session::EntryAt,
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

/// The mouse on the main screen: the wheel scrolls the transcript.
fn main_mouse(app: &mut App, mouse: MouseEvent) {
    match mouse.kind {
        MouseEventKind::ScrollUp => app.transcript.scroll_up(WHEEL_LINES),
        MouseEventKind::ScrollDown => app.transcript.scroll_down(WHEEL_LINES),
        _ => {}
    }
}

/// A page of the transcript: the terminal's height less the other panes.
fn page(app: &App) -> usize {
    usize::from(app.size.1.saturating_sub(CHROME_LINES).max(1))
}
