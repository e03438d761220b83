//! The session store through its public API: files written by `SessionWriter`, read back by
//! `load`, listed by `list`, exported as Markdown; torn and garbage lines; a writer killed
//! with SIGKILL in a child process (this test binary run again in a "writer" mode).

use std::path::Path;

use rein_core::agent::{Message, ToolCall};
use rein_core::session::{SessionMeta, SessionWriter};
use rein_core::tools::write_todos::{Todo, TodoStatus};

mod crashes;
mod listing;
mod round_trip;

fn new_writer(data_dir: &Path, project: &str) -> SessionWriter {
    SessionWriter::create(data_dir, SessionMeta::new(project, "test-model")).unwrap()
}

fn todo(content: &str, status: TodoStatus) -> Todo {
    Todo {
        content: content.into(),
        status,
        active_form: None,
    }
}

fn calls(ids: &[&str]) -> Message {
    Message::assistant(
        String::new(),
        ids.iter()
            .map(|id| ToolCall::new(*id, "bash", r#"{"command":"ls"}"#))
            .collect(),
    )
}

/// Every assistant message with calls is followed by exactly one result per call, in
/// call order.
fn assert_valid_request(history: &[Message]) {
    let mut i = 0;
    while i < history.len() {
        if let Message::Assistant { tool_calls, .. } = &history[i] {
            let mut ids: Vec<&str> = tool_calls.iter().map(|c| c.id.as_str()).collect();
            i += 1;
            while let Some(Message::Tool { tool_call_id, .. }) = history.get(i) {
                assert!(
                    ids.first() == Some(&tool_call_id.as_str()),
                    "result {tool_call_id} where {ids:?} wait, in that order"
                );
                ids.remove(0);
                i += 1;
            }
            assert!(ids.is_empty(), "calls {ids:?} have no result");
        } else {
            assert!(!matches!(history[i], Message::System { .. }));
            assert!(!matches!(history[i], Message::Tool { .. }), "orphan result");
            i += 1;
        }
    }
}
