//! What the dashboard asks, answered from the keyboard: a command, an MCP call, a project's
//! server, hooks and endpoint held until allowed, a plan, a proposed AGENTS.md, a server's form.

use crate::support;

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use support::{Reply, ScriptedServer};

use super::{rein_command, Tmux};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_a_command_from_the_keyboard() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text_then_tool_calls(
            "I will create the file.",
            &[(
                "bash",
                &json!({"command": "touch approved.txt"}).to_string(),
            )],
        ),
        Reply::text("Created **approved.txt**."),
    ])
    .await
    .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        120,
        40,
    );
    tmux.wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    tmux.send("please create approved.txt", &["Enter"]);
    let screen = tmux
        .wait_for("the approval modal", |s| {
            s.contains("touch approved.txt") && s.contains("allow once")
        })
        .await;
    assert!(
        !project.path().join("approved.txt").exists(),
        "not before approval:\n{screen}"
    );
    tmux.send("y", &[]);
    // The turn over (its last checkpoint recorded): the status line says ready.
    tmux.wait_for("the final reply and the turn's end", |s| {
        s.contains("Created approved.txt") && s.contains("● ready")
    })
    .await;
    assert!(project.path().join("approved.txt").exists());
    let screen = tmux.screen();
    assert!(screen.contains("please create approved.txt"), "{screen}");
    // Ctrl-C when idle with an empty input quits and restores the terminal.
    tmux.quit_with_ctrl_c().await;
}

/// Issue 15: a call to a real MCP server's tool (server-everything, where `.ci/run`
/// installed it) opens the approval modal with the server, the tool and the arguments as
/// JSON; approving runs it and the result reaches the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_call_asks_in_the_modal_and_runs_once_approved() {
    let Some(program) = support::mcp::installed("node_modules/.bin/mcp-server-everything") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let rein_home = home.path().join("rein-home");
    std::fs::create_dir_all(&rein_home).unwrap();
    std::fs::write(
        rein_home.join("config.toml"),
        format!(
            "[mcp_servers.everything]\ncommand = {:?}\nargs = [\"stdio\"]\n",
            program.display().to_string()
        ),
    )
    .unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "mcp__everything__echo",
            &json!({"message": "approve me"}).to_string(),
        )]),
        Reply::text("It was echoed."),
    ])
    .await
    .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        110,
        32,
    );
    tmux.wait_for("the server ready", |s| {
        s.contains("MCP server everything: ready")
    })
    .await;
    tmux.send("echo it", &["Enter"]);
    let screen = tmux
        .wait_for("the approval modal", |s| {
            s.contains("server everything · tool echo")
        })
        .await;
    assert!(screen.contains("\"message\": \"approve me\""), "{screen}");
    assert!(
        screen.contains("allow `mcp__everything__echo` for this session"),
        "{screen}"
    );
    tmux.send("y", &[]);
    tmux.wait_for("the reply", |s| s.contains("It was echoed."))
        .await;
    let requests = server.requests();
    let result = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_string();
    assert!(result.contains("approve me"), "{result}");
    // `/clear`: a new conversation with a fresh server (the transcript is cleared, then
    // the restarted server says it is ready again).
    tmux.send("/clear", &["Enter"]);
    tmux.wait_for("the transcript cleared", |s| !s.contains("It was echoed."))
        .await;
    tmux.wait_for("the server ready again", |s| {
        s.contains("MCP server everything: ready")
    })
    .await;
    tmux.send("", &["C-c"]);
}

/// A project's MCP server waits for the user; `/mcp allow NAME` in the dashboard allows it
/// (remembered for the project: `rein mcp list` then starts it) and starts it, and its
/// tools are offered from the next turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_mcp_server_is_allowed_from_the_dashboard() {
    let Some(program) = support::mcp::installed("node_modules/.bin/mcp-server-everything") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".rein")).unwrap();
    std::fs::write(
        project.path().join(".rein/config.toml"),
        format!(
            "[mcp_servers.cloned]\ncommand = {:?}\nargs = [\"stdio\"]\n",
            program.display().to_string()
        ),
    )
    .unwrap();
    let server = ScriptedServer::start(vec![Reply::text("Hello there.")])
        .await
        .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        120,
        32,
    );
    tmux.wait_for("the notice", |s| {
        s.contains("does not run until you allow it")
    })
    .await;
    tmux.send("/mcp allow cloned", &["Enter"]);
    let screen = tmux
        .wait_for("the server ready", |s| {
            s.contains("MCP server cloned: ready")
        })
        .await;
    assert!(screen.contains("outside rein's sandbox"), "{screen}");
    tmux.send("hi", &["Enter"]);
    tmux.wait_for("the reply", |s| s.contains("Hello there."))
        .await;
    let tools: Vec<String> = server.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        tools.contains(&"mcp__cloned__echo".to_string()),
        "{tools:?}"
    );
    tmux.send("", &["C-c"]);
    // Remembered for this project.
    let list = std::process::Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(["mcp", "list"])
        .current_dir(project.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("REIN_HOME", home.path().join("rein-home"))
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(listed.contains("cloned: ready"), "{listed}");
}

