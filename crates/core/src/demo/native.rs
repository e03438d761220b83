//! A scripted chat-completions stream told again in a native API's events: OpenAI's
//! Responses API or Anthropic's Messages API, as those services stream them (the shapes of
//! the recordings in `tests/provider-samples/native/`). So every scripted reply (text,
//! reasoning, parallel tool calls, usage, pauses, cuts) can answer a model spoken to in
//! either API: the tests and benchmarks run the same script on all three.
//!
//! Reasoning becomes a reasoning item with a summary and an `encrypted_content`
//! (Responses) or a thinking block with its `signature` (Anthropic), both made from the
//! reasoning text so a test can recognise them in the next request. `[DONE]` is dropped
//! (neither API sends it); the usage goes in the terminal event. Pauses, cuts and raw
//! bytes stay where they were.

use serde_json::{json, Value};

use super::reply::Step;
use crate::conversation::Api;

/// What is open while a stream is converted.
#[derive(Default)]
struct Open {
    /// The kind of the item or block being streamed (`reasoning`, `text`, `call`).
    kind: Option<&'static str>,
    /// Its place: Responses `output_index`, Anthropic content block `index`.
    index: usize,
    /// Its text so far (reasoning, text, or a call's arguments).
    text: String,
    /// A call's chat index, id and name.
    call: Option<(u64, String, String)>,
    /// The items finished so far (Responses `output`).
    done: Vec<Value>,
}

/// `steps` (a chat-completions stream) as `api` streams the same reply.
pub fn convert(steps: Vec<Step>, api: Api) -> Vec<Step> {
    if api == Api::Chat {
        return steps;
    }
    // The usage and finish reason are known before the stream starts in the native APIs'
    // first events (Anthropic's `message_start` carries the input tokens).
    let mut usage = (0u64, 0u64);
    for step in &steps {
        if let Step::Data(v) = step {
            if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
                usage = (
                    u["prompt_tokens"].as_u64().unwrap_or(0),
                    u["completion_tokens"].as_u64().unwrap_or(0),
                );
            }
        }
    }
    let mut out = vec![Step::Data(start(api, usage.0))];
    let mut open = Open::default();
    let mut finish: Option<String> = None;
    let mut ended = false;
    for step in steps {
        match step {
            Step::Data(chunk) => {
                let Some(choice) = chunk["choices"].get(0) else {
                    continue;
                };
                let delta = &choice["delta"];
                if let Some(r) = delta["reasoning_content"]
                    .as_str()
                    .filter(|r| !r.is_empty())
                {
                    piece(&mut out, &mut open, api, "reasoning", r, None);
                }
                if let Some(t) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                    piece(&mut out, &mut open, api, "text", t, None);
                }
                for call in delta["tool_calls"].as_array().into_iter().flatten() {
                    let index = call["index"].as_u64().unwrap_or(0);
                    let id = call["id"].as_str().unwrap_or("").to_string();
                    let name = call["function"]["name"].as_str().unwrap_or("").to_string();
                    let args = call["function"]["arguments"].as_str().unwrap_or("");
                    let same = open.call.as_ref().is_some_and(|(i, _, _)| *i == index);
                    let header = (!same).then_some((index, id, name));
                    piece(&mut out, &mut open, api, "call", args, header);
                }
                if let Some(reason) = choice["finish_reason"].as_str() {
                    finish = Some(reason.to_string());
                }
            }
            Step::Done => {
                if !ended {
                    close(&mut out, &mut open, api);
                    out.extend(
                        end(api, &open, finish.as_deref(), usage)
                            .into_iter()
                            .map(Step::Data),
                    );
                    ended = true;
                }
            }
            Step::Cut => {
                out.push(Step::Cut);
                return out;
            }
            other => out.push(other),
        }
    }
    if !ended && finish.is_some() {
        close(&mut out, &mut open, api);
        out.extend(
            end(api, &open, finish.as_deref(), usage)
                .into_iter()
                .map(Step::Data),
        );
    }
    out
}

/// The first event: `response.created`, or `message_start` with the input tokens.
fn start(api: Api, input: u64) -> Value {
    match api {
        Api::Anthropic => json!({
            "type": "message_start",
            "message": {
                "id": "msg_scripted", "type": "message", "role": "assistant",
                "model": "scripted", "content": [], "stop_reason": null,
                "usage": {"input_tokens": input, "output_tokens": 1},
            },
        }),
        _ => json!({
            "type": "response.created",
            "response": {"id": "resp_scripted", "object": "response", "status": "in_progress", "output": []},
        }),
    }
}

