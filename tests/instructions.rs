//! Project instructions (AGENTS.md) through the real binary: found from the repository's
//! root down to the project (CLAUDE.md where a folder has none), the user's first, in the
//! system prompt of the agent and of its subagents, and said on stderr.

mod support;

use serde_json::{json, Value};
use support::{Reply, ScriptedServer};

fn system(request: &Value) -> String {
    request["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_md_files_reach_the_agent_and_its_subagents_in_order() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    let project = repo.path().join("crates/parser");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir(repo.path().join(".git")).unwrap();
    std::fs::create_dir(home.path().join(".agents")).unwrap();
    std::fs::write(
        home.path().join(".agents/AGENTS.md"),
        "USER-RULE: answer briefly.\n",
    )
    .unwrap();
    std::fs::write(
        repo.path().join("AGENTS.md"),
        "ROOT-RULE: run cargo test.\n",
    )
    .unwrap();
    std::fs::write(
        repo.path().join("crates/CLAUDE.md"),
        "CRATES-RULE: claude only.\n",
    )
    .unwrap();
    std::fs::write(project.join("AGENTS.md"), "PARSER-RULE: no unsafe.\n").unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("task", &json!({"description": "look around"}).to_string())]),
        Reply::text("the subagent's answer"),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rein"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("REIN_HOME", home.path().join("rein-home"))
        .args([
            "-p",
            "go",
            "--base-url",
            &server.base_url(),
            "--model",
            "m",
            "--cwd",
        ])
        .arg(&project)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("rein: project instructions from"), "{err}");
    assert!(
        err.contains(&project.join("AGENTS.md").display().to_string()),
        "{err}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for (i, request) in requests.iter().enumerate() {
        let prompt = system(request);
        let at = |s: &str| {
            prompt
                .find(s)
                .unwrap_or_else(|| panic!("request {i} lacks {s}:\n{prompt}"))
        };
        assert!(
            at("USER-RULE") < at("ROOT-RULE")
                && at("ROOT-RULE") < at("CRATES-RULE")
                && at("CRATES-RULE") < at("PARSER-RULE"),
            "request {i}: {prompt}"
        );
    }
    // The subagent's own prompt (request 1) differs from the main one, and has them too.
    assert_ne!(system(&requests[0]), system(&requests[1]));
    // The same bytes every request: the cached prefix holds.
    assert_eq!(system(&requests[0]), system(&requests[2]));
}
