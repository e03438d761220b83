//! A request's messages in the chat-completions wire format, derived from the stored ones.
//!
//! - Order: [`order::ordered`] adds the synthetic notes the stored history needs.
//! - Reminders: a user message or tool result that carries one sends it after its own text,
//!   separated by a blank line, inside the same `content` (never as a message of its own).
//! - Attachments: the files a user message mentions go between its text and its reminder,
//!   each after a blank line, inside the same `content`.
//! - Provider state goes back to the model that produced it, as it arrived: the tool calls'
//!   extra fields (Gemini's `extra_content` thought signature), `reasoning_details`
//!   (OpenRouter: encrypted Gemini state, Anthropic signatures) on every assistant message
//!   that had them, and `reasoning_content` (DeepSeek, Kimi, GLM, xAI, llama.cpp) on the
//!   assistant messages with tool calls. The plain `reasoning` text field is never sent
//!   back: OpenRouter wants `reasoning_details` instead, and Groq refuses it. Everything
//!   is kept for every turn (not only the current one), so a request still extends the
//!   previous one byte for byte and the provider's prompt cache keeps working.
//! - A refusal is sent as the assistant's content, which every server takes.
//! - Images a user attached go after the message's text as `image_url` parts, to a model
//!   that takes images; one that does not gets the text and [`IMAGES_NOT_SENT`] (the text
//!   names each image where it was attached).
//! - Images a tool result carries (an MCP tool's screenshot) go to a model that takes them
//!   (`images = true` in its model entry) after the run of results they came with: an
//!   assistant note ([`IMAGES_FOLLOW`]), then a user message of `image_url` parts (data
//!   URLs), each result's images after a line naming its call. Most servers take only
//!   text in a tool message, and some refuse a user message right after one, so this form
//!   is the one every server takes; it depends only on the stored messages, so a request
//!   still extends the previous one byte for byte. A model that does not take images gets
//!   the description line each image has in the result's text.
//! - With `cache_control` (Anthropic models through a gateway, which cache only what the
//!   client marks), the system message and the last two user or tool messages send their
//!   text as one content part marked `{"type": "ephemeral"}`: the stable prefix is written
//!   to the cache and the next request reads it back.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use super::order::{self, Item};
use super::Message;

/// How a request's messages are written.
#[derive(Debug, Clone, Copy)]
pub struct WireOptions<'a> {
    /// The model the request goes to: provider state goes back only to the model that
    /// produced it.
    pub model: &'a str,
    /// Mark the stable prefix for providers that cache only what the client marks.
    pub cache_control: bool,
    /// The model takes images: tool results' images are sent (see the module's notes).
    pub images: bool,
}

/// The messages of one request.
#[derive(Clone, Copy)]
pub struct WireMessages<'a> {
    pub history: &'a [Message],
    pub options: WireOptions<'a>,
}

/// Most messages marked for the cache besides the system message (Anthropic allows four
/// breakpoints in all).
const MARKED_TAIL: usize = 2;

