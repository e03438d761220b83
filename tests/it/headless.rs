//! The headless front end: the real `rein` binary against the scripted server, and
//! `headless::run` with a policy that asks.

use crate::support;

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::{Output, Stdio};
use std::sync::Arc;
use std::time::Duration;

use rein::headless::{self, HeadlessOptions, OutputFormat};
use rein_core::agent::{AgentConfig, ClientConfig};
use rein_core::permissions::{PermissionPolicy, ToolRequest, Verdict};
use serde_json::{json, Value};
use support::agent::agent_config;
use support::{rein_command, stderr, stdout};
use support::{Reply, ScriptedServer};
use tokio::process::Command;

/// Run a command to the end and collect its output.
async fn output_of(cmd: &mut Command) -> Output {
    tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("rein finished within 60 s")
        .expect("rein ran")
}

/// Run the binary with `args` in an isolated home.
async fn rein<I, S>(home: &Path, args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    output_of(rein_command(home).args(args)).await
}

/// The arguments of one print-mode turn: `-p PROMPT --base-url URL --model MODEL --cwd DIR`.
fn print_args(prompt: &str, base_url: &str, model: &str, cwd: &Path) -> Vec<OsString> {
    vec![
        "-p".into(),
        prompt.into(),
        "--base-url".into(),
        base_url.into(),
        "--model".into(),
        model.into(),
        "--cwd".into(),
        cwd.into(),
    ]
}

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
async fn unreachable_endpoint_exits_non_zero_with_a_clear_message() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".rein")).unwrap();
    std::fs::write(
        project.path().join(".rein/config.toml"),
        "[client]\nmax_tries = 2\n",
    )
    .unwrap();
    // A port nothing listens on: bind one, then free it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let out = rein(home.path(), print_args("hi", &url, "m", project.path())).await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    // Worded as the dashboard words it (`rein::describe::retry`).
    assert!(err.contains("rein: retrying in "), "{err}");
    assert!(err.contains("s (attempt 2 of 2): "), "{err}");
    assert!(err.contains("cannot reach the model server"), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("Backtrace"),
        "{err}"
    );
}

#[tokio::test]
async fn refused_key_exits_non_zero_with_the_servers_words() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::error(401, "Incorrect API key provided")])
        .await
        .unwrap();
    let out = rein(
        home.path(),
        print_args("hi", &server.base_url(), "m", project.path()),
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("401"), "{}", stderr(&out));
    assert!(stderr(&out).contains("Incorrect API key provided"));
}

#[tokio::test]
async fn missing_model_and_bad_config_are_one_line_errors() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = project.path().to_str().unwrap();
    let out = rein(
        home.path(),
        [
            "-p",
            "hi",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--cwd",
            cwd,
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no model configured"),
        "{}",
        stderr(&out)
    );

    std::fs::create_dir(project.path().join(".rein")).unwrap();
    std::fs::write(
        project.path().join(".rein/config.toml"),
        "[tools]\nbash_timeout_secs = \"soon\"\n",
    )
    .unwrap();
    let out = rein(home.path(), ["-p", "hi", "--model", "m", "--cwd", cwd]).await;
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("config.toml") && err.contains("bash_timeout_secs"),
        "{err}"
    );
}

#[tokio::test]
async fn config_command_shows_sources_and_masks_the_key() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let out = output_of(
        rein_command(home.path())
            .args([
                "config",
                "--cwd",
                project.path().to_str().unwrap(),
                "--model",
                "from-flag",
            ])
            .env("REIN_API_KEY", "sk-abcdefghijklmnopwxyz")
            .env("OPENAI_BASE_URL", "http://example.invalid/v1"),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains("sk-abcdefghijklmnopwxyz"), "{text}");
    assert!(text.contains("wxyz"), "{text}");
    let line = |key: &str| {
        text.lines()
            .find(|l| l.starts_with(key))
            .unwrap_or_else(|| panic!("{key} in {text}"))
            .to_string()
    };
    assert!(
        line("model").contains("from-flag") && line("model").contains("--model"),
        "{text}"
    );
    assert!(line("api_key").contains("REIN_API_KEY"), "{text}");
    assert!(line("base_url").contains("OPENAI_BASE_URL"), "{text}");
    assert!(
        line("context_window").contains("128000") && line("context_window").contains("default"),
        "{text}"
    );
}

