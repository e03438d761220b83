//! The scripted server does what its script says, checked with a plain HTTP client.
//!
//! Other tests trust this server to reproduce provider behaviour exactly (chunk
//! shapes, errors, stalls, cuts), so its own behaviour is pinned down here with
//! reqwest and a hand-rolled SSE reader, independent of rein's client.

use crate::support;

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{json, Value};
use support::{chunk, usage_chunk, Reply, ScriptedServer, Step};

fn completions(server: &ScriptedServer) -> String {
    format!("{}/chat/completions", server.base_url())
}

async fn post(server: &ScriptedServer, body: &Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(completions(server))
        .json(body)
        .send()
        .await
        .expect("request reaches the scripted server")
}

/// The `data:` payloads of an SSE body, in order (`[DONE]` included as a string).
fn data_events(body: &str) -> Vec<String> {
    body.split("\n\n")
        .filter_map(|event| event.strip_prefix("data: "))
        .map(str::to_string)
        .collect()
}

/// Reads a whole SSE reply and returns its data events, parsed (`[DONE]` as a JSON string).
async fn events(server: &ScriptedServer, body: &Value) -> Vec<Value> {
    let response = post(server, body).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    assert_eq!(
        response.headers()["cache-control"].to_str().unwrap(),
        "no-cache"
    );
    assert!(response.headers().get("content-length").is_none());
    let text = response.text().await.expect("whole SSE body");
    data_events(&text)
        .into_iter()
        .map(|d| serde_json::from_str(&d).unwrap_or(Value::String(d)))
        .collect()
}

fn deltas(events: &[Value]) -> Vec<&Value> {
    events
        .iter()
        .filter_map(|e| e.get("choices")?.get(0)?.get("delta"))
        .collect()
}

fn concat(events: &[Value], field: &str) -> String {
    deltas(events)
        .iter()
        .filter_map(|d| d.get(field)?.as_str())
        .collect()
}

fn finish_reasons(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| e.get("choices")?.get(0)?.get("finish_reason")?.as_str())
        .collect()
}

#[tokio::test]
async fn replies_are_served_in_order_and_requests_recorded() {
    let server = ScriptedServer::start(vec![Reply::text("first"), Reply::text("second")])
        .await
        .unwrap();
    assert!(server.base_url().starts_with("http://127.0.0.1:"));
    assert!(server.base_url().ends_with("/v1"));

    let one = events(&server, &json!({ "model": "m", "n": 1 })).await;
    assert_eq!(server.served(), 1);
    let two = reqwest::Client::new()
        .post(completions(&server))
        .header("Authorization", "Bearer sk-test")
        .json(&json!({ "model": "m", "n": 2 }))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();

    assert_eq!(concat(&one, "content"), "first");
    assert!(two.contains("\"second\""));
    assert_eq!(server.served(), 2);
    assert_eq!(
        server.requests(),
        vec![
            json!({ "model": "m", "n": 1 }),
            json!({ "model": "m", "n": 2 })
        ]
    );
    let headers = server.request_headers();
    assert_eq!(headers.len(), 2);
    assert!(headers[1].contains(&("authorization".to_string(), "Bearer sk-test".to_string())));
    assert!(headers[0]
        .iter()
        .any(|(k, v)| k == "content-type" && v == "application/json"));
}

#[tokio::test]
async fn non_json_body_is_recorded_as_a_string() {
    let server = ScriptedServer::start(vec![Reply::text("ok")])
        .await
        .unwrap();
    reqwest::Client::new()
        .post(completions(&server))
        .body("not json {")
        .send()
        .await
        .unwrap();
    assert_eq!(server.requests(), vec![Value::String("not json {".into())]);
}

