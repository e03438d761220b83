//! The transcript as a reply streams in: assistant and reasoning cells, tool calls and how
//! they ended, a long output expanded and folded, notices, errors and retries, the prompt
//! cache and the cost, a refusal.

use crate::support;

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyModifiers};
use rein::app::state::{Activity, App, Cell, NoticeKind, ToolStatus};
use rein::app::{AppEvent, Effect};
use rein_core::agent::{AgentEvent, ToolOutcome, TurnOutcome, Usage};
use rein_core::tools::write_todos::{Todo, TodoStatus};
use support::app::app;
use support::app::Script;

use super::Steps;

// ---- transcript -------------------------------------------------------------------------

#[test]
fn streamed_deltas_build_one_assistant_cell_and_finish_it() {
    let mut s = Script::with(app());
    s.turn("hello");
    assert!(matches!(s.app.activity, Activity::Thinking { .. }));
    let started = s.now;
    for piece in ["Hel", "lo, ", "world"] {
        s.advance(Duration::from_millis(10));
        assert!(s
            .agent(AgentEvent::TextDelta { text: piece.into() })
            .is_empty());
    }
    assert_eq!(
        s.app.activity,
        Activity::Streaming {
            since: started + Duration::from_millis(10)
        },
        "streaming since the first delta"
    );
    match s.cells() {
        [Cell::User(u), Cell::Assistant(a)] => {
            assert_eq!(u.text, "hello");
            assert_eq!(a.text, "Hello, world");
            assert!(!a.finished);
            assert_eq!(a.version(), 2, "bumped by each delta after the first");
        }
        other => panic!("{other:?}"),
    }
    s.agent(AgentEvent::AssistantMessage {
        refusal: false,
        text: "Hello, world".into(),
        finish_reason: Some("stop".into()),
    });
    match s.cells() {
        [_, Cell::Assistant(a)] => {
            assert!(a.finished);
            assert_eq!(a.version(), 3);
        }
        other => panic!("{other:?}"),
    }
    s.end_turn(TurnOutcome::Completed);
    assert_eq!(s.app.activity, Activity::Idle);
    assert_eq!(s.cells().len(), 2);
    assert!(s.notices().is_empty());
}

#[test]
fn reasoning_and_text_are_separate_cells() {
    let mut s = Script::with(app());
    s.turn("why?");
    s.agent(AgentEvent::ReasoningDelta {
        text: "Let me ".into(),
    });
    s.agent(AgentEvent::ReasoningDelta {
        text: "think.".into(),
    });
    s.agent(AgentEvent::TextDelta {
        text: "Because.".into(),
    });
    s.agent(AgentEvent::AssistantMessage {
        refusal: false,
        text: "Because.".into(),
        finish_reason: None,
    });
    match s.cells() {
        [Cell::User(_), Cell::Reasoning(r), Cell::Assistant(a)] => {
            assert_eq!(r.text, "Let me think.");
            assert!(r.finished && !r.expanded);
            assert_eq!(a.text, "Because.");
            assert!(a.finished);
        }
        other => panic!("{other:?}"),
    }
    // Alt-R (or F3) expands the latest reasoning, and again folds it; Ctrl-R searches the
    // history instead.
    s.key(KeyCode::Char('r'), KeyModifiers::ALT);
    assert!(matches!(&s.cells()[1], Cell::Reasoning(r) if r.expanded && r.version() == 3));
    s.plain(KeyCode::F(3));
    assert!(matches!(&s.cells()[1], Cell::Reasoning(r) if !r.expanded));
    s.ctrl('r');
    assert!(matches!(&s.cells()[1], Cell::Reasoning(r) if !r.expanded));
    assert!(s.app.search.is_some());
}

#[test]
fn a_reply_stopped_for_repeating_itself_is_cut_back_on_screen() {
    let mut s = Script::with(app());
    s.turn("list");
    s.agent(AgentEvent::ReasoningDelta {
        text: "ok ".repeat(500),
    });
    s.agent(AgentEvent::TextDelta {
        text: format!("ls{}", " -l".repeat(500)),
    });
    // Rendered once while streaming: the cache must not outlive the cut.
    let before = support::app::draw(&s.app, 100, 40, Instant::now());
    assert!(before.contains("-l -l -l -l -l"), "{before}");
    s.agent(AgentEvent::ReplyCut {
        text: Some("ls -l -l -l [… cut]".into()),
        reasoning: None,
    });
    s.agent(AgentEvent::Error {
        message: "stopped: the reply repeats itself".into(),
    });
    match s.cells() {
        [Cell::User(_), Cell::Reasoning(r), Cell::Assistant(a), ..] => {
            assert_eq!(a.text, "ls -l -l -l [… cut]");
            assert!(a.finished && r.finished);
            assert_eq!(r.text.len(), 1500);
        }
        other => panic!("{other:?}"),
    }
    let screen = support::app::draw(&s.app, 100, 40, Instant::now());
    assert!(screen.contains("ls -l -l -l [… cut]"), "{screen}");
    assert!(!screen.contains("-l -l -l -l -l"), "{screen}");
    assert!(
        screen.contains("stopped: the reply repeats itself"),
        "{screen}"
    );
}

