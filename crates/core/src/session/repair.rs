//! Making a restored history a valid next request.
//!
//! A session cut off mid-tool ends with an assistant message whose calls were never all
//! answered; chat-completions servers reject such a history. Every assistant message with
//! tool calls is followed by one result per call, in call order (what
//! [`crate::conversation::order`] requires): the results the file holds, put back in call
//! order where they are not (rein writes them in order, but nothing in the file's format
//! keeps another writer or a hand edit from swapping them), and a synthetic error result
//! for each call that has none. A tool result that answers no call of the assistant
//! message before it (or answers one a second time; nothing should produce either) is
//! dropped, and a leading system message is dropped since the system prompt is always
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
    // The calls of the latest assistant message, each with the result it got so far.
    let mut calls: Vec<(String, Option<T>)> = Vec::new();
    for message in history.drain(..) {
        match message.message() {
            Message::Tool { tool_call_id, .. } => {
                let id = tool_call_id.clone();
                match calls
                    .iter_mut()
                    .find(|(call, result)| *call == id && result.is_none())
                {
                    Some((_, slot)) => *slot = Some(message),
                    None => report.orphans += 1,
                }
            }
            _ => {
                answer(&mut calls, &mut out, &mut report, started);
                if let Message::Assistant { tool_calls, .. } = message.message() {
                    calls = tool_calls.iter().map(|c| (c.id.clone(), None)).collect();
                }
                out.push(message);
            }
        }
    }
    answer(&mut calls, &mut out, &mut report, started);
    *history = out;
    report
}

/// The results of `calls`, in call order: each its own, or a synthetic one.
fn answer<T: Repairable>(
    calls: &mut Vec<(String, Option<T>)>,
    out: &mut Vec<T>,
    report: &mut Repair,
    started: &std::collections::HashSet<String>,
) {
    for (id, result) in calls.drain(..) {
        match result {
            Some(result) => out.push(result),
            None => {
                let result = ToolResult::session_ended(started.contains(&id));
                out.push(T::from_message(Message::tool_result(id, result)));
                report.synthetic += 1;
            }
        }
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
            Message::tool("a", "1"),
            Message::tool("b", "2"),
            Message::assistant("done".into(), vec![]),
            Message::user("more"),
            calls(&["c"]),
            Message::tool("c", "3"),
        ];
        let before = h.clone();
        assert_eq!(repair(&mut h, &Default::default()), Repair::default());
        assert_eq!(h, before);
    }

    /// A file may hold a reply's results out of call order (written by hand, by another
    /// tool, or by a rein that appended them as they finished); the order rules want call
    /// order, so they are put back in it, a missing one given its synthetic result in its
    /// own place.
    #[test]
    fn results_out_of_call_order_are_put_back_in_call_order() {
        let mut h = vec![
            Message::user("go"),
            calls(&["a", "b", "c"]),
            Message::tool("c", "3"),
            Message::tool("a", "1"),
            Message::assistant("done".into(), vec![]),
        ];
        let started = ["b".to_string()].into_iter().collect();
        let r = repair(&mut h, &started);
        assert_eq!(
            r,
            Repair {
                synthetic: 1,
                orphans: 0
            }
        );
        assert_eq!(
            h,
            vec![
                Message::user("go"),
                calls(&["a", "b", "c"]),
                Message::tool("a", "1"),
                Message::tool_result("b", ToolResult::session_ended(true)),
                Message::tool("c", "3"),
                Message::assistant("done".into(), vec![]),
            ]
        );
        // A second result for one call is an orphan; the first one stays.
        let mut h = vec![
            Message::user("go"),
            calls(&["a", "b"]),
            Message::tool("b", "2"),
            Message::tool("b", "again"),
            Message::tool("a", "1"),
        ];
        assert_eq!(repair(&mut h, &Default::default()).orphans, 1);
        assert_eq!(h[2..], [Message::tool("a", "1"), Message::tool("b", "2")]);
        // Two calls with one id each get their own result, in order.
        let mut h = vec![
            Message::user("go"),
            calls(&["a", "a"]),
            Message::tool("a", "first"),
            Message::tool("a", "second"),
        ];
        assert_eq!(repair(&mut h, &Default::default()), Repair::default());
        assert_eq!(
            h[2..],
            [Message::tool("a", "first"), Message::tool("a", "second")]
        );
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
        // A result for a call of an earlier reply is an orphan too.
        let mut h = vec![
            Message::user("go"),
            calls(&["a"]),
            Message::tool("a", "1"),
            Message::assistant("ok".into(), vec![]),
            Message::tool("a", "late"),
            Message::user("hi"),
        ];
        assert_eq!(repair(&mut h, &Default::default()).orphans, 1);
        assert_eq!(h.len(), 5);
        assert_eq!(h[4], Message::user("hi"));
    }
}
