//! `bash`: run a shell command in the project and return what it printed.
//!
//! A command string flows in; it runs as `bash -c COMMAND` in the project root, inside the OS
//! sandbox when it is on (see `crate::sandbox`), with stdin from /dev/null, in a session and
//! process group of its own (no controlling terminal), and with an environment scrubbed of
//! secrets (`crate::sandbox::env`: secret-shaped names, rein's own, and any variable that
//! holds a secret rein knows). stdout and stderr share one pipe, so the
//! output reads in the order it was written; at most 1 MiB is kept (head and tail, with the
//! dropped middle counted). Out comes the output with a line for a non-zero exit code or a
//! killing signal.
//!
//! The states of a run: running (reading output, waiting for the shell, watching the
//! deadline) -> the shell exited (read what is left for a short grace, then kill the group so
//! background children neither hold the pipe nor outlive the call) or the deadline passed
//! (kill the group, return an error with the output so far). Whatever happens, including the
//! future being dropped mid-run because the user interrupted, `ProcessGroup`'s `Drop` kills
//! the whole group and reaps the shell, so nothing is left running.

use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe::Receiver;
use tokio::time::Instant;

use super::{ToolContext, ToolSpec};

pub const NAME: &str = "bash";

/// Most output kept in memory: the first and last half of it when a command prints more.
const MAX_OUTPUT_BYTES: usize = 1024 * 1024;
/// How long output is still read after the shell exits, or after a timeout kill.
pub(crate) const GRACE: Duration = Duration::from_millis(100);
/// How long to wait for the shell to die after SIGKILL before giving up on it.
const KILL_WAIT: Duration = Duration::from_secs(1);
pub(crate) const READ_CHUNK: usize = 64 * 1024;

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: include_str!("../../assets/tools/bash.md"),
        parameters: json!({
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": "The command line to run with `bash -c` in the project root."
                },
                "run_in_background": {
                    "type": "boolean",
                    "description": "Start it and return at once with its id (for dev servers, watchers, long test runs); read what it prints with bash_output, stop it with bash_kill."
                }
            },
            "required": ["command"],
            "additionalProperties": false
        }),
    }
}

#[derive(Debug, serde::Deserialize)]
pub struct Args {
    pub command: String,
    /// Start it in the background ([`super::background`]) rather than wait for it.
    #[serde(default)]
    pub run_in_background: Option<bool>,
}

/// A command that ended: the text the model reads and, where it differs, what the command
/// printed (for the spill file, which keeps the exact bytes).
#[derive(Debug)]
pub struct Ran {
    pub text: String,
    pub printed: Option<String>,
}

pub async fn run(args: Args, ctx: &ToolContext) -> Result<Ran, String> {
    let (mut group, mut pipe) = spawn_shell(&args.command, ctx)?;
    let mut output = Output::default();
    let mut live = ctx.live.clone().map(super::live::LiveFeed::new);
    let mut buf = vec![0u8; READ_CHUNK];
    let mut eof = false;
    // A timeout too far out to represent means no deadline worth watching: a day will do.
    let deadline = Instant::now()
        .checked_add(ctx.bash_timeout)
        .unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400));
    let finished = loop {
        tokio::select! {
            read = pipe.read(&mut buf), if !eof => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => {
                    output.push(&buf[..n]);
                    if let Some(live) = &mut live {
                        live.feed(&buf[..n]);
                    }
                }
            },
            status = group.child.wait() => break Some(status),
            _ = tokio::time::sleep_until(deadline) => break None,
        }
    };

    match finished {
        Some(Ok(status)) => {
            // Background children may still hold the pipe: read for a moment, then stop them.
            read_until_eof(&mut pipe, &mut output, &mut buf, eof, GRACE).await;
            group.kill();
            read_ready(&pipe, &mut output, &mut buf);
            Ok(result_text(&output, status))
        }
        Some(Err(e)) => Err(format!("could not wait for the command to finish: {e}")),
        None => {
            group.kill();
            // SIGKILL cannot be ignored; the wait is bounded only against a stuck kernel.
            let _ = tokio::time::timeout(KILL_WAIT, group.child.wait()).await;
            read_until_eof(&mut pipe, &mut output, &mut buf, eof, GRACE).await;
            let so_far = output.render();
            let so_far = so_far.trim_end();
            Err(format!(
                "command timed out after {} and was stopped (whole process group killed). \
                 If it was searching, narrow the search to the project directory rather than `/`, \
                 or add a limit. Output before the timeout:\n{}",
                describe_duration(ctx.bash_timeout),
                if so_far.is_empty() { "(none)" } else { so_far },
            ))
        }
    }
}

