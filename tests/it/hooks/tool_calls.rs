//! Hooks around a tool call: a validator that exits 2, a write guard, a logger, allow, a hook
//! that hangs, an MCP call under its MCP name, PostToolUse rewriting a call, and `rein hooks
//! test`.

use crate::support;

use std::path::Path;

use serde_json::{json, Value};
use support::stderr;
use support::{script, Reply, ScriptedServer};

use super::{command, gone, logged, logger, rein, tool_results, user_hooks};

/// The test MCP server (`tests/mcp/hostile_server.py`, plain) as `plain` in the user's
/// config.toml, after what `user_hooks` wrote.
fn plain_mcp_server(home: &Path) {
    let server_script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/hostile_server.py");
    let config = home.join("rein-home/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "[mcp_servers.plain]\ncommand = \"python3\"\nargs = [{:?}, \"plain\"]\n",
        server_script.display().to_string()
    ));
    std::fs::write(&config, text).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bash_validator_that_exits_2_refuses_the_call_with_its_words() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let hooks_dir = tempfile::tempdir().unwrap();
    // Claude Code's documented example: read the payload, refuse what matches.
    let validator = script(
        hooks_dir.path(),
        "validate.sh",
        r#"payload=$(cat)
case "$payload" in
  *'"command":"git push --force'*) echo "force pushes are not allowed" >&2; exit 2 ;;
