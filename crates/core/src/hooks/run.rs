//! Running one command hook, so that it can never hang rein.
//!
//! The command runs as `sh -c COMMAND` in the project root (the shell and the hook's PATH
//! from PATH's absolute folders only), outside the sandbox (hooks are
//! the user's own programs, run as the user), in a session and process group of its own
//! that dies with rein (the parent-death signal). Its stdin gets the payload, one JSON
//! object, and is closed after it (a hook that reads to the end of its input returns; one
//! that never reads cannot block the writer, which runs on its own). stdout and stderr are
//! read at once, each up to [`MAX_OUTPUT`]. When the timeout passes the whole group is
//! killed; when the shell exits, what is left in the pipes is read for a moment and then
//! the group is killed too, so an orphan that keeps stdout open cannot hold the turn.
//! "The group" is the group and whatever its members started that left it
//! ([`crate::host::process_tree`]): a hook's `setsid` daemon dies with the hook, at its end, its
//! timeout, or when rein stops while it runs.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

/// The most bytes kept of a hook's stdout, and of its stderr.
pub const MAX_OUTPUT: usize = 1024 * 1024;
/// How long output is still read after the shell exits.
const GRACE: Duration = Duration::from_millis(100);

/// How a hook run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// The shell exited with this code.
    Exit(i32),
    /// Killed by a signal (not rein's timeout).
    Signal(i32),
    /// Its timeout passed; its group was killed.
    TimedOut,
    /// It could not start (the reason).
    NotStarted(String),
}

/// One hook run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    pub ended: Ended,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
}

/// Run `command` in `root` with `payload` on stdin, `env` added to rein's environment, for
/// at most `timeout`.
pub async fn run(
    command: &str,
    root: &Path,
    payload: &[u8],
    env: &[(&str, &str)],
    timeout: Duration,
) -> Ran {
    let started = Instant::now();
    let not_started = |why: String| Ran {
        ended: Ended::NotStarted(why),
        stdout: String::new(),
        stderr: String::new(),
        took: started.elapsed(),
    };
    // The shell, and what the hook's own command line finds by name, come from the
    // absolute folders of PATH only: the hook runs in the project, where a cloned
    // repository could plant an `sh` or a `jq` for a `.` in PATH (`crate::host::program_path`).
    let path = std::env::var_os("PATH").unwrap_or_default();
    let shell = crate::host::program_path::lookup("sh", Some(&path))
        .unwrap_or_else(|| std::path::PathBuf::from("/bin/sh"));
    let mut cmd = tokio::process::Command::new(shell);
    cmd.env("PATH", crate::host::program_path::absolute_entries(&path));
    cmd.arg("-c")
        .arg(command)
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (key, value) in env {
        cmd.env(key, value);
    }
    // A session and process group of its own (no terminal to prompt on), dying with
    // rein, as a `bash` command's.
    // SAFETY: the closure runs in the child between fork and exec and calls only setsid
    // and prctl, which are async-signal-safe.
    unsafe {
        cmd.pre_exec(crate::tools::bash::new_session);
    }
    // What the hook starts carries its mark: what leaves its group dies with it too.
    let mark = crate::host::process_tree::mark(&mut cmd);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => return not_started(format!("sh could not start in {}: {e}", root.display())),
    };
    let Some(pgid) = child
        .id()
        .and_then(|pid| libc::pid_t::try_from(pid).ok())
        .filter(|&pid| pid > 1)
    else {
        return not_started("its process id is unknown".into());
    };
    mark.register(pgid);
    // However this run ends (returned, or dropped because rein stops), whatever the hook
    // started goes with it.
    let group = Group::new(pgid);
    let kill_group = || group.kill();
    // The payload goes in on its own task: a hook that never reads cannot block rein.
    if let Some(mut stdin) = child.stdin.take() {
        let payload = payload.to_vec();
        tokio::spawn(async move {
            let _ = stdin.write_all(&payload).await;
            // Dropped here: the hook sees the end of its input.
        });
    }
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        kill_group();
        return not_started("its output could not be read".into());
    };
    let mut out = Pipe::new(stdout);
    let mut err = Pipe::new(stderr);
    let deadline = started + timeout;
    let status = loop {
        tokio::select! {
            () = out.read(), if !out.done => {}
            () = err.read(), if !err.done => {}
            status = child.wait() => break Some(status),
            () = tokio::time::sleep_until(deadline) => break None,
        }
    };
    let ended = match status {
        None => {
            kill_group();
            let _ = tokio::time::timeout(Duration::from_secs(1), child.wait()).await;
            Ended::TimedOut
        }
        Some(Err(e)) => {
            kill_group();
            Ended::NotStarted(format!("could not wait for it: {e}"))
        }
        Some(Ok(status)) => match (status.code(), status.signal()) {
            (Some(code), _) => Ended::Exit(code),
            (None, Some(signal)) => Ended::Signal(signal),
            (None, None) => Ended::Exit(-1),
        },
    };
    // What is left in the pipes, for a moment; then whatever the hook left running goes.
    let stop = Instant::now() + GRACE;
    while !(out.done && err.done) {
        tokio::select! {
            () = out.read(), if !out.done => {}
            () = err.read(), if !err.done => {}
            () = tokio::time::sleep_until(stop) => break,
        }
    }
    kill_group();
    Ran {
        ended,
        stdout: out.text(),
        stderr: err.text(),
        took: started.elapsed(),
    }
}

/// The hook's process group, and what its members started: killed when dropped.
struct Group {
    pgid: libc::pid_t,
    killed: std::sync::atomic::AtomicBool,
}