impl<'a> Serialize for WireMessages<'a> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let all = self.history.iter();
        // Which of the stored messages get a cache marker: the system message and the
        // last MARKED_TAIL user or tool messages.
        let mut marked: Vec<&Message> = Vec::new();
        if self.options.cache_control {
            marked.extend(all.clone().find(|m| matches!(m, Message::System { .. })));
            let inputs = all
                .clone()
                .filter(|m| matches!(m, Message::User { .. } | Message::Tool { .. }));
            let count = inputs.clone().count();
            marked.extend(inputs.skip(count.saturating_sub(MARKED_TAIL)));
        }
        let wire = |item: Item<'a>| {
            Out::Wire(Wire {
                item,
                options: self.options,
                marked: match item {
                    Item::Stored(m) => marked.iter().any(|k| std::ptr::eq(*k, m)),
                    _ => false,
                },
            })
        };
        if !self.options.images || !self.history.iter().any(has_images) {
            return serializer.collect_seq(order::ordered(all).map(wire));
        }
        // After a run of tool results that carry images: a note and the images, as a user
        // message (a tool message may hold only text on most servers, and a user message
        // right after a tool message is refused by some: the note goes between).
        let mut out = Vec::new();
        let mut pending: Vec<&'a Message> = Vec::new();
        for item in order::ordered(all) {
            let is_tool = matches!(item, Item::Stored(Message::Tool { .. }));
            if !is_tool && !pending.is_empty() {
                out.push(wire(Item::AssistantNote(IMAGES_FOLLOW)));
                out.push(Out::Images(std::mem::take(&mut pending)));
            }
            if let Item::Stored(m) = item {
                if is_tool && has_images(m) {
                    pending.push(m);
                }
            }
            out.push(wire(item));
        }
        if !pending.is_empty() {
            out.push(wire(Item::AssistantNote(IMAGES_FOLLOW)));
            out.push(Out::Images(pending));
        }
        serializer.collect_seq(out)
    }
}

/// What the assistant note before a tool result's images says.
pub const IMAGES_FOLLOW: &str = "(The results above include images; here they are.)";

fn has_images(message: &Message) -> bool {
    matches!(message, Message::Tool { images, .. } if !images.is_empty())
}

/// One message of a request.
enum Out<'a> {
    Wire(Wire<'a>),
    /// The images of these tool results, as a user message.
    Images(Vec<&'a Message>),
}

impl Serialize for Out<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let results = match self {
            Out::Wire(wire) => return wire.serialize(serializer),
            Out::Images(results) => results,
        };
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
            parts.push(serde_json::json!({
                "type": "text",
                "text": format!(
                    "The {} the result of call {tool_call_id} returned:",
                    if n == 1 { "image".to_string() } else { format!("{n} images") }
                ),
            }));
            for image in images {
                parts.push(serde_json::json!({
                    "type": "image_url",
                    "image_url": {"url": image.data_url()},
                }));
            }
        }
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("role", "user")?;
        map.serialize_entry("content", &parts)?;
        map.end()
    }
}

/// One message as sent.
struct Wire<'a> {
    item: Item<'a>,
    options: WireOptions<'a>,
    /// Send the content as a part with a cache marker.
    marked: bool,
}

/// A message's content: its text, plain or as one marked part, and the images a user
/// attached after it as `image_url` parts.
struct Content<'a> {
    text: std::borrow::Cow<'a, str>,
    images: &'a [super::Image],
    marked: bool,
}

/// A user message's or tool result's text as the model reads it: its own words, then each
/// attached file's text and the reminder, each after a blank line. Every API's wire sends
/// this.
pub(crate) fn sent_text<'m>(
    text: &'m str,
    attachments: &[super::Attachment],
    reminder: Option<&str>,
) -> std::borrow::Cow<'m, str> {
    if attachments.is_empty() && reminder.is_none() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut all = text.to_string();
    for extra in attachments.iter().map(|a| a.text.as_str()).chain(reminder) {
        if !all.is_empty() {
            all.push_str("\n\n");
        }
        all.push_str(extra);
    }
    std::borrow::Cow::Owned(all)
}

/// [`sent_text`] of a stored system, user or tool message (an assistant message's content
/// or refusal otherwise).
pub(crate) fn message_text(message: &Message) -> std::borrow::Cow<'_, str> {
    match message {
        Message::System { content } => std::borrow::Cow::Borrowed(content.as_str()),
        Message::User {
            content,
            reminder,
            attachments,
            ..
        } => sent_text(content, attachments, reminder.as_deref()),
        Message::Tool {
            content, reminder, ..
        } => sent_text(content, &[], reminder.as_deref()),
        Message::Assistant {
            content, refusal, ..
        } => match (content.as_deref(), refusal.as_deref()) {
            (None | Some(""), Some(refusal)) => std::borrow::Cow::Borrowed(refusal),
            (content, _) => std::borrow::Cow::Borrowed(content.unwrap_or("")),
        },
    }
}

