//! A request in OpenAI's Responses API (`POST /v1/responses`), derived from the stored
//! history.
//!
//! - The first system message is the `instructions`; the rest of the history is `input`
//!   items, in the order [`order::ordered`] gives (its synthetic notes included, as user
//!   or assistant messages).
//! - A user message is `{"role": "user", "content": [{"type": "input_text", ...}]}` with
//!   its text as every wire sends it (`message_text`: attachments and reminder
//!   included), then the images the user attached as `input_image` parts for a model
//!   that takes them (`wire::user_content`); a tool result is a
//!   `function_call_output` answering its `call_id`.
//! - Images a tool result carries go, for a model that takes them, in a user message of
//!   `input_image` parts (data URLs) after the run of results they came with, each
//!   result's images after a line naming its call.
//! - An assistant message is its text (a refusal stands in for none) as an `output_text`
//!   message, and its calls as `function_call` items with `call_id`, `name` and
//!   `arguments`. The request is sent with `store: false`, so the server keeps nothing:
//!   no item is ever sent by its id (an `fc_…` or `rs_…` id would be looked up and not
//!   found). When the message came from this API and this model, the items it streamed
//!   ([`super::Reasoning::details`]) are walked in their order instead: each reasoning
//!   item goes back whole (its `encrypted_content` byte for byte) right before the item
//!   it produced, the places of calls and messages are filled in from the message. A
//!   reasoning item without `encrypted_content` (nothing to send but an id), or not
//!   followed by an item that is sent (a hosted tool's, which rein never sends back),
//!   is left out: the server refuses a reasoning item without its following item.
//! - `include: ["reasoning.encrypted_content"]` for a model that reasons: one whose
//!   settings give a `reasoning_effort` (sent as `reasoning`), and any model a reply of
//!   which in the history carried a reasoning item (from then on, and in a resumed
//!   session): without it, with `store: false`, its reasoning could not go back.
//! - `tools` are the chat-completions schemas in the Responses form (`strict: false`
//!   unless a schema says otherwise: the Responses API makes functions strict by
//!   default, and strict mode refuses optional parameters).
//! - The body is a function of the history and the options alone (object keys sorted),
//!   so a request extends the previous one byte for byte and the prompt cache keeps
//!   working.

use serde_json::{json, Map, Value};

use super::order::{self, Item};
use super::wire::{message_text, user_content};
use super::{Api, Message, NativeOptions, ToolCall};

/// The least `max_output_tokens` the API takes.
const MIN_OUTPUT_TOKENS: u64 = 16;

/// The request body for `history` with `tools` (chat-completions tool schemas).
pub fn request(history: &[Message], tools: &Value, options: &NativeOptions<'_>) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(options.model));
    let system = history
        .iter()
        .position(|m| matches!(m, Message::System { .. }));
    if let Some(at) = system {
        body.insert(
            "instructions".into(),
            json!(message_text(&history[at]).as_ref()),
        );
    }
    body.insert(
        "input".into(),
        Value::Array(input(history, system, options)),
    );
    let tools = function_tools(tools);
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
        body.insert("parallel_tool_calls".into(), json!(true));
    }
    body.insert("store".into(), json!(false));
    body.insert("stream".into(), json!(true));
    // A model that reasons: its encrypted reasoning comes back to be sent again (a model
    // that does not is refused the `include`). One known to reason by its settings, or
    // one that showed it does: a reply of its in the history carried a reasoning item
    // (a name rein does not know, an Azure deployment's, a gateway's alias).
    if options.reasoning_effort.is_some() || has_reasoned(history, options.model) {
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    if let Some(effort) = options.reasoning_effort {
        body.insert(
            "reasoning".into(),
            json!({"effort": effort, "summary": "auto"}),
        );
    }
    if let Some(key) = options.cache_key {
        body.insert("prompt_cache_key".into(), json!(key));
    }
    if let Some(max) = options.max_tokens {
        body.insert(
            "max_output_tokens".into(),
            json!(max.max(MIN_OUTPUT_TOKENS)),
        );
    }
    Value::Object(body)
}

