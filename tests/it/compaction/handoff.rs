//! A long session compacted once into a handoff note, and the newest message kept whole after
//! the note.

use crate::support;

use rein_core::agent::{self, AgentEvent, TurnOutcome};
use rein_core::context::compact;
use serde_json::json;
use support::agent::{as_sent, content, reminder, spawn_recorded, stored_messages, turn};
use support::{prose, Reply, ScriptedServer};

use super::{
    answer, assert_calls_answered, assistant, bash, compactions, config, fill, is_compaction,
    long_context, long_replies, outcome, paste, question, say, tokens, transcript, user, NOTE_TEXT,
};

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
