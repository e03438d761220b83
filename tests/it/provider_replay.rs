//! Recorded provider responses replayed against the real agent.
//!
//! `tests/provider-samples/` holds responses recorded from real chat-completions servers
//! (OpenAI, Azure, OpenRouter, Groq, DeepSeek, Mistral, Gemini, vLLM, llama.cpp, Ollama, ...)
//! and `index.json`, which says for each sample the user's prompt, the k-th response (file,
//! status, headers, how it was written: whole, a few bytes at a time, or with pauses between
//! events), what a careful client shows for it (`expect`) and which rules the provider
//! applies to the request that follows (`constraints`). The copy in the repository keeps the
//! tests hermetic; `in_repo_copy_matches_the_shared_samples` notices when it drifts from
//! `../shared/provider-samples`, where the samples are maintained.
//!
//! One test per sample: the scripted server serves the sample's responses byte for byte, in
//! order, one per HTTP request; the agent gets the prompt and runs one turn with the real
//! client and the real tools (the samples' tools, `get_capital`, `weather`, ..., are not
//! rein's, so they get an error result and the agent goes on, which is all the next request
//! needs). Then the test checks:
//!
//! - what rein showed, per response: the text (the streamed deltas, or the finished
//!   message's text when nothing streamed), the reasoning, a refusal, the tool calls, the
//!   finish reason and the usage (the server's figures, or `estimated` when it sent none);
//!   a response the server refused (an HTTP error) shows a retry or the turn's error;
//! - how the turn ended: the outcome, the number of retries (their delay and reason where
//!   the sample says), and on failure an error of one line that says what the sample
//!   requires (`error_contains`) and not what it forbids (`error_excludes`);
//! - every request rein sent, against every rule of the `constraints` table (whichever
//!   sample lists it: a request one server accepts must be acceptable to all), plus the
//!   shape those rules assume: the system prompt first, each tool call answered by one tool
//!   message in call order, no message that is only a `<system-reminder>`, and the reasoning
//!   state the provider streamed (`reasoning_content`, `reasoning_details`, a tool call's
//!   `extra_content`, taken from the sample's own stream) sent back on the assistant message
//!   that made the calls.
//!
//! A test collects every problem with its sample and fails listing them all. Besides the
//! per-sample tests: one replays a sample in 7-byte pieces that cut a UTF-8 sequence in two
//! (the `bytes:7` sample is all ASCII), and a few check the index and the checkers.
//! Text is compared exactly, with one exception: an expected text made only of whitespace
//! (Kimi streams "   " next to its tool call) is met by any whitespace-only text, none
//! included, since a front end showing nothing shows the same.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rein_core::agent::AgentEvent;
use serde::Deserialize;
use serde_json::Value;
use support::agent::{agent_config, test_client, turn, API_KEY};
use support::replay::{
    self, assistant_message, attempts, error_messages, is_event_stream, read_index, read_sample,
    recorded_reply as recorded_reply_of, shown_text, sse_data, streamed_reasoning, streamed_text,
    usage_of, ExpectedOutcome,
};
use support::{Reply, ScriptedServer, Step};

/// How long a test's stream may stay silent unless the sample sets `idle_timeout_secs`: short
/// enough that a stall fails within the harness's 30 s deadline.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a test's stream may send only keep-alives: the samples are paced by the
/// harness (`delay_ms` after every event), not as their servers sent them, so a sample's
/// comments may take longer than five of its idle timeouts; still within the deadline.
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(10);
/// The pause after each piece of a body written a few bytes at a time, so that every piece
/// reaches the client in a read of its own.
const PIECE_PAUSE: Duration = Duration::from_millis(1);
/// The tag that opens rein's reminder.
const REMINDER_OPEN: &str = "<system-reminder>";
const REMINDER_CLOSE: &str = "</system-reminder>";

// ---------------------------------------------------------------------------------------
// The sample index
// ---------------------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
struct Index {
    constraints: BTreeMap<String, ConstraintInfo>,
    samples: Vec<Sample>,
}

#[derive(Debug, Deserialize)]
struct ConstraintInfo {
    rule: String,
}

#[derive(Debug, Deserialize)]
struct Sample {
    name: String,
    model: String,
    prompt: String,
    #[serde(default)]
    constraints: Vec<String>,
    #[serde(default)]
    config: SampleConfig,
    responses: Vec<Recorded>,
    expect: Expect,
}

