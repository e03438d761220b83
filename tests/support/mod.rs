//! Shared test code. The scripted OpenAI-compatible server the tests and benchmarks talk
//! to lives in the library (`rein::demo`, which `rein --demo` plays too); this module only
//! re-exports it, so there is one copy of the code. `agent` is the harness the agent tests
//! share, `app` the one of the dashboard's state machine and its snapshots.
#![allow(dead_code, unused_imports)]

pub mod agent;
pub mod app;
pub mod mcp;
pub mod replay;
pub mod rng;

pub use rein::demo::reply::*;
pub use rein::demo::server::*;

/// Prose of about `chars` characters starting with `tag`, in long words (few stream
/// chunks), each numbered: a reply that repeats one span over and over is stopped as a
/// runaway (`rein::agent::repetition`), and no model writes the same words exactly 70
/// times.
pub fn prose(tag: &str, chars: usize) -> String {
    let mut s = format!("{tag} ");
    let mut n = 0;
    while s.len() < chars {
        n += 1;
        s.push_str(&format!(
            "lorem-ipsum-dolor-sit-amet-consectetur-adipiscing-{n} "
        ));
    }
    s.truncate(chars);
    s.trim_end().to_string()
}

/// The real binary for the project `project`, with only `PATH` of the test's environment,
/// `home` as `HOME` and `home/rein-home` as `REIN_HOME`, and no standard input.
pub fn rein_in(home: &std::path::Path, project: &std::path::Path) -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_rein"));
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("REIN_HOME", home.join("rein-home"))
        .arg("--cwd")
        .arg(project)
        .stdin(std::process::Stdio::null());
    c
}

/// An executable `#!/bin/sh` script in `dir` with `body` (a hook, a fake program); its
/// path.
pub fn script(dir: &std::path::Path, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

/// The tool results the model read in the last of `requests` (the scripted server's), in
/// order.
pub fn last_tool_results(requests: &[serde_json::Value]) -> Vec<String> {
    requests
        .last()
        .and_then(|r| r["messages"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}
