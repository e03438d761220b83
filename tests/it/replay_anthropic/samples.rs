//! A test a recorded Anthropic sample, and an overload before any text retried.

use crate::support;

use support::replay::{attempts, error_messages, retries};
use support::Reply;

use super::check::check_turn;
use super::*;

rein_test_support::replay_tests! {
    text => "anthropic-text",
    tool_then_text => "anthropic-tool-then-text",
    parallel_tools_then_text => "anthropic-parallel-tools-then-text",
    thinking_text => "anthropic-thinking-text",
    cache_control_tool => "anthropic-cache-control-tool",
    cache_write_then_read => "anthropic-cache-write-then-read",
    refusal => "anthropic-refusal",
    overloaded_error_event => "anthropic-overloaded-error-event",
    overloaded_midstream => "anthropic-overloaded-midstream",
    thinking_dropped_400 => "anthropic-thinking-dropped-400",
    tool_result_missing_400 => "anthropic-tool-result-missing-400",
    cache_control_max4_400 => "anthropic-cache-control-max4-400",
    invalid_key_401 => "anthropic-401-invalid-key",
    model_404 => "anthropic-404-model",
    retry_after_429_then_ok => "anthropic-429-retry-after-then-ok",
    web_search_server_tool => "anthropic-web-search-server-tool",
}

#[test]
fn every_anthropic_sample_has_a_test() {
    let ours: Vec<&str> = index()
        .samples
        .iter()
        .filter(|s| s.api == "anthropic-messages")
        .map(|s| s.name.as_str())
        .collect();
    let mut tested = TESTED.to_vec();
    tested.sort_unstable();
    let mut all = ours.clone();
    all.sort_unstable();
    assert_eq!(tested, all);
}

/// An overload before anything was shown is tried again, as an HTTP 529 is: the error
/// event of a 200 stream, then a 529, then the recorded text.
#[tokio::test]
async fn an_overload_before_any_text_is_retried() {
    let text = sample("anthropic-text");
    let overloaded = &sample("anthropic-overloaded-error-event").responses[0];
    let replies = vec![
        recorded_reply(overloaded),
        Reply::plain(
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )
        .with_header("content-type", "application/json"),
        recorded_reply(&text.responses[0]),
    ];
    let run = run(text, replies, None).await;
    let retried = retries(&run.events);
    assert_eq!(retried.len(), 2, "{retried:?}");
    assert!(
        retried
            .iter()
            .all(|(_, reason)| reason.contains("Overloaded")),
        "{retried:?}"
    );
    assert!(
        error_messages(&run.events).is_empty(),
        "{:?}",
        error_messages(&run.events)
    );
    let attempts = attempts(&run.events);
    let mut problems = Vec::new();
    check_turn(&mut problems, 2, &text.expect.turns[0], &attempts[2], true);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(run.requests.len(), 3);
    assert_eq!(
        run.requests[0], run.requests[2],
        "a retry sends the same request"
    );
}