struct AskForBash;

impl PermissionPolicy for AskForBash {
    fn check(&self, request: &ToolRequest<'_>) -> Verdict {
        if request.tool == "bash" {
            Verdict::Ask {
                reason: "bash asks in this test".into(),
                grants: Vec::new(),
            }
        } else {
            Verdict::Allow
        }
    }
}

async fn headless_with_ask(yes: bool) -> (i32, Vec<Value>, tempfile::TempDir) {
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", "{\"command\": \"touch made-it\"}")]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let config = AgentConfig {
        bash_timeout: Duration::from_secs(10),
        max_steps: 5,
        policy: Arc::new(AskForBash),
        ..agent_config(
            ClientConfig::new(server.base_url(), "", "m"),
            project.path(),
        )
    };
    let code = headless::run(
        config,
        HeadlessOptions {
            prompt: "make it".into(),
            format: OutputFormat::Text,
            yes,
            prices: None,
            mode: None,
            before: Vec::new(),
        },
    )
    .await;
    (code, server.requests(), project)
}

/// The last message of a request (its reminder, if it carries one, taken out).
fn last_stored(request: &Value) -> Value {
    support::agent::stored_messages(request)
        .pop()
        .expect("a message")
}

#[tokio::test]
async fn without_yes_an_ask_is_refused_and_the_model_told_why() {
    let (code, requests, project) = headless_with_ask(false).await;
    assert_eq!(code, 0);
    assert!(!project.path().join("made-it").exists());
    let last = last_stored(&requests[1]);
    let result = last["content"].as_str().unwrap();
    assert!(
        result.starts_with("Error: bash was not run: approval was refused"),
        "{result}"
    );
    assert!(result.contains("interactive session"), "{result}");
}

#[tokio::test]
async fn with_yes_an_ask_is_approved() {
    let (code, requests, project) = headless_with_ask(true).await;
    assert_eq!(code, 0);
    assert!(project.path().join("made-it").exists());
    assert_eq!(last_stored(&requests[1])["content"], "(no output)");
}

#[tokio::test]
async fn ctrl_c_interrupts_the_turn_and_leaves_nothing_running() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::tool_calls(&[(
        "bash",
        &json!({"command": "sleep 86399 & echo $! > child.pid; wait"}).to_string(),
    )])
    .without_usage()])
    .await
    .unwrap();
    let child = rein_command(home.path())
        .args(print_args("wait", &server.base_url(), "m", project.path()))
        .arg("--yes") // `sleep` asks under the default rules
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid_file = project.path().join("child.pid");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    // The pid in the file is the sandbox's own (a PID namespace); find the host's by its
    // unique command line instead.
    loop {
        if pid_file.exists() && !running_with_args(&["sleep", "86399"]).is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let rein_pid = child.id().unwrap() as i32;
    // SAFETY: kill(2) on a pid we spawned; no memory is involved.
    unsafe { libc::kill(rein_pid, libc::SIGINT) };
    let out = tokio::time::timeout(Duration::from_secs(5), child.wait_with_output())
        .await
        .expect("rein exits promptly after Ctrl-C")
        .unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(stderr(&out).contains("interrupted"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("(estimated: the server sent no usage)"),
        "{}",
        stderr(&out)
    );
    // SIGKILL was sent before rein exited; the kernel finishes it off asynchronously.
    let gone = std::time::Instant::now() + Duration::from_secs(2);
    while !running_with_args(&["sleep", "86399"]).is_empty() && std::time::Instant::now() < gone {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let left = running_with_args(&["sleep", "86399"]);
    assert!(
        left.is_empty(),
        "sleep 86399 survived Ctrl-C: pids {left:?}"
    );
}

/// Host pids of live (not zombie) processes whose command line is exactly `args`.
fn running_with_args(args: &[&str]) -> Vec<u32> {
    let want: Vec<u8> = args.iter().flat_map(|a| a.bytes().chain([0])).collect();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == want))
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .to_string();
            !stat.is_empty() && !state.starts_with('Z')
        })
        .collect()
}

