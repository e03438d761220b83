//! The Responses reader against the recorded provider samples (each answer as its
//! `expect` says, the streams cut anywhere) and against hand-written events: a call's
//! arguments, errors busy or not, malformed events, reasoning parts, a whole response
//! and the terminal event that ends the reply.

use super::*;
use crate::agent::sse::SseParser;
use crate::conversation::ToolCall;
use serde_json::json;

/// A sample: its name, its answers (file, content type, status), its expected turns.
type Sample = (String, Vec<(String, String, u16)>, Vec<Value>);

/// Every Responses sample of the native samples' index.
fn samples() -> Vec<Sample> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/provider-samples/native");
    let index: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).unwrap()).unwrap();
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
    let text = |t: &str| json!({"type":"response.output_text.delta","output_index":0,"delta":t});
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

mod partial;
