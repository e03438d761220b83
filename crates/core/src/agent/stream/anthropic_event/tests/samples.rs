//! The Anthropic reader against the recorded provider samples
//! (`tests/provider-samples/native`): every 200 answer as its `expect.turns` says, the
//! streams cut anywhere, and every event with one value mangled.

use super::*;
use crate::agent::sse::SseParser;
use std::path::PathBuf;

fn samples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/provider-samples/native")
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
        .map(crate::agent::stream::finish::anthropic);
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
        .map(|c| json!({"id": c.id, "name": c.function.name, "arguments": c.function.arguments}))
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
