//! Approval modes and the user's own commands, end to end: the real agent against the
//! scripted server, real tools in a temporary project, a stand-in for the rules, the real
//! sandbox where a test needs one.

use crate::support;

use std::path::Path;
use std::sync::Arc;

use rein_core::agent::{self, AgentCommand, AgentConfig, AgentEvent, ToolOutcome, TurnOutcome};
use rein_core::permissions::{ApprovalMode, Grant, PermissionPolicy, ToolRequest, Verdict};
use rein_core::sandbox::{Sandbox, SandboxMode, SandboxSettings};
use serde_json::{json, Value};
use support::agent::{call, calls};
use support::agent::{
    content, events_until, outcome, reminder, scripted_config, spawn_recorded, spawn_resumed,
    tool_results, turn,
};
use support::{Reply, ScriptedServer};

/// `echo *` is allowed, `rm *` denied, every other command asks; file tools are allowed.
struct Rules;

impl PermissionPolicy for Rules {
    fn check(&self, request: &ToolRequest<'_>) -> Verdict {
        if request.tool != "bash" {
            return Verdict::Allow;
        }
        let command = request.args["command"].as_str().unwrap_or("");
        if command.starts_with("echo ") {
            Verdict::Allow
        } else if command.starts_with("rm ") {
            Verdict::Deny {
                reason: "test rule: no rm".into(),
            }
        } else {
            Verdict::Ask {
                reason: "test rule: asks".into(),
                grants: vec![Grant::Bash(command.to_string())],
            }
        }
    }
}

fn config(server: &ScriptedServer, root: &Path) -> AgentConfig {
    let mut config = scripted_config(server, root);
    config.policy = Arc::new(Rules);
    config
}

fn outcomes(events: &[AgentEvent]) -> Vec<ToolOutcome> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolFinished { outcome, .. } => Some(*outcome),
            _ => None,
        })
        .collect()
}

fn asked(events: &[AgentEvent]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, AgentEvent::ApprovalNeeded { .. }))
        .count()
}

#[tokio::test]
async fn plan_mode_refuses_writes_and_asks_runs_what_is_allowed_and_denies_stay() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        calls(&[
            call("write_file", json!({"path": "x.txt", "content": "y"})),
            call("bash", json!({"command": "touch made"})),
            call("bash", json!({"command": "rm -f keep"})),
            call("bash", json!({"command": "echo looked"})),
            call("read_file", json!({"path": "keep"})),
        ]),
        Reply::text("here is the plan"),
    ])
    .await
    .unwrap();
    std::fs::write(dir.path().join("keep"), "kept\n").unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    handle.send(AgentCommand::SetMode(ApprovalMode::Plan));
    let events = turn(&mut handle, "make it").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    assert!(events.contains(&AgentEvent::ModeChanged {
        mode: ApprovalMode::Plan
    }));
    assert_eq!(asked(&events), 0, "plan mode asks nothing");
    assert_eq!(
        outcomes(&events),
        [
            ToolOutcome::PlanMode,
            ToolOutcome::PlanMode,
            ToolOutcome::Denied,
            ToolOutcome::Ok,
            ToolOutcome::Ok
        ]
    );
    let results = tool_results(&events);
    assert!(
        results[0].1.contains("rein is in plan mode")
            && results[0].1.contains("answer with a plan")
            && results[0].1.contains("Shift+Tab"),
        "{}",
        results[0].1
    );
    assert_eq!(results[3].1, "looked");
    assert!(!dir.path().join("x.txt").exists());
    assert!(!dir.path().join("made").exists());
    assert!(dir.path().join("keep").exists());
    // The model is told the mode in the reminder, not in the system prompt.
    let requests = server.requests();
    assert!(
        reminder(&requests[0]).contains("approval mode: plan"),
        "{}",
        reminder(&requests[0])
    );
    assert!(!content(&requests[0]["messages"][0]).contains("plan"));
}

