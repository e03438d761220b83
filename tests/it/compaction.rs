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
use std::time::{Duration, Instant};

use rein_core::agent::{
    self, AgentCommand, AgentConfig, AgentEvent, AgentHandle, ContextStats, TurnOutcome,
};
use rein_core::context::{compact, drop, ContextConfig};
use rein_core::session::{SessionMeta, SessionWriter};
use serde_json::{json, Value};
use support::agent::{
    as_sent, content, events_until, reminder, scripted_config, spawn_recorded, spawn_resumed,
    stored_messages, tool_contents, turn,
};
use support::{chunk, prose, request_chars, Reply, ScriptedServer, Step};

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

fn contexts(events: &[AgentEvent]) -> Vec<ContextStats> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Context(stats) => Some(*stats),
            _ => None,
        })
        .collect()
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

/// Big enough that dropping every old result does not reach the drop target.
fn bigger_message() -> String {
    prose("BIGGER", BIG_MESSAGE_CHARS + 16_000)
}

/// Runs the two turns of the drop scenario; returns each turn's events.
async fn drop_turns(handle: &mut AgentHandle, message: &str) -> (Vec<AgentEvent>, Vec<AgentEvent>) {
    let first = turn(handle, "gather everything").await;
    assert_eq!(outcome(&first), TurnOutcome::Completed, "{first:?}");
    let second = turn(handle, message).await;
    assert_eq!(outcome(&second), TurnOutcome::Completed, "{second:?}");
    (first, second)
}

#[tokio::test]
async fn results_are_not_dropped_when_the_turn_end_stubs_are_enough() {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(drop_script()).await.unwrap();
    let context = drop_context(46_000);
    let budget = context.budget();
    let mut handle = agent::spawn(config(&server, project.path(), spill.path(), context)).unwrap();
    let (first, second) = drop_turns(&mut handle, &big_message()).await;

    let requests = server.requests();
    assert_eq!(requests.len(), 3, "no compaction request, nothing else");
    assert!(compactions(&requests).is_empty());
    // The turn end stubbed the six old results...
    let stubbed: Vec<usize> = first
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ContextTrimmed { stubbed, .. } => Some(*stubbed),
            _ => None,
        })
        .collect();
    assert_eq!(stubbed, vec![6], "{first:?}");
    // ... which was enough: nothing dropped, the note in no request, every request fits.
    let dropped = |e: &AgentEvent| matches!(e, AgentEvent::ResultsDropped { .. });
    assert_eq!(count(&first, dropped) + count(&second, dropped), 0);
    for r in &requests {
        assert!(
            !tool_contents(&stored_messages(r))
                .iter()
                .any(|c| c == drop::NOTE),
            "a dropped result was sent"
        );
        assert!(tokens(r) <= budget, "{} > {budget}", tokens(r));
    }
    // The test means something: without the stubs turn 2's request would not fit.
    let (whole, now) = (
        tool_contents(&stored_messages(&requests[1])),
        tool_contents(&stored_messages(&requests[2])),
    );
    let saved: usize = whole.iter().zip(&now).map(|(w, n)| w.len() - n.len()).sum();
    assert!(saved > 0);
    let unstubbed = (request_chars(&requests[2]) + saved) as u64 / 4;
    assert!(
        unstubbed > budget,
        "setup: turn 2 fits even unstubbed ({unstubbed} ≤ {budget})"
    );
}

#[tokio::test]
async fn the_oldest_results_are_dropped_when_stubs_are_not_enough() {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(drop_script()).await.unwrap();
    let context = drop_context(40_000);
    let (budget, target) = (context.budget(), context.drop_target());
    let mut handle = agent::spawn(config(&server, project.path(), spill.path(), context)).unwrap();
    let (first, second) = drop_turns(&mut handle, &big_message()).await;

    let requests = server.requests();
    assert_eq!(requests.len(), 3, "no compaction request, nothing else");
    assert!(compactions(&requests).is_empty());
    assert!(
        !second
            .iter()
            .any(|e| matches!(e, AgentEvent::CompactionStarted { .. })),
        "{second:?}"
    );
    // Turn 1 fitted: nothing dropped there.
    assert!(tokens(&requests[1]) <= budget, "setup: turn 1 over budget");
    assert!(!first
        .iter()
        .any(|e| matches!(e, AgentEvent::ResultsDropped { .. })));

    // Turn 2: one drop before its request, after the stubs (turn 1's end and the new one).
    let drops: Vec<(usize, u64, u64)> = second
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ResultsDropped {
                dropped,
                before_tokens,
                after_tokens,
            } => Some((*dropped, *before_tokens, *after_tokens)),
            _ => None,
        })
        .collect();
    assert_eq!(drops.len(), 1, "{second:?}");
    let (dropped, before, after) = drops[0];
    let trimmed_at = second
        .iter()
        .position(|e| matches!(e, AgentEvent::ContextTrimmed { .. }));
    let dropped_at = second
        .iter()
        .position(|e| matches!(e, AgentEvent::ResultsDropped { .. }))
        .unwrap();
    assert!(
        trimmed_at.is_some_and(|t| t < dropped_at),
        "the 7th result is old now: stubbed before anything is dropped"
    );
    assert!(before > budget, "{before} ≤ {budget}");
    assert!(after <= target, "dropped to {after}, target {target}");
    assert!(after <= budget);
    assert_eq!(
        after,
        tokens(&requests[2]),
        "the event counts what was sent"
    );

    // The request: exactly the oldest `dropped` results are the note, nothing else changed.
    let (old, new) = (stored_messages(&requests[1]), stored_messages(&requests[2]));
    let mut expected = old.clone();
    expected.push(assistant("gathered"));
    expected.push(user(&big_message()));
    assert_eq!(new.len(), expected.len());
    let results: Vec<usize> = (0..new.len())
        .filter(|&i| new[i]["role"] == "tool")
        .collect();
    assert_eq!(results.len(), 8);
    assert!((1..7).contains(&dropped), "{dropped}");
    for (k, &i) in results.iter().enumerate() {
        let was = content(&expected[i]);
        let now = content(&new[i]);
        assert_eq!(new[i]["tool_call_id"], expected[i]["tool_call_id"]);
        if k < dropped {
            assert_eq!(now, drop::NOTE, "result {k}");
        } else if i < new.len() - DROP_KEEP_RECENT {
            // Old but not needed: still its stub.
            assert_ne!(
                now,
                drop::NOTE,
                "result {k} dropped though it already fitted"
            );
            assert!(now.len() < was.len() && was.starts_with(&now[..DROP_STUB_CHARS]));
            assert!(now.ends_with("characters trimmed from this old tool result]"));
        } else {
            assert_eq!(now, was, "a recent result was touched");
        }
    }
    for i in (0..new.len()).filter(|&i| new[i]["role"] != "tool") {
        assert_eq!(new[i], expected[i], "message {i}");
    }
    // The last keep_recent messages are exactly as they were.
    let recent = new.len() - DROP_KEEP_RECENT;
    assert_eq!(new[recent..], expected[recent..]);
    // Only as many as needed: with the last dropped one back as its stub it would not fit.
    let last = content(&expected[results[dropped - 1]]);
    let stub_len =
        rein_core::context::stubs::stub(last, DROP_STUB_CHARS).map_or(last.len(), |s| s.len());
    let one_less = (request_chars(&requests[2]) - drop::NOTE.len() + stub_len) as u64;
    assert!(one_less.div_ceil(4) > target, "dropped one result too many");
}

