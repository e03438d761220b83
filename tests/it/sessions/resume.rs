//! Resuming: history, todos and rules, a prefix allowed for the session, after a SIGKILL,
//! without an id in print mode, an edit's diff, a message delivered mid-turn.

use crate::support;

use std::time::{Duration, Instant};

use rein_core::agent::ToolOutcome;
use rein_core::agent::{
    self, AgentCommand, AgentEvent, ApprovalDecision, SessionSetup, TurnOutcome,
};
use rein_core::permissions::rules::prefix_pattern;
use rein_core::permissions::Grant;
use rein_core::session::SessionWriter;
use serde_json::json;
use support::agent::{spawn_recorded, turn_with};
use support::{Reply, ScriptedServer};

use super::{assert_valid, config, history, rein, turn};

#[tokio::test]
async fn a_session_records_and_resumes_history_todos_and_rules() {
    let home = tempfile::tempdir().unwrap();
    let first = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let todos = json!({"todos": [{"content": "Build it", "status": "in_progress", "active_form": "Building it"}]});
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            ("write_todos", &todos.to_string()),
            (
                "bash",
                &json!({"command": "make --version >/dev/null; echo built"}).to_string(),
            ),
        ]),
        Reply::text("Built."),
    ])
    .await
    .unwrap();
    let (mut handle, path) =
        spawn_recorded(config(&server, first.path(), home.path()), data.path());
    let events = turn(
        &mut handle,
        "build the project",
        ApprovalDecision::ApproveForSession,
    )
    .await;
    assert!(matches!(
        events.last(),
        Some(AgentEvent::TurnFinished {
            outcome: TurnOutcome::Completed
        })
    ));
    handle.send(AgentCommand::Rename("Build work".into()));
    handle.send(AgentCommand::Shutdown);
    tokio::time::timeout(support::GIVE_UP, handle.task)
        .await
        .unwrap()
        .unwrap();

    // Resume from another directory: the system prompt is fresh, the rest comes back.
    let second = tempfile::tempdir().unwrap();
    let (writer, loaded) = SessionWriter::resume(&path).unwrap();
    assert_eq!(loaded.title.as_deref(), Some("Build work"));
    assert_eq!(loaded.todos.len(), 1);
    assert_eq!(
        loaded.rules.len(),
        1,
        "the session rule: {:?}",
        loaded.rules
    );
    // Each result is recorded with how its call ended.
    let outcomes: Vec<_> = loaded.history.iter().filter_map(|m| m.outcome()).collect();
    assert_eq!(outcomes, [rein_core::agent::ToolOutcome::Ok; 2]);
    let server2 = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "bash",
            &json!({"command": "make --version >/dev/null; echo built"}).to_string(),
        )]),
        Reply::text("Again."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn_with_session(
        config(&server2, second.path(), home.path()),
        Some(SessionSetup {
            writer,
            resumed: Some(loaded),
            data_dir: data.path().to_path_buf(),
        }),
    )
    .unwrap();
    // The rule came back: the same command runs without asking (a refusal would show).
    let events = turn(
        &mut handle,
        "once more",
        ApprovalDecision::Deny { feedback: None },
    )
    .await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::ApprovalNeeded { .. })),
        "{events:?}"
    );
    let request = &server2.requests()[0];
    assert_valid(request);
    // How a call ended is rein's business, not the server's.
    assert!(!request.to_string().contains("\"outcome\""), "{request}");
    let messages = &history(request);
    let system = messages[0]["content"].as_str().unwrap();
    assert!(
        system.contains(&second.path().display().to_string()),
        "fresh system prompt"
    );
    assert!(!system.contains(&first.path().display().to_string()));
    assert_eq!(messages[1]["content"], "build the project");
    assert_eq!(messages.last().unwrap()["content"], "once more");
    assert_eq!(
        messages.len(),
        1 + 5 + 1,
        "user, assistant, 2 tool results, reply, user"
    );
    handle.send(AgentCommand::Shutdown);
}

