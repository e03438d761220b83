//! The script a `ScriptedServer` plays: one `Reply` per chat-completions request.
//!
//! A reply is a status, extra headers and a body. Streaming bodies are a list of
//! `Step`s written in order (data events, raw bytes, pauses, an abrupt cut), so a
//! test can reproduce anything a real provider does, including the broken parts, and the
//! demo can replay a whole session at a readable pace.
//! The builders (`Reply::text`, `Reply::tool_calls`, ...) produce chunks shaped
//! exactly like OpenAI's streaming chunks, ending with a usage chunk and `[DONE]`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{json, Value};

/// Usage numbers the builders report unless `with_usage` says otherwise.
const DEFAULT_PROMPT_TOKENS: u64 = 100;
const DEFAULT_COMPLETION_TOKENS: u64 = 10;

/// Source of tool-call ids, unique across the whole process.
static NEXT_CALL_ID: AtomicU64 = AtomicU64::new(1);

/// One scripted response to one POST /v1/chat/completions.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Body,
}

#[derive(Debug, Clone)]
pub enum Body {
    /// A `text/event-stream` body, close-delimited.
    Sse(Vec<Step>),
    /// An `application/json` body with a Content-Length.
    Json(Value),
    /// A `text/plain` body with a Content-Length.
    Text(String),
}

#[derive(Debug, Clone)]
pub enum Step {
    /// `data: {json}\n\n`
    Data(Value),
    /// Written verbatim: malformed SSE, comments like `: ping\n\n`, odd line endings.
    Raw(String),
    /// `data: [DONE]\n\n`
    Done,
    /// Flush what was written so far, then pause.
    Sleep(Duration),
    /// Flush, then reset the connection (TCP RST); later steps are ignored.
    Cut,
}

/// A streaming chunk with one choice carrying `delta`.
pub fn chunk(delta: Value, finish_reason: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "scripted",
        "choices": [{ "index": 0, "delta": delta, "finish_reason": finish_reason }],
    })
}

/// The final chunk OpenAI sends with `stream_options.include_usage`: no choices, just usage.
pub fn usage_chunk(prompt: u64, completion: u64) -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "scripted",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    })
}

impl Reply {
    /// A streamed assistant message: role, the text word by word, `stop`, usage, `[DONE]`.
    pub fn text(s: &str) -> Reply {
        let mut steps = vec![role_step()];
        steps.extend(content_steps("content", s));
        Reply::sse(finish(steps, "stop"))
    }

    /// A streamed reply made only of tool calls, with fresh ids `call_N`.
    pub fn tool_calls(calls: &[(&str, &str)]) -> Reply {
        Reply::text_then_tool_calls("", calls)
    }

    /// Content first (if any), then the tool calls; finish reason `tool_calls`.
    pub fn text_then_tool_calls(text: &str, calls: &[(&str, &str)]) -> Reply {
        let mut steps = vec![if text.is_empty() {
            Step::Data(chunk(json!({ "role": "assistant", "content": null }), None))
        } else {
            role_step()
        }];
        steps.extend(content_steps("content", text));
        for (index, (name, arguments)) in calls.iter().enumerate() {
            steps.extend(tool_call_steps(index, name, arguments));
        }
        Reply::sse(finish(steps, "tool_calls"))
    }

    /// Reasoning deltas (`reasoning_content`, as DeepSeek and vLLM send them), then text.
    pub fn reasoning_then_text(reasoning: &str, text: &str) -> Reply {
        let mut steps = vec![role_step()];
        steps.extend(content_steps("reasoning_content", reasoning));
        steps.extend(content_steps("content", text));
        Reply::sse(finish(steps, "stop"))
    }

    /// An OpenAI-style JSON error: `{"error":{"message", "type":"server_error", "code"}}`.
    pub fn error(status: u16, message: &str) -> Reply {
        Reply::json(
            status,
            json!({ "error": { "message": message, "type": "server_error", "code": status } }),
        )
    }

    /// Status 200, `text/event-stream`, the given steps.
    pub fn sse(steps: Vec<Step>) -> Reply {
        Reply {
            status: 200,
            headers: Vec::new(),
            body: Body::Sse(steps),
        }
    }

