//! The record against real git on real folders, one file a topic: what it records and
//! leaves out (`record.rs`), how its changes go in and what it takes of files changing
//! meanwhile (`adding.rs`), what a restore puts back and what it never touches
//! (`restore.rs`), keeping the record under its quota (`prune.rs`), where a project's
//! record lives, the settings it keeps to, a SHA-256 one and what a damaged one gives (`store.rs`). This
//! file holds the shared project fixtures.

mod adding;
mod prune;
mod record;
mod restore;
mod store;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::plan::PathStep;
use super::*;

struct Project {
    _dir: tempfile::TempDir,
    data: PathBuf,
    root: PathBuf,
}

fn project() -> Project {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let data = base.join("data");
    let root = base.join("project");
    std::fs::create_dir_all(&root).unwrap();
    Project {
        _dir: dir,
        data,
        root,
    }
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn write(root: &Path, path: &str, text: &str) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, text).unwrap();
}

/// Every file under `dir` (links as their targets), by path.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let rel = path
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .to_string();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, format!("-> {}", target.display()).into_bytes());
            } else {
                let mode = entry.metadata().unwrap().permissions().mode() & 0o111;
                let mut bytes = std::fs::read(&path).unwrap();
                bytes.extend_from_slice(format!(" [x{mode:o}]").as_bytes());
                out.insert(rel, bytes);
            }
        }
    }
    out
}

fn without_git(mut files: BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    files.retain(|k, _| !k.starts_with(".git/") && k != ".git");
    files
}

fn steps(paths: &[RelPath], target: &str, expected: &str) -> Vec<PathStep> {
    paths
        .iter()
        .map(|p| PathStep {
            path: p.clone(),
            target: target.to_string(),
            expected: expected.to_string(),
        })
        .collect()
}

fn outcomes(report: &RestoreReport) -> Vec<(String, String)> {
    report
        .paths
        .iter()
        .map(|p| {
            let o = match &p.outcome {
                Outcome::Restored => "restored".to_string(),
                Outcome::Removed => "removed".to_string(),
                Outcome::Unchanged => "unchanged".to_string(),
                Outcome::Kept { why } => format!("kept: {}", why.split(' ').next().unwrap()),
                Outcome::Failed { why } => format!("failed: {why}"),
            };
            (p.path.to_string(), o)
        })
        .collect()
}

/// A repository with tracked, untracked and ignored files, an executable and a link.
fn repository(p: &Project) {
    let root = &p.root;
    git(root, &["init", "-q"]);
    write(root, ".gitignore", "*.log\nbuild/\n");
    write(root, "src/lib.rs", "fn a() {}\n");
    write(root, "src/util.rs", "fn u() {}\n");
    write(root, "crlf.txt", "one\r\ntwo\r\n");
    write(
        root,
        ".gitattributes",
        "* text=auto\n*.txt filter=evil ident\n",
    );
    write(root, "run.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("src/lib.rs", root.join("link")).unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "first"]);
    write(root, "notes.md", "untracked but not ignored\n");
    write(root, "debug.log", "ignored\n");
    write(root, "build/out.bin", "ignored output\n");
}