/// Start `command` as `bash -c` in the project root, in the sandbox, in a session and
/// process group of its own, stdout and stderr into one pipe: its group and the pipe's
/// reading end.
pub(crate) fn spawn_shell(
    command: &str,
    ctx: &ToolContext,
) -> Result<(ProcessGroup, Receiver), String> {
    if command.trim().is_empty() {
        return Err("`command` is empty; give the shell command to run".to_string());
    }
    let (reader, writer) = std::io::pipe()
        .map_err(|e| format!("could not create a pipe for the command's output: {e}"))?;
    let stdout_writer = writer
        .try_clone()
        .map_err(|e| format!("could not create a pipe for the command's output: {e}"))?;

    // `bash -c COMMAND` in the project root, wrapped in the sandbox when it is on.
    // The sandbox scrubs the environment; the keys of the models in use go under any name.
    let mut cmd = ctx.sandbox.command(command, &ctx.secrets)?;
    cmd.stdin(Stdio::null())
        .stdout(stdout_writer)
        .stderr(writer)
        .kill_on_drop(true);
    // SAFETY: the closure runs in the child between fork and exec and only calls setsid,
    // which is async-signal-safe.
    unsafe {
        cmd.pre_exec(new_session);
    }
    let program = Path::new(cmd.as_std().get_program())
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let dir = cmd
        .as_std()
        .get_current_dir()
        .unwrap_or(&ctx.root)
        .display()
        .to_string();
    // What the command starts carries its mark: what leaves its group dies with it too.
    let mark = crate::host::process_tree::mark(&mut cmd);
    let spawned = cmd.spawn();
    // The command holds the parent's copies of the write end; close them, or the pipe never
    // reaches end-of-file.
    drop(cmd);
    let child = spawned.map_err(|e| format!("could not start `{program}` in {dir}: {e}"))?;
    let group = ProcessGroup::new(child)?;
    mark.register(group.pgid);
    let pipe = Receiver::from_owned_fd(OwnedFd::from(reader))
        .map_err(|e| format!("could not read the command's output: {e}"))?;

    Ok((group, pipe))
}

/// In the child before exec: start a new session. The command then leads a process group of
/// its own (pgid = pid, for `ProcessGroup`) and has no controlling terminal, so it can
/// neither prompt on the user's terminal nor push keystrokes into it (TIOCSTI via /dev/tty).
pub(crate) fn new_session() -> std::io::Result<()> {
    // SAFETY: setsid takes no pointers and only changes this (child) process.
    if unsafe { libc::setsid() } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    // Linux: the shell is killed when rein dies, even by SIGKILL (which rein cannot catch
    // to kill the group itself). prctl is async-signal-safe.
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_PDEATHSIG takes a signal number and changes only this process.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
    }
    Ok(())
}

/// The shell and its process group. Dropping it kills the whole group and reaps the shell,
/// whether the run finished, failed or was cancelled.
pub(crate) struct ProcessGroup {
    pub(crate) pgid: libc::pid_t,
    pub(crate) child: tokio::process::Child,
}

impl ProcessGroup {
    fn new(child: tokio::process::Child) -> Result<Self, String> {
        // After `setsid` the shell (or the sandbox wrapping it) leads a new session and a new
        // group whose id is its pid.
        let pgid = child
            .id()
            .and_then(|pid| libc::pid_t::try_from(pid).ok())
            .filter(|&pid| pid > 1)
            .ok_or_else(|| "the command's process id is unknown".to_string())?;
        Ok(ProcessGroup { pgid, child })
    }

    /// SIGKILL every process in the group (the shell and whatever it started, what left
    /// the group too: [`crate::host::process_tree`]).
    pub(crate) fn kill(&self) {
        crate::host::process_tree::kill(self.pgid);
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
        // Reap the shell: after SIGKILL it dies within moments. If it has not yet, tokio's
        // `kill_on_drop` hands it to the runtime's orphan reaper when `child` drops.
        for _ in 0..20 {
            match self.child.try_wait() {
                Ok(None) => std::thread::sleep(Duration::from_millis(1)),
                Ok(Some(_)) | Err(_) => break,
            }
        }
    }
}

/// Read until end-of-file or until `grace` has passed, whichever is first.
pub(crate) async fn read_until_eof(
    pipe: &mut Receiver,
    output: &mut Output,
    buf: &mut [u8],
    eof: bool,
    grace: Duration,
) {
    if eof {
        return;
    }
    let stop = Instant::now() + grace;
    loop {
        tokio::select! {
            read = pipe.read(buf) => match read {
                Ok(0) | Err(_) => return,
                Ok(n) => output.push(&buf[..n]),
            },
            _ = tokio::time::sleep_until(stop) => return,
        }
    }
}