#[test]
fn a_reply_without_deltas_still_shows() {
    let mut s = Script::with(app());
    s.turn("hi");
    s.agent(AgentEvent::AssistantMessage {
        refusal: false,
        text: "whole reply".into(),
        finish_reason: Some("stop".into()),
    });
    assert!(matches!(s.cells(), [_, Cell::Assistant(a)] if a.text == "whole reply" && a.finished));
    // An empty reply (tool calls only) adds nothing.
    s.agent(AgentEvent::AssistantMessage {
        refusal: false,
        text: String::new(),
        finish_reason: Some("tool_calls".into()),
    });
    assert_eq!(s.cells().len(), 2);
}

#[test]
fn a_new_step_starts_a_new_assistant_cell() {
    let mut s = Script::with(app());
    s.turn("go");
    s.agent(AgentEvent::TextDelta {
        text: "first".into(),
    });
    s.agent(AgentEvent::AssistantMessage {
        refusal: false,
        text: "first".into(),
        finish_reason: None,
    });
    s.agent(AgentEvent::RequestStarted { step: 2 });
    s.agent(AgentEvent::TextDelta {
        text: "second".into(),
    });
    let texts: Vec<_> = s
        .cells()
        .iter()
        .filter_map(|c| match c {
            Cell::Assistant(a) => Some((a.text.as_str(), a.finished)),
            _ => None,
        })
        .collect();
    assert_eq!(texts, vec![("first", true), ("second", false)]);
    // Interrupted mid-stream: the live cell is closed and the turn marked.
    s.end_turn(TurnOutcome::Interrupted);
    assert!(matches!(s.cells().last(), Some(Cell::Notice(n)) if n.kind == NoticeKind::Interrupted));
    assert!(matches!(&s.cells()[2], Cell::Assistant(a) if a.finished));
}

// ---- tools ------------------------------------------------------------------------------

#[test]
fn a_tool_call_runs_and_finishes() {
    let mut s = Script::with(app());
    s.turn("test it");
    s.advance(Duration::from_secs(1));
    s.tool(
        "t1",
        "bash",
        serde_json::json!({ "command": "cargo test", "timeout": 60 }),
    );
    let tool = s.tool_cell("t1");
    assert_eq!(
        (tool.name.as_str(), tool.key_arg.as_str()),
        ("bash", "cargo test")
    );
    assert_eq!(tool.status, ToolStatus::Running);
    assert_eq!(tool.started, s.now);
    assert_eq!(
        s.app.activity,
        Activity::Tool {
            name: "bash".into(),
            detail: "bash cargo test".into(),
            since: s.now
        }
    );
    s.finish_tool("t1", "bash", "test result: ok", ToolOutcome::Ok);
    let tool = s.tool_cell("t1");
    assert_eq!(tool.status, ToolStatus::Done { approved: false });
    assert_eq!(tool.result, Some("test result: ok".into()));
    assert_eq!(tool.duration, Some(Duration::from_millis(120)));
    assert_eq!(tool.version(), 1);
}

#[test]
fn the_status_line_says_the_plan_step_in_progress() {
    let mut s = Script::with(app());
    s.turn("plan");
    s.agent(AgentEvent::TodosUpdated {
        todos: vec![
            Todo {
                content: "Write the parser".into(),
                status: TodoStatus::Completed,
                active_form: None,
            },
            Todo {
                content: "Run the tests".into(),
                status: TodoStatus::InProgress,
                active_form: Some("Running the tests".into()),
            },
        ],
    });
    assert_eq!(s.app.todos.len(), 2);
    s.tool("t1", "bash", serde_json::json!({ "command": "cargo test" }));
    assert!(
        matches!(&s.app.activity, Activity::Tool { detail, .. } if detail == "Running the tests")
    );
}

