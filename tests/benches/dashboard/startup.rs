//! Startup: the baseline, the first frame, a slow window probe, MCP servers.

use rein_test_support as support;

use std::path::Path;
use std::time::{Duration, Instant};

use support::ScriptedServer;

use super::measure::{median, ms, rein_pid, status_kb};
use super::{Dirs, Session, Startup, TmuxServer, MODEL, RUNS, STARTUP_POLL};

/// Median time for tmux to show `sh -c 'echo ready'`.
pub(super) fn baseline(tmux: &TmuxServer) -> (f64, Vec<f64>) {
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

/// Median time to the first frame, and the median VmRSS right after it.
pub(super) fn startup(tmux: &TmuxServer, binary: &Path, base_url: &str) -> Startup {
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
pub(super) fn window_rows(
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
pub(super) fn startup_with_mcp(
    tmux: &TmuxServer,
    binary: &Path,
    base_url: &str,
) -> Option<(f64, f64)> {
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
