//! Reading a recorded reply and what the dashboard showed of it: the streamed steps, the
//! state they add up to, and the text and calls shown.

use crate::support;

use std::time::Duration;

use rein_core::agent::AgentEvent;
use serde_json::Value;
use support::replay::{
    is_event_stream, read_sample, recorded_reply as recorded_reply_of, shown_text, sse_data,
};
use support::{Reply, Step};

use super::{samples_dir, Recorded, StreamedState};
/// The pause after each piece of a body written a few bytes at a time, so that every piece
/// reaches the client in a read of its own.
const PIECE_PAUSE: Duration = Duration::from_millis(1);

/// The bytes of the sample file `file`.
pub(super) fn read_body(file: &str) -> Vec<u8> {
    read_sample(&samples_dir(), file)
}

// ---------------------------------------------------------------------------------------
// Serving a sample
// ---------------------------------------------------------------------------------------

/// The scripted reply for one recorded response: its status, its headers and its body byte
/// for byte, written as the sample says (or, for a stream, `bytes:N` as `pieces` says).
pub(super) fn recorded_reply(recorded: &Recorded, pieces: Option<&str>) -> Reply {
    if !is_event_stream(&recorded.headers) {
        assert!(
            recorded.chunking.is_none() && recorded.delay_ms.is_none(),
            "{}: only a stream can be written in pieces",
            recorded.file
        );
    }
    recorded_reply_of(
        &recorded.file,
        recorded.status,
        &recorded.headers,
        read_body(&recorded.file),
        |body| {
            let chunking = pieces.or(recorded.chunking.as_deref());
            stream_steps(&body, &recorded.file, chunking, recorded.delay_ms)
        },
    )
}

/// A stream body as steps: whole, `bytes:N` pieces (cut anywhere, UTF-8 sequences
/// included), or one event at a time `delay_ms` apart.
fn stream_steps(
    body: &[u8],
    file: &str,
    chunking: Option<&str>,
    delay_ms: Option<u64>,
) -> Vec<Step> {
    if let Some(chunking) = chunking {
        let size: usize = chunking
            .strip_prefix("bytes:")
            .and_then(|n| n.parse().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| panic!("{file}: unknown chunking {chunking:?}"));
        return body
            .chunks(size)
            .flat_map(|piece| [Step::Bytes(piece.to_vec()), Step::Sleep(PIECE_PAUSE)])
            .collect();
    }
    if let Some(ms) = delay_ms {
        let mut steps = Vec::new();
        for (i, event) in split_events(body).into_iter().enumerate() {
            if i > 0 {
                steps.push(Step::Sleep(Duration::from_millis(ms)));
            }
            steps.push(Step::Bytes(event.to_vec()));
        }
        return steps;
    }
    vec![Step::Bytes(body.to_vec())]
}

/// The body cut after each blank line (`\n\n` or `\r\n\r\n`): one piece per SSE event,
/// separators kept, so the pieces concatenate back to the body.
pub(super) fn split_events(body: &[u8]) -> Vec<&[u8]> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < body.len() {
        let end = if body[i..].starts_with(b"\r\n\r\n") {
            Some(i + 4)
        } else if body[i..].starts_with(b"\n\n") {
            Some(i + 2)
        } else {
            None
        };
        match end {
            Some(end) => {
                pieces.push(&body[start..end]);
                start = end;
                i = end;
            }
            None => i += 1,
        }
    }
    if start < body.len() {
        pieces.push(&body[start..]);
    }
    pieces
}

/// Reads the state from a response body (choice 0, or choices without an index).
pub(super) fn streamed_state(body: &str) -> StreamedState {
    let mut state = StreamedState::default();
    let mut detail_slots: Vec<(Option<u64>, usize)> = Vec::new();
    // Call ids by the `index` they were streamed at (or their position when none).
    let mut call_ids: Vec<(Option<u64>, String)> = Vec::new();
    for chunk in sse_data(body) {
        let Some(choices) = chunk["choices"].as_array() else {
            continue;
        };
        for choice in choices {
            if choice["index"].as_u64().unwrap_or(0) != 0 {
                continue;
            }
            let delta = if choice["delta"].is_object() {
                &choice["delta"]
            } else {
                &choice["message"]
            };
            if let Some(r) = delta["reasoning_content"].as_str() {
                state.reasoning_content.push_str(r);
            }
            for detail in delta["reasoning_details"].as_array().into_iter().flatten() {
                merge_detail(&mut state.reasoning_details, &mut detail_slots, detail);
            }
            for (position, call) in delta["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                let index = call["index"].as_u64();
                let id = match call["id"].as_str().filter(|id| !id.is_empty()) {
                    Some(id) => {
                        if !call_ids.iter().any(|(_, known)| known == id) {
                            call_ids.push((index, id.to_string()));
                        }
                        Some(id.to_string())
                    }
                    None => match index {
                        Some(index) => call_ids
                            .iter()
                            .find(|(i, _)| *i == Some(index))
                            .map(|(_, id)| id.clone()),
                        None => call_ids.get(position).map(|(_, id)| id.clone()),
                    },
                };
                if let (Some(id), Some(extra)) = (id, call.get("extra_content")) {
                    if !extra.is_null() {
                        state.extra_content.retain(|(known, _)| *known != id);
                        state.extra_content.push((id, extra.clone()));
                    }
                }
            }
        }
    }
    state
}