#[test]
fn key_arguments_are_one_line() {
    let mut s = Script::with(app());
    s.turn("files");
    s.tool(
        "r",
        "read_file",
        serde_json::json!({ "path": "src/main.rs", "offset": 10 }),
    );
    s.tool(
        "h",
        "bash",
        serde_json::json!({ "command": "cat <<EOF\nhi\nEOF" }),
    );
    s.tool(
        "j",
        "write_todos",
        serde_json::json!({ "todos": [{ "content": "a", "status": "pending" }] }),
    );
    s.tool("x", "bash", serde_json::json!("{not json"));
    s.tool("k", "read_skill", serde_json::json!({ "name": "review" }));
    assert_eq!(s.tool_cell("r").key_arg, "src/main.rs");
    assert_eq!(s.tool_cell("k").key_arg, "review");
    assert_eq!(s.tool_cell("h").key_arg, "cat <<EOF ↵ hi ↵ EOF");
    assert_eq!(s.tool_cell("j").key_arg, "1 item");
    assert_eq!(s.tool_cell("x").key_arg, "{not json");
}

#[test]
fn refused_failed_and_interrupted_calls() {
    let mut s = Script::with(app());
    s.turn("do things");
    for id in [
        "denied", "failed", "ok-text", "cut", "notrun", "reworded", "running",
    ] {
        s.tool(id, "bash", serde_json::json!({ "command": id }));
    }
    s.finish_tool(
        "denied",
        "bash",
        "Error: bash was denied by the permission rules (rm). Do not retry it; choose another way or ask the user.",
        ToolOutcome::Denied,
    );
    s.finish_tool(
        "failed",
        "bash",
        "Error: exit code 1\nno such file",
        ToolOutcome::Error,
    );
    // Output that merely mentions an interruption is a success when it is not an error.
    s.finish_tool(
        "ok-text",
        "bash",
        "was interrupted by the user at 3pm",
        ToolOutcome::Ok,
    );
    s.finish_tool(
        "cut",
        "bash",
        "Error: interrupted by the user before this tool finished.",
        ToolOutcome::Interrupted,
    );
    s.finish_tool(
        "notrun",
        "bash",
        "Error: not run: the user interrupted the turn before this call started.",
        ToolOutcome::NotRun,
    );
    // The mark follows the outcome, however the text is worded.
    s.finish_tool(
        "reworded",
        "bash",
        "The user said no.",
        ToolOutcome::Refused,
    );
    s.end_turn(TurnOutcome::Interrupted);
    assert_eq!(s.tool_cell("denied").status, ToolStatus::Refused);
    assert_eq!(s.tool_cell("reworded").status, ToolStatus::Refused);
    assert_eq!(s.tool_cell("failed").status, ToolStatus::Failed);
    assert_eq!(
        s.tool_cell("ok-text").status,
        ToolStatus::Done { approved: false }
    );
    assert_eq!(s.tool_cell("cut").status, ToolStatus::Interrupted);
    assert_eq!(s.tool_cell("notrun").status, ToolStatus::Interrupted);
    assert_eq!(
        s.tool_cell("running").status,
        ToolStatus::Interrupted,
        "still running when the turn ended"
    );
    assert_eq!(
        s.notices(),
        vec![(NoticeKind::Interrupted, "interrupted".to_string())]
    );
    assert_eq!(s.app.activity, Activity::Idle);
}

#[test]
fn ctrl_o_expands_the_last_tool_output() {
    let mut s = Script::with(app());
    s.turn("x");
    s.tool("a", "bash", serde_json::json!({ "command": "ls" }));
    s.finish_tool("a", "bash", "one\ntwo", ToolOutcome::Ok);
    s.tool("b", "bash", serde_json::json!({ "command": "sleep 9" }));
    s.ctrl('o');
    assert!(s.tool_cell("a").expanded, "the last one with a result");
    assert!(!s.tool_cell("b").expanded);
    s.ctrl('o');
    assert!(!s.tool_cell("a").expanded);
}

