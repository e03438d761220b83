//! Print mode's figures, and a curl for comparison.

use rein_test_support as support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use support::ScriptedServer;

use super::measure::median;
use super::replies::{long_reply, long_reply_written};
use super::{Dirs, MODEL, RUNS};

/// Headless ingestion: `rein -p` reading the long reply (paced or not) with its output to
/// /dev/null; the child's CPU time (user + system, from `wait4`), median of `runs`.
/// Returns (chunks, median CPU). Paced, it is the agent's share of the dashboard's paced
/// stream: the same reading and parsing, with no frames.
// `wait4` reaps the child (for its rusage); clippy sees no `wait()`.
#[allow(clippy::zombie_processes)]
pub(super) fn headless(
    binary: &Path,
    runtime: &tokio::runtime::Runtime,
    text: &str,
    paced: bool,
    runs: usize,
) -> (usize, Duration) {
    let mut cpus = Vec::new();
    let mut chunks = 0;
    for _ in 0..runs {
        let (reply, n) = long_reply(text, paced);
        chunks = n;
        let server = runtime
            .block_on(ScriptedServer::start(vec![reply]))
            .expect("the scripted server starts");
        let dirs = Dirs::new();
        let home = dirs.home.path();
        let child = Command::new(binary)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home)
            .env("REIN_HOME", home.join("rein-home"))
            .args(["-p", "please write the long reply", "--base-url"])
            .arg(server.base_url())
            .args(["--model", MODEL, "--cwd"])
            .arg(dirs.project.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("rein -p starts");
        cpus.push(child_cpu(&child).as_secs_f64());
    }
    (chunks, Duration::from_secs_f64(median(cpus)))
}

/// The rows of [`headless`]: unpaced (median of `RUNS`), then paced once (the agent's share
/// of the dashboard's paced stream).
pub(super) fn headless_rows(binary: &Path, runtime: &tokio::runtime::Runtime, text: &str) {
    let (chunks, cpu) = headless(binary, runtime, text, false, RUNS);
    println!(
        "| headless | {:.3} s CPU: {:.0} chunks per CPU-second | |",
        cpu.as_secs_f64(),
        chunks as f64 / cpu.as_secs_f64()
    );
    let (_, cpu) = headless(binary, runtime, text, true, 1);
    println!(
        "| headless, paced (the agent's share of the paced stream) | {:.3} s CPU | |",
        cpu.as_secs_f64()
    );
}

/// Wait for `child` and return the CPU it used (user + system, from `wait4`, which reaps it).
pub(super) fn child_cpu(child: &std::process::Child) -> Duration {
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for the child we spawned; the pointers are to live locals.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32, "wait4 failed");
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// curl's CPU reading the reply a chunk a write (`-sN`, to /dev/null): what reading the
/// stream costs a plain HTTP client, the yardstick for showing it live. The median of
/// `RUNS`.
// wait4 reaps the child (for its rusage), which clippy cannot see.
#[allow(clippy::zombie_processes)]
pub(super) fn curl_cpu(runtime: &tokio::runtime::Runtime, text: &str, paced: bool) -> Duration {
    let mut cpus = Vec::new();
    for _ in 0..RUNS {
        let (reply, _) = long_reply_written(text, paced, !paced);
        let server = runtime
            .block_on(ScriptedServer::start(vec![reply]))
            .expect("the scripted server starts");
        let url = format!("{}/chat/completions", server.base_url());
        let child = Command::new("curl")
            .args([
                "-sN",
                "-o",
                "/dev/null",
                "-H",
                "content-type: application/json",
            ])
            .args(["--data", r#"{"model":"m","messages":[],"stream":true}"#])
            .arg(&url)
            .stdin(Stdio::null())
            .spawn()
            .expect("curl starts (apt install curl)");
        cpus.push(child_cpu(&child).as_secs_f64());
    }
    Duration::from_secs_f64(median(cpus))
}
