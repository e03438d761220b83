//! Hooks in the dashboard: what they did, a project's hooks asked about at start, Claude Code's
//! hook scripts and setup, and the session-end hooks when the dashboard is left.

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use support::{Reply, ScriptedServer};

use super::{in_a_shell, rein_command, Tmux};

/// Hooks in the dashboard: a held project hook said at start, `/hooks` listing the user's,
/// and a PreToolUse validator's block in the transcript.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_show_in_the_dashboard_what_they_did() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let rein_home = home.path().join("rein-home");
    std::fs::create_dir_all(&rein_home).unwrap();
    let validator = support::script(
        home.path(),
        "validate.sh",
        "cat > /dev/null\necho 'no force pushes here' >&2\nexit 2\n",
    );
    std::fs::write(
        rein_home.join("hooks.json"),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": validator}]}]}})
        .to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(project.path().join(".rein")).unwrap();
    std::fs::write(
        project.path().join(".rein/hooks.json"),
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch pwned"}]}]}})
            .to_string(),
    )
    .unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &json!({"command": "git push --force"}).to_string())]),
        Reply::text("The hook refused it."),
    ])
    .await
    .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        120,
        40,
    );
    // The project's hook is put to the user before anything runs: its command in full.
    tmux.wait_for("the question about the project's hook", |s| {
        s.contains("Project hooks")
            && s.contains("$ touch pwned")
            && s.contains("would run 1 command as you")
    })
    .await;
    // Typing is not an answer; n keeps it held.
    tmux.send("/hooks", &["Enter"]);
    tmux.send("n", &[]);
    tmux.wait_for("kept held", |s| {
        s.contains("hook stays held") && !s.contains("Project hooks")
    })
    .await;
    tmux.send("/hooks", &["Enter"]);
    tmux.wait_for("the list", |s| {
        s.contains("Hooks (1):") && s.contains("PreToolUse [Bash]")
    })
    .await;
    tmux.send("push it", &["Enter"]);
    tmux.wait_for("the block in the transcript", |s| {
        s.contains("hook PreToolUse: blocked Bash: no force pushes here")
            && s.contains("The hook refused it.")
            && s.contains("● ready")
    })
    .await;
    assert!(
        !project.path().join("pwned").exists(),
        "a held project hook ran"
    );
    tmux.quit_with_ctrl_c().await;
}

/// A project's hooks are asked about at start, with every command shown; allowed, they run
/// from this session's start on (the session waits for the answer, so a SessionStart hook
/// sees it). Changed afterwards, they are asked about again and say so; kept held, none
/// runs, and `/hooks allow` asks again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_hooks_are_asked_about_at_start_and_run_once_allowed() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("rein-home")).unwrap();
    let log = home.path().join("hook.log");
    let hooks = |tag: &str| {
        json!({"hooks": {
            "SessionStart": [{"hooks": [{"type": "command",
                "command": format!("echo 'the project hook says {tag}'")}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                "command": format!("echo {tag} >> '{}'", log.display())}]}]
        }})
        .to_string()
    };
    std::fs::create_dir_all(project.path().join(".rein")).unwrap();
    std::fs::write(project.path().join(".rein/hooks.json"), hooks("hello")).unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &json!({"command": "true"}).to_string())]),
        Reply::text("Ran it."),
        Reply::tool_calls(&[("bash", &json!({"command": "true; true"}).to_string())]),
        Reply::text("Ran it again."),
    ])
    .await
    .unwrap();
    let command = rein_command(home.path(), project.path(), &server.base_url());
    let tmux = Tmux::start(&command, 120, 40);
    tmux.wait_for("the question", |s| {
        s.contains("Project hooks")
            && s.contains("would run 2 commands as you, outside rein's sandbox")
            && s.contains("$ echo 'the project hook says hello'")
            && s.contains("PreToolUse [Bash]")
            && !s.contains("changed since you allowed")
    })
    .await;
    tmux.send("a", &[]);
    tmux.wait_for("allowed", |s| {
        s.contains("allowed the project's hooks: 2 run as you") && !s.contains("Project hooks")
    })
    .await;
    tmux.send("run it", &["Enter"]);
    tmux.wait_for("the turn", |s| {
        s.contains("Ran it.") && s.contains("● ready")
    })
    .await;
    assert_eq!(std::fs::read_to_string(&log).unwrap().trim(), "hello");
    let first = &server.requests()[0];
    assert!(
        first.to_string().contains("the project hook says hello"),
        "SessionStart's context did not reach the model: {first}"
    );
    tmux.quit_with_ctrl_c().await;
    drop(tmux);

    // The file changes: asked again, and it says so. Kept held, nothing of it runs.
    std::fs::write(project.path().join(".rein/hooks.json"), hooks("changed")).unwrap();
    let tmux = Tmux::start(&command, 120, 40);
    tmux.wait_for("asked again", |s| {
        s.contains("The file changed since you allowed it.")
            && s.contains("$ echo 'the project hook says changed'")
    })
    .await;
    tmux.send("", &["Escape"]);
    tmux.wait_for("kept held", |s| s.contains("hooks stay held"))
        .await;
    tmux.send("/hooks allow", &["Enter"]);
    tmux.wait_for("asked once more", |s| s.contains("The file changed since"))
        .await;
    tmux.send("n", &[]);
    tmux.send("run it again", &["Enter"]);
    tmux.wait_for("the second turn", |s| {
        s.contains("Ran it again.") && s.contains("● ready")
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(&log).unwrap().trim(),
        "hello",
        "a held hook ran"
    );
    let later = server.requests();
    assert!(
        !later.last().unwrap().to_string().contains("says changed"),
        "a held SessionStart hook ran"
    );
    tmux.quit_with_ctrl_c().await;
}

