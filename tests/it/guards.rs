//! The two guards through the real binary (issue 42): `rein -p` against the scripted
//! server. The loop guard counts what the model sends, whatever rein answers (an invalid
//! call sent forever ends the turn after a few, not at `agent.max_steps`; two calls going
//! round, or one whose numbers change while its result does not, are loops; polling, reading
//! different files and editing successive lines are not). The runaway guard stops a reply
//! that repeats one span for thousands of tokens, and never a table of zeros.

use crate::support;

use std::path::Path;
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rein_core::agent::repetition::CUT_MARK;
use serde_json::{json, Value};
use support::{chunk, Reply, Router, ScriptedServer, Step};
use support::{stderr, stdout};

/// `rein -p go` with `extra` arguments, the scripted server's model.
async fn rein(home: &Path, project: &Path, url: &str, extra: &[&str]) -> Output {
    rein_p(home, project, url, "go", extra).await
}

/// `rein -p PROMPT` with `extra` arguments, the scripted server's model.
async fn rein_p(home: &Path, project: &Path, url: &str, prompt: &str, extra: &[&str]) -> Output {
    let mut c = support::rein_in(home, project);
    c.args(["-p", prompt, "--base-url", url, "--model", "scripted"])
        .args(extra);
    let mut c = tokio::process::Command::from(c);
    c.kill_on_drop(true);
    c.output().await.unwrap()
}

/// The user's config turning the sandbox off (so `--yes` approves, as on a machine
/// without bubblewrap).
fn sandbox_off(home: &Path) {
    let dir = home.join("rein-home");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), "[sandbox]\nmode = \"off\"\n").unwrap();
}

/// A server that answers every request, forever, with `reply(n)` (n counts from 0).
async fn forever(reply: impl Fn(usize) -> Reply + Send + Sync + 'static) -> ScriptedServer {
    let n = AtomicUsize::new(0);
    let router: Router = Arc::new(move |_: &Value| Some(reply(n.fetch_add(1, Ordering::SeqCst))));
    ScriptedServer::start_routed(Vec::new(), router)
        .await
        .unwrap()
}

fn call(name: &str, args: &str) -> Reply {
    Reply::tool_calls(&[(name, args)])
}

/// A fresh home (sandbox off) and project with `a.txt` and `b.txt`.
fn setup() -> (tempfile::TempDir, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    sandbox_off(home.path());
    std::fs::write(project.path().join("a.txt"), "hello\n").unwrap();
    std::fs::write(project.path().join("b.txt"), "world\n").unwrap();
    (home, project)
}

