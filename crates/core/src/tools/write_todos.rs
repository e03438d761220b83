//! `write_todos`: the agent's plan, as a list the user watches.
//!
//! The model sends the whole list each time; it is validated before it replaces the old one
//! (non-empty items, a known status, at most one in progress), so a bad list is an error
//! result and the old list stays. The list lives in the session ([`TodoList`], shared through
//! the tool context); the agent announces each accepted list to the front ends.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{ToolContext, ToolSpec};

pub const NAME: &str = "write_todos";

/// Most items a list may hold.
const MAX_ITEMS: usize = 100;
/// Longest item text kept.
const MAX_TEXT: usize = 500;

/// Where an item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

/// One item of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Todo {
    pub content: String,
    pub status: TodoStatus,
    /// The in-progress wording ("Running the tests").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_form: Option<String>,
}

/// The session's todo list, shared between the tool and the agent.
pub type TodoList = Arc<Mutex<Vec<Todo>>>;

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: include_str!("../../assets/tools/write_todos.md"),
        parameters: json!({
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "description": "The whole list, in order.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string", "description": "What to do, in the imperative (\"Run the tests\")."},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                            "active_form": {"type": "string", "description": "The same, as in progress (\"Running the tests\")."}
                        },
                        "required": ["content", "status"]
                    }
                }
            },
            "required": ["todos"],
            "additionalProperties": false
        }),
    }
}

#[derive(Debug, Deserialize)]
pub struct Args {
    pub todos: Vec<serde_json::Value>,
}

/// Check a list as the model sent it; the error names the item and the problem.
pub fn validate(items: &[serde_json::Value]) -> Result<Vec<Todo>, String> {
    if items.len() > MAX_ITEMS {
        return Err(format!(
            "the list has {} items; keep it to {MAX_ITEMS} or fewer",
            items.len()
        ));
    }
    let mut todos = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let n = i + 1;
        let Some(obj) = item.as_object() else {
            return Err(format!(
                "item {n} is not an object with `content` and `status`"
            ));
        };
        let text = |key: &str| -> Result<Option<String>, String> {
            match obj.get(key) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(serde_json::Value::String(s)) => Ok(Some(clip(s.trim()))),
                Some(_) => Err(format!("item {n}: `{key}` must be a string")),
            }
        };
        let content = text("content")?
            .filter(|c| !c.is_empty())
            .ok_or_else(|| format!("item {n}: `content` is missing or empty"))?;
        let status = match text("status")?.as_deref() {
            Some("pending") => TodoStatus::Pending,
            Some("in_progress") => TodoStatus::InProgress,
            Some("completed" | "done") => TodoStatus::Completed,
            Some(other) => {
                return Err(format!(
                    "item {n}: status \"{other}\" is not one of pending, in_progress, completed"
                ))
            }
            None => return Err(format!("item {n}: `status` is missing")),
        };
        let active_form = text("active_form")?.filter(|a| !a.is_empty());
        todos.push(Todo {
            content,
            status,
            active_form,
        });
    }
    let in_progress = todos
        .iter()
        .filter(|t| t.status == TodoStatus::InProgress)
        .count();
    if in_progress > 1 {
        return Err(format!(
            "{in_progress} items are in_progress; at most one may be (finish one, then start the next)"
        ));
    }
    Ok(todos)
}

fn clip(s: &str) -> String {
    crate::text::clip(s, MAX_TEXT)
}

pub async fn run(args: Args, ctx: &ToolContext) -> Result<String, String> {
    let todos = validate(&args.todos)?;
    let summary = summarize(&todos);
    match ctx.todos.lock() {
        Ok(mut list) => *list = todos,
        Err(poisoned) => *poisoned.into_inner() = todos,
    }
    Ok(summary)
}

/// "Todo list updated: 2/5 completed; in progress: Running the tests."
pub fn summarize(todos: &[Todo]) -> String {
    if todos.is_empty() {
        return "Todo list cleared.".to_string();
    }
    let done = todos
        .iter()
        .filter(|t| t.status == TodoStatus::Completed)
        .count();
    let mut text = format!("Todo list updated: {done}/{} completed", todos.len());
    if let Some(current) = todos.iter().find(|t| t.status == TodoStatus::InProgress) {
        text.push_str("; in progress: ");
        text.push_str(current.active_form.as_deref().unwrap_or(&current.content));
    }
    text.push('.');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(content: &str, status: &str) -> serde_json::Value {
        json!({"content": content, "status": status})
    }

    #[tokio::test]
    async fn a_good_list_replaces_the_old_one() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = crate::tools::test_context(dir.path(), std::time::Duration::from_secs(5));
        let out = run(
            Args {
                todos: vec![
                    item("Read the failing test", "completed"),
                    json!({"content": "Run the tests", "status": "in_progress", "active_form": "Running the tests"}),
                    item("Fix the bug", "pending"),
                    item("Old style", "done"),
                ],
            },
            &ctx,
        )
        .await
        .unwrap();
        assert_eq!(
            out,
            "Todo list updated: 2/4 completed; in progress: Running the tests."
        );
        let list = ctx.todos.lock().unwrap().clone();
        assert_eq!(list.len(), 4);
        assert_eq!(list[3].status, TodoStatus::Completed);
        assert_eq!(list[1].active_form.as_deref(), Some("Running the tests"));
    }

    #[tokio::test]
    async fn a_bad_list_is_an_error_and_keeps_the_old_one() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = crate::tools::test_context(dir.path(), std::time::Duration::from_secs(5));
        *ctx.todos.lock().unwrap() = vec![Todo {
            content: "keep me".into(),
            status: TodoStatus::Pending,
            active_form: None,
        }];
        for (todos, problem) in [
            (
                vec![item("a", "in_progress"), item("b", "in_progress")],
                "2 items are in_progress",
            ),
            (vec![item("a", "doing")], "item 1: status \"doing\""),
            (
                vec![item("", "pending")],
                "item 1: `content` is missing or empty",
            ),
            (vec![json!({"content": "x"})], "item 1: `status` is missing"),
            (vec![json!("just text")], "item 1 is not an object"),
            (
                vec![json!({"content": 5, "status": "pending"})],
                "`content` must be a string",
            ),
        ] {
            let err = run(Args { todos }, &ctx).await.unwrap_err();
            assert!(err.contains(problem), "{err}");
            assert_eq!(ctx.todos.lock().unwrap()[0].content, "keep me");
        }
    }

    #[test]
    fn empty_list_clears() {
        assert_eq!(summarize(&[]), "Todo list cleared.");
        assert!(validate(&[]).unwrap().is_empty());
    }
}
