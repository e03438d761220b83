//! A compaction that fails (an HTTP 500, a cut stream, an empty or too long note, a runaway
//! note, an interrupt) leaves the history as it was, and the next try waits for the
//! conversation to grow.

use crate::support;

use std::time::{Duration, Instant};

use rein_core::agent::{self, AgentCommand, AgentEvent, TurnOutcome};
use serde_json::{json, Value};
use support::agent::{content, events_until, stored_messages, turn};
use support::{chunk, prose, Reply, ScriptedServer, Step};

use super::{
    answer, assert_calls_answered, assistant, bash, compactions, config, count, is_compaction,
    long_context, long_replies, long_turns, outcome, question, say, tokens, transcript, user,
    LONG_TURNS, LONG_WINDOW, NOTE_TEXT,
};

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

    assert!(handle.send(AgentCommand::UserMessage(question(9).into())));
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
    let deadline = Instant::now() + support::GIVE_UP;
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
