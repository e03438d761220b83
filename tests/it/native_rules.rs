//! The native APIs' rules for the next request, as a property: random sessions (turns,
//! parallel calls, denials and interrupts, turns cut after their results, compactions,
//! resumes through the session file's JSON, model and API switches mid-session, images)
//! never produce a Responses or Anthropic request that breaks a rule the providers
//! enforce (`tests/provider-samples/native/index.json`'s `constraints`, with the errors
//! they answer):
//!
//! - Responses (`store: false`): no input item carries an id (an `rs_` id is not found, an
//!   `fc_` id needs its reasoning item); every reasoning item carries its
//!   `encrypted_content` and is followed by the item it produced (a function call or the
//!   assistant's message); every function call is answered by exactly one
//!   `function_call_output` with its `call_id` before the next user message, and no output
//!   answers a call that is not there; reasoning goes back only to the model and API that
//!   streamed it; a model that streamed a reasoning item is asked for its encrypted
//!   reasoning (`include`), whatever its name (some items came without it).
//! - Anthropic: user and assistant messages alternate, starting with a user message; every
//!   `tool_use` is answered by a `tool_result` of the same id at the start of the very next
//!   user message, in order, and no `tool_result` answers anything else; thinking blocks
//!   come first in their assistant message, unmodified with their signatures, and only to
//!   the model that streamed them, never one without its signature (or a redacted one
//!   without its data: some streamed so); with thinking on, a request that ends with tool
//!   results opens their assistant message with thinking; no empty text block; at most
//!   four `cache_control` blocks; `max_tokens` always; the system prompt at the top level
//!   only.
//!
//! Each seed is a session; a failure names its seed and the request.

use crate::support;

use rein_core::conversation::{
    anthropic, responses, Api, Message, NativeOptions, Reasoning, ToolCall,
};
use rein_core::conversation::{Image, ToolResult};
use serde_json::{json, Value};
use support::rng::Rng;

/// Sessions per API.
const SEEDS: u64 = 300;
/// The model the requests go to.
const MODEL: &str = "the-model";

/// One random session: its stored history.
fn session(seed: u64, api: Api) -> Vec<Message> {
    let mut rng = Rng(seed);
    let mut history = vec![Message::system("You are rein.")];
    let mut call_no = 0;
    for turn in 0..1 + rng.below(6) {
        // A compaction: the history becomes its handoff note.
        if turn > 0 && rng.below(8) == 0 {
            history.truncate(1);
            history.push(Message::user(
                "[handoff note] Earlier: the user asked for a fix.",
            ));
            continue;
        }
        let mut user = Message::user(format!("request {turn}"));
        if let Message::User { reminder, .. } = &mut user {
            if rng.below(2) == 0 {
                *reminder = Some(format!(
                    "<system-reminder>\nturn {turn}\n</system-reminder>"
                ));
            }
        }
        history.push(user);
        for step in 0..rng.below(4) {
            // Who wrote the reply: this model in this API (its state goes back), this
            // model before a switch of API, or another model.
            let (model, state_api) = match rng.below(5) {
                0 => ("another-model", api),
                1 => (
                    MODEL,
                    if api == Api::Anthropic {
                        Api::Responses
                    } else {
                        Api::Anthropic
                    },
                ),
                _ => (MODEL, api),
            };
            let calls: Vec<ToolCall> = (0..rng.below(4))
                .map(|_| {
                    call_no += 1;
                    let id = match state_api {
                        Api::Anthropic => format!("toolu_{call_no:04}"),
                        _ => format!("call_{call_no:04}"),
                    };
                    let args = match rng.below(4) {
                        0 => String::new(),
                        1 => "{not json".to_string(),
                        _ => json!({"command": format!("ls {call_no}")}).to_string(),
                    };
                    ToolCall::new(id, "bash", args)
                })
                .collect();
            let text = match rng.below(3) {
                0 => String::new(),
                _ => format!("step {step}"),
            };
            let reasoning = state(&mut rng, state_api, &text, &calls);
            let refusal = (calls.is_empty() && text.is_empty() && rng.below(3) == 0)
                .then(|| "I can't help with that.".to_string());
            history.push(
                Message::assistant(text, calls.clone())
                    .with_reasoning(reasoning)
                    .with_refusal(refusal)
                    .from_model(model),
            );
            for call in &calls {
                let mut result = match rng.below(5) {
                    0 => ToolResult::denied("bash", "a deny rule"),
                    1 => ToolResult::interrupted(),
                    2 => ToolResult::error("Error: exit code 1"),
                    _ => ToolResult::ok(format!("output of {}", call.id)),
                };
                if rng.below(6) == 0 {
                    result.images.push(Image {
                        mime_type: "image/png".into(),
                        data: "iVBORw0KGgo=".into(),
                    });
                }
                history.push(Message::tool_result(call.id.clone(), result));
            }
            // The turn was interrupted after its results: no reply.
            if !calls.is_empty() && rng.below(4) == 0 {
                break;
            }
        }
    }
    // A resume: the history as the session file keeps it.
    if rng.below(2) == 0 {
        let text = serde_json::to_string(&history).unwrap();
        history = serde_json::from_str(&text).unwrap();
    }
    history
}

