//! The OpenAI Responses samples (`tests/provider-samples/native/`, `api: "responses"`)
//! replayed through the real agent and client speaking `POST /v1/responses`.
//!
//! One test per sample: the scripted server answers the k-th request with the sample's
//! k-th response (status, headers, body byte for byte); the agent (its client set to
//! `Api::Responses`, the sample's model) gets the prompt and runs a turn, and one more
//! turn ("Go on.") when the first completed before every response was asked for (a
//! sample whose second answer follows a text reply). The samples' tools (`weather`,
//! `add`, ...) are not rein's, so their calls get an error result, which is all the next
//! request needs. Then the test checks:
//!
//! - what was shown per response, against `expect.turns[k]`: the text, reasoning and
//!   refusal, the tool calls started (id = the streamed `call_id`), the finish reason and
//!   usage of the finished message (cached tokens included), or the error in the stream;
//!   an HTTP error retried, or shown when it is the last;
//! - the turn's outcome, the number of retries and their delay, the error's words;
//! - every request: sent to `/v1/responses` for the sample's model with `store: false`,
//!   the prompt in a user message, and the Responses `constraints` of index.json: no
//!   item sent by or with an id (`rs_…`, `fc_…`); each call of an earlier response sent
//!   back as a `function_call` with its streamed `call_id`, name and arguments and
//!   answered by a `function_call_output` with the same `call_id`; each reasoning item
//!   the server streamed with `encrypted_content` sent back with the content of its
//!   `response.output_item.done` (not the `.added` copy) right before the item it
//!   produced; no reasoning item without encrypted content, and none without a
//!   following call or assistant message.

use crate::support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rein_core::agent::{AgentEvent, TurnOutcome};
use rein_core::conversation::Api;
use serde_json::Value;
use support::agent::{agent_config, test_client, turn, API_KEY};
use support::replay::{
    self, attempts, documented_finish, error_messages, is_event_stream, native_samples_dir,
    read_index, read_sample, recorded_reply, shown_text, sse_data, streamed_reasoning, usage_of,
    ExpectedOutcome,
};
use support::{Reply, ScriptedServer, Step};

const IDLE_TIMEOUT: Duration = Duration::from_secs(10);

fn index() -> Value {
    read_index(&native_samples_dir())
}

fn sample(name: &str) -> Value {
    index()["samples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no sample {name}"))
        .clone()
}

fn body_of(response: &Value) -> Vec<u8> {
    read_sample(&native_samples_dir(), response["file"].as_str().unwrap())
}

/// The recorded response's headers.
fn headers_of(response: &Value) -> BTreeMap<String, String> {
    serde_json::from_value(response["headers"].clone()).unwrap()
}

/// The recorded response as the scripted server sends it.
fn reply_for(response: &Value) -> Reply {
    recorded_reply(
        response["file"].as_str().unwrap(),
        response["status"].as_u64().unwrap() as u16,
        &headers_of(response),
        body_of(response),
        |body| vec![Step::Bytes(body)],
    )
}

/// The reasoning items of a response as `.added` gave them and as they ended (`.done`,
/// or a whole response's output): `(added encrypted content, done item)`.
fn reasoning_items(response: &Value) -> Vec<(Option<String>, Value)> {
    let body = body_of(response);
    if !is_event_stream(&headers_of(response)) {
        let whole: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        return whole["output"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|i| i["type"] == "reasoning")
            .map(|i| (None, i.clone()))
            .collect();
    }
    let events = sse_data(&String::from_utf8_lossy(&body));
    let added = |index: &Value| {
        events
            .iter()
            .find(|e| e["type"] == "response.output_item.added" && e["output_index"] == *index)
            .and_then(|e| e["item"]["encrypted_content"].as_str())
            .map(str::to_string)
    };
    events
        .iter()
        .filter(|e| e["type"] == "response.output_item.done" && e["item"]["type"] == "reasoning")
        .map(|e| (added(&e["output_index"]), e["item"].clone()))
        .collect()
}

