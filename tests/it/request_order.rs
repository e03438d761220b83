//! Order validity as a property: random sessions of turns, tool calls, denials, failed
//! requests, interrupts (while streaming and while a command runs), step limits, queued
//! messages (for the next turn, and taken mid-turn with a tool result), subagent tasks, `/compact`, `/clear` and resumes from the session file never
//! produce a request that breaks the rules of `rein_core::conversation::order` (the system
//! message, then user and assistant alternating, each call's result right after it, in
//! order, and never a user message after a tool result).
//!
//! The sessions are drawn from a seeded generator, so a failure names the seed and the
//! operations that led to it and replays exactly.

use crate::support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rein_core::agent::{AgentCommand, AgentEvent, AgentHandle};
use rein_core::context::ContextConfig;
use rein_core::conversation::order;
use rein_core::permissions::{PermissionPolicy, ToolRequest, Verdict};
use serde_json::{json, Value};
use support::agent::calls;
use support::agent::{events_until, scripted_config, spawn_recorded, spawn_resumed, turn};
use support::rng::Rng;
use support::{Reply, Router, ScriptedServer, Step};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    /// A plain question and answer.
    Text,
    /// One to three commands, then an answer.
    Tools(u8),
    /// A command the rules deny, then an answer.
    Denied,
    /// A command, then the follow-up request fails (HTTP 400).
    FailAfterTools,
    /// The first request fails (HTTP 400).
    FailAtOnce,
    /// Interrupted while the reply streams.
    InterruptStreaming,
    /// Interrupted while a command runs.
    InterruptCommand,
    /// More tool rounds than `max_steps` allows.
    StepLimit,
    /// Two messages sent at once: the second waits for the first turn.
    Queued,
    /// A message sent while a command runs: the next step takes it with the result.
    QueuedMidTurn,
    /// A `task` call: a subagent answers.
    Task,
    /// `/compact`.
    Compact,
    /// `/clear`.
    Clear,
    /// The process goes away and the session is resumed from its file.
    Resume,
}

const OPS: [Op; 14] = [
    Op::Text,
    Op::Tools(1),
    Op::Tools(3),
    Op::Denied,
    Op::FailAfterTools,
    Op::FailAtOnce,
    Op::InterruptStreaming,
    Op::InterruptCommand,
    Op::StepLimit,
    Op::Queued,
    Op::QueuedMidTurn,
    Op::Task,
    Op::Compact,
    Op::Resume,
];

/// Denies any command containing "forbidden"; allows the rest.
struct DenyForbidden;

impl PermissionPolicy for DenyForbidden {
    fn check(&self, request: &ToolRequest<'_>) -> Verdict {
        let command = request.args["command"].as_str().unwrap_or("");
        if command.contains("forbidden") {
            Verdict::Deny {
                reason: "test rule: forbidden".into(),
            }
        } else {
            Verdict::Allow
        }
    }
}

fn bash(command: &str) -> (String, String) {
    (
        "bash".to_string(),
        json!({ "command": command }).to_string(),
    )
}

/// Compaction requests (no tools) get a handoff note; a subagent's requests (tools, but
/// no `task`) an answer. Everything else follows the script.
fn router() -> Router {
    Arc::new(|body: &Value| {
        let tools: Vec<&str> = body["tools"]
            .as_array()
            .map(|t| {
                t.iter()
                    .filter_map(|t| t["function"]["name"].as_str())
                    .collect()
            })
            .unwrap_or_default();
        if tools.is_empty() {
            Some(Reply::text("## Goal\nkeep going\n## Next\nanswer"))
        } else if !tools.contains(&"task") {
            Some(Reply::text("the subagent's answer"))
        } else {
            None
        }
    })
}

async fn finish(handle: &mut AgentHandle) -> Vec<AgentEvent> {
    events_until(handle, |e| matches!(e, AgentEvent::TurnFinished { .. })).await
}

