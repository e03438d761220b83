//! Approvals without a person: an ask refused without `--yes` and approved with it, the
//! default rules through the real binary.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use rein::headless::{self, HeadlessOptions, OutputFormat};
use rein_core::agent::{AgentConfig, ClientConfig};
use rein_core::permissions::{PermissionPolicy, ToolRequest, Verdict};
use serde_json::{json, Value};
use support::agent::agent_config;
use support::stderr;
use support::{Reply, ScriptedServer};

use super::*;

struct AskForBash;

impl PermissionPolicy for AskForBash {
    fn check(&self, request: &ToolRequest<'_>) -> Verdict {
        if request.tool == "bash" {
            Verdict::Ask {
                reason: "bash asks in this test".into(),
                grants: Vec::new(),
            }
        } else {
            Verdict::Allow
        }
    }
}

async fn headless_with_ask(yes: bool) -> (i32, Vec<Value>, tempfile::TempDir) {
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", "{\"command\": \"touch made-it\"}")]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let config = AgentConfig {
        bash_timeout: Duration::from_secs(10),
        max_steps: 5,
        policy: Arc::new(AskForBash),
        ..agent_config(
            ClientConfig::new(server.base_url(), "", "m"),
            project.path(),
        )
    };
    let code = headless::run(
        config,
        HeadlessOptions {
            prompt: "make it".into(),
            format: OutputFormat::Text,
            yes,
            prices: None,
            mode: None,
            before: Vec::new(),
        },
    )
    .await;
    (code, server.requests(), project)
}

#[tokio::test]
async fn without_yes_an_ask_is_refused_and_the_model_told_why() {
    let (code, requests, project) = headless_with_ask(false).await;
    assert_eq!(code, 0);
    assert!(!project.path().join("made-it").exists());
    let last = last_stored(&requests[1]);
    let result = last["content"].as_str().unwrap();
    assert!(
        result.starts_with("Error: bash was not run: approval was refused"),
        "{result}"
    );
    assert!(result.contains("interactive session"), "{result}");
}

#[tokio::test]
async fn with_yes_an_ask_is_approved() {
    let (code, requests, project) = headless_with_ask(true).await;
    assert_eq!(code, 0);
    assert!(project.path().join("made-it").exists());
    assert_eq!(last_stored(&requests[1])["content"], "(no output)");
}

#[tokio::test]
async fn default_rules_deny_refuse_and_allow_through_the_real_binary() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join("data")).unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            ("bash", &json!({"command": "ls && rm -rf data"}).to_string()),
            ("bash", &json!({"command": "touch made-by-touch"}).to_string()),
            ("bash", &json!({"command": "ls"}).to_string()),
            (
                "write_file",
                &json!({"path": ".rein/config.toml", "content": "[[permissions.bash]]\npattern = \"*\"\naction = \"allow\"\n"}).to_string(),
            ),
        ]),
        Reply::text("done"),
    ])
    .await.unwrap();
    let out = rein(
        home.path(),
        print_args("clean up", &server.base_url(), "m", project.path()),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    let results: Vec<String> = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert!(
        results[0].starts_with("Error: bash was denied by the permission rules (`rm -rf data` matches deny rule `rm *`"),
        "{}",
        results[0]
    );
    assert!(project.path().join("data").is_dir(), "nothing ran");
    assert!(results[1].contains("interactive session"), "{}", results[1]);
    assert!(!project.path().join("made-by-touch").exists());
    assert!(results[2].contains("data"), "ls ran: {}", results[2]);
    assert!(
        results[3].starts_with("Error: write_file was denied"),
        "{}",
        results[3]
    );
    assert!(!project.path().join(".rein/config.toml").exists());
    assert!(
        stderr(&out).contains("refused (needs approval"),
        "{}",
        stderr(&out)
    );
}
