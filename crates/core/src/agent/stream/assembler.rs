//! The assembler: the pieces a wire reader took out of a stream in, the deltas a front end
//! shows while it runs and one finished [`AssembledReply`] out.
//!
//! It knows no wire format. A reader ([`chat_chunk`](super::chat_chunk) for
//! chat-completions chunks) calls it with text, reasoning and refusal pieces, provider
//! reasoning state, tool-call pieces, usage and the finish reason; the assembler emits the
//! visible pieces as [`StreamDelta`]s, keeps what the server needs back, and joins the
//! tool-call pieces into whole calls: a piece continues the call of its `index` unless it
//! brings a different id (some servers send every call at index 0), a piece without an
//! index continues the call of its id, and one with neither the latest call. Calls that
//! came without an id get one unique for the process.
//!
//! It also keeps count of what the reply holds, for the client's two bounds. The bytes
//! kept ([`Assembler::held`]): text, reasoning, refusal, tool-call pieces, native items and
//! reasoning details, and what a reader keeps of its own until the stream ends
//! ([`Assembler::holds`]); with the tool calls and the parts (items, details, summary
//! parts) counted, [`Assembler::overflow`] says when a reply grew past what rein keeps of
//! one. And its progress ([`Assembler::progress`]): it moves only when something of the
//! reply arrived (a piece that is not empty, a new call or item, a usage that differs
//! from the last, the finish), never for a keep-alive, a status event or an empty delta.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};

use crate::agent::events::Usage;
use crate::conversation::{Reasoning, ToolCall};

/// Source of ids for tool calls that arrived without one.
static GENERATED_IDS: AtomicU64 = AtomicU64::new(1);

/// The most bytes one reply may hold by default (`client.max_reply_mb`): 32 MiB, some
/// fifty times the longest answer a model writes (128k tokens), with room for the
/// provider's state.
pub const MAX_REPLY_BYTES: usize = 32 * 1024 * 1024;
/// The most tool calls one reply may ask for; models ask for a handful at once.
pub const MAX_REPLY_CALLS: usize = 1024;
/// The most parts one reply may have: native items (Responses output items, Anthropic
/// content blocks), `reasoning_details` entries and reasoning summary parts.
pub const MAX_REPLY_PARTS: usize = 4096;

/// How a reply grew past what rein keeps of one; each holds the limit it passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Overflow {
    #[error(
        "the reply exceeded {} (client.max_reply_mb), the most rein keeps of one reply",
        crate::agent::sse::size(*.0)
    )]
    Bytes(usize),
    #[error("the reply asked for more than {0} tool calls, the most rein takes from one reply")]
    Calls(usize),
    #[error(
        "the reply had more than {0} parts (messages, reasoning, the server's items), the \
         most rein keeps of one reply"
    )]
    Parts(usize),
}

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
    /// The API the reply came in, when not chat completions: `reasoning_details` then
    /// holds that API's items (see [`Reasoning::details`]).
    pub api: Option<crate::conversation::Api>,
}

impl AssembledReply {
    /// The reasoning and provider state to keep with the assistant message.
    pub fn reasoning_state(&self) -> Option<Reasoning> {
        let r = Reasoning {
            text: self.reasoning.clone(),
            field: self.reasoning_field.clone(),
            details: self.reasoning_details.clone(),
            api: self.api,
        };
        (!r.is_empty()).then_some(r)
    }
}

/// One piece of a tool call, as a reader took it off the wire.
#[derive(Debug, Default)]
pub(crate) struct CallPiece {
    /// The `index` the server keyed the call by, when it sent one.
    pub index: Option<usize>,
    /// The call's id, when this piece carries it (an empty id is none).
    pub id: Option<String>,
    /// The name or a part of it (an empty name is none).
    pub name: Option<String>,
    /// The next part of the arguments' text.
    pub arguments: String,
    /// Anything else the server sent with the call (Gemini's `extra_content`); `null`s
    /// are dropped.
    pub extra: Map<String, Value>,
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

/// Accumulates one reply from its pieces.
#[derive(Debug, Default)]
pub struct Assembler {
    reply: AssembledReply,
    calls: Vec<PartialCall>,
    /// Cached prompt tokens reported apart from the usage (llama.cpp's `timings`).
    cache_n: Option<u64>,
    /// True once any text, reasoning or tool call arrived (after that a retry would repeat
    /// what the user already saw).
    started: bool,
    /// The chat-completions reader's frame of the common chunk (a cache).
    pub(super) frame: super::common_chunk::Frame,
    /// A UTF-16 high surrogate that ended a string of the last event, waiting for its low
    /// half at the start of the next (see `surrogates`).
    pub(super) lone_high: Option<u16>,
    /// The Anthropic reader's own state: its content blocks, usage and stop reason until
    /// the stream ends.
    pub(super) anthropic: super::anthropic_event::progress::Progress,
    /// The Responses reader's output items so far.
    pub(super) responses: super::responses_event::progress::Progress,
    /// Bytes of the reply kept so far (see [`Assembler::held`]).
    held: usize,
    /// Parts a reader started of its own (reasoning summary parts).
    parts: usize,
    /// Steps of progress that are not bytes: a new call, a changed usage, the finish.
    marks: u64,
}

impl Assembler {
    pub fn new() -> Self {
        Self::default()
    }

