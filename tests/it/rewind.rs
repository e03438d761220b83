//! Checkpoints and rewind through the real paths: the `rein` binary runs scripted turns
//! that edit with bash (in real bubblewrap) and write_file, then `rein rewind` and
//! `rein diff` take them back and show them.

use crate::support;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use support::agent::{call, calls};
use support::rein_command;
use support::{Reply, ScriptedServer};

async fn rein(home: &Path, args: &[OsString]) -> Output {
    tokio::time::timeout(
        Duration::from_secs(60),
        rein_command(home).args(args).output(),
    )
    .await
    .expect("rein finished within 60 s")
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

fn project_files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut all = files(root);
    all.retain(|k, _| !k.starts_with(".git/"));
    all
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

#[tokio::test]
async fn a_turn_that_edits_through_bash_and_write_file_is_taken_back_exactly() {
    let home = tempfile::tempdir().unwrap();
    let (_dir, root) = repository();
    // The user's repository as it was, to the byte.
    let git_before = files(&root.join(".git"));
    let server = ScriptedServer::start(vec![
        // Turn 1: read only.
        Reply::tool_calls(&[("read_file", &json!({"path": "README.md"}).to_string())]),
        Reply::text("read it"),
        // Turn 2: every way of changing files.
        calls(&[
            bash("sed -i 's/41/42/' src/lib.rs"),
            bash("unlink notes.txt && mv src/old.rs src/new.rs"),
            bash("mkdir -p gen && for i in 1 2 3; do echo \"// $i\" > gen/f$i.rs; done && echo log >> build.log"),
            call("write_file", json!({"path": "docs/guide.md", "content": "# guide\n"})),
        ]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    turn(home.path(), &server, &root, "look at the readme", &[]).await;
    let before_turn_2 = project_files(&root);
    turn(
        home.path(),
        &server,
        &root,
        "change things\nsecond line",
        &["--continue"],
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(root.join("src/lib.rs")).unwrap(),
        "pub fn answer() -> u32 {\n    42\n}\n"
    );
    assert!(root.join("gen/f3.rs").exists() && !root.join("notes.txt").exists());

    // The list: both turns, the second with what it changed.
    let list = json_of(&rein(home.path(), &args(&["rewind", "--list", "--json"], &root)).await);
    let turns = list["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2, "{list}");
    assert_eq!(turns[0]["message"], "look at the readme");
    assert_eq!(turns[0]["files"], json!([]));
    assert_eq!(turns[1]["message"], "change things");
    assert_eq!(
        turns[1]["files"],
        json!([
            "docs/guide.md",
            "gen/f1.rs",
            "gen/f2.rs",
            "gen/f3.rs",
            "notes.txt",
            "src/lib.rs",
            "src/new.rs",
            "src/old.rs"
        ])
    );

    // The diff shows every change, whatever made it.
    let diff = text(&rein(home.path(), &args(&["diff"], &root)).await.stdout);
    assert!(diff.contains("-    41\n+    42\n"), "{diff}");
    assert!(diff.contains("--- a/notes.txt\n+++ /dev/null\n"), "{diff}");
    assert!(diff.contains("+++ b/gen/f2.rs\n"), "{diff}");

    // A dry run says what would change and changes nothing.
    let after_turn_2 = project_files(&root);
    let dry = rein(
        home.path(),
        &args(&["rewind", "--to", "2", "--code", "--dry-run"], &root),
    )
    .await;
    assert_eq!(dry.status.code(), Some(0), "{}", text(&dry.stderr));
    let dry = text(&dry.stdout);
    assert!(
        !dry.contains("conversation"),
        "--code touches no conversation: {dry}"
    );
    assert!(dry.contains("would restore  src/lib.rs"), "{dry}");
    assert!(dry.contains("would remove  gen/f1.rs"), "{dry}");
    assert_eq!(project_files(&root), after_turn_2);
    let both = rein(
        home.path(),
        &args(&["rewind", "--to", "2", "--dry-run"], &root),
    )
    .await;
    assert!(
        text(&both.stdout)
            .contains("conversation: would go on in a new session from before turn 2"),
        "{}",
        text(&both.stdout)
    );
    assert_eq!(project_files(&root), after_turn_2);

    // The rewind: every recorded file as before turn 2, the ignored one as it is now.
    let out = rein(
        home.path(),
        &args(&["rewind", "--to", "2", "--code"], &root),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut expected = before_turn_2.clone();
    expected.insert("build.log".into(), b"ignored\nlog\n".to_vec());
    assert_eq!(project_files(&root), expected);
    assert!(
        !root.join("gen").exists(),
        "the folder the turn made is gone"
    );
    let mut git_after = files(&root.join(".git"));
    git_after.retain(|k, _| !k.ends_with(".lock"));
    assert_eq!(
        files(&root.join(".git")),
        git_before,
        "the user's .git is untouched"
    );

    // --undo puts the turn's work back.
    let out = rein(home.path(), &args(&["rewind", "--undo"], &root)).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(project_files(&root), after_turn_2);
}

#[tokio::test]
async fn a_users_later_edit_is_kept_and_a_conversation_rewind_forks() {
    let home = tempfile::tempdir().unwrap();
    let (_dir, root) = repository();
    let server = ScriptedServer::start(vec![
        calls(&[
            call(
                "write_file",
                json!({"path": "src/lib.rs", "content": "agent\n"}),
            ),
            call(
                "write_file",
                json!({"path": "src/extra.rs", "content": "extra\n"}),
            ),
        ]),
        Reply::text("wrote"),
        Reply::text("second turn's reply"),
        Reply::text("the fork goes on"),
    ])
    .await
    .unwrap();
    turn(home.path(), &server, &root, "write two files", &[]).await;
    turn(
        home.path(),
        &server,
        &root,
        "and then this",
        &["--continue"],
    )
    .await;
    // The user edits one of the agent's files afterwards.
    write(&root, "src/lib.rs", "the user's own edit\n");
    let out = rein(
        home.path(),
        &args(&["rewind", "--to", "1", "--json"], &root),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let done = json_of(&out);
    let paths = done["files"]["paths"].as_array().unwrap();
    assert_eq!(paths.len(), 2, "{done}");
    assert_eq!(paths[0]["path"], "src/extra.rs");
    assert_eq!(paths[0]["outcome"], "removed");
    assert_eq!(paths[1]["path"], "src/lib.rs");
    assert_eq!(paths[1]["outcome"], "kept");
    assert!(paths[1]["why"]
        .as_str()
        .unwrap()
        .starts_with("changed since"));
    assert_eq!(
        std::fs::read_to_string(root.join("src/lib.rs")).unwrap(),
        "the user's own edit\n"
    );
    // The conversation: a new session from before turn 1, the original unchanged.
    let fork = done["conversation"]["session"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(done["conversation"]["message"], "write two files");
    let sessions = home.path().join("rein-home/sessions");
    let originals: Vec<PathBuf> = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "jsonl") && !p.to_string_lossy().contains(&fork)
        })
        .collect();
    assert_eq!(originals.len(), 1);
    let original_text = std::fs::read_to_string(&originals[0]).unwrap();
    // `--continue` goes on from the fork: its history holds no message of the old turns.
    turn(home.path(), &server, &root, "start again", &["--continue"]).await;
    let last = server.requests().last().unwrap().clone();
    let sent: Vec<String> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0].contains("start again"), "{sent:?}");
    assert_eq!(
        std::fs::read_to_string(&originals[0]).unwrap(),
        original_text
    );
    // --undo of the fork's rewind: the removed file comes back, the user's edit stays.
    let out = rein(
        home.path(),
        &args(&["rewind", "--undo", "--resume", &fork], &root),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(root.join("src/extra.rs")).unwrap(),
        "extra\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("src/lib.rs")).unwrap(),
        "the user's own edit\n"
    );
}

#[tokio::test]
async fn two_sessions_in_one_project_never_undo_each_other() {
    let home = tempfile::tempdir().unwrap();
    let (_dir, root) = repository();
    let server = ScriptedServer::start(vec![
        calls(&[call(
            "write_file",
            json!({"path": "a.txt", "content": "from A\n"}),
        )]),
        Reply::text("A wrote"),
        calls(&[
            call(
                "write_file",
                json!({"path": "b.txt", "content": "from B\n"}),
            ),
            bash("echo 'B was here' >> README.md"),
        ]),
        Reply::text("B wrote"),
    ])
    .await
    .unwrap();
    turn(home.path(), &server, &root, "session A", &[]).await;
    let a = json_of(&rein(home.path(), &args(&["rewind", "--list", "--json"], &root)).await)
        ["session"]
        .as_str()
        .unwrap()
        .to_string();
    // Session B: a new session in the same project.
    turn(home.path(), &server, &root, "session B", &[]).await;
    let b = json_of(&rein(home.path(), &args(&["rewind", "--list", "--json"], &root)).await)
        ["session"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(a, b);
    let out = rein(
        home.path(),
        &args(&["rewind", "--to", "1", "--code", "--resume", &a], &root),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!root.join("a.txt").exists(), "A's own file is taken back");
    assert_eq!(
        std::fs::read_to_string(root.join("b.txt")).unwrap(),
        "from B\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("README.md")).unwrap(),
        "# project\nB was here\n"
    );
    // And B's rewind leaves A's state (a.txt gone now) alone.
    let out = rein(
        home.path(),
        &args(&["rewind", "--to", "1", "--code", "--resume", &b], &root),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!root.join("b.txt").exists());
    assert_eq!(
        std::fs::read_to_string(root.join("README.md")).unwrap(),
        "# project\n"
    );
    assert!(!root.join("a.txt").exists());
}

#[tokio::test]
async fn killed_mid_turn_the_record_and_the_repository_stay_consistent() {
    let home = tempfile::tempdir().unwrap();
    let (_dir, root) = repository();
    // Enough files that the first checkpoint takes a while.
    for i in 0..3000 {
        write(
            &root,
            &format!("data/d{}/f{i}.txt", i / 100),
            &format!("{i}\n").repeat(20),
        );
    }
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "data"]);
    let git_before = files(&root.join(".git"));
    let server = ScriptedServer::start(
        (0..9)
            .flat_map(|i| {
                [
                    calls(&[bash(&format!("echo {i} > killed{i}.txt"))]),
                    Reply::text("done"),
                ]
            })
            .collect(),
    )
    .await
    .unwrap();
    turn(home.path(), &server, &root, "a whole turn first", &[]).await;
    for delay in [20, 60, 120, 250] {
        let mut a = args(
            &["-p", "go", "--yes", "--model", "scripted", "--continue"],
            &root,
        );
        a.push("--base-url".into());
        a.push(server.base_url().into());
        let mut cmd = rein_command(home.path());
        cmd.args(&a)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        let child = cmd.spawn().unwrap();
        let pid = child.id().unwrap() as i32;
        tokio::time::sleep(Duration::from_millis(delay)).await;
        // The whole group, git included, as a crash would.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        let _ = child.wait_with_output().await;
    }
    // The next turn goes on, checkpoints and all, and its rewind works.
    let server = ScriptedServer::start(vec![
        calls(&[call(
            "write_file",
            json!({"path": "after.txt", "content": "after\n"}),
        )]),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let out = turn(
        home.path(),
        &server,
        &root,
        "after the crashes",
        &["--continue"],
    )
    .await;
    assert!(
        !text(&out.stderr).contains("checkpoints are off"),
        "{}",
        text(&out.stderr)
    );
    let list = json_of(&rein(home.path(), &args(&["rewind", "--list", "--json"], &root)).await);
    let last = list["turns"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["message"], "after the crashes", "{list}");
    assert_eq!(last["files"], json!(["after.txt"]));
    let n = last["turn"].as_u64().unwrap().to_string();
    let out = rein(home.path(), &args(&["rewind", "--to", &n, "--code"], &root)).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!root.join("after.txt").exists());
    assert_eq!(
        files(&root.join(".git")),
        git_before,
        "the user's .git is untouched"
    );
}

#[tokio::test]
async fn sandboxed_commands_cannot_write_the_record_and_big_files_are_named() {
    let home = tempfile::tempdir().unwrap();
    let (_dir, root) = repository();
    std::fs::create_dir_all(home.path().join("rein-home")).unwrap();
    std::fs::write(
        home.path().join("rein-home/config.toml"),
        "[checkpoints]\nmax_file_mib = 1\n",
    )
    .unwrap();
    let record = home.path().join("rein-home/checkpoints");
    let server = ScriptedServer::start(vec![
        calls(&[
            bash("head -c 2000000 /dev/zero > big.bin"),
            // Whatever the sandbox lets through would break the record.
            bash(&format!(
                "for f in {r}/*/git/HEAD {r}/*/git/index {r}/*/last; do echo 0 > \"$f\"; done",
                r = record.display()
            )),
            call(
                "write_file",
                json!({"path": "small.txt", "content": "small\n"}),
            ),
        ]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let out = turn(home.path(), &server, &root, "make files", &[]).await;
    let err = text(&out.stderr);
    assert!(
        err.contains("checkpoints leave out: big.bin (1.9 MiB, over the size cap)"),
        "{err}"
    );
    // The command could not touch the record: the rewind still works.
    let list = json_of(&rein(home.path(), &args(&["rewind", "--list", "--json"], &root)).await);
    assert_eq!(list["turns"][0]["files"], json!(["small.txt"]), "{list}");
    let out = rein(
        home.path(),
        &args(&["rewind", "--to", "1", "--code"], &root),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!root.join("small.txt").exists());
    // The file over the cap is not the record's: left as it is.
    assert_eq!(
        std::fs::metadata(root.join("big.bin")).unwrap().len(),
        2_000_000
    );
}

/// A checkpoint that cannot be taken is said once and the turn goes on.
#[tokio::test]
async fn a_record_that_cannot_be_made_is_a_notice_not_a_failed_turn() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("project");
    std::fs::create_dir_all(&root).unwrap();
    // The data folder is a file: nothing can be made under it.
    let data = dir.path().join("data");
    std::fs::write(&data, "not a folder").unwrap();
    let server = ScriptedServer::start(vec![
        calls(&[call(
            "write_file",
            json!({"path": "a.txt", "content": "a\n"}),
        )]),
        Reply::text("wrote"),
        calls(&[call(
            "write_file",
            json!({"path": "b.txt", "content": "b\n"}),
        )]),
        Reply::text("wrote again"),
    ])
    .await
    .unwrap();
    let mut config = support::agent::scripted_config(&server, &root);
    config.checkpoints = Some(rein_core::agent::CheckpointSetup {
        data_dir: data,
        settings: rein_core::checkpoint::Settings::default(),
    });
    let mut handle = rein_core::agent::spawn(config).unwrap();
    let mut notices = Vec::new();
    for text in ["one", "two"] {
        let events = support::agent::turn(&mut handle, text).await;
        assert_eq!(
            support::agent::outcome(&events),
            rein_core::agent::TurnOutcome::Completed
        );
        notices.extend(events.into_iter().filter_map(|e| match e {
            rein_core::agent::AgentEvent::Notice { message } => Some(message),
            _ => None,
        }));
    }
    let off: Vec<&String> = notices
        .iter()
        .filter(|n| n.contains("checkpoints are off"))
        .collect();
    assert_eq!(off.len(), 1, "said once: {notices:?}");
    assert!(root.join("a.txt").exists() && root.join("b.txt").exists());
}

/// A session chosen with `--resume` from another folder is rewound in its own project.
#[tokio::test]
async fn a_session_of_another_project_is_rewound_where_it_ran() {
    let home = tempfile::tempdir().unwrap();
    let (_dir, root) = repository();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("a.txt"), "not the session's\n").unwrap();
    let server = ScriptedServer::start(vec![
        calls(&[call(
            "write_file",
            json!({"path": "a.txt", "content": "from the turn\n"}),
        )]),
        Reply::text("wrote"),
    ])
    .await
    .unwrap();
    turn(home.path(), &server, &root, "write a", &[]).await;
    let id = json_of(&rein(home.path(), &args(&["rewind", "--list", "--json"], &root)).await)
        ["session"]
        .as_str()
        .unwrap()
        .to_string();
    let out = rein(
        home.path(),
        &args(
            &["rewind", "--to", "1", "--code", "--resume", &id],
            elsewhere.path(),
        ),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("the session ran in"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        !root.join("a.txt").exists(),
        "restored where the session ran"
    );
    assert_eq!(
        std::fs::read_to_string(elsewhere.path().join("a.txt")).unwrap(),
        "not the session's\n"
    );
}

/// Every entry under `dir` (less `.git` and `.rein`) by its name's bytes: a file's content, a link's
/// target after `-> `, a folder as `/`.
fn entries(dir: &Path) -> BTreeMap<Vec<u8>, Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(dir)
                .unwrap()
                .as_os_str()
                .as_bytes()
                .to_vec();
            // The user's repository, and the folder rein keeps in a project.
            if rel == b".git" || rel == b".rein" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, [b"-> ", target.as_os_str().as_bytes()].concat());
            } else if meta.is_dir() {
                out.insert(rel, b"/".to_vec());
                stack.push(path);
            } else {
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// What differs between two listings, readable.
fn differ(a: &BTreeMap<Vec<u8>, Vec<u8>>, b: &BTreeMap<Vec<u8>, Vec<u8>>) -> Vec<String> {
    let keys: std::collections::BTreeSet<&Vec<u8>> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            format!(
                "{}: {:?} / {:?}",
                k.escape_ascii(),
                a.get(k).map(|v| v.escape_ascii().to_string()),
                b.get(k).map(|v| v.escape_ascii().to_string())
            )
        })
        .collect()
}

/// Names that are not UTF-8 or hold a newline, a tab, quotes, a backslash or a leading
/// dash are recorded like any other: a turn that makes, changes and removes them is
/// taken back exactly, and the list and the rewind name them quoted and escaped.
#[tokio::test]
async fn names_that_are_not_utf8_or_hold_odd_characters_are_rewound_and_named() {
    use std::os::unix::ffi::OsStrExt;
    let home = tempfile::tempdir().unwrap();
    let (_dir, root) = repository();
    let at = |name: &[u8]| root.join(std::ffi::OsStr::from_bytes(name));
    std::fs::write(at(b"caf\xe9.txt"), "old latin-1 name\n").unwrap();
    std::fs::write(at(b"gone\xff.txt"), "to be removed\n").unwrap();
    std::fs::write(at(b"line\nbreak"), "old\n").unwrap();
    let server = ScriptedServer::start(vec![
        calls(&[bash(
            "printf 'changed\\n' > $'caf\\xe9.txt' && unlink $'gone\\xff.txt' \
             && printf 'new\\n' > $'line\\nbreak' && printf made > $'tab\\there' \
             && printf made > 'say \"hi\"' && printf made > -dash && printf made > 'back\\slash' \
             && mkdir $'dir\\xfe' && printf made > $'dir\\xfe/inner'",
        )]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let before = entries(&root);
    let out = turn(home.path(), &server, &root, "rename things", &[]).await;
    let requests = server.requests();
    assert!(
        !text(&out.stderr).contains("leave out"),
        "nothing is left out: {}",
        text(&out.stderr)
    );
    let after = entries(&root);
    assert_ne!(before, after, "{:?}", requests.last());

    let list = rein(home.path(), &args(&["rewind", "--list"], &root)).await;
    let shown = text(&list.stdout);
    for name in [
        r#""caf\xe9.txt""#,
        r#""gone\xff.txt""#,
        r#""line\nbreak""#,
        r#""tab\there""#,
        r#""say \"hi\"""#,
        r#""back\\slash""#,
        r#""dir\xfe/inner""#,
        "-dash",
    ] {
        assert!(shown.contains(name), "{name} in {shown}");
    }
    let json = json_of(&rein(home.path(), &args(&["rewind", "--list", "--json"], &root)).await);
    let files = &json["turns"][0]["files"];
    assert!(
        files
            .as_array()
            .unwrap()
            .contains(&json!({"bytes": "636166e92e747874"})),
        "{files}"
    );

    let out = rein(
        home.path(),
        &args(&["rewind", "--to", "1", "--code"], &root),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.contains(r#"restored  "caf\xe9.txt""#), "{said}");
    assert!(said.contains(r#"removed  "tab\there""#), "{said}");
    let now = entries(&root);
    assert!(now == before, "{said}{:?}", differ(&now, &before));
    let out = rein(home.path(), &args(&["rewind", "--undo"], &root)).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let now = entries(&root);
    assert!(now == after, "{:?}", differ(&now, &after));
}

/// A turn that puts a folder where a file was, a file where a folder was, a link where
/// either was or either where a link was is taken back: what the turn made is removed and
/// the old kind comes back. A file of the user's in the turn's folder is kept, and named,
/// unless forced; forced, it goes, and the undo brings it back.
#[tokio::test]
async fn every_kind_replaced_by_another_is_rewound_and_what_the_user_added_is_kept() {
    let home = tempfile::tempdir().unwrap();
    let (_dir, root) = repository();
    write(&root, "file-to-folder", "a file\n");
    write(&root, "file-to-link", "a file\n");
    write(&root, "folder-to-file/inner.txt", "inner\n");
    write(&root, "folder-to-file/deep/more.txt", "more\n");
    write(&root, "folder-to-link/inner.txt", "inner\n");
    std::os::unix::fs::symlink("README.md", root.join("link-to-file")).unwrap();
    std::os::unix::fs::symlink("src", root.join("link-to-folder")).unwrap();
    let server = ScriptedServer::start(vec![
        calls(&[bash(
            "unlink file-to-folder && mkdir -p file-to-folder/deep && echo made > file-to-folder/deep/x \
             && unlink folder-to-file/inner.txt && unlink folder-to-file/deep/more.txt \
             && rmdir folder-to-file/deep folder-to-file && echo made > folder-to-file \
             && unlink file-to-link && ln -s README.md file-to-link \
             && unlink link-to-file && echo made > link-to-file \
             && unlink folder-to-link/inner.txt && rmdir folder-to-link && ln -s src folder-to-link \
             && unlink link-to-folder && mkdir link-to-folder && echo made > link-to-folder/y",
        )]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let before = entries(&root);
    turn(home.path(), &server, &root, "swap kinds", &[]).await;
    let after = entries(&root);
    assert_ne!(before, after, "{:?}", server.requests().last());
    // The user adds a file of their own in a folder the turn made.
    write(&root, "file-to-folder/mine.txt", "the user's\n");

    let out = rein(
        home.path(),
        &args(&["rewind", "--to", "1", "--code"], &root),
    )
    .await;
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said} {}", text(&out.stderr));
    assert!(
        said.contains("kept  file-to-folder  (a folder is there now")
            && said.contains("file-to-folder/mine.txt")
            && said.contains("--force"),
        "{said}"
    );
    let mut expected = before.clone();
    expected.remove(b"file-to-folder".as_slice());
    expected.insert(b"file-to-folder".to_vec(), b"/".to_vec());
    expected.insert(
        b"file-to-folder/mine.txt".to_vec(),
        b"the user's\n".to_vec(),
    );
    let now = entries(&root);
    assert!(now == expected, "{said}{:?}", differ(&now, &expected));

    let out = rein(
        home.path(),
        &args(&["rewind", "--to", "1", "--code", "--force"], &root),
    )
    .await;
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said} {}", text(&out.stderr));
    assert!(said.contains("removed  file-to-folder/mine.txt"), "{said}");
    let now = entries(&root);
    assert!(now == before, "{said}{:?}", differ(&now, &before));
    let out = rein(home.path(), &args(&["rewind", "--undo"], &root)).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read(root.join("file-to-folder/mine.txt")).unwrap(),
        b"the user's\n"
    );
}

/// A checkpoint with many files to record (a big project's first) is said as it starts,
/// and how long it took when done (the number of files decides, not the clock).
#[tokio::test]
async fn a_checkpoint_of_many_files_is_said_before_and_after() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("project");
    std::fs::create_dir_all(&root).unwrap();
    let files = rein_core::checkpoint::MANY_FILES + 1;
    for i in 0..files {
        std::fs::write(root.join(format!("f{i}.txt")), format!("{i}\n")).unwrap();
    }
    let server = ScriptedServer::start(vec![Reply::text("hello")])
        .await
        .unwrap();
    let out = turn(home.path(), &server, &root, "hi", &[]).await;
    let err = text(&out.stderr);
    let count = format!("{},{:03}", files / 1000, files % 1000);
    assert!(
        err.contains(&format!(
            "rein: taking a checkpoint of {count} new or changed files"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("rein: checkpoint of {count} files taken in ")),
        "{err}"
    );
    // The next one, of the unchanged tree, says nothing.
    let server = ScriptedServer::start(vec![Reply::text("hello")])
        .await
        .unwrap();
    let out = turn(home.path(), &server, &root, "again", &["--continue"]).await;
    assert!(
        !text(&out.stderr).contains("checkpoint of"),
        "{}",
        text(&out.stderr)
    );
}
