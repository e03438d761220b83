//! `rein -p` as a Claude Code user types it: the real binary against the scripted server.
//! The positional prompt, piped standard input (added to the prompt, or the prompt itself,
//! capped, never waited for when nobody writes), `--output-format json` (one result object)
//! and the `jsonl`/`stream-json` stream from `system`/`init` to `result`, `-r` for
//! `--resume`, and `/init` headless.

use crate::support;

use std::path::Path;
use std::process::{Output, Stdio};

use serde_json::{json, Value};
use support::{stderr, stdout};
use support::{Reply, ScriptedServer};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

/// The binary with an isolated home, `--base-url` and `--model m` for `server`, in
/// `project`; stdin is closed unless the test says otherwise.
fn rein(home: &Path, project: &Path, server: &ScriptedServer) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rein"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("REIN_HOME", home.join("rein-home"))
        .args(["--base-url", &server.base_url(), "--model", "m", "--cwd"])
        .arg(project)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

/// `[section] key = value` lines for the user's config file.
fn user_config(home: &Path, toml: &str) {
    std::fs::create_dir_all(home.join("rein-home")).unwrap();
    std::fs::write(home.join("rein-home/config.toml"), toml).unwrap();
}

async fn run(cmd: &mut Command) -> Output {
    tokio::time::timeout(support::GIVE_UP, cmd.output())
        .await
        .expect("rein finished")
        .expect("rein ran")
}

/// Run with `input` written to a pipe on stdin, then closed.
async fn run_piped(cmd: &mut Command, input: &[u8]) -> Output {
    let mut child = cmd.stdin(Stdio::piped()).spawn().expect("rein starts");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // Written while rein reads (a large input would fill the pipe otherwise).
    let writer = tokio::spawn(async move {
        let _ = stdin.write_all(&input).await;
    });
    let out = tokio::time::timeout(support::GIVE_UP, child.wait_with_output())
        .await
        .expect("rein finished")
        .expect("rein ran");
    writer.await.unwrap();
    out
}

/// The user's message in the first request the server got.
fn first_prompt(server: &ScriptedServer) -> String {
    let request = &server.requests()[0];
    let user = support::agent::stored_messages(request)
        .into_iter()
        .rfind(|m| m["role"] == "user")
        .expect("a user message");
    support::agent::content(&user).to_string()
}

/// The session id stderr names at the end (`rein: session ID (continue it with ...)`).
fn session_named(err: &str) -> String {
    let line = err
        .lines()
        .find_map(|l| l.strip_prefix("rein: session "))
        .unwrap_or_else(|| panic!("no session line in {err}"));
    line.split_whitespace().next().unwrap().to_string()
}