#[tokio::test]
async fn a_switch_back_to_default_is_told_once_and_asks_again() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("planned"),
        calls(&[call("bash", json!({"command": "touch made"}))]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    handle.send(AgentCommand::SetMode(ApprovalMode::Plan));
    turn(&mut handle, "plan it").await;
    handle.send(AgentCommand::SetMode(ApprovalMode::Default));
    let events = turn(&mut handle, "do it").await;
    assert_eq!(asked(&events), 1, "default mode asks again");
    assert!(dir.path().join("made").exists());
    let requests = server.requests();
    assert!(reminder(&requests[1]).contains("approval mode: default again (was plan)"));
    // Said once: the tool result of that turn carries no fresh note about it.
    let last = requests[2]["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "tool");
    assert!(!content(last).contains("approval mode"), "{last}");
}

/// The real sandbox for `root`, or `None` (with a note) where bubblewrap cannot run.
fn working_sandbox(root: &Path) -> Option<Sandbox> {
    let settings = SandboxSettings {
        mode: SandboxMode::Auto,
        ..SandboxSettings::default()
    };
    let sandbox = Sandbox::detect(settings, root, vec![]);
    if sandbox.works() {
        Some(sandbox)
    } else {
        eprintln!("skipped: the sandbox is {}", sandbox.describe());
        None
    }
}

#[tokio::test]
async fn auto_mode_runs_asked_commands_without_asking_inside_the_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    let Some(sandbox) = working_sandbox(dir.path()) else {
        return;
    };
    let server = ScriptedServer::start(vec![
        calls(&[
            call("bash", json!({"command": "touch made"})),
            call("bash", json!({"command": "rm -f keep"})),
        ]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    std::fs::write(dir.path().join("keep"), "kept\n").unwrap();
    let mut cfg = config(&server, dir.path());
    cfg.sandbox = Arc::new(sandbox);
    let mut handle = agent::spawn(cfg).unwrap();
    handle.send(AgentCommand::SetMode(ApprovalMode::Auto));
    let events = turn(&mut handle, "make it").await;
    assert_eq!(asked(&events), 0, "no approval modal in auto mode");
    let auto: Vec<&AgentEvent> = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::AutoApproved { .. }))
        .collect();
    assert_eq!(auto.len(), 1, "{events:?}");
    match auto[0] {
        AgentEvent::AutoApproved {
            summary, reason, ..
        } => {
            assert_eq!(summary, "bash: touch made");
            assert_eq!(reason, "test rule: asks");
        }
        _ => unreachable!(),
    }
    assert_eq!(outcomes(&events), [ToolOutcome::Ok, ToolOutcome::Denied]);
    assert!(dir.path().join("made").exists());
    assert!(dir.path().join("keep").exists(), "deny still denies");
}

#[tokio::test]
async fn auto_mode_is_refused_without_a_sandbox_and_ask_still_asks() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        calls(&[call("bash", json!({"command": "touch made"}))]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    handle.send(AgentCommand::SetMode(ApprovalMode::Auto));
    let events = turn(&mut handle, "make it").await;
    let error = events.iter().find_map(|e| match e {
        AgentEvent::Error { message } => Some(message.clone()),
        _ => None,
    });
    assert_eq!(
        error.as_deref(),
        Some("auto mode needs the sandbox: sandbox.mode = \"off\"; still in default mode")
    );
    assert!(!events
        .iter()
        .any(|e| matches!(e, AgentEvent::ModeChanged { .. })));
    assert_eq!(asked(&events), 1);
}

#[tokio::test]
async fn the_mode_is_recorded_and_a_resumed_session_goes_on_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("ok"),
        calls(&[call("write_file", json!({"path": "x.txt", "content": "y"}))]),
        Reply::text("planned"),
    ])
    .await
    .unwrap();
    let (mut handle, path) = spawn_recorded(config(&server, dir.path()), data.path());
    handle.send(AgentCommand::SetMode(ApprovalMode::Plan));
    turn(&mut handle, "hi").await;
    handle.shut_down().await;
    let loaded = rein_core::session::load(&path).unwrap();
    assert_eq!(loaded.mode, Some(ApprovalMode::Plan));

    let mut resumed = spawn_resumed(config(&server, dir.path()), loaded, data.path());
    let start = events_until(&mut resumed, |e| matches!(e, AgentEvent::Context(_))).await;
    assert!(
        start.contains(&AgentEvent::ModeChanged {
            mode: ApprovalMode::Plan
        }),
        "{start:?}"
    );
    let events = turn(&mut resumed, "write it").await;
    assert_eq!(outcomes(&events), [ToolOutcome::PlanMode]);
    assert!(!dir.path().join("x.txt").exists());
    resumed.shut_down().await;
    // Old files (no mode entry) load in default mode.
    let text = std::fs::read_to_string(&path).unwrap();
    let old: String = text
        .lines()
        .filter(|l| !l.contains("\"type\":\"mode\""))
        .map(|l| format!("{l}\n"))
        .collect();
    let old_path = data.path().join("old.jsonl");
    std::fs::write(&old_path, old).unwrap();
    assert_eq!(rein_core::session::load(&old_path).unwrap().mode, None);
}

