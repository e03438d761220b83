//! `write_file`: create a file or replace its whole content.
//!
//! A path (relative to the project root or absolute) and the full new content flow in; the
//! missing parent folders are created, the file is written (an existing one is overwritten)
//! and out comes one line saying whether it was created or overwritten, with its size in
//! lines and bytes. A path that names a directory is refused.

use serde_json::json;

use super::read_file::{display_path, not_regular_message};
use super::{ToolContext, ToolSpec};

pub const NAME: &str = "write_file";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: include_str!("../../assets/tools/write_file.md"),
        parameters: json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "File to write, relative to the project root or absolute. Missing parent folders are created."
                },
                "content": {
                    "type": "string",
                    "description": "The complete new content of the file."
                }
            },
            "required": ["path", "content"],
            "additionalProperties": false
        }),
    }
}

#[derive(Debug, serde::Deserialize)]
pub struct Args {
    pub path: String,
    /// Left out when the call is prepared (the schema requires it; the content stays in
    /// the call's argument object, once) and moved in when the tool runs.
    #[serde(default)]
    pub content: String,
}

/// Write `content` to `resolved` with [`crate::host::safe_fs::write`], off the async threads;
/// errors in the model's words.
pub(super) async fn write_exactly(
    resolved: &std::path::Path,
    content: Vec<u8>,
    shown_path: &str,
    ctx: &ToolContext,
) -> Result<crate::host::safe_fs::Written, String> {
    if let Some(editor) = &ctx.editor {
        return write_in_editor(editor.as_ref(), resolved, content, shown_path, ctx).await;
    }
    let path = resolved.to_path_buf();
    let written = tokio::task::spawn_blocking(move || crate::host::safe_fs::write(&path, &content))
        .await
        .map_err(|e| format!("could not write {shown_path}: {e}"))?;
    written.map_err(|e| match e {
        crate::host::safe_fs::WriteError::Directory => {
            format!("{shown_path} is a directory; give the path of a file inside it instead")
        }
        crate::host::safe_fs::WriteError::Special => not_regular_message(shown_path),
        other => format!("could not write {shown_path}: {other}"),
    })
}

/// [`write_exactly`] through the editor: where the disk has a file (or nothing) reached
/// without a link, as the disk write requires.
async fn write_in_editor(
    editor: &dyn super::editor::EditorFiles,
    resolved: &std::path::Path,
    content: Vec<u8>,
    shown_path: &str,
    ctx: &ToolContext,
) -> Result<crate::host::safe_fs::Written, String> {
    if super::editor::link_on_the_way(resolved, &ctx.root) {
        return Err(format!(
            "could not write {shown_path}: a symbolic link is on the way, and rein writes only where its rules looked"
        ));
    }
    let existed = match std::fs::symlink_metadata(resolved) {
        Ok(meta) if meta.is_dir() => {
            return Err(format!(
                "{shown_path} is a directory; give the path of a file inside it instead"
            ))
        }
        Ok(meta) if !meta.is_file() => return Err(not_regular_message(shown_path)),
        Ok(_) => true,
        Err(_) => false,
    };
    let text = String::from_utf8(content)
        .map_err(|_| format!("could not write {shown_path}: the editor takes text only"))?;
    editor
        .write(resolved, &text)
        .await
        .map_err(|e| format!("could not write {shown_path} in the editor: {e}"))?;
    Ok(if existed {
        crate::host::safe_fs::Written::Replaced
    } else {
        crate::host::safe_fs::Written::Created
    })
}