/// The `incomplete_details.reason` of a response's terminal event (or whole response).
fn incomplete_reason(response: &Value) -> Option<String> {
    let body = body_of(response);
    let terminal = if is_event_stream(&headers_of(response)) {
        sse_data(&String::from_utf8_lossy(&body))
            .into_iter()
            .find(|e| e["type"] == "response.incomplete")
            .map(|e| e["response"].clone())
    } else {
        serde_json::from_slice::<Value>(&body).ok()
    }?;
    terminal["incomplete_details"]["reason"]
        .as_str()
        .map(str::to_string)
}

/// What response `k` should have shown, against its attempt's events.
fn check_turn(
    problems: &mut Vec<String>,
    k: usize,
    want: &Value,
    events: &[&AgentEvent],
    last: bool,
    incomplete_reason: Option<&str>,
) {
    let at = format!("response {}", k + 1);
    if let Some(status) = want["http_status"].as_u64() {
        let retried = matches!(events.last(), Some(AgentEvent::Retrying { .. }));
        if last && error_messages(events.iter().copied()).is_empty() {
            problems.push(format!("{at} (HTTP {status}) is the last: no error shown"));
        }
        if !last && !retried {
            problems.push(format!("{at} (HTTP {status}) was not retried"));
        }
        if !shown_text(events).is_empty() {
            problems.push(format!("{at} (HTTP {status}) showed a reply"));
        }
        return;
    }
    let refusal = want["refusal"].as_str().unwrap_or("");
    let text = shown_text(events);
    let shown_all = format!("{events:?}");
    if !refusal.is_empty() && !text.contains(refusal) && !shown_all.contains(refusal) {
        problems.push(format!("{at}: the refusal {refusal:?} was not shown"));
    }
    let text = if refusal.is_empty() {
        text
    } else {
        text.replacen(refusal, "", 1)
    };
    if text != want["text"].as_str().unwrap_or("") {
        problems.push(format!("{at}: text {text:?} instead of {}", want["text"]));
    }
    let reasoning = streamed_reasoning(events.iter().copied());
    if reasoning != want["reasoning"].as_str().unwrap_or("") {
        problems.push(format!(
            "{at}: reasoning {reasoning:?} instead of {}",
            want["reasoning"]
        ));
    }
    let started: Vec<Value> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallStarted { id, name, args, .. } => {
                Some(serde_json::json!([id, name, args]))
            }
            _ => None,
        })
        .collect();
    let wanted: Vec<Value> = want["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let raw = c["arguments"].as_str().unwrap_or("");
            let args = serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.into()));
            serde_json::json!([c["id"], c["name"], args])
        })
        .collect();
    if started != wanted {
        problems.push(format!(
            "{at}: calls started {started:?} instead of {wanted:?}"
        ));
    }
    if let Some(error) = want["error"].as_str() {
        let shown = error_messages(events.iter().copied());
        if !shown.iter().any(|m| m.contains(error)) {
            problems.push(format!(
                "{at}: the error {error:?} was not shown: {shown:?}"
            ));
        }
        return;
    }
    let finish = events.iter().find_map(|e| match e {
        AgentEvent::AssistantMessage { finish_reason, .. } => Some(finish_reason.clone()),
        _ => None,
    });
    // The sample says the API's status; rein says the documented word.
    let documented = want["finish_reason"]
        .as_str()
        .map(|w| documented_finish(w, !wanted.is_empty(), incomplete_reason));
    match finish {
        None => problems.push(format!("{at}: no finished assistant message")),
        Some(reason) if reason != documented => problems.push(format!(
            "{at}: finish reason {reason:?} instead of {documented:?}"
        )),
        Some(_) => {}
    }
    match usage_of(events) {
        None => problems.push(format!("{at}: no usage shown")),
        Some(u) => {
            let got = serde_json::json!([
                u.prompt_tokens,
                u.completion_tokens,
                u.total_tokens,
                u.cached_tokens.unwrap_or(0),
                u.estimated
            ]);
            let w = &want["usage"];
            let wanted = serde_json::json!([
                w["prompt_tokens"],
                w["completion_tokens"],
                w["total_tokens"],
                w["cached_tokens"],
                false
            ]);
            if got != wanted {
                problems.push(format!(
                    "{at}: usage (prompt, completion, total, cached, estimated) {got} instead of {wanted}"
                ));
            }
        }
    }
}

