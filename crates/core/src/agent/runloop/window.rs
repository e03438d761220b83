//! The window while the server is still being asked for it ([`crate::agent::window`]).
//!
//! In: the answer the inbox kept (`Inbox::learnt`) once the question is over. Before each
//! decision that depends on the window (fitting the user's message, fitting a request,
//! `/compact`, starting subagents) the agent takes it in: the window changes, a failed
//! compaction is forgotten, and a changed window is recorded in the session file. A request
//! that is clearly small goes without waiting; any other waits for the answer. Out: the
//! window in `config.context.window`, and a `Context` event with it.

use super::Agent;
use crate::agent::window::clearly_small;
use crate::context::budget;

impl Agent {
    /// Take in the window the server's answer settled on, if one came since.
    pub(super) fn take_window(&mut self) {
        let Some(window) = self.inbox.learnt.take() else {
            return;
        };
        // Thresholds were measured against a window that was only a guess.
        self.compaction_failed = None;
        self.config.context.window_known = true;
        if window != self.config.context.window {
            self.config.context.window = window.max(1);
            self.record_model();
        }
    }

    /// Before fitting the next request (with `incoming` characters more, a user message
    /// not yet in the history): while the window is not known, a request that is not
    /// clearly small waits for it. False when the user interrupted the wait.
    pub(super) async fn settle_window(&mut self, incoming: usize) -> bool {
        self.take_window();
        if self.inbox.window.is_none() {
            return true;
        }
        let messages = self.history.messages();
        let fixed = messages.first().map_or(0, budget::message_chars) + self.tools_chars;
        let rest = budget::messages_chars(messages.iter().skip(1)) + incoming;
        if clearly_small(fixed, rest) {
            return true;
        }
        self.wait_for_window().await
    }

    /// Wait for the window's answer (when the server is still being asked) and take it in;
    /// false when the user interrupted.
    pub(super) async fn wait_for_window(&mut self) -> bool {
        let answered = self.inbox.wait_window().await;
        self.take_window();
        answered
    }
}
