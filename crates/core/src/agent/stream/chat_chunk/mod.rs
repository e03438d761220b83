//! The chat-completions reader: the `data` of one SSE event in, pieces for the
//! [`Assembler`] out.
//!
//! Copes with the ways real servers differ: tool-call deltas keyed by `index` (or missing
//! it), ids repeated on every piece or sent once, several calls in one reply, several calls
//! all sent at index 0 with different ids, `reasoning_content` or `reasoning`, arguments
//! sent as an object instead of a string, usage in a final chunk with empty `choices`, and
//! `null` wherever a field may be absent. `content` may be an array of typed parts
//! (Mistral's Magistral streams `thinking` parts, which are reasoning, and `text` parts); a
//! `refusal` is the reply. What the server needs back is passed on as it arrived: which
//! field carried the reasoning, OpenRouter's `reasoning_details`, and any extra field on a
//! tool call (Gemini's `extra_content` thought signature). Cached prompt tokens are read
//! wherever a server reports them. A chunk that is not JSON, or not a chunk, is a
//! [`ChunkError`]; so is an `error` the server sent inside the stream.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::assembler::{Assembler, CallPiece, StreamDelta};
use super::error_text::{error_message, snippet};
use super::ChunkError;
use crate::agent::events::Usage;

/// One chunk. Its text borrows from the event's data where the JSON string has no escape,
/// so the common chunk (a few characters of `content`) costs no allocation for its text.
#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    choices: Option<Vec<Choice<'a>>>,
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
struct Choice<'a> {
    #[serde(default)]
    index: Option<u32>,
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
    /// Servers that ignore `stream: true` answer with a whole message instead of deltas.
    /// Boxed: it is rare, and a choice is moved several times on its way out of the parse.
    #[serde(default, borrow)]
    message: Option<Box<Delta<'a>>>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    /// A string, or an array of typed parts.
    #[serde(default, borrow)]
    content: Option<Loose<'a>>,
    #[serde(default, borrow)]
    reasoning_content: Option<Cow<'a, str>>,
    /// A string (OpenRouter, Ollama); anything else carries no text.
    #[serde(default, borrow)]
    reasoning: Option<Loose<'a>>,
    #[serde(default)]
    reasoning_details: Option<Vec<Value>>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

/// A field that is a string, a list, or anything else: what `serde_json::Value` accepted
/// there, with the string borrowed from the event's data when it can be.
enum Loose<'a> {
    Text(Cow<'a, str>),
    List(Vec<Value>),
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for Loose<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct LooseVisitor;
        impl<'de> Visitor<'de> for LooseVisitor {
            type Value = Loose<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Loose::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Loose::Text(Cow::Owned(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Loose::Text(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Value>()? {
                    items.push(item);
                }
                Ok(Loose::List(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Loose::Other)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Loose::Other)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Loose::Other)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Loose::Other)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Loose::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Loose::Other)
            }
        }
        deserializer.deserialize_any(LooseVisitor)
    }
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
    /// Anthropic-style gateways: the tokens written to the cache.
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
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
            cache_write_tokens: self.cache_creation_input_tokens,
            estimated: false,
        }
    }
}

/// A chunk from its JSON. The typed parse is tried first (the fast path); when it fails,
/// the text is parsed as a JSON value and converted from there, which takes a key that
/// appears twice in one object as its last value (as JavaScript's `JSON.parse` does) where
/// the typed parse refuses it. What fails both ways is told as not JSON or not a chunk.
fn parse_chunk(data: &str) -> Result<Chunk<'_>, ChunkError> {
    let typed = match serde_json::from_str::<Chunk>(data) {
        Ok(chunk) => return Ok(chunk),
        Err(e) => e,
    };
    let value = serde_json::from_str::<Value>(data).map_err(|e| ChunkError::Malformed {
        detail: e.to_string(),
        snippet: snippet(data),
    })?;
    // From the value itself (not a reference to it), so its strings move into the chunk.
    Chunk::deserialize(value).map_err(|_| ChunkError::Unexpected {
        detail: typed.to_string(),
        snippet: snippet(data),
    })
}