#[tokio::test]
async fn the_same_rejected_call_sent_forever_ends_the_turn_after_three_answers() {
    // (tool, arguments, rein's flags, how rein rejects it)
    let cases = [
        ("bash", r#"{"command": "ls""#, &["--yes"][..], "invalid"),
        ("no_such_tool", r#"{"x": 1}"#, &["--yes"][..], "invalid"),
        ("bash", r#"{"command": 5}"#, &["--yes"][..], "invalid"),
        (
            "read_file",
            r#"{"path": ["a.txt"]}"#,
            &["--yes"][..],
            "invalid",
        ),
        // Nobody approves it headless without --yes.
        ("bash", r#"{"command": "rm -rf build"}"#, &[][..], "refused"),
        // Plan mode refuses a write.
        (
            "write_file",
            r#"{"path": "x.txt", "content": "y"}"#,
            &["--mode", "plan"][..],
            "refused",
        ),
    ];
    for (name, args, flags, how) in cases {
        let (home, project) = setup();
        let (name_c, args_c) = (name.to_string(), args.to_string());
        let server = forever(move |_| call(&name_c, &args_c)).await;
        let out = rein(home.path(), project.path(), &server.base_url(), flags).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{name} {args}: {err}");
        // Three answered with the error, the fourth ended the turn: four requests, not
        // agent.max_steps.
        let requests = server.requests();
        assert_eq!(requests.len(), 4, "{name} {args}: {err}");
        assert!(
            err.contains(&format!(
                "the turn was stopped: the model sent the same {how} call 4 times in a row"
            )),
            "{name} {args}: {err}"
        );
        // The model read how many times it sent it.
        let results = support::last_tool_results(&requests);
        assert_eq!(results.len(), 3, "{results:?}");
        assert!(!results[0].contains("(Note:"), "{results:?}");
        assert!(
            results[1].contains(&format!("you sent this same {how} call 2 times in a row")),
            "{results:?}"
        );
        assert!(
            results[2].contains(&format!("you sent this same {how} call 3 times in a row"))
                && results[2].contains("sending it once more ends the turn"),
            "{results:?}"
        );
        assert!(!project.path().join("x.txt").exists());
    }
}

/// A different broken call in every reply, forever (JSON cut short somewhere else, a new
/// invented tool, a wrong field type): ten are answered with their errors, the eleventh
/// ends the turn, and the model read from the sixth on that it would.
#[tokio::test]
async fn different_invalid_calls_sent_forever_end_the_turn_after_ten() {
    let (home, project) = setup();
    let server = forever(|n| match n % 3 {
        // Each its own, numbers aside (the same call with another number is the same).
        0 => call("bash", &format!("{{\"command\": \"ls {}", "a".repeat(n))),
        1 => call(&format!("invented_tool_{}", "x".repeat(n)), "{}"),
        _ => call(
            "read_file",
            &format!("{{\"path\": [\"{}\"]}}", "b".repeat(n)),
        ),
    })
    .await;
    let out = rein(home.path(), project.path(), &server.base_url(), &["--yes"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let requests = server.requests();
    assert_eq!(requests.len(), 11, "{err}");
    assert!(
        err.contains("the turn was stopped: the model sent 11 invalid calls in a row"),
        "{err}"
    );
    let results = support::last_tool_results(&requests);
    assert_eq!(results.len(), 10, "{results:?}");
    assert!(!results[4].contains("(Note:"), "{results:?}");
    assert!(
        results[5].contains("you sent 6 invalid calls in a row"),
        "{results:?}"
    );
    assert!(
        results[9].contains("you sent 10 invalid calls in a row")
            && results[9].contains("one more ends the turn"),
        "{results:?}"
    );
}

#[tokio::test]
async fn two_calls_going_round_are_a_loop_whether_they_run_or_not() {
    // Two reads that give the same each time: the seventh call is put to the user, whom
    // headless rein cannot ask.
    let (home, project) = setup();
    let server = forever(|n| {
        let file = if n % 2 == 0 { "a.txt" } else { "b.txt" };
        call(
            "bash",
            &json!({ "command": format!("cat {file}") }).to_string(),
        )
    })
    .await;
    let out = rein(home.path(), project.path(), &server.base_url(), &["--yes"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(server.requests().len(), 7, "{err}");
    assert!(
        err.contains(
            "refused: the model went round the same 2 calls 3 times in a row already: bash: cat a.txt"
        ),
        "{err}"
    );
    // Two invalid calls going round: the seventh ends the turn.
    let (home, project) = setup();
    let server = forever(|n| match n % 2 {
        0 => call("bash", "{broken"),
        _ => call("no_such_tool", "{}"),
    })
    .await;
    let out = rein(home.path(), project.path(), &server.base_url(), &["--yes"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(server.requests().len(), 7, "{err}");
    assert!(
        err.contains("the model sent the same invalid call 4 times in 7 calls"),
        "{err}"
    );
    // The same invalid call between commands whose output changes: counted all the same.
    let (home, project) = setup();
    let server = forever(|n| match n % 2 {
        0 => call("no_such_tool", &json!({ "attempt": n }).to_string()),
        _ => call("bash", r#"{"command": "echo x >> log; wc -l < log"}"#),
    })
    .await;
    let out = rein(home.path(), project.path(), &server.base_url(), &["--yes"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(server.requests().len(), 7, "{err}");
    assert!(
        err.contains("the model sent the same invalid call 4 times in 7 calls"),
        "{err}"
    );
    let results = support::last_tool_results(&server.requests());
    assert!(
        results[4].contains("you sent this same invalid call 3 times in 5 calls"),
        "{results:?}"
    );
}

#[tokio::test]
async fn a_call_whose_text_varies_a_little_while_its_result_does_not_is_a_loop() {
    let variants: [fn(usize) -> String; 4] = [
        // A counter.
        |n| json!({ "command": format!("cat a.txt # attempt {n}") }).to_string(),
        // A timestamp.
        |n| {
            json!({ "command": format!("cat a.txt # at 2025-06-01T10:{:02}:{:02}Z", n / 60, n % 60 * 7 % 60) }).to_string()
        },
        // A counter in a field the tool does not read.
        |n| json!({ "command": "cat a.txt", "attempt": n }).to_string(),
        // Spacing and key order.
        |n| match n % 2 {
            0 => r#"{"command":"cat a.txt","run_in_background":false}"#.to_string(),
            _ => "{ \"run_in_background\" : false ,\n  \"command\" : \"cat a.txt\" }".to_string(),
        },
    ];
    for variant in variants {
        let (home, project) = setup();
        let server = forever(move |n| call("bash", &variant(n))).await;
        let out = rein(home.path(), project.path(), &server.base_url(), &["--yes"]).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{}: {err}", variant(0));
        assert_eq!(server.requests().len(), 4, "{}: {err}", variant(0));
        assert!(
            err.contains("refused: the model made this same call 3 times in a row already"),
            "{err}"
        );
        assert!(
            err.contains("the model made the same call 4 times in a row and the next was refused"),
            "{err}"
        );
    }
}

/// Runs `calls` (one a request), then answers "done"; rein must complete the turn having
/// run every one.
async fn not_a_loop(project: &Path, home: &Path, calls: Vec<(String, String)>) {
    let count = calls.len();
    let mut replies: Vec<Reply> = calls.iter().map(|(n, a)| call(n, a)).collect();
    replies.push(Reply::text("done"));
    let server = ScriptedServer::start(replies).await.unwrap();
    let out = rein(home, project, &server.base_url(), &["--yes"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{calls:?}: {err}");
    assert_eq!(server.requests().len(), count + 1, "{err}");
    assert!(!err.contains("in a row"), "{err}");
}

#[tokio::test]
async fn polling_reading_different_files_and_editing_line_by_line_are_not_loops() {
    let (home, project) = setup();
    let p = project.path();
    // A command whose output changes each time.
    let poll = json!({ "command": "echo x >> log; wc -l < log" }).to_string();
    not_a_loop(p, home.path(), vec![("bash".into(), poll); 8]).await;
    // Different files, the same text in each.
    for i in 1..=8 {
        std::fs::write(p.join(format!("f{i}.txt")), "same\n").unwrap();
    }
    let reads = (1..=8)
        .map(|i| {
            (
                "read_file".into(),
                json!({ "path": format!("f{i}.txt") }).to_string(),
            )
        })
        .collect();
    not_a_loop(p, home.path(), reads).await;
    // Successive lines edited, each with the same message.
    let table: String = (1..=8).map(|i| format!("x[{i}] = 0\n")).collect();
    std::fs::write(p.join("t.txt"), &table).unwrap();
    let edits = (1..=8)
        .map(|i| {
            let args = json!({ "path": "t.txt", "old": format!("x[{i}] = 0"), "new": format!("x[{i}] = 1") });
            ("str_replace".into(), args.to_string())
        })
        .collect();
    not_a_loop(p, home.path(), edits).await;
    assert_eq!(
        std::fs::read_to_string(p.join("t.txt")).unwrap(),
        table.replace("= 0", "= 1")
    );
    // Lines deleted one by one from the end, with a command that prints nothing.
    let deletes = (1..=8)
        .rev()
        .map(|i| {
            (
                "bash".into(),
                json!({ "command": format!("sed -i '{i}d' t.txt") }).to_string(),
            )
        })
        .collect();
    not_a_loop(p, home.path(), deletes).await;
    assert_eq!(std::fs::read_to_string(p.join("t.txt")).unwrap(), "");
}

#[tokio::test]
async fn a_subagent_has_the_same_guard_and_so_do_its_tasks() {
    // The subagent sends one broken call forever; the main agent reads why it stopped.
    let (home, project) = setup();
    let subagent_requests = Arc::new(AtomicUsize::new(0));
    let counted = subagent_requests.clone();
    let router: Router = Arc::new(move |body: &Value| {
        let messages = body["messages"].as_array()?;
        let first_user = messages.iter().find(|m| m["role"] == "user")?;
        if first_user["content"].as_str()?.contains("look around") {
            counted.fetch_add(1, Ordering::SeqCst);
            return Some(call("read_file", "{\"path\": "));
        }
        if messages.iter().any(|m| m["role"] == "tool") {
            Some(Reply::text("the subagent got stuck"))
        } else {
            Some(call("task", r#"{"description": "look around"}"#))
        }
    });
    let server = ScriptedServer::start_routed(Vec::new(), router)
        .await
        .unwrap();
    let out = rein(home.path(), project.path(), &server.base_url(), &["--yes"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(subagent_requests.load(Ordering::SeqCst), 4, "{err}");
    let results = support::last_tool_results(&server.requests());
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0].contains("the subagent sent the same invalid call 4 times in a row"),
        "{results:?}"
    );

    // The main agent asks for that task forever: the fourth is not run.
    let (home, project) = setup();
    let subagent_requests = Arc::new(AtomicUsize::new(0));
    let counted = subagent_requests.clone();
    let router: Router = Arc::new(move |body: &Value| {
        let messages = body["messages"].as_array()?;
        let first_user = messages.iter().find(|m| m["role"] == "user")?;
        if first_user["content"].as_str()?.contains("look around") {
            counted.fetch_add(1, Ordering::SeqCst);
            return Some(call("read_file", "{\"path\": "));
        }
        Some(call("task", r#"{"description": "look around"}"#))
    });
    let server = ScriptedServer::start_routed(Vec::new(), router)
        .await
        .unwrap();
    let out = rein(home.path(), project.path(), &server.base_url(), &["--yes"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(subagent_requests.load(Ordering::SeqCst), 12, "{err}");
    assert_eq!(server.requests().len(), 12 + 4, "{err}");
    assert!(
        err.contains("the model asked for the same task 4 times in a row"),
        "{err}"
    );
}

/// A reply streaming `text` in pieces of `size` bytes, each event written on its own.
fn streamed(text: &str, size: usize) -> Reply {
    let mut steps = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut at = size.min(rest.len());
        while !rest.is_char_boundary(at) {
            at += 1;
        }
        let (piece, after) = rest.split_at(at);
        steps.push(Step::Data(chunk(json!({ "content": piece }), None)));
        steps.push(Step::Sleep(std::time::Duration::ZERO));
        rest = after;
    }
    steps.push(Step::Data(chunk(json!({}), Some("stop"))));
    steps.push(Step::Done);
    Reply::sse(steps)
}

#[tokio::test]
async fn a_table_of_zeros_streamed_in_small_pieces_is_a_reply_like_any_other() {
    let line = format!("    {}\n", "0x00, ".repeat(16).trim_end());
    let table = format!("static const uint8_t T[256] = {{\n{}}};\n", line.repeat(16));
    let base64 = "A".repeat(1366) + "==\n";
    let rows = format!("| a | b |\n|---|---|\n{}", "|   |   |\n".repeat(200));
    let nops = "    nop\n".repeat(200);
    for (what, text) in [
        ("a 256-entry table of 0x00", &table),
        ("base64 of a 1 KiB zero file", &base64),
        ("empty table rows", &rows),
        ("200 nop lines", &nops),
    ] {
        for size in [1, 3, 16] {
            let (home, project) = setup();
            let reply = format!("Here it is:\n\n```\n{text}```\n");
            let server = ScriptedServer::start(vec![streamed(&reply, size)])
                .await
                .unwrap();
            let out = rein(home.path(), project.path(), &server.base_url(), &[]).await;
            let err = stderr(&out);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{what}, pieces of {size}: {err}"
            );
            assert!(!err.contains("repeats itself"), "{err}");
            assert!(
                stdout(&out).contains(text.as_str()),
                "{what}: {}",
                stdout(&out)
            );
        }
    }
}

#[tokio::test]
async fn a_runaway_is_stopped_however_it_streams_and_the_session_goes_on() {
    let intro = "The command is: ```bash\nls";
    let runaway = format!("{intro}{}", " -l".repeat(15_000));
    // In pieces of a few bytes (then the stream stalls: it is the watch that ends it), and
    // all of it in one event written with the reply's end: the same verdict, the same cut.
    let mut slow = streamed(&runaway, 3);
    if let support::Body::Sse(steps) = &mut slow.body {
        steps.truncate(steps.len() - 2);
        steps.push(Step::Sleep(std::time::Duration::from_secs(120)));
        steps.push(Step::Done);
    }
    // One write: the event that completes the run ends the reply too.
    let at_once = Reply::sse(vec![
        Step::Data(chunk(json!({ "content": runaway }), None)),
        Step::Data(chunk(json!({}), Some("stop"))),
        Step::Done,
    ]);
    for reply in [slow, at_once] {
        let (home, project) = setup();
        let server = ScriptedServer::start(vec![reply, Reply::text("fine now")])
            .await
            .unwrap();
        let out = rein(home.path(), project.path(), &server.base_url(), &[]).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("stopped: the reply repeats itself"), "{err}");
        // The session goes on, and the model sees the cut reply, not the run.
        let out = rein_p(
            home.path(),
            project.path(),
            &server.base_url(),
            "again",
            &["--continue"],
        )
        .await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(stdout(&out).contains("fine now"), "{}", stdout(&out));
        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        let kept = requests[1]["messages"]
            .as_array()
            .and_then(|m| m.iter().find(|m| m["role"] == "assistant"))
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string();
        assert_eq!(kept, format!("{intro} -l -l -l{CUT_MARK}"));
    }
}
