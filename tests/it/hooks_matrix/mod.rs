//! Hooks, as a matrix: exit codes 0, 1 and 2 crossed with Claude Code's JSON outputs (none,
//! plain text, `decision: "block"`, `continue: false`, `systemMessage`, `permissionDecision`
//! allow/deny/ask, `additionalContext`, `updatedInput`) for every event a hook can block:
//! PreToolUse, PermissionRequest, UserPromptSubmit, Stop, SubagentStop and PostToolUse.
//!
//! Every row runs the real binary (`rein -p`) against the scripted server with one hook
//! that writes the row's stdout and stderr and exits with the row's code, and checks what
//! can be seen from outside: whether the tool ran (a file it touches), what the model read
//! in its next request, how many requests it got, the exit code and the notices on
//! stderr. JSON on stdout counts with exit 0 only (Claude Code ignores it on 1 and 2): the
//! rows with exit 1 and 2 carry JSON that would change the outcome if it were read. Every
//! hook also leaves a mark that it ran, so a row whose outcome is "nothing changes" still
//! fails when the hook is not run at all.
//!
//! The rows of an event run one after the other in one test (each run is a few hundred
//! milliseconds); a failing test names every row that failed, with its stderr.

use crate::support;

use std::path::Path;

use serde_json::{json, Value};
use support::{Reply, ScriptedServer};

mod permission_request;
mod post_tool_use;
mod pre_tool_use;
mod prompt_and_stop;

/// One hook's behaviour: what it prints on stdout and stderr, and its exit code.
#[derive(Clone, Default)]
struct Hook {
    out: String,
    err: String,
    code: i32,
}

/// A hook printing `out` on stdout and exiting `code`.
fn hook(code: i32, out: &str) -> Hook {
    Hook {
        out: out.to_string(),
        err: String::new(),
        code,
    }
}

impl Hook {
    fn err(mut self, err: &str) -> Hook {
        self.err = err.to_string();
        self
    }
}

/// What a row expects to see. `None` and empty lists check nothing.
#[derive(Default)]
struct Expect {
    /// The headless exit code.
    exit: i32,
    /// Whether the hook ran at all (`true` unless the row says the event never fired).
    not_fired: bool,
    /// Whether `ran.txt` exists in the project (the tool call touches it).
    ran: Option<bool>,
    /// Whether `rewritten.txt` exists (the command an `updatedInput` gives touches it).
    rewritten: Option<bool>,
    /// The tool result the model read (the first tool message of the last request), exactly.
    result: Option<&'static str>,
    /// Text the tool result holds.
    result_has: &'static [&'static str],
    /// How many requests the model got.
    requests: Option<usize>,
    /// Text some message the model got holds (any request).
    seen: &'static [&'static str],
    /// Text no request holds.
    unseen: &'static [&'static str],
    /// Text stderr holds.
    stderr: &'static [&'static str],
    /// Text stderr does not hold.
    no_stderr: &'static [&'static str],
}

/// One row: a hook for the event, the bash command the model calls (tool events), whether
/// rein runs with `--yes`, and what must come of it.
struct Row {
    name: &'static str,
    hook: Hook,
    call: &'static str,
    yes: bool,
    expect: Expect,
}

/// What one run left to look at.
struct Seen {
    code: Option<i32>,
    stderr: String,
    requests: Vec<Value>,
    fired: bool,
    ran: bool,
    rewritten: bool,
}

impl Seen {
    /// The tool results the model read in its last request.
    fn results(&self) -> Vec<String> {
        support::last_tool_results(&self.requests)
    }