/// Settings a sample needs. Unknown keys fail the parse, so none is silently ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SampleConfig {
    #[serde(default)]
    client: ClientOverrides,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClientOverrides {
    idle_timeout_secs: Option<u64>,
    max_tries: Option<u32>,
}

/// One recorded response: the body's file, its status and headers, how to write it.
#[derive(Debug, Deserialize)]
struct Recorded {
    file: String,
    status: u16,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// `bytes:N`: written N bytes at a time.
    chunking: Option<String>,
    /// A pause before each SSE event after the first.
    delay_ms: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct Expect {
    turns: Vec<ExpectedTurn>,
    outcome: String,
    exit_code: i32,
    retries: usize,
    #[serde(default)]
    error_contains: Vec<String>,
    #[serde(default)]
    error_excludes: Vec<String>,
    #[serde(default)]
    retry_reason_contains: Vec<String>,
    retry_delay_ms: Option<u64>,
}

/// What the k-th response should show: `http_status` alone for a refused request, the
/// rest for a reply.
#[derive(Debug, Deserialize)]
struct ExpectedTurn {
    http_status: Option<u16>,
    #[serde(default)]
    text: String,
    #[serde(default)]
    reasoning: String,
    #[serde(default)]
    refusal: String,
    #[serde(default)]
    tool_calls: Vec<ExpectedCall>,
    finish_reason: Option<String>,
    usage: Option<ExpectedUsage>,
    error: Option<String>,
    #[serde(default)]
    provider_state: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct ExpectedCall {
    id: String,
    name: String,
    arguments: String,
}

#[derive(Debug, Deserialize)]
struct ExpectedUsage {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
}

/// The samples: the copy in the repository, else the shared set next to the repository.
fn samples_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        manifest.join("tests/provider-samples"),
        manifest.join("../shared/provider-samples"),
    ];
    candidates
        .iter()
        .find(|dir| dir.join("index.json").is_file())
        .cloned()
        .unwrap_or_else(|| {
            panic!("no provider samples: neither {candidates:?} holds an index.json")
        })
}

fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| read_index(&samples_dir()))
}

fn sample(name: &str) -> &'static Sample {
    index()
        .samples
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no sample {name:?} in index.json"))
}

/// The bytes of the sample file `file`.
fn read_body(file: &str) -> Vec<u8> {
    read_sample(&samples_dir(), file)
}

// ---------------------------------------------------------------------------------------
// Serving a sample
// ---------------------------------------------------------------------------------------

/// The scripted reply for one recorded response: its status, its headers and its body byte
/// for byte, written as the sample says (or, for a stream, `bytes:N` as `pieces` says).
fn recorded_reply(recorded: &Recorded, pieces: Option<&str>) -> Reply {
    if !is_event_stream(&recorded.headers) {
        assert!(
            recorded.chunking.is_none() && recorded.delay_ms.is_none(),
            "{}: only a stream can be written in pieces",
            recorded.file
        );
    }
    recorded_reply_of(
        &recorded.file,
        recorded.status,
        &recorded.headers,
        read_body(&recorded.file),
        |body| {
            let chunking = pieces.or(recorded.chunking.as_deref());
            stream_steps(&body, &recorded.file, chunking, recorded.delay_ms)
        },
    )
}

/// A stream body as steps: whole, `bytes:N` pieces (cut anywhere, UTF-8 sequences
/// included), or one event at a time `delay_ms` apart.
fn stream_steps(
    body: &[u8],
    file: &str,
    chunking: Option<&str>,
    delay_ms: Option<u64>,
) -> Vec<Step> {
    if let Some(chunking) = chunking {
        let size: usize = chunking
            .strip_prefix("bytes:")
            .and_then(|n| n.parse().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| panic!("{file}: unknown chunking {chunking:?}"));
        return body
            .chunks(size)
            .flat_map(|piece| [Step::Bytes(piece.to_vec()), Step::Sleep(PIECE_PAUSE)])
            .collect();
    }
    if let Some(ms) = delay_ms {
        let mut steps = Vec::new();
        for (i, event) in split_events(body).into_iter().enumerate() {
            if i > 0 {
                steps.push(Step::Sleep(Duration::from_millis(ms)));
            }
            steps.push(Step::Bytes(event.to_vec()));
        }
        return steps;
    }
    vec![Step::Bytes(body.to_vec())]
}

