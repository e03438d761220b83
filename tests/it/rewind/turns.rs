//! Taking a turn back: exactly, keeping the user's later edit, forking the conversation, two
//! sessions in one project, killed mid-turn.

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use support::agent::{call, calls};
use support::rein_command;
use support::{Reply, ScriptedServer};

use super::{args, bash, files, git, json_of, rein, repository, text, turn, write};

fn project_files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut all = files(root);
    all.retain(|k, _| !k.starts_with(".git/"));
    all
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