#[tokio::test]
async fn commands_never_see_the_api_key_or_rein_variables() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &json!({"command": "env"}).to_string())]),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let out = output_of(
        rein_command(home.path())
            .args(print_args(
                "print env",
                &server.base_url(),
                "m",
                project.path(),
            ))
            .arg("--yes") // `env` asks under the default rules
            .env("REIN_API_KEY", "sk-secret-from-rein-env-1234")
            .env("OPENAI_API_KEY", "sk-secret-from-openai-env-5678")
            .env("OPENAI_ORG_ID", "org-visible-nowhere")
            .env("INNOCENT_COPY", "sk-secret-from-rein-env-1234")
            .env("HARMLESS_VARIABLE", "still-here"),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The key did reach the server, as a bearer token.
    assert!(server.request_headers()[0]
        .iter()
        .any(|(k, v)| k == "authorization" && v == "Bearer sk-secret-from-rein-env-1234"));
    let requests = server.requests();
    let env_output = last_stored(&requests[1])["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        env_output.contains("HARMLESS_VARIABLE=still-here"),
        "{env_output}"
    );
    for leaked in [
        "sk-secret",
        "org-visible-nowhere",
        "REIN_",
        "OPENAI_",
        "INNOCENT_COPY",
    ] {
        assert!(
            !env_output.contains(leaked),
            "{leaked} reached the command: {env_output}"
        );
    }
}

#[tokio::test]
async fn default_rules_deny_refuse_and_allow_through_the_real_binary() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join("data")).unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            ("bash", &json!({"command": "ls && rm -rf data"}).to_string()),
            ("bash", &json!({"command": "touch made-by-touch"}).to_string()),
            ("bash", &json!({"command": "ls"}).to_string()),
            (
                "write_file",
                &json!({"path": ".rein/config.toml", "content": "[[permissions.bash]]\npattern = \"*\"\naction = \"allow\"\n"}).to_string(),
            ),
        ]),
        Reply::text("done"),
    ])
    .await.unwrap();
    let out = rein(
        home.path(),
        print_args("clean up", &server.base_url(), "m", project.path()),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    let results: Vec<String> = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert!(
        results[0].starts_with("Error: bash was denied by the permission rules (`rm -rf data` matches deny rule `rm *`"),
        "{}",
        results[0]
    );
    assert!(project.path().join("data").is_dir(), "nothing ran");
    assert!(results[1].contains("interactive session"), "{}", results[1]);
    assert!(!project.path().join("made-by-touch").exists());
    assert!(results[2].contains("data"), "ls ran: {}", results[2]);
    assert!(
        results[3].starts_with("Error: write_file was denied"),
        "{}",
        results[3]
    );
    assert!(!project.path().join(".rein/config.toml").exists());
    assert!(
        stderr(&out).contains("refused (needs approval"),
        "{}",
        stderr(&out)
    );
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

/// Processes whose command line is `sleep MARK`.
fn sleepers(mark: &str) -> Vec<i32> {
    let want = format!("sleep\0{mark}\0");
    std::fs::read_dir("/proc")
        .map(|dir| {
            dir.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
                .filter(|pid| {
                    std::fs::read(format!("/proc/{pid}/cmdline"))
                        .is_ok_and(|c| c == want.as_bytes())
                })
                .collect()
        })
        .unwrap_or_default()
}

async fn until(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while !check() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Issue 12, item 4: without the sandbox, a command dies with rein, whether rein is
/// stopped by SIGTERM or SIGHUP (it ends the turn as Ctrl-C does) or killed by SIGKILL
/// (the command's shell has a parent-death signal).
#[tokio::test]
async fn commands_die_with_rein_on_sigterm_sighup_and_sigkill() {
    for (signal, mark) in [("TERM", "31337"), ("HUP", "31338"), ("KILL", "31339")] {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("rein-home")).unwrap();
        std::fs::write(
            home.path().join("rein-home/config.toml"),
            "[sandbox]\nmode = \"off\"\n",
        )
        .unwrap();
        let args = json!({ "command": format!("sleep {mark}") }).to_string();
        let server = ScriptedServer::start(vec![
            Reply::tool_calls(&[("bash", args.as_str())]),
            Reply::text("done"),
        ])
        .await
        .unwrap();
        let mut child = rein_command(home.path())
            .args(print_args("go", &server.base_url(), "m", project.path()))
            .arg("--yes")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        until("the command to start", || !sleepers(mark).is_empty()).await;
        let pid = child.id().unwrap().to_string();
        let status = std::process::Command::new("kill")
            .args([format!("-{signal}"), pid])
            .status()
            .unwrap();
        assert!(status.success());
        let exited = tokio::time::timeout(Duration::from_secs(10), child.wait())
            .await
            .expect("rein exits")
            .unwrap();
        if signal != "KILL" {
            assert_eq!(
                exited.code(),
                Some(if signal == "TERM" { 143 } else { 129 }),
                "{signal}"
            );
        }
        until(&format!("sleep {mark} to die after SIG{signal}"), || {
            sleepers(mark).is_empty()
        })
        .await;
    }
}

/// Issue 14: `rein config` says where the keymap comes from, and a bad entry of the
/// user's keymap is one warning naming the file, the mode and the key.
#[tokio::test]
async fn config_command_names_the_keymap_source() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = project.path().to_str().unwrap();
    let out = rein(home.path(), ["config", "--cwd", cwd]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).lines().any(|l| l == "keymap     built-in"),
        "{}",
        stdout(&out)
    );
    let rein_home = home.path().join("rein-home");
    std::fs::create_dir_all(&rein_home).unwrap();
    let keymap = rein_home.join("keymap.toml");
    std::fs::write(
        &keymap,
        "global = [\n  { on = \"f5\", action = \"help\" },\n  { on = \"ctrl-q\", action = \"quit\" },\n  { on = \"hyper-x\", action = \"help\" },\n]\n",
    )
    .unwrap();
    let out = rein(home.path(), ["config", "--cwd", cwd]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let expected = format!("keymap     built-in + {} (2 bindings)", keymap.display());
    assert!(
        stdout(&out).lines().any(|l| l == expected),
        "{}",
        stdout(&out)
    );
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "{}: mode global, key hyper-x: unknown key",
            keymap.display()
        )),
        "{err}"
    );
}

