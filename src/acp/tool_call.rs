//! A tool call as the editor shows it: its kind (the icon), a title a person reads, the
//! places it touches (path and line, which the editor can follow), and, for an edit, the
//! change as a diff before it runs (the permission question shows it) and after.
//!
//! Pure: the call's name and its parsed arguments in, ACP's types out. What the edit
//! replaces in a whole-file write is read by the caller ([`proposed_diff`] takes it).

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    Diff, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolKind,
};
use rein_core::text;
use rein_core::tools::{background, bash, read_file, read_skill, str_replace, task};
use rein_core::tools::{write_file, write_todos};
use serde_json::Value;

/// The most characters of a title (a long command is cut, with a mark).
const TITLE_CHARS: usize = 160;

/// What kind of action `name` is, for the editor's icon and grouping.
pub fn kind(name: &str) -> ToolKind {
    match name {
        bash::NAME | background::KILL_NAME => ToolKind::Execute,
        background::OUTPUT_NAME | read_file::NAME | read_skill::NAME => ToolKind::Read,
        write_file::NAME | str_replace::NAME => ToolKind::Edit,
        write_todos::NAME | task::NAME => ToolKind::Think,
        _ if name.contains("fetch") || name.contains("web") => ToolKind::Fetch,
        _ if name.contains("search") || name.contains("grep") || name.contains("find") => {
            ToolKind::Search
        }
        _ => ToolKind::Other,
    }
}

/// A string argument, when the arguments are an object that has it.
fn arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// One line of `s`, cut to the title's bound.
fn line(s: &str) -> String {
    text::clip(&text::one_line(s), TITLE_CHARS)
}

/// The title a person reads: the command, the file, the task.
pub fn title(name: &str, args: &Value) -> String {
    let path = arg(args, "path");
    match (name, path) {
        (bash::NAME, _) => arg(args, "command").map_or_else(|| "Run a command".into(), line),
        (read_file::NAME, Some(p)) => match (
            args.get("offset").and_then(Value::as_u64),
            args.get("limit").and_then(Value::as_u64),
        ) {
            (Some(from), Some(n)) => line(&format!("Read {p} ({from}–{})", from + n)),
            (Some(from), None) => line(&format!("Read {p} (from line {from})")),
            _ => line(&format!("Read {p}")),
        },
        (write_file::NAME, Some(p)) => line(&format!("Write {p}")),
        (str_replace::NAME, Some(p)) => line(&format!("Edit {p}")),
        (write_todos::NAME, _) => "Update the todo list".into(),
        (read_skill::NAME, _) => arg(args, "name").map_or_else(
            || "Read a skill".into(),
            |n| line(&format!("Read the skill {n}")),
        ),
        (task::NAME, _) => arg(args, "description").map_or_else(
            || "Run a subagent".into(),
            |d| line(&format!("Subagent: {d}")),
        ),
        (background::OUTPUT_NAME, _) => "Read a background command's output".into(),
        (background::KILL_NAME, _) => "Stop a background command".into(),
        _ => match name.strip_prefix("mcp__").and_then(|r| r.split_once("__")) {
            Some((server, tool)) => line(&format!("{tool} ({server})")),
            None => line(name),
        },
    }
}

/// `path` as the editor wants it: absolute, relative ones taken from `root`.
pub fn absolute(root: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    }
}

/// The places the call touches: the file it reads or edits, at its line when known.
pub fn locations(name: &str, args: &Value, root: &Path) -> Vec<ToolCallLocation> {
    match (name, arg(args, "path")) {
        (read_file::NAME | write_file::NAME | str_replace::NAME, Some(path)) => {
            let at = ToolCallLocation::new(absolute(root, path));
            let line = args
                .get("offset")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok());
            vec![at.line(line)]
        }
        _ => Vec::new(),
    }
}

/// The change an edit call asks for, as a diff: `str_replace`'s old and new text, or
/// `write_file`'s content against `before` (the file as it is, `None` when there is none).
pub fn proposed_diff(
    name: &str,
    args: &Value,
    root: &Path,
    before: Option<String>,
) -> Option<Diff> {
    let path = absolute(root, arg(args, "path")?);
    match name {
        str_replace::NAME => Some(
            Diff::new(path, arg(args, "new")?.to_string()).old_text(arg(args, "old")?.to_string()),
        ),
        write_file::NAME => {
            Some(Diff::new(path, arg(args, "content")?.to_string()).old_text(before))
        }
        _ => None,
    }
}

