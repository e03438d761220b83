//! The external editor of Ctrl-G, as a process: the input's text goes to a private
//! temporary file, the user's editor runs on it, and the file's text comes back.
//!
//! The editor is `$VISUAL`, else `$EDITOR`, else `vi`, split like a shell would
//! (`code --wait`, `emacs -nw`) with the file as the last argument. The file sits in
//! `<data dir>/tmp` (the system's temporary folder when there is no data dir), readable by
//! the user only (0600, in a 0700 folder), and is removed afterwards. The terminal is the
//! caller's business ([`crate::dashboard`] suspends the dashboard around [`edit`]).
//! Every failure is one line for the hint, and the input keeps its text.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

/// The largest text read back from the editor's file.
pub const MAX_EDIT_BYTES: u64 = 4 * 1024 * 1024;

/// The editor's command line from the environment (`VISUAL`, `EDITOR`), `vi` without one.
pub fn editor_command(visual: Option<&str>, editor: Option<&str>) -> Result<Vec<String>, String> {
    let (var, line) = match (visual, editor) {
        (Some(v), _) if !v.trim().is_empty() => ("VISUAL", v),
        (_, Some(e)) if !e.trim().is_empty() => ("EDITOR", e),
        _ => return Ok(vec!["vi".to_string()]),
    };
    match shlex::split(line) {
        Some(words) if !words.is_empty() => Ok(words),
        _ => Err(format!(
            "cannot read ${var} ({line:?}) as a command; the input is unchanged"
        )),
    }
}

/// Text the editor leaves behind: the trailing line breaks editors add cut.
pub fn trimmed(text: &str) -> String {
    text.trim_end_matches(['\n', '\r']).to_string()
}

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A new private file holding `text` in `dir` (created 0700 when missing; one that was
/// there must be the user's, and is made 0700).
fn temp_file(dir: &Path, text: &str) -> std::io::Result<PathBuf> {
    rein_core::host::private_fs::own_dir(dir)?;
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!("rein-input-{}-{n}.md", std::process::id()));
    let mut file = rein_core::host::private_fs::create_new(&path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    Ok(path)
}

/// Run `command` on a file holding `text` in `dir`, wait for it, and return the file's
/// text (trimmed), or why not. The terminal must be the editor's while this runs.
pub fn edit(command: &[String], dir: &Path, text: &str) -> Result<String, String> {
    let Some((program, args)) = command.split_first() else {
        return Err("no editor command; the input is unchanged".to_string());
    };
    let path = temp_file(dir, text).map_err(|e| {
        format!(
            "cannot write the input to {}: {e}; the input is unchanged",
            dir.display()
        )
    })?;
    let result = Command::new(program)
        .args(args)
        .arg(&path)
        .status()
        .map_err(|e| format!("cannot run the editor `{program}`: {e}; the input is unchanged"))
        .and_then(|status| {
            if status.success() {
                Ok(())
            } else {
                Err(format!(
                    "the editor `{program}` failed ({status}); the input is unchanged"
                ))
            }
        })
        .and_then(|()| {
            rein_core::host::safe_fs::read_small_text(&path, MAX_EDIT_BYTES).map_err(|e| {
                format!(
                    "cannot read back {}: {e}; the input is unchanged",
                    path.display()
                )
            })
        });
    let _ = std::fs::remove_file(&path);
    result.map(|text| trimmed(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_editor_comes_from_visual_then_editor_then_vi() {
        assert_eq!(
            editor_command(Some("code --wait"), Some("nano")).unwrap(),
            ["code", "--wait"]
        );
        assert_eq!(editor_command(Some(" "), Some("nano")).unwrap(), ["nano"]);
        assert_eq!(editor_command(None, None).unwrap(), ["vi"]);
        assert_eq!(
            editor_command(None, Some("'my editor' -x")).unwrap(),
            ["my editor", "-x"]
        );
        let bad = editor_command(None, Some("vim 'unclosed")).unwrap_err();
        assert!(bad.contains("$EDITOR"), "{bad}");
    }

    #[test]
    fn the_file_is_private_and_gone_after_and_failures_keep_the_input() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("rein-edit-test-{}", std::process::id()));
        // A "editor" that checks the mode, then rewrites the file with a trailing newline.
        let script = "test \"$(stat -c %a \"$1\")\" = 600 && printf 'new text\\n\\n' > \"$1\"";
        let command = vec![
            "sh".to_string(),
            "-c".to_string(),
            script.to_string(),
            "sh".to_string(),
        ];
        assert_eq!(edit(&command, &dir, "old").as_deref(), Ok("new text"));
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "file left behind"
        );
        let failing = vec!["false".to_string()];
        let e = edit(&failing, &dir, "old").unwrap_err();
        assert!(
            e.contains("`false` failed") && e.ends_with("the input is unchanged"),
            "{e}"
        );
        let missing = vec!["/nonexistent/editor".to_string()];
        assert!(edit(&missing, &dir, "old")
            .unwrap_err()
            .contains("cannot run"));
        // A folder an older rein left 0755 is made the user's alone before the file goes in.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(edit(&command, &dir, "old").as_deref(), Ok("new text"));
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
