//! A request in Anthropic's Messages API (`POST /v1/messages`), derived from the stored
//! history.
//!
//! - `model`, `max_tokens` (Anthropic requires one: [`DEFAULT_MAX_TOKENS`] when none is
//!   given), `stream: true`, the system message as a `system` list of text blocks, the
//!   tools as `{name, description, input_schema}`.
//! - `messages` alternate user and assistant, in the order [`order::ordered`] gives (its
//!   notes included), the system message left out of them.
//! - A user message is one text block: its words, attachments and reminder
//!   (`message_text`), then the images the user attached as base64 `image` blocks for a
//!   model that takes them (`wire::user_content`).
//! - The results of an assistant message's tool calls make the user message after it:
//!   one `tool_result` block per call, in call order (`is_error` where the call failed;
//!   a tool's images inside it as base64 image blocks for a model that takes them). A call
//!   without a stored result (a turn cut off) is answered with [`NO_RESULT`], so every
//!   `tool_use` has its `tool_result` right after it.
//! - An assistant message is its content blocks. Sent to the model (and API) that wrote it,
//!   the blocks it streamed come back in their order: thinking and redacted_thinking blocks
//!   exactly as stored (signature, data), blocks the server ran whole, the text where its
//!   first text block was, each `tool_use` where it was. To another model, the text and the
//!   tool calls only (another model's thinking is dropped). A thinking block that cannot
//!   be verified (no signature, as when its `signature_delta` never came, or a session
//!   file kept one as `""`; a redacted block without its `data`) would make the API refuse
//!   this request and every later one: the message goes without any of its thinking
//!   blocks (the API checks a message's thinking blocks together, and takes a message
//!   without them). A refusal is sent as text; an empty text block is never sent
//!   (Anthropic refuses them).
//! - Extended thinking (`thinking: {type: enabled, budget_tokens}`) when a budget is
//!   given, with `max_tokens` above it; left off for a request whose last assistant message
//!   called tools without the thinking blocks the API then requires (one another model
//!   wrote, or one whose thinking could not go back): Anthropic's own answer to that
//!   request is to turn thinking off for it.
//! - Prompt caching: at most [`MAX_BREAKPOINTS`] `cache_control` markers: the last tool
//!   (the tools' prefix), the last system block, and the last block of each of the last two
//!   user messages. The same history gives the same bytes, and a marked block keeps its
//!   bytes while it stays marked, so the next request reads back what this one wrote.

use serde_json::{json, Map, Value};

use super::order::{self, Item};
use super::wire::{message_text, user_content};
use super::{Api, Message, NativeOptions, ToolCall};

/// `max_tokens` when the caller gives none.
pub const DEFAULT_MAX_TOKENS: u64 = 32_000;
/// The least thinking budget Anthropic takes.
pub const MIN_THINKING_BUDGET: u64 = 1_024;
/// The most `cache_control` markers one request may carry.
pub const MAX_BREAKPOINTS: usize = 4;
/// User messages whose last block is marked for the cache.
const MARKED_USER_MESSAGES: usize = 2;
/// The result of a call that has none stored (the turn ended before it ran).
pub const NO_RESULT: &str = "Error: no result: the turn ended before this call ran.";
/// What a message with no text at all says (Anthropic refuses empty text blocks).
pub const EMPTY: &str = "(empty)";

/// The request body for `history` with `tools` (chat-completions tool schemas).
pub fn request(history: &[Message], tools: &Value, options: &NativeOptions<'_>) -> Value {
    let marker = cache_marker(options.cache_ttl);
    let mut system: Vec<Value> = history
        .iter()
        .filter_map(|m| match m {
            Message::System { content } if !content.is_empty() => {
                Some(json!({"type": "text", "text": content}))
            }
            _ => None,
        })
        .collect();
    let mut messages = messages(history, options);
    let mut tools = tools_of(tools);

    // The breakpoints: the tools, the system prompt, the last two user messages.
    if let Some(Value::Object(tool)) = tools.last_mut() {
        tool.insert("cache_control".into(), marker.clone());
    }
    if let Some(Value::Object(block)) = system.last_mut() {
        block.insert("cache_control".into(), marker.clone());
    }
    for message in messages
        .iter_mut()
        .rev()
        .filter(|m| m.role == "user")
        .take(MARKED_USER_MESSAGES)
    {
        if let Some(Value::Object(block)) = message.content.last_mut() {
            block.insert("cache_control".into(), marker.clone());
        }
    }

    let thinking = options
        .thinking_budget
        .filter(|_| thinking_allowed(&messages))
        .map(|budget| budget.max(MIN_THINKING_BUDGET));
    let mut max_tokens = options.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).max(1);
    if let Some(budget) = thinking {
        if max_tokens <= budget {
            // The cap was meant for the answer: the thinking comes on top of it.
            max_tokens = budget.saturating_add(max_tokens);
        }
    }

    let mut body = Map::new();
    body.insert("model".into(), json!(options.model));
    body.insert("max_tokens".into(), json!(max_tokens));
    body.insert("stream".into(), json!(true));
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }
    body.insert(
        "messages".into(),
        Value::Array(
            messages
                .into_iter()
                .map(|m| json!({"role": m.role, "content": m.content}))
                .collect(),
        ),
    );
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(budget) = thinking {
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": budget}),
        );
    }
    Value::Object(body)
}