// ---- --output-format json and the jsonl stream ------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_prints_one_result_object_and_the_activity_on_stderr() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text_then_tool_calls(
            "Looking.",
            &[("bash", &json!({"command": "echo hi"}).to_string())],
        ),
        Reply::text("All green."),
    ])
    .await
    .unwrap();
    let out = run(rein(home.path(), project.path(), &server).args([
        "-p",
        "check it",
        "--output-format",
        "json",
    ]))
    .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "one object, nothing else: {text}");
    let result: Value = serde_json::from_str(&text).expect("stdout is JSON");
    assert_eq!(result["type"], "result");
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["exit_code"], 0);
    assert_eq!(result["result"], "All green.");
    assert_eq!(result["session_id"], session_named(&err).as_str());
    assert_eq!(result["num_turns"], 2);
    assert!(result["duration_ms"].is_u64());
    // The scripted server reports 100 prompt and 10 completion tokens a call, no cache.
    assert_eq!(
        result["usage"],
        json!({"input_tokens": 200, "cache_read_input_tokens": 0,
               "cache_creation_input_tokens": 0, "output_tokens": 20, "estimated": false})
    );
    assert_eq!(result["total_cost_usd"], Value::Null);
    assert_eq!(result["errors"], json!([]));
    // What text prints on stderr, json prints there too.
    assert!(err.contains("▸ bash echo hi"), "{err}");
    assert!(err.contains("2 model calls"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_run_prints_the_result_with_its_error_and_exit_code() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let refused = || Reply::error(401, "Incorrect API key provided");
    let server = ScriptedServer::start(vec![refused(), refused()])
        .await
        .unwrap();
    for format in ["json", "jsonl"] {
        let out = run(rein(home.path(), project.path(), &server).args([
            "-p",
            "hi",
            "--output-format",
            format,
        ]))
        .await;
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let text = stdout(&out);
        let result: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(result["type"], "result", "{format}");
        assert_eq!(result["subtype"], "error_during_execution");
        assert_eq!(result["is_error"], true);
        assert_eq!(result["exit_code"], 1);
        let errors = result["errors"].to_string();
        assert!(errors.contains("Incorrect API key provided"), "{errors}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_step_limit_is_error_max_turns_with_exit_code_3() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    user_config(home.path(), "[agent]\nmax_steps = 2\n");
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &json!({"command": "echo one"}).to_string())]),
        Reply::tool_calls(&[("bash", &json!({"command": "echo two"}).to_string())]),
        Reply::text("never reached"),
    ])
    .await
    .unwrap();
    let out = run(rein(home.path(), project.path(), &server).args([
        "-p",
        "loop",
        "--output-format",
        "json",
    ]))
    .await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(result["subtype"], "error_max_turns");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["exit_code"], 3);
    assert_eq!(result["num_turns"], 2);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_json_stream_opens_with_init_and_ends_with_result() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("Hello.")])
        .await
        .unwrap();
    // Claude Code's spelling of the jsonl format.
    let out = run(rein(home.path(), project.path(), &server).args([
        "-p",
        "hi",
        "--output-format",
        "stream-json",
    ]))
    .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let events: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let init = &events[0];
    assert_eq!(init["type"], "system");
    assert_eq!(init["subtype"], "init");
    let id = session_named(&err);
    assert_eq!(init["session_id"], id.as_str());
    assert!(home
        .path()
        .join(format!("rein-home/sessions/{id}.jsonl"))
        .is_file());
    assert_eq!(init["model"], "m");
    assert_eq!(init["cwd"], project.path().to_str().unwrap());
    let tools: Vec<&str> = init["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    for tool in ["bash", "read_file", "write_file", "task"] {
        assert!(tools.contains(&tool), "{tool} missing from {tools:?}");
    }
    let result = events.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["session_id"], id.as_str());
    assert_eq!(result["result"], "Hello.");
    assert_eq!(
        events.iter().filter(|e| e["type"] == "result").count(),
        1,
        "one result"
    );
}

