//! Assembling a streamed reply: chat-completion chunks in, text/reasoning deltas and one
//! finished reply out.
//!
//! Pure and synchronous, so the benchmark and the tests drive it without a network. Copes
//! with the ways real servers differ: tool-call deltas keyed by `index` (or missing it),
//! ids repeated on every piece or sent once, several calls in one reply, several calls all
//! sent at index 0 with different ids, `reasoning_content` or `reasoning`, arguments sent as
//! an object instead of a string, usage in a final chunk with empty `choices`, and `null`
//! wherever a field may be absent.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Deserialize;

/// Source of ids for tool calls that arrived without one.
static GENERATED_IDS: AtomicU64 = AtomicU64::new(1);

use super::events::Usage;
use super::messages::ToolCall;

/// A visible piece of a reply, emitted while the stream is still running.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamDelta<'a> {
    Text(&'a str),
    Reasoning(&'a str),
}

/// A reply after its stream ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AssembledReply {
    pub text: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: Option<String>,
    /// The server's usage, when it sent one.
    pub usage: Option<Usage>,
}

/// Why a chunk could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChunkError {
    /// The server reported an error inside the stream.
    #[error("{0}")]
    Server(String),
    /// The chunk was not the JSON a chat-completions stream carries.
    #[error("the server sent a chunk that is not valid JSON ({detail}): {snippet}")]
    Malformed { detail: String, snippet: String },
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Option<Vec<Choice>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    index: Option<u32>,
    #[serde(default)]
    delta: Option<Delta>,
    /// Servers that ignore `stream: true` answer with a whole message instead of deltas.
    #[serde(default)]
    message: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<serde_json::Value>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<serde_json::Value>,
}

#[derive(Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    total_tokens: Option<u64>,
}

impl WireUsage {
    fn to_usage(&self) -> Usage {
        let prompt = self.prompt_tokens.unwrap_or(0);
        let completion = self.completion_tokens.unwrap_or(0);
        Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: self
                .total_tokens
                .unwrap_or(prompt.saturating_add(completion)),
            estimated: false,
        }
    }
}

#[derive(Debug, Default)]
struct PartialCall {
    /// The `index` the server keyed this call by, when it sent one.
    index: Option<usize>,
    id: String,
    name: String,
    arguments: String,
}

/// Accumulates one reply from its chunks.
#[derive(Debug, Default)]
pub struct Assembler {
    reply: AssembledReply,
    calls: Vec<PartialCall>,
    /// True once any text, reasoning or tool call arrived (after that a retry would repeat
    /// what the user already saw).
    started: bool,
}

impl Assembler {
    pub fn new() -> Self {
        Self::default()
    }

    /// True once anything visible or a tool call has arrived.
    pub fn started(&self) -> bool {
        self.started
    }

    /// The text received so far.
    pub fn text(&self) -> &str {
        &self.reply.text
    }

    /// The finish reason, once a chunk carried one.
    pub fn finish_reason(&self) -> Option<&str> {
        self.reply.finish_reason.as_deref()
    }

    /// How much reasoning text arrived (for usage estimates).
    pub fn reasoning_len(&self) -> usize {
        self.reply.reasoning.len()
    }

    /// Feed the `data` of one SSE event (not `[DONE]`). Visible pieces go to `on_delta`.
    pub fn push(
        &mut self,
        data: &str,
        on_delta: &mut dyn FnMut(StreamDelta<'_>),
    ) -> Result<(), ChunkError> {
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| ChunkError::Malformed {
            detail: e.to_string(),
            snippet: snippet(data),
        })?;
        if let Some(err) = chunk.error {
            return Err(ChunkError::Server(error_message(&err)));
        }
        if let Some(usage) = &chunk.usage {
            self.reply.usage = Some(usage.to_usage());
        }
        for choice in chunk.choices.into_iter().flatten() {
            if choice.index.unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.delta.or(choice.message) {
                self.apply(delta, on_delta);
            }
            if let Some(reason) = choice.finish_reason {
                self.reply.finish_reason = Some(reason);
            }
        }
        Ok(())
    }

