//! `str_replace`: edit a file by replacing an exact piece of its text.
//!
//! A path, the exact text to find (`old`), its replacement (`new`) and whether to replace
//! every occurrence flow in. `old` must occur exactly once unless `replace_all` is set;
//! zero or several matches are refused with a sentence saying how to fix the call, and the
//! file is left untouched. Line endings are kept: in a CRLF file, bare `\n` in `old` and `new`
//! become `\r\n` (existing `\r\n` stays as it is). Out comes how many occurrences were
//! replaced, with a few numbered lines around the first change.

use serde_json::json;

use super::read_file::{display_path, read_text};
use super::{ToolContext, ToolSpec};

pub const NAME: &str = "str_replace";

/// Lines of context shown around the start and end of the first change.
const SNIPPET_CONTEXT: usize = 1;
/// Most lines of the new text shown in the snippet.
const SNIPPET_MAX_NEW_LINES: usize = 4;
/// Characters of one snippet line shown before it is cut.
const SNIPPET_LINE_CHARS: usize = 200;

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: include_str!("../../assets/tools/str_replace.md"),
        parameters: json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "File to edit, relative to the project root or absolute."
                },
                "old": {
                    "type": "string",
                    "description": "The exact text to replace, including whitespace and indentation. Must occur exactly once unless replace_all is true."
                },
                "new": {
                    "type": "string",
                    "description": "The text to put in its place (may be empty to delete)."
                },
                "replace_all": {
                    "type": "boolean",
                    "description": "Replace every occurrence of old instead of requiring exactly one (default false)."
                }
            },
            "required": ["path", "old", "new"],
            "additionalProperties": false
        }),
    }
}

#[derive(Debug, serde::Deserialize)]
pub struct Args {
    pub path: String,
    pub old: String,
    pub new: String,
    /// Missing or `null` means false.
    #[serde(default, deserialize_with = "null_as_false")]
    pub replace_all: bool,
}

fn null_as_false<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    use serde::Deserialize;
    Ok(Option::<bool>::deserialize(d)?.unwrap_or(false))
}

pub async fn run(args: Args, ctx: &ToolContext) -> Result<String, String> {
    if args.path.trim().is_empty() {
        return Err("`path` is empty; give the file to edit".to_string());
    }
    if args.old.is_empty() {
        return Err(
            "`old` is empty; copy the exact text to replace from the file (to create a file or rewrite it whole, use write_file)"
                .to_string(),
        );
    }
    if args.old == args.new {
        return Err(
            "`old` and `new` are identical, so nothing would change; put the edited text in `new`"
                .to_string(),
        );
    }
    let replace_all = args.replace_all;
    let resolved = ctx.locate(&args.path);
    let shown_path = display_path(ctx, &resolved);
    let content = read_text(
        &shown_path,
        &resolved,
        "str_replace edits",
        ctx.editor.as_deref(),
    )
    .await
    .map_err(|e| {
        if e.contains("does not exist") {
            format!("{e}; to create a new file use write_file")
        } else {
            e
        }
    })?;

    let (old, new) = match_line_endings(&content, &args.old, &args.new);
    let count = content.matches(old.as_str()).count();
    if count == 0 {
        return Err(not_found_message(&content, &old, &shown_path));
    }
    if count > 1 && !replace_all {
        return Err(format!(
            "`old` was found {count} times in {shown_path}; add surrounding lines to make it unique, or set replace_all"
        ));
    }
    let first_at = content.find(old.as_str()).unwrap_or(0);
    let updated = if replace_all {
        content.replace(old.as_str(), &new)
    } else {
        content.replacen(old.as_str(), &new, 1)
    };
    super::write_file::write_exactly(&resolved, updated.clone().into_bytes(), &shown_path, ctx)
        .await?;

    let noun = if count == 1 {
        "occurrence"
    } else {
        "occurrences"
    };
    let mut text = format!("Replaced {count} {noun} in {shown_path}");
    let snippet = snippet(&updated, first_at, &new);
    if !snippet.is_empty() {
        text.push_str(if count == 1 {
            ":\n"
        } else {
            "; the first now reads:\n"
        });
        text.push_str(&snippet);
    }
    if let Some(lsp) = &ctx.lsp {
        if let Some(report) = lsp.edited(&resolved, Some(&content), &updated).await {
            text.push_str("\n\n");
            text.push_str(&report);
        }
    }
    Ok(text)
}

