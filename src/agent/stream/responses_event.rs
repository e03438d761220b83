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

use serde_json::{Map, Value};

use super::assembler::{Assembler, CallPiece, StreamDelta};
use super::error_text::{error_message, snippet};
use super::ChunkError;
use crate::agent::events::Usage;
use crate::conversation::Api;

/// What the reader remembers between events: the output items seen so far.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    items: Vec<Item>,
    /// The terminal event (or a whole response) ended the reply: later events are not
    /// read.
    ended: bool,
}

/// The kind of an output item, as far as rein cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Message,
    Reasoning,
    FunctionCall,
    /// Anything else (hosted tools): recorded, never a tool call.
    Other,
}

impl Kind {
    fn of(kind: &str) -> Kind {
        match kind {
            "message" => Kind::Message,
            "reasoning" => Kind::Reasoning,
            "function_call" => Kind::FunctionCall,
            _ => Kind::Other,
        }
    }
}

/// One output item while it streams.
#[derive(Debug)]
struct Item {
    /// The `output_index` it is keyed by (`None` when the server sent none).
    output_index: Option<u64>,
    kind: Kind,
    /// Its place among the native items pushed ([`Assembler::push_item`]).
    slot: usize,
    /// Text was shown for it (deltas, or a `.done` text).
    text_shown: bool,
    refusal_shown: bool,
    /// A summary delta arrived: `.done` summaries are then not shown again.
    summary_streamed: bool,
    /// The summary parts shown, by `summary_index`.
    summary_parts: Vec<u64>,
    /// Raw reasoning text was shown for it.
    reasoning_text_shown: bool,
    /// A function call's arguments as streamed, and the `.done` value.
    arguments: String,
    arguments_done: Option<String>,
    call_id: Option<String>,
    name: Option<String>,
    /// The call was registered with the assembler (at `.added`).
    call_started: bool,
    /// The call's arguments went to the assembler (the item is finished).
    call_finished: bool,
    /// `response.output_item.done` (or the terminal event's copy) arrived.
    finished: bool,
}

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
mod tests {
    use super::*;
    use crate::agent::sse::SseParser;
    use crate::conversation::ToolCall;
    use serde_json::json;

    /// A sample: its name, its answers (file, content type, status), its expected turns.
    type Sample = (String, Vec<(String, String, u16)>, Vec<Value>);

