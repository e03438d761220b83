//! The count and resuming: usage reports calibrate the count, a resumed session has the same
//! history, the learnt rate, and a note before the next message.

use crate::support;

use rein_core::agent::{self, AgentEvent, ContextStats, TurnOutcome};
use rein_core::context::{drop, ContextConfig};
use rein_core::session::{SessionMeta, SessionWriter};
use serde_json::{json, Value};
use support::agent::{
    as_sent, content, events_until, spawn_recorded, spawn_resumed, stored_messages, tool_contents,
    turn,
};
use support::{request_chars, Reply, ScriptedServer};

use super::{
    assistant, bash, big_message, config, drop_context, drop_script, drop_turns, outcome, say,
    BIG_MESSAGE_CHARS, DROP_STUB_CHARS, LETTERS, RESULT_CHARS,
};

fn contexts(events: &[AgentEvent]) -> Vec<ContextStats> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Context(stats) => Some(*stats),
            _ => None,
        })
        .collect()
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
