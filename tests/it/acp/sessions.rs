//! Sessions are rein's own session files: one the editor started is loaded again after
//! the editor restarts (its conversation told again) and continued by `rein -r ID`; one
//! print mode started is loaded in the editor.

use crate::support;

use std::path::Path;

use serde_json::{json, Value};
use support::{Reply, ScriptedServer};

use super::{command, Client};

fn prompt(session: &str, text: &str) -> Value {
    json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]})
}

/// Every message text the model was sent in its last request.
fn last_request_text(server: &ScriptedServer) -> String {
    server
        .requests()
        .last()
        .map(|r| r["messages"].to_string())
        .unwrap_or_default()
}

async fn turn(client: &mut Client, session: &str, text: &str) -> Value {
    client.call("session/prompt", prompt(session, text)).await
}

/// `rein -r ID -p TEXT` in `project`.
async fn print_mode(home: &Path, project: &Path, server: &ScriptedServer, args: &[&str]) {
    let out = support::rein_command(home)
        .args(["--base-url", &server.base_url(), "--model", "m", "--cwd"])
        .arg(project)
        .args(args)
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_is_kept_across_editor_restarts_and_shared_with_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("read_file", r#"{"path": "notes.txt"}"#)]),
        Reply::text("The word is heron."),
        Reply::text("Still heron."),
        Reply::text("Heron, from the terminal."),
    ])
    .await
    .unwrap();
    std::fs::write(project.path().join("notes.txt"), "heron\n").unwrap();
    let mut client = Client::start(command(home.path(), &server));
    let init = client.initialize().await;
    assert_eq!(init["result"]["agentCapabilities"]["loadSession"], true);
    let session = client.new_session(project.path()).await;
    let done = turn(&mut client, &session, "remember the word in notes.txt").await;
    assert_eq!(done["result"]["stopReason"], "end_turn");
    assert!(client.close().await.success());

    // The editor restarts and loads it: the conversation is told again, then answered.
    let mut client = Client::start(command(home.path(), &server));
    client.initialize().await;
    let r = client
        .call(
            "session/load",
            json!({"sessionId": session, "cwd": project.path(), "mcpServers": []}),
        )
        .await;
    assert!(r.get("result").is_some(), "{r}");
    assert_eq!(r["result"]["modes"]["currentModeId"], "default");
    let told: Vec<String> = client
        .updates("user_message_chunk")
        .iter()
        .filter_map(|u| u["content"]["text"].as_str().map(str::to_string))
        .collect();
    assert_eq!(told, ["remember the word in notes.txt"]);
    assert!(client.reply_text().contains("The word is heron."));
    let calls = client.updates("tool_call");
    assert_eq!(calls[0]["title"], "Read notes.txt");
    let done = turn(&mut client, &session, "and now?").await;
    assert_eq!(done["result"]["stopReason"], "end_turn");
    let sent = last_request_text(&server);
    assert!(
        sent.contains("remember the word in notes.txt") && sent.contains("and now?"),
        "the model gets the whole conversation: {sent}"
    );
    assert!(client.close().await.success());

    // The terminal goes on with it.
    print_mode(
        home.path(),
        project.path(),
        &server,
        &["-r", &session, "-p", "once more"],
    )
    .await;
    let sent = last_request_text(&server);
    assert!(
        sent.contains("and now?") && sent.contains("once more"),
        "{sent}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_print_mode_started_loads_in_the_editor() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("Started in the terminal."),
        Reply::text("Continued in the editor."),
    ])
    .await
    .unwrap();
    print_mode(
        home.path(),
        project.path(),
        &server,
        &["-p", "from the terminal"],
    )
    .await;
    let sessions = std::fs::read_dir(home.path().join("rein-home/sessions"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".jsonl"))
                .map(str::to_string)
        })
        .collect::<Vec<_>>();
    let [session] = sessions.as_slice() else {
        panic!("one session: {sessions:?}")
    };
    let mut client = Client::start(command(home.path(), &server));
    client.initialize().await;
    let r = client
        .call(
            "session/load",
            json!({"sessionId": session, "cwd": project.path(), "mcpServers": []}),
        )
        .await;
    assert!(r.get("result").is_some(), "{r}");
    assert!(client.reply_text().contains("Started in the terminal."));
    let done = turn(&mut client, session, "and here").await;
    assert_eq!(done["result"]["stopReason"], "end_turn");
    assert!(last_request_text(&server).contains("from the terminal"));
    // An unknown session is an error, and the connection goes on.
    let r = client
        .call(
            "session/load",
            json!({"sessionId": "no-such-session", "cwd": project.path(), "mcpServers": []}),
        )
        .await;
    assert!(r.get("error").is_some(), "{r}");
    assert!(client.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editor_lists_the_projects_sessions_newest_first() {
    let home = tempfile::tempdir().unwrap();
    let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server = ScriptedServer::start(vec![
        Reply::text("In one."),
        Reply::text("In two."),
        Reply::text("One again."),
    ])
    .await
    .unwrap();
    print_mode(home.path(), one.path(), &server, &["-p", "first in one"]).await;
    print_mode(home.path(), two.path(), &server, &["-p", "in two"]).await;
    let mut client = Client::start(command(home.path(), &server));
    let init = client.initialize().await;
    assert!(
        init["result"]["agentCapabilities"]["sessionCapabilities"]
            .get("list")
            .is_some(),
        "{init}"
    );
    let newer = client.new_session(one.path()).await;
    assert_eq!(
        turn(&mut client, &newer, "second in one").await["result"]["stopReason"],
        "end_turn"
    );
    let r = client
        .call("session/list", json!({"cwd": one.path()}))
        .await;
    let sessions = r["result"]["sessions"]
        .as_array()
        .unwrap_or_else(|| panic!("{r}"));
    assert_eq!(sessions.len(), 2, "{r}");
    assert_eq!(
        sessions[0]["sessionId"],
        newer.as_str(),
        "newest first: {r}"
    );
    let root = one.path().canonicalize().unwrap();
    assert!(
        sessions.iter().all(|s| s["cwd"] == root.to_str().unwrap()),
        "{r}"
    );
    assert!(
        sessions[0]["updatedAt"]
            .as_str()
            .is_some_and(|t| t.contains('T')),
        "{r}"
    );
    let r = client.call("session/list", json!({})).await;
    assert_eq!(r["result"]["sessions"].as_array().unwrap().len(), 3, "{r}");
    let r = client
        .call("session/list", json!({"cursor": "not-a-cursor"}))
        .await;
    assert!(r.get("error").is_some(), "{r}");
    assert!(client.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_loaded_again_or_closed_lets_its_file_go() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("First."),
        Reply::text("Again."),
        Reply::text("From the terminal."),
    ])
    .await
    .unwrap();
    let mut client = Client::start(command(home.path(), &server));
    let init = client.initialize().await;
    assert!(
        init["result"]["agentCapabilities"]["sessionCapabilities"]
            .get("close")
            .is_some(),
        "{init}"
    );
    let session = client.new_session(project.path()).await;
    turn(&mut client, &session, "one").await;
    // Loaded again on the same connection (an editor reopening the thread): the running
    // one is closed first, so its file is free, and the conversation is told again.
    let r = client
        .call(
            "session/load",
            json!({"sessionId": session, "cwd": project.path(), "mcpServers": []}),
        )
        .await;
    assert!(r.get("result").is_some(), "{r}");
    assert_eq!(
        turn(&mut client, &session, "two").await["result"]["stopReason"],
        "end_turn"
    );
    let r = client
        .call("session/close", json!({"sessionId": session}))
        .await;
    assert!(r.get("result").is_some(), "{r}");
    let r = client
        .call(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "three"}]}),
        )
        .await;
    assert!(
        r.get("error").is_some(),
        "a closed session takes no prompt: {r}"
    );
    // Its file is free: the terminal goes on with it.
    print_mode(
        home.path(),
        project.path(),
        &server,
        &["-r", &session, "-p", "four"],
    )
    .await;
    assert!(client.close().await.success());
}
