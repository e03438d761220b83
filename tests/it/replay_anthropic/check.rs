//! The checkers: each turn and outcome against the sample's expectation, and each request
//! against the Messages API's rules and what it must echo.

use crate::support;

use std::time::Duration;

use rein_core::agent::AgentEvent;
use serde_json::{json, Value};
use support::replay::{
    self, assistant_message, documented_finish, error_messages, shown_text, streamed_reasoning,
    streamed_text, usage_of, ExpectedOutcome,
};

use super::digest::sha256_16;
use super::*;

// ---------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------

/// What answer `k` should have shown, against its attempt's events.
pub(super) fn check_turn(
    problems: &mut Vec<String>,
    k: usize,
    want: &Value,
    events: &[&AgentEvent],
    last: bool,
) {
    let turn = format!("answer {}", k + 1);
    if let Some(status) = want["http_status"].as_u64() {
        let retried = matches!(events.last(), Some(AgentEvent::Retrying { .. }));
        let failed = !error_messages(events.iter().copied()).is_empty();
        if last && !failed {
            problems.push(format!(
                "{turn} (HTTP {status}) is the last: no error shown"
            ));
        }
        if !last && !retried {
            problems.push(format!(
                "{turn} (HTTP {status}) is not the last, yet not retried"
            ));
        }
        if !streamed_text(events.iter().copied()).is_empty() || assistant_message(events).is_some()
        {
            problems.push(format!("{turn} (HTTP {status}) showed a reply"));
        }
        return;
    }
    let str_of = |key: &str| want[key].as_str().unwrap_or("").to_string();
    let message = assistant_message(events);
    let shown = shown_text(events);
    let refusal = str_of("refusal");
    let text_seen = if refusal.is_empty() {
        shown.clone()
    } else {
        shown.replacen(&refusal, "", 1)
    };
    if text_seen != str_of("text") {
        problems.push(format!(
            "{turn}: text {text_seen:?} instead of {:?}",
            str_of("text")
        ));
    }
    let reasoning = streamed_reasoning(events.iter().copied());
    if reasoning != str_of("reasoning") {
        problems.push(format!("{turn}: reasoning {reasoning:?}"));
    }
    if !refusal.is_empty() && !shown.contains(&refusal) {
        problems.push(format!("{turn}: refusal {refusal:?} not shown"));
    }
    let started: Vec<Value> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallStarted { id, name, args } => {
                Some(json!({"id": id, "name": name, "args": args}))
            }
            _ => None,
        })
        .collect();
    let wanted: Vec<Value> = want["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let raw = c["arguments"].as_str().unwrap();
            let args = serde_json::from_str(raw).unwrap_or_else(|_| json!(raw));
            json!({"id": c["id"], "name": c["name"], "args": args})
        })
        .collect();
    if started != wanted {
        problems.push(format!("{turn}: calls {started:?} instead of {wanted:?}"));
    }
    if want["error"].is_string() {
        if error_messages(events.iter().copied()).is_empty() {
            problems.push(format!("{turn}: the error in the stream was not shown"));
        }
        if message.is_some() {
            problems.push(format!("{turn}: a failed stream made a finished message"));
        }
        return;
    }
    match message {
        None => problems.push(format!("{turn}: no finished message")),
        Some((_, refused, finish)) => {
            // The sample says Anthropic's word; rein says the documented one.
            let documented = want["finish_reason"]
                .as_str()
                .map(|w| documented_finish(w, !wanted.is_empty(), None));
            if finish != documented.as_deref() {
                problems.push(format!(
                    "{turn}: finish reason {finish:?} instead of {documented:?}"
                ));
            }
            if refused == refusal.is_empty() {
                problems.push(format!("{turn}: refusal flag {refused}"));
            }
        }
    }
    let u = &want["usage"];
    match usage_of(events) {
        None => problems.push(format!("{turn}: no usage shown")),
        Some(got) => {
            let got = json!([
                got.prompt_tokens,
                got.completion_tokens,
                got.total_tokens,
                got.cached_tokens,
                got.cache_write_tokens,
                got.estimated
            ]);
            let wanted = json!([
                u["prompt_tokens"],
                u["completion_tokens"],
                u["total_tokens"],
                u["cache_read_tokens"],
                u["cache_creation_tokens"],
                false
            ]);
            if got != wanted {
                problems.push(format!("{turn}: usage {got} instead of {wanted}"));
            }
        }
    }
}

