//! What the server sends and how the loop takes it: retries and giving up, cut and stalled
//! streams, usage missing, reasoning, keep-alive comments, error objects, a server that
//! ignores `stream`, an empty reply, split characters, deltas that arrive together.

use crate::support;

use std::time::Duration;

use rein_core::agent::{self, AgentEvent, TurnOutcome, Usage};
use serde_json::json;
use support::agent::{outcome, tool_results, turn};
use support::{chunk, Reply, ScriptedServer, Step};

use super::{assert_history_valid, config, history, text_of};

/// The message of the first `Error` event.
fn first_error(events: &[AgentEvent]) -> String {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Error { message } => Some(message.clone()),
            _ => None,
        })
        .expect("an error event")
}

/// The figures of the first `Usage` event.
fn first_usage(events: &[AgentEvent]) -> Usage {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Usage(u) => Some(*u),
            _ => None,
        })
        .expect("a usage event")
}

#[tokio::test]
async fn server_error_500_is_retried_then_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::error(500, "upstream hiccup"),
        Reply::error(503, "still warming up"),
        Reply::text("Hello after retries."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let retries: Vec<(u32, u32, String)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Retrying {
                attempt,
                max_attempts,
                reason,
                ..
            } => Some((*attempt, *max_attempts, reason.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(retries.len(), 2, "{retries:?}");
    assert_eq!((retries[0].0, retries[0].1), (2, 5));
    assert!(retries[0].2.contains("500") && retries[0].2.contains("upstream hiccup"));
    assert_eq!(retries[1].0, 3);
    assert_eq!(text_of(&events), "Hello after retries.");
    assert_eq!(server.served(), 3);
}

#[tokio::test]
async fn rate_limit_429_waits_for_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::error(429, "Rate limit reached").with_header("Retry-After", "1"),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let delay = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Retrying { delay, reason, .. } => Some((*delay, reason.clone())),
            _ => None,
        })
        .expect("a retry event");
    assert_eq!(
        delay.0,
        Duration::from_secs(1),
        "Retry-After, not the 20 ms backoff"
    );
    assert!(delay.1.contains("429") && delay.1.contains("Rate limit reached"));
    // The work done: the refused request and the one after the wait.
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn gives_up_after_max_tries_and_shows_the_server_message() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(
        (0..5)
            .map(|_| Reply::error(502, "bad gateway today"))
            .collect(),
    )
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Failed);
    assert_eq!(server.served(), 5);
    let error = first_error(&events);
    assert!(
        error.contains("502") && error.contains("bad gateway today"),
        "{error}"
    );
}

#[tokio::test]
async fn unauthorized_is_not_retried() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::error(
        401,
        "Incorrect API key provided: sk-te***",
    )])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Failed);
    assert_eq!(server.served(), 1);
    assert!(events.iter().any(|e| matches!(e, AgentEvent::Error { message } if message.contains("401") && message.contains("Incorrect API key"))));
}

#[tokio::test]
async fn stream_cut_mid_reply_is_an_error_and_the_session_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::sse(vec![
            Step::Data(chunk(
                json!({"role": "assistant", "content": "Partial ans"}),
                None,
            )),
            Step::Data(chunk(json!({"content": "wer"}), None)),
            Step::Cut,
        ]),
        Reply::text("Second try works."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "first").await;
    assert_eq!(outcome(&events), TurnOutcome::Failed);
    assert_eq!(text_of(&events), "Partial answer");
    let error = first_error(&events);
    assert!(error.contains("broke off"), "{error}");
    assert_eq!(server.served(), 1, "text was shown, so no silent retry");

    let events = turn(&mut handle, "again").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let req = &server.requests()[1];
    assert_history_valid(req);
    let msgs = history(req);
    assert_eq!(msgs[2]["content"], "Partial answer");
    assert_eq!(msgs[3]["content"], "again");
}

#[tokio::test]
async fn stream_cut_before_any_text_is_retried() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::sse(vec![Step::Raw(": keepalive\n\n".into()), Step::Cut]),
        Reply::text("fine"),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    assert!(events
        .iter()
        .any(|e| matches!(e, AgentEvent::Retrying { .. })));
}

