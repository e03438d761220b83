//! Background commands (issue 25 §1): `bash` with `run_in_background`, `bash_output`,
//! `bash_kill`, through the real agent against the scripted server, with real processes.

use crate::support;

use std::path::Path;
use std::time::Duration;

use rein_core::agent::{self, AgentCommand, AgentEvent, TurnOutcome};
use rein_core::tools::background::TaskState;
use serde_json::{json, Value};
use support::agent::{events_until, outcome, scripted_config, tool_results, turn};
use support::{Reply, ScriptedServer};

fn call(tool: &str, args: Value) -> Reply {
    Reply::tool_calls(&[(tool, &args.to_string())])
}

/// The pid a command wrote to `file`, once it is there.
async fn pid_in(file: &Path) -> libc::pid_t {
    for _ in 0..500 {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .filter(|s| s.ends_with('\n'))
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no pid in {}", file.display());
}

fn alive(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

async fn gone(pid: libc::pid_t) -> bool {
    for _ in 0..300 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

fn notices(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Notice { message } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

/// The user message of `request` (the last one), reminder included.
fn last_user(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_server_runs_in_the_background_across_turns_and_interrupts_until_killed() {
    let dir = tempfile::tempdir().unwrap();
    let server_cmd = "echo $$ > server.pid; echo listening; exec sleep 300";
    let server = ScriptedServer::start(vec![
        // Turn 1: start it, read it, end with it running.
        call(
            "bash",
            json!({ "command": server_cmd, "run_in_background": true }),
        ),
        call("bash_output", json!({ "id": "bash-1" })),
        Reply::text("the server runs"),
        // Turn 2: a slow foreground command, interrupted.
        call("bash", json!({ "command": "sleep 30" })),
        // Turn 3: it is still there; stop it.
        call("bash_output", json!({ "id": "bash-1" })),
        call("bash_kill", json!({ "id": "bash-1" })),
        call("bash_output", json!({ "id": "bash-9" })),
        Reply::text("stopped"),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(scripted_config(&server, dir.path())).unwrap();
    // Not five minutes: the turn ends with the server started and still running.
    let events = turn(&mut handle, "start the server").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let results = tool_results(&events);
    assert!(
        results[0].1.starts_with("Started bash-1 (pid "),
        "{results:?}"
    );
    assert!(
        results[1].1.contains("[bash-1 is still running"),
        "{results:?}"
    );
    let first_read = format!("{}{}", results[0].1, results[1].1);
    let pid = pid_in(&dir.path().join("server.pid")).await;
    assert!(alive(pid));
    // The turn says it ended with the task running.
    let said = notices(&events);
    assert!(
        said.iter()
            .any(|n| n.starts_with("1 background command still running: bash-1")),
        "{said:?}"
    );
    // The front end had snapshots: running, with its last line.
    let last = events.iter().rev().find_map(|e| match e {
        AgentEvent::Background { tasks } => Some(tasks.clone()),
        _ => None,
    });
    let last = last.expect("a Background snapshot");
    assert_eq!(last[0].state, TaskState::Running);

    // Turn 2: Esc/Ctrl-C stop the turn, not the task.
    assert!(handle.send(AgentCommand::UserMessage("wait a bit".into())));
    let commands = handle.commands.clone();
    let events = events_until(&mut handle, |e| {
        if let AgentEvent::ToolCallStarted { name, .. } = e {
            if name == "bash" {
                let _ = commands.send(AgentCommand::Interrupt);
            }
        }
        matches!(e, AgentEvent::TurnFinished { .. })
    })
    .await;
    assert_eq!(outcome(&events), TurnOutcome::Interrupted);
    assert!(alive(pid), "the interrupt killed the background task");

    // Turn 3: the model is reminded of it, reads it, stops it; an unknown id is an error.
    let events = turn(&mut handle, "stop it").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let requests = server.requests();
    let reminder = last_user(&requests[4]);
    assert!(
        reminder.contains("background commands")
            && reminder.contains("bash-1 `echo $$ > server.pid"),
        "{reminder}"
    );
    let results = tool_results(&events);
    assert!(
        results[0].1.contains("[bash-1 is still running"),
        "{results:?}"
    );
    // What it printed came once, in whichever read followed it.
    let both = format!("{first_read}{}", results[0].1);
    assert_eq!(both.matches("\nlistening\n").count(), 1, "{both}");
    assert!(results[1].1.contains("bash-1 was stopped"), "{results:?}");
    assert!(gone(pid).await, "the server survived bash_kill");
    assert!(
        results[2].2 && results[2].1.contains("no background task bash-9"),
        "{results:?}"
    );
    assert!(notices(&events)
        .iter()
        .all(|n| !n.contains("still running")));
    handle.shut_down().await;
}

#[tokio::test]
async fn the_session_end_stops_what_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        call(
            "bash",
            json!({ "command": "sleep 300 & echo $! > child.pid; wait", "run_in_background": true }),
        ),
        Reply::text("started"),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(scripted_config(&server, dir.path())).unwrap();
    turn(&mut handle, "go").await;
    let child = pid_in(&dir.path().join("child.pid")).await;
    assert!(alive(child));
    handle.shut_down().await;
    assert!(
        gone(child).await,
        "a background command outlived the session"
    );
}

#[tokio::test]
async fn a_subagent_cannot_start_one() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        call("task", json!({ "description": "start a server" })),
        call(
            "bash",
            json!({ "command": "sleep 300", "run_in_background": true }),
        ),
        Reply::text("could not"),
        Reply::text("the subagent could not"),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(scripted_config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "go").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let requests = server.requests();
    let sub_result = requests[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    assert!(
        sub_result.contains("run_in_background is not available to a subagent"),
        "{sub_result}"
    );
    assert!(handle.background.snapshot().is_empty());
}

#[tokio::test]
async fn a_compaction_leaves_them_running_and_the_model_is_told() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        call(
            "bash",
            json!({ "command": "echo watching; exec sleep 3003", "run_in_background": true }),
        ),
        Reply::text("the watcher runs"),
        // The handoff note of /compact.
        Reply::text("## Goal\nWatch.\n## State\nA watcher was started."),
        Reply::text("still watching"),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(scripted_config(&server, dir.path())).unwrap();
    turn(&mut handle, "start the watcher").await;
    assert!(handle.send(AgentCommand::Compact { focus: None }));
    let events = events_until(&mut handle, |e| {
        matches!(
            e,
            AgentEvent::Compacted { .. } | AgentEvent::CompactionFailed { .. }
        )
    })
    .await;
    assert!(
        matches!(events.last(), Some(AgentEvent::Compacted { .. })),
        "{events:?}"
    );
    assert_eq!(handle.background.running().len(), 1);
    turn(&mut handle, "how is it going?").await;
    let requests = server.requests();
    let after = requests.last().unwrap();
    let text = after.to_string();
    // The history is the note now; the reminder still names the running watcher.
    assert!(text.contains("A watcher was started"), "{text}");
    assert!(!text.contains("the watcher runs"), "{text}");
    assert!(
        last_user(after).contains("bash-1 `echo watching; exec sleep 3003`: running"),
        "{}",
        last_user(after)
    );
    handle.shut_down().await;
}
