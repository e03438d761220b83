//! Subagents end to end: the main agent calls `task`, the subagent's requests go to the
//! same scripted server (replies in order: the main agent's call, the subagent's replies,
//! the main agent's last reply), and the events are seen as a front end sees them.

use crate::support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rein_core::agent::{
    self, AgentCommand, AgentConfig, AgentEvent, ApprovalDecision, SubagentEvent, TurnOutcome,
    Usage,
};
use rein_core::config::BashRuleEntry;
use rein_core::permissions::policy::RulePolicy;
use rein_core::permissions::{AllowAll, PermissionPolicy, RuleAction};
use rein_core::skills::SkillSet;
use serde_json::{json, Value};
use support::agent::{outcome, scripted_config, tool_names, tool_results, turn, turn_with};
use support::{Reply, ScriptedServer, Step};

fn config(server: &ScriptedServer, root: &Path, policy: Arc<dyn PermissionPolicy>) -> AgentConfig {
    let mut config = scripted_config(server, root);
    config.client.idle_timeout = Duration::from_secs(10);
    config.policy = policy;
    config
}

/// The default rules and one more: `touch` asks.
fn touch_asks(root: &Path) -> Arc<dyn PermissionPolicy> {
    let rule = BashRuleEntry {
        pattern: "touch *".into(),
        action: RuleAction::Ask,
        file: root.join("config.toml"),
        project: false,
    };
    Arc::new(RulePolicy::new(root, &[rule], &[], None).unwrap())
}

fn args(v: Value) -> String {
    v.to_string()
}

fn task(description: &str) -> (&'static str, String) {
    ("task", args(json!({ "description": description })))
}

/// The subagents' events, in order.
fn sub_events(events: &[AgentEvent]) -> Vec<(String, SubagentEvent)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Subagent { task_id, event } => Some((task_id.clone(), event.clone())),
            _ => None,
        })
        .collect()
}

/// The id of the first `task` call.
fn task_id(events: &[AgentEvent]) -> String {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolCallStarted { id, name, .. } if name == "task" => Some(id.clone()),
            _ => None,
        })
        .expect("a task call")
}

/// A request's stored history: without the reminder the main agent appends to each of its
/// requests (a subagent's requests have none).
fn messages(request: &Value) -> Vec<Value> {
    let all: Vec<Value> = request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            let mut m = m.clone();
            if let Some(c) = m["content"].as_str() {
                m["content"] = Value::String(support::agent::without_reminder(c).to_string());
            }
            m
        })
        .collect();
    all
}

#[tokio::test]
async fn a_task_runs_in_its_own_context_and_only_its_answer_returns() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("retry.rs"),
        "const DELAY_MS: u64 = 250; // SECRET-DETAIL\n",
    )
    .unwrap();
    let (name, task_args) = task("Where is the retry delay set? Answer with path and line.");
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(name, &task_args)]),
        Reply::text_then_tool_calls(
            "Looking around first.",
            &[("read_file", &args(json!({"path": "retry.rs"})))],
        ),
        Reply::text("retry.rs:1 sets DELAY_MS = 250."),
        Reply::text("The delay is set in retry.rs, line 1."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, root, Arc::new(AllowAll))).unwrap();
    let events = turn(&mut handle, "How long is the retry delay?").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);

    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    // The main agent has `task`.
    assert!(tool_names(&requests[0]).contains(&"task".to_string()));

    // The subagent's first request: its own system prompt, the description alone, three
    // tools.
    let sub = messages(&requests[1]);
    assert_eq!(sub.len(), 2, "{sub:?}");
    assert_eq!(sub[0]["role"], "system");
    assert_eq!(
        sub[0]["content"],
        rein_core::agent::subagent::system_prompt(root, &SkillSet::empty())
    );
    assert!(sub[0]["content"]
        .as_str()
        .unwrap()
        .contains("cannot see the conversation"));
    assert_ne!(sub[0]["content"], messages(&requests[0])[0]["content"]);
    assert_eq!(sub[1]["role"], "user");
    assert_eq!(
        sub[1]["content"],
        "Where is the retry delay set? Answer with path and line."
    );
    assert_eq!(
        tool_names(&requests[1]),
        ["bash", "read_file", "read_skill"]
    );
    // The subagent gets no reminder; the main agent's requests carry one.
    assert!(!requests[1].to_string().contains("(rein context"));
    assert!(requests[0].to_string().contains("(rein context"));
    // Its second request carries its own read.
    assert!(requests[2].to_string().contains("SECRET-DETAIL"));

    // The main agent's next request: the task's result is the answer and nothing else of
    // the subagent's history.
    let main = messages(&requests[3]);
    let last = main.last().unwrap();
    assert_eq!(last["role"], "tool");
    assert_eq!(last["content"], "retry.rs:1 sets DELAY_MS = 250.");
    let text = requests[3].to_string();
    assert!(!text.contains("SECRET-DETAIL"), "{text}");
    assert!(!text.contains("Looking around first."), "{text}");
    assert_eq!(
        main.len(),
        4,
        "system, user, assistant(task), tool: {main:?}"
    );

    // The front end saw one task result, and the subagent's steps and call.
    let r = tool_results(&events);
    assert_eq!(r.len(), 1);
    assert_eq!(
        r[0],
        (
            "task".into(),
            "retry.rs:1 sets DELAY_MS = 250.".into(),
            false
        )
    );
    let subs = sub_events(&events);
    let id = task_id(&events);
    assert!(subs.iter().all(|(t, _)| *t == id), "{subs:?}");
    assert!(subs.iter().any(|(_, e)| matches!(
        e,
        SubagentEvent::ToolCallStarted { name, .. } if name == "read_file"
    )));
    // Its text is not streamed into the main transcript.
    let streamed: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, "The delay is set in retry.rs, line 1.");
}

