//! The reply's visible pieces on their way to the front end, batched per network read.

use tokio::sync::mpsc;

use crate::agent::events::AgentEvent;

/// The reply's visible pieces on their way to the front end: those of one network read
/// go as one event, so a stream of small chunks costs a cross-thread wake-up per read, not
/// per chunk. Text and reasoning keep their order: a switch from one to the other sends
/// what came before it.
pub(super) struct PendingDeltas {
    events: mpsc::UnboundedSender<AgentEvent>,
    text: String,
    reasoning: String,
}

impl PendingDeltas {
    pub(super) fn new(events: mpsc::UnboundedSender<AgentEvent>) -> PendingDeltas {
        PendingDeltas {
            events,
            text: String::new(),
            reasoning: String::new(),
        }
    }

    pub(super) fn text(&mut self, piece: &str) {
        if !self.reasoning.is_empty() {
            self.flush();
        }
        self.text.push_str(piece);
    }

    pub(super) fn reasoning(&mut self, piece: &str) {
        if !self.text.is_empty() {
            self.flush();
        }
        self.reasoning.push_str(piece);
    }

    pub(super) fn flush(&mut self) {
        if !self.text.is_empty() {
            let text = std::mem::take(&mut self.text);
            let _ = self.events.send(AgentEvent::TextDelta { text });
        }
        if !self.reasoning.is_empty() {
            let text = std::mem::take(&mut self.reasoning);
            let _ = self.events.send(AgentEvent::ReasoningDelta { text });
        }
    }
}
