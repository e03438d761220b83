//! The agent loop end to end: the real client against the scripted server, real tools in a
//! temporary project, events observed as a front end sees them.

use crate::support;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rein_core::agent::{
    self, AgentCommand, AgentConfig, AgentEvent, AgentHandle, ApprovalDecision, TurnOutcome, Usage,
};
use rein_core::permissions::{Grant, PermissionPolicy, ToolRequest, Verdict};
use serde_json::{json, Value};
use support::agent::{
    agent_config, events_until, outcome, stored_messages, test_client, tool_names, tool_results,
    turn, turn_with, MODEL,
};
use support::{chunk, Reply, ScriptedServer, Step};

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

/// The message of the first `Error` event.
fn first_error(events: &[AgentEvent]) -> String {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Error { message } => Some(message.clone()),
            _ => None,
        })
        .expect("an error event")
}

/// The figures of the first `Usage` event.
fn first_usage(events: &[AgentEvent]) -> Usage {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Usage(u) => Some(*u),
            _ => None,
        })
        .expect("a usage event")
}

/// How long `next_event` waits: a guard against a hang, not a claim about speed.
const HANG_GUARD: Duration = Duration::from_secs(120);

/// The next event from the agent.
async fn next_event(handle: &mut AgentHandle) -> AgentEvent {
    tokio::time::timeout(HANG_GUARD, handle.events.recv())
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

#[tokio::test]
async fn multi_step_fix_reads_runs_edits_and_reruns() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("calc.sh"), "add() {\n  echo $(( $1 - $2 ))\n}\n").unwrap();
    std::fs::write(
        root.join("test_calc.sh"),
        ". ./calc.sh\nif [ \"$(add 2 3)\" = 5 ]; then echo PASS; else echo \"FAIL: add 2 3 = $(add 2 3)\"; exit 1; fi\n",
    )
    .unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text_then_tool_calls(
            "Let me look at the test.",
            &[("read_file", &args(json!({"path": "test_calc.sh"})))],
        ),
        Reply::tool_calls(&[("bash", &args(json!({"command": "sh test_calc.sh"})))]),
        Reply::tool_calls(&[("read_file", &args(json!({"path": "calc.sh"})))]),
        Reply::tool_calls(&[(
            "str_replace",
            &args(json!({"path": "calc.sh", "old": "$(( $1 - $2 ))", "new": "$(( $1 + $2 ))"})),
        )]),
        Reply::tool_calls(&[("bash", &args(json!({"command": "sh test_calc.sh"})))]),
        Reply::text("Fixed: `add` subtracted instead of adding. The test passes now."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, root)).unwrap();
    let events = turn(&mut handle, "The calc test fails. Fix it.").await;

    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let results = tool_results(&events);
    assert_eq!(results.len(), 5, "{results:?}");
    assert!(results[0].1.contains("test_calc.sh") || results[0].1.contains(". ./calc.sh"));
    assert!(
        results[1].1.contains("FAIL: add 2 3 = -1"),
        "{:?}",
        results[1]
    );
    assert!(results[1].1.contains("exit code 1"), "{:?}", results[1]);
    assert!(results[2].1.contains("$(( $1 - $2 ))"));
    assert!(!results[3].2, "str_replace failed: {:?}", results[3]);
    assert!(results[4].1.contains("PASS"), "{:?}", results[4]);
    assert!(!results[4].1.contains("exit code"), "{:?}", results[4]);
    assert_eq!(
        std::fs::read_to_string(root.join("calc.sh")).unwrap(),
        "add() {\n  echo $(( $1 + $2 ))\n}\n"
    );
    assert!(text_of(&events).ends_with("The test passes now."));

    let requests = server.requests();
    assert_eq!(requests.len(), 6);
    for r in &requests {
        assert_eq!(r["stream"], true);
        assert_eq!(r["stream_options"]["include_usage"], true);
        assert_eq!(r["model"], "scripted");
        assert_eq!(
            tool_names(r),
            [
                "bash",
                "bash_output",
                "bash_kill",
                "read_file",
                "write_file",
                "str_replace",
                "write_todos",
                "read_skill",
                "task"
            ]
        );
        assert_history_valid(r);
    }
    // The last request carries the whole story: user, 5 calls with their results.
    let last = history(&requests[5]);
    assert_eq!(last[1]["content"], "The calc test fails. Fix it.");
    assert_eq!(last.iter().filter(|m| m["role"] == "tool").count(), 5);
    let auth = &server.request_headers()[0];
    assert!(auth
        .iter()
        .any(|(k, v)| k == "authorization" && v == "Bearer sk-test-secret-123"));
}