#[tokio::test]
async fn a_subagent_cannot_write_or_start_a_subagent() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (name, task_args) = task("Check the build.");
    let (_, nested) = task("nested question");
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(name, &task_args)]),
        Reply::tool_calls(&[
            (
                "write_file",
                &args(json!({"path": "pwned.txt", "content": "x"})),
            ),
            ("task", &nested),
        ]),
        Reply::text("I could not change anything."),
        Reply::text("Done."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, root, Arc::new(AllowAll))).unwrap();
    let events = turn(&mut handle, "go").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    assert!(!root.join("pwned.txt").exists(), "nothing written");

    let finished: Vec<(String, String, bool)> = sub_events(&events)
        .into_iter()
        .filter_map(|(_, e)| match e {
            SubagentEvent::ToolFinished {
                name,
                result,
                is_error,
                ..
            } => Some((name, result, is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(
        finished,
        [
            (
                "write_file".to_string(),
                "Error: write_file is not available to a subagent; it can use bash, read_file, read_skill.".to_string(),
                true
            ),
            (
                "task".to_string(),
                "Error: task is not available to a subagent; it can use bash, read_file, read_skill.".to_string(),
                true
            ),
        ]
    );
    // The model read those errors; no second subagent asked the server anything.
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let sub = messages(&requests[2]);
    assert_eq!(sub.len(), 5, "system, user, assistant, two tool results");
    assert!(sub[3]["content"]
        .as_str()
        .unwrap()
        .starts_with("Error: write_file is not available to a subagent"));
    assert_eq!(
        messages(&requests[3]).last().unwrap()["content"],
        "I could not change anything."
    );
}

#[tokio::test]
async fn a_subagent_stops_at_its_step_limit_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (name, task_args) = task("Find every TODO.");
    let ls = args(json!({"command": "ls"}));
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(name, &task_args)]),
        Reply::text_then_tool_calls("Found one in a.rs.", &[("bash", &ls)]),
        Reply::tool_calls(&[("bash", &ls)]),
        Reply::tool_calls(&[("bash", &ls)]),
        // Never asked for if the limit holds.
        Reply::text("a subagent reply past the limit"),
    ])
    .await
    .unwrap();
    let mut cfg = config(&server, root, Arc::new(AllowAll));
    cfg.subagent_max_steps = 3;
    let mut handle = agent::spawn(cfg).unwrap();
    assert!(handle.send(AgentCommand::UserMessage("go".into())));
    // The main agent's last reply is queued once the subagent is done.
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(support::GIVE_UP, handle.events.recv())
            .await
            .unwrap()
            .unwrap();
        if matches!(event, AgentEvent::ToolFinished { .. }) {
            // 1 main + 3 subagent model calls, no more.
            assert_eq!(server.requests().len(), 4);
            assert_eq!(server.remaining(), 1);
        }
        let done = matches!(event, AgentEvent::TurnFinished { .. });
        events.push(event);
        if done {
            break;
        }
    }
    let r = tool_results(&events);
    assert_eq!(r.len(), 1);
    let (_, text, is_error) = &r[0];
    assert!(!is_error);
    assert!(
        text.starts_with("Note: the subagent stopped early: it used all 3 of its model calls (subagent.max_steps)"),
        "{text}"
    );
    assert!(text.contains("Found one in a.rs."), "{text}");
    let bash_runs = sub_events(&events)
        .iter()
        .filter(|(_, e)| matches!(e, SubagentEvent::ToolFinished { .. }))
        .count();
    assert_eq!(bash_runs, 2, "the last reply's calls are not run");
    assert!(sub_events(&events).iter().any(|(_, e)| matches!(
        e,
        SubagentEvent::Finished {
            steps: 3,
            stopped_early: true,
            ..
        }
    )));
    // The main agent went on with that result (the 5th reply).
    assert_eq!(
        messages(&server.requests()[4]).last().unwrap()["content"],
        text.as_str()
    );
}