/// `old` and `new` as they should be matched and written in this file. In a CRLF file a bare
/// `\n` in `old` becomes `\r\n` when `old` as given does not match, and `new` gets CRLF unless
/// the matched text itself has bare `\n` (a mixed file, edited as it is).
fn match_line_endings(content: &str, old: &str, new: &str) -> (String, String) {
    if !content.contains("\r\n") {
        return (old.to_string(), new.to_string());
    }
    let old = if content.contains(old) {
        old.to_string()
    } else {
        to_crlf(old)
    };
    let has_bare_lf = to_crlf(&old) != old;
    let new = if has_bare_lf {
        new.to_string()
    } else {
        to_crlf(new)
    };
    (old, new)
}

/// Every bare `\n` becomes `\r\n`; an existing `\r\n` is left as it is.
fn to_crlf(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 16);
    let mut prev = None;
    for c in s.chars() {
        if c == '\n' && prev != Some('\r') {
            out.push('\r');
        }
        out.push(c);
        prev = Some(c);
    }
    out
}

fn not_found_message(content: &str, old: &str, shown_path: &str) -> String {
    let mut msg = format!("`old` was not found in {shown_path}; ");
    let trimmed = old.trim();
    if !trimmed.is_empty() && trimmed != old && content.contains(trimmed) {
        msg.push_str(
            "its text appears with different leading or trailing whitespace, so copy the exact lines including indentation",
        );
    } else if collapse_whitespace(content).contains(&collapse_whitespace(old)) {
        msg.push_str(
            "it appears with different whitespace or indentation; read the file again and copy the exact text",
        );
    } else {
        msg.push_str(
            "read the file again and copy the exact text, including whitespace and indentation",
        );
    }
    msg
}