#[tokio::test]
async fn malformed_calls_become_errors_and_the_model_recovers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello\n").unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("read_file", "{\"path\": \"notes.txt\"")]),
        Reply::tool_calls(&[("open_file", &args(json!({"path": "notes.txt"})))]),
        Reply::tool_calls(&[("read_file", &args(json!({"path": 42})))]),
        Reply::tool_calls(&[("bash", &args(json!({"cmd": "ls"})))]),
        Reply::tool_calls(&[("str_replace", "[\"notes.txt\"]")]),
        Reply::tool_calls(&[("read_file", &args(json!({"path": "notes.txt"})))]),
        Reply::text("The file says hello."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "What does notes.txt say?").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let results = tool_results(&events);
    assert_eq!(results.len(), 6);
    assert!(
        results[0]
            .1
            .starts_with("Error: arguments were not valid JSON ("),
        "{}",
        results[0].1
    );
    assert_eq!(
        results[1].1,
        "Error: unknown tool \"open_file\". The available tools are: bash, bash_output, bash_kill, read_file, write_file, str_replace, write_todos, read_skill, task."
    );
    assert_eq!(
        results[2].1,
        "Error: wrong arguments for read_file (field \"path\" must be a string, got the integer 42)"
    );
    assert_eq!(
        results[3].1,
        "Error: wrong arguments for bash (missing required field \"command\"; got: cmd)"
    );
    assert!(results[4]
        .1
        .starts_with("Error: wrong arguments for str_replace (expected a JSON object"));
    assert!(results[..5].iter().all(|r| r.2), "all five are errors");
    assert!(
        !results[5].2 && results[5].1.contains("hello"),
        "{:?}",
        results[5]
    );
    // The malformed call went back to the model exactly as it was made.
    let requests = server.requests();
    let second = history(&requests[1]);
    let call = &second[second.len() - 2]["tool_calls"][0];
    assert_eq!(call["function"]["arguments"], "{\"path\": \"notes.txt\"");
    for r in &requests {
        assert_history_valid(r);
    }
    assert!(events
        .iter()
        .all(|e| !matches!(e, AgentEvent::Error { .. })));
}

#[tokio::test]
async fn two_tool_calls_in_one_reply_run_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            (
                "write_file",
                &args(json!({"path": "a/b.txt", "content": "one\ntwo\n"})),
            ),
            (
                "bash",
                &args(json!({"command": "cat a/b.txt; echo err >&2"})),
            ),
        ]),
        Reply::text("Done."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "write and show").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let results = tool_results(&events);
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].0, "write_file");
    assert_eq!(results[1].1, "one\ntwo\nerr");
    let requests = server.requests();
    assert_history_valid(&requests[1]);
    let msgs = history(&requests[1]);
    let n = msgs.len();
    assert_eq!(msgs[n - 3]["tool_calls"].as_array().unwrap().len(), 2);
    assert_eq!(msgs[n - 1]["content"], "one\ntwo\nerr");
}

#[tokio::test]
async fn server_error_500_is_retried_then_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::error(500, "upstream hiccup"),
        Reply::error(503, "still warming up"),
        Reply::text("Hello after retries."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let retries: Vec<(u32, u32, String)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Retrying {
                attempt,
                max_attempts,
                reason,
                ..
            } => Some((*attempt, *max_attempts, reason.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(retries.len(), 2, "{retries:?}");
    assert_eq!((retries[0].0, retries[0].1), (2, 5));
    assert!(retries[0].2.contains("500") && retries[0].2.contains("upstream hiccup"));
    assert_eq!(retries[1].0, 3);
    assert_eq!(text_of(&events), "Hello after retries.");
    assert_eq!(server.served(), 3);
}

#[tokio::test]
async fn rate_limit_429_waits_for_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::error(429, "Rate limit reached").with_header("Retry-After", "1"),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let start = Instant::now();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let delay = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Retrying { delay, reason, .. } => Some((*delay, reason.clone())),
            _ => None,
        })
        .expect("a retry event");
    assert_eq!(
        delay.0,
        Duration::from_secs(1),
        "Retry-After, not the 20 ms backoff"
    );
    assert!(delay.1.contains("429") && delay.1.contains("Rate limit reached"));
    assert!(start.elapsed() >= Duration::from_millis(950));
}

#[tokio::test]
async fn gives_up_after_max_tries_and_shows_the_server_message() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(
        (0..5)
            .map(|_| Reply::error(502, "bad gateway today"))
            .collect(),
    )
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Failed);
    assert_eq!(server.served(), 5);
    let error = first_error(&events);
    assert!(
        error.contains("502") && error.contains("bad gateway today"),
        "{error}"
    );
}

#[tokio::test]
async fn unauthorized_is_not_retried() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::error(
        401,
        "Incorrect API key provided: sk-te***",
    )])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Failed);
    assert_eq!(server.served(), 1);
    assert!(events.iter().any(|e| matches!(e, AgentEvent::Error { message } if message.contains("401") && message.contains("Incorrect API key"))));
}

#[tokio::test]
async fn stream_cut_mid_reply_is_an_error_and_the_session_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::sse(vec![
            Step::Data(chunk(
                json!({"role": "assistant", "content": "Partial ans"}),
                None,
            )),
            Step::Data(chunk(json!({"content": "wer"}), None)),
            Step::Cut,
        ]),
        Reply::text("Second try works."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "first").await;
    assert_eq!(outcome(&events), TurnOutcome::Failed);
    assert_eq!(text_of(&events), "Partial answer");
    let error = first_error(&events);
    assert!(error.contains("broke off"), "{error}");
    assert_eq!(server.served(), 1, "text was shown, so no silent retry");

    let events = turn(&mut handle, "again").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let req = &server.requests()[1];
    assert_history_valid(req);
    let msgs = history(req);
    assert_eq!(msgs[2]["content"], "Partial answer");
    assert_eq!(msgs[3]["content"], "again");
}

