//! Checkpoints and rewind through the real paths: the `rein` binary runs scripted turns
//! that edit with bash (in real bubblewrap) and write_file, then `rein rewind` and
//! `rein diff` take them back and show them.

use crate::support;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};
use support::rein_command;
use support::ScriptedServer;

mod odd_files;
mod records;
mod turns;

async fn rein(home: &Path, args: &[OsString]) -> Output {
    tokio::time::timeout(support::GIVE_UP, rein_command(home).args(args).output())
        .await
        .expect("rein finished")
        .expect("rein ran")
}

fn args(list: &[&str], cwd: &Path) -> Vec<OsString> {
    let mut out: Vec<OsString> = list.iter().map(OsString::from).collect();
    out.push("--cwd".into());
    out.push(cwd.into());
    out
}

/// One headless turn of `prompt` against `server` (every action approved).
async fn turn(
    home: &Path,
    server: &ScriptedServer,
    project: &Path,
    prompt: &str,
    more: &[&str],
) -> Output {
    let mut list = vec!["-p", prompt, "--yes", "--model", "scripted"];
    list.extend_from_slice(more);
    let mut a = args(&list, project);
    a.push("--base-url".into());
    a.push(server.base_url().into());
    let out = rein(home, &a).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn git(dir: &Path, list: &[&str]) {
    let out = std::process::Command::new("git")
        .args(list)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {list:?}: {out:?}");
}

/// Every file under `dir` with its bytes (a link as its target).
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
                out.insert(
                    rel,
                    std::fs::read_link(&path)
                        .unwrap()
                        .to_string_lossy()
                        .as_bytes()
                        .to_vec(),
                );
            } else {
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

fn write(root: &Path, path: &str, body: &str) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, body).unwrap();
}

/// A repository with tracked, untracked and ignored files.
fn repository() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("project");
    std::fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q"]);
    write(&root, ".gitignore", "*.log\n");
    write(&root, "src/lib.rs", "pub fn answer() -> u32 {\n    41\n}\n");
    write(&root, "src/old.rs", "// to be renamed\n");
    write(&root, "README.md", "# project\n");
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "first"]);
    // A stash entry, so its ref and reflog are part of what must stay byte-identical.
    write(&root, "README.md", "# stashed edit\n");
    git(&root, &["stash", "-q"]);
    write(&root, "notes.txt", "untracked, not ignored\n");
    write(&root, "build.log", "ignored\n");
    (dir, root)
}

fn bash(command: &str) -> (String, String) {
    (
        "bash".to_string(),
        json!({ "command": command }).to_string(),
    )
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)))
}
