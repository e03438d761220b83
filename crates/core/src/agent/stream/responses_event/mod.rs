//! The reader of OpenAI's Responses API (`POST /v1/responses`): the `data` of one SSE event
//! (or a whole non-streaming response object) in, pieces for the [`Assembler`] out.
//!
//! Each event's JSON `type` says what it is (the `event:` line only repeats it). Output
//! items are keyed by `output_index`:
//!
//! - `message` items: `response.output_text.delta` is text, `response.refusal.delta` a
//!   refusal; an item that streamed no delta shows the text of its `.done` events (or of
//!   `response.output_item.done`) instead, never both.
//! - `reasoning` items: `response.reasoning_summary_text.delta` (the summary, its parts
//!   separated by a blank line) and `response.reasoning_text.delta` (raw reasoning) are
//!   shown as reasoning; the reasoning of one item is set apart from the last by a blank
//!   line. A summary that streamed no delta shows its `.done` text.
//! - `function_call` items are tool calls: the id is the `call_id` (what the tool result
//!   answers), the name comes with the item, the arguments are the deltas, or the
//!   `.done` value when one came (it wins; the two are never added up).
//! - Any other item (a hosted tool the server ran itself: `web_search_call`, ...) is no
//!   tool call of rein's: it is only recorded.
//!
//! What the server needs back (with `store: false` nothing is kept on its side) is kept
//! as native items ([`crate::conversation::Reasoning::details`]), one per output item in
//! output order: a reasoning item whole as `response.output_item.done` gives it (its
//! `encrypted_content` differs from the `.added` copy) but without its `id`, which cannot
//! be looked up; a function call as `{"type": "function_call", "call_id"}`, a message as
//! `{"type": "message"}`, anything else as `{"type": ...}`: places the request writer
//! fills in from the stored message.
//!
//! The terminal event (`response.completed`, `response.incomplete`, `response.failed`)
//! ends the reply (nothing after it is read) and gives the finish reason in rein's words
//! (see [`super::finish`]: a completed reply is `stop`, or `tool_calls` when it called
//! tools; an incomplete one `length`, or `content_filter` when its
//! `incomplete_details.reason` says so; a failed one is an error) and the usage (input
//! tokens are the prompt, output tokens the completion, reasoning tokens included;
//! `input_tokens_details.cached_tokens` the cached part). Items it lists that never got
//! their `.done` event are finished from it; when nothing streamed at all, its output is
//! read whole, as a non-streaming body is. An `error` event, or a failed response, is a
//! [`ChunkError`]: [`ChunkError::Busy`] when it says to try again later (a rate limit, an
//! overload, a server error), else [`ChunkError::Server`]. Unknown events are ignored.
//! Nothing from the server is trusted to have any shape: a field of the wrong type is a
//! field that is not there.

pub(super) mod progress;

use serde_json::{Map, Value};

use super::assembler::{Assembler, CallPiece, StreamDelta};
use super::error_text::{error_message, snippet};
use super::ChunkError;
use crate::agent::events::Usage;
use crate::conversation::Api;

use progress::{Item, Kind};

