//! Sessions through the real agent and the real binary: recorded as they happen, resumed
//! after a clean end and after SIGKILL mid-turn.

use crate::support;

use std::path::Path;
use std::sync::Arc;

use rein_core::agent::{AgentConfig, AgentEvent, AgentHandle, ApprovalDecision};
use rein_core::permissions::policy::RulePolicy;
use serde_json::Value;
use support::agent::{agent_config, test_client, turn_with, MODEL};
use support::ScriptedServer;

mod recording;
mod resume;

fn config(server: &ScriptedServer, root: &Path, home: &Path) -> AgentConfig {
    AgentConfig {
        policy: Arc::new(RulePolicy::new(root, &[], &[], Some(home)).unwrap()),
        ..agent_config(test_client(server.base_url(), "", MODEL), root)
    }
}

/// Send `text` and collect the events of the turn, answering every approval request with
/// `decision`.
async fn turn(handle: &mut AgentHandle, text: &str, decision: ApprovalDecision) -> Vec<AgentEvent> {
    turn_with(handle, text, |_| decision.clone()).await
}

/// A request's stored history: its messages with the reminders taken out of the contents
/// they ride in.
fn history(request: &Value) -> Vec<Value> {
    support::agent::stored_messages(request)
}

/// Every tool call answered right after it, roles valid.
fn assert_valid(request: &Value) {
    let messages = &history(request);
    assert_eq!(messages[0]["role"], "system");
    let mut i = 1;
    while i < messages.len() {
        let calls = messages[i]["tool_calls"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for (j, call) in calls.iter().enumerate() {
            assert_eq!(messages[i + 1 + j]["tool_call_id"], call["id"], "{request}");
        }
        i += 1 + calls.len();
    }
}

fn rein(home: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rein"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("REIN_HOME", home.join("rein-home"))
        .stdin(std::process::Stdio::null());
    cmd
}
