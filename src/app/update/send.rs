//! Enter in the input box: what the text becomes.
//!
//! [`submit`] takes the trimmed text: a slash command runs ([`super::slash`]); a custom
//! command (`/review`, [`crate::custom_commands`]) sends its prompt, the history keeping
//! what was typed; `!COMMAND` is the user's own command ([`super::modes`]); anything else
//! goes to the agent as a user message and into the history. While a turn runs the message
//! is also kept in `composer.queued` (the agent queues it; the transcript shows it when its
//! turn starts), and while a model switch is being resolved it is held back until the
//! switch is sent ([`super::model_switch`]).

use std::time::Instant;

use crate::agent::AgentCommand;
use crate::app::commands::{self, SlashCommand};
use crate::app::composer::SentCommand;
use crate::app::state::{Activity, App, SETUP_HINT};
use crate::app::Effect;

/// Enter: run a slash command, or send the text to the agent.
pub fn submit(app: &mut App, now: Instant, effects: &mut Vec<Effect>) {
    let raw = app.composer.text();
    let text = raw.trim();
    if text.is_empty() {
        return;
    }
    let custom = app
        .custom_commands
        .expand(text)
        .map(|e| (e.text, e.command.label.clone(), e.cut));
    let command = match (commands::parse(text), custom) {
        // A built-in name never reaches here as custom: the loader skips it.
        (None | Some(SlashCommand::Unknown(_)), Some((expanded, from, cut))) => {
            if app.info.setup.is_some() {
                app.hint = Some(SETUP_HINT.to_string());
                return;
            }
            if cut {
                app.transcript
                    .notice(crate::app::transcript::NoticeKind::Error, cut_notice(&from));
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
        crate::app::input::clear(&mut app.composer.textarea);
        app.hint = None;
        super::slash::run(app, command, effects);
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
    crate::app::input::clear(&mut app.composer.textarea);
    app.transcript.scroll = Default::default();
    if let Some(command) = super::modes::user_command(&text) {
        app.hint = None;
        super::modes::submit_command(app, &text, command, now, effects);
        return;
    }
    send_text(app, text, now, effects);
}

/// Send `text` to the agent as the user's message, whatever the input box holds (the plan
/// review's answers): queued while a turn runs, held while a model switch is resolved.
pub fn send_text(app: &mut App, text: String, now: Instant, effects: &mut Vec<Effect>) {
    app.transcript.scroll = Default::default();
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
    if app.composer.remember(text) && app.input_history.is_some() {
        effects.push(Effect::SaveInput(text.to_string()));
    }
}

/// Said when a custom command's prompt was cut at the cap.
pub fn cut_notice(from: &str) -> String {
    format!(
        "the prompt expanded from {from} was cut at {} MiB (its arguments made it longer)",
        crate::custom_commands::expand::MAX_EXPANDED_BYTES >> 20
    )
}