impl Assembler {
    /// Feed the `data` of one Responses SSE event, or a whole non-streaming response.
    /// Visible pieces go to `on_delta`.
    pub(crate) fn push_responses(
        &mut self,
        data: &str,
        on_delta: &mut dyn FnMut(StreamDelta<'_>),
    ) -> Result<(), ChunkError> {
        self.api_is(Api::Responses);
        if self.responses.ended {
            return Ok(());
        }
        let data = self.joined_lone_halves(data);
        let event: Value = serde_json::from_str(&data).map_err(|e| ChunkError::Malformed {
            detail: e.to_string(),
            snippet: snippet(&data),
        })?;
        let Some(fields) = event.as_object() else {
            return Err(ChunkError::Unexpected {
                detail: "not a JSON object".into(),
                snippet: snippet(&data),
            });
        };
        let Some(kind) = fields.get("type").and_then(Value::as_str) else {
            return self.whole_body(&event, &data, on_delta);
        };
        let index = fields.get("output_index").and_then(Value::as_u64);
        let text = |key: &str| fields.get(key).and_then(Value::as_str).unwrap_or("");
        match kind {
            "response.output_item.added" => {
                if let Some(item) = fields.get("item").filter(|i| i.is_object()) {
                    self.item_added(index, item);
                }
            }
            "response.output_item.done" => {
                if let Some(item) = fields.get("item").filter(|i| i.is_object()) {
                    self.item_done(index, item, on_delta);
                }
            }
            "response.output_text.delta" => {
                let at = self.item_at(index, Kind::Message);
                let delta = text("delta");
                if !delta.is_empty() {
                    self.responses.items[at].text_shown = true;
                    self.push_text(delta, on_delta);
                }
            }
            "response.output_text.done" => {
                let at = self.item_at(index, Kind::Message);
                if !self.responses.items[at].text_shown {
                    self.responses.items[at].text_shown = true;
                    self.push_text(text("text"), on_delta);
                }
            }
            "response.refusal.delta" => {
                let at = self.item_at(index, Kind::Message);
                let delta = text("delta");
                if !delta.is_empty() {
                    self.responses.items[at].refusal_shown = true;
                    self.push_refusal(delta, on_delta);
                }
            }
            "response.refusal.done" => {
                let at = self.item_at(index, Kind::Message);
                let refusal = text("refusal");
                if !self.responses.items[at].refusal_shown && !refusal.is_empty() {
                    self.responses.items[at].refusal_shown = true;
                    self.push_refusal(refusal, on_delta);
                }
            }
            "response.reasoning_summary_text.delta" => {
                let at = self.item_at(index, Kind::Reasoning);
                let part = fields
                    .get("summary_index")
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                let delta = text("delta");
                if !delta.is_empty() {
                    self.responses.items[at].summary_streamed = true;
                    self.summary_piece(at, part, delta, on_delta);
                }
            }
            "response.reasoning_summary_text.done" => {
                let at = self.item_at(index, Kind::Reasoning);
                let part = fields
                    .get("summary_index")
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                let item = &self.responses.items[at];
                if !item.summary_streamed && !item.summary_parts.contains(&part) {
                    self.summary_piece(at, part, text("text"), on_delta);
                }
            }
            "response.reasoning_text.delta" => {
                let at = self.item_at(index, Kind::Reasoning);
                let delta = text("delta");
                if !delta.is_empty() {
                    if !self.responses.items[at].reasoning_text_shown {
                        self.responses.items[at].reasoning_text_shown = true;
                        self.reasoning_break(on_delta);
                    }
                    self.push_reasoning(delta, on_delta);
                }
            }
            "response.function_call_arguments.delta" => {
                let at = self.item_at(index, Kind::FunctionCall);
                self.responses.items[at].arguments.push_str(text("delta"));
                self.holds(text("delta").len());
            }
            "response.function_call_arguments.done" => {
                let at = self.item_at(index, Kind::FunctionCall);
                if let Some(arguments) = fields.get("arguments").and_then(Value::as_str) {
                    self.responses.items[at].arguments_done = Some(arguments.to_string());
                    self.holds(arguments.len());
                }
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                let status = kind.trim_start_matches("response.");
                let response = fields.get("response").unwrap_or(&Value::Null);
                return self.terminal(response, status, on_delta);
            }
            "error" => {
                // The error is the event itself, or an `error` object inside it.
                let error = fields
                    .get("error")
                    .filter(|e| e.is_object())
                    .unwrap_or(&event);
                return Err(failure(error));
            }
            // response.created, .in_progress, .queued, content parts, summary parts,
            // hosted tools' progress, and whatever comes next: nothing to show or keep.
            _ => {}
        }
        Ok(())
    }

    /// `data` with a UTF-16 surrogate pair split across events joined (see `surrogates`).
    fn joined_lone_halves<'d>(&mut self, data: &'d str) -> std::borrow::Cow<'d, str> {
        if self.lone_high.is_none() && !super::surrogates::may_hold_one(data) {
            return std::borrow::Cow::Borrowed(data);
        }
        match super::surrogates::repair(data, &mut self.lone_high) {
            Some(fixed) => std::borrow::Cow::Owned(fixed),
            None => std::borrow::Cow::Borrowed(data),
        }
    }

    /// A body without an event `type`: a whole response object (a server that did not
    /// stream), or an error.
    fn whole_body(
        &mut self,
        body: &Value,
        data: &str,
        on_delta: &mut dyn FnMut(StreamDelta<'_>),
    ) -> Result<(), ChunkError> {
        let has_output = body.get("output").is_some_and(Value::is_array);
        if !has_output {
            if let Some(error) = body.get("error").filter(|e| !e.is_null()) {
                return Err(failure(error));
            }
            if body.get("object").and_then(Value::as_str) != Some("response") {
                return Err(ChunkError::Unexpected {
                    detail: "neither a Responses event nor a response".into(),
                    snippet: snippet(data),
                });
            }
        }
        let status = body
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("completed")
            .to_string();
        self.terminal(body, &status, on_delta)
    }

    /// The terminal event's response (or a whole response): the items it lists that did
    /// not finish streaming, the usage, the finish reason; a failed response is an error.
    fn terminal(
        &mut self,
        response: &Value,
        status: &str,
        on_delta: &mut dyn FnMut(StreamDelta<'_>),
    ) -> Result<(), ChunkError> {
        let output = response
            .get("output")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        let nothing_streamed = self.responses.items.is_empty();
        for (k, item) in output.iter().enumerate() {
            if !item.is_object() {
                continue;
            }
            let index = Some(k as u64);
            if nothing_streamed {
                self.item_added(index, item);
                self.item_done(index, item, on_delta);
            } else if let Some(at) = self.find_item(index) {
                if !self.responses.items[at].finished {
                    self.item_done(index, item, on_delta);
                }
            }
        }
        // Calls whose item never finished: their arguments as they streamed.
        for at in 0..self.responses.items.len() {
            self.finish_call(at);
        }
        if let Some(usage) = response.get("usage").and_then(read_usage) {
            self.usage(usage);
        }
        let status = response
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or(status);
        let incomplete = response
            .get("incomplete_details")
            .and_then(|d| d.get("reason"))
            .and_then(Value::as_str);
        let called = self
            .responses
            .items
            .iter()
            .any(|i| i.kind == Kind::FunctionCall);
        self.responses.ended = true;
        self.finish_reason_is(super::finish::responses(status, incomplete, called));
        if status == "failed" {
            let error = response
                .get("error")
                .filter(|e| !e.is_null())
                .cloned()
                .unwrap_or_else(|| Value::String("the response failed".into()));
            return Err(failure(&error));
        }
        Ok(())
    }

    /// The position of the item at `index` among those seen.
    fn find_item(&self, index: Option<u64>) -> Option<usize> {
        self.responses
            .items
            .iter()
            .position(|i| i.output_index == index)
    }

    /// The item at `index`, made (of `kind`, with its place pushed) when it is new: a
    /// delta may come for an item whose `.added` did not.
    fn item_at(&mut self, index: Option<u64>, kind: Kind) -> usize {
        if let Some(at) = self.find_item(index) {
            return at;
        }
        let slot = self.items();
        self.push_item(place(kind, "", None));
        self.responses.items.push(Item {
            output_index: index,
            kind,
            slot,
            text_shown: false,
            refusal_shown: false,
            summary_streamed: false,
            summary_parts: Vec::new(),
            reasoning_text_shown: false,
            arguments: String::new(),
            arguments_done: None,
            call_id: None,
            name: None,
            call_started: false,
            call_finished: false,
            finished: false,
        });
        self.responses.items.len() - 1
    }

    /// `response.output_item.added`: the item's kind and place; a call is registered
    /// with its id and name.
    fn item_added(&mut self, index: Option<u64>, item: &Value) {
        let type_name = item.get("type").and_then(Value::as_str).unwrap_or("");
        let kind = Kind::of(type_name);
        let at = self.item_at(index, kind);
        self.responses.items[at].kind = kind;
        self.learn_call(at, item);
        let entry = &self.responses.items[at];
        let stored = match kind {
            Kind::Reasoning => kept_reasoning(item),
            _ => place(kind, type_name, entry.call_id.as_deref()),
        };
        let slot = entry.slot;
        self.set_item(slot, stored);
        let entry = &self.responses.items[at];
        if kind == Kind::FunctionCall && !entry.call_started {
            let piece = CallPiece {
                index: entry.output_index.and_then(|i| usize::try_from(i).ok()),
                id: entry.call_id.clone(),
                name: entry.name.clone(),
                ..CallPiece::default()
            };
            self.responses.items[at].call_started = true;
            self.push_call(0, piece);
        }
    }

    /// A function call item's `call_id` and `name`, when it carries them.
    fn learn_call(&mut self, at: usize, item: &Value) {
        let entry = &mut self.responses.items[at];
        if let Some(id) = item.get("call_id").and_then(Value::as_str) {
            if !id.is_empty() {
                entry.call_id = Some(id.to_string());
            }
        }
        if let Some(name) = item.get("name").and_then(Value::as_str) {
            if !name.is_empty() {
                entry.name = Some(name.to_string());
            }
        }
    }

    /// `response.output_item.done` (or the terminal event's copy of an item): the item
    /// as it ended. What it holds that did not stream is shown now.
    fn item_done(
        &mut self,
        index: Option<u64>,
        item: &Value,
        on_delta: &mut dyn FnMut(StreamDelta<'_>),
    ) {
        let type_name = item.get("type").and_then(Value::as_str).unwrap_or("");
        let kind = Kind::of(type_name);
        let at = self.item_at(index, kind);
        self.responses.items[at].kind = kind;
        self.responses.items[at].finished = true;
        self.learn_call(at, item);
        let slot = self.responses.items[at].slot;
        match kind {
            Kind::Message => {
                let parts = item
                    .get("content")
                    .and_then(Value::as_array)
                    .map_or(&[][..], Vec::as_slice);
                let joined = |kind: &str, field: &str| -> String {
                    parts
                        .iter()
                        .filter(|p| p.get("type").and_then(Value::as_str) == Some(kind))
                        .filter_map(|p| p.get(field).and_then(Value::as_str))
                        .collect()
                };
                if !self.responses.items[at].text_shown {
                    let text = joined("output_text", "text");
                    if !text.is_empty() {
                        self.responses.items[at].text_shown = true;
                        self.push_text(&text, on_delta);
                    }
                }
                if !self.responses.items[at].refusal_shown {
                    let refusal = joined("refusal", "refusal");
                    if !refusal.is_empty() {
                        self.responses.items[at].refusal_shown = true;
                        self.push_refusal(&refusal, on_delta);
                    }
                }
                if let Some(stored) = self.item_mut(slot) {
                    *stored = place(kind, type_name, None);
                }
            }
            Kind::Reasoning => {
                if !self.responses.items[at].summary_streamed {
                    let summary = item
                        .get("summary")
                        .and_then(Value::as_array)
                        .map_or(&[][..], Vec::as_slice);
                    for (part, s) in summary.iter().enumerate() {
                        let part = part as u64;
                        if self.responses.items[at].summary_parts.contains(&part) {
                            continue;
                        }
                        let text = s.get("text").and_then(Value::as_str).unwrap_or("");
                        self.summary_piece(at, part, text, on_delta);
                    }
                }
                self.set_item(slot, kept_reasoning(item));
            }
            Kind::FunctionCall => {
                if let Some(arguments) = item.get("arguments").and_then(Value::as_str) {
                    self.responses.items[at].arguments_done = Some(arguments.to_string());
                    self.holds(arguments.len());
                }
                let call_id = self.responses.items[at].call_id.clone();
                if let Some(stored) = self.item_mut(slot) {
                    *stored = place(kind, type_name, call_id.as_deref());
                }
                self.finish_call(at);
            }
            Kind::Other => {
                if let Some(stored) = self.item_mut(slot) {
                    *stored = place(kind, type_name, None);
                }
            }
        }
    }

    /// A function call's arguments to the assembler, once: the `.done` value when one
    /// came, else the deltas.
    fn finish_call(&mut self, at: usize) {
        let entry = &mut self.responses.items[at];
        if entry.kind != Kind::FunctionCall || entry.call_finished {
            return;
        }
        entry.call_finished = true;
        let arguments = match entry.arguments_done.take() {
            Some(done) => done,
            None => std::mem::take(&mut entry.arguments),
        };
        let piece = CallPiece {
            index: entry.output_index.and_then(|i| usize::try_from(i).ok()),
            id: entry.call_id.clone(),
            // The same name again changes nothing; a name learnt only now is set.
            name: entry.name.clone(),
            arguments,
            ..CallPiece::default()
        };
        entry.call_started = true;
        self.push_call(0, piece);
    }

    /// A piece of summary part `part` of the item at `at`: a new part is set apart from
    /// the reasoning before it by a blank line.
    fn summary_piece(
        &mut self,
        at: usize,
        part: u64,
        text: &str,
        on_delta: &mut dyn FnMut(StreamDelta<'_>),
    ) {
        if text.is_empty() {
            return;
        }
        let parts = &mut self.responses.items[at].summary_parts;
        if !parts.contains(&part) {
            parts.push(part);
            self.part_started();
            self.reasoning_break(on_delta);
        }
        self.push_reasoning(text, on_delta);
    }

    /// The blank line between two pieces of reasoning (none before the first).
    fn reasoning_break(&mut self, on_delta: &mut dyn FnMut(StreamDelta<'_>)) {
        if self.reasoning_len() > 0 {
            self.push_reasoning("\n\n", on_delta);
        }
    }
}

/// The native item kept for an output item that is not a reasoning item: its place.
fn place(kind: Kind, type_name: &str, call_id: Option<&str>) -> Value {
    let mut out = Map::new();
    let name = match kind {
        Kind::Message => "message",
        Kind::Reasoning => "reasoning",
        Kind::FunctionCall => "function_call",
        Kind::Other if type_name.is_empty() => "unknown",
        Kind::Other => type_name,
    };
    out.insert("type".into(), Value::String(name.into()));
    if kind == Kind::FunctionCall {
        out.insert(
            "call_id".into(),
            call_id.map_or(Value::Null, |id| Value::String(id.into())),
        );
    }
    if kind == Kind::Reasoning {
        out.insert("summary".into(), Value::Array(Vec::new()));
    }
    Value::Object(out)
}

/// A reasoning item as kept for the server: its type, summary, encrypted content and
/// (when it has any) content, without its id or status.
fn kept_reasoning(item: &Value) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), Value::String("reasoning".into()));
    let summary = item
        .get("summary")
        .filter(|s| s.is_array())
        .cloned()
        .unwrap_or_else(|| Value::Array(Vec::new()));
    out.insert("summary".into(), summary);
    if let Some(encrypted) = item.get("encrypted_content").filter(|e| e.is_string()) {
        out.insert("encrypted_content".into(), encrypted.clone());
    }
    if let Some(content) = item
        .get("content")
        .filter(|c| c.as_array().is_some_and(|c| !c.is_empty()))
    {
        out.insert("content".into(), content.clone());
    }
    Value::Object(out)
}

/// A response's `usage`: input tokens are the prompt, output tokens (reasoning
/// included) the completion.
fn read_usage(usage: &Value) -> Option<Usage> {
    let usage = usage.as_object()?;
    let count = |v: Option<&Value>| v.and_then(Value::as_u64);
    let prompt = count(usage.get("input_tokens")).unwrap_or(0);
    let completion = count(usage.get("output_tokens")).unwrap_or(0);
    let total = count(usage.get("total_tokens"))
        .filter(|&t| t > 0)
        .unwrap_or(prompt.saturating_add(completion));
    let cached = count(
        usage
            .get("input_tokens_details")
            .and_then(|d| d.get("cached_tokens")),
    );
    Some(Usage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: total,
        cached_tokens: cached.map(|c| c.min(prompt)),
        cache_write_tokens: None,
        estimated: false,
    })
}

/// Error codes and types that say to try again later.
const RETRYABLE: &[&str] = &[
    "rate_limit_exceeded",
    "rate_limit_error",
    "server_error",
    "internal_error",
    "internal_server_error",
    "overloaded",
    "overloaded_error",
    "server_is_overloaded",
    "service_unavailable",
    "slow_down",
];

/// An error the server reported (an `error` event, a failed response's `error`), as one
/// line with its code: busy when it says to try again later. A request larger than a
/// rate limit allows ("Request too large", code `rate_limit_exceeded`) never fits, so
/// it is not retried.
fn failure(error: &Value) -> ChunkError {
    let message = error_message(error);
    let field = |key: &str| error.get(key).and_then(Value::as_str);
    let code = field("code");
    let line = match code {
        Some(code) if !code.is_empty() && !message.contains(code) => {
            format!("{message} ({code})")
        }
        _ => message.clone(),
    };
    let line = snippet(&line);
    let busy = [code, field("type")]
        .into_iter()
        .flatten()
        .any(|c| RETRYABLE.contains(&c))
        && !message.contains("Request too large");
    if busy {
        ChunkError::Busy(line)
    } else {
        ChunkError::Server(line)
    }
}

#[cfg(test)]
mod tests;
