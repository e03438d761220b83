//! The conversation as sent to the model: system, user, assistant and tool messages.
//!
//! Assistant messages keep only role, content and tool calls: reasoning and any other
//! provider extras are shown to the user but never stored or sent back.

use serde::{Deserialize, Serialize};

/// One message of the chat history, serialised in the chat-completions wire format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        /// `None` when the reply was only tool calls (sent as `null`).
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Message::System {
            content: content.into(),
        }
    }

    pub fn user(content: impl Into<String>) -> Self {
        Message::User {
            content: content.into(),
        }
    }

    pub fn tool(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Message::Tool {
            tool_call_id: tool_call_id.into(),
            content: content.into(),
        }
    }

    /// An assistant message. A tool-only reply sends `content: null`; a reply with neither
    /// text nor calls keeps `""`, since some servers reject a null content without calls.
    pub fn assistant(text: String, tool_calls: Vec<ToolCall>) -> Self {
        Message::Assistant {
            content: if text.is_empty() && !tool_calls.is_empty() {
                None
            } else {
                Some(text)
            },
            tool_calls,
        }
    }

    /// The text a token estimate is based on (content plus tool-call names and arguments).
    pub fn approx_chars(&self) -> usize {
        match self {
            Message::System { content } | Message::User { content } => content.len(),
            Message::Tool { content, .. } => content.len() + 16,
            Message::Assistant {
                content,
                tool_calls,
            } => {
                content.as_deref().map_or(0, str::len)
                    + tool_calls
                        .iter()
                        .map(|c| c.function.name.len() + c.function.arguments.len() + 24)
                        .sum::<usize>()
            }
        }
    }
}

/// A tool call as the model made it: arguments stay the raw text the model produced, so a
/// malformed call is sent back exactly as it was and the error result makes sense.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    pub function: FunctionCall,
}

fn function_type() -> String {
    "function".to_string()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    pub name: String,
    pub arguments: String,
}

impl ToolCall {
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            kind: function_type(),
            function: FunctionCall {
                name: name.into(),
                arguments: arguments.into(),
            },
        }
    }
}

/// Rough token estimate used when a server reports no usage: about four characters a token.
pub fn estimate_tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wire_format_matches_chat_completions() {
        let m = Message::assistant(
            String::new(),
            vec![ToolCall::new("c1", "bash", "{\"command\":\"ls\"}")],
        );
        assert_eq!(
            serde_json::to_value(&m).unwrap(),
            json!({"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]})
        );
        let t = Message::tool("c1", "ok");
        assert_eq!(
            serde_json::to_value(&t).unwrap(),
            json!({"role":"tool","tool_call_id":"c1","content":"ok"})
        );
        let a = Message::assistant("hi".into(), vec![]);
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            json!({"role":"assistant","content":"hi"})
        );
    }
}