/// The body cut after each blank line (`\n\n` or `\r\n\r\n`): one piece per SSE event,
/// separators kept, so the pieces concatenate back to the body.
fn split_events(body: &[u8]) -> Vec<&[u8]> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < body.len() {
        let end = if body[i..].starts_with(b"\r\n\r\n") {
            Some(i + 4)
        } else if body[i..].starts_with(b"\n\n") {
            Some(i + 2)
        } else {
            None
        };
        match end {
            Some(end) => {
                pieces.push(&body[start..end]);
                start = end;
                i = end;
            }
            None => i += 1,
        }
    }
    if start < body.len() {
        pieces.push(&body[start..]);
    }
    pieces
}

// ---------------------------------------------------------------------------------------
// What the sample's own stream carries (the state a provider wants back)
// ---------------------------------------------------------------------------------------

/// The provider state one streamed reply carries: what a client must send back.
#[derive(Debug, Default)]
struct StreamedState {
    /// `delta.reasoning_content`, concatenated.
    reasoning_content: String,
    /// `delta.reasoning_details`, merged by `index`.
    reasoning_details: Vec<Value>,
    /// Each tool call's `extra_content`, by call id.
    extra_content: Vec<(String, Value)>,
}

impl StreamedState {
    /// The names `provider_state` uses for what this stream carries.
    fn names(&self) -> BTreeSet<String> {
        let mut names = BTreeSet::new();
        if !self.reasoning_content.is_empty() {
            names.insert("reasoning_content".to_string());
        }
        if !self.reasoning_details.is_empty() {
            names.insert("reasoning_details".to_string());
        }
        if !self.extra_content.is_empty() {
            names.insert("tool_calls[].extra_content".to_string());
        }
        names
    }
}

/// Reads the state from a response body (choice 0, or choices without an index).
fn streamed_state(body: &str) -> StreamedState {
    let mut state = StreamedState::default();
    let mut detail_slots: Vec<(Option<u64>, usize)> = Vec::new();
    // Call ids by the `index` they were streamed at (or their position when none).
    let mut call_ids: Vec<(Option<u64>, String)> = Vec::new();
    for chunk in sse_data(body) {
        let Some(choices) = chunk["choices"].as_array() else {
            continue;
        };
        for choice in choices {
            if choice["index"].as_u64().unwrap_or(0) != 0 {
                continue;
            }
            let delta = if choice["delta"].is_object() {
                &choice["delta"]
            } else {
                &choice["message"]
            };
            if let Some(r) = delta["reasoning_content"].as_str() {
                state.reasoning_content.push_str(r);
            }
            for detail in delta["reasoning_details"].as_array().into_iter().flatten() {
                merge_detail(&mut state.reasoning_details, &mut detail_slots, detail);
            }
            for (position, call) in delta["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                let index = call["index"].as_u64();
                let id = match call["id"].as_str().filter(|id| !id.is_empty()) {
                    Some(id) => {
                        if !call_ids.iter().any(|(_, known)| known == id) {
                            call_ids.push((index, id.to_string()));
                        }
                        Some(id.to_string())
                    }
                    None => match index {
                        Some(index) => call_ids
                            .iter()
                            .find(|(i, _)| *i == Some(index))
                            .map(|(_, id)| id.clone()),
                        None => call_ids.get(position).map(|(_, id)| id.clone()),
                    },
                };
                if let (Some(id), Some(extra)) = (id, call.get("extra_content")) {
                    if !extra.is_null() {
                        state.extra_content.retain(|(known, _)| *known != id);
                        state.extra_content.push((id, extra.clone()));
                    }
                }
            }
        }
    }
    state
}

/// Merges one `reasoning_details` delta into `merged`: entries with the same `index` are
/// one entry whose `text`, `summary` and `data` are concatenated and whose other fields
/// (type, signature, id, format) keep their last non-null value. An entry without an
/// index is an entry of its own.
fn merge_detail(merged: &mut Vec<Value>, slots: &mut Vec<(Option<u64>, usize)>, detail: &Value) {
    let index = detail["index"].as_u64();
    let slot = index.and_then(|i| slots.iter().find(|(s, _)| *s == Some(i)).map(|(_, at)| *at));
    let Some(at) = slot else {
        slots.push((index, merged.len()));
        merged.push(detail.clone());
        return;
    };
    let (Some(target), Some(fields)) = (merged[at].as_object_mut(), detail.as_object()) else {
        return;
    };
    for (key, value) in fields {
        match (key.as_str(), value) {
            (_, Value::Null) => {}
            ("text" | "summary" | "data", Value::String(piece)) => {
                let joined = format!(
                    "{}{piece}",
                    target.get(key).and_then(Value::as_str).unwrap_or("")
                );
                target.insert(key.clone(), Value::String(joined));
            }
            _ => {
                target.insert(key.clone(), value.clone());
            }
        }
    }
}

