//! The agent's side of a server's form: a running MCP call's questions become
//! [`AgentEvent::FormRequested`] events, and the front end's answer, a command naming the
//! form's id, comes back through the inbox ([`OpenForms`]).
//!
//! A form stays open while its call runs. When it ends unanswered (the call finished,
//! timed out or was interrupted, or the server withdrew the form) the waiting future is
//! dropped: its entry leaves [`OpenForms`] and a [`AgentEvent::FormClosed`] tells the
//! front end to close it. A front end that is gone answers nothing; the turn's interrupt
//! or end still ends the call, and the form with it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use super::events::AgentEvent;
use super::inbox::OpenForms;
use crate::elicitation::{Form, FormAnswer};
use crate::tools::external::{AskUser, FormWait};

/// Puts the forms of one agent's MCP calls to its front end.
pub(crate) struct FormDesk {
    pub(crate) events: mpsc::UnboundedSender<AgentEvent>,
    pub(crate) open: OpenForms,
}

/// Removes an open form when its wait ends, and says so when it ended unanswered.
struct Withdraw {
    id: String,
    open: OpenForms,
    events: mpsc::UnboundedSender<AgentEvent>,
    answered: bool,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        if let Ok(mut open) = self.open.lock() {
            open.remove(&self.id);
        }
        if !self.answered {
            let _ = self.events.send(AgentEvent::FormClosed {
                id: self.id.clone(),
            });
        }
    }
}

impl AskUser for FormDesk {
    fn ask(&self, form: Form) -> FormWait {
        static FORMS: AtomicU64 = AtomicU64::new(1);
        let id = format!("form-{}", FORMS.fetch_add(1, Ordering::Relaxed));
        let (reply, answer) = oneshot::channel();
        if let Ok(mut open) = self.open.lock() {
            open.insert(id.clone(), reply);
        }
        let withdraw = Withdraw {
            id: id.clone(),
            open: self.open.clone(),
            events: self.events.clone(),
            answered: false,
        };
        let _ = self.events.send(AgentEvent::FormRequested { id, form });
        Box::pin(async move {
            // The whole guard moves in, so dropping the wait drops it.
            let mut withdraw = withdraw;
            let answer = answer.await;
            withdraw.answered = answer.is_ok();
            answer.unwrap_or(FormAnswer::Cancel)
        })
    }

    fn tell(&self, message: String) {
        let _ = self.events.send(AgentEvent::Notice { message });
    }
}

/// A desk for an agent whose front end answers forms by id through `open`.
pub(crate) fn desk(
    events: &mpsc::UnboundedSender<AgentEvent>,
    open: &OpenForms,
) -> Arc<dyn AskUser> {
    Arc::new(FormDesk {
        events: events.clone(),
        open: open.clone(),
    })
}
