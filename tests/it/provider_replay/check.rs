//! The checkers: each turn and outcome against the sample's expectation, and each request
//! against the provider's rules (order, echoes).

use crate::support;

use std::time::Duration;

use rein_core::agent::AgentEvent;
use serde_json::Value;
use support::replay::{
    self, assistant_message, error_messages, shown_text, streamed_reasoning, streamed_text,
    usage_of, ExpectedOutcome,
};

use super::stream::{
    details_encrypted, details_signatures, details_summary, details_text, displayed_args,
    same_text, short, shows, started_calls,
};
use super::*;
/// The tag that opens rein's reminder.
const REMINDER_OPEN: &str = "<system-reminder>";
const REMINDER_CLOSE: &str = "</system-reminder>";

// ---------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------

/// What one response should have shown, against attempt `k`'s events.
pub(super) fn check_turn(
    problems: &mut Vec<String>,
    k: usize,
    expected: &ExpectedTurn,
    events: &[&AgentEvent],
    last: bool,
) {
    let turn = format!("response {}", k + 1);
    if let Some(status) = expected.http_status {
        let retried = matches!(events.last(), Some(AgentEvent::Retrying { .. }));
        let failed = !error_messages(events.iter().copied()).is_empty();
        if last && !failed {
            problems.push(format!(
                "{turn} (HTTP {status}) is the last: no error was shown"
            ));
        }
        if !last && !retried {
            problems.push(format!(
                "{turn} (HTTP {status}) is not the last, yet it was not retried"
            ));
        }
        if !streamed_text(events.iter().copied()).is_empty() || assistant_message(events).is_some()
        {
            problems.push(format!("{turn} (HTTP {status}) showed a reply"));
        }
        return;
    }

    let text = shown_text(events);
    let text_seen = if expected.refusal.is_empty() {
        text.clone()
    } else {
        // A refusal shown as text is not the text the sample expects besides it.
        text.replacen(&expected.refusal, "", 1)
    };
    if !same_text(&text_seen, &expected.text) {
        problems.push(format!(
            "{turn}: text {} instead of {}",
            short(&text_seen),
            short(&expected.text)
        ));
    }
    let reasoning = streamed_reasoning(events.iter().copied());
    if reasoning != expected.reasoning {
        problems.push(format!(
            "{turn}: reasoning {} instead of {}",
            short(&reasoning),
            short(&expected.reasoning)
        ));
    }
    if !expected.refusal.is_empty() && !shows(events, &expected.refusal) {
        problems.push(format!(
            "{turn}: refusal not shown ({})",
            short(&expected.refusal)
        ));
    }

    let calls = started_calls(events);
    let wanted: Vec<(String, String, Value)> = expected
        .tool_calls
        .iter()
        .map(|c| (c.id.clone(), c.name.clone(), displayed_args(&c.arguments)))
        .collect();
    if calls != wanted {
        problems.push(format!(
            "{turn}: tool calls started {calls:?} instead of {wanted:?}"
        ));
    }

    let failed = !error_messages(events.iter().copied()).is_empty();
    if expected.error.is_some() {
        // The stream ended in an error: what came before it is shown, then the error;
        // there is no finished message to take a finish reason or usage from.
        if !failed {
            problems.push(format!("{turn}: the error in the stream was not shown"));
        }
        return;
    }
    match assistant_message(events) {
        None => problems.push(format!("{turn}: no finished assistant message")),
        Some((_, _, finish_reason)) => {
            if finish_reason != expected.finish_reason.as_deref() {
                problems.push(format!(
                    "{turn}: finish reason {finish_reason:?} instead of {:?}",
                    expected.finish_reason
                ));
            }
        }
    }
    match (usage_of(events), &expected.usage) {
        (None, _) => problems.push(format!("{turn}: no usage shown")),
        (Some(u), Some(want)) => {
            let got = (
                u.prompt_tokens,
                u.completion_tokens,
                u.total_tokens,
                u.estimated,
            );
            let wanted = (
                want.prompt_tokens,
                want.completion_tokens,
                want.total_tokens,
                false,
            );
            if got != wanted {
                problems.push(format!(
                    "{turn}: usage (prompt, completion, total, estimated) {got:?} instead of {wanted:?}"
                ));
            }
        }
        (Some(u), None) => {
            if !u.estimated {
                problems.push(format!(
                    "{turn}: the server sent no usage, yet {u:?} is not marked estimated"
                ));
            }
        }
    }
}

