//! The agent on the native APIs (issue 27), against the scripted server telling its
//! scripts in each API's events (`Reply::in_api`): the same session runs alike on chat
//! completions, the Responses API and Anthropic's Messages API (the text shown, the tool
//! run, its result sent back in that API's form, to that API's path with its headers);
//! reasoning goes back to the API and model that streamed it and to no other, across
//! `/model` switches mid-session; an error a native stream reports before anything was
//! shown is retried when it says to try again; the usage of each API reaches the events.

use crate::support;

use rein_core::agent::{AgentCommand, AgentEvent, ModelSwitch, TurnOutcome};
use rein_core::conversation::{Api, ApiSettings};
use serde_json::{json, Value};
use support::agent::{agent_config, outcome, test_client, tool_results, turn, API_KEY};
use support::replay::streamed_text;
use support::{Body, Reply, ScriptedServer, Step};

const MODEL: &str = "the-model";

fn client_for(server: &ScriptedServer, api: Api) -> rein_core::agent::ClientConfig {
    let mut client = test_client(server.base_url(), API_KEY, MODEL);
    client.api = api;
    client
}

/// What a request sent back for the tool result of the first call: its text.
fn result_sent(api: Api, body: &Value) -> Option<String> {
    match api {
        Api::Chat => body["messages"]
            .as_array()?
            .iter()
            .find(|m| m["role"] == "tool")
            .and_then(|m| m["content"].as_str().map(str::to_string)),
        Api::Responses => body["input"]
            .as_array()?
            .iter()
            .find(|i| i["type"] == "function_call_output")
            .and_then(|i| i["output"].as_str().map(str::to_string)),
        Api::Anthropic => body["messages"]
            .as_array()?
            .iter()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .find(|b| b["type"] == "tool_result")
            .map(|b| match &b["content"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
    }
}

#[tokio::test]
async fn the_same_session_runs_alike_on_every_api() {
    for api in Api::ALL {
        let server = ScriptedServer::start(vec![
            Reply::text_then_tool_calls(
                "Looking first.",
                &[("bash", &json!({"command": "echo native-ok"}).to_string())],
            )
            .in_api(api),
            Reply::text("All done.").in_api(api),
        ])
        .await
        .unwrap();
        let project = tempfile::tempdir().unwrap();
        let mut agent =
            rein_core::agent::spawn(agent_config(client_for(&server, api), project.path()))
                .unwrap();
        let events = turn(&mut agent, "go").await;
        assert_eq!(
            outcome(&events),
            TurnOutcome::Completed,
            "{api:?}: {events:#?}"
        );
        assert_eq!(streamed_text(&events), "Looking first.All done.", "{api:?}");
        let results = tool_results(&events);
        assert_eq!(results.len(), 1, "{api:?}: {events:#?}");
        assert!(results[0].1.contains("native-ok"), "{api:?}: {results:?}");
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{api:?}");
        let sent = result_sent(api, &requests[1]).unwrap_or_default();
        assert!(sent.contains("native-ok"), "{api:?}: {:#}", requests[1]);
        let path = match api {
            Api::Chat => "/v1/chat/completions",
            Api::Responses => "/v1/responses",
            Api::Anthropic => "/v1/messages",
        };
        assert_eq!(server.request_paths(), [path, path], "{api:?}");
        let headers = &server.request_headers()[0];
        let header = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        match api {
            Api::Anthropic => {
                assert_eq!(header("x-api-key"), Some(API_KEY));
                assert_eq!(header("anthropic-version"), Some("2023-06-01"));
                assert_eq!(header("authorization"), None, "the key goes once");
            }
            _ => assert_eq!(
                header("authorization"),
                Some(format!("Bearer {API_KEY}").as_str())
            ),
        }
        // The usage of every API reaches the events.
        assert!(
            events
                .iter()
                .any(|e| matches!(e, AgentEvent::Usage(u) if !u.estimated)),
            "{api:?}: {events:#?}"
        );
    }
}

/// Turn 1 on the Responses API with reasoning; a switch to an Anthropic model; turn 2 with
/// thinking; a switch back. Each request carries only its own API's state, of its own
/// model.
#[tokio::test]
async fn reasoning_goes_back_to_its_own_api_and_model_only() {
    let server = ScriptedServer::start(vec![
        Reply::reasoning_then_tool_calls(
            "plan the listing",
            &[("bash", &json!({"command": "echo one"}).to_string())],
        )
        .in_api(Api::Responses),
        Reply::text("Listed.").in_api(Api::Responses),
        Reply::reasoning_then_tool_calls(
            "think about two",
            &[("bash", &json!({"command": "echo two"}).to_string())],
        )
        .in_api(Api::Anthropic),
        Reply::text("Second done.").in_api(Api::Anthropic),
        Reply::text("Back on Responses.").in_api(Api::Responses),
    ])
    .await
    .unwrap();
    let project = tempfile::tempdir().unwrap();
    let mut agent = rein_core::agent::spawn(agent_config(
        client_for(&server, Api::Responses),
        project.path(),
    ))
    .unwrap();
    let switch = |api: Api, model: &str| {
        AgentCommand::SetModel(Box::new(ModelSwitch {
            name: model.to_string(),
            model: model.to_string(),
            base_url: server.base_url(),
            api_key: API_KEY.to_string(),
            headers: Vec::new(),
            window: 128_000,
            window_known: true,
            prices: None,
            images: false,
            api: ApiSettings {
                api,
                ..ApiSettings::default()
            },
        }))
    };
    let events = turn(&mut agent, "one").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed, "{events:#?}");
    agent.send(switch(Api::Anthropic, "claude-model"));
    let events = turn(&mut agent, "two").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed, "{events:#?}");
    agent.send(switch(Api::Responses, MODEL));
    let events = turn(&mut agent, "three").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed, "{events:#?}");

    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let reasoning_items = |body: &Value| -> Vec<Value> {
        body["input"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|i| i["type"] == "reasoning")
            .cloned()
            .collect()
    };
    let thinking_blocks = |body: &Value| -> Vec<Value> {
        body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .filter(|b| b["type"] == "thinking")
            .collect()
    };
    // Request 2 (Responses, after the call): the reasoning item, sealed, without an id.
    let items = reasoning_items(&requests[1]);
    assert_eq!(items.len(), 1, "{:#}", requests[1]);
    assert!(items[0]["encrypted_content"]
        .as_str()
        .is_some_and(|e| e.starts_with("sealed-")));
    assert!(items[0].get("id").is_none());
    // Requests 3 and 4 (Anthropic): none of the Responses state; request 4 carries the
    // thinking block it streamed, with its signature.
    for body in &requests[2..4] {
        assert!(!body.to_string().contains("encrypted_content"), "{body:#}");
    }
    assert!(thinking_blocks(&requests[2]).is_empty());
    let thinking = thinking_blocks(&requests[3]);
    assert_eq!(thinking.len(), 1, "{:#}", requests[3]);
    assert_eq!(thinking[0]["thinking"], "think about two");
    assert!(thinking[0]["signature"]
        .as_str()
        .is_some_and(|s| s.starts_with("sealed-")));
    // Request 5 (Responses again, the first model): its own reasoning, no thinking.
    assert!(
        !requests[4].to_string().contains("\"signature\""),
        "{:#}",
        requests[4]
    );
    assert_eq!(reasoning_items(&requests[4]).len(), 1, "{:#}", requests[4]);
    assert_eq!(
        server.request_paths(),
        [
            "/v1/responses",
            "/v1/responses",
            "/v1/messages",
            "/v1/messages",
            "/v1/responses"
        ]
    );
}

