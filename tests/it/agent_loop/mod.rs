//! The agent loop end to end: the real client against the scripted server, real tools in a
//! temporary project, events observed as a front end sees them.

use crate::support;

use std::path::Path;
use std::time::Duration;

use rein_core::agent::{AgentConfig, AgentEvent, AgentHandle};
use serde_json::Value;
use support::agent::{agent_config, stored_messages, test_client, MODEL};
use support::ScriptedServer;

mod approvals;
mod interrupts;
mod queue;
mod server;
mod tools;
mod window;

fn config(server: &ScriptedServer, root: &Path) -> AgentConfig {
    let mut config = agent_config(
        test_client(server.base_url(), "sk-test-secret-123", MODEL),
        root,
    );
    config.client.idle_timeout = Duration::from_secs(10);
    config
}

fn text_of(events: &[AgentEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The next event from the agent.
async fn next_event(handle: &mut AgentHandle) -> AgentEvent {
    tokio::time::timeout(support::GIVE_UP, handle.events.recv())
        .await
        .expect("an event in time")
        .expect("agent task ended")
}

/// A request's stored history: its messages with the reminders taken out of the
/// contents they ride in.
fn history(request: &Value) -> Vec<Value> {
    stored_messages(request)
}

/// Every assistant tool call in a request is answered by exactly one tool message, right
/// after it, and no assistant message carries provider extras.
fn assert_history_valid(request: &Value) {
    let messages = &history(request);
    assert_eq!(messages[0]["role"], "system");
    let mut i = 0;
    while i < messages.len() {
        let m = &messages[i];
        if m["role"] == "assistant" {
            let keys: Vec<&String> = m.as_object().unwrap().keys().collect();
            for k in &keys {
                assert!(
                    ["role", "content", "tool_calls"].contains(&k.as_str()),
                    "assistant message carries {k}: {m}"
                );
            }
            let calls = m["tool_calls"].as_array().cloned().unwrap_or_default();
            for (j, call) in calls.iter().enumerate() {
                let answer = &messages[i + 1 + j];
                assert_eq!(
                    answer["role"], "tool",
                    "call {call} not answered: {request}"
                );
                assert_eq!(answer["tool_call_id"], call["id"]);
            }
            i += 1 + calls.len();
        } else {
            assert_ne!(m["role"], "tool", "tool message without a call: {m}");
            i += 1;
        }
    }
}

fn args(v: Value) -> String {
    v.to_string()
}