#[tokio::test]
async fn no_usage_from_the_server_is_estimated_and_marked() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("An answer of a few words.")
            .without_usage()
            .without_done(),
        Reply::text("with usage").with_usage(1234, 56),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let usage = first_usage(&events);
    assert!(usage.estimated);
    assert!(
        usage.prompt_tokens > 100,
        "system prompt and tools count: {usage:?}"
    );
    assert!(
        usage.completion_tokens >= 5 && usage.completion_tokens < 20,
        "{usage:?}"
    );
    assert_eq!(
        usage.total_tokens,
        usage.prompt_tokens + usage.completion_tokens
    );

    let events = turn(&mut handle, "again").await;
    let usage = first_usage(&events);
    assert!(!usage.estimated);
    assert_eq!(
        (
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.total_tokens
        ),
        (1234, 56, 1290)
    );
}

#[tokio::test]
async fn reasoning_of_a_final_reply_is_shown_but_not_sent_back() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::reasoning_then_text("The user greets me. I should greet back.", "Hello!"),
        Reply::sse(vec![
            Step::Data(chunk(
                json!({"role": "assistant", "reasoning": "OpenRouter style"}),
                None,
            )),
            Step::Data(chunk(json!({"content": "Again."}), Some("stop"))),
            Step::Done,
        ]),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    let reasoning: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ReasoningDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasoning, "The user greets me. I should greet back.");
    assert_eq!(text_of(&events), "Hello!");
    let events = turn(&mut handle, "again").await;
    assert!(events
        .iter()
        .any(|e| matches!(e, AgentEvent::ReasoningDelta { text } if text == "OpenRouter style")));
    let req = &server.requests()[1];
    assert_history_valid(req);
    let body = req.to_string();
    assert!(
        !body.contains("greet back"),
        "reasoning leaked into the request"
    );
    assert_eq!(
        req["messages"][2],
        json!({"role": "assistant", "content": "Hello!"})
    );
}

#[tokio::test]
async fn stalled_stream_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::sse(vec![
        Step::Data(chunk(
            json!({"role": "assistant", "content": "thinking about it"}),
            None,
        )),
        // A day: waited out, the turn would never end (the harness's deadline fails it).
        Step::Sleep(Duration::from_secs(86_400)),
        Step::Done,
    ])])
    .await
    .unwrap();
    let mut cfg = config(&server, dir.path());
    cfg.client.idle_timeout = Duration::from_millis(300);
    let mut handle = agent::spawn(cfg).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Failed);
    assert_eq!(server.served(), 1, "a stall is not retried");
    // The stall was given up on at the configured idle timeout, which the error names.
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Error { message }
            if message.contains("sent nothing for 300 ms"))),
        "{events:?}"
    );
}

#[tokio::test]
async fn keepalive_comments_keep_a_slow_stream_alive() {
    let dir = tempfile::tempdir().unwrap();
    let mut steps = vec![Step::Data(chunk(
        json!({"role": "assistant", "content": "slow "}),
        None,
    ))];
    for _ in 0..8 {
        steps.push(Step::Raw(": OPENROUTER PROCESSING\n\n".into()));
        steps.push(Step::Sleep(Duration::from_millis(100)));
    }
    steps.push(Step::Data(chunk(
        json!({"content": "but alive"}),
        Some("stop"),
    )));
    steps.push(Step::Done);
    let server = ScriptedServer::start(vec![Reply::sse(steps)])
        .await
        .unwrap();
    let mut cfg = config(&server, dir.path());
    cfg.client.idle_timeout = Duration::from_millis(300);
    // Comments are no part of the reply: what they may last is the keep-alive bound's
    // (tests/it/stream_bounds.rs), set far above the 0.8 s here.
    cfg.client.keepalive_timeout = Some(Duration::from_secs(30));
    let mut handle = agent::spawn(cfg).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed, "{events:?}");
    assert_eq!(text_of(&events), "slow but alive");
}