    /// The reasoning as it streamed so far.
    pub fn reasoning(&self) -> &str {
        &self.reply.reasoning
    }

    /// True once anything visible or a tool call has arrived.
    pub fn started(&self) -> bool {
        self.started
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

    /// Bytes of the reply kept so far: its text, reasoning and refusal, the tool calls'
    /// names and arguments, native items and reasoning details (as JSON), and what a
    /// reader holds of its own (`Assembler::holds`). Close to what the reply costs in
    /// memory, not exact: a piece kept in two places (Anthropic's thinking text, a call's
    /// arguments a reader holds until the call ends) may count once or twice.
    pub fn held(&self) -> usize {
        self.held
    }

    /// Grows each time something of the reply arrives; a keep-alive, a status event, an
    /// empty delta or the same usage again leave it where it was.
    pub fn progress(&self) -> u64 {
        (self.held as u64).saturating_add(self.marks)
    }

    /// The limit the reply grew past, when it did: `max_bytes` held, [`MAX_REPLY_CALLS`]
    /// tool calls or [`MAX_REPLY_PARTS`] parts.
    pub fn overflow(&self, max_bytes: usize) -> Option<Overflow> {
        if self.held > max_bytes {
            Some(Overflow::Bytes(max_bytes))
        } else if self.calls.len() > MAX_REPLY_CALLS {
            Some(Overflow::Calls(MAX_REPLY_CALLS))
        } else if self.reply.reasoning_details.len() + self.parts > MAX_REPLY_PARTS {
            Some(Overflow::Parts(MAX_REPLY_PARTS))
        } else {
            None
        }
    }

    /// A reader keeps `bytes` more of the reply in a place of its own until the stream
    /// ends (a call's arguments, a signature, a server block's input): they count as held.
    pub(crate) fn holds(&mut self, bytes: usize) {
        self.held = self.held.saturating_add(bytes);
    }

    /// A reader started a part of its own (a reasoning summary part): it counts among the
    /// parts.
    pub(crate) fn part_started(&mut self) {
        self.parts += 1;
        self.marks += 1;
    }

    /// A piece of the answer's text; an empty piece is nothing.
    pub(crate) fn push_text(&mut self, t: &str, on_delta: &mut dyn FnMut(StreamDelta<'_>)) {
        if !t.is_empty() {
            self.started = true;
            self.holds(t.len());
            on_delta(StreamDelta::Text(t));
            self.reply.text.push_str(t);
        }
    }

    /// A piece of the reasoning; an empty piece is nothing.
    pub(crate) fn push_reasoning(&mut self, r: &str, on_delta: &mut dyn FnMut(StreamDelta<'_>)) {
        if !r.is_empty() {
            self.started = true;
            self.holds(r.len());
            on_delta(StreamDelta::Reasoning(r));
            self.reply.reasoning.push_str(r);
        }
    }

    /// The wire field the reasoning text comes in; the first one named is kept.
    pub(crate) fn reasoning_field(&mut self, field: &str) {
        self.reply
            .reasoning_field
            .get_or_insert_with(|| field.to_string());
    }

    /// A piece of a refusal.
    pub(crate) fn push_refusal(&mut self, r: &str, on_delta: &mut dyn FnMut(StreamDelta<'_>)) {
        self.started = true;
        self.holds(r.len());
        on_delta(StreamDelta::Refusal(r));
        self.reply.refusal.push_str(r);
    }

    /// The reply comes in `api` (a native reader's first word).
    pub(crate) fn api_is(&mut self, api: crate::conversation::Api) {
        self.reply.api = (api != crate::conversation::Api::Chat).then_some(api);
    }

    /// One of a native API's items, whole, after the ones before it (see
    /// [`Reasoning::details`]): kept for the server, never merged.
    pub(crate) fn push_item(&mut self, item: Value) {
        self.holds(json_len(&item));
        self.reply.reasoning_details.push(item);
    }

    /// The native item at `index` replaced by `item` (what it is now that it ended).
    pub(crate) fn set_item(&mut self, index: usize, item: Value) {
        if let Some(slot) = self.reply.reasoning_details.get_mut(index) {
            self.held = self.held.saturating_add(json_len(&item));
            *slot = item;
        }
    }

    /// The native item at `index` among those pushed, to complete as its pieces arrive.
    pub(crate) fn item_mut(&mut self, index: usize) -> Option<&mut Value> {
        self.reply.reasoning_details.get_mut(index)
    }

    /// How many native items were pushed.
    pub(crate) fn items(&self) -> usize {
        self.reply.reasoning_details.len()
    }

    /// One streamed `reasoning_details` piece, merged into the list kept for the server.
    pub(crate) fn push_reasoning_detail(&mut self, detail: Value) {
        self.started = true;
        let grew = merge_detail(&mut self.reply.reasoning_details, detail);
        self.holds(grew);
    }

    /// The server's usage (a later report replaces an earlier one).
    pub(crate) fn usage(&mut self, usage: Usage) {
        if self.reply.usage.as_ref() != Some(&usage) {
            self.marks += 1;
        }
        self.reply.usage = Some(usage);
    }

    /// Cached prompt tokens the server reported apart from its usage; the usage's own
    /// figure, when it has one, wins.
    pub(crate) fn cached_tokens(&mut self, n: u64) {
        self.cache_n = Some(n);
    }

    /// Why the reply ended.
    pub(crate) fn finish_reason_is(&mut self, reason: String) {
        self.marks += 1;
        self.reply.finish_reason = Some(reason);
    }

    /// One piece of a tool call; `position` is its place among the pieces that arrived
    /// together (a piece with neither index nor id continues the latest call only when it
    /// comes first).
    pub(crate) fn push_call(&mut self, position: usize, piece: CallPiece) {
        self.started = true;
        let id = piece.id.filter(|id| !id.is_empty());
        // Find the call this piece continues: same index, unless it brings a different id
        // (some servers send every call at index 0, each with its own id).
        let existing = match piece.index {
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
        self.holds(piece.arguments.len());
        let slot = match existing {
            Some(i) => i,
            None => {
                self.marks += 1;
                self.calls.push(PartialCall {
                    index: piece.index,
                    ..PartialCall::default()
                });
                self.calls.len() - 1
            }
        };
        let target = &mut self.calls[slot];
        if let Some(id) = id {
            target.id = id;
        }
        for (key, value) in piece.extra {
            if !value.is_null() && target.extra.get(&key) != Some(&value) {
                self.held = self.held.saturating_add(key.len() + json_len(&value));
                target.extra.insert(key, value);
            }
        }
        if let Some(name) = piece.name.filter(|n| !n.is_empty()) {
            // A name repeated on every piece is the same name; a different piece
            // continues a name streamed in parts.
            if target.name.is_empty() {
                self.held = self.held.saturating_add(name.len());
                target.name = name;
            } else if target.name != name {
                self.held = self.held.saturating_add(name.len());
                target.name.push_str(&name);
            }
        }
        target.arguments.push_str(&piece.arguments);
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

/// Add one streamed `reasoning_details` piece to the merged list: a piece with the
/// `index` (and type) of an entry continues it (its text, summary and data appended, its
/// other fields set), anything else is a new entry. The bytes the list grew by.
fn merge_detail(details: &mut Vec<Value>, piece: Value) -> usize {
    let Value::Object(piece) = piece else {
        return 0;
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
        let piece = Value::Object(piece);
        let grew = json_len(&piece);
        details.push(piece);
        return grew;
    };
    let mut grew = 0usize;
    for (key, value) in piece {
        match (key.as_str(), entry.get_mut(&key), value) {
            ("text" | "summary" | "data", Some(Value::String(have)), Value::String(more)) => {
                grew = grew.saturating_add(more.len());
                have.push_str(&more);
            }
            (_, _, Value::Null) => {}
            // An empty value never overwrites one that arrived (a signature).
            (_, Some(Value::String(_)), Value::String(more)) if more.is_empty() => {}
            // The same value again changes nothing.
            (_, Some(have), value) if *have == value => {}
            (_, _, value) => {
                grew = grew.saturating_add(key.len() + json_len(&value));
                entry.insert(key, value);
            }
        }
    }
    grew
}

/// The length of `value` written as JSON, without writing it anywhere.
fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(bytes.len());
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a `Value` to a sink that never fails cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(index: Option<usize>, id: &str, name: &str, arguments: &str) -> CallPiece {
        CallPiece {
            index,
            id: Some(id.to_string()),
            name: Some(name.to_string()),
            arguments: arguments.to_string(),
            extra: Map::new(),
        }
    }

    #[test]
    fn pieces_from_any_reader_make_one_reply() {
        let mut a = Assembler::new();
        let mut seen = Vec::new();
        let mut on = |d: StreamDelta<'_>| seen.push(format!("{d:?}"));
        assert!(!a.started());
        a.push_reasoning("hm", &mut on);
        // What the usage estimate counts when the server reports none.
        assert_eq!(a.reasoning_len(), 2);
        a.push_text("", &mut on);
        a.push_text("ok", &mut on);
        a.push_call(0, piece(Some(0), "a", "bash", "{\"command\""));
        a.push_call(0, piece(Some(0), "", "bash", ":\"ls\"}"));
        a.push_call(1, piece(None, "", "", "{}"));
        a.finish_reason_is("tool_calls".into());
        a.cached_tokens(7);
        a.usage(Usage {
            prompt_tokens: 5,
            ..Usage::default()
        });
        assert!(a.started());
        let r = a.finish();
        assert_eq!(seen, ["Reasoning(\"hm\")", "Text(\"ok\")"]);
        assert_eq!(r.tool_calls.len(), 2);
        assert_eq!(
            r.tool_calls[0],
            ToolCall::new("a", "bash", "{\"command\":\"ls\"}")
        );
        assert!(r.tool_calls[1].id.starts_with("call_rein_"));
        assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(r.usage.map(|u| u.cached_tokens), Some(Some(5)));
    }

    /// At one index: a piece repeating the call's id continues it, a piece with an id
    /// continues a call that had none yet, and a piece with another id starts a call of
    /// its own (servers that send every call at index 0).
    #[test]
    fn an_index_and_an_id_decide_together_which_call_a_piece_continues() {
        let mut a = Assembler::new();
        a.push_call(0, piece(Some(0), "a", "bash", "{\"command\""));
        a.push_call(0, piece(Some(0), "a", "bash", ":\"ls\"}"));
        a.push_call(0, piece(Some(1), "", "read_file", "{\"path\""));
        a.push_call(0, piece(Some(1), "b", "", ":\"x\"}"));
        a.push_call(0, piece(Some(1), "c", "write_file", "{}"));
        let r = a.finish();
        assert_eq!(
            r.tool_calls,
            [
                ToolCall::new("a", "bash", "{\"command\":\"ls\"}"),
                ToolCall::new("b", "read_file", "{\"path\":\"x\"}"),
                ToolCall::new("c", "write_file", "{}"),
            ]
        );
    }

    /// Progress moves with every piece of the reply and only then: empty pieces, the same
    /// usage again, a repeated name or detail field leave it; what is held grows with the
    /// bytes kept, and each bound is reported when passed.
    #[test]
    fn progress_and_what_is_held() {
        let mut a = Assembler::new();
        let mut on = |_: StreamDelta<'_>| {};
        let mut last = a.progress();
        let mut moved = |a: &Assembler| {
            let now = a.progress();
            std::mem::replace(&mut last, now) != now
        };
        a.push_text("", &mut on);
        a.push_reasoning("", &mut on);
        assert!(!moved(&a));
        a.push_text("hello", &mut on);
        assert!(moved(&a));
        assert_eq!(a.held(), 5);
        let usage = Usage {
            prompt_tokens: 3,
            ..Usage::default()
        };
        a.usage(usage);
        assert!(moved(&a));
        a.usage(usage);
        assert!(!moved(&a), "the same usage again");
        a.push_call(0, piece(Some(0), "a", "bash", ""));
        assert!(moved(&a), "a new call");
        a.push_call(0, piece(Some(0), "a", "bash", ""));
        assert!(!moved(&a), "the same name again, no arguments");
        a.push_call(0, piece(Some(0), "a", "bash", "{}"));
        assert!(moved(&a));
        let held = a.held();
        a.push_call(0, piece(Some(1), "b", "", ""));
        assert!(moved(&a), "a new call that brings only its id");
        assert_eq!(a.held(), held);
        a.push_reasoning_detail(serde_json::json!({"index": 0, "type": "t", "text": "ab"}));
        assert!(moved(&a));
        a.push_reasoning_detail(serde_json::json!({"index": 0, "type": "t", "text": ""}));
        assert!(!moved(&a), "an empty piece of a detail");
        let held = a.held();
        a.push_reasoning_detail(serde_json::json!({"index": 0, "type": "t", "format": "f"}));
        assert!(moved(&a));
        assert_eq!(
            a.held(),
            held + "format".len() + "\"f\"".len(),
            "a new field"
        );
        a.push_reasoning_detail(serde_json::json!({"index": 0, "type": "t", "format": "f"}));
        assert!(!moved(&a), "the same field again");
        a.part_started();
        assert!(moved(&a), "a reader's part started");
        assert_eq!(a.overflow(1024), None);
        assert_eq!(a.overflow(10), Some(Overflow::Bytes(10)));
        // The bound is the most a reply may hold: reaching it is no overflow.
        let held = a.held();
        assert_eq!(a.overflow(held), None);
        assert_eq!(a.overflow(held - 1), Some(Overflow::Bytes(held - 1)));
        assert_eq!(
            Overflow::Bytes(MAX_REPLY_BYTES).to_string(),
            "the reply exceeded 32 MB (client.max_reply_mb), the most rein keeps of one reply"
        );
        a.finish_reason_is("stop".into());
        assert!(moved(&a));
    }

    /// A call's other fields (Gemini's `extra_content`) are kept as they came: a `null` is
    /// dropped, and a field repeated on a later piece is held once.
    #[test]
    fn a_call_keeps_its_extra_fields_without_nulls() {
        let mut a = Assembler::new();
        let with_extra = |arguments: &str| {
            let mut p = piece(Some(0), "a", "bash", arguments);
            p.extra
                .insert("extra_content".into(), serde_json::json!({"sig": "S"}));
            p.extra.insert("other".into(), Value::Null);
            p
        };
        a.push_call(0, with_extra("{"));
        let held = a.held();
        let extra = "extra_content".len() + r#"{"sig":"S"}"#.len();
        assert_eq!(held, "{".len() + "bash".len() + extra);
        a.push_call(0, with_extra("}"));
        assert_eq!(a.held(), held + 1, "only the argument piece is new");
        let calls = a.finish().tool_calls;
        assert_eq!(calls.len(), 1);
        assert_eq!(
            Value::Object(calls[0].extra.clone()),
            serde_json::json!({"extra_content": {"sig": "S"}})
        );
    }

    #[test]
    fn too_many_calls_or_parts_overflow() {
        let mut a = Assembler::new();
        for n in 0..MAX_REPLY_CALLS {
            a.push_call(0, piece(Some(n), &format!("c{n}"), "bash", ""));
        }
        assert_eq!(
            a.overflow(MAX_REPLY_BYTES),
            None,
            "the most calls a reply may ask for"
        );
        a.push_call(0, piece(None, "one-more", "bash", ""));
        assert_eq!(
            a.overflow(MAX_REPLY_BYTES),
            Some(Overflow::Calls(MAX_REPLY_CALLS))
        );
        let mut a = Assembler::new();
        for _ in 0..MAX_REPLY_PARTS {
            a.push_item(serde_json::json!({"type": "text"}));
        }
        assert_eq!(a.overflow(MAX_REPLY_BYTES), None);
        a.part_started();
        assert_eq!(
            a.overflow(MAX_REPLY_BYTES),
            Some(Overflow::Parts(MAX_REPLY_PARTS))
        );
        assert_eq!(json_len(&serde_json::json!({"type": "text"})), 15);
    }

    /// The reasoning kept with the assistant message: text, field and details as they
    /// came; none at all when the reply had neither text nor details.
    #[test]
    fn the_reasoning_state_is_kept_only_when_there_is_some() {
        let reply = AssembledReply {
            reasoning: "think".into(),
            reasoning_field: Some("reasoning_content".into()),
            ..AssembledReply::default()
        };
        assert_eq!(
            reply.reasoning_state(),
            Some(Reasoning {
                text: "think".into(),
                field: Some("reasoning_content".into()),
                details: Vec::new(),
                api: None,
            })
        );
        let details = AssembledReply {
            reasoning_details: vec![serde_json::json!({"type": "reasoning.encrypted"})],
            ..AssembledReply::default()
        };
        assert_eq!(details.reasoning_state().map(|r| r.details.len()), Some(1));
        let none = AssembledReply {
            reasoning_field: Some("reasoning".into()),
            text: "hi".into(),
            ..AssembledReply::default()
        };
        assert_eq!(none.reasoning_state(), None);
    }
}