impl Group {
    fn new(pgid: libc::pid_t) -> Group {
        Group {
            pgid,
            killed: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn kill(&self) {
        crate::host::process_tree::kill(self.pgid);
        self.killed
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.killed.load(std::sync::atomic::Ordering::Relaxed) {
            self.kill();
        }
    }
}

/// One of the hook's output pipes, read up to [`MAX_OUTPUT`] (the rest is read and
/// dropped, so the hook is never blocked on a full pipe).
struct Pipe<R> {
    reader: R,
    kept: Vec<u8>,
    buf: Vec<u8>,
    done: bool,
}

impl<R: AsyncRead + Unpin> Pipe<R> {
    fn new(reader: R) -> Self {
        Pipe {
            reader,
            kept: Vec::new(),
            buf: vec![0; 16 * 1024],
            done: false,
        }
    }

    async fn read(&mut self) {
        match self.reader.read(&mut self.buf).await {
            Ok(0) | Err(_) => self.done = true,
            Ok(n) => {
                let room = MAX_OUTPUT.saturating_sub(self.kept.len());
                self.kept.extend_from_slice(&self.buf[..n.min(room)]);
            }
        }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.kept).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn sh(command: &str, payload: &str, timeout: Duration) -> Ran {
        let dir = tempfile::tempdir().unwrap();
        run(
            command,
            dir.path(),
            payload.as_bytes(),
            &[("REIN_X", "1")],
            timeout,
        )
        .await
    }

    #[tokio::test]
    async fn the_payload_goes_in_and_the_output_and_code_come_out() {
        let ran = sh(
            "cat; echo; echo \"x=$REIN_X\"; echo oops >&2; exit 2",
            "{\"a\":1}",
            Duration::from_secs(5),
        )
        .await;
        assert_eq!(ran.ended, Ended::Exit(2));
        assert_eq!(ran.stdout, "{\"a\":1}\nx=1\n");
        assert_eq!(ran.stderr, "oops\n");
    }

    #[tokio::test]
    async fn output_is_kept_up_to_its_bound_and_the_rest_read_and_dropped() {
        let ran = sh(
            "head -c 1100000 /dev/zero | tr '\\0' x; head -c 3000 /dev/zero | tr '\\0' y >&2",
            "",
            Duration::from_secs(60),
        )
        .await;
        assert_eq!(ran.ended, Ended::Exit(0));
        assert_eq!(ran.stdout.len(), MAX_OUTPUT);
        assert!(ran.stdout.bytes().all(|b| b == b'x'));
        assert_eq!(ran.stderr, "y".repeat(3000));
    }

    #[tokio::test]
    async fn a_hook_that_never_ends_is_killed_at_its_timeout() {
        let dir = tempfile::tempdir().unwrap();
        // Left alone it would run for a day: ending at all is the timeout's work.
        let ran = run(
            "echo $$ > hook.pid; sleep 86400 & echo $! > sleep.pid; echo started; wait",
            dir.path(),
            b"",
            &[],
            Duration::from_millis(300),
        )
        .await;
        assert_eq!(ran.ended, Ended::TimedOut);
        assert_eq!(ran.stdout, "started\n");
        for file in ["hook.pid", "sleep.pid"] {
            let pid = pid_in(&dir.path().join(file));
            assert!(gone(pid).await, "{file}: {pid} outlived the timeout");
        }
    }

    /// The pid written in `file`.
    fn pid_in(file: &std::path::Path) -> libc::pid_t {
        std::fs::read_to_string(file)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    /// Whether `pid` is gone, a zombie counting as gone (polled until it is; the bound is
    /// a guard against a hang, not a claim about speed).
    async fn gone(pid: libc::pid_t) -> bool {
        for _ in 0..6_000 {
            let dead = match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                Err(_) => true,
                Ok(stat) => stat
                    .rsplit(')')
                    .next()
                    .is_some_and(|rest| rest.trim_start().starts_with('Z')),
            };
            if dead {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        false
    }

    #[tokio::test]
    async fn an_orphan_holding_stdout_cannot_hold_rein() {
        let dir = tempfile::tempdir().unwrap();
        // Waiting for the orphan's stdout to close would take the whole timeout and end
        // as `TimedOut`.
        let ran = run(
            "sleep 100 & echo $! > orphan.pid; echo done",
            dir.path(),
            b"",
            &[],
            Duration::from_secs(30),
        )
        .await;
        assert_eq!(ran.ended, Ended::Exit(0));
        assert_eq!(ran.stdout, "done\n");
        let pid = pid_in(&dir.path().join("orphan.pid"));
        assert!(gone(pid).await, "the orphan outlived its hook");
    }

    /// A run dropped before its hook ends (rein stops, the turn is cancelled) takes what
    /// the hook started with it.
    #[tokio::test]
    async fn a_run_dropped_midway_takes_what_its_hook_started_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("sleep.pid");
        let running = run(
            "sleep 86400 & echo $! > sleep.pid.tmp; mv sleep.pid.tmp sleep.pid; wait",
            dir.path(),
            b"",
            &[],
            Duration::from_secs(86400),
        );
        let started = async {
            while !pid_file.exists() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        tokio::select! {
            ran = running => panic!("the hook ended on its own: {ran:?}"),
            () = started => {}
        }
        let pid = pid_in(&pid_file);
        assert!(gone(pid).await, "{pid} outlived its dropped run");
    }

    #[tokio::test]
    async fn a_hook_that_never_reads_its_input_is_not_blocked_by_it() {
        let big = "x".repeat(1024 * 1024);
        let ran = sh("echo fine", &big, Duration::from_secs(5)).await;
        assert_eq!(ran.ended, Ended::Exit(0));
        assert_eq!(ran.stdout, "fine\n");
    }
}