#[tokio::test]
async fn text_reply_streams_openai_chunks_that_rebuild_the_text() {
    let text = "Hello there,  world!\nSecond line ünïcode ";
    let server = ScriptedServer::start(vec![Reply::text(text)])
        .await
        .unwrap();
    let events = events(&server, &json!({})).await;

    assert_eq!(concat(&events, "content"), text);
    // Role first, several content deltas, then stop, usage and [DONE].
    assert_eq!(deltas(&events)[0]["role"], "assistant");
    let pieces = deltas(&events)
        .iter()
        .filter(|d| d.get("content").is_some_and(|c| c != ""))
        .count();
    assert!(
        pieces > 3,
        "text should arrive in several deltas, got {pieces}"
    );
    assert_eq!(finish_reasons(&events), vec!["stop"]);
    let first = &events[0];
    assert_eq!(first["object"], "chat.completion.chunk");
    assert_eq!(first["model"], "scripted");
    assert_eq!(first["choices"][0]["index"], 0);
    let n = events.len();
    assert_eq!(events[n - 1], json!("[DONE]"));
    assert_eq!(events[n - 2]["choices"], json!([]));
    assert_eq!(
        events[n - 2]["usage"],
        json!({ "prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110 })
    );
}

#[tokio::test]
async fn usage_and_done_can_be_changed_or_dropped() {
    let server = ScriptedServer::start(vec![
        Reply::text("a b").with_usage(7, 3),
        Reply::text("a b").without_usage().without_done(),
        Reply::text("a b").without_usage().with_usage(1, 2),
    ])
    .await
    .unwrap();

    let custom = events(&server, &json!({})).await;
    let usage: Vec<&Value> = custom.iter().filter_map(|e| e.get("usage")).collect();
    assert_eq!(
        usage,
        vec![&json!({ "prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10 })]
    );

    let bare = events(&server, &json!({})).await;
    assert_eq!(concat(&bare, "content"), "a b");
    assert!(bare.iter().all(|e| e.get("usage").is_none()));
    assert!(!bare.contains(&json!("[DONE]")));
    assert_eq!(finish_reasons(&bare), vec!["stop"]);

    let readded = events(&server, &json!({})).await;
    let n = readded.len();
    assert_eq!(readded[n - 1], json!("[DONE]"));
    assert_eq!(readded[n - 2]["usage"]["total_tokens"], 3);
}

/// Reassembles streamed tool calls the way a client must: by index.
fn reassemble(events: &[Value]) -> Vec<(String, String, String)> {
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for delta in deltas(events) {
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"].as_u64().unwrap() as usize;
            if index == calls.len() {
                calls.push(Default::default());
            }
            let entry = &mut calls[index];
            if let Some(id) = call["id"].as_str() {
                entry.0 = id.to_string();
            }
            if let Some(name) = call["function"]["name"].as_str() {
                entry.1.push_str(name);
            }
            if let Some(args) = call["function"]["arguments"].as_str() {
                entry.2.push_str(args);
            }
        }
    }
    calls
}

#[tokio::test]
async fn tool_calls_reassemble_with_unique_ids() {
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            ("read_file", r#"{"path":"src/main.rs"}"#),
            ("bash", r#"{"command": "ls -la"#),
        ]),
        Reply::text_then_tool_calls("Let me look.", &[("read_file", "{}")]),
    ])
    .await
    .unwrap();

    let events1 = events(&server, &json!({})).await;
    let calls = reassemble(&events1);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].1, "read_file");
    assert_eq!(calls[0].2, r#"{"path":"src/main.rs"}"#);
    assert_eq!(calls[1].1, "bash");
    assert_eq!(
        calls[1].2, r#"{"command": "ls -la"#,
        "invalid JSON kept verbatim"
    );
    assert_eq!(finish_reasons(&events1), vec!["tool_calls"]);
    let argument_deltas = deltas(&events1)
        .iter()
        .filter(|d| d["tool_calls"][0]["index"] == 0 && d["tool_calls"][0].get("id").is_none())
        .count();
    assert!((2..=3).contains(&argument_deltas), "got {argument_deltas}");
    let header = &deltas(&events1)
        .into_iter()
        .find(|d| d.get("tool_calls").is_some())
        .unwrap()["tool_calls"][0];
    assert_eq!(header["type"], "function");
    assert_eq!(header["function"]["arguments"], "");

    let events2 = events(&server, &json!({})).await;
    assert_eq!(concat(&events2, "content"), "Let me look.");
    let calls2 = reassemble(&events2);
    assert_eq!(calls2.len(), 1);
    assert_eq!(calls2[0].2, "{}");

    let mut ids: Vec<&str> = calls.iter().chain(&calls2).map(|c| c.0.as_str()).collect();
    assert!(ids.iter().all(|id| id.starts_with("call_")));
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3, "tool-call ids must be unique");
}

