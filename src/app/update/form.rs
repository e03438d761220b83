//! A server's form opened, closed or was answered ([`crate::app::form`] decided the
//! answer): the form joins or leaves the queue, the transcript says what happened to it,
//! and the agent gets the answer by the form's id.

use crate::app::state::App;
use crate::app::transcript::{Cell, NoticeKind};
use crate::app::Effect;
use rein_core::agent::{AgentCommand, AgentEvent};
use rein_core::elicitation::FormAnswer;
use rein_core::text;

/// `FormRequested` opens the form (behind any already open); `FormClosed` withdraws it.
pub fn event(app: &mut App, event: AgentEvent, effects: &mut Vec<Effect>) {
    match event {
        AgentEvent::FormRequested { id, form } => {
            if app.forms.queue.is_empty() && app.notifications.approval_notifies(app.focused) {
                effects.push(Effect::Notify {
                    message: format!(
                        "the MCP server {:?} asks you to fill in a form",
                        text::clip(&form.server, 40)
                    ),
                });
            }
            app.forms.open(id, form);
        }
        AgentEvent::FormClosed { id } => {
            let server = app
                .forms
                .queue
                .iter()
                .find(|f| f.id == id)
                .map(|f| f.form.server.clone());
            if app.forms.close(&id) {
                let server = server.unwrap_or_default();
                app.transcript.cells.push(Cell::notice(
                    NoticeKind::Info,
                    format!("the MCP server {server:?}'s form closed unanswered: its call ended"),
                ));
            }
        }
        _ => {}
    }
}

/// Answer the first form: pop it, say so in the transcript, tell the agent.
pub fn answer(app: &mut App, answer: FormAnswer, effects: &mut Vec<Effect>) {
    let Some(open) = app.forms.queue.pop_front() else {
        return;
    };
    let what = match &answer {
        FormAnswer::Accept(content) => format!(
            "sent {} value{}",
            content.len(),
            if content.len() == 1 { "" } else { "s" }
        ),
        FormAnswer::Decline => "declined".to_string(),
        FormAnswer::Cancel => "cancelled".to_string(),
    };
    app.transcript.cells.push(Cell::notice(
        NoticeKind::Info,
        format!("the MCP server {:?}'s form: {what}", open.form.server),
    ));
    effects.push(Effect::Agent(AgentCommand::FormAnswer {
        id: open.id,
        answer,
    }));
}