    /// Every Responses sample of the native samples' index.
    fn samples() -> Vec<Sample> {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/provider-samples/native");
        let index: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).unwrap())
                .unwrap();
        let mut out = Vec::new();
        for sample in index["samples"].as_array().unwrap() {
            if sample["api"] != "responses" {
                continue;
            }
            let files = sample["responses"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    let path = dir.join(r["file"].as_str().unwrap());
                    (
                        path.display().to_string(),
                        r["headers"]["Content-Type"]
                            .as_str()
                            .unwrap_or("")
                            .to_string(),
                        r["status"].as_u64().unwrap() as u16,
                    )
                })
                .collect();
            out.push((
                sample["name"].as_str().unwrap().to_string(),
                files,
                sample["expect"]["turns"].as_array().unwrap().clone(),
            ));
        }
        assert_eq!(out.len(), 14, "the 14 Responses samples");
        out
    }

    /// What a reader made of one body: the shown pieces, the reply, the first error.
    #[derive(Debug, Default)]
    struct Read {
        text: String,
        reasoning: String,
        refusal: String,
        reply: AssembledReplyView,
        error: Option<ChunkError>,
    }

    #[derive(Debug, Default)]
    struct AssembledReplyView {
        text: String,
        reasoning: String,
        refusal: String,
        calls: Vec<ToolCall>,
        finish_reason: Option<String>,
        usage: Option<Usage>,
        items: Vec<Value>,
        api: Option<Api>,
    }

    /// `body` read as the client reads it: the data of each complete SSE event (or the
    /// whole body when it is not a stream) until the first error.
    fn read(body: &[u8], sse: bool) -> Read {
        let mut events = Vec::new();
        if sse {
            let mut parser = SseParser::default();
            parser.feed(body).unwrap();
            while let Some(event) = parser.next_event() {
                events.push(event);
            }
        } else {
            events.push(String::from_utf8_lossy(body).into_owned());
        }
        let mut out = Read::default();
        let mut a = Assembler::new();
        for data in &events {
            let data = data.trim();
            if data.is_empty() {
                continue;
            }
            let mut on = |d: StreamDelta<'_>| match d {
                StreamDelta::Text(t) => out.text.push_str(t),
                StreamDelta::Reasoning(t) => out.reasoning.push_str(t),
                StreamDelta::Refusal(t) => out.refusal.push_str(t),
                StreamDelta::Flush => {}
            };
            if let Err(e) = a.push_responses(data, &mut on) {
                out.error = Some(e);
                break;
            }
        }
        let r = a.finish();
        out.reply = AssembledReplyView {
            text: r.text,
            reasoning: r.reasoning,
            refusal: r.refusal,
            calls: r.tool_calls,
            finish_reason: r.finish_reason,
            usage: r.usage,
            items: r.reasoning_details,
            api: r.api,
        };
        out
    }

    /// The JSON of each event of an SSE body.
    fn events(body: &[u8]) -> Vec<Value> {
        let mut parser = SseParser::default();
        parser.feed(body).unwrap();
        let mut out = Vec::new();
        while let Some(event) = parser.next_event() {
            if let Ok(v) = serde_json::from_str(&event) {
                out.push(v);
            }
        }
        out
    }

    /// The output items of a body as they ended: each `response.output_item.done` item
    /// (or, for a whole response, its `output`).
    fn done_items(body: &[u8], sse: bool) -> Vec<Value> {
        if !sse {
            let v: Value = serde_json::from_slice(body).unwrap();
            return v["output"].as_array().cloned().unwrap_or_default();
        }
        events(body)
            .into_iter()
            .filter(|e| e["type"] == "response.output_item.done")
            .map(|e| e["item"].clone())
            .collect()
    }

    fn check(problems: &mut Vec<String>, at: &str, what: &str, got: Value, want: &Value) {
        if got != *want {
            problems.push(format!("{at}: {what} {got} instead of {want}"));
        }
    }

    /// Every sample's every answer read through `push_responses`: what is shown, the
    /// calls, the finish reason, the usage and the error are what `expect.turns` says;
    /// the native items are one per output item, reasoning items the `.done` copy
    /// without id (encrypted content included), calls and messages their places.
    #[test]
    fn every_responses_sample_reads_as_expected() {
        let mut problems = Vec::new();
        let mut checked = 0;
        for (name, files, turns) in samples() {
            for (k, ((file, content_type, status), want)) in files.iter().zip(&turns).enumerate() {
                if *status != 200 {
                    continue;
                }
                checked += 1;
                let at = format!("{name} response {}", k + 1);
                let body = std::fs::read(file).unwrap();
                let sse = content_type.contains("event-stream");
                let got = read(&body, sse);
                let r = &got.reply;
                check(
                    &mut problems,
                    &at,
                    "shown text",
                    json!(got.text),
                    &want["text"],
                );
                check(&mut problems, &at, "text", json!(r.text), &want["text"]);
                check(
                    &mut problems,
                    &at,
                    "shown reasoning",
                    json!(got.reasoning),
                    &want["reasoning"],
                );
                check(
                    &mut problems,
                    &at,
                    "reasoning",
                    json!(r.reasoning),
                    &want["reasoning"],
                );
                check(
                    &mut problems,
                    &at,
                    "shown refusal",
                    json!(got.refusal),
                    &want["refusal"],
                );
                check(
                    &mut problems,
                    &at,
                    "refusal",
                    json!(r.refusal),
                    &want["refusal"],
                );
                let calls: Vec<Value> = r
                    .calls
                    .iter()
                    .map(|c| json!({"id": c.id, "name": c.function.name, "arguments": c.function.arguments}))
                    .collect();
                check(
                    &mut problems,
                    &at,
                    "tool calls",
                    json!(calls),
                    &want["tool_calls"],
                );
                // The sample says the API's status; rein says its own word.
                let want_finish = want["finish_reason"].as_str().map(|status| {
                    let called = want["tool_calls"].as_array().is_some_and(|c| !c.is_empty());
                    super::super::finish::responses(status, None, called)
                });
                check(
                    &mut problems,
                    &at,
                    "finish reason",
                    json!(r.finish_reason),
                    &json!(want_finish),
                );
                let usage = r.usage.map(|u| {
                    json!({
                        "prompt_tokens": u.prompt_tokens,
                        "completion_tokens": u.completion_tokens,
                        "total_tokens": u.total_tokens,
                        "cached_tokens": u.cached_tokens.unwrap_or(0),
                    })
                });
                let mut want_usage = want["usage"].clone();
                if let Some(u) = want_usage.as_object_mut() {
                    u.remove("reasoning_tokens");
                }
                check(&mut problems, &at, "usage", json!(usage), &want_usage);
                match (&got.error, want["error"].as_str()) {
                    (None, None) => {}
                    (Some(e), Some(w)) if e.to_string().contains(w) => {
                        if e.to_string().contains('\n') {
                            problems.push(format!("{at}: the error is not one line: {e}"));
                        }
                    }
                    (e, w) => problems.push(format!("{at}: error {e:?} instead of {w:?}")),
                }
                check(&mut problems, &at, "api", json!(r.api), &json!("responses"));

                // The native items: one per output item, in output order.
                let done = done_items(&body, sse);
                if r.items.len() != done.len() {
                    problems.push(format!(
                        "{at}: {} native items for {} output items",
                        r.items.len(),
                        done.len()
                    ));
                }
                for (kept, item) in r.items.iter().zip(&done) {
                    let want = match item["type"].as_str() {
                        Some("reasoning") => {
                            let mut w = item.clone();
                            let o = w.as_object_mut().unwrap();
                            o.remove("id");
                            o.remove("status");
                            if o.get("content")
                                .and_then(Value::as_array)
                                .is_some_and(|c| c.is_empty())
                            {
                                o.remove("content");
                            }
                            w
                        }
                        Some("function_call") => {
                            json!({"type": "function_call", "call_id": item["call_id"]})
                        }
                        Some(t) => json!({"type": t}),
                        None => json!(null),
                    };
                    check(&mut problems, &at, "native item", kept.clone(), &want);
                }
                // The echo list: the reasoning items' encrypted content, as long as
                // recorded, and the calls' call_ids.
                let echo = want["echo"].as_array().cloned().unwrap_or_default();
                let kept: Vec<&Value> = r
                    .items
                    .iter()
                    .filter(|i| matches!(i["type"].as_str(), Some("reasoning" | "function_call")))
                    .collect();
                check(
                    &mut problems,
                    &at,
                    "echoed items",
                    json!(kept.len()),
                    &json!(if echo.is_empty() {
                        kept.len()
                    } else {
                        echo.len()
                    }),
                );
                for (kept, echo) in kept.iter().zip(&echo) {
                    if echo["type"] == "reasoning" {
                        let len = kept["encrypted_content"].as_str().map_or(0, str::len);
                        check(
                            &mut problems,
                            &at,
                            "encrypted content length",
                            json!(len),
                            &echo["encrypted_content_len"],
                        );
                    } else {
                        check(
                            &mut problems,
                            &at,
                            "call_id",
                            kept["call_id"].clone(),
                            &echo["call_id"],
                        );
                    }
                    if kept.get("id").is_some() {
                        problems.push(format!("{at}: a native item kept its id: {kept}"));
                    }
                }
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
        assert_eq!(checked, 14, "every answer with a body to read");
    }

    /// Each stream cut at random points, and written in random pieces: nothing panics,
    /// what a cut stream shows is the start of what the whole shows, and a stream cut
    /// before its terminal event has no finish reason (the client calls it cut).
    #[test]
    fn streams_cut_anywhere_have_no_finish_reason_and_never_panic() {
        let mut seed: u64 = 0x5EED_2700;
        let mut next = |n: usize| {
            // SplitMix64.
            seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = seed;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) % n.max(1) as u64) as usize
        };
        let mut cuts = 0;
        for (name, files, _) in samples() {
            for (file, content_type, status) in files {
                if status != 200 || !content_type.contains("event-stream") {
                    continue;
                }
                let body = std::fs::read(&file).unwrap();
                let whole = read(&body, true);
                let terminal = |body: &[u8]| {
                    events(body).iter().any(|e| {
                        matches!(
                            e["type"].as_str(),
                            Some("response.completed" | "response.incomplete" | "response.failed")
                        )
                    })
                };
                for _ in 0..40 {
                    let cut = next(body.len());
                    let part = read(&body[..cut], true);
                    cuts += 1;
                    let at = format!("{name}: {file} cut at {cut}");
                    if !terminal(&body[..cut]) {
                        assert_eq!(part.reply.finish_reason, None, "{at}");
                    }
                    assert!(whole.text.starts_with(&part.text), "{at}");
                    assert!(whole.reasoning.starts_with(&part.reasoning), "{at}");
                    assert!(whole.refusal.starts_with(&part.refusal), "{at}");
                    // A cut inside an event's data, fed as if complete: an error at
                    // most, never a panic.
                    let mut a = Assembler::new();
                    let tail = String::from_utf8_lossy(&body[cut..]);
                    let piece = tail.split("data: ").nth(1).unwrap_or("");
                    let piece = &piece[..piece.len() / 2];
                    let _ = a.push_responses(piece, &mut |_| {});
                }
                // The whole stream in random pieces reads as the whole.
                let mut parser = SseParser::default();
                let mut a = Assembler::new();
                let mut text = String::new();
                let mut rest = &body[..];
                while !rest.is_empty() {
                    let n = 1 + next(64).min(rest.len() - 1);
                    parser.feed(&rest[..n]).unwrap();
                    rest = &rest[n..];
                    while let Some(event) = parser.next_event() {
                        let _ = a.push_responses(event.trim(), &mut |d| {
                            if let StreamDelta::Text(t) = d {
                                text.push_str(t)
                            }
                        });
                    }
                }
                let r = a.finish();
                assert_eq!(text, whole.text, "{name}: {file} in pieces");
                assert_eq!(r.finish_reason, whole.reply.finish_reason, "{name}");
                assert_eq!(r.tool_calls, whole.reply.calls, "{name}");
                assert_eq!(r.reasoning_details, whole.reply.items, "{name}");
            }
        }
        assert!(cuts >= 400);
    }

    /// What `feed` made of some events: the last push's result, the reply, what was
    /// shown (reasoning in brackets, a refusal in braces).
    type Fed = (
        Result<(), ChunkError>,
        crate::agent::stream::AssembledReply,
        String,
    );

    fn feed(events: &[Value]) -> Fed {
        let mut a = Assembler::new();
        let mut shown = String::new();
        let mut result = Ok(());
        for e in events {
            result = a.push_responses(&e.to_string(), &mut |d| match d {
                StreamDelta::Text(t) => shown.push_str(t),
                StreamDelta::Reasoning(t) => shown.push_str(&format!("[{t}]")),
                StreamDelta::Refusal(t) => shown.push_str(&format!("{{{t}}}")),
                StreamDelta::Flush => {}
            });
            if result.is_err() {
                break;
            }
        }
        (result, a.finish(), shown)
    }

    /// Arguments that stream and then come whole in `.done` are the `.done` value, not
    /// both; a `.done` value that differs from the deltas wins.
    #[test]
    fn a_calls_arguments_are_the_done_value_never_doubled() {
        let added = json!({"type":"response.output_item.added","output_index":0,
            "item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"bash","arguments":""}});
        let delta = |d: &str| json!({"type":"response.function_call_arguments.delta","output_index":0,"delta":d});
        let done = |args: &str| json!({"type":"response.function_call_arguments.done","output_index":0,"arguments":args});
        let item_done = |args: &str| {
            json!({"type":"response.output_item.done","output_index":0,
            "item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"bash","arguments":args}})
        };
        let completed = json!({"type":"response.completed","response":{"status":"completed"}});
        let (r, reply, _) = feed(&[
            added.clone(),
            delta("{\"a\""),
            delta(":1}"),
            done("{\"a\":1}"),
            item_done("{\"a\":1}"),
            completed.clone(),
        ]);
        assert_eq!(r, Ok(()));
        assert_eq!(
            reply.tool_calls,
            [ToolCall::new("call_1", "bash", "{\"a\":1}")]
        );
        // The item's final arguments win over the deltas.
        let (_, reply, _) = feed(&[
            added.clone(),
            delta("{\"a\":"),
            item_done("{\"a\":2}"),
            completed.clone(),
        ]);
        assert_eq!(reply.tool_calls[0].function.arguments, "{\"a\":2}");
        // Without any `.done`: the deltas, when the response completes.
        let (_, reply, _) = feed(&[added, delta("{}"), completed]);
        assert_eq!(reply.tool_calls, [ToolCall::new("call_1", "bash", "{}")]);
        assert_eq!(
            reply.reasoning_details,
            [json!({"type":"function_call","call_id":"call_1"})]
        );
    }

    /// Error events and failed responses: busy (retried) for rate limits, overloads and
    /// server errors, a plain server error otherwise; the message is one line with its
    /// code.
    #[test]
    fn errors_in_the_stream_are_busy_or_not() {
        let (r, _, _) = feed(&[
            json!({"type":"error","code":"rate_limit_exceeded","message":"Rate limit reached. Please try again in 2s.","param":null}),
        ]);
        assert_eq!(
            r,
            Err(ChunkError::Busy(
                "Rate limit reached. Please try again in 2s. (rate_limit_exceeded)".into()
            ))
        );
        let (r, _, _) = feed(&[
            json!({"type":"error","error":{"type":"server_error","code":"server_error","message":"The server had an error\nwhile processing."}}),
        ]);
        assert_eq!(
            r,
            Err(ChunkError::Busy(
                "The server had an error while processing. (server_error)".into()
            ))
        );
        let (r, _, _) = feed(&[
            json!({"type":"error","code":"context_length_exceeded","message":"Your input exceeds the context window."}),
        ]);
        assert!(
            matches!(r, Err(ChunkError::Server(m)) if m.contains("context window") && m.contains("context_length_exceeded"))
        );
        let failed = |error: Value| json!({"type":"response.failed","response":{"status":"failed","error":error,"output":[]}});
        let (r, reply, _) = feed(&[failed(
            json!({"code":"server_is_overloaded","message":"Overloaded"}),
        )]);
        assert_eq!(
            r,
            Err(ChunkError::Busy("Overloaded (server_is_overloaded)".into()))
        );
        assert_eq!(reply.finish_reason.as_deref(), Some("failed"));
        // A request larger than the limit never fits: not retried.
        let (r, _, _) = feed(&[failed(
            json!({"code":"rate_limit_exceeded","message":"Request too large for gpt-4o-mini."}),
        )]);
        assert!(matches!(r, Err(ChunkError::Server(_))), "{r:?}");
        let (r, _, _) = feed(&[failed(Value::Null)]);
        assert_eq!(r, Err(ChunkError::Server("the response failed".into())));
        // A whole body that is an error.
        let mut a = Assembler::new();
        let r = a.push_responses(
            r#"{"error":{"message":"Bad key","code":"invalid_api_key"}}"#,
            &mut |_| {},
        );
        assert_eq!(
            r,
            Err(ChunkError::Server("Bad key (invalid_api_key)".into()))
        );
    }

    /// Malformed input is an error, never a panic; fields of the wrong type are absent.
    #[test]
    fn malformed_events_are_errors_or_nothing() {
        let mut a = Assembler::new();
        let mut push = |s: &str| a.push_responses(s, &mut |_| {});
        assert!(matches!(
            push("{not json"),
            Err(ChunkError::Malformed { .. })
        ));
        assert!(matches!(push("[1,2]"), Err(ChunkError::Unexpected { .. })));
        assert!(matches!(
            push("{\"foo\":1}"),
            Err(ChunkError::Unexpected { .. })
        ));
        for odd in [
            r#"{"type":"response.output_text.delta","output_index":"x","delta":5}"#,
            r#"{"type":"response.output_item.added","output_index":0,"item":7}"#,
            r#"{"type":"response.output_item.done","output_index":18446744073709551615,"item":{"type":"function_call","call_id":3,"arguments":{}}}"#,
            r#"{"type":"response.reasoning_summary_text.delta","summary_index":-1,"delta":null}"#,
            r#"{"type":"response.function_call_arguments.done","output_index":4,"arguments":[]}"#,
            r#"{"type":"response.completed","response":{"output":[1,{"type":null}],"usage":{"input_tokens":"9"}}}"#,
            r#"{"type":"response.completed","response":7}"#,
            r#"{"type":"some.future.event","whatever":[{}]}"#,
        ] {
            assert_eq!(push(odd), Ok(()), "{odd}");
        }
    }

    /// Reasoning: summary parts and items set apart by a blank line, raw reasoning text
    /// after its item's summary; a summary that streamed no delta shows its `.done` text.
    /// Text from `.done` only when no delta came; a refusal is a refusal.
    #[test]
    fn reasoning_parts_and_done_texts() {
        let ev = |t: &str, rest: Value| {
            let mut v = rest;
            v["type"] = json!(t);
            v
        };
        let (r, reply, shown) = feed(&[
            ev(
                "response.output_item.added",
                json!({"output_index":0,"item":{"type":"reasoning","id":"rs_1","encrypted_content":"ADDED","summary":[]}}),
            ),
            ev(
                "response.reasoning_summary_text.delta",
                json!({"output_index":0,"summary_index":0,"delta":"a"}),
            ),
            ev(
                "response.reasoning_summary_text.delta",
                json!({"output_index":0,"summary_index":1,"delta":"b"}),
            ),
            ev(
                "response.reasoning_summary_text.done",
                json!({"output_index":0,"summary_index":1,"text":"b"}),
            ),
            ev(
                "response.reasoning_text.delta",
                json!({"output_index":0,"delta":"raw"}),
            ),
            ev(
                "response.output_item.done",
                json!({"output_index":0,"item":{"type":"reasoning","id":"rs_1","status":"completed","encrypted_content":"DONE","summary":[{"type":"summary_text","text":"a"},{"type":"summary_text","text":"b"}]}}),
            ),
            // A second reasoning item that streamed nothing: its summary from `.done`.
            ev(
                "response.output_item.done",
                json!({"output_index":1,"item":{"type":"reasoning","id":"rs_2","summary":[{"type":"summary_text","text":"c"}]}}),
            ),
            ev(
                "response.output_item.added",
                json!({"output_index":2,"item":{"type":"message","id":"msg_1","content":[]}}),
            ),
            ev(
                "response.output_text.done",
                json!({"output_index":2,"text":"hi"}),
            ),
            ev(
                "response.output_item.done",
                json!({"output_index":2,"item":{"type":"message","id":"msg_1","content":[{"type":"output_text","text":"hi"},{"type":"refusal","refusal":"no"}]}}),
            ),
            ev(
                "response.output_item.done",
                json!({"output_index":3,"item":{"type":"web_search_call","id":"ws_1","status":"completed"}}),
            ),
            ev(
                "response.incomplete",
                json!({"response":{"status":"incomplete","usage":{"input_tokens":10,"output_tokens":5,"input_tokens_details":{"cached_tokens":4}}}}),
            ),
        ]);
        assert_eq!(r, Ok(()));
        assert_eq!(shown, "[a][\n\n][b][\n\n][raw][\n\n][c]hi{no}");
        assert_eq!(reply.reasoning, "a\n\nb\n\nraw\n\nc");
        assert_eq!(reply.text, "hi");
        assert_eq!(reply.refusal, "no");
        assert_eq!(reply.finish_reason.as_deref(), Some("length"));
        let usage = reply.usage.unwrap();
        assert_eq!(
            (
                usage.prompt_tokens,
                usage.completion_tokens,
                usage.total_tokens,
                usage.cached_tokens
            ),
            (10, 5, 15, Some(4))
        );
        assert_eq!(
            reply.reasoning_details,
            [
                json!({"type":"reasoning","encrypted_content":"DONE","summary":[{"type":"summary_text","text":"a"},{"type":"summary_text","text":"b"}]}),
                json!({"type":"reasoning","summary":[{"type":"summary_text","text":"c"}]}),
                json!({"type":"message"}),
                json!({"type":"web_search_call"}),
            ]
        );
        assert!(reply.tool_calls.is_empty(), "a hosted tool is no call");
    }

    /// A whole (non-streaming) response reads like the stream; so does a terminal event
    /// when nothing streamed before it.
    #[test]
    fn a_whole_response_reads_like_its_stream() {
        let response = json!({"object":"response","status":"completed","output":[
            {"type":"reasoning","id":"rs_1","encrypted_content":"E","summary":[{"type":"summary_text","text":"think"}]},
            {"type":"function_call","id":"fc_1","call_id":"call_1","name":"read_file","arguments":"{}"},
            {"type":"message","id":"msg_1","content":[{"type":"output_text","text":"done"}]}
        ],"usage":{"input_tokens":3,"output_tokens":4,"total_tokens":7}});
        let mut a = Assembler::new();
        let mut shown = String::new();
        a.push_responses(&response.to_string(), &mut |d| {
            if let StreamDelta::Text(t) | StreamDelta::Reasoning(t) = d {
                shown.push_str(t)
            }
        })
        .unwrap();
        let whole = a.finish();
        assert_eq!(shown, "thinkdone");
        assert_eq!(
            whole.tool_calls,
            [ToolCall::new("call_1", "read_file", "{}")]
        );
        assert_eq!(whole.finish_reason.as_deref(), Some("tool_calls"));
        let (_, terminal, _) = feed(&[json!({"type":"response.completed","response":response})]);
        assert_eq!(terminal, whole);
    }

    /// The terminal event ends the reply: a delta, an item, an error or a second terminal
    /// event after it changes nothing. The finish reason says why it ended, in rein's
    /// words: a content filter is not the token limit.
    #[test]
    fn the_reply_ends_at_its_terminal_event_and_says_why() {
        let text =
            |t: &str| json!({"type":"response.output_text.delta","output_index":0,"delta":t});
        let incomplete = |reason: &str| {
            json!({"type":"response.incomplete","response":{"status":"incomplete",
                "incomplete_details":{"reason":reason}}})
        };
        let completed = json!({"type":"response.completed","response":{"status":"completed"}});
        let after = [
            text("LATE"),
            json!({"type":"response.output_item.added","output_index":1,
                "item":{"type":"function_call","id":"fc_9","call_id":"call_9","name":"bash","arguments":""}}),
            json!({"type":"error","message":"late","code":"server_error"}),
            incomplete("max_output_tokens"),
        ];
        for (terminal, reason) in [
            (completed.clone(), "stop"),
            (incomplete("max_output_tokens"), "length"),
            (incomplete("content_filter"), "content_filter"),
            (
                json!({"type":"response.incomplete","response":{"status":"incomplete"}}),
                "length",
            ),
        ] {
            let mut events = vec![text("kept"), terminal];
            events.extend(after.iter().cloned());
            let (r, reply, shown) = feed(&events);
            assert_eq!(r, Ok(()), "{reason}");
            assert_eq!(reply.text, "kept");
            assert_eq!(shown, "kept");
            assert!(reply.tool_calls.is_empty());
            assert_eq!(reply.finish_reason.as_deref(), Some(reason));
        }
        // Nothing streamed before the terminal event: its output is the reply, and what
        // comes after is still not.
        let whole = json!({"type":"response.completed","response":{"status":"completed","output":[
            {"type":"message","id":"m","content":[{"type":"output_text","text":"whole"}]}]}});
        let (r, reply, _) = feed(&[whole, text("LATE")]);
        assert_eq!(r, Ok(()));
        assert_eq!(reply.text, "whole");
    }
}
