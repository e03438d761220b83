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

pub(super) mod progress;

use serde_json::{json, Map, Value};

use super::assembler::CallPiece;
use super::error_text::{error_message, snippet};
use super::{Assembler, ChunkError, StreamDelta};
use crate::agent::events::Usage;
use crate::conversation::Api;

use progress::{Block, Kind};

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
            // No deltas leave the JSON empty, which does not parse: the block stays whole.
            Kind::Server => {
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
mod tests;
