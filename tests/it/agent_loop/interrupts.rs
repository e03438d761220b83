//! Interrupts: a long command killed with its process group, a streaming request dropped,
//! the handle dropped mid-command, stale interrupts.

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use rein_core::agent::{self, AgentCommand, AgentEvent, AgentHandle, TurnOutcome};
use serde_json::json;
use support::agent::{outcome, tool_results, turn};
use support::{chunk, Reply, ScriptedServer, Step};

use super::{args, assert_history_valid, config, next_event, text_of};

fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        // A zombie has already died; only its parent's bookkeeping is left.
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Poll until none of `pids` is alive (giving up after [`support::GIVE_UP`]); the caller
/// asserts.
async fn wait_until_gone(pids: &[u32]) {
    let gone = Instant::now() + support::GIVE_UP;
    while pids.iter().any(|&pid| process_alive(pid)) && Instant::now() < gone {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The pid a command wrote to `path`, if the file holds one yet.
fn read_pid(path: &Path) -> Option<u32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Wait for a command to write its pid to `path`.
async fn wait_for_pid_file(path: &Path) -> u32 {
    let deadline = Instant::now() + support::GIVE_UP;
    loop {
        if let Some(pid) = read_pid(path) {
            return pid;
        }
        assert!(Instant::now() < deadline, "the command never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn interrupt_during_a_long_command_kills_it_and_keeps_history_valid() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            (
                "bash",
                &args(json!({"command": "sleep 86421 & echo $! > child.pid; echo $$ > shell.pid; wait"})),
            ),
            ("read_file", &args(json!({"path": "child.pid"}))),
        ]),
        Reply::text("ok, stopped"),
    ])
    .await.unwrap();
    let mut handle = agent::spawn(config(&server, root)).unwrap();
    handle.send(AgentCommand::UserMessage("sleep a while".into()));
    let mut events = Vec::new();
    // A guard against a hang, not a claim about speed.
    let deadline = Instant::now() + support::GIVE_UP;
    let mut interrupted_at = None;
    loop {
        let next = tokio::time::timeout(Duration::from_millis(50), handle.events.recv()).await;
        if let Ok(Some(event)) = next {
            let done = matches!(event, AgentEvent::TurnFinished { .. });
            events.push(event);
            if done {
                break;
            }
        }
        if interrupted_at.is_none()
            // Both files hold a pid (a file the shell has opened but not
            // yet written would race the interrupt).
            && read_pid(&root.join("child.pid")).is_some()
            && read_pid(&root.join("shell.pid")).is_some()
        {
            interrupted_at = Some(Instant::now());
            handle.send(AgentCommand::Interrupt);
        }
        assert!(Instant::now() < deadline, "no TurnFinished: {events:?}");
    }
    // The command sleeps for a day: the turn ends only because the interrupt ended it.
    assert!(interrupted_at.is_some(), "the command started");
    assert_eq!(outcome(&events), TurnOutcome::Interrupted);
    let results = tool_results(&events);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].1.contains("interrupted by the user"));
    assert!(results[1].1.contains("interrupted"));

    let child = read_pid(&root.join("child.pid")).expect("a pid in child.pid");
    let shell = read_pid(&root.join("shell.pid")).expect("a pid in shell.pid");
    wait_until_gone(&[child, shell]).await;
    assert!(
        !process_alive(child),
        "sleep {child} survived the interrupt"
    );
    assert!(!process_alive(shell), "sh {shell} survived the interrupt");

    // The session goes on, and the next request answers both calls.
    let events = turn(&mut handle, "what happened?").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let req = &server.requests()[1];
    assert_history_valid(req);
    assert!(req.to_string().contains("interrupted by the user"));
}

#[tokio::test]
async fn interrupt_while_streaming_drops_the_request() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::sse(vec![
            Step::Data(chunk(
                json!({"role": "assistant", "content": "Start"}),
                None,
            )),
            // A day (past the 10 s idle timeout, which would end the turn as failed):
            // the turn ends as interrupted only if the interrupt dropped the request.
            Step::Sleep(Duration::from_secs(86_400)),
            Step::Done,
        ]),
        Reply::text("next"),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    handle.send(AgentCommand::UserMessage("go".into()));
    loop {
        let e = next_event(&mut handle).await;
        if matches!(e, AgentEvent::TextDelta { .. }) {
            break;
        }
    }
    handle.send(AgentCommand::Interrupt);
    loop {
        let e = next_event(&mut handle).await;
        if let AgentEvent::TurnFinished { outcome } = e {
            assert_eq!(outcome, TurnOutcome::Interrupted);
            break;
        }
    }
    let events = turn(&mut handle, "and now?").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let req = &server.requests()[1];
    assert_eq!(req["messages"][2]["content"], "Start");
}

#[tokio::test]
async fn dropping_the_handle_mid_command_ends_the_task_and_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let server = ScriptedServer::start(vec![Reply::tool_calls(&[(
        "bash",
        &args(json!({"command": "sleep 86423 & echo $! > child.pid; wait"})),
    )])])
    .await
    .unwrap();
    let handle = agent::spawn(config(&server, root)).unwrap();
    handle.send(AgentCommand::UserMessage("go".into()));
    let child = wait_for_pid_file(&root.join("child.pid")).await;
    let AgentHandle {
        commands,
        events,
        task,
        ..
    } = handle;
    drop(commands);
    drop(events);
    tokio::time::timeout(support::GIVE_UP, task)
        .await
        .expect("the agent task ends when its handle is dropped")
        .unwrap();
    wait_until_gone(&[child]).await;
    assert!(!process_alive(child), "sleep {child} outlived the agent");
}

#[tokio::test]
async fn stale_interrupts_do_not_hit_the_next_turn() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("first"), Reply::text("second")])
        .await
        .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "one").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    // Pressed while nothing runs: there is nothing to interrupt.
    handle.send(AgentCommand::Interrupt);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let events = turn(&mut handle, "two").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    assert_eq!(text_of(&events), "second");
}