impl Assembler {
    /// Feed the `data` of one chat-completions SSE event (not `[DONE]`). Visible pieces go
    /// to `on_delta`.
    pub fn push(
        &mut self,
        data: &str,
        on_delta: &mut dyn FnMut(StreamDelta<'_>),
    ) -> Result<(), ChunkError> {
        let data = self.joined_surrogates(data);
        match self.frame.read(&data) {
            Some(common) => {
                self.push_common(common, on_delta);
                Ok(())
            }
            None => self.push_parsed(&data, on_delta),
        }
    }

    /// `data` with a UTF-16 surrogate pair split across events joined (see
    /// `surrogates`): borrowed unless it held a lone half or one was pending.
    fn joined_surrogates<'d>(&mut self, data: &'d str) -> std::borrow::Cow<'d, str> {
        if self.lone_high.is_none() && !super::surrogates::may_hold_one(data) {
            return std::borrow::Cow::Borrowed(data);
        }
        match super::surrogates::repair(data, &mut self.lone_high) {
            Some(fixed) => std::borrow::Cow::Owned(fixed),
            None => std::borrow::Cow::Borrowed(data),
        }
    }

    /// The common chunk, as the typed parse would read it.
    fn push_common(
        &mut self,
        common: super::common_chunk::Common<'_>,
        on_delta: &mut dyn FnMut(StreamDelta<'_>),
    ) {
        if let Some(text) = common.content {
            self.push_text(&text, on_delta);
        }
        if let Some(reason) = common.finish_reason {
            self.finish_reason_is(reason.to_string());
        }
    }

    /// Any chunk, through serde (what [`Self::push`] does when the common chunk's reader
    /// gives up): the tests compare the two ways.
    #[cfg(test)]
    pub(super) fn push_typed(
        &mut self,
        data: &str,
        on_delta: &mut dyn FnMut(StreamDelta<'_>),
    ) -> Result<(), ChunkError> {
        let data = self.joined_surrogates(data);
        self.push_parsed(&data, on_delta)
    }

    /// [`Self::push_typed`] of data whose surrogates are already joined.
    fn push_parsed(
        &mut self,
        data: &str,
        on_delta: &mut dyn FnMut(StreamDelta<'_>),
    ) -> Result<(), ChunkError> {
        let chunk = parse_chunk(data)?;
        if let Some(err) = chunk.error {
            return Err(ChunkError::Server(error_message(&err)));
        }
        if let Some(usage) = &chunk.usage {
            self.usage(usage.to_usage());
        }
        if let Some(n) = chunk.timings.and_then(|t| t.cache_n) {
            self.cached_tokens(n);
        }
        for choice in chunk.choices.into_iter().flatten() {
            if choice.index.unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.delta.or(choice.message.map(|m| *m)) {
                apply(self, delta, on_delta);
            }
            if let Some(reason) = choice.finish_reason {
                self.finish_reason_is(reason);
            }
        }
        Ok(())
    }
}

/// One choice's delta, piece by piece.
fn apply(a: &mut Assembler, delta: Delta, on_delta: &mut dyn FnMut(StreamDelta<'_>)) {
    let (field, reasoning) = match (delta.reasoning_content, delta.reasoning) {
        (Some(r), _) if !r.is_empty() => ("reasoning_content", Some(r)),
        (_, Some(Loose::Text(r))) if !r.is_empty() => ("reasoning", Some(r)),
        _ => ("", None),
    };
    let had_reasoning_text = reasoning.is_some();
    if let Some(r) = reasoning {
        a.reasoning_field(field);
        a.push_reasoning(&r, on_delta);
    }
    for detail in delta.reasoning_details.into_iter().flatten() {
        // The same text arrives in `reasoning` too where a server sends both.
        if !had_reasoning_text {
            if let Some(text) = detail_text(&detail).filter(|t| !t.is_empty()) {
                let text = text.to_string();
                a.push_reasoning(&text, on_delta);
            }
        }
        a.push_reasoning_detail(detail);
    }
    match delta.content {
        Some(Loose::Text(t)) => a.push_text(&t, on_delta),
        Some(Loose::List(parts)) => {
            for part in parts {
                content_part(a, part, on_delta);
            }
        }
        _ => {}
    }
    if let Some(r) = delta.refusal.filter(|r| !r.is_empty()) {
        a.push_refusal(&r, on_delta);
    }
    for (position, call) in delta.tool_calls.into_iter().flatten().enumerate() {
        a.push_call(position, call.into_piece());
    }
}

/// One typed part of an array `content`: `text` is text, `thinking` is reasoning (its own
/// value a string or a list of text parts); a bare string is text.
fn content_part(a: &mut Assembler, part: Value, on_delta: &mut dyn FnMut(StreamDelta<'_>)) {
    match part {
        Value::String(t) => a.push_text(&t, on_delta),
        Value::Object(o) => match o.get("type").and_then(Value::as_str) {
            Some("thinking" | "reasoning") => {
                let mut text = String::new();
                collect_text(o.get("thinking").or(o.get("text")), &mut text);
                a.push_reasoning(&text, on_delta);
            }
            Some("refusal") => {
                if let Some(r) = o.get("refusal").and_then(Value::as_str) {
                    a.push_refusal(r, on_delta);
                }
            }
            _ => {
                if let Some(t) = o.get("text").and_then(Value::as_str) {
                    a.push_text(t, on_delta);
                }
            }
        },
        _ => {}
    }
}

impl ToolCallDelta {
    /// The piece for the assembler: arguments sent as an object count as their JSON text.
    fn into_piece(self) -> CallPiece {
        let (name, arguments) = match self.function {
            Some(f) => {
                let arguments = match f.arguments {
                    Some(Value::String(s)) => s,
                    Some(Value::Null) | None => String::new(),
                    Some(other) => other.to_string(),
                };
                (f.name, arguments)
            }
            None => (None, String::new()),
        };
        CallPiece {
            index: self.index,
            id: self.id,
            name,
            arguments,
            extra: self.extra,
        }
    }
}

/// The text of a `reasoning_details` entry: its `text`, or a summary's `summary`.
fn detail_text(detail: &Value) -> Option<&str> {
    detail
        .get("text")
        .or_else(|| detail.get("summary"))
        .and_then(Value::as_str)
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

#[cfg(test)]
mod tests;
