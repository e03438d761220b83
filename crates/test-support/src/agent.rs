//! The harness the agent tests share: the usual agent config against the scripted server,
//! recorded and resumed agents, turns driven to their end within a deadline, and readers
//! of the request bodies the agent sent.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rein_core::agent::{
    self, AgentCommand, AgentConfig, AgentEvent, AgentHandle, ApprovalDecision, ClientConfig,
    SessionSetup, TurnOutcome,
};
use rein_core::permissions::AllowAll;
use rein_core::sandbox::Sandbox;
use rein_core::session::{LoadedSession, SessionMeta, SessionWriter};
use rein_core::skills::SkillSet;
use serde_json::Value;

use crate::ScriptedServer;

/// The API key most tests send.
pub const API_KEY: &str = "sk-test";
/// The model name most tests ask for.
pub const MODEL: &str = "scripted";

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
        subagent_max_parallel: 4,
        max_background: 4,
        hooks: Default::default(),
        instructions: Default::default(),
        policy: Arc::new(AllowAll),
        sandbox: Arc::new(Sandbox::off(root)),
        skills: Arc::new(SkillSet::empty()),
        context: Default::default(),
        external_tools: None,
        checkpoints: None,
        editor: None,
        live_output: false,
        lsp: None,
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

/// Events until (and including) the first that `done` accepts (giving up after
/// [`crate::GIVE_UP`] in all).
pub async fn events_until(
    handle: &mut AgentHandle,
    mut done: impl FnMut(&AgentEvent) -> bool,
) -> Vec<AgentEvent> {
    let mut events = Vec::new();
    let deadline = Instant::now() + crate::GIVE_UP;
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
    assert!(handle.send(AgentCommand::UserMessage(text.into())));
    let commands = handle.commands.clone();
    events_until(handle, |event| {
        if let AgentEvent::ApprovalNeeded { id, summary, .. } = event {
            let _ = commands.send(AgentCommand::Approval {
                id: id.clone(),
                decision: decide(summary),
            });
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

/// The messages of the `Error` events among `events`.
pub fn errors(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Error { message } => Some(message.clone()),
            _ => None,
        })
        .collect()
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

/// A tool call for [`calls`]: its name and its arguments as JSON text.
pub fn call(name: &str, args: Value) -> (String, String) {
    (name.to_string(), args.to_string())
}

/// A reply that calls every tool of `list`, in order.
pub fn calls(list: &[(String, String)]) -> crate::Reply {
    let borrowed: Vec<(&str, &str)> = list.iter().map(|(n, a)| (n.as_str(), a.as_str())).collect();
    crate::Reply::tool_calls(&borrowed)
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

/// Where a reminder begins inside a message's content.
pub const REMINDER_OPENING: &str = rein_core::context::reminder::OPENING;

/// The reminder riding in a message's content, if it carries one.
pub fn reminder_in(content: &str) -> Option<&str> {
    content.find(REMINDER_OPENING).map(|i| &content[i..])
}

/// A message's content without the reminder riding in it.
pub fn without_reminder(content: &str) -> &str {
    match content.find(REMINDER_OPENING) {
        Some(i) => content[..i].trim_end_matches('\n'),
        None => content,
    }
}

/// The newest reminder of a main agent's request (in the turn's user message, or in a
/// tool result after it); the request must keep the order every server accepts and no
/// reminder may be a message of its own.
pub fn reminder(request: &Value) -> String {
    let all = request["messages"].as_array().unwrap();
    rein_core::conversation::order::check(all).unwrap_or_else(|e| panic!("{e}: {request:#}"));
    for m in all {
        let c = content(m);
        assert!(
            !c.starts_with(REMINDER_OPENING),
            "a message that is only a reminder: {m}"
        );
    }
    let last = all
        .iter()
        .rev()
        .find_map(|m| reminder_in(content(m)))
        .expect("a reminder in the request");
    assert!(last.ends_with(')'), "{last}");
    last.to_string()
}

/// A main agent's request's messages as stored: the reminders taken out of the contents
/// they ride in (the request must hold one).
pub fn stored_messages(request: &Value) -> Vec<Value> {
    reminder(request);
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let mut m = m.clone();
            if let Some(c) = m["content"].as_str() {
                m["content"] = Value::String(without_reminder(c).to_string());
            }
            m
        })
        .collect()
}

/// `history` as the client sends it to `MODEL` (the order's notes added), with the
/// reminders taken out of the contents they ride in, as [`stored_messages`] gives them.
pub fn as_sent(history: &[rein_core::conversation::Message]) -> Vec<Value> {
    let wire = rein_core::conversation::wire::WireMessages {
        history,
        options: rein_core::conversation::wire::WireOptions {
            model: MODEL,
            cache_control: false,
            images: false,
        },
    };
    let Value::Array(all) = serde_json::to_value(wire).expect("serialisable") else {
        panic!("the messages are not an array");
    };
    all.into_iter()
        .map(|mut m| {
            if let Some(c) = m["content"].as_str() {
                m["content"] = Value::String(without_reminder(c).to_string());
            }
            m
        })
        .collect()
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
