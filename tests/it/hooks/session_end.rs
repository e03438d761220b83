//! SessionEnd: once as `rein -p` ends with no daemon left, a hanging hook waited for only
//! its timeout, and on SIGTERM mid-turn.

use crate::support;

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use support::stderr;
use support::{script, Reply, ScriptedServer, Step};

use super::{command, gone, logged, logger, rein, user_hooks};

/// The pid written in `file` (waits for it, boundedly).
async fn pid_in(file: &Path) -> i32 {
    for _ in 0..1000 {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no pid in {}", file.display());
}

/// A hook that starts two daemons that leave its process group, `setsid` in the
/// background and a double fork, each writing its pid to a file in `dir` named after
/// `tag`; their pid files.
fn daemons(dir: &Path, tag: &str) -> (String, std::path::PathBuf, std::path::PathBuf) {
    let one = dir.join(format!("{tag}-setsid.pid"));
    let two = dir.join(format!("{tag}-double.pid"));
    let hook = script(
        dir,
        &format!("{tag}.sh"),
        &format!(
            "cat > /dev/null\n\
             setsid sh -c 'echo $$ > {one}; exec sleep 300' > /dev/null 2>&1 &\n\
             (setsid sh -c 'sleep 300 & echo $! > {two}' > /dev/null 2>&1 &)\n\
             for i in $(seq 500); do [ -s {one} ] && [ -s {two} ] && break; sleep 0.01; done\n\
             exit 0\n",
            one = one.display(),
            two = two.display()
        ),
    );
    (hook, one, two)
}

/// Issue 42: `rein -p` ends its session: the SessionEnd hooks run once, with Claude Code's
/// `reason` (`other`), after the turn is in the session file; one that fails does not
/// change the exit code. And what a hook started with `setsid` or a double fork does not
/// outlive its hook, nor rein.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_end_runs_once_as_rein_p_ends_and_no_daemon_of_a_hook_outlives_it() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let hooks_dir = tempfile::tempdir().unwrap();
    let log = hooks_dir.path().join("end.log");
    let end = logger(hooks_dir.path(), &log);
    let copy = hooks_dir.path().join("transcript.copy");
    let copier = script(
        hooks_dir.path(),
        "copy.sh",
        &format!(
            "path=$(sed -n 's/.*\"transcript_path\":\"\\([^\"]*\\)\".*/\\1/p'); cp \"$path\" {}\nexit 1\n",
            copy.display()
        ),
    );
    let (prompt_daemons, p1, p2) = daemons(hooks_dir.path(), "prompt");
    let (end_daemons, e1, e2) = daemons(hooks_dir.path(), "end");
    user_hooks(
        home.path(),
        json!({
            "UserPromptSubmit": [{"hooks": command(&prompt_daemons)}],
            "SessionEnd": [{"hooks": [
                {"type": "command", "command": end},
                {"type": "command", "command": copier},
                {"type": "command", "command": end_daemons}
            ]}]
        }),
    );
    let server = ScriptedServer::start(vec![Reply::text("all done here")])
        .await
        .unwrap();
    let out = rein(home.path(), project.path(), &server, &[]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "all done here");
    let ends = logged(&log);
    assert_eq!(ends.len(), 1, "{ends:?}");
    assert_eq!(ends[0]["hook_event_name"], "SessionEnd");
    assert_eq!(ends[0]["reason"], "other");
    // The session file the hook read holds the turn's reply.
    let transcript = std::fs::read_to_string(&copy).unwrap();
    assert!(transcript.contains("all done here"), "{transcript}");
    // The failing one is said, the exit code stays the turn's.
    assert!(
        err.contains("hook SessionEnd: failed: exit code 1"),
        "{err}"
    );
    for file in [p1, p2, e1, e2] {
        let pid = pid_in(&file).await;
        assert!(
            gone(pid).await,
            "{} ({pid}) outlived its hook",
            file.display()
        );
    }
}

/// A SessionEnd hook that hangs holds rein for its timeout at most, says so on stderr, and
/// dies with whatever it started; the exit code is the turn's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_session_end_hook_is_waited_for_its_timeout_only_and_said() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let hooks_dir = tempfile::tempdir().unwrap();
    let pid = hooks_dir.path().join("hang.pid");
    let hang = script(
        hooks_dir.path(),
        "hang.sh",
        &format!(
            "setsid sh -c 'echo $$ > {}; exec sleep 300' > /dev/null 2>&1 &\nsleep 300\n",
            pid.display()
        ),
    );
    user_hooks(
        home.path(),
        json!({"SessionEnd": [{"hooks": [{"type": "command", "command": hang, "timeout": 2}]}]}),
    );
    let server = ScriptedServer::start(vec![Reply::text("done")])
        .await
        .unwrap();
    let out = rein(
        home.path(),
        project.path(),
        &server,
        &["--output-format", "json"],
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    // stdout's one line is still the result.
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["result"], "done");
    assert!(
        err.contains("waiting for the SessionEnd hooks to finish (at most 2.0s"),
        "{err}"
    );
    assert!(err.contains("hook SessionEnd: failed: timed out"), "{err}");
    let pid = pid_in(&pid).await;
    assert!(gone(pid).await, "the hook's daemon ({pid}) outlived it");
}

/// SIGTERM in the middle of a turn: the turn stops, the SessionEnd hooks run (reason
/// `other`), and rein exits as a signal's end says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_turn_runs_the_session_end_hooks() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let hooks_dir = tempfile::tempdir().unwrap();
    let log = hooks_dir.path().join("end.log");
    let end = logger(hooks_dir.path(), &log);
    user_hooks(
        home.path(),
        json!({"SessionEnd": [{"hooks": command(&end)}]}),
    );
    let server = ScriptedServer::start(vec![Reply::sse(vec![Step::Sleep(Duration::from_secs(
        120,
    ))])])
    .await
    .unwrap();
    let child = support::rein_in(home.path(), project.path())
        .args([
            "-p",
            "go",
            "--base-url",
            &server.base_url(),
            "--model",
            "scripted",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    for _ in 0..1000 {
        if !server.requests().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(server.requests().len(), 1, "the request never came");
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: a signal to the child this test started.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(143), "{err}");
    let ends = logged(&log);
    assert_eq!(ends.len(), 1, "{ends:?}");
    assert_eq!(ends[0]["reason"], "other");
}