#[tokio::test]
async fn the_most_recent_results_are_never_dropped_even_when_the_target_is_missed() {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(drop_script()).await.unwrap();
    let context = drop_context(40_000);
    let (budget, target) = (context.budget(), context.drop_target());
    let mut handle = agent::spawn(config(&server, project.path(), spill.path(), context)).unwrap();
    let (_, second) = drop_turns(&mut handle, &bigger_message()).await;

    let requests = server.requests();
    assert_eq!(requests.len(), 3, "no compaction request, nothing else");
    assert!(compactions(&requests).is_empty());
    let drops: Vec<(usize, u64, u64)> = second
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ResultsDropped {
                dropped,
                before_tokens,
                after_tokens,
            } => Some((*dropped, *before_tokens, *after_tokens)),
            _ => None,
        })
        .collect();
    // Every old result went (7), and still the target was missed: the recent one stayed.
    assert_eq!(drops.len(), 1, "{second:?}");
    let (dropped, before, after) = drops[0];
    assert_eq!(dropped, 7);
    assert!(before > budget);
    assert!(
        after > target && after <= budget,
        "setup: {after} not between {target} and {budget}"
    );
    let (old, new) = (stored_messages(&requests[1]), stored_messages(&requests[2]));
    let results = tool_contents(&new);
    assert_eq!(results.len(), 8);
    assert!(results[..7].iter().all(|c| c == drop::NOTE));
    assert_eq!(
        results[7],
        tool_contents(&old)[7],
        "the recent result was touched"
    );
    let recent = new.len() - DROP_KEEP_RECENT;
    assert_eq!(
        new[recent..],
        [
            old[old.len() - 1].clone(),
            assistant("gathered"),
            user(&bigger_message())
        ]
    );
}

