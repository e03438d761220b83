//! Agent events in words, once for both front ends.
//!
//! The dashboard and headless show the same events: a tool call's key argument, a retry,
//! what a subagent spent, a todo item, a compaction, a server's form answered in print
//! mode. The wording lives here, built on [`rein_core::text`]'s short words (a line cut to a
//! length, a duration, a token count), which every module may use; each front end only
//! lays the words out (marks, colours, indentation, its own prefix) and cuts them to its
//! width. Nothing here sanitises: the words keep whatever the model or a tool wrote, and
//! both front ends pass them through [`rein_core::text::sanitize`] as they print.

use std::time::Duration;

use rein_core::agent::Usage;
use rein_core::text::{clip, duration, one_line, plural, tokens};
use rein_core::tools::write_todos::{Todo, TodoStatus};

/// The argument worth showing for a tool call: a plan's size ("3 items"; its items show as
/// todos), else `command`, `path`, (a skill's) `name` or (a task's) `description` when the
/// call has one, else the arguments as compact JSON (or the raw text when they were not
/// JSON); on one line.
pub fn key_argument(args: &serde_json::Value) -> String {
    if let Some(todos) = args.get("todos").and_then(|t| t.as_array()) {
        return plural(todos.len(), "item");
    }
    let text = ["command", "path", "name", "description"]
        .iter()
        .find_map(|k| args.get(k).and_then(|v| v.as_str()))
        .map(str::to_string)
        .unwrap_or_else(|| match args {
            serde_json::Value::String(raw) => raw.clone(),
            other => other.to_string(),
        });
    one_line(&text)
}

/// What a front end says of an event that comes while the session ends, after its
/// screen is gone (the SessionEnd hooks' words, the notice that rein waits for them);
/// `None` for the rest.
pub fn at_end(event: &rein_core::agent::AgentEvent) -> Option<String> {
    use rein_core::agent::AgentEvent;
    match event {
        AgentEvent::Hook { event, message, .. } => Some(format!("hook {event}: {message}")),
        AgentEvent::Notice { message } => Some(message.clone()),
        AgentEvent::Error { message } => Some(format!("error: {message}")),
        _ => None,
    }
}

/// "retrying in 2.0s (attempt 2 of 5): HTTP 503" (the reason on one line).
pub fn retry(attempt: u32, max_attempts: u32, delay: Duration, reason: &str) -> String {
    format!(
        "retrying in {} (attempt {attempt} of {max_attempts}): {}",
        duration(delay),
        one_line(reason)
    )
}

/// What a subagent waiting for a slot (`subagent.max_parallel`) says.
pub const SUBAGENT_QUEUED: &str = "queued: waits for one of the running subagents to finish";

/// "3 model calls · ~2.4k tokens · stopped early (subagent.max_steps)": what a finished
/// subagent spent (~ when the tokens are rein's estimate; no tokens when none were
/// counted).
pub fn subagent_spent(steps: u32, usage: &Usage, stopped_early: bool) -> String {
    let mut parts = vec![plural(steps as usize, "model call")];
    let used = usage.prompt_tokens + usage.completion_tokens;
    if used > 0 {
        let about = if usage.estimated { "~" } else { "" };
        parts.push(format!("{about}{} tokens", tokens(used)));
    }
    if stopped_early {
        parts.push("stopped early (subagent.max_steps)".to_string());
    }
    parts.join(" · ")
}

/// What a todo item says: its in-progress wording (`active_form`) while it runs, else its
/// content.
pub fn todo_wording(todo: &Todo) -> &str {
    match (&todo.status, &todo.active_form) {
        (TodoStatus::InProgress, Some(active)) if !active.trim().is_empty() => active,
        _ => &todo.content,
    }
}

/// "3/7": completed items over all.
pub fn todo_counts(todos: &[Todo]) -> String {
    let done = todos
        .iter()
        .filter(|t| t.status == TodoStatus::Completed)
        .count();
    format!("{done}/{}", todos.len())
}

/// The item a plan is at: the one in progress, else the next pending one.
pub fn todo_current(todos: &[Todo]) -> Option<&Todo> {
    todos
        .iter()
        .find(|t| t.status == TodoStatus::InProgress)
        .or_else(|| todos.iter().find(|t| t.status == TodoStatus::Pending))
}

/// The folders' instruction files the agent loaded as it began to work there (their
/// labels), said once: "instruction files for the folders worked in, sent to the model
/// with the next message: /p/sub/AGENTS.md (120 bytes)".
pub fn instructions_added(files: &[String]) -> String {
    format!(
        "instruction files for the folders worked in, sent to the model with the next \
         message: {}",
        files.join(", ")
    )
}

/// "compacting 3 messages".
pub fn compacting(messages: usize) -> String {
    format!("compacting {}", plural(messages, "message"))
}