/// How the turn ended, against `expect`.
pub(super) fn check_outcome(
    problems: &mut Vec<String>,
    expect: &Expect,
    events: &[AgentEvent],
    elapsed: Duration,
) {
    let outcome = ExpectedOutcome {
        outcome: &expect.outcome,
        retries: expect.retries,
        retry_delay_ms: expect.retry_delay_ms,
        error_contains: &expect.error_contains,
        error_excludes: &expect.error_excludes,
        retry_reason_contains: &expect.retry_reason_contains,
    };
    replay::check_outcome(problems, &outcome, events, elapsed);
}

/// A message's text: its string content, or its text parts joined ("" for none).
fn content_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    }
}

fn role(message: &Value) -> &str {
    message["role"].as_str().unwrap_or("(no role)")
}

fn calls_of(message: &Value) -> &[Value] {
    message["tool_calls"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
}

/// The message-order rules of the `constraints` table (and the shape they assume) over one
/// request's messages: each violation named by its rule.
///
/// - `system_first`: messages[0] is the system prompt, and no other message is one.
/// - `no_consecutive_user`: after the system prompt, roles alternate user/assistant,
///   starting with a user (tool messages belong to the assistant message before them).
/// - `no_user_after_tool`: no user message directly after a tool message.
/// - `tool_results_follow_calls`: an assistant message with tool calls is followed by
///   exactly one tool message per call, in call order, with matching `tool_call_id`s.
/// - `ends_with_user_or_tool`: the request ends with what the model should answer.
/// - `no_reminder_message`: no message is only a `<system-reminder>` (it rides inside the
///   user's message or the last tool result).
pub(super) fn order_violations(messages: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    match messages.first() {
        None => {
            out.push("system_first: the request has no messages".to_string());
            return out;
        }
        Some(first) if role(first) != "system" => {
            out.push(format!("system_first: messages[0] is {}", role(first)))
        }
        Some(_) => {}
    }
    let mut previous = "system";
    let mut i = 1;
    while i < messages.len() {
        let message = &messages[i];
        let this = role(message);
        match this {
            "system" => out.push(format!("system_first: messages[{i}] is another system message")),
            "user" => {
                if previous == "user" {
                    out.push(format!("no_consecutive_user: messages[{i}] is a user message after a user message"));
                }
                if previous == "tool" {
                    out.push(format!("no_user_after_tool: messages[{i}] is a user message after a tool message"));
                }
            }
            "assistant" => {
                if previous == "assistant" {
                    out.push(format!("no_consecutive_user: messages[{i}] is an assistant message after an assistant message"));
                }
                if previous == "system" {
                    out.push(format!("no_consecutive_user: messages[{i}] is an assistant message before any user message"));
                }
            }
            "tool" => out.push(format!(
                "tool_results_follow_calls: messages[{i}] is a tool message ({}) that answers no call of the assistant message before it",
                message["tool_call_id"]
            )),
            other => out.push(format!("messages[{i}] has the unknown role {other:?}")),
        }
        i += 1;
        previous = this;
        if this == "assistant" {
            for call in calls_of(message) {
                match messages.get(i) {
                    Some(answer)
                        if role(answer) == "tool" && answer["tool_call_id"] == call["id"] =>
                    {
                        i += 1;
                        previous = "tool";
                    }
                    Some(answer) => {
                        out.push(format!(
                            "tool_results_follow_calls: call {} is answered by messages[{i}] ({}, tool_call_id {})",
                            call["id"],
                            role(answer),
                            answer["tool_call_id"]
                        ));
                        break;
                    }
                    None => {
                        out.push(format!(
                            "tool_results_follow_calls: call {} is not answered",
                            call["id"]
                        ));
                        break;
                    }
                }
            }
        }
    }
    if let Some(last) = messages.last() {
        if !matches!(role(last), "user" | "tool") {
            out.push(format!(
                "ends_with_user_or_tool: the last message is {}",
                role(last)
            ));
        }
    }
    for (i, message) in messages.iter().enumerate() {
        let text = content_text(message);
        let text = text.trim();
        if text.starts_with(REMINDER_OPEN) && text.ends_with(REMINDER_CLOSE) {
            out.push(format!(
                "no_reminder_message: messages[{i}] ({}) is only a system reminder",
                role(message)
            ));
        }
    }
    out
}

/// The echo rules of the `constraints` table, for the assistant message in a request that
/// carries the calls of an earlier response.
///
/// - `echo_reasoning_content`: it carries the `reasoning_content` that was streamed.
/// - `echo_reasoning_details`: it carries the `reasoning_details` that were streamed
///   (reasoning text, summaries, signatures and encrypted data alike).
/// - `echo_extra_content`: each call carries the `extra_content` it was streamed with.
///
/// Besides, the calls are the ones that were made (id, name, raw arguments).
pub(super) fn echo_violations(
    message: &Value,
    expected: &[ExpectedCall],
    state: &StreamedState,
) -> Vec<String> {
    let mut out = Vec::new();
    let calls = calls_of(message);
    let sent: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap_or(""),
                c["function"]["name"].as_str().unwrap_or(""),
                c["function"]["arguments"]
                    .as_str()
                    .unwrap_or("(not a string)"),
            )
        })
        .collect();
    let made: Vec<(&str, &str, &str)> = expected
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect();
    if sent != made {
        out.push(format!(
            "the calls sent back are {sent:?}, not the calls made {made:?}"
        ));
    }

    if !state.reasoning_content.is_empty() {
        match message.get("reasoning_content").and_then(Value::as_str) {
            Some(r) if r == state.reasoning_content => {}
            Some(r) => out.push(format!(
                "echo_reasoning_content: reasoning_content {} instead of {}",
                short(r),
                short(&state.reasoning_content)
            )),
            None => out.push("echo_reasoning_content: reasoning_content not sent back".to_string()),
        }
    }

    if !state.reasoning_details.is_empty() {
        match message.get("reasoning_details").and_then(Value::as_array) {
            None => out.push("echo_reasoning_details: reasoning_details not sent back".to_string()),
            Some(sent) if sent.is_empty() => {
                out.push("echo_reasoning_details: reasoning_details sent back empty".to_string())
            }
            Some(sent) => {
                let want = &state.reasoning_details;
                if details_text(sent) != details_text(want) {
                    out.push(format!(
                        "echo_reasoning_details: reasoning text {} instead of {}",
                        short(&details_text(sent)),
                        short(&details_text(want))
                    ));
                }
                if details_summary(sent) != details_summary(want) {
                    out.push(format!(
                        "echo_reasoning_details: summary {} instead of {}",
                        short(&details_summary(sent)),
                        short(&details_summary(want))
                    ));
                }
                if details_signatures(sent) != details_signatures(want) {
                    out.push(format!(
                        "echo_reasoning_details: signatures {:?} instead of {:?}",
                        details_signatures(sent),
                        details_signatures(want)
                    ));
                }
                if details_encrypted(sent) != details_encrypted(want) {
                    out.push(format!(
                        "echo_reasoning_details: encrypted data {:?} instead of {:?}",
                        details_encrypted(sent),
                        details_encrypted(want)
                    ));
                }
            }
        }
    }

    for (id, extra) in &state.extra_content {
        let call = calls.iter().find(|c| c["id"].as_str() == Some(id.as_str()));
        match call.and_then(|c| c.get("extra_content")) {
            Some(sent) if sent == extra => {}
            Some(sent) => out.push(format!(
                "echo_extra_content: call {id:?} carries {sent} instead of {extra}"
            )),
            None => out.push(format!(
                "echo_extra_content: call {id:?} does not carry its extra_content {extra}"
            )),
        }
    }
    out
}