/// A tool result shorter than `drop::NOTE` is never "dropped": the longer note would lose
/// the result and make the history bigger (this once happened, and the `ResultsDropped`
/// event reported more tokens after than before).
#[tokio::test]
async fn a_result_shorter_than_the_drop_note_is_never_replaced_by_it() {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    // Turn 1 runs a command with a tiny output; then long answers until the budget is
    // crossed in turn 9, whose compaction fails (so its request shows the history as the
    // drop layer left it).
    let mut script = vec![bash("echo ok")];
    script.extend(long_replies());
    script.push(Reply::error(500, "summariser down"));
    script.push(say("Part 9, uncompacted."));
    let server = ScriptedServer::start(script).await.unwrap();
    let mut config = config(&server, project.path(), spill.path(), long_context());
    config.client.max_tries = 1;
    let mut handle = agent::spawn(config).unwrap();
    long_turns(&mut handle).await;
    let events = turn(&mut handle, &question(9)).await;
    assert_eq!(outcome(&events), TurnOutcome::Completed, "{events:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), LONG_TURNS + 3);
    assert!(
        is_compaction(&requests[LONG_TURNS + 1]),
        "setup: no compaction"
    );

    let tiny = tool_contents(&stored_messages(&requests[1]))[0].clone();
    assert!(tiny.len() < drop::NOTE.len(), "setup: {tiny}");
    for stats in events.iter().filter_map(|e| match e {
        AgentEvent::ResultsDropped {
            before_tokens,
            after_tokens,
            ..
        } => Some((*before_tokens, *after_tokens)),
        _ => None,
    }) {
        assert!(
            stats.1 < stats.0,
            "a drop made the history bigger: {} → {} tokens",
            stats.0,
            stats.1
        );
    }
    let sent = tool_contents(&stored_messages(&requests[LONG_TURNS + 2]));
    assert_eq!(
        sent,
        vec![tiny],
        "the tiny result was replaced by the longer note"
    );
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

#[tokio::test]
async fn a_long_session_is_compacted_once_into_a_handoff_note() {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let plan = json!({ "todos": [
        { "content": "rewrite the parser", "status": "in_progress" },
        { "content": "run the benchmarks", "status": "pending" },
    ]});
    // Turn 1 makes a plan first. Turn 7 says a lot while it runs a command (2 000
    // characters of output), then answers: the kept tail can only begin after that command
    // (at turn 7's answer), never at its result. Turn 8 crosses the budget.
    let command = json!({ "command": fill('r', 2_000) }).to_string();
    let mut script = vec![Reply::tool_calls(&[("write_todos", &plan.to_string())]).without_usage()];
    script.extend((1..=7).map(|i| say(&answer(i))));
    script.insert(
        7,
        Reply::text_then_tool_calls(&prose("RUNNING-IT", 4_000), &[("bash", &command)])
            .without_usage(),
    );
    script.push(say(NOTE_TEXT)); // the summariser
    script.push(say("Part 8 is done.")); // turn 8's request
    script.push(say("Still here.")); // turn 9's
    let server = ScriptedServer::start(script).await.unwrap();
    let context = long_context();
    let (budget, target) = (context.budget(), context.compact_target());
    let data = tempfile::tempdir().unwrap();
    let (mut handle, path) = spawn_recorded(
        config(&server, project.path(), spill.path(), context),
        data.path(),
    );
    for i in 1..=7 {
        let events = turn(&mut handle, &question(i)).await;
        assert_eq!(outcome(&events), TurnOutcome::Completed, "turn {i}");
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, AgentEvent::CompactionStarted { .. })),
            "setup: turn {i} was already over budget"
        );
    }
    let before = server.requests();
    assert_eq!(before.len(), 9);
    assert!(compactions(&before).is_empty());
    for r in &before {
        assert!(tokens(r) <= budget, "setup: {} > {budget}", tokens(r));
    }

    let eighth = turn(&mut handle, &question(8)).await;
    assert_eq!(outcome(&eighth), TurnOutcome::Completed, "{eighth:?}");
    let ninth = turn(&mut handle, "QUESTION-09").await;
    assert_eq!(outcome(&ninth), TurnOutcome::Completed, "{ninth:?}");

    let requests = server.requests();
    assert_eq!(requests.len(), before.len() + 3);
    // Exactly one compaction request, right before turn 8's main request, and it is the
    // handoff prompt with the older part of the conversation as a transcript.
    let summariser: Vec<usize> = (0..requests.len())
        .filter(|&i| is_compaction(&requests[i]))
        .collect();
    assert_eq!(summariser, vec![before.len()]);
    let request = &requests[before.len()];
    let prompt = content(&request["messages"][0]);
    for section in [
        "## Goal",
        "## What happened",
        "## Files",
        "## State",
        "## Next",
    ] {
        assert!(prompt.contains(section), "{section}");
    }
    assert_eq!(
        prompt.lines().next(),
        compact::prompt(100).lines().next(),
        "the handoff prompt"
    );
    let text = transcript(request);
    assert!(text.contains("<transcript>") && text.contains("</transcript>"));
    assert!(text.contains(&question(1)) && text.contains("ANSWER-01"));
    assert!(
        text.contains("write_todos"),
        "the calls are in the transcript"
    );
    assert!(text.contains("RUNNING-IT") && text.contains("rrrrrrrrrr"));
    assert!(
        !text.contains(&question(8)),
        "the kept tail is not summarised"
    );
    assert!(!text.contains("<handoff-note>") && !text.contains("focus on"));

    let started: Vec<(bool, usize)> = eighth
        .iter()
        .filter_map(|e| match e {
            AgentEvent::CompactionStarted { auto, pieces, .. } => Some((*auto, *pieces)),
            _ => None,
        })
        .collect();
    assert_eq!(started, vec![(true, 1)]);
    let compacted: Vec<_> = eighth
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Compacted {
                auto,
                before_tokens,
                after_tokens,
                kept,
                pieces,
                note,
                ..
            } => Some((
                *auto,
                *before_tokens,
                *after_tokens,
                *kept,
                *pieces,
                note.clone(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(compacted.len(), 1, "{eighth:?}");
    let (auto, before_tokens, after_tokens, kept, pieces, note) = compacted[0].clone();
    assert!(auto && pieces == 1);
    assert_eq!(note, NOTE_TEXT);
    assert!(before_tokens > budget, "{before_tokens} ≤ {budget}");
    assert!(
        after_tokens < before_tokens,
        "{after_tokens} ≥ {before_tokens}"
    );
    assert!(!eighth
        .iter()
        .any(|e| matches!(e, AgentEvent::CompactionFailed { .. })));

    // Turn 8's request: the system prompt as before, the note, the acknowledgement (or an
    // assistant message), then the kept tail as it was; under compact_to of the window.
    let main = &requests[before.len() + 1];
    assert!(tokens(main) <= target, "{} > {target}", tokens(main));
    assert_eq!(after_tokens, tokens(main), "the event counts what was sent");
    let new = stored_messages(main);
    let old = stored_messages(&before[before.len() - 1]);
    assert_eq!(new[0], old[0], "the system prompt changed");
    assert_eq!(new[1]["role"], "user");
    assert!(
        content(&new[1]).contains(&format!("<handoff-note>\n{NOTE_TEXT}\n</handoff-note>")),
        "{}",
        content(&new[1])
    );
    assert_eq!(new[2]["role"], "assistant");
    let tail_from = if content(&new[2]) == compact::ACKNOWLEDGEMENT {
        3
    } else {
        2
    };
    let mut whole = old.clone();
    whole.push(assistant(&answer(7)));
    whole.push(user(&question(8)));
    assert_eq!(new.len() - tail_from, kept, "kept");
    assert!(kept >= 1);
    assert_eq!(
        new[tail_from..],
        whole[whole.len() - kept..],
        "the kept tail"
    );
    if tail_from == 3 {
        assert_ne!(
            new[3]["role"], "assistant",
            "an acknowledgement before an assistant message"
        );
    }
    // With these sizes the tail is turn 7's answer and the new question.
    assert_eq!(
        new[2..],
        [assistant(&answer(7)), user(&question(8))],
        "the tail starts at turn 7's answer, after the command and its result"
    );
    assert_calls_answered(&new);
    assert_calls_answered(&stored_messages(&requests[before.len() + 2]));
    // The plan survives the compaction: the reminder still lists it.
    for r in &requests[before.len() + 1..] {
        let text = reminder(r);
        assert!(
            text.contains("[~] rewrite the parser (in progress)"),
            "{text}"
        );
        assert!(text.contains("[ ] run the benchmarks (pending)"), "{text}");
    }
    // Turn 9 just extends the compacted history: no second compaction.
    let next = stored_messages(&requests[before.len() + 2]);
    assert_eq!(next[..new.len()], new[..]);
    assert!(!ninth
        .iter()
        .any(|e| matches!(e, AgentEvent::CompactionStarted { .. })));

    // Recorded: one compaction entry (note at 0); loading gives the history as sent.
    let loaded = rein_core::session::load(&path).unwrap();
    assert_eq!(loaded.compactions.len(), 1);
    assert_eq!(loaded.summary, Some(0));
    let mut expected = next[1..].to_vec();
    expected.push(assistant("Still here."));
    assert_eq!(json!(as_sent(&loaded.history)), json!(expected));
    assert!(loaded.transcript.iter().any(|m| matches!(
        m,
        rein_core::agent::Message::User { content, .. } if content == &question(1)
    )));
}

/// Turns 1 to 8, then turn 9 whose compaction is answered by `summariser`: it fails, the
/// history is unchanged, the turn goes on (a command, then an answer), and compaction is
/// not tried again in that turn.
async fn compaction_fails(summariser: Reply) -> String {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let mut script = long_replies();
    script.push(summariser);
    script.push(bash("echo still working"));
    script.push(say("Part 9 is done, uncompacted."));
    let server = ScriptedServer::start(script).await.unwrap();
    let mut config = config(&server, project.path(), spill.path(), long_context());
    config.client.max_tries = 1;
    let budget = config.context.budget();
    let mut handle = agent::spawn(config).unwrap();
    long_turns(&mut handle).await;
    let events = turn(&mut handle, &question(9)).await;

    assert_eq!(outcome(&events), TurnOutcome::Completed, "{events:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), LONG_TURNS + 3, "{}", requests.len());
    let summariser: Vec<usize> = (0..requests.len())
        .filter(|&i| is_compaction(&requests[i]))
        .collect();
    assert_eq!(
        summariser,
        vec![LONG_TURNS],
        "one compaction request, not retried"
    );
    let failed: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::CompactionFailed { message } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(failed.len(), 1, "{events:?}");
    assert!(failed[0].contains("unchanged"), "{}", failed[0]);
    assert_eq!(
        count(&events, |e| matches!(
            e,
            AgentEvent::CompactionStarted { .. }
        )),
        1
    );
    assert_eq!(
        count(&events, |e| matches!(e, AgentEvent::Compacted { .. })),
        0
    );

    // The main request carries what it would have without the attempt.
    let old = stored_messages(&requests[LONG_TURNS - 1]);
    let mut expected = old.clone();
    expected.push(assistant(&answer(LONG_TURNS)));
    expected.push(user(&question(9)));
    let first = stored_messages(&requests[LONG_TURNS + 1]);
    assert_eq!(first, expected);
    assert!(
        tokens(&requests[LONG_TURNS + 1]) > budget,
        "sent over budget, as it is"
    );
    // The turn went on; its second request, over budget too, extends the first.
    let second = stored_messages(&requests[LONG_TURNS + 2]);
    assert_eq!(second[..first.len()], first[..]);
    assert_eq!(second.len(), first.len() + 2);
    assert_calls_answered(&second);
    failed[0].to_string()
}

#[tokio::test]
async fn a_failed_compaction_http_500_leaves_the_history_and_is_not_retried_in_the_turn() {
    compaction_fails(Reply::error(500, "summariser down")).await;
}

#[tokio::test]
async fn a_failed_compaction_cut_stream_leaves_the_history_and_is_not_retried_in_the_turn() {
    compaction_fails(Reply::sse(vec![
        Step::Data(chunk(json!({ "role": "assistant", "content": "" }), None)),
        Step::Data(chunk(json!({ "content": "## Goal\nhalf a note " }), None)),
        Step::Cut,
    ]))
    .await;
}

#[tokio::test]
async fn a_failed_compaction_empty_note_leaves_the_history_and_is_not_retried_in_the_turn() {
    compaction_fails(say("")).await;
}

/// A summariser that rambles (a small model repeating its input until its output limit,
/// as SmolLM2-135M did by hand) writes a note that would leave the conversation larger
/// than the budget: it is thrown away and the history stays.
#[tokio::test]
async fn a_failed_compaction_note_too_long_leaves_the_history_and_is_not_retried_in_the_turn() {
    compaction_fails(say(&prose("ramble", 80_000))).await;
}

/// A rambling summariser is not waited for: once its note runs far past the room it was
/// given, the stream is dropped (here it would otherwise stall for a day, then be cut)
/// and the failure says why.
#[tokio::test]
async fn a_runaway_note_is_abandoned_mid_stream() {
    let failed = compaction_fails(Reply::sse(vec![
        Step::Data(chunk(json!({ "role": "assistant", "content": "" }), None)),
        Step::Data(chunk(json!({ "content": prose("ramble", 40_000) }), None)),
        Step::Sleep(Duration::from_secs(86_400)),
        Step::Cut,
    ]))
    .await;
    assert!(
        failed.starts_with("compaction failed: the handoff note ran past "),
        "{failed}"
    );
}

#[tokio::test]
async fn an_interrupted_compaction_leaves_the_history_uncompacted() {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let mut script = long_replies();
    // The summariser starts a reply, then goes quiet.
    script.push(Reply::sse(vec![
        Step::Data(chunk(json!({ "role": "assistant", "content": "" }), None)),
        Step::Data(chunk(json!({ "content": "## Goal\n" }), None)),
        // A day: the compaction ends only because the interrupt ended it.
        Step::Sleep(Duration::from_secs(86_400)),
        Step::Done,
    ]));
    // Turn 10 tries again; this time the summariser fails and the request goes as it is.
    script.push(Reply::error(500, "summariser down"));
    script.push(say("Answering 10 with everything still there."));
    let server = ScriptedServer::start(script).await.unwrap();
    let mut config = config(&server, project.path(), spill.path(), long_context());
    config.client.max_tries = 1;
    let mut handle = agent::spawn(config).unwrap();
    long_turns(&mut handle).await;

    assert!(handle.send(AgentCommand::UserMessage(question(9))));
    let mut events = events_until(&mut handle, |e| {
        matches!(
            e,
            AgentEvent::CompactionStarted { .. } | AgentEvent::TurnFinished { .. }
        )
    })
    .await;
    assert!(
        matches!(
            events.last(),
            Some(AgentEvent::CompactionStarted { auto: true, .. })
        ),
        "{events:?}"
    );
    // Wait until the summariser has the request (the deadline a guard against a hang),
    // then interrupt.
    let deadline = Instant::now() + support::agent::DEADLINE;
    while server.requests().len() < LONG_TURNS + 1 {
        assert!(Instant::now() < deadline, "no summariser request");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(handle.send(AgentCommand::Interrupt));
    events.extend(
        events_until(&mut handle, |e| {
            matches!(e, AgentEvent::TurnFinished { .. })
        })
        .await,
    );
    assert_eq!(outcome(&events), TurnOutcome::Interrupted, "{events:?}");
    let failed: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::CompactionFailed { message } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(failed.len(), 1, "{events:?}");
    assert!(failed[0].contains("interrupted"), "{}", failed[0]);
    assert_eq!(
        count(&events, |e| matches!(e, AgentEvent::Compacted { .. })),
        0
    );
    assert_eq!(
        server.requests().len(),
        LONG_TURNS + 1,
        "no main request after the interrupt"
    );

    // The next turn's request still holds the whole history.
    let next = turn(&mut handle, "QUESTION-10").await;
    assert_eq!(outcome(&next), TurnOutcome::Completed, "{next:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), LONG_TURNS + 3);
    assert!(is_compaction(&requests[LONG_TURNS + 1]));
    assert!(
        transcript(&requests[LONG_TURNS + 1]).contains(&question(1)),
        "the retry still sees the first question: nothing was compacted"
    );
    let sent = stored_messages(&requests[LONG_TURNS + 2]);
    let mut expected = stored_messages(&requests[LONG_TURNS - 1]);
    expected.push(assistant(&answer(LONG_TURNS)));
    expected.push(user(&question(9)));
    assert_eq!(sent.len(), expected.len() + 2, "{:.2000}", json!(sent));
    assert_eq!(sent[..expected.len()], expected[..]);
    // The interrupted turn left an assistant message, then the new question.
    let closing = &sent[expected.len()];
    assert_eq!(closing["role"], "assistant");
    assert!(closing.get("tool_calls").is_none());
    assert_eq!(sent[expected.len() + 1], user("QUESTION-10"));
    assert!(content(&sent[1]).starts_with("QUESTION-01"));
}

// ---------------------------------------------------------------------------------------
// 4. /compact on demand, recorded and resumed
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn compact_on_demand_replaces_the_whole_history_and_a_resumed_session_continues_from_it() {
    let project = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let note = "## Goal\nFix the parser.\n## What happened\nRan it.\n## Files\n- parse.rs\n## State\nFixed.\n## Next\nAsk.";
    let server = ScriptedServer::start(vec![
        bash("echo parsed-ok"),
        say("Parser fixed."),
        say(note),
        say("Next: benchmarks."),
    ])
    .await
    .unwrap();
    let (mut handle, path) = spawn_recorded(
        config(
            &server,
            project.path(),
            spill.path(),
            ContextConfig::default(),
        ),
        data.path(),
    );
    turn(&mut handle, "fix the parser").await;
    let before = server.requests();
    assert_eq!(before.len(), 2);

    assert!(handle.send(AgentCommand::Compact {
        focus: Some("the parser".into()),
    }));
    let events = events_until(&mut handle, |e| {
        matches!(
            e,
            AgentEvent::Compacted { .. } | AgentEvent::CompactionFailed { .. }
        )
    })
    .await;
    let Some(AgentEvent::Compacted {
        auto,
        summarised,
        kept,
        pieces,
        note: written,
        ..
    }) = events.last()
    else {
        panic!("{events:?}")
    };
    assert!(!auto);
    assert_eq!((*summarised, *kept, *pieces), (4, 0, 1));
    assert_eq!(written, note);
    assert!(events
        .iter()
        .any(|e| matches!(e, AgentEvent::CompactionStarted { auto: false, .. })));

    let third = turn(&mut handle, "what next?").await;
    assert_eq!(outcome(&third), TurnOutcome::Completed);
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    // One compaction request, with the focus, the whole conversation in it.
    assert_eq!(compactions(&requests).len(), 1);
    assert!(is_compaction(&requests[2]));
    let text = transcript(&requests[2]);
    assert!(text.contains("focus on: the parser"), "{text}");
    assert!(text.contains("fix the parser") && text.contains("parsed-ok"));
    assert!(text.contains("Parser fixed."));
    // The next turn's request: system, note, acknowledgement, the new message (with the
    // reminder in it).
    let all = &stored_messages(&requests[3]);
    assert_eq!(all.len(), 4, "{:.3000}", requests[3]);
    assert_eq!(all[0], stored_messages(&before[1])[0]);
    assert_eq!(all[1]["role"], "user");
    assert!(content(&all[1]).contains(&format!("<handoff-note>\n{note}\n</handoff-note>")));
    assert_eq!(all[2], assistant(compact::ACKNOWLEDGEMENT));
    assert_eq!(all[3], user("what next?"));
    reminder(&requests[3]);
    let (note_message, ack) = (all[1].clone(), all[2].clone());

    // The session file: one compaction entry, note at 0, the note and ack as history.
    let raw = std::fs::read_to_string(&path).unwrap();
    let entries: Vec<Value> = raw
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let compaction: Vec<&Value> = entries
        .iter()
        .filter(|e| e["type"] == "compaction")
        .collect();
    assert_eq!(compaction.len(), 1, "{raw}");
    assert_eq!(compaction[0]["summary"], 0);
    assert_eq!(compaction[0]["history"], json!([note_message, ack]));
    let loaded = rein_core::session::load(&path).unwrap();
    assert_eq!(loaded.summary, Some(0));
    let history = json!(as_sent(&loaded.history));
    assert_eq!(
        history,
        json!([
            note_message,
            ack,
            user("what next?"),
            assistant("Next: benchmarks.")
        ])
    );
    assert!(
        loaded.transcript.len() >= 6,
        "the transcript keeps everything the user saw"
    );

    // Resumed (in another directory: the system prompt is built fresh for it).
    handle.shut_down().await;
    let server2 = ScriptedServer::start(vec![say("Resumed.")]).await.unwrap();
    let mut resumed = spawn_resumed(
        config(
            &server2,
            elsewhere.path(),
            spill.path(),
            ContextConfig::default(),
        ),
        loaded,
        data.path(),
    );
    turn(&mut resumed, "and then?").await;
    let sent = stored_messages(&server2.requests()[0]);
    let system = content(&sent[0]);
    assert_eq!(sent[0]["role"], "system");
    assert!(
        system.contains(&elsewhere.path().display().to_string()),
        "fresh prompt"
    );
    assert!(!system.contains(&project.path().display().to_string()));
    assert_eq!(
        json!(sent[1..]),
        json!([
            note_message,
            ack,
            user("what next?"),
            assistant("Next: benchmarks."),
            user("and then?")
        ])
    );
}

#[tokio::test]
async fn compact_sent_during_a_turn_waits_for_the_turn_to_end() {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        bash("sleep 0.2; echo slept"),
        say("Slept."),
        say("## Goal\nSleep.\n## Next\nNothing."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(
        &server,
        project.path(),
        spill.path(),
        ContextConfig::default(),
    ))
    .unwrap();
    assert!(handle.send(AgentCommand::UserMessage("sleep a bit".into())));
    // Sent while the command runs.
    let mut events = events_until(&mut handle, |e| {
        matches!(e, AgentEvent::ToolCallStarted { .. })
    })
    .await;
    assert!(handle.send(AgentCommand::Compact { focus: None }));
    events.extend(
        events_until(&mut handle, |e| {
            matches!(
                e,
                AgentEvent::Compacted { .. } | AgentEvent::CompactionFailed { .. }
            )
        })
        .await,
    );
    let finished = events
        .iter()
        .position(|e| matches!(e, AgentEvent::TurnFinished { .. }))
        .expect("the turn finished");
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let started = events
        .iter()
        .position(|e| matches!(e, AgentEvent::CompactionStarted { auto: false, .. }))
        .expect("the compaction ran");
    assert!(finished < started, "{events:?}");
    assert!(matches!(
        events.last(),
        Some(AgentEvent::Compacted { kept: 0, .. })
    ));
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(!is_compaction(&requests[1]) && is_compaction(&requests[2]));
    assert!(transcript(&requests[2]).contains("Slept."));
}

// ---------------------------------------------------------------------------------------
// 5. A history too big for one summariser request goes in pieces
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn a_history_too_big_for_one_summariser_request_is_compacted_in_pieces() {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let (note1, note2) = (
        "## Goal\nFIRST-NOTE: read file a.",
        "## Goal\nSECOND-NOTE: read files a and b.",
    );
    // Window 6 000: a summariser request takes about 16 000 characters of transcript; two
    // results of 10 000 characters do not fit one.
    let args: Vec<String> = [fill('a', 10_000), fill('b', 10_000)]
        .iter()
        .map(|c| json!({ "command": c }).to_string())
        .collect();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &args[0]), ("bash", &args[1])]).without_usage(),
        say(note1),
        say(note2),
        say("Both read."),
    ])
    .await
    .unwrap();
    let context = ContextConfig {
        window: 6_000,
        cap_chars: 50_000,
        keep_recent: 3,
        ..ContextConfig::default()
    };
    let budget = context.budget();
    let mut handle = agent::spawn(config(&server, project.path(), spill.path(), context)).unwrap();
    let events = turn(&mut handle, "read both files").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed, "{events:?}");

    let requests = server.requests();
    assert_eq!(
        requests.len(),
        4,
        "two summariser requests: {}",
        requests.len()
    );
    assert!(!is_compaction(&requests[0]) && !is_compaction(&requests[3]));
    let (one, two) = (transcript(&requests[1]), transcript(&requests[2]));
    assert!(is_compaction(&requests[1]) && is_compaction(&requests[2]));
    assert!(one.contains("part 1 of 2"), "{one:.300}");
    assert!(!one.contains("<handoff-note>"));
    assert!(two.contains("part 2 of 2"), "{two:.600}");
    assert!(
        two.contains(&format!("<handoff-note>\n{note1}\n</handoff-note>")),
        "{two:.600}"
    );
    // Each piece holds its part of the conversation.
    let (a, b) = ("a".repeat(1000), "b".repeat(1000));
    assert!(one.contains("read both files") && one.contains(&a) && !one.contains(&b));
    assert!(two.contains(&b) && !two.contains(&a));

    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::CompactionStarted {
            auto: true,
            pieces: 2,
            ..
        }
    )));
    let note = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Compacted { pieces, note, .. } => Some((*pieces, note.clone())),
            _ => None,
        })
        .expect("compacted");
    assert_eq!(note, (2, note2.to_string()));
    let sent = stored_messages(&requests[3]);
    assert!(content(&sent[1]).contains(&format!("<handoff-note>\n{note2}\n</handoff-note>")));
    assert!(!content(&sent[1]).contains("FIRST-NOTE"));
    assert!(tokens(&requests[3]) <= budget);
    assert_calls_answered(&sent);
}

