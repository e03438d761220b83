//! Recording: a new conversation's new file, a full disk, a session open in another rein, a
//! read-only rein home, where a result is recorded, `rein sessions`' counts.

use crate::support;

use std::time::{Duration, Instant};

use rein_core::agent::{AgentCommand, AgentEvent, ApprovalDecision};
use rein_core::session::SessionWriter;
use serde_json::json;
use support::agent::{spawn_recorded, turn_with};
use support::{Reply, ScriptedServer};

use super::{assert_valid, config, rein, turn};

#[tokio::test]
async fn a_new_conversation_starts_a_new_session_file_and_says_so() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("one"), Reply::text("two")])
        .await
        .unwrap();
    let (mut handle, first) =
        spawn_recorded(config(&server, project.path(), home.path()), data.path());
    turn(&mut handle, "first topic", ApprovalDecision::Approve).await;
    handle.send(AgentCommand::NewConversation);
    let events = turn(&mut handle, "second topic", ApprovalDecision::Approve).await;
    let second = rein_core::session::list(data.path())
        .into_iter()
        .map(|s| s.path)
        .find(|p| *p != first)
        .expect("a second session file");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::SessionStarted { path, .. } if *path == second)),
        "the new file is announced: {events:?}"
    );
    let loaded = rein_core::session::load(&second).unwrap();
    assert_eq!(
        loaded.history.len(),
        2,
        "only the new conversation: {:?}",
        loaded.history
    );
    assert!(
        matches!(&loaded.history[0], rein_core::agent::Message::User { content, reminder: Some(_), .. } if content == "second topic"),
        "{:?}",
        loaded.history[0]
    );
    let old = rein_core::session::load(&first).unwrap();
    assert_eq!(old.history[0].text(), "first topic");
    assert_eq!(old.history.len(), 2);
}

/// A folder on a tmpfs of its own, mounted with `options` (it needs root), or why there
/// cannot be one here. Unmounted (lazily: the agent task may still hold a session file
/// open for a moment) when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
    mounted: bool,
}

impl Tmpfs {
    fn mount(options: &str) -> Result<Tmpfs, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(dir.path())
            .output()
            .map_err(|e| format!("mount cannot run: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "a tmpfs cannot be mounted here ({})",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Tmpfs { dir, mounted: true })
    }

    /// A folder nothing can be written in: a read-only tmpfs where the test may mount,
    /// else one without write permission (which only root would ignore).
    fn read_only() -> Result<Tmpfs, String> {
        if let Ok(ro) = Tmpfs::mount("ro,size=64k") {
            return Ok(ro);
        }
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555))
            .map_err(|e| e.to_string())?;
        let ro = Tmpfs {
            dir,
            mounted: false,
        };
        if std::fs::create_dir(ro.dir.path().join("probe")).is_ok() {
            return Err("no read-only folder can be made here".to_string());
        }
        Ok(ro)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        if self.mounted {
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(self.dir.path())
                .status();
        } else {
            use std::os::unix::fs::PermissionsExt;
            let _ =
                std::fs::set_permissions(self.dir.path(), std::fs::Permissions::from_mode(0o755));
        }
    }
}

