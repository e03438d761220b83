//! The record: sandboxed commands cannot write it, one that cannot be made is a notice, a
//! session of another project, a checkpoint of many files.

use crate::support;

use serde_json::json;
use support::agent::{call, calls};
use support::{Reply, ScriptedServer};

use super::{args, bash, json_of, rein, repository, text, turn};

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