/// Whether a reply of `model` in this API, kept in `history`, carried a reasoning item:
/// the model reasons, whatever its name.
fn has_reasoned(history: &[Message], model: &str) -> bool {
    history.iter().any(|m| match m {
        Message::Assistant {
            reasoning: Some(r),
            model: Some(by),
            ..
        } => {
            r.api == Some(Api::Responses)
                && by == model
                && r.details
                    .iter()
                    .any(|d| d.get("type").and_then(Value::as_str) == Some("reasoning"))
        }
        _ => false,
    })
}

/// The `input` items: every message but the system message at `system` (the
/// instructions), with the notes the order needs and tool results' images.
fn input(history: &[Message], system: Option<usize>, options: &NativeOptions<'_>) -> Vec<Value> {
    let instructions = system.map(|at| &history[at]);
    let mut out = Vec::new();
    // Tool results with images, waiting for the end of their run of results.
    let mut pending: Vec<&Message> = Vec::new();
    for item in order::ordered(history) {
        let is_tool = matches!(item, Item::Stored(Message::Tool { .. }));
        if !is_tool && !pending.is_empty() {
            out.push(images_message(&std::mem::take(&mut pending)));
        }
        match item {
            Item::Stored(m) => match m {
                Message::System { .. } => {
                    if !instructions.is_some_and(|i| std::ptr::eq(i, m)) {
                        out.push(text_message("system", "input_text", &message_text(m)));
                    }
                }
                Message::User { .. } => {
                    let (text, images) = user_content(m, options.images);
                    let mut message = text_message("user", "input_text", &text);
                    if let Some(parts) = message["content"].as_array_mut() {
                        parts.extend(images.iter().map(
                            |image| json!({"type": "input_image", "image_url": image.data_url()}),
                        ));
                    }
                    out.push(message);
                }
                Message::Assistant { .. } => assistant(m, options, &mut out),
                Message::Tool {
                    tool_call_id,
                    images,
                    ..
                } => {
                    out.push(json!({
                        "type": "function_call_output",
                        "call_id": tool_call_id,
                        "output": message_text(m).as_ref(),
                    }));
                    if options.images && !images.is_empty() {
                        pending.push(m);
                    }
                }
            },
            Item::UserNote(text) => out.push(text_message("user", "input_text", text)),
            Item::AssistantNote(text) => {
                out.push(text_message("assistant", "output_text", text));
            }
        }
    }
    if !pending.is_empty() {
        out.push(images_message(&pending));
    }
    out
}

/// A message of one text part.
fn text_message(role: &str, part: &str, text: &str) -> Value {
    json!({"role": role, "content": [{"type": part, "text": text}]})
}

/// The images of these tool results, as a user message.
fn images_message(results: &[&Message]) -> Value {
    let mut parts = Vec::new();
    for message in results {
        let Message::Tool {
            tool_call_id,
            images,
            ..
        } = message
        else {
            continue;
        };
        let n = images.len();
        let what = if n == 1 {
            "image".to_string()
        } else {
            format!("{n} images")
        };
        parts.push(json!({
            "type": "input_text",
            "text": format!("The {what} the result of call {tool_call_id} returned:"),
        }));
        for image in images {
            parts.push(json!({"type": "input_image", "image_url": image.data_url()}));
        }
    }
    json!({"role": "user", "content": parts})
}

/// A call as a `function_call` item: by its `call_id`, never by an id of the server's.
fn function_call(call: &ToolCall) -> Value {
    json!({
        "type": "function_call",
        "call_id": call.id,
        "name": call.function.name,
        "arguments": call.function.arguments,
    })
}