// ---------------------------------------------------------------------------------------
// 6. Calibration from the server's usage reports
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn usage_reports_calibrate_the_count_and_without_them_it_is_an_estimate() {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    // A server whose tokenizer makes 3 characters a token.
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &json!({ "command": "echo hi" }).to_string())])
            .with_usage_from_request(3.0),
        Reply::text("done").with_usage_from_request(3.0),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(
        &server,
        project.path(),
        spill.path(),
        ContextConfig::default(),
    ))
    .unwrap();
    let events = turn(&mut handle, "say hi").await;
    let requests = server.requests();
    let first_usage = events
        .iter()
        .position(|e| matches!(e, AgentEvent::Usage(_)))
        .expect("a usage report");
    let after: Vec<ContextStats> = contexts(&events[first_usage..]);
    assert!(!after.is_empty());
    for stats in &after {
        assert!(!stats.estimated, "{stats:?}");
        assert!(
            (stats.chars_per_token - 3.0).abs() <= 0.3,
            "{}",
            stats.chars_per_token
        );
        // The parts are counted at the learnt rate too.
        let tools = serde_json::to_string(&requests[0]["tools"]).unwrap().len() as f64;
        let expected = tools / stats.chars_per_token;
        assert!(
            (stats.breakdown.tools as f64 - expected).abs() <= 1.0,
            "{stats:?}"
        );
    }
    // The count right after the first reply: the tokens reported, plus the reply at the
    // learnt rate.
    let reported = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Usage(u) => Some(*u),
            _ => None,
        })
        .unwrap();
    assert!(!reported.estimated);
    assert_eq!(
        reported.prompt_tokens,
        (request_chars(&requests[0]) as f64 / 3.0).ceil() as u64
    );
    let call = &stored_messages(&requests[1])[2];
    assert_eq!(call["role"], "assistant");
    let call_chars = request_chars(&json!({ "messages": [call] }));
    let gauge = after[0].tokens;
    let expected =
        reported.prompt_tokens + (call_chars as f64 / after[0].chars_per_token).ceil() as u64;
    assert!(gauge.abs_diff(expected) <= 1, "{gauge} vs {expected}");
    // Before any report the count was a guess at 4.
    let early = contexts(&events[..first_usage]);
    assert!(early
        .iter()
        .all(|s| s.estimated && s.chars_per_token == 4.0));

    // A server that never reports usage: every count is an estimate at 4.
    let server = ScriptedServer::start(vec![bash("echo hi"), say("done")])
        .await
        .unwrap();
    let mut handle = agent::spawn(config(
        &server,
        project.path(),
        spill.path(),
        ContextConfig::default(),
    ))
    .unwrap();
    let events = turn(&mut handle, "say hi").await;
    let all = contexts(&events);
    assert!(all.len() >= 3, "{events:?}");
    for stats in &all {
        assert!(stats.estimated, "{stats:?}");
        assert_eq!(stats.chars_per_token, 4.0);
    }
    let usage = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Usage(u) => Some(*u),
            _ => None,
        })
        .unwrap();
    assert!(
        usage.estimated,
        "rein's own estimate when the server sends none"
    );
    // The last count is the next request's size at 4 characters a token.
    let requests = server.requests();
    let last = all.last().unwrap();
    let reply = assistant("done");
    let chars = request_chars(&requests[1]) + request_chars(&json!({ "messages": [reply] }));
    assert!(
        last.tokens.abs_diff((chars as u64).div_ceil(4)) <= 2,
        "{} vs {}",
        last.tokens,
        chars.div_ceil(4)
    );
}

