//! Hooks (issue 26): scripts written to Claude Code's documented payload, run by the real
//! binary (`rein -p`) against the scripted server, with real processes.

use crate::support;

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::{json, Value};
use support::{script, ScriptedServer};

mod project;
mod prompts_and_stops;
mod session_end;
mod tool_calls;

/// The user's `hooks.json` (beside their config.toml, which turns the sandbox off).
fn user_hooks(home: &Path, hooks: Value) {
    let dir = home.join("rein-home");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), "[sandbox]\nmode = \"off\"\n").unwrap();
    std::fs::write(
        dir.join("hooks.json"),
        json!({ "hooks": hooks }).to_string(),
    )
    .unwrap();
}

/// The payloads a logging hook appended to `log`, one JSON object a line.
fn logged(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A hook in `dir` that appends each payload it reads to `log`, a line each.
fn logger(dir: &Path, log: &Path) -> String {
    script(
        dir,
        "log.sh",
        &format!("cat >> {}; echo >> {}\n", log.display(), log.display()),
    )
}

fn command(path: &str) -> Value {
    json!([{ "type": "command", "command": path }])
}

fn rein(home: &Path, project: &Path, server: &ScriptedServer, extra: &[&str]) -> Output {
    support::rein_in(home, project)
        .args([
            "-p",
            "go",
            "--base-url",
            &server.base_url(),
            "--model",
            "scripted",
        ])
        .args(extra)
        .output()
        .unwrap()
}

/// The tool results the model got, from the last request.
fn tool_results(server: &ScriptedServer) -> Vec<String> {
    support::last_tool_results(&server.requests())
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet), polled a bounded number
/// of times.
async fn gone(pid: i32) -> bool {
    for _ in 0..500 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
        let dead = match stat {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        };
        if dead {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}
