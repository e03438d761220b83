//! Listing and export: newest first, the latest of a project, a readable transcript, two
//! thousand large sessions.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use rein_core::agent::{Message, ToolCall};
use rein_core::permissions::Grant;
use rein_core::session::{
    self, export_markdown, latest_for_project, list, list_with_stats, load, Entry, MessageCount,
    Record, SessionMeta,
};
use rein_core::tools::write_todos::TodoStatus;

use super::{new_writer, todo};

fn set_mtime(path: &Path, secs_ago: u64) {
    File::options()
        .append(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(secs_ago))
        .unwrap();
}

#[test]
fn listing_is_newest_first_and_falls_back_to_the_meta_line() {
    let home = tempfile::tempdir().unwrap();
    assert!(list(home.path()).is_empty());
    let mut paths: Vec<PathBuf> = Vec::new();
    for (i, project) in ["/a", "/b", "/c"].iter().enumerate() {
        let mut w = new_writer(home.path(), project);
        for n in 0..=i {
            w.append(&Entry::message(Message::user(format!("{project} #{n}"))))
                .unwrap();
        }
        paths.push(w.path().to_path_buf());
    }
    // /b was used last, then /a, then /c.
    set_mtime(&paths[1], 10);
    set_mtime(&paths[0], 20);
    set_mtime(&paths[2], 30);
    let listed = list(home.path());
    let projects: Vec<&Path> = listed.iter().map(|s| s.project.as_path()).collect();
    assert_eq!(
        projects,
        [Path::new("/b"), Path::new("/a"), Path::new("/c")]
    );
    assert_eq!(listed[0].title.as_deref(), Some("/b #0"));
    assert_eq!(listed[0].messages, MessageCount::Exact(2));
    assert_eq!(listed[0].model, "test-model");
    assert_eq!(listed[0].path, paths[1]);
    assert_eq!(listed[2].messages, MessageCount::Exact(3));

    // No sidecar: only the first line is read; no title, count unknown.
    fs::remove_file(session::summary_path(&paths[0])).unwrap();
    let (listed, stats) = list_with_stats(home.path());
    assert_eq!(listed.len(), 3);
    assert_eq!(listed[1].project, Path::new("/a"));
    assert_eq!(listed[1].title, None);
    assert_eq!(listed[1].messages, MessageCount::Unknown);
    assert_eq!(stats.files_opened, 3);
}

#[test]
fn latest_for_project_picks_the_newest_session_of_that_project() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("proj");
    fs::create_dir(&project).unwrap();
    let project = fs::canonicalize(&project).unwrap();
    let old = new_writer(home.path(), project.to_str().unwrap());
    let other = new_writer(home.path(), "/elsewhere");
    let new = new_writer(home.path(), project.to_str().unwrap());
    set_mtime(old.path(), 60);
    set_mtime(new.path(), 30);
    set_mtime(other.path(), 1);
    let found = latest_for_project(home.path(), &project).unwrap();
    assert_eq!(found.id, new.id());
    assert!(latest_for_project(home.path(), Path::new("/nowhere")).is_none());

    // Find by id or a unique prefix of it.
    assert_eq!(session::find(home.path(), new.id()).unwrap(), new.path());
    let prefix = &new.id()[..new.id().len() - 3];
    let by_prefix = session::find(home.path(), prefix);
    if [old.id(), other.id()]
        .iter()
        .all(|id| !id.starts_with(prefix))
    {
        assert_eq!(by_prefix.unwrap(), new.path());
    }
    let all = session::find(home.path(), "2").unwrap_err();
    assert!(all.to_string().contains("matches 3 sessions"), "{all}");
    assert_eq!(
        session::find(home.path(), "1999").unwrap_err().kind(),
        std::io::ErrorKind::NotFound
    );
    assert!(session::find(home.path(), "../x").is_err());
}

