//! Context engineering end to end, layers 3 and 4 (issue 6): the real agent loop against the
//! scripted server, reading the request bodies it sent. Old results are dropped only when
//! stubs were not enough; a long session is compacted once into a handoff note (and stays
//! as it was when the summariser fails or the user interrupts it); `/compact` turns the
//! whole conversation into a note that a resumed session continues from; a history too
//! big for one summariser request goes in pieces; the token count is calibrated from the
//! server's usage reports; stubs and drops are recorded so a resumed session sends exactly
//! what the original would have.
//!
//! Token arithmetic: every scripted reply here comes without usage (except in the
//! calibration test), so the agent counts at 4 characters a token, and a request body's
//! size in its measure is `support::request_chars` (which counts exactly as rein does).

use crate::support;

use std::path::Path;

use rein_core::agent::{AgentConfig, AgentEvent, AgentHandle, TurnOutcome};
use rein_core::context::ContextConfig;
use serde_json::{json, Value};
use support::agent::{content, scripted_config, turn};
use support::{prose, request_chars, Reply, ScriptedServer};

mod drops;
mod failures;
mod handoff;
mod on_demand;
mod resume;

// ---------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------

fn config(
    server: &ScriptedServer,
    root: &Path,
    spill: &Path,
    context: ContextConfig,
) -> AgentConfig {
    AgentConfig {
        context: ContextConfig {
            spill_dir: Some(spill.to_path_buf()),
            ..context
        },
        ..scripted_config(server, root)
    }
}

/// The outcome of the first turn that finished among `events`.
fn outcome(events: &[AgentEvent]) -> TurnOutcome {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::TurnFinished { outcome } => Some(*outcome),
            _ => None,
        })
        .expect("a finished turn")
}

/// A text reply without usage: the agent stays at 4 characters a token.
fn say(text: &str) -> Reply {
    Reply::text(text).without_usage()
}

fn bash(command: &str) -> Reply {
    Reply::tool_calls(&[("bash", &json!({ "command": command }).to_string())]).without_usage()
}

/// A command printing `n` copies of `c` and nothing else (no newline).
fn fill(c: char, n: usize) -> String {
    format!("head -c {n} /dev/zero | tr '\\0' {c}")
}

/// A summariser request: the handoff prompt as system message, no tools.
fn is_compaction(request: &Value) -> bool {
    let first = &request["messages"][0];
    first["role"] == "system"
        && content(first).contains("## Goal")
        && request.get("tools").is_none()
}

fn compactions(requests: &[Value]) -> Vec<&Value> {
    requests.iter().filter(|r| is_compaction(r)).collect()
}

/// The text of a summariser request's user message.
fn transcript(request: &Value) -> &str {
    let all = request["messages"].as_array().unwrap();
    assert_eq!(all.len(), 2, "system and user: {request:.500}");
    assert_eq!(all[1]["role"], "user");
    content(&all[1])
}

/// Tokens of a request body as the agent counts them before any usage report.
fn tokens(request: &Value) -> u64 {
    (request_chars(request) as u64).div_ceil(4)
}

/// Every assistant's tool calls are answered right after it, in order, and every tool
/// message answers such a call.
fn assert_calls_answered(messages: &[Value]) {
    let mut i = 0;
    while i < messages.len() {
        let m = &messages[i];
        assert_ne!(
            m["role"], "tool",
            "a tool message with no call before it at {i}"
        );
        let calls = m["tool_calls"].as_array().cloned().unwrap_or_default();
        for (j, call) in calls.iter().enumerate() {
            let answer = messages
                .get(i + 1 + j)
                .unwrap_or_else(|| panic!("call {} at {i} has no result", call["id"]));
            assert_eq!(answer["role"], "tool", "{answer:.300}");
            assert_eq!(answer["tool_call_id"], call["id"]);
        }
        i += 1 + calls.len();
    }
}

fn assistant(text: &str) -> Value {
    json!({ "role": "assistant", "content": text })
}

fn user(text: &str) -> Value {
    json!({ "role": "user", "content": text })
}

fn count(events: &[AgentEvent], pick: impl Fn(&AgentEvent) -> bool) -> usize {
    events.iter().filter(|e| pick(e)).count()
}

// ---------------------------------------------------------------------------------------
// 1. Drop fires only when stubs were not enough
// ---------------------------------------------------------------------------------------