/// Scripts written to Claude Code's documented payload, in the dashboard as a person sees
/// them (`tests/it/hooks/` has each headless): a prompt hook that blocks one prompt and adds
/// context to the next, a Write guard denying in JSON, a Bash hook that hangs (cut at its
/// timeout, the call goes on), a PostToolUse logger whose child keeps stdout open, an MCP
/// call a hook allows, a Notification hook hearing that rein waits for an approval, a
/// subagent's call, and a Stop hook that blocks once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_hook_scripts_act_in_the_dashboard() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rein_home = home.path().join("rein-home");
    std::fs::create_dir_all(&rein_home).unwrap();
    let log = dir.path().join("post.log");
    let mark = dir.path().join("stopped-once");
    let prompt = support::script(
        dir.path(),
        "prompt.sh",
        "p=$(cat)\ncase \"$p\" in *secret*) echo 'no secrets in prompts' >&2; exit 2;; esac\necho 'the build uses make'\n",
    );
    let write_guard = support::script(
        dir.path(),
        "guard.sh",
        "cat > /dev/null\nprintf '%s' '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"no writes to .env\"}}'\n",
    );
    let hang = support::script(
        dir.path(),
        "hang.sh",
        "p=$(cat)\ncase \"$p\" in *sleepy*) sleep 600;; esac\nexit 0\n",
    );
    let allow_mcp = support::script(
        dir.path(),
        "allow.sh",
        "cat > /dev/null\nprintf '%s' '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"allow\"}}'\n",
    );
    let logger = support::script(
        dir.path(),
        "log.sh",
        &format!(
            "cat >> '{0}'\necho >> '{0}'\n# A child that would keep stdout open for 1000 s.\nsleep 1000 &\n",
            log.display()
        ),
    );
    let stop_once = support::script(
        dir.path(),
        "stop.sh",
        &format!(
            "cat > /dev/null\nif [ ! -e '{0}' ]; then touch '{0}'; echo '{{\"decision\": \"block\", \"reason\": \"say that the tests ran\"}}'; fi\n",
            mark.display()
        ),
    );
    let notified = dir.path().join("notified.json");
    let notify = support::script(
        dir.path(),
        "notify.sh",
        &format!("cat > '{}'\n", notified.display()),
    );
    let one = |path: &str| json!([{"type": "command", "command": path}]);
    std::fs::write(
        rein_home.join("hooks.json"),
        json!({"hooks": {
            "UserPromptSubmit": [{"hooks": one(&prompt)}],
            "PreToolUse": [
                {"matcher": "Write", "hooks": one(&write_guard)},
                {"matcher": "Bash", "hooks": [{"type": "command", "command": hang, "timeout": 1}]},
                {"matcher": "mcp__plain__.*", "hooks": one(&allow_mcp)}
            ],
            "PostToolUse": [{"hooks": one(&logger)}],
            "Notification": [{"matcher": "permission_prompt", "hooks": one(&notify)}],
            "Stop": [{"hooks": one(&stop_once)}]
        }})
        .to_string(),
    )
    .unwrap();
    let server_script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/hostile_server.py");
    std::fs::write(
        rein_home.join("config.toml"),
        format!(
            "[mcp_servers.plain]\ncommand = \"python3\"\nargs = [{:?}, \"plain\"]\n",
            server_script.display().to_string()
        ),
    )
    .unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "write_file",
            &json!({"path": ".env", "content": "TOKEN=1\n"}).to_string(),
        )]),
        Reply::tool_calls(&[("bash", &json!({"command": "echo sleepy"}).to_string())]),
        Reply::tool_calls(&[("mcp__plain__work", r#"{"bytes": 5}"#)]),
        // `sleep` asks: the Notification hook hears that rein waits.
        Reply::tool_calls(&[("bash", r#"{"command":"sleep 0.1"}"#)]),
        Reply::tool_calls(&[("task", r#"{"description":"look at the readme"}"#)]),
        // The subagent: a call, then its answer.
        Reply::tool_calls(&[("bash", r#"{"command":"echo from-sub"}"#)]),
        Reply::text("the readme is short"),
        Reply::text("Done."),
        // The Stop hook kept the turn going.
        Reply::text("The tests ran."),
    ])
    .await
    .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        120,
        50,
    );
    tmux.wait_for("the MCP server", |s| s.contains("MCP server plain: ready"))
        .await;
    // Blocked: the prompt never reaches the model, and the user sees why.
    tmux.send("here is my secret", &["Enter"]);
    tmux.wait_for("the prompt blocked", |s| {
        s.contains("no secrets in prompts") && s.contains("● ready")
    })
    .await;
    assert!(server.requests().is_empty(), "a blocked prompt was sent");
    tmux.send("set things up", &["Enter"]);
    tmux.wait_for("the approval modal", |s| {
        s.contains("sleep 0.1") && s.contains("allow once")
    })
    .await;
    let deadline = Instant::now() + support::GIVE_UP;
    while !notified.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let note: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&notified).unwrap()).unwrap();
    assert_eq!(note["hook_event_name"], "Notification");
    assert_eq!(note["notification_type"], "permission_prompt");
    assert_eq!(note["message"], "rein needs your permission to use Bash");
    tmux.send("y", &[]);
    let screen = tmux
        .wait_for("the turn", |s| {
            s.contains("The tests ran.") && s.contains("● ready")
        })
        .await;
    // The hanging hook cost its timeout, the orphan holding stdout nothing: waiting for
    // either would have outlasted `wait_for`'s guard, and the hook's failure is said.
    for needle in [
        "hook UserPromptSubmit: added context for the model",
        "hook PreToolUse: denied Write: no writes to .env",
        "hook PreToolUse: failed: timed out",
        "hook Stop: kept the turn going: say that the tests ran",
    ] {
        assert!(screen.contains(needle), "{needle} missing:\n{screen}");
    }
    assert!(
        !project.path().join(".env").exists(),
        "the denied write ran"
    );
    let requests = server.requests();
    assert!(
        requests[0]["messages"]
            .to_string()
            .contains("the build uses make"),
        "the prompt hook's context did not reach the model"
    );
    // PostToolUse saw the bash call, the MCP call (allowed by its hook, never asked) and
    // the subagent's call with its id.
    let logged: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let seen: Vec<String> = logged
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["tool_name"].as_str().unwrap_or("-"),
                e["agent_id"].as_str().map_or("main", |_| "sub")
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            "Bash main",
            "mcp__plain__work main",
            "Bash main",
            "Bash sub",
            "Task main"
        ],
        "{logged:#?}"
    );
    tmux.quit_with_ctrl_c().await;
}

/// Types `text` and sends it, closing the `/` completion list first with Esc when it is
/// open. An Esc and an Enter arriving in one read are Alt-Enter (a new line) to the
/// terminal parser, which a loaded machine makes likely: Enter goes only once the screen
/// shows the text typed and, if the list was open, the list gone (the Esc read). Where
/// nothing matches the list is not shown, and no Esc is sent (nothing would show it read).
async fn send_past_the_slash_list(tmux: &Tmux, text: &str) {
    tmux.send(text, &[]);
    let screen = tmux.wait_for("the text typed", |s| s.contains(text)).await;
    if screen.contains("commands (") {
        tmux.send("", &["Escape"]);
        tmux.wait_for("the completion list to close", |s| {
            !s.contains("commands (")
        })
        .await;
    }
    tmux.send("", &["Enter"]);
}

/// Issue 28 (their setup, read as it is): a Claude Code command file from
/// `.claude/commands` runs as `/commit`, a mistyped `/comit-wip` is refused with a hint
/// (nothing sent), and the agent reading a file in `sub/` brings `sub/CLAUDE.md` in, which
/// the transcript says and `/memory` lists after the system prompt's `AGENTS.md`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_code_setup_works_in_the_dashboard() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let root = project.path();
    std::fs::create_dir_all(root.join(".claude/commands")).unwrap();
    std::fs::write(
        root.join(".claude/commands/commit.md"),
        "---\ndescription: Commit the work\nallowed-tools: Bash(git commit:*)\n---\nCOMMIT-PROMPT: read sub/x.rs, then commit as $1.\n",
    )
    .unwrap();
    std::fs::write(root.join("AGENTS.md"), "ROOT-RULE\n").unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/CLAUDE.md"), "SUB-RULE: keep it short.\n").unwrap();
    std::fs::write(root.join("sub/x.rs"), "fn x() {}\n").unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("read_file", &json!({"path": "sub/x.rs"}).to_string())]),
        Reply::text("Read it; committing next."),
    ])
    .await
    .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), root, &server.base_url()),
        120,
        40,
    );
    tmux.wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    send_past_the_slash_list(&tmux, "/comit-wip now").await;
    tmux.wait_for("the hint", |s| {
        s.contains("unknown command /comit-wip; /help lists them")
    })
    .await;
    assert!(server.requests().is_empty(), "nothing was sent");
    send_past_the_slash_list(&tmux, "/commit wip").await;
    let screen = tmux
        .wait_for("the reply", |s| s.contains("Read it; committing next."))
        .await;
    assert!(
        screen.contains("expanded from .claude/commands/commit.md"),
        "{screen}"
    );
    assert!(
        screen.contains("instruction files for the folders worked in"),
        "{screen}"
    );
    let requests = server.requests();
    assert!(requests[0].to_string().contains("COMMIT-PROMPT"));
    assert!(requests[1].to_string().contains("SUB-RULE: keep it short."));
    send_past_the_slash_list(&tmux, "/memory").await;
    let screen = tmux
        .wait_for("the listing", |s| {
            s.contains("Loaded for the folders worked in (sent with a message):")
        })
        .await;
    assert!(screen.contains("sub/CLAUDE.md (25 bytes)"), "{screen}");
    tmux.send("", &["C-c"]);
}

