//! A model that runs away (issue 25 §2): a reply that repeats itself is stopped, its start
//! kept; the same tool call made again and again is put to the user. The real agent against
//! the scripted server.

use crate::support;

use std::time::Duration;

use rein_core::agent::repetition::CUT_MARK;
use rein_core::agent::{self, AgentEvent, TurnOutcome};
use serde_json::{json, Value};
use support::agent::{errors, outcome, scripted_config, turn};
use support::{chunk, Reply, ScriptedServer, Step};

/// The messages a request sent.
fn messages(request: &Value) -> Vec<Value> {
    request["messages"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn a_reply_that_repeats_itself_is_stopped_and_its_start_kept() {
    let dir = tempfile::tempdir().unwrap();
    // What SmolLM2 does after a tool result: "ls -l -l -l …", a few tokens an event, and it
    // would go on for minutes (the stream below then stalls for a day).
    let mut steps = vec![Step::Data(chunk(
        json!({ "content": "The command is: ```bash\nls" }),
        None,
    ))];
    for _ in 0..5_000 {
        steps.push(Step::Data(chunk(json!({ "content": " -l" }), None)));
    }
    // A day: a reply waited out would never end (the harness's deadline fails it).
    steps.push(Step::Sleep(Duration::from_secs(86_400)));
    steps.push(Step::Done);
    let server = ScriptedServer::start(vec![Reply::sse(steps), Reply::text("fine now")])
        .await
        .unwrap();
    let mut handle = agent::spawn(scripted_config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "list the files").await;
    assert_eq!(outcome(&events), TurnOutcome::Failed);
    let errors = errors(&events);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("stopped: the reply repeats itself"),
        "{errors:?}"
    );
    // The front end is told to cut what it showed back to the start, marked.
    let cut = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ReplyCut { text, reasoning } => Some((text.clone(), reasoning.clone())),
            _ => None,
        })
        .expect("a ReplyCut event");
    let kept = cut.0.expect("the text was cut");
    assert!(
        kept.starts_with("The command is: ```bash\nls -l -l"),
        "{kept}"
    );
    assert!(kept.ends_with(CUT_MARK), "{kept}");
    assert!(kept.len() < 100, "{kept}");
    assert_eq!(cut.1, None);

    // The session goes on, and the model sees the cut reply, not the run.
    let events = turn(&mut handle, "again").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let sent = messages(&requests[1]);
    let assistant = sent
        .iter()
        .find(|m| m["role"] == "assistant")
        .expect("the cut reply");
    assert_eq!(assistant["content"].as_str(), Some(kept.as_str()));
}

#[tokio::test]
async fn reasoning_that_repeats_itself_is_stopped_too() {
    let dir = tempfile::tempdir().unwrap();
    let mut steps = vec![Step::Data(chunk(
        json!({ "reasoning_content": "Let me think. " }),
        None,
    ))];
    for _ in 0..400 {
        steps.push(Step::Data(chunk(
            json!({ "reasoning_content": "Wait, I should check the file again. " }),
            None,
        )));
    }
    // A day: a reply waited out would never end (the harness's deadline fails it).
    steps.push(Step::Sleep(Duration::from_secs(86_400)));
    steps.push(Step::Done);
    let server = ScriptedServer::start(vec![Reply::sse(steps)])
        .await
        .unwrap();
    let mut handle = agent::spawn(scripted_config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "think").await;
    assert_eq!(outcome(&events), TurnOutcome::Failed);
    let reasoning = events.iter().find_map(|e| match e {
        AgentEvent::ReplyCut { reasoning, .. } => reasoning.clone(),
        _ => None,
    });
    let reasoning = reasoning.expect("the reasoning was cut");
    assert!(
        reasoning.starts_with("Let me think. Wait, I should check"),
        "{reasoning}"
    );
    assert!(reasoning.ends_with(CUT_MARK));
}

#[tokio::test]
async fn a_long_table_that_repeats_its_shape_is_not_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let mut steps = vec![Step::Data(chunk(
        json!({ "content": "| n | n² |\n|---|---|\n" }),
        None,
    ))];
    for i in 0..2_000 {
        steps.push(Step::Data(chunk(
            json!({ "content": format!("| {i} | {} |\n", i * i) }),
            None,
        )));
    }
    for _ in 0..30 {
        steps.push(Step::Data(chunk(json!({ "content": "|   |   |\n" }), None)));
    }
    steps.push(Step::Data(chunk(json!({}), Some("stop"))));
    steps.push(Step::Done);
    let server = ScriptedServer::start(vec![Reply::sse(steps)])
        .await
        .unwrap();
    let mut handle = agent::spawn(scripted_config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "a table").await;
    assert_eq!(
        outcome(&events),
        TurnOutcome::Completed,
        "{:?}",
        errors(&events)
    );
    assert!(!events
        .iter()
        .any(|e| matches!(e, AgentEvent::ReplyCut { .. })));
}