#[tokio::test]
async fn stream_cut_before_any_text_is_retried() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::sse(vec![Step::Raw(": keepalive\n\n".into()), Step::Cut]),
        Reply::text("fine"),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    assert!(events
        .iter()
        .any(|e| matches!(e, AgentEvent::Retrying { .. })));
}

#[tokio::test]
async fn no_usage_from_the_server_is_estimated_and_marked() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("An answer of a few words.")
            .without_usage()
            .without_done(),
        Reply::text("with usage").with_usage(1234, 56),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let usage = first_usage(&events);
    assert!(usage.estimated);
    assert!(
        usage.prompt_tokens > 100,
        "system prompt and tools count: {usage:?}"
    );
    assert!(
        usage.completion_tokens >= 5 && usage.completion_tokens < 20,
        "{usage:?}"
    );
    assert_eq!(
        usage.total_tokens,
        usage.prompt_tokens + usage.completion_tokens
    );

    let events = turn(&mut handle, "again").await;
    let usage = first_usage(&events);
    assert!(!usage.estimated);
    assert_eq!(
        (
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.total_tokens
        ),
        (1234, 56, 1290)
    );
}

#[tokio::test]
async fn reasoning_of_a_final_reply_is_shown_but_not_sent_back() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::reasoning_then_text("The user greets me. I should greet back.", "Hello!"),
        Reply::sse(vec![
            Step::Data(chunk(
                json!({"role": "assistant", "reasoning": "OpenRouter style"}),
                None,
            )),
            Step::Data(chunk(json!({"content": "Again."}), Some("stop"))),
            Step::Done,
        ]),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    let reasoning: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ReasoningDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasoning, "The user greets me. I should greet back.");
    assert_eq!(text_of(&events), "Hello!");
    let events = turn(&mut handle, "again").await;
    assert!(events
        .iter()
        .any(|e| matches!(e, AgentEvent::ReasoningDelta { text } if text == "OpenRouter style")));
    let req = &server.requests()[1];
    assert_history_valid(req);
    let body = req.to_string();
    assert!(
        !body.contains("greet back"),
        "reasoning leaked into the request"
    );
    assert_eq!(
        req["messages"][2],
        json!({"role": "assistant", "content": "Hello!"})
    );
}

#[tokio::test]
async fn stalled_stream_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::sse(vec![
        Step::Data(chunk(
            json!({"role": "assistant", "content": "thinking about it"}),
            None,
        )),
        // A day: waited out, the turn would never end (the harness's deadline fails it).
        Step::Sleep(Duration::from_secs(86_400)),
        Step::Done,
    ])])
    .await
    .unwrap();
    let mut cfg = config(&server, dir.path());
    cfg.client.idle_timeout = Duration::from_millis(300);
    let mut handle = agent::spawn(cfg).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Failed);
    assert_eq!(server.served(), 1, "a stall is not retried");
    // The stall was given up on at the configured idle timeout, which the error names.
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Error { message }
            if message.contains("sent nothing for 300 ms"))),
        "{events:?}"
    );
}

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

