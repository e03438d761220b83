//! What changed between checkpoints, as a unified diff (`rein diff`, `/diff`): for each
//! path, the version one checkpoint holds against the version another holds, whatever
//! tool made the change. A file that is not UTF-8 text is named, not printed.

use super::plan::PathStep;
use super::{CheckpointError, RelPath, Store};

/// Lines of context around each change.
const CONTEXT: usize = 3;

/// One path's change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub path: RelPath,
    /// The unified diff (headers included); empty when both versions are the same.
    pub text: String,
    pub added: usize,
    pub removed: usize,
}

impl Store {
    /// For each step, its `target` version (before) against its `expected` one (after).
    pub fn diff(&self, steps: &[PathStep]) -> Result<Vec<FileDiff>, CheckpointError> {
        let paths: Vec<&RelPath> = steps.iter().map(|s| &s.path).collect();
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
            let mut diff = unified(&path.shown(), old_text.as_deref(), new_text.as_deref());
            diff.path = path;
            out.push(diff);
        }
        Ok(out)
    }
}

/// The unified diff of `path` (as shown) from `old` to `new` (`None`: the file did not
/// exist).
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
            path: RelPath::from(path),
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
        path: RelPath::from(path),
        text,
        added,
        removed,
    }
}

/// An edit's changed lines with one line of context, for a transcript cell (and the
/// session file, so a resumed transcript shows it again).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ShortDiff {
    pub added: usize,
    pub removed: usize,
    /// At most the number asked for.
    pub lines: Vec<DiffLine>,
    /// Lines left out past that.
    pub more: usize,
}

/// One line of a [`ShortDiff`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DiffLine {
    pub kind: DiffKind,
    /// The line without its end.
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiffKind {
    Added,
    Removed,
    Context,
    /// Unchanged lines left out between two changes.
    Gap,
}

/// The changes from `old` to `new`, at most `max_lines` of them, with one line of context;
/// `None` when nothing changed.
pub fn short(old: &str, new: &str, max_lines: usize) -> Option<ShortDiff> {
    let diff = similar::TextDiff::from_lines(old, new);
    let mut out = ShortDiff {
        added: 0,
        removed: 0,
        lines: Vec::new(),
        more: 0,
    };
    for (i, group) in diff.grouped_ops(1).iter().enumerate() {
        let mut lines = Vec::new();
        if i > 0 {
            lines.push(DiffLine {
                kind: DiffKind::Gap,
                text: String::new(),
            });
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let kind = match change.tag() {
                    similar::ChangeTag::Insert => {
                        out.added += 1;
                        DiffKind::Added
                    }
                    similar::ChangeTag::Delete => {
                        out.removed += 1;
                        DiffKind::Removed
                    }
                    similar::ChangeTag::Equal => DiffKind::Context,
                };
                let text = change.value().trim_end_matches(['\n', '\r']).to_string();
                lines.push(DiffLine { kind, text });
            }
        }
        for line in lines {
            if out.lines.len() < max_lines {
                out.lines.push(line);
            } else {
                out.more += 1;
            }
        }
    }
    (out.added + out.removed > 0).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_diff_keeps_one_line_of_context_and_counts_what_it_leaves_out() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nB\nc\nd\ne\nf\ng\nH\nI\n";
        let d = short(old, new, 100).unwrap();
        let shown: Vec<String> = d
            .lines
            .iter()
            .map(|l| match l.kind {
                DiffKind::Added => format!("+{}", l.text),
                DiffKind::Removed => format!("-{}", l.text),
                DiffKind::Context => format!(" {}", l.text),
                DiffKind::Gap => "…".to_string(),
            })
            .collect();
        assert_eq!(shown, [" a", "-b", "+B", " c", "…", " g", "-h", "+H", "+I"]);
        assert_eq!((d.added, d.removed, d.more), (3, 2, 0));
        let cut = short(old, new, 4).unwrap();
        assert_eq!((cut.lines.len(), cut.more), (4, 5));
        assert_eq!(short("same\n", "same\n", 10), None);
        let created = short("", "x\ny\n", 10).unwrap();
        assert_eq!((created.added, created.removed), (2, 0));
        let replaced = short("a\n", "b\n", 10).unwrap();
        assert_eq!((replaced.added, replaced.removed), (1, 1));
        let emptied = short("x\ny\n", "", 10).unwrap();
        assert_eq!((emptied.added, emptied.removed), (0, 2));
    }

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