#[tokio::test]
async fn reasoning_comes_before_text() {
    let server = ScriptedServer::start(vec![Reply::reasoning_then_text("Think hard.", "Answer.")])
        .await
        .unwrap();
    let events = events(&server, &json!({})).await;
    assert_eq!(concat(&events, "reasoning_content"), "Think hard.");
    assert_eq!(concat(&events, "content"), "Answer.");
    let ds = deltas(&events);
    let last_reasoning = ds
        .iter()
        .rposition(|d| d.get("reasoning_content").is_some())
        .unwrap();
    let first_text = ds
        .iter()
        .position(|d| d.get("content").is_some_and(|c| c != ""))
        .unwrap();
    assert!(last_reasoning < first_text);
}

#[tokio::test]
async fn error_reply_has_status_message_and_headers() {
    let server = ScriptedServer::start(vec![
        Reply::error(429, "slow down").with_header("Retry-After", "2"),
        Reply::plain(502, "<html>bad gateway</html>"),
    ])
    .await
    .unwrap();

    let response = post(&server, &json!({})).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "2");
    assert_eq!(response.headers()["content-type"], "application/json");
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body,
        json!({ "error": { "message": "slow down", "type": "server_error", "code": 429 } })
    );

    let response = post(&server, &json!({})).await;
    assert_eq!(response.status(), 502);
    assert_eq!(response.text().await.unwrap(), "<html>bad gateway</html>");
}

#[tokio::test]
async fn raw_steps_and_custom_chunks_are_written_verbatim() {
    let server = ScriptedServer::start(vec![Reply::sse(vec![
        Step::Raw(": ping\n\n".into()),
        Step::Data(chunk(json!({ "content": "x" }), None)),
        Step::Raw("data: {not json\n\n".into()),
        Step::Data(usage_chunk(5, 6)),
        Step::Done,
    ])])
    .await
    .unwrap();
    let text = post(&server, &json!({})).await.text().await.unwrap();
    assert!(text.starts_with(": ping\n\ndata: {"));
    let data = data_events(&text);
    assert_eq!(data[1], "{not json");
    assert_eq!(data[3], "[DONE]");
    let usage: Value = serde_json::from_str(&data[2]).unwrap();
    assert_eq!(usage["usage"]["total_tokens"], 11);
}

#[tokio::test]
async fn cut_closes_the_connection_before_done() {
    let server = ScriptedServer::start(vec![Reply::sse(vec![
        Step::Data(chunk(json!({ "content": "partial" }), None)),
        Step::Cut,
        Step::Done,
    ])])
    .await
    .unwrap();
    let response = post(&server, &json!({})).await;
    assert_eq!(response.status(), 200);
    let mut stream = response.bytes_stream();
    let mut seen = Vec::new();
    let mut errored = false;
    while let Some(item) = stream.next().await {
        match item {
            Ok(bytes) => seen.extend_from_slice(&bytes),
            Err(_) => {
                errored = true;
                break;
            }
        }
    }
    let seen = String::from_utf8_lossy(&seen);
    assert!(
        seen.contains("partial"),
        "data before the cut arrives: {seen:?}"
    );
    assert!(!seen.contains("[DONE]"), "nothing after the cut: {seen:?}");
    assert!(errored, "a reset reads as a body error, not a clean end");
}

#[tokio::test]
async fn sleep_delays_the_data_after_it() {
    let server = ScriptedServer::start(vec![Reply::sse(vec![
        Step::Data(chunk(json!({ "content": "before" }), None)),
        Step::Sleep(Duration::from_millis(200)),
        Step::Data(chunk(json!({ "content": "after" }), None)),
        Step::Done,
    ])])
    .await
    .unwrap();
    let started = Instant::now();
    let response = post(&server, &json!({})).await;
    let mut stream = response.bytes_stream();
    let first = stream.next().await.unwrap().unwrap();
    // The data before the sleep is flushed: it arrives on its own, without what follows.
    assert!(String::from_utf8_lossy(&first).contains("before"));
    assert!(!String::from_utf8_lossy(&first).contains("after"));
    let mut rest = Vec::new();
    while let Some(item) = stream.next().await {
        rest.extend_from_slice(&item.unwrap());
    }
    let total = started.elapsed();
    assert!(String::from_utf8_lossy(&rest).contains("after"));
    assert!(total >= Duration::from_millis(150), "took only {total:?}");
}