/// The provider state a reply of `api` would have been streamed with: its items in order
/// (see `Reasoning::details`).
fn state(rng: &mut Rng, api: Api, text: &str, calls: &[ToolCall]) -> Option<Reasoning> {
    let mut details = Vec::new();
    let mut shown = String::new();
    match api {
        Api::Responses => {
            for (i, call) in calls.iter().enumerate() {
                if i == 0 || rng.below(3) == 0 {
                    let mut item = json!({
                        "type": "reasoning",
                        "summary": [{"type": "summary_text", "text": "thinking"}],
                        "encrypted_content": format!("gAAAA{}", rng.next()),
                    });
                    // Streamed before the request asked for its encrypted content.
                    if rng.below(5) == 0 {
                        item.as_object_mut().map(|o| o.remove("encrypted_content"));
                    }
                    details.push(item);
                    shown.push_str("thinking");
                }
                details.push(json!({"type": "function_call", "call_id": call.id}));
            }
            if !text.is_empty() {
                if calls.is_empty() && rng.below(2) == 0 {
                    details.insert(
                        0,
                        json!({"type": "reasoning", "summary": [], "encrypted_content": "gAAAAx"}),
                    );
                }
                details.push(json!({"type": "message"}));
            }
        }
        Api::Anthropic => {
            if rng.below(3) > 0 {
                let thinking = if rng.below(4) == 0 {
                    ""
                } else {
                    "let me think"
                };
                // A signature that never came (the stream ended without its
                // `signature_delta`, or a session file kept it empty).
                let signature = if rng.below(5) == 0 {
                    String::new()
                } else {
                    format!("sig{}", rng.next())
                };
                details.push(json!({
                    "type": "thinking",
                    "thinking": thinking,
                    "signature": signature,
                }));
                shown.push_str(thinking);
            }
            if rng.below(6) == 0 {
                details.push(if rng.below(4) == 0 {
                    json!({"type": "redacted_thinking"})
                } else {
                    json!({"type": "redacted_thinking", "data": "EmwKAhgB"})
                });
            }
            if !text.is_empty() {
                details.push(json!({"type": "text"}));
            }
            for call in calls {
                details.push(json!({"type": "tool_use", "id": call.id}));
            }
        }
        Api::Chat => {}
    }
    (!details.is_empty()).then_some(Reasoning {
        text: shown,
        field: None,
        details,
        api: Some(api),
    })
}

fn options(seed: u64) -> NativeOptions<'static> {
    NativeOptions {
        model: MODEL,
        max_tokens: (!seed.is_multiple_of(3)).then_some(8_000),
        images: seed.is_multiple_of(2),
        cache_key: Some("session-1"),
        cache_ttl: seed.is_multiple_of(5).then_some("1h"),
        reasoning_effort: (!seed.is_multiple_of(2)).then_some("medium"),
        thinking_budget: (seed % 4 == 1).then_some(2_048),
    }
}

fn tools() -> Value {
    json!([{"type": "function", "function": {
        "name": "bash",
        "description": "Run a command",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}
    }}])
}

