//! The reader of Anthropic's Messages API: the `data` of one SSE event (or a whole
//! non-streaming `message`) in, pieces for the [`Assembler`] out.
//!
//! The JSON `type` decides (the `event:` line is not needed). `message_start` brings the
//! input side of the usage; content blocks are keyed by `index`: `content_block_start`
//! opens one, `content_block_delta` extends it (`text_delta` is text, `thinking_delta`
//! reasoning, `signature_delta` the thinking block's signature, `input_json_delta` a tool
//! call's arguments), `content_block_stop` closes it. `message_delta` brings the stop
//! reason and the cumulative usage; `message_stop` ends the reply, and only then is the
//! finish reason set (the stop reason in rein's words, see [`super::finish`]: `end_turn`
//! is `stop`, `tool_use` `tool_calls`, `max_tokens` `length`, `refusal`
//! `content_filter`), so a stream cut before it is no finished reply. Nothing after it is
//! read: a reply ends once.
//! `ping` is nothing; an `error` event ends the reply with the server's words
//! (`overloaded_error`, `rate_limit_error` and `api_error` as [`ChunkError::Busy`], retried
//! when nothing was shown yet). The service pads some data with trailing spaces, which is
//! still JSON.
//!
//! - Usage: `prompt_tokens` is `input_tokens` + `cache_read_input_tokens` +
//!   `cache_creation_input_tokens` (Anthropic's `input_tokens` leaves the cached part out);
//!   the cache read is `cached_tokens`, the cache write `cache_write_tokens`;
//!   `output_tokens` (cumulative in `message_delta`) the completion.
//! - Tool calls are `tool_use` blocks: their `toolu_…` id, name, and arguments the
//!   `partial_json` pieces as streamed, or the start block's `input` when none came.
//!   Blocks the server ran itself (`server_tool_use`, `web_search_tool_result`, ...) are
//!   never tool calls.
//! - Several thinking blocks are shown as one reasoning, a blank line between them.
//! - A `refusal` stop makes the reply a refusal: the `stop_details` explanation when the
//!   server gave one, else the text that streamed, else "refusal".
//! - Provider state (see [`crate::conversation::Reasoning::details`]): one item per content
//!   block, in order. Thinking blocks whole (`thinking` text and `signature`, also an empty
//!   one that is only a signature), `redacted_thinking` blocks whole (`data`), blocks the
//!   server ran whole (with the input their deltas built), a text block as the place
//!   `{"type": "text"}` and a `tool_use` block as `{"type": "tool_use", "id"}`: the wire
//!   sends them back in that order, to the same model.
//!
//! Anything that is not JSON, not an event, or a block that contradicts itself (started
//! twice, a tool call without an id) is a [`ChunkError`]; nothing the server sends panics.

use serde_json::{json, Map, Value};

use super::assembler::CallPiece;
use super::error_text::{error_message, snippet};
use super::{Assembler, ChunkError, StreamDelta};
use crate::agent::events::Usage;
use crate::conversation::Api;

/// What the reader keeps between events of one reply.
#[derive(Debug, Default)]
pub(super) struct Progress {
    /// The content blocks so far, in the order they started.
    blocks: Vec<Block>,
    input_tokens: Option<u64>,
    cache_read: Option<u64>,
    cache_write: Option<u64>,
    output_tokens: Option<u64>,
    /// `message_delta`'s stop reason, until `message_stop` makes it the finish reason.
    stop_reason: Option<String>,
    /// The reply was made a refusal already.
    refused: bool,
    /// `message_stop` (or a whole message) ended the reply: later events are not read.
    ended: bool,
}

#[derive(Debug)]
struct Block {
    /// The server's `index`.
    index: u64,
    /// Its item among the assembler's (see [`Assembler::item_mut`]).
    item: usize,
    kind: Kind,
    /// A `tool_use` block's `input` from its start, the arguments when no delta brings any.
    start_input: Option<Value>,
    /// A block the server ran: the `partial_json` of its input so far.
    json: String,
    /// A `tool_use` block got its arguments (from deltas, or from `start_input` at its end).
    has_arguments: bool,
    /// A thinking block has shown some text.
    thought: bool,
    closed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Text,
    Thinking,
    RedactedThinking,
    ToolUse,
    /// Run by the server (`server_tool_use`, `web_search_tool_result`, ...), or a kind this
    /// reader does not know: kept whole, never a tool call.
    Server,
}

/// The error types that say to try again later.
const BUSY_ERRORS: [&str; 3] = ["overloaded_error", "rate_limit_error", "api_error"];

/// What a refusal says when the server explained nothing and nothing streamed.
const BARE_REFUSAL: &str = "refusal";

fn unexpected(detail: impl Into<String>, data: &str) -> ChunkError {
    ChunkError::Unexpected {
        detail: detail.into(),
        snippet: snippet(data),
    }
}

fn string<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

