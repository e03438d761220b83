//! What a session file holds and loads back: every entry type, a compaction, results in call
//! order, long results as heads, folded outcomes, reasoning, reminders and refusals.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;

use rein_core::agent::{Message, ToolCall};
use rein_core::conversation::ToolOutcome;
use rein_core::permissions::Grant;
use rein_core::session::{
    self, export_markdown, load, load_with, read_records, read_result, Entry, Shown,
};
use rein_core::tools::write_todos::{Todo, TodoStatus};

use super::{assert_valid_request, calls, new_writer, todo};

fn kinds(path: &Path) -> Vec<&'static str> {
    read_records(path)
        .unwrap()
        .0
        .iter()
        .map(|r| r.entry.kind())
        .collect()
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