/// "Allow for this session" on `git commit -m one` allows the prefix `git commit`: the
/// real agent and checker run a later commit with other arguments without asking, still
/// ask about another subcommand, still deny a push, and a resumed session has the prefix.
#[tokio::test]
async fn a_prefix_allowed_for_the_session_covers_later_commands_and_is_resumed() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let bash = |command: &str| json!({ "command": command }).to_string();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &bash("git commit -m one"))]),
        Reply::tool_calls(&[("bash", &bash("git commit --allow-empty -m 'two words'"))]),
        Reply::tool_calls(&[("bash", &bash("git commit-tree HEAD"))]),
        Reply::tool_calls(&[("bash", &bash("git push origin main"))]),
        Reply::text("Committed."),
    ])
    .await
    .unwrap();
    let (mut handle, path) =
        spawn_recorded(config(&server, project.path(), home.path()), data.path());
    let mut asked = Vec::new();
    let events = turn_with(&mut handle, "commit it", |summary| {
        asked.push(summary.to_string());
        if summary.contains("commit-tree") {
            ApprovalDecision::Deny { feedback: None }
        } else {
            ApprovalDecision::ApproveForSession
        }
    })
    .await;
    assert_eq!(
        asked,
        ["bash: git commit -m one", "bash: git commit-tree HEAD"],
        "{events:?}"
    );
    let offered: Vec<Vec<Grant>> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ApprovalNeeded { grants, .. } => Some(grants.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        offered[0],
        [Grant::Bash(prefix_pattern("git commit"))],
        "the prefix, not the exact command"
    );
    let outcomes: Vec<ToolOutcome> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolFinished { outcome, .. } => Some(*outcome),
            _ => None,
        })
        .collect();
    // The commits ran (git says there is no repository here, which is not the point).
    assert_eq!(
        outcomes,
        [
            ToolOutcome::Ok,
            ToolOutcome::Ok,
            ToolOutcome::Refused,
            ToolOutcome::Denied
        ]
    );
    handle.send(AgentCommand::Shutdown);
    tokio::time::timeout(support::GIVE_UP, handle.task)
        .await
        .unwrap()
        .unwrap();
    let (_, loaded) = SessionWriter::resume(&path).unwrap();
    assert_eq!(loaded.rules, [Grant::Bash(prefix_pattern("git commit"))]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_turn_then_continue_gives_a_valid_next_request() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let step = |n: usize| {
        Reply::tool_calls(&[(
            "bash",
            &json!({"command": format!("echo step {n} >> steps.txt; sleep 0.2")}).to_string(),
        )])
    };
    let mut replies: Vec<Reply> = (1..=40).map(step).collect();
    replies.push(Reply::text("never reached"));
    let server = ScriptedServer::start(replies).await.unwrap();
    let mut child = rein(home.path())
        .args([
            "-p",
            "do many steps",
            "--yes",
            "--base-url",
            &server.base_url(),
            "--model",
            "m",
            "--cwd",
        ])
        .arg(project.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let steps = project.path().join("steps.txt");
    let deadline = Instant::now() + support::GIVE_UP;
    while std::fs::read_to_string(&steps)
        .map(|s| s.lines().count())
        .unwrap_or(0)
        < 4
    {
        assert!(Instant::now() < deadline, "the turn never got going");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let done = std::fs::read_to_string(&steps).unwrap().lines().count();

    let server2 = ScriptedServer::start(vec![Reply::text("picked up")])
        .await
        .unwrap();
    let out = rein(home.path())
        .args([
            "-p",
            "where were we?",
            "--continue",
            "--base-url",
            &server2.base_url(),
            "--model",
            "m",
            "--cwd",
        ])
        .arg(project.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("continuing session"), "{err}");
    let request = &server2.requests()[0];
    assert_valid(request);
    // How a call ended is rein's business, not the server's.
    assert!(!request.to_string().contains("\"outcome\""), "{request}");
    let messages = &history(request);
    assert_eq!(messages[1]["content"], "do many steps");
    assert_eq!(messages.last().unwrap()["content"], "where were we?");
    // Every step that ran is in the history, each call answered (synthetically at most once).
    let results = messages.iter().filter(|m| m["role"] == "tool").count();
    assert!(
        results >= done - 1 && results <= done + 1,
        "{results} results for {done} steps"
    );
}

#[test]
fn headless_resume_without_an_id_is_refused_before_anything_runs() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let out = rein(home.path())
        .args([
            "-p",
            "hello",
            "--resume",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--cwd",
        ])
        .arg(project.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("headless --resume needs an ID; `rein sessions` lists them"),
        "{err}"
    );
    assert!(
        !home.path().join("rein-home/sessions").exists(),
        "no session file was created"
    );
}

/// An edit's short diff is recorded with the session, and a resumed transcript shows it
/// in the edit's cell again (issue 28: every in-project edit as a diff).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edits_diff_is_recorded_and_shown_again_when_resumed() {
    use rein::app::state::{App, Cell, SessionInfo};
    use rein::app::AppEvent;
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("notes.md"), "one\ntwo\nthree\n").unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "str_replace",
            &json!({"path": "notes.md", "old": "two\n", "new": "2\n"}).to_string(),
        )]),
        Reply::text("Edited."),
    ])
    .await
    .unwrap();
    let (mut handle, path) =
        spawn_recorded(config(&server, project.path(), home.path()), data.path());
    let events = turn(&mut handle, "fix the notes", ApprovalDecision::Approve).await;
    let shown = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::EditDiff { diff, .. } => Some(diff.clone()),
            _ => None,
        })
        .expect("the edit's diff");
    handle.send(AgentCommand::Shutdown);
    tokio::time::timeout(support::GIVE_UP, handle.task)
        .await
        .unwrap()
        .unwrap();

    let loaded = rein_core::session::load(&path).unwrap();
    let mut app = App::new(SessionInfo::default(), 128_000);
    rein::app::update::update(&mut app, AppEvent::Resumed(Ok(Box::new(loaded))));
    let cell = app
        .transcript
        .cells
        .iter()
        .find_map(|c| match c {
            Cell::Tool(t) if t.name == "str_replace" => Some(t),
            _ => None,
        })
        .expect("the edit's cell");
    assert_eq!(cell.diff.as_ref(), Some(&shown));
    assert_eq!((shown.added, shown.removed), (1, 1));
}