#[tokio::test]
async fn a_subagents_command_goes_through_the_approval_flow() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (name, task_args) = task("Is the tree writable?");
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(name, &task_args)]),
        Reply::tool_calls(&[("bash", &args(json!({"command": "touch probe.txt"})))]),
        Reply::text("I was not allowed to check."),
        Reply::text("The subagent could not check."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, root, touch_asks(root))).unwrap();
    let events = turn_with(&mut handle, "check", |_| ApprovalDecision::Deny {
        feedback: Some("not now".into()),
    })
    .await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let asks: Vec<(&String, &String, &Option<String>)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ApprovalNeeded {
                id,
                summary,
                subagent,
                ..
            } => Some((id, summary, subagent)),
            _ => None,
        })
        .collect();
    assert_eq!(asks.len(), 1);
    let (id, summary, subagent) = asks[0];
    assert_eq!(summary, "bash: touch probe.txt");
    let task = task_id(&events);
    assert_eq!(subagent.as_ref(), Some(&task), "marked as a subagent's");
    assert!(id.starts_with(&format!("{task}/")), "{id}");
    assert!(!root.join("probe.txt").exists());
    // The subagent read the refusal.
    let requests = server.requests();
    let refusal = messages(&requests[2]).last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        refusal,
        "Error: bash was not run: approval was refused (not now). Do not retry the same action; choose another way or explain what you need."
    );
    // The jsonl form says so too.
    let ask = events
        .iter()
        .find(|e| matches!(e, AgentEvent::ApprovalNeeded { .. }))
        .unwrap();
    assert_eq!(
        serde_json::to_value(ask).unwrap()["subagent"],
        task.as_str()
    );
}

#[tokio::test]
async fn an_approval_answered_as_a_command_reaches_the_subagent() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (name, task_args) = task("Make a probe.");
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(name, &task_args)]),
        Reply::tool_calls(&[("bash", &args(json!({"command": "touch probe.txt"})))]),
        Reply::text("made it"),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, root, touch_asks(root))).unwrap();
    assert!(handle.send(AgentCommand::UserMessage("go".into())));
    loop {
        let event = tokio::time::timeout(support::GIVE_UP, handle.events.recv())
            .await
            .unwrap()
            .unwrap();
        match event {
            // Answer by command, naming the request (`TASK/CALL`).
            AgentEvent::ApprovalNeeded { id, .. } => {
                assert!(handle.send(AgentCommand::Approval {
                    id,
                    decision: ApprovalDecision::Approve,
                }));
            }
            AgentEvent::TurnFinished { outcome } => {
                assert_eq!(outcome, TurnOutcome::Completed);
                break;
            }
            _ => {}
        }
    }
    assert!(root.join("probe.txt").exists());
}

