//! The order of a request's messages, the one every server accepts.
//!
//! The rules, strictest of the servers rein has met (Mistral's API refuses a user message
//! right after a tool message; the chat templates of Gemma and Mistral models refuse two
//! user messages in a row): the system message, then user and assistant messages
//! alternating, where an assistant message with tool calls is followed by exactly one tool
//! message per call, in call order, and then by an assistant message.
//!
//! The stored history keeps this order by itself almost always. Where it cannot (a turn
//! that ended after its tool results, by an interrupt or the step limit, then a new user
//! message; a session cut off before the model answered), [`ordered`] puts a short
//! synthetic assistant note in between when the request is built. The note depends only on
//! its two neighbours, so a request still extends the previous one byte for byte.
//! [`check`] states the rules as code, for tests and debugging.

use super::Message;

/// What a synthetic assistant message says between a tool result and a user message.
pub const AFTER_RESULTS: &str = "(The turn ended here, before I replied to these results.)";
/// What a synthetic assistant message says between two user messages.
pub const NO_REPLY: &str = "(No reply: the turn ended before I answered.)";
/// What a synthetic user message says between two assistant messages.
pub const GO_ON: &str = "(Go on.)";

/// One message of a request: a stored one, or a note that keeps the order valid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Item<'a> {
    Stored(&'a Message),
    /// An assistant message with this text.
    AssistantNote(&'static str),
    /// A user message with this text.
    UserNote(&'static str),
}

#[derive(Clone, Copy, PartialEq)]
enum Role {
    Start,
    System,
    User,
    /// An assistant message without tool calls.
    Reply,
    /// An assistant message with calls, or its tool results.
    Calls,
}

/// `messages` with the synthetic notes the order needs, in request order.
pub fn ordered<'a>(
    messages: impl IntoIterator<Item = &'a Message>,
) -> impl Iterator<Item = Item<'a>> {
    let mut last = Role::Start;
    messages.into_iter().flat_map(move |message| {
        let (note, role) = match message {
            Message::System { .. } => (None, Role::System),
            Message::User { .. } => (
                match last {
                    Role::User => Some(Item::AssistantNote(NO_REPLY)),
                    Role::Calls => Some(Item::AssistantNote(AFTER_RESULTS)),
                    _ => None,
                },
                Role::User,
            ),
            Message::Assistant { tool_calls, .. } => (
                match last {
                    Role::Reply | Role::System => Some(Item::UserNote(GO_ON)),
                    _ => None,
                },
                if tool_calls.is_empty() {
                    Role::Reply
                } else {
                    Role::Calls
                },
            ),
            Message::Tool { .. } => (None, Role::Calls),
        };
        last = role;
        note.into_iter()
            .chain(std::iter::once(Item::Stored(message)))
    })
}

/// A request's messages broke the order: where and how.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("message {index}: {problem}")]
pub struct OrderError {
    pub index: usize,
    pub problem: String,
}