#[tokio::test]
async fn a_users_command_goes_to_the_model_with_the_next_message_and_a_denied_one_does_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("I see")])
        .await
        .unwrap();
    std::fs::write(dir.path().join("keep"), "kept\n").unwrap();
    let (mut handle, path) = spawn_recorded(config(&server, dir.path()), data.path());
    let finished = |e: &AgentEvent| matches!(e, AgentEvent::UserCommandFinished { .. });
    // `touch` asks the rules: the user typed it, so it runs without asking.
    handle.send(AgentCommand::RunCommand(
        "touch made && echo hello-from-user".into(),
    ));
    let events = events_until(&mut handle, finished).await;
    assert_eq!(asked(&events), 0);
    assert!(events.contains(&AgentEvent::UserCommandStarted {
        id: "user-1".into(),
        command: "touch made && echo hello-from-user".into()
    }));
    assert!(dir.path().join("made").exists());
    handle.send(AgentCommand::RunCommand("rm -f keep".into()));
    let events = events_until(&mut handle, finished).await;
    match events.last() {
        Some(AgentEvent::UserCommandFinished {
            outcome, output, ..
        }) => {
            assert_eq!(*outcome, ToolOutcome::Denied);
            assert!(output.contains("test rule: no rm"), "{output}");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        dir.path().join("keep").exists(),
        "a denied command does not run"
    );
    // Recorded, waiting for the next message.
    let loaded = rein_core::session::load(&path).unwrap();
    assert_eq!(loaded.user_runs.len(), 1);

    let events = turn(&mut handle, "what did it say?").await;
    assert!(events.contains(&AgentEvent::TurnStarted {
        text: "what did it say?".into()
    }));
    let requests = server.requests();
    let messages = requests[0]["messages"].as_array().unwrap();
    rein_core::conversation::order::check(messages).unwrap();
    assert_eq!(messages.len(), 2, "no message of its own");
    let user = support::agent::without_reminder(content(&messages[1]));
    assert_eq!(
        user,
        "I ran this command myself:\n```\n$ touch made && echo hello-from-user\nhello-from-user\n```\n\nwhat did it say?"
    );
    assert!(!user.contains("rm -f"));
    handle.shut_down().await;
    // Resumed, the request is the same bytes, and nothing waits any more.
    let loaded = rein_core::session::load(&path).unwrap();
    assert!(loaded.user_runs.is_empty());
    let sent: Vec<Value> = support::agent::as_sent(&loaded.history);
    assert_eq!(content(&sent[0]), user);
}