/// What is wrong with a Responses request, a line each.
fn responses_violations(history: &[Message], body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if body["store"] != json!(false) {
        out.push("store is not false".into());
    }
    if body["stream"] != json!(true) {
        out.push("stream is not true".into());
    }
    let Some(items) = body["input"].as_array() else {
        return vec!["no input array".into()];
    };
    // Reasoning this model streamed in this API, by its encrypted content.
    let ours: Vec<&str> = history
        .iter()
        .filter_map(|m| match m {
            Message::Assistant {
                reasoning: Some(r),
                model: Some(model),
                ..
            } if model == MODEL && r.api == Some(Api::Responses) => Some(&r.details),
            _ => None,
        })
        .flatten()
        .filter_map(|d| d["encrypted_content"].as_str())
        .collect();
    let mut open: Vec<String> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if item.get("id").is_some() {
            out.push(format!("input[{i}] carries an id: {item}"));
        }
        let kind = item["type"].as_str().unwrap_or("message");
        match kind {
            "reasoning" => {
                match item["encrypted_content"].as_str() {
                    Some(enc) if !enc.is_empty() => {
                        if !ours.contains(&enc) {
                            out.push(format!("input[{i}]: reasoning not this model's: {enc}"));
                        }
                    }
                    _ => out.push(format!("input[{i}]: reasoning without encrypted_content")),
                }
                let next = items.get(i + 1);
                let follows = next.is_some_and(|n| {
                    n["type"] == "function_call"
                        || (n["type"] == "reasoning")
                        || (n["role"] == "assistant")
                });
                if !follows {
                    out.push(format!("input[{i}]: reasoning not followed by its item"));
                }
            }
            "function_call" => {
                let id = item["call_id"].as_str().unwrap_or("").to_string();
                if id.is_empty() {
                    out.push(format!("input[{i}]: function_call without call_id"));
                }
                open.push(id);
            }
            "function_call_output" => {
                let id = item["call_id"].as_str().unwrap_or("");
                match open.iter().position(|c| c == id) {
                    Some(at) => {
                        open.remove(at);
                    }
                    None => out.push(format!("input[{i}]: output for no open call {id}")),
                }
            }
            _ => {
                if item["role"] == "user" && !open.is_empty() {
                    out.push(format!(
                        "input[{i}]: a user message before the outputs of {open:?}"
                    ));
                }
                if item["role"] == "system" {
                    out.push(format!("input[{i}]: a system message in input"));
                }
            }
        }
    }
    if !open.is_empty() {
        out.push(format!("calls never answered: {open:?}"));
    }
    // A model that showed it reasons is asked for its encrypted reasoning.
    let reasoned = history.iter().any(|m| match m {
        Message::Assistant {
            reasoning: Some(r),
            model: Some(model),
            ..
        } => {
            model == MODEL
                && r.api == Some(Api::Responses)
                && r.details.iter().any(|d| d["type"] == "reasoning")
        }
        _ => false,
    });
    if reasoned && body["include"] != json!(["reasoning.encrypted_content"]) {
        out.push("the model reasoned, and its encrypted reasoning is not asked for".into());
    }
    out
}

