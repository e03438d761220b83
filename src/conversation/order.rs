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
        previous = if this == "assistant" && !pending.is_empty() {
            // An assistant message with calls is "answered" by its tool messages.
            "calls".to_string()
        } else {
            this
        };
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
}