/// Issue 12, item 10: when the disk fills, recording stops at the first failed write, so a
/// later resume gets a clean prefix of the conversation, never one with holes (later,
/// smaller entries that still fit used to be appended after the one that did not).
#[tokio::test]
async fn a_full_disk_stops_recording_at_a_clean_point() {
    let disk = match Tmpfs::mount("size=96k") {
        Ok(disk) => disk,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    // Each turn: a command whose 30 KB output fills the disk quickly, then a short answer.
    let mut script = Vec::new();
    for i in 0..6 {
        let args =
            json!({ "command": format!("head -c 30000 /dev/zero | tr '\\\\0' {i}") }).to_string();
        script.push(Reply::tool_calls(&[("bash", args.as_str())]));
        script.push(Reply::text(&format!("answer {i}")));
    }
    let server = ScriptedServer::start(script).await.unwrap();
    let mut cfg = config(&server, project.path(), home.path());
    cfg.context.cap_chars = 1_000_000;
    let (mut handle, path) = spawn_recorded(cfg, disk.dir.path());
    let mut errors = 0;
    for i in 0..6 {
        let events = turn_with(&mut handle, &format!("turn {i}"), |_| {
            rein_core::agent::ApprovalDecision::Approve
        })
        .await;
        errors += events
            .iter()
            .filter(|e| matches!(e, AgentEvent::RecordingStopped { message } if message.contains("recording stopped")))
            .count();
    }
    assert_eq!(errors, 1, "said once");
    let loaded = rein_core::session::load(&path).unwrap();
    let h = &loaded.history;
    // A clean prefix: every turn in it complete, in order, except possibly the last.
    let users: Vec<&str> = h
        .iter()
        .filter_map(|m| match m {
            rein_core::agent::Message::User { content, .. } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    let expected: Vec<String> = (0..users.len()).map(|i| format!("turn {i}")).collect();
    assert_eq!(users, expected, "turns missing from the middle");
    let synthetic = h
        .iter()
        .filter(|m| matches!(m, rein_core::agent::Message::Tool { content, .. } if content.starts_with("Error: not run") || content.contains("may have completed")))
        .count();
    assert!(
        synthetic <= 1,
        "results missing from the middle: {synthetic}"
    );
    assert!(
        h.len() < 24,
        "the disk was too big to fill: {} messages",
        h.len()
    );
}

/// The id in "rein: session ID (continue it with --resume ID)".
fn session_id_in(stderr: &str) -> String {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("rein: session "))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_default()
        .to_string()
}

/// Issue 12, item 2: two reins on one session. While one has it open, a second
/// `--continue` refuses and names the pid (the file is left alone), `rein sessions` marks
/// it, and `--fork` goes on in a copy; once the first is gone (even by SIGKILL) the
/// session can be continued again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_open_in_one_rein_is_refused_to_another_or_forked() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("first answer"),
        // The holder's turn: a reply that takes its time.
        Reply::sse(vec![support::Step::Sleep(Duration::from_secs(60))]),
        Reply::text("answer in the copy"),
        Reply::text("answer after the holder died"),
    ])
    .await
    .unwrap();
    let run = |args: &[&str]| {
        let mut cmd = rein(home.path());
        cmd.args(args)
            .args(["--base-url", &server.base_url(), "--model", "m", "--cwd"])
            .arg(project.path());
        cmd
    };
    let out = run(&["-p", "first question"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let id = session_id_in(&String::from_utf8_lossy(&out.stderr));
    assert!(!id.is_empty());
    let data = home.path().join("rein-home");
    let file = rein_core::session::session_path(&data, &id);

    let mut holder = run(&["-p", "hold it", "--continue"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + support::GIVE_UP;
    while server.requests().len() < 2 {
        assert!(
            Instant::now() < deadline,
            "the holder never asked the model"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let before = std::fs::read(&file).unwrap();

    let out = run(&["-p", "me too", "--continue"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("session {id} is open in rein pid {}", holder.id())),
        "{err}"
    );
    assert!(err.contains("--fork"), "{err}");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the file is untouched"
    );
    assert_eq!(server.requests().len(), 2, "nothing was sent");

    let list = run(&["sessions"]).output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    let line = list
        .lines()
        .find(|l| l.starts_with(&id))
        .unwrap_or_default();
    assert!(
        line.ends_with(&format!("(open in rein pid {})", holder.id())),
        "{list}"
    );

    let out = run(&["-p", "me too", "--continue", "--fork"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("answer in the copy"));
    let fork = session_id_in(&err);
    assert_ne!(fork, id, "{err}");
    let request = &server.requests()[2];
    assert_valid(request);
    let sent = request.to_string();
    assert!(sent.contains("first question") && sent.contains("first answer"));
    assert!(sent.contains("me too"));
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the original is untouched"
    );
    let copy = rein_core::session::load(&rein_core::session::session_path(&data, &fork)).unwrap();
    assert_eq!(copy.meta.forked_from.as_deref(), Some(id.as_str()));
    assert_eq!(copy.title.as_deref(), Some("first question (fork)"));
    assert_eq!(
        copy.transcript.first().map(|m| m.text()),
        Some("first question")
    );

    holder.kill().unwrap(); // SIGKILL: the kernel drops the lock; the pid file stays
    holder.wait().unwrap();
    let out = run(&["-p", "back again", "--resume", &id])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("answer after the holder died"));
    assert!(
        !rein_core::session::pid_path(&file).exists(),
        "a clean end removes the pid file"
    );
}

/// Issue 12, minor: a read-only REIN_HOME used to stop rein from starting. It runs, without
/// recording, and says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_rein_home_runs_without_recording_and_says_so() {
    let ro = match Tmpfs::read_only() {
        Ok(ro) => ro,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("answered anyway")])
        .await
        .unwrap();
    let out = rein(home.path())
        .env("REIN_HOME", ro.dir.path())
        .args([
            "-p",
            "hello",
            "--base-url",
            &server.base_url(),
            "--model",
            "m",
            "--cwd",
        ])
        .arg(project.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("answered anyway"));
    assert!(
        err.contains(
            "rein: warning: not recording this session: cannot create a session file under"
        ),
        "{err}"
    );
    assert!(!err.contains("continue it with --resume"), "{err}");
}

/// Issue 16, item 4: a tool's `ToolFinished` says where the session file holds its result,
/// so a front end can keep only the head of a long one and read the rest back.
#[tokio::test]
async fn a_finished_call_says_where_its_result_is_recorded() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let rows: String = (1..=400).map(|i| format!("row {i}\n")).collect();
    std::fs::write(project.path().join("long.txt"), rows).unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("read_file", r#"{"path":"long.txt"}"#)]),
        Reply::text("Read."),
    ])
    .await
    .unwrap();
    let (mut handle, path) =
        spawn_recorded(config(&server, project.path(), home.path()), data.path());
    let events = turn(&mut handle, "read long.txt", ApprovalDecision::Approve).await;
    let (id, result, stored) = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolFinished {
                id, result, stored, ..
            } => Some((id.clone(), result.clone(), stored.clone())),
            _ => None,
        })
        .expect("the call finished");
    let stored = stored.expect("recorded before the event");
    assert_eq!(&*stored.path, path.as_path());
    assert!(result.contains("row 400"), "{result}");
    assert_eq!(
        rein_core::session::read_result(&stored.path, stored.offset, &id).unwrap(),
        result
    );
    handle.send(AgentCommand::Shutdown);
}