/// Issue 16, item 4: a long result the session file holds stays only as its head; Ctrl-O
/// asks the loop to read it back, the read shows whole, and folding again lets it go.
#[test]
fn a_stored_long_result_is_read_back_when_expanded_and_let_go_when_folded() {
    use rein::app::state::ResultText;
    use rein_core::session::{EntryAt, SessionMeta, SessionWriter};
    let home = tempfile::tempdir().unwrap();
    let mut writer = SessionWriter::create(home.path(), SessionMeta::new("/p", "m")).unwrap();
    let long: String = (1..=300).map(|i| format!("row {i}\n")).collect();
    let offset = writer
        .append_message(&rein_core::agent::Message::tool("a", &long))
        .unwrap()
        .unwrap();
    let at = EntryAt {
        path: std::sync::Arc::from(writer.path()),
        offset,
    };
    let mut s = Script::with(app());
    s.turn("x");
    s.tool("a", "bash", serde_json::json!({ "command": "seq 300" }));
    s.agent(AgentEvent::ToolFinished {
        id: "a".into(),
        name: "bash".into(),
        result: long.clone(),
        is_error: false,
        outcome: ToolOutcome::Ok,
        duration: Duration::from_millis(5),
        stored: Some(at.clone()),
    });
    let stored = |s: &Script| match &s.tool_cell("a").result {
        Some(ResultText::Stored(r)) => (r.head.clone(), r.more_lines, r.whole.clone()),
        other => panic!("{other:?}"),
    };
    assert_eq!(stored(&s), ("row 1\nrow 2\nrow 3".to_string(), 297, None));
    let folded = support::app::draw(&s.app, 80, 20, s.now);
    assert!(folded.contains("… 297 more lines (Ctrl-O)"), "{folded}");

    let effects = s.ctrl('o');
    let [Effect::ReadResult { id, at: asked }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!((id.as_str(), asked), ("a", &at));
    let waiting = support::app::draw(&s.app, 80, 20, s.now);
    assert!(waiting.contains("… reading 297 more lines"), "{waiting}");
    // What the loop does with the effect: the real read.
    let text = rein_core::session::read_result(&at.path, at.offset, "a");
    s.at(AppEvent::ResultRead {
        id: "a".into(),
        at: at.clone(),
        text,
    });
    assert_eq!(stored(&s).2, Some(Ok(long.clone())));
    let expanded = support::app::draw(&s.app, 80, 20, s.now);
    assert!(expanded.contains("row 300"), "{expanded}");

    // Folded again: the head only; a late answer for a folded cell is dropped.
    assert!(s.ctrl('o').is_empty());
    assert_eq!(stored(&s).2, None);
    s.at(AppEvent::ResultRead {
        id: "a".into(),
        at: at.clone(),
        text: Ok(long.clone()),
    });
    assert_eq!(stored(&s).2, None);

    // A file that no longer holds it: the expanded view says why, under the head.
    s.ctrl('o');
    s.at(AppEvent::ResultRead {
        id: "a".into(),
        at,
        text: Err("cannot read the rest of this result from s.jsonl: gone".into()),
    });
    let failed = support::app::draw(&s.app, 80, 20, s.now);
    assert!(failed.contains("row 3"), "{failed}");
    assert!(
        failed.contains("cannot read the rest of this result"),
        "{failed}"
    );
}

#[test]
fn notices_errors_and_retries() {
    let mut s = Script::with(app());
    s.turn("x");
    s.agent(AgentEvent::Retrying {
        attempt: 2,
        max_attempts: 5,
        delay: Duration::from_millis(2000),
        reason: "HTTP 503".into(),
    });
    s.agent(AgentEvent::Notice {
        message: "context compacted".into(),
    });
    s.agent(AgentEvent::Error {
        message: "the server said no".into(),
    });
    s.end_turn(TurnOutcome::Failed);
    assert_eq!(
        s.notices(),
        vec![
            (
                NoticeKind::Retry,
                "retrying in 2.0s (attempt 2 of 5): HTTP 503".to_string()
            ),
            (NoticeKind::Info, "context compacted".to_string()),
            (NoticeKind::Error, "the server said no".to_string()),
        ]
    );
}

#[test]
fn the_prompt_cache_and_the_cost_show_once_the_server_reports_them() {
    let mut s = Script::with(app());
    let status = |app: &App| {
        let line = rein::ui::status::StatusLine {
            app,
            now: Instant::now(),
        }
        .line(200);
        line.spans
            .iter()
            .map(|s| s.content.as_ref())
            .collect::<String>()
    };
    let usage = |prompt: u64, cached: Option<u64>| Usage {
        prompt_tokens: prompt,
        completion_tokens: 100,
        total_tokens: prompt + 100,
        cached_tokens: cached,
        cache_write_tokens: None,
        estimated: false,
    };
    // A server that says nothing of its cache: no figure, and /cost says so.
    s.agent(AgentEvent::Usage(usage(1000, None)));
    assert!(!status(&s.app).contains("cache"), "{}", status(&s.app));
    s.type_text("/cost");
    s.plain(KeyCode::Enter);
    let last = |app: &App| match app.transcript.cells.last() {
        Some(Cell::Notice(n)) => n.text.clone(),
        other => panic!("not a notice: {other:?}"),
    };
    let text = last(&s.app);
    assert!(
        text.contains("1 model call, 1000 prompt + 100 completion tokens"),
        "{text}"
    );
    assert!(text.contains("does not report cached tokens"), "{text}");
    assert!(text.contains("no prices configured"), "{text}");

    // Then it does: the last request's share and the conversation's, and a cost.
    s.agent(AgentEvent::Usage(usage(3000, Some(2700))));
    assert!(
        status(&s.app).contains("cache 90% · session 68%"),
        "{}",
        status(&s.app)
    );
    s.app.info.prices = Some(rein_core::agent::Prices {
        input: 2.0,
        cached_input: Some(0.2),
        output: 10.0,
        cache_write: None,
    });
    s.type_text("/cost");
    s.plain(KeyCode::Enter);
    let text = last(&s.app);
    assert!(
        text.contains("prompt cache: 90% (2700 of 3000 prompt tokens) in the last request, 68% (2700 of 4000 prompt tokens) in this conversation"),
        "{text}"
    );
    // 1300 × 2 + 2700 × 0.2 + 200 × 10, per million.
    assert!(
        text.contains("cost so far: $0.0051 for 2 model calls"),
        "{text}"
    );
    // A new conversation starts counting again.
    s.agent(AgentEvent::SessionStarted {
        id: "x".into(),
        path: "/tmp/x.jsonl".into(),
    });
    assert!(!status(&s.app).contains("cache"));
}

#[test]
fn a_refusal_is_shown_as_the_reply_and_said_to_be_one() {
    let mut s = Script::with(app());
    s.agent(AgentEvent::TurnStarted { text: "q".into() });
    s.agent(AgentEvent::TextDelta {
        text: "I can't help with that.".into(),
    });
    s.agent(AgentEvent::AssistantMessage {
        refusal: true,
        text: "I can't help with that.".into(),
        finish_reason: Some("stop".into()),
    });
    let cells = &s.app.transcript.cells;
    assert!(cells
        .iter()
        .any(|c| matches!(c, Cell::Assistant(a) if a.text == "I can't help with that.")));
    assert!(matches!(cells.last(), Some(Cell::Notice(n)) if n.text.contains("refused")));
}

#[test]
fn the_status_line_counts_what_the_language_servers_see() {
    let mut s = Script::with(app());
    let status = |app: &App| {
        let line = rein::ui::status::StatusLine {
            app,
            now: Instant::now(),
        }
        .line(200);
        line.spans
            .iter()
            .map(|s| s.content.as_ref())
            .collect::<String>()
    };
    assert!(!status(&s.app).contains("err"), "{}", status(&s.app));
    let counts = |errors, warnings| AgentEvent::Diagnostics {
        errors,
        warnings,
        files: Vec::new(),
    };
    s.agent(counts(2, 1));
    assert!(
        status(&s.app).contains("2 err 1 warn"),
        "{}",
        status(&s.app)
    );
    s.agent(counts(0, 3));
    assert!(status(&s.app).contains("3 warn"), "{}", status(&s.app));
    assert!(!status(&s.app).contains("err"), "{}", status(&s.app));
    s.agent(counts(0, 0));
    assert!(!status(&s.app).contains("warn"), "{}", status(&s.app));
}

#[test]
fn slash_lsp_lists_the_servers_their_state_and_last_word() {
    let mut s = Script::with(app());
    let last = |app: &App| match app.transcript.cells.last() {
        Some(Cell::Notice(n)) => n.text.clone(),
        other => panic!("not a notice: {other:?}"),
    };
    s.type_text("/lsp");
    s.plain(KeyCode::Enter);
    assert!(
        last(&s.app).starts_with("No language server has started in this session."),
        "{}",
        last(&s.app)
    );
    let server = |name: &str, state: &str, note: Option<&str>| rein_core::lsp::ServerInfo {
        name: name.into(),
        root: ".".into(),
        state: state.into(),
        note: note.map(str::to_string),
    };
    s.agent(AgentEvent::LanguageServers {
        servers: vec![
            server("pyright", "running", Some("Found 3 source files\u{1b}[2J")),
            server(
                "gopls",
                "not running (tried 1 of 3 times): initialize failed",
                None,
            ),
        ],
    });
    s.agent(AgentEvent::Diagnostics {
        errors: 2,
        warnings: 0,
        files: Vec::new(),
    });
    s.type_text("/lsp");
    s.plain(KeyCode::Enter);
    let text = last(&s.app);
    assert!(
        text.contains("pyright (.): running\n    last: Found 3 source files"),
        "{text}"
    );
    assert!(
        !text.contains('\u{1b}'),
        "a server's text is sanitised: {text:?}"
    );
    assert!(
        text.contains("gopls (.): not running (tried 1 of 3 times): initialize failed"),
        "{text}"
    );
    assert!(text.ends_with("2 errors, 0 warnings."), "{text}");
}