/// Poll for up to 3 s until none of `pids` is alive; the caller asserts.
async fn wait_until_gone(pids: &[u32]) {
    let gone = Instant::now() + Duration::from_secs(3);
    while pids.iter().any(|&pid| process_alive(pid)) && Instant::now() < gone {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The pid a command wrote to `path`, if the file holds one yet.
fn read_pid(path: &Path) -> Option<u32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Wait up to 20 s for a command to write its pid to `path`.
async fn wait_for_pid_file(path: &Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(20);
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
    let deadline = Instant::now() + Duration::from_secs(120);
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
async fn messages_sent_during_a_turn_are_queued_for_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::sse(vec![
            Step::Data(chunk(
                json!({"role": "assistant", "content": "first "}),
                None,
            )),
            Step::Sleep(Duration::from_millis(300)),
            Step::Data(chunk(json!({"content": "answer"}), Some("stop"))),
            Step::Done,
        ]),
        Reply::text("second answer"),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    handle.send(AgentCommand::UserMessage("one".into()));
    handle.send(AgentCommand::UserMessage("two".into()));
    let mut finished = 0;
    while finished < 2 {
        let e = next_event(&mut handle).await;
        if let AgentEvent::TurnFinished { outcome } = e {
            assert_eq!(outcome, TurnOutcome::Completed);
            finished += 1;
        }
    }
    let req = &server.requests()[1];
    let msgs = history(req);
    assert_eq!(msgs[1]["content"], "one");
    assert_eq!(msgs[2]["content"], "first answer");
    assert_eq!(msgs[3]["content"], "two");
}

/// Send `first`; once its tool call starts (the command runs a while), send `during`; the
/// events until the turn ends.
async fn turn_sending_while_a_tool_runs(
    handle: &mut AgentHandle,
    first: &str,
    during: Vec<AgentCommand>,
) -> Vec<AgentEvent> {
    handle.send(AgentCommand::UserMessage(first.into()));
    let mut events =
        events_until(handle, |e| matches!(e, AgentEvent::ToolCallStarted { .. })).await;
    for command in during {
        handle.send(command);
    }
    events.extend(events_until(handle, |e| matches!(e, AgentEvent::TurnFinished { .. })).await);
    events
}

/// The texts of the `MessageDelivered` events.
fn delivered(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageDelivered { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_sent_while_a_tool_runs_reaches_the_model_with_its_result() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "bash",
            &json!({"command": "sleep 1; echo built"}).to_string(),
        )]),
        Reply::text("Built, and the linter is next as you asked."),
    ])
    .await
    .unwrap();
    std::fs::write(dir.path().join("lint.md"), "lint rule: no tabs\n").unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn_sending_while_a_tool_runs(
        &mut handle,
        "build it",
        vec![AgentCommand::UserMessage(
            "then run the linter, see @lint.md".into(),
        )],
    )
    .await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    assert_eq!(delivered(&events), ["then run the linter, see @lint.md"]);
    // The file it mentions goes with it, and the front end hears so right after.
    let delivered_at = events
        .iter()
        .position(|e| matches!(e, AgentEvent::MessageDelivered { .. }))
        .unwrap();
    assert!(
        matches!(&events[delivered_at + 1], AgentEvent::Attached { paths } if paths == &["lint.md"]),
        "{events:?}"
    );
    // Delivered before the second request, in the same turn: no turn of its own.
    let at = |want: &dyn Fn(&AgentEvent) -> bool| events.iter().position(want).unwrap();
    assert!(
        at(&|e| matches!(e, AgentEvent::MessageDelivered { .. }))
            < at(&|e| matches!(e, AgentEvent::RequestStarted { step: 2 }))
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, AgentEvent::TurnStarted { .. }))
            .count(),
        1
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "one turn, two steps");
    let messages = requests[1]["messages"].as_array().unwrap();
    rein_core::conversation::order::check(messages).unwrap_or_else(|e| panic!("{e}"));
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "tool", "it rides on the result, not after it");
    let text = last["content"].as_str().unwrap();
    let result_at = text.find("built").expect("the result");
    let note_at = text
        .find(rein_core::context::reminder::USER_WROTE)
        .expect("the note");
    assert!(result_at < note_at, "{text}");
    assert!(
        text.contains(&format!(
            "{}\nthen run the linter, see @lint.md",
            rein_core::context::reminder::USER_WROTE
        )),
        "{text}"
    );
    assert!(text.contains("lint rule: no tabs"), "{text}");
    assert!(
        !messages
            .iter()
            .any(|m| m["role"] == "user" && m["content"].as_str().unwrap_or("").contains("linter")),
        "not a user message of its own"
    );
    // Later requests carry the same bytes: the next turn's first request repeats them.
    server.push(Reply::text("Linted."));
    turn(&mut handle, "and now?").await;
    let next = server.requests();
    assert_eq!(next[2]["messages"][3], messages[3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_sent_during_the_last_step_starts_the_next_turn() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "bash",
            &json!({"command": "sleep 1; echo counted"}).to_string(),
        )]),
        // The message arrives after this step's request went out: no step comes after
        // this reply, so the message starts a turn of its own.
        Reply::sse(vec![
            Step::Data(chunk(
                json!({"role": "assistant", "content": "There are "}),
                None,
            )),
            Step::Sleep(Duration::from_millis(400)),
            Step::Data(chunk(json!({"content": "three files."}), Some("stop"))),
            Step::Done,
        ]),
        Reply::text("The largest is main.rs."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    handle.send(AgentCommand::UserMessage("count the files".into()));
    events_until(&mut handle, |e| {
        matches!(e, AgentEvent::RequestStarted { step: 2 })
    })
    .await;
    handle.send(AgentCommand::UserMessage("which is largest?".into()));
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::TurnStarted { .. })).await;
    assert!(delivered(&events).is_empty(), "{events:?}");
    assert!(
        matches!(events.last(), Some(AgentEvent::TurnStarted { text }) if text == "which is largest?")
    );
    events_until(&mut handle, |e| {
        matches!(e, AgentEvent::TurnFinished { .. })
    })
    .await;
    let requests = server.requests();
    let messages = requests[2]["messages"].as_array().unwrap();
    rein_core::conversation::order::check(messages).unwrap_or_else(|e| panic!("{e}"));
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    assert!(last["content"]
        .as_str()
        .unwrap()
        .starts_with("which is largest?"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_drops_the_queue_and_a_withdrawn_message_never_goes() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "bash",
            &json!({"command": "sleep 1; echo first"}).to_string(),
        )]),
        Reply::tool_calls(&[(
            "bash",
            &json!({"command": "sleep 1; echo second"}).to_string(),
        )]),
        Reply::text("Done with the second."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    // Interrupted: what was queued is dropped (the dashboard gives it back to its user).
    let events = turn_sending_while_a_tool_runs(
        &mut handle,
        "start the first",
        vec![
            AgentCommand::UserMessage("queued then dropped".into()),
            AgentCommand::Interrupt,
        ],
    )
    .await;
    assert_eq!(outcome(&events), TurnOutcome::Interrupted);
    // Withdrawn: of two queued, only the other goes.
    let events = turn_sending_while_a_tool_runs(
        &mut handle,
        "start the second",
        vec![
            AgentCommand::UserMessage("keep this one".into()),
            AgentCommand::UserMessage("take this back".into()),
            AgentCommand::Withdraw {
                text: "take this back".into(),
                command: false,
            },
        ],
    )
    .await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    assert_eq!(delivered(&events), ["keep this one"]);
    assert!(
        matches!(events.first(), Some(AgentEvent::TurnStarted { text }) if text == "start the second"),
        "the dropped message started no turn: {events:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let all = serde_json::to_string(&requests).unwrap();
    assert!(!all.contains("queued then dropped"));
    assert!(!all.contains("take this back"));
    assert!(all.contains("keep this one"));
}

#[tokio::test]
async fn keepalive_comments_keep_a_slow_stream_alive() {
    let dir = tempfile::tempdir().unwrap();
    let mut steps = vec![Step::Data(chunk(
        json!({"role": "assistant", "content": "slow "}),
        None,
    ))];
    for _ in 0..8 {
        steps.push(Step::Raw(": OPENROUTER PROCESSING\n\n".into()));
        steps.push(Step::Sleep(Duration::from_millis(100)));
    }
    steps.push(Step::Data(chunk(
        json!({"content": "but alive"}),
        Some("stop"),
    )));
    steps.push(Step::Done);
    let server = ScriptedServer::start(vec![Reply::sse(steps)])
        .await
        .unwrap();
    let mut cfg = config(&server, dir.path());
    cfg.client.idle_timeout = Duration::from_millis(300);
    // Comments are no part of the reply: what they may last is the keep-alive bound's
    // (tests/it/stream_bounds.rs), set far above the 0.8 s here.
    cfg.client.keepalive_timeout = Some(Duration::from_secs(30));
    let mut handle = agent::spawn(cfg).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed, "{events:?}");
    assert_eq!(text_of(&events), "slow but alive");
}