/// The `cache_control` of a breakpoint: ephemeral, for an hour when `ttl` says so.
fn cache_marker(ttl: Option<&str>) -> Value {
    match ttl {
        Some(ttl @ ("1h" | "5m")) => json!({"type": "ephemeral", "ttl": ttl}),
        _ => json!({"type": "ephemeral"}),
    }
}

/// Chat-completions tool schemas as Anthropic's.
fn tools_of(tools: &Value) -> Vec<Value> {
    let Some(tools) = tools.as_array() else {
        return Vec::new();
    };
    tools
        .iter()
        .filter_map(|tool| {
            let function = tool.get("function").unwrap_or(tool);
            let name = function.get("name").and_then(Value::as_str)?;
            let mut out = Map::new();
            out.insert("name".into(), json!(name));
            if let Some(description) = function.get("description").and_then(Value::as_str) {
                out.insert("description".into(), json!(description));
            }
            let schema = function
                .get("parameters")
                .filter(|p| p.is_object())
                .cloned()
                .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
            out.insert("input_schema".into(), schema);
            Some(Value::Object(out))
        })
        .collect()
}

/// One message of the request.
#[derive(Debug)]
struct Turn {
    role: &'static str,
    content: Vec<Value>,
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": if text.is_empty() { EMPTY } else { text }})
}

/// The request's messages: the order's items, each call's results gathered into the user
/// message after it, and messages of one role in a row joined.
fn messages(history: &[Message], options: &NativeOptions<'_>) -> Vec<Turn> {
    let items: Vec<Item<'_>> = order::ordered(history).collect();
    let mut out: Vec<Turn> = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let item = items[i];
        i += 1;
        let turn = match item {
            Item::Stored(Message::System { .. }) => continue,
            Item::Stored(m @ Message::User { .. }) => {
                let (text, images) = user_content(m, options.images);
                let mut content = vec![text_block(&text)];
                content.extend(images.iter().map(image_block));
                Turn {
                    role: "user",
                    content,
                }
            }
            Item::Stored(m @ Message::Assistant { tool_calls, .. }) => {
                push(
                    &mut out,
                    Turn {
                        role: "assistant",
                        content: assistant_blocks(m, options),
                    },
                );
                if tool_calls.is_empty() {
                    continue;
                }
                // The results that follow it in the history.
                let mut results: Vec<&Message> = Vec::new();
                while let Some(Item::Stored(result @ Message::Tool { .. })) = items.get(i) {
                    results.push(result);
                    i += 1;
                }
                Turn {
                    role: "user",
                    content: results_blocks(tool_calls, &results, options),
                }
            }
            // A result that answers no call here: its text, so nothing is lost.
            Item::Stored(m @ Message::Tool { tool_call_id, .. }) => Turn {
                role: "user",
                content: vec![text_block(&format!(
                    "(The result of call {tool_call_id}:)\n{}",
                    message_text(m)
                ))],
            },
            Item::AssistantNote(text) => Turn {
                role: "assistant",
                content: vec![text_block(text)],
            },
            Item::UserNote(text) => Turn {
                role: "user",
                content: vec![text_block(text)],
            },
        };
        push(&mut out, turn);
    }
    if out.first().is_some_and(|t| t.role == "assistant") {
        out.insert(
            0,
            Turn {
                role: "user",
                content: vec![text_block(order::GO_ON)],
            },
        );
    }
    out
}

/// Add `turn`, joined to the last message when that has the same role.
fn push(out: &mut Vec<Turn>, turn: Turn) {
    match out.last_mut() {
        Some(last) if last.role == turn.role => last.content.extend(turn.content),
        _ => out.push(turn),
    }
}

/// The user message that answers `calls`: a `tool_result` per call, in call order, from
/// `results` (the tool messages stored after them); a result that answers none of them
/// goes after, as text.
fn results_blocks(
    calls: &[ToolCall],
    results: &[&Message],
    options: &NativeOptions<'_>,
) -> Vec<Value> {
    let mut used = vec![false; results.len()];
    let mut blocks = Vec::new();
    for call in calls {
        let found = results.iter().enumerate().position(|(k, m)| {
            !used[k] && matches!(m, Message::Tool { tool_call_id, .. } if *tool_call_id == call.id)
        });
        match found {
            Some(k) => {
                used[k] = true;
                blocks.push(tool_result(&call.id, results[k], options));
            }
            None => blocks.push(json!({
                "type": "tool_result",
                "tool_use_id": call.id,
                "content": NO_RESULT,
                "is_error": true,
            })),
        }
    }
    for (k, m) in results.iter().enumerate() {
        if let (false, Message::Tool { tool_call_id, .. }) = (used[k], m) {
            blocks.push(text_block(&format!(
                "(The result of call {tool_call_id}:)\n{}",
                message_text(m)
            )));
        }
    }
    blocks
}