// ---------------------------------------------------------------------------------------
// 7. Stubs and drops are recorded; a resumed session sends what the original would have
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn a_session_with_stubs_and_drops_resumes_to_exactly_the_same_history() {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut script = drop_script();
    script.push(say("original goes on"));
    let server = ScriptedServer::start(script).await.unwrap();
    let (mut handle, path) = spawn_recorded(
        config(&server, project.path(), spill.path(), drop_context(40_000)),
        data.path(),
    );
    let (first, second) = drop_turns(&mut handle, &big_message()).await;
    assert!(first
        .iter()
        .any(|e| matches!(e, AgentEvent::ContextTrimmed { .. })));
    assert!(second
        .iter()
        .any(|e| matches!(e, AgentEvent::ResultsDropped { .. })));

    // The file: stubs and drops as their own entries, no compaction standing in for them.
    let raw = std::fs::read_to_string(&path).unwrap();
    let entries: Vec<Value> = raw
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds = |kind: &str| entries.iter().filter(|e| e["type"] == kind).count();
    assert!(
        kinds("stubbed") >= 2,
        "turn 1's end and turn 2's request: {}",
        kinds("stubbed")
    );
    assert_eq!(kinds("dropped"), 1);
    assert_eq!(kinds("compaction"), 0);
    for e in entries.iter().filter(|e| e["type"] == "stubbed") {
        assert_eq!(e["stub_chars"], DROP_STUB_CHARS);
        assert!(!e["indices"].as_array().unwrap().is_empty());
    }
    // Every big output is in the file once: the history is not written again per turn.
    for c in LETTERS {
        let output = c.to_string().repeat(RESULT_CHARS);
        assert_eq!(raw.matches(&output).count(), 1, "{c}");
    }
    let history_chars: usize = stored_messages(&server.requests()[1])
        .iter()
        .map(|m| content(m).len())
        .sum::<usize>()
        + BIG_MESSAGE_CHARS;
    assert!(
        raw.len() < history_chars + 20_000,
        "{} bytes for a history of {history_chars}",
        raw.len()
    );

    let loaded = rein_core::session::load(&path).unwrap();
    assert_eq!(loaded.summary, None);
    assert!(loaded.notices.is_empty(), "{:?}", loaded.notices);
    let resumed_history = json!(as_sent(&loaded.history));

    // The original goes on...
    turn(&mut handle, "go on").await;
    let original = stored_messages(server.requests().last().unwrap());
    // ... and so does a resumed agent, in the same directory, once the original has let
    // go of the file (two writers on one session are refused).
    handle.shut_down().await;
    let server2 = ScriptedServer::start(vec![say("resumed goes on")])
        .await
        .unwrap();
    let mut resumed = spawn_resumed(
        config(&server2, project.path(), spill.path(), drop_context(40_000)),
        loaded,
        data.path(),
    );
    let events = turn(&mut resumed, "go on").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let again = stored_messages(&server2.requests()[0]);
    assert_eq!(again.len(), original.len());
    for (i, (a, b)) in again.iter().zip(&original).enumerate() {
        assert_eq!(a, b, "message {i} differs after resuming");
    }
    // What was loaded is the history the original agent had, the new message aside.
    assert_eq!(resumed_history, json!(original[1..original.len() - 1]));
    let results = tool_contents(&again);
    assert!(results.iter().any(|c| c == drop::NOTE));
    assert!(results
        .iter()
        .any(|c| c.ends_with("characters trimmed from this old tool result]")));
}