/// The `tool_call` update that announces the call: pending until it runs.
pub fn announce(id: &str, name: &str, args: &Value, root: &Path, diff: Option<Diff>) -> ToolCall {
    ToolCall::new(id.to_string(), title(name, args))
        .kind(kind(name))
        .status(ToolCallStatus::Pending)
        .locations(locations(name, args, root))
        .content(diff.map(ToolCallContent::Diff).into_iter().collect())
        .raw_input(args.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_tool_has_its_kind_and_a_title_a_person_reads() {
        let root = Path::new("/p");
        let cases = [
            (
                "bash",
                json!({"command": "cargo test --all"}),
                ToolKind::Execute,
                "cargo test --all",
            ),
            (
                "read_file",
                json!({"path": "src/a.rs", "offset": 10, "limit": 5}),
                ToolKind::Read,
                "Read src/a.rs (10–15)",
            ),
            (
                "read_file",
                json!({"path": "b.rs"}),
                ToolKind::Read,
                "Read b.rs",
            ),
            (
                "write_file",
                json!({"path": "c.rs", "content": "x"}),
                ToolKind::Edit,
                "Write c.rs",
            ),
            (
                "str_replace",
                json!({"path": "d.rs", "old": "a", "new": "b"}),
                ToolKind::Edit,
                "Edit d.rs",
            ),
            (
                "write_todos",
                json!({"todos": []}),
                ToolKind::Think,
                "Update the todo list",
            ),
            (
                "task",
                json!({"description": "find the parser"}),
                ToolKind::Think,
                "Subagent: find the parser",
            ),
            (
                "mcp__github__search_issues",
                json!({}),
                ToolKind::Search,
                "search_issues (github)",
            ),
            (
                "mcp__docs__fetch_page",
                json!({}),
                ToolKind::Fetch,
                "fetch_page (docs)",
            ),
            (
                "invented",
                json!("not an object"),
                ToolKind::Other,
                "invented",
            ),
        ];
        for (name, args, kind_, title_) in cases {
            assert_eq!(kind(name), kind_, "{name}");
            assert_eq!(title(name, &args), title_, "{name}");
        }
        // A command of many lines is one line, cut.
        let long = json!({"command": "x".repeat(500)});
        assert!(title("bash", &long).chars().count() <= TITLE_CHARS + 1);
        assert_eq!(
            locations(
                "read_file",
                &json!({"path": "src/a.rs", "offset": 10}),
                root
            ),
            vec![ToolCallLocation::new("/p/src/a.rs").line(10)]
        );
        assert_eq!(
            locations("write_file", &json!({"path": "/abs/x"}), root),
            vec![ToolCallLocation::new("/abs/x")]
        );
        assert!(locations("bash", &json!({"command": "ls"}), root).is_empty());
    }

    #[test]
    fn an_edit_is_announced_with_its_diff() {
        let root = Path::new("/p");
        let replace = json!({"path": "a.rs", "old": "fn a()", "new": "fn b()"});
        let diff = proposed_diff("str_replace", &replace, root, None).unwrap();
        assert_eq!(
            diff,
            Diff::new("/p/a.rs", "fn b()").old_text("fn a()".to_string())
        );
        let write = json!({"path": "new.rs", "content": "hello\n"});
        let diff = proposed_diff("write_file", &write, root, None).unwrap();
        assert_eq!(diff, Diff::new("/p/new.rs", "hello\n"));
        let diff = proposed_diff("write_file", &write, root, Some("old\n".into())).unwrap();
        assert_eq!(diff.old_text.as_deref(), Some("old\n"));
        assert!(proposed_diff("bash", &json!({"command": "ls"}), root, None).is_none());
        assert!(proposed_diff("str_replace", &json!({"path": "a"}), root, None).is_none());
        let call = announce(
            "c1",
            "str_replace",
            &replace,
            root,
            proposed_diff("str_replace", &replace, root, None),
        );
        let sent = serde_json::to_value(&call).unwrap();
        assert_eq!(sent["toolCallId"], "c1");
        assert_eq!(sent["kind"], "edit");
        // Pending is the protocol's default, left out on the wire.
        assert!(sent.get("status").is_none_or(|s| s == "pending"), "{sent}");
        assert_eq!(sent["content"][0]["type"], "diff");
        assert_eq!(sent["content"][0]["oldText"], "fn a()");
        assert_eq!(sent["content"][0]["newText"], "fn b()");
        assert_eq!(sent["locations"][0]["path"], "/p/a.rs");
    }
}