/// Eight bash results of 12 000 characters (letters a to h), each stubbed to 8 000 once it
/// is old; then a 64 000-character user message. Start of turn 2, with the system prompt
/// and tools at about 2 000 tokens: about 36 300 tokens after turn 1's stubs, 42 300
/// without them, 35 400 after a further stub of the 7th result.
const RESULT_CHARS: usize = 12_000;
const DROP_STUB_CHARS: usize = 8_000;
const DROP_KEEP_RECENT: usize = 3;
const BIG_MESSAGE_CHARS: usize = 64_000;
const LETTERS: [char; 8] = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

fn drop_context(window: u64) -> ContextConfig {
    ContextConfig {
        window,
        cap_chars: 50_000,
        stub_chars: DROP_STUB_CHARS,
        keep_recent: DROP_KEEP_RECENT,
        ..ContextConfig::default()
    }
}

fn drop_script() -> Vec<Reply> {
    let commands: Vec<String> = LETTERS.iter().map(|&c| fill(c, RESULT_CHARS)).collect();
    let args: Vec<String> = commands
        .iter()
        .map(|c| json!({ "command": c }).to_string())
        .collect();
    let calls: Vec<(&str, &str)> = args.iter().map(|a| ("bash", a.as_str())).collect();
    vec![
        Reply::tool_calls(&calls).without_usage(),
        say("gathered"),
        say("read it"),
    ]
}

fn big_message() -> String {
    prose("BIG", BIG_MESSAGE_CHARS)
}

/// Runs the two turns of the drop scenario; returns each turn's events.
async fn drop_turns(handle: &mut AgentHandle, message: &str) -> (Vec<AgentEvent>, Vec<AgentEvent>) {
    let first = turn(handle, "gather everything").await;
    assert_eq!(outcome(&first), TurnOutcome::Completed, "{first:?}");
    let second = turn(handle, message).await;
    assert_eq!(outcome(&second), TurnOutcome::Completed, "{second:?}");
    (first, second)
}

// ---------------------------------------------------------------------------------------
// 2, 3, 8. A long session crosses the budget: compaction, its failure, its interruption
// ---------------------------------------------------------------------------------------

/// Window 16 000 tokens: budget 13 600, a compacted history fits 5 600. Each turn's reply
/// is 6 000 characters (1 500 tokens) of text, so dropping results cannot help; with the
/// system prompt and tools at about 2 000 tokens, turn 9 crosses the budget.
const LONG_WINDOW: u64 = 16_000;
const LONG_REPLY_CHARS: usize = 6_000;
const LONG_TURNS: usize = 8;
const NOTE_TEXT: &str = "## Goal\nFinish the PARSER-REWRITE.\n## What happened\nEight questions answered.\n## Files\n- src/parse.rs\n## State\nHalf done.\n## Next\nAnswer question 9.";

fn long_context() -> ContextConfig {
    ContextConfig {
        window: LONG_WINDOW,
        keep_recent: 3,
        ..ContextConfig::default()
    }
}

fn question(i: usize) -> String {
    format!("QUESTION-{i:02}: and what about part {i}?")
}

fn answer(i: usize) -> String {
    prose(&format!("ANSWER-{i:02}"), LONG_REPLY_CHARS)
}

/// The main requests' replies of turns 1 to 8: a long answer each.
fn long_replies() -> Vec<Reply> {
    (1..=LONG_TURNS).map(|i| say(&answer(i))).collect()
}

async fn long_turns(handle: &mut AgentHandle) {
    for i in 1..=LONG_TURNS {
        let events = turn(handle, &question(i)).await;
        assert_eq!(outcome(&events), TurnOutcome::Completed, "turn {i}");
        assert!(
            !events.iter().any(|e| matches!(
                e,
                AgentEvent::CompactionStarted { .. } | AgentEvent::ResultsDropped { .. }
            )),
            "setup: turn {i} was already over budget"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Issue 12, item 3: the newest user message is never summarised away
// ---------------------------------------------------------------------------------------

/// A paste of `chars` characters with a marker at its start, middle and end.
fn paste(chars: usize) -> String {
    let filler = prose("", chars / 2 - 20);
    format!("PASTE-HEAD {filler} PASTE-MIDDLE {filler} PASTE-TAIL")
}
