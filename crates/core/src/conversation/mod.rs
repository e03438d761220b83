//! The conversation: system, user, assistant and tool messages, below the agent, the
//! context layers and the session store, which all speak it.
//!
//! A [`Message`] is what rein keeps; its serde form is the session file's. What goes to the
//! server is derived from it in [`wire`]: the order every server accepts (synthetic
//! assistant notes where the stored history cannot give it, see [`order`]), the reminder a
//! user message or tool result carries folded into its content, and the provider state an
//! assistant message was streamed with (reasoning fields, signatures on tool calls) sent
//! back as it arrived.

pub mod anthropic;
pub mod image;
pub mod mention;
pub mod order;
pub mod outcome;
pub mod responses;
pub mod wire;

pub use image::Image;
pub use mention::Attachment;
pub use outcome::{ToolOutcome, ToolResult};

use serde::{Deserialize, Serialize};

/// One message of the chat history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message {
    System {
        content: String,
    },
    User {
        content: String,
        /// The harness's reminder sent with this message (time, branch, plan, changed
        /// files); kept apart so the transcript shows only the user's words, and stored so
        /// a resumed session sends the same bytes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reminder: Option<String>,
        /// The files the user mentioned with `@path`, as the model reads them (sent
        /// between the user's words and the reminder); kept apart so the transcript shows
        /// chips, not contents. Session files written before rein attached files have none.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attachments: Vec<Attachment>,
        /// The images the user attached (an editor's image blocks), each named in the text
        /// where it was attached ([`image::Checked::label`]); sent after the text to a
        /// model that takes images, left out with a line saying so for one that does not.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
    },
    Assistant {
        /// `None` when the reply was only tool calls (sent as `null`).
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        /// What the server streamed besides the text: reasoning and its state.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<Reasoning>,
        /// A refusal the model gave instead of an answer (OpenAI's `refusal`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        refusal: Option<String>,
        /// The model that wrote it: provider state goes back only to that model (another
        /// server may reject fields it does not know).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    Tool {
        tool_call_id: String,
        content: String,
        /// A reminder that rode on this result because the state it reports changed
        /// during the turn (see [`Message::User`]'s).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reminder: Option<String>,
        /// How the call ended; `None` in session files written before rein recorded it
        /// (the session reader then guesses, see [`crate::session::tool_outcome`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<ToolOutcome>,
        /// The images the result carries (described in `content` too); sent to a model
        /// that takes images, in a user message after the call's results (see
        /// [`wire`]). Dropped with the rest when the result is stubbed.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
    },
}

/// The wire API a model is spoken to in: OpenAI's chat completions (every compatible
/// server), OpenAI's Responses, or Anthropic's Messages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Api {
    #[default]
    Chat,
    Responses,
    Anthropic,
}

impl Api {
    /// Every API, in the order the settings name them.
    pub const ALL: [Api; 3] = [Api::Chat, Api::Responses, Api::Anthropic];

    /// The API's name in the settings (`api = "..."`).
    pub fn name(self) -> &'static str {
        match self {
            Api::Chat => "chat",
            Api::Responses => "responses",
            Api::Anthropic => "anthropic",
        }
    }

    /// The API a settings value names.
    pub fn from_name(name: &str) -> Option<Api> {
        Api::ALL.into_iter().find(|a| a.name() == name)
    }
}

/// How a model is spoken to: the API, and that API's settings for it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ApiSettings {
    pub api: Api,
    /// Responses: `reasoning.effort` (none: no reasoning settings sent).
    pub reasoning_effort: Option<String>,
    /// Anthropic: the thinking budget in tokens (none: thinking off).
    pub thinking_budget: Option<u64>,
    /// Anthropic: the cache breakpoints' time to live (`"1h"`; none: the API's).
    pub cache_ttl: Option<String>,
    /// The most tokens the model's reply may have: what a request asks for is kept under
    /// it, and Anthropic, which needs a figure, is sent it when nothing else is asked.
    pub output_limit: Option<u64>,
}