#[test]
fn export_is_a_readable_transcript() {
    let home = tempfile::tempdir().unwrap();
    let mut w = new_writer(home.path(), "/work/app");
    let long_result: String = (0..200).map(|i| format!("line {i}\n")).collect();
    for m in [
        Message::user("List the files"),
        Message::assistant(
            "Sure.".into(),
            vec![ToolCall::new("c1", "bash", r#"{"command":"ls -la"}"#)],
        ),
        Message::tool("c1", long_result),
        Message::assistant("There are 200 lines of output.".into(), vec![]),
    ] {
        w.append(&Entry::message(m)).unwrap();
    }
    w.append(&Entry::todos(vec![
        todo("List the files", TodoStatus::Completed),
        todo("Count them", TodoStatus::Pending),
    ]))
    .unwrap();
    w.append(&Entry::rule(&Grant::Bash("ls *".into()))).unwrap();
    let path = w.path().to_path_buf();
    drop(w);
    let md = export_markdown(&load(&path).unwrap());
    for needle in [
        "# List the files\n",
        "- Project: `/work/app`",
        "- Model: `test-model`",
        "## User\n\nList the files\n",
        "## Assistant\n\nSure.\n",
        "Tool call `bash`:\n\n```json\n{\n  \"command\": \"ls -la\"\n}\n```",
        "Result of `bash`:\n\n```text\nline 0\n",
        "line 39\n```",
        "*(160 more lines not shown)*",
        "There are 200 lines of output.",
        "- [x] List the files\n- [ ] Count them",
        "commands matching `ls *`",
    ] {
        assert!(md.contains(needle), "missing {needle:?} in:\n{md}");
    }
    assert!(!md.contains("line 40\n"));
}

/// 2,000 sessions of ~200 KB: listing opens one small file per session and reads at most a
/// few KB of it. Files are extended sparsely (`set_len`) so the test stays fast; listing
/// would have to read the zeros if it read whole files, and the byte count would show it.
#[test]
fn listing_two_thousand_large_sessions_reads_only_a_little_of_each() {
    const SESSIONS: usize = 2000;
    const SIZE: u64 = 200 * 1024;
    let home = tempfile::tempdir().unwrap();
    let dir = session::sessions_dir(home.path());
    for i in 0..SESSIONS {
        let path = if i % 2 == 0 {
            // Written by the writer, with its summary sidecar.
            let mut w = new_writer(home.path(), "/big");
            w.append(&Entry::message(Message::user(format!("session {i}"))))
                .unwrap();
            let path = w.path().to_path_buf();
            drop(w); // writes the sidecar; `close` would also fsync, slow for 1,000 files
            path
        } else {
            // No sidecar: listing reads the meta line.
            // Ids made in one second share their prefix; like the writer, draw again
            // on a clash so no file overwrites another.
            let (meta, path) = loop {
                let meta = SessionMeta::new("/big", "test-model");
                let path = dir.join(format!("{}.jsonl", meta.id));
                if !path.exists() {
                    break (meta, path);
                }
            };
            let line = serde_json::to_string(&Record {
                ts: meta.started.clone(),
                entry: Entry::Meta(meta),
            })
            .unwrap();
            fs::write(&path, line + "\n").unwrap();
            path
        };
        File::options()
            .append(true)
            .open(&path)
            .unwrap()
            .set_len(SIZE)
            .unwrap();
    }
    let started = Instant::now();
    let (listed, stats) = list_with_stats(home.path());
    let took = started.elapsed();
    eprintln!("listed {SESSIONS} sessions in {took:?}: {stats:?}");
    assert_eq!(listed.len(), SESSIONS);
    assert_eq!(stats.files_opened, SESSIONS);
    assert!(
        stats.bytes_read <= SESSIONS as u64 * 2048,
        "read {} bytes",
        stats.bytes_read
    );
    assert_eq!(
        listed
            .iter()
            .filter(|s| s.messages == MessageCount::Unknown)
            .count(),
        SESSIONS / 2
    );
    // The sidecar was written for the shorter file: the count is flagged as approximate.
    assert!(listed
        .iter()
        .filter(|s| s.title.is_some())
        .all(|s| s.messages == MessageCount::Approx(1)));
}
