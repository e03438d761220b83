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
const BLOCK_AND_STOP: &str =
    r#"{"decision": "block", "reason": "R-block", "continue": false, "stopReason": "R-stop"}"#;
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

/// `updatedInput` (a command that touches rewritten.txt) with a `permissionDecision`.
fn rewrite(event: &str, decision: &str) -> String {
    specific(
        event,
        &format!(
            r#""permissionDecision": "{decision}", "permissionDecisionReason": "R-{decision}", "updatedInput": {{"command": "touch rewritten.txt && echo rewritten"}}"#
        ),
    )
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
/// The start of what the model reads for a call a hook refused.
const BLOCKED: &str = "Error: bash was blocked by a hook: ";
/// Runs without approval by default.
const ECHO: &str = "echo asked";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pre_tool_use_matrix() {
    const E: &str = "PreToolUse";
    let row = |name, hook, call, yes, expect| Row {
        name,
        hook,
        call,
        yes,
        expect,
    };
    let rows = vec![
        row(
            "exit 0, no output: the call runs",
            hook(0, ""),
            TOUCH,
            true,
            Expect {
                ran: Some(true),
                result: Some("touched"),
                requests: Some(2),
                ..Default::default()
            },
        ),
        row(
            "exit 0, plain text: nothing for anyone",
            hook(0, PLAIN),
            TOUCH,
            true,
            Expect {
                ran: Some(true),
                result: Some("touched"),
                unseen: &["R-plain"],
                no_stderr: &["R-plain"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, decision block: refused with its reason",
            hook(0, BLOCK),
            TOUCH,
            true,
            Expect {
                ran: Some(false),
                result: Some("Error: bash was blocked by a hook: R-block"),
                requests: Some(2),
                stderr: &["hook PreToolUse: blocked Bash: R-block"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, continue false: not run, the turn stops",
            hook(0, STOP),
            TOUCH,
            true,
            Expect {
                ran: Some(false),
                requests: Some(1),
                stderr: &[
                    "stopped the turn: R-stop",
                    "the turn was stopped by a hook: R-stop",
                ],
                ..Default::default()
            },
        ),
        row(
            "exit 0, systemMessage: shown, the call runs",
            hook(0, MESSAGE),
            TOUCH,
            true,
            Expect {
                ran: Some(true),
                result: Some("touched"),
                stderr: &["hook PreToolUse: R-msg"],
                unseen: &["R-msg"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, deny: refused with its reason",
            hook(0, &decision(E, "deny")),
            TOUCH,
            true,
            Expect {
                ran: Some(false),
                result: Some("Error: bash was blocked by a hook: R-deny"),
                stderr: &["denied Bash: R-deny"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, allow: runs without the question (no --yes)",
            hook(0, &decision(E, "allow")),
            TOUCH,
            false,
            Expect {
                ran: Some(true),
                result: Some("touched"),
                stderr: &["a PreToolUse hook allowed it: R-allow"],
                no_stderr: &["refused (needs approval"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, allow: never over a deny rule",
            hook(0, &decision(E, "allow")),
            "rm -f precious.txt",
            true,
            Expect {
                result_has: &["Error: bash was denied by the permission rules"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, ask: put to the user, refused headless (no --yes)",
            hook(0, &decision(E, "ask")),
            ECHO,
            false,
            Expect {
                result_has: &["Error: bash was not run: approval was refused"],
                stderr: &["refused (needs approval", "a PreToolUse hook asks: R-ask"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, ask: approved by --yes",
            hook(0, &decision(E, "ask")),
            ECHO,
            true,
            Expect {
                result: Some("asked"),
                stderr: &["approved by --yes", "a PreToolUse hook asks: R-ask"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, additionalContext: rides with the result",
            hook(0, &context(E)),
            TOUCH,
            true,
            Expect {
                ran: Some(true),
                result: Some("touched\n\n(from a PreToolUse hook: R-context)"),
                ..Default::default()
            },
        ),
        row(
            "exit 0, allow + updatedInput: the rewritten call runs",
            hook(0, &rewrite(E, "allow")),
            TOUCH,
            false,
            Expect {
                ran: Some(false),
                rewritten: Some(true),
                result: Some("rewritten"),
                ..Default::default()
            },
        ),
        row(
            "exit 0, ask + updatedInput: the rewritten call is asked and runs (--yes)",
            hook(0, &rewrite(E, "ask")),
            TOUCH,
            true,
            Expect {
                ran: Some(false),
                rewritten: Some(true),
                result: Some("rewritten"),
                stderr: &["approved by --yes"],
                ..Default::default()
            },
        ),
        row(
            "exit 2: refused with stderr",
            hook(2, "").err("R-exit2"),
            TOUCH,
            true,
            Expect {
                ran: Some(false),
                result: Some("Error: bash was blocked by a hook: R-exit2"),
                requests: Some(2),
                stderr: &["blocked Bash: R-exit2"],
                ..Default::default()
            },
        ),
        row(
            "exit 2, no stderr: refused all the same",
            hook(2, ""),
            TOUCH,
            true,
            Expect {
                ran: Some(false),
                result: Some(
                    "Error: bash was blocked by a hook: blocked by a hook (it gave no reason)",
                ),
                ..Default::default()
            },
        ),
        row(
            "exit 2, allow + updatedInput on stdout: ignored, refused",
            hook(2, &rewrite(E, "allow")).err("R-exit2"),
            TOUCH,
            true,
            Expect {
                ran: Some(false),
                rewritten: Some(false),
                result: Some("Error: bash was blocked by a hook: R-exit2"),
                ..Default::default()
            },
        ),
        row(
            "exit 2, continue false on stdout: ignored, the turn goes on",
            hook(2, STOP).err("R-exit2"),
            TOUCH,
            true,
            Expect {
                ran: Some(false),
                requests: Some(2),
                result_has: &[BLOCKED],
                no_stderr: &["R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 1: an error shown, the call runs",
            hook(1, "").err("R-exit1"),
            TOUCH,
            true,
            Expect {
                ran: Some(true),
                result: Some("touched"),
                stderr: &["hook PreToolUse: failed: exit code 1: R-exit1"],
                unseen: &["R-exit1"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, deny on stdout: ignored, the call runs",
            hook(1, &decision(E, "deny")),
            TOUCH,
            true,
            Expect {
                ran: Some(true),
                result: Some("touched"),
                stderr: &["failed: exit code 1"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, decision block on stdout: ignored, the call runs",
            hook(1, BLOCK),
            TOUCH,
            true,
            Expect {
                ran: Some(true),
                result: Some("touched"),
                ..Default::default()
            },
        ),
        row(
            "exit 1, allow on stdout: ignored, the question stays (no --yes)",
            hook(1, &decision(E, "allow")),
            TOUCH,
            false,
            Expect {
                ran: Some(false),
                result_has: &["approval was refused"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, updatedInput on stdout: ignored, the original runs",
            hook(1, &rewrite(E, "allow")),
            TOUCH,
            true,
            Expect {
                ran: Some(true),
                rewritten: Some(false),
                result: Some("touched"),
                ..Default::default()
            },
        ),
        row(
            "exit 1, continue false on stdout: ignored, the turn goes on",
            hook(1, STOP),
            TOUCH,
            true,
            Expect {
                ran: Some(true),
                requests: Some(2),
                no_stderr: &["R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, additionalContext on stdout: ignored",
            hook(1, &context(E)),
            TOUCH,
            true,
            Expect {
                ran: Some(true),
                result: Some("touched"),
                unseen: &["R-context"],
                ..Default::default()
            },
        ),
    ];
    matrix(E, rows, call_then_done).await;
}

/// PermissionRequest's own answer: `hookSpecificOutput.decision` with `behavior` and, for
/// a deny, `message`; `extra` more fields of `decision`.
fn behavior(behavior: &str, extra: &str) -> String {
    specific(
        "PermissionRequest",
        &format!(r#""decision": {{"behavior": "{behavior}"{extra}}}"#),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_request_matrix() {
    // The hook answers the question rein would put to the user: `touch` asks by default,
    // and headless without --yes refuses what is asked.
    const E: &str = "PermissionRequest";
    let row = |name, hook, call, expect| Row {
        name,
        hook,
        call,
        yes: false,
        expect,
    };
    let refused = &["Error: bash was not run: approval was refused"][..];
    let rows = vec![
        row(
            "exit 0, no output: the question goes to the user (refused headless)",
            hook(0, ""),
            TOUCH,
            Expect {
                ran: Some(false),
                result_has: refused,
                stderr: &["refused (needs approval"],
                ..Default::default()
            },
        ),
        row(
            "a call that is not asked about: no PermissionRequest",
            hook(0, &behavior("deny", r#", "message": "R-deny""#)),
            ECHO,
            Expect {
                not_fired: true,
                result: Some("asked"),
                ..Default::default()
            },
        ),
        row(
            "exit 0, decision.behavior allow: runs, no question",
            hook(0, &behavior("allow", "")),
            TOUCH,
            Expect {
                ran: Some(true),
                result: Some("touched"),
                no_stderr: &["refused (needs approval"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, allow + decision.updatedInput: the rewritten call runs",
            hook(
                0,
                &behavior(
                    "allow",
                    r#", "updatedInput": {"command": "touch rewritten.txt && echo rewritten"}"#,
                ),
            ),
            TOUCH,
            Expect {
                ran: Some(false),
                rewritten: Some(true),
                result: Some("rewritten"),
                ..Default::default()
            },
        ),
        row(
            "exit 0, allow + decision.updatedInput: a deny rule still refuses the rewritten call",
            hook(
                0,
                &behavior(
                    "allow",
                    r#", "updatedInput": {"command": "rm -f precious.txt"}"#,
                ),
            ),
            TOUCH,
            Expect {
                ran: Some(false),
                result_has: &["Error: bash was denied by the permission rules"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, additionalContext: not for PermissionRequest, the question goes on",
            hook(0, &context(E)),
            TOUCH,
            Expect {
                ran: Some(false),
                result_has: refused,
                unseen: &["R-context"],
                no_stderr: &["added context"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, plain text: nothing for anyone, the question goes on",
            hook(0, PLAIN),
            TOUCH,
            Expect {
                ran: Some(false),
                result_has: refused,
                unseen: &["R-plain"],
                no_stderr: &["R-plain"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, permissionDecision allow: runs, no question",
            hook(0, &decision(E, "allow")),
            TOUCH,
            Expect {
                ran: Some(true),
                result: Some("touched"),
                ..Default::default()
            },
        ),
        row(
            "exit 0, decision.behavior deny with message: refused with the message",
            hook(0, &behavior("deny", r#", "message": "R-deny""#)),
            TOUCH,
            Expect {
                ran: Some(false),
                result: Some("Error: bash was blocked by a hook: R-deny"),
                no_stderr: &["refused (needs approval"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, permissionDecision deny: refused with its reason",
            hook(0, &decision(E, "deny")),
            TOUCH,
            Expect {
                ran: Some(false),
                result: Some("Error: bash was blocked by a hook: R-deny"),
                ..Default::default()
            },
        ),
        row(
            "exit 0, ask: the question goes to the user",
            hook(0, &decision(E, "ask")),
            TOUCH,
            Expect {
                ran: Some(false),
                result_has: refused,
                stderr: &["refused (needs approval"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, decision block: denied with its reason",
            hook(0, BLOCK),
            TOUCH,
            Expect {
                ran: Some(false),
                result: Some("Error: bash was blocked by a hook: R-block"),
                ..Default::default()
            },
        ),
        row(
            "exit 0, continue false: not run, the turn stops",
            hook(0, STOP),
            TOUCH,
            Expect {
                ran: Some(false),
                requests: Some(1),
                stderr: &["R-stop"],
                no_stderr: &["refused (needs approval"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, systemMessage: shown, the question goes on",
            hook(0, MESSAGE),
            TOUCH,
            Expect {
                ran: Some(false),
                result_has: refused,
                stderr: &["hook PermissionRequest: R-msg"],
                ..Default::default()
            },
        ),
        row(
            "exit 2: denied with stderr, no question",
            hook(2, "").err("R-exit2"),
            TOUCH,
            Expect {
                ran: Some(false),
                result: Some("Error: bash was blocked by a hook: R-exit2"),
                no_stderr: &["refused (needs approval"],
                ..Default::default()
            },
        ),
        row(
            "exit 2, allow on stdout: ignored, denied",
            hook(2, &behavior("allow", "")).err("R-exit2"),
            TOUCH,
            Expect {
                ran: Some(false),
                result: Some("Error: bash was blocked by a hook: R-exit2"),
                ..Default::default()
            },
        ),
        row(
            "exit 1, allow on stdout: ignored, an error shown, the question goes on",
            hook(1, &behavior("allow", "")).err("R-exit1"),
            TOUCH,
            Expect {
                ran: Some(false),
                result_has: refused,
                stderr: &[
                    "hook PermissionRequest: failed: exit code 1: R-exit1",
                    "refused (needs approval",
                ],
                ..Default::default()
            },
        ),
        row(
            "exit 1, deny on stdout: ignored, the question goes on",
            hook(1, &behavior("deny", r#", "message": "R-deny""#)),
            TOUCH,
            Expect {
                ran: Some(false),
                result_has: refused,
                unseen: &["R-deny"],
                ..Default::default()
            },
        ),
    ];
    matrix(E, rows, call_then_done).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_prompt_submit_matrix() {
    const E: &str = "UserPromptSubmit";
    let row = |name, hook, expect| Row {
        name,
        hook,
        call: "",
        yes: false,
        expect,
    };
    let sent = Some(1);
    let kept_back = Some(0);
    let rows = vec![
        row(
            "exit 0, no output: the prompt goes",
            hook(0, ""),
            Expect {
                requests: sent,
                ..Default::default()
            },
        ),
        row(
            "exit 0, plain text: context for the model",
            hook(0, PLAIN),
            Expect {
                requests: sent,
                seen: &["(from the user's hooks: R-plain words)"],
                stderr: &["hook UserPromptSubmit: added context for the model"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, additionalContext: context for the model",
            hook(0, &context(E)),
            Expect {
                requests: sent,
                seen: &["(from the user's hooks: R-context)"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, decision block: the prompt is kept back, the user told why",
            hook(0, BLOCK),
            Expect {
                exit: 1,
                requests: kept_back,
                stderr: &["hook UserPromptSubmit: the prompt was not sent: R-block"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, continue false: the prompt is kept back",
            hook(0, STOP),
            Expect {
                exit: 1,
                requests: kept_back,
                stderr: &["the prompt was not sent: R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, systemMessage: shown to the user only",
            hook(0, MESSAGE),
            Expect {
                requests: sent,
                stderr: &["hook UserPromptSubmit: R-msg"],
                unseen: &["R-msg"],
                ..Default::default()
            },
        ),
        row(
            "exit 2: the prompt is kept back, stderr says why",
            hook(2, "").err("R-exit2"),
            Expect {
                exit: 1,
                requests: kept_back,
                stderr: &["the prompt was not sent: R-exit2"],
                ..Default::default()
            },
        ),
        row(
            "exit 2, no stderr: kept back all the same",
            hook(2, ""),
            Expect {
                exit: 1,
                requests: kept_back,
                stderr: &["the prompt was not sent: blocked by a hook (it gave no reason)"],
                ..Default::default()
            },
        ),
        row(
            "exit 2, additionalContext on stdout: ignored, kept back",
            hook(2, &context(E)).err("R-exit2"),
            Expect {
                exit: 1,
                requests: kept_back,
                stderr: &["the prompt was not sent: R-exit2"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, plain text: not context, an error shown, the prompt goes",
            hook(1, PLAIN).err("R-exit1"),
            Expect {
                requests: sent,
                unseen: &["R-plain", "R-exit1"],
                stderr: &["hook UserPromptSubmit: failed: exit code 1: R-exit1"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, decision block on stdout: ignored, the prompt goes",
            hook(1, BLOCK),
            Expect {
                requests: sent,
                no_stderr: &["not sent"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, additionalContext on stdout: ignored",
            hook(1, &context(E)),
            Expect {
                requests: sent,
                unseen: &["R-context"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, continue false on stdout: ignored, the prompt goes",
            hook(1, STOP),
            Expect {
                requests: sent,
                no_stderr: &["R-stop"],
                ..Default::default()
            },
        ),
    ];
    matrix(E, rows, |_| vec![Reply::text("answer")]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_matrix() {
    // The model would answer three times; how many requests it got says whether a Stop
    // hook kept it going (a hook blocks only when no Stop hook kept this turn going yet).
    const E: &str = "Stop";
    let row = |name, hook, expect| Row {
        name,
        hook,
        call: "",
        yes: false,
        expect,
    };
    let rows = vec![
        row(
            "exit 0, no output: the turn ends",
            hook(0, ""),
            Expect {
                requests: Some(1),
                ..Default::default()
            },
        ),
        row(
            "exit 0, plain text: nothing for anyone",
            hook(0, PLAIN),
            Expect {
                requests: Some(1),
                no_stderr: &["R-plain"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, decision block: the model goes on with the reason",
            hook(0, BLOCK),
            Expect {
                requests: Some(2),
                seen: &["(from a Stop hook: R-block)"],
                stderr: &["hook Stop: kept the turn going: R-block"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, continue false: the turn ends, the reason shown",
            hook(0, STOP),
            Expect {
                requests: Some(1),
                stderr: &["hook Stop: stopped the turn: R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, decision block and continue false: continue false wins",
            hook(0, BLOCK_AND_STOP),
            Expect {
                requests: Some(1),
                unseen: &["R-block"],
                stderr: &["stopped the turn: R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, additionalContext: not for Stop, the turn ends",
            hook(0, &context(E)),
            Expect {
                requests: Some(1),
                unseen: &["R-context"],
                no_stderr: &["added context"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, systemMessage: shown, the turn ends",
            hook(0, MESSAGE),
            Expect {
                requests: Some(1),
                stderr: &["hook Stop: R-msg"],
                ..Default::default()
            },
        ),
        row(
            "exit 2: the model goes on with stderr",
            hook(2, "").err("R-exit2"),
            Expect {
                requests: Some(2),
                seen: &["(from a Stop hook: R-exit2)"],
                stderr: &["kept the turn going: R-exit2"],
                ..Default::default()
            },
        ),
        row(
            "exit 2, continue false on stdout: ignored, the model goes on",
            hook(2, STOP).err("R-exit2"),
            Expect {
                requests: Some(2),
                seen: &["(from a Stop hook: R-exit2)"],
                no_stderr: &["R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 1: an error shown, the turn ends",
            hook(1, "").err("R-exit1"),
            Expect {
                requests: Some(1),
                stderr: &["hook Stop: failed: exit code 1: R-exit1"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, decision block on stdout: ignored, the turn ends",
            hook(1, BLOCK),
            Expect {
                requests: Some(1),
                unseen: &["R-block"],
                stderr: &["failed: exit code 1"],
                ..Default::default()
            },
        ),
    ];
    let replies = |_: &str| {
        vec![
            Reply::text("first answer"),
            Reply::text("second answer"),
            Reply::text("third answer"),
        ]
    };
    matrix(E, rows, replies).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subagent_stop_matrix() {
    // The main agent calls `task`; the subagent answers "sub first", and "sub second" when
    // a SubagentStop hook kept it going; the main agent's next reply ends the turn. The
    // task's result, what the main model reads, says which answer was the subagent's last.
    const E: &str = "SubagentStop";
    let row = |name, hook, expect| Row {
        name,
        hook,
        call: "",
        yes: false,
        expect,
    };
    let rows = vec![
        row(
            "exit 0, no output: the subagent ends",
            hook(0, ""),
            Expect {
                requests: Some(3),
                result: Some("sub first"),
                ..Default::default()
            },
        ),
        row(
            "exit 0, decision block: the subagent goes on with the reason",
            hook(0, BLOCK),
            Expect {
                requests: Some(4),
                result: Some("sub second"),
                seen: &["(from a SubagentStop hook: R-block)"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, continue false: the subagent ends and so does the turn, the reason shown",
            hook(0, STOP),
            Expect {
                requests: Some(2),
                stderr: &["R-stop", "the turn was stopped by a hook: R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, decision block and continue false: continue false wins",
            hook(0, BLOCK_AND_STOP),
            Expect {
                requests: Some(2),
                unseen: &["R-block"],
                stderr: &["R-stop", "the turn was stopped by a hook: R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, additionalContext: not for SubagentStop, the subagent ends",
            hook(0, &context(E)),
            Expect {
                requests: Some(3),
                result: Some("sub first"),
                unseen: &["R-context"],
                no_stderr: &["added context"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, plain text: nothing for anyone, the subagent ends",
            hook(0, PLAIN),
            Expect {
                requests: Some(3),
                result: Some("sub first"),
                unseen: &["R-plain"],
                no_stderr: &["R-plain"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, systemMessage: shown, the subagent ends",
            hook(0, MESSAGE),
            Expect {
                requests: Some(3),
                result: Some("sub first"),
                stderr: &["hook SubagentStop: R-msg"],
                ..Default::default()
            },
        ),
        row(
            "exit 2: the subagent goes on with stderr",
            hook(2, "").err("R-exit2"),
            Expect {
                requests: Some(4),
                result: Some("sub second"),
                seen: &["(from a SubagentStop hook: R-exit2)"],
                ..Default::default()
            },
        ),
        row(
            "exit 2, continue false on stdout: ignored, the subagent goes on",
            hook(2, STOP).err("R-exit2"),
            Expect {
                requests: Some(4),
                result: Some("sub second"),
                no_stderr: &["R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 1: an error shown, the subagent ends",
            hook(1, "").err("R-exit1"),
            Expect {
                requests: Some(3),
                result: Some("sub first"),
                stderr: &["hook SubagentStop: failed: exit code 1: R-exit1"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, decision block on stdout: ignored, the subagent ends",
            hook(1, BLOCK),
            Expect {
                requests: Some(3),
                result: Some("sub first"),
                unseen: &["R-block"],
                ..Default::default()
            },
        ),
    ];
    let replies = |_: &str| {
        vec![
            Reply::tool_calls(&[("task", r#"{"description":"look around"}"#)]),
            Reply::text("sub first"),
            Reply::text("sub second"),
            Reply::text("main done"),
        ]
    };
    matrix(E, rows, replies).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_tool_use_matrix() {
    // The call has run when these hooks fire (ran.txt is there in every row); what they
    // say reaches the model with the result, or stops the turn.
    const E: &str = "PostToolUse";
    let row = |name, hook, expect| Row {
        name,
        hook,
        call: "touch ran.txt && echo post-ran",
        yes: true,
        expect,
    };
    let rows = vec![
        row(
            "exit 0, no output: the result as it is",
            hook(0, ""),
            Expect {
                ran: Some(true),
                result: Some("post-ran"),
                requests: Some(2),
                ..Default::default()
            },
        ),
        row(
            "exit 0, plain text: nothing for the model",
            hook(0, PLAIN),
            Expect {
                ran: Some(true),
                result: Some("post-ran"),
                unseen: &["R-plain"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, decision block: the reason goes to the model",
            hook(0, BLOCK),
            Expect {
                ran: Some(true),
                result: Some("post-ran\n\n(from a PostToolUse hook: R-block)"),
                stderr: &["hook PostToolUse: blocked Bash: R-block"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, additionalContext: goes to the model",
            hook(0, &context(E)),
            Expect {
                ran: Some(true),
                result: Some("post-ran\n\n(from a PostToolUse hook: R-context)"),
                ..Default::default()
            },
        ),
        row(
            "exit 0, continue false: the turn stops after the call",
            hook(0, STOP),
            Expect {
                ran: Some(true),
                requests: Some(1),
                stderr: &["the turn was stopped by a hook: R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 0, systemMessage: shown, the result as it is",
            hook(0, MESSAGE),
            Expect {
                ran: Some(true),
                result: Some("post-ran"),
                stderr: &["hook PostToolUse: R-msg"],
                ..Default::default()
            },
        ),
        row(
            "exit 2: stderr goes to the model",
            hook(2, "").err("R-exit2"),
            Expect {
                ran: Some(true),
                result: Some("post-ran\n\n(from a PostToolUse hook: R-exit2)"),
                ..Default::default()
            },
        ),
        row(
            "exit 2, additionalContext on stdout: ignored, stderr goes",
            hook(2, &context(E)).err("R-exit2"),
            Expect {
                ran: Some(true),
                result: Some("post-ran\n\n(from a PostToolUse hook: R-exit2)"),
                unseen: &["R-context"],
                ..Default::default()
            },
        ),
        row(
            "exit 2, continue false on stdout: ignored, the turn goes on",
            hook(2, STOP).err("R-exit2"),
            Expect {
                ran: Some(true),
                requests: Some(2),
                no_stderr: &["R-stop"],
                ..Default::default()
            },
        ),
        row(
            "exit 1: an error shown, the result as it is",
            hook(1, "").err("R-exit1"),
            Expect {
                ran: Some(true),
                result: Some("post-ran"),
                stderr: &["hook PostToolUse: failed: exit code 1: R-exit1"],
                ..Default::default()
            },
        ),
        row(
            "exit 1, decision block on stdout: ignored",
            hook(1, BLOCK),
            Expect {
                ran: Some(true),
                result: Some("post-ran"),
                ..Default::default()
            },
        ),
        row(
            "exit 1, continue false on stdout: ignored, the turn goes on",
            hook(1, STOP),
            Expect {
                ran: Some(true),
                requests: Some(2),
                ..Default::default()
            },
        ),
    ];
    matrix(E, rows, call_then_done).await;
}