/// An overload reported inside a 200 stream before anything was shown is retried, on
/// both native APIs.
#[tokio::test]
async fn an_overload_inside_a_stream_is_retried() {
    for (api, error) in [
        (
            Api::Anthropic,
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
        (
            Api::Responses,
            json!({"type": "error", "code": "rate_limit_exceeded", "message": "Rate limit reached", "param": null, "sequence_number": 1}),
        ),
    ] {
        let server = ScriptedServer::start(vec![
            Reply::sse(vec![Step::Data(error)]),
            Reply::text("Recovered.").in_api(api),
        ])
        .await
        .unwrap();
        let project = tempfile::tempdir().unwrap();
        let mut agent =
            rein_core::agent::spawn(agent_config(client_for(&server, api), project.path()))
                .unwrap();
        let events = turn(&mut agent, "go").await;
        assert_eq!(
            outcome(&events),
            TurnOutcome::Completed,
            "{api:?}: {events:#?}"
        );
        assert_eq!(streamed_text(&events), "Recovered.", "{api:?}");
        assert!(
            events
                .iter()
                .any(|e| matches!(e, AgentEvent::Retrying { .. })),
            "{api:?}: {events:#?}"
        );
    }
}

/// Through the real binary, headless: a provider whose table says `api = "anthropic"` is
/// spoken to in Anthropic's API (its key in `x-api-key`, from its variable), and
/// `--continue` goes on from the session file with the thinking block the first run
/// streamed, signature and all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_runs_and_resumes_on_a_native_api() {
    let server = ScriptedServer::start(vec![
        Reply::reasoning_then_tool_calls(
            "check the tree",
            &[("bash", &json!({"command": "echo resumed-ok"}).to_string())],
        )
        .in_api(Api::Anthropic),
        Reply::text("First run done.").in_api(Api::Anthropic),
        Reply::text("Second run done.").in_api(Api::Anthropic),
    ])
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let rein_home = home.path().join("rein-home");
    std::fs::create_dir_all(&rein_home).unwrap();
    std::fs::write(
        rein_home.join("config.toml"),
        format!(
            "model = \"lab/claude-test\"\n[sandbox]\nmode = \"off\"\n\
             [providers.lab]\nbase_url = \"{}\"\napi_key_env = \"LAB_KEY\"\napi = \"anthropic\"\n",
            server.base_url()
        ),
    )
    .unwrap();
    let run = |prompt: &str, more: &[&str]| {
        let out = support::rein_in(home.path(), project.path())
            .env("LAB_KEY", "sk-lab-123456")
            .args(["-p", prompt, "--output-format", "jsonl", "--yes"])
            .args(more)
            .output()
            .unwrap();
        let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        (out, events)
    };
    let (out, events) = run("look", &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        events.iter().any(|e| e["type"] == "tool_finished"
            && e["result"]
                .as_str()
                .is_some_and(|r| r.contains("resumed-ok"))),
        "{events:#?}"
    );
    let (out, _) = run("again", &["--continue"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        server.request_paths(),
        ["/v1/messages", "/v1/messages", "/v1/messages"]
    );
    let key = server.request_headers()[0]
        .iter()
        .find(|(k, _)| k == "x-api-key")
        .map(|(_, v)| v.clone());
    assert_eq!(key.as_deref(), Some("sk-lab-123456"));
    // The resumed request: the first run's thinking, as streamed, before its tool_use.
    let third = &server.requests()[2];
    let assistant = third["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assert_eq!(assistant["content"][0]["type"], "thinking", "{third:#}");
    assert_eq!(assistant["content"][0]["thinking"], "check the tree");
    assert!(assistant["content"][0]["signature"]
        .as_str()
        .is_some_and(|s| s.starts_with("sealed-")));
    assert_eq!(assistant["content"][1]["type"], "tool_use");
}

/// Every native sample's streamed answer, sent in random pieces (a UTF-8 sequence or an
/// event cut anywhere) through the real client, reads as the whole body does; cut off at a
/// random point, it is an error or the same reply, never a shorter one taken as finished.
#[tokio::test]
async fn every_native_stream_in_random_pieces_or_cut_reads_as_the_whole_or_fails() {
    use rein_core::agent::LlmClient;
    use rein_core::conversation::Message;
    use support::rng::Rng;
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/provider-samples/native");
    let index: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).unwrap()).unwrap();
    let messages = [Message::system("s"), Message::user("go")];
    let tools = json!([]);
    let mut rng = Rng(27);
    let mut checked = 0;
    for sample in index["samples"].as_array().unwrap() {
        let first = &sample["responses"][0];
        let file = first["file"].as_str().unwrap();
        if first["status"] != 200 || !file.ends_with(".sse") {
            continue;
        }
        let api = match sample["api"].as_str() {
            Some("responses") => Api::Responses,
            _ => Api::Anthropic,
        };
        let body = std::fs::read(dir.join(file)).unwrap();
        let read = |steps: Vec<Step>| async {
            let server = ScriptedServer::start(vec![Reply::sse(steps)])
                .await
                .unwrap();
            let mut config = client_for(&server, api);
            config.max_tries = 1;
            let client = LlmClient::new(config).unwrap();
            client
                .stream_chat(&messages, &tools, &mut |_| {})
                .await
                .map(|r| {
                    (
                        r.text,
                        r.reasoning,
                        r.refusal,
                        r.tool_calls,
                        r.finish_reason,
                        r.usage,
                    )
                })
        };
        let whole = read(vec![Step::Bytes(body.clone())]).await;
        for _ in 0..3 {
            let mut steps = Vec::new();
            let mut at = 0;
            while at < body.len() {
                let n = 1 + rng.below(40) as usize;
                let end = (at + n).min(body.len());
                steps.push(Step::Bytes(body[at..end].to_vec()));
                steps.push(Step::Sleep(std::time::Duration::ZERO));
                at = end;
            }
            assert_eq!(read(steps).await, whole, "{file} in pieces");
            let cut = rng.below(body.len() as u64) as usize;
            let got = read(vec![Step::Bytes(body[..cut].to_vec()), Step::Cut]).await;
            if let Ok(reply) = &got {
                assert_eq!(Ok(reply), whole.as_ref(), "{file} cut at byte {cut}");
            }
        }
        checked += 1;
    }
    assert!(checked >= 20, "{checked} streams");
}

/// A subagent speaks its parent's API: on the Responses and Anthropic APIs, a `task` runs
/// a subagent whose call and answer go through that API, and the answer comes back as the
/// task's result.
#[tokio::test]
async fn a_subagent_speaks_the_parents_api() {
    for api in [Api::Responses, Api::Anthropic] {
        let server = ScriptedServer::start(vec![
            Reply::tool_calls(&[("task", r#"{"description":"what does the readme say"}"#)])
                .in_api(api),
            Reply::tool_calls(&[("bash", &json!({"command": "echo sub-ran"}).to_string())])
                .in_api(api),
            Reply::text("The readme says hello.").in_api(api),
            Reply::text("It says hello.").in_api(api),
        ])
        .await
        .unwrap();
        let project = tempfile::tempdir().unwrap();
        let mut agent =
            rein_core::agent::spawn(agent_config(client_for(&server, api), project.path()))
                .unwrap();
        let events = turn(&mut agent, "ask a subagent").await;
        assert_eq!(
            outcome(&events),
            TurnOutcome::Completed,
            "{api:?}: {events:#?}"
        );
        let results = tool_results(&events);
        assert!(
            results
                .iter()
                .any(|(name, text, _)| name == "task" && text.contains("The readme says hello.")),
            "{api:?}: {results:?}"
        );
        let requests = server.requests();
        assert_eq!(requests.len(), 4, "{api:?}");
        // The subagent's second request carries its bash result in this API's form.
        let sent = result_sent(api, &requests[2]).unwrap_or_default();
        assert!(sent.contains("sub-ran"), "{api:?}: {:#}", requests[2]);
    }
}

/// A native stream for the scripted server, `events` as they are (no conversion).
fn raw_stream(events: Vec<Value>) -> Reply {
    Reply::sse(events.into_iter().map(Step::Data).collect())
}

/// A reply of `text` that ends as `how` says, in `api`'s events: `limit` (the output
/// token limit), `filter` (Anthropic's refusal, the Responses API's content filter), or
/// `late` (a normal end, then more events and a stream that never closes).
fn ending(api: Api, text: &str, how: &str) -> Reply {
    let mut events = match api {
        Api::Responses => vec![
            json!({"type": "response.created", "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}}),
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []}}),
            json!({"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": text}),
        ],
        _ => vec![
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [], "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
            json!({"type": "content_block_stop", "index": 0}),
        ],
    };
    let usage = json!({"input_tokens": 10, "output_tokens": 5, "total_tokens": 15});
    let (status, reason, stop_reason) = match how {
        "limit" => ("incomplete", Some("max_output_tokens"), "max_tokens"),
        "filter" => ("incomplete", Some("content_filter"), "refusal"),
        _ => ("completed", None, "end_turn"),
    };
    match api {
        Api::Responses => events.push(json!({"type": format!("response.{status}"), "response": {
            "id": "resp_1", "object": "response", "status": status,
            "incomplete_details": reason.map(|r| json!({"reason": r})), "usage": usage}})),
        _ => events.extend([
            json!({"type": "message_delta", "delta": {"stop_reason": stop_reason}, "usage": {"output_tokens": 5}}),
            json!({"type": "message_stop"}),
        ]),
    }
    let mut reply = raw_stream(events);
    if how == "late" {
        let Body::Sse(steps) = &mut reply.body else {
            unreachable!("an SSE reply")
        };
        let late = match api {
            Api::Responses => {
                json!({"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "LATE"})
            }
            _ => {
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "LATE"}})
            }
        };
        steps.extend([
            Step::Data(late),
            Step::Done,
            Step::Sleep(std::time::Duration::from_secs(3600)),
        ]);
    }
    reply
}

/// Issue 42: on the native APIs the headless JSONL `finish_reason` is one of the words
/// docs/headless.md documents (`stop`, `tool_calls`, `length`, `content_filter`), not the API's
/// own; a reply stopped by a content filter is not called cut off by the token limit; a
/// reply ends at its terminal event (what follows is not read, and a server that then
/// keeps the stream open does not stall the turn). Through the real binary, headless, on
/// a provider table's `api`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_finish_reasons_are_the_documented_words() {
    for api in [Api::Responses, Api::Anthropic] {
        let server = ScriptedServer::start(vec![
            Reply::tool_calls(&[("bash", &json!({"command": "echo ok"}).to_string())]).in_api(api),
            Reply::text("Listed.").in_api(api),
            ending(api, "partial", "limit"),
            ending(api, "filtered", "filter"),
            ending(api, "kept", "late"),
        ])
        .await
        .unwrap();
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let rein_home = home.path().join("rein-home");
        std::fs::create_dir_all(&rein_home).unwrap();
        std::fs::write(
            rein_home.join("config.toml"),
            format!(
                "model = \"lab/some-model\"\n[sandbox]\nmode = \"off\"\n[client]\nidle_timeout_secs = 5\n\
                 [providers.lab]\nbase_url = \"{}\"\napi_key_env = \"LAB_KEY\"\napi = \"{}\"\n",
                server.base_url(),
                api.name()
            ),
        )
        .unwrap();
        let run = |prompt: &str| {
            let out = support::rein_in(home.path(), project.path())
                .env("LAB_KEY", "sk-lab-123456")
                .args(["-p", prompt, "--output-format", "jsonl", "--yes"])
                .output()
                .unwrap();
            let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect();
            let of = |kind: &str| -> Vec<Value> {
                events
                    .iter()
                    .filter(|e| e["type"] == kind)
                    .cloned()
                    .collect()
            };
            let finishes: Vec<Value> = of("assistant_message")
                .iter()
                .map(|m| m["finish_reason"].clone())
                .collect();
            let notices: Vec<String> = of("notice")
                .iter()
                .map(|n| n["message"].as_str().unwrap_or("").to_string())
                .collect();
            let errors = of("error");
            (out, finishes, notices, errors, of("assistant_message"))
        };
        let (out, finishes, _, errors, _) = run("look");
        assert!(out.status.success(), "{api:?}: {errors:?}");
        assert_eq!(finishes, [json!("tool_calls"), json!("stop")], "{api:?}");

        let (out, finishes, notices, errors, _) = run("long");
        assert!(out.status.success(), "{api:?}: {errors:?}");
        assert_eq!(finishes, [json!("length")], "{api:?}");
        assert!(
            notices
                .iter()
                .any(|n| n.contains("cut off by the model's output token limit")),
            "{api:?}: {notices:?}"
        );

        let (out, finishes, notices, errors, messages) = run("filtered");
        assert!(out.status.success(), "{api:?}: {errors:?}");
        assert_eq!(finishes, [json!("content_filter")], "{api:?}");
        assert!(
            !notices.iter().any(|n| n.contains("token limit")),
            "{api:?}: {notices:?}"
        );
        match api {
            // Anthropic's refusal is the reply, marked as one.
            Api::Anthropic => assert_eq!(messages[0]["refusal"], true, "{messages:?}"),
            _ => assert!(
                notices
                    .iter()
                    .any(|n| n.contains("stopped by the provider's content filter")),
                "{api:?}: {notices:?}"
            ),
        }

        let (out, finishes, _, errors, messages) = run("late");
        assert!(out.status.success(), "{api:?}: {errors:?}");
        assert_eq!(finishes, [json!("stop")], "{api:?}");
        assert_eq!(messages[0]["text"], "kept", "{api:?}");
        assert_eq!(server.requests().len(), 5, "{api:?}: nothing retried");
    }
}

/// Chat completions' `content_filter` gets the same words as the Responses API's: the
/// reply was stopped by the provider's content filter, not cut off by the token limit.
#[tokio::test]
async fn a_content_filter_is_named_on_chat_completions_too() {
    let server = ScriptedServer::start(vec![Reply::sse(vec![
        Step::Data(support::chunk(
            json!({"role": "assistant", "content": "part"}),
            None,
        )),
        Step::Data(support::chunk(json!({}), Some("content_filter"))),
        Step::Done,
    ])])
    .await
    .unwrap();
    let project = tempfile::tempdir().unwrap();
    let mut agent =
        rein_core::agent::spawn(agent_config(client_for(&server, Api::Chat), project.path()))
            .unwrap();
    let events = turn(&mut agent, "go").await;
    let notices: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Notice { message } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        notices,
        ["the reply was stopped by the provider's content filter"],
        "{events:#?}"
    );
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::AssistantMessage { finish_reason: Some(f), .. } if f == "content_filter"
    )));
}

