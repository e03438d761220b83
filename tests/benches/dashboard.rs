//! The dashboard as a person runs it, measured from outside: `cargo bench --bench dashboard`.
//!
//! The release binary runs in tmux at 120×40 (a private tmux server, no config file)
//! against the scripted model server, as in `tests/it/tmux_e2e.rs`. The figures are the
//! issue's speed targets:
//!
//! 1. Startup to first frame: from starting `tmux new-session` until `capture-pane` shows
//!    the model name in the status line, polled every 2 ms; median of several runs. tmux's
//!    own startup is in that figure, so a baseline (the same for `sh -c 'echo ready'`) is
//!    measured too and subtracted.
//! 2. Memory: VmRSS of the rein process right after its first frame, and VmHWM (the peak)
//!    once the long reply below is on screen. The pane runs `env`, which execs rein, so the
//!    pane's pid is rein's (checked against `/proc/PID/comm`).
//! 3. Streaming: one reply of 300 000 characters of Markdown in 4-character content chunks
//!    (75 000 SSE events), ending in a unique marker. rein's CPU time (utime + stime of all
//!    its threads, from `/proc/PID/stat`) from just before the prompt is typed until the
//!    marker is on screen. Once as fast as rein reads, once paced at 5 000 chunks a second.
//! 4. Idle: rein's CPU time over 5 s of doing nothing after the reply.
//!
//! Results are printed as a Markdown table, with the machine they ran on.
//!
//! 5. Startup while the server is asked for the model's window: the first frame with the
//!    window configured (nothing asked), with a server whose `/props` is a 404 at once,
//!    answers after 1.5 s, or never answers (rein gives up after 2 s); for the slow one also
//!    the time until the gauge shows the server's window.
//!
//! `cargo bench --bench dashboard -- resumed` (or `resumed 20000-40`, `memory`, `memory
//! 1200000-lines`, `stream`, `stream-paced`, `window`, `chunks`, `headless`, `headless-paced`) runs only that group
//! (or scenario) and prints its rows. `stream` also runs `rein -p` on the paced stream:
//! the agent's share of the paced figure, with no frames. `REIN_BENCH_ENV="NAME=VALUE ..."` adds variables to rein's
//! environment (a profiler's `LD_PRELOAD`, say). For a profile, `REIN_BENCH_BINARY` names a
//! wrapper that execs rein under valgrind and `REIN_BENCH_PROFILER=1` leaves time between
//! typing and Enter.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test's unwrap is an assertion

use rein_test_support as support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use support::{chunk, usage_chunk, Reply, ScriptedServer, Step};
use tempfile::TempDir;

const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;
const RUNS: usize = 5;
/// Distinctive, so finding it on screen means the status line was drawn.
const MODEL: &str = "bench-model-7731";
const MARKER: &str = "END-OF-REPLY-7731";
const REPLY_CHARS: usize = 300_000;
const CHUNK_CHARS: usize = 4;
/// The paced variant: a pause of `PACE_SLEEP` after every `PACE_EVERY` chunks.
const PACE_EVERY: usize = 50;
const PACE_SLEEP: Duration = Duration::from_millis(10);
const STARTUP_POLL: Duration = Duration::from_millis(2);
/// Coarser while streaming, so the bench's own `capture-pane` calls take less CPU from rein.
const STREAM_POLL: Duration = Duration::from_millis(20);
const IDLE: Duration = Duration::from_secs(5);
const TIMEOUT: Duration = Duration::from_secs(60);

/// A private tmux server (own socket in a temporary directory, no config file) holding a
/// keeper session, so every measured session starts on a warm server. Killed with all its
/// sessions on drop; the directory, socket included, goes with it.
struct TmuxServer {
    socket: PathBuf,
    _dir: TempDir,
}

impl TmuxServer {
    fn start() -> TmuxServer {
        let dir = tempfile::tempdir().expect("a directory for the tmux socket");
        let server = TmuxServer {
            socket: dir.path().join("tmux.sock"),
            _dir: dir,
        };
        let status = server
            .tmux()
            .args(["new-session", "-d", "-s", "keeper", "sleep", "600"])
            .status()
            .expect("tmux runs (install it: apt install tmux)");
        assert!(status.success(), "tmux new-session failed");
        server
    }

    fn tmux(&self) -> Command {
        let mut command = Command::new("tmux");
        command
            .arg("-S")
            .arg(&self.socket)
            .args(["-f", "/dev/null"]);
        command
    }

    fn output(&self, args: &[&str]) -> Output {
        self.tmux().args(args).output().expect("tmux runs")
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        let _ = self
            .tmux()
            .arg("kill-server")
            .stderr(Stdio::null())
            .status();
    }
}

/// One session running one command at 120×40; killed on drop.
struct Session<'a> {
    server: &'a TmuxServer,
    name: String,
}