#[tokio::test]
async fn error_object_inside_the_stream_is_shown_and_not_retried() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::sse(vec![
            Step::Data(chunk(json!({"role": "assistant", "content": ""}), None)),
            Step::Data(json!({"error": {"message": "Provider returned error", "code": 502, "metadata": {"raw": "upstream model crashed"}}})),
        ]),
        Reply::text("recovered"),
    ])
    .await.unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Failed);
    let error = first_error(&events);
    assert!(
        error.contains("Provider returned error") && error.contains("upstream model crashed"),
        "{error}"
    );
    assert_eq!(server.served(), 1);
    // The next turn is valid: user and assistant messages still alternate.
    let events = turn(&mut handle, "again").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let msgs = history(&server.requests()[1]);
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert!(msgs[2]["content"]
        .as_str()
        .unwrap()
        .starts_with("(no reply: the request failed"));
}

#[tokio::test]
async fn a_server_that_ignores_stream_true_still_works() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::json(200, json!({
            "id": "x", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": [{"id": "abc", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"echo whole\"}"}}]
            }}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
        })),
        Reply::text("ok"),
    ])
    .await.unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed, "{events:?}");
    assert_eq!(tool_results(&events)[0].1, "whole");
}

#[tokio::test]
async fn an_empty_reply_keeps_the_history_valid() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::sse(vec![
            Step::Data(chunk(json!({"role": "assistant", "content": null}), None)),
            Step::Data(chunk(json!({}), Some("stop"))),
            Step::Done,
        ]),
        Reply::text("now with words"),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let events = turn(&mut handle, "say something").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let req = &server.requests()[1];
    assert_history_valid(req);
    assert_eq!(
        req["messages"][2],
        json!({"role": "assistant", "content": ""})
    );
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
    tokio::time::timeout(Duration::from_secs(5), task)
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
    while let Ok(Some(event)) = tokio::time::timeout(Duration::from_secs(10), events.recv()).await {
        if matches!(event, AgentEvent::ApprovalNeeded { .. }) {
            // Every command sender gone: nobody can answer any more.
            drop(commands.take());
        }
        seen.push(event);
    }
    tokio::time::timeout(Duration::from_secs(5), task)
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

#[tokio::test]
async fn write_todos_updates_the_list_and_a_bad_list_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let good = json!({"todos": [
        {"content": "Read the code", "status": "completed"},
        {"content": "Run the tests", "status": "in_progress", "active_form": "Running the tests"},
        {"content": "Fix it", "status": "pending"}
    ]});
    let bad = json!({"todos": [
        {"content": "A", "status": "in_progress"},
        {"content": "B", "status": "in_progress"}
    ]});
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("write_todos", &args(good))]),
        Reply::tool_calls(&[("write_todos", &args(bad))]),
        Reply::text("planned"),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "plan it").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let updates: Vec<&Vec<rein_core::tools::write_todos::Todo>> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TodosUpdated { todos } => Some(todos),
            _ => None,
        })
        .collect();
    assert_eq!(updates.len(), 1, "only the good list is announced");
    assert_eq!(updates[0].len(), 3);
    assert_eq!(
        updates[0][1].active_form.as_deref(),
        Some("Running the tests")
    );
    let results = tool_results(&events);
    assert_eq!(
        results[0].1,
        "Todo list updated: 1/3 completed; in progress: Running the tests."
    );
    assert!(results[1]
        .1
        .starts_with("Error: write_todos failed - 2 items are in_progress"));
}

