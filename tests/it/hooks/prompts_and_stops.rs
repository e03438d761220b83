//! Hooks around the conversation: a prompt hook's context, a Stop hook that blocks, session
//! start, subagents, a permission request answered by a hook, `continue: false` in a
//! subagent, and a megabyte of context cut to fit.

use crate::support;

use serde_json::{json, Value};
use support::stderr;
use support::{script, Reply, ScriptedServer};

use super::{command, logged, logger, rein, tool_results, user_hooks};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_hook_adds_context_or_keeps_the_prompt_back() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let hooks_dir = tempfile::tempdir().unwrap();
    let adder = script(
        hooks_dir.path(),
        "prompt.sh",
        r#"payload=$(cat)
case "$payload" in
  *'"prompt":"deploy'*) echo "no deploys on Fridays" >&2; exit 2 ;;
esac
echo "the release branch is release/7"
"#,
    );
    user_hooks(
        home.path(),
        json!({"UserPromptSubmit": [{"hooks": command(&adder)}]}),
    );
    let server = ScriptedServer::start(vec![Reply::text("noted")])
        .await
        .unwrap();
    let out = rein(home.path(), project.path(), &server, &[]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    // The context rides in the turn's own message, after the user's words.
    let requests = server.requests();
    let user = requests[0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()["content"]
        .to_string();
    assert!(
        user.contains("go")
            && user.contains("(from the user's hooks: the release branch is release/7)"),
        "{user}"
    );
    // The system prompt never changes for it (the cached prefix holds).
    assert!(!requests[0]["messages"][0]["content"]
        .to_string()
        .contains("release/7"));
    assert!(
        err.contains("hook UserPromptSubmit: added context for the model"),
        "{err}"
    );

    let out = support::rein_in(home.path(), project.path())
        .args([
            "-p",
            "deploy now",
            "--base-url",
            &server.base_url(),
            "--model",
            "scripted",
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("hook UserPromptSubmit: the prompt was not sent: no deploys on Fridays"),
        "{err}"
    );
    assert_eq!(
        server.requests().len(),
        1,
        "the blocked prompt reached the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_hook_that_blocks_once_keeps_the_model_going_and_one_that_always_does_is_ended() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let hooks_dir = tempfile::tempdir().unwrap();
    let once = script(
        hooks_dir.path(),
        "stop.sh",
        r#"payload=$(cat)
case "$payload" in
  *'"stop_hook_active":true'*) exit 0 ;;
esac
printf '%s' '{"decision": "block", "reason": "run the tests before you stop"}'
"#,
    );
    user_hooks(home.path(), json!({"Stop": [{"hooks": command(&once)}]}));
    let server = ScriptedServer::start(vec![Reply::text("all done"), Reply::text("tests pass")])
        .await
        .unwrap();
    let out = rein(home.path(), project.path(), &server, &[]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{err}");
    let last_user = requests[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last_user["role"], "user");
    assert_eq!(
        last_user["content"],
        "(from a Stop hook: run the tests before you stop)"
    );
    assert!(
        err.contains("hook Stop: kept the turn going: run the tests before you stop"),
        "{err}"
    );

    // One that always blocks: eight times, then the turn ends.
    let always = script(
        hooks_dir.path(),
        "always.sh",
        "cat > /dev/null\necho again >&2\nexit 2\n",
    );
    user_hooks(home.path(), json!({"Stop": [{"hooks": command(&always)}]}));
    let replies: Vec<Reply> = (0..12).map(|i| Reply::text(&format!("done {i}"))).collect();
    let server = ScriptedServer::start(replies).await.unwrap();
    let out = rein(home.path(), project.path(), &server, &[]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(server.requests().len(), 8, "{err}");
    assert!(
        err.contains("kept the turn going 8 times in a row"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_start_context_subagent_calls_and_a_permission_request_answered_by_a_hook() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let hooks_dir = tempfile::tempdir().unwrap();
    let log = hooks_dir.path().join("events.log");
    let logger = logger(hooks_dir.path(), &log);
    let start = script(
        hooks_dir.path(),
        "start.sh",
        "cat > /dev/null\necho 'the CI is red since Monday'\n",
    );
    // PermissionRequest: deny what would be put to the user.
    let deny = script(
        hooks_dir.path(),
        "deny.sh",
        r#"cat > /dev/null
printf '%s' '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny"}, "permissionDecisionReason": "not while I am away"}}'
"#,
    );
    user_hooks(
        home.path(),
        json!({
            "SessionStart": [{"matcher": "startup", "hooks": command(&start)}],
            "PreToolUse": [{"hooks": command(&logger)}],
            "SubagentStart": [{"hooks": command(&logger)}],
            "SubagentStop": [{"hooks": command(&logger)}],
            "PermissionRequest": [{"matcher": "Bash", "hooks": command(&deny)}]
        }),
    );
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("task", r#"{"description":"look at the readme"}"#)]),
        // The subagent's reply: a call, then its answer.
        Reply::tool_calls(&[("bash", r#"{"command":"echo sub"}"#)]),
        Reply::text("the readme is short"),
        // `sleep` needs approval: the PermissionRequest hook denies it.
        Reply::tool_calls(&[("bash", r#"{"command":"sleep 0.1"}"#)]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let out = rein(home.path(), project.path(), &server, &[]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let requests = server.requests();
    // SessionStart's context rides in the first turn's message.
    let first_user = requests[0]["messages"].to_string();
    assert!(
        first_user.contains("the CI is red since Monday"),
        "{first_user}"
    );
    // The subagent's call went through PreToolUse with its id; Start and Stop fired.
    let logged = logged(&log);
    let names: Vec<String> = logged
        .iter()
        .map(|e| {
            format!(
                "{} {} {}",
                e["hook_event_name"].as_str().unwrap_or(""),
                e["tool_name"].as_str().unwrap_or("-"),
                e["agent_id"].as_str().map_or("main", |_| "sub")
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            "PreToolUse Task main",
            "SubagentStart - sub",
            "PreToolUse Bash sub",
            "SubagentStop - sub",
            "PreToolUse Bash main",
        ],
        "{err}"
    );
    let results = tool_results(&server);
    assert_eq!(
        results.last().map(String::as_str),
        Some("Error: bash was blocked by a hook: not while I am away"),
        "{results:?}"
    );
}

/// `continue: false` from a hook on a subagent's call ends the subagent (the call does not
/// run) and the main turn, as it would on the main agent's own call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_false_inside_a_subagent_ends_it_and_the_turn() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let hooks_dir = tempfile::tempdir().unwrap();
    let stop = script(
        hooks_dir.path(),
        "stop.sh",
        r#"p=$(cat)
case "$p" in *agent_id*) printf '%s' '{"continue": false, "stopReason": "enough exploring"}';; esac
"#,
    );
    user_hooks(
        home.path(),
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": command(&stop)}]}),
    );
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("task", r#"{"description":"look around"}"#)]),
        Reply::tool_calls(&[("bash", r#"{"command":"touch ran.txt"}"#)]),
        Reply::text("sub done"),
        Reply::text("main done"),
    ])
    .await
    .unwrap();
    let out = rein(home.path(), project.path(), &server, &["--yes"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(!project.path().join("ran.txt").exists(), "{err}");
    assert_eq!(server.requests().len(), 2, "{err}");
    assert!(
        err.contains("the turn was stopped by a hook: enough exploring"),
        "{err}"
    );
}

/// Issue 42: a hook's 1 MB `additionalContext` (UserPromptSubmit, PostToolUse) is cut to
/// what rein passes on of a hook, and fits the window with everything else: a server
/// that refuses any request past its window gets none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hooks_megabyte_of_context_is_cut_and_every_request_fits_the_window() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let hooks_dir = tempfile::tempdir().unwrap();
    let flood = |event: &str| {
        script(
            hooks_dir.path(),
            &format!("{event}.sh"),
            &format!(
                "cat > /dev/null\nprintf '{{\"hookSpecificOutput\": {{\"hookEventName\": \"{event}\", \"additionalContext\": \"'\n\
                 head -c 1000000 /dev/zero | tr '\\0' 'c'\nprintf '\"}}}}\\n'\n"
            ),
        )
    };
    user_hooks(
        home.path(),
        json!({
            "UserPromptSubmit": [{"hooks": command(&flood("UserPromptSubmit"))}],
            "SessionStart": [{"hooks": command(&flood("SessionStart"))}],
            "PostToolUse": [{"matcher": "Bash", "hooks": command(&flood("PostToolUse"))}]
        }),
    );
    // A server that enforces a 16k-token window, counting 4 characters a token, as the
    // usage it reports says.
    const WINDOW: usize = 16_000;
    let refused = Arc::new(AtomicUsize::new(0));
    let counted = refused.clone();
    let router: support::Router = Arc::new(move |body: &Value| {
        let tokens = support::request_chars(body) / 4;
        (tokens > WINDOW).then(|| {
            counted.fetch_add(1, Ordering::SeqCst);
            Reply::error(
                400,
                &format!("This model's maximum context length is {WINDOW} tokens; the request has {tokens} (context length exceeded)"),
            )
        })
    });
    let server = ScriptedServer::start_routed(
        vec![
            Reply::tool_calls(&[("bash", r#"{"command":"echo ran"}"#)])
                .with_usage_from_request(4.0),
            Reply::text("done").with_usage_from_request(4.0),
        ],
        router,
    )
    .await
    .unwrap();
    let out = rein(
        home.path(),
        project.path(),
        &server,
        &["--yes", "--context-window", &WINDOW.to_string()],
    );
    let err = stderr(&out);
    assert_eq!(refused.load(Ordering::SeqCst), 0, "{err}");
    assert!(out.status.success(), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "done");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{err}");
    let last = requests[1].to_string();
    // What the hooks said reached the model, cut, and saying so.
    assert!(last.contains("ccccc"), "{err}");
    assert!(last.contains("characters cut here"), "{err}");
    let results = tool_results(&server);
    assert!(results[0].starts_with("ran"), "{results:?}");
    assert!(results[0].contains("ccccc"), "{results:?}");
    assert!(results[0].len() < 20_000, "{} characters", results[0].len());
}