/// What is wrong with an Anthropic request, a line each.
fn anthropic_violations(history: &[Message], body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if !body["max_tokens"].is_u64() {
        out.push("no max_tokens".into());
    }
    let marks = body.to_string().matches("\"cache_control\"").count();
    if marks > 4 {
        out.push(format!("{marks} cache_control blocks (at most 4)"));
    }
    let signatures: Vec<&str> = history
        .iter()
        .filter_map(|m| match m {
            Message::Assistant {
                reasoning: Some(r),
                model: Some(model),
                ..
            } if model == MODEL && r.api == Some(Api::Anthropic) => Some(&r.details),
            _ => None,
        })
        .flatten()
        .filter_map(|d| d["signature"].as_str().or(d["data"].as_str()))
        .collect();
    let Some(messages) = body["messages"].as_array() else {
        return vec!["no messages array".into()];
    };
    let mut expected_role = "user";
    let mut owed: Vec<String> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or("");
        if role != expected_role {
            out.push(format!("messages[{i}] is {role}, expected {expected_role}"));
        }
        expected_role = if role == "user" { "assistant" } else { "user" };
        let blocks: Vec<Value> = match &m["content"] {
            Value::String(s) => vec![json!({"type": "text", "text": s})],
            Value::Array(a) => a.clone(),
            other => {
                out.push(format!("messages[{i}]: content {other}"));
                continue;
            }
        };
        if blocks.is_empty() {
            out.push(format!("messages[{i}]: no content"));
        }
        for (j, b) in blocks.iter().enumerate() {
            if b["type"] == "text" && b["text"].as_str().is_none_or(str::is_empty) {
                out.push(format!("messages[{i}].content[{j}]: an empty text block"));
            }
        }
        if role == "user" {
            // The results owed come first, in order.
            let results: Vec<&str> = blocks
                .iter()
                .take_while(|b| b["type"] == "tool_result")
                .filter_map(|b| b["tool_use_id"].as_str())
                .collect();
            if results != owed {
                out.push(format!(
                    "messages[{i}]: tool results {results:?}, owed {owed:?}"
                ));
            }
            let later = blocks
                .iter()
                .skip(results.len())
                .filter(|b| b["type"] == "tool_result")
                .count();
            if later > 0 {
                out.push(format!("messages[{i}]: a tool_result after other blocks"));
            }
            owed.clear();
        } else {
            if !owed.is_empty() {
                out.push(format!("messages[{i}]: tool uses {owed:?} never answered"));
            }
            let mut seen_other = false;
            for b in &blocks {
                match b["type"].as_str().unwrap_or("") {
                    "thinking" | "redacted_thinking" => {
                        if seen_other {
                            out.push(format!("messages[{i}]: thinking after other blocks"));
                        }
                        let field = if b["type"] == "thinking" {
                            "signature"
                        } else {
                            "data"
                        };
                        if b[field].as_str().is_none_or(str::is_empty) {
                            out.push(format!(
                                "messages[{i}]: thinking the API cannot verify: {b}"
                            ));
                        }
                        let sig = b["signature"].as_str().or(b["data"].as_str()).unwrap_or("");
                        if !signatures.contains(&sig) {
                            out.push(format!("messages[{i}]: thinking not this model's: {b}"));
                        }
                    }
                    "tool_use" => {
                        seen_other = true;
                        owed.push(b["id"].as_str().unwrap_or("").to_string());
                        if !b["input"].is_object() {
                            out.push(format!("messages[{i}]: tool_use input not an object"));
                        }
                    }
                    _ => seen_other = true,
                }
            }
        }
    }
    if !owed.is_empty() {
        out.push(format!("tool uses {owed:?} never answered"));
    }
    if body.get("system").is_none() {
        out.push("no top-level system".into());
    }
    // With thinking on, a request that ends with results opens their assistant message
    // with thinking.
    if let ([.., assistant, last], true) = (&messages[..], body.get("thinking").is_some()) {
        let answers = last["role"] == "user" && last["content"][0]["type"] == "tool_result";
        let opens = matches!(
            assistant["content"][0]["type"].as_str(),
            Some("thinking" | "redacted_thinking")
        );
        if answers && !opens {
            out.push("thinking on, the last assistant message does not open with it".into());
        }
    }
    out
}

