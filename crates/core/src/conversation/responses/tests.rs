//! Unit tests of the Responses adapter: the request body built from a conversation
//! (reasoning and calls sent back in their order, what is asked for, the tools).

use super::*;
use crate::agent::stream::Assembler;
use crate::conversation::{Image, Reasoning, ToolResult};

fn options(model: &str) -> NativeOptions<'_> {
    NativeOptions {
        model,
        ..NativeOptions::default()
    }
}

fn chat_tools() -> Value {
    json!([{"type": "function", "function": {
        "name": "bash", "description": "Run a command",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}
    }}])
}

/// Every key named `id` anywhere in the input, with its value.
fn ids(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(o) => {
            for (k, v) in o {
                if k == "id" {
                    out.push(v.to_string());
                }
                ids(v, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| ids(v, out)),
        _ => {}
    }
}

#[test]
fn the_request_has_the_responses_shape() {
    let mut user = Message::user("fix it");
    user.set_reminder("(ctx)".into());
    let history = [Message::system("be brief"), user];
    let body = request(
        &history,
        &chat_tools(),
        &NativeOptions {
            model: "gpt-5",
            max_tokens: Some(4000),
            images: false,
            cache_key: Some("session-1"),
            cache_ttl: None,
            reasoning_effort: Some("medium"),
            thinking_budget: None,
        },
    );
    assert_eq!(
        body,
        json!({
            "model": "gpt-5",
            "instructions": "be brief",
            "input": [{"role": "user", "content": [{"type": "input_text", "text": "fix it\n\n(ctx)"}]}],
            "tools": [{"type": "function", "name": "bash", "description": "Run a command",
                "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
                "strict": false}],
            "parallel_tool_calls": true,
            "store": false,
            "stream": true,
            "include": ["reasoning.encrypted_content"],
            "reasoning": {"effort": "medium", "summary": "auto"},
            "prompt_cache_key": "session-1",
            "max_output_tokens": 4000,
        })
    );
    // No tools, no effort, no key, no cap: none of their fields.
    let body = request(&history, &json!([]), &options("gpt-4o"));
    for absent in [
        "tools",
        "parallel_tool_calls",
        "include",
        "reasoning",
        "prompt_cache_key",
        "max_output_tokens",
    ] {
        assert!(body.get(absent).is_none(), "{absent}: {body}");
    }
    // A cap below the API's least is raised to it.
    let body = request(
        &history,
        &json!([]),
        &NativeOptions {
            max_tokens: Some(3),
            ..options("m")
        },
    );
    assert_eq!(body["max_output_tokens"], 16);
}

/// A reply streamed with reasoning and two parallel calls (the `.added` copy of the
/// reasoning item differs from the `.done` one), kept as the agent keeps it.
fn streamed_reply(model: &str) -> Message {
    let events = [
        json!({"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","encrypted_content":"ADDED==","summary":[]}}),
        json!({"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"Two tools."}),
        json!({"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","encrypted_content":"gAAA+/DONE==","summary":[{"type":"summary_text","text":"Two tools."}]}}),
        json!({"type":"response.output_item.added","output_index":1,"item":{"id":"fc_1","type":"function_call","call_id":"call_A","name":"bash","arguments":""}}),
        json!({"type":"response.function_call_arguments.delta","output_index":1,"delta":"{\"command\":\"ls\"}"}),
        json!({"type":"response.output_item.done","output_index":1,"item":{"id":"fc_1","type":"function_call","call_id":"call_A","name":"bash","arguments":"{\"command\":\"ls\"}"}}),
        json!({"type":"response.output_item.added","output_index":2,"item":{"id":"fc_2","type":"function_call","call_id":"call_B","name":"read_file","arguments":""}}),
        json!({"type":"response.output_item.done","output_index":2,"item":{"id":"fc_2","type":"function_call","call_id":"call_B","name":"read_file","arguments":"{\"path\":\"a\"}"}}),
        json!({"type":"response.completed","response":{"status":"completed"}}),
    ];
    let mut a = Assembler::new();
    for e in &events {
        a.push_responses(&e.to_string(), &mut |_| {}).unwrap();
    }
    let reply = a.finish();
    Message::assistant(reply.text.clone(), reply.tool_calls.clone())
        .with_reasoning(reply.reasoning_state())
        .from_model(model)
}

fn after_calls(reply: Message) -> Vec<Message> {
    vec![
        Message::system("s"),
        Message::user("list and read"),
        reply,
        Message::tool("call_A", "a\nb"),
        Message::tool("call_B", "text of a"),
    ]
}

#[test]
fn reasoning_goes_back_whole_before_its_calls_without_ids() {
    let history = after_calls(streamed_reply("gpt-5"));
    let body = request(&history, &chat_tools(), &options("gpt-5"));
    let input = body["input"].as_array().unwrap();
    assert_eq!(
        input[1..],
        [
            json!({"type":"reasoning","encrypted_content":"gAAA+/DONE==","summary":[{"type":"summary_text","text":"Two tools."}]}),
            json!({"type":"function_call","call_id":"call_A","name":"bash","arguments":"{\"command\":\"ls\"}"}),
            json!({"type":"function_call","call_id":"call_B","name":"read_file","arguments":"{\"path\":\"a\"}"}),
            json!({"type":"function_call_output","call_id":"call_A","output":"a\nb"}),
            json!({"type":"function_call_output","call_id":"call_B","output":"text of a"}),
        ]
    );
    // The encrypted content byte for byte in the bytes sent.
    let bytes = serde_json::to_string(&body).unwrap();
    assert!(bytes.contains("\"encrypted_content\":\"gAAA+/DONE==\""));
    assert!(!bytes.contains("ADDED"));
    let mut found = Vec::new();
    ids(&body, &mut found);
    assert!(found.is_empty(), "ids sent: {found:?}");

    // The next turn: the same prefix, then the answer and the next question.
    let mut longer = history.clone();
    longer.push(Message::assistant("done".into(), vec![]).from_model("gpt-5"));
    longer.push(Message::user("thanks"));
    let next = request(&longer, &chat_tools(), &options("gpt-5"));
    let next_input = next["input"].as_array().unwrap();
    assert_eq!(next_input[..input.len()], input[..]);
    assert_eq!(
        next_input[input.len()..],
        [
            json!({"role":"assistant","content":[{"type":"output_text","text":"done"}]}),
            json!({"role":"user","content":[{"type":"input_text","text":"thanks"}]}),
        ]
    );
}

/// A reasoning item's content goes back when it has some, and an empty one is left
/// out; never its id.
#[test]
fn a_reasoning_items_content_goes_back_only_when_it_has_some() {
    let text = json!([{"type": "reasoning_text", "text": "Thinking."}]);
    let stored = json!({"id": "rs_1", "type": "reasoning", "encrypted_content": "E==", "summary": [], "content": text});
    let item = reasoning_item(&stored).unwrap();
    assert_eq!(item["content"], text);
    assert!(item.get("id").is_none());
    let empty = json!({"id": "rs_1", "type": "reasoning", "encrypted_content": "E==", "summary": [], "content": []});
    let item = reasoning_item(&empty).unwrap();
    assert!(item.get("content").is_none(), "{item}");
    let bare = json!({"type": "reasoning", "summary": []});
    assert!(reasoning_item(&bare).is_none());
}

/// Calls go back at their own places, in the order the reply gave them, each matched
/// by its call id (here the second call came first).
#[test]
fn calls_go_back_at_their_places_matched_by_id() {
    let mut reply = streamed_reply("gpt-5");
    if let Message::Assistant {
        reasoning: Some(r), ..
    } = &mut reply
    {
        let calls: Vec<usize> = r
            .details
            .iter()
            .enumerate()
            .filter(|(_, d)| d["type"] == "function_call")
            .map(|(i, _)| i)
            .collect();
        assert_eq!(calls.len(), 2);
        r.details.swap(calls[0], calls[1]);
    }
    let body = request(&after_calls(reply), &chat_tools(), &options("gpt-5"));
    let kinds: Vec<String> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .take(3)
        .map(|i| {
            format!(
                "{}:{}",
                i["type"].as_str().unwrap_or(""),
                i["call_id"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        kinds,
        ["reasoning:", "function_call:call_B", "function_call:call_A"],
        "{body:#}"
    );
}

/// A reply of the model that carried no reasoning item (only its message and calls)
/// says nothing of whether it reasons: its encrypted reasoning is not asked for.
#[test]
fn a_reply_without_a_reasoning_item_does_not_ask_for_reasoning() {
    let mut plain = streamed_reply("my-deployment");
    if let Message::Assistant {
        reasoning: Some(r), ..
    } = &mut plain
    {
        r.details
            .retain(|d| d.get("type").and_then(Value::as_str) != Some("reasoning"));
        assert!(!r.details.is_empty(), "the reply kept its other items");
    }
    let body = request(
        &after_calls(plain),
        &chat_tools(),
        &options("my-deployment"),
    );
    assert!(body.get("include").is_none(), "{body:#}");
}

/// A model rein does not know as one that reasons (an Azure deployment's name, a
/// gateway's alias, `o4-mini` without an entry) is asked for its encrypted reasoning
/// once a reply of its carried a reasoning item, and in a resumed session; not before,
/// not for another model's, and `reasoning` settings are still only an entry's. A
/// reasoning item that came without encrypted content (asked before the `include`)
/// never goes back, by id or otherwise; its calls do.
#[test]
fn a_model_that_showed_it_reasons_is_asked_for_its_encrypted_reasoning() {
    let first = [Message::system("s"), Message::user("list and read")];
    let body = request(&first, &chat_tools(), &options("my-deployment"));
    assert!(body.get("include").is_none());
    let history = after_calls(streamed_reply("my-deployment"));
    let body = request(&history, &chat_tools(), &options("my-deployment"));
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert!(body.get("reasoning").is_none(), "{body}");
    // Through a session file.
    let resumed: Vec<Message> =
        serde_json::from_str(&serde_json::to_string(&history).unwrap()).unwrap();
    let again = request(&resumed, &chat_tools(), &options("my-deployment"));
    assert_eq!(again, body);
    // Another model's reasoning says nothing of this one.
    let body = request(&history, &chat_tools(), &options("gpt-4o"));
    assert!(body.get("include").is_none());

    // Reasoning streamed without encrypted content: the proof still counts, the item
    // is not sent, the calls are, without ids.
    let mut bare = streamed_reply("my-deployment");
    if let Message::Assistant {
        reasoning: Some(r), ..
    } = &mut bare
    {
        for d in &mut r.details {
            if let Some(o) = d.as_object_mut() {
                o.remove("encrypted_content");
            }
        }
    }
    let body = request(&after_calls(bare), &chat_tools(), &options("my-deployment"));
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    let input = body["input"].as_array().unwrap();
    assert!(input.iter().all(|i| i["type"] != "reasoning"), "{body:#}");
    assert_eq!(input[1]["call_id"], "call_A");
    let mut found = Vec::new();
    ids(&body, &mut found);
    assert!(found.is_empty(), "ids sent: {found:?}");
}

/// Another model's, or another API's, state never goes out: the calls alone.
#[test]
fn another_models_or_apis_state_is_not_sent() {
    let plain = [
        json!({"type":"function_call","call_id":"call_A","name":"bash","arguments":"{\"command\":\"ls\"}"}),
        json!({"type":"function_call","call_id":"call_B","name":"read_file","arguments":"{\"path\":\"a\"}"}),
    ];
    let body = request(
        &after_calls(streamed_reply("o4-mini")),
        &json!([]),
        &options("gpt-5"),
    );
    assert_eq!(body["input"].as_array().unwrap()[1..3], plain);
    for api in [None, Some(Api::Chat), Some(Api::Anthropic)] {
        let reply = match streamed_reply("gpt-5") {
            Message::Assistant {
                content,
                tool_calls,
                reasoning,
                refusal,
                model,
            } => Message::Assistant {
                content,
                tool_calls,
                reasoning: reasoning.map(|r| Reasoning { api, ..r }),
                refusal,
                model,
            },
            other => other,
        };
        let body = request(&after_calls(reply), &json!([]), &options("gpt-5"));
        assert_eq!(body["input"].as_array().unwrap()[1..3], plain, "{api:?}");
        assert!(!body.to_string().contains("DONE"), "{api:?}");
    }
}

/// A reasoning item goes back only with encrypted content and right before an item
/// that is sent: not before a hosted tool's, not when its message has no text.
#[test]
fn a_reasoning_item_goes_back_only_with_what_it_produced() {
    let state = |details: Vec<Value>| Reasoning {
        text: String::new(),
        field: None,
        details,
        api: Some(Api::Responses),
    };
    let rs = |enc: Option<&str>| match enc {
        Some(e) => json!({"type":"reasoning","summary":[],"encrypted_content":e}),
        None => json!({"type":"reasoning","summary":[]}),
    };
    let reply = Message::assistant("answer".into(), vec![])
        .with_reasoning(Some(state(vec![
            rs(Some("E1")),
            json!({"type":"web_search_call"}),
            rs(None),
            json!({"type":"message"}),
            rs(Some("E3")),
            json!({"type":"message"}),
        ])))
        .from_model("gpt-5");
    let history = [Message::system("s"), Message::user("q"), reply];
    let body = request(&history, &json!([]), &options("gpt-5"));
    // E1 is followed by a hosted tool, the second has nothing to send, E3 by a
    // message whose text went out already: only the text.
    assert_eq!(
        body["input"].as_array().unwrap()[1..],
        [json!({"role":"assistant","content":[{"type":"output_text","text":"answer"}]})]
    );
    let reply = Message::assistant("answer".into(), vec![])
        .with_reasoning(Some(state(vec![rs(Some("E1")), json!({"type":"message"})])))
        .from_model("gpt-5");
    let history = [Message::system("s"), Message::user("q"), reply];
    let body = request(&history, &json!([]), &options("gpt-5"));
    assert_eq!(body["input"][1], rs(Some("E1")));
    assert_eq!(body["input"].as_array().map(Vec::len), Some(3));
    // A refusal is the message's text.
    let refused = Message::assistant(String::new(), vec![])
        .with_refusal(Some("I can't.".into()))
        .with_reasoning(Some(state(vec![rs(Some("E1")), json!({"type":"message"})])))
        .from_model("gpt-5");
    let body = request(
        &[Message::system("s"), Message::user("q"), refused],
        &json!([]),
        &options("gpt-5"),
    );
    assert_eq!(
        body["input"][2],
        json!({"role":"assistant","content":[{"type":"output_text","text":"I can't."}]})
    );
}

#[test]
fn tool_results_images_follow_their_run_as_a_user_message() {
    let image = |data: &str| Image {
        mime_type: "image/png".into(),
        data: data.into(),
    };
    let calls = vec![
        ToolCall::new("c1", "shot", "{}"),
        ToolCall::new("c2", "bash", "{}"),
    ];
    let mut result = ToolResult::ok("a screenshot [image]");
    result.images = vec![image("AAA"), image("BBB")];
    let history = [
        Message::system("s"),
        Message::user("look"),
        Message::assistant(String::new(), calls),
        Message::tool_result("c1", result),
        Message::tool("c2", "ok"),
        Message::user("and?"),
    ];
    let with = request(
        &history,
        &json!([]),
        &NativeOptions {
            images: true,
            ..options("m")
        },
    );
    let input = with["input"].as_array().unwrap();
    assert_eq!(input[4]["type"], "function_call_output");
    assert_eq!(
        input[5],
        json!({"role":"user","content":[
            {"type":"input_text","text":"The 2 images the result of call c1 returned:"},
            {"type":"input_image","image_url":"data:image/png;base64,AAA"},
            {"type":"input_image","image_url":"data:image/png;base64,BBB"},
        ]})
    );
    assert_eq!(input.last().unwrap()["content"][0]["text"], "and?");
    // A model that takes no images gets the results' text alone.
    let without = request(&history, &json!([]), &options("m"));
    assert!(!without.to_string().contains("input_image"));
    assert_eq!(
        without["input"].as_array().map(Vec::len),
        Some(input.len() - 1)
    );
}

/// The same history makes the same bytes, whatever else happened between.
#[test]
fn the_request_is_deterministic() {
    let history = after_calls(streamed_reply("gpt-5"));
    let one = serde_json::to_vec(&request(&history, &chat_tools(), &options("gpt-5"))).unwrap();
    let _ = request(&history[..3], &json!([]), &options("other"));
    let two = serde_json::to_vec(&request(&history, &chat_tools(), &options("gpt-5"))).unwrap();
    assert_eq!(one, two);
}

/// Tools already in the Responses form pass unchanged; a chat tool's own `strict`
/// is kept; a tool without parameters gets an empty object schema.
#[test]
fn tools_in_either_form() {
    let tools = json!([
        {"type":"function","name":"x","parameters":{},"strict":true},
        {"type":"function","function":{"name":"y","strict":true}},
        "nonsense",
    ]);
    assert_eq!(
        function_tools(&tools),
        [
            json!({"type":"function","name":"x","parameters":{},"strict":true}),
            json!({"type":"function","name":"y","parameters":{"type":"object","properties":{}},"strict":true}),
        ]
    );
    assert!(function_tools(&json!(null)).is_empty());
}

/// The images a user attached follow its text as `input_image` parts, to a model that
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
    let with = request(
        &history,
        &json!([]),
        &NativeOptions {
            images: true,
            ..options("m")
        },
    );
    assert_eq!(
        with["input"][0],
        json!({"role":"user","content":[
            {"type":"input_text","text":"what is this [Image #1: png, 8 B]"},
            {"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo="},
        ]})
    );
    let without = request(&history, &json!([]), &options("m"));
    assert_eq!(
        without["input"][0]["content"],
        json!([{"type":"input_text","text":format!(
            "what is this [Image #1: png, 8 B]\n\n{}",
            crate::conversation::wire::IMAGES_NOT_SENT
        )}])
    );
}