/// Take whatever is already in the pipe without waiting.
pub(crate) fn read_ready(pipe: &Receiver, output: &mut Output, buf: &mut [u8]) {
    while let Ok(n) = pipe.try_read(buf) {
        if n == 0 {
            break;
        }
        output.push(&buf[..n]);
    }
}

/// The tool result: output (trailing whitespace trimmed) and how the command ended, and
/// the output as printed when that differs.
fn result_text(output: &Output, status: ExitStatus) -> Ran {
    let printed = output.render();
    let text = printed.trim_end();
    let mut result = if text.is_empty() {
        "(no output)".to_string()
    } else {
        text.to_string()
    };
    if let Some(line) = status_line(status) {
        result.push('\n');
        result.push_str(&line);
    }
    Ran {
        printed: (result != printed).then_some(printed),
        text: result,
    }
}

/// How a command ended, when not with exit code 0: `exit code N` or `killed by signal N`.
pub(crate) fn status_line(status: ExitStatus) -> Option<String> {
    match (status.code(), status.signal()) {
        (Some(0), _) => None,
        (Some(code), _) => Some(format!("exit code {code}")),
        (None, Some(signal)) => Some(format!("killed by signal {signal}")),
        (None, None) => None,
    }
}

fn describe_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 && d.as_secs() > 0 {
        format!("{} s", d.as_secs())
    } else if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// A command's output, bounded: the first half of the budget is kept from the start, the
/// second half is a window over the latest bytes, and everything between is only counted.
#[derive(Default)]
pub(crate) struct Output {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    dropped: u64,
}

impl Output {
    pub(crate) fn push(&mut self, mut data: &[u8]) {
        let half = MAX_OUTPUT_BYTES / 2;
        if self.head.len() < half {
            let take = (half - self.head.len()).min(data.len());
            self.head.extend_from_slice(&data[..take]);
            data = &data[take..];
        }
        if data.len() >= half {
            self.dropped += (self.tail.len() + data.len() - half) as u64;
            self.tail.clear();
            self.tail.extend(&data[data.len() - half..]);
        } else {
            self.tail.extend(data);
            let excess = self.tail.len().saturating_sub(half);
            if excess > 0 {
                self.tail.drain(..excess);
                self.dropped += excess as u64;
            }
        }
    }

    /// The kept bytes as text (invalid UTF-8 replaced), with a marker where bytes were dropped.
    pub(crate) fn render(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.dropped > 0 {
            text.push_str(&format!(
                "\n… [{} bytes of output dropped here] …\n",
                self.dropped
            ));
        }
        let (a, b) = self.tail.as_slices();
        text.push_str(&String::from_utf8_lossy(&[a, b].concat()));
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Sandbox;
    use crate::tools::test_context;

    fn ctx_with(dir: &tempfile::TempDir, timeout: Duration, secrets: &[&str]) -> ToolContext {
        ToolContext {
            secrets: secrets.iter().map(|s| s.to_string()).collect(),
            ..test_context(dir.path(), timeout)
        }
    }

    fn ctx(dir: &tempfile::TempDir) -> ToolContext {
        ctx_with(dir, Duration::from_secs(10), &[])
    }

    fn cmd(command: &str) -> Args {
        Args {
            command: command.to_string(),
            run_in_background: None,
        }
    }

    /// Whether a process is running (a zombie waiting to be reaped does not count).
    fn alive(pid: i32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => {
                let state = stat
                    .rsplit_once(')')
                    .and_then(|(_, rest)| rest.trim_start().chars().next());
                !matches!(state, None | Some('Z') | Some('X'))
            }
            Err(_) => false,
        }
    }