/// How the turn ended, against the sample's `expect`.
pub(super) fn check_outcome(
    problems: &mut Vec<String>,
    sample: &Sample,
    events: &[AgentEvent],
    elapsed: Duration,
) {
    let expect = &sample.expect;
    let outcome = ExpectedOutcome {
        outcome: &expect.outcome,
        retries: expect.retries,
        retry_delay_ms: expect.retry_delay_ms,
        error_contains: &expect.error_contains,
        ..ExpectedOutcome::default()
    };
    replay::check_outcome(problems, &outcome, events, elapsed);
}

pub(super) fn kind(block: &Value) -> &str {
    block["type"].as_str().unwrap_or("")
}

/// Whether a request with these messages may have thinking on: not when it ends with
/// tool results whose assistant message does not open with a thinking block.
pub(super) fn may_think(messages: &[Value]) -> bool {
    let [.., assistant, last] = messages else {
        return true;
    };
    let answers_calls = last["role"] == "user" && kind(&last["content"][0]) == "tool_result";
    !answers_calls
        || matches!(
            kind(&assistant["content"][0]),
            "thinking" | "redacted_thinking"
        )
}

/// Whether a thinking echo entry (of `expect`) can go back: a thinking block streamed
/// with a signature, a redacted one with its data.
fn replayable(entry: &Value) -> bool {
    match entry["type"].as_str() {
        Some("thinking") => entry["signature_len"].as_u64().is_some_and(|n| n > 0),
        Some("redacted_thinking") => entry["data_len"].as_u64().is_some_and(|n| n > 0),
        _ => true,
    }
}