/// Every folder under `dir` (itself included) and every file in them, with their
/// permission bits.
fn modes_under(dir: &Path) -> Vec<(std::path::PathBuf, bool, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        out.push((
            path.clone(),
            meta.is_dir(),
            meta.permissions().mode() & 0o777,
        ));
        if meta.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap() {
                pending.push(entry.unwrap().path());
            }
        }
    }
    out
}

#[tokio::test]
async fn everything_rein_keeps_for_the_user_is_theirs_alone() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let data = home.path().join("rein-home");
    // A project server for `rein mcp allow` (it never runs here).
    std::fs::create_dir(project.path().join(".rein")).unwrap();
    std::fs::write(
        project.path().join(".rein/config.toml"),
        "[mcp_servers.tool]\ncommand = \"true\"\n",
    )
    .unwrap();
    // A long output is spilled; the next command reads the spill folder's and file's bits
    // while they exist (the folder goes when the turn ends).
    let look = format!(
        "stat -c '%a %F %n' {0}/spill {0}/spill/* {0}/spill/*/*",
        data.display()
    );
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &json!({"command": "seq 1 40000"}).to_string())]),
        Reply::tool_calls(&[("bash", &json!({ "command": look }).to_string())]),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let out = output_of(
        rein_command(home.path())
            .args(print_args("spill", &server.base_url(), "m", project.path()))
            .arg("--yes"),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    let spilled = last_stored(&requests[1])["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(spilled.contains("The whole output is in"), "{spilled}");
    let seen = last_stored(&requests[2])["content"]
        .as_str()
        .unwrap()
        .to_string();
    let lines: Vec<&str> = seen.lines().collect();
    assert_eq!(
        lines.len(),
        3,
        "the spill folder, the turn's folder, the file: {seen}"
    );
    for line in &lines {
        let expected = if line.contains("directory") {
            "700 "
        } else {
            "600 "
        };
        assert!(line.starts_with(expected), "{line}");
    }
    assert!(lines.iter().any(|l| l.contains("regular file")), "{seen}");

    let allow = output_of(
        rein_command(home.path())
            .args(["mcp", "allow", "tool", "--cwd"])
            .arg(project.path()),
    )
    .await;
    assert_eq!(allow.status.code(), Some(0), "{}", stderr(&allow));

    let found = modes_under(&data);
    let names: Vec<String> = found
        .iter()
        .map(|(p, _, _)| p.strip_prefix(&data).unwrap().display().to_string())
        .collect();
    assert!(names.iter().any(|n| n.ends_with(".jsonl")), "{names:?}");
    assert!(
        names.iter().any(|n| n == "trusted-mcp-servers.json"),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n == "spill"), "{names:?}");
    // The checkpoint record too (git's objects are read-only: 0400).
    assert!(
        names.iter().any(|n| n.starts_with("checkpoints/")),
        "{names:?}"
    );
    for (path, is_dir, mode) in &found {
        let record_object = path.components().any(|c| c.as_os_str() == "objects");
        let want = match (*is_dir, record_object && *mode == 0o400) {
            (true, _) => 0o700,
            (false, true) => 0o400,
            (false, false) => 0o600,
        };
        assert_eq!(*mode, want, "{} is {mode:o}", path.display());
    }
}

