//! Assembling a streamed reply: chat-completion chunks in, text/reasoning deltas and one
//! finished reply out.
//!
//! Pure and synchronous, so the benchmark and the tests drive it without a network. Copes
//! with the ways real servers differ: tool-call deltas keyed by `index` (or missing it),
//! ids repeated on every piece or sent once, several calls in one reply, several calls all
//! sent at index 0 with different ids, `reasoning_content` or `reasoning`, arguments sent as
//! an object instead of a string, usage in a final chunk with empty `choices`, and `null`
//! wherever a field may be absent. `content` may be an array of typed parts (Mistral's
//! Magistral streams `thinking` parts, which are reasoning, and `text` parts); a `refusal`
//! is the reply. What the server needs back is kept as it arrived: which field carried the
//! reasoning, OpenRouter's `reasoning_details` (merged by `index`), and any extra field on
//! a tool call (Gemini's `extra_content` thought signature). Cached prompt tokens are read
//! wherever a server reports them.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Deserialize;

/// Source of ids for tool calls that arrived without one.
static GENERATED_IDS: AtomicU64 = AtomicU64::new(1);

use serde_json::{Map, Value};

use super::events::Usage;
use crate::conversation::{Reasoning, ToolCall};

/// A visible piece of a reply, emitted while the stream is still running.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamDelta<'a> {
    Text(&'a str),
    Reasoning(&'a str),
    /// A piece of a refusal (shown as the reply, recorded as a refusal).
    Refusal(&'a str),
    /// Not a piece: the pieces since the last `Flush` arrived together (one network read),
    /// and the next may be a while. A front end's copy of the stream is passed on here, so
    /// pieces that arrive together cross to it together.
    Flush,
}

/// A reply after its stream ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AssembledReply {
    pub text: String,
    /// The reasoning as shown.
    pub reasoning: String,
    /// The wire field the reasoning text came in, when it came in one.
    pub reasoning_field: Option<String>,
    /// `reasoning_details` merged from the stream's pieces.
    pub reasoning_details: Vec<Value>,
    /// The refusal the model gave instead of an answer.
    pub refusal: String,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: Option<String>,
    /// The server's usage, when it sent one.
    pub usage: Option<Usage>,
}

impl AssembledReply {
    /// The reasoning and provider state to keep with the assistant message.
    pub fn reasoning_state(&self) -> Option<Reasoning> {
        let r = Reasoning {
            text: self.reasoning.clone(),
            field: self.reasoning_field.clone(),
            details: self.reasoning_details.clone(),
        };
        (!r.is_empty()).then_some(r)
    }
}

/// Why a chunk could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChunkError {
    /// The server reported an error inside the stream.
    #[error("{0}")]
    Server(String),
    /// The chunk was not JSON at all.
    #[error("the server sent a chunk that is not valid JSON ({detail}): {snippet}")]
    Malformed { detail: String, snippet: String },
    /// The chunk was JSON, but not shaped like a chat-completions chunk.
    #[error("the server sent a chunk rein cannot read ({detail}): {snippet}")]
    Unexpected { detail: String, snippet: String },
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Option<Vec<Choice>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<serde_json::Value>,
    /// llama.cpp's timings: `cache_n` is the prompt tokens it took from its cache.
    #[serde(default)]
    timings: Option<Timings>,
}

#[derive(Deserialize)]
struct Timings {
    #[serde(default)]
    cache_n: Option<u64>,
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
    /// A string, or an array of typed parts.
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<serde_json::Value>,
    #[serde(default)]
    reasoning_details: Option<Vec<Value>>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default, rename = "type")]
    _kind: Option<Value>,
    #[serde(default)]
    function: Option<FunctionDelta>,
    /// Anything else the server sent with the call (Gemini's `extra_content`).
    #[serde(flatten)]
    extra: Map<String, Value>,
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
    /// OpenAI, OpenRouter, Groq, vLLM, xAI: `cached_tokens` inside.
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    /// DeepSeek.
    #[serde(default)]
    prompt_cache_hit_tokens: Option<u64>,
    /// Anthropic-style gateways.
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