#[tokio::test]
async fn error_object_inside_the_stream_is_shown_and_not_retried() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::sse(vec![
            Step::Data(chunk(json!({"role": "assistant", "content": ""}), None)),
            Step::Data(json!({"error": {"message": "Provider returned error", "code": 502, "metadata": {"raw": "upstream model crashed"}}})),
        ]),
        Reply::text("recovered"),
    ])
    .await.unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Failed);
    let error = first_error(&events);
    assert!(
        error.contains("Provider returned error") && error.contains("upstream model crashed"),
        "{error}"
    );
    assert_eq!(server.served(), 1);
    // The next turn is valid: user and assistant messages still alternate.
    let events = turn(&mut handle, "again").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let msgs = history(&server.requests()[1]);
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert!(msgs[2]["content"]
        .as_str()
        .unwrap()
        .starts_with("(no reply: the request failed"));
}

#[tokio::test]
async fn a_server_that_ignores_stream_true_still_works() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::json(200, json!({
            "id": "x", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": [{"id": "abc", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"echo whole\"}"}}]
            }}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
        })),
        Reply::text("ok"),
    ])
    .await.unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed, "{events:?}");
    assert_eq!(tool_results(&events)[0].1, "whole");
}

#[tokio::test]
async fn an_empty_reply_keeps_the_history_valid() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::sse(vec![
            Step::Data(chunk(json!({"role": "assistant", "content": null}), None)),
            Step::Data(chunk(json!({}), Some("stop"))),
            Step::Done,
        ]),
        Reply::text("now with words"),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let events = turn(&mut handle, "say something").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let req = &server.requests()[1];
    assert_history_valid(req);
    assert_eq!(
        req["messages"][2],
        json!({"role": "assistant", "content": ""})
    );
}

#[tokio::test]
async fn split_characters_and_invalid_bytes_never_freeze_the_reply() {
    // One token's bytes per event cut "é" in two; a stray 0xFF byte sits in the middle.
    let dir = tempfile::tempdir().unwrap();
    let head = br#"data: {"choices":[{"index":0,"delta":{"content":"caf"#.to_vec();
    let mut first = head;
    first.push(0xC3);
    let mut second = vec![0xA9];
    second.extend_from_slice(b" ok \xFF done\"},\"finish_reason\":null}]}\n\n");
    let server = ScriptedServer::start(vec![Reply::sse(vec![
        Step::Bytes(first),
        Step::Sleep(Duration::from_millis(20)),
        Step::Bytes(second),
        Step::Data(chunk(json!({}), Some("stop"))),
        Step::Done,
    ])])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed, "{events:?}");
    assert_eq!(text_of(&events), "café ok \u{FFFD} done");
}

/// Pieces that arrive in one network read cross to the front end as one event (a
/// wake-up per read, not per chunk); reasoning and text keep their order; nothing is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deltas_that_arrive_together_cross_together() {
    let dir = tempfile::tempdir().unwrap();
    let mut steps = vec![Step::Data(chunk(
        json!({"role": "assistant", "content": ""}),
        None,
    ))];
    // Three bursts of 40 four-character chunks, a pause between them (three reads at least);
    // the first burst opens with reasoning.
    for _ in 0..5 {
        steps.push(Step::Data(chunk(
            json!({"reasoning_content": "hmm "}),
            None,
        )));
    }
    for burst in 0..3 {
        for i in 0..40 {
            steps.push(Step::Data(chunk(
                json!({"content": format!("{burst}{i:02} ")}),
                None,
            )));
        }
        steps.push(Step::Sleep(Duration::from_millis(100)));
    }
    steps.push(Step::Data(chunk(json!({}), Some("stop"))));
    steps.push(Step::Done);
    let server = ScriptedServer::start(vec![Reply::sse(steps)])
        .await
        .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "go").await;
    let expected: String = (0..3)
        .flat_map(|b| (0..40).map(move |i| format!("{b}{i:02} ")))
        .collect();
    assert_eq!(text_of(&events), expected);
    let deltas: Vec<&AgentEvent> = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                AgentEvent::TextDelta { .. } | AgentEvent::ReasoningDelta { .. }
            )
        })
        .collect();
    // The reasoning first, whole; then the text, in as many events as reads (a burst can
    // be split across two reads by the socket, never into chunk-sized events).
    assert!(
        matches!(deltas[0], AgentEvent::ReasoningDelta { text } if text == &"hmm ".repeat(5)),
        "{:?}",
        deltas[0]
    );
    let text_events = deltas.len() - 1;
    assert!(
        (3..=6).contains(&text_events),
        "{text_events} text events for 3 bursts of 40 chunks"
    );
}