/// What a native API's request (`responses`, `anthropic`) is written with besides the
/// history and the tools.
#[derive(Debug, Clone, Copy, Default)]
pub struct NativeOptions<'a> {
    /// The model the request goes to; provider state goes back only to the model (and
    /// the API) that produced it.
    pub model: &'a str,
    /// The most tokens the reply may have (Anthropic requires one; the wire writes a
    /// default when none is given).
    pub max_tokens: Option<u64>,
    /// The model takes images: tool results' images are sent as image parts.
    pub images: bool,
    /// Responses: `prompt_cache_key`.
    pub cache_key: Option<&'a str>,
    /// Anthropic: the breakpoints' `ttl` (`"1h"`); none: the API's default.
    pub cache_ttl: Option<&'a str>,
    /// Responses: `reasoning.effort` (with `summary: "auto"`); none: no `reasoning`.
    pub reasoning_effort: Option<&'a str>,
    /// Anthropic: `thinking.budget_tokens`; none: thinking off.
    pub thinking_budget: Option<u64>,
}

/// The reasoning a reply was streamed with, and the provider state that must go back.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reasoning {
    /// The reasoning text as shown to the user.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// The wire field the text came in (`reasoning_content` or `reasoning`), or `None`
    /// when it came some other way (Magistral's `thinking` content parts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// OpenRouter's `reasoning_details`, merged from the stream's pieces (encrypted
    /// Gemini state, Anthropic signatures).
    /// With `api` set, the reply's items in that API's own form instead, in the order
    /// they streamed: Responses output items (reasoning items whole, with their
    /// `encrypted_content`; function calls and messages as `{"type", "call_id"}` places),
    /// or Anthropic content blocks (thinking and redacted_thinking blocks whole, with their
    /// signatures; text and tool_use blocks as places). That API's wire sends them back in
    /// that order; no other API's wire sends them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<serde_json::Value>,
    /// The API `details` belong to; `None` for chat completions (sessions written before
    /// rein spoke other APIs have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<Api>,
}

