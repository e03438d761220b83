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

/// An AGENTS.md changed during a conversation is named once in the next turn's reminder
/// (and to the user) while the system prompt keeps its bytes; `/clear` reads it again, and
/// `/context` counts the instructions as their own part.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_agents_md_is_reported_and_applies_after_clear() {
    use rein::agent::{self, AgentCommand, AgentEvent};
    use support::agent::{events_until, reminder, scripted_config, turn};

    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir(repo.path().join(".git")).unwrap();
    let agents = repo.path().join("AGENTS.md");
    std::fs::write(&agents, "RULE-ONE: be brief.\n").unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("one"),
        Reply::text("two"),
        Reply::text("three"),
        Reply::text("four"),
    ])
    .await
    .unwrap();
    let mut config = scripted_config(&server, repo.path());
    config.instructions = rein::instructions::discover(&[], repo.path(), 32 * 1024);
    let mut handle = agent::spawn(config).unwrap();

    let events = turn(&mut handle, "first").await;
    let instructions = events
        .iter()
        .rev()
        .find_map(|e| match e {
            AgentEvent::Context(stats) => Some(stats.breakdown.instructions),
            _ => None,
        })
        .unwrap();
    assert!(instructions > 0, "/context counts the instructions");

    // Someone edits the file between turns (a different size: the change shows even
    // where the file system's clock is coarse).
    std::fs::write(&agents, "RULE-TWO: be thorough, always.\n").unwrap();
    let events = turn(&mut handle, "second").await;
    let told: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Notice { message } if message.contains("AGENTS.md changed") => {
                Some(message)
            }
            _ => None,
        })
        .collect();
    assert_eq!(told.len(), 1, "{events:?}");
    assert!(told[0].contains("/clear"), "{}", told[0]);
    turn(&mut handle, "third").await;

    let requests = server.requests();
    assert_eq!(
        system(&requests[0]),
        system(&requests[1]),
        "the prefix holds"
    );
    assert!(system(&requests[1]).contains("RULE-ONE"));
    let second = reminder(&requests[1]);
    assert!(
        second.contains("project instructions changed")
            && second.contains(&agents.display().to_string()),
        "{second}"
    );
    assert!(
        !second.contains("files changed by someone else"),
        "named once, as instructions: {second}"
    );
    assert!(
        !reminder(&requests[2]).contains("project instructions changed"),
        "told once"
    );

    handle.send(AgentCommand::NewConversation);
    let events = events_until(&mut handle, |e| {
        matches!(e, AgentEvent::InstructionsLoaded { .. })
    })
    .await;
    let Some(AgentEvent::InstructionsLoaded { files, notices }) = events.last() else {
        panic!("{events:?}");
    };
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].contains("AGENTS.md (31 bytes)"), "{files:?}");
    assert!(notices.is_empty());
    turn(&mut handle, "fourth").await;
    let requests = server.requests();
    let fresh = system(&requests[3]);
    assert!(
        fresh.contains("RULE-TWO") && !fresh.contains("RULE-ONE"),
        "{fresh}"
    );
}