#[tokio::test]
async fn exhausted_script_answers_500_and_push_refills_it() {
    let server = ScriptedServer::start(vec![Reply::text("only")])
        .await
        .unwrap();
    post(&server, &json!({})).await.text().await.unwrap();

    let response = post(&server, &json!({ "again": true })).await;
    assert_eq!(response.status(), 500);
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body["error"]["message"],
        "scripted server: no reply left for request 2"
    );
    assert_eq!(server.served(), 1);
    assert_eq!(
        server.requests().len(),
        2,
        "the failed request is still recorded"
    );

    server.push(Reply::text("more"));
    let events = events(&server, &json!({})).await;
    assert_eq!(concat(&events, "content"), "more");
    assert_eq!(server.served(), 2);
}

#[tokio::test]
async fn models_and_unknown_paths() {
    let server = ScriptedServer::start(vec![]).await.unwrap();
    let client = reqwest::Client::new();
    let models: Value = client
        .get(format!("{}/models", server.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        models,
        json!({ "object": "list", "data": [{ "id": "scripted", "object": "model" }] })
    );
    let missing = client
        .get(format!("{}/nope", server.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    let body: Value = missing.json().await.unwrap();
    assert!(body["error"]["message"].is_string());
    assert_eq!(server.served(), 0);
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_requests_each_get_one_reply() {
    let replies = (0..20)
        .map(|i| Reply::text(&format!("reply {i}")))
        .collect();
    let server = ScriptedServer::start(replies).await.unwrap();
    let client = reqwest::Client::new();
    let url = completions(&server);
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let client = client.clone();
            let url = url.clone();
            tokio::spawn(async move {
                let text = client
                    .post(url)
                    .json(&json!({ "i": i }))
                    .send()
                    .await
                    .unwrap()
                    .text()
                    .await
                    .unwrap();
                let events: Vec<Value> = data_events(&text)
                    .iter()
                    .filter_map(|d| serde_json::from_str(d).ok())
                    .collect();
                concat(&events, "content")
            })
        })
        .collect();
    let mut texts = Vec::new();
    for task in tasks {
        texts.push(task.await.unwrap());
    }
    texts.sort();
    let mut expected: Vec<String> = (0..20).map(|i| format!("reply {i}")).collect();
    expected.sort();
    assert_eq!(texts, expected);
    assert_eq!(server.served(), 20);
    assert_eq!(server.requests().len(), 20);
}

#[tokio::test]
async fn client_disconnect_mid_stream_leaves_the_server_working() {
    let server = ScriptedServer::start(vec![
        Reply::sse(vec![
            Step::Data(chunk(json!({ "content": "a" }), None)),
            Step::Sleep(Duration::from_millis(50)),
            Step::Data(chunk(json!({ "content": "b" }), None)),
            Step::Sleep(Duration::from_millis(50)),
            Step::Done,
        ]),
        Reply::text("still here"),
    ])
    .await
    .unwrap();
    let response = post(&server, &json!({})).await;
    let mut stream = response.bytes_stream();
    stream.next().await.unwrap().unwrap();
    drop(stream);

    let events = events(&server, &json!({})).await;
    assert_eq!(concat(&events, "content"), "still here");
}

#[tokio::test]
async fn many_small_chunks_stream_through() {
    let steps: Vec<Step> = (0..20_000)
        .map(|_| Step::Data(chunk(json!({ "content": "x" }), None)))
        .chain([Step::Done])
        .collect();
    let server = ScriptedServer::start(vec![Reply::sse(steps)])
        .await
        .unwrap();
    let events = events(&server, &json!({})).await;
    assert_eq!(concat(&events, "content").len(), 20_000);
}

/// `GET /v1/models` answers what the test set, and keeps each request's headers (the key
/// `/model` sends with its listing).
#[tokio::test]
async fn the_model_list_is_set_by_the_test_and_its_headers_are_kept() {
    let server = ScriptedServer::start(vec![]).await.unwrap();
    server.answer_models(
        200,
        json!({"data": [{"id": "a"}, {"id": "b", "context_length": 8192}]}),
    );
    let client = reqwest::Client::new();
    let url = format!("{}/models", server.base_url());
    let listed: Value = client
        .get(&url)
        .bearer_auth("sk-list")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["data"][1]["context_length"], 8192);
    server.answer_models(401, json!("bad key"));
    let refused = client.get(&url).send().await.unwrap();
    assert_eq!(refused.status(), 401);
    let headers = server.model_list_headers();
    assert_eq!(headers.len(), 2);
    assert!(
        headers[0]
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case("authorization") && v == "Bearer sk-list"),
        "{headers:?}"
    );
}
