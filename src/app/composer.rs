//! The input box: sending, new lines, pasting, and recalling earlier inputs.
//!
//! Enter hands the trimmed text to [`submit`]: a slash command runs here (see
//! [`super::commands`]); a custom command (`/review`, [`crate::custom_commands`]) sends
//! its prompt, the history keeping what was typed; anything else goes to the agent as a
//! user message and into the history. While a turn runs the message is also kept in `composer.queued` (the agent
//! queues it; the transcript shows it when its turn starts), and while a model switch is
//! being resolved it is held back until the switch is sent ([`super::model_switch`]). Up on
//! the first line and Down on the last walk the history; the text typed before is kept as
//! the draft.

use std::time::Instant;

use tui_textarea::{CursorMove, TextArea};

use super::commands;
use super::event::Effect;
use super::state::{Activity, App, SentCommand};
use crate::agent::AgentCommand;

/// Shown instead of sending while no model is configured.
pub const SETUP_HINT: &str =
    "no model is configured yet: set one as described above, then start rein again (/quit leaves)";

/// The input's text, lines joined with `\n`.
pub fn text(textarea: &TextArea<'_>) -> String {
    textarea.lines().join("\n")
}

/// Empty the input, keeping its styles and placeholder (the undo history keeps the text).
pub fn clear(textarea: &mut TextArea<'_>) {
    textarea.select_all();
    textarea.delete_char();
}

/// Where the cursor goes after the text is replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CursorAt {
    /// End of the first line: Up again recalls the entry before.
    FirstLine,
    /// End of the text: Down again recalls the entry after.
    End,
}

fn replace_text(textarea: &mut TextArea<'_>, text: &str, at: CursorAt) {
    clear(textarea);
    textarea.insert_str(text);
    match at {
        CursorAt::FirstLine => {
            textarea.move_cursor(CursorMove::Top);
            textarea.move_cursor(CursorMove::End);
        }
        CursorAt::End => {
            textarea.move_cursor(CursorMove::Bottom);
            textarea.move_cursor(CursorMove::End);
        }
    }
}

/// Enter: run a slash command, or send the text to the agent.
pub fn submit(app: &mut App, now: Instant, effects: &mut Vec<Effect>) {
    let raw = text(&app.composer.textarea);
    let text = raw.trim();
    if text.is_empty() {
        return;
    }
    let custom = app
        .custom_commands
        .expand(text)
        .map(|e| (e.text, e.command.label.clone()));
    let command = match (commands::parse(text), custom) {
        // A built-in name never reaches here as custom: the loader skips it.
        (None | Some(commands::SlashCommand::Unknown(_)), Some((expanded, from))) => {
            if app.info.setup.is_some() {
                app.hint = Some(SETUP_HINT.to_string());
                return;
            }
            let typed = text.to_string();
            app.composer.sent_commands.push(SentCommand {
                typed: typed.clone(),
                expanded: expanded.clone(),
                from,
            });
            send(app, &typed, expanded, now, effects);
            return;
        }
        (command, _) => command,
    };
    if let Some(command) = command {
        let text = text.to_string();
        remember(app, &text, effects);
        clear(&mut app.composer.textarea);
        app.hint = None;
        commands::run(app, command, effects);
        return;
    }
    if app.info.setup.is_some() {
        app.hint = Some(SETUP_HINT.to_string());
        return;
    }
    let text = text.to_string();
    send(app, &text.clone(), text, now, effects);
}

/// Send `text` to the agent (or hold or queue it), `typed` going into the history.
fn send(app: &mut App, typed: &str, text: String, now: Instant, effects: &mut Vec<Effect>) {
    remember(app, typed, effects);
    clear(&mut app.composer.textarea);
    app.transcript.scroll = Default::default();
    if let Some(command) = super::modes::user_command(&text) {
        app.hint = None;
        super::modes::submit_command(app, &text, command, now, effects);
        return;
    }
    // While a model switch is resolved, the message waits for it (and goes to the new
    // model).
    if super::model_switch::hold(app, &text) {
        return;
    }
    app.hint = None;
    if app.busy() {
        app.composer.queued.push(text.clone());
    } else {
        // The turn starts as soon as the agent reads the message: say so now, so a second
        // message sent before its TurnStarted arrives shows as queued too.
        app.activity = Activity::Thinking { since: now };
    }
    effects.push(Effect::Agent(AgentCommand::UserMessage(text)));
}

