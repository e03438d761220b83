//! A request in Anthropic's Messages API (`POST /v1/messages`), derived from the stored
//! history. Being written (issue 27): see the branch's helper brief.

use serde_json::Value;

use super::{Message, NativeOptions};

/// The request body for `history` with `tools` (chat-completions tool schemas).
pub fn request(history: &[Message], tools: &Value, options: &NativeOptions<'_>) -> Value {
    let _ = (history, tools, options);
    Value::Null
}
