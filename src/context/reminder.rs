//! The late-injected reminder: what changes during a session, told to the model without
//! touching the prefix the provider caches.
//!
//! The system prompt and the stored history stay the same bytes across the requests of a
//! turn. Whatever changes (the time, the git branch, the plan, the files someone else changed
//! since the agent's previous turn) goes into one `user` message
//! built fresh for each request and appended after the history, never stored nor recorded;
//! being last, it differs from one request to the next without breaking the cached prefix.
//! Its text is wrapped in `<system-reminder>` tags and says it comes from the harness, so
//! the model does not take it for the user's words.

use std::time::SystemTime;

use super::changes::{Change, ChangeKind};
use crate::agent::Message;
use crate::tools::write_todos::{Todo, TodoStatus};

/// What goes into one reminder.
#[derive(Debug, Clone, Copy)]
pub struct ReminderInput<'a> {
    pub now: SystemTime,
    /// The project's git branch (or short commit), if it is a repository.
    pub branch: Option<&'a str>,
    /// The plan; nothing is said about it when empty.
    pub todos: &'a [Todo],
    /// Files changed by someone other than the agent since its previous turn.
    pub changed: &'a [Change],
}

/// Most changed files listed by name.
const MAX_CHANGES: usize = 50;

/// The reminder message for one request.
pub fn build(input: ReminderInput<'_>) -> Message {
    Message::user(text(input))
}

/// The reminder's text.
pub fn text(input: ReminderInput<'_>) -> String {
    let mut out = String::from(
        "<system-reminder>\nContext from the rein harness, not from the user; it is refreshed \
         on every request. Do not mention it unless it is relevant.\n",
    );
    // To the minute: the seconds would only add noise.
    let stamp = crate::session::stamp::rfc3339(input.now);
    let minute = stamp.get(..16).unwrap_or(&stamp);
    out.push_str(&format!("time: {} UTC\n", minute.replacen('T', " ", 1)));
    match input.branch {
        Some(branch) => out.push_str(&format!("git branch: {branch}\n")),
        None => out.push_str("git branch: (not a git repository)\n"),
    }
    if !input.todos.is_empty() {
        out.push_str("todo list (keep it current with write_todos):\n");
        for todo in input.todos {
            let mark = match todo.status {
                TodoStatus::Pending => "[ ]",
                TodoStatus::InProgress => "[~]",
                TodoStatus::Completed => "[x]",
            };
            let status = match todo.status {
                TodoStatus::Pending => "pending",
                TodoStatus::InProgress => "in progress",
                TodoStatus::Completed => "completed",
            };
            out.push_str(&format!("{mark} {} ({status})\n", todo.content));
        }
    }
    if !input.changed.is_empty() {
        out.push_str(
            "files changed by someone else since your previous turn (read them again before \
             editing them; what you remember of them may be stale):\n",
        );
        for change in input.changed.iter().take(MAX_CHANGES) {
            let kind = match change.kind {
                ChangeKind::Added => "added",
                ChangeKind::Modified => "modified",
                ChangeKind::Removed => "removed",
            };
            out.push_str(&format!("{kind}: {}\n", change.path.display()));
        }
        if input.changed.len() > MAX_CHANGES {
            let more = input.changed.len() - MAX_CHANGES;
            out.push_str(&format!("... and {more} more\n"));
        }
    }
    out.push_str("</system-reminder>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    fn todo(content: &str, status: TodoStatus) -> Todo {
        Todo {
            content: content.to_string(),
            status,
            active_form: None,
        }
    }

    #[test]
    fn carries_time_branch_and_plan() {
        // 2026-11-30T03:15:42Z
        let now = UNIX_EPOCH + Duration::from_secs(1_796_008_542);
        let todos = [
            todo("read the code", TodoStatus::Completed),
            todo("fix the bug", TodoStatus::InProgress),
            todo("run the tests", TodoStatus::Pending),
        ];
        let text = text(ReminderInput {
            now,
            branch: Some("feature/x"),
            todos: &todos,
            changed: &[Change {
                path: "src/lib.rs".into(),
                kind: ChangeKind::Modified,
            }],
        });
        assert!(text.starts_with("<system-reminder>\n"), "{text}");
        assert!(text.ends_with("</system-reminder>"), "{text}");
        assert!(text.contains("not from the user"));
        assert!(text.contains("time: 2026-11-30 03:15 UTC\n"), "{text}");
        assert!(text.contains("git branch: feature/x\n"));
        assert!(text.contains("[x] read the code (completed)\n"));
        assert!(text.contains("[~] fix the bug (in progress)\n"));
        assert!(text.contains("[ ] run the tests (pending)\n"));
        assert!(text.contains("read them again before editing"), "{text}");
        assert!(text.contains("modified: src/lib.rs\n"), "{text}");
    }

    #[test]
    fn no_plan_no_repository() {
        let text = text(ReminderInput {
            now: UNIX_EPOCH,
            branch: None,
            todos: &[],
            changed: &[],
        });
        assert!(
            !text.contains("todo") && !text.contains("changed"),
            "{text}"
        );
        assert!(text.contains("git branch: (not a git repository)"));
        assert!(text.contains("time: 1970-01-01 00:00 UTC"));
        assert!(matches!(
            build(ReminderInput {
                now: UNIX_EPOCH,
                branch: None,
                todos: &[],
                changed: &[],
            }),
            Message::User { .. }
        ));
    }
}
