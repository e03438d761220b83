//! Approvals by command: run, refuse, remember for the session; answered a while later, by
//! id, settled by an interrupt or by a front end that goes away.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use rein_core::agent::{self, AgentCommand, AgentEvent, ApprovalDecision, TurnOutcome};
use rein_core::permissions::{Grant, PermissionPolicy, ToolRequest, Verdict};
use serde_json::json;
use support::agent::{outcome, tool_results, turn_with};
use support::{Reply, ScriptedServer};

use super::{args, config, next_event};

/// Asks for every bash command not granted yet, denies writes: a stand-in for the rules.
#[derive(Default)]
struct AskForBash {
    granted: std::sync::Mutex<Vec<Grant>>,
}

impl PermissionPolicy for AskForBash {
    fn check(&self, request: &ToolRequest<'_>) -> Verdict {
        match request.tool {
            "bash" => {
                let grant = Grant::Bash(request.args["command"].as_str().unwrap().to_string());
                if self.granted.lock().unwrap().contains(&grant) {
                    return Verdict::Allow;
                }
                Verdict::Ask {
                    reason: "test rule: bash asks".into(),
                    grants: vec![grant],
                }
            }
            "write_file" => Verdict::Deny {
                reason: "test rule: no writes".into(),
            },
            _ => Verdict::Allow,
        }
    }

    fn grant(&self, grants: &[Grant]) {
        self.granted.lock().unwrap().extend_from_slice(grants);
    }
}

#[tokio::test]
async fn approvals_run_refuse_and_remember_for_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            ("bash", &args(json!({"command": "echo approved-once"}))),
            ("bash", &args(json!({"command": "echo refused"}))),
            ("write_file", &args(json!({"path": "x", "content": "y"}))),
            ("bash", &args(json!({"command": "echo always"}))),
            ("bash", &args(json!({"command": "echo always"}))),
        ]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let mut cfg = config(&server, dir.path());
    cfg.policy = Arc::new(AskForBash::default());
    let mut handle = agent::spawn(cfg).unwrap();
    let mut asked = Vec::new();
    let events = turn_with(&mut handle, "go", |summary| {
        asked.push(summary.to_string());
        match summary {
            "bash: echo approved-once" => ApprovalDecision::Approve,
            "bash: echo refused" => ApprovalDecision::Deny {
                feedback: Some("use printf".into()),
            },
            _ => ApprovalDecision::ApproveForSession,
        }
    })
    .await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    assert_eq!(
        asked,
        [
            "bash: echo approved-once",
            "bash: echo refused",
            "bash: echo always"
        ],
        "the second `echo always` is remembered"
    );
    let results = tool_results(&events);
    assert_eq!(results[0].1, "approved-once");
    assert!(results[1]
        .1
        .starts_with("Error: bash was not run: approval was refused (use printf)"));
    assert!(results[2]
        .1
        .contains("denied by the permission rules (test rule: no writes)"));
    assert!(!dir.path().join("x").exists());
    assert_eq!(results[3].1, "always");
    assert_eq!(results[4].1, "always");
}

#[tokio::test]
async fn approval_can_be_answered_by_command_a_while_later() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &args(json!({"command": "echo by-command"})))]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let mut cfg = config(&server, dir.path());
    cfg.policy = Arc::new(AskForBash::default());
    let mut handle = agent::spawn(cfg).unwrap();
    handle.send(AgentCommand::UserMessage("go".into()));
    let mut results = Vec::new();
    loop {
        let event = next_event(&mut handle).await;
        match event {
            AgentEvent::ApprovalNeeded { id, .. } => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                handle.send(AgentCommand::Approval {
                    id,
                    decision: ApprovalDecision::Approve,
                });
            }
            AgentEvent::ToolFinished { result, .. } => results.push(result),
            AgentEvent::TurnFinished { outcome } => {
                assert_eq!(outcome, TurnOutcome::Completed);
                break;
            }
            _ => {}
        }
    }
    assert_eq!(results, ["by-command"]);
}

/// A turn whose one bash call asks, and what the test does when it does; the turn's events.
async fn ask_then(
    on_ask: impl FnOnce(&mut agent::AgentHandle, String),
) -> (Vec<AgentEvent>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &args(json!({"command": "touch asked.txt"})))]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let mut cfg = config(&server, dir.path());
    cfg.policy = Arc::new(AskForBash::default());
    let mut handle = agent::spawn(cfg).unwrap();
    handle.send(AgentCommand::UserMessage("go".into()));
    let mut on_ask = Some(on_ask);
    let mut events = Vec::new();
    loop {
        let event = next_event(&mut handle).await;
        if let AgentEvent::ApprovalNeeded { id, .. } = &event {
            if let Some(f) = on_ask.take() {
                f(&mut handle, id.clone());
            }
        }
        let done = matches!(event, AgentEvent::TurnFinished { .. });
        events.push(event);
        if done {
            return (events, dir);
        }
    }
}

fn finished_outcomes(events: &[AgentEvent]) -> Vec<rein_core::agent::ToolOutcome> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolFinished { outcome, .. } => Some(*outcome),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_interrupt_settles_an_open_approval_and_a_stray_answer_does_not() {
    let (events, dir) = ask_then(|handle, id| {
        // An answer naming another request is not this one's.
        handle.send(AgentCommand::Approval {
            id: format!("{id}-other"),
            decision: ApprovalDecision::Approve,
        });
        handle.send(AgentCommand::Interrupt);
    })
    .await;
    assert_eq!(outcome(&events), TurnOutcome::Interrupted);
    assert_eq!(
        finished_outcomes(&events),
        [rein_core::agent::ToolOutcome::Interrupted]
    );
    assert!(!dir.path().join("asked.txt").exists());
}

#[tokio::test]
async fn a_refusal_by_id_is_a_refused_outcome_with_the_users_words() {
    let (events, dir) = ask_then(|handle, id| {
        handle.send(AgentCommand::Approval {
            id,
            decision: ApprovalDecision::Deny {
                feedback: Some("not today".into()),
            },
        });
    })
    .await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    assert_eq!(
        finished_outcomes(&events),
        [rein_core::agent::ToolOutcome::Refused]
    );
    let results = tool_results(&events);
    assert!(results[0].1.contains("(not today)"), "{results:?}");
    assert!(!dir.path().join("asked.txt").exists());
}

#[tokio::test]
async fn a_front_end_that_goes_away_settles_an_open_approval() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::tool_calls(&[(
        "bash",
        &args(json!({"command": "touch asked.txt"})),
    )])])
    .await
    .unwrap();
    let mut cfg = config(&server, dir.path());
    cfg.policy = Arc::new(AskForBash::default());
    let agent::AgentHandle {
        commands,
        mut events,
        task,
        ..
    } = agent::spawn(cfg).unwrap();
    commands
        .send(AgentCommand::UserMessage("go".into()))
        .unwrap();
    let mut commands = Some(commands);
    let mut seen = Vec::new();
    while let Ok(Some(event)) = tokio::time::timeout(support::GIVE_UP, events.recv()).await {
        if matches!(event, AgentEvent::ApprovalNeeded { .. }) {
            // Every command sender gone: nobody can answer any more.
            drop(commands.take());
        }
        seen.push(event);
    }
    tokio::time::timeout(support::GIVE_UP, task)
        .await
        .expect("the agent ended")
        .unwrap();
    assert_eq!(
        finished_outcomes(&seen),
        [rein_core::agent::ToolOutcome::Interrupted]
    );
    assert_eq!(outcome(&seen), TurnOutcome::Interrupted);
    assert!(!dir.path().join("asked.txt").exists());
}