#[tokio::test]
async fn a_new_conversation_forgets_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("first"), Reply::text("second")])
        .await
        .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "remember the number 42").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    handle.send(AgentCommand::NewConversation);
    let events = turn(&mut handle, "what was the number?").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let msgs = history(&server.requests()[1]);
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user"]);
    assert_eq!(msgs[1]["content"], "what was the number?");
}

#[tokio::test]
async fn max_output_tokens_is_sent_as_max_tokens_only_when_set() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("short"), Reply::text("long")])
        .await
        .unwrap();
    let mut limited = config(&server, dir.path());
    limited.client.max_output_tokens = Some(64);
    let mut handle = agent::spawn(limited).unwrap();
    turn(&mut handle, "hi").await;
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    turn(&mut handle, "hi").await;
    let requests = server.requests();
    assert_eq!(requests[0]["max_tokens"], 64);
    assert!(requests[1].get("max_tokens").is_none(), "{}", requests[1]);
}

#[tokio::test]
async fn a_known_window_caps_each_reply_at_what_is_left_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("a"),
        Reply::text("b"),
        Reply::text("c"),
        Reply::text("d"),
    ])
    .await
    .unwrap();
    let run = |window: u64, known: bool, auto: bool| {
        let mut c = config(&server, dir.path());
        c.client.auto_output_cap = auto;
        c.context.window = window;
        c.context.window_known = known;
        c
    };
    for c in [
        run(8_192, true, true),
        run(1_000_000, true, true),
        run(8_192, false, true),
        run(8_192, true, false),
    ] {
        let mut handle = agent::spawn(c).unwrap();
        turn(&mut handle, "hi").await;
    }
    let requests = server.requests();
    // A small window: what is left once the request (and a tenth more) is in.
    let small = requests[0]["max_tokens"].as_u64().unwrap();
    assert!((4_000..8_192).contains(&small), "{small}");
    // A large one: at most 32k.
    assert_eq!(requests[1]["max_tokens"], 32_768);
    // A window that is only a default guess, or the cap turned off (0): nothing sent.
    assert!(requests[2].get("max_tokens").is_none(), "{}", requests[2]);
    assert!(requests[3].get("max_tokens").is_none(), "{}", requests[3]);
}

#[tokio::test]
async fn claude_through_a_gateway_gets_cache_markers_on_the_stable_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", r#"{"command":"echo hi"}"#)]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let mut claude = config(&server, dir.path());
    claude.client.model = "anthropic/claude-sonnet-4.5".into();
    let mut handle = agent::spawn(claude).unwrap();
    turn(&mut handle, "say hi").await;
    let requests = server.requests();
    let marked = |m: &Value| {
        m["content"].as_array().is_some_and(|parts| {
            parts
                .iter()
                .any(|p| p["cache_control"]["type"] == "ephemeral")
        })
    };
    // The system message and the last two user or tool messages carry the marker; the
    // marked text is the whole content, reminder included.
    let first = requests[0]["messages"].as_array().unwrap();
    assert!(marked(&first[0]) && marked(&first[1]), "{first:?}");
    assert!(first[1]["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("say hi\n\n(rein context"));
    let second = requests[1]["messages"].as_array().unwrap();
    let flags: Vec<bool> = second.iter().map(marked).collect();
    assert_eq!(flags, [true, true, false, true], "{second:?}");
    // Another model gets plain strings.
    let plain = ScriptedServer::start(vec![Reply::text("ok")])
        .await
        .unwrap();
    let mut handle = agent::spawn(config(&plain, dir.path())).unwrap();
    turn(&mut handle, "hi").await;
    assert!(plain.requests()[0]["messages"][0]["content"].is_string());
}

#[tokio::test]
async fn split_characters_and_invalid_bytes_never_freeze_the_reply() {
    // One token's bytes per event cut "é" in two; a stray 0xFF byte sits in the middle.
    let dir = tempfile::tempdir().unwrap();
    let head = br#"data: {"choices":[{"index":0,"delta":{"content":"caf"#.to_vec();
    let mut first = head;
    first.push(0xC3);
    let mut second = vec![0xA9];
    second.extend_from_slice(b" ok \xFF done\"},\"finish_reason\":null}]}\n\n");
    let server = ScriptedServer::start(vec![Reply::sse(vec![
        Step::Bytes(first),
        Step::Sleep(Duration::from_millis(20)),
        Step::Bytes(second),
        Step::Data(chunk(json!({}), Some("stop"))),
        Step::Done,
    ])])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "hi").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed, "{events:?}");
    assert_eq!(text_of(&events), "café ok \u{FFFD} done");
}

