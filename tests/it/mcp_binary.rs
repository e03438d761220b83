//! MCP through the real binary, headless, against the real reference server
//! (`@modelcontextprotocol/server-everything`, installed by `.ci/run` into
//! `$REIN_MCP_SERVERS`): its tools reach the model as `mcp__everything__*`, a call goes
//! through the permission rules to the server and its result back to the model; a server
//! the project declares does not run until `rein mcp allow` allows it; `rein mcp list`
//! lists the servers and their tools; its prompts run as slash commands, its resources
//! attach as `@everything:URI` and its roots tool sees the project folder. Where the
//! server is missing the tests say so and pass, unless `REIN_MCP=1` (set by `.ci/run`).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use support::{Reply, ScriptedServer};

fn everything() -> Option<PathBuf> {
    support::mcp::installed("node_modules/.bin/mcp-server-everything")
}

fn rein(home: &Path, project: &Path) -> Command {
    support::rein_in(home, project)
}

fn server_table(name: &str, program: &Path) -> String {
    format!(
        "[mcp_servers.{name}]\ncommand = {:?}\nargs = [\"stdio\"]\n",
        program.display().to_string()
    )
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_server_tools_reach_the_model_and_a_call_reaches_the_server() {
    let Some(program) = everything() else { return };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("rein-home")).unwrap();
    std::fs::write(
        home.path().join("rein-home/config.toml"),
        format!(
            "{}\n[[permissions.tools]]\npattern = \"mcp__everything__echo\"\naction = \"allow\"\n",
            server_table("everything", &program)
        ),
    )
    .unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "mcp__everything__echo",
            &json!({"message": "hello from the model"}).to_string(),
        )]),
        Reply::text("The server echoed it."),
    ])
    .await
    .unwrap();
    let out = rein(home.path(), project.path())
        .args([
            "-p",
            "echo something",
            "--output-format",
            "jsonl",
            "--base-url",
            &server.base_url(),
            "--model",
            "m",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("MCP server everything ready"), "{err}");
    let requests = server.requests();
    let names = tool_names(&requests[0]);
    assert!(
        names.contains(&"mcp__everything__echo".to_string()),
        "the first request offers the server's tools: {names:?}"
    );
    let messages = requests[1]["messages"].as_array().unwrap();
    let result = messages
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap();
    assert!(result.contains("hello from the model"), "{result}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("The server echoed it."), "{stdout}");
    // JSONL carries the server's state as an event of its own.
    let ready: Value = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "mcp_server")
        .expect("an mcp_server event");
    assert_eq!(ready["name"], "everything");
    assert_eq!(ready["state"], "ready");
    assert!(ready["tools"].as_u64().unwrap() > 5, "{ready}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_server_runs_only_once_allowed() {
    let Some(program) = everything() else { return };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".rein")).unwrap();
    std::fs::write(
        project.path().join(".rein/config.toml"),
        server_table("cloned", &program),
    )
    .unwrap();
    let server = ScriptedServer::start(vec![Reply::text("one"), Reply::text("two")])
        .await
        .unwrap();
    let run = || {
        rein(home.path(), project.path())
            .args(["-p", "hi", "--base-url", &server.base_url(), "--model", "m"])
            .output()
            .unwrap()
    };
    let out = run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("does not run until you allow it") && err.contains("rein mcp allow cloned"),
        "{err}"
    );
    assert!(!tool_names(&server.requests()[0])
        .iter()
        .any(|n| n.starts_with("mcp__")));

    let allow = rein(home.path(), project.path())
        .args(["mcp", "allow", "cloned"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&allow.stdout);
    assert_eq!(allow.status.code(), Some(0), "{said}");
    assert!(said.contains("outside rein's sandbox"), "{said}");

    let list = rein(home.path(), project.path())
        .args(["mcp", "list"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(
        listed.contains("cloned: ready") && listed.contains("mcp__cloned__echo"),
        "{listed}"
    );

    let out = run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(tool_names(&server.requests()[1]).contains(&"mcp__cloned__echo".to_string()));
}

/// server-everything's `get-tiny-image` returns a PNG: a model whose entry says
/// `images = true` gets it after the result (as a user message of `image_url` parts, in an
/// order every server takes), a model without it only the result's description line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_result_reaches_a_model_that_takes_images_and_only_that_one() {
    let Some(program) = everything() else { return };
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("mcp__everything__get-tiny-image", "{}")]),
        Reply::text("A tiny image."),
        Reply::tool_calls(&[("mcp__everything__get-tiny-image", "{}")]),
        Reply::text("Described."),
    ])
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("rein-home")).unwrap();
    std::fs::write(
        home.path().join("rein-home/config.toml"),
        format!(
            "{}\n[[permissions.tools]]\npattern = \"mcp__everything__get-tiny-image\"\naction = \"allow\"\n\n\
             [providers.scripted]\nbase_url = {:?}\nmodels = {{ \"seer\" = {{ images = true }}, \"blind\" = {{ context_window = 100000 }} }}\n",
            server_table("everything", &program),
            server.base_url()
        ),
    )
    .unwrap();
    for model in ["scripted/seer", "scripted/blind"] {
        let out = rein(home.path(), project.path())
            .args(["-p", "show me", "--model", model])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{model}: {err}");
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let seer = requests[1]["messages"].as_array().unwrap();
    rein_core::conversation::order::check(seer).unwrap();
    let tool = seer.iter().find(|m| m["role"] == "tool").unwrap();
    assert!(
        tool["content"]
            .as_str()
            .unwrap()
            .contains("[image: image/png"),
        "{tool}"
    );
    let last = seer.last().unwrap();
    assert_eq!(last["role"], "user");
    let url = last["content"][1]["image_url"]["url"].as_str().unwrap();
    assert!(url.starts_with("data:image/png;base64,iVBOR"), "{url}");
    let blind = requests[3]["messages"].as_array().unwrap();
    assert_eq!(blind.last().unwrap()["role"], "tool");
    assert!(!requests[3].to_string().contains("image_url"));
}