#[tokio::test]
async fn an_interrupt_settles_a_subagents_open_approval() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (name, task_args) = task("Make a probe.");
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(name, &task_args)]),
        Reply::tool_calls(&[("bash", &args(json!({"command": "touch probe.txt"})))]),
        Reply::text("made it"),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, root, touch_asks(root))).unwrap();
    assert!(handle.send(AgentCommand::UserMessage("go".into())));
    let mut asked = None;
    let mut finished = Vec::new();
    loop {
        let event = tokio::time::timeout(support::GIVE_UP, handle.events.recv())
            .await
            .unwrap()
            .unwrap();
        match event {
            AgentEvent::ApprovalNeeded { id, .. } => {
                asked = Some(id);
                assert!(handle.send(AgentCommand::Interrupt));
            }
            AgentEvent::ToolFinished { outcome, .. } => finished.push(outcome),
            AgentEvent::TurnFinished { outcome } => {
                assert_eq!(outcome, TurnOutcome::Interrupted);
                break;
            }
            _ => {}
        }
    }
    let asked = asked.expect("the subagent asked");
    assert!(asked.contains('/'), "a subagent's id is TASK/CALL: {asked}");
    assert_eq!(finished, [rein_core::agent::ToolOutcome::Interrupted]);
    // A late answer to the void request changes nothing, and the agent goes on.
    assert!(handle.send(AgentCommand::Approval {
        id: asked,
        decision: ApprovalDecision::Approve,
    }));
    assert!(!root.join("probe.txt").exists());
}

#[tokio::test]
async fn subagent_usage_is_its_own_and_not_the_main_agents() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (name, task_args) = task("Count the files.");
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(name, &task_args)]).with_usage(100, 10),
        Reply::tool_calls(&[("bash", &args(json!({"command": "ls"})))]).with_usage(2000, 20),
        Reply::text("There are none.").with_usage(3000, 30),
        Reply::text("None.").with_usage(400, 40),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, root, Arc::new(AllowAll))).unwrap();
    let events = turn(&mut handle, "how many files?").await;
    let main: Vec<(u64, u64)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Usage(u) => Some((u.prompt_tokens, u.completion_tokens)),
            _ => None,
        })
        .collect();
    assert_eq!(main, [(100, 10), (400, 40)], "only the main agent's calls");
    let subs = sub_events(&events);
    let per_call: Vec<(u64, u64)> = subs
        .iter()
        .filter_map(|(_, e)| match e {
            SubagentEvent::Usage(u) => Some((u.prompt_tokens, u.completion_tokens)),
            _ => None,
        })
        .collect();
    assert_eq!(per_call, [(2000, 20), (3000, 30)]);
    let total = subs
        .iter()
        .find_map(|(_, e)| match e {
            SubagentEvent::Finished { usage, steps, .. } => Some((*usage, *steps)),
            _ => None,
        })
        .expect("a Finished event");
    assert_eq!(
        total,
        (
            Usage {
                prompt_tokens: 5000,
                completion_tokens: 50,
                total_tokens: 5050,
                cached_tokens: None,
                cache_write_tokens: None,
                estimated: false,
            },
            2
        )
    );
}

#[tokio::test]
async fn tasks_of_one_reply_run_at_the_same_time() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (name, first) = task("first question");
    let (_, second) = task("second question");
    let mut slow = Reply::text("slow answer");
    if let support::Body::Sse(steps) = &mut slow.body {
        steps.insert(1, Step::Sleep(Duration::from_millis(800)));
    }
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(name, &first), (name, &second)]),
        // Whichever subagent asks first gets the slow reply.
        slow,
        Reply::text("fast answer"),
        Reply::text("both done"),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, root, Arc::new(AllowAll))).unwrap();
    let events = turn(&mut handle, "two things").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    // Run one after the other, the slow one would finish first.
    let r = tool_results(&events);
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].1, "fast answer", "{r:?}");
    assert_eq!(r[1].1, "slow answer", "{r:?}");
    // The main history answers both calls, in call order.
    let requests = server.requests();
    let main = messages(&requests[3]);
    assert_eq!(main.len(), 5, "{main:?}");
    let calls = main[2]["tool_calls"].as_array().unwrap();
    assert_eq!(main[3]["tool_call_id"], calls[0]["id"]);
    assert_eq!(main[4]["tool_call_id"], calls[1]["id"]);
}

#[tokio::test]
async fn an_interrupt_stops_a_running_subagent_and_its_command() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (name, task_args) = task("Wait a while.");
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(name, &task_args)]),
        Reply::tool_calls(&[(
            "bash",
            // A day: the turn ends only because the interrupt ended it.
            &args(json!({"command": "sleep 86400; touch late.txt"})),
        )]),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, root, Arc::new(AllowAll))).unwrap();
    assert!(handle.send(AgentCommand::UserMessage("go".into())));
    let mut events = Vec::new();
    loop {
        // A guard against a hang, not a claim about speed.
        let event = tokio::time::timeout(support::GIVE_UP, handle.events.recv())
            .await
            .unwrap()
            .unwrap();
        if let AgentEvent::Subagent {
            event: SubagentEvent::ToolCallStarted { .. },
            ..
        } = &event
        {
            tokio::time::sleep(Duration::from_millis(200)).await;
            assert!(handle.send(AgentCommand::Interrupt));
        }
        let done = matches!(event, AgentEvent::TurnFinished { .. });
        events.push(event);
        if done {
            break;
        }
    }
    assert_eq!(outcome(&events), TurnOutcome::Interrupted);
    let r = tool_results(&events);
    assert_eq!(r.len(), 1);
    assert!(r[0].1.contains("interrupted by the user"), "{r:?}");
    assert!(r[0].2);
}

