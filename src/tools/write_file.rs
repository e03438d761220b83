//! `write_file`: create a file or replace its whole content.
//!
//! A path (relative to the project root or absolute) and the full new content flow in; the
//! missing parent folders are created, the file is written (an existing one is overwritten)
//! and out comes one line saying whether it was created or overwritten, with its size in
//! lines and bytes. A path that names a directory is refused.

use serde_json::json;

use super::read_file::{display_path, not_regular_message, plural};
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
    pub content: String,
}

pub async fn run(args: Args, ctx: &ToolContext) -> Result<String, String> {
    if args.path.trim().is_empty() {
        return Err("`path` is empty; give the file to write".to_string());
    }
    let resolved = ctx.resolve(&args.path);
    let shown_path = display_path(ctx, &resolved);

    let existed = match tokio::fs::metadata(&resolved).await {
        Ok(meta) if meta.is_dir() => {
            return Err(format!(
                "{shown_path} is a directory; give the path of a file inside it instead"
            ));
        }
        Ok(meta) if !meta.is_file() => return Err(not_regular_message(&shown_path)),
        Ok(_) => true,
        Err(_) => false,
    };
    if let Some(parent) = resolved.parent() {
        if !parent.as_os_str().is_empty() {
            tokio::fs::create_dir_all(parent).await.map_err(|e| {
                format!(
                    "could not create the folder {} for {shown_path}: {e}",
                    display_path(ctx, parent)
                )
            })?;
        }
    }
    tokio::fs::write(&resolved, args.content.as_bytes())
        .await
        .map_err(|e| format!("could not write {shown_path}: {e}"))?;

    let lines = args.content.lines().count() as u64;
    let bytes = args.content.len() as u64;
    Ok(format!(
        "{} {shown_path} ({lines} {}, {bytes} {})",
        if existed { "Overwrote" } else { "Created" },
        plural(lines, "line", "lines"),
        plural(bytes, "byte", "bytes"),
    ))
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