/// Pieces that arrive in one network read cross to the front end as one event (a
/// wake-up per read, not per chunk); reasoning and text keep their order; nothing is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deltas_that_arrive_together_cross_together() {
    let dir = tempfile::tempdir().unwrap();
    let mut steps = vec![Step::Data(chunk(
        json!({"role": "assistant", "content": ""}),
        None,
    ))];
    // Three bursts of 40 four-character chunks, a pause between them (three reads at least);
    // the first burst opens with reasoning.
    for _ in 0..5 {
        steps.push(Step::Data(chunk(
            json!({"reasoning_content": "hmm "}),
            None,
        )));
    }
    for burst in 0..3 {
        for i in 0..40 {
            steps.push(Step::Data(chunk(
                json!({"content": format!("{burst}{i:02} ")}),
                None,
            )));
        }
        steps.push(Step::Sleep(Duration::from_millis(100)));
    }
    steps.push(Step::Data(chunk(json!({}), Some("stop"))));
    steps.push(Step::Done);
    let server = ScriptedServer::start(vec![Reply::sse(steps)])
        .await
        .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "go").await;
    let expected: String = (0..3)
        .flat_map(|b| (0..40).map(move |i| format!("{b}{i:02} ")))
        .collect();
    assert_eq!(text_of(&events), expected);
    let deltas: Vec<&AgentEvent> = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                AgentEvent::TextDelta { .. } | AgentEvent::ReasoningDelta { .. }
            )
        })
        .collect();
    // The reasoning first, whole; then the text, in as many events as reads (a burst can
    // be split across two reads by the socket, never into chunk-sized events).
    assert!(
        matches!(deltas[0], AgentEvent::ReasoningDelta { text } if text == &"hmm ".repeat(5)),
        "{:?}",
        deltas[0]
    );
    let text_events = deltas.len() - 1;
    assert!(
        (3..=6).contains(&text_events),
        "{text_events} text events for 3 bursts of 40 chunks"
    );
}

// ---- the window asked of the server in the background ------------------------------------

/// The settings for `server` with no window configured: the server is asked for it
/// (`GET /props` first), as `rein` asks when it starts.
fn unconfigured_target(server: &ScriptedServer, home: &Path) -> rein_core::config::ModelTarget {
    let env = rein_core::config::Environment {
        vars: std::collections::HashMap::from([(
            "REIN_HOME".to_string(),
            home.join("rein-home").display().to_string(),
        )]),
        home: Some(home.to_path_buf()),
    };
    let overrides = rein_core::config::Overrides {
        base_url: Some(server.base_url()),
        model: Some(MODEL.to_string()),
        ..Default::default()
    };
    let config = rein_core::config::Config::load(home, &overrides, &env).unwrap();
    assert_ne!(config.discovery, rein_core::config::Discovery::None);
    config.target()
}

fn learnt(events: &[AgentEvent]) -> Option<(u64, Option<String>)> {
    events.iter().find_map(|e| match e {
        AgentEvent::WindowLearnt { window, url } => Some((*window, url.clone())),
        _ => None,
    })
}

#[tokio::test]
async fn a_small_first_message_goes_before_a_slow_window_answer() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("hello back")])
        .await
        .unwrap();
    server.answer_props(8_192, Duration::ZERO);
    let target = unconfigured_target(&server, dir.path());
    // The question stays open until the test answers it, after the turn: no clock decides
    // what comes first. A turn that waited for the answer would wait `ANSWER_WAIT`, give
    // up and say so (a `WindowLearnt` without a URL) inside the turn.
    let (answer, watch) = rein_core::agent::window::channel();
    let mut handle =
        agent::spawn_learning_window(config(&server, dir.path()), None, Some(watch)).unwrap();
    let events = turn(&mut handle, "hello").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    assert_eq!(learnt(&events), None, "the turn waited for the window");
    assert_eq!(server.requests().len(), 1);

    // The answer (the server's own, asked as `discover::ask` asks it; the limit is a
    // guard against a hang) comes while the agent waits for the next message: said, then
    // counted.
    let found =
        rein_core::config::discover::context_window_within(&target, Duration::from_secs(120))
            .await
            .expect("the server says its window");
    assert_eq!(server.probes(), 1, "the server was asked");
    answer
        .send(rein_core::agent::window::WindowProbe::Answered(
            rein_core::agent::window::Answer::Reported {
                tokens: found.tokens,
                url: found.url,
            },
        ))
        .unwrap();
    let later = events_until(&mut handle, |e| matches!(e, AgentEvent::Context(_))).await;
    let (window, url) = learnt(&later).expect("the window was learnt");
    assert_eq!(window, 8_192);
    assert!(url.unwrap_or_default().ends_with("/props"));
    assert!(matches!(later.last(), Some(AgentEvent::Context(s)) if s.window == 8_192));
    handle.shut_down().await;
}

