//! A project's `.mcp.json` (Claude Code's MCP servers) through the real binary: its
//! servers are the project's, held until `rein mcp allow` like a `[mcp_servers]` table of
//! `.rein/config.toml`, listed by `rein config` and `rein mcp list` as written (a
//! variable's value, a token say, never shown), started with `${VAR}` expanded from the
//! user's environment once allowed, and held again when the entry changes; a bad entry
//! is named with its file and key and the others still count. The server is
//! `tests/mcp/hostile_server.py` in its `where` mode (a call to `work` says its folder).

use crate::support;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};
use support::mcp::hostile_server;
use support::{Reply, ScriptedServer};

/// rein in `project` with the user's `MY_TOKEN` and `SERVER_MODE` set.
fn rein(home: &Path, project: &Path) -> Command {
    let mut c = support::rein_in(home, project);
    c.env("MY_TOKEN", "tok-4242").env("SERVER_MODE", "where");
    c
}

fn out(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn mcp_json(args: &[&str]) -> String {
    json!({
        "mcpServers": {
            "claude-tool": {
                "command": "python3",
                "args": args,
                "env": {"SERVER_SECRET": "${MY_TOKEN}"}
            },
            "stream": {"type": "sse", "url": "https://example.invalid/sse"}
        }
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_mcp_json_server_is_held_listed_as_written_and_runs_once_allowed() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let script = hostile_server().display().to_string();
    std::fs::create_dir_all(home.path().join("rein-home")).unwrap();
    // The user lets the tool run without asking (headless has no one to ask).
    std::fs::write(
        home.path().join("rein-home/config.toml"),
        "[[permissions.tools]]\npattern = \"mcp__claude-tool__work\"\naction = \"allow\"\n",
    )
    .unwrap();
    let file = project.path().join(".mcp.json");
    std::fs::write(&file, mcp_json(&[&script, "${SERVER_MODE:-plain}"])).unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("nothing to call yet"),
        Reply::tool_calls(&[("mcp__claude-tool__work", "{}")]),
        Reply::text("it ran in the project"),
        Reply::text("held again"),
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

    // Held: said with the file and how to allow it; the bad entry named by file and key.
    let first = run("hi");
    let (_, err) = out(&first);
    assert_eq!(first.status.code(), Some(0), "{err}");
    assert!(
        err.contains(&format!(
            "the project's MCP server `claude-tool` ({}) does not run until you allow it",
            file.display()
        )) && err.contains("rein mcp allow claude-tool"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "{}: mcpServers.stream.type: \"sse\" servers are not supported",
            file.display()
        )),
        "{err}"
    );
    assert!(!err.contains("tok-4242"), "the token is never shown: {err}");
    assert!(!tool_names(&server.requests()[0])
        .iter()
        .any(|n| n.starts_with("mcp__")));

    // `rein config` lists it as a project server from the file, as written.
    let config = rein(home.path(), project.path())
        .arg("config")
        .output()
        .unwrap();
    let (listed, _) = out(&config);
    let line = listed
        .lines()
        .find(|l| l.starts_with("mcp_servers.claude-tool"))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(
        line.contains("'${SERVER_MODE:-plain}'")
            && line.contains("project server")
            && line.ends_with(&format!("({})", file.display())),
        "{line}"
    );
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("project .mcp.json") && l.ends_with(&file.display().to_string())),
        "{listed}"
    );
    assert!(!listed.contains("tok-4242"), "{listed}");

    // `rein mcp list` says it waits, with what it would run as written.
    let list = rein(home.path(), project.path())
        .args(["mcp", "list"])
        .output()
        .unwrap();
    let (listed, _) = out(&list);
    assert!(listed.contains("claude-tool"), "{listed}");
    assert!(
        listed.contains("${MY_TOKEN}") && !listed.contains("tok-4242"),
        "{listed}"
    );

    let allow = rein(home.path(), project.path())
        .args(["mcp", "allow", "claude-tool"])
        .output()
        .unwrap();
    let (said, err) = out(&allow);
    assert_eq!(allow.status.code(), Some(0), "{said}{err}");
    assert!(!said.contains("tok-4242"), "{said}");

    // Allowed: it starts with `${SERVER_MODE:-plain}` expanded (`where`: the call says
    // its folder, the project's, where a project's server runs).
    let second = run("call it");
    let (_, err) = out(&second);
    assert_eq!(second.status.code(), Some(0), "{err}");
    let requests = server.requests();
    assert!(
        tool_names(&requests[1]).contains(&"mcp__claude-tool__work".to_string()),
        "{err}"
    );
    let results = support::last_tool_results(&requests);
    let said: Value = serde_json::from_str(&results[0]).unwrap_or_else(|_| panic!("{results:?}"));
    let cwd = Path::new(said["cwd"].as_str().unwrap())
        .canonicalize()
        .unwrap();
    assert_eq!(cwd, project.path().canonicalize().unwrap());

    // The entry changes: held again, and the change is said key by key.
    std::fs::write(
        &file,
        mcp_json(&[&script, "${SERVER_MODE:-plain}", "--more"]),
    )
    .unwrap();
    let third = run("again");
    let (_, err) = out(&third);
    assert_eq!(third.status.code(), Some(0), "{err}");
    assert!(
        err.contains("changed since you allowed it (args:")
            && err.contains("does not run until you allow it again"),
        "{err}"
    );
    let requests = server.requests();
    assert!(!tool_names(requests.last().unwrap())
        .iter()
        .any(|n| n.starts_with("mcp__")));
}
