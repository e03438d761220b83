//! Switching models between turns (`/model`).
//!
//! In: a [`ModelSwitch`] the front end resolved (endpoint, key, id, name, headers, window).
//! The history stays as it is: an assistant message remembers the model that wrote it, and
//! its reasoning goes back only to that model (`conversation::wire`). What changes is the
//! client (timeouts and retries kept; a separate summariser, `context.compact_model`, only
//! while the endpoint stays the same), the window every threshold is a share of, and then,
//! when the conversation no longer fits the new budget, the history, by the same layers a
//! request would use (stubs, drops, a compaction, by the new model). A compaction that
//! fails or is interrupted does not stop the switch: the event says the conversation is
//! over budget. Out: a `model` entry in the session file, [`AgentEvent::ModelSwitched`]
//! and the new count (`Context`), so the gauge rescales.

use super::Agent;
use crate::agent::client::LlmClient;
use crate::agent::events::{AgentEvent, ModelSwitch, OverBudget};
use crate::session::Entry;

impl Agent {
    /// Go on with the model `switch` names. A client that cannot be built (a header the
    /// HTTP library refuses) leaves everything as it was, with an error.
    pub(super) async fn switch_model(&mut self, switch: ModelSwitch) {
        let mut client = self.config.client.clone();
        client.base_url = switch.base_url.clone();
        client.api_key = switch.api_key.clone();
        client.model = switch.model.clone();
        client.name = switch.name.clone();
        client.extra_headers = switch.headers.clone();
        client.images = switch.images;
        client.set_api(&switch.api);
        let built = match LlmClient::new(client.clone()) {
            Ok(built) => built,
            Err(e) => {
                self.emit(AgentEvent::Error {
                    message: format!(
                        "cannot switch to {}: {e}; still using {}",
                        switch.name, self.config.client.name
                    ),
                });
                return;
            }
        };
        // A separate summariser is a model id at the old endpoint: elsewhere the new model
        // writes the handoff notes.
        let moved = client.base_url.trim_end_matches('/')
            != self.config.client.base_url.trim_end_matches('/');
        if moved && !self.config.context.compact_model.is_empty() {
            self.emit(AgentEvent::Notice {
                message: format!(
                    "handoff notes are written by {} from now on (context.compact_model {} is a \
                     model at the old endpoint)",
                    switch.name, self.config.context.compact_model
                ),
            });
            self.config.context.compact_model.clear();
        }
        self.client = built;
        self.config.client = client;
        // Commands must not see the new key either.
        if !switch.api_key.is_empty() && !self.ctx.secrets.contains(&switch.api_key) {
            self.ctx.secrets.push(switch.api_key.clone());
        }
        // The new model's window is known: an answer about the old one no longer matters.
        self.inbox.drop_question();
        self.config.context.window = switch.window.max(1);
        self.config.context.window_known = switch.window_known;
        // The last usage report counted the old model's tokens; from here the count is an
        // estimate at the learnt rate until the new server reports.
        self.meter.history_rewritten();
        // A failure to compact for the old window says nothing about the new one.
        self.compaction_failed = None;
        // Interrupted or not, the switch stands; the count below says where it left things.
        let _ = self.fit_context().await;
        let tokens = self.used();
        let budget = self.config.context.budget();
        let over_budget = (tokens > budget).then_some(OverBudget { tokens, budget });
        self.record_model();
        self.emit(AgentEvent::ModelSwitched {
            name: switch.name,
            model: switch.model,
            base_url: switch.base_url,
            window: self.config.context.window,
            over_budget,
            prices: switch.prices,
        });
        self.emit_context();
    }

    /// Record the model in use (what a resumed session goes on with).
    pub(super) fn record_model(&mut self) {
        let client = &self.config.client;
        let entry = Entry::Model {
            name: client.name.clone(),
            model: client.model.clone(),
            base_url: client.base_url.clone(),
            window: self.config.context.window,
        };
        self.session.recorded_model = Some(client.name.clone());
        self.record(entry);
    }
}