/// `/init`: the model reads the project, proposes AGENTS.md through write_file, and the
/// approval modal asks (an instruction file, though inside the project); approved, it is
/// written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_proposes_an_agents_md_for_approval() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("Makefile"), "test:\n\tcargo test\n").unwrap();
    let content = "# AGENTS.md\n\n- Run the tests with `make test`.\n";
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &json!({"command": "cat Makefile"}).to_string())]),
        Reply::tool_calls(&[(
            "write_file",
            &json!({"path": "AGENTS.md", "content": content}).to_string(),
        )]),
        Reply::text("Wrote AGENTS.md: the test command."),
    ])
    .await
    .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        120,
        40,
    );
    tmux.wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    tmux.send("/init", &["Enter"]);
    let screen = tmux
        .wait_for("the approval of AGENTS.md", |s| {
            s.contains("AGENTS.md") && s.contains("allow once")
        })
        .await;
    assert!(screen.contains("is an instruction file"), "{screen}");
    assert!(!project.path().join("AGENTS.md").exists(), "{screen}");
    let first = server.requests()[0].to_string();
    assert!(first.contains("Write a first AGENTS.md"), "{first}");
    tmux.send("y", &[]);
    let screen = tmux
        .wait_for("the end of the turn", |s| {
            s.contains("Wrote AGENTS.md: the test command.") && s.contains("● ready")
        })
        .await;
    assert!(
        screen.contains("expanded from rein's /init prompt"),
        "{screen}"
    );
    assert_eq!(
        std::fs::read_to_string(project.path().join("AGENTS.md")).unwrap(),
        content
    );
    tmux.quit_with_ctrl_c().await;
}

/// Issue 28: a turn in plan mode ends with the plan offered; `y` approves it, the mode
/// goes back to default and the model is told to go ahead, and its edit then runs. Alt-O
/// then shows the whole transcript in the pager, the edit's diff in it; q closes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_is_approved_from_the_keyboard_and_the_pager_shows_the_transcript() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("Plan:\n\n1. Write notes.md with the two findings.\n2. Say done."),
        Reply::tool_calls(&[(
            "write_file",
            &json!({"path": "notes.md", "content": "finding one\nfinding two\n"}).to_string(),
        )]),
        Reply::text("Done: notes.md holds both findings."),
    ])
    .await
    .unwrap();
    let mut command = rein_command(home.path(), project.path(), &server.base_url());
    command.extend(["--mode".to_string(), "plan".to_string()]);
    let tmux = Tmux::start(&command, 100, 32);
    tmux.wait_for("plan mode in the status line", |s| {
        s.contains("plan mode (Shift-Tab)")
    })
    .await;
    tmux.send("plan the notes", &["Enter"]);
    let screen = tmux
        .wait_for("the plan offered", |s| s.contains("The plan is ready"))
        .await;
    assert!(
        screen.contains("Write notes.md with the two findings"),
        "{screen}"
    );
    assert!(
        screen.contains("approve, go on in default mode"),
        "{screen}"
    );
    tmux.send("y", &[]);
    tmux.wait_for("the approved plan carried out", |s| {
        s.contains("Done: notes.md holds both findings.")
    })
    .await;
    let screen = tmux.screen();
    assert!(!screen.contains("plan mode (Shift-Tab)"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(project.path().join("notes.md")).unwrap(),
        "finding one\nfinding two\n"
    );
    let requests = server.requests();
    let messages = requests[1]["messages"].as_array().unwrap();
    let last = messages[messages.len() - 1]["content"].as_str().unwrap();
    assert!(
        last.contains(rein::app::plan_review::APPROVED_MESSAGE),
        "{last}"
    );
    tmux.send("", &["M-o"]);
    let pager = tmux
        .wait_for("the pager", |s| {
            s.contains("Transcript, everything expanded")
        })
        .await;
    assert!(pager.contains("+ finding two"), "{pager}");
    tmux.send("q", &[]);
    tmux.wait_for("the pager closed", |s| {
        !s.contains("Transcript, everything expanded")
    })
    .await;
    tmux.quit_with_ctrl_c().await;
}

