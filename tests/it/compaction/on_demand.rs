//! /compact: replacing the whole history (and a resumed session going on from it), sent
//! during a turn, a history too big for one request compacted in pieces, and a message too
//! big for the window capped.

use crate::support;

use rein_core::agent::{self, AgentCommand, AgentEvent, TurnOutcome};
use rein_core::context::{compact, ContextConfig};
use serde_json::{json, Value};
use support::agent::{
    as_sent, content, events_until, reminder, spawn_recorded, spawn_resumed, stored_messages, turn,
};
use support::{Reply, ScriptedServer};

use super::{
    assert_calls_answered, assistant, bash, compactions, config, fill, is_compaction, outcome,
    paste, say, tokens, transcript, user,
};

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