/// An image as a base64 `image` block.
fn image_block(image: &super::Image) -> Value {
    json!({
        "type": "image",
        "source": {"type": "base64", "media_type": image.mime_type, "data": image.data},
    })
}

/// One call's `tool_result` block.
fn tool_result(id: &str, message: &Message, options: &NativeOptions<'_>) -> Value {
    let mut block = Map::new();
    block.insert("type".into(), json!("tool_result"));
    block.insert("tool_use_id".into(), json!(id));
    let text = message_text(message);
    let images = match message {
        Message::Tool { images, .. } if options.images => images.as_slice(),
        _ => &[],
    };
    if images.is_empty() {
        if !text.is_empty() {
            block.insert("content".into(), json!(text));
        }
    } else {
        let mut parts = Vec::new();
        if !text.is_empty() {
            parts.push(json!({"type": "text", "text": text}));
        }
        parts.extend(images.iter().map(image_block));
        block.insert("content".into(), Value::Array(parts));
    }
    if message.outcome().is_some_and(|o| o.is_error()) {
        block.insert("is_error".into(), json!(true));
    }
    Value::Object(block)
}

/// A call as a `tool_use` block: its arguments as the input object (`{}` when they are
/// not one).
fn tool_use(call: &ToolCall) -> Value {
    let input = match serde_json::from_str::<Value>(&call.function.arguments) {
        Ok(Value::Object(o)) => Value::Object(o),
        _ => json!({}),
    };
    json!({"type": "tool_use", "id": call.id, "name": call.function.name, "input": input})
}

/// An assistant message's content blocks (see the module's notes).
fn assistant_blocks(message: &Message, options: &NativeOptions<'_>) -> Vec<Value> {
    let Message::Assistant {
        tool_calls,
        reasoning,
        model,
        ..
    } = message
    else {
        return Vec::new();
    };
    let text = message_text(message);
    let own = reasoning
        .as_ref()
        .filter(|r| r.api == Some(Api::Anthropic))
        .filter(|_| model.as_deref() == Some(options.model));
    // A thinking block the API cannot verify (no signature: its `signature_delta` never
    // came; a redacted one without its data) is refused, and so would be every request
    // after. The message's other thinking blocks go with it: the API checks a message's
    // thinking as a whole, and a message may go without any (see the module's notes).
    let thinking_sent = own.is_some_and(|r| r.details.iter().all(replayable));
    let mut blocks = Vec::new();
    let mut text_sent = text.is_empty();
    let mut sent = vec![false; tool_calls.len()];
    for place in own.map_or(&[][..], |r| r.details.as_slice()) {
        match place.get("type").and_then(Value::as_str) {
            Some("text") if !text_sent => {
                blocks.push(text_block(&text));
                text_sent = true;
            }
            // Its text went at the first text place.
            Some("text") => {}
            Some("tool_use") => {
                let id = place.get("id").and_then(Value::as_str);
                let found = tool_calls
                    .iter()
                    .enumerate()
                    .position(|(k, c)| !sent[k] && Some(c.id.as_str()) == id);
                if let Some(k) = found {
                    sent[k] = true;
                    blocks.push(tool_use(&tool_calls[k]));
                }
            }
            Some("thinking" | "redacted_thinking") if !thinking_sent => {}
            // Thinking, redacted thinking and the server's own blocks, as they came.
            Some(_) => blocks.push(place.clone()),
            None => {}
        }
    }
    if !text_sent {
        // No place for it: before the calls, after any thinking.
        let at = blocks
            .iter()
            .position(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
            .unwrap_or(blocks.len());
        blocks.insert(at, text_block(&text));
    }
    for (call, _) in tool_calls.iter().zip(&sent).filter(|(_, sent)| !**sent) {
        blocks.push(tool_use(call));
    }
    let said_something = blocks.iter().any(|b| {
        !matches!(
            b.get("type").and_then(Value::as_str),
            Some("thinking" | "redacted_thinking")
        )
    });
    if !said_something {
        blocks.push(text_block(EMPTY));
    }
    blocks
}

/// Whether a stored block can go back as it is: a thinking block with its signature, a
/// redacted one with its data (any other block, yes).
fn replayable(block: &Value) -> bool {
    let filled = |key: &str| {
        block
            .get(key)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    match block.get("type").and_then(Value::as_str) {
        Some("thinking") => filled("signature"),
        Some("redacted_thinking") => filled("data"),
        _ => true,
    }
}

/// Whether thinking may be on: not when the request ends with the results of calls whose
/// assistant message does not start with a thinking block (the API refuses that).
fn thinking_allowed(messages: &[Turn]) -> bool {
    let [.., assistant, last] = messages else {
        return true;
    };
    let answers_calls = last.role == "user"
        && last
            .content
            .first()
            .is_some_and(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"));
    if !answers_calls {
        return true;
    }
    assistant.content.first().is_some_and(|b| {
        matches!(
            b.get("type").and_then(Value::as_str),
            Some("thinking" | "redacted_thinking")
        )
    })
}

#[cfg(test)]
mod tests;
