//! The harness the replay tests share (`provider_replay`, `replay_responses`,
//! `replay_anthropic`, and `native_agent` for its streamed text): reading the recorded
//! samples, serving a recorded response as the scripted server's reply, cutting a run's
//! events per HTTP request, reading what each attempt showed, and checking how a turn
//! ended against a sample's `expect`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rein_core::agent::{AgentEvent, TurnOutcome, Usage};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{Reply, Step};

// ---------------------------------------------------------------------------------------
// The samples
// ---------------------------------------------------------------------------------------

/// The native APIs' samples (Responses and Anthropic Messages) in the repository.
pub fn native_samples_dir() -> PathBuf {
    crate::repository().join("tests/provider-samples/native")
}

/// The bytes of the sample file `file` of `dir`.
pub fn read_sample(dir: &Path, file: &str) -> Vec<u8> {
    let path = dir.join(file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The `index.json` of `dir`, as `T`.
pub fn read_index<T: DeserializeOwned>(dir: &Path) -> T {
    let path = dir.join("index.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not the index this test knows: {e}", path.display()))
}

/// Whether recorded headers make a response a stream: its `content-type` (in any case)
/// says `event-stream`.
pub fn is_event_stream(headers: &BTreeMap<String, String>) -> bool {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        .is_some_and(|(_, v)| v.contains("event-stream"))
}

/// The scripted reply for one recorded response: its status, its headers and its body
/// byte for byte. A stream is written in the steps `stream` makes of the body; any other
/// body is sent whole, as text (`file` names it when it is not UTF-8).
pub fn recorded_reply(
    file: &str,
    status: u16,
    headers: &BTreeMap<String, String>,
    body: Vec<u8>,
    stream: impl FnOnce(Vec<u8>) -> Vec<Step>,
) -> Reply {
    let mut reply = if is_event_stream(headers) {
        Reply::sse(stream(body))
    } else {
        let text = String::from_utf8(body).unwrap_or_else(|_| panic!("{file} is not UTF-8 text"));
        Reply::plain(status, &text)
    };
    reply = reply.with_status(status);
    for (name, value) in headers {
        reply = reply.with_header(name, value);
    }
    reply
}

/// The JSON data of each SSE event of a body (comments, `[DONE]` and non-JSON data skipped).
pub fn sse_data(body: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut data: Vec<&str> = Vec::new();
    let mut flush = |data: &mut Vec<&str>| {
        let joined = data.join("\n");
        data.clear();
        if let Ok(value) = serde_json::from_str::<Value>(&joined) {
            out.push(value);
        }
    };
    for line in body.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            flush(&mut data);
        } else if let Some(rest) = line.strip_prefix("data:") {
            data.push(rest.strip_prefix(' ').unwrap_or(rest));
        }
    }
    flush(&mut data);
    out
}

/// A sample's finish reason (the API's own word, as `ref_responses.py` and
/// `ref_anthropic.py` give it) in the words docs/headless.md documents for the JSONL
/// `assistant_message`: `stop`, `tool_calls`, `length`, `content_filter`. `called`: the
/// reply called tools; `incomplete_reason`: a Responses reply's
/// `incomplete_details.reason`.
pub fn documented_finish(native: &str, called: bool, incomplete_reason: Option<&str>) -> String {
    let word = match native {
        "end_turn" | "stop_sequence" | "pause_turn" => "stop",
        "tool_use" => "tool_calls",
        "max_tokens" | "model_context_window_exceeded" => "length",
        "refusal" => "content_filter",
        "completed" if called => "tool_calls",
        "completed" => "stop",
        "incomplete" if incomplete_reason == Some("content_filter") => "content_filter",
        "incomplete" => "length",
        other => other,
    };
    word.to_string()
}

// ---------------------------------------------------------------------------------------
// The events of a run, per request
// ---------------------------------------------------------------------------------------

/// The events cut per HTTP request: one attempt from each `RequestStarted`, closed by a
/// `Retrying` (the retry's request is the next attempt) or by `TurnFinished`. Events
/// before the first request and between turns are left out. Attempt k is the one
/// response k answered.
pub fn attempts(events: &[AgentEvent]) -> Vec<Vec<&AgentEvent>> {
    let mut out: Vec<Vec<&AgentEvent>> = Vec::new();
    let mut open = false;
    // After a retry any event opens the next attempt; before the first request and
    // between turns only a request does.
    let mut retrying = false;
    for event in events {
        let request = matches!(event, AgentEvent::RequestStarted { .. });
        if request || (!open && retrying) {
            out.push(Vec::new());
            open = true;
            retrying = false;
        }
        if let Some(current) = out.last_mut().filter(|_| open) {
            current.push(event);
        }
        match event {
            AgentEvent::Retrying { .. } => {
                open = false;
                retrying = true;
            }
            AgentEvent::TurnFinished { .. } => open = false,
            _ => {}
        }
    }
    out
}