impl Assembler {
    /// Feed the `data` of one Anthropic SSE event, or a whole non-streaming message.
    pub(crate) fn push_anthropic(
        &mut self,
        data: &str,
        on_delta: &mut dyn FnMut(StreamDelta<'_>),
    ) -> Result<(), ChunkError> {
        self.api_is(Api::Anthropic);
        if self.anthropic.ended {
            return Ok(());
        }
        let data = self.anthropic_surrogates(data);
        let event: Value = serde_json::from_str(&data).map_err(|e| ChunkError::Malformed {
            detail: e.to_string(),
            snippet: snippet(&data),
        })?;
        if !event.is_object() {
            return Err(unexpected("not an object", &data));
        }
        let Some(kind) = string(&event, "type") else {
            return Err(unexpected("an event without a type", &data));
        };
        match kind {
            "message_start" => {
                let message = event.get("message").unwrap_or(&Value::Null);
                self.anthropic_message(message, &data, on_delta)
            }
            "content_block_start" => {
                let index = block_index(&event, &data)?;
                let block = event.get("content_block").unwrap_or(&Value::Null);
                self.anthropic_start(index, block, &data, on_delta)
            }
            "content_block_delta" => {
                let index = block_index(&event, &data)?;
                let delta = event.get("delta").unwrap_or(&Value::Null);
                self.anthropic_delta(index, delta, on_delta);
                Ok(())
            }
            "content_block_stop" => {
                let index = block_index(&event, &data)?;
                if let Some(at) = self.anthropic_block(index) {
                    self.anthropic_close(at);
                }
                Ok(())
            }
            "message_delta" => {
                let delta = event.get("delta").unwrap_or(&Value::Null);
                self.anthropic_usage(event.get("usage"));
                self.anthropic_stop(delta, on_delta);
                Ok(())
            }
            "message_stop" => {
                self.anthropic_finish();
                Ok(())
            }
            "error" => Err(anthropic_error(event.get("error").unwrap_or(&event))),
            // A whole message: the answer of a server that did not stream.
            "message" => {
                self.anthropic_message(&event, &data, on_delta)?;
                self.anthropic_stop(&event, on_delta);
                self.anthropic_finish();
                Ok(())
            }
            // `ping`, and events this reader does not know.
            _ => Ok(()),
        }
    }

    /// `data` with UTF-16 surrogate halves split across events joined (see `surrogates`).
    fn anthropic_surrogates<'d>(&mut self, data: &'d str) -> std::borrow::Cow<'d, str> {
        if self.lone_high.is_none() && !super::surrogates::may_hold_one(data) {
            return std::borrow::Cow::Borrowed(data);
        }
        match super::surrogates::repair(data, &mut self.lone_high) {
            Some(fixed) => std::borrow::Cow::Owned(fixed),
            None => std::borrow::Cow::Borrowed(data),
        }
    }

    /// A `message` (of `message_start`, or a whole one): its usage and any content it
    /// already holds.
    fn anthropic_message(
        &mut self,
        message: &Value,
        data: &str,
        on_delta: &mut dyn FnMut(StreamDelta<'_>),
    ) -> Result<(), ChunkError> {
        self.anthropic_usage(message.get("usage"));
        if let Some(content) = message.get("content").and_then(Value::as_array) {
            let first = self.anthropic.blocks.len() as u64;
            for (offset, block) in content.iter().enumerate() {
                let index = first + offset as u64;
                self.anthropic_start(index, block, data, on_delta)?;
                if let Some(at) = self.anthropic_block(index) {
                    self.anthropic_close(at);
                }
            }
        }
        Ok(())
    }

    /// The position of the block with `index` among those started.
    fn anthropic_block(&self, index: u64) -> Option<usize> {
        self.anthropic.blocks.iter().rposition(|b| b.index == index)
    }

    /// A content block opens: its item, and what it already carries.
    fn anthropic_start(
        &mut self,
        index: u64,
        block: &Value,
        data: &str,
        on_delta: &mut dyn FnMut(StreamDelta<'_>),
    ) -> Result<(), ChunkError> {
        if self.anthropic_block(index).is_some() {
            return Err(unexpected(
                format!("content block {index} started twice"),
                data,
            ));
        }
        let Some(kind) = string(block, "type") else {
            return Err(unexpected(
                format!("content block {index} has no type"),
                data,
            ));
        };
        let item = self.items();
        let mut entry = Block {
            index,
            item,
            kind: Kind::Server,
            start_input: None,
            json: String::new(),
            has_arguments: false,
            thought: false,
            closed: false,
        };
        match kind {
            "text" => {
                entry.kind = Kind::Text;
                self.push_item(json!({"type": "text"}));
                self.anthropic.blocks.push(entry);
                if let Some(text) = string(block, "text") {
                    self.push_text(text, on_delta);
                }
            }
            "thinking" => {
                entry.kind = Kind::Thinking;
                let signature = string(block, "signature").unwrap_or("");
                self.push_item(json!({"type": "thinking", "thinking": "", "signature": signature}));
                self.anthropic.blocks.push(entry);
                let at = self.anthropic.blocks.len() - 1;
                if let Some(text) = string(block, "thinking") {
                    self.anthropic_thinking(at, text, on_delta);
                }
            }
            "redacted_thinking" => {
                entry.kind = Kind::RedactedThinking;
                self.push_item(block.clone());
                self.anthropic.blocks.push(entry);
            }
            "tool_use" => {
                let Some(id) = string(block, "id").filter(|id| !id.is_empty()) else {
                    return Err(unexpected(
                        format!("tool_use block {index} has no id"),
                        data,
                    ));
                };
                let Ok(call_index) = usize::try_from(index) else {
                    return Err(unexpected(format!("block index {index}"), data));
                };
                entry.kind = Kind::ToolUse;
                entry.start_input = block.get("input").cloned();
                self.push_item(json!({"type": "tool_use", "id": id}));
                self.push_call(
                    0,
                    CallPiece {
                        index: Some(call_index),
                        id: Some(id.to_string()),
                        name: string(block, "name").map(str::to_string),
                        arguments: String::new(),
                        extra: Map::new(),
                    },
                );
                self.anthropic.blocks.push(entry);
            }
            _ => {
                self.push_item(block.clone());
                self.anthropic.blocks.push(entry);
            }
        }
        Ok(())
    }

    /// More text of the thinking block at `at`: shown (a blank line after an earlier
    /// block's reasoning) and kept in its item.
    fn anthropic_thinking(
        &mut self,
        at: usize,
        text: &str,
        on_delta: &mut dyn FnMut(StreamDelta<'_>),
    ) {
        if text.is_empty() {
            return;
        }
        let Some(block) = self.anthropic.blocks.get_mut(at) else {
            return;
        };
        let first = !std::mem::replace(&mut block.thought, true);
        let item = block.item;
        if first && !self.reasoning().is_empty() {
            self.push_reasoning("\n\n", on_delta);
        }
        self.push_reasoning(text, on_delta);
        append(self.item_mut(item), "thinking", text);
    }

    /// A `content_block_delta` for the block with `index` (one never started is ignored).
    fn anthropic_delta(
        &mut self,
        index: u64,
        delta: &Value,
        on_delta: &mut dyn FnMut(StreamDelta<'_>),
    ) {
        let Some(at) = self.anthropic_block(index) else {
            return;
        };
        let (kind, item) = {
            let block = &self.anthropic.blocks[at];
            (block.kind, block.item)
        };
        match (string(delta, "type"), kind) {
            (Some("text_delta"), Kind::Text) => {
                if let Some(text) = string(delta, "text") {
                    self.push_text(text, on_delta);
                }
            }
            (Some("thinking_delta"), Kind::Thinking) => {
                if let Some(text) = string(delta, "thinking") {
                    self.anthropic_thinking(at, text, on_delta);
                }
            }
            (Some("signature_delta"), Kind::Thinking) => {
                if let Some(signature) = string(delta, "signature") {
                    append(self.item_mut(item), "signature", signature);
                    self.holds(signature.len());
                }
            }
            (Some("input_json_delta"), Kind::ToolUse) => {
                let piece = string(delta, "partial_json").unwrap_or("");
                if piece.is_empty() {
                    return;
                }
                self.anthropic.blocks[at].has_arguments = true;
                self.push_call(
                    0,
                    CallPiece {
                        index: usize::try_from(index).ok(),
                        arguments: piece.to_string(),
                        ..CallPiece::default()
                    },
                );
            }
            (Some("input_json_delta"), Kind::Server) => {
                if let Some(piece) = string(delta, "partial_json") {
                    self.anthropic.blocks[at].json.push_str(piece);
                    self.holds(piece.len());
                }
            }
            // `citations_delta`, and deltas of another block's kind.
            _ => {}
        }
    }

    /// The block at `at` is complete: a tool call that got no argument pieces takes its
    /// start's `input`; a server block takes the input its deltas built.
    fn anthropic_close(&mut self, at: usize) {
        let Some(block) = self.anthropic.blocks.get_mut(at) else {
            return;
        };
        if std::mem::replace(&mut block.closed, true) {
            return;
        }
        let (index, item) = (block.index, block.item);
        match block.kind {
            Kind::ToolUse if !block.has_arguments => {
                block.has_arguments = true;
                let arguments = match block.start_input.take() {
                    Some(Value::Null) | None => "{}".to_string(),
                    Some(input) => input.to_string(),
                };
                self.push_call(
                    0,
                    CallPiece {
                        index: usize::try_from(index).ok(),
                        arguments,
                        ..CallPiece::default()
                    },
                );
            }
            Kind::Server if !block.json.is_empty() => {
                let json = std::mem::take(&mut block.json);
                if let Ok(input) = serde_json::from_str::<Value>(&json) {
                    if let Some(Value::Object(o)) = self.item_mut(item) {
                        o.insert("input".to_string(), input);
                    }
                }
            }
            _ => {}
        }
    }

    /// Usage figures: each one present replaces the one before (`message_delta`'s are
    /// cumulative), and the assembler gets the sum so far.
    fn anthropic_usage(&mut self, usage: Option<&Value>) {
        let Some(usage) = usage.filter(|u| u.is_object()) else {
            return;
        };
        let p = &mut self.anthropic;
        for (key, slot) in [
            ("input_tokens", &mut p.input_tokens),
            ("cache_read_input_tokens", &mut p.cache_read),
            ("cache_creation_input_tokens", &mut p.cache_write),
            ("output_tokens", &mut p.output_tokens),
        ] {
            if let Some(n) = usage.get(key).and_then(Value::as_u64) {
                *slot = Some(n);
            }
        }
        let read = p.cache_read.unwrap_or(0);
        let write = p.cache_write.unwrap_or(0);
        let prompt = p
            .input_tokens
            .unwrap_or(0)
            .saturating_add(read)
            .saturating_add(write);
        let completion = p.output_tokens.unwrap_or(0);
        let usage = Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: prompt.saturating_add(completion),
            cached_tokens: p.cache_read,
            cache_write_tokens: p.cache_write,
            estimated: false,
        };
        self.usage(usage);
    }

    /// The stop reason of a `message_delta`'s delta (or a whole message); a refusal makes
    /// the reply one.
    fn anthropic_stop(&mut self, delta: &Value, on_delta: &mut dyn FnMut(StreamDelta<'_>)) {
        let Some(reason) = string(delta, "stop_reason") else {
            return;
        };
        self.anthropic.stop_reason = Some(reason.to_string());
        if reason != "refusal" || std::mem::replace(&mut self.anthropic.refused, true) {
            return;
        }
        let explanation = delta
            .get("stop_details")
            .and_then(|d| string(d, "explanation"))
            .filter(|e| !e.is_empty());
        if let Some(explanation) = explanation {
            self.push_refusal(explanation, on_delta);
            return;
        }
        // The text that streamed is the refusal: kept as one, not shown a second time.
        let text = self.take_streamed();
        if text.is_empty() {
            self.push_refusal(BARE_REFUSAL, on_delta);
        } else {
            self.push_text(&text, &mut |_| {});
            self.push_refusal(&text, &mut |_| {});
        }
    }

    /// `message_stop`: every block is complete, and the stop reason is the finish reason.
    fn anthropic_finish(&mut self) {
        self.anthropic.ended = true;
        for at in 0..self.anthropic.blocks.len() {
            self.anthropic_close(at);
        }
        let reason = self.anthropic.stop_reason.as_deref().unwrap_or("end_turn");
        self.finish_reason_is(super::finish::anthropic(reason));
    }
}

/// An event's block `index`.
fn block_index(event: &Value, data: &str) -> Result<u64, ChunkError> {
    event
        .get("index")
        .and_then(Value::as_u64)
        .ok_or_else(|| unexpected("a content block event without an index", data))
}

/// Append `more` to the string `key` of `item` (an object).
fn append(item: Option<&mut Value>, key: &str, more: &str) {
    if let Some(Value::Object(o)) = item {
        match o.get_mut(key) {
            Some(Value::String(s)) => s.push_str(more),
            _ => {
                o.insert(key.to_string(), Value::String(more.to_string()));
            }
        }
    }
}

/// The error an `error` event (or body) carries: busy for the types that say to try again.
fn anthropic_error(error: &Value) -> ChunkError {
    let message = error_message(error);
    let kind = string(error, "type").unwrap_or("");
    let message = if kind.is_empty() || message.contains(kind) {
        message
    } else {
        format!("{message} ({kind})")
    };
    if BUSY_ERRORS.contains(&kind) {
        ChunkError::Busy(message)
    } else {
        ChunkError::Server(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::sse::SseParser;
    use crate::agent::stream::AssembledReply;
    use serde_json::json;
    use std::path::PathBuf;

    fn samples_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/provider-samples/native")
    }

    fn index() -> Value {
        let text = std::fs::read_to_string(samples_dir().join("index.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// The Anthropic samples of the index.
    fn samples() -> Vec<Value> {
        let all = index()["samples"].as_array().unwrap().clone();
        let ours: Vec<Value> = all
            .into_iter()
            .filter(|s| s["api"] == "anthropic-messages")
            .collect();
        assert_eq!(ours.len(), 16, "the index holds 16 Anthropic samples");
        ours
    }

    /// The data of each complete SSE event of `body`, as the client passes them on
    /// (trimmed, empty ones skipped).
    fn events(body: &[u8]) -> Vec<String> {
        let mut parser = SseParser::default();
        parser.feed(body).unwrap();
        let mut out = Vec::new();
        while let Some(event) = parser.next_event() {
            let data = event.trim();
            if !data.is_empty() {
                out.push(data.to_string());
            }
        }
        out
    }

    /// What one reply showed, piece by piece.
    #[derive(Debug, Default)]
    struct Shown {
        text: String,
        reasoning: String,
        refusal: String,
    }

    /// Reads one recorded body the way the client does: a stream event by event (up to
    /// the first error), a JSON body whole.
    fn read(body: &[u8], stream: bool) -> (Assembler, Shown, Result<(), ChunkError>) {
        let mut a = Assembler::new();
        let mut shown = Shown::default();
        let mut on = |d: StreamDelta<'_>| match d {
            StreamDelta::Text(t) => shown.text.push_str(t),
            StreamDelta::Reasoning(t) => shown.reasoning.push_str(t),
            StreamDelta::Refusal(t) => shown.refusal.push_str(t),
            StreamDelta::Flush => {}
        };
        let mut result = Ok(());
        if stream {
            for data in events(body) {
                result = a.push_anthropic(&data, &mut on);
                if result.is_err() {
                    break;
                }
            }
        } else {
            result = a.push_anthropic(&String::from_utf8_lossy(body), &mut on);
        }
        (a, shown, result)
    }

    /// The data JSON of each event of a stream, read apart from the reader: line by line.
    fn raw_events(body: &[u8]) -> Vec<Value> {
        let text = String::from_utf8_lossy(body);
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    }

    /// The content blocks of a recorded answer, read apart from the reader: (type, thinking,
    /// signature, id), in index order.
    fn raw_blocks(body: &[u8], stream: bool) -> Vec<(String, String, String, String)> {
        let mut blocks: Vec<(u64, String, String, String, String)> = Vec::new();
        let get = |v: &Value, k: &str| v[k].as_str().unwrap_or("").to_string();
        if !stream {
            let message: Value = serde_json::from_slice(body).unwrap();
            for (i, b) in message["content"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                blocks.push((
                    i as u64,
                    get(b, "type"),
                    get(b, "thinking"),
                    get(b, "signature"),
                    get(b, "id"),
                ));
            }
        }
        for event in raw_events(body).iter().filter(|_| stream) {
            let index = event["index"].as_u64().unwrap_or(0);
            match event["type"].as_str() {
                Some("content_block_start") => {
                    let b = &event["content_block"];
                    blocks.push((
                        index,
                        get(b, "type"),
                        get(b, "thinking"),
                        get(b, "signature"),
                        get(b, "id"),
                    ));
                }
                Some("content_block_delta") => {
                    let d = &event["delta"];
                    let entry = blocks.iter_mut().find(|b| b.0 == index).unwrap();
                    match d["type"].as_str() {
                        Some("thinking_delta") => entry.2.push_str(&get(d, "thinking")),
                        Some("signature_delta") => entry.3.push_str(&get(d, "signature")),
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        blocks.sort_by_key(|b| b.0);
        blocks.into_iter().map(|b| (b.1, b.2, b.3, b.4)).collect()
    }

    /// Everything `expect.turns[k]` says about a 200 answer, against what the reader made
    /// of it; the problems found, each named.
    fn compare(name: &str, body: &[u8], stream: bool, want: &Value) -> Vec<String> {
        let mut problems = Vec::new();
        let mut check = |ok: bool, what: String| {
            if !ok {
                problems.push(format!("{name}: {what}"));
            }
        };
        let (a, shown, result) = read(body, stream);
        let finish = a.finish_reason().map(str::to_string);
        let reply: AssembledReply = a.finish();
        check(
            reply.api == Some(Api::Anthropic),
            format!("api {:?}", reply.api),
        );
        // What streamed is what the sample shows, error or not.
        check(
            shown.text == want["text"].as_str().unwrap(),
            format!("shown text {:?}", shown.text),
        );
        check(
            shown.reasoning == want["reasoning"].as_str().unwrap(),
            format!("shown reasoning {:?}", shown.reasoning),
        );
        check(
            shown.refusal == want["refusal"].as_str().unwrap(),
            format!("shown refusal {:?}", shown.refusal),
        );
        let usage = reply.usage.map(|u| {
            json!({
                "prompt_tokens": u.prompt_tokens,
                "completion_tokens": u.completion_tokens,
                "total_tokens": u.total_tokens,
                "cache_read_tokens": u.cached_tokens.unwrap_or(0),
                "cache_creation_tokens": u.cache_write_tokens.unwrap_or(0),
                "input_tokens": u.prompt_tokens
                    - u.cached_tokens.unwrap_or(0)
                    - u.cache_write_tokens.unwrap_or(0),
                "estimated": u.estimated,
            })
        });
        let mut want_usage = want["usage"].clone();
        if let Value::Object(o) = &mut want_usage {
            o.insert("estimated".into(), json!(false));
        }
        check(
            usage.clone().unwrap_or(Value::Null) == want_usage,
            format!("usage {usage:?} instead of {want_usage}"),
        );
        // The sample says Anthropic's word; rein says its own.
        let want_finish = want["finish_reason"]
            .as_str()
            .map(super::super::finish::anthropic);
        check(
            finish == want_finish,
            format!("finish reason {finish:?} instead of {want_finish:?}"),
        );
        match (&result, want["error"].as_str()) {
            (Err(e), Some(expected)) => check(
                e.to_string().contains(expected),
                format!("error {e} does not say {expected:?}"),
            ),
            (Ok(()), Some(expected)) => check(false, format!("no error, expected {expected:?}")),
            (Err(e), None) => check(false, format!("error {e}")),
            (Ok(()), None) => {}
        }
        if want["error"].is_string() {
            return problems;
        }
        check(
            reply.text == want["text"].as_str().unwrap(),
            format!("text {:?}", reply.text),
        );
        check(
            reply.reasoning == want["reasoning"].as_str().unwrap(),
            format!("reasoning {:?}", reply.reasoning),
        );
        check(
            reply.refusal == want["refusal"].as_str().unwrap(),
            format!("refusal {:?}", reply.refusal),
        );
        let calls: Vec<Value> = reply
            .tool_calls
            .iter()
            .map(
                |c| json!({"id": c.id, "name": c.function.name, "arguments": c.function.arguments}),
            )
            .collect();
        check(
            Value::Array(calls.clone()) == want["tool_calls"],
            format!("tool calls {calls:?}"),
        );

        // The provider state: one item per block, in order, shaped as the wire needs it.
        let blocks = raw_blocks(body, stream);
        check(
            reply.reasoning_details.len() == blocks.len(),
            format!(
                "{} items for {} blocks",
                reply.reasoning_details.len(),
                blocks.len()
            ),
        );
        let mut servers = Vec::new();
        let mut state = Vec::new();
        let echo = want["echo"].as_array().cloned().unwrap_or_default();
        let mut echoed = echo.iter();
        for (item, (kind, thinking, signature, id)) in reply.reasoning_details.iter().zip(&blocks) {
            check(
                item["type"] == kind.as_str(),
                format!("item {item} for a {kind} block"),
            );
            match kind.as_str() {
                "text" => check(
                    *item == json!({"type": "text"}),
                    format!("text place {item}"),
                ),
                "tool_use" => {
                    check(
                        *item == json!({"type": "tool_use", "id": id}),
                        format!("tool_use place {item}"),
                    );
                    if !echo.is_empty() {
                        let e = echoed.next();
                        check(
                            e == Some(&json!({"type": "tool_use", "id": id})),
                            format!("echo {e:?} for tool_use {id}"),
                        );
                    }
                }
                "thinking" => {
                    state.push("thinking.signature");
                    check(
                        *item
                            == json!({"type": "thinking", "thinking": thinking, "signature": signature}),
                        format!("thinking item {item}"),
                    );
                    let e = echoed.next().cloned().unwrap_or(Value::Null);
                    check(
                        e["type"] == "thinking"
                            && e["thinking_len"] == thinking.chars().count()
                            && e["signature_len"] == signature.chars().count(),
                        format!("echo {e} for a thinking block"),
                    );
                }
                "redacted_thinking" => state.push("redacted_thinking.data"),
                other => servers.push(other.to_string()),
            }
        }
        state.sort();
        state.dedup();
        check(
            json!(state) == want["provider_state"],
            format!("provider state {state:?}"),
        );
        let want_servers = want.get("server_tools").cloned().unwrap_or(json!([]));
        check(
            json!(servers) == want_servers,
            format!("server blocks {servers:?}"),
        );
        problems
    }

    /// Every recorded 200 answer of the Anthropic samples reads as `expect.turns` says.
    #[test]
    fn every_anthropic_sample_reads_as_expected() {
        let mut problems = Vec::new();
        let mut read_any = 0;
        for sample in samples() {
            let name = sample["name"].as_str().unwrap();
            for (k, response) in sample["responses"].as_array().unwrap().iter().enumerate() {
                if response["status"] != 200 {
                    continue;
                }
                let file = response["file"].as_str().unwrap();
                let body = std::fs::read(samples_dir().join(file)).unwrap();
                let stream = response["headers"]["Content-Type"]
                    .as_str()
                    .unwrap_or("")
                    .contains("event-stream");
                let want = &sample["expect"]["turns"][k];
                problems.extend(compare(&format!("{name} #{}", k + 1), &body, stream, want));
                read_any += 1;
            }
        }
        assert_eq!(
            read_any, 17,
            "the Anthropic samples hold 17 answers with a 200"
        );
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    /// SplitMix64: deterministic cuts.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) % n as u64) as usize
        }
    }

    /// The streams cut at random points (and at every event boundary): nothing panics, and
    /// a stream cut before its `message_stop` event is complete has no finish reason.
    #[test]
    fn cut_streams_never_panic_and_never_finish() {
        let mut rng = Rng(27);
        let mut cuts = 0;
        for sample in samples() {
            for response in sample["responses"].as_array().unwrap() {
                let file = response["file"].as_str().unwrap();
                if !file.ends_with(".sse") {
                    continue;
                }
                let body = std::fs::read(samples_dir().join(file)).unwrap();
                let text = String::from_utf8_lossy(&body).to_string();
                // Where the message_stop event is complete (its blank line read).
                let stop_end = text
                    .find("\"message_stop\"")
                    .and_then(|at| text[at..].find("\n\n").map(|blank| at + blank + 2));
                let mut points: Vec<usize> = (0..40).map(|_| rng.below(body.len() + 1)).collect();
                points.extend(text.match_indices("\n\n").map(|(at, _)| at + 2).chain([
                    0,
                    1,
                    body.len(),
                ]));
                for cut in points {
                    cuts += 1;
                    let (a, _, result) = read(&body[..cut], true);
                    let finished = a.finish_reason().is_some();
                    match stop_end {
                        Some(end) if cut >= end => assert!(
                            finished || result.is_err(),
                            "{file} cut at {cut}: complete, yet not finished"
                        ),
                        _ => assert!(!finished, "{file} cut at {cut}: finished"),
                    }
                    // A reply that did not finish still assembles (what the client keeps).
                    let _ = a.finish();
                }
            }
        }
        assert!(cuts > 500, "{cuts}");
    }

    /// Each event's JSON with any one value replaced by a value of another type, or cut
    /// short: an error or nothing, never a panic.
    #[test]
    fn mangled_events_are_errors_not_panics() {
        fn variants(value: &Value, out: &mut Vec<Value>, root: &Value, path: &mut Vec<Value>) {
            for replacement in [
                json!(null),
                json!(7),
                json!("x"),
                json!([]),
                json!({}),
                json!(-1),
            ] {
                let mut copy = root.clone();
                if let Some(slot) = pointer(&mut copy, path) {
                    *slot = replacement;
                    out.push(copy);
                }
            }
            match value {
                Value::Object(o) => {
                    for (k, v) in o {
                        path.push(json!(k));
                        variants(v, out, root, path);
                        path.pop();
                    }
                }
                Value::Array(items) => {
                    for (i, v) in items.iter().enumerate().take(3) {
                        path.push(json!(i));
                        variants(v, out, root, path);
                        path.pop();
                    }
                }
                _ => {}
            }
        }
        fn pointer<'v>(value: &'v mut Value, path: &[Value]) -> Option<&'v mut Value> {
            let mut at = value;
            for step in path {
                at = match step {
                    Value::String(k) => at.get_mut(k.as_str())?,
                    Value::Number(i) => at.get_mut(i.as_u64()? as usize)?,
                    _ => return None,
                };
            }
            Some(at)
        }
        let mut tried = 0;
        for file in [
            "anthropic-thinking-dropped-400.1.sse",
            "anthropic-tool-then-text.1.sse",
            "anthropic-refusal.1.sse",
            "anthropic-overloaded-midstream.1.sse",
        ] {
            let body = std::fs::read(samples_dir().join(file)).unwrap();
            let all = events(&body);
            for (i, data) in all.iter().enumerate() {
                let Ok(value) = serde_json::from_str::<Value>(data) else {
                    continue;
                };
                let mut mangled = Vec::new();
                variants(&value, &mut mangled, &value, &mut Vec::new());
                let mut texts: Vec<String> = mangled.iter().map(Value::to_string).collect();
                texts.extend(
                    (0..data.len())
                        .step_by(7)
                        .filter_map(|n| data.get(..n))
                        .map(str::to_string),
                );
                for text in texts {
                    tried += 1;
                    let mut a = Assembler::new();
                    for before in &all[..i] {
                        let _ = a.push_anthropic(before, &mut |_| {});
                    }
                    let _ = a.push_anthropic(&text, &mut |_| {});
                    for after in &all[i + 1..] {
                        let _ = a.push_anthropic(after, &mut |_| {});
                    }
                    let _ = a.finish();
                }
            }
        }
        assert!(tried > 1000, "{tried}");
    }

    fn push_all(a: &mut Assembler, events: &[Value]) -> (Shown, Result<(), ChunkError>) {
        let mut shown = Shown::default();
        for e in events {
            let r = a.push_anthropic(&e.to_string(), &mut |d| match d {
                StreamDelta::Text(t) => shown.text.push_str(t),
                StreamDelta::Reasoning(t) => shown.reasoning.push_str(t),
                StreamDelta::Refusal(t) => shown.refusal.push_str(t),
                StreamDelta::Flush => {}
            });
            if r.is_err() {
                return (shown, r);
            }
        }
        (shown, Ok(()))
    }

    fn start(index: u64, block: Value) -> Value {
        json!({"type": "content_block_start", "index": index, "content_block": block})
    }

    fn delta(index: u64, delta: Value) -> Value {
        json!({"type": "content_block_delta", "index": index, "delta": delta})
    }

    fn stop(index: u64) -> Value {
        json!({"type": "content_block_stop", "index": index})
    }

    fn end(reason: &str) -> [Value; 2] {
        [
            json!({"type": "message_delta", "delta": {"stop_reason": reason}, "usage": {"output_tokens": 9}}),
            json!({"type": "message_stop"}),
        ]
    }

    #[test]
    fn error_events_busy_or_not() {
        for (kind, busy) in [
            ("overloaded_error", true),
            ("rate_limit_error", true),
            ("api_error", true),
            ("invalid_request_error", false),
            ("authentication_error", false),
        ] {
            let mut a = Assembler::new();
            let event = json!({"type": "error", "error": {"type": kind, "message": "Nope"}});
            let err = a
                .push_anthropic(&format!("{event}     "), &mut |_| {})
                .unwrap_err();
            assert_eq!(matches!(err, ChunkError::Busy(_)), busy, "{kind}: {err:?}");
            assert_eq!(err.to_string(), format!("Nope ({kind})"));
            assert!(busy || matches!(err, ChunkError::Server(_)));
        }
        let mut a = Assembler::new();
        assert!(matches!(
            a.push_anthropic("{not json", &mut |_| {}),
            Err(ChunkError::Malformed { .. })
        ));
        for odd in ["[1,2]", "\"ping\"", "{\"no\":\"type\"}", "7"] {
            assert!(matches!(
                a.push_anthropic(odd, &mut |_| {}),
                Err(ChunkError::Unexpected { .. })
            ));
        }
        // Events it does not know, and pings, are nothing.
        assert_eq!(a.push_anthropic(r#"{"type":"ping"}"#, &mut |_| {}), Ok(()));
        assert_eq!(
            a.push_anthropic(r#"{"type":"new_thing"}"#, &mut |_| {}),
            Ok(())
        );
        assert!(!a.started());
    }

    #[test]
    fn blocks_that_contradict_themselves_are_errors() {
        let mut a = Assembler::new();
        let (_, r) = push_all(
            &mut a,
            &[
                start(0, json!({"type": "text", "text": ""})),
                start(0, json!({"type": "text"})),
            ],
        );
        assert!(matches!(r, Err(ChunkError::Unexpected { .. })), "{r:?}");
        let mut a = Assembler::new();
        let (_, r) = push_all(
            &mut a,
            &[start(0, json!({"type": "tool_use", "name": "f"}))],
        );
        assert!(matches!(r, Err(ChunkError::Unexpected { .. })), "{r:?}");
        let mut a = Assembler::new();
        let (_, r) = push_all(
            &mut a,
            &[json!({"type": "content_block_delta", "delta": {}})],
        );
        assert!(matches!(r, Err(ChunkError::Unexpected { .. })), "{r:?}");
        // A delta for a block never started is ignored.
        let mut a = Assembler::new();
        let (shown, r) = push_all(
            &mut a,
            &[delta(5, json!({"type": "text_delta", "text": "x"}))],
        );
        assert_eq!((shown.text.as_str(), r), ("", Ok(())));
    }

    /// Two thinking blocks (one only a signature), a redacted one, text, two calls (one
    /// whose arguments come only in its start block): shown, kept and called as they came.
    #[test]
    fn thinking_redacted_text_and_calls_in_one_reply() {
        let mut a = Assembler::new();
        let mut events = vec![
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 10, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 5, "output_tokens": 1}}}),
            start(
                0,
                json!({"type": "thinking", "thinking": "", "signature": ""}),
            ),
            delta(0, json!({"type": "thinking_delta", "thinking": "first"})),
            delta(0, json!({"type": "signature_delta", "signature": "S1"})),
            stop(0),
            start(1, json!({"type": "redacted_thinking", "data": "ENC"})),
            stop(1),
            start(
                2,
                json!({"type": "thinking", "thinking": "", "signature": ""}),
            ),
            delta(2, json!({"type": "signature_delta", "signature": "S2"})),
            stop(2),
            start(
                3,
                json!({"type": "thinking", "thinking": "", "signature": ""}),
            ),
            delta(3, json!({"type": "thinking_delta", "thinking": "second"})),
            delta(3, json!({"type": "signature_delta", "signature": "S3"})),
            stop(3),
            start(4, json!({"type": "text", "text": ""})),
            delta(4, json!({"type": "text_delta", "text": "Let me"})),
            delta(4, json!({"type": "text_delta", "text": " look."})),
            stop(4),
            start(
                5,
                json!({"type": "tool_use", "id": "toolu_a", "name": "bash", "input": {}}),
            ),
            delta(5, json!({"type": "input_json_delta", "partial_json": ""})),
            delta(
                5,
                json!({"type": "input_json_delta", "partial_json": "{\"command\":"}),
            ),
            delta(
                5,
                json!({"type": "input_json_delta", "partial_json": " \"ls\"}"}),
            ),
            stop(5),
            start(
                6,
                json!({"type": "tool_use", "id": "toolu_b", "name": "read", "input": {"path": "x"}}),
            ),
            stop(6),
        ];
        events.extend(end("tool_use"));
        let (shown, r) = push_all(&mut a, &events[..events.len() - 1]);
        assert_eq!(r, Ok(()));
        assert_eq!(a.finish_reason(), None, "no finish before message_stop");
        push_all(&mut a, &events[events.len() - 1..]).1.unwrap();
        let reply = a.finish();
        assert_eq!(shown.reasoning, "first\n\nsecond");
        assert_eq!(reply.reasoning, "first\n\nsecond");
        assert_eq!(shown.text, "Let me look.");
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            reply.tool_calls,
            [
                crate::conversation::ToolCall::new("toolu_a", "bash", "{\"command\": \"ls\"}"),
                crate::conversation::ToolCall::new("toolu_b", "read", "{\"path\":\"x\"}"),
            ]
        );
        assert_eq!(
            reply.reasoning_details,
            [
                json!({"type": "thinking", "thinking": "first", "signature": "S1"}),
                json!({"type": "redacted_thinking", "data": "ENC"}),
                json!({"type": "thinking", "thinking": "", "signature": "S2"}),
                json!({"type": "thinking", "thinking": "second", "signature": "S3"}),
                json!({"type": "text"}),
                json!({"type": "tool_use", "id": "toolu_a"}),
                json!({"type": "tool_use", "id": "toolu_b"}),
            ]
        );
        let state = reply.reasoning_state().unwrap();
        assert_eq!(state.api, Some(Api::Anthropic));
        // message_delta's usage had only the output: the input side stays message_start's.
        let u = reply.usage.unwrap();
        assert_eq!(
            (u.prompt_tokens, u.completion_tokens, u.total_tokens),
            (115, 9, 124)
        );
        assert_eq!(
            (u.cached_tokens, u.cache_write_tokens),
            (Some(100), Some(5))
        );
    }

    /// A block the server ran keeps the input its deltas built and is never a call; a
    /// citation is nothing to show.
    #[test]
    fn server_blocks_are_kept_whole_and_never_called() {
        let mut a = Assembler::new();
        let mut events = vec![
            start(
                0,
                json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}),
            ),
            delta(
                0,
                json!({"type": "input_json_delta", "partial_json": "{\"query\": "}),
            ),
            delta(
                0,
                json!({"type": "input_json_delta", "partial_json": "\"tokyo\"}"}),
            ),
            stop(0),
            start(
                1,
                json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [{"type": "web_search_result", "encrypted_content": "E"}]}),
            ),
            stop(1),
            start(2, json!({"type": "text", "text": "", "citations": []})),
            delta(
                2,
                json!({"type": "citations_delta", "citation": {"cited_text": "c"}}),
            ),
            delta(2, json!({"type": "text_delta", "text": "14M"})),
            stop(2),
        ];
        events.extend(end("end_turn"));
        push_all(&mut a, &events).1.unwrap();
        let reply = a.finish();
        assert!(reply.tool_calls.is_empty());
        assert_eq!(reply.text, "14M");
        assert_eq!(
            reply.reasoning_details[0],
            json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "tokyo"}})
        );
        assert_eq!(
            reply.reasoning_details[1]["content"][0]["encrypted_content"],
            "E"
        );
        assert_eq!(reply.reasoning_details[2], json!({"type": "text"}));
    }

    /// A refusal: the explanation when there is one; else the text that streamed (not
    /// shown twice); else the bare word.
    #[test]
    fn refusals_with_and_without_an_explanation() {
        let refusal_end = |details: Value| {
            vec![
                json!({"type": "message_delta", "delta": {"stop_reason": "refusal", "stop_details": details}}),
                json!({"type": "message_stop"}),
            ]
        };
        let mut a = Assembler::new();
        let (shown, _) = push_all(&mut a, &refusal_end(json!({"explanation": "Not that."})));
        let reply = a.finish();
        assert_eq!(
            (shown.refusal.as_str(), reply.refusal.as_str()),
            ("Not that.", "Not that.")
        );
        assert_eq!(reply.finish_reason.as_deref(), Some("content_filter"));

        let mut a = Assembler::new();
        let mut events = vec![
            start(0, json!({"type": "text", "text": ""})),
            delta(0, json!({"type": "text_delta", "text": "I can't help."})),
        ];
        events.extend(refusal_end(json!(null)));
        let (shown, _) = push_all(&mut a, &events);
        let reply = a.finish();
        assert_eq!(shown.text, "I can't help.");
        assert_eq!(shown.refusal, "", "the text is not shown a second time");
        assert_eq!(
            (reply.text.as_str(), reply.refusal.as_str()),
            ("I can't help.", "I can't help.")
        );

        let mut a = Assembler::new();
        let (shown, _) = push_all(&mut a, &refusal_end(json!({})));
        assert_eq!(shown.refusal, "refusal");
        assert_eq!(a.finish().refusal, "refusal");
    }

    /// A whole message (a server that did not stream): blocks, calls from `input`, usage,
    /// finish.
    #[test]
    fn a_whole_message_reads_like_its_stream() {
        let mut a = Assembler::new();
        let message = json!({"type": "message", "role": "assistant", "content": [
            {"type": "thinking", "thinking": "hm", "signature": "SIG"},
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "toolu_x", "name": "read", "input": {"path": "a"}}
        ], "stop_reason": "tool_use", "usage": {"input_tokens": 3, "output_tokens": 4}});
        let (shown, r) = push_all(&mut a, &[message]);
        r.unwrap();
        let reply = a.finish();
        assert_eq!(
            (shown.reasoning.as_str(), shown.text.as_str()),
            ("hm", "Reading.")
        );
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(reply.tool_calls[0].function.arguments, "{\"path\":\"a\"}");
        assert_eq!(
            reply.reasoning_details,
            [
                json!({"type": "thinking", "thinking": "hm", "signature": "SIG"}),
                json!({"type": "text"}),
                json!({"type": "tool_use", "id": "toolu_x"}),
            ]
        );
        assert_eq!(
            reply.usage.unwrap().cached_tokens,
            None,
            "the server did not say"
        );
    }

    /// `message_stop` ends the reply: a delta, a block, an error or a second stop after it
    /// changes nothing. Each stop reason is said in rein's words.
    #[test]
    fn the_reply_ends_at_message_stop_and_says_why_in_reins_words() {
        for (stop_reason, reason) in [
            ("end_turn", "stop"),
            ("stop_sequence", "stop"),
            ("tool_use", "tool_calls"),
            ("max_tokens", "length"),
            ("refusal", "content_filter"),
        ] {
            let mut a = Assembler::new();
            let mut events = vec![
                start(0, json!({"type": "text", "text": ""})),
                delta(0, json!({"type": "text_delta", "text": "kept"})),
                stop(0),
            ];
            events.extend(end(stop_reason));
            events.extend([
                delta(0, json!({"type": "text_delta", "text": "LATE"})),
                start(
                    1,
                    json!({"type": "tool_use", "id": "toolu_9", "name": "bash", "input": {}}),
                ),
                json!({"type": "error", "error": {"type": "overloaded_error", "message": "late"}}),
                json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}}),
                json!({"type": "message_stop"}),
            ]);
            let (shown, result) = push_all(&mut a, &events);
            assert_eq!(result, Ok(()), "{stop_reason}");
            let reply = a.finish();
            assert!(!shown.text.contains("LATE"), "{stop_reason}");
            assert!(!reply.text.contains("LATE"), "{stop_reason}");
            assert!(reply.tool_calls.is_empty(), "{stop_reason}");
            assert_eq!(
                reply.finish_reason.as_deref(),
                Some(reason),
                "{stop_reason}"
            );
        }
    }
}
