//! A session as a Markdown transcript (`rein sessions export ID`).
//!
//! Title and metadata first, then the conversation as the user saw it: user and assistant
//! messages as they were written, each tool call with its arguments in a code block and its
//! result folded to [`RESULT_LINES`] lines, a marker where the history was compacted, and
//! finally the todo list and the rules allowed for the session.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::reader::LoadedSession;
use crate::conversation::Message;
use crate::tools::write_todos::TodoStatus;

/// Lines of a tool result kept in the export.
pub const RESULT_LINES: usize = 40;
/// Characters of a tool result kept in the export, whatever its line count.
const RESULT_CHARS: usize = 4000;

/// The whole session as Markdown.
pub fn export_markdown(session: &LoadedSession) -> String {
    let mut out = String::new();
    let title = session
        .title
        .as_deref()
        .map(flat)
        .unwrap_or_else(|| format!("Session {}", session.meta.id));
    let _ = writeln!(out, "# {title}\n");
    let meta = &session.meta;
    let _ = writeln!(out, "- Session: `{}`", meta.id);
    if !meta.project.as_os_str().is_empty() {
        let _ = writeln!(out, "- Project: `{}`", meta.project.display());
    }
    if !meta.model.is_empty() {
        let _ = writeln!(out, "- Model: `{}`", meta.model);
    }
    let _ = writeln!(out, "- Started: {}", meta.started);
    let _ = writeln!(out, "- Messages: {}", session.message_count);
    if !meta.rein_version.is_empty() {
        let _ = writeln!(out, "- rein {}", meta.rein_version);
    }
    out.push('\n');
    for notice in &session.notices {
        let _ = writeln!(out, "> {}\n", flat(notice));
    }

    let names: HashMap<&str, &str> = session
        .transcript
        .iter()
        .flat_map(|m| match m {
            Message::Assistant { tool_calls, .. } => tool_calls.as_slice(),
            _ => &[],
        })
        .map(|c| (c.id.as_str(), c.function.name.as_str()))
        .collect();
    for (i, message) in session.transcript.iter().enumerate() {
        if session.compactions.contains(&i) {
            compaction_marker(&mut out);
        }
        match message {
            Message::System { .. } => {}
            Message::User { content, .. } => {
                let _ = writeln!(out, "## User\n\n{}\n", content.trim_end());
            }
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                out.push_str("## Assistant\n\n");
                if let Some(text) = content.as_deref().filter(|t| !t.trim().is_empty()) {
                    let _ = writeln!(out, "{}\n", text.trim_end());
                }
                for call in tool_calls {
                    let _ = writeln!(out, "Tool call `{}`:\n", call.function.name);
                    code_block(
                        &mut out,
                        "json",
                        &pretty_arguments(&call.function.arguments),
                    );
                }
            }
            Message::Tool {
                tool_call_id,
                content,
                ..
            } => {
                let name = names.get(tool_call_id.as_str()).copied().unwrap_or("tool");
                let _ = writeln!(out, "Result of `{name}`:\n");
                let (shown, cut) = fold(content);
                code_block(&mut out, "text", &shown);
                if cut > 0 {
                    let _ = writeln!(out, "*({cut} more lines not shown)*\n");
                }
            }
        }
    }
    if session.compactions.contains(&session.transcript.len()) {
        compaction_marker(&mut out);
    }

    if !session.todos.is_empty() {
        out.push_str("## Todo list\n\n");
        for todo in &session.todos {
            let (mark, note) = match todo.status {
                TodoStatus::Completed => ("x", ""),
                TodoStatus::InProgress => (" ", " *(in progress)*"),
                TodoStatus::Pending => (" ", ""),
            };
            let _ = writeln!(out, "- [{mark}] {}{note}", flat(&todo.content));
        }
        out.push('\n');
    }
    if !session.rules.is_empty() {
        out.push_str("## Allowed for this session\n\n");
        for grant in &session.rules {
            let _ = writeln!(out, "- {}", grant.describe());
        }
        out.push('\n');
    }
    out
}

fn compaction_marker(out: &mut String) {
    out.push_str("---\n\n*The history was trimmed or compacted here: from this point the model worked from a shortened history.*\n\n");
}

/// Arguments as indented JSON when they parse, as the model sent them otherwise.
fn pretty_arguments(arguments: &str) -> String {
    serde_json::from_str::<serde_json::Value>(arguments)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| arguments.to_string())
}

/// A fenced block whose fence is longer than any run of backticks inside.
fn code_block(out: &mut String, lang: &str, body: &str) {
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    let _ = writeln!(
        out,
        "{fence}{lang}\n{}\n{fence}\n",
        body.trim_end_matches('\n')
    );
}

/// The first lines of a result, and how many lines were left out.
fn fold(text: &str) -> (String, usize) {
    let total = text.lines().count();
    let mut shown = String::new();
    let mut kept = 0;
    for line in text.lines().take(RESULT_LINES) {
        if shown.len() + line.len() > RESULT_CHARS {
            let room = RESULT_CHARS.saturating_sub(shown.len());
            let mut end = room.min(line.len());
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            shown.push_str(&line[..end]);
            shown.push('…');
            kept += 1;
            break;
        }
        shown.push_str(line);
        shown.push('\n');
        kept += 1;
    }
    (shown, total - kept)
}

fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_results_are_folded() {
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let (shown, cut) = fold(&text);
        assert_eq!(shown.lines().count(), RESULT_LINES);
        assert_eq!(cut, 100 - RESULT_LINES);
        let wide = "é".repeat(5000);
        let (shown, cut) = fold(&wide);
        assert!(shown.len() <= RESULT_CHARS + '…'.len_utf8());
        assert_eq!(cut, 0);
    }

    #[test]
    fn fences_outgrow_backticks_inside() {
        let mut out = String::new();
        code_block(&mut out, "text", "a ```` b");
        assert!(out.starts_with("`````text\n"), "{out}");
        assert!(out.ends_with("\n`````\n\n"), "{out}");
    }
}
