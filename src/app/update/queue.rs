//! The messages sent while a turn runs: queued, visible above the input, and editable.
//!
//! Enter while the agent works sends the message on at once ([`super::send`]); the agent
//! queues it and its next step takes it with the tool results
//! ([`AgentEvent::MessageDelivered`](rein_core::agent::AgentEvent::MessageDelivered): the
//! transcript shows the message where the model got it, [`user_cell`]), or, when no step comes,
//! it starts the next turn. Until then it is listed in `composer.queued` (drawn above the
//! input). Alt-Up ([`take_back`]) takes the last one back into the input for editing and
//! tells the agent to forget it ([`AgentCommand::Withdraw`]); a message held for a model
//! switch only leaves the held list. An interrupt (Esc, Ctrl-C) fires none of them: they go
//! back into the input, before what is typed there ([`interrupt`]), and the agent drops its
//! copies.

use crate::app::state::App;
use crate::app::transcript::Cell;
use crate::app::Effect;
use rein_core::agent::AgentCommand;

/// Interrupt the running turn; what was queued during it comes back into the input.
pub fn interrupt(app: &mut App, effects: &mut Vec<Effect>) {
    effects.push(Effect::Agent(AgentCommand::Interrupt));
    let queued = std::mem::take(&mut app.composer.queued);
    if queued.is_empty() {
        return;
    }
    if let Some(pending) = app.model_switch.as_mut() {
        pending.held.clear();
    }
    let mut texts: Vec<String> = queued.iter().map(|sent| editable(app, sent)).collect();
    let typed = app.composer.whole_text();
    if !typed.trim().is_empty() {
        texts.push(typed);
    }
    app.composer.set_text(&texts.join("\n"));
    let plural = if queued.len() == 1 { "" } else { "s" };
    app.hint = Some(format!(
        "interrupted: the queued message{plural} went back into the input, not sent"
    ));
}

/// Alt-Up: the last queued message back into the input (before what is typed there), and
/// out of the agent's queue. False when nothing is queued.
pub fn take_back(app: &mut App, effects: &mut Vec<Effect>) -> bool {
    let Some(sent) = app.composer.queued.pop() else {
        return false;
    };
    let held = app
        .model_switch
        .as_mut()
        .filter(|p| p.held.last() == Some(&sent));
    match held {
        Some(pending) => {
            pending.held.pop();
        }
        None => {
            let withdraw = match super::modes::user_command(&sent) {
                Some(command) => AgentCommand::Withdraw {
                    text: command.to_string(),
                    command: true,
                },
                None => AgentCommand::Withdraw {
                    text: sent.clone(),
                    command: false,
                },
            };
            effects.push(Effect::Agent(withdraw));
        }
    }
    let mut text = editable(app, &sent);
    let typed = app.composer.whole_text();
    if !typed.trim().is_empty() {
        text.push('\n');
        text.push_str(&typed);
    }
    app.composer.set_text(&text);
    app.hint = None;
    true
}

/// A queued message as the user edits it again: a custom command as typed (its record
/// dropped), anything else whole (pastes expanded; their placeholders are gone).
fn editable(app: &mut App, sent: &str) -> String {
    app.composer.folded.retain(|f| f.sent != sent);
    match app
        .composer
        .sent_commands
        .iter()
        .position(|c| c.expanded == sent)
    {
        Some(i) => app.composer.sent_commands.remove(i).typed,
        None => sent.to_string(),
    }
}

/// The user cell of a message the agent took: a custom command as typed with where its
/// prompt came from, a message with pastes folded as it was typed, else the text.
pub fn user_cell(app: &mut App, text: String) -> Cell {
    if let Some(i) = app
        .composer
        .sent_commands
        .iter()
        .position(|s| s.expanded == text)
    {
        let sent = app.composer.sent_commands.remove(i);
        return Cell::user_command(sent.typed, sent.from);
    }
    match app.composer.folded.iter().position(|f| f.sent == text) {
        Some(i) => Cell::user(app.composer.folded.remove(i).shown),
        None => Cell::user(text),
    }
}
