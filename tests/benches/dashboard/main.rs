//! The dashboard as a person runs it, measured from outside: `cargo bench --bench dashboard`.
//!
//! The release binary runs in tmux at 120×40 (a private tmux server, no config file)
//! against the scripted model server, as in `tests/it/tmux_e2e/`. The figures are the
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
//! `cargo bench --bench dashboard -- resumed` (or `resumed 20000-40`, `acp`, `memory`, `memory
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

use support::ScriptedServer;
use tempfile::TempDir;

use headless::{curl_cpu, headless, headless_rows};
use measure::mib;
use replies::{long_reply_written, reply_text};
use resume::resumed;
use startup::{baseline, startup, startup_with_mcp, window_rows};
use stream::{long_replies, stream, stream_reply, stream_row};

mod acp;
mod headless;
mod measure;
mod replies;
mod resume;
mod startup;
mod stream;

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

struct Startup {
    median_ms: f64,
    runs_ms: Vec<f64>,
    rss_kb: u64,
    pane: String,
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
        "acp" => {
            // The editor protocol: a turn through it against headless, an idle session.
            acp::acp_rows(&tmux, &binary, &runtime, &text);
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
