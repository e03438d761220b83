//! Tools from outside rein (MCP servers, behind `tools::external::ExternalTools`) through the
//! real agent loop against the scripted server: offered after rein's own tools, judged by
//! the real permission policy by name, run through their provider, their results capped
//! like any other; new ones offered from the next turn only; an interrupt cancels a call.

use crate::support;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rein_core::agent::{self, AgentCommand, AgentEvent, ApprovalDecision, TurnOutcome};
use rein_core::permissions::policy::RulePolicy;
use rein_core::permissions::tools::ToolRuleEntry;
use rein_core::permissions::RuleAction;
use rein_core::tools::external::{ExternalCall, ExternalSource, ExternalSpec, ExternalTools};
use serde_json::{json, Value};
use support::agent::{events_until, outcome, scripted_config, tool_results, turn_with};
use support::{Reply, ScriptedServer};

/// A provider whose tools the test sets; `echo` answers with its arguments, `slow` never
/// ends (and says when its future is dropped).
#[derive(Default)]
struct Fake {
    specs: Mutex<Vec<ExternalSpec>>,
    calls: AtomicUsize,
    dropped: Arc<AtomicBool>,
}

fn spec(name: &str) -> ExternalSpec {
    ExternalSpec {
        name: name.to_string(),
        description: format!("{name}: a tool of the test's server"),
        parameters: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        source: Some(ExternalSource {
            server: "fake-server".into(),
            tool: name.trim_start_matches("mcp__fake__").into(),
            project: true,
            subagents: false,
        }),
    }
}

struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl ExternalTools for Fake {
    fn specs(&self) -> Vec<ExternalSpec> {
        self.specs.lock().unwrap().clone()
    }

    fn call(&self, name: &str, args: Value) -> ExternalCall {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let name = name.to_string();
        let flag = DropFlag(self.dropped.clone());
        Box::pin(async move {
            let _flag = flag;
            let result: Result<String, String> = match name.as_str() {
                "mcp__fake__slow" => {
                    tokio::time::sleep(Duration::from_secs(600)).await;
                    Ok("never".to_string())
                }
                "mcp__fake__fail" => Err("Error: the server said no".to_string()),
                "mcp__fake__big" => Ok("x".repeat(200_000)),
                _ => Ok(format!("echo: {args}")),
            };
            rein_core::conversation::ToolResult::from_tool(result)
        })
    }
}