// ---- piped standard input -----------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn piped_stdin_goes_after_the_prompt_in_a_fenced_block() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("A missing semicolon.")])
        .await
        .unwrap();
    let log = "error[E0308]: mismatched types\n  --> src/main.rs:3:5\n";
    let out = run_piped(
        rein(home.path(), project.path(), &server).args(["-p", "why does this fail?"]),
        log.as_bytes(),
    )
    .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        first_prompt(&server),
        format!(
            "why does this fail?\n\nStandard input (piped to rein):\n```\n{}\n```",
            log.trim_end()
        )
    );
    assert!(
        err.contains(&format!("added {} bytes of standard input", log.len())),
        "{err}"
    );
    assert_eq!(stdout(&out), "A missing semicolon.\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn piped_stdin_alone_is_the_prompt_and_nothing_at_all_is_an_error() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("Done.")])
        .await
        .unwrap();
    let out = run_piped(
        rein(home.path(), project.path(), &server).arg("-p"),
        b"summarise the README\n",
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(first_prompt(&server), "summarise the README");
    // `-p` with a closed, empty stdin: said, not waited for.
    let out = run(rein(home.path(), project.path(), &server).arg("-p")).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("the prompt is empty"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn piped_stdin_over_the_cap_keeps_its_head_and_tail() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    user_config(home.path(), "[context]\nattach_total_bytes = 2000\n");
    let server = ScriptedServer::start(vec![Reply::text("The last test failed.")])
        .await
        .unwrap();
    // 1 MB of log: line 0 first, the failure last.
    let mut log: String = (0..20_000)
        .map(|n| format!("ok test {n:05} passed\n"))
        .collect();
    log.push_str("FAILED test 20000: expected 2, got 3\n");
    let out = run_piped(
        rein(home.path(), project.path(), &server).args(["-p", "which test failed?"]),
        log.as_bytes(),
    )
    .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let prompt = first_prompt(&server);
    assert!(prompt.starts_with("which test failed?\n\n"), "{prompt}");
    assert!(prompt.contains("ok test 00000 passed\n"), "{prompt}");
    assert!(
        prompt.contains("FAILED test 20000: expected 2, got 3\n```"),
        "{prompt}"
    );
    assert!(
        !prompt.contains("ok test 10000 passed"),
        "the middle stayed"
    );
    assert!(
        prompt.contains(" bytes of standard input cut from the middle"),
        "{prompt}"
    );
    assert!(prompt.len() < 2500, "{} bytes", prompt.len());
    assert!(
        err.contains(&format!("standard input was {} bytes", log.len())),
        "{err}"
    );
}

/// A parent that leaves stdin an open pipe and never writes (a harness that spawns with
/// every stream piped): with a prompt, rein goes on without it and says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pipe_nobody_writes_to_is_not_waited_for() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("Fine.")])
        .await
        .unwrap();
    let mut child = rein(home.path(), project.path(), &server)
        .args(["-p", "hello"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    // Held open, never written, until rein has exited.
    let _stdin = child.stdin.take().unwrap();
    let out = tokio::time::timeout(support::GIVE_UP, child.wait_with_output())
        .await
        .expect("rein did not wait for the pipe")
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("a pipe that said nothing"), "{err}");
    assert_eq!(first_prompt(&server), "hello");
}

// ---- the positional prompt, -r, /init ------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_positional_prompt_goes_with_p_and_a_subcommands_name_after_double_dash() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("One."), Reply::text("Two.")])
        .await
        .unwrap();
    let out = run(rein(home.path(), project.path(), &server).args(["explain main.rs", "-p"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(first_prompt(&server), "explain main.rs");
    // `config` alone would be the subcommand; after `--` it is the prompt.
    let out = run(rein(home.path(), project.path(), &server).args(["-p", "--", "config"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let second = &server.requests()[1];
    let last = support::agent::stored_messages(second).pop().unwrap();
    assert_eq!(support::agent::content(&last), "config");
    // Two prompts, or a prompt with a subcommand: usage errors.
    let out = run(rein(home.path(), project.path(), &server).args(["-p", "one", "two"])).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("two prompts"), "{}", stderr(&out));
    let out = run(rein(home.path(), project.path(), &server).args(["hello", "models"])).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("does not go with a subcommand"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_is_resume() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("The answer is 42."),
        Reply::text("You asked about the answer."),
    ])
    .await
    .unwrap();
    let out =
        run(rein(home.path(), project.path(), &server).args(["-p", "what is the answer?"])).await;
    let id = session_named(&stderr(&out));
    let out =
        run(rein(home.path(), project.path(), &server).args(["-p", "what did I ask?", "-r", &id]))
            .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains(&format!("continuing session {id}")), "{err}");
    let second = server.requests()[1].to_string();
    assert!(second.contains("what is the answer?"), "{second}");
}

/// `rein -p /init`: the prompt is /init's; the model's write of AGENTS.md asks, so without
/// `--yes` it is refused and the file is not written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_runs_headless_and_its_write_needs_approval() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "write_file",
            &json!({"path": "AGENTS.md", "content": "# Agents\n"}).to_string(),
        )]),
        Reply::text("I could not write it."),
    ])
    .await
    .unwrap();
    let out = run(rein(home.path(), project.path(), &server).args(["-p", "/init"])).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        first_prompt(&server),
        rein::app::commands::init_prompt(None)
    );
    assert!(err.contains("refused (needs approval"), "{err}");
    assert!(err.contains("is an instruction file"), "{err}");
    assert!(!project.path().join("AGENTS.md").exists());
}

/// Headless, a slash command that is neither `/init` nor a custom command is refused with a
/// usage error, as the dashboard refuses it, never sent to the model as a message: an
/// unknown `/fix-ci`, and the dashboard's own `/compact`. `/v2 notes` is not shaped like a
/// command and goes as a message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_or_dashboard_command_is_refused_headless() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("Noted.")])
        .await
        .unwrap();
    let out = run(rein(home.path(), project.path(), &server).args(["-p", "/fix-ci now"])).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("unknown command /fix-ci: headless runs /init and custom commands"),
        "{}",
        stderr(&out)
    );
    let out = run(rein(home.path(), project.path(), &server).args(["-p", "/compact"])).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("/compact is one of the dashboard's commands"),
        "{}",
        stderr(&out)
    );
    assert!(server.requests().is_empty(), "nothing reached the model");
    let out = run(rein(home.path(), project.path(), &server).args(["-p", "/v2 notes"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(first_prompt(&server), "/v2 notes");
}