/// `rein sessions` counts messages exactly, as the picker does, even when the session's
/// summary is behind its file (rein stopped before updating it): no `~N`.
#[test]
fn rein_sessions_counts_messages_exactly() {
    use rein_core::conversation::Message;
    use rein_core::session::{Entry, SessionMeta};
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("rein-home");
    let mut writer = SessionWriter::create(&data, SessionMeta::new("/p", "m")).unwrap();
    writer
        .append(&Entry::message(Message::user("one")))
        .unwrap();
    writer
        .append(&Entry::message(Message::assistant(
            "two".to_string(),
            Vec::new(),
        )))
        .unwrap();
    let path = writer.path().to_path_buf();
    drop(writer);
    // A message written after the summary, as by a rein killed before it updated it.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(
        &mut file,
        format!(
            "{{\"ts\":\"2026-12-05T00:00:00Z\",\"type\":\"message\",\"message\":{}}}\n",
            serde_json::to_string(&Message::user("three")).unwrap()
        )
        .as_bytes(),
    )
    .unwrap();
    let listed = rein_core::session::list(&data);
    assert!(
        matches!(
            listed[0].messages,
            rein_core::session::MessageCount::Approx(_)
        ),
        "{:?}",
        listed[0].messages
    );
    let out = rein(home.path()).arg("sessions").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("    3 msgs"), "{stdout}");
    assert!(!stdout.contains('~'), "{stdout}");
}