/// What the token count learnt from the server survives a restart: the session file
/// records it at each turn's end, and a resumed agent's first count is calibrated (not the
/// 4-characters-a-token guess, which would under-count this server by a quarter and let
/// the first request past the budget).
#[tokio::test]
async fn a_resumed_session_starts_with_the_learnt_token_rate() {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let server =
        ScriptedServer::start(vec![Reply::text("hello there").with_usage_from_request(3.0)])
            .await
            .unwrap();
    let (mut handle, path) = spawn_recorded(
        config(
            &server,
            project.path(),
            spill.path(),
            ContextConfig::default(),
        ),
        data.path(),
    );
    turn(&mut handle, "hi").await;
    handle.shut_down().await;
    let loaded = rein_core::session::load(&path).unwrap();
    let (chars, tokens) = loaded.calibration.expect("the rate is recorded");
    let rate = chars as f64 / tokens as f64;
    assert!((rate - 3.0).abs() < 0.1, "{rate}");

    let server2 = ScriptedServer::start(vec![say("again")]).await.unwrap();
    let mut resumed = spawn_resumed(
        config(
            &server2,
            project.path(),
            spill.path(),
            ContextConfig::default(),
        ),
        loaded,
        data.path(),
    );
    let first = events_until(&mut resumed, |e| matches!(e, AgentEvent::Context(_))).await;
    let Some(AgentEvent::Context(stats)) = first.last() else {
        unreachable!()
    };
    assert!(!stats.estimated, "{stats:?}");
    assert!((stats.chars_per_token - 3.0).abs() < 0.1, "{stats:?}");
}