/// The shape of a Messages request and every Anthropic rule of the constraints table;
/// each violation named by its rule.
pub(super) fn request_violations(request: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if !request["max_tokens"].is_u64() || request["stream"] != true {
        out.push("shape: max_tokens and stream: true are required".into());
    }
    let Some(messages) = request["messages"].as_array() else {
        out.push("shape: no messages".into());
        return out;
    };
    for (i, m) in messages.iter().enumerate() {
        let want = if i % 2 == 0 { "user" } else { "assistant" };
        if m["role"] != want {
            out.push(format!("shape: messages[{i}] is {}, not {want}", m["role"]));
        }
        if m["content"].as_array().is_none_or(|c| c.is_empty()) {
            out.push(format!("shape: messages[{i}] has no content blocks"));
        }
    }
    fn empty_texts(value: &Value, found: &mut usize) {
        match value {
            Value::Object(o) => {
                if o.get("type") == Some(&json!("text"))
                    && o.get("text")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                {
                    *found += 1;
                }
                o.values().for_each(|v| empty_texts(v, found));
            }
            Value::Array(items) => items.iter().for_each(|v| empty_texts(v, found)),
            _ => {}
        }
    }
    let mut empty = 0;
    empty_texts(request, &mut empty);
    if empty > 0 {
        out.push(format!("shape: {empty} empty text block(s)"));
    }
    // anthropic_thinking_echo: a thinking block the API can verify (a signature), a
    // redacted one with its data; with thinking on, a request that ends in tool results
    // has its last assistant message open with thinking.
    for (i, m) in messages.iter().enumerate() {
        for block in m["content"].as_array().into_iter().flatten() {
            let empty = |key: &str| block[key].as_str().is_none_or(str::is_empty);
            let bad = match kind(block) {
                "thinking" => empty("signature"),
                "redacted_thinking" => empty("data"),
                _ => false,
            };
            if bad {
                out.push(format!(
                    "anthropic_thinking_echo: messages[{i}] holds {block}: Invalid `signature` in `thinking` block"
                ));
            }
        }
    }
    if request.get("thinking").is_some() && !may_think(messages) {
        out.push(
            "anthropic_thinking_echo: thinking is on, and the final assistant message does not open with a thinking block"
                .into(),
        );
    }
    // anthropic_cache_control_max4
    let markers = request.to_string().matches("\"cache_control\"").count();
    if markers > 4 {
        out.push(format!(
            "anthropic_cache_control_max4: {markers} cache_control blocks"
        ));
    }
    // anthropic_tool_result_follows
    for (i, m) in messages.iter().enumerate() {
        if m["role"] != "assistant" {
            continue;
        }
        let uses: Vec<&Value> = m["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| kind(b) == "tool_use")
            .map(|b| &b["id"])
            .collect();
        if uses.is_empty() {
            continue;
        }
        let next: Vec<&Value> = messages
            .get(i + 1)
            .filter(|n| n["role"] == "user")
            .and_then(|n| n["content"].as_array())
            .map(|c| {
                c.iter()
                    .take_while(|b| kind(b) == "tool_result")
                    .map(|b| &b["tool_use_id"])
                    .collect()
            })
            .unwrap_or_default();
        if next != uses {
            out.push(format!(
                "anthropic_tool_result_follows: messages[{i}] calls {uses:?}, the next message opens with results for {next:?}"
            ));
        }
    }
    out
}

/// anthropic_thinking_echo: the assistant message that made answer `k`'s calls, in every
/// later request, opens with the blocks `echo` lists, as streamed.
/// (`first` is the number of the first of `requests`, for the messages.)
pub(super) fn echo_violations(want: &Value, requests: &[Value], first: usize) -> Vec<String> {
    let mut out = Vec::new();
    let (Some(echo), Some(first_call)) = (
        want["echo"].as_array(),
        want["tool_calls"][0]["id"].as_str(),
    ) else {
        return out;
    };
    for (j, request) in requests.iter().enumerate() {
        let Some(message) = request["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|m| {
                m["role"] == "assistant"
                    && m["content"]
                        .as_array()
                        .is_some_and(|c| c.iter().any(|b| b["id"] == first_call))
            })
        else {
            continue;
        };
        let blocks: Vec<&Value> = message["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| kind(b) != "text")
            .collect();
        // A block the API cannot verify (streamed without its signature or data) cannot
        // go back, and the message then goes without any of its thinking.
        if !echo.iter().all(replayable) {
            if blocks
                .iter()
                .any(|b| matches!(kind(b), "thinking" | "redacted_thinking"))
            {
                out.push(format!(
                    "anthropic_thinking_echo: request {}: thinking that cannot be verified went back: {}",
                    j + first,
                    short(message)
                ));
            }
            continue;
        }
        for (e, block) in echo.iter().zip(
            blocks
                .iter()
                .copied()
                .chain(std::iter::repeat(&Value::Null)),
        ) {
            let ok = match e["type"].as_str() {
                Some("thinking") => {
                    let thinking = block["thinking"].as_str().unwrap_or("");
                    let signature = block["signature"].as_str().unwrap_or("");
                    kind(block) == "thinking"
                        && e["thinking_len"] == thinking.chars().count()
                        && e["signature_len"] == signature.chars().count()
                        && e["signature_sha256_16"] == sha256_16(signature)
                }
                Some("redacted_thinking") => {
                    let data = block["data"].as_str().unwrap_or("");
                    kind(block) == "redacted_thinking"
                        && e["data_len"] == data.chars().count()
                        && e["data_sha256_16"] == sha256_16(data)
                }
                Some("tool_use") => kind(block) == "tool_use" && block["id"] == e["id"],
                _ => false,
            };
            if !ok {
                out.push(format!(
                    "anthropic_thinking_echo: request {}: {} sent where the stream had {e}",
                    j + first,
                    short(block)
                ));
            }
        }
        if !message["content"][0]["type"]
            .as_str()
            .is_some_and(|t| t == "thinking" || t == "redacted_thinking")
        {
            out.push(format!(
                "anthropic_thinking_echo: request {}: the assistant message does not open with thinking",
                j + first
            ));
        }
    }
    out
}

fn short(v: &Value) -> String {
    let text = v.to_string();
    text.chars().take(120).collect()
}