#[tokio::test]
async fn an_older_reins_data_folder_is_made_private_at_start() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let data = home.path().join("rein-home");
    let mine = home.path().join("rein-home/skills");
    for dir in ["", "sessions", "spill", "tmp", "skills"] {
        let dir = data.join(dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = output_of(
        rein_command(home.path())
            .args(["config", "--cwd"])
            .arg(project.path())
            .env("REIN_MODEL", "m")
            .env("REIN_BASE_URL", "http://127.0.0.1:9/v1"),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bits = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    for dir in ["", "sessions", "spill", "tmp"] {
        assert_eq!(bits(&data.join(dir)), 0o700, "{dir:?}");
    }
    // A folder of the user's own in it (their skills) is theirs to set.
    assert_eq!(bits(&mine), 0o755);
}

#[tokio::test]
async fn commands_never_see_a_secret_rein_can_recognise_unless_passed_through() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let key = "key-in-use-0123456789abcdef";
    std::fs::create_dir_all(home.path().join("rein-home")).unwrap();
    std::fs::write(
        home.path().join("rein-home/config.toml"),
        "[providers.corp]\nbase_url = \"http://corp.invalid/v1\"\napi_key_env = \"CORP_LLM\"\n\
         [mcp_servers.gh]\nurl = \"https://gh.invalid/mcp\"\nbearer_token_env = \"GH_BEARER\"\n\
         enabled = false\n",
    )
    .unwrap();
    std::fs::create_dir(project.path().join(".rein")).unwrap();
    std::fs::write(
        project.path().join(".rein/config.toml"),
        "[tools]\nenv_passthrough = [\"NPM_TOKEN\", \"SNEAKY\"]\n",
    )
    .unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &json!({"command": "env"}).to_string())]),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let out = output_of(
        rein_command(home.path())
            .args(print_args("env", &server.base_url(), "m", project.path()))
            .arg("--yes")
            .env("REIN_API_KEY", key)
            // By name.
            .env("DEEPSEEK_API_KEY", "deepseek-secret-value")
            .env("GITHUB_TOKEN", "github-token-value")
            .env("AWS_SECRET_ACCESS_KEY", "aws-secret-value")
            .env("SSH_AUTH_SOCK", "/tmp/ssh-agent-socket-value")
            // By value: the key in use, another provider's key, an MCP server's token,
            // a URL with a password.
            .env("INNOCENT_COPY", key)
            .env("WRAPPED", format!("Bearer {key}"))
            .env("CORP_LLM", "corp-provider-key-value")
            .env("GH_BEARER", "mcp-bearer-value")
            .env("COPY_OF_BEARER", "mcp-bearer-value")
            .env("DATABASE_URL", "postgres://app:db-password-value@db/app")
            // Passed through by the project: kept, but never the provider key.
            .env("NPM_TOKEN", "npm-token-passed")
            .env("SNEAKY", key)
            // What builds need.
            .env("CARGO_HOME", "/opt/cargo-home")
            .env("RUSTUP_TOOLCHAIN", "stable")
            .env("LANG", "C.UTF-8")
            .env("HARMLESS", "still-here"),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("passes NPM_TOKEN, SNEAKY to commands"),
        "{}",
        stderr(&out)
    );
    let seen = last_stored(&server.requests()[1])["content"]
        .as_str()
        .unwrap()
        .to_string();
    for kept in [
        "PATH=",
        "HOME=",
        "CARGO_HOME=/opt/cargo-home",
        "RUSTUP_TOOLCHAIN=stable",
        "LANG=C.UTF-8",
        "HARMLESS=still-here",
        "NPM_TOKEN=npm-token-passed",
    ] {
        assert!(seen.contains(kept), "{kept} is missing: {seen}");
    }
    for leaked in [
        key,
        "deepseek-secret-value",
        "github-token-value",
        "aws-secret-value",
        "ssh-agent-socket-value",
        "corp-provider-key-value",
        "mcp-bearer-value",
        "db-password-value",
        "SNEAKY",
    ] {
        assert!(
            !seen.contains(leaked),
            "{leaked} reached the command: {seen}"
        );
    }
}

