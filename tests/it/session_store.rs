//! The session store through its public API: files written by `SessionWriter`, read back by
//! `load`, listed by `list`, exported as Markdown; torn and garbage lines; a writer killed
//! with SIGKILL in a child process (this test binary run again in a "writer" mode).

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use rein_core::agent::{Message, ToolCall};
use rein_core::conversation::{ToolOutcome, ToolResult};
use rein_core::permissions::Grant;
use rein_core::session::{
    self, export_markdown, latest_for_project, list, list_with_stats, load, load_with,
    read_records, read_result, Entry, MessageCount, Record, SessionMeta, SessionWriter, Shown,
    NOT_RUN, SUMMARY_EVERY,
};
use rein_core::tools::write_todos::{Todo, TodoStatus};

/// Set in the child process of the crash test: the data dir to write a session into.
const CHILD_ENV: &str = "REIN_SESSION_CRASH_CHILD";

fn new_writer(data_dir: &Path, project: &str) -> SessionWriter {
    SessionWriter::create(data_dir, SessionMeta::new(project, "test-model")).unwrap()
}

fn todo(content: &str, status: TodoStatus) -> Todo {
    Todo {
        content: content.into(),
        status,
        active_form: None,
    }
}

fn calls(ids: &[&str]) -> Message {
    Message::assistant(
        String::new(),
        ids.iter()
            .map(|id| ToolCall::new(*id, "bash", r#"{"command":"ls"}"#))
            .collect(),
    )
}

fn kinds(path: &Path) -> Vec<&'static str> {
    read_records(path)
        .unwrap()
        .0
        .iter()
        .map(|r| r.entry.kind())
        .collect()
}

/// Every assistant message with calls is followed by exactly one result per call, in
/// call order.
fn assert_valid_request(history: &[Message]) {
    let mut i = 0;
    while i < history.len() {
        if let Message::Assistant { tool_calls, .. } = &history[i] {
            let mut ids: Vec<&str> = tool_calls.iter().map(|c| c.id.as_str()).collect();
            i += 1;
            while let Some(Message::Tool { tool_call_id, .. }) = history.get(i) {
                assert!(
                    ids.first() == Some(&tool_call_id.as_str()),
                    "result {tool_call_id} where {ids:?} wait, in that order"
                );
                ids.remove(0);
                i += 1;
            }
            assert!(ids.is_empty(), "calls {ids:?} have no result");
        } else {
            assert!(!matches!(history[i], Message::System { .. }));
            assert!(!matches!(history[i], Message::Tool { .. }), "orphan result");
            i += 1;
        }
    }
}

#[test]
fn every_entry_type_round_trips() {
    let home = tempfile::tempdir().unwrap();
    let mut w = new_writer(home.path(), "/work/project");
    let meta = w.meta().clone();
    let todos = vec![
        todo("Read the code", TodoStatus::Completed),
        Todo {
            content: "Fix the bug".into(),
            status: TodoStatus::InProgress,
            active_form: Some("Fixing the bug".into()),
        },
    ];
    let history = vec![
        Message::user("Why does the\n  build fail on CI?"),
        Message::assistant(
            "Let me look.".into(),
            vec![ToolCall::new("c1", "bash", r#"{"command":"cargo build"}"#)],
        ),
        Message::tool("c1", "error[E0425]: cannot find value `x`"),
        Message::assistant("A typo: `x` should be `y`.".into(), vec![]),
    ];
    w.append(&Entry::message(Message::system("the system prompt")))
        .unwrap();
    for m in &history[..3] {
        w.append(&Entry::message(m.clone())).unwrap();
    }
    w.append(&Entry::todos(todos.clone())).unwrap();
    w.append(&Entry::rule(&Grant::Bash("cargo build *".into())))
        .unwrap();
    w.append(&Entry::rule(&Grant::Write("/work/project/src".into())))
        .unwrap();
    w.append(&Entry::rule(&Grant::Bash("cargo build *".into())))
        .unwrap();
    w.append(&Entry::rule(&Grant::Tool(
        "mcp__github__create_issue".into(),
    )))
    .unwrap();
    w.append(&Entry::message(history[3].clone())).unwrap();
    assert_eq!(w.title(), Some("Why does the build fail on CI?"));
    w.rename("  CI   build ").unwrap();
    assert!(w.append(&Entry::Meta(meta.clone())).is_err());
    assert!(w.rename(" \n").is_err());
    let path = w.path().to_path_buf();
    assert_eq!(path, session::session_path(home.path(), &meta.id));
    w.close().unwrap();

    assert_eq!(
        kinds(&path),
        [
            "meta", "message", "title", "message", "message", "todos", "rule", "rule", "rule",
            "rule", "message", "title"
        ]
    );
    let text = fs::read_to_string(&path).unwrap();
    assert!(!text.contains("the system prompt"));
    assert!(text
        .lines()
        .all(|l| l.starts_with("{\"ts\":\"20") && l.ends_with('}')));

    let s = load(&path).unwrap();
    assert_eq!(s.meta, meta);
    assert_eq!(s.meta.project, Path::new("/work/project"));
    assert_eq!(s.meta.rein_version, env!("CARGO_PKG_VERSION"));
    assert_eq!(s.title.as_deref(), Some("CI build"));
    assert_eq!(s.history, history);
    assert_eq!(s.transcript, history);
    assert_eq!(s.todos, todos);
    assert_eq!(
        s.rules,
        [
            Grant::Bash("cargo build *".into()),
            Grant::Write("/work/project/src".into()),
            Grant::Tool("mcp__github__create_issue".into())
        ]
    );
    assert_eq!(s.message_count, 4);
    assert_eq!(s.synthetic_results, 0);
    assert!(s.notices.is_empty(), "{:?}", s.notices);
}

#[test]
fn a_compaction_replaces_the_history_before_it() {
    let home = tempfile::tempdir().unwrap();
    let mut w = new_writer(home.path(), "/p");
    for m in [
        Message::user("one"),
        Message::assistant("two".into(), vec![]),
    ] {
        w.append(&Entry::message(m)).unwrap();
    }
    let summary = Message::user("Summary: the user said one, you said two.");
    w.append(&Entry::compaction(vec![
        Message::system("old system prompt"),
        summary.clone(),
    ]))
    .unwrap();
    w.append(&Entry::message(Message::user("three"))).unwrap();
    let path = w.path().to_path_buf();
    drop(w);

    let s = load(&path).unwrap();
    assert_eq!(s.history, vec![summary, Message::user("three")]);
    assert_eq!(s.transcript.len(), 3);
    assert_eq!(s.compactions, vec![2]);
    assert_eq!(s.message_count, 3);
    assert_eq!(s.title.as_deref(), Some("one"));
    assert!(!fs::read_to_string(&path)
        .unwrap()
        .contains("old system prompt"));
    let md = export_markdown(&s);
    assert!(md.contains("compacted here"), "{md}");
}

#[test]
fn a_torn_last_line_is_skipped_and_cut_off_before_appending() {
    let home = tempfile::tempdir().unwrap();
    let mut w = new_writer(home.path(), "/p");
    w.append(&Entry::message(Message::user("first"))).unwrap();
    w.append(&Entry::message(Message::assistant("second".into(), vec![])))
        .unwrap();
    let path = w.path().to_path_buf();
    drop(w);
    // Half of a real line, as a crash in the middle of the write would leave it.
    let line = serde_json::to_string(&Record {
        ts: session::now_rfc3339(),
        entry: Entry::message(Message::user("third, never finished")),
    })
    .unwrap();
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(&line.as_bytes()[..line.len() / 2]).unwrap();
    drop(f);

    let s = load(&path).unwrap();
    assert_eq!(
        s.notices,
        [format!(
            "the last entry of {} was cut off and was skipped",
            path.display()
        )]
    );
    assert_eq!(
        s.history,
        [
            Message::user("first"),
            Message::assistant("second".into(), vec![])
        ]
    );

    let (mut w, _) = SessionWriter::resume(&path).unwrap();
    w.append(&Entry::message(Message::user("third"))).unwrap();
    drop(w);
    let s = load(&path).unwrap();
    assert!(s.notices.is_empty(), "{:?}", s.notices);
    assert_eq!(s.message_count, 3);
    assert_eq!(s.history.last(), Some(&Message::user("third")));
}

#[test]
fn a_garbage_line_in_the_middle_is_skipped_with_its_number() {
    let home = tempfile::tempdir().unwrap();
    let mut w = new_writer(home.path(), "/p");
    w.append(&Entry::message(Message::user("first"))).unwrap();
    let path = w.path().to_path_buf();
    // Lines so far: meta, message, title. Line 4 is garbage.
    OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"{\"ts\":\"x\",\"type\":\"message\",\"message\":{\"role\":\"nobody\"}}\n")
        .unwrap();
    w.append(&Entry::message(Message::assistant("second".into(), vec![])))
        .unwrap();
    drop(w);

    let s = load(&path).unwrap();
    assert_eq!(s.notices.len(), 1, "{:?}", s.notices);
    assert!(
        s.notices[0].starts_with(&format!(
            "line 4 of {} is not a valid session entry and was skipped",
            path.display()
        )),
        "{:?}",
        s.notices
    );
    assert_eq!(
        s.history,
        [
            Message::user("first"),
            Message::assistant("second".into(), vec![])
        ]
    );
}

#[test]
fn a_turn_cut_off_mid_tool_gets_exactly_the_missing_results() {
    let home = tempfile::tempdir().unwrap();
    let mut w = new_writer(home.path(), "/p");
    for m in [
        Message::user("look around"),
        calls(&["call_a", "call_b"]),
        Message::tool("call_a", "src tests"),
    ] {
        w.append(&Entry::message(m)).unwrap();
    }
    let path = w.path().to_path_buf();
    w.abandon(); // killed: no drop, no close

    let s = load(&path).unwrap();
    assert_eq!(s.synthetic_results, 1);
    assert_eq!(s.history.len(), 4);
    assert_eq!(
        s.history[3],
        synthetic("call_b", NOT_RUN, ToolOutcome::NotRun)
    );
    assert_eq!(s.message_count, 3);
    assert_valid_request(&s.history);
    assert!(
        s.notices.iter().any(|n| n.contains("1 tool call finished")),
        "{:?}",
        s.notices
    );
}

/// A file whose results are out of call order (nothing in the format forbids it) loads
/// with them in call order, the one missing answered in its place, and makes a request
/// that keeps the order rules.
#[test]
fn results_out_of_call_order_load_in_call_order() {
    let home = tempfile::tempdir().unwrap();
    let mut w = new_writer(home.path(), "/p");
    for m in [
        Message::user("look around"),
        calls(&["call_a", "call_b", "call_c"]),
        Message::tool("call_c", "three"),
        Message::tool("call_a", "one"),
        Message::assistant("done".into(), vec![]),
        Message::user("and now?"),
    ] {
        w.append(&Entry::message(m)).unwrap();
    }
    let path = w.path().to_path_buf();
    drop(w);

    let s = load(&path).unwrap();
    assert_valid_request(&s.history);
    let ids: Vec<&str> = s
        .history
        .iter()
        .filter_map(|m| match m {
            Message::Tool { tool_call_id, .. } => Some(tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["call_a", "call_b", "call_c"]);
    assert_eq!(s.history[4], Message::tool("call_c", "three"));
    assert_eq!(s.synthetic_results, 1);
    // The request built from it keeps every rule.
    let mut request = vec![Message::system("s")];
    request.extend(s.history.iter().cloned());
    let wire = serde_json::to_value(rein_core::conversation::wire::WireMessages {
        history: &request,
        options: rein_core::conversation::wire::WireOptions {
            model: "m",
            cache_control: false,
            images: false,
        },
    })
    .unwrap();
    assert_eq!(
        rein_core::conversation::order::check(wire.as_array().unwrap()),
        Ok(())
    );
}

/// Issue 16, item 4: loaded for a screen, a long result keeps its head in the transcript
/// (with how many lines follow and where its entry is) while the history keeps all of it;
/// the whole text reads back from that entry; a repaired history keeps the folds in line.
#[test]
fn long_results_load_as_heads_and_read_back_whole() {
    let home = tempfile::tempdir().unwrap();
    let mut w = new_writer(home.path(), "/p");
    let long: String = (1..=500).map(|i| format!("line {i}\n")).collect();
    // Over the write buffer: streamed, yet one line.
    let huge: String = "x".repeat(200_000);
    let mut offsets = Vec::new();
    for m in [
        Message::user("look around"),
        calls(&["a", "b", "c"]),
        Message::tool("a", &long),
        Message::tool("b", "short"),
        Message::tool("c", &huge),
        Message::assistant("now the rest".into(), vec![]),
        calls(&["d"]),
    ] {
        offsets.push(w.append_message(&m).unwrap());
    }
    let path = w.path().to_path_buf();
    w.close().unwrap();
    assert!(offsets.iter().all(Option::is_some), "{offsets:?}");

    let s = load_with(&path, Shown::Heads(3)).unwrap();
    assert_eq!(s.transcript.len(), s.folds.len());
    // The unanswered call got its synthetic result, with no fold, in line.
    assert_eq!(s.transcript.len(), 8);
    assert_eq!(s.folds[7], None);
    let Message::Tool { content, .. } = &s.transcript[2] else {
        panic!("{:?}", s.transcript[2])
    };
    assert_eq!(content, "line 1\nline 2\nline 3");
    let fold = s.folds[2].expect("the long result is folded");
    assert_eq!(fold.more_lines, 497);
    assert_eq!(Some(fold.offset), offsets[2]);
    assert_eq!(read_result(&path, fold.offset, "a").unwrap(), long);
    assert_eq!(s.folds[3], None, "a short result stays whole");
    let fold = s.folds[4].expect("one long line is folded too");
    assert_eq!(read_result(&path, fold.offset, "c").unwrap(), huge);
    // The history the model sees next has every byte.
    assert_eq!(s.history[2], Message::tool("a", &long));
    // Loaded whole (an export), nothing is folded.
    let whole = load(&path).unwrap();
    assert!(whole.folds.iter().all(Option::is_none));
    assert_eq!(whole.transcript[2], Message::tool("a", &long));
}

/// A result from before rein recorded outcomes is judged by all of its text, not by the
/// head the transcript keeps of it.
#[test]
fn a_folded_old_results_outcome_is_guessed_from_the_whole_text() {
    let home = tempfile::tempdir().unwrap();
    let mut w = new_writer(home.path(), "/p");
    let text = format!(
        "Error: {}\nthe command was interrupted by the user",
        "partial output\n".repeat(200)
    );
    for m in [Message::user("go"), calls(&["a"])] {
        w.append_message(&m).unwrap();
    }
    let path = w.path().to_path_buf();
    w.close().unwrap();
    let line = format!(
        "{{\"ts\":\"t\",\"type\":\"message\",\"message\":{{\"role\":\"tool\",\
         \"tool_call_id\":\"a\",\"content\":{}}}}}\n",
        serde_json::to_string(&text).unwrap()
    );
    OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(line.as_bytes())
        .unwrap();
    let s = load_with(&path, Shown::Heads(3)).unwrap();
    assert!(s.folds[2].is_some());
    assert_eq!(
        session::tool_outcome(&s.transcript[2], "bash"),
        Some(ToolOutcome::Interrupted)
    );
}

/// Not a test on its own: the crash test runs this binary again with [`CHILD_ENV`] set, and
/// this writes a tool-heavy session until it is killed.
#[test]
fn crash_child_writer() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let mut w = new_writer(Path::new(&dir), "/crash");
    let result = "output line\n".repeat(2000);
    for i in 0u64.. {
        let id = format!("call_{i}");
        let entries = [
            Entry::message(Message::user(format!("step {i}"))),
            Entry::message(calls(&[&id])),
            Entry::message(Message::tool(&id, &result)),
            Entry::todos(vec![todo(&format!("step {i}"), TodoStatus::InProgress)]),
        ];
        for e in &entries {
            w.append(e).unwrap();
        }
    }
}

/// Kills the child if the test fails before it does.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn sigkill_mid_write_loses_at_most_the_entry_being_written() {
    let home = tempfile::tempdir().unwrap();
    let child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "session_store::crash_child_writer",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, home.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = KillOnDrop(child);
    let sessions = session::sessions_dir(home.path());
    let deadline = Instant::now() + Duration::from_secs(20);
    let path = loop {
        assert!(Instant::now() < deadline, "the child wrote too little");
        let file = fs::read_dir(&sessions).ok().and_then(|d| {
            d.flatten()
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        });
        if let Some(p) = file {
            if fs::read(&p)
                .unwrap()
                .iter()
                .filter(|b| **b == b'\n')
                .count()
                > 400
            {
                break p;
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let pid = child.0.id() as libc::pid_t;
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    child.0.wait().unwrap();

    let bytes = fs::read(&path).unwrap();
    let whole_lines = bytes.iter().filter(|b| **b == b'\n').count();
    let torn = !bytes.ends_with(b"\n");
    let (records, notices) = read_records(&path).unwrap();
    assert_eq!(records.len(), whole_lines, "every complete line is back");
    assert_eq!(notices.len(), usize::from(torn), "{notices:?}");

    let s = load(&path).unwrap();
    assert_eq!(s.meta.project, Path::new("/crash"));
    // Messages come back in order, none missing.
    let steps: Vec<&str> = s
        .transcript
        .iter()
        .filter_map(|m| match m {
            Message::User { content, .. } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    for (i, step) in steps.iter().enumerate() {
        assert_eq!(*step, format!("step {i}"));
    }
    assert_valid_request(&s.history);

    // The session goes on: the torn tail (if any) is cut and new entries load cleanly.
    let (mut w, loaded) = SessionWriter::resume(&path).unwrap();
    assert_eq!(loaded.message_count, s.message_count);
    w.append(&Entry::message(Message::user("after the crash")))
        .unwrap();
    w.close().unwrap();
    let again = load(&path).unwrap();
    assert!(again.notices.iter().all(|n| !n.contains("was skipped")));
    assert_eq!(again.message_count, s.message_count + 1);
}

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
fn a_crash_leaves_an_approximate_count_that_close_makes_exact() {
    let home = tempfile::tempdir().unwrap();
    let mut w = new_writer(home.path(), "/p");
    w.append(&Entry::message(Message::user("hello"))).unwrap();
    w.append(&Entry::message(calls(&["c"]))).unwrap();
    w.append(&Entry::message(Message::tool("c", "ok"))).unwrap();
    let path = w.path().to_path_buf();
    w.abandon(); // killed: the sidecar was last written with the title
    assert_eq!(list(home.path())[0].messages, MessageCount::Approx(1));
    // The picker's count reads the tail the sidecar does not cover: exact again.
    assert_eq!(
        session::exact_count(&list(home.path())[0]),
        MessageCount::Exact(3)
    );

    let mut w = SessionWriter::open_append(&path).unwrap();
    assert_eq!(w.message_count(), 3);
    for i in 0..SUMMARY_EVERY {
        w.append(&Entry::message(Message::user(format!("{i}"))))
            .unwrap();
    }
    w.abandon(); // killed right after the periodic rewrite
    let expected = 3 + SUMMARY_EVERY;
    assert_eq!(list(home.path())[0].messages, MessageCount::Exact(expected));

    let mut w = SessionWriter::open_append(&path).unwrap();
    w.append(&Entry::todos(vec![todo("x", TodoStatus::Pending)]))
        .unwrap();
    w.append(&Entry::message(Message::user("last"))).unwrap();
    w.close().unwrap();
    let listed = list(home.path());
    assert_eq!(listed[0].messages, MessageCount::Exact(expected + 1));
    assert_eq!(listed[0].title.as_deref(), Some("hello"));
    assert_eq!(load(&path).unwrap().message_count, expected + 1);
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

#[test]
fn reasoning_reminders_and_refusals_survive_the_file_and_show_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = new_writer(dir.path(), "/p");
    let mut user = Message::user("look");
    user.set_reminder("(rein context, not part of the request: time x.)".into());
    let mut call = ToolCall::new("c1", "bash", r#"{"command":"ls"}"#);
    call.extra.insert(
        "extra_content".into(),
        serde_json::json!({"google": {"thought_signature": "SIG"}}),
    );
    let thinking = Message::assistant(String::new(), vec![call])
        .with_reasoning(Some(rein_core::conversation::Reasoning {
            text: "I should list the files.".into(),
            field: Some("reasoning_content".into()),
            details: vec![serde_json::json!({"type": "reasoning.text", "text": "I should list the files.", "index": 0})],
            api: Default::default(),
        }))
        .from_model("deepseek-reasoner");
    let refusal = Message::assistant(String::new(), vec![]).with_refusal(Some("I can't.".into()));
    for m in [
        user.clone(),
        thinking.clone(),
        Message::tool("c1", "a.txt"),
        refusal.clone(),
    ] {
        writer.append(&Entry::message(m)).unwrap();
    }
    let path = writer.path().to_path_buf();
    drop(writer);
    let mut loaded = load(&path).unwrap();
    assert_eq!(loaded.history[0], user);
    assert_eq!(loaded.history[1], thinking);
    assert_eq!(loaded.history[3], refusal);
    // The dashboard shows the user's words, the reasoning and the refusal again.
    let mut app = rein::app::state::App::new(Default::default(), 128_000);
    rein::app::resume::restore(&mut app, &mut loaded);
    use rein::app::state::Cell;
    let cells = &app.transcript.cells;
    assert!(cells
        .iter()
        .any(|c| matches!(c, Cell::User(u) if u.text == "look")));
    assert!(cells
        .iter()
        .any(|c| matches!(c, Cell::Reasoning(r) if r.text == "I should list the files.")));
    assert!(cells
        .iter()
        .any(|c| matches!(c, Cell::Assistant(a) if a.text == "I can't.")));
}

#[test]
fn a_call_that_started_before_the_crash_may_have_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = new_writer(dir.path(), "/p");
    writer
        .append(&Entry::message(Message::user("migrate")))
        .unwrap();
    writer
        .append(&Entry::message(calls(&["call_a", "call_b"])))
        .unwrap();
    // call_a was running when the process died; call_b never began.
    writer
        .append(&Entry::CallStarted {
            id: "call_a".into(),
        })
        .unwrap();
    let path = writer.path().to_path_buf();
    drop(writer);
    let s = load(&path).unwrap();
    assert_eq!(
        s.history[2],
        synthetic("call_a", session::MAY_HAVE_RUN, ToolOutcome::MayHaveRun)
    );
    assert_eq!(
        s.history[3],
        synthetic("call_b", NOT_RUN, ToolOutcome::NotRun)
    );
    assert!(session::MAY_HAVE_RUN.contains("may have completed"));
}

/// A result the reader made up for a call the session never finished.
fn synthetic(id: &str, text: &str, outcome: ToolOutcome) -> Message {
    let text = text.to_string();
    Message::tool_result(
        id,
        ToolResult {
            outcome,
            text,
            images: Vec::new(),
            whole: None,
        },
    )
}
