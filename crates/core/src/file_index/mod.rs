//! The project's files, for the `@` finder: a scan and a fuzzy match over its result.
//!
//! [`scan`] walks the project the way ripgrep and fd do (the `ignore` crate is ripgrep's
//! walker): `.gitignore`, `.ignore`, `.git/info/exclude` and the global git excludes are
//! respected (also outside a git repository), hidden files and folders are skipped, `.git/`
//! is never listed, links are not followed. Out comes a [`FileIndex`]: the files and
//! folders as project-relative paths with `/` separators (folders end with `/`), shallow
//! ones first, at most `cap` of them ([`FileIndex::truncated`] says when the cap was hit).
//! The scan does I/O and takes time on a large tree: the dashboard runs it off its loop
//! and hands the result to the update step, which only matches ([`matcher`]).

pub mod guard;
pub mod matcher;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Entries an index holds at most, by default.
pub const DEFAULT_CAP: usize = 200_000;

/// One file or folder of the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// Relative to the project root, `/`-separated; a folder's ends with `/`.
    pub path: String,
    pub is_dir: bool,
}

impl IndexEntry {
    /// The byte where the last component starts (a folder's last component, before its `/`).
    pub fn name_start(&self) -> usize {
        let trimmed = self.path.strip_suffix('/').unwrap_or(&self.path);
        trimmed.rfind('/').map_or(0, |i| i + 1)
    }

    /// The last component (a folder's without its `/`).
    pub fn name(&self) -> &str {
        let trimmed = self.path.strip_suffix('/').unwrap_or(&self.path);
        &trimmed[self.name_start()..]
    }
}

/// What a scan found.
#[derive(Debug, Clone, Default)]
pub struct FileIndex {
    /// The project root the paths are relative to.
    pub root: PathBuf,
    /// Shallow paths first, then by name.
    pub entries: Vec<IndexEntry>,
    /// The cap was reached: some files are not listed.
    pub truncated: bool,
    /// Paths left out because they are not UTF-8 (they could not be typed in a message).
    pub skipped: usize,
    /// Folders or files the walk could not read.
    pub errors: usize,
    /// How long the walk took.
    pub took: Duration,
}

impl FileIndex {
    /// An index of `paths` under `root` as given, a path ending in `/` a folder (for tests
    /// and benchmarks).
    pub fn of_paths(root: impl Into<PathBuf>, paths: &[&str]) -> FileIndex {
        FileIndex {
            root: root.into(),
            entries: paths
                .iter()
                .map(|p| IndexEntry {
                    path: p.to_string(),
                    is_dir: p.ends_with('/'),
                })
                .collect(),
            ..FileIndex::default()
        }
    }

    /// How many files (not folders) it lists.
    pub fn files(&self) -> usize {
        self.entries.iter().filter(|e| !e.is_dir).count()
    }
}

/// Walk `root` for at most `cap` entries (see the module doc for what is left out).
pub fn scan(root: &Path, cap: usize) -> FileIndex {
    let started = Instant::now();
    let mut index = FileIndex {
        root: root.to_path_buf(),
        ..FileIndex::default()
    };
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .hidden(true)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        // A project that is not (yet) a git repository still has its .gitignore honoured.
        .require_git(false)
        .follow_links(false);
    // A folder whose ignore files are a pipe or a device is not entered (`guard`).
    guard::guard(&mut builder, root, |_| true);
    let walker = builder.build();
    for item in walker {
        let entry = match item {
            Ok(entry) => entry,
            Err(_) => {
                index.errors += 1;
                continue;
            }
        };
        // The root itself.
        if entry.depth() == 0 {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let Some(text) = relative.to_str() else {
            index.skipped += 1;
            continue;
        };
        if index.entries.len() >= cap {
            index.truncated = true;
            break;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let mut path = text.replace(std::path::MAIN_SEPARATOR, "/");
        if is_dir {
            path.push('/');
        }
        index.entries.push(IndexEntry { path, is_dir });
    }
    index.entries.sort_unstable_by(|a, b| {
        depth(&a.path)
            .cmp(&depth(&b.path))
            .then(a.path.cmp(&b.path))
    });
    index.took = started.elapsed();
    index
}

/// Folders above the entry (a folder's own trailing `/` not counted).
fn depth(path: &str) -> usize {
    path.trim_end_matches('/').matches('/').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            let path = dir.path().join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        dir
    }

    fn paths(index: &FileIndex) -> Vec<&str> {
        index.entries.iter().map(|e| e.path.as_str()).collect()
    }

    /// Issue 41: a cloned tree's `.gitignore` that is a link to `/dev/zero`, or a `.ignore`
    /// that is a pipe nobody writes, made the scan grow until rein ran out of memory, or
    /// wait for ever. Such a folder is left out; the test finishing is the assertion.
    #[test]
    fn hostile_ignore_files_leave_their_folder_out() {
        let dir = tree(&["a.rs", "zero/b.rs", "pipe/c.rs", "fine/d.rs"]);
        std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero/.gitignore")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(dir.path().join("pipe/.ignore"))
            .status();
        assert!(made.unwrap().success());
        let index = scan(dir.path(), DEFAULT_CAP);
        let paths: Vec<&str> = index.entries.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["a.rs", "fine/", "fine/d.rs"]);
    }

    #[test]
    fn gitignore_ignore_and_exclude_are_respected_and_hidden_files_skipped() {
        let dir = tree(&[
            "src/main.rs",
            "src/app/state.rs",
            "target/debug/rein",
            "notes.log",
            "keep.log",
            "vendor/lib.rs",
            "secret/plan.txt",
            ".env",
            ".github/workflows/ci.yml",
            "src/.hidden/x.rs",
        ]);
        let root = dir.path();
        std::fs::write(root.join(".gitignore"), "target/\n*.log\n!keep.log\n").unwrap();
        std::fs::write(root.join(".ignore"), "vendor/\n").unwrap();
        std::fs::create_dir_all(root.join(".git/info")).unwrap();
        std::fs::write(root.join(".git/info/exclude"), "secret/\n").unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        let index = scan(root, DEFAULT_CAP);
        assert_eq!(
            paths(&index),
            [
                "keep.log",
                "src/",
                "src/app/",
                "src/main.rs",
                "src/app/state.rs"
            ]
        );
        assert!(!index.truncated);
        assert_eq!(index.files(), 3);
    }

    #[test]
    fn the_cap_stops_the_scan_and_says_so() {
        let names: Vec<String> = (0..50).map(|i| format!("f{i:02}.txt")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let dir = tree(&refs);
        let index = scan(dir.path(), 20);
        assert_eq!(index.entries.len(), 20);
        assert!(index.truncated);
        let all = scan(dir.path(), 50);
        assert_eq!(all.entries.len(), 50);
        assert!(!all.truncated);
    }

    #[test]
    fn links_are_listed_but_not_followed() {
        let dir = tree(&["real/a.txt"]);
        let outside = tree(&["elsewhere.txt"]);
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        let index = scan(dir.path(), DEFAULT_CAP);
        assert!(!paths(&index).iter().any(|p| p.contains("elsewhere")));
    }

    #[test]
    fn names_are_the_last_component() {
        let file = IndexEntry {
            path: "src/app/state.rs".into(),
            is_dir: false,
        };
        assert_eq!(file.name(), "state.rs");
        assert_eq!(file.name_start(), 8);
        let dir = IndexEntry {
            path: "src/app/".into(),
            is_dir: true,
        };
        assert_eq!(dir.name(), "app");
        let top = IndexEntry {
            path: "README.md".into(),
            is_dir: false,
        };
        assert_eq!(top.name(), "README.md");
    }
}