impl Reasoning {
    pub fn is_empty(&self) -> bool {
        self.text.is_empty() && self.details.is_empty()
    }
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Message::System {
            content: content.into(),
        }
    }

    pub fn user(content: impl Into<String>) -> Self {
        Message::User {
            content: content.into(),
            reminder: None,
            attachments: Vec::new(),
            images: Vec::new(),
        }
    }

    pub fn tool(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Message::Tool {
            tool_call_id: tool_call_id.into(),
            content: content.into(),
            reminder: None,
            outcome: None,
            images: Vec::new(),
        }
    }

    /// The result of call `tool_call_id`, with how it ended.
    pub fn tool_result(tool_call_id: impl Into<String>, result: ToolResult) -> Self {
        Message::Tool {
            tool_call_id: tool_call_id.into(),
            content: result.text,
            reminder: None,
            outcome: Some(result.outcome),
            images: result.images,
        }
    }

    /// How a tool call ended, as recorded (a tool result; `None` for other messages and
    /// for results recorded before rein kept outcomes).
    pub fn outcome(&self) -> Option<ToolOutcome> {
        match self {
            Message::Tool { outcome, .. } => *outcome,
            _ => None,
        }
    }

    /// An assistant message. A tool-only reply sends `content: null`; a reply with neither
    /// text nor calls keeps `""`, since some servers reject a null content without calls.
    pub fn assistant(text: String, tool_calls: Vec<ToolCall>) -> Self {
        Message::Assistant {
            content: if text.is_empty() && !tool_calls.is_empty() {
                None
            } else {
                Some(text)
            },
            tool_calls,
            reasoning: None,
            refusal: None,
            model: None,
        }
    }

    /// This message marked as written by `name` (an assistant message; others unchanged).
    pub fn from_model(mut self, name: &str) -> Self {
        if let Message::Assistant { model, .. } = &mut self {
            *model = Some(name.to_string());
        }
        self
    }

    /// This message with `reasoning` attached (an assistant message; others unchanged).
    pub fn with_reasoning(mut self, value: Option<Reasoning>) -> Self {
        if let Message::Assistant { reasoning, .. } = &mut self {
            *reasoning = value.filter(|r| !r.is_empty());
        }
        self
    }

    /// This message with a refusal (an assistant message; others unchanged).
    pub fn with_refusal(mut self, value: Option<String>) -> Self {
        if let Message::Assistant { refusal, .. } = &mut self {
            *refusal = value.filter(|r| !r.is_empty());
        }
        self
    }

    /// The message's own text: the user's words, the reply, the result (no reminder).
    pub fn text(&self) -> &str {
        match self {
            Message::System { content }
            | Message::User { content, .. }
            | Message::Tool { content, .. } => content,
            Message::Assistant { content, .. } => content.as_deref().unwrap_or(""),
        }
    }

    /// The reminder this message carries, if any.
    pub fn reminder(&self) -> Option<&str> {
        match self {
            Message::User { reminder, .. } | Message::Tool { reminder, .. } => reminder.as_deref(),
            _ => None,
        }
    }

    /// Attach `text` as this message's reminder; false (and nothing changes) for a system
    /// or assistant message, which never carry one.
    pub fn set_reminder(&mut self, text: String) -> bool {
        match self {
            Message::User { reminder, .. } | Message::Tool { reminder, .. } => {
                *reminder = Some(text);
                true
            }
            _ => false,
        }
    }

    /// The files attached to this message (a user message's; none for others).
    pub fn attachments(&self) -> &[Attachment] {
        match self {
            Message::User { attachments, .. } => attachments,
            _ => &[],
        }
    }

    /// The images this message carries: a user message's attached ones, a tool result's.
    pub fn images(&self) -> &[Image] {
        match self {
            Message::User { images, .. } | Message::Tool { images, .. } => images,
            _ => &[],
        }
    }

    /// This message with `pictures` attached (a user message; others unchanged).
    pub fn with_images(mut self, pictures: Vec<Image>) -> Self {
        if let Message::User { images, .. } = &mut self {
            *images = pictures;
        }
        self
    }

    /// This message with `files` attached (a user message; others unchanged).
    pub fn with_attachments(mut self, files: Vec<Attachment>) -> Self {
        if let Message::User { attachments, .. } = &mut self {
            *attachments = files;
        }
        self
    }

    /// The characters the attachments add on the wire (each text and the blank line
    /// before it, see [`wire`]).
    pub fn attachment_chars(&self) -> usize {
        self.attachments().iter().map(|a| a.text.len() + 2).sum()
    }

    /// The characters the reminder adds on the wire (its text and the blank line before it,
    /// see [`wire`]).
    pub fn reminder_chars(&self) -> usize {
        self.reminder().map_or(0, |r| r.len() + 2)
    }

    /// The characters of reasoning state that go back with this message (see
    /// [`wire`]): `reasoning_content` on a message with tool calls, `reasoning_details`.
    pub fn reasoning_chars(&self) -> usize {
        match self {
            Message::Assistant {
                reasoning: Some(r),
                tool_calls,
                ..
            } => {
                let text =
                    if r.field.as_deref() == Some("reasoning_content") && !tool_calls.is_empty() {
                        r.text.len()
                    } else {
                        0
                    };
                text + r.details.iter().map(|d| d.to_string().len()).sum::<usize>()
            }
            _ => 0,
        }
    }

    /// The text a token estimate is based on: content, reminder, tool-call names and
    /// arguments, and the reasoning that goes back with it.
    pub fn approx_chars(&self) -> usize {
        match self {
            Message::System { content } => content.len(),
            Message::User {
                content, images, ..
            } => {
                content.len()
                    + self.attachment_chars()
                    + self.reminder_chars()
                    + images.len() * Image::APPROX_CHARS
            }
            Message::Tool {
                content, images, ..
            } => content.len() + 16 + self.reminder_chars() + images.len() * Image::APPROX_CHARS,
            Message::Assistant {
                content,
                tool_calls,
                refusal,
                ..
            } => {
                content.as_deref().map_or(0, str::len)
                    + refusal.as_deref().map_or(0, str::len)
                    + self.reasoning_chars()
                    + tool_calls
                        .iter()
                        .map(|c| c.function.name.len() + c.function.arguments.len() + 24)
                        .sum::<usize>()
            }
        }
    }
}

/// A tool call as the model made it: arguments stay the raw text the model produced, so a
/// malformed call is sent back exactly as it was and the error result makes sense.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    pub function: FunctionCall,
    /// Fields the server sent with the call beyond these (Gemini's `extra_content` with
    /// its thought signature): sent back with it exactly as received.
    #[serde(flatten, default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

fn function_type() -> String {
    "function".to_string()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    pub name: String,
    pub arguments: String,
}

