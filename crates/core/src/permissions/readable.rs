//! Whether rein may read, on its own, a file that a text names: an `@path` the user typed
//! (attached to the message, `agent/attach.rs`), an `@path` import in an instruction file,
//! and an instruction file of a folder the agent works in (`crate::instructions`). One
//! rule for all three, so none is looser than the others.
//!
//! In: the path (absolute, or relative to a base folder), the folder it must stay inside
//! (none: anywhere), and the permission policy with the project root it judges against.
//! Out: where the path really leads and the file's size ([`Readable`]), or why it is not
//! read ([`NotReadable`]). The path is resolved as the file tools resolve it
//! ([`crate::host::safe_fs::resolve`]: every link followed, `..` applied), so a link inside the
//! project that points outside is outside; what the rules would ask about before
//! `read_file` reads it (`.env`, `~/.ssh/…`, rein's data folder) is not read. The caller
//! then reads exactly the resolved place with [`crate::host::safe_fs::open_read`], never through
//! a link.

use std::path::{Path, PathBuf};

use super::{PermissionPolicy, ToolRequest, Verdict};

/// A file rein may read: where the path leads, and its size in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readable {
    pub resolved: PathBuf,
    pub size: u64,
}

/// Why a named file is not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotReadable {
    /// It names no file: nothing is there (`missing`), or a folder is. Just text.
    Nothing { missing: bool },
    /// It leads through more than [`crate::host::safe_fs::MAX_LINKS`] symbolic links.
    TooManyLinks,
    /// It leads outside the folder it must stay in.
    Outside,
    /// Something other than a regular file: a device, a named pipe, a socket.
    NotAFile,
    /// The permission rules ask (or deny) before `read_file` reads it; their reason.
    Asks(String),
}

impl NotReadable {
    /// Why, in words after "was not read: ".
    pub fn describe(&self) -> String {
        match self {
            NotReadable::Nothing { missing: true } => "there is no such file".to_string(),
            NotReadable::Nothing { missing: false } => "it is a folder".to_string(),
            NotReadable::TooManyLinks => "it leads through too many links".to_string(),
            NotReadable::Outside => "it leads outside the project".to_string(),
            NotReadable::NotAFile => "it is not a regular file".to_string(),
            NotReadable::Asks(reason) => reason.clone(),
        }
    }
}

/// Whether the file at `path` (relative paths against `base`, which should be resolved)
/// may be read without asking: a regular file, inside `boundary` (resolved) when one is
/// given, that `policy` lets `read_file` read in the project at `root`.
pub fn check(
    path: &Path,
    base: &Path,
    boundary: Option<&Path>,
    policy: &dyn PermissionPolicy,
    root: &Path,
) -> Result<Readable, NotReadable> {
    let resolved =
        crate::host::safe_fs::resolve(path, base).map_err(|_| NotReadable::TooManyLinks)?;
    let meta = match std::fs::symlink_metadata(&resolved) {
        Ok(meta) => meta,
        Err(_) => return Err(NotReadable::Nothing { missing: true }),
    };
    if meta.is_dir() {
        return Err(NotReadable::Nothing { missing: false });
    }
    if !meta.is_file() {
        return Err(NotReadable::NotAFile);
    }
    if boundary.is_some_and(|b| !resolved.starts_with(b)) {
        return Err(NotReadable::Outside);
    }
    // The name as given counts too: a link called `.env` is still `.env`.
    let given = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let args = serde_json::json!({
        "path": resolved.display().to_string(),
        "path_as_given": given.display().to_string(),
    });
    let request = ToolRequest {
        tool: "read_file",
        args: &args,
        root,
    };
    match policy.check(&request) {
        Verdict::Allow => Ok(Readable {
            resolved,
            size: meta.len(),
        }),
        Verdict::Ask { reason, .. } | Verdict::Deny { reason } => Err(NotReadable::Asks(reason)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::policy::RulePolicy;

    #[test]
    fn files_inside_that_the_rules_let_read_are_readable_and_the_rest_say_why() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("docs")).unwrap();
        std::fs::write(root.join("docs/style.md"), "style").unwrap();
        std::fs::write(root.join(".env"), "T=1").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("x.md"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path().join("x.md"), root.join("link.md")).unwrap();
        std::os::unix::fs::symlink(root.join(".env"), root.join("env.md")).unwrap();
        let sensitive: Vec<String> = crate::permissions::DEFAULT_SENSITIVE_READS
            .iter()
            .map(|s| s.to_string())
            .collect();
        let policy = RulePolicy::new(&root, &[], &sensitive, None).unwrap();
        let check = |p: &str| check(Path::new(p), &root, Some(&root), &policy, &root);
        assert_eq!(
            check("docs/style.md"),
            Ok(Readable {
                resolved: root.join("docs/style.md"),
                size: 5
            })
        );
        assert_eq!(check("docs"), Err(NotReadable::Nothing { missing: false }));
        assert_eq!(
            check("nope.md"),
            Err(NotReadable::Nothing { missing: true })
        );
        assert_eq!(check("link.md"), Err(NotReadable::Outside));
        assert_eq!(
            check("../x.md"),
            Err(NotReadable::Nothing { missing: true })
        );
        for sensitive in [".env", "env.md"] {
            match check(sensitive) {
                Err(NotReadable::Asks(reason)) => assert!(reason.contains("sensitive"), "{reason}"),
                other => panic!("{sensitive}: {other:?}"),
            }
        }
        // Without a boundary, the rules still decide.
        let anywhere = super::check(&outside.path().join("x.md"), &root, None, &policy, &root);
        assert!(anywhere.is_ok(), "{anywhere:?}");
    }
}