/// Issue 42: leaving the dashboard ends the session: `/quit`, Ctrl-D on an empty input
/// and Ctrl-C twice each run the SessionEnd hooks once with Claude Code's reason
/// `prompt_input_exit`, on the terminal rein leaves, which says rein waits for a slow one;
/// what the hook started with `setsid` does not outlive it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_the_dashboard_runs_the_session_end_hooks() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let rein_home = home.path().join("rein-home");
    std::fs::create_dir_all(&rein_home).unwrap();
    std::fs::write(rein_home.join("config.toml"), "[sandbox]\nmode = \"off\"\n").unwrap();
    let log = home.path().join("end.log");
    let pids = home.path().join("daemon.pids");
    let hook = support::script(
        home.path(),
        "end.sh",
        &format!(
            "cat >> {log}; echo >> {log}\n\
             setsid sh -c 'echo $$ >> {pids}; exec sleep 300' > /dev/null 2>&1 &\n\
             sleep 2\n",
            log = log.display(),
            pids = pids.display()
        ),
    );
    std::fs::write(
        rein_home.join("hooks.json"),
        json!({"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": hook}]}]}})
            .to_string(),
    )
    .unwrap();
    let server = ScriptedServer::start(vec![]).await.unwrap();
    let ways: [(&str, &[&str]); 3] = [("/quit", &["Enter"]), ("", &["C-d"]), ("", &["C-c"])];
    for (n, (text, keys)) in ways.into_iter().enumerate() {
        let tmux = Tmux::start(
            &in_a_shell(rein_command(
                home.path(),
                project.path(),
                &server.base_url(),
            )),
            120,
            40,
        );
        tmux.wait_for("the dashboard", |s| s.contains("scripted-model"))
            .await;
        tmux.send(text, keys);
        if keys == ["C-c"] {
            tmux.wait_for("the quit hint", |s| s.contains("again to quit"))
                .await;
            tmux.send("", &["C-c"]);
        }
        let screen = tmux
            .wait_for("rein to quit after its hook", |s| {
                s.contains("rein exited: 0")
            })
            .await;
        assert!(
            screen.contains("waiting for the SessionEnd hooks to finish"),
            "{screen}"
        );
        let ends: Vec<serde_json::Value> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(ends.len(), n + 1, "{ends:?}");
        assert_eq!(ends[n]["reason"], "prompt_input_exit", "{:?}", ends[n]);
    }
    for pid in std::fs::read_to_string(&pids).unwrap().lines() {
        let pid: i32 = pid.trim().parse().unwrap();
        let mut gone = false;
        for _ in 0..500 {
            if !Path::new(&format!("/proc/{pid}")).exists()
                || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                    s.rsplit_once(')')
                        .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
                })
            {
                gone = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert!(gone, "the hook's daemon {pid} outlived rein");
    }
}