impl ToolCall {
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            kind: function_type(),
            function: FunctionCall {
                name: name.into(),
                arguments: arguments.into(),
            },
            extra: serde_json::Map::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_token_estimate_counts_each_part_of_a_message_once() {
        let call = ToolCall::new("c1", "bash", r#"{"command":"ls"}"#);
        let reasoning = |field: &str| Reasoning {
            text: "thinking".into(),
            field: Some(field.into()),
            details: vec![json!({"a": 1})],
            api: None,
        };
        let reply = |calls: Vec<ToolCall>, field: &str| Message::Assistant {
            content: Some("hello".into()),
            tool_calls: calls,
            reasoning: Some(reasoning(field)),
            refusal: Some("no".into()),
            model: None,
        };
        // `reasoning_content` text goes back only with calls; the details always do.
        let with_calls = reply(vec![call.clone()], "reasoning_content");
        assert_eq!(with_calls.reasoning_chars(), 8 + 7);
        assert_eq!(reply(Vec::new(), "reasoning_content").reasoning_chars(), 7);
        assert_eq!(reply(vec![call.clone()], "reasoning").reasoning_chars(), 7);
        assert_eq!(Message::user("x").reasoning_chars(), 0);
        // Text, refusal, reasoning, and each call's name, arguments and 24 of framing.
        assert_eq!(with_calls.approx_chars(), 5 + 2 + 15 + (4 + 16 + 24));
        let mut user = Message::user("fix it");
        assert!(user.set_reminder("(ctx)".into()));
        assert_eq!(user.approx_chars(), 6 + (5 + 2));
        assert_eq!(Message::tool("c1", "out").approx_chars(), 3 + 16);
        let mut result = Message::tool("c1", "out");
        assert!(result.set_reminder("(ctx)".into()));
        assert_eq!(result.approx_chars(), 3 + 16 + (5 + 2));
    }

    /// A call a server sends without `type` is a function call (the only kind there is).
    #[test]
    fn a_call_without_a_type_is_a_function() {
        let call: ToolCall = serde_json::from_value(json!({
            "id": "c1",
            "function": {"name": "bash", "arguments": "{}"}
        }))
        .unwrap();
        assert_eq!(call.kind, "function");
    }

    #[test]
    fn text_outcome_and_null_content() {
        let call = ToolCall::new("c1", "bash", "{}");
        assert_eq!(Message::user("fix it").text(), "fix it");
        assert_eq!(Message::assistant("done".into(), Vec::new()).text(), "done");
        // Calls with text keep it; calls alone send null; neither keeps "".
        let both = Message::assistant("looking".into(), vec![call.clone()]);
        assert!(matches!(&both, Message::Assistant { content: Some(t), .. } if t == "looking"));
        let calls = Message::assistant(String::new(), vec![call]);
        assert!(matches!(calls, Message::Assistant { content: None, .. }));
        let empty = Message::assistant(String::new(), Vec::new());
        assert!(matches!(&empty, Message::Assistant { content: Some(t), .. } if t.is_empty()));
        let result = Message::tool_result("c1", ToolResult::error("failed"));
        assert_eq!(result.outcome(), Some(ToolOutcome::Error));
        assert_eq!(Message::tool("c1", "out").outcome(), None);
    }

    #[test]
    fn stored_form_keeps_reminders_and_provider_state_apart() {
        let mut u = Message::user("fix it");
        assert!(u.set_reminder("(rein context)".into()));
        assert_eq!(
            serde_json::to_value(&u).unwrap(),
            json!({"role":"user","content":"fix it","reminder":"(rein context)"})
        );
        let mut call = ToolCall::new("c1", "bash", "{}");
        call.extra.insert(
            "extra_content".into(),
            json!({"google":{"thought_signature":"sig"}}),
        );
        let a = Message::assistant(String::new(), vec![call])
            .with_reasoning(Some(Reasoning {
                text: "think".into(),
                field: Some("reasoning_content".into()),
                details: vec![],
                api: None,
            }))
            .from_model("m");
        let v = serde_json::to_value(&a).unwrap();
        assert_eq!(
            v["tool_calls"][0]["extra_content"]["google"]["thought_signature"],
            "sig"
        );
        assert_eq!(v["reasoning"]["text"], "think");
        let back: Message = serde_json::from_value(v).unwrap();
        assert_eq!(back, a);
        // A session written before these fields existed still reads.
        let old: Message = serde_json::from_value(json!({"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{}"}}]})).unwrap();
        assert!(matches!(
            old,
            Message::Assistant {
                reasoning: None,
                ..
            }
        ));
        let old: Message = serde_json::from_value(json!({"role":"user","content":"hi"})).unwrap();
        assert_eq!(old, Message::user("hi"));
    }
}