#[tokio::test]
async fn a_large_history_waits_for_the_window_before_it_is_compacted() {
    let dir = tempfile::tempdir().unwrap();
    // The first reply is long (10 000 tokens at four characters a token): the history
    // fits the default 128k window, not the server's 8k.
    let server = ScriptedServer::start(vec![
        // (Numbered sentences: one repeated exactly would be stopped as a runaway.)
        Reply::text(
            &(0..2_700)
                .map(|i| format!("a reply {i:04}. "))
                .collect::<String>(),
        )
        .with_usage_from_request(4.0),
        // The long answer is summarised in two pieces (each must fit the 8k window).
        Reply::text("the handoff note: a long answer").with_usage_from_request(4.0),
        Reply::text("the handoff note: a long answer was given").with_usage_from_request(4.0),
        Reply::text("going on").with_usage_from_request(4.0),
    ])
    .await
    .unwrap();
    server.answer_props(8_192, Duration::ZERO);
    let target = unconfigured_target(&server, dir.path());
    // The question stays open until the test answers it: no clock decides what comes
    // first (the answer a `rein` would get from this server comes once the second message
    // is sent, so a turn that did not wait for it would most likely compact nothing).
    let (answer, watch) = rein_core::agent::window::channel();
    let mut handle =
        agent::spawn_learning_window(config(&server, dir.path()), None, Some(watch)).unwrap();
    let first = turn(&mut handle, "tell me everything").await;
    assert_eq!(outcome(&first), TurnOutcome::Completed);
    assert_eq!(
        learnt(&first),
        None,
        "the first message went before the answer"
    );

    // The server's own answer, asked as `discover::ask` asks it (the limit is a guard
    // against a hang).
    let found =
        rein_core::config::discover::context_window_within(&target, Duration::from_secs(120))
            .await
            .expect("the server says its window");
    // The message first, then the answer: the turn, which fits the message before it
    // starts, has only the answer to wait for.
    assert!(handle.send(AgentCommand::UserMessage("go on".to_string())));
    answer
        .send(rein_core::agent::window::WindowProbe::Answered(
            rein_core::agent::window::Answer::Reported {
                tokens: found.tokens,
                url: found.url,
            },
        ))
        .unwrap();
    let second = events_until(&mut handle, |e| {
        matches!(e, AgentEvent::TurnFinished { .. })
    })
    .await;
    assert_eq!(outcome(&second), TurnOutcome::Completed, "{second:#?}");
    let position = |wanted: fn(&AgentEvent) -> bool| second.iter().position(wanted);
    let learnt_at = position(|e| matches!(e, AgentEvent::WindowLearnt { window: 8_192, .. }))
        .expect("the window was learnt in the second turn");
    let compacted_at = position(|e| matches!(e, AgentEvent::CompactionStarted { auto: true, .. }))
        .unwrap_or_else(|| panic!("no compaction: {second:#?}"));
    let requested_at =
        position(|e| matches!(e, AgentEvent::RequestStarted { .. })).expect("a request");
    assert!(learnt_at < compacted_at, "{second:#?}");
    assert!(compacted_at < requested_at, "{second:#?}");
    // The main request after the compaction fits the learnt window's budget.
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let last = requests[3].to_string();
    assert!(last.len() < 8_192 * 4, "{} characters", last.len());
    handle.shut_down().await;
}

#[tokio::test]
async fn compact_waits_for_the_window_it_is_a_share_of() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("a reply").with_usage_from_request(4.0),
        Reply::text("the handoff note").with_usage_from_request(4.0),
    ])
    .await
    .unwrap();
    server.answer_props(16_384, Duration::from_millis(800));
    let watch = rein_core::config::discover::ask(unconfigured_target(&server, dir.path()));
    let mut handle =
        agent::spawn_learning_window(config(&server, dir.path()), None, watch).unwrap();
    let first = turn(&mut handle, "hi").await;
    assert_eq!(learnt(&first), None);
    assert!(handle.send(AgentCommand::Compact { focus: None }));
    let events = events_until(&mut handle, |e| {
        matches!(
            e,
            AgentEvent::Compacted { .. } | AgentEvent::CompactionFailed { .. }
        )
    })
    .await;
    let learnt_at = events
        .iter()
        .position(|e| matches!(e, AgentEvent::WindowLearnt { window: 16_384, .. }))
        .unwrap_or_else(|| panic!("no window learnt: {events:#?}"));
    let started_at = events
        .iter()
        .position(|e| matches!(e, AgentEvent::CompactionStarted { .. }))
        .unwrap_or_else(|| panic!("no compaction: {events:#?}"));
    assert!(learnt_at < started_at, "{events:#?}");
    handle.shut_down().await;
}

/// Every edit in the project comes with its short diff: a new file as all added lines, a
/// replacement as the removed and the added lines with a line of context around.
#[tokio::test]
async fn each_edit_sends_its_short_diff() {
    use rein_core::checkpoint::DiffKind;
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "write_file",
            &json!({"path": "notes.md", "content": "one\ntwo\nthree\n"}).to_string(),
        )]),
        Reply::tool_calls(&[(
            "str_replace",
            &json!({"path": "notes.md", "old": "two\n", "new": "2\nand a half\n"}).to_string(),
        )]),
        Reply::text("Edited."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "take notes").await;
    let diffs: Vec<Vec<String>> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::EditDiff { diff, .. } => Some(
                diff.lines
                    .iter()
                    .map(|l| match l.kind {
                        DiffKind::Added => format!("+{}", l.text),
                        DiffKind::Removed => format!("-{}", l.text),
                        DiffKind::Context => format!(" {}", l.text),
                        DiffKind::Gap => "⋯".to_string(),
                    })
                    .collect(),
            ),
            _ => None,
        })
        .collect();
    assert_eq!(
        diffs,
        [
            vec!["+one", "+two", "+three"],
            vec![" one", "-two", "+2", "+and a half", " three"]
        ],
        "{events:?}"
    );
    handle.send(AgentCommand::Shutdown);
}
