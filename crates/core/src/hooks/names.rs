//! rein's tools as Claude Code's hooks know them: their names (`bash` is `Bash`) and their
//! arguments' field names (`path` is `file_path`), both ways, so a hook written for Claude
//! Code matches and reads a rein call unchanged, and an `updatedInput` it returns comes back
//! in rein's names. MCP tools keep their `mcp__server__tool` names and arguments.

use serde_json::{Map, Value};

/// Argument fields that differ: rein's name, Claude Code's.
type Renames = &'static [(&'static str, &'static str)];

/// rein's tool, Claude Code's name, and the argument fields that differ.
const TOOLS: &[(&str, &str, Renames)] = &[
    ("bash", "Bash", &[]),
    ("bash_output", "BashOutput", &[("id", "bash_id")]),
    ("bash_kill", "KillShell", &[("id", "shell_id")]),
    ("read_file", "Read", &[("path", "file_path")]),
    ("write_file", "Write", &[("path", "file_path")]),
    (
        "str_replace",
        "Edit",
        &[
            ("path", "file_path"),
            ("old", "old_string"),
            ("new", "new_string"),
        ],
    ),
    ("write_todos", "TodoWrite", &[]),
    ("task", "Task", &[("description", "prompt")]),
    ("read_skill", "Skill", &[("name", "skill")]),
];

/// Claude Code's name for rein's tool `name` (MCP tools and unknown names unchanged).
pub fn claude_name(name: &str) -> &str {
    TOOLS
        .iter()
        .find(|(rein, _, _)| *rein == name)
        .map_or(name, |(_, claude, _)| claude)
}

fn fields(name: &str) -> Renames {
    TOOLS
        .iter()
        .find(|(rein, _, _)| *rein == name)
        .map_or(&[], |(_, _, fields)| fields)
}

/// rein's arguments of a call to `name` as Claude Code's `tool_input`. rein's own keys that
/// are not arguments (`path_as_given`) are left out; a todo's `active_form` is
/// `activeForm`, and a task's question is its `description` too.
pub fn to_claude_input(name: &str, args: &Value) -> Value {
    let Value::Object(args) = args else {
        return args.clone();
    };
    let renames = fields(name);
    let mut out = Map::new();
    for (key, value) in args {
        if key == "path_as_given" {
            continue;
        }
        let key = renames
            .iter()
            .find(|(rein, _)| rein == key)
            .map_or(key.as_str(), |(_, claude)| claude);
        out.insert(key.to_string(), value.clone());
    }
    if name == "task" {
        if let Some(prompt) = out.get("prompt").cloned() {
            out.insert("description".into(), prompt);
        }
    }
    if name == "write_todos" {
        if let Some(Value::Array(todos)) = out.get_mut("todos") {
            for todo in todos.iter_mut().filter_map(Value::as_object_mut) {
                if let Some(form) = todo.remove("active_form") {
                    todo.insert("activeForm".into(), form);
                }
            }
        }
    }
    Value::Object(out)
}

/// A hook's `updatedInput` for a call to `name`, in rein's field names (what it does not
/// rename passes as it is, for the tool's own check to judge).
pub fn from_claude_input(name: &str, input: &Value) -> Value {
    let Value::Object(input) = input else {
        return input.clone();
    };
    let renames = fields(name);
    let mut out = Map::new();
    for (key, value) in input {
        if name == "task" && key == "description" && input.contains_key("prompt") {
            continue;
        }
        let key = renames
            .iter()
            .find(|(_, claude)| claude == key)
            .map_or(key.as_str(), |(rein, _)| rein);
        out.insert(key.to_string(), value.clone());
    }
    if name == "write_todos" {
        if let Some(Value::Array(todos)) = out.get_mut("todos") {
            for todo in todos.iter_mut().filter_map(Value::as_object_mut) {
                if let Some(form) = todo.remove("activeForm") {
                    todo.insert("active_form".into(), form);
                }
            }
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_and_fields_both_ways() {
        assert_eq!(claude_name("bash"), "Bash");
        assert_eq!(claude_name("str_replace"), "Edit");
        assert_eq!(
            claude_name("mcp__github__create_issue"),
            "mcp__github__create_issue"
        );
        let edit = json!({"path": "/p/a.rs", "path_as_given": "a.rs", "old": "x", "new": "y", "replace_all": true});
        let claude = to_claude_input("str_replace", &edit);
        assert_eq!(
            claude,
            json!({"file_path": "/p/a.rs", "old_string": "x", "new_string": "y", "replace_all": true})
        );
        assert_eq!(
            from_claude_input("str_replace", &claude),
            json!({"path": "/p/a.rs", "old": "x", "new": "y", "replace_all": true})
        );
        let todos =
            json!({"todos": [{"content": "a", "status": "pending", "active_form": "doing a"}]});
        let claude = to_claude_input("write_todos", &todos);
        assert_eq!(claude["todos"][0]["activeForm"], "doing a");
        assert_eq!(from_claude_input("write_todos", &claude), todos);
        let task = to_claude_input("task", &json!({"description": "find the parser"}));
        assert_eq!(
            task,
            json!({"prompt": "find the parser", "description": "find the parser"})
        );
        assert_eq!(
            from_claude_input("task", &task),
            json!({"description": "find the parser"})
        );
        let mcp = json!({"repo": "x", "path": "y"});
        assert_eq!(to_claude_input("mcp__gh__get", &mcp), mcp);
    }

    #[test]
    fn only_a_tasks_description_gives_way_to_its_prompt() {
        // A task's `prompt` is its question; Claude Code's short `description` goes.
        assert_eq!(
            from_claude_input(
                "task",
                &json!({"prompt": "find the parser", "description": "parser", "subagent_type": "explore"})
            ),
            json!({"description": "find the parser", "subagent_type": "explore"})
        );
        // Another tool's fields pass as they are.
        let bash = json!({"command": "ls", "description": "list", "prompt": "x"});
        assert_eq!(from_claude_input("bash", &bash), bash);
    }
}