/// `SEEDS` random sessions of `api`, each written by `request` and judged by `violations`;
/// the same history must give the same bytes (the provider's prefix cache).
fn random_sessions_keep_the_rules(
    api: Api,
    request: fn(&[Message], &Value, &NativeOptions<'_>) -> Value,
    violations: fn(&[Message], &Value) -> Vec<String>,
) {
    let mut failures = Vec::new();
    for seed in 0..SEEDS {
        let history = session(seed, api);
        let body = request(&history, &tools(), &options(seed));
        let found = violations(&history, &body);
        if !found.is_empty() {
            failures.push(format!("seed {seed}: {found:#?}\n{body:#}"));
        }
        assert_eq!(
            body,
            request(&history, &tools(), &options(seed)),
            "seed {seed}"
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {SEEDS} sessions broke a rule; the first:\n{}",
        failures.len(),
        failures[0]
    );
}

#[test]
fn random_sessions_never_break_the_responses_rules() {
    random_sessions_keep_the_rules(Api::Responses, responses::request, responses_violations);
}

#[test]
fn random_sessions_never_break_the_anthropic_rules() {
    random_sessions_keep_the_rules(Api::Anthropic, anthropic::request, anthropic_violations);
}

/// The checkers see what they are for: a request that breaks each rule is caught.
#[test]
fn the_checkers_catch_what_they_are_for() {
    let history = vec![Message::system("s"), Message::user("hi")];
    let good = json!({"store": false, "stream": true, "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "function_call", "call_id": "c1", "name": "bash", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "x"},
    ]});
    assert_eq!(responses_violations(&history, &good), Vec::<String>::new());
    let mut with_id = good.clone();
    with_id["input"][1]["id"] = json!("fc_1");
    assert!(!responses_violations(&history, &with_id).is_empty());
    let mut unanswered = good.clone();
    unanswered["input"].as_array_mut().unwrap().pop();
    assert!(!responses_violations(&history, &unanswered).is_empty());
    let mut bare_reasoning = good.clone();
    bare_reasoning["input"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "reasoning", "summary": []}));
    assert!(!responses_violations(&history, &bare_reasoning).is_empty());
    let reasoned = vec![
        Message::system("s"),
        Message::user("hi"),
        Message::assistant("a".into(), vec![])
            .with_reasoning(Some(Reasoning {
                details: vec![
                    json!({"type": "reasoning", "summary": []}),
                    json!({"type": "message"}),
                ],
                api: Some(Api::Responses),
                ..Reasoning::default()
            }))
            .from_model(MODEL),
    ];
    assert!(!responses_violations(&reasoned, &good).is_empty());

    let good = json!({"max_tokens": 10, "system": [{"type": "text", "text": "s"}], "messages": [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]},
    ]});
    assert_eq!(anthropic_violations(&history, &good), Vec::<String>::new());
    let mut unanswered = good.clone();
    unanswered["messages"][2]["content"][0]["tool_use_id"] = json!("t2");
    assert!(!anthropic_violations(&history, &unanswered).is_empty());
    let mut two_users = good.clone();
    two_users["messages"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "user", "content": "again"}));
    assert!(!anthropic_violations(&history, &two_users).is_empty());
    let mut foreign_thinking = good.clone();
    foreign_thinking["messages"][1]["content"]
        .as_array_mut()
        .unwrap()
        .insert(
            0,
            json!({"type": "thinking", "thinking": "x", "signature": "forged"}),
        );
    assert!(!anthropic_violations(&history, &foreign_thinking).is_empty());
    let mut thinking_off_needed = good.clone();
    thinking_off_needed["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
    assert!(!anthropic_violations(&history, &thinking_off_needed).is_empty());
    let unsigned = vec![
        Message::system("s"),
        Message::user("hi"),
        Message::assistant(String::new(), vec![])
            .with_reasoning(Some(Reasoning {
                details: vec![json!({"type": "thinking", "thinking": "x", "signature": ""})],
                api: Some(Api::Anthropic),
                ..Reasoning::default()
            }))
            .from_model(MODEL),
    ];
    let mut empty_signature = good.clone();
    empty_signature["messages"][1]["content"]
        .as_array_mut()
        .unwrap()
        .insert(
            0,
            json!({"type": "thinking", "thinking": "x", "signature": ""}),
        );
    assert!(!anthropic_violations(&unsigned, &empty_signature).is_empty());
    let mut marks = good.clone();
    marks["tools"] =
        json!([1, 2, 3, 4, 5].map(|_| json!({"cache_control": {"type": "ephemeral"}})));
    assert!(!anthropic_violations(&history, &marks).is_empty());
}

/// The in-repository copy of the native samples (what keeps the replay tests hermetic) is
/// the shared set's, file for file, where the shared set is next to the project.
#[test]
fn the_native_samples_copy_matches_the_shared_set() {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let copy = manifest.join("tests/provider-samples/native");
    let shared = manifest.join("../shared/provider-samples/native");
    assert!(copy.join("index.json").is_file(), "no {}", copy.display());
    let Ok(entries) = std::fs::read_dir(&shared) else {
        eprintln!("no {} to compare the copy with", shared.display());
        return;
    };
    let mut stale = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        if std::fs::read(copy.join(&name)).ok() != std::fs::read(entry.path()).ok() {
            stale.push(name.to_string_lossy().into_owned());
        }
    }
    assert!(
        stale.is_empty(),
        "tests/provider-samples/native differs from {} in {stale:?}: copy the shared samples again",
        shared.display()
    );
}