/// A server's form (MCP elicitation) as a person sees it: the call's server asks for a
/// form mid-call, the dashboard shows it framed as the server's, the user types into the
/// first field and sends it with Ctrl-S, and the server's answer reaches the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_form_is_filled_in_and_sent_from_the_dashboard() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let rein_home = home.path().join("rein-home");
    std::fs::create_dir_all(&rein_home).unwrap();
    let server_script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/hostile_server.py");
    std::fs::write(
        rein_home.join("config.toml"),
        format!(
            "[[permissions.tools]]\npattern = \"mcp__plain__work\"\naction = \"allow\"\n\n\
             [mcp_servers.plain]\ncommand = \"python3\"\nargs = [{:?}, \"plain\"]\n",
            server_script.display().to_string()
        ),
    )
    .unwrap();
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Your name"},
            "tabs": {"type": "boolean", "title": "Tabs", "default": true}
        },
        "required": ["name"]
    });
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("mcp__plain__work", &json!({ "elicit": schema }).to_string())]),
        Reply::text("Thanks for the form."),
    ])
    .await
    .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        110,
        32,
    );
    tmux.wait_for("the server ready", |s| {
        s.contains("MCP server plain: ready")
    })
    .await;
    tmux.send("set me up", &["Enter"]);
    let screen = tmux
        .wait_for("the form", |s| s.contains("Form from MCP server \"plain\""))
        .await;
    assert!(screen.contains("Your name"), "{screen}");
    // Sending with a required field empty: the field says why, nothing is sent.
    tmux.send("", &["C-s"]);
    tmux.wait_for("the field's complaint", |s| s.contains("required"))
        .await;
    tmux.send("Ada", &[]);
    tmux.send("", &["C-s"]);
    tmux.wait_for("the reply", |s| s.contains("Thanks for the form."))
        .await;
    let result = server.requests()[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_string();
    assert!(
        result.contains("accept") && result.contains("Ada") && result.contains("tabs"),
        "{result}"
    );
    tmux.send("", &["C-c"]);
}

/// A question that opens while you type a message does not take your typing as its answer:
/// the `y`s and `a`s go on into the input box, and after a pause a key answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_as_an_approval_opens_goes_to_the_input_not_the_answer() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let rein_home = home.path().join("rein-home");
    std::fs::create_dir_all(&rein_home).unwrap();
    std::fs::write(
        rein_home.join("config.toml"),
        "[[permissions.bash]]\npattern = \"sleep 1\"\naction = \"allow\"\n",
    )
    .unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &json!({"command": "sleep 1"}).to_string())]),
        Reply::tool_calls(&[("bash", &json!({"command": "sleep 2"}).to_string())]),
        Reply::text("Left it alone."),
    ])
    .await
    .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        110,
        32,
    );
    tmux.wait_for("the dashboard", |s| s.contains("scripted-model"))
        .await;
    tmux.send("tidy up", &["Enter"]);
    tmux.wait_for("the sleep running", |s| s.contains("sleep 1"))
        .await;
    // Type on, a key every 60 ms, while the sleep ends and the question opens.
    let typed = "yay ".repeat(12);
    let mut opened_while_typing = false;
    for c in typed.chars() {
        tmux.send(&c.to_string(), &[]);
        tokio::time::sleep(Duration::from_millis(60)).await;
        if !opened_while_typing && tmux.screen().contains("sleep 2") {
            opened_while_typing = true;
        }
    }
    let screen = tmux
        .wait_for("the question, still open", |s| {
            s.contains("sleep 2") && s.contains("while you typed")
        })
        .await;
    assert!(opened_while_typing, "{screen}");
    assert_eq!(server.requests().len(), 2, "nothing was answered: {screen}");
    // A pause, then the answer.
    tokio::time::sleep(Duration::from_millis(700)).await;
    tmux.send("n", &[]);
    let screen = tmux
        .wait_for("the reply", |s| s.contains("Left it alone."))
        .await;
    let result = server.requests()[2]["messages"].to_string();
    assert!(
        result.contains("denied") || result.contains("refused"),
        "{result}"
    );
    // What was typed is in the input box, ready to send.
    assert!(screen.contains("yay yay yay"), "{screen}");
    tmux.send("", &["C-c"]);
}

/// Issue 41: a cloned project's `.rein/config.toml` that names its own endpoint is held,
/// and the dashboard says so in its transcript (the warning on stderr is behind the
/// screen), with how to allow it; the conversation goes to the user's own server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_held_endpoint_is_said_in_the_dashboard() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".rein")).unwrap();
    std::fs::write(
        project.path().join(".rein/config.toml"),
        "base_url = \"http://127.0.0.1:9/v1\"\n",
    )
    .unwrap();
    let server = ScriptedServer::start(vec![Reply::text("Answered by your own server.")])
        .await
        .unwrap();
    let tmux = Tmux::start(
        &rein_command(home.path(), project.path(), &server.base_url()),
        120,
        40,
    );
    let screen = tmux
        .wait_for("the held endpoint in the transcript", |s| {
            s.contains("which is held") && s.contains("rein config allow")
        })
        .await;
    assert!(screen.contains("http://127.0.0.1:9/v1"), "{screen}");
    tmux.send("hello", &["Enter"]);
    tmux.wait_for("the user's server's answer", |s| {
        s.contains("Answered by your own server.") && s.contains("● ready")
    })
    .await;
    assert_eq!(server.requests().len(), 1);
    tmux.quit_with_ctrl_c().await;
}
