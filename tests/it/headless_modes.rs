//! `--mode` and `--yes` headless: the real binary against the scripted server.

use crate::support;

use std::ffi::OsString;
use std::path::Path;
use std::process::{Output, Stdio};

use serde_json::json;
use support::stderr;
use support::{Reply, ScriptedServer};
use tokio::process::Command;

async fn rein(home: &Path, project: &Path, base_url: &str, extra: &[&str]) -> Output {
    let mut args: Vec<OsString> = vec![
        "-p".into(),
        "go".into(),
        "--base-url".into(),
        base_url.into(),
        "--model".into(),
        "scripted".into(),
        "--cwd".into(),
        project.into(),
    ];
    args.extend(extra.iter().map(OsString::from));
    Command::new(env!("CARGO_BIN_EXE_rein"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("REIN_HOME", home.join("rein-home"))
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .args(args)
        .output()
        .await
        .unwrap()
}

/// The user's config turning the sandbox off.
fn sandbox_off(home: &Path) {
    let dir = home.join("rein-home");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), "[sandbox]\nmode = \"off\"\n").unwrap();
}

#[tokio::test]
async fn plan_mode_refuses_a_write_and_says_so() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let args = json!({"path": "x.txt", "content": "y"}).to_string();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("write_file", &args)]),
        Reply::text("the plan"),
    ])
    .await
    .unwrap();
    let out = rein(
        home.path(),
        project.path(),
        &server.base_url(),
        &["--mode", "plan"],
    )
    .await;
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("rein: plan mode:"), "{err}");
    assert!(err.contains("rein is in plan mode"), "{err}");
    assert!(!project.path().join("x.txt").exists());
}

#[tokio::test]
async fn yes_with_another_mode_and_auto_without_a_sandbox_are_errors() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![]).await.unwrap();
    let url = server.base_url();
    let out = rein(
        home.path(),
        project.path(),
        &url,
        &["--yes", "--mode", "plan"],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "--yes approves what would ask, which is --mode auto; it cannot go with --mode plan"
        ),
        "{}",
        stderr(&out)
    );
    let out = rein(home.path(), project.path(), &url, &["--mode", "fast"]).await;
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("invalid value 'fast'"),
        "{}",
        stderr(&out)
    );
    sandbox_off(home.path());
    let out = rein(home.path(), project.path(), &url, &["--mode", "auto"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--mode auto: auto mode needs the sandbox: sandbox.mode = \"off\""),
        "{}",
        stderr(&out)
    );
    assert!(server.requests().is_empty(), "nothing was sent");
}

#[tokio::test]
async fn yes_without_a_sandbox_approves_as_before_and_with_one_is_auto_mode() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let args = json!({"command": "sleep 0 && touch made"}).to_string();
    let replies = || vec![Reply::tool_calls(&[("bash", &args)]), Reply::text("done")];
    let server = ScriptedServer::start(replies()).await.unwrap();
    let out = rein(home.path(), project.path(), &server.base_url(), &["--yes"]).await;
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(project.path().join("made").exists(), "{err}");
    let sandboxed = !err.contains("commands run without a sandbox");
    if sandboxed {
        assert!(err.contains("rein: auto mode:"), "{err}");
        assert!(
            err.contains("auto-approved (auto mode): bash: sleep 0 && touch made"),
            "{err}"
        );
    } else {
        assert!(err.contains("approved by --yes"), "{err}");
    }
    // With the sandbox off by choice, --yes keeps its old meaning.
    std::fs::remove_file(project.path().join("made")).unwrap();
    sandbox_off(home.path());
    let server = ScriptedServer::start(replies()).await.unwrap();
    let out = rein(home.path(), project.path(), &server.base_url(), &["--yes"]).await;
    let err = stderr(&out);
    assert!(
        err.contains("approved by --yes: bash: sleep 0 && touch made"),
        "{err}"
    );
    assert!(!err.contains("auto mode"), "{err}");
    assert!(project.path().join("made").exists());
}

#[tokio::test]
async fn the_loop_guard_ends_a_headless_turn_even_with_yes() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    sandbox_off(home.path());
    std::fs::write(project.path().join("a.txt"), "hello\n").unwrap();
    let mut replies: Vec<Reply> = (0..10)
        .map(|_| Reply::tool_calls(&[("bash", r#"{"command":"cat a.txt"}"#)]))
        .collect();
    replies.push(Reply::text("never reached"));
    let server = ScriptedServer::start(replies).await.unwrap();
    let out = rein(home.path(), project.path(), &server.base_url(), &["--yes"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "refused: the model made this same call 3 times in a row already: bash: cat a.txt"
        ),
        "{err}"
    );
    assert!(err.contains("made the same call 4 times in a row"), "{err}");
    // Three ran, the fourth was refused; no request after it.
    assert_eq!(server.requests().len(), 4, "{err}");
}

#[tokio::test]
async fn headless_stops_background_commands_at_exit_names_them_and_exits_as_the_turn() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    sandbox_off(home.path());
    let args = json!({
        "command": "sleep 300 & echo $! > child.pid; exec sleep 300",
        "run_in_background": true
    })
    .to_string();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &args)]),
        Reply::text("it runs"),
    ])
    .await
    .unwrap();
    // Judged as any command: `sleep` needs approval, which --yes gives.
    let out = rein(home.path(), project.path(), &server.base_url(), &["--yes"]).await;
    let err = stderr(&out);
    // Not five minutes: the turn ended, and with it rein, while the command still ran
    // (stderr names it as running and stopped).
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("1 background command still running: bash-1"),
        "{err}"
    );
    assert!(
        err.contains("rein: stopped background command bash-1 at exit (pid "),
        "{err}"
    );
    let child: i32 = std::fs::read_to_string(project.path().join("child.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut alive = true;
    for _ in 0..300 {
        // SAFETY: signal 0 only checks that the process exists.
        alive = unsafe { libc::kill(child, 0) } == 0;
        if !alive {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(!alive, "the background command's child outlived rein -p");
}
