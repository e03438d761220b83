//! The late-injected reminder: what changes during a session, told to the model without
//! touching the prefix the provider caches.
//!
//! The system prompt stays the same bytes for the whole session. Whatever changes (the
//! time, the git branch, the plan, the files someone else changed since the agent's
//! previous turn) rides inside a message that is new anyway: the turn's user message, or,
//! when the branch or the plan changed during the turn, the last tool result before the
//! next request. It is stored with that message (apart from its text, so the transcript
//! shows only the user's words), so every later request repeats the same bytes and the
//! prefix cache keeps working; it is never a message of its own, which strict servers
//! refuse (two user messages in a row, a user message after a tool result).
//!
//! The wording is a short parenthesised note after the message's own text that says it
//! comes from rein and is not part of the request: small models answered tagged blocks
//! (`<system-reminder>`) as if they were the question, and did what the user asked when
//! the note came after the request in plain words.

use std::time::SystemTime;

use super::changes::{Change, ChangeKind};
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
    /// Instruction files (AGENTS.md) changed since the conversation began.
    pub instructions_changed: &'a [std::path::PathBuf],
    /// What to say about the approval mode (plan, auto, or back to default); nothing
    /// when `None`.
    pub mode: Option<&'a str>,
    /// The background commands, one line each (`bash-1 \`npm run dev\`: running`).
    pub background: &'a [String],
}

/// Most changed files listed by name.
const MAX_CHANGES: usize = 50;

/// How every reminder begins (tests and tools recognise it by this).
pub const OPENING: &str = "(rein context, not part of the request:";

/// The reminder's text.
pub fn text(input: ReminderInput<'_>) -> String {
    // To the minute: the seconds would only add noise.
    let stamp = crate::text::stamp::rfc3339(input.now);
    let minute = stamp.get(..16).unwrap_or(&stamp);
    let mut out = format!("{OPENING} time {} UTC", minute.replacen('T', " ", 1));
    match input.branch {
        Some(branch) => out.push_str(&format!("; git branch {branch}")),
        None => out.push_str("; not a git repository"),
    }
    out.push('.');
    if let Some(mode) = input.mode {
        out.push_str(&format!("\n{mode}."));
    }
    if !input.todos.is_empty() {
        out.push_str("\ntodo list (keep it current with write_todos):");
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
            out.push_str(&format!("\n{mark} {} ({status})", todo.content));
        }
    }
    if !input.background.is_empty() {
        out.push_str(
            "\nbackground commands (read one's output with bash_output, stop it with bash_kill):",
        );
        for line in input.background {
            out.push_str(&format!("\n{line}"));
        }
    }
    if !input.changed.is_empty() {
        out.push_str(
            "\nfiles changed by someone else since your previous turn (read them again before \
             editing them; what you remember of them may be stale):",
        );
        for change in input.changed.iter().take(MAX_CHANGES) {
            let kind = match change.kind {
                ChangeKind::Added => "added",
                ChangeKind::Modified => "modified",
                ChangeKind::Removed => "removed",
            };
            out.push_str(&format!("\n{kind}: {}", change.path.display()));
        }
        if input.changed.len() > MAX_CHANGES {
            let more = input.changed.len() - MAX_CHANGES;
            out.push_str(&format!("\n... and {more} more"));
        }
    }
    if !input.instructions_changed.is_empty() {
        out.push_str(
            "\nproject instructions changed since this conversation began (the system prompt \
             keeps the text it started with until /clear or the next session; read the file \
             if the change matters to the task):",
        );
        for path in input.instructions_changed.iter().take(MAX_CHANGES) {
            out.push_str(&format!("\n{}", path.display()));
        }
    }
    out.push(')');
    out
}

/// How a message the user sent during the turn begins, where it rides on the last tool
/// result (see [`with_user_messages`]).
pub const USER_WROTE: &str = "(The user sent this while you were working; it is part of \
                              the request, take it into account before you go on:)";

/// A tool result's reminder slot with the user's messages sent during the turn added: the
/// reminder already there (if any), then each message after [`USER_WROTE`]. Riding in the
/// result keeps the order every server accepts (a user message right after a tool result
/// is refused by some), as a mid-turn reminder does.
pub fn with_user_messages(reminder: Option<&str>, messages: &[String]) -> String {
    let mut out = reminder.unwrap_or_default().to_string();
    for message in messages {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(USER_WROTE);
        out.push('\n');
        out.push_str(message);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_messages_follow_the_reminder_already_there() {
        let two = ["stop".to_string(), "use tabs".to_string()];
        assert_eq!(
            with_user_messages(None, &two[..1]),
            format!("{USER_WROTE}\nstop")
        );
        assert_eq!(
            with_user_messages(Some("(rein context)"), &two),
            format!("(rein context)\n\n{USER_WROTE}\nstop\n\n{USER_WROTE}\nuse tabs")
        );
    }
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
            instructions_changed: &[],
            mode: Some("approval mode: plan"),
            background: &["bash-1 `npm run dev`: running".to_string()],
        });
        assert!(text.starts_with(OPENING), "{text}");
        assert!(text.ends_with(')'), "{text}");
        assert!(text.contains("not part of the request"));
        assert!(
            text.contains("\nbackground commands (read one's output with bash_output, stop it with bash_kill):\nbash-1 `npm run dev`: running\n"),
            "{text}"
        );
        assert!(
            text.starts_with(
                "(rein context, not part of the request: time 2026-11-30 03:15 UTC; git branch feature/x.\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("feature/x.\napproval mode: plan.\ntodo list"),
            "{text}"
        );
        assert!(text.contains("\n[x] read the code (completed)\n"));
        assert!(text.contains("\n[~] fix the bug (in progress)\n"));
        assert!(text.contains("\n[ ] run the tests (pending)\n"));
        assert!(text.contains("read them again before editing"), "{text}");
        assert!(text.contains("\nmodified: src/lib.rs)"), "{text}");
    }

    #[test]
    fn names_changed_instruction_files_and_when_they_apply() {
        let text = text(ReminderInput {
            now: UNIX_EPOCH,
            branch: None,
            todos: &[],
            changed: &[],
            instructions_changed: &["/repo/AGENTS.md".into()],
            mode: None,
            background: &[],
        });
        assert!(
            text.ends_with(
                "until /clear or the next session; read the file if the change matters to the \
                 task):\n/repo/AGENTS.md)"
            ),
            "{text}"
        );
    }

    #[test]
    fn no_plan_no_repository() {
        let text = text(ReminderInput {
            now: UNIX_EPOCH,
            branch: None,
            todos: &[],
            changed: &[],
            instructions_changed: &[],
            mode: None,
            background: &[],
        });
        assert!(
            !text.contains("todo") && !text.contains("changed") && !text.contains("mode"),
            "{text}"
        );
        assert_eq!(
            text,
            "(rein context, not part of the request: time 1970-01-01 00:00 UTC; not a git repository.)"
        );
    }
}
