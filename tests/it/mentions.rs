//! File mentions through the real agent against the scripted server: `@path` in a user
//! message attaches the file for the model (its path and content, marked as attached by
//! the user, between the message's words and the reminder), a sensitive file the rules
//! ask about is not attached and the user hears why, and a resumed session sends the
//! attachment byte for byte as before.

use crate::support;

use std::sync::Arc;

use rein_core::agent::{AgentCommand, AgentEvent};
use rein_core::permissions::policy::RulePolicy;
use support::agent::{content, scripted_config, spawn_recorded, spawn_resumed, turn};
use support::{Reply, ScriptedServer};

const MAIN_RS: &str = "fn main() {\n    println!(\"hello from the attached file\");\n}\n";

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), MAIN_RS).unwrap();
    std::fs::write(dir.path().join(".env"), "API_TOKEN=do-not-send-me\n").unwrap();
    dir
}

fn policy(root: &std::path::Path) -> Arc<RulePolicy> {
    let sensitive: Vec<String> = rein_core::permissions::DEFAULT_SENSITIVE_READS
        .iter()
        .map(|s| s.to_string())
        .collect();
    Arc::new(RulePolicy::new(root, &[], &sensitive, None).unwrap())
}

/// The user message of a request, as sent.
fn user_content(request: &serde_json::Value) -> String {
    let messages = request["messages"].as_array().unwrap();
    let user = messages.iter().find(|m| m["role"] == "user").unwrap();
    content(user).to_string()
}

#[tokio::test]
async fn a_mention_is_attached_and_a_sensitive_file_is_not() {
    let root = project();
    let data = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("It prints a greeting.")])
        .await
        .unwrap();
    let mut config = scripted_config(&server, root.path());
    config.policy = policy(root.path());
    let (mut handle, session) = spawn_recorded(config, data.path());
    let events = turn(&mut handle, "explain @src/main.rs, and @.env too").await;

    let sent = user_content(&server.requests()[0]);
    let block = format!("<file path=\"src/main.rs\" attached_by=\"user\">\n{MAIN_RS}</file>");
    assert!(
        sent.starts_with(&format!(
            "explain @src/main.rs, and @.env too\n\n{block}\n\n"
        )),
        "{sent}"
    );
    assert!(!sent.contains("do-not-send-me"), "{sent}");
    assert!(events.iter().any(
        |e| matches!(e, AgentEvent::Attached { paths } if paths == &["src/main.rs".to_string()])
    ));
    let notice = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Notice { message } if message.starts_with("@.env") => Some(message),
            _ => None,
        })
        .expect("a notice about .env");
    assert!(notice.contains("was not attached"), "{notice}");
    assert!(notice.contains("sensitive"), "{notice}");

    // The session keeps the attachment apart from the words, and a resumed session sends
    // the same bytes in its next request.
    handle.send(AgentCommand::Shutdown);
    tokio::time::timeout(std::time::Duration::from_secs(5), handle.task)
        .await
        .unwrap()
        .unwrap();
    let loaded = rein_core::session::load(&session).unwrap();
    let first = &loaded.history[0];
    assert_eq!(first.text(), "explain @src/main.rs, and @.env too");
    assert_eq!(first.attachments().len(), 1);
    assert_eq!(first.attachments()[0].text, block);
    // The file changes after it was attached: the history still holds what was sent.
    std::fs::write(root.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    let server2 = ScriptedServer::start(vec![Reply::text("Still a greeting.")])
        .await
        .unwrap();
    let mut config = scripted_config(&server2, root.path());
    config.policy = policy(root.path());
    let mut resumed = spawn_resumed(config, loaded, data.path());
    turn(&mut resumed, "and now?").await;
    assert_eq!(user_content(&server2.requests()[0]), sent);
}

#[tokio::test]
async fn a_message_without_mentions_is_sent_as_before() {
    let root = project();
    let server = ScriptedServer::start(vec![Reply::text("ok")])
        .await
        .unwrap();
    let mut handle = rein_core::agent::spawn(scripted_config(&server, root.path())).unwrap();
    let events = turn(&mut handle, "mail ann@example.com about src/main.rs").await;
    assert!(!events
        .iter()
        .any(|e| matches!(e, AgentEvent::Attached { .. })));
    let sent = user_content(&server.requests()[0]);
    assert!(!sent.contains("<file"), "{sent}");
}
