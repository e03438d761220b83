//! What a prompt carries besides text: images. A model whose entry says `images = true`
//! is offered image prompts and gets each image after the words that name it, the session
//! keeps them (a loaded session shows them again) and a follow-up request resends them;
//! a model not known to take images is not offered them, and one an editor sends anyway
//! is named with why it was left out.

use std::path::Path;

use serde_json::{json, Value};

use crate::support::{Reply, ScriptedServer};

use super::{acp_with, user_config, Client};

/// A PNG's first bytes (signature and header) of 1280×800, as base64.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAABQAAAAMgCAYAAAA=";

/// The user's config: `server` as the provider `scripted`, its model `seer` taking images
/// and `blind` not known to.
fn models(home: &Path, server: &ScriptedServer) {
    user_config(
        home,
        &format!(
            "[providers.scripted]\nbase_url = {:?}\nmodels = {{ \"seer\" = {{ images = true }}, \"blind\" = {{ context_window = 100000 }} }}\n",
            server.base_url()
        ),
    );
}

fn image_prompt(session: &str) -> Value {
    json!({"sessionId": session, "prompt": [
        {"type": "text", "text": "what is wrong in"},
        {"type": "image", "mimeType": "image/png", "data": PNG, "uri": "file:///tmp/shot.png"},
    ]})
}

/// The last user message of the model's `n`th request.
fn last_user(server: &ScriptedServer, n: usize) -> Value {
    let request = &server.requests()[n];
    let messages = request["messages"].as_array().unwrap();
    rein_core::conversation::order::check(messages).unwrap();
    messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .cloned()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_reaches_a_model_that_takes_images_and_stays_with_the_session() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("A dialog box."),
        Reply::text("Still the dialog box."),
    ])
    .await
    .unwrap();
    models(home.path(), &server);
    let mut client = Client::start(acp_with(home.path(), &["--model", "scripted/seer"]));
    let init = client.initialize().await;
    assert_eq!(
        init["result"]["agentCapabilities"]["promptCapabilities"]["image"], true,
        "{init}"
    );
    let session = client.new_session(project.path()).await;
    let done = client.call("session/prompt", image_prompt(&session)).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let sent = last_user(&server, 0);
    let text = sent["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("what is wrong in [Image #1: shot.png, png 1280×800, 29 B]"),
        "{text}"
    );
    assert_eq!(
        sent["content"][1],
        json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}")}})
    );
    assert!(client.close().await.success());

    // The editor restarts and loads the session: the image is shown again, and the next
    // request sends it again (the session kept it).
    let mut client = Client::start(acp_with(home.path(), &["--model", "scripted/seer"]));
    client.initialize().await;
    let r = client
        .call(
            "session/load",
            json!({"sessionId": session, "cwd": project.path(), "mcpServers": []}),
        )
        .await;
    assert!(r.get("result").is_some(), "{r}");
    let shown: Vec<Value> = client
        .updates("user_message_chunk")
        .into_iter()
        .map(|u| u["content"].clone())
        .collect();
    assert!(
        shown
            .iter()
            .any(|c| c["type"] == "image" && c["data"] == PNG && c["mimeType"] == "image/png"),
        "{shown:?}"
    );
    client
        .call(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "and now?"}]}),
        )
        .await;
    let again = server.requests()[1]["messages"].to_string();
    assert!(
        again.contains(&format!("data:image/png;base64,{PNG}")),
        "{again}"
    );
    assert!(client.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_not_known_to_take_images_is_not_offered_them_and_is_told_what_was_left_out() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("I cannot see it.")])
        .await
        .unwrap();
    models(home.path(), &server);
    let mut client = Client::start(acp_with(home.path(), &["--model", "scripted/blind"]));
    let init = client.initialize().await;
    let image = &init["result"]["agentCapabilities"]["promptCapabilities"]["image"];
    assert!(image.is_null() || *image == false, "{init}");
    let session = client.new_session(project.path()).await;
    // An editor that sends one anyway.
    let done = client.call("session/prompt", image_prompt(&session)).await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let sent = last_user(&server, 0);
    let text = sent["content"].as_str().expect("text only");
    assert!(
        text.contains("[Image #1: shot.png, png 1280×800, 29 B; left out: the model is not known to take images"),
        "{text}"
    );
    assert!(!server.requests()[0].to_string().contains("base64"));
    assert!(client.close().await.success());
}
