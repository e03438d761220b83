//! Files changed by someone other than the agent between its turns.
//!
//! A [`Snapshot`] is the size and modification time of every file under the project (the
//! `.git`, `target` and `node_modules` folders skipped, at most [`MAX_FILES`] entries). The
//! agent takes one when a turn ends and another when the next begins; what differs between
//! the two was changed while the agent was idle, so by someone else. The agent's own writes,
//! including whatever its commands changed, happen inside its turns and are never reported
//! back to it. A rename shows as one file removed and one added; a change reverted before the
//! next turn still shows as modified when its time moved (the model rereads it, no harm).
//! Changes someone else makes during the agent's turn are counted as the agent's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Most files a snapshot records; a larger project is not watched (no report at all).
pub const MAX_FILES: usize = 20_000;
/// Folders never walked.
const SKIPPED: [&str; 3] = [".git", "target", "node_modules"];

/// The state of the project's files at one moment. `None` inside: too many files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    files: Option<BTreeMap<PathBuf, (u64, Option<SystemTime>)>>,
}

/// How one file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Modified,
    Removed,
}

/// One changed file, its path relative to the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: PathBuf,
    pub kind: ChangeKind,
}

impl Snapshot {
    /// Walk `root` now. Unreadable folders are skipped.
    pub fn take(root: &Path) -> Snapshot {
        let mut files = BTreeMap::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let path = entry.path();
                if kind.is_dir() {
                    if !SKIPPED.iter().any(|s| entry.file_name() == *s) {
                        stack.push(path);
                    }
                } else if kind.is_file() {
                    if files.len() >= MAX_FILES {
                        return Snapshot { files: None };
                    }
                    let Ok(meta) = entry.metadata() else {
                        continue;
                    };
                    let rel = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
                    files.insert(rel, (meta.len(), meta.modified().ok()));
                }
            }
        }
        Snapshot { files: Some(files) }
    }

    /// What changed from `self` to `later`, by path. Empty when either side was too large.
    pub fn changes_to(&self, later: &Snapshot) -> Vec<Change> {
        let (Some(before), Some(after)) = (&self.files, &later.files) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (path, stamp) in after {
            match before.get(path) {
                None => out.push(Change {
                    path: path.clone(),
                    kind: ChangeKind::Added,
                }),
                Some(old) if old != stamp => out.push(Change {
                    path: path.clone(),
                    kind: ChangeKind::Modified,
                }),
                Some(_) => {}
            }
        }
        for path in before.keys().filter(|p| !after.contains_key(*p)) {
            out.push(Change {
                path: path.clone(),
                kind: ChangeKind::Removed,
            });
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn touch(path: &Path, text: &str, secs: u64) {
        std::fs::write(path, text).unwrap();
        let time = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + secs);
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(time)
            .unwrap();
    }

    #[test]
    fn added_modified_removed_and_renamed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join("target/debug")).unwrap();
        touch(&root.join("src/a.rs"), "a", 1);
        touch(&root.join("src/b.rs"), "b", 1);
        touch(&root.join("old.txt"), "o", 1);
        touch(&root.join("same.txt"), "s", 1);
        let before = Snapshot::take(root);
        touch(&root.join("src/a.rs"), "a", 2); // same size, new time
        std::fs::remove_file(root.join("src/b.rs")).unwrap();
        std::fs::rename(root.join("old.txt"), root.join("new.txt")).unwrap();
        touch(&root.join("target/debug/out"), "x", 2); // skipped folder
        let after = Snapshot::take(root);
        let changes: Vec<(String, ChangeKind)> = before
            .changes_to(&after)
            .into_iter()
            .map(|c| (c.path.display().to_string(), c.kind))
            .collect();
        assert_eq!(
            changes,
            [
                ("new.txt".to_string(), ChangeKind::Added),
                ("old.txt".to_string(), ChangeKind::Removed),
                ("src/a.rs".to_string(), ChangeKind::Modified),
                ("src/b.rs".to_string(), ChangeKind::Removed),
            ]
        );
        assert!(after.changes_to(&Snapshot::take(root)).is_empty());
        assert!(Snapshot::default().changes_to(&after).is_empty());
    }
}