impl<'a> Session<'a> {
    fn start(server: &'a TmuxServer, name: &str, command: &[String]) -> Session<'a> {
        let (w, h) = (WIDTH.to_string(), HEIGHT.to_string());
        let status = server
            .tmux()
            .args(["new-session", "-d", "-s", name, "-x", &w, "-y", &h, "--"])
            .args(command)
            .status()
            .expect("tmux new-session");
        assert!(status.success(), "tmux new-session failed");
        Session {
            server,
            name: name.to_string(),
        }
    }

    fn screen(&self) -> String {
        let out = self
            .server
            .output(&["capture-pane", "-p", "-t", &self.name]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Polls every `poll` until the screen contains `needle`; the moment it was seen.
    fn wait_for(&self, needle: &str, poll: Duration) -> Instant {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let screen = self.screen();
            if screen.contains(needle) {
                return Instant::now();
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {needle:?}; the screen:\n{screen}"
            );
            std::thread::sleep(poll);
        }
    }

    fn pane_pid(&self) -> u32 {
        let out = self
            .server
            .output(&["list-panes", "-t", &self.name, "-F", "#{pane_pid}"]);
        let text = String::from_utf8_lossy(&out.stdout);
        text.trim().parse().expect("a pane pid")
    }

    fn pane_size(&self) -> String {
        let out = self.server.output(&[
            "display-message",
            "-p",
            "-t",
            &self.name,
            "#{pane_width}x#{pane_height}",
        ]);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Types `text` literally, then presses Enter.
    fn send_line(&self, text: &str) {
        let out = self
            .server
            .output(&["send-keys", "-t", &self.name, "-l", text]);
        assert!(out.status.success(), "tmux send-keys");
        if std::env::var_os("REIN_BENCH_PROFILER").is_some() {
            // Under a profiler rein reads the text and the Enter in one go and takes them
            // for a paste (a new line, not a send); the pause keeps them apart.
            std::thread::sleep(Duration::from_secs(3));
        }
        let out = self
            .server
            .output(&["send-keys", "-t", &self.name, "Enter"]);
        assert!(out.status.success(), "tmux send-keys");
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        let _ = self
            .server
            .tmux()
            .args(["kill-session", "-t", &self.name])
            .stderr(Stdio::null())
            .status();
    }
}

/// The release binary: cargo points benches at the bench profile's build (target/release).
fn rein_binary() -> PathBuf {
    // Another build to compare with (a before/after figure): REIN_BENCH_BINARY=path.
    if let Some(other) = std::env::var_os("REIN_BENCH_BINARY") {
        return PathBuf::from(other);
    }
    let built = PathBuf::from(env!("CARGO_BIN_EXE_rein"));
    if built.components().any(|c| c.as_os_str() == "release") {
        return built;
    }
    let release = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/rein");
    assert!(
        release.exists(),
        "{} is not a release build and target/release/rein is missing: run `cargo bench`",
        built.display()
    );
    release
}

/// A fresh home and project for one rein process.
struct Dirs {
    home: TempDir,
    project: TempDir,
}

impl Dirs {
    fn new() -> Dirs {
        Dirs {
            home: tempfile::tempdir().expect("a temporary home"),
            project: tempfile::tempdir().expect("a temporary project"),
        }
    }

    fn rein_command(&self, binary: &Path, base_url: &str) -> Vec<String> {
        self.rein_command_with(binary, base_url, &[])
    }

    /// [`Dirs::rein_command`] with `vars` (`NAME=VALUE`) in rein's environment too.
    fn rein_command_with(&self, binary: &Path, base_url: &str, vars: &[&str]) -> Vec<String> {
        let home = self.home.path();
        vec![
            "env".into(),
            "-i".into(),
            format!("PATH={}", std::env::var("PATH").unwrap_or_default()),
            format!("HOME={}", home.display()),
            format!("REIN_HOME={}", home.join("rein-home").display()),
            "TERM=xterm-256color".into(),
            "LANG=C.UTF-8".into(),
        ]
        .into_iter()
        .chain(extra_env())
        .chain(vars.iter().map(|v| v.to_string()))
        .chain([
            binary.display().to_string(),
            "--base-url".into(),
            base_url.into(),
            "--model".into(),
            MODEL.into(),
            "--cwd".into(),
            self.project.path().display().to_string(),
        ])
        .collect()
    }
}

/// `REIN_BENCH_ENV`'s `NAME=VALUE` words.
fn extra_env() -> Vec<String> {
    std::env::var("REIN_BENCH_ENV")
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// CPU time of the whole process (every thread, live or exited), in clock ticks' resolution.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    // The command name may hold spaces; the fields after its closing ')' start at field 3.
    let fields: Vec<&str> = stat[stat.rfind(')').expect("a stat line") + 2..]
        .split(' ')
        .collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
    Duration::from_nanos(ticks * 1_000_000_000 / per_second)
}

/// CPU time of the live threads to the nanosecond (`/proc/PID/task/*/schedstat`); `None`
/// where the kernel does not keep it.
fn cpu_time_ns(pid: u32) -> Option<Duration> {
    let mut total = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let text = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
        total += text.split(' ').next()?.parse::<u64>().ok()?;
    }
    Some(Duration::from_nanos(total))
}

/// CPU time of the process's main thread (the dashboard's loop: update, render, terminal
/// writes) to the nanosecond; the rest of [`cpu_time_ns`] is the agent's runtime (HTTP,
/// SSE, chunk JSON) and the helpers.
fn main_thread_ns(pid: u32) -> Option<Duration> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/schedstat")).ok()?;
    Some(Duration::from_nanos(text.split(' ').next()?.parse().ok()?))
}

/// A `/proc/PID/status` field in kB, e.g. `VmRSS`.
fn status_kb(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// Bytes the process has written (terminal output, mostly); `None` if unreadable.
fn written_bytes(pid: u32) -> Option<u64> {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("wchar: "))?
        .parse()
        .ok()
}

fn rein_pid(session: &Session) -> u32 {
    let pid = session.pane_pid();
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    // Or rein under valgrind (REIN_BENCH_BINARY a wrapper that execs it), for a profile.
    let comm = comm.trim();
    assert!(
        comm == "rein" || comm.starts_with("callgrind"),
        "pane pid {pid} is not rein: {comm}"
    );
    pid
}

fn mib(kb: u64) -> String {
    format!("{:.1} MiB", kb as f64 / 1024.0)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Markdown with paragraphs, emphasis, lists, code blocks and quotes, exactly `REPLY_CHARS`
/// characters long and ending in its own paragraph with `MARKER`. Each unit is numbered
/// (since 2026-12-04): the same unit over and over is a reply that repeats itself, which
/// rein stops (`agent::repetition`).
fn reply_text() -> String {
    let unit = |n: usize| {
        format!(
            "Here is what I found in `src/parse{n:04}.rs`: the tokenizer treats **every** \
whitespace character as a separator, so tabs inside quoted words split them.\n\n\
- the first case is a tab inside quotes\n- the second is a run of spaces\n  1. leading\n  2. trailing\n\n\
```rust\nfn parse(s: &str) -> Vec<&str> {{\n    s.split(' ').filter(|w| !w.is_empty()).collect()\n}}\n```\n\n\
> Note: the old behaviour is documented in the README, see [the guide](https://example.com/guide).\n\n"
        )
    };
    let tail = format!("\n\n{MARKER}");
    let mut text = String::with_capacity(REPLY_CHARS);
    let mut n = 0;
    while text.len() + unit(n).len() + tail.len() <= REPLY_CHARS {
        text.push_str(&unit(n));
        n += 1;
    }
    const FILLER: &[&str] = &["the ", "parser ", "splits ", "words "];
    let mut i = 0;
    while text.len() + tail.len() < REPLY_CHARS {
        let word = FILLER[i % FILLER.len()];
        let room = REPLY_CHARS - tail.len() - text.len();
        text.push_str(&word[..word.len().min(room)]);
        i += 1;
    }
    text.push_str(&tail);
    assert_eq!(text.chars().count(), REPLY_CHARS);
    text
}

/// The shape of a long reply.
#[derive(Clone, Copy)]
enum Shape {
    /// `reply_text`'s Markdown: paragraphs, lists, code blocks.
    Paragraphs,
    /// Short lines, never a blank one (one Markdown paragraph of soft breaks).
    Lines,
    /// One line of words.
    OneLine,
}

impl Shape {
    /// Its name on the command line (`-- memory 1200000-lines`).
    fn word(self) -> &'static str {
        match self {
            Shape::Paragraphs => "paragraphs",
            Shape::Lines => "lines",
            Shape::OneLine => "oneline",
        }
    }
}

/// A reply of `chars` characters in `shape`, ending in `MARKER`.
fn sized_reply(chars: usize, shape: Shape) -> String {
    let unit = match shape {
        Shape::Paragraphs => reply_text().replace(MARKER, ""),
        // Numbered, as `reply_text`'s units are.
        Shape::Lines => (0..1000)
            .map(|n| format!("the parser splits words at whitespace {n:04}\n"))
            .collect(),
        Shape::OneLine => (0..1000)
            .map(|n| format!("the parser splits words at whitespace character {n:04} "))
            .collect(),
    };
    let tail = match shape {
        Shape::Paragraphs => format!("\n\n{MARKER}"),
        Shape::Lines => format!("\n{MARKER}"),
        Shape::OneLine => format!(" {MARKER}"),
    };
    let mut text = String::with_capacity(chars);
    while text.len() + tail.len() < chars {
        let room = chars - tail.len() - text.len();
        text.push_str(&unit[..unit.len().min(room)]);
    }
    text.push_str(&tail);
    text
}

/// The reply in `CHUNK_CHARS`-character content deltas, optionally paced.
fn long_reply(text: &str, paced: bool) -> (Reply, usize) {
    long_reply_written(text, paced, false)
}

/// [`long_reply`], and with `each` every chunk written on its own (the server's write per
/// chunk, as a server that flushes each token does), unpaced.
fn long_reply_written(text: &str, paced: bool, each: bool) -> (Reply, usize) {
    let mut steps = vec![Step::Data(chunk(
        json!({ "role": "assistant", "content": "" }),
        None,
    ))];
    let pieces: Vec<&str> = text
        .as_bytes()
        .chunks(CHUNK_CHARS)
        .map(|b| std::str::from_utf8(b).expect("the reply is ASCII"))
        .collect();
    for (i, piece) in pieces.iter().enumerate() {
        steps.push(Step::Data(chunk(json!({ "content": piece }), None)));
        if each {
            steps.push(Step::Sleep(Duration::ZERO));
        } else if paced && (i + 1) % PACE_EVERY == 0 {
            steps.push(Step::Sleep(PACE_SLEEP));
        }
    }
    steps.push(Step::Data(chunk(json!({}), Some("stop"))));
    steps.push(Step::Data(usage_chunk(100, pieces.len() as u64)));
    steps.push(Step::Done);
    (Reply::sse(steps), pieces.len())
}

/// Median time for tmux to show `sh -c 'echo ready'`.
fn baseline(tmux: &TmuxServer) -> (f64, Vec<f64>) {
    let command: Vec<String> = ["sh", "-c", "echo ready; sleep 5"]
        .map(String::from)
        .to_vec();
    let runs: Vec<f64> = (0..RUNS)
        .map(|i| {
            let start = Instant::now();
            let session = Session::start(tmux, &format!("baseline-{i}"), &command);
            ms(session.wait_for("ready", STARTUP_POLL) - start)
        })
        .collect();
    (median(runs.clone()), runs)
}

struct Startup {
    median_ms: f64,
    runs_ms: Vec<f64>,
    rss_kb: u64,
    pane: String,
}

/// Median time to the first frame, and the median VmRSS right after it.
fn startup(tmux: &TmuxServer, binary: &Path, base_url: &str) -> Startup {
    let mut runs = Vec::new();
    let mut rss = Vec::new();
    let mut pane = String::new();
    for i in 0..RUNS {
        let dirs = Dirs::new();
        let command = dirs.rein_command(binary, base_url);
        let start = Instant::now();
        let session = Session::start(tmux, &format!("startup-{i}"), &command);
        let seen = session.wait_for(MODEL, STARTUP_POLL);
        let pid = rein_pid(&session);
        rss.push(status_kb(pid, "VmRSS") as f64);
        runs.push(ms(seen - start));
        pane = session.pane_size();
    }
    Startup {
        median_ms: median(runs.clone()),
        runs_ms: runs,
        rss_kb: median(rss) as u64,
        pane,
    }
}

/// The window's question, answered after this long by the slow server.
const SLOW_PROBE: Duration = Duration::from_millis(1_500);
/// The window the slow server reports, and how the gauge writes it.
const SLOW_WINDOW: (u64, &str) = (32_768, "/32.8k");

/// Startup while the server is asked for the window: (row, figure) pairs, each the median
/// of `RUNS` fresh processes.
fn window_rows(
    tmux: &TmuxServer,
    binary: &Path,
    runtime: &tokio::runtime::Runtime,
) -> Vec<(String, String)> {
    let server = |props: &dyn Fn(&ScriptedServer)| {
        let server = runtime
            .block_on(ScriptedServer::start(Vec::new()))
            .expect("the scripted server starts");
        props(&server);
        server
    };
    let at_once = server(&|_| {});
    let slow = server(&|s| s.answer_props(SLOW_WINDOW.0, SLOW_PROBE));
    let silent = server(&|s| s.hang_props());
    let first_frame = |base_url: &str, vars: &[&str], then: Option<&str>| {
        let mut frames = Vec::new();
        let mut learnt = Vec::new();
        for i in 0..RUNS {
            let dirs = Dirs::new();
            let command = dirs.rein_command_with(binary, base_url, vars);
            let start = Instant::now();
            let session = Session::start(tmux, &format!("window-{i}"), &command);
            frames.push(ms(session.wait_for(MODEL, STARTUP_POLL) - start));
            if let Some(needle) = then {
                learnt.push(ms(session.wait_for(needle, STARTUP_POLL) - start));
            }
        }
        (median(frames), (!learnt.is_empty()).then(|| median(learnt)))
    };
    let row = |(frame, _): (f64, Option<f64>)| format!("{frame:.1} ms");
    let (slow_frame, slow_learnt) = first_frame(&slow.base_url(), &[], Some(SLOW_WINDOW.1));
    vec![
        (
            "startup to first frame, window configured (`REIN_CONTEXT_WINDOW`, nothing asked)"
                .to_string(),
            row(first_frame(
                &at_once.base_url(),
                &["REIN_CONTEXT_WINDOW=128000"],
                None,
            )),
        ),
        (
            "startup to first frame, the server's window endpoints answer 404 at once".to_string(),
            row(first_frame(&at_once.base_url(), &[], None)),
        ),
        (
            format!(
                "startup to first frame, `/props` answers after {:.1} s",
                SLOW_PROBE.as_secs_f64()
            ),
            format!("{slow_frame:.1} ms"),
        ),
        (
            format!(
                "until the gauge shows that server's {} window",
                &SLOW_WINDOW.1[1..]
            ),
            format!("{:.0} ms", slow_learnt.unwrap_or_default()),
        ),
        (
            "startup to first frame, `/props` never answers".to_string(),
            row(first_frame(&silent.base_url(), &[], None)),
        ),
    ]
}

/// With three stdio MCP servers configured (server-everything, server-filesystem and
/// mcp-server-time, where `.ci/run` installed them): the median time to the first frame
/// (the dashboard must not wait for them) and until all three are ready on screen.
/// `None` when the servers are not installed.
fn startup_with_mcp(tmux: &TmuxServer, binary: &Path, base_url: &str) -> Option<(f64, f64)> {
    let dir = support::mcp::servers_dir();
    let everything = dir.join("node_modules/.bin/mcp-server-everything");
    let fs = dir.join("node_modules/.bin/mcp-server-filesystem");
    let python = dir.join("venv/bin/python");
    if ![&everything, &fs, &python].iter().all(|p| p.exists()) {
        eprintln!(
            "dashboard bench: no MCP servers in {} (run .ci/run)",
            dir.display()
        );
        return None;
    }
    let (mut first, mut ready) = (Vec::new(), Vec::new());
    for i in 0..RUNS {
        let dirs = Dirs::new();
        let config = dirs.home.path().join("rein-home");
        std::fs::create_dir_all(&config).expect("rein's home");
        let table = |name: &str, command: &Path, args: &[&str]| {
            format!(
                "[mcp_servers.{name}]\ncommand = {:?}\nargs = {args:?}\n",
                command.display().to_string()
            )
        };
        let project = dirs.project.path().display().to_string();
        let text = [
            table("everything", &everything, &["stdio"]),
            table("fs", &fs, &[project.as_str()]),
            table("time", &python, &["-m", "mcp_server_time"]),
        ]
        .join("\n");
        std::fs::write(config.join("config.toml"), text).expect("the config");
        let start = Instant::now();
        let session = Session::start(
            tmux,
            &format!("mcp-{i}"),
            &dirs.rein_command(binary, base_url),
        );
        first.push(ms(session.wait_for(MODEL, STARTUP_POLL) - start));
        let mut last = start;
        for name in ["everything", "fs", "time"] {
            last = last.max(session.wait_for(&format!("MCP server {name}: ready"), STARTUP_POLL));
        }
        ready.push(ms(last - start));
    }
    Some((median(first), median(ready)))
}

/// Headless ingestion: `rein -p` reading the long reply (paced or not) with its output to
/// /dev/null; the child's CPU time (user + system, from `wait4`), median of `runs`.
/// Returns (chunks, median CPU). Paced, it is the agent's share of the dashboard's paced
/// stream: the same reading and parsing, with no frames.
// `wait4` reaps the child (for its rusage); clippy sees no `wait()`.
#[allow(clippy::zombie_processes)]
fn headless(
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
fn headless_rows(binary: &Path, runtime: &tokio::runtime::Runtime, text: &str) {
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
fn child_cpu(child: &std::process::Child) -> Duration {
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
fn curl_cpu(runtime: &tokio::runtime::Runtime, text: &str, paced: bool) -> Duration {
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

/// A session file of `messages` messages (a question, a reply with a `bash` call, its
/// result of `result_lines` lines, a Markdown answer, in turn) for the project of `dirs`,
/// in its data folder, with the `stubbed` entries each turn's end writes; its size in
/// bytes.
fn write_session(dirs: &Dirs, messages: usize, result_lines: usize) -> u64 {
    use rein_core::conversation::{Message, ToolCall};
    use rein_core::session::{Entry, SessionMeta, SessionWriter};
    let data = dirs.home.path().join("rein-home");
    let meta = SessionMeta::new(dirs.project.path(), MODEL);
    let mut writer = SessionWriter::create(&data, meta).expect("a session file");
    let result: String = (0..result_lines)
        .map(|i| format!("test parse::case_{i} ... ok\n"))
        .collect();
    let mut stubbed = 0;
    for i in 0..messages {
        let message = match i % 4 {
            0 => Message::user(format!("Question {i}: why does the parser split tabs inside words?")),
            1 => Message::assistant(
                "Let me run the tests.".into(),
                vec![ToolCall::new(format!("c{i}"), "bash", r#"{"command":"cargo test parse"}"#)],
            ),
            2 => Message::tool(format!("c{}", i - 1), result.clone()),
            _ => Message::assistant(
                format!("Answer {i}: the tokenizer treats **every** whitespace character as a separator.\n\n- a tab inside quotes\n- a run of spaces\n\n```rust\nfn parse(s: &str) -> Vec<&str> {{ s.split(' ').collect() }}\n```"),
                Vec::new(),
            ),
        };
        writer.append(&Entry::message(message)).expect("an entry");
        // A turn's end, as rein writes it: results older than the last `keep_recent`
        // messages are stubbed, and the file says which (the history keeps only their
        // heads; the message lines keep them whole).
        if i % 4 == 3 {
            let old = (i + 1).saturating_sub(rein_core::context::DEFAULT_KEEP_RECENT);
            let indices: Vec<usize> = (stubbed..old).filter(|j| j % 4 == 2).collect();
            stubbed = old.max(stubbed);
            if !indices.is_empty() {
                let entry = Entry::Stubbed {
                    stub_chars: rein_core::context::DEFAULT_STUB_CHARS,
                    indices,
                };
                writer.append(&entry).expect("an entry");
            }
        }
    }
    let path = writer.path().to_path_buf();
    writer.close().expect("the session closes");
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// rein resumed (`--continue`) on a session of `messages` messages: the time to its first
/// frame, its RSS then, and the CPU time of each kind of key press (median), measured from
/// the key until the screen changed. Rows of (what, figure).
fn resumed(
    tmux: &TmuxServer,
    binary: &Path,
    base_url: &str,
    messages: usize,
    result_lines: usize,
) -> Vec<(String, String)> {
    let dirs = Dirs::new();
    let bytes = write_session(&dirs, messages, result_lines);
    let messages = format!("{messages}-message ({:.0} MB)", bytes as f64 / 1e6);
    let mut command = dirs.rein_command(binary, base_url);
    command.push("--continue".into());
    let start = Instant::now();
    let session = Session::start(tmux, &format!("resumed-{bytes}"), &command);
    let seen = session.wait_for(MODEL, STARTUP_POLL);
    let pid = rein_pid(&session);
    let mut rows = vec![(
        format!("resumed {messages} session: first frame, RSS"),
        format!(
            "{:.0} ms, {}",
            ms(seen - start),
            mib(status_kb(pid, "VmRSS"))
        ),
    )];
    std::thread::sleep(Duration::from_millis(500));
    let press = |keys: &[&str], times: usize| -> f64 {
        let mut cpus = Vec::new();
        for _ in 0..times {
            let before = session.screen();
            let cpu0 = cpu_time_ns(pid).unwrap_or_default();
            let mut args = vec!["send-keys", "-t", session.name.as_str()];
            args.extend_from_slice(keys);
            assert!(
                session.server.output(&args).status.success(),
                "tmux send-keys"
            );
            let deadline = Instant::now() + Duration::from_secs(5);
            while session.screen() == before && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(2));
            }
            // Let the frame finish.
            std::thread::sleep(Duration::from_millis(40));
            cpus.push(ms(cpu_time_ns(pid).unwrap_or_default() - cpu0));
        }
        median(cpus)
    };
    let page_up = press(&["PageUp"], 9);
    let page_down = press(&["PageDown"], 5);
    let home = press(&["C-Home"], 1);
    let down_top = press(&["PageDown"], 5);
    let up_top = press(&["PageUp"], 3);
    let _ = press(&["C-End"], 1);
    let typing = press(&["-l", "a"], 9);
    rows.push((
        format!("resumed {messages}: CPU per key press (median), ms"),
        format!(
            "PgUp {page_up:.2}, PgDn {page_down:.2}, first Ctrl-Home {home:.2}, PgDn at the top {down_top:.2}, PgUp at the top {up_top:.2}, typing {typing:.2}"
        ),
    ));
    rows.push((
        format!("resumed {messages}: RSS after the keys"),
        mib(status_kb(pid, "VmRSS")),
    ));
    rows
}

struct Stream {
    chunks: usize,
    cpu: Duration,
    wall: Duration,
    written: Option<u64>,
    hwm_kb: u64,
    rss_kb: u64,
    idle_cpu: Option<Duration>,
    idle_cpu_ns: Option<Duration>,
    /// (the main thread, every live thread) while streaming, to the nanosecond.
    split: Option<(Duration, Duration)>,
}

/// One fresh rein, one prompt, the long reply; with `idle`, then 5 s of nothing.
fn stream(
    tmux: &TmuxServer,
    binary: &Path,
    runtime: &tokio::runtime::Runtime,
    text: &str,
    paced: bool,
    idle: bool,
) -> Stream {
    stream_reply(tmux, binary, runtime, long_reply(text, paced), paced, idle)
}

/// [`stream`] of a given reply (and its chunk count).
fn stream_reply(
    tmux: &TmuxServer,
    binary: &Path,
    runtime: &tokio::runtime::Runtime,
    (reply, chunks): (Reply, usize),
    paced: bool,
    idle: bool,
) -> Stream {
    let server = runtime
        .block_on(ScriptedServer::start(vec![reply]))
        .expect("the scripted server starts");
    let dirs = Dirs::new();
    let name = if paced { "stream-paced" } else { "stream" };
    let session = Session::start(tmux, name, &dirs.rein_command(binary, &server.base_url()));
    session.wait_for(MODEL, STARTUP_POLL);
    let pid = rein_pid(&session);
    // Let the startup settle, so its work is not counted as streaming.
    std::thread::sleep(Duration::from_millis(300));

    let (cpu0, wrote0, start) = (cpu_time(pid), written_bytes(pid), Instant::now());
    let split0 = main_thread_ns(pid).zip(cpu_time_ns(pid));
    session.send_line("please write the long reply");
    let seen = session.wait_for(MARKER, STREAM_POLL);
    let (cpu1, wrote1) = (cpu_time(pid), written_bytes(pid));
    let split1 = main_thread_ns(pid).zip(cpu_time_ns(pid));
    let split = split0
        .zip(split1)
        .map(|((m0, a0), (m1, a1))| (m1.saturating_sub(m0), a1.saturating_sub(a0)));
    let hwm_kb = status_kb(pid, "VmHWM");
    let rss_kb = status_kb(pid, "VmRSS");

    let (mut idle_cpu, mut idle_cpu_ns) = (None, None);
    if idle {
        std::thread::sleep(Duration::from_secs(1));
        let (a, a_ns) = (cpu_time(pid), cpu_time_ns(pid));
        std::thread::sleep(IDLE);
        let (b, b_ns) = (cpu_time(pid), cpu_time_ns(pid));
        idle_cpu = Some(b - a);
        idle_cpu_ns = a_ns.zip(b_ns).map(|(a, b)| b.saturating_sub(a));
    }
    Stream {
        chunks,
        cpu: cpu1 - cpu0,
        wall: seen - start,
        written: wrote0.zip(wrote1).map(|(a, b)| b - a),
        hwm_kb,
        rss_kb,
        idle_cpu,
        idle_cpu_ns,
        split,
    }
}

fn stream_row(label: &str, s: &Stream) {
    let written = s
        .written
        .map(|b| format!(", {:.1} MB written", b as f64 / 1e6))
        .unwrap_or_default();
    // Threads that ended while streaming (the blocking pool's) are missing from the live
    // threads' total; the rest is the agent's runtime.
    let split = s
        .split
        .map(|(main, all)| {
            format!(
                "; the dashboard's thread {:.3} s, the others {:.3} s",
                main.as_secs_f64(),
                all.saturating_sub(main).as_secs_f64()
            )
        })
        .unwrap_or_default();
    println!(
        "| {label} | {:.2} s CPU, {:.2} s wall ({:.0} chunks/s{written}{split}) | ≤ 0.5 s CPU |",
        s.cpu.as_secs_f64(),
        s.wall.as_secs_f64(),
        s.chunks as f64 / s.wall.as_secs_f64(),
    );
}

fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name")?.split_once(':'))
        .map(|(_, m)| m.trim().to_string())
        .unwrap_or_else(|| "unknown CPU".into());
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let tmux = Command::new("tmux")
        .arg("-V")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    format!("{cpus} CPUs ({model}), {tmux}")
}

/// Peak memory after long replies, with and without paragraph breaks (issue 16, item 4):
/// rows of (reply, VmHWM in kB).
fn long_replies(
    tmux: &TmuxServer,
    binary: &Path,
    runtime: &tokio::runtime::Runtime,
    only: &str,
) -> Vec<(String, u64)> {
    [
        (300_000, Shape::Lines),
        (300_000, Shape::OneLine),
        (1_200_000, Shape::Paragraphs),
        (1_200_000, Shape::Lines),
        (1_200_000, Shape::OneLine),
    ]
    .iter()
    .filter(|(chars, shape)| only.is_empty() || only == format!("{chars}-{}", shape.word()))
    .map(|&(chars, shape)| {
        let run = stream(
            tmux,
            binary,
            runtime,
            &sized_reply(chars, shape),
            false,
            false,
        );
        let shape = match shape {
            Shape::Paragraphs => "with paragraph breaks",
            Shape::Lines => "short lines, no blank line",
            Shape::OneLine => "one line",
        };
        (format!("{chars} characters, {shape}"), run.hwm_kb)
    })
    .collect()
}

fn main() {
    let binary = rein_binary();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let text = reply_text();
    let tmux = TmuxServer::start();
    let words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let only = words.first().cloned().unwrap_or_default();
    let which = words.get(1).cloned().unwrap_or_default();

    // Startup needs no model reply: the dashboard draws before any request.
    let idle_server = runtime
        .block_on(ScriptedServer::start(Vec::new()))
        .expect("the scripted server starts");
    let resumed_all = || -> Vec<(String, String)> {
        [(20, 40), (20_000, 40), (20_000, 340)]
            .iter()
            .filter(|(n, lines)| which.is_empty() || which == format!("{n}-{lines}"))
            .flat_map(|&(n, lines)| resumed(&tmux, &binary, &idle_server.base_url(), n, lines))
            .collect()
    };
    match only.as_str() {
        "resumed" => {
            for (what, figure) in resumed_all() {
                println!("| {what} | {figure} |");
            }
            return;
        }
        "memory" => {
            for (what, hwm) in long_replies(&tmux, &binary, &runtime, &which) {
                println!(
                    "| peak resident memory after a reply of {what} (VmHWM) | {} |",
                    mib(hwm)
                );
            }
            return;
        }
        "window" => {
            let (base_ms, _) = baseline(&tmux);
            println!("| tmux's own start-up (`sh -c 'echo ready'`, median of {RUNS}) | {base_ms:.1} ms |");
            for (what, figure) in window_rows(&tmux, &binary, &runtime) {
                println!("| {what} | {figure} |");
            }
            return;
        }
        "chunks" => {
            // The 4-character chunks, each written on its own, shown live, against curl.
            let reply = long_reply_written(&text, false, true);
            let live = stream_reply(&tmux, &binary, &runtime, reply, false, false);
            stream_row("stream, a write per chunk", &live);
            let curl = curl_cpu(&runtime, &text, false);
            println!(
                "| curl -sN reading the same stream | {:.3} s CPU; the dashboard spent {:.1} times that | ≤ 2 times |",
                curl.as_secs_f64(),
                live.cpu.as_secs_f64() / curl.as_secs_f64()
            );
            return;
        }
        "headless" => {
            // The agent alone, unpaced then paced: what reading and parsing the stream costs
            // with no frames, and what the pauses add.
            headless_rows(&binary, &runtime, &text);
            return;
        }
        "curl-paced" => {
            // The floor for the paced stream: a plain HTTP client reading it.
            let curl = curl_cpu(&runtime, &text, true);
            println!(
                "| curl -sN reading the paced stream | {:.3} s CPU | |",
                curl.as_secs_f64()
            );
            return;
        }
        "headless-paced" => {
            // The agent alone on the paced stream (for a profiler: REIN_BENCH_BINARY may be a
            // wrapper that runs rein under one).
            let (_, cpu) = headless(&binary, &runtime, &text, true, 1);
            println!("| headless, paced | {:.3} s CPU | |", cpu.as_secs_f64());
            return;
        }
        "stream-paced" => {
            // The paced stream alone (for a profiler: REIN_BENCH_BINARY may be a wrapper).
            let paced = stream(&tmux, &binary, &runtime, &text, true, false);
            stream_row("stream, paced", &paced);
            return;
        }
        "stream" => {
            let fast = stream(&tmux, &binary, &runtime, &text, false, false);
            stream_row("stream, unpaced", &fast);
            let paced = stream(&tmux, &binary, &runtime, &text, true, false);
            stream_row("stream, paced", &paced);
            headless_rows(&binary, &runtime, &text);
            return;
        }
        _ => {}
    }
    let (base_ms, base_runs) = baseline(&tmux);
    let start = startup(&tmux, &binary, &idle_server.base_url());
    let with_mcp = startup_with_mcp(&tmux, &binary, &idle_server.base_url());
    let window = window_rows(&tmux, &binary, &runtime);
    let resumed_rows = resumed_all();
    let fast = stream(&tmux, &binary, &runtime, &text, false, true);
    let (headless_chunks, headless_cpu) = headless(&binary, &runtime, &text, false, RUNS);
    let paced = stream(&tmux, &binary, &runtime, &text, true, false);
    let memory_rows = long_replies(&tmux, &binary, &runtime, "");

    println!(
        "rein dashboard, release binary {}, tmux pane {}",
        binary.display(),
        start.pane
    );
    println!();
    println!("| benchmark | result | target |");
    println!("|---|---|---|");
    println!(
        "| startup to first frame (median of {RUNS}) | {:.1} ms; {:.1} ms over the tmux baseline of {:.1} ms | ≤ 50 ms |",
        start.median_ms,
        start.median_ms - base_ms,
        base_ms
    );
    if let Some((first, ready)) = with_mcp {
        println!(
            "| startup to first frame with three stdio MCP servers configured (median of {RUNS}) | {first:.1} ms | ≤ 50 ms (no wait for them) |"
        );
        println!(
            "| until all three servers are ready on screen (median of {RUNS}) | {ready:.0} ms | |"
        );
    }
    for (what, figure) in &window {
        println!("| {what} (median of {RUNS}) | {figure} | ≤ 50 ms to the first frame |");
    }
    for (what, hwm) in &memory_rows {
        println!(
            "| peak resident memory after a reply of {what} (VmHWM) | {} | ≤ 30 MB |",
            mib(*hwm)
        );
    }
    for (what, figure) in &resumed_rows {
        println!("| {what} | {figure} | |");
    }
    println!(
        "| resident memory at first frame (VmRSS, median of {RUNS}) | {} | ≤ 20 MB |",
        mib(start.rss_kb)
    );
    println!(
        "| peak resident memory after the 300 000-character reply (VmHWM) | {} (VmRSS {}) | ≤ 30 MB |",
        mib(fast.hwm_kb),
        mib(fast.rss_kb)
    );
    stream_row(
        &format!(
            "stream {REPLY_CHARS} characters in {CHUNK_CHARS}-character chunks ({} events), unpaced",
            fast.chunks
        ),
        &fast,
    );
    stream_row(
        &format!(
            "the same, paced at {} chunks/s",
            PACE_EVERY as u128 * 1000 / PACE_SLEEP.as_millis()
        ),
        &paced,
    );
    println!(
        "| headless (`rein -p`, output to /dev/null): the same {headless_chunks} chunks, unpaced (median of {RUNS}) | {:.3} s CPU of the whole process: {:.0} chunks per CPU-second | ≥ 400 000 chunks per CPU-second |",
        headless_cpu.as_secs_f64(),
        headless_chunks as f64 / headless_cpu.as_secs_f64()
    );
    let idle = fast.idle_cpu.unwrap_or_default();
    let precise = fast
        .idle_cpu_ns
        .map(|d| {
            format!(
                " ({:.3} % from per-thread schedstat)",
                d.as_secs_f64() / IDLE.as_secs_f64() * 100.0
            )
        })
        .unwrap_or_default();
    println!(
        "| idle CPU over {} s after the reply | {:.2} %{precise} | ≤ 0.2 % |",
        IDLE.as_secs(),
        idle.as_secs_f64() / IDLE.as_secs_f64() * 100.0
    );
    println!();
    let list = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.1}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "Runs (ms): startup {}; tmux baseline {}. Paced peak memory {} (VmHWM).",
        list(&start.runs_ms),
        list(&base_runs),
        mib(paced.hwm_kb)
    );
    println!("Machine: {}.", machine());
}