/// A server that never says its window: a short prompt goes at once (the question still
/// open), a long one waits for the question to give up (two seconds) and then goes in the
/// configured window.
#[tokio::test]
async fn a_short_prompt_does_not_wait_for_a_window_probe_that_hangs() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("short answer"), Reply::text("long")])
        .await
        .unwrap();
    server.hang_props();
    let mut args = print_args("hello", &server.base_url(), "scripted", project.path());
    args.extend(["--output-format".into(), "jsonl".into()]);
    let out = rein(home.path(), &args).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(server.probes(), 1, "the server was asked");
    let lines = stdout(&out);
    // A prompt that waited would have the question give up (a `window_learnt`) before
    // its reply; one that went at once has it after its reply, if at all.
    let reply_at = lines
        .find("short answer")
        .unwrap_or_else(|| panic!("{lines}"));
    assert!(
        lines
            .find("\"window_learnt\"")
            .is_none_or(|learnt_at| learnt_at > reply_at),
        "the prompt waited for the window: {lines}"
    );

    // 20 000 characters are not clearly small: the request waits for the answer, which
    // never comes; after the two seconds it goes in the configured window.
    let started = std::time::Instant::now();
    let long = "word ".repeat(4_000);
    let mut args = print_args(&long, &server.base_url(), "scripted", project.path());
    args.extend(["--output-format".into(), "jsonl".into()]);
    let out = rein(home.path(), &args).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert!(started.elapsed() >= Duration::from_secs(2));
    let events: Vec<Value> = stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let at = |kind: &str| events.iter().position(|e| e["type"] == kind);
    let learnt = at("window_learnt").expect("the question gave up");
    assert_eq!(events[learnt]["window"], 128_000);
    assert!(events[learnt].get("url").is_none());
    assert!(learnt < at("request_started").expect("a request"));
    assert_eq!(server.requests().len(), 2);
}

/// Issue 25, item 3: a base URL that cannot work is a configuration error like any other:
/// exit 2, one line, and no session left behind.
#[tokio::test]
async fn a_base_url_that_is_not_a_url_is_a_configuration_error() {
    for (url, says) in [
        ("127.0.0.1:8080/v1", "is not a URL"),
        ("ftp://example.com/v1", "is not http:// or https://"),
    ] {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let out = rein(home.path(), print_args("hi", url, "m", project.path())).await;
        assert_eq!(out.status.code(), Some(2), "{url}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
        let sessions = home.path().join("rein-home/sessions");
        let left = std::fs::read_dir(&sessions).map(|d| d.count()).unwrap_or(0);
        assert_eq!(
            left,
            0,
            "{url}: a session was left in {}",
            sessions.display()
        );
    }
}
