//! The rest of the host: the network off unless allowed, a private /tmp, no controlling
//! terminal, and the timeout killing everything in the sandbox.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rein_core::sandbox::SandboxSettings;

use super::{context, in_host_tmp, q, sandboxed, sh};

/// Try to connect from the sandbox to a listener on the host's 127.0.0.1. Returns the
/// command's output and whether the listener saw a connection.
async fn connect_to_host(network: bool) -> Option<(String, bool)> {
    let project = tempfile::tempdir().unwrap();
    let settings = SandboxSettings {
        network,
        ..SandboxSettings::default()
    };
    let sandbox = sandboxed(project.path(), settings, vec![]);
    let ctx = context(sandbox, Duration::from_secs(10));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let out = sh(
        &ctx,
        &format!(
            "bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' 2>/dev/null \
             && echo connected || echo refused"
        ),
    )
    .await
    .unwrap();
    let seen = listener.accept().is_ok();
    Some((out, seen))
}

pub(super) async fn the_network_is_off_unless_allowed() {
    let Some((out, seen)) = connect_to_host(false).await else {
        return;
    };
    assert_eq!(out, "refused");
    assert!(!seen, "the listener saw a connection from the sandbox");

    let Some((out, seen)) = connect_to_host(true).await else {
        return;
    };
    assert_eq!(out, "connected");
    assert!(seen, "with network = true the listener saw nothing");
}

pub(super) async fn tmp_is_private_and_readable_paths_show_through() {
    let project = tempfile::tempdir().unwrap();
    let host_file = tempfile::Builder::new()
        .prefix("rein-sandbox-host")
        .tempfile_in("/tmp")
        .unwrap();
    let data = in_host_tmp();
    std::fs::write(data.path().join("spill.txt"), "spilled output\n").unwrap();
    let sandbox = sandboxed(
        project.path(),
        SandboxSettings::default(),
        vec![
            data.path().to_path_buf(),
            PathBuf::from("/tmp/rein-no-such-dir"),
        ],
    );
    let ctx = context(sandbox, Duration::from_secs(10));
    let name = format!("rein-sandbox-own-{}", std::process::id());
    let d = q(data.path());
    let out = sh(
        &ctx,
        &format!(
            "echo x > /tmp/{name} && cat /tmp/{name}; \
             test -e {h} && echo host-tmp-visible || echo host-tmp-hidden; \
             cat {d}/spill.txt; touch {d}/new && echo data-written",
            h = q(host_file.path()),
        ),
    )
    .await
    .unwrap();
    assert!(
        out.starts_with("x\nhost-tmp-hidden\nspilled output\n"),
        "{out}"
    );
    assert!(!out.contains("data-written"), "{out}");
    assert!(!Path::new("/tmp").join(&name).exists());
    assert!(!data.path().join("new").exists());
}

pub(super) async fn no_controlling_terminal_inside() {
    let project = tempfile::tempdir().unwrap();
    let sandbox = sandboxed(project.path(), SandboxSettings::default(), vec![]);
    let ctx = context(sandbox, Duration::from_secs(10));
    let out = sh(
        &ctx,
        "sh -c 'exec 3</dev/tty' 2>/dev/null && echo opened || echo no-tty",
    )
    .await
    .unwrap();
    assert_eq!(out, "no-tty");
}

/// Host pids of processes whose command line is exactly `argv`.
fn host_pids(argv: &[&str]) -> Vec<i32> {
    let want: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == want))
        .collect()
}

/// Whether a process is running (a zombie waiting to be reaped counts as dead).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next());
        !matches!(state, None | Some('Z') | Some('X'))
    })
}

pub(super) async fn the_timeout_kills_everything_in_the_sandbox() {
    let project = tempfile::tempdir().unwrap();
    let sandbox = sandboxed(project.path(), SandboxSettings::default(), vec![]);
    let ctx = context(sandbox, Duration::from_secs(1));
    // Durations unique to this run, so the sleeps can be found in the host's /proc (pids
    // inside the sandbox are those of its own PID namespace). One escapes the process group
    // with setsid; the PID namespace still takes it down.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let durations: Vec<String> = (1..=3)
        .map(|i| format!("{}.{nanos:09}", 1000 * i + std::process::id() % 1000))
        .collect();
    let command = format!(
        "echo $$ > pid; sleep {} & setsid sleep {} & echo started; sleep {}",
        durations[0], durations[1], durations[2]
    );
    let watch = async {
        let mut found = Vec::new();
        for _ in 0..90 {
            tokio::time::sleep(Duration::from_millis(10)).await;
            found = durations
                .iter()
                .flat_map(|d| host_pids(&["sleep", d]))
                .collect();
            if found.len() == 3 {
                break;
            }
        }
        found
    };
    // Left alone the command runs for over 1000 s: ending with the timeout's error and
    // every sleep gone is the timeout's work.
    let (result, pids) = tokio::join!(sh(&ctx, &command), watch);
    let err = result.unwrap_err();
    assert!(err.starts_with("command timed out after 1 s"), "{err}");
    assert!(
        err.ends_with("Output before the timeout:\nstarted"),
        "{err}"
    );
    assert_eq!(
        pids.len(),
        3,
        "the sleeps were not all seen running: {pids:?}"
    );
    let sandbox_pid = std::fs::read_to_string(project.path().join("pid")).unwrap();
    assert!(!sandbox_pid.trim().is_empty());
    for pid in pids {
        let mut dead = false;
        for _ in 0..200 {
            if !alive(pid) {
                dead = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(dead, "sleep {pid} survived the timeout");
    }
}