/// The agent's config against `server` with `fake`'s tools and the real policy, in which
/// no rule covers them: every call asks.
fn asking_config(
    server: &ScriptedServer,
    dir: &std::path::Path,
    fake: Arc<Fake>,
) -> rein_core::agent::AgentConfig {
    let mut config = scripted_config(server, dir);
    config.external_tools = Some(fake);
    config.policy = Arc::new(
        RulePolicy::new(dir, &[], &[], None)
            .unwrap()
            .with_tool_rules(&[])
            .unwrap(),
    );
    config
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

fn last_tool_message(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn external_tools_are_offered_judged_by_name_and_run_through_their_provider() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("mcp__fake__echo", r#"{"text":"hi"}"#)]),
        Reply::text("echoed"),
        Reply::tool_calls(&[("mcp__fake__fail", "{}"), ("mcp__fake__echo", "[1]")]),
        Reply::text("failed"),
        Reply::tool_calls(&[("mcp__fake__big", "{}")]),
        Reply::text("big"),
    ])
    .await
    .unwrap();
    let fake = Arc::new(Fake::default());
    fake.specs.lock().unwrap().push(spec("mcp__fake__echo"));
    let config = asking_config(&server, dir.path(), fake.clone());
    let mut handle = agent::spawn(config).unwrap();

    let mut asked = Vec::new();
    let events = turn_with(&mut handle, "echo hi", |summary| {
        asked.push(summary.to_string());
        ApprovalDecision::ApproveForSession
    })
    .await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    assert_eq!(asked, [r#"mcp__fake__echo: {"text":"hi"}"#]);
    let approval = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ApprovalNeeded { reason, mcp, .. } => Some((reason.clone(), mcp.clone())),
            _ => None,
        })
        .unwrap();
    assert!(approval.0.contains("mcp__fake__echo"), "{}", approval.0);
    let mcp = approval.1.expect("the modal's MCP details");
    // The configured names (not a split of the qualified one), and who declared it.
    assert_eq!(
        (mcp.server.as_str(), mcp.tool.as_str()),
        ("fake-server", "echo")
    );
    assert!(mcp.project_server);
    let requests = server.requests();
    let names = tool_names(&requests[0]);
    assert_eq!(names.last().map(String::as_str), Some("mcp__fake__echo"));
    assert_eq!(names[0], "bash", "rein's own tools first");
    assert_eq!(last_tool_message(&requests[1]), r#"echo: {"text":"hi"}"#);

    // Allowed for the session now: no question. A provider's error is the model's to read;
    // arguments that are not an object never reach the provider.
    let calls_before = fake.calls.load(Ordering::SeqCst);
    fake.specs.lock().unwrap().push(spec("mcp__fake__fail"));
    let events = turn_with(&mut handle, "fail", |_| ApprovalDecision::Approve).await;
    let results = tool_results(&events);
    assert_eq!(results[0].1, "Error: the server said no");
    assert!(results[0].2, "an error result");
    assert!(
        results[1]
            .1
            .starts_with("Error: wrong arguments for mcp__fake__echo"),
        "{results:?}"
    );
    assert_eq!(fake.calls.load(Ordering::SeqCst), calls_before + 1);

    // A big result is capped on arrival like any tool's.
    fake.specs.lock().unwrap().push(spec("mcp__fake__big"));
    let events = turn_with(&mut handle, "big", |_| ApprovalDecision::Approve).await;
    assert!(events
        .iter()
        .any(|e| matches!(e, AgentEvent::ResultCapped { name, .. } if name == "mcp__fake__big")));
    let sent = last_tool_message(&server.requests()[5]);
    assert!(sent.len() < 100_000, "{}", sent.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_appears_mid_turn_is_offered_from_the_next_turn_only() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", r#"{"command":"true"}"#)]),
        Reply::text("one"),
        Reply::text("two"),
    ])
    .await
    .unwrap();
    let fake = Arc::new(Fake::default());
    let mut config = scripted_config(&server, dir.path());
    config.external_tools = Some(fake.clone());
    let mut handle = agent::spawn(config).unwrap();
    handle.send(AgentCommand::UserMessage("go".into()));
    // The server comes up while the turn runs.
    events_until(&mut handle, |e| {
        matches!(e, AgentEvent::ToolCallStarted { .. })
    })
    .await;
    fake.specs.lock().unwrap().push(spec("mcp__fake__echo"));
    events_until(&mut handle, |e| {
        matches!(e, AgentEvent::TurnFinished { .. })
    })
    .await;
    turn_with(&mut handle, "again", |_| ApprovalDecision::Approve).await;
    let requests = server.requests();
    assert_eq!(
        requests[0]["tools"], requests[1]["tools"],
        "a turn's requests keep their tools"
    );
    assert!(!tool_names(&requests[1]).contains(&"mcp__fake__echo".to_string()));
    assert!(tool_names(&requests[2]).contains(&"mcp__fake__echo".to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_cancels_a_running_external_call() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::tool_calls(&[("mcp__fake__slow", "{}")])])
        .await
        .unwrap();
    let fake = Arc::new(Fake::default());
    fake.specs.lock().unwrap().push(spec("mcp__fake__slow"));
    let mut config = scripted_config(&server, dir.path());
    config.external_tools = Some(fake.clone());
    // Allowed by a rule: it runs without a question.
    config.policy = Arc::new(
        RulePolicy::new(dir.path(), &[], &[], None)
            .unwrap()
            .with_tool_rules(&[ToolRuleEntry {
                pattern: "mcp__fake__*".into(),
                action: RuleAction::Allow,
                file: PathBuf::from("/test/config.toml"),
                project: false,
            }])
            .unwrap(),
    );
    let mut handle = agent::spawn(config).unwrap();
    handle.send(AgentCommand::UserMessage("slow".into()));
    events_until(&mut handle, |e| {
        matches!(e, AgentEvent::ToolCallStarted { .. })
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!fake.dropped.load(Ordering::SeqCst));
    handle.send(AgentCommand::Interrupt);
    let events = events_until(&mut handle, |e| {
        matches!(e, AgentEvent::TurnFinished { .. })
    })
    .await;
    assert_eq!(outcome(&events), TurnOutcome::Interrupted);
    assert!(
        fake.dropped.load(Ordering::SeqCst),
        "the call's future was dropped"
    );
}

/// The session records the external tools offered; resumed where a server is gone, the
/// tools its history called are still offered (marked unavailable, so the request stays
/// valid for servers that check calls against tools), and a call to one says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_still_offers_the_tools_its_history_called() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("mcp__fake__echo", r#"{"text":"a"}"#)]),
        Reply::text("done"),
        Reply::tool_calls(&[("mcp__fake__echo", r#"{"text":"b"}"#)]),
        Reply::text("it is gone"),
    ])
    .await
    .unwrap();
    let fake = Arc::new(Fake::default());
    fake.specs.lock().unwrap().push(spec("mcp__fake__echo"));
    fake.specs.lock().unwrap().push(spec("mcp__fake__unused"));
    let mut config = scripted_config(&server, dir.path());
    config.external_tools = Some(fake.clone());
    let (mut handle, path) = support::agent::spawn_recorded(config, data.path());
    turn_with(&mut handle, "echo", |_| ApprovalDecision::Approve).await;
    handle.send(AgentCommand::Shutdown);
    drop(handle);
    tokio::time::sleep(Duration::from_millis(200)).await;

    let loaded = rein_core::session::load(&path).unwrap();
    assert_eq!(
        loaded
            .external_tools
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        ["mcp__fake__echo", "mcp__fake__unused"]
    );
    // The server is gone in the new session: no tools from it.
    let mut config = scripted_config(&server, dir.path());
    config.external_tools = Some(Arc::new(Fake::default()));
    let mut handle = support::agent::spawn_resumed(config, loaded, data.path());
    let events = turn_with(&mut handle, "again", |_| ApprovalDecision::Approve).await;
    let results = tool_results(&events);
    assert!(
        results[0].1.contains("is not available in this session"),
        "{results:?}"
    );
    let request = &server.requests()[2];
    let tools = request["tools"].as_array().unwrap();
    let echo = tools
        .iter()
        .find(|t| t["function"]["name"] == "mcp__fake__echo")
        .expect("the called tool is still offered");
    assert!(echo["function"]["description"]
        .as_str()
        .unwrap()
        .starts_with("(Not available in this session"));
    assert!(
        !tool_names(request).contains(&"mcp__fake__unused".to_string()),
        "tools the history never called are not"
    );
}

/// What a subagent's request offered, said and called: the subagent gets only the
/// external tools its servers open to subagents; each of its calls is judged (and asked)
/// like the main agent's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagent_gets_only_the_external_tools_opened_to_subagents() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("task", r#"{"description":"look it up"}"#)]),
        // The subagent: one tool it has, one it was not given.
        Reply::tool_calls(&[
            ("mcp__fake__look", r#"{"text":"q"}"#),
            ("mcp__fake__echo", r#"{"text":"no"}"#),
        ]),
        Reply::text("found it"),
        Reply::text("the subagent found it"),
    ])
    .await
    .unwrap();
    let fake = Arc::new(Fake::default());
    let mut look = spec("mcp__fake__look");
    if let Some(source) = &mut look.source {
        source.subagents = true;
    }
    fake.specs
        .lock()
        .unwrap()
        .extend([spec("mcp__fake__echo"), look]);
    let config = asking_config(&server, dir.path(), fake.clone());
    let mut handle = agent::spawn(config).unwrap();
    let mut asked = Vec::new();
    let events = turn_with(&mut handle, "find it", |summary| {
        asked.push(summary.to_string());
        ApprovalDecision::Approve
    })
    .await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    // Asked like any call, and marked as the subagent's.
    assert_eq!(asked, [r#"mcp__fake__look: {"text":"q"}"#]);
    assert!(events.iter().any(|e| matches!(e,
        AgentEvent::ApprovalNeeded { subagent: Some(_), name, .. } if name == "mcp__fake__look")));
    assert_eq!(
        fake.calls.load(Ordering::SeqCst),
        1,
        "only the opened tool ran"
    );
    let requests = server.requests();
    let main = tool_names(&requests[0]);
    assert!(
        main.contains(&"mcp__fake__echo".to_string())
            && main.contains(&"mcp__fake__look".to_string())
    );
    let sub = tool_names(&requests[1]);
    assert!(sub.contains(&"mcp__fake__look".to_string()), "{sub:?}");
    assert!(!sub.contains(&"mcp__fake__echo".to_string()), "{sub:?}");
    assert!(
        !sub.contains(&"write_file".to_string()),
        "still read-only: {sub:?}"
    );
    let results: Vec<String> = requests[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(results[0], r#"echo: {"text":"q"}"#);
    assert!(
        results[1].contains("mcp__fake__echo is not one of your tools"),
        "{results:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_a_subagent_gets_no_external_tool() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("task", r#"{"description":"look"}"#)]),
        Reply::text("nothing"),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let fake = Arc::new(Fake::default());
    fake.specs.lock().unwrap().push(spec("mcp__fake__echo"));
    let mut config = scripted_config(&server, dir.path());
    config.external_tools = Some(fake.clone());
    let mut handle = agent::spawn(config).unwrap();
    turn_with(&mut handle, "go", |_| ApprovalDecision::Approve).await;
    let requests = server.requests();
    assert!(tool_names(&requests[0]).contains(&"mcp__fake__echo".to_string()));
    assert!(
        !tool_names(&requests[1])
            .iter()
            .any(|n| n.starts_with("mcp__")),
        "{:?}",
        tool_names(&requests[1])
    );
}

/// Issue 25: a tool the model made up on a server that runs is not "a server that is not
/// running": the answer names the server and lists its tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_tool_of_a_running_server_lists_its_tools() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("mcp__fake__nope", "{}"), ("mcp__gone__x", "{}")]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let fake = Arc::new(Fake::default());
    fake.specs.lock().unwrap().push(spec("mcp__fake__echo"));
    fake.specs.lock().unwrap().push(spec("mcp__fake__slow"));
    let mut config = scripted_config(&server, dir.path());
    config.external_tools = Some(fake.clone());
    let mut handle = rein_core::agent::spawn(config).unwrap();
    let events = turn_with(&mut handle, "call", |_| ApprovalDecision::Approve).await;
    let results = tool_results(&events);
    assert_eq!(
        results[0].1,
        "Error: the MCP server fake has no tool mcp__fake__nope; its tools are: mcp__fake__echo, mcp__fake__slow"
    );
    assert!(
        results[1]
            .1
            .contains("is not available in this session (its MCP server is not running)"),
        "{results:?}"
    );
    assert_eq!(fake.calls.load(Ordering::SeqCst), 0);
}
