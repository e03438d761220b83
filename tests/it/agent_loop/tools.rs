//! Tool calls through the loop: a multi-step fix, malformed calls, two calls in one reply,
//! the todo list, and each edit's short diff.

use crate::support;

use rein_core::agent::{self, AgentCommand, AgentEvent, TurnOutcome};
use serde_json::json;
use support::agent::{outcome, tool_names, tool_results, turn};
use support::{Reply, ScriptedServer};

use super::{args, assert_history_valid, config, history, text_of};

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