/// Issue 12, minor: 2,000 `task` calls in one reply used to start hundreds of requests in
/// a second. At most `subagent.max_parallel` run at once; the others are queued, say so,
/// and all are answered, in call order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_beyond_the_parallel_limit_wait_their_turn() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let tasks: Vec<(&str, String)> = (0..12).map(|i| task(&format!("question {i}"))).collect();
    let calls: Vec<(&str, &str)> = tasks.iter().map(|(n, a)| (*n, a.as_str())).collect();
    let mut script = vec![Reply::tool_calls(&calls)];
    for _ in 0..12 {
        // Each subagent's answer takes a moment, so the ones allowed to run overlap.
        let mut slow = Reply::text("an answer");
        if let support::Body::Sse(steps) = &mut slow.body {
            steps.insert(1, Step::Sleep(Duration::from_millis(60)));
        }
        script.push(slow);
    }
    script.push(Reply::text("all answered"));
    let server = ScriptedServer::start(script).await.unwrap();
    let mut cfg = config(&server, root, Arc::new(AllowAll));
    cfg.subagent_max_parallel = 3;
    let mut handle = agent::spawn(cfg).unwrap();
    let events = turn(&mut handle, "twelve things").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    // How many ran at once, in the agent's own order of events: a subagent runs from its
    // first request to its `finished`, and the next one begins only once a slot is free.
    // (The server's count of open requests can see the next request arrive before its
    // own task has closed the last one, under load.)
    let mut running = 0usize;
    let mut most = 0usize;
    for (_, event) in sub_events(&events) {
        match event {
            SubagentEvent::RequestStarted { step: 1 } => running += 1,
            SubagentEvent::Finished { .. } => running = running.saturating_sub(1),
            _ => {}
        }
        most = most.max(running);
    }
    assert_eq!(most, 3, "at most 3 at once, and 3 did overlap");
    assert!(server.most_concurrent() >= 2, "the requests overlapped");
    let queued: Vec<String> = sub_events(&events)
        .into_iter()
        .filter(|(_, e)| matches!(e, SubagentEvent::Queued))
        .map(|(id, _)| id)
        .collect();
    assert_eq!(queued.len(), 9, "the nine beyond the limit say they wait");
    let results = tool_results(&events);
    assert_eq!(results.len(), 12);
    assert!(
        results.iter().all(|(_, text, _)| text == "an answer"),
        "{results:?}"
    );
    let requests = server.requests();
    let main = messages(requests.last().unwrap());
    let ids: Vec<&Value> = main[2]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["id"])
        .collect();
    let answered: Vec<&Value> = main[3..15].iter().map(|m| &m["tool_call_id"]).collect();
    assert_eq!(answered, ids, "answered in call order");
}

#[tokio::test]
async fn a_subagents_retry_is_reported_as_the_subagents() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (name, task_args) = task("What is here?");
    let server = ScriptedServer::start(vec![
        Reply::error(500, "main hiccup"),
        Reply::tool_calls(&[(name, &task_args)]),
        Reply::error(503, "subagent hiccup"),
        Reply::text("Nothing much."),
        Reply::text("Nothing much is here."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, root, Arc::new(AllowAll))).unwrap();
    let events = turn(&mut handle, "What is in the project?").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let reasons: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Retrying { reason, .. } => Some(reason.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(
        !reasons[0].starts_with("subagent: ") && reasons[0].contains("main hiccup"),
        "{reasons:?}"
    );
    assert!(
        reasons[1].starts_with("subagent: ") && reasons[1].contains("subagent hiccup"),
        "{reasons:?}"
    );
    let r = tool_results(&events);
    assert_eq!(r, [("task".into(), "Nothing much.".into(), false)]);
    assert_eq!(server.served(), 5);
}