fn collapse_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A few numbered lines around the first change in the updated text.
fn snippet(updated: &str, at: usize, new: &str) -> String {
    let lines: Vec<&str> = updated.split('\n').collect();
    let at = at.min(updated.len());
    let first_line = updated.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    // A trailing newline ends the last new line rather than starting another.
    let new_lines = new.strip_suffix('\n').unwrap_or(new).matches('\n').count() + 1;
    let start = first_line.saturating_sub(SNIPPET_CONTEXT);
    let shown_new = new_lines.min(SNIPPET_MAX_NEW_LINES);
    let end = (first_line + shown_new + SNIPPET_CONTEXT).min(lines.len());
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate().take(end).skip(start) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let line = match line.char_indices().nth(SNIPPET_LINE_CHARS) {
            Some((cut, _)) => format!("{}…", &line[..cut]),
            None => line.to_string(),
        };
        out.push_str(&format!("{:>6}\t{line}\n", i + 1));
    }
    if new_lines > shown_new {
        out.push_str(&format!(
            "     …\t({} more changed lines)\n",
            new_lines - shown_new
        ));
    }
    out.truncate(out.trim_end_matches('\n').len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_context;
    use std::time::Duration;

    fn ctx(dir: &tempfile::TempDir) -> ToolContext {
        test_context(dir.path(), Duration::from_secs(5))
    }

    fn args(path: &str, old: &str, new: &str, replace_all: bool) -> Args {
        Args {
            path: path.to_string(),
            old: old.to_string(),
            new: new.to_string(),
            replace_all,
        }
    }

    fn write(dir: &tempfile::TempDir, name: &str, text: &str) {
        std::fs::write(dir.path().join(name), text).unwrap();
    }

    fn read(dir: &tempfile::TempDir, name: &str) -> String {
        std::fs::read_to_string(dir.path().join(name)).unwrap()
    }

    #[tokio::test]
    async fn replaces_a_unique_occurrence_and_shows_the_change() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir, "lib.rs", "fn a() {}\nfn b() {\n    1\n}\nfn c() {}\n");
        let out = run(args("lib.rs", "    1\n", "    2\n", false), &ctx(&dir))
            .await
            .unwrap();
        assert_eq!(
            read(&dir, "lib.rs"),
            "fn a() {}\nfn b() {\n    2\n}\nfn c() {}\n"
        );
        assert_eq!(
            out,
            "Replaced 1 occurrence in lib.rs:\n     2\tfn b() {\n     3\t    2\n     4\t}"
        );
    }

    #[tokio::test]
    async fn not_found_leaves_the_file_alone() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir, "lib.rs", "fn a() {}\n");
        let err = run(args("lib.rs", "fn z()", "fn y()", false), &ctx(&dir))
            .await
            .unwrap_err();
        assert!(
            err.starts_with("`old` was not found in lib.rs; read the file again"),
            "{err}"
        );
        assert_eq!(read(&dir, "lib.rs"), "fn a() {}\n");
    }

    #[tokio::test]
    async fn not_found_hints_at_whitespace_differences() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir, "lib.rs", "fn a() {\n        let x = 1;\n}\n");
        let err = run(
            args("lib.rs", "fn a() {\n    let x = 1;", "", false),
            &ctx(&dir),
        )
        .await
        .unwrap_err();
        assert!(err.contains("different whitespace or indentation"), "{err}");
    }

    #[tokio::test]
    async fn several_matches_need_more_context_or_replace_all() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir, "a.txt", "x = 1\ny = 2\nx = 1\nx = 1\n");
        let c = ctx(&dir);
        let err = run(args("a.txt", "x = 1", "x = 9", false), &c)
            .await
            .unwrap_err();
        assert_eq!(
            err,
            "`old` was found 3 times in a.txt; add surrounding lines to make it unique, or set replace_all"
        );
        assert_eq!(read(&dir, "a.txt"), "x = 1\ny = 2\nx = 1\nx = 1\n");

        let out = run(args("a.txt", "x = 1", "x = 9", true), &c)
            .await
            .unwrap();
        assert!(out.starts_with("Replaced 3 occurrences in a.txt"), "{out}");
        assert_eq!(read(&dir, "a.txt"), "x = 9\ny = 2\nx = 9\nx = 9\n");
    }

    #[tokio::test]
    async fn keeps_crlf_line_endings() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir, "win.txt", "one\r\ntwo\r\nthree\r\n");
        let c = ctx(&dir);
        // Bare LF in old and new: matched and written as CRLF.
        run(args("win.txt", "one\ntwo\n", "uno\ndos\n", false), &c)
            .await
            .unwrap();
        assert_eq!(read(&dir, "win.txt"), "uno\r\ndos\r\nthree\r\n");
        // Already CRLF in old and new: not converted twice.
        run(args("win.txt", "dos\r\nthree", "deux\r\ntrois", false), &c)
            .await
            .unwrap();
        assert_eq!(read(&dir, "win.txt"), "uno\r\ndeux\r\ntrois\r\n");
        // A single-line old whose new text has several lines.
        run(args("win.txt", "deux", "2a\n2b", false), &c)
            .await
            .unwrap();
        assert_eq!(read(&dir, "win.txt"), "uno\r\n2a\r\n2b\r\ntrois\r\n");
    }

    #[tokio::test]
    async fn lf_files_stay_lf() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir, "unix.txt", "a\nb\nc\n");
        run(args("unix.txt", "a\nb", "A\nB", false), &ctx(&dir))
            .await
            .unwrap();
        assert_eq!(read(&dir, "unix.txt"), "A\nB\nc\n");
    }

    #[tokio::test]
    async fn refuses_empty_old_missing_binary_and_non_utf8_files() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(&dir);
        write(&dir, "a.txt", "text\n");
        let err = run(args("a.txt", "", "x", false), &c).await.unwrap_err();
        assert!(err.starts_with("`old` is empty"), "{err}");

        let err = run(args("nope.txt", "a", "b", false), &c)
            .await
            .unwrap_err();
        assert!(
            err.starts_with("nope.txt does not exist") && err.contains("write_file"),
            "{err}"
        );

        std::fs::write(dir.path().join("bin"), b"ab\0cd").unwrap();
        let err = run(args("bin", "ab", "x", false), &c).await.unwrap_err();
        assert_eq!(
            err,
            "bin is a binary file (5 bytes); str_replace edits text only"
        );

        std::fs::write(dir.path().join("l1.txt"), b"caf\xe9").unwrap();
        let err = run(args("l1.txt", "caf", "x", false), &c)
            .await
            .unwrap_err();
        assert!(err.starts_with("l1.txt is not UTF-8 text"), "{err}");
        assert_eq!(
            std::fs::read(dir.path().join("l1.txt")).unwrap(),
            b"caf\xe9"
        );
    }

    #[test]
    fn replace_all_may_be_missing_or_null() {
        let a: Args = serde_json::from_value(
            serde_json::json!({"path": "a", "old": "x", "new": "y", "replace_all": null}),
        )
        .unwrap();
        assert!(!a.replace_all);
        let a: Args =
            serde_json::from_value(serde_json::json!({"path": "a", "old": "x", "new": "y"}))
                .unwrap();
        assert!(!a.replace_all);
        let a: Args = serde_json::from_value(
            serde_json::json!({"path": "a", "old": "x", "new": "y", "replace_all": true}),
        )
        .unwrap();
        assert!(a.replace_all);
    }

    #[test]
    fn to_crlf_converts_only_bare_newlines() {
        assert_eq!(to_crlf("a\nb\r\nc\n"), "a\r\nb\r\nc\r\n");
        assert_eq!(to_crlf("no newline"), "no newline");
    }
}