/// Run one random session of `steps` operations; returns what it did.
async fn session(seed: u64, steps: usize, project: &Path, data: &Path) -> (Vec<Op>, Vec<Value>) {
    let mut rng = Rng(seed);
    let server = ScriptedServer::start_routed(Vec::new(), router())
        .await
        .expect("server");
    let config = {
        let mut c = scripted_config(&server, project);
        c.policy = Arc::new(DenyForbidden);
        c.max_steps = 3;
        c.context = ContextConfig::default();
        c
    };
    let (mut handle, path) = spawn_recorded(config.clone(), data);
    let mut done = Vec::new();
    for _ in 0..steps {
        let op = if rng.below(10) == 0 {
            Op::Clear
        } else {
            OPS[rng.below(OPS.len() as u64) as usize]
        };
        done.push(op);
        match op {
            Op::Text => {
                server.push(Reply::text("an answer"));
                turn(&mut handle, "a question").await;
            }
            Op::Tools(n) => {
                let list: Vec<_> = (0..n).map(|i| bash(&format!("echo {i}"))).collect();
                server.push(calls(&list));
                server.push(Reply::text("done"));
                turn(&mut handle, "run some").await;
            }
            Op::Denied => {
                server.push(calls(&[bash("echo forbidden"), bash("echo fine")]));
                server.push(Reply::text("it was denied"));
                turn(&mut handle, "try the forbidden one").await;
            }
            Op::FailAfterTools => {
                server.push(calls(&[bash("echo one")]));
                server.push(Reply::error(400, "bad request"));
                turn(&mut handle, "this will fail later").await;
            }
            Op::FailAtOnce => {
                server.push(Reply::error(400, "bad request"));
                turn(&mut handle, "this will fail").await;
            }
            Op::InterruptStreaming => {
                server.push(Reply::sse(vec![
                    Step::Data(support::chunk(
                        json!({"role":"assistant","content":"partial "}),
                        None,
                    )),
                    Step::Sleep(Duration::from_secs(5)),
                    Step::Done,
                ]));
                handle.send(AgentCommand::UserMessage("stream then stop".into()));
                events_until(&mut handle, |e| matches!(e, AgentEvent::TextDelta { .. })).await;
                handle.send(AgentCommand::Interrupt);
                finish(&mut handle).await;
            }
            Op::InterruptCommand => {
                server.push(calls(&[bash("sleep 5"), bash("echo after")]));
                handle.send(AgentCommand::UserMessage("run the slow one".into()));
                events_until(&mut handle, |e| {
                    matches!(e, AgentEvent::ToolCallStarted { .. })
                })
                .await;
                handle.send(AgentCommand::Interrupt);
                finish(&mut handle).await;
            }
            Op::StepLimit => {
                for i in 0..3 {
                    server.push(calls(&[bash(&format!("echo round {i}"))]));
                }
                turn(&mut handle, "keep going forever").await;
            }
            Op::Queued => {
                server.push(Reply::text("first"));
                server.push(Reply::text("second"));
                handle.send(AgentCommand::UserMessage("one".into()));
                handle.send(AgentCommand::UserMessage("two".into()));
                finish(&mut handle).await;
                finish(&mut handle).await;
            }
            Op::QueuedMidTurn => {
                server.push(calls(&[bash("sleep 0.3; echo waited")]));
                server.push(Reply::text("noted, and done"));
                handle.send(AgentCommand::UserMessage("run the slow one".into()));
                events_until(&mut handle, |e| {
                    matches!(e, AgentEvent::ToolCallStarted { .. })
                })
                .await;
                handle.send(AgentCommand::UserMessage("mind the note".into()));
                finish(&mut handle).await;
            }
            Op::Task => {
                server.push(calls(&[(
                    "task".to_string(),
                    json!({"description": "find the parser"}).to_string(),
                )]));
                server.push(Reply::text("the parser is found"));
                turn(&mut handle, "delegate it").await;
            }
            Op::Compact => {
                handle.send(AgentCommand::Compact { focus: None });
                // Nothing to wait for but the compaction's own events; a turn after it
                // shows the next request.
                server.push(Reply::text("after the compaction"));
                turn(&mut handle, "and now?").await;
            }
            Op::Clear => {
                handle.send(AgentCommand::NewConversation);
            }
            Op::Resume => {
                handle.shut_down().await;
                // The newest session file of this run (a /clear starts another).
                let newest = std::fs::read_dir(data)
                    .expect("data dir")
                    .filter_map(|e| e.ok())
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                    .max_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
                    .unwrap_or_else(|| path.clone());
                let loaded = rein_core::session::load(&newest).expect("the session loads");
                handle = spawn_resumed(config.clone(), loaded, data);
            }
        }
    }
    handle.send(AgentCommand::Shutdown);
    (done, server.requests())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_sessions_never_send_a_request_out_of_order() {
    let mut checked = 0;
    for seed in 1..=12u64 {
        let project = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let (ops, requests) = session(seed, 10, project.path(), data.path()).await;
        for (i, request) in requests.iter().enumerate() {
            let messages = request["messages"].as_array().expect("messages");
            if let Err(e) = order::check(messages) {
                panic!(
                    "seed {seed}, operations {ops:?}: request {i} breaks the order: {e}\n{:#}",
                    request["messages"]
                );
            }
            // The request ends with what the model should answer: a user message or a
            // tool result, never the model's own reply.
            let last = messages.last().expect("a message");
            assert_ne!(
                last["role"], "assistant",
                "seed {seed}, operations {ops:?}: request {i} ends with an assistant message"
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} requests were checked");
}