/// A message sent while a tool runs is delivered with its result; the session records
/// where, and a resumed transcript shows it there as the user's, as the dashboard did.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_delivered_mid_turn_shows_again_when_resumed() {
    use rein::app::state::{App, Cell, SessionInfo};
    use rein::app::AppEvent;
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "bash",
            &json!({"command": "sleep 1; echo built"}).to_string(),
        )]),
        Reply::text("Built; linting next."),
    ])
    .await
    .unwrap();
    let (mut handle, path) =
        spawn_recorded(config(&server, project.path(), home.path()), data.path());
    handle.send(AgentCommand::UserMessage("build it".into()));
    let mut sent_during = false;
    loop {
        let event = tokio::time::timeout(support::GIVE_UP, handle.events.recv())
            .await
            .expect("the turn goes on")
            .expect("the agent runs");
        match event {
            AgentEvent::ApprovalNeeded { id, .. } => {
                handle.send(AgentCommand::Approval {
                    id,
                    decision: ApprovalDecision::Approve,
                });
            }
            AgentEvent::ToolCallStarted { .. } if !sent_during => {
                sent_during = true;
                handle.send(AgentCommand::UserMessage("and lint it too".into()));
            }
            AgentEvent::TurnFinished { .. } => break,
            _ => {}
        }
    }
    handle.send(AgentCommand::Shutdown);
    tokio::time::timeout(support::GIVE_UP, handle.task)
        .await
        .unwrap()
        .unwrap();
    // The model got it with the result (one request after the tool call, no second turn).
    assert_eq!(server.requests().len(), 2);
    assert!(server.requests()[1]["messages"]
        .to_string()
        .contains("and lint it too"));

    let loaded = rein_core::session::load(&path).unwrap();
    let mut app = App::new(SessionInfo::default(), 128_000);
    rein::app::update::update(&mut app, AppEvent::Resumed(Ok(Box::new(loaded))));
    let order: Vec<String> = app
        .transcript
        .cells
        .iter()
        .filter_map(|c| match c {
            Cell::User(u) => Some(format!("user: {}", u.text)),
            Cell::Tool(t) => Some(format!("tool: {}", t.name)),
            Cell::Assistant(a) => Some(format!("assistant: {}", a.text)),
            _ => None,
        })
        .collect();
    assert_eq!(
        order,
        [
            "user: build it",
            "tool: bash",
            "user: and lint it too",
            "assistant: Built; linting next."
        ]
    );
}