esac
exit 0
"#,
    );
    user_hooks(
        home.path(),
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": command(&validator)}]}),
    );
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", r#"{"command":"git push --force"}"#)]),
        Reply::tool_calls(&[("bash", r#"{"command":"echo allowed > ok.txt"}"#)]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let out = rein(home.path(), project.path(), &server, &["--yes"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let results = tool_results(&server);
    assert_eq!(
        results[0],
        "Error: bash was blocked by a hook: force pushes are not allowed"
    );
    assert!(
        err.contains("hook PreToolUse: blocked Bash: force pushes are not allowed"),
        "{err}"
    );
    assert!(
        project.path().join("ok.txt").exists(),
        "the second call ran: {err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_guard_denies_in_json_a_logger_sees_results_and_allow_skips_the_question() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let hooks_dir = tempfile::tempdir().unwrap();
    let log = hooks_dir.path().join("post.log");
    let guard = script(
        hooks_dir.path(),
        "guard.sh",
        r#"payload=$(cat)
case "$payload" in
  *'"file_path":"'*'secret'*) printf '%s' '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no secrets"}}' ;;
  *) printf '%s' '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "checked"}}' ;;
esac
"#,
    );
    let logger = logger(hooks_dir.path(), &log);
    user_hooks(
        home.path(),
        json!({
            "PreToolUse": [{"matcher": "Write|Bash", "hooks": command(&guard)}],
            "PostToolUse": [{"matcher": "*", "hooks": command(&logger)}]
        }),
    );
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("write_file", r#"{"path":"secret.txt","content":"k"}"#)]),
        // `sleep` needs approval: the hook's allow gives it, headless, without --yes.
        Reply::tool_calls(&[("bash", r#"{"command":"sleep 0.1; echo slept"}"#)]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let out = rein(home.path(), project.path(), &server, &[]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let results = tool_results(&server);
    assert_eq!(
        results[0],
        "Error: write_file was blocked by a hook: no secrets"
    );
    assert!(!project.path().join("secret.txt").exists());
    assert_eq!(results[1], "slept", "{err}");
    // The logger read Claude Code's payload after the call that ran.
    let logged = logged(&log);
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0]["hook_event_name"], "PostToolUse");
    assert_eq!(logged[0]["tool_name"], "Bash");
    assert_eq!(logged[0]["tool_input"]["command"], "sleep 0.1; echo slept");
    assert_eq!(logged[0]["tool_response"]["stdout"], "slept");
    assert_eq!(logged[0]["permission_mode"], "default");
    assert!(logged[0]["session_id"]
        .as_str()
        .is_some_and(|s| !s.is_empty()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_that_hangs_is_cut_at_its_timeout_and_the_call_goes_on_unless_it_blocks_on_failure()
{
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let hooks_dir = tempfile::tempdir().unwrap();
    // Left alone a hook runs for 1000 s; each writes its pid and its child's.
    let pids = hooks_dir.path().join("pids");
    let hang = script(
        hooks_dir.path(),
        "hang.sh",
        &format!(
            "echo $$ >> {0}\nsleep 1000 &\necho $! >> {0}\nsleep 1000\n",
            pids.display()
        ),
    );
    user_hooks(
        home.path(),
        json!({"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": hang, "timeout": 1}]},
            {"matcher": "Write", "hooks": [{"type": "command", "command": format!("{hang} write"), "timeout": 1, "on_failure": "block"}]}
        ]}),
    );
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", r#"{"command":"echo ran"}"#)]),
        Reply::tool_calls(&[("write_file", r#"{"path":"a.txt","content":"x"}"#)]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let out = rein(home.path(), project.path(), &server, &["--yes"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let results = tool_results(&server);
    assert_eq!(results[0], "ran");
    assert!(err.contains("hook PreToolUse: failed: timed out"), "{err}");
    // Both hooks and their children were killed at the timeout, not waited for.
    let written = std::fs::read_to_string(&pids).unwrap();
    let pids: Vec<i32> = written.lines().map(|l| l.trim().parse().unwrap()).collect();
    assert_eq!(pids.len(), 4, "{written}");
    for pid in pids {
        assert!(gone(pid).await, "{pid} outlived its hook's timeout");
    }
    assert!(
        results[1].starts_with("Error: write_file was blocked by a hook: a hook failed and blocks on failure: timed out"),
        "{results:?}"
    );
    assert!(!project.path().join("a.txt").exists());
}

#[test]
fn rein_hooks_test_runs_the_matching_hooks_on_a_payload() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let hooks_dir = tempfile::tempdir().unwrap();
    let guard = script(
        hooks_dir.path(),
        "guard.sh",
        r#"cat > /dev/null
printf '%s' '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "read-only Fridays"}}'
"#,
    );
    user_hooks(
        home.path(),
        json!({"PreToolUse": [{"matcher": "Write", "hooks": command(&guard)}]}),
    );
    let payload = hooks_dir.path().join("payload.json");
    std::fs::write(
        &payload,
        json!({"tool_name": "Write", "tool_input": {"file_path": "a.txt", "content": "x"}})
            .to_string(),
    )
    .unwrap();
    let out = support::rein_in(home.path(), project.path())
        .args(["hooks", "test", "PreToolUse", "--payload"])
        .arg(&payload)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let decided: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(decided["permission"]["decision"], "deny");
    assert_eq!(decided["permission"]["reason"], "read-only Fridays");
    // Another tool: nothing matches.
    std::fs::write(&payload, json!({"tool_name": "Bash"}).to_string()).unwrap();
    let out = support::rein_in(home.path(), project.path())
        .args(["hooks", "test", "PreToolUse", "--payload"])
        .arg(&payload)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "no hook matches PreToolUse"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_call_goes_through_the_hooks_under_its_mcp_name() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let hooks_dir = tempfile::tempdir().unwrap();
    let log = hooks_dir.path().join("mcp.log");
    let logger = logger(hooks_dir.path(), &log);
    let guard = script(
        hooks_dir.path(),
        "guard.sh",
        "cat > /dev/null\necho 'not that size' >&2\nexit 2\n",
    );
    user_hooks(
        home.path(),
        json!({
            "PreToolUse": [
                {"matcher": "mcp__plain__.*", "hooks": command(&logger)},
                {"matcher": "mcp__plain__work", "hooks": command(&guard)}
            ]
        }),
    );
    // The user's config: the sandbox off (as user_hooks wrote) and the hostile server.
    plain_mcp_server(home.path());
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("mcp__plain__work", r#"{"bytes": 5}"#)]),
        Reply::text("the hook refused it"),
    ])
    .await
    .unwrap();
    let out = rein(home.path(), project.path(), &server, &["--yes"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let results = tool_results(&server);
    assert_eq!(
        results[0], "Error: mcp__plain__work was blocked by a hook: not that size",
        "{err}"
    );
    let logged = logged(&log);
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0]["tool_name"], "mcp__plain__work");
    assert_eq!(logged[0]["tool_input"], json!({"bytes": 5}));
}

/// PostToolUse reads Claude Code's `tool_response` (a Write's `filePath` and `success`),
/// and a PreToolUse hook's `updatedInput` rewrites an MCP tool's arguments as it does
/// rein's own (the hook's allow skipping the question).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_tool_use_reads_claude_codes_response_and_a_hook_rewrites_an_mcp_call() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let hooks_dir = tempfile::tempdir().unwrap();
    let log = hooks_dir.path().join("post.log");
    let logger = logger(hooks_dir.path(), &log);
    let rewrite = script(
        hooks_dir.path(),
        "rewrite.sh",
        r#"cat > /dev/null
printf '%s' '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"bytes": 3}}}'
"#,
    );
    user_hooks(
        home.path(),
        json!({
            "PreToolUse": [{"matcher": "mcp__plain__work", "hooks": command(&rewrite)}],
            "PostToolUse": [{"hooks": command(&logger)}]
        }),
    );
    plain_mcp_server(home.path());
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "write_file",
            &json!({"path": "notes.txt", "content": "hi\n"}).to_string(),
        )]),
        Reply::tool_calls(&[("mcp__plain__work", r#"{"bytes": 5000}"#)]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    // No --yes: the MCP call (which would ask, and be refused headless) is allowed by its
    // hook alone.
    let out = rein(home.path(), project.path(), &server, &[]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let results = tool_results(&server);
    assert_eq!(results.last().map(String::as_str), Some("xxx"), "{err}");
    let logged = logged(&log);
    assert_eq!(logged.len(), 2, "{logged:#?}");
    let written = project.path().join("notes.txt").canonicalize().unwrap();
    assert_eq!(logged[0]["tool_name"], "Write");
    assert_eq!(
        logged[0]["tool_input"]["file_path"],
        written.display().to_string()
    );
    assert_eq!(
        logged[0]["tool_response"]["filePath"],
        written.display().to_string()
    );
    assert_eq!(logged[0]["tool_response"]["success"], true);
    assert_eq!(logged[1]["tool_name"], "mcp__plain__work");
    assert_eq!(logged[1]["tool_input"], json!({"bytes": 3}));
    assert_eq!(logged[1]["tool_response"]["output"], "xxx");
}
