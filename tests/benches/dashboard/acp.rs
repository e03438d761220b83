//! The editor protocol's cost (`cargo bench --bench dashboard -- acp`): the same long
//! reply as a turn through `rein acp` (this bench as the client, reading every
//! `session/update`) and through `rein -p`, the CPU of each (user + system, from `wait4`),
//! median of `RUNS`, interleaved; then an idle ACP session's memory and CPU beside the
//! idle dashboard's.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use rein_test_support::ScriptedServer;
use serde_json::{json, Value};

use super::headless::{child_cpu, headless};
use super::measure::{cpu_time, median, mib, rein_pid, status_kb};
use super::replies::long_reply;
use super::{Dirs, Session, TmuxServer, IDLE, MODEL, RUNS};

/// `rein acp` for `base_url`, its pipes ours.
fn acp(binary: &Path, dirs: &Dirs, base_url: &str) -> std::process::Child {
    let home = dirs.home.path();
    Command::new(binary)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("REIN_HOME", home.join("rein-home"))
        .args(["--base-url", base_url, "--model", MODEL, "acp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("rein acp starts")
}

/// A line-at-a-time JSON-RPC client over the child's pipes.
struct Client {
    stdin: std::process::ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
    /// `session/update`s read.
    updates: usize,
}

impl Client {
    fn new(child: &mut std::process::Child) -> Client {
        Client {
            stdin: child.stdin.take().expect("stdin"),
            lines: BufReader::new(child.stdout.take().expect("stdout")).lines(),
            updates: 0,
        }
    }

    /// Send request `id` and read until its answer.
    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{line}").expect("rein reads");
        loop {
            let line = self.lines.next().expect("rein answers").expect("a line");
            let message: Value = serde_json::from_str(&line).expect("JSON-RPC");
            if message["method"] == "session/update" {
                self.updates += 1;
            } else if message["id"] == id {
                return message;
            }
        }
    }

    /// initialize and session/new in `project`: the session id.
    fn open(&mut self, project: &Path) -> String {
        self.call(
            1,
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        );
        let r = self.call(2, "session/new", json!({"cwd": project, "mcpServers": []}));
        r["result"]["sessionId"]
            .as_str()
            .expect("a session")
            .to_string()
    }
}

/// The long reply as one turn through `rein acp`: its CPU, and the updates read.
// `wait4` reaps the child (for its rusage); clippy sees no `wait()`.
#[allow(clippy::zombie_processes)]
fn acp_turn(binary: &Path, runtime: &tokio::runtime::Runtime, text: &str) -> (Duration, usize) {
    let (reply, _) = long_reply(text, false);
    let server = runtime
        .block_on(ScriptedServer::start(vec![reply]))
        .expect("the scripted server starts");
    let dirs = Dirs::new();
    let mut child = acp(binary, &dirs, &server.base_url());
    let mut client = Client::new(&mut child);
    let session = client.open(dirs.project.path());
    let done = client.call(
        3,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "please write the long reply"}]}),
    );
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let updates = client.updates;
    drop(client);
    (child_cpu(&child), updates)
}

/// The rows: a turn through the protocol against the same turn headless; an idle session.
pub(super) fn acp_rows(
    tmux: &TmuxServer,
    binary: &Path,
    runtime: &tokio::runtime::Runtime,
    text: &str,
) {
    let (mut through_acp, mut headless_cpu) = (Vec::new(), Vec::new());
    let mut updates = 0;
    for _ in 0..RUNS {
        let (cpu, n) = acp_turn(binary, runtime, text);
        through_acp.push(cpu.as_secs_f64());
        updates = n;
        let (_, cpu) = headless(binary, runtime, text, false, 1);
        headless_cpu.push(cpu.as_secs_f64());
    }
    let (a, h) = (median(through_acp), median(headless_cpu));
    println!(
        "| the long reply as a turn through `rein acp` ({updates} updates read) | {a:.3} s CPU |"
    );
    println!("| the same turn through `rein -p` | {h:.3} s CPU |");
    println!("| the protocol's share | {:+.1} % |", (a / h - 1.0) * 100.0);

    // Idle: an ACP session open, nothing asked.
    let server = runtime
        .block_on(ScriptedServer::start(Vec::new()))
        .expect("the scripted server starts");
    let dirs = Dirs::new();
    let mut child = acp(binary, &dirs, &server.base_url());
    let mut client = Client::new(&mut child);
    client.open(dirs.project.path());
    std::thread::sleep(Duration::from_secs(2));
    let pid = child.id();
    let before = cpu_time(pid);
    std::thread::sleep(IDLE);
    let idle_cpu = cpu_time(pid) - before;
    let rss = status_kb(pid, "VmRSS");
    drop(client);
    let _ = child.wait();
    println!("| an idle ACP session: resident memory | {} |", mib(rss));
    println!(
        "| an idle ACP session: CPU over {} s | {:.3} s |",
        IDLE.as_secs(),
        idle_cpu.as_secs_f64()
    );

    // The idle dashboard beside it, on this machine.
    let dirs = Dirs::new();
    let session = Session::start(
        tmux,
        "acp-idle",
        &dirs.rein_command(binary, &server.base_url()),
    );
    session.wait_for(MODEL, Duration::from_millis(20));
    std::thread::sleep(Duration::from_secs(2));
    let pid = rein_pid(&session);
    println!(
        "| the idle dashboard: resident memory | {} |",
        mib(status_kb(pid, "VmRSS"))
    );
}