/// Add a sent input to the history (not twice in a row), and to the history file when
/// inputs are saved, and stop recalling.
fn remember(app: &mut App, text: &str, effects: &mut Vec<Effect>) {
    let composer = &mut app.composer;
    if composer.history.last().map(String::as_str) != Some(text) {
        composer.history.push(text.to_string());
        if app.input_history.is_some() {
            effects.push(Effect::SaveInput(text.to_string()));
        }
    }
    composer.history_pos = None;
    composer.draft.clear();
}

/// The inputs of earlier sessions, read from the history file after the dashboard
/// started: they go before what this run has in its history already (typed since, or a
/// resumed session's), which is not repeated; a recall in progress stays on its entry.
pub fn earlier_inputs(app: &mut App, earlier: Vec<String>) {
    let composer = &mut app.composer;
    let old = std::mem::take(&mut composer.history);
    let shown = composer.history_pos.and_then(|i| old.get(i).cloned());
    let known: std::collections::HashSet<&str> = earlier.iter().map(String::as_str).collect();
    let newer: Vec<String> = old
        .into_iter()
        .filter(|e| !known.contains(e.as_str()))
        .collect();
    composer.history = earlier;
    composer.history.extend(newer);
    if let Some(entry) = shown {
        composer.history_pos = composer.history.iter().rposition(|e| *e == entry);
    }
}

/// Up on the first line: show the entry before the one shown (the newest at first).
pub fn history_prev(app: &mut App) {
    let composer = &mut app.composer;
    let pos = match composer.history_pos {
        _ if composer.history.is_empty() => return,
        None => {
            composer.draft = text(&composer.textarea);
            composer.history.len() - 1
        }
        Some(0) => return,
        Some(i) => i - 1,
    };
    composer.history_pos = Some(pos);
    replace_text(
        &mut composer.textarea,
        &composer.history[pos],
        CursorAt::FirstLine,
    );
}

/// Down on the last line: show the entry after the one shown, and past the newest the
/// draft typed before recalling started.
pub fn history_next(app: &mut App) {
    let composer = &mut app.composer;
    let Some(pos) = composer.history_pos else {
        return;
    };
    if pos + 1 < composer.history.len() {
        composer.history_pos = Some(pos + 1);
        replace_text(
            &mut composer.textarea,
            &composer.history[pos + 1],
            CursorAt::End,
        );
    } else {
        composer.history_pos = None;
        let draft = std::mem::take(&mut composer.draft);
        replace_text(&mut composer.textarea, &draft, CursorAt::End);
    }
}

/// Show history entry `index` in the input, as if recalled with Up (the Ctrl-R search
/// accepts its match so): the text there becomes the draft, and Up/Down go on from it.
pub fn recall(app: &mut App, index: usize) {
    let composer = &mut app.composer;
    let Some(entry) = composer.history.get(index) else {
        return;
    };
    if composer.history_pos.is_none() {
        composer.draft = text(&composer.textarea);
    }
    composer.history_pos = Some(index);
    replace_text(&mut composer.textarea, entry, CursorAt::End);
    app.hint = None;
}

/// Replace the input's text (the external editor's result), the cursor at its end; the
/// history walk ends.
pub fn set_text(app: &mut App, new: &str) {
    let composer = &mut app.composer;
    composer.history_pos = None;
    replace_text(&mut composer.textarea, new, CursorAt::End);
    app.hint = None;
}

/// Terminals send pasted line breaks as `\r`, `\r\n` or `\n`; the input wants `\n`.
pub fn normalize_newlines(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// Bracketed paste: inserted at the cursor, line breaks kept; never sends.
pub fn paste(app: &mut App, text: &str) {
    app.composer.textarea.insert_str(normalize_newlines(text));
    app.hint = None;
}
