//! What changed between checkpoints, as a unified diff (`rein diff`, `/diff`): for each
//! path, the version one checkpoint holds against the version another holds, whatever
//! tool made the change. A file that is not UTF-8 text is named, not printed.

use super::plan::PathStep;
use super::{CheckpointError, Store};

/// Lines of context around each change.
const CONTEXT: usize = 3;

/// One path's change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub path: String,
    /// The unified diff (headers included); empty when both versions are the same.
    pub text: String,
    pub added: usize,
    pub removed: usize,
}

impl Store {
    /// For each step, its `target` version (before) against its `expected` one (after).
    pub fn diff(&self, steps: &[PathStep]) -> Result<Vec<FileDiff>, CheckpointError> {
        let paths: Vec<&str> = steps.iter().map(|s| s.path.as_str()).collect();
        let mut trees = std::collections::HashMap::new();
        for step in steps {
            for commit in [&step.target, &step.expected] {
                if !trees.contains_key(commit.as_str()) {
                    trees.insert(commit.as_str(), self.entries(commit, &paths)?);
                }
            }
        }
        let mut wanted: Vec<String> = Vec::new();
        let mut pairs = Vec::new();
        for step in steps {
            let id = |commit: &str| {
                trees
                    .get(commit)
                    .and_then(|t| t.get(&step.path))
                    .map(|(mode, id)| (mode.clone(), id.clone()))
            };
            let (old, new) = (id(&step.target), id(&step.expected));
            for (_, blob) in old.iter().chain(new.iter()) {
                wanted.push(blob.clone());
            }
            pairs.push((step.path.clone(), old, new));
        }
        let contents = self.git.cat_blobs(&wanted)?;
        let mut contents = contents.into_iter();
        let mut out = Vec::new();
        for (path, old, new) in pairs {
            let old_text = old.as_ref().and_then(|_| contents.next());
            let new_text = new.as_ref().and_then(|_| contents.next());
            if old == new {
                continue;
            }
            out.push(unified(&path, old_text.as_deref(), new_text.as_deref()));
        }
        Ok(out)
    }
}

/// The unified diff of `path` from `old` to `new` (`None`: the file did not exist).
pub fn unified(path: &str, old: Option<&[u8]>, new: Option<&[u8]>) -> FileDiff {
    let from = if old.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".to_string()
    };
    let to = if new.is_some() {
        format!("b/{path}")
    } else {
        "/dev/null".to_string()
    };
    let (old_text, new_text) = (
        std::str::from_utf8(old.unwrap_or_default()),
        std::str::from_utf8(new.unwrap_or_default()),
    );
    let (Ok(old_text), Ok(new_text)) = (old_text, new_text) else {
        return FileDiff {
            path: path.to_string(),
            text: format!("Binary files {from} and {to} differ\n"),
            added: 0,
            removed: 0,
        };
    };
    let diff = similar::TextDiff::from_lines(old_text, new_text);
    let (mut added, mut removed) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Insert => added += 1,
            similar::ChangeTag::Delete => removed += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    let text = diff
        .unified_diff()
        .context_radius(CONTEXT)
        .header(&from, &to)
        .missing_newline_hint(true)
        .to_string();
    FileDiff {
        path: path.to_string(),
        text,
        added,
        removed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_a_new_file_a_removed_one_and_a_binary_one() {
        let d = unified("a.rs", Some(b"one\ntwo\nthree\n"), Some(b"one\n2\nthree\n"));
        assert_eq!(
            d.text,
            "--- a/a.rs\n+++ b/a.rs\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
        );
        assert_eq!((d.added, d.removed), (1, 1));
        let new = unified("n.txt", None, Some(b"hi\n"));
        assert!(
            new.text.starts_with("--- /dev/null\n+++ b/n.txt\n"),
            "{}",
            new.text
        );
        let gone = unified("g.txt", Some(b"bye\n"), None);
        assert!(
            gone.text.contains("+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"),
            "{}",
            gone.text
        );
        let binary = unified("x.bin", Some(b"\xff\x00"), Some(b"\xfe"));
        assert_eq!(binary.text, "Binary files a/x.bin and b/x.bin differ\n");
    }
}
