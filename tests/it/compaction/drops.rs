//! Dropping old tool results: not when the turn-end stubs are enough, the oldest first, never
//! the most recent, never for a result shorter than the note.

use crate::support;

use rein_core::agent::{self, AgentEvent, TurnOutcome};
use rein_core::context::drop;
use support::agent::{content, stored_messages, tool_contents, turn};
use support::{prose, request_chars, Reply, ScriptedServer};

use super::{
    assistant, bash, big_message, compactions, config, count, drop_context, drop_script,
    drop_turns, is_compaction, long_context, long_replies, long_turns, outcome, question, say,
    tokens, user, BIG_MESSAGE_CHARS, DROP_KEEP_RECENT, DROP_STUB_CHARS, LONG_TURNS,
};

/// Big enough that dropping every old result does not reach the drop target.
fn bigger_message() -> String {
    prose("BIGGER", BIG_MESSAGE_CHARS + 16_000)
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