    /// Any JSON body with any status (e.g. a non-streaming completion).
    pub fn json(status: u16, body: Value) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: Body::Json(body),
        }
    }

    /// A plain-text body with any status (e.g. an HTML-ish proxy error page).
    pub fn plain(status: u16, body: &str) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: Body::Text(body.to_string()),
        }
    }

    pub fn with_status(mut self, status: u16) -> Reply {
        self.status = status;
        self
    }

    /// Adds a response header; a `content-type` here replaces the default one.
    pub fn with_header(mut self, k: &str, v: &str) -> Reply {
        self.headers.push((k.to_string(), v.to_string()));
        self
    }

    /// Drops every chunk that carries usage.
    pub fn without_usage(mut self) -> Reply {
        if let Body::Sse(steps) = &mut self.body {
            steps.retain(|step| !matches!(step, Step::Data(v) if has_usage(v)));
        }
        self
    }

    /// Drops `[DONE]`: the stream just ends.
    pub fn without_done(mut self) -> Reply {
        if let Body::Sse(steps) = &mut self.body {
            steps.retain(|step| !matches!(step, Step::Done));
        }
        self
    }

    /// Sets the usage numbers, adding a usage chunk (before `[DONE]`) if there is none.
    pub fn with_usage(mut self, prompt: u64, completion: u64) -> Reply {
        if let Body::Sse(steps) = &mut self.body {
            let mut found = false;
            for step in steps.iter_mut() {
                if let Step::Data(v) = step {
                    if has_usage(v) {
                        v["usage"] = usage_chunk(prompt, completion)["usage"].clone();
                        found = true;
                    }
                }
            }
            if !found {
                let at = steps
                    .iter()
                    .position(|s| matches!(s, Step::Done))
                    .unwrap_or(steps.len());
                steps.insert(at, Step::Data(usage_chunk(prompt, completion)));
            }
        }
        self
    }
}

fn has_usage(v: &Value) -> bool {
    v.get("usage").is_some_and(|u| !u.is_null())
}

fn role_step() -> Step {
    Step::Data(chunk(json!({ "role": "assistant", "content": "" }), None))
}

/// `text` as deltas of `field`, one per word with its trailing whitespace.
fn content_steps(field: &str, text: &str) -> Vec<Step> {
    split_words(text)
        .into_iter()
        .map(|piece| Step::Data(chunk(json!({ field: piece }), None)))
        .collect()
}

/// The finish chunk, the usage chunk and `[DONE]` after `steps`.
fn finish(mut steps: Vec<Step>, reason: &str) -> Vec<Step> {
    steps.push(Step::Data(chunk(json!({}), Some(reason))));
    steps.push(Step::Data(usage_chunk(
        DEFAULT_PROMPT_TOKENS,
        DEFAULT_COMPLETION_TOKENS,
    )));
    steps.push(Step::Done);
    steps
}

/// The header delta of call `index` (id, name, empty arguments), then its arguments in pieces.
fn tool_call_steps(index: usize, name: &str, arguments: &str) -> Vec<Step> {
    let id = format!("call_{}", NEXT_CALL_ID.fetch_add(1, Ordering::Relaxed));
    let mut steps = vec![Step::Data(chunk(
        json!({ "tool_calls": [{
            "index": index,
            "id": id,
            "type": "function",
            "function": { "name": name, "arguments": "" },
        }] }),
        None,
    ))];
    for piece in split_in_three(arguments) {
        steps.push(Step::Data(chunk(
            json!({ "tool_calls": [{ "index": index, "function": { "arguments": piece } }] }),
            None,
        )));
    }
    steps
}

/// Pieces that concatenate back to `text`: each word keeps the whitespace after it.
pub fn split_words(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut in_space = false;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            in_space = true;
        } else if in_space {
            pieces.push(&text[start..i]);
            start = i;
            in_space = false;
        }
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

/// Up to three non-empty pieces, cut on char boundaries, that concatenate back to `text`.
fn split_in_three(text: &str) -> Vec<&str> {
    let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    let n = bounds.len();
    if n == 0 {
        return Vec::new();
    }
    let cuts = [0, bounds[n / 3], bounds[2 * n / 3], text.len()];
    cuts.windows(2)
        .map(|w| &text[w[0]..w[1]])
        .filter(|piece| !piece.is_empty())
        .collect()
}