#[tokio::test]
async fn a_subagent_that_repeats_itself_is_stopped_and_the_turn_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut steps = Vec::new();
    for _ in 0..2_000 {
        steps.push(Step::Data(chunk(json!({ "content": "again " }), None)));
    }
    // A day: a reply waited out would never end (the harness's deadline fails it).
    steps.push(Step::Sleep(Duration::from_secs(86_400)));
    steps.push(Step::Done);
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("task", r#"{"description":"look around"}"#)]),
        Reply::sse(steps),
        Reply::text("the subagent got stuck"),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(scripted_config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "explore").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let results = support::agent::tool_results(&events);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0].1.contains("kept repeating itself"),
        "{results:?}"
    );
    assert!(results[0].2);
}

fn same_call(n: usize) -> Vec<Reply> {
    (0..n)
        .map(|_| Reply::tool_calls(&[("bash", r#"{"command": "cat a.txt"}"#)]))
        .collect()
}

fn asks(events: &[AgentEvent]) -> Vec<(u32, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ApprovalNeeded {
                repeated, reason, ..
            } => Some((*repeated, reason.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_same_call_a_fourth_time_is_put_to_the_user_and_a_refusal_ends_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    // Five times `cat a.txt`; the sixth reply would be text.
    let mut replies = same_call(5);
    replies.push(Reply::text("never asked for"));
    let server = ScriptedServer::start(replies).await.unwrap();
    let mut handle = agent::spawn(scripted_config(&server, dir.path())).unwrap();
    // Auto mode approves everything it can; the guard asks all the same.
    assert!(handle.send(rein_core::agent::AgentCommand::SetMode(
        rein_core::permissions::ApprovalMode::Auto
    )));
    let mut answers = 0;
    let events = support::agent::turn_with(&mut handle, "read a.txt", |_| {
        answers += 1;
        if answers == 1 {
            rein_core::agent::ApprovalDecision::Approve
        } else {
            rein_core::agent::ApprovalDecision::Deny { feedback: None }
        }
    })
    .await;
    // The first three ran unasked; the fourth was asked about (approved), the fifth too
    // (refused), which ended the turn.
    let asked = asks(&events);
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(asked[0].0, 3);
    assert_eq!(asked[1].0, 4);
    assert!(
        asked[0].1.contains("same call 3 times in a row"),
        "{asked:?}"
    );
    assert_eq!(outcome(&events), TurnOutcome::Failed);
    let notice = events.iter().any(|e| {
        matches!(e, AgentEvent::Notice { message }
        if message.contains("made the same call 5 times in a row"))
    });
    assert!(notice, "{events:?}");
    assert_eq!(server.requests().len(), 5);
    let results = support::agent::tool_results(&events);
    assert_eq!(results.len(), 5);
    assert!(
        results[..4].iter().all(|r| r.1.contains("hello")),
        "{results:?}"
    );
    assert!(results[4].2, "{results:?}");
}

#[tokio::test]
async fn a_different_call_in_between_or_a_new_turn_starts_the_count_again() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    let mut replies = same_call(3);
    replies.push(Reply::tool_calls(&[("bash", r#"{"command": "ls"}"#)]));
    // The same arguments written differently are the same call.
    replies.push(Reply::tool_calls(&[(
        "bash",
        r#"{ "command":"cat a.txt" }"#,
    )]));
    replies.extend(same_call(2));
    replies.push(Reply::text("done"));
    replies.extend(same_call(3));
    replies.push(Reply::text("done again"));
    let server = ScriptedServer::start(replies).await.unwrap();
    let mut handle = agent::spawn(scripted_config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "read a.txt").await;
    assert_eq!(asks(&events), vec![]);
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let events = turn(&mut handle, "and again").await;
    assert_eq!(asks(&events), vec![]);
    assert_eq!(outcome(&events), TurnOutcome::Completed);
}

#[tokio::test]
async fn the_same_call_whose_result_changes_is_watching_not_looping() {
    let dir = tempfile::tempdir().unwrap();
    // Each run appends a line, so each result differs.
    let mut replies: Vec<Reply> = (0..6)
        .map(|_| Reply::tool_calls(&[("bash", r#"{"command": "echo x >> log; wc -l < log"}"#)]))
        .collect();
    replies.push(Reply::text("done"));
    let server = ScriptedServer::start(replies).await.unwrap();
    let mut handle = agent::spawn(scripted_config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "poll").await;
    assert_eq!(asks(&events), vec![]);
    assert_eq!(outcome(&events), TurnOutcome::Completed);
}
