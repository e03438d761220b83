//! Switching the model from the dashboard: `/model NAME`, a pick in the model picker, or
//! a session resumed with `/resume` that last ran on another model.
//!
//! [`begin`] asks the loop to resolve the name ([`Effect::SwitchModel`]): the settings say
//! where the model lives, and the server may be asked for its window, which takes up to
//! two seconds and is done off the update step. Until the answer ([`resolved`]) comes back,
//! messages the user sends are held (shown as queued), so they reach the new model and not
//! the old one. A name that does not resolve is a one-line error and nothing changes;
//! otherwise the agent gets [`AgentCommand::SetModel`] (it waits for a running turn to
//! end, and the notice says so), then the held messages. When the agent has switched
//! ([`switched`]) the status line names the new model; the gauge follows the `Context`
//! event with the new window.

use std::time::Instant;

use crate::app::event::{Effect, ModelResolved};
use crate::app::state::{Activity, App, PendingSwitch};
use crate::app::transcript::NoticeKind;
use rein_core::agent::{AgentCommand, Prices};

/// Switch to the model `name` (trimmed; nothing happens for an empty name).
pub fn begin(app: &mut App, name: &str, effects: &mut Vec<Effect>) {
    let name = name.trim();
    if name.is_empty() {
        return;
    }
    if app.info.setup.is_some() {
        app.hint = Some(crate::app::state::SETUP_HINT.to_string());
        return;
    }
    if app.model_switch.is_none() && name == app.info.model {
        app.hint = Some(format!("already using {name}"));
        return;
    }
    // A switch still being resolved gives way to this one; its held messages wait on.
    let held = app.model_switch.take().map(|p| p.held).unwrap_or_default();
    app.model_switch = Some(PendingSwitch {
        name: name.to_string(),
        held,
    });
    app.hint = Some(format!("switching to {name}…"));
    effects.push(Effect::SwitchModel(name.to_string()));
}

/// Hold a message sent while a switch is being resolved; false when none is.
pub fn hold(app: &mut App, text: &str) -> bool {
    let Some(pending) = app.model_switch.as_mut() else {
        return false;
    };
    pending.held.push(text.to_string());
    app.composer.queued.push(text.to_string());
    true
}

/// The loop resolved a name: send the switch (or say why not), then the held messages.
/// An answer for a switch the user has since replaced is ignored.
pub fn resolved(app: &mut App, answer: ModelResolved, now: Instant, effects: &mut Vec<Effect>) {
    if app.model_switch.as_ref().map(|p| p.name.as_str()) != Some(answer.name.as_str()) {
        return;
    }
    let pending = app.model_switch.take().unwrap_or_default();
    if app
        .hint
        .as_deref()
        .is_some_and(|h| h.starts_with("switching to "))
    {
        app.hint = None;
    }
    match answer.result {
        Ok(model) => {
            for warning in model.warnings {
                notice(app, NoticeKind::Error, warning);
            }
            if app.busy() {
                // Said under the input, not in the transcript: a line there would land in
                // the middle of the reply still streaming (the switch's own line comes
                // when the turn ends).
                app.hint = Some(format!(
                    "switch to {} queued: it happens when this turn ends",
                    model.switch.name
                ));
            }
            effects.push(Effect::Agent(AgentCommand::SetModel(Box::new(
                model.switch,
            ))));
        }
        Err(message) => notice(app, NoticeKind::Error, message),
    }
    for text in pending.held {
        // The turn starts as soon as the agent reads it (see `super::send::submit`).
        if !app.busy() {
            app.activity = Activity::Thinking { since: now };
        }
        effects.push(Effect::Agent(AgentCommand::UserMessage(text.into())));
    }
}

/// The agent switched: the status line and the cost figures follow.
pub fn switched(app: &mut App, name: String, prices: Option<Prices>, text: String) {
    app.info.model = name;
    app.info.prices = prices;
    notice(app, NoticeKind::Info, text);
}

fn notice(app: &mut App, kind: NoticeKind, text: String) {
    app.transcript.notice(kind, text);
}
