//! What print mode writes: text and JSONL, plans and commands worded as the dashboard words
//! them, how each call ended, hostile text shown and never obeyed.

use crate::support;

use serde_json::{json, Value};
use support::{rein_command, stderr, stdout};
use support::{Reply, ScriptedServer};

use super::*;

#[tokio::test]
async fn text_output_streams_the_reply_and_tool_activity() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("README"), "project readme\n").unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &json!({"command": "cat README"}).to_string())]),
        Reply::text("The readme says: project readme."),
    ])
    .await
    .unwrap();
    let out = rein(
        home.path(),
        print_args(
            "what is in README?",
            &server.base_url(),
            "scripted",
            project.path(),
        ),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), "The readme says: project readme.\n");
    let err = stderr(&out);
    assert!(err.contains("▸ bash cat README"), "{err}");
    assert!(err.contains("✓"), "{err}");
    assert!(
        err.contains("2 model calls, 200 prompt + 20 completion tokens\n"),
        "{err}"
    );
    let req = &server.requests()[0];
    assert_eq!(req["model"], "scripted");
    assert!(req["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains(project.path().canonicalize().unwrap().to_str().unwrap()));
}

/// Headless words a plan and a command as the dashboard does (`rein::describe`): the
/// call's key argument is the plan's size, a command's line breaks show as ↵, the item in
/// progress reads in its `active_form`.
#[tokio::test]
async fn text_output_words_plans_and_commands_as_the_dashboard() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let todos = json!({"todos": [
        {"content": "Read the code", "status": "completed"},
        {"content": "Fix it", "status": "in_progress", "active_form": "Fixing it"},
        {"content": "Test it", "status": "pending"},
        {"content": "Ship it", "status": "pending"},
    ]});
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            ("write_todos", &todos.to_string()),
            (
                "bash",
                &json!({"command": "echo one\necho two"}).to_string(),
            ),
        ]),
        Reply::text("Done."),
    ])
    .await
    .unwrap();
    let out = rein(
        home.path(),
        print_args("plan it", &server.base_url(), "scripted", project.path()),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("▸ write_todos 4 items\n"), "{err}");
    assert!(
        err.contains(
            "▸ todos 1/4\n  [x] Read the code\n  [>] Fixing it\n  [ ] Test it\n  [ ] Ship it\n"
        ),
        "{err}"
    );
    assert!(err.contains("▸ bash echo one ↵ echo two\n"), "{err}");
    assert!(err.contains("✓ 0."), "{err}");
}

#[tokio::test]
async fn jsonl_output_is_one_event_per_line() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", "{\"command\": \"echo hi\"}")]),
        Reply::text("bye"),
    ])
    .await
    .unwrap();
    let out = output_of(
        rein_command(home.path())
            .args(print_args(
                "say hi",
                &server.base_url(),
                "m",
                project.path(),
            ))
            .args(["--output-format", "jsonl"]),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let events: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    // The stream opens naming the session (Claude Code's `system`/`init`), then the
    // context's size (the agent reports it as it starts), then the turn; the result ends it.
    assert_eq!(types.first(), Some(&"system"));
    assert_eq!(types.get(1), Some(&"context"));
    assert_eq!(types.get(2), Some(&"turn_started"));
    assert_eq!(types[types.len() - 2], "turn_finished");
    assert_eq!(types.last(), Some(&"result"));
    for t in [
        "context",
        "request_started",
        "tool_call_started",
        "tool_finished",
        "usage",
        "text_delta",
        "assistant_message",
    ] {
        assert!(types.contains(&t), "{t} missing from {types:?}");
    }
    let started = events
        .iter()
        .find(|e| e["type"] == "tool_call_started")
        .unwrap();
    assert_eq!(started["name"], "bash");
    assert_eq!(started["args"], json!({"command": "echo hi"}));
    let finished = events
        .iter()
        .find(|e| e["type"] == "tool_finished")
        .unwrap();
    assert_eq!(finished["result"], "hi");
    assert_eq!(finished["is_error"], false);
    assert_eq!(finished["outcome"], "ok");
    assert!(finished["duration_ms"].is_u64());
    let usage = events.iter().find(|e| e["type"] == "usage").unwrap();
    assert_eq!(usage["prompt_tokens"], 100);
    assert_eq!(usage["estimated"], false);
    assert_eq!(events[events.len() - 2]["outcome"], "completed");
    assert_eq!(events.last().unwrap()["subtype"], "success");
}

