//! The connection itself: initialize, what bad input gets, a client that goes away.

use crate::support;

use serde_json::json;
use support::{Reply, ScriptedServer};

use super::{acp_with, command, Client};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_says_who_rein_is_and_what_it_takes() {
    let home = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![]).await.unwrap();
    let mut client = Client::start(command(home.path(), &server));
    let r = client.initialize().await;
    let result = &r["result"];
    assert_eq!(result["protocolVersion"], 1, "{r}");
    assert_eq!(result["agentInfo"]["name"], "rein");
    assert_eq!(
        result["agentCapabilities"]["promptCapabilities"]["embeddedContext"],
        true
    );
    assert_eq!(result["authMethods"], json!([]));
    assert!(client.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_model_initialize_names_the_setting() {
    let home = tempfile::tempdir().unwrap();
    let mut client = Client::start(acp_with(home.path(), &[]));
    let r = client.initialize().await;
    let error = r["error"].to_string();
    assert!(error.contains("`model`"), "{r}");
    assert!(client.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_json_rpc_errors_and_rein_goes_on() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("Still here.")])
        .await
        .unwrap();
    let mut client = Client::start(command(home.path(), &server));
    client.initialize().await;
    let r = client.call("no/such/method", json!({})).await;
    assert_eq!(r["error"]["code"], -32601, "{r}");
    client.write("{this is not json").await;
    let r = client
        .call("session/prompt", json!({"sessionId": "nope", "prompt": []}))
        .await;
    assert!(r.get("error").is_some(), "{r}");
    let r = client
        .call(
            "session/new",
            json!({"cwd": "relative/path", "mcpServers": []}),
        )
        .await;
    assert!(r.get("error").is_some(), "{r}");
    let r = client.call("session/new", json!({"cwd": 42})).await;
    assert!(r.get("error").is_some(), "{r}");
    // After all that, a turn still works.
    let session = client.new_session(project.path()).await;
    let done = client
        .call(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert!(client.reply_text().contains("Still here."));
    assert!(client.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_providers_key_initialize_names_the_variable() {
    let home = tempfile::tempdir().unwrap();
    let mut client = Client::start(acp_with(
        home.path(),
        &["--model", "openrouter/anthropic/claude-sonnet-4.5"],
    ));
    let r = client.initialize().await;
    let error = r["error"].to_string();
    assert!(error.contains("OPENROUTER_API_KEY"), "{r}");
    assert!(client.close().await.success());
}