/// An assistant message's items: the ones it streamed, in their order, when they are
/// this API's and this model's; else its text, then its calls.
fn assistant(message: &Message, options: &NativeOptions<'_>, out: &mut Vec<Value>) {
    let Message::Assistant {
        tool_calls,
        reasoning,
        model,
        ..
    } = message
    else {
        return;
    };
    let text = message_text(message);
    let places: &[Value] = match reasoning {
        Some(r) if r.api == Some(Api::Responses) && model.as_deref() == Some(options.model) => {
            &r.details
        }
        _ => &[],
    };
    let mut text_sent = text.is_empty();
    let mut call_sent = vec![false; tool_calls.len()];
    // The call a place stands for: the first unsent one with its call_id.
    let call_of = |place: &Value, sent: &[bool]| {
        let id = place.get("call_id").and_then(Value::as_str)?;
        tool_calls
            .iter()
            .zip(sent)
            .position(|(c, sent)| c.id == id && !sent)
    };
    for (i, place) in places.iter().enumerate() {
        match place.get("type").and_then(Value::as_str) {
            Some("reasoning") => {
                // Sent only right before an item that is sent with it.
                let followed = places.get(i + 1).is_some_and(|next| {
                    match next.get("type").and_then(Value::as_str) {
                        Some("function_call") => call_of(next, &call_sent).is_some(),
                        Some("message") => !text_sent,
                        _ => false,
                    }
                });
                if followed {
                    if let Some(item) = reasoning_item(place) {
                        out.push(item);
                    }
                }
            }
            Some("function_call") => {
                if let Some(j) = call_of(place, &call_sent) {
                    call_sent[j] = true;
                    out.push(function_call(&tool_calls[j]));
                }
            }
            Some("message") if !text_sent => {
                text_sent = true;
                out.push(text_message("assistant", "output_text", &text));
            }
            // Hosted tools' items (and anything else) are never sent back.
            _ => {}
        }
    }
    if !text_sent {
        out.push(text_message("assistant", "output_text", &text));
    }
    for (call, sent) in tool_calls.iter().zip(call_sent) {
        if !sent {
            out.push(function_call(call));
        }
    }
}

/// A stored reasoning item as sent: type, summary, encrypted content and any content,
/// never an id; none without encrypted content (with `store: false` there is nothing
/// the server could read it from).
fn reasoning_item(stored: &Value) -> Option<Value> {
    let encrypted = stored
        .get("encrypted_content")
        .and_then(Value::as_str)
        .filter(|e| !e.is_empty())?;
    let mut item = Map::new();
    item.insert("type".into(), json!("reasoning"));
    item.insert(
        "summary".into(),
        stored
            .get("summary")
            .filter(|s| s.is_array())
            .cloned()
            .unwrap_or_else(|| json!([])),
    );
    item.insert("encrypted_content".into(), json!(encrypted));
    if let Some(content) = stored
        .get("content")
        .filter(|c| c.as_array().is_some_and(|c| !c.is_empty()))
    {
        item.insert("content".into(), content.clone());
    }
    Some(Value::Object(item))
}

/// Chat-completions tool schemas (`{"type": "function", "function": {...}}`) as Responses
/// function tools (`{"type": "function", "name", "description", "parameters",
/// "strict"}`); a schema already in that form passes as it is.
fn function_tools(tools: &Value) -> Vec<Value> {
    let Some(tools) = tools.as_array() else {
        return Vec::new();
    };
    tools
        .iter()
        .filter_map(|tool| {
            let Some(function) = tool.get("function").filter(|f| f.is_object()) else {
                return tool.get("name").is_some().then(|| tool.clone());
            };
            let mut out = Map::new();
            out.insert("type".into(), json!("function"));
            out.insert(
                "name".into(),
                function.get("name").cloned().unwrap_or_else(|| json!("")),
            );
            if let Some(description) = function.get("description").filter(|d| !d.is_null()) {
                out.insert("description".into(), description.clone());
            }
            out.insert(
                "parameters".into(),
                function
                    .get("parameters")
                    .filter(|p| !p.is_null())
                    .cloned()
                    .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
            );
            out.insert(
                "strict".into(),
                function
                    .get("strict")
                    .filter(|s| s.is_boolean())
                    .cloned()
                    .unwrap_or(json!(false)),
            );
            Some(Value::Object(out))
        })
        .collect()
}

#[cfg(test)]
mod tests;
