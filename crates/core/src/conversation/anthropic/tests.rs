//! Unit tests of the Anthropic Messages adapter: the request body built from a
//! conversation (its shape, thinking and tool calls sent back, every call answered, cache
//! breakpoints, images, no empty text block).

use super::*;
use crate::agent::stream::{Assembler, StreamDelta};
use crate::conversation::{Image, Reasoning, ToolResult};

const MODEL: &str = "claude-sonnet-4-5";

fn options(model: &str) -> NativeOptions<'_> {
    NativeOptions {
        model,
        ..NativeOptions::default()
    }
}

fn tools() -> Value {
    json!([
        {"type": "function", "function": {"name": "bash", "description": "Run", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}},
    ])
}

/// The assistant message rein keeps for a streamed reply (as `step` makes it).
fn streamed(events: &[Value], model: &str) -> Message {
    let mut a = Assembler::new();
    for e in events {
        a.push_anthropic(&e.to_string(), &mut |_: StreamDelta<'_>| {})
            .unwrap();
    }
    let reply = a.finish();
    assert!(reply.finish_reason.is_some());
    Message::assistant(reply.text.clone(), reply.tool_calls.clone())
        .with_reasoning(reply.reasoning_state())
        .with_refusal(Some(reply.refusal.clone()))
        .from_model(model)
}

/// A reply that thinks, says a word and calls two tools.
fn thinking_calls() -> Vec<Value> {
    vec![
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 5}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Two tools."}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "SIG+/=="}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "REDACTED"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "Looking."}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "content_block_start", "index": 3, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}}),
        json!({"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": "{\"command\": \"ls\"}"}}),
        json!({"type": "content_block_stop", "index": 3}),
        json!({"type": "content_block_start", "index": 4, "content_block": {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {}}}),
        json!({"type": "content_block_delta", "index": 4, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"a\"}"}}),
        json!({"type": "content_block_stop", "index": 4}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}}),
        json!({"type": "message_stop"}),
    ]
}

fn text_reply(text: &str) -> Vec<Value> {
    vec![
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
        json!({"type": "message_stop"}),
    ]
}

fn count_markers(body: &Value) -> usize {
    body.to_string().matches("\"cache_control\"").count()
}

/// Every text block of the request, wherever it is.
fn texts(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(o) => {
            if o.get("type") == Some(&json!("text")) {
                out.push(
                    o.get("text")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                );
            }
            o.values().for_each(|v| texts(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| texts(v, out)),
        _ => {}
    }
}

#[test]
fn the_request_shape() {
    let mut user = Message::user("hi");
    user.set_reminder("(ctx)".into());
    let history = [Message::system("You are rein."), user];
    let body = request(&history, &tools(), &options(MODEL));
    assert_eq!(
        body,
        json!({
            "model": MODEL,
            "max_tokens": DEFAULT_MAX_TOKENS,
            "stream": true,
            "system": [{"type": "text", "text": "You are rein.", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "hi\n\n(ctx)", "cache_control": {"type": "ephemeral"}}
            ]}],
            "tools": [
                {"name": "bash", "description": "Run", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}},
                {"name": "read", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}},
            ],
        })
    );
    // An hour's cache, a cap, thinking: max_tokens above the budget.
    let opts = NativeOptions {
        cache_ttl: Some("1h"),
        max_tokens: Some(4_096),
        thinking_budget: Some(8_000),
        ..options(MODEL)
    };
    let body = request(&history, &json!([]), &opts);
    assert_eq!(
        body["system"][0]["cache_control"],
        json!({"type": "ephemeral", "ttl": "1h"})
    );
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 8_000})
    );
    assert_eq!(body["max_tokens"], 12_096);
    assert!(body.get("tools").is_none());
    let small = NativeOptions {
        thinking_budget: Some(10),
        ..options(MODEL)
    };
    let body = request(&history, &json!([]), &small);
    assert_eq!(body["thinking"]["budget_tokens"], MIN_THINKING_BUDGET);
    assert_eq!(body["max_tokens"], DEFAULT_MAX_TOKENS);
}