impl WireUsage {
    fn to_usage(&self) -> Usage {
        let prompt = self.prompt_tokens.unwrap_or(0);
        let completion = self.completion_tokens.unwrap_or(0);
        let cached = self
            .prompt_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens)
            .or(self.prompt_cache_hit_tokens)
            .or(self.cache_read_input_tokens);
        Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: self
                .total_tokens
                .unwrap_or(prompt.saturating_add(completion)),
            cached_tokens: cached.map(|c| c.min(prompt)),
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
    extra: Map<String, Value>,
}

/// Accumulates one reply from its chunks.
#[derive(Debug, Default)]
pub struct Assembler {
    reply: AssembledReply,
    calls: Vec<PartialCall>,
    /// llama.cpp's cached prompt tokens, from its `timings`.
    cache_n: Option<u64>,
    /// True once any text, reasoning or tool call arrived (after that a retry would repeat
    /// what the user already saw).
    started: bool,
}

/// A chunk from its JSON. The typed parse is tried first (the fast path); when it fails,
/// the text is parsed as a JSON value and converted from there, which takes a key that
/// appears twice in one object as its last value (as JavaScript's `JSON.parse` does) where
/// the typed parse refuses it. What fails both ways is told as not JSON or not a chunk.
fn parse_chunk(data: &str) -> Result<Chunk, ChunkError> {
    let typed = match serde_json::from_str::<Chunk>(data) {
        Ok(chunk) => return Ok(chunk),
        Err(e) => e,
    };
    let value = serde_json::from_str::<Value>(data).map_err(|e| ChunkError::Malformed {
        detail: e.to_string(),
        snippet: snippet(data),
    })?;
    Chunk::deserialize(&value).map_err(|_| ChunkError::Unexpected {
        detail: typed.to_string(),
        snippet: snippet(data),
    })
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

    /// What the user saw stream so far (the text, then any refusal), taken out: what an
    /// interrupted or failed reply keeps.
    pub fn take_streamed(&mut self) -> String {
        let mut text = std::mem::take(&mut self.reply.text);
        text.push_str(&std::mem::take(&mut self.reply.refusal));
        text
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
        let chunk = parse_chunk(data)?;
        if let Some(err) = chunk.error {
            return Err(ChunkError::Server(error_message(&err)));
        }
        if let Some(usage) = &chunk.usage {
            self.reply.usage = Some(usage.to_usage());
        }
        if let Some(n) = chunk.timings.and_then(|t| t.cache_n) {
            self.cache_n = Some(n);
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
        let (field, reasoning) = match (delta.reasoning_content, delta.reasoning) {
            (Some(r), _) if !r.is_empty() => ("reasoning_content", Some(r)),
            (_, Some(Value::String(r))) if !r.is_empty() => ("reasoning", Some(r)),
            _ => ("", None),
        };
        let had_reasoning_text = reasoning.is_some();
        if let Some(r) = reasoning {
            self.reply
                .reasoning_field
                .get_or_insert_with(|| field.to_string());
            self.push_reasoning(&r, on_delta);
        }
        for detail in delta.reasoning_details.into_iter().flatten() {
            // The same text arrives in `reasoning` too where a server sends both.
            if !had_reasoning_text {
                if let Some(text) = detail_text(&detail).filter(|t| !t.is_empty()) {
                    let text = text.to_string();
                    self.push_reasoning(&text, on_delta);
                }
            }
            self.started = true;
            merge_detail(&mut self.reply.reasoning_details, detail);
        }
        match delta.content {
            Some(Value::String(t)) => self.push_text(&t, on_delta),
            Some(Value::Array(parts)) => {
                for part in parts {
                    self.content_part(part, on_delta);
                }
            }
            _ => {}
        }
        if let Some(r) = delta.refusal.filter(|r| !r.is_empty()) {
            self.started = true;
            on_delta(StreamDelta::Refusal(&r));
            self.reply.refusal.push_str(&r);
        }
        for (position, call) in delta.tool_calls.into_iter().flatten().enumerate() {
            self.started = true;
            self.apply_call(position, call);
        }
    }

    fn push_text(&mut self, t: &str, on_delta: &mut dyn FnMut(StreamDelta<'_>)) {
        if !t.is_empty() {
            self.started = true;
            on_delta(StreamDelta::Text(t));
            self.reply.text.push_str(t);
        }
    }

    fn push_reasoning(&mut self, r: &str, on_delta: &mut dyn FnMut(StreamDelta<'_>)) {
        if !r.is_empty() {
            self.started = true;
            on_delta(StreamDelta::Reasoning(r));
            self.reply.reasoning.push_str(r);
        }
    }

    /// One typed part of an array `content`: `text` is text, `thinking` is reasoning (its
    /// own value a string or a list of text parts); a bare string is text.
    fn content_part(&mut self, part: Value, on_delta: &mut dyn FnMut(StreamDelta<'_>)) {
        match part {
            Value::String(t) => self.push_text(&t, on_delta),
            Value::Object(o) => match o.get("type").and_then(Value::as_str) {
                Some("thinking" | "reasoning") => {
                    let mut text = String::new();
                    collect_text(o.get("thinking").or(o.get("text")), &mut text);
                    self.push_reasoning(&text, on_delta);
                }
                Some("refusal") => {
                    if let Some(r) = o.get("refusal").and_then(Value::as_str) {
                        self.started = true;
                        on_delta(StreamDelta::Refusal(r));
                        self.reply.refusal.push_str(r);
                    }
                }
                _ => {
                    if let Some(t) = o.get("text").and_then(Value::as_str) {
                        self.push_text(t, on_delta);
                    }
                }
            },
            _ => {}
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
        for (key, value) in call.extra {
            if !value.is_null() {
                target.extra.insert(key, value);
            }
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
        // The reply is kept for the rest of the session: without the slack of its growth.
        self.reply.text.shrink_to_fit();
        self.reply.reasoning.shrink_to_fit();
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
                let mut call = ToolCall::new(id, c.name, c.arguments);
                call.extra = c.extra;
                call
            })
            .collect();
        if let (Some(usage), Some(cached)) = (self.reply.usage.as_mut(), self.cache_n) {
            if usage.cached_tokens.is_none() {
                usage.cached_tokens = Some(cached.min(usage.prompt_tokens));
            }
        }
        self.reply
    }
}

/// The text of a `reasoning_details` entry: its `text`, or a summary's `summary`.
fn detail_text(detail: &Value) -> Option<&str> {
    detail
        .get("text")
        .or_else(|| detail.get("summary"))
        .and_then(Value::as_str)
}

/// Add one streamed `reasoning_details` piece to the merged list: a piece with the
/// `index` (and type) of an entry continues it (its text, summary and data appended, its
/// other fields set), anything else is a new entry.
fn merge_detail(details: &mut Vec<Value>, piece: Value) {
    let Value::Object(piece) = piece else {
        return;
    };
    let index = piece.get("index").and_then(Value::as_u64);
    let kind = piece.get("type").cloned();
    let existing = index.and_then(|index| {
        details.iter_mut().rev().find(|d| {
            d.get("index").and_then(Value::as_u64) == Some(index)
                && (kind.is_none() || d.get("type") == kind.as_ref())
        })
    });
    let Some(Value::Object(entry)) = existing else {
        details.push(Value::Object(piece));
        return;
    };
    for (key, value) in piece {
        match (key.as_str(), entry.get_mut(&key), value) {
            ("text" | "summary" | "data", Some(Value::String(have)), Value::String(more)) => {
                have.push_str(&more)
            }
            (_, _, Value::Null) => {}
            // An empty value never overwrites one that arrived (a signature).
            (_, Some(Value::String(_)), Value::String(more)) if more.is_empty() => {}
            (_, _, value) => {
                entry.insert(key, value);
            }
        }
    }
}

/// The text in a `thinking` value: a string, or parts with `text`.
fn collect_text(value: Option<&Value>, out: &mut String) {
    match value {
        Some(Value::String(s)) => out.push_str(s),
        Some(Value::Array(parts)) => {
            for part in parts {
                match part {
                    Value::String(s) => out.push_str(s),
                    other => collect_text(other.get("text"), out),
                }
            }
        }
        _ => {}
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
                    format!("{msg} ({})", body_error_message(raw))
                }
                _ => msg,
            }
        }
        other => other.to_string(),
    }
}

/// The message in an error response body, as one line: `{"error": ...}`, `{"message":
/// ...}`, `{"detail": ...}`, a JSON array wrapping one of those (Gemini), the title of an
/// HTML page (a proxy's error page), or the text itself.
pub fn body_error_message(body: &str) -> String {
    let trimmed = body.trim();
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(trimmed) {
        let v = match &v {
            serde_json::Value::Array(items) if !items.is_empty() => &items[0],
            _ => &v,
        };
        for key in ["error", "message", "detail"] {
            if let Some(e) = v.get(key) {
                return snippet(&error_message(e));
            }
        }
        return snippet(&v.to_string());
    }
    if trimmed.is_empty() {
        return "(empty response body)".to_string();
    }
    if looks_like_html(trimmed) {
        return html_summary(trimmed);
    }
    snippet(trimmed)
}

fn looks_like_html(text: &str) -> bool {
    let head: String = text
        .chars()
        .take(200)
        .collect::<String>()
        .to_ascii_lowercase();
    head.starts_with("<!doctype html") || head.starts_with("<html") || head.contains("<head")
}

/// An HTML page in one line: its `<title>`, else its first `<h1>`, else its text without
/// tags.
fn html_summary(html: &str) -> String {
    let lower = html.to_ascii_lowercase();
    for tag in ["title", "h1"] {
        let open = format!("<{tag}");
        let close = format!("</{tag}>");
        if let Some(start) = lower.find(&open) {
            if let Some(gt) = lower[start..].find('>') {
                let from = start + gt + 1;
                if let Some(len) = lower[from..].find(&close) {
                    let text = strip_tags(&html[from..from + len]);
                    if !text.is_empty() {
                        return snippet(&text);
                    }
                }
            }
        }
    }
    let text = strip_tags(html);
    if text.is_empty() {
        "(an HTML page without text)".to_string()
    } else {
        snippet(&text)
    }
}

/// Text with its tags removed and its whitespace collapsed.
fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One line of at most about `MAX` characters: control characters become spaces, runs of
/// whitespace one space, and a longer text ends at the last sentence (or, without one,
/// the last word) that fits, followed by "…".
fn snippet(s: &str) -> String {
    const MAX: usize = 600;
    let one_line = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if one_line.chars().count() <= MAX {
        return one_line;
    }
    let cut: String = one_line.chars().take(MAX).collect();
    let end = cut
        .rfind(". ")
        .map(|i| i + 1)
        .filter(|&i| i > MAX / 3)
        .or_else(|| cut.rfind(' ').filter(|&i| i > MAX / 3))
        .unwrap_or(cut.len());
    format!("{} …", cut[..end].trim_end())
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
                StreamDelta::Refusal(t) => {
                    seen.push_str("{refusal:");
                    seen.push_str(t);
                    seen.push('}');
                }
                StreamDelta::Reasoning(r) => {
                    seen.push('[');
                    seen.push_str(r);
                    seen.push(']');
                }
                // The assembler never sends one: the client does, between reads.
                StreamDelta::Flush => seen.push_str("{flush}"),
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
    fn typed_content_parts_refusals_and_provider_state() {
        let (r, seen) = feed(&[
            delta(
                json!({"content":[{"type":"thinking","thinking":[{"type":"text","text":"hm"}]}]}),
            ),
            delta(json!({"content":[{"type":"text","text":"A"}, "B"]})),
            delta(json!({"refusal":"no"})),
        ]);
        assert_eq!((r.reasoning.as_str(), r.text.as_str()), ("hm", "AB"));
        assert_eq!(
            r.reasoning_field, None,
            "thinking parts are not a wire field"
        );
        assert_eq!(r.refusal, "no");
        assert_eq!(seen, "[hm]AB{refusal:no}");

        // OpenRouter: `reasoning` and `reasoning_details` carry the same text once.
        let piece = |text: &str| {
            delta(
                json!({"reasoning": text, "reasoning_details":[{"type":"reasoning.text","text":text,"format":"f","index":0}]}),
            )
        };
        let (r, seen) = feed(&[
            piece("one "),
            piece("two"),
            delta(
                json!({"reasoning_details":[{"type":"reasoning.text","signature":"SIG","index":0}]}),
            ),
            delta(
                json!({"reasoning_details":[{"type":"reasoning.encrypted","data":"ENC","index":1}]}),
            ),
            delta(
                json!({"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":{"google":{"thought_signature":"T"}}}]}),
            ),
        ]);
        assert_eq!(seen, "[one ][two]");
        assert_eq!(r.reasoning_field.as_deref(), Some("reasoning"));
        assert_eq!(
            r.reasoning_details,
            vec![
                json!({"type":"reasoning.text","text":"one two","format":"f","index":0,"signature":"SIG"}),
                json!({"type":"reasoning.encrypted","data":"ENC","index":1}),
            ]
        );
        assert_eq!(
            r.tool_calls[0].extra["extra_content"]["google"]["thought_signature"],
            "T"
        );
        assert!(!r.tool_calls[0].extra.contains_key("type"));
        // Details alone (no reasoning string) are shown as reasoning.
        let (_, seen) = feed(&[delta(
            json!({"reasoning_details":[{"type":"reasoning.text","text":"only","index":0}]}),
        )]);
        assert_eq!(seen, "[only]");
    }

    #[test]
    fn cached_prompt_tokens_wherever_the_server_reports_them() {
        let usage = |u: serde_json::Value, extra: serde_json::Value| {
            let mut chunk = json!({"choices":[], "usage": u});
            if let serde_json::Value::Object(o) = extra {
                chunk.as_object_mut().unwrap().extend(o);
            }
            feed(&[chunk]).0.usage.unwrap().cached_tokens
        };
        let base = |k: &str, v: serde_json::Value| {
            let mut u = json!({"prompt_tokens":100,"completion_tokens":1});
            u[k] = v;
            u
        };
        assert_eq!(
            usage(
                base("prompt_tokens_details", json!({"cached_tokens":80})),
                json!({})
            ),
            Some(80)
        );
        assert_eq!(
            usage(base("prompt_cache_hit_tokens", json!(64)), json!({})),
            Some(64)
        );
        assert_eq!(
            usage(base("cache_read_input_tokens", json!(50)), json!({})),
            Some(50)
        );
        assert_eq!(
            usage(base("x", json!(0)), json!({"timings":{"cache_n":90}})),
            Some(90)
        );
        assert_eq!(usage(base("x", json!(0)), json!({})), None);
    }

    #[test]
    fn a_key_twice_in_one_object_takes_its_last_value() {
        let mut a = Assembler::new();
        let mut seen = String::new();
        let mut on = |d: StreamDelta<'_>| {
            if let StreamDelta::Text(t) = d {
                seen.push_str(t)
            }
        };
        a.push(
            r#"{"choices":[{"delta":{"content":"a","content":"b"},"index":0,"index":0}]}"#,
            &mut on,
        )
        .unwrap();
        a.push(
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","name":"g","arguments":"{}"}}]}}],"usage":{"prompt_tokens":1,"prompt_tokens":2}}"#,
            &mut on,
        )
        .unwrap();
        let r = a.finish();
        assert_eq!(seen, "b");
        assert_eq!(r.tool_calls[0].function.name, "g");
        assert_eq!(r.usage.unwrap().prompt_tokens, 2);
    }

    #[test]
    fn valid_json_of_another_shape_is_not_called_invalid_json() {
        let mut a = Assembler::new();
        let err = a.push(r#"{"choices":"nope"}"#, &mut |_| {}).unwrap_err();
        assert!(matches!(err, ChunkError::Unexpected { .. }), "{err}");
        assert!(!err.to_string().contains("not valid JSON"));
    }

    #[test]
    fn error_bodies_become_one_clear_line() {
        assert_eq!(
            body_error_message(
                r#"[{"error":{"code":400,"message":"Function call is missing a thought_signature.","status":"INVALID_ARGUMENT"}}]"#
            ),
            "Function call is missing a thought_signature."
        );
        let html = "<html>\n<head><title>503 Service Temporarily Unavailable</title></head>\n<body>\n<center><h1>503 Service Temporarily Unavailable</h1></center>\n</body>\n</html>\n";
        assert_eq!(
            body_error_message(html),
            "503 Service Temporarily Unavailable"
        );
        assert_eq!(
            body_error_message(
                "<!DOCTYPE html><html><body><p>Bad <b>gateway</b></p></body></html>"
            ),
            "Bad gateway"
        );
        let raw = r#"{"error":{"message":"Provider returned error","metadata":{"raw":"{\"error\":{\"message\":\"reasoning_content is missing\"}}"}}}"#;
        assert_eq!(
            body_error_message(raw),
            "Provider returned error (reasoning_content is missing)"
        );
        let long = format!("{} And the rest.", "A sentence that goes on. ".repeat(40));
        let line = body_error_message(&long);
        assert!(line.ends_with("on. …"), "{line}");
        assert!(line.chars().count() <= 610);
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