/// What a server sends after a native reply's terminal event is never read: more text, a
/// `[DONE]` (gateways add one), bytes that are not an event, a connection reset, or a
/// stream held open. The reply is the one that ended, through the real client.
#[tokio::test]
async fn nothing_after_the_terminal_event_is_read() {
    use rein_core::agent::LlmClient;
    use rein_core::conversation::Message;
    for api in [Api::Responses, Api::Anthropic] {
        for after in [
            vec![Step::Done],
            vec![Step::Raw("data: not json at all\n\n".into())],
            vec![Step::Cut],
            vec![Step::Sleep(std::time::Duration::from_secs(3600))],
        ] {
            let mut reply = ending(api, "kept", "completed");
            let Body::Sse(steps) = &mut reply.body else {
                unreachable!("an SSE reply")
            };
            steps.extend(after.clone());
            let server = ScriptedServer::start(vec![reply]).await.unwrap();
            let mut config = client_for(&server, api);
            config.max_tries = 1;
            config.idle_timeout = std::time::Duration::from_secs(2);
            let client = LlmClient::new(config).unwrap();
            let got = client
                .stream_chat(&[Message::user("go")], &json!([]), &mut |_| {})
                .await;
            let reply = got.unwrap_or_else(|e| panic!("{api:?} {after:?}: {e}"));
            assert_eq!(reply.text, "kept", "{api:?} {after:?}");
            assert_eq!(reply.finish_reason.as_deref(), Some("stop"), "{api:?}");
        }
    }
}