    /// Wait up to two seconds for a killed process to go away.
    async fn gone(pid: i32) -> bool {
        for _ in 0..200 {
            if !alive(pid) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        false
    }

    /// The pids written one per line to `file`, once there are `want` of them.
    fn read_pids(file: &std::path::Path, want: usize) -> Option<Vec<i32>> {
        let text = std::fs::read_to_string(file).ok()?;
        let pids: Vec<i32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
        (pids.len() >= want).then_some(pids)
    }

    #[tokio::test]
    async fn stdout_and_stderr_interleave_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            cmd("echo one; echo two >&2; echo three; echo four >&2; printf five"),
            &ctx(&dir),
        )
        .await
        .unwrap()
        .text;
        assert_eq!(out, "one\ntwo\nthree\nfour\nfive");
    }

    #[tokio::test]
    async fn reports_exit_codes_and_signals() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(&dir);
        assert_eq!(
            run(cmd("echo x; exit 3"), &c).await.unwrap().text,
            "x\nexit code 3"
        );
        assert_eq!(
            run(cmd("false"), &c).await.unwrap().text,
            "(no output)\nexit code 1"
        );
        assert_eq!(
            run(cmd("kill -9 $$"), &c).await.unwrap().text,
            "(no output)\nkilled by signal 9"
        );
    }

    #[tokio::test]
    async fn what_was_printed_is_kept_exactly_where_the_text_differs() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(&dir);
        let ran = run(cmd("seq 1 3; exit 2"), &c).await.unwrap();
        assert_eq!(ran.text, "1\n2\n3\nexit code 2");
        assert_eq!(ran.printed.as_deref(), Some("1\n2\n3\n"));
        let ran = run(cmd("printf 'a\\nb'"), &c).await.unwrap();
        assert_eq!((ran.text.as_str(), ran.printed), ("a\nb", None));
    }

    #[tokio::test]
    async fn output_is_reported_as_it_is_printed_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let mut c = ctx(&dir);
        c.live = Some(super::super::Live({
            let seen = seen.clone();
            std::sync::Arc::new(move |text| seen.lock().unwrap().push(text))
        }));
        // The first line comes before the command ends (it waits for a file only the test
        // writes once the line was reported); colours are left out.
        let go = dir.path().join("go");
        let command = format!(
            "printf '\\033[31mfirst\\033[0m\\n'; while [ ! -e {} ]; do sleep 0.01; done; echo second",
            go.display()
        );
        let running = tokio::spawn(async move { run(cmd(&command), &c).await });
        for _ in 0..12_000 {
            if !seen.lock().unwrap().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(seen.lock().unwrap().as_slice(), ["first\n"]);
        std::fs::write(&go, "").unwrap();
        let ran = running.await.unwrap().unwrap();
        assert!(
            ran.text.contains("first") && ran.text.contains("second"),
            "{}",
            ran.text
        );
        // Without a report to make, nothing is reported (the default).
        assert!(ctx(&dir).live.is_none());
    }

    #[tokio::test]
    async fn empty_output_and_trailing_whitespace() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(&dir);
        assert_eq!(run(cmd("true"), &c).await.unwrap().text, "(no output)");
        assert_eq!(
            run(cmd("printf '  \\n\\n'"), &c).await.unwrap().text,
            "(no output)"
        );
        assert_eq!(run(cmd("printf ' a \\n\\n'"), &c).await.unwrap().text, " a");
    }

    #[tokio::test]
    async fn runs_in_the_root_with_stdin_closed() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(&dir);
        let root = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(
            run(cmd("pwd -P"), &c).await.unwrap().text,
            root.display().to_string()
        );
        // `cat` would wait forever on a terminal or an open pipe; /dev/null ends at once.
        assert_eq!(run(cmd("cat"), &c).await.unwrap().text, "(no output)");
    }

    #[tokio::test]
    async fn background_children_do_not_block_and_are_stopped() {
        let dir = tempfile::tempdir().unwrap();
        // Waiting for the background sleep would end in the 10 s timeout, an error.
        let out = run(cmd("sleep 100 & echo $! > bg.pid; echo hi"), &ctx(&dir))
            .await
            .unwrap()
            .text;
        assert_eq!(out, "hi");
        let pids = read_pids(&dir.path().join("bg.pid"), 1).unwrap();
        assert!(gone(pids[0]).await, "background sleep {} survived", pids[0]);
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_group_and_keeps_the_output() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx_with(&dir, Duration::from_millis(300), &[]);
        // Left alone the command would run for 1000 s: ending with the timeout's error
        // and its processes gone is the timeout's work.
        let err = run(
            cmd("echo started; echo $$ > pids; sleep 1000 & echo $! >> pids; sleep 1000"),
            &c,
        )
        .await
        .unwrap_err();
        assert!(
            err.starts_with(
                "command timed out after 300 ms and was stopped (whole process group killed)"
            ),
            "{err}"
        );
        assert!(
            err.ends_with("Output before the timeout:\nstarted"),
            "{err}"
        );
        for pid in read_pids(&dir.path().join("pids"), 2).unwrap() {
            assert!(gone(pid).await, "process {pid} survived the timeout");
        }
    }

    #[tokio::test]
    async fn dropping_the_future_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(&dir);
        let pid_file = dir.path().join("pids");
        let mut fut = Box::pin(run(
            cmd("echo $$ > pids.tmp; sleep 1000 & echo $! >> pids.tmp; mv pids.tmp pids; sleep 1000"),
            &c,
        ));
        // Drive the command until it has written its pids, then cancel it by dropping it.
        let pids = loop {
            tokio::select! {
                r = &mut fut => panic!("the command finished early: {r:?}"),
                _ = tokio::time::sleep(Duration::from_millis(10)) => {
                    if let Some(pids) = read_pids(&pid_file, 2) {
                        break pids;
                    }
                }
            }
        };
        assert!(pids.iter().all(|&pid| alive(pid)));
        drop(fut);
        for pid in pids {
            assert!(gone(pid).await, "process {pid} survived the cancelled run");
        }
    }

    #[tokio::test]
    async fn huge_output_keeps_head_and_tail() {
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            cmd("echo first; head -c 3000000 /dev/zero | tr '\\0' a; echo; echo last"),
            &ctx(&dir),
        )
        .await
        .unwrap()
        .text;
        assert!(out.starts_with("first\naaa"), "{}", &out[..20]);
        assert!(out.ends_with("aaa\nlast"));
        assert!(out.len() <= MAX_OUTPUT_BYTES + 100, "{}", out.len());
        // 6 + 3_000_000 + 1 + 5 bytes printed, 1 MiB kept.
        let dropped = 3_000_012 - MAX_OUTPUT_BYTES;
        assert!(out.contains(&format!("[{dropped} bytes of output dropped here]")));
    }

    #[test]
    fn output_buffer_counts_what_it_drops() {
        let mut o = Output::default();
        let half = MAX_OUTPUT_BYTES / 2;
        o.push(&vec![b'h'; half]);
        o.push(b"middle");
        assert_eq!(o.dropped, 0);
        for _ in 0..3 {
            o.push(&vec![b't'; half / 2]);
        }
        assert_eq!(o.dropped, (6 + half / 2) as u64);
        o.push(&vec![b'z'; half + 10]);
        assert_eq!(o.dropped, (6 + half / 2 + half + 10) as u64);
        assert_eq!(o.tail.len(), half);
        assert!(o.tail.iter().all(|&b| b == b'z'));
    }

    #[tokio::test]
    async fn spawn_failure_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = ctx(&dir);
        c.root = dir.path().join("no-such-dir");
        c.sandbox = std::sync::Arc::new(Sandbox::off(&c.root));
        let err = run(cmd("echo hi"), &c).await.unwrap_err();
        assert!(
            err.starts_with("could not start `bash` in")
                || err.starts_with("could not start `sh` in"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn commands_lead_a_new_session_without_a_terminal() {
        let dir = tempfile::tempdir().unwrap();
        // Fields 5-7 of /proc/PID/stat: process group, session, controlling terminal.
        let out = run(
            cmd("echo $$; cut -d' ' -f5-7 /proc/$$/stat; \
                 sh -c 'exec 3</dev/tty' 2>/dev/null && echo opened || echo no tty"),
            &ctx(&dir),
        )
        .await
        .unwrap()
        .text;
        let lines: Vec<&str> = out.lines().collect();
        let pid = lines[0];
        assert_eq!(lines[1], format!("{pid} {pid} 0"), "{out}");
        assert_eq!(lines[2], "no tty", "{out}");
    }

    #[tokio::test]
    async fn a_required_sandbox_that_cannot_run_refuses_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let settings = crate::sandbox::SandboxSettings {
            mode: crate::sandbox::SandboxMode::Required,
            ..Default::default()
        };
        let c = ToolContext {
            sandbox: std::sync::Arc::new(Sandbox::detect_with(settings, dir.path(), vec![], None)),
            ..ctx(&dir)
        };
        let err = run(cmd("touch ran"), &c).await.unwrap_err();
        assert!(
            err.starts_with(
                "the sandbox is required (sandbox.mode = \"required\") but cannot run: \
                 bwrap was not found"
            ),
            "{err}"
        );
        assert!(!dir.path().join("ran").exists());
    }

    #[tokio::test]
    async fn empty_command_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = run(cmd("  "), &ctx(&dir)).await.unwrap_err();
        assert!(err.starts_with("`command` is empty"), "{err}");
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(describe_duration(Duration::from_secs(60)), "60 s");
        assert_eq!(describe_duration(Duration::from_millis(300)), "300 ms");
        assert_eq!(describe_duration(Duration::from_millis(1500)), "1.5 s");
    }
}