/// What the model is told after a user message's text when it does not take the images
/// the message carries.
pub const IMAGES_NOT_SENT: &str =
    "(The images named above were not sent: this model does not take images.)";

/// A user message's text as the model reads it and the images sent with it: the images
/// when `images` (the model takes them), else none and a line saying so after the text.
/// Other messages: their text and no images.
pub(crate) fn user_content(
    message: &Message,
    images: bool,
) -> (std::borrow::Cow<'_, str>, &[super::Image]) {
    let text = message_text(message);
    match message {
        Message::User { images: list, .. } if !list.is_empty() => {
            if images {
                (text, list)
            } else {
                let mut text = text.into_owned();
                if !text.is_empty() {
                    text.push_str("\n\n");
                }
                text.push_str(IMAGES_NOT_SENT);
                (std::borrow::Cow::Owned(text), &[])
            }
        }
        _ => (text, &[]),
    }
}

impl Serialize for Content<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let text = self.text.as_ref();
        if !self.marked && self.images.is_empty() {
            return serializer.serialize_str(text);
        }
        let mut part = serde_json::json!({"type": "text", "text": text});
        if self.marked {
            part["cache_control"] = serde_json::json!({"type": "ephemeral"});
        }
        let images = self.images.iter().map(|image| {
            serde_json::json!({"type": "image_url", "image_url": {"url": image.data_url()}})
        });
        serializer.collect_seq(std::iter::once(part).chain(images))
    }
}

impl Serialize for Wire<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (role, text) = match self.item {
            Item::Stored(m) => return self.stored(m, serializer),
            Item::AssistantNote(text) => ("assistant", text),
            Item::UserNote(text) => ("user", text),
        };
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("role", role)?;
        map.serialize_entry("content", text)?;
        map.end()
    }
}

impl Wire<'_> {
    /// A stored message as sent.
    fn stored<S: Serializer>(&self, message: &Message, serializer: S) -> Result<S::Ok, S::Error> {
        let (role, call_id) = match message {
            Message::System { .. } => ("system", None),
            Message::User { .. } => ("user", None),
            Message::Tool { tool_call_id, .. } => ("tool", Some(tool_call_id)),
            Message::Assistant { .. } => return self.assistant(message, serializer),
        };
        let (text, images) = user_content(message, self.options.images);
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("role", role)?;
        if let Some(id) = call_id {
            map.serialize_entry("tool_call_id", id)?;
        }
        map.serialize_entry(
            "content",
            &Content {
                text,
                images,
                marked: self.marked,
            },
        )?;
        map.end()
    }

    /// An assistant message: its content (a refusal stands in for an empty one), its
    /// calls, and the provider state that goes back to its own model.
    fn assistant<S: Serializer>(
        &self,
        message: &Message,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let Message::Assistant {
            content,
            tool_calls,
            reasoning,
            refusal,
            model,
        } = message
        else {
            return serializer.serialize_none();
        };
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("role", "assistant")?;
        let content = match (content.as_deref(), refusal.as_deref()) {
            (None | Some(""), Some(refusal)) => Some(refusal),
            (content, _) => content,
        };
        map.serialize_entry("content", &content)?;
        let same_model = model.as_deref() == Some(self.options.model);
        if !tool_calls.is_empty() {
            if same_model {
                map.serialize_entry("tool_calls", tool_calls)?;
            } else {
                // Another model's extras could be refused: the calls alone.
                let plain: Vec<_> = tool_calls
                    .iter()
                    .map(|c| super::ToolCall {
                        extra: serde_json::Map::new(),
                        ..c.clone()
                    })
                    .collect();
                map.serialize_entry("tool_calls", &plain)?;
            }
        }
        // Another API's state is never sent here (a model switched mid-session).
        let chat_state = |r: &&super::Reasoning| r.api.is_none_or(|a| a == super::Api::Chat);
        if let Some(reasoning) = reasoning.as_ref().filter(|_| same_model).filter(chat_state) {
            if reasoning.field.as_deref() == Some("reasoning_content") && !tool_calls.is_empty() {
                map.serialize_entry("reasoning_content", &reasoning.text)?;
            }
            if !reasoning.details.is_empty() {
                map.serialize_entry("reasoning_details", &reasoning.details)?;
            }
        }
        map.end()
    }
}