/// The text deltas, concatenated: the text as it streamed.
pub fn streamed_text<'a>(events: impl IntoIterator<Item = &'a AgentEvent>) -> String {
    events
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The reasoning deltas, concatenated.
pub fn streamed_reasoning<'a>(events: impl IntoIterator<Item = &'a AgentEvent>) -> String {
    events
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::ReasoningDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The finished message of an attempt: its text, whether it is a refusal, its finish
/// reason.
pub fn assistant_message<'a>(
    events: &[&'a AgentEvent],
) -> Option<(&'a str, bool, Option<&'a str>)> {
    events.iter().find_map(|e| match e {
        AgentEvent::AssistantMessage {
            text,
            refusal,
            finish_reason,
            ..
        } => Some((text.as_str(), *refusal, finish_reason.as_deref())),
        _ => None,
    })
}

/// The text the user sees for an attempt: the deltas as they streamed, or the finished
/// message's text when nothing streamed (as the dashboard does).
pub fn shown_text(events: &[&AgentEvent]) -> String {
    let streamed = streamed_text(events.iter().copied());
    if !streamed.is_empty() {
        return streamed;
    }
    assistant_message(events)
        .map(|(text, _, _)| text.to_string())
        .unwrap_or_default()
}

/// The usage an attempt showed, if any.
pub fn usage_of(events: &[&AgentEvent]) -> Option<Usage> {
    events.iter().find_map(|e| match e {
        AgentEvent::Usage(u) => Some(*u),
        _ => None,
    })
}

/// The message of each `Error`.
pub fn error_messages<'a>(events: impl IntoIterator<Item = &'a AgentEvent>) -> Vec<&'a str> {
    events
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::Error { message, .. } => Some(message.as_str()),
            _ => None,
        })
        .collect()
}

/// (delay, reason) of each `Retrying`.
pub fn retries(events: &[AgentEvent]) -> Vec<(Duration, &str)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Retrying { delay, reason, .. } => Some((*delay, reason.as_str())),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// How a turn ended
// ---------------------------------------------------------------------------------------

/// How a run should end, as a sample's `expect` says.
#[derive(Debug, Default)]
pub struct ExpectedOutcome<'a> {
    /// `completed` or `failed`.
    pub outcome: &'a str,
    /// How many times a request is tried again.
    pub retries: usize,
    /// How long each retry waits, when the sample says.
    pub retry_delay_ms: Option<u64>,
    /// Words every error shown must hold one of (each needle in some error).
    pub error_contains: &'a [String],
    /// Words no error, and no retry's reason, may show.
    pub error_excludes: &'a [String],
    /// Words each retry's reason must hold.
    pub retry_reason_contains: &'a [String],
}

/// How the run ended, against `expect`: its outcome, its retries (their number, delay and
/// reason, each on one line), and its errors (none for a completed run, one at least for
/// a failed one, each on one line, saying what the sample says).
pub fn check_outcome(
    problems: &mut Vec<String>,
    expect: &ExpectedOutcome,
    events: &[AgentEvent],
    elapsed: Duration,
) {
    let wanted = match expect.outcome {
        "completed" => TurnOutcome::Completed,
        "failed" => TurnOutcome::Failed,
        other => panic!("unknown outcome {other:?} in index.json"),
    };
    match events.last() {
        Some(AgentEvent::TurnFinished { outcome, .. }) if *outcome == wanted => {}
        Some(AgentEvent::TurnFinished { outcome, .. }) => {
            problems.push(format!("the turn ended {outcome:?} instead of {wanted:?}"))
        }
        other => problems.push(format!("the turn did not finish: last event {other:?}")),
    }

    let retried = retries(events);
    if retried.len() != expect.retries {
        problems.push(format!(
            "{} retries instead of {}: {retried:?}",
            retried.len(),
            expect.retries
        ));
    }
    for (delay, reason) in &retried {
        if reason.contains('\n') {
            problems.push(format!("a retry's reason is not one line: {reason:?}"));
        }
        for needle in expect.retry_reason_contains {
            if !reason.contains(needle.as_str()) {
                problems.push(format!(
                    "the retry's reason {reason:?} does not say {needle:?}"
                ));
            }
        }
        // The retry line is shown too: what an error must not show, it must not either.
        for needle in expect.error_excludes {
            if reason.contains(needle.as_str()) {
                problems.push(format!("the retry's reason {reason:?} shows {needle:?}"));
            }
        }
        if let Some(ms) = expect.retry_delay_ms {
            if *delay != Duration::from_millis(ms) {
                problems.push(format!("a retry waited {delay:?} instead of {ms} ms"));
            }
        }
    }
    if let Some(ms) = expect.retry_delay_ms {
        let waited = Duration::from_millis(ms);
        if elapsed < waited {
            problems.push(format!(
                "the turn took {elapsed:?}: it cannot have waited {waited:?}"
            ));
        }
    }

    let errors = error_messages(events);
    match wanted {
        TurnOutcome::Failed if errors.is_empty() => {
            problems.push("the turn failed without an error shown".to_string())
        }
        TurnOutcome::Completed if !errors.is_empty() => problems.push(format!(
            "the turn should complete, yet it showed errors {errors:?}"
        )),
        _ => {}
    }
    for message in &errors {
        if message.contains('\n') {
            problems.push(format!("the error is not one line: {message:?}"));
        }
    }
    for needle in expect.error_contains {
        if !errors.iter().any(|m| m.contains(needle.as_str())) {
            problems.push(format!("the error does not say {needle:?}: {errors:?}"));
        }
    }
    for needle in expect.error_excludes {
        if errors.iter().any(|m| m.contains(needle.as_str())) {
            problems.push(format!("the error shows {needle:?}: {errors:?}"));
        }
    }
}

/// One `#[tokio::test]` per `test => "sample"` pair, each calling `replay("sample")` (the
/// test file's own), and `TESTED`, the samples that have a test.
#[macro_export]
macro_rules! replay_tests {
    ($($test:ident => $sample:literal,)*) => {
        /// The samples that have a test below.
        const TESTED: &[&str] = &[$($sample),*];
        $(
            #[tokio::test]
            async fn $test() {
                replay($sample).await;
            }
        )*
    };
}