    fn apply(&mut self, delta: Delta, on_delta: &mut dyn FnMut(StreamDelta<'_>)) {
        let reasoning = delta.reasoning_content.or(match delta.reasoning {
            Some(serde_json::Value::String(s)) => Some(s),
            _ => None,
        });
        if let Some(r) = reasoning.filter(|r| !r.is_empty()) {
            self.started = true;
            on_delta(StreamDelta::Reasoning(&r));
            self.reply.reasoning.push_str(&r);
        }
        if let Some(t) = delta.content.filter(|t| !t.is_empty()) {
            self.started = true;
            on_delta(StreamDelta::Text(&t));
            self.reply.text.push_str(&t);
        }
        for (position, call) in delta.tool_calls.into_iter().flatten().enumerate() {
            self.started = true;
            self.apply_call(position, call);
        }
    }

    fn apply_call(&mut self, position: usize, call: ToolCallDelta) {
        let id = call.id.filter(|id| !id.is_empty());
        // Find the call this piece continues: same index, unless it brings a different id
        // (some servers send every call at index 0, each with its own id).
        let existing = match call.index {
            Some(index) => self
                .calls
                .iter()
                .rposition(|c| c.index == Some(index))
                .filter(|&i| match &id {
                    Some(id) => self.calls[i].id.is_empty() || &self.calls[i].id == id,
                    None => true,
                }),
            None => match &id {
                Some(id) => self.calls.iter().rposition(|c| &c.id == id),
                // No index and no id: a continuation of the latest call, or the
                // position-th call of this delta when several arrive at once.
                None if position == 0 => self.calls.len().checked_sub(1),
                None => None,
            },
        };
        let slot = match existing {
            Some(i) => i,
            None => {
                self.calls.push(PartialCall {
                    index: call.index,
                    ..PartialCall::default()
                });
                self.calls.len() - 1
            }
        };
        let target = &mut self.calls[slot];
        if let Some(id) = id {
            target.id = id;
        }
        if let Some(f) = call.function {
            if let Some(name) = f.name.filter(|n| !n.is_empty()) {
                // A name repeated on every piece is the same name; a different piece
                // continues a name streamed in parts.
                if target.name.is_empty() {
                    target.name = name;
                } else if target.name != name {
                    target.name.push_str(&name);
                }
            }
            match f.arguments {
                Some(serde_json::Value::String(s)) => target.arguments.push_str(&s),
                Some(serde_json::Value::Null) | None => {}
                Some(other) => target.arguments.push_str(&other.to_string()),
            }
        }
    }

    /// The reply as it stands; tool calls without an id get a generated one.
    pub fn finish(mut self) -> AssembledReply {
        self.reply.tool_calls = self
            .calls
            .into_iter()
            .filter(|c| !c.name.is_empty() || !c.arguments.is_empty())
            .map(|c| {
                let id = if c.id.is_empty() {
                    // Unique for the whole process, so an answer meant for one call can
                    // never match a later one.
                    let n = GENERATED_IDS.fetch_add(1, Ordering::Relaxed);
                    format!("call_rein_{n}")
                } else {
                    c.id
                };
                ToolCall::new(id, c.name, c.arguments)
            })
            .collect();
        self.reply
    }
}

/// The human-readable message of an `error` value: `{"message": ...}`, a string, or the JSON.
pub fn error_message(err: &serde_json::Value) -> String {
    match err {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Object(o) => {
            let msg = o
                .get("message")
                .and_then(|m| m.as_str())
                .map(str::to_string)
                .unwrap_or_else(|| err.to_string());
            // OpenRouter puts the upstream's words in metadata.raw.
            match o
                .get("metadata")
                .and_then(|m| m.get("raw"))
                .and_then(|r| r.as_str())
            {
                Some(raw) if !raw.is_empty() && !msg.contains(raw) => {
                    format!("{msg} ({})", snippet(raw))
                }
                _ => msg,
            }
        }
        other => other.to_string(),
    }
}

/// The message in an error response body: `{"error": ...}`, `{"message": ...}`,
/// `{"detail": ...}`, or the text itself.
pub fn body_error_message(body: &str) -> String {
    let trimmed = body.trim();
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(trimmed) {
        for key in ["error", "message", "detail"] {
            if let Some(e) = v.get(key) {
                return error_message(e);
            }
        }
    }
    if trimmed.is_empty() {
        "(empty response body)".to_string()
    } else {
        snippet(trimmed)
    }
}

fn snippet(s: &str) -> String {
    const MAX: usize = 300;
    let one_line: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() > MAX {
        let cut: String = one_line.chars().take(MAX).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn feed(chunks: &[serde_json::Value]) -> (AssembledReply, String) {
        let mut a = Assembler::new();
        let mut seen = String::new();
        for c in chunks {
            a.push(&c.to_string(), &mut |d| match d {
                StreamDelta::Text(t) => seen.push_str(t),
                StreamDelta::Reasoning(r) => {
                    seen.push('[');
                    seen.push_str(r);
                    seen.push(']');
                }
            })
            .unwrap();
        }
        (a.finish(), seen)
    }

    fn delta(d: serde_json::Value) -> serde_json::Value {
        json!({"choices":[{"index":0,"delta":d,"finish_reason":null}]})
    }

    #[test]
    fn text_reasoning_finish_and_usage() {
        let (r, seen) = feed(&[
            delta(json!({"role":"assistant","content":""})),
            delta(json!({"reasoning_content":"think"})),
            delta(json!({"reasoning":"more"})),
            delta(json!({"content":"Hel"})),
            delta(json!({"content":"lo"})),
            json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}),
            json!({"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13},"timings":{}}),
        ]);
        assert_eq!(r.text, "Hello");
        assert_eq!(r.reasoning, "thinkmore");
        assert_eq!(seen, "[think][more]Hello");
        assert_eq!(r.finish_reason.as_deref(), Some("stop"));
        assert_eq!(r.usage.unwrap().total_tokens, 13);
        assert!(!r.usage.unwrap().estimated);
    }

    #[test]
    fn tool_calls_by_index_in_pieces() {
        let (r, _) = feed(&[
            delta(
                json!({"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"bash","arguments":""}}]}),
            ),
            delta(json!({"tool_calls":[{"index":0,"function":{"arguments":"{\"comm"}}]})),
            delta(
                json!({"tool_calls":[{"index":1,"id":"b","function":{"name":"read_file","arguments":"{\"path\":"}}]}),
            ),
            delta(json!({"tool_calls":[{"index":0,"function":{"arguments":"and\":\"ls\"}"}}]})),
            delta(json!({"tool_calls":[{"index":1,"function":{"arguments":"\"x\"}"}}]})),
        ]);
        assert_eq!(r.tool_calls.len(), 2);
        assert_eq!(
            r.tool_calls[0],
            ToolCall::new("a", "bash", "{\"command\":\"ls\"}")
        );
        assert_eq!(
            r.tool_calls[1],
            ToolCall::new("b", "read_file", "{\"path\":\"x\"}")
        );
    }

    #[test]
    fn calls_all_at_index_zero_with_distinct_ids_and_object_arguments() {
        let (r, _) = feed(&[
            delta(
                json!({"tool_calls":[{"index":0,"id":"a","function":{"name":"bash","arguments":{"command":"ls"}}}]}),
            ),
            delta(
                json!({"tool_calls":[{"index":0,"id":"b","function":{"name":"bash","arguments":"{}"}}]}),
            ),
        ]);
        assert_eq!(r.tool_calls.len(), 2);
        assert_eq!(r.tool_calls[0].function.arguments, "{\"command\":\"ls\"}");
        assert_eq!(r.tool_calls[1].id, "b");
    }

    #[test]
    fn ids_repeated_and_missing_index_and_missing_id() {
        let (r, _) = feed(&[
            delta(
                json!({"tool_calls":[{"id":"x1","function":{"name":"bash","arguments":"{\"command\""}}]}),
            ),
            delta(json!({"tool_calls":[{"id":"x1","function":{"arguments":":\"pwd\"}"}}]})),
            delta(
                json!({"tool_calls":[{"index":3,"function":{"name":"read_file","arguments":"{}"}}]}),
            ),
        ]);
        assert_eq!(
            r.tool_calls[0],
            ToolCall::new("x1", "bash", "{\"command\":\"pwd\"}")
        );
        assert_eq!(r.tool_calls[1].function.name, "read_file");
        assert!(r.tool_calls[1].id.starts_with("call_rein_"));
    }

    #[test]
    fn error_object_in_stream_and_malformed_chunk() {
        let mut a = Assembler::new();
        let err = a
            .push(
                r#"{"error":{"message":"model overloaded","code":503}}"#,
                &mut |_| {},
            )
            .unwrap_err();
        assert_eq!(err, ChunkError::Server("model overloaded".into()));
        let err = a.push("{not json", &mut |_| {}).unwrap_err();
        assert!(matches!(err, ChunkError::Malformed { .. }));
    }

    #[test]
    fn whole_message_from_a_non_streaming_server() {
        let (r, _) = feed(&[
            json!({"choices":[{"index":0,"message":{"role":"assistant","content":"hi","tool_calls":[{"id":"q","type":"function","function":{"name":"bash","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}),
        ]);
        assert_eq!(r.text, "hi");
        assert_eq!(r.tool_calls.len(), 1);
        assert_eq!(r.usage.unwrap().total_tokens, 2);
    }

    #[test]
    fn body_error_messages() {
        assert_eq!(
            body_error_message(r#"{"error":{"message":"Incorrect API key provided"}}"#),
            "Incorrect API key provided"
        );
        assert_eq!(body_error_message(r#"{"detail":"Not Found"}"#), "Not Found");
        assert_eq!(body_error_message("Bad Gateway\n"), "Bad Gateway");
        assert_eq!(body_error_message(r#"{"error":"plain"}"#), "plain");
    }
}
