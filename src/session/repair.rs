//! Making a restored history a valid next request.
//!
//! A session cut off mid-tool ends with an assistant message whose calls were never all
//! answered; chat-completions servers reject such a history. Every assistant message with
//! tool calls gets, right after the results it has, a synthetic error result for each call
//! that has none. A tool result that answers no call before it (nothing should produce one)
//! is dropped, and a leading system message is dropped since the system prompt is always
//! rebuilt fresh.

use crate::conversation::outcome::{SESSION_ENDED_MAY_HAVE_RUN, SESSION_ENDED_NOT_RUN};
use crate::conversation::{Message, ToolResult};

/// The result given to a call that never started (outcome `not_run`).
pub const NOT_RUN: &str = SESSION_ENDED_NOT_RUN;
/// The result given to a call that had started when the session ended (outcome
/// `may_have_run`): it may have done its work, so the model must not take it for one that
/// never ran.
pub const MAY_HAVE_RUN: &str = SESSION_ENDED_MAY_HAVE_RUN;

/// What [`repair`] changed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Repair {
    /// Synthetic results added for unanswered calls.
    pub synthetic: usize,
    /// Tool results dropped because no call before them has their id.
    pub orphans: usize,
}

/// What [`repair`] works on: a message, or a message with what a reader keeps beside it.
pub(crate) trait Repairable {
    fn message(&self) -> &Message;
    /// A result `repair` adds.
    fn from_message(message: Message) -> Self;
}

impl Repairable for Message {
    fn message(&self) -> &Message {
        self
    }

    fn from_message(message: Message) -> Self {
        message
    }
}

/// Fix `history` in place; see the module notes.
/// `started` holds the ids of the calls the session recorded as started.
pub(crate) fn repair<T: Repairable>(
    history: &mut Vec<T>,
    started: &std::collections::HashSet<String>,
) -> Repair {
    if matches!(
        history.first().map(T::message),
        Some(Message::System { .. })
    ) {
        history.remove(0);
    }
    let mut report = Repair::default();
    let mut out = Vec::with_capacity(history.len());
    // Calls of the latest assistant message still waiting for their result.
    let mut pending: Vec<String> = Vec::new();
    for message in history.drain(..) {
        match message.message() {
            Message::Tool { tool_call_id, .. } => {
                if let Some(i) = pending.iter().position(|id| id == tool_call_id) {
                    pending.remove(i);
                    out.push(message);
                } else {
                    report.orphans += 1;
                }
            }
            _ => {
                answer(&mut pending, &mut out, &mut report, started);
                if let Message::Assistant { tool_calls, .. } = message.message() {
                    pending = tool_calls.iter().map(|c| c.id.clone()).collect();
                }
                out.push(message);
            }
        }
    }
    answer(&mut pending, &mut out, &mut report, started);
    *history = out;
    report
}

fn answer<T: Repairable>(
    pending: &mut Vec<String>,
    out: &mut Vec<T>,
    report: &mut Repair,
    started: &std::collections::HashSet<String>,
) {
    for id in pending.drain(..) {
        let result = ToolResult::session_ended(started.contains(&id));
        out.push(T::from_message(Message::tool_result(id, result)));
        report.synthetic += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::ToolCall;

    fn calls(ids: &[&str]) -> Message {
        Message::assistant(
            String::new(),
            ids.iter()
                .map(|id| ToolCall::new(*id, "bash", "{}"))
                .collect(),
        )
    }

    #[test]
    fn a_complete_history_is_left_alone() {
        let mut h = vec![
            Message::user("go"),
            calls(&["a", "b"]),
            Message::tool("b", "2"),
            Message::tool("a", "1"),
            Message::assistant("done".into(), vec![]),
        ];
        let before = h.clone();
        assert_eq!(repair(&mut h, &Default::default()), Repair::default());
        assert_eq!(h, before);
    }

    #[test]
    fn unanswered_calls_get_results_where_they_belong() {
        let mut h = vec![
            Message::system("old prompt"),
            Message::user("go"),
            calls(&["a", "b"]),
            Message::tool("a", "1"),
            Message::user("and then"),
            calls(&["c"]),
        ];
        let r = repair(&mut h, &Default::default());
        assert_eq!(
            r,
            Repair {
                synthetic: 2,
                orphans: 0
            }
        );
        assert_eq!(
            h,
            vec![
                Message::user("go"),
                calls(&["a", "b"]),
                Message::tool("a", "1"),
                Message::tool_result("b", ToolResult::session_ended(false)),
                Message::user("and then"),
                calls(&["c"]),
                Message::tool_result("c", ToolResult::session_ended(false)),
            ]
        );
    }

    #[test]
    fn orphan_results_are_dropped() {
        let mut h = vec![Message::tool("x", "?"), Message::user("hi")];
        assert_eq!(repair(&mut h, &Default::default()).orphans, 1);
        assert_eq!(h, vec![Message::user("hi")]);
    }
}
