//! Thinking without a signature never poisons the session.

use crate::support;

use rein_core::conversation::Api;
use serde_json::{json, Value};
use support::agent::{agent_config, test_client, turn, API_KEY};
use support::replay::{error_messages, streamed_text};
use support::{Reply, ScriptedServer, Step};

use super::check::{kind, request_violations};
use super::{IDLE_TIMEOUT, THINKING_BUDGET};

/// An Anthropic stream for the scripted server: `blocks` (each a content block's start
/// and its deltas) between `message_start` and the stop reason.
fn anthropic_stream(blocks: Vec<(Value, Vec<Value>)>, stop_reason: &str) -> Reply {
    let mut events = vec![json!({"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
        "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}})];
    for (index, (start, deltas)) in blocks.into_iter().enumerate() {
        events.push(json!({"type": "content_block_start", "index": index, "content_block": start}));
        for delta in deltas {
            events.push(json!({"type": "content_block_delta", "index": index, "delta": delta}));
        }
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events.push(
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason},
        "usage": {"output_tokens": 5}}),
    );
    events.push(json!({"type": "message_stop"}));
    Reply::sse(events.into_iter().map(Step::Data).collect())
}

fn text_answer(text: &str) -> Reply {
    anthropic_stream(
        vec![(
            json!({"type": "text", "text": ""}),
            vec![json!({"type": "text_delta", "text": text})],
        )],
        "end_turn",
    )
}

/// What Anthropic answers a request that breaks its thinking rules: 400, as the service
/// words it (a thinking block without a valid signature; thinking on while the last
/// assistant message, whose calls are being answered, does not open with thinking).
fn anthropic_rules() -> support::Router {
    std::sync::Arc::new(|request: &Value| {
        let problems: Vec<String> = request_violations(request)
            .into_iter()
            .filter(|p| p.starts_with("anthropic_thinking_echo"))
            .collect();
        let first = problems.first()?;
        let message = if first.contains("signature") {
            "messages.1.content.0: Invalid `signature` in `thinking` block"
        } else {
            "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block"
        };
        Some(Reply::plain(
            400,
            &json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
                .to_string(),
        ))
    })
}

/// Issue 42: a thinking block whose `signature_delta` never came (and a redacted one
/// without its data) was sent back with `"signature": ""`, and Anthropic refused that
/// request and every later one. Through the real agent and client against a server that
/// answers 400 as Anthropic does: the call's follow-up, the next turn, and the session
/// resumed from its file (which keeps the block as it streamed) all go through; signed
/// thinking of another reply still goes back as it streamed.
#[tokio::test]
async fn thinking_without_a_signature_never_poisons_the_session() {
    let call = |id: &str, command: &str| {
        (
            json!({"type": "tool_use", "id": id, "name": "bash", "input": {}}),
            vec![json!({"type": "input_json_delta",
                "partial_json": json!({"command": command}).to_string()})],
        )
    };
    let thinking = |text: &str, signature: Option<&str>| {
        let mut deltas = vec![json!({"type": "thinking_delta", "thinking": text})];
        if let Some(signature) = signature {
            deltas.push(json!({"type": "signature_delta", "signature": signature}));
        }
        (
            json!({"type": "thinking", "thinking": "", "signature": ""}),
            deltas,
        )
    };
    let server = ScriptedServer::start_routed(
        vec![
            // Turn 1: signed thinking, then a call.
            anthropic_stream(
                vec![
                    thinking("plan", Some("SIGNED-1")),
                    call("toolu_1", "echo one"),
                ],
                "tool_use",
            ),
            text_answer("One done."),
            // Turn 2: a signed block, one whose signature never came, a redacted block
            // without data, then a call.
            anthropic_stream(
                vec![
                    thinking("signed part", Some("SIGNED-2")),
                    thinking("unsigned part", None),
                    (json!({"type": "redacted_thinking"}), vec![]),
                    call("toolu_2", "echo two"),
                ],
                "tool_use",
            ),
            text_answer("Two done."),
            text_answer("Three done."),
            text_answer("Resumed."),
        ],
        anthropic_rules(),
    )
    .await
    .unwrap();
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let config = || {
        let mut client = test_client(server.base_url(), API_KEY, "claude-sonnet-4-5");
        client.api = Api::Anthropic;
        client.idle_timeout = IDLE_TIMEOUT;
        client.thinking_budget = Some(THINKING_BUDGET);
        agent_config(client, project.path())
    };
    let (mut agent, path) = support::agent::spawn_recorded(config(), data.path());
    for (prompt, said) in [
        ("one", "One done."),
        ("two", "Two done."),
        ("three", "Three done."),
    ] {
        let events = turn(&mut agent, prompt).await;
        assert!(
            error_messages(&events).is_empty(),
            "{prompt}: {:?}",
            error_messages(&events)
        );
        assert!(
            streamed_text(&events).ends_with(said),
            "{prompt}: {events:#?}"
        );
    }
    agent.shut_down().await;
    // The session file keeps the reply as it streamed, the empty signature too (an older
    // rein's file holds the same); resumed from it, nothing of it goes back.
    let file = std::fs::read_to_string(&path).unwrap();
    assert!(file.contains(r#""signature":"""#), "{file}");
    let loaded = rein_core::session::load(&path).unwrap();
    let mut agent = support::agent::spawn_resumed(config(), loaded, data.path());
    let events = turn(&mut agent, "four").await;
    assert!(
        error_messages(&events).is_empty(),
        "{:?}",
        error_messages(&events)
    );
    assert_eq!(streamed_text(&events), "Resumed.");

    let requests = server.requests();
    assert_eq!(requests.len(), 6, "no request refused and retried");
    for (j, request) in requests.iter().enumerate() {
        assert_eq!(
            request_violations(request),
            Vec::<String>::new(),
            "request {}",
            j + 1
        );
    }
    // Turn 1's signed thinking goes back, as streamed, in every later request.
    for request in &requests[1..] {
        assert_eq!(
            request["messages"][1]["content"][0]["signature"],
            "SIGNED-1"
        );
    }
    // Turn 2's follow-up: its message without any of its thinking, and thinking off for
    // that request alone (the API's rule while those calls are answered).
    let follow_up = &requests[3];
    let last_assistant = &follow_up["messages"].as_array().unwrap()[5];
    let kinds: Vec<&str> = last_assistant["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(kind)
        .collect();
    assert_eq!(kinds, ["tool_use"], "{follow_up:#}");
    assert!(follow_up.get("thinking").is_none());
    assert!(!follow_up.to_string().contains("SIGNED-2"));
    for request in [
        &requests[0],
        &requests[1],
        &requests[2],
        &requests[4],
        &requests[5],
    ] {
        assert!(request.get("thinking").is_some(), "{request:#}");
    }
}