pub async fn run(args: Args, ctx: &ToolContext) -> Result<String, String> {
    if args.path.trim().is_empty() {
        return Err("`path` is empty; give the file to write".to_string());
    }
    let resolved = ctx.locate(&args.path);
    let shown_path = display_path(ctx, &resolved);
    // Exactly where the rules looked, never through a link (see `safe_fs`).
    let lines = args.content.lines().count() as u64;
    let bytes = args.content.len() as u64;
    // The old text, for the language server to tell what the write changed.
    let checked = ctx
        .lsp
        .as_ref()
        .filter(|lsp| lsp.serves(&resolved))
        .map(|lsp| {
            let before =
                crate::host::safe_fs::read_text_exactly(&resolved, crate::lsp::MAX_OPEN_BYTES);
            (lsp, before, args.content.clone())
        });
    let existed = write_exactly(&resolved, args.content.into_bytes(), &shown_path, ctx).await?
        == crate::host::safe_fs::Written::Replaced;

    let mut text = format!(
        "{} {shown_path} ({}, {})",
        if existed { "Overwrote" } else { "Created" },
        crate::text::plural(lines, "line"),
        crate::text::plural(bytes, "byte"),
    );
    if let Some((lsp, before, after)) = checked {
        if let Some(report) = lsp.edited(&resolved, before.as_deref(), &after).await {
            text.push_str("\n\n");
            text.push_str(&report);
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_context;
    use std::time::Duration;

    fn ctx(dir: &tempfile::TempDir) -> ToolContext {
        test_context(dir.path(), Duration::from_secs(5))
    }

    fn args(path: &str, content: &str) -> Args {
        Args {
            path: path.to_string(),
            content: content.to_string(),
        }
    }

    #[tokio::test]
    async fn a_link_on_the_way_is_an_error_never_a_detour() {
        // What the tool meets when a link was swapped in after the path was judged.
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("src")).unwrap();
        std::fs::write(outside.path().join("t"), "old").unwrap();
        std::os::unix::fs::symlink(outside.path().join("t"), dir.path().join("l")).unwrap();
        let err = run(args("src/new.rs", "x"), &ctx(&dir)).await.unwrap_err();
        assert!(err.contains("symbolic link"), "{err}");
        assert!(!outside.path().join("new.rs").exists());
        let err = run(args("l", "new"), &ctx(&dir)).await.unwrap_err();
        assert!(err.contains("symbolic link"), "{err}");
        assert_eq!(
            std::fs::read_to_string(outside.path().join("t")).unwrap(),
            "old"
        );
    }

    #[tokio::test]
    async fn creates_missing_parent_folders() {
        let dir = tempfile::tempdir().unwrap();
        let out = run(
            args("src/deep/new.rs", "fn a() {}\nfn b() {}\n"),
            &ctx(&dir),
        )
        .await
        .unwrap();
        assert_eq!(out, "Created src/deep/new.rs (2 lines, 20 bytes)");
        let written = std::fs::read_to_string(dir.path().join("src/deep/new.rs")).unwrap();
        assert_eq!(written, "fn a() {}\nfn b() {}\n");
    }

    #[tokio::test]
    async fn overwrites_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("lib.rs"), "old old old\nold\n").unwrap();
        let out = run(args("lib.rs", "x"), &ctx(&dir)).await.unwrap();
        assert_eq!(out, "Overwrote lib.rs (1 line, 1 byte)");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("lib.rs")).unwrap(),
            "x"
        );
    }

    #[tokio::test]
    async fn refuses_a_directory_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        let err = run(args("src", "x"), &ctx(&dir)).await.unwrap_err();
        assert!(err.starts_with("src is a directory"), "{err}");
        assert!(dir.path().join("src").is_dir());
    }

    #[tokio::test]
    async fn a_file_in_the_way_of_a_folder_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes"), "plain file").unwrap();
        let err = run(args("notes/today.md", "x"), &ctx(&dir))
            .await
            .unwrap_err();
        assert!(err.contains("notes"), "{err}");
    }

    #[tokio::test]
    async fn writes_empty_content() {
        let dir = tempfile::tempdir().unwrap();
        let out = run(args("empty.txt", ""), &ctx(&dir)).await.unwrap();
        assert_eq!(out, "Created empty.txt (0 lines, 0 bytes)");
        assert_eq!(std::fs::read(dir.path().join("empty.txt")).unwrap(), b"");
    }
}