/// "compacting 40 messages in 2 pieces (the context is nearly full)…": a compaction that
/// began, `auto` when the budget called for it.
pub fn compaction_started(messages: usize, pieces: usize, auto: bool) -> String {
    let pieces = if pieces > 1 {
        format!(" in {pieces} pieces")
    } else {
        String::new()
    };
    let why = if auto {
        " (the context is nearly full)"
    } else {
        ""
    };
    format!("{}{pieces}{why}…", compacting(messages))
}

/// What is said after a reply marked as a refusal.
pub const REFUSAL: &str = "the model refused: its reply is a refusal, not an answer";

/// How print mode answered `form` (a server's elicitation): accepted with `defaults`
/// (`--yes` and every required field has one), or declined and why. One line.
pub fn form_answered_headless(
    form: &rein_core::elicitation::Form,
    defaults: Option<&serde_json::Map<String, serde_json::Value>>,
    yes: bool,
) -> String {
    let asked = format!(
        "the MCP server {:?} asked for a form ({})",
        form.server,
        clip(&one_line(&form.message), 160)
    );
    match defaults {
        Some(values) if values.is_empty() => format!("{asked}; --yes accepted it (it has no fields)"),
        Some(values) => {
            let shown: Vec<String> = values
                .iter()
                .take(8)
                .map(|(k, v)| {
                    let key = rein_core::text::sanitize::sanitize(k);
                    let value = rein_core::text::sanitize::sanitize(&v.to_string()).into_owned();
                    format!("{} = {}", clip(&key, 40), clip(&value, 60))
                })
                .collect();
            let more = values.len().saturating_sub(8);
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            format!("{asked}; --yes accepted it with its defaults: {}{more}", shown.join(", "))
        }
        None if yes => {
            let missing = form.required_without_default(5);
            format!(
                "{asked}; declined: its required field{} {} ha{} no default, and print mode has no one to fill {} in",
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", "),
                if missing.len() == 1 { "s" } else { "ve" },
                if missing.len() == 1 { "it" } else { "them" },
            )
        }
        None => format!(
            "{asked}; declined: print mode has no one to fill it in (with --yes rein accepts a form whose required fields all have defaults)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_argument_is_the_command_path_or_name_on_one_line() {
        let arg = |v| key_argument(&v);
        assert_eq!(arg(serde_json::json!({"command": "ls"})), "ls");
        assert_eq!(
            arg(serde_json::json!({"path": "a.rs", "offset": 2})),
            "a.rs"
        );
        assert_eq!(arg(serde_json::json!("{broken")), "{broken");
        assert_eq!(arg(serde_json::json!({"name": "review"})), "review");
        assert_eq!(
            arg(serde_json::json!({"description": "find it"})),
            "find it"
        );
        assert_eq!(arg(serde_json::json!({"todos": [1, 2]})), "2 items");
        assert_eq!(arg(serde_json::json!({"command": "a\r\nb\n"})), "a ↵ b");
        assert_eq!(arg(serde_json::json!({"x": 1})), "{\"x\":1}");
    }

    #[test]
    fn a_retry_and_a_subagent_in_words() {
        let delay = Duration::from_millis(2000);
        assert_eq!(
            retry(2, 5, delay, "HTTP 503\nbusy"),
            "retrying in 2.0s (attempt 2 of 5): HTTP 503 ↵ busy"
        );
        let usage = Usage {
            prompt_tokens: 2000,
            completion_tokens: 400,
            total_tokens: 2400,
            cached_tokens: None,
            estimated: true,
            cache_write_tokens: None,
        };
        assert_eq!(
            subagent_spent(3, &usage, true),
            "3 model calls · ~2.4k tokens · stopped early (subagent.max_steps)"
        );
        assert_eq!(subagent_spent(1, &Usage::default(), false), "1 model call");
    }

    #[test]
    fn a_todo_reads_in_its_active_form_while_it_runs() {
        let todo = |status, active: Option<&str>| Todo {
            content: "Fix it".to_string(),
            status,
            active_form: active.map(str::to_string),
        };
        let running = todo(TodoStatus::InProgress, Some("Fixing it"));
        assert_eq!(todo_wording(&running), "Fixing it");
        assert_eq!(
            todo_wording(&todo(TodoStatus::InProgress, Some(" "))),
            "Fix it"
        );
        assert_eq!(
            todo_wording(&todo(TodoStatus::Pending, Some("Fixing it"))),
            "Fix it"
        );
        let done = todo(TodoStatus::Completed, None);
        let pending = todo(TodoStatus::Pending, None);
        let plan = [done.clone(), pending.clone(), running.clone()];
        assert_eq!(todo_counts(&plan), "1/3");
        assert_eq!(todo_current(&plan), Some(&running));
        assert_eq!(todo_current(&plan[..2]), Some(&pending));
    }

    #[test]
    fn compaction_in_words() {
        assert_eq!(compaction_started(1, 1, false), "compacting 1 message…");
        assert_eq!(
            compaction_started(40, 2, true),
            "compacting 40 messages in 2 pieces (the context is nearly full)…"
        );
    }
}
