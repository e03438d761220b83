//! Enter in the input box: what the text becomes.
//!
//! [`submit`] takes the trimmed text, big pastes put back whole in place of their
//! placeholders (the transcript and the queue show the placeholders:
//! `composer.folded`): a slash command runs ([`super::slash`]); a custom
//! command (`/review`, [`rein_core::custom_commands`]) or `/init` sends its prompt, the history
//! keeping what was typed; `!COMMAND` is the user's own command ([`super::modes`]); anything else
//! goes to the agent as a user message and into the history. While a turn runs the message
//! is also kept in `composer.queued` (the agent queues it; the transcript shows it when the
//! model gets it, [`super::queue`]), and while a model switch is being resolved it is held
//! back until the switch is sent ([`super::model_switch`]).

use std::time::Instant;

use crate::app::commands::{self, SlashCommand};
use crate::app::composer::{Folded, SentCommand};
use crate::app::state::{Activity, App, SETUP_HINT};
use crate::app::Effect;
use rein_core::agent::AgentCommand;

/// Enter: run a slash command, or send the text to the agent.
pub fn submit(app: &mut App, now: Instant, effects: &mut Vec<Effect>) {
    // Sent: the typing is over (an approval that opens now takes the next key).
    app.typed_at = None;
    let raw = app.composer.text();
    let shown = raw.trim();
    if shown.is_empty() {
        return;
    }
    let whole = app.composer.pastes.expand(shown);
    let text = whole.as_str();
    let custom = app.custom_commands.expand(text).map(|e| {
        (
            e.text,
            e.command.label.clone(),
            e.cut,
            e.command.hides_users(),
        )
    });
    let command = match (commands::parse(text), custom) {
        // `/init` sends its prompt as a custom command does.
        (Some(SlashCommand::Init(notes)), _) => {
            if app.info.setup.is_some() {
                app.hint = Some(SETUP_HINT.to_string());
                return;
            }
            let typed = text.to_string();
            let expanded = commands::init_prompt(notes.as_deref());
            app.composer.sent_commands.push(SentCommand {
                typed: typed.clone(),
                expanded: expanded.clone(),
                from: commands::INIT_FROM.to_string(),
            });
            send(app, &typed, expanded, now, effects);
            return;
        }
        // A built-in name never reaches here as custom: the loader skips it.
        (None | Some(SlashCommand::Unknown(_)), Some((expanded, from, cut, hides))) => {
            if app.info.setup.is_some() {
                app.hint = Some(SETUP_HINT.to_string());
                return;
            }
            if let Some(hides) = hides {
                app.transcript
                    .notice(crate::app::transcript::NoticeKind::Error, hides);
            }
            if cut {
                app.transcript
                    .notice(crate::app::transcript::NoticeKind::Error, cut_notice(&from));
            }
            app.composer.sent_commands.push(SentCommand {
                typed: shown.to_string(),
                expanded: expanded.clone(),
                from,
            });
            send(app, text, expanded, now, effects);
            return;
        }
        (command, _) => command,
    };
    if let Some(command) = command {
        let text = text.to_string();
        remember(app, &text, effects);
        crate::app::input::clear(&mut app.composer.textarea);
        app.composer.pastes.clear();
        app.hint = None;
        super::slash::run(app, command, effects);
        return;
    }
    if app.info.setup.is_some() {
        app.hint = Some(SETUP_HINT.to_string());
        return;
    }
    if shown != text {
        app.composer.folded.push(Folded {
            sent: text.to_string(),
            shown: shown.to_string(),
        });
    }
    let text = text.to_string();
    send(app, &text.clone(), text, now, effects);
}

/// The prompt given on the command line: submitted as if typed (a slash or custom command
/// runs, `!` runs a command), or held in `first_prompt` while the question about the
/// project's hooks is open or an MCP server is starting, so its first turn has their
/// tools ([`release_first_prompt`] tries again when either changes).
pub fn first_prompt(app: &mut App, text: String, now: Instant, effects: &mut Vec<Effect>) {
    let starting = app
        .mcp_servers
        .iter()
        .any(|(_, state)| *state == rein_core::mcp::ServerState::Starting);
    if app.hook_trust.as_ref().is_some_and(|t| t.open) || starting {
        if starting {
            app.hint = Some(FIRST_PROMPT_WAITS.to_string());
        }
        app.first_prompt = Some(text);
        return;
    }
    if app.hint.as_deref() == Some(FIRST_PROMPT_WAITS) {
        app.hint = None;
    }
    // What cannot be sent yet (no model configured) stays in the input box, said why.
    crate::app::input::replace_text(
        &mut app.composer.textarea,
        &text,
        crate::app::input::CursorAt::End,
    );
    submit(app, now, effects);
}

/// The hint while the first prompt waits for the MCP servers.
pub const FIRST_PROMPT_WAITS: &str = "your prompt goes once the MCP servers have started";

/// The question about the project's hooks was answered, or an MCP server's state changed:
/// the held first prompt goes, unless it must still wait.
pub fn release_first_prompt(app: &mut App, now: Instant, effects: &mut Vec<Effect>) {
    if let Some(text) = app.first_prompt.take() {
        first_prompt(app, text, now, effects);
    }
}

/// Send `text` to the agent (or hold or queue it), `typed` going into the history.
fn send(app: &mut App, typed: &str, text: String, now: Instant, effects: &mut Vec<Effect>) {
    remember(app, typed, effects);
    crate::app::input::clear(&mut app.composer.textarea);
    app.composer.pastes.clear();
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
    effects.push(Effect::Agent(AgentCommand::UserMessage(text.into())));
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
        rein_core::custom_commands::expand::MAX_EXPANDED_BYTES >> 20
    )
}