/// How the run ended, against `expect`.
fn check_outcome(
    problems: &mut Vec<String>,
    expect: &Value,
    events: &[AgentEvent],
    elapsed: Duration,
) {
    let error_contains: Vec<String> = expect["error_contains"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|needle| needle.as_str().unwrap_or("").to_string())
        .collect();
    let outcome = ExpectedOutcome {
        outcome: expect["outcome"].as_str().unwrap_or(""),
        retries: expect["retries"].as_u64().unwrap_or(0) as usize,
        retry_delay_ms: expect["retry_delay_ms"].as_u64(),
        error_contains: &error_contains,
        ..ExpectedOutcome::default()
    };
    replay::check_outcome(problems, &outcome, events, elapsed);
}

// ---------------------------------------------------------------------------------------
// The requests
// ---------------------------------------------------------------------------------------

fn is_assistant_message(item: &Value) -> bool {
    item["role"] == "assistant"
}

/// Request `j` (after responses `0..j`) against the shape and the Responses constraints.
fn check_request(problems: &mut Vec<String>, sample: &Value, j: usize, request: &Value) {
    let at = format!("request {}", j + 1);
    if request["model"] != sample["model"] || request["store"] != false || request["stream"] != true
    {
        problems.push(format!(
            "{at}: model {}, store {}, stream {}",
            request["model"], request["store"], request["stream"]
        ));
    }
    let Some(input) = request["input"].as_array() else {
        problems.push(format!("{at}: no input array"));
        return;
    };
    let prompt = sample["prompt"].as_str().unwrap_or("");
    let has_prompt = input.iter().any(|i| {
        i["role"] == "user"
            && i["content"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|p| p["text"].as_str().is_some_and(|t| t.contains(prompt)))
    });
    if !has_prompt {
        problems.push(format!("{at}: no user message holds the prompt"));
    }
    // No item by or with an id: with store=false, ids are not resolvable.
    for (n, item) in input.iter().enumerate() {
        if item.get("id").is_some() || item["type"] == "item_reference" {
            problems.push(format!("{at}: input[{n}] carries an id: {item}"));
        }
    }
    // Every reasoning item sent: with encrypted content, followed by what it produced.
    for (n, item) in input.iter().enumerate() {
        if item["type"] != "reasoning" {
            continue;
        }
        if item["encrypted_content"].as_str().is_none_or(str::is_empty) {
            problems.push(format!(
                "{at}: input[{n}] is a reasoning item without encrypted_content"
            ));
        }
        let next = input.get(n + 1);
        if !next.is_some_and(|i| i["type"] == "function_call" || is_assistant_message(i)) {
            problems.push(format!(
                "responses_reasoning_needs_following_item: {at}: input[{n}] is followed by {next:?}"
            ));
        }
    }
    let turns = sample["expect"]["turns"].as_array().unwrap();
    let responses = sample["responses"].as_array().unwrap();
    for (k, turn) in turns.iter().enumerate().take(j) {
        // The calls made, sent back by call_id, then answered.
        let calls = turn["tool_calls"].as_array().cloned().unwrap_or_default();
        for call in &calls {
            let sent = input
                .iter()
                .position(|i| i["type"] == "function_call" && i["call_id"] == call["id"]);
            match sent {
                None => problems.push(format!("{at}: the call {} is not sent back", call["id"])),
                Some(p) => {
                    let item = &input[p];
                    if item["name"] != call["name"] || item["arguments"] != call["arguments"] {
                        problems.push(format!(
                            "{at}: the call is sent back as {item}, made as {call}"
                        ));
                    }
                    let answered = input[p..]
                        .iter()
                        .any(|i| i["type"] == "function_call_output" && i["call_id"] == call["id"]);
                    if !answered {
                        problems.push(format!(
                            "{at}: no function_call_output answers {} after its call",
                            call["id"]
                        ));
                    }
                }
            }
        }
        // The reasoning streamed with encrypted content: back as `.done` gave it, right
        // before the item it produced.
        let echo = turn["echo"].as_array().cloned().unwrap_or_default();
        let reasoning = reasoning_items(&responses[k]);
        let mut r = 0;
        for (e, entry) in echo.iter().enumerate() {
            if entry["type"] != "reasoning" {
                continue;
            }
            let Some((added, done)) = reasoning.get(r) else {
                problems.push(format!(
                    "{at}: response {} has fewer reasoning items than its echo",
                    k + 1
                ));
                break;
            };
            r += 1;
            let Some(content) = done["encrypted_content"].as_str() else {
                continue;
            };
            if Some(content.len() as u64) != entry["encrypted_content_len"].as_u64() {
                problems.push(format!(
                    "{at}: the sample's encrypted content is not the one its echo lists"
                ));
            }
            let sent = input
                .iter()
                .position(|i| i["type"] == "reasoning" && i["encrypted_content"] == content);
            let Some(p) = sent else {
                let stale = added
                    .as_deref()
                    .is_some_and(|a| input.iter().any(|i| i["encrypted_content"] == a));
                problems.push(format!(
                    "responses_reasoning_echo_store_false: {at}: the reasoning item {} of response {} is not sent back with its .done encrypted_content{}",
                    entry["id"],
                    k + 1,
                    if stale { " (the .added copy was sent)" } else { "" }
                ));
                continue;
            };
            if input[p]["summary"] != done["summary"] {
                problems.push(format!("{at}: the reasoning item's summary changed"));
            }
            let next = &input.get(p + 1).cloned().unwrap_or(Value::Null);
            let follows = match echo.get(e + 1) {
                Some(f) if f["type"] == "function_call" => {
                    next["type"] == "function_call" && next["call_id"] == f["call_id"]
                }
                _ => is_assistant_message(next),
            };
            if !follows {
                problems.push(format!(
                    "responses_function_call_needs_reasoning: {at}: the reasoning item {} is followed by {next}, not the item it produced",
                    entry["id"]
                ));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The replay
// ---------------------------------------------------------------------------------------

async fn replay(name: &str) {
    let sample = sample(name);
    let responses = sample["responses"].as_array().unwrap();
    let expect = &sample["expect"];
    let turns = expect["turns"].as_array().unwrap();
    assert_eq!(sample["api"], "responses");
    assert_eq!(responses.len(), turns.len());

    let server = ScriptedServer::start(responses.iter().map(reply_for).collect())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut client = test_client(
        server.base_url(),
        API_KEY,
        sample["model"].as_str().unwrap(),
    );
    client.api = Api::Responses;
    client.idle_timeout = IDLE_TIMEOUT;
    let mut handle = rein_core::agent::spawn(agent_config(client, dir.path())).unwrap();
    let started = Instant::now();
    let mut events = turn(&mut handle, sample["prompt"].as_str().unwrap()).await;
    // A text reply before the last response: the next user message asks for it.
    while server.requests().len() < responses.len()
        && matches!(
            events.last(),
            Some(AgentEvent::TurnFinished {
                outcome: TurnOutcome::Completed,
                ..
            })
        )
    {
        events.extend(turn(&mut handle, "Go on.").await);
    }
    let elapsed = started.elapsed();

    let mut problems = Vec::new();
    let requests = server.requests();
    if requests.len() != responses.len() {
        problems.push(format!(
            "{} requests for {} responses",
            requests.len(),
            responses.len()
        ));
    }
    for path in server.request_paths() {
        if path != "/v1/responses" {
            problems.push(format!("a request went to {path}"));
        }
    }
    let attempts = attempts(&events);
    if attempts.len() != turns.len() {
        problems.push(format!(
            "{} attempts for {} responses",
            attempts.len(),
            turns.len()
        ));
    }
    for (k, (want, events)) in turns.iter().zip(&attempts).enumerate() {
        let reason = incomplete_reason(&responses[k]);
        let last = k + 1 == turns.len();
        check_turn(&mut problems, k, want, events, last, reason.as_deref());
    }
    check_outcome(&mut problems, expect, &events, elapsed);
    for (j, request) in requests.iter().enumerate() {
        check_request(&mut problems, &sample, j, request);
    }
    assert!(
        problems.is_empty(),
        "sample {name} (constraints {}): {} problem(s)\n  - {}",
        sample["constraints"],
        problems.len(),
        problems.join("\n  - ")
    );
}

rein_test_support::replay_tests! {
    text => "responses-text",
    tool_then_text => "responses-tool-then-text",
    gpt5_parallel_tools_then_text => "responses-gpt5-parallel-tools-then-text",
    gpt5_reasoning_summary_tool => "responses-gpt5-reasoning-summary-tool",
    web_search_cached_tokens => "responses-web-search-cached-tokens",
    failed_rate_limit => "responses-failed-rate-limit",
    invalid_temperature_400 => "responses-400-invalid-temperature",
    bad_key_401 => "responses-401-bad-key",
    model_not_found_404 => "responses-404-model-not-found",
    retry_after_429_then_ok => "responses-429-retry-after-then-ok",
    store_false_reasoning_id_404 => "responses-store-false-reasoning-id-404",
    function_call_without_reasoning_400 => "responses-function-call-without-reasoning-400",
    reasoning_without_following_item_400 => "responses-reasoning-without-following-item-400",
    refusal => "responses-refusal",
}

#[test]
fn every_responses_sample_has_a_test() {
    let mut samples: Vec<String> = index()["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["api"] == "responses")
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    samples.sort();
    let mut tested: Vec<String> = TESTED.iter().map(|s| s.to_string()).collect();
    tested.sort();
    assert_eq!(samples, tested);
}

/// The request checker catches what it is for: an id, a reasoning item without its
/// encrypted content or its following item, the `.added` copy, a call not answered.
#[test]
fn the_request_checker_catches_broken_requests() {
    let sample = sample("responses-gpt5-reasoning-summary-tool");
    let (added, done) = reasoning_items(&sample["responses"][0]).remove(0);
    let call = &sample["expect"]["turns"][0]["tool_calls"][0];
    let good = serde_json::json!({
        "model": sample["model"], "store": false, "stream": true,
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": sample["prompt"]}]},
            {"type": "reasoning", "summary": done["summary"], "encrypted_content": done["encrypted_content"]},
            {"type": "function_call", "call_id": call["id"], "name": call["name"], "arguments": call["arguments"]},
            {"type": "function_call_output", "call_id": call["id"], "output": "x"},
        ]
    });
    let check = |request: &Value| {
        let mut problems = Vec::new();
        check_request(&mut problems, &sample, 1, request);
        problems.join("\n")
    };
    assert_eq!(check(&good), "");
    let broken = |edit: &dyn Fn(&mut Vec<Value>)| {
        let mut r = good.clone();
        edit(r["input"].as_array_mut().unwrap());
        check(&r)
    };
    assert!(broken(&|i| i[2]["id"] = "fc_1".into()).contains("carries an id"));
    assert!(
        broken(&|i| i[1]["encrypted_content"] = added.clone().unwrap().into())
            .contains("the .added copy was sent")
    );
    assert!(broken(&|i| {
        i.remove(1);
    })
    .contains("responses_reasoning_echo_store_false"));
    assert!(broken(&|i| i.swap(1, 2)).contains("responses_reasoning_needs_following_item"));
    assert!(broken(&|i| {
        i.pop();
    })
    .contains("no function_call_output"));
    assert!(
        broken(&|i| i[1]["encrypted_content"] = "".into()).contains("without encrypted_content")
    );
}

/// A Responses stream for the scripted server: `items` (each an output item as it ends,
/// and its deltas) between `response.created` and `response.completed`.
fn responses_stream(items: Vec<(Value, Vec<Value>)>) -> Reply {
    let mut events = vec![serde_json::json!({"type": "response.created",
        "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}})];
    let mut output = Vec::new();
    for (index, (item, deltas)) in items.into_iter().enumerate() {
        let mut added = item.clone();
        if let Some(o) = added.as_object_mut() {
            o.remove("encrypted_content");
        }
        events.push(serde_json::json!({"type": "response.output_item.added",
            "output_index": index, "item": added}));
        for mut delta in deltas {
            delta["output_index"] = index.into();
            events.push(delta);
        }
        events.push(serde_json::json!({"type": "response.output_item.done",
            "output_index": index, "item": item}));
        output.push(item);
    }
    events.push(
        serde_json::json!({"type": "response.completed", "response": {
        "id": "resp_1", "object": "response", "status": "completed", "output": output,
        "usage": {"input_tokens": 20, "output_tokens": 10, "total_tokens": 30}}}),
    );
    Reply::sse(events.into_iter().map(Step::Data).collect())
}

/// A reasoning item as the service ends it: with its encrypted content only when the
/// request asked for it (`include`).
fn reasoning(id: &str, summary: &str, asked: bool) -> (Value, Vec<Value>) {
    let mut item = serde_json::json!({"type": "reasoning", "id": id,
        "summary": [{"type": "summary_text", "text": summary}]});
    if asked {
        item["encrypted_content"] = format!("gAAAA-{id}").into();
    }
    (item, Vec::new())
}

fn function_call(call_id: &str, command: &str) -> (Value, Vec<Value>) {
    let arguments = serde_json::json!({"command": command}).to_string();
    (
        serde_json::json!({"type": "function_call", "id": format!("fc_{call_id}"),
            "call_id": call_id, "name": "bash", "arguments": arguments, "status": "completed"}),
        Vec::new(),
    )
}

fn message(text: &str) -> (Value, Vec<Value>) {
    (
        serde_json::json!({"type": "message", "id": "msg_1", "role": "assistant",
            "status": "completed", "content": [{"type": "output_text", "text": text}]}),
        vec![serde_json::json!({"type": "response.output_text.delta", "delta": text})],
    )
}

/// What a reasoning model's server does with `store: false`: a reasoning item given
/// without its encrypted content is looked up by id and not found (404, in the service's
/// words); otherwise it answers `reply` with the encrypted content only when asked for.
fn answer(request: &Value, reply: impl Fn(bool) -> Reply) -> Reply {
    let input = request["input"].as_array().cloned().unwrap_or_default();
    let unresolvable = input.iter().find(|i| {
        i["type"] == "item_reference"
            || (i["type"] == "reasoning"
                && i["encrypted_content"].as_str().is_none_or(str::is_empty))
    });
    if let Some(item) = unresolvable {
        let message = format!(
            "Item with id '{}' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.",
            item["id"].as_str().unwrap_or("rs_unknown")
        );
        return Reply::plain(
            404,
            &serde_json::json!({"error": {"message": message, "type": "invalid_request_error",
                "param": "input", "code": null}})
            .to_string(),
        );
    }
    let asked = request["include"]
        .as_array()
        .is_some_and(|i| i.iter().any(|v| v == "reasoning.encrypted_content"));
    reply(asked)
}

/// Issue 42: a model rein does not know reasons (an Azure deployment's name here) and its
/// reasoning is asked for once a reply showed it: the first request has no `include` (the
/// model might refuse it), the first reply carries a reasoning item, and every request
/// after it asks for `reasoning.encrypted_content`, so the next reasoning goes back whole
/// (and the first, streamed without it, is left out rather than sent by id, which the
/// server cannot find); a session resumed from its file asks from its first request.
/// Through the real agent and client, against a server that answers as the service does.
#[tokio::test]
async fn a_model_that_showed_it_reasons_is_asked_for_its_reasoning() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(0usize));
    let counter = seen.clone();
    let router: support::Router = std::sync::Arc::new(move |request: &Value| {
        let mut n = counter.lock().unwrap();
        *n += 1;
        let k = *n;
        Some(answer(request, move |asked| match k {
            1 => responses_stream(vec![
                reasoning("rs_1", "List first.", asked),
                function_call("call_1", "echo one"),
            ]),
            2 => responses_stream(vec![
                reasoning("rs_2", "Now say it.", asked),
                message("Listed."),
            ]),
            3 => responses_stream(vec![
                reasoning("rs_3", "Again.", asked),
                function_call("call_3", "echo three"),
            ]),
            4 => responses_stream(vec![message("Again done.")]),
            _ => responses_stream(vec![
                reasoning("rs_5", "Resumed.", asked),
                message("Resumed."),
            ]),
        }))
    });
    let server = ScriptedServer::start_routed(Vec::new(), router)
        .await
        .unwrap();
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let config = || {
        let mut client = test_client(server.base_url(), API_KEY, "my-deployment");
        client.api = Api::Responses;
        client.idle_timeout = IDLE_TIMEOUT;
        support::agent::agent_config(client, project.path())
    };
    let (mut agent, path) = support::agent::spawn_recorded(config(), data.path());
    for (prompt, said) in [("one", "Listed."), ("two", "Again done.")] {
        let events = turn(&mut agent, prompt).await;
        assert!(
            error_messages(&events).is_empty(),
            "{prompt}: {:?}",
            error_messages(&events)
        );
        assert_eq!(shown_text(&events.iter().collect::<Vec<_>>()), said);
    }
    agent.shut_down().await;
    let loaded = rein_core::session::load(&path).unwrap();
    let mut agent = support::agent::spawn_resumed(config(), loaded, data.path());
    let events = turn(&mut agent, "three").await;
    assert!(
        error_messages(&events).is_empty(),
        "{:?}",
        error_messages(&events)
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let include = |r: &Value| r.get("include").cloned();
    let asked = Some(serde_json::json!(["reasoning.encrypted_content"]));
    assert_eq!(
        include(&requests[0]),
        None,
        "not before the model showed it reasons"
    );
    for (j, request) in requests.iter().enumerate().skip(1) {
        assert_eq!(include(request), asked, "request {}", j + 1);
        assert!(
            request.get("reasoning").is_none(),
            "no effort rein was not given"
        );
    }
    let reasoning_sent = |r: &Value| -> Vec<Value> {
        r["input"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|i| i["type"] == "reasoning")
            .map(|i| i["encrypted_content"].clone())
            .collect()
    };
    // Request 2: the first reasoning came without encrypted content: left out.
    assert_eq!(reasoning_sent(&requests[1]), Vec::<Value>::new());
    // Then every reasoning streamed with it goes back whole.
    assert_eq!(reasoning_sent(&requests[2]), ["gAAAA-rs_2"]);
    assert_eq!(reasoning_sent(&requests[3]), ["gAAAA-rs_2", "gAAAA-rs_3"]);
    assert_eq!(reasoning_sent(&requests[4]), ["gAAAA-rs_2", "gAAAA-rs_3"]);
}