/// Thinking and calls streamed, results stored, the next request: the thinking blocks
/// come back unmodified before the calls, and the next user message opens with one
/// result per call, in call order.
#[test]
fn thinking_and_calls_go_back_as_streamed_and_every_call_is_answered() {
    let assistant = streamed(&thinking_calls(), MODEL);
    let mut history = vec![
        Message::system("s"),
        Message::user("list and read"),
        assistant,
        Message::tool_result("toolu_1", ToolResult::ok("a\nb")),
        Message::tool_result("toolu_2", ToolResult::error("no such file")),
    ];
    let opts = NativeOptions {
        thinking_budget: Some(2_048),
        ..options(MODEL)
    };
    let body = request(&history, &tools(), &opts);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Two tools.", "signature": "SIG+/=="},
            {"type": "redacted_thinking", "data": "REDACTED"},
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}},
            {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"path": "a"}},
        ]})
    );
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a\nb"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "no such file", "is_error": true, "cache_control": {"type": "ephemeral"}},
        ]})
    );
    assert!(body.get("thinking").is_some());

    // The next request extends this one: the same messages (markers aside), and the
    // blocks still marked keep their bytes.
    fn strip(v: &Value) -> Value {
        match v {
            Value::Object(o) => Value::Object(
                o.iter()
                    .filter(|(k, _)| *k != "cache_control")
                    .map(|(k, v)| (k.clone(), strip(v)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(strip).collect()),
            other => other.clone(),
        }
    }
    history.push(streamed(&text_reply("Done."), MODEL));
    history.push(Message::user("thanks"));
    let next = request(&history, &tools(), &opts);
    let next_messages = next["messages"].as_array().unwrap();
    assert_eq!(next_messages.len(), 5);
    for (a, b) in messages.iter().zip(next_messages) {
        assert_eq!(strip(a), strip(b));
    }
    assert_eq!(next_messages[2], messages[2], "still marked, same bytes");
    assert_eq!(next["system"], body["system"]);
    assert_eq!(next["tools"], body["tools"]);
}

/// A turn interrupted with calls unanswered: every call gets a result, in order, and
/// the user's next message comes after a note.
#[test]
fn an_interrupted_turns_calls_are_all_answered() {
    let calls = vec![
        ToolCall::new("toolu_a", "bash", "{}"),
        ToolCall::new("toolu_b", "bash", "{\"command\":"),
        ToolCall::new("toolu_c", "read", "[1]"),
    ];
    let history = [
        Message::system("s"),
        Message::user("go"),
        Message::assistant(String::new(), calls).from_model(MODEL),
        Message::tool_result("toolu_a", ToolResult::ok("done")),
        Message::user("stop, do something else"),
    ];
    let body = request(&history, &json!([]), &options(MODEL));
    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
    let uses: Vec<&Value> = messages[1]["content"].as_array().unwrap().iter().collect();
    assert_eq!(uses.len(), 3);
    // Arguments that are not an object go as an empty input.
    assert_eq!(uses[1]["input"], json!({}));
    assert_eq!(uses[2]["input"], json!({}));
    let results = messages[2]["content"].as_array().unwrap();
    let ids: Vec<&str> = results
        .iter()
        .map(|r| r["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["toolu_a", "toolu_b", "toolu_c"]);
    assert_eq!(results[0].get("is_error"), None);
    assert_eq!(results[1]["content"], NO_RESULT);
    assert_eq!(results[2]["is_error"], true);
    assert_eq!(messages[3]["content"][0]["text"], order::AFTER_RESULTS);
    assert_eq!(messages[4]["content"][0]["text"], "stop, do something else");
}

/// Another model's (or another API's) thinking is never sent; the calls and text are.
/// Thinking is then left off while its calls are being answered.
#[test]
fn another_models_thinking_is_not_sent() {
    let history = [
        Message::system("s"),
        Message::user("u"),
        streamed(&thinking_calls(), "claude-opus-4-1"),
        Message::tool("toolu_1", "r1"),
        Message::tool("toolu_2", "r2"),
    ];
    let opts = NativeOptions {
        thinking_budget: Some(2_048),
        ..options(MODEL)
    };
    let body = request(&history, &json!([]), &opts);
    let content = &body["messages"][1]["content"];
    let kinds: Vec<&str> = content
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["text", "tool_use", "tool_use"]);
    assert!(!body.to_string().contains("SIG+/=="));
    assert!(body.get("thinking").is_none(), "the API would refuse it");
    // The same model, its state marked as another API's: not sent either.
    let mut chat_state = history.clone();
    if let Message::Assistant {
        reasoning: Some(r), ..
    } = &mut chat_state[2]
    {
        r.api = None;
    }
    let body = request(&chat_state, &json!([]), &options("claude-opus-4-1"));
    assert!(!body.to_string().contains("REDACTED"));
    // Its own model gets it back.
    let body = request(&history, &json!([]), &options("claude-opus-4-1"));
    assert_eq!(body["messages"][1]["content"][0]["signature"], "SIG+/==");
}

/// A thinking block whose signature never came (a stream that ended without its
/// `signature_delta`, a session file that kept `"signature": ""`) and a redacted one
/// without its data are never sent: the message goes without its thinking blocks, the
/// signed ones too, and thinking is off while its calls are answered. Once the user
/// speaks again, thinking is back on, and the signed blocks of other messages still go.
#[test]
fn thinking_that_cannot_be_verified_is_never_sent() {
    let unsigned: Vec<Value> = thinking_calls()
        .into_iter()
        .filter(|e| e["delta"]["type"] != "signature_delta")
        .collect();
    let opts = NativeOptions {
        thinking_budget: Some(2_048),
        ..options(MODEL)
    };
    let mut signed_turn = vec![
        Message::user("first"),
        streamed(&thinking_calls(), MODEL),
        Message::tool("toolu_1", "r1"),
        Message::tool("toolu_2", "r2"),
        streamed(&text_reply("ok"), MODEL),
    ];
    let mut history = vec![Message::system("s")];
    history.append(&mut signed_turn);
    history.extend([
        Message::user("list and read"),
        streamed(&unsigned, MODEL),
        Message::tool("toolu_1", "a"),
        Message::tool("toolu_2", "b"),
    ]);
    let check = |history: &[Message]| {
        let body = request(history, &tools(), &opts);
        let text = body.to_string();
        assert!(!text.contains(r#""signature":"""#), "{body:#}");
        let messages = body["messages"].as_array().unwrap();
        let last_call = &messages[messages.len() - 2]["content"];
        let kinds: Vec<&str> = last_call
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["text", "tool_use", "tool_use"], "{body:#}");
        assert!(body.get("thinking").is_none(), "the API would refuse it");
        // The first turn's signed thinking still goes back.
        assert_eq!(messages[1]["content"][0]["signature"], "SIG+/==");
        assert_eq!(messages[1]["content"][1]["data"], "REDACTED");
    };
    check(&history);
    // The same history through a session file, as an older rein wrote it.
    let json = serde_json::to_string(&history).unwrap();
    assert!(json.contains(r#""signature":"""#));
    let resumed: Vec<Message> = serde_json::from_str(&json).unwrap();
    check(&resumed);
    // The user speaks again: thinking is back.
    history.push(streamed(&text_reply("done"), MODEL));
    history.push(Message::user("next"));
    let body = request(&history, &tools(), &opts);
    assert!(body.get("thinking").is_some());
    assert!(!body.to_string().contains(r#""signature":"""#));

    // A redacted block without its data takes its message's thinking with it.
    let mut no_data = thinking_calls();
    no_data[5] = json!({"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking"}});
    let history = [
        Message::system("s"),
        Message::user("u"),
        streamed(&no_data, MODEL),
        Message::tool("toolu_1", "r1"),
        Message::tool("toolu_2", "r2"),
    ];
    let body = request(&history, &tools(), &opts);
    let text = body.to_string();
    assert!(!text.contains("redacted_thinking") && !text.contains("SIG+/=="));
    assert!(body.get("thinking").is_none());
}

/// A long history: never more than four breakpoints, and the same bytes every time.
#[test]
fn at_most_four_breakpoints_and_the_same_bytes_for_the_same_history() {
    let mut history = vec![Message::system("s")];
    for i in 0..40 {
        history.push(Message::user(format!("question {i}")));
        let call = ToolCall::new(format!("toolu_{i}"), "bash", "{\"command\":\"ls\"}");
        history.push(Message::assistant(String::new(), vec![call]).from_model(MODEL));
        history.push(Message::tool(format!("toolu_{i}"), "out"));
        history.push(Message::assistant(format!("answer {i}"), vec![]).from_model(MODEL));
    }
    for tools in [tools(), json!([])] {
        for ttl in [None, Some("1h")] {
            let opts = NativeOptions {
                cache_ttl: ttl,
                ..options(MODEL)
            };
            let body = request(&history, &tools, &opts);
            let markers = count_markers(&body);
            assert!(markers <= MAX_BREAKPOINTS, "{markers}");
            assert_eq!(markers, if tools == json!([]) { 3 } else { 4 });
            let again = request(&history, &tools, &opts);
            assert_eq!(
                serde_json::to_vec(&body).unwrap(),
                serde_json::to_vec(&again).unwrap()
            );
        }
    }
    // The last two user messages carry them: the last question, and the results before it.
    let body = request(&history, &json!([]), &options(MODEL));
    let messages = body["messages"].as_array().unwrap();
    let marked: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.to_string().contains("cache_control"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(marked, [messages.len() - 4, messages.len() - 2]);
    // Roles alternate, starting with the user.
    for (i, m) in messages.iter().enumerate() {
        assert_eq!(m["role"], if i % 2 == 0 { "user" } else { "assistant" });
    }
}

/// A tool's images go inside its result, as base64 image blocks, to a model that takes
/// them; as the description alone to one that does not.
#[test]
fn images_ride_in_their_tool_result() {
    let mut result = ToolResult::ok("[image: image/png, 3 B]");
    result.images = vec![Image {
        mime_type: "image/png".into(),
        data: "AAAA".into(),
    }];
    let history = [
        Message::system("s"),
        Message::user("look"),
        Message::assistant(String::new(), vec![ToolCall::new("toolu_s", "shot", "{}")]),
        Message::tool_result("toolu_s", result),
    ];
    let with = NativeOptions {
        images: true,
        ..options(MODEL)
    };
    let body = request(&history, &json!([]), &with);
    assert_eq!(
        body["messages"][2]["content"][0]["content"],
        json!([
            {"type": "text", "text": "[image: image/png, 3 B]"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
        ])
    );
    let body = request(&history, &json!([]), &options(MODEL));
    assert_eq!(
        body["messages"][2]["content"][0]["content"],
        "[image: image/png, 3 B]"
    );
    assert!(!body.to_string().contains("AAAA"));
}

/// No empty text block anywhere, whatever is empty; a refusal goes as text; a history
/// that opens with the assistant gets a user note first; a stray result is text.
#[test]
fn never_an_empty_text_block() {
    let history = [
        Message::system(""),
        Message::assistant(String::new(), vec![]),
        Message::user(""),
        Message::assistant(String::new(), vec![]).with_refusal(Some("I won't.".into())),
        Message::tool("toolu_stray", ""),
        Message::user("again"),
        Message::assistant(String::new(), vec![])
            .with_reasoning(Some(Reasoning {
                details: vec![
                    json!({"type": "thinking", "thinking": "", "signature": "S"}),
                    json!({"type": "text"}),
                ],
                api: Some(Api::Anthropic),
                ..Reasoning::default()
            }))
            .from_model(MODEL),
    ];
    let body = request(&history, &json!([]), &options(MODEL));
    let mut all = Vec::new();
    texts(&body, &mut all);
    assert!(all.iter().all(|t| !t.is_empty()), "{all:?}");
    assert!(body.get("system").is_none());
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["content"][0]["text"], order::GO_ON);
    assert!(body.to_string().contains("I won't."));
    assert!(body.to_string().contains("toolu_stray"));
    // The thinking-only reply keeps its block and says something besides.
    let last = messages.last().unwrap();
    assert_eq!(last["content"][0]["signature"], "S");
    assert_eq!(last["content"][1]["text"], EMPTY);
    for (i, m) in messages.iter().enumerate() {
        assert_eq!(
            m["role"],
            if i % 2 == 0 { "user" } else { "assistant" },
            "{body:#}"
        );
    }
}

/// A result that answers no call goes as text, joined to the user turn before it: the
/// Messages API wants the roles to alternate.
#[test]
fn a_stray_result_joins_the_user_turn_before_it() {
    let history = [
        Message::system("s"),
        Message::user("first"),
        Message::tool_result("toolu_gone", ToolResult::ok("stray")),
    ];
    let body = request(&history, &json!([]), &options(MODEL));
    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert!(
        roles.windows(2).all(|w| w[0] != w[1]),
        "roles must alternate: {roles:?}"
    );
    let all = body["messages"].to_string();
    assert!(all.contains("first") && all.contains("stray"), "{all}");
}

/// Results stored in another order than their calls each answer their own call.
#[test]
fn results_stored_out_of_order_answer_their_own_calls() {
    let calls = vec![
        ToolCall::new("toolu_a", "bash", "{}"),
        ToolCall::new("toolu_b", "bash", "{}"),
    ];
    let history = [
        Message::system("s"),
        Message::user("go"),
        Message::assistant(String::new(), calls).from_model(MODEL),
        Message::tool_result("toolu_b", ToolResult::ok("result of b")),
        Message::tool_result("toolu_a", ToolResult::ok("result of a")),
    ];
    let body = request(&history, &json!([]), &options(MODEL));
    let results = body["messages"][2]["content"].as_array().unwrap();
    let pairs: Vec<(String, String)> = results
        .iter()
        .map(|r| (r["tool_use_id"].to_string(), r["content"].to_string()))
        .collect();
    assert_eq!(pairs.len(), 2, "{results:?}");
    assert!(
        pairs[0].0.contains("toolu_a") && pairs[0].1.contains("result of a"),
        "{pairs:?}"
    );
    assert!(
        pairs[1].0.contains("toolu_b") && pairs[1].1.contains("result of b"),
        "{pairs:?}"
    );
}

/// The assistant message rein keeps for a reply streamed as `events`, with `text` as its
/// text (a text the stream gave no place to, when the two differ).
fn stored_with_text(events: &[Value], text: &str, calls: Vec<ToolCall>) -> Message {
    let mut a = Assembler::new();
    for e in events {
        a.push_anthropic(&e.to_string(), &mut |_: StreamDelta<'_>| {})
            .unwrap();
    }
    let reply = a.finish();
    Message::assistant(text.to_string(), calls)
        .with_reasoning(reply.reasoning_state())
        .from_model(MODEL)
}

fn block_start(index: u64, block: Value) -> Value {
    json!({"type": "content_block_start", "index": index, "content_block": block})
}

fn block_stop(index: u64) -> Value {
    json!({"type": "content_block_stop", "index": index})
}

/// The types of the blocks of the assistant message sent for `message`, with their text
/// or call id.
fn sent_blocks(message: Message) -> Vec<String> {
    let history = [
        Message::system("s"),
        Message::user("go"),
        message,
        Message::tool_result("toolu_a", ToolResult::ok("ra")),
        Message::tool_result("toolu_b", ToolResult::ok("rb")),
    ];
    let body = request(&history, &json!([]), &options(MODEL));
    body["messages"][1]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let kind = b["type"].as_str().unwrap_or_default();
            let what = b["text"].as_str().or(b["id"].as_str()).unwrap_or_default();
            format!("{kind}:{what}")
        })
        .collect()
}

fn two_calls() -> Vec<ToolCall> {
    vec![
        ToolCall::new("toolu_a", "bash", "{}"),
        ToolCall::new("toolu_b", "bash", "{}"),
    ]
}

/// A reply's blocks go back in the order they came: its text where it stood, between
/// the calls, once; the calls in their stored order, each once.
#[test]
fn a_replys_blocks_go_back_in_the_order_they_came() {
    let events = [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 5}}}),
        block_start(
            0,
            json!({"type": "tool_use", "id": "toolu_b", "name": "bash", "input": {}}),
        ),
        block_stop(0),
        block_start(1, json!({"type": "text", "text": "Between."})),
        block_stop(1),
        block_start(
            2,
            json!({"type": "tool_use", "id": "toolu_a", "name": "bash", "input": {}}),
        ),
        block_stop(2),
        block_start(3, json!({"type": "text", "text": ""})),
        block_stop(3),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        json!({"type": "message_stop"}),
    ];
    let message = stored_with_text(&events, "Between.", two_calls());
    assert_eq!(
        sent_blocks(message),
        ["tool_use:toolu_b", "text:Between.", "tool_use:toolu_a"]
    );
}

/// A text the stream gave no place to goes after the thinking and before the calls.
#[test]
fn a_text_without_a_place_goes_after_the_thinking_and_before_the_calls() {
    let events = [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 5}}}),
        block_start(
            0,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
        ),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Hm."}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "SIG"}}),
        block_stop(0),
        block_start(
            1,
            json!({"type": "tool_use", "id": "toolu_a", "name": "bash", "input": {}}),
        ),
        block_stop(1),
        block_start(
            2,
            json!({"type": "tool_use", "id": "toolu_b", "name": "bash", "input": {}}),
        ),
        block_stop(2),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        json!({"type": "message_stop"}),
    ];
    let message = stored_with_text(&events, "Said.", two_calls());
    assert_eq!(
        sent_blocks(message),
        [
            "thinking:",
            "text:Said.",
            "tool_use:toolu_a",
            "tool_use:toolu_b"
        ]
    );
}

/// The images a user attached follow its text as base64 image blocks, to a model that
/// takes them; one that does not gets a line saying they were not sent.
#[test]
fn a_users_images_follow_its_text() {
    let history = [
        Message::system("s"),
        Message::user("what is this [Image #1: png, 8 B]").with_images(vec![Image {
            mime_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        }]),
    ];
    let with = NativeOptions {
        images: true,
        ..options(MODEL)
    };
    let body = request(&history, &json!([]), &with);
    let content = &body["messages"][0]["content"];
    assert_eq!(content[0]["type"], "text");
    assert_eq!(content[0]["text"], "what is this [Image #1: png, 8 B]");
    assert_eq!(
        content[1]["source"],
        json!({"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="})
    );
    assert_eq!(content.as_array().map(Vec::len), Some(2));
    let body = request(&history, &json!([]), &options(MODEL));
    let content = &body["messages"][0]["content"];
    assert_eq!(content.as_array().map(Vec::len), Some(1));
    assert!(content[0]["text"]
        .as_str()
        .is_some_and(|t| t.ends_with(crate::conversation::wire::IMAGES_NOT_SENT)));
}