/// Check a request's `messages` (the JSON the server receives) against the rules above.
pub fn check(messages: &[serde_json::Value]) -> Result<(), OrderError> {
    let fail = |index: usize, problem: String| Err(OrderError { index, problem });
    let role = |m: &serde_json::Value| m["role"].as_str().unwrap_or("").to_string();
    if messages.first().map(role).as_deref() != Some("system") {
        return fail(0, "the first message is not the system message".into());
    }
    // Tool calls still waiting for their result, in call order.
    let mut pending: Vec<String> = Vec::new();
    let mut previous = "system".to_string();
    for (index, message) in messages.iter().enumerate().skip(1) {
        let this = role(message);
        if this != "tool" && !pending.is_empty() {
            return fail(
                index,
                format!("a {this} message before the results of {pending:?}"),
            );
        }
        match this.as_str() {
            "user" if previous == "user" => {
                return fail(index, "two user messages in a row".into());
            }
            "user" if previous == "tool" => {
                return fail(index, "a user message right after a tool message".into());
            }
            "user" => {}
            "assistant" if previous == "assistant" => {
                return fail(index, "two assistant messages in a row".into());
            }
            "assistant" if previous == "system" => {
                return fail(
                    index,
                    "an assistant message right after the system one".into(),
                );
            }
            "assistant" => {
                pending = message["tool_calls"]
                    .as_array()
                    .map(|calls| {
                        calls
                            .iter()
                            .map(|c| c["id"].as_str().unwrap_or("").to_string())
                            .collect()
                    })
                    .unwrap_or_default();
            }
            "tool" => {
                let id = message["tool_call_id"].as_str().unwrap_or("");
                match pending.first() {
                    Some(first) if first == id => {
                        pending.remove(0);
                    }
                    Some(first) => {
                        return fail(index, format!("result for {id:?}, expected {first:?}"));
                    }
                    None => return fail(index, format!("result for {id:?} answers no call")),
                }
            }
            "system" => return fail(index, "a second system message".into()),
            other => return fail(index, format!("unknown role {other:?}")),
        }
        // An assistant message with calls needs no role of its own: while its results are
        // pending only tool messages pass (above), and the last of them leaves "tool".
        previous = this;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::ToolCall;

    fn roles(messages: &[Message]) -> Vec<String> {
        ordered(messages)
            .map(|item| match item {
                Item::Stored(m) => match m {
                    Message::System { .. } => "system".to_string(),
                    Message::User { .. } => "user".to_string(),
                    Message::Assistant { tool_calls, .. } if tool_calls.is_empty() => {
                        "assistant".to_string()
                    }
                    Message::Assistant { .. } => "calls".to_string(),
                    Message::Tool { .. } => "tool".to_string(),
                },
                Item::AssistantNote(_) => "NOTE".to_string(),
                Item::UserNote(_) => "USER-NOTE".to_string(),
            })
            .collect()
    }

    #[test]
    fn notes_go_where_the_stored_history_breaks_the_order() {
        let calls = Message::assistant(String::new(), vec![ToolCall::new("a", "bash", "{}")]);
        let h = vec![
            Message::system("s"),
            Message::user("one"),
            calls.clone(),
            Message::tool("a", "r"),
            Message::user("two"),
            Message::user("three"),
            Message::assistant("x".into(), vec![]),
            Message::assistant("y".into(), vec![]),
            calls,
            Message::tool("a", "r"),
            Message::assistant("done".into(), vec![]),
        ];
        assert_eq!(
            roles(&h),
            [
                "system",
                "user",
                "calls",
                "tool",
                "NOTE",
                "user",
                "NOTE",
                "user",
                "assistant",
                "USER-NOTE",
                "assistant",
                "USER-NOTE",
                "calls",
                "tool",
                "assistant"
            ]
        );
    }

    #[test]
    fn check_names_each_broken_rule() {
        use serde_json::json;
        let sys = json!({"role":"system","content":"s"});
        let user = json!({"role":"user","content":"u"});
        let calls = json!({"role":"assistant","content":null,"tool_calls":[{"id":"a"},{"id":"b"}]});
        let ta = json!({"role":"tool","tool_call_id":"a","content":"r"});
        let tb = json!({"role":"tool","tool_call_id":"b","content":"r"});
        let reply = json!({"role":"assistant","content":"ok"});
        assert_eq!(
            check(&[
                sys.clone(),
                user.clone(),
                calls.clone(),
                ta.clone(),
                tb.clone()
            ]),
            Ok(())
        );
        assert_eq!(
            check(&[
                sys.clone(),
                user.clone(),
                calls.clone(),
                ta.clone(),
                tb.clone(),
                reply.clone(),
                user.clone()
            ]),
            Ok(())
        );
        let err = |m: &[serde_json::Value]| check(m).unwrap_err().problem;
        assert!(err(&[sys.clone(), user.clone(), user.clone()]).contains("two user"));
        assert!(err(&[
            sys.clone(),
            user.clone(),
            calls.clone(),
            ta.clone(),
            tb.clone(),
            user.clone()
        ])
        .contains("right after a tool"));
        assert!(err(&[sys.clone(), user.clone(), calls.clone(), tb.clone()]).contains("expected"));
        assert!(err(&[
            sys.clone(),
            user.clone(),
            calls.clone(),
            ta.clone(),
            reply.clone()
        ])
        .contains("before the results"));
        assert!(err(std::slice::from_ref(&user)).contains("system"));
    }

    /// A history that opens with an assistant message right after the system one (a
    /// session whose first user message was compacted away) gets a user note between them.
    #[test]
    fn an_assistant_message_right_after_the_system_one_gets_a_user_note() {
        let calls = Message::assistant(String::new(), vec![ToolCall::new("a", "bash", "{}")]);
        let h = [Message::system("s"), Message::assistant("x".into(), vec![])];
        assert_eq!(roles(&h), ["system", "USER-NOTE", "assistant"]);
        let h = [Message::system("s"), calls, Message::tool("a", "r")];
        assert_eq!(roles(&h), ["system", "USER-NOTE", "calls", "tool"]);
        assert_eq!(
            ordered(&h).nth(1),
            Some(Item::UserNote(GO_ON)),
            "the note's text"
        );
        // Nothing is added before the system message or after a user message.
        let h = [
            Message::system("s"),
            Message::user("u"),
            Message::assistant("x".into(), vec![]),
        ];
        assert_eq!(roles(&h), ["system", "user", "assistant"]);
    }

    /// The requests `ordered` builds pass `check` wherever the stored history breaks
    /// the order.
    #[test]
    fn what_ordered_builds_passes_check() {
        let calls = Message::assistant(String::new(), vec![ToolCall::new("a", "bash", "{}")]);
        let h = [
            Message::system("s"),
            Message::assistant("x".into(), vec![]),
            Message::assistant("y".into(), vec![]),
            Message::user("one"),
            Message::user("two"),
            calls,
            Message::tool("a", "r"),
            Message::user("three"),
        ];
        let wire = serde_json::to_value(super::super::wire::WireMessages {
            history: &h,
            options: super::super::wire::WireOptions {
                model: "m",
                cache_control: false,
                images: false,
            },
        })
        .unwrap();
        assert_eq!(check(wire.as_array().unwrap()), Ok(()));
    }

    /// Each of `check`'s ten rules, with a request that keeps it and one that breaks it
    /// (the index and the words of the failure included).
    #[test]
    fn check_keeps_and_breaks_every_rule() {
        use serde_json::{json, Value};
        let sys = json!({"role":"system","content":"s"});
        let user = json!({"role":"user","content":"u"});
        let calls = json!({"role":"assistant","content":null,"tool_calls":[{"id":"a"},{"id":"b"}]});
        let no_calls = json!({"role":"assistant","content":"ok","tool_calls":[]});
        let ta = json!({"role":"tool","tool_call_id":"a","content":"r"});
        let tb = json!({"role":"tool","tool_call_id":"b","content":"r"});
        let reply = json!({"role":"assistant","content":"ok"});
        let ok = |m: &[Value]| assert_eq!(check(m), Ok(()), "{m:?}");
        let fails = |m: &[Value], index: usize, words: &str| {
            let e = check(m).expect_err(words);
            assert_eq!(e.index, index, "{words}: {e}");
            assert!(e.problem.contains(words), "{words}: {e}");
        };
        let s = |v: &[&Value]| v.iter().map(|m| (*m).clone()).collect::<Vec<Value>>();

        // 1. The system message comes first.
        ok(&s(&[&sys]));
        fails(
            &s(&[&user]),
            0,
            "the first message is not the system message",
        );
        fails(&[], 0, "the first message is not the system message");
        // 2. Nothing but a tool message while results are pending.
        ok(&s(&[&sys, &user, &calls, &ta, &tb, &reply]));
        fails(
            &s(&[&sys, &user, &calls, &ta, &reply]),
            4,
            "before the results of [\"b\"]",
        );
        fails(
            &s(&[&sys, &user, &calls, &user]),
            3,
            "a user message before the results",
        );
        // 3. No two user messages in a row.
        ok(&s(&[&sys, &user, &reply, &user]));
        fails(&s(&[&sys, &user, &user]), 2, "two user messages in a row");
        // 4. No user message right after a tool message.
        ok(&s(&[&sys, &user, &calls, &ta, &tb, &reply, &user]));
        fails(
            &s(&[&sys, &user, &calls, &ta, &tb, &user]),
            5,
            "a user message right after a tool message",
        );
        // 5. No two assistant messages in a row (an empty list of calls is no call).
        ok(&s(&[&sys, &user, &reply, &user, &reply]));
        fails(
            &s(&[&sys, &user, &reply, &reply]),
            3,
            "two assistant messages in a row",
        );
        fails(
            &s(&[&sys, &user, &no_calls, &reply]),
            3,
            "two assistant messages in a row",
        );
        // After its results, an assistant message with calls may be followed by another.
        ok(&s(&[
            &sys, &user, &calls, &ta, &tb, &calls, &ta, &tb, &reply,
        ]));
        // 6. No assistant message right after the system one.
        ok(&s(&[&sys, &user, &reply]));
        fails(
            &s(&[&sys, &reply]),
            1,
            "an assistant message right after the system one",
        );
        fails(
            &s(&[&sys, &calls]),
            1,
            "an assistant message right after the system one",
        );
        // 7. Results in call order.
        ok(&s(&[&sys, &user, &calls, &ta, &tb]));
        fails(
            &s(&[&sys, &user, &calls, &tb, &ta]),
            3,
            "result for \"b\", expected \"a\"",
        );
        // 8. A result answers a call.
        ok(&s(&[&sys, &user, &calls, &ta, &tb]));
        fails(
            &s(&[&sys, &user, &reply, &ta]),
            3,
            "result for \"a\" answers no call",
        );
        fails(
            &s(&[&sys, &user, &calls, &ta, &tb, &tb]),
            5,
            "answers no call",
        );
        fails(&s(&[&sys, &ta]), 1, "answers no call");
        // 9. One system message.
        ok(&s(&[&sys, &user, &reply, &user]));
        fails(&s(&[&sys, &user, &sys]), 2, "a second system message");
        fails(&s(&[&sys, &sys]), 1, "a second system message");
        // 10. Known roles only.
        ok(&s(&[&sys, &user, &calls, &ta, &tb, &reply]));
        fails(
            &s(&[&sys, &user, &json!({"role":"developer","content":"d"})]),
            2,
            "unknown role \"developer\"",
        );
        fails(
            &s(&[&sys, &json!({"content":"no role"})]),
            1,
            "unknown role \"\"",
        );
    }
}