/// A piece of `kind` (with a call's header when it starts a call): the item or block it
/// belongs to is opened first (the one before closed).
fn piece(
    out: &mut Vec<Step>,
    open: &mut Open,
    api: Api,
    kind: &'static str,
    text: &str,
    header: Option<(u64, String, String)>,
) {
    if open.kind != Some(kind) || header.is_some() {
        close(out, open, api);
        open.kind = Some(kind);
        open.call = header;
        let item = match (api, kind) {
            (Api::Anthropic, "reasoning") => json!({"type": "thinking", "thinking": ""}),
            (Api::Anthropic, "text") => json!({"type": "text", "text": ""}),
            (Api::Anthropic, _) => {
                let (_, id, name) = open.call.clone().unwrap_or_default();
                json!({"type": "tool_use", "id": id, "name": name, "input": {}})
            }
            (_, "reasoning") => {
                json!({"type": "reasoning", "id": format!("rs_{}", open.index), "summary": []})
            }
            (_, "text") => json!({
                "type": "message", "id": format!("msg_{}", open.index),
                "status": "in_progress", "role": "assistant", "content": [],
            }),
            _ => {
                let (_, id, name) = open.call.clone().unwrap_or_default();
                json!({
                    "type": "function_call", "id": format!("fc_{}", open.index),
                    "call_id": id, "name": name, "arguments": "", "status": "in_progress",
                })
            }
        };
        out.push(Step::Data(match api {
            Api::Anthropic => json!({
                "type": "content_block_start", "index": open.index, "content_block": item,
            }),
            _ => json!({
                "type": "response.output_item.added", "output_index": open.index, "item": item,
            }),
        }));
    }
    if text.is_empty() {
        return;
    }
    open.text.push_str(text);
    let index = open.index;
    let event = match (api, kind) {
        (Api::Anthropic, "reasoning") => json!({
            "type": "content_block_delta", "index": index,
            "delta": {"type": "thinking_delta", "thinking": text},
        }),
        (Api::Anthropic, "text") => json!({
            "type": "content_block_delta", "index": index,
            "delta": {"type": "text_delta", "text": text},
        }),
        (Api::Anthropic, _) => json!({
            "type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": text},
        }),
        (_, "reasoning") => json!({
            "type": "response.reasoning_summary_text.delta", "item_id": format!("rs_{index}"),
            "output_index": index, "summary_index": 0, "delta": text,
        }),
        (_, "text") => json!({
            "type": "response.output_text.delta", "item_id": format!("msg_{index}"),
            "output_index": index, "content_index": 0, "delta": text,
        }),
        _ => json!({
            "type": "response.function_call_arguments.delta", "item_id": format!("fc_{index}"),
            "output_index": index, "delta": text,
        }),
    };
    out.push(Step::Data(event));
}

/// Close the open item or block, if any: its whole form in `output_item.done`, or its
/// signature and `content_block_stop`.
fn close(out: &mut Vec<Step>, open: &mut Open, api: Api) {
    let Some(kind) = open.kind.take() else {
        return;
    };
    let index = open.index;
    let text = std::mem::take(&mut open.text);
    match api {
        Api::Anthropic => {
            if kind == "reasoning" {
                out.push(Step::Data(json!({
                    "type": "content_block_delta", "index": index,
                    "delta": {"type": "signature_delta", "signature": signature(&text)},
                })));
            }
            out.push(Step::Data(
                json!({"type": "content_block_stop", "index": index}),
            ));
        }
        _ => {
            let item = match kind {
                "reasoning" => json!({
                    "type": "reasoning", "id": format!("rs_{index}"),
                    "summary": [{"type": "summary_text", "text": text}],
                    "encrypted_content": signature(&text),
                }),
                "text" => json!({
                    "type": "message", "id": format!("msg_{index}"), "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }),
                _ => {
                    let (_, id, name) = open.call.clone().unwrap_or_default();
                    json!({
                        "type": "function_call", "id": format!("fc_{index}"), "call_id": id,
                        "name": name, "arguments": text, "status": "completed",
                    })
                }
            };
            if kind == "call" {
                out.push(Step::Data(json!({
                    "type": "response.function_call_arguments.done",
                    "item_id": format!("fc_{index}"), "output_index": index, "arguments": text,
                })));
            }
            out.push(Step::Data(json!({
                "type": "response.output_item.done", "output_index": index, "item": item,
            })));
            open.done.push(item);
        }
    }
    open.call = None;
    open.index += 1;
}

/// The state a reasoning text is sealed with: recognisable, different for different text.
fn signature(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("sealed-{h:016x}")
}

/// The terminal events: `response.completed` with the output and usage, or
/// `message_delta` (stop reason, output tokens) and `message_stop`.
fn end(api: Api, open: &Open, finish: Option<&str>, usage: (u64, u64)) -> Vec<Value> {
    let (input, output) = usage;
    match api {
        Api::Anthropic => {
            let stop = match finish {
                Some("tool_calls") => "tool_use",
                Some("length") => "max_tokens",
                _ => "end_turn",
            };
            vec![
                json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                 "usage": {"output_tokens": output}}),
                json!({"type": "message_stop"}),
            ]
        }
        _ => vec![json!({
            "type": if finish == Some("length") { "response.incomplete" } else { "response.completed" },
            "response": {
                "id": "resp_scripted", "object": "response",
                "status": if finish == Some("length") { "incomplete" } else { "completed" },
                "output": open.done,
                "usage": {
                    "input_tokens": input,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": output,
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": input + output,
                },
            },
        })],
    }
}