/// Every rule over request `j`, given the responses before it.
pub(super) fn check_request(
    problems: &mut Vec<String>,
    sample: &Sample,
    states: &[StreamedState],
    j: usize,
    request: &Value,
) {
    let label = format!("request {}", j + 1);
    let Some(messages) = request["messages"].as_array() else {
        problems.push(format!(
            "{label} has no messages array: {}",
            short(&request.to_string())
        ));
        return;
    };
    let roles: Vec<&str> = messages.iter().map(role).collect();
    for violation in order_violations(messages) {
        problems.push(format!("{label} [{}]: {violation}", roles.join(", ")));
    }
    if !messages
        .iter()
        .any(|m| role(m) == "user" && content_text(m).contains(&sample.prompt))
    {
        problems.push(format!("{label}: no user message holds the prompt"));
    }
    for (k, turn) in sample.expect.turns.iter().enumerate().take(j) {
        if turn.tool_calls.is_empty() {
            continue;
        }
        let ids: Vec<&str> = turn.tool_calls.iter().map(|c| c.id.as_str()).collect();
        let carrier = messages.iter().find(|m| {
            role(m) == "assistant"
                && calls_of(m)
                    .iter()
                    .map(|c| c["id"].as_str().unwrap_or(""))
                    .collect::<Vec<_>>()
                    == ids
        });
        match carrier {
            None => problems.push(format!(
                "{label}: no assistant message carries the calls {ids:?} of response {}",
                k + 1
            )),
            Some(message) => {
                for violation in echo_violations(message, &turn.tool_calls, &states[k]) {
                    problems.push(format!("{label}: {violation}"));
                }
            }
        }
    }
}
