//! The editor's view of files: when a front end offers one (the editor protocol's
//! `fs/read_text_file` and `fs/write_text_file`), the file tools read what the editor
//! holds (its unsaved buffer included) and write through it (the edit lands in the
//! buffer), instead of the disk.
//!
//! The rules are rein's all the same: the path is judged and pinned before the tool runs,
//! and the tool checks on disk that nothing on the way is a link (the editor would follow
//! one) before it hands the path over, as it does before it opens a file itself.

use std::path::Path;

/// Files as the editor has them.
#[async_trait::async_trait]
pub trait EditorFiles: Send + Sync + std::fmt::Debug {
    /// The text of the file at `path` (absolute) as the editor has it.
    async fn read(&self, path: &Path) -> Result<String, String>;
    /// Replace the text of the file at `path` (absolute) with `text`, creating it.
    async fn write(&self, path: &Path, text: &str) -> Result<(), String>;
}

/// Whether `path` or a folder on its way below `root` is a symbolic link: the editor would
/// follow it where rein's rules did not look.
pub fn link_on_the_way(path: &Path, root: &Path) -> bool {
    let mut at = path;
    loop {
        if std::fs::symlink_metadata(at).is_ok_and(|m| m.file_type().is_symlink()) {
            return true;
        }
        match at.parent() {
            Some(parent) if at != root && parent.starts_with(root) => at = parent,
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_anywhere_on_the_way_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "").unwrap();
        assert!(!link_on_the_way(&root.join("src/a.rs"), &root));
        assert!(!link_on_the_way(&root.join("src/new.rs"), &root));
        std::os::unix::fs::symlink("/etc", root.join("etc")).unwrap();
        assert!(link_on_the_way(&root.join("etc/passwd"), &root));
        std::os::unix::fs::symlink("/etc/hostname", root.join("src/h")).unwrap();
        assert!(link_on_the_way(&root.join("src/h"), &root));
    }
}