    /// Whether any request's messages hold `text`.
    fn model_saw(&self, text: &str) -> bool {
        self.requests.iter().any(|r| {
            r["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|m| m["content"].to_string().contains(text))
        })
    }
}

// Claude Code's JSON outputs (the reasons are what the rows look for).
const BLOCK: &str = r#"{"decision": "block", "reason": "R-block"}"#;
const STOP: &str = r#"{"continue": false, "stopReason": "R-stop"}"#;
const MESSAGE: &str = r#"{"systemMessage": "R-msg"}"#;
const PLAIN: &str = "R-plain words";

/// `hookSpecificOutput` for `event` with `fields` (a JSON object's inside).
fn specific(event: &str, fields: &str) -> String {
    format!(r#"{{"hookSpecificOutput": {{"hookEventName": "{event}", {fields}}}}}"#)
}

fn decision(event: &str, decision: &str) -> String {
    specific(
        event,
        &format!(
            r#""permissionDecision": "{decision}", "permissionDecisionReason": "R-{decision}""#
        ),
    )
}

fn context(event: &str) -> String {
    specific(event, r#""additionalContext": "R-context""#)
}

/// The hook script: note that it ran, stand aside once a Stop or SubagentStop hook already
/// kept the turn going (Claude Code's documented guard), then print and exit as told.
fn script(dir: &Path, hook: &Hook) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("hook.sh");
    let mut body = format!(
        "#!/bin/sh\npayload=$(cat)\necho fired >> {}\n",
        dir.join("fired").display()
    );
    body.push_str("case \"$payload\" in *'\"stop_hook_active\":true'*) exit 0 ;; esac\n");
    if !hook.out.is_empty() {
        body.push_str(&format!("cat <<'HOOK_OUT'\n{}\nHOOK_OUT\n", hook.out));
    }
    if !hook.err.is_empty() {
        body.push_str(&format!("cat >&2 <<'HOOK_ERR'\n{}\nHOOK_ERR\n", hook.err));
    }
    body.push_str(&format!("exit {}\n", hook.code));
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

/// Run rein once: `hook` as the only hook of `event` (for every tool where it has a
/// matcher), the model scripted with `replies`, the prompt "go".
async fn run(event: &str, hook: &Hook, replies: Vec<Reply>, yes: bool) -> Seen {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let hooks_dir = tempfile::tempdir().unwrap();
    let command = script(hooks_dir.path(), hook);
    let dir = home.path().join("rein-home");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), "[sandbox]\nmode = \"off\"\n").unwrap();
    let hooks = json!({"hooks": {event: [{"hooks": [{"type": "command", "command": command}]}]}});
    std::fs::write(dir.join("hooks.json"), hooks.to_string()).unwrap();
    let server = ScriptedServer::start(replies).await.unwrap();
    let mut rein = support::rein_in(home.path(), project.path());
    rein.args([
        "-p",
        "go",
        "--base-url",
        &server.base_url(),
        "--model",
        "scripted",
    ]);
    if yes {
        rein.arg("--yes");
    }
    let out = rein.output().unwrap();
    Seen {
        code: out.status.code(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        requests: server.requests(),
        fired: hooks_dir.path().join("fired").exists(),
        ran: project.path().join("ran.txt").exists(),
        rewritten: project.path().join("rewritten.txt").exists(),
    }
}

/// What is wrong with `seen` for `expect`, a line each.
fn check(expect: &Expect, seen: &Seen) -> Vec<String> {
    let mut wrong = Vec::new();
    if seen.fired == expect.not_fired {
        wrong.push(format!("the hook fired: {}", seen.fired));
    }
    if seen.code != Some(expect.exit) {
        wrong.push(format!("exit code {:?}, not {}", seen.code, expect.exit));
    }
    if let Some(ran) = expect.ran.filter(|&r| r != seen.ran) {
        wrong.push(format!("the tool ran: {}, expected {ran}", seen.ran));
    }
    if let Some(r) = expect.rewritten.filter(|&r| r != seen.rewritten) {
        wrong.push(format!(
            "the rewritten command ran: {}, expected {r}",
            seen.rewritten
        ));
    }
    let results = seen.results();
    let first = results.first().map(String::as_str);
    if let Some(result) = expect.result.filter(|&r| first != Some(r)) {
        wrong.push(format!("the model read {first:?}, not {result:?}"));
    }
    for text in expect.result_has {
        if !first.is_some_and(|r| r.contains(text)) {
            wrong.push(format!("the model read {first:?}, without {text:?}"));
        }
    }
    if let Some(n) = expect.requests.filter(|&n| n != seen.requests.len()) {
        wrong.push(format!("{} requests, not {n}", seen.requests.len()));
    }
    for text in expect.seen {
        if !seen.model_saw(text) {
            wrong.push(format!("the model never saw {text:?}"));
        }
    }
    for text in expect.unseen {
        if seen.model_saw(text) {
            wrong.push(format!("the model saw {text:?}"));
        }
    }
    for text in expect.stderr {
        if !seen.stderr.contains(text) {
            wrong.push(format!("stderr lacks {text:?}"));
        }
    }
    for text in expect.no_stderr {
        if seen.stderr.contains(text) {
            wrong.push(format!("stderr has {text:?}"));
        }
    }
    wrong
}

/// Run every row of `event` (`replies` gives each its model's replies from its call) and
/// fail naming every row that went wrong.
async fn matrix(event: &str, rows: Vec<Row>, replies: impl Fn(&str) -> Vec<Reply>) {
    let mut failed = Vec::new();
    for row in &rows {
        let seen = run(event, &row.hook, replies(row.call), row.yes).await;
        let wrong = check(&row.expect, &seen);
        if !wrong.is_empty() {
            failed.push(format!(
                "{event} row \"{}\":\n  {}\n  stderr: {}",
                row.name,
                wrong.join("\n  "),
                seen.stderr.trim().replace('\n', "\n    ")
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} rows failed:\n{}",
        failed.len(),
        rows.len(),
        failed.join("\n")
    );
}

/// A bash call, then the model is done.
fn call_then_done(call: &str) -> Vec<Reply> {
    let args = json!({ "command": call }).to_string();
    vec![Reply::tool_calls(&[("bash", &args)]), Reply::text("done")]
}

/// Needs approval (touch asks by default) and leaves ran.txt when it runs.
const TOUCH: &str = "touch ran.txt && echo touched";
/// Runs without approval by default.
const ECHO: &str = "echo asked";