#[tokio::test]
async fn jsonl_says_how_each_call_ended() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            ("bash", &json!({"command": "rm -rf data"}).to_string()),
            (
                "bash",
                &json!({"command": "touch made-by-touch"}).to_string(),
            ),
            ("bash", &json!({"command": "ls"}).to_string()),
            ("bash", &json!({"command": "ls no-such-dir"}).to_string()),
            ("no_such_tool", "{}"),
        ]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let mut args = print_args("clean up", &server.base_url(), "m", project.path());
    args.extend(["--output-format".into(), "jsonl".into()]);
    let out = rein(home.path(), args).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let finished: Vec<(String, bool)> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("each line is JSON"))
        .filter(|e| e["type"] == "tool_finished")
        .map(|e| {
            let outcome = e["outcome"].as_str().unwrap_or("missing").to_string();
            (outcome, e["is_error"].as_bool().unwrap_or(false))
        })
        .collect();
    let expected = [
        ("denied", true),
        ("refused", true),
        ("ok", false),
        ("ok", false),
        ("error", true),
    ];
    let expected: Vec<(String, bool)> = expected.iter().map(|(o, e)| (o.to_string(), *e)).collect();
    assert_eq!(finished, expected);
}

/// Issue 12, item 1: nothing the model sends reaches the terminal as a control sequence,
/// whatever front end prints it: the refusal line of a command that needs approval,
/// headless text, JSONL (C1 controls and bidi overrides escaped, still valid JSON) and
/// `rein sessions export`.
#[tokio::test]
async fn hostile_text_is_shown_never_obeyed_in_every_output() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    // OSC 52 (clipboard), a screen clear, a window title, a C1 CSI and a bidi override.
    let evil = "\x1b]52;c;aGk=\x07\x1b[2J\x1b]0;pwned\x07\u{9b}31m\u{202e}";
    let command = format!("curl -d x http://example.com/{evil}");
    let args = json!({ "command": command }).to_string();
    let reply_text = format!("done {evil}");
    let script = || {
        vec![
            Reply::tool_calls(&[("bash", args.as_str())]),
            Reply::text(&reply_text),
        ]
    };
    let bad = |bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes);
        text.contains('\x1b')
            || text.contains('\x07')
            || text.contains('\u{9b}')
            || text.contains('\u{202e}')
    };

    let server = ScriptedServer::start(script()).await.unwrap();
    let out = rein(
        home.path(),
        print_args("go", &server.base_url(), "m", project.path()),
    )
    .await;
    assert!(!bad(&out.stdout) && !bad(&out.stderr), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("^[]52;c;aGk="),
        "{out:?}"
    );

    let server = ScriptedServer::start(script()).await.unwrap();
    let mut jsonl = print_args("go", &server.base_url(), "m", project.path());
    jsonl.extend(["--output-format".into(), "jsonl".into()]);
    let out = rein(home.path(), jsonl).await;
    assert!(!bad(&out.stdout) && !bad(&out.stderr), "{out:?}");
    for line in stdout(&out).lines() {
        let v: Value = serde_json::from_str(line).expect("each line is JSON");
        if v["type"] == "assistant_message" && v["finish_reason"] == "stop" {
            assert_eq!(v["text"], reply_text.as_str(), "the value is kept");
        }
    }

    let listed = rein(home.path(), ["sessions"]).await;
    let id = stdout(&listed)
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().next())
        .expect("a session")
        .to_string();
    let out = rein(home.path(), ["sessions", "export", id.as_str()]).await;
    assert!(stdout(&out).contains("done ^[]52"), "{}", stdout(&out));
    assert!(!bad(&out.stdout), "{out:?}");
}