/// A session whose process died while the model was answering ends with the user's
/// message; the next turn puts a short assistant note between it and the new message,
/// so the roles keep alternating (strict chat templates refuse two user messages).
#[tokio::test]
async fn a_resumed_session_ending_with_a_user_message_gets_a_note_before_the_next() {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut writer =
        SessionWriter::create(data.path(), SessionMeta::new(project.path(), "scripted")).unwrap();
    writer
        .append(&rein_core::session::Entry::message(
            rein_core::agent::Message::user("first question"),
        ))
        .unwrap();
    let path = writer.path().to_path_buf();
    drop(writer);
    let loaded = rein_core::session::load(&path).unwrap();
    let server = ScriptedServer::start(vec![say("answered")]).await.unwrap();
    let mut resumed = spawn_resumed(
        config(
            &server,
            project.path(),
            spill.path(),
            ContextConfig::default(),
        ),
        loaded,
        data.path(),
    );
    turn(&mut resumed, "second question").await;
    let sent = stored_messages(&server.requests()[0]);
    let roles: Vec<&str> = sent.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"], "{sent:?}");
    assert!(
        content(&sent[2]).to_lowercase().contains("no reply"),
        "{}",
        content(&sent[2])
    );
    assert_eq!(content(&sent[3]), "second question");
}

