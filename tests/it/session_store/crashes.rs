//! Damage and crashes: a torn last line, a garbage line, a turn cut off mid-tool, a SIGKILL
//! mid-write, an approximate count, a call that started before the crash.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rein_core::agent::Message;
use rein_core::conversation::{ToolOutcome, ToolResult};
use rein_core::session::{
    self, list, load, read_records, Entry, MessageCount, Record, SessionWriter, NOT_RUN,
    SUMMARY_EVERY,
};
use rein_core::tools::write_todos::TodoStatus;

use super::{assert_valid_request, calls, new_writer, todo};

/// Set in the child process of the crash test: the data dir to write a session into.
const CHILD_ENV: &str = "REIN_SESSION_CRASH_CHILD";

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
            "session_store::crashes::crash_child_writer",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, home.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = KillOnDrop(child);
    let sessions = session::sessions_dir(home.path());
    let deadline = Instant::now() + crate::support::GIVE_UP;
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
