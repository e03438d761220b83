//! A continued session's conversation as `session/update`s (`session/load`): the user's
//! messages (with the images they attached), the replies, each tool call announced and finished as it ended, the reasoning,
//! and the todo list last, so the editor shows what the dashboard showed.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, ImageContent, SessionUpdate, TextContent, ToolCallContent,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use rein_core::conversation::{Message, ToolOutcome};
use rein_core::tools::write_todos::Todo;

use super::tool_call;
use super::updates::{bounded, plan, OUTPUT_BYTES};

fn text(s: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(s)))
}

/// The updates that tell `transcript` again, then `todos` as the plan.
pub fn updates(transcript: &[Message], todos: &[Todo], root: &Path) -> Vec<SessionUpdate> {
    let mut out = Vec::new();
    for message in transcript {
        match message {
            Message::User {
                content, images, ..
            } if !content.is_empty() => {
                out.push(SessionUpdate::UserMessageChunk(text(content)));
                // The images the user attached, after the words that name them.
                out.extend(images.iter().map(|image| {
                    SessionUpdate::UserMessageChunk(ContentChunk::new(ContentBlock::Image(
                        ImageContent::new(image.data.clone(), image.mime_type.clone()),
                    )))
                }));
            }
            Message::Assistant {
                content,
                tool_calls,
                reasoning,
                refusal,
                ..
            } => {
                if let Some(thought) = reasoning.as_ref().filter(|r| !r.text.is_empty()) {
                    out.push(SessionUpdate::AgentThoughtChunk(text(&thought.text)));
                }
                for said in [content.as_deref(), refusal.as_deref()]
                    .into_iter()
                    .flatten()
                {
                    if !said.is_empty() {
                        out.push(SessionUpdate::AgentMessageChunk(text(said)));
                    }
                }
                for call in tool_calls {
                    let args =
                        serde_json::from_str(&call.function.arguments).unwrap_or_else(|_| {
                            serde_json::Value::String(call.function.arguments.clone())
                        });
                    // A whole-file write's old text is gone: no diff, rather than one that
                    // shows an overwrite as a new file (as the live announcement).
                    let diff = tool_call::proposed_diff(&call.function.name, &args, root, None)
                        .filter(|_| call.function.name != rein_core::tools::write_file::NAME);
                    out.push(SessionUpdate::ToolCall(tool_call::announce(
                        &call.id,
                        &call.function.name,
                        &args,
                        root,
                        diff,
                    )));
                }
            }
            Message::Tool {
                tool_call_id,
                content,
                outcome,
                ..
            } => {
                let status = match outcome {
                    Some(ToolOutcome::Ok) | None => ToolCallStatus::Completed,
                    Some(_) => ToolCallStatus::Failed,
                };
                let shown: ToolCallContent =
                    ContentBlock::Text(TextContent::new(bounded(content, OUTPUT_BYTES))).into();
                out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    tool_call_id.clone(),
                    ToolCallUpdateFields::new()
                        .status(status)
                        .content(vec![shown]),
                )));
            }
            _ => {}
        }
    }
    if !todos.is_empty() {
        out.push(SessionUpdate::Plan(plan(todos)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rein_core::conversation::{ToolCall, ToolResult};
    use rein_core::tools::write_todos::TodoStatus;

    #[test]
    fn a_conversation_is_told_again_in_order() {
        let shot = rein_core::conversation::Image {
            mime_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        };
        let transcript = vec![
            Message::user("fix the test [Image #1: png, 8 B]").with_images(vec![shot]),
            Message::assistant(
                "Looking.".into(),
                vec![ToolCall::new("c1", "bash", r#"{"command": "cargo test"}"#)],
            ),
            Message::tool_result("c1", ToolResult::error("1 failed")),
            Message::assistant("Fixed.".into(), Vec::new()),
        ];
        let todos = vec![Todo {
            content: "Fix it".into(),
            status: TodoStatus::Completed,
            active_form: None,
        }];
        let sent: Vec<serde_json::Value> = updates(&transcript, &todos, Path::new("/p"))
            .iter()
            .map(|u| serde_json::to_value(u).unwrap())
            .collect();
        let kinds: Vec<&str> = sent
            .iter()
            .filter_map(|u| u["sessionUpdate"].as_str())
            .collect();
        assert_eq!(
            kinds,
            [
                "user_message_chunk",
                "user_message_chunk",
                "agent_message_chunk",
                "tool_call",
                "tool_call_update",
                "agent_message_chunk",
                "plan"
            ]
        );
        assert_eq!(
            sent[0]["content"]["text"],
            "fix the test [Image #1: png, 8 B]"
        );
        assert_eq!(sent[1]["content"]["type"], "image");
        assert_eq!(sent[1]["content"]["mimeType"], "image/png");
        assert_eq!(sent[1]["content"]["data"], "iVBORw0KGgo=");
        assert_eq!(sent[3]["title"], "cargo test");
        assert_eq!(sent[4]["status"], "failed");
        assert_eq!(sent[4]["content"][0]["content"]["text"], "1 failed");
        assert_eq!(sent[5]["content"]["text"], "Fixed.");
    }
}