/// The `text` of every `reasoning.text` entry, concatenated.
fn details_text(details: &[Value]) -> String {
    details
        .iter()
        .filter(|d| d["type"] == "reasoning.text")
        .filter_map(|d| d["text"].as_str())
        .collect()
}

/// The `summary` of every `reasoning.summary` entry, concatenated.
fn details_summary(details: &[Value]) -> String {
    details
        .iter()
        .filter(|d| d["type"] == "reasoning.summary")
        .filter_map(|d| d["summary"].as_str())
        .collect()
}

/// Every non-empty signature, in order.
fn details_signatures(details: &[Value]) -> Vec<String> {
    details
        .iter()
        .filter_map(|d| d["signature"].as_str())
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The `data` of every `reasoning.encrypted` entry, in order.
fn details_encrypted(details: &[Value]) -> Vec<String> {
    details
        .iter()
        .filter(|d| d["type"] == "reasoning.encrypted")
        .filter_map(|d| d["data"].as_str())
        .map(str::to_string)
        .collect()
}

// ---------------------------------------------------------------------------------------
// The events of a turn, per response
// ---------------------------------------------------------------------------------------

/// (id, name, displayed arguments) of each `ToolCallStarted`.
fn started_calls(events: &[&AgentEvent]) -> Vec<(String, String, Value)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallStarted { id, name, args, .. } => {
                Some((id.clone(), name.clone(), args.clone()))
            }
            _ => None,
        })
        .collect()
}

/// Whether `needle` is anywhere in what the attempt shows: its text, or any event's
/// fields (however a front end is told about it).
fn shows(events: &[&AgentEvent], needle: &str) -> bool {
    shown_text(events).contains(needle)
        || events.iter().any(|e| {
            format!("{e:?}").contains(needle)
                || serde_json::to_string(e).is_ok_and(|json| json.contains(needle))
        })
}

