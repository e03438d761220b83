//! The script a `ScriptedServer` plays: one `Reply` per chat-completions request.
//!
//! A reply is a status, extra headers and a body. Streaming bodies are a list of
//! `Step`s written in order (data events, raw bytes, pauses, an abrupt cut), so a
//! test can reproduce anything a real provider does, including the broken parts, and the
//! demo can replay a whole session at a readable pace.
//! The builders (`Reply::text`, `Reply::tool_calls`, ...) produce chunks shaped
//! exactly like OpenAI's streaming chunks, ending with a usage chunk and `[DONE]`.
//! The usage numbers are fixed (`with_usage`) or computed by the server from the request
//! being answered (`with_usage_from_request`, counting as [`request_chars`] does).

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
    /// Chars per token for a prompt-token count computed from the request when the reply
    /// is served (see [`Reply::with_usage_from_request`]); `None`: the usage is as scripted.
    pub usage_from_request: Option<f64>,
    /// Served in this API's events instead of chat-completions chunks (see
    /// [`Reply::in_api`]).
    pub api: Option<crate::conversation::Api>,
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
    /// Written verbatim like `Raw`, but any bytes: a piece of a recorded body cut anywhere,
    /// even inside a UTF-8 sequence (follow it with a `Sleep` to send it on its own).
    Bytes(Vec<u8>),
    /// `data: [DONE]\n\n`
    Done,
    /// Flush what was written so far, then pause (`Duration::ZERO`: a write of its own, no
    /// pause).
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

    /// Reasoning deltas, then the tool calls (a reasoning model's step).
    pub fn reasoning_then_tool_calls(reasoning: &str, calls: &[(&str, &str)]) -> Reply {
        let mut steps = vec![role_step()];
        steps.extend(content_steps("reasoning_content", reasoning));
        for (index, (name, arguments)) in calls.iter().enumerate() {
            steps.extend(tool_call_steps(index, name, arguments));
        }
        Reply::sse(finish(steps, "tool_calls"))
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
            usage_from_request: None,
            api: None,
        }
    }

    /// Any JSON body with any status (e.g. a non-streaming completion).
    pub fn json(status: u16, body: Value) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: Body::Json(body),
            usage_from_request: None,
            api: None,
        }
    }

    /// A plain-text body with any status (e.g. an HTML-ish proxy error page).
    pub fn plain(status: u16, body: &str) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: Body::Text(body.to_string()),
            usage_from_request: None,
            api: None,
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
    /// Replaces an earlier `with_usage_from_request`: the prompt figure is fixed again.
    pub fn with_usage(mut self, prompt: u64, completion: u64) -> Reply {
        self.usage_from_request = None;
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

impl Reply {
    /// When served, the usage chunk reports `prompt_tokens` =
    /// `ceil(request_chars(body) / chars_per_token)` for the body of the request it answers
    /// (see [`request_chars`]); `completion_tokens` stays what the reply had (the builders'
    /// default unless `with_usage` set it before) and `total_tokens` is their sum. Only
    /// existing usage chunks of a streamed body are rewritten: after `without_usage` nothing
    /// is added. A later `with_usage` fixes the numbers again.
    ///
    /// # Panics
    /// If `chars_per_token` is not a positive finite number.
    pub fn with_usage_from_request(mut self, chars_per_token: f64) -> Reply {
        assert!(
            chars_per_token.is_finite() && chars_per_token > 0.0,
            "chars_per_token must be positive and finite, got {chars_per_token}"
        );
        self.usage_from_request = Some(chars_per_token);
        self
    }

    /// Served as `api` streams the same reply (`crate::demo::native`): a model spoken to
    /// in the Responses or Anthropic API gets the script's text, reasoning, calls and
    /// usage in that API's events. Applied when served, after the usage is computed.
    pub fn in_api(mut self, api: crate::conversation::Api) -> Reply {
        self.api = Some(api);
        self
    }

    /// The reply as served for a request with this `body`: the usage computed from it if
    /// `with_usage_from_request` asked for that, and told in its API's events if
    /// [`Reply::in_api`] asked for that; otherwise unchanged. The server calls this with
    /// each model request's parsed body.
    pub fn for_request(self, body: &Value) -> Reply {
        let mut reply = self.with_usage_for(body);
        if let (Some(api), Body::Sse(steps)) = (reply.api.take(), &mut reply.body) {
            *steps = super::native::convert(std::mem::take(steps), api);
        }
        reply
    }

    /// The usage computed from the request's `body`, when asked for.
    fn with_usage_for(mut self, body: &Value) -> Reply {
        let Some(chars_per_token) = self.usage_from_request.take() else {
            return self;
        };
        let prompt = (request_chars(body) as f64 / chars_per_token).ceil() as u64;
        if let Body::Sse(steps) = &mut self.body {
            for step in steps.iter_mut() {
                if let Step::Data(v) = step {
                    if has_usage(v) {
                        let completion = v["usage"]
                            .get("completion_tokens")
                            .and_then(Value::as_u64)
                            .unwrap_or(DEFAULT_COMPLETION_TOKENS);
                        v["usage"] = usage_chunk(prompt, completion)["usage"].clone();
                    }
                }
            }
        }
        self
    }
}

/// Per-message overhead in [`request_chars`].
const MESSAGE_OVERHEAD: usize = 8;
/// Per-tool-call overhead (id, type, separators) in [`request_chars`].
const TOOL_CALL_OVERHEAD: usize = 24;
/// Extra for a `tool` message (its `tool_call_id`) in [`request_chars`].
const TOOL_MESSAGE_OVERHEAD: usize = 16;

/// The size in characters of a chat-completions request body, counted the way rein
/// estimates its own requests, so a reply's computed usage calibrates rein to exactly the
/// chars-per-token it was given. The sum of:
/// - for each message of `messages`: the byte length of its `content` when that is a string
///   (0 if null, absent or not a string), plus 8;
/// - for an `assistant` message, per entry of `tool_calls`: the byte lengths of
///   `function.name` and `function.arguments`, plus 24;
/// - for a `tool` message: 16;
/// - the length of `tools` serialised with `serde_json::to_string` (0 if absent, null or an
///   empty array).
///
/// A body that is not a JSON object (or has no `messages`) counts only its `tools`, if any.
pub fn request_chars(body: &Value) -> usize {
    // A native API's body (Responses `input`, Anthropic's top-level `system`): every
    // string of what is sent, plus the tools.
    if body.get("input").is_some() || body.get("system").is_some() {
        fn strings(v: &Value) -> usize {
            match v {
                Value::String(s) => s.len(),
                Value::Array(a) => a.iter().map(strings).sum(),
                Value::Object(o) => o.values().map(strings).sum(),
                _ => 0,
            }
        }
        let sent: usize = ["instructions", "system", "input", "messages"]
            .iter()
            .filter_map(|k| body.get(*k))
            .map(strings)
            .sum();
        let tools = body
            .get("tools")
            .filter(|t| t.as_array().is_some_and(|a| !a.is_empty()))
            .map_or(0, |t| t.to_string().len());
        return sent + tools;
    }
    let str_len = |v: Option<&Value>| v.and_then(Value::as_str).map_or(0, str::len);
    let messages: usize = body
        .get("messages")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .map(|message| {
            let role = message.get("role").and_then(Value::as_str);
            let extra = match role {
                Some("assistant") => message
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .map_or(&[][..], Vec::as_slice)
                    .iter()
                    .map(|call| {
                        let function = call.get("function");
                        str_len(function.and_then(|f| f.get("name")))
                            + str_len(function.and_then(|f| f.get("arguments")))
                            + TOOL_CALL_OVERHEAD
                    })
                    .sum(),
                Some("tool") => TOOL_MESSAGE_OVERHEAD,
                _ => 0,
            };
            str_len(message.get("content")) + extra + MESSAGE_OVERHEAD
        })
        .sum();
    let tools = match body.get("tools") {
        None | Some(Value::Null) => 0,
        Some(Value::Array(a)) if a.is_empty() => 0,
        Some(tools) => serde_json::to_string(tools).map_or(0, |s| s.len()),
    };
    messages + tools
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

#[cfg(test)]
mod tests {
    use super::*;

    fn usages(reply: &Reply) -> Vec<Value> {
        match &reply.body {
            Body::Sse(steps) => steps
                .iter()
                .filter_map(|s| match s {
                    Step::Data(v) if has_usage(v) => Some(v["usage"].clone()),
                    _ => None,
                })
                .collect(),
            other => panic!("not a stream: {other:?}"),
        }
    }

    fn usage(prompt: u64, completion: u64) -> Value {
        json!({
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        })
    }

    #[test]
    fn request_chars_counts_content_tool_calls_tool_messages_overheads_and_tools() {
        let tools =
            json!([{ "type": "function", "function": { "name": "bash", "parameters": {} } }]);
        let body = json!({
            "model": "m",
            "stream": true,
            "messages": [
                { "role": "system", "content": "sys" },
                { "role": "user", "content": "héllo" },
                { "role": "assistant", "content": null, "tool_calls": [
                    { "id": "call_1", "type": "function",
                      "function": { "name": "bash", "arguments": "{\"command\":\"ls\"}" } },
                    { "id": "call_2", "type": "function",
                      "function": { "name": "read", "arguments": "" } },
                ] },
                { "role": "tool", "tool_call_id": "call_1", "content": "out" },
                { "role": "assistant", "content": "done" },
            ],
            "tools": tools,
        });
        let expected = (3 + 8)                         // system
            + ("héllo".len() + 8)                      // user: bytes, not chars
            + (4 + 16 + 24) + (4 + 24) + 8            // assistant with two calls
            + (3 + 16 + 8)                             // tool
            + (4 + 8)                                  // assistant text
            + serde_json::to_string(&tools).unwrap().len();
        assert_eq!("héllo".len(), 6);
        assert_eq!(request_chars(&body), expected);
    }

    #[test]
    fn request_chars_ignores_what_rein_does_not_count() {
        assert_eq!(request_chars(&json!({})), 0);
        assert_eq!(request_chars(&json!("not json")), 0);
        assert_eq!(
            request_chars(&json!({ "messages": [], "tools": [] })),
            0,
            "an empty tools array counts nothing"
        );
        // No content: just the overhead; tool calls only count on assistant messages.
        assert_eq!(
            request_chars(&json!({ "messages": [
                { "role": "user" },
                { "role": "user", "content": null,
                  "tool_calls": [{ "function": { "name": "x", "arguments": "y" } }] },
            ] })),
            16
        );
    }

    #[test]
    fn usage_from_request_sets_prompt_keeps_completion() {
        let body = json!({ "messages": [{ "role": "user", "content": "0123456789" }] });
        // 10 + 8 = 18 chars; at 4 chars per token that is ceil(4.5) = 5 tokens.
        assert_eq!(request_chars(&body), 18);
        let reply = Reply::text("hi").with_usage_from_request(4.0);
        assert_eq!(
            usages(&reply),
            vec![usage(100, 10)],
            "resolved only when served"
        );
        let served = reply.for_request(&body);
        assert_eq!(usages(&served), vec![usage(5, 10)]);
        assert_eq!(served.usage_from_request, None);

        let served = Reply::tool_calls(&[("bash", "{}")])
            .with_usage(1, 7)
            .with_usage_from_request(2.0)
            .for_request(&body);
        assert_eq!(usages(&served), vec![usage(9, 7)]);
    }

    #[test]
    fn usage_from_request_adds_nothing_without_a_usage_chunk_and_yields_to_later_with_usage() {
        let body = json!({ "messages": [{ "role": "user", "content": "0123456789" }] });
        let served = Reply::text("hi")
            .without_usage()
            .with_usage_from_request(4.0)
            .for_request(&body);
        assert!(usages(&served).is_empty());
        let served = Reply::text("hi")
            .with_usage_from_request(4.0)
            .without_usage()
            .for_request(&body);
        assert!(usages(&served).is_empty());

        let served = Reply::text("hi")
            .with_usage_from_request(4.0)
            .with_usage(3, 4)
            .for_request(&body);
        assert_eq!(usages(&served), vec![usage(3, 4)]);
    }

    #[test]
    fn replies_without_the_option_are_served_unchanged() {
        let body = json!({ "messages": [{ "role": "user", "content": "0123456789" }] });
        let served = Reply::text("hi").with_usage(3, 4).for_request(&body);
        assert_eq!(usages(&served), vec![usage(3, 4)]);
    }

    #[test]
    #[should_panic(expected = "chars_per_token must be positive")]
    fn usage_from_request_rejects_a_zero_ratio() {
        let _ = Reply::text("hi").with_usage_from_request(0.0);
    }
}
