//! The helpers rein's integration tests (`tests/it/`) and benchmarks (`tests/benches/`)
//! share, compiled once. The scripted OpenAI-compatible server they talk to lives in the
//! library (`rein_core::demo`, which `rein --demo` plays too); this crate only re-exports it, so
//! there is one copy of the code. `agent` is the harness the agent tests share, `app` the
//! one of the dashboard's state machine and its snapshots, `mcp` where the real MCP servers
//! are, `replay` the recorded providers' samples, `rng` the property tests' numbers,
//! `machine` the lock between the tests that load every core and those that watch a clock.
//!
//! Only an integration test knows where cargo put the `rein` binary
//! (`env!("CARGO_BIN_EXE_rein")`): the functions that run it take its path, and
//! `tests/it/main.rs` passes it in one place.

pub mod agent;
pub mod app;
pub mod machine;
pub mod mcp;
pub mod replay;
pub mod rng;

pub use rein_core::demo::reply::*;
pub use rein_core::demo::server::*;

use std::path::{Path, PathBuf};
use std::process::Output;

/// Prose of about `chars` characters starting with `tag`, in long words (few stream
/// chunks), each numbered: a reply that repeats one span over and over is stopped as a
/// runaway (`rein_core::agent::repetition`), and no model writes the same words exactly 70
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

/// The repository's root folder (this crate is `crates/test-support` in it).
pub fn repository() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent()
        .and_then(Path::parent)
        .unwrap_or(here)
        .to_path_buf()
}

/// The real binary `bin` for the project `project`, with only `PATH` of the test's
/// environment, `home` as `HOME` and `home/rein-home` as `REIN_HOME`, and no standard input.
pub fn rein_in_at(bin: &str, home: &Path, project: &Path) -> std::process::Command {
    let mut c = std::process::Command::new(bin);
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("REIN_HOME", home.join("rein-home"))
        .arg("--cwd")
        .arg(project)
        .stdin(std::process::Stdio::null());
    c
}

/// The real binary `bin` as a tokio command killed when dropped, with only `PATH` of the
/// test's environment, `home` as `HOME` and `home/rein-home` as `REIN_HOME`, and no
/// standard input (no `--cwd`: the caller's arguments say where).
pub fn rein_command_at(bin: &str, home: &Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(bin);
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("REIN_HOME", home.join("rein-home"))
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    cmd
}

/// What a finished process wrote on stdout, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What a finished process wrote on stderr, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Write `text` to `path`, making its folders first.
pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// How long a test waits for something it expects (a process to end, a screen, an event)
/// before it gives up: a wait that only ends a test that would otherwise hang; never a speed
/// limit. A test that checks something does *not* happen waits for a time of its own.
pub const GIVE_UP: std::time::Duration = std::time::Duration::from_secs(120);

/// The variable naming, in the process [`alone`] starts, the one test it runs.
const ALONE: &str = "REIN_TEST_ALONE";

/// Whether the calling test, `name` (`module::test`), is to run its body here: `true` in
/// the process of its own that this starts for it, with `env` added to the environment it
/// starts with; `false` in the shared test process, after the test ran alone there and
/// passed (its output is in the panic when it did not). For a test that reads or needs
/// process-wide state (its own resident memory, a variable in its environment), which the
/// other tests of the one test binary would change, or see, while they run beside it.
pub fn alone(name: &str, env: &[(&str, &str)]) -> bool {
    if std::env::var_os(ALONE).is_some_and(|v| v == name) {
        return true;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--test-threads=1", "--nocapture"])
        .env(ALONE, name)
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = (stdout(&out), stderr(&out));
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{name}, run alone, failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    false
}

/// An executable `#!/bin/sh` script in `dir` with `body` (a hook, a fake program); its
/// path.
pub fn script(dir: &Path, name: &str, body: &str) -> String {
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
