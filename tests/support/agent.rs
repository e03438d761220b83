//! The harness the agent tests share: the usual agent config against the scripted server,
//! recorded and resumed agents, turns driven to their end within a deadline, and readers
//! of the request bodies the agent sent.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rein::agent::{
    self, AgentCommand, AgentConfig, AgentEvent, AgentHandle, ApprovalDecision, ClientConfig,
    SessionSetup, TurnOutcome,
};
use rein::permissions::AllowAll;
use rein::sandbox::Sandbox;
use rein::session::{LoadedSession, SessionMeta, SessionWriter};
use rein::skills::SkillSet;
use serde_json::Value;

use super::ScriptedServer;

/// The API key most tests send.
pub const API_KEY: &str = "sk-test";
/// The model name most tests ask for.
pub const MODEL: &str = "scripted";
/// How long `events_until` (and so a turn) may take in all.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// A client for `base_url` that retries 20 ms apart (not seconds) so that retry tests run
/// fast; everything else is `ClientConfig`'s default.
pub fn test_client(base_url: impl Into<String>, api_key: &str, model: &str) -> ClientConfig {
    let mut client = ClientConfig::new(base_url, api_key, model);
    client.base_backoff = Duration::from_millis(20);
    client
}

/// The usual agent around `client`: tools in `root`, every call allowed, no sandbox, no
/// skills, a 20 s bash timeout, 20 model calls a turn (12 a subagent), the default context
/// settings. Tests change what they need by struct update or field assignment.
pub fn agent_config(client: ClientConfig, root: &Path) -> AgentConfig {
    AgentConfig {
        client,
        root: root.to_path_buf(),
        bash_timeout: Duration::from_secs(20),
        max_steps: 20,
        subagent_max_steps: 12,
        policy: Arc::new(AllowAll),
        sandbox: Arc::new(Sandbox::off(root)),
        skills: Arc::new(SkillSet::empty()),
        context: Default::default(),
    }
}

/// `agent_config` for `server` with `API_KEY` and `MODEL`.
pub fn scripted_config(server: &ScriptedServer, root: &Path) -> AgentConfig {
    agent_config(test_client(server.base_url(), API_KEY, MODEL), root)
}

/// An agent recording a new session in `data_dir`: its handle and its session file.
pub fn spawn_recorded(config: AgentConfig, data_dir: &Path) -> (AgentHandle, PathBuf) {
    let meta = SessionMeta::new(config.root.clone(), config.client.model.clone());
    let writer = SessionWriter::create(data_dir, meta).unwrap();
    let path = writer.path().to_path_buf();
    let handle = agent::spawn_with_session(
        config,
        Some(SessionSetup {
            writer,
            resumed: None,
            data_dir: data_dir.to_path_buf(),
        }),
    )
    .unwrap();
    (handle, path)
}

/// An agent going on with the `loaded` session, appending to its file.
pub fn spawn_resumed(config: AgentConfig, loaded: LoadedSession, data_dir: &Path) -> AgentHandle {
    let writer = SessionWriter::append_to(&loaded).unwrap();
    agent::spawn_with_session(
        config,
        Some(SessionSetup {
            writer,
            resumed: Some(loaded),
            data_dir: data_dir.to_path_buf(),
        }),
    )
    .unwrap()
}

/// Events until (and including) the first that `done` accepts, all within `DEADLINE`.
pub async fn events_until(
    handle: &mut AgentHandle,
    mut done: impl FnMut(&AgentEvent) -> bool,
) -> Vec<AgentEvent> {
    let mut events = Vec::new();
    let deadline = Instant::now() + DEADLINE;
    loop {
        let event = tokio::time::timeout_at(deadline.into(), handle.events.recv())
            .await
            .expect("the awaited event did not come in 30 s")
            .expect("agent task ended");
        let stop = done(&event);
        events.push(event);
        if stop {
            return events;
        }
    }
}

/// Send `text` and collect events until the turn ends, answering each approval request
/// with `decide(summary)`.
pub async fn turn_with(
    handle: &mut AgentHandle,
    text: &str,
    mut decide: impl FnMut(&str) -> ApprovalDecision,
) -> Vec<AgentEvent> {
    assert!(handle.send(AgentCommand::UserMessage(text.to_string())));
    events_until(handle, |event| {
        if let AgentEvent::ApprovalNeeded { summary, reply, .. } = event {
            reply.send(decide(summary));
        }
        matches!(event, AgentEvent::TurnFinished { .. })
    })
    .await
}

/// Send `text` and collect events until the turn ends, approving whatever is asked.
pub async fn turn(handle: &mut AgentHandle, text: &str) -> Vec<AgentEvent> {
    turn_with(handle, text, |_| ApprovalDecision::Approve).await
}

/// The outcome of a turn's events, which must end with `TurnFinished`.
pub fn outcome(events: &[AgentEvent]) -> TurnOutcome {
    match events.last() {
        Some(AgentEvent::TurnFinished { outcome }) => *outcome,
        other => panic!("last event is not TurnFinished: {other:?}"),
    }
}

/// The tool results among `events`: (name, result, is_error).
pub fn tool_results(events: &[AgentEvent]) -> Vec<(String, String, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolFinished {
                name,
                result,
                is_error,
                ..
            } => Some((name.clone(), result.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

/// The names of the tools a request offers (none where it has no `tools`).
pub fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The reminder a main agent's request ends with.
pub fn reminder(request: &Value) -> String {
    let all = request["messages"].as_array().unwrap();
    let last = all.last().expect("a message");
    assert_eq!(last["role"], "user", "{last}");
    let text = last["content"].as_str().unwrap().to_string();
    assert!(
        text.starts_with("<system-reminder>") && text.ends_with("</system-reminder>"),
        "the last message is not the reminder: {text:.300}"
    );
    text
}

/// A main agent's request's stored history: its messages without the reminder at the end
/// (which must be there).
pub fn stored_messages(request: &Value) -> Vec<Value> {
    reminder(request);
    let all = request["messages"].as_array().unwrap();
    all[..all.len() - 1].to_vec()
}

/// A message's text content ("" where there is none).
pub fn content(message: &Value) -> &str {
    message["content"].as_str().unwrap_or("")
}

/// The contents of the tool messages among `messages`, in order.
pub fn tool_contents(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| content(m).to_string())
        .collect()
}