/// After an automatic compaction failed, the next turns do not try again until the
/// conversation has grown by a tenth of the window: a model that cannot write a note
/// would otherwise cost every message a failed attempt. Then it is tried again.
#[tokio::test]
async fn a_failed_compaction_waits_for_the_conversation_to_grow_before_the_next_try() {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let mut script = long_replies();
    script.push(say("Part 9, uncompacted."));
    script.push(say("Part 10, still uncompacted."));
    script.push(say("Part 11, after the compaction."));
    // The first compaction request fails; any later one (in as many pieces as it takes)
    // writes the note.
    let tries = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let server = ScriptedServer::start_routed(
        script,
        std::sync::Arc::new(move |request: &Value| {
            is_compaction(request).then(|| {
                match tries.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
                    0 => Reply::error(500, "summariser down"),
                    _ => say(NOTE_TEXT),
                }
            })
        }),
    )
    .await
    .unwrap();
    let mut config = config(&server, project.path(), spill.path(), long_context());
    config.client.max_tries = 1;
    let mut handle = agent::spawn(config).unwrap();
    long_turns(&mut handle).await;
    let ninth = turn(&mut handle, &question(9)).await;
    assert_eq!(
        count(&ninth, |e| matches!(e, AgentEvent::CompactionFailed { .. })),
        1
    );
    let tenth = turn(&mut handle, &question(10)).await;
    assert_eq!(outcome(&tenth), TurnOutcome::Completed);
    assert_eq!(
        count(&tenth, |e| matches!(
            e,
            AgentEvent::CompactionStarted { .. }
        )),
        0,
        "tried again although the conversation barely grew: {tenth:?}"
    );
    let big = format!(
        "{} {}",
        question(11),
        prose("MORE", 4 * LONG_WINDOW as usize / 10)
    );
    let eleventh = turn(&mut handle, &big).await;
    assert_eq!(
        count(&eleventh, |e| matches!(e, AgentEvent::Compacted { .. })),
        1,
        "{eleventh:?}"
    );
    let requests = server.requests();
    assert!(
        compactions(&requests).len() >= 2,
        "one failed, then one done"
    );
    assert_eq!(outcome(&eleventh), TurnOutcome::Completed);
}

// ---------------------------------------------------------------------------------------
// Issue 12, item 3: the newest user message is never summarised away
// ---------------------------------------------------------------------------------------

/// A paste of `chars` characters with a marker at its start, middle and end.
fn paste(chars: usize) -> String {
    let filler = prose("", chars / 2 - 20);
    format!("PASTE-HEAD {filler} PASTE-MIDDLE {filler} PASTE-TAIL")
}

/// An 8k-token window (a local model's): the paste alone does not fit, so it is cut to
/// its head and tail with the whole in a spill file, the transcript says so, and nothing
/// is compacted (it used to be summarised before the model ever saw it).
#[tokio::test]
async fn a_message_too_big_for_the_window_is_capped_not_summarised() {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![bash("wc -c the-spill-file"), say("Read it.")])
        .await
        .unwrap();
    let context = ContextConfig {
        window: 8_000,
        ..ContextConfig::default()
    };
    let budget = context.budget();
    let mut handle = agent::spawn(config(&server, project.path(), spill.path(), context)).unwrap();
    let text = paste(30_000);
    let events = turn(&mut handle, &text).await;
    assert_eq!(outcome(&events), TurnOutcome::Completed, "{events:?}");

    let requests = server.requests();
    assert_eq!(requests.len(), 2, "no summariser request");
    assert!(compactions(&requests).is_empty());
    for r in &requests {
        assert!(tokens(r) <= budget, "{} > {budget}", tokens(r));
    }
    let messages = stored_messages(&requests[0]);
    let sent = content(&messages[1]);
    assert!(sent.starts_with("PASTE-HEAD"), "{sent:.200}");
    assert!(sent.contains("PASTE-TAIL"));
    assert!(!sent.contains("PASTE-MIDDLE"));
    assert!(
        sent.contains("characters cut from the middle of this message. The whole message is in"),
        "{sent:.3000}"
    );
    // The spill file the note names holds the whole message (during the turn).
    let notice = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Notice { message } if message.starts_with("your message is") => {
                Some(message.clone())
            }
            _ => None,
        })
        .expect("the transcript says so");
    assert!(
        notice.contains(&format!("{} characters", text.chars().count())),
        "{notice}"
    );
    assert!(notice.contains("8k-token window"), "{notice}");
    assert!(
        notice.contains(&spill.path().display().to_string()),
        "{notice}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::TurnStarted { text: t } if *t == text)),
        "the user's own transcript shows the whole paste"
    );
}

/// A message that fits the window but not beside the history: the history is compacted
/// and the message is kept whole after the note, never summarised with the rest.
#[tokio::test]
async fn compaction_keeps_the_newest_message_whole_after_the_note() {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let mut script = long_replies();
    script.truncate(3);
    script.push(say("## Goal\nTHE-NOTE"));
    script.push(bash("echo working"));
    script.push(say("Done with the paste."));
    let server = ScriptedServer::start(script).await.unwrap();
    let context = long_context();
    let budget = context.budget();
    let mut handle = agent::spawn(config(&server, project.path(), spill.path(), context)).unwrap();
    for i in 1..=3 {
        let events = turn(&mut handle, &question(i)).await;
        assert_eq!(outcome(&events), TurnOutcome::Completed, "turn {i}");
    }
    // About 8 000 tokens: it fits the 16k window, but not beside 3 × 6 000 characters.
    let text = paste(32_000);
    let events = turn(&mut handle, &text).await;
    assert_eq!(outcome(&events), TurnOutcome::Completed, "{events:?}");
    assert!(!events.iter().any(
        |e| matches!(e, AgentEvent::Notice { message } if message.starts_with("your message is"))
    ));

    let requests = server.requests();
    assert_eq!(requests.len(), 3 + 3, "one summariser request, then two");
    assert!(is_compaction(&requests[3]));
    // The summariser reads the paste shortened: what the work is for, not all of it.
    let summarised = transcript(&requests[3]);
    assert!(summarised.contains("ANSWER-01") && summarised.contains("PASTE-HEAD"));
    assert!(summarised.contains("this message follows your note whole"));
    assert!(!summarised.contains("PASTE-MIDDLE"));
    for (i, request) in requests[4..].iter().enumerate() {
        let messages = stored_messages(request);
        assert!(tokens(request) <= budget);
        // System, note, acknowledgement, the paste whole (then this turn's steps).
        assert!(content(&messages[1]).contains("THE-NOTE"), "request {i}");
        assert_eq!(messages[2]["role"], "assistant");
        assert_eq!(messages[3]["role"], "user");
        assert!(
            content(&messages[3]).starts_with(&text),
            "request {i}: the paste is there whole"
        );
        assert!(!request.to_string().contains("ANSWER-01"), "summarised");
    }
    let compacted = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Compacted {
                summarised, kept, ..
            } => Some((*summarised, *kept)),
            _ => None,
        })
        .expect("a compaction");
    assert_eq!(compacted, (6, 1), "three turns summarised, the paste kept");
}