/// Merges one `reasoning_details` delta into `merged`: entries with the same `index` are
/// one entry whose `text`, `summary` and `data` are concatenated and whose other fields
/// (type, signature, id, format) keep their last non-null value. An entry without an
/// index is an entry of its own.
fn merge_detail(merged: &mut Vec<Value>, slots: &mut Vec<(Option<u64>, usize)>, detail: &Value) {
    let index = detail["index"].as_u64();
    let slot = index.and_then(|i| slots.iter().find(|(s, _)| *s == Some(i)).map(|(_, at)| *at));
    let Some(at) = slot else {
        slots.push((index, merged.len()));
        merged.push(detail.clone());
        return;
    };
    let (Some(target), Some(fields)) = (merged[at].as_object_mut(), detail.as_object()) else {
        return;
    };
    for (key, value) in fields {
        match (key.as_str(), value) {
            (_, Value::Null) => {}
            ("text" | "summary" | "data", Value::String(piece)) => {
                let joined = format!(
                    "{}{piece}",
                    target.get(key).and_then(Value::as_str).unwrap_or("")
                );
                target.insert(key.clone(), Value::String(joined));
            }
            _ => {
                target.insert(key.clone(), value.clone());
            }
        }
    }
}

/// The `text` of every `reasoning.text` entry, concatenated.
pub(super) fn details_text(details: &[Value]) -> String {
    details
        .iter()
        .filter(|d| d["type"] == "reasoning.text")
        .filter_map(|d| d["text"].as_str())
        .collect()
}

/// The `summary` of every `reasoning.summary` entry, concatenated.
pub(super) fn details_summary(details: &[Value]) -> String {
    details
        .iter()
        .filter(|d| d["type"] == "reasoning.summary")
        .filter_map(|d| d["summary"].as_str())
        .collect()
}

/// Every non-empty signature, in order.
pub(super) fn details_signatures(details: &[Value]) -> Vec<String> {
    details
        .iter()
        .filter_map(|d| d["signature"].as_str())
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The `data` of every `reasoning.encrypted` entry, in order.
pub(super) fn details_encrypted(details: &[Value]) -> Vec<String> {
    details
        .iter()
        .filter(|d| d["type"] == "reasoning.encrypted")
        .filter_map(|d| d["data"].as_str())
        .map(str::to_string)
        .collect()
}

// ---------------------------------------------------------------------------------------
// The events of a turn, per response
// ---------------------------------------------------------------------------------------

/// (id, name, displayed arguments) of each `ToolCallStarted`.
pub(super) fn started_calls(events: &[&AgentEvent]) -> Vec<(String, String, Value)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallStarted { id, name, args, .. } => {
                Some((id.clone(), name.clone(), args.clone()))
            }
            _ => None,
        })
        .collect()
}

/// Whether `needle` is anywhere in what the attempt shows: its text, or any event's
/// fields (however a front end is told about it).
pub(super) fn shows(events: &[&AgentEvent], needle: &str) -> bool {
    shown_text(events).contains(needle)
        || events.iter().any(|e| {
            format!("{e:?}").contains(needle)
                || serde_json::to_string(e).is_ok_and(|json| json.contains(needle))
        })
}

/// How a front end would display a call's arguments: the parsed JSON, or the raw text.
pub(super) fn displayed_args(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

/// Exact, except that a whitespace-only expectation accepts any whitespace-only text.
pub(super) fn same_text(shown: &str, expected: &str) -> bool {
    if expected.trim().is_empty() {
        shown.trim().is_empty()
    } else {
        shown == expected
    }
}

/// A long text cut for a failure message.
pub(super) fn short(text: &str) -> String {
    const MAX: usize = 160;
    if text.chars().count() <= MAX {
        format!("{text:?}")
    } else {
        let head: String = text.chars().take(MAX).collect();
        format!("{head:?}... ({} chars)", text.chars().count())
    }
}