/// How a front end would display a call's arguments: the parsed JSON, or the raw text.
fn displayed_args(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

/// Exact, except that a whitespace-only expectation accepts any whitespace-only text.
fn same_text(shown: &str, expected: &str) -> bool {
    if expected.trim().is_empty() {
        shown.trim().is_empty()
    } else {
        shown == expected
    }
}

/// A long text cut for a failure message.
fn short(text: &str) -> String {
    const MAX: usize = 160;
    if text.chars().count() <= MAX {
        format!("{text:?}")
    } else {
        let head: String = text.chars().take(MAX).collect();
        format!("{head:?}... ({} chars)", text.chars().count())
    }
}

// ---------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------

/// What one response should have shown, against attempt `k`'s events.
fn check_turn(
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
fn check_outcome(
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
fn order_violations(messages: &[Value]) -> Vec<String> {
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
fn echo_violations(
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
fn check_request(
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

// ---------------------------------------------------------------------------------------
// The replay
// ---------------------------------------------------------------------------------------

/// Replays sample `name` and fails listing every problem found.
async fn replay(name: &str) {
    replay_in(name, None).await;
}

/// [`replay`], with every stream written as `pieces` says (`bytes:N`) when given.
async fn replay_in(name: &str, pieces: Option<&str>) {
    let sample = sample(name);
    let expect = &sample.expect;
    assert_eq!(
        sample.responses.len(),
        expect.turns.len(),
        "{name}: index.json has one expected turn per response"
    );
    let states: Vec<StreamedState> = sample
        .responses
        .iter()
        .map(|r| match r.status {
            200 => streamed_state(&String::from_utf8_lossy(&read_body(&r.file))),
            _ => StreamedState::default(),
        })
        .collect();
    for (k, (state, turn)) in states.iter().zip(&expect.turns).enumerate() {
        let listed: BTreeSet<String> = turn.provider_state.iter().cloned().collect();
        assert_eq!(
            state.names(),
            listed,
            "{name}: response {} streams other provider state than index.json lists",
            k + 1
        );
        // The state read from the stream is the reasoning the sample expects to be shown.
        let details = details_text(&state.reasoning_details);
        for (what, streamed) in [
            ("reasoning_content", &state.reasoning_content),
            ("reasoning_details text", &details),
        ] {
            assert!(
                streamed.is_empty() || *streamed == turn.reasoning,
                "{name}: response {} streams {what} {} but expects reasoning {}",
                k + 1,
                short(streamed),
                short(&turn.reasoning)
            );
        }
    }

    let replies = sample
        .responses
        .iter()
        .map(|r| recorded_reply(r, pieces))
        .collect();
    let server = ScriptedServer::start(replies)
        .await
        .expect("the scripted server binds a local port");
    let dir = tempfile::tempdir().expect("a temporary project directory");
    let mut client = test_client(server.base_url(), API_KEY, &sample.model);
    client.idle_timeout = sample
        .config
        .client
        .idle_timeout_secs
        .map_or(IDLE_TIMEOUT, Duration::from_secs);
    client.keepalive_timeout = Some(KEEPALIVE_TIMEOUT);
    if let Some(tries) = sample.config.client.max_tries {
        client.max_tries = tries;
    }
    let mut handle =
        rein_core::agent::spawn(agent_config(client, dir.path())).expect("the agent starts");
    let started = Instant::now();
    let events = turn(&mut handle, &sample.prompt).await;
    let elapsed = started.elapsed();
    let requests = server.requests();

    let mut problems = Vec::new();
    if requests.len() != sample.responses.len() {
        problems.push(format!(
            "rein sent {} requests for {} recorded responses",
            requests.len(),
            sample.responses.len()
        ));
    }
    let attempts = attempts(&events);
    if attempts.len() != sample.responses.len() {
        problems.push(format!(
            "the events show {} requests for {} recorded responses",
            attempts.len(),
            sample.responses.len()
        ));
    }
    for (k, (expected, events)) in expect.turns.iter().zip(&attempts).enumerate() {
        let last = k + 1 == expect.turns.len();
        check_turn(&mut problems, k, expected, events, last);
    }
    check_outcome(&mut problems, expect, &events, elapsed);
    for (j, request) in requests.iter().enumerate() {
        check_request(&mut problems, sample, &states, j, request);
    }

    if !problems.is_empty() {
        let listed = if sample.constraints.is_empty() {
            String::new()
        } else {
            format!(" (the provider enforces {})", sample.constraints.join(", "))
        };
        panic!(
            "sample {name}{listed}: {} problem(s)\n  - {}\n",
            problems.len(),
            problems.join("\n  - ")
        );
    }
}

rein_test_support::replay_tests! {
    openai_text_usage => "openai-text-usage",
    openai_tool_then_text => "openai-tool-then-text",
    openai_tool_then_text_bytes7 => "openai-tool-then-text-bytes7",
    openai_parallel_tools_then_text => "openai-parallel-tools-then-text",
    openai_parallel_tools_interleaved => "openai-parallel-tools-interleaved",
    openai_gpt5_tool_then_text => "openai-gpt5-tool-then-text",
    openai_refusal => "openai-refusal",
    openai_finish_length => "openai-finish-length",
    openai_n3_choices => "openai-n3-choices",
    azure_tool_then_text => "azure-tool-then-text",
    azure_model_router => "azure-model-router",
    openrouter_gemini3_tool_reasoning_details => "openrouter-gemini3-tool-reasoning-details",
    openrouter_claude_thinking_tool => "openrouter-claude-thinking-tool",
    openrouter_kimi_k2_5_tool => "openrouter-kimi-k2.5-tool",
    openrouter_openai_tool => "openrouter-openai-tool",
    openrouter_error_in_200_stream => "openrouter-error-in-200-stream",
    openrouter_keepalive_comments => "openrouter-keepalive-comments",
    openrouter_reasoning_stream => "openrouter-reasoning-stream",
    openrouter_429_then_ok => "openrouter-429-then-ok",
    vllm_tool_call => "vllm-tool-call",
    vllm_crusoe_text => "vllm-crusoe-text",
    vllm_gemma3_roles_must_alternate => "vllm-gemma3-roles-must-alternate",
    ollama_parallel_tools_then_text => "ollama-parallel-tools-then-text",
    llamacpp_gpt_oss_reasoning_tool => "llamacpp-gpt-oss-reasoning-tool",
    llamacpp_live_tool_then_text => "llamacpp-live-tool-then-text",
    llamacpp_live_text_usage => "llamacpp-live-text-usage",
    llamacpp_live_context_400 => "llamacpp-live-context-400",
    groq_gptoss_tool_then_text => "groq-gptoss-tool-then-text",
    groq_error_event_midstream => "groq-error-event-midstream",
    groq_kimi_k2_tool_then_text => "groq-kimi-k2-tool-then-text",
    groq_404_model_not_found => "groq-404-model-not-found",
    deepseek_reasoner_stream => "deepseek-reasoner-stream",
    deepseek_thinking_tool_followup => "deepseek-thinking-tool-followup",
    mistral_magistral_thinking_parts => "mistral-magistral-thinking-parts",
    mistral_tool_call_followup => "mistral-tool-call-followup",
    mistral_text => "mistral-text",
    together_via_hf_router => "together-via-hf-router",
    gemini_tool_no_index_then_400 => "gemini-tool-no-index-then-400",
    vercel_gateway_gemini3_tool => "vercel-gateway-gemini3-tool",
    xai_grok_code_fast_reasoning_tool => "xai-grok-code-fast-reasoning-tool",
    zai_glm_reasoning_tool => "zai-glm-reasoning-tool",
    hf_router_kimi_tool => "hf-router-kimi-tool",
    kimi_thinking_tool_followup_400 => "kimi-thinking-tool-followup-400",
    openai_401_bad_key => "openai-401-bad-key",
    openai_400_unsupported_value => "openai-400-unsupported-value",
    openai_500_then_ok => "openai-500-then-ok",
    openai_429_retry_after_then_ok => "openai-429-retry-after-then-ok",
    proxy_503_html => "proxy-503-html",
}

/// The bytes:7 sample has only ASCII, so its cuts never fall inside a UTF-8 sequence: this
/// replays a sample whose text has `’` and `°` in pieces that cut one in two.
#[tokio::test]
async fn utf8_sequences_cut_across_writes() {
    const NAME: &str = "openai-gpt5-tool-then-text";
    const PIECE: usize = 7;
    let cuts_a_sequence = sample(NAME).responses.iter().any(|r| {
        let body = read_body(&r.file);
        (PIECE..body.len())
            .step_by(PIECE)
            .any(|at| (0x80..0xC0).contains(&body[at]))
    });
    assert!(
        cuts_a_sequence,
        "no {PIECE}-byte cut of {NAME} falls inside a UTF-8 sequence"
    );
    replay_in(NAME, Some(&format!("bytes:{PIECE}"))).await;
}

// ---------------------------------------------------------------------------------------
// The index itself
// ---------------------------------------------------------------------------------------

/// The rules the checkers above implement, by their names in the `constraints` table.
const CHECKED_RULES: &[&str] = &[
    "no_user_after_tool",
    "no_consecutive_user",
    "echo_reasoning_content",
    "echo_reasoning_details",
    "echo_extra_content",
];

#[test]
fn every_sample_has_a_test() {
    let samples: BTreeSet<&str> = index().samples.iter().map(|s| s.name.as_str()).collect();
    let tested: BTreeSet<&str> = TESTED.iter().copied().collect();
    assert_eq!(TESTED.len(), tested.len(), "a sample is listed twice");
    let untested: Vec<_> = samples.difference(&tested).collect();
    let unknown: Vec<_> = tested.difference(&samples).collect();
    assert!(
        untested.is_empty() && unknown.is_empty(),
        "samples without a test: {untested:?}; tests without a sample: {unknown:?}"
    );
}

#[test]
fn every_constraint_has_a_checker() {
    let table = &index().constraints;
    for (name, info) in table {
        assert!(
            CHECKED_RULES.contains(&name.as_str()),
            "no checker for the constraint {name:?} ({})",
            info.rule
        );
    }
    for sample in &index().samples {
        for name in &sample.constraints {
            assert!(
                table.contains_key(name),
                "{}: the constraint {name:?} is not in the table",
                sample.name
            );
        }
        let completed = sample.expect.outcome == "completed";
        assert_eq!(
            sample.expect.exit_code == 0,
            completed,
            "{}: exit code {} for outcome {:?}",
            sample.name,
            sample.expect.exit_code,
            sample.expect.outcome
        );
    }
}

/// The in-repository copy must hold what the shared set holds (when that is here to
/// compare with: on a fresh machine only the copy exists, and the replays use it).
#[test]
fn in_repo_copy_matches_the_shared_samples() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let copy = manifest.join("tests/provider-samples");
    let shared = manifest.join("../shared/provider-samples");
    assert!(
        copy.join("index.json").is_file(),
        "the samples must be copied into {}",
        copy.display()
    );
    if !shared.join("index.json").is_file() {
        eprintln!("no {} to compare the copy with", shared.display());
        return;
    }
    let mut files = vec!["index.json".to_string()];
    for sample in &index().samples {
        files.extend(sample.responses.iter().map(|r| r.file.clone()));
    }
    let stale: Vec<&String> = files
        .iter()
        .filter(|file| std::fs::read(copy.join(file)).ok() != std::fs::read(shared.join(file)).ok())
        .collect();
    assert!(
        stale.is_empty(),
        "tests/provider-samples differs from {} in {stale:?}: copy the shared samples again",
        shared.display()
    );
}

#[test]
fn the_checkers_catch_what_they_are_for() {
    use serde_json::json;
    let call =
        json!({"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}});
    let good = vec![
        json!({"role": "system", "content": "s"}),
        json!({"role": "user", "content": "hi\n<system-reminder>\nx\n</system-reminder>"}),
        json!({"role": "assistant", "content": null, "tool_calls": [call]}),
        json!({"role": "tool", "tool_call_id": "c1", "content": "40 C"}),
    ];
    assert!(
        order_violations(&good).is_empty(),
        "{:?}",
        order_violations(&good)
    );

    let mut reminder_after_tool = good.clone();
    reminder_after_tool
        .push(json!({"role": "user", "content": "<system-reminder>\nx\n</system-reminder>"}));
    let found = order_violations(&reminder_after_tool).join("\n");
    assert!(
        found.contains("no_user_after_tool") && found.contains("no_reminder_message"),
        "{found}"
    );

    let two_users = vec![
        json!({"role": "system", "content": "s"}),
        json!({"role": "user", "content": "hi"}),
        json!({"role": "user", "content": "again"}),
    ];
    assert!(order_violations(&two_users)
        .join("\n")
        .contains("no_consecutive_user"));

    let unanswered = vec![good[0].clone(), good[1].clone(), good[2].clone()];
    assert!(order_violations(&unanswered)
        .join("\n")
        .contains("tool_results_follow_calls"));

    let body = concat!(
        ": OPENROUTER PROCESSING\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"a\",",
        "\"reasoning_details\":[{\"type\":\"reasoning.text\",\"text\":\"a\",\"index\":0}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"b\",",
        "\"reasoning_details\":[{\"type\":\"reasoning.text\",\"text\":\"b\",\"signature\":\"sig\",\"index\":0}],",
        "\"tool_calls\":[{\"id\":\"c1\",\"extra_content\":{\"google\":{\"thought_signature\":\"t\"}},",
        "\"function\":{\"name\":\"weather\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: [DONE]\n\n",
    );
    let state = streamed_state(body);
    assert_eq!(state.reasoning_content, "ab");
    assert_eq!(details_text(&state.reasoning_details), "ab");
    assert_eq!(details_signatures(&state.reasoning_details), ["sig"]);
    assert_eq!(state.extra_content.len(), 1);
    let made = [ExpectedCall {
        id: "c1".into(),
        name: "weather".into(),
        arguments: "{}".into(),
    }];
    let bare = &good[2];
    let found = echo_violations(bare, &made, &state).join("\n");
    for rule in [
        "echo_reasoning_content",
        "echo_reasoning_details",
        "echo_extra_content",
    ] {
        assert!(found.contains(rule), "{rule} not caught: {found}");
    }
    let echoed = json!({
        "role": "assistant", "content": null, "reasoning_content": "ab",
        "reasoning_details": state.reasoning_details,
        "tool_calls": [{"id": "c1", "type": "function",
            "extra_content": {"google": {"thought_signature": "t"}},
            "function": {"name": "weather", "arguments": "{}"}}],
    });
    assert!(echo_violations(&echoed, &made, &state).is_empty());

    assert_eq!(
        split_events(b"a\n\nb\r\n\r\nc").concat(),
        b"a\n\nb\r\n\r\nc"
    );
    assert_eq!(split_events(b"a\n\nb\r\n\r\nc").len(), 3);
}