/// Whether `model` is one whose provider caches only what the client marks: Anthropic's
/// Claude models through OpenRouter and other OpenAI-compatible gateways.
pub fn wants_cache_markers(model: &str) -> bool {
    let model = model.to_ascii_lowercase();
    model.starts_with("anthropic/") || model.contains("/claude") || model.starts_with("claude")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{Reasoning, ToolCall};
    use serde_json::{json, Value};

    fn wire(history: &[Message], model: &str, cache_control: bool) -> Value {
        serde_json::to_value(WireMessages {
            history,
            options: WireOptions {
                model,
                cache_control,
                images: false,
            },
        })
        .unwrap()
    }

    #[test]
    fn attachments_go_between_the_text_and_the_reminder() {
        let file = |p: &str| crate::conversation::Attachment {
            path: p.into(),
            text: format!("<file {p}>"),
        };
        let mut user =
            Message::user("explain @a.rs").with_attachments(vec![file("a.rs"), file("b.rs")]);
        user.set_reminder("(rein context)".into());
        let v = wire(&[Message::system("s"), user.clone()], "m", false);
        assert_eq!(
            v[1]["content"],
            "explain @a.rs\n\n<file a.rs>\n\n<file b.rs>\n\n(rein context)"
        );
        assert_eq!(user.approx_chars(), v[1]["content"].as_str().unwrap().len());
        // Stored apart, and a message stored before attachments existed reads as none.
        let stored = serde_json::to_value(&user).unwrap();
        assert_eq!(stored["attachments"][1]["path"], "b.rs");
        let old: Message =
            serde_json::from_value(json!({"role":"user","content":"hi","reminder":"r"})).unwrap();
        assert!(old.attachments().is_empty());
    }

    #[test]
    fn reminders_ride_inside_their_message() {
        let mut user = Message::user("fix it");
        user.set_reminder("(rein context)".into());
        let mut tool = Message::tool("a", "ok");
        tool.set_reminder("(later)".into());
        let h = [
            Message::system("s"),
            user,
            Message::assistant(String::new(), vec![ToolCall::new("a", "bash", "{}")]),
            tool,
        ];
        let v = wire(&h, "m", false);
        assert_eq!(
            v[1],
            json!({"role":"user","content":"fix it\n\n(rein context)"})
        );
        assert_eq!(
            v[3],
            json!({"role":"tool","tool_call_id":"a","content":"ok\n\n(later)"})
        );
        assert_eq!(v.as_array().unwrap().len(), 4);
    }

    /// A message without text of its own (an empty tool result, a user message that is
    /// only a mention) sends its reminder or attachment alone: no blank line before it.
    #[test]
    fn empty_text_with_a_reminder_sends_the_reminder_alone() {
        let mut tool = Message::tool("a", "");
        tool.set_reminder("(later)".into());
        let mut user = Message::user("");
        user.set_reminder("(rein context)".into());
        let h = [
            Message::system("s"),
            Message::user("u"),
            Message::assistant(String::new(), vec![ToolCall::new("a", "bash", "{}")]),
            tool,
            Message::assistant("ok".into(), vec![]),
            user,
        ];
        let v = wire(&h, "m", false);
        assert_eq!(v[3]["content"], "(later)");
        assert_eq!(v[5]["content"], "(rein context)");
        let file = crate::conversation::Attachment {
            path: "a.rs".into(),
            text: "<file a.rs>".into(),
        };
        let mut only_files = Message::user("").with_attachments(vec![file]);
        let v = wire(&[Message::system("s"), only_files.clone()], "m", false);
        assert_eq!(v[1]["content"], "<file a.rs>");
        only_files.set_reminder("(r)".into());
        let v = wire(&[Message::system("s"), only_files], "m", true);
        assert_eq!(v[1]["content"][0]["text"], "<file a.rs>\n\n(r)");
        // Empty text and nothing else stays empty.
        let v = wire(&[Message::system("s"), Message::user("")], "m", false);
        assert_eq!(v[1]["content"], "");
    }

    #[test]
    fn provider_state_goes_back_to_its_own_model_only() {
        let mut call = ToolCall::new("a", "bash", "{}");
        call.extra.insert(
            "extra_content".into(),
            json!({"google":{"thought_signature":"S"}}),
        );
        let reasoning = Reasoning {
            text: "think".into(),
            field: Some("reasoning_content".into()),
            details: vec![json!({"type":"reasoning.text","text":"think","index":0})],
            api: None,
        };
        let with_calls = Message::assistant(String::new(), vec![call])
            .with_reasoning(Some(reasoning.clone()))
            .from_model("m");
        let final_reply = Message::assistant("done".into(), vec![])
            .with_reasoning(Some(reasoning))
            .from_model("m");
        let h = [
            Message::system("s"),
            Message::user("u"),
            with_calls,
            Message::tool("a", "r"),
            final_reply,
        ];
        let v = wire(&h, "m", false);
        assert_eq!(v[2]["reasoning_content"], "think");
        assert_eq!(v[2]["reasoning_details"][0]["text"], "think");
        assert_eq!(
            v[2]["tool_calls"][0]["extra_content"]["google"]["thought_signature"],
            "S"
        );
        assert!(v[2].get("reasoning").is_none());
        // A reply without calls sends its details but not reasoning_content.
        assert!(v[4].get("reasoning_content").is_none());
        assert!(v[4].get("reasoning_details").is_some());
        let other = wire(&h, "another-model", false);
        assert!(other[2].get("reasoning_content").is_none());
        assert!(other[2].get("reasoning_details").is_none());
        assert!(other[2]["tool_calls"][0].get("extra_content").is_none());
    }

    #[test]
    fn cache_markers_on_the_system_message_and_the_last_two_inputs() {
        let h = [
            Message::system("s"),
            Message::user("one"),
            Message::assistant("a".into(), vec![]),
            Message::user("two"),
            Message::assistant("b".into(), vec![]),
            Message::user("three"),
        ];
        let v = wire(&h, "anthropic/claude-sonnet-4.5", true);
        let marked = |i: usize| v[i]["content"].is_array();
        assert!(marked(0) && !marked(1) && !marked(2) && marked(3) && marked(5));
        assert_eq!(
            v[5]["content"],
            json!([{"type":"text","text":"three","cache_control":{"type":"ephemeral"}}])
        );
        assert!(wants_cache_markers("anthropic/claude-sonnet-4.5"));
        // Each of the three ways a Claude model is named, alone.
        assert!(wants_cache_markers("Anthropic/some-model"));
        assert!(wants_cache_markers("vertex/claude-opus-4"));
        assert!(wants_cache_markers("claude-3-5-haiku"));
        assert!(!wants_cache_markers("openai/gpt-4o"));
        assert!(!wants_cache_markers("my-claude"));
    }

    #[test]
    fn a_refusal_is_sent_as_content() {
        let h = [
            Message::system("s"),
            Message::user("u"),
            Message::assistant(String::new(), vec![]).with_refusal(Some("no".into())),
        ];
        assert_eq!(wire(&h, "m", false)[2]["content"], "no");
    }

    fn with_images(id: &str, n: usize) -> Message {
        let mut result =
            crate::conversation::ToolResult::ok(format!("[image: image/png, 3 B] x{n}"));
        result.images = (0..n)
            .map(|i| crate::conversation::Image {
                mime_type: "image/png".into(),
                data: format!("AAA{i}"),
            })
            .collect();
        Message::tool_result(id, result)
    }

    fn sent(history: &[Message], images: bool) -> Value {
        serde_json::to_value(WireMessages {
            history,
            options: WireOptions {
                model: "m",
                cache_control: false,
                images,
            },
        })
        .unwrap()
    }

    #[test]
    fn images_follow_their_results_as_a_user_message_for_models_that_take_them() {
        let calls = vec![
            ToolCall::new("a", "mcp__b__shot", "{}"),
            ToolCall::new("b", "bash", "{}"),
        ];
        let mut history = vec![
            Message::system("s"),
            Message::user("look"),
            Message::assistant(String::new(), calls),
            with_images("a", 2),
            Message::tool("b", "plain"),
        ];
        // The request that sends the results: ends with the images.
        let first = sent(&history, true);
        let roles = |v: &Value| -> Vec<String> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|m| m["role"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(
            roles(&first),
            [
                "system",
                "user",
                "assistant",
                "tool",
                "tool",
                "assistant",
                "user"
            ]
        );
        let messages = first.as_array().unwrap();
        assert_eq!(messages[5]["content"], IMAGES_FOLLOW);
        assert_eq!(
            messages[6]["content"],
            json!([
                {"type": "text", "text": "The 2 images the result of call a returned:"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA0"}},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA1"}},
            ])
        );
        // The tool message itself stays text, with the description.
        assert_eq!(messages[3]["content"], "[image: image/png, 3 B] x2");
        order::check(messages).unwrap();

        // The next request extends it byte for byte, whatever follows.
        history.push(Message::assistant("I see a cat.".into(), Vec::new()));
        history.push(Message::user("and now?"));
        let next = sent(&history, true);
        let next = next.as_array().unwrap();
        assert_eq!(&next[..messages.len()], messages.as_slice());
        order::check(next).unwrap();
        // A turn that ended after the results: the usual note before the user's message.
        history.truncate(5);
        history.push(Message::user("stop"));
        let cut = sent(&history, true);
        order::check(cut.as_array().unwrap()).unwrap();
        assert_eq!(
            &cut.as_array().unwrap()[..messages.len()],
            messages.as_slice()
        );

        // A model that does not take images: the text alone, as before.
        history.truncate(5);
        let plain = sent(&history, false);
        assert_eq!(
            roles(&plain),
            ["system", "user", "assistant", "tool", "tool"]
        );
        assert!(!plain.to_string().contains("base64"));
    }

    #[test]
    fn a_users_images_follow_its_text_as_parts_or_a_line_saying_they_were_not_sent() {
        let shot = crate::conversation::Image {
            mime_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        };
        let mut message = Message::user("what is this [Image #1: png, 8 B]")
            .with_attachments(vec![crate::conversation::Attachment {
                path: "a.rs".into(),
                text: "a.rs:\nfn a() {}".into(),
            }])
            .with_images(vec![shot]);
        message.set_reminder("<reminder>".into());
        let history = vec![Message::system("s"), message];
        let text = "what is this [Image #1: png, 8 B]\n\na.rs:\nfn a() {}\n\n<reminder>";
        assert_eq!(
            sent(&history, true)[1]["content"],
            json!([
                {"type": "text", "text": text},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            ])
        );
        // Marked for the cache: the marker on the text part, the image after it.
        let marked = serde_json::to_value(WireMessages {
            history: &history,
            options: WireOptions {
                model: "m",
                cache_control: true,
                images: true,
            },
        })
        .unwrap();
        assert_eq!(
            marked[1]["content"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert_eq!(marked[1]["content"][1]["type"], "image_url");
        // A model not known to take images: the text and a line saying so.
        assert_eq!(
            sent(&history, false)[1]["content"],
            json!(format!("{text}\n\n{IMAGES_NOT_SENT}"))
        );
        // The estimate counts the image.
        assert_eq!(
            history[1].approx_chars(),
            Message::user(text).approx_chars() + crate::conversation::Image::APPROX_CHARS
        );
    }
}