/// Issue 22 item 2's reproduction: after `rein mcp allow docs`, the project adds
/// `bearer_token_env = "GITHUB_TOKEN"` to its HTTP server. The next run does not connect
/// (so the token is not sent) and says what changed; `rein mcp list` says so too, and
/// `rein mcp allow docs` prints the table it approves and the change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_http_server_that_starts_asking_for_a_token_is_held_again() {
    use std::io::Read;
    use std::sync::{Arc, Mutex};
    // The "server": records every request it gets, then hangs up.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = requests.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(1)));
            let mut buf = vec![0; 16 * 1024];
            let n = stream.read(&mut buf).unwrap_or(0);
            seen.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
    });
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".rein")).unwrap();
    let declare = |extra: &str| {
        std::fs::write(
            project.path().join(".rein/config.toml"),
            format!("[mcp_servers.docs]\nurl = {url:?}\nstartup_timeout_secs = 2\n{extra}"),
        )
        .unwrap();
    };
    let model = ScriptedServer::start(vec![Reply::text("1"), Reply::text("2"), Reply::text("3")])
        .await
        .unwrap();
    let rein = |args: &[&str]| {
        let out = rein(home.path(), project.path())
            .env("GITHUB_TOKEN", "ghp_not_for_docs")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let run = ["-p", "hi", "--base-url", &model.base_url(), "--model", "m"];

    declare("");
    let (said, _) = rein(&["mcp", "allow", "docs"]);
    assert!(
        said.contains(&format!("\n  url = \"{url}\"\n"))
            && said.contains("\n  startup_timeout_secs = 2\n")
            && said.contains("outside rein's sandbox"),
        "{said}"
    );
    let (_, err) = rein(&run);
    assert!(!err.contains("does not run until"), "{err}");
    assert_eq!(
        requests.lock().unwrap().len(),
        1,
        "the allowed server is reached"
    );

    declare("bearer_token_env = \"GITHUB_TOKEN\"\n");
    let change = "bearer_token_env: (unset) -> \"GITHUB_TOKEN\"";
    let (_, err) = rein(&run);
    assert!(
        err.contains(&format!(
            "`docs` ({}) changed since you allowed it ({change}) and does not run until you allow it again",
            project.path().canonicalize().unwrap().join(".rein/config.toml").display()
        )),
        "{err}"
    );
    assert!(
        err.contains("[sends your token from GITHUB_TOKEN]"),
        "{err}"
    );
    let (listed, _) = rein(&["mcp", "list"]);
    assert!(
        listed.contains(&format!(
            "docs: not allowed since the project changed it ({change})"
        )),
        "{listed}"
    );
    let got = requests.lock().unwrap().clone();
    assert_eq!(got.len(), 1, "not reached again: {got:?}");
    assert!(got.iter().all(|r| !r.contains("ghp_not_for_docs")));

    // Allowed again: the approval says what it approves and what changed.
    let (said, _) = rein(&["mcp", "allow", "docs"]);
    assert!(
        said.contains("\n  bearer_token_env = \"GITHUB_TOKEN\"\n")
            && said.contains(&format!(
                "changed since you allowed it before:\n  {change}\n"
            )),
        "{said}"
    );
    let (_, err) = rein(&run);
    assert!(!err.contains("does not run until"), "{err}");
    let got = requests.lock().unwrap().clone();
    assert!(
        got.len() == 2 && got[1].contains("Bearer ghp_not_for_docs"),
        "the token goes once allowed: {got:?}"
    );
}

/// The reference server's prompts, resources and roots through the binary: a prompt run
/// as `/mcp__everything__args-prompt` is what the model gets, `@everything:URI` attaches
/// the resource's text, and its `get-roots-list` tool (offered only to a client that
/// declares roots) names the project folder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_servers_prompts_resources_and_roots() {
    let Some(program) = everything() else { return };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("rein-home")).unwrap();
    std::fs::write(
        home.path().join("rein-home/config.toml"),
        format!(
            "{}\n[[permissions.tools]]\npattern = \"mcp__everything__get-roots-list\"\naction = \"allow\"\n",
            server_table("everything", &program)
        ),
    )
    .unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("Sunny."),
        Reply::text("Read it."),
        Reply::tool_calls(&[("mcp__everything__get-roots-list", "{}")]),
        Reply::text("One root."),
    ])
    .await
    .unwrap();
    let run = |prompt: &str| {
        rein(home.path(), project.path())
            .args([
                "-p",
                prompt,
                "--base-url",
                &server.base_url(),
                "--model",
                "m",
            ])
            .output()
            .unwrap()
    };
    let last_user = |request: &Value| {
        request["messages"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .unwrap()["content"]
            .to_string()
    };

    // A prompt with its arguments: the server's text goes to the model.
    let out = run("/mcp__everything__args-prompt Paris France");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let sent = last_user(&server.requests()[0]);
    assert!(sent.contains("What's weather in Paris, France?"), "{sent}");
    assert!(!sent.contains("/mcp__everything"), "{sent}");

    // A resource mention attaches its text.
    let out = run("summarise @everything:demo://resource/dynamic/text/1");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let sent = server.requests()[1]["messages"].to_string();
    assert!(sent.contains("Resource 1"), "{sent}");

    // Roots: the project folder.
    let out = run("which roots?");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let messages = server.requests()[3]["messages"].clone();
    let result = messages
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_string();
    let root = project.path().canonicalize().unwrap();
    assert!(result.contains(root.to_str().unwrap()), "{result}");
}
