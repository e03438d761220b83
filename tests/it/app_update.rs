//! The dashboard's update step through its public API: scripted agent events and key
//! presses in, state and effects out (the harness is `support::app`; the approval modal's
//! tests are in `approval_modal.rs`).

use crate::support;

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyModifiers, MouseEvent, MouseEventKind};
use rein::app::state::{Activity, App, Cell, NoticeKind, SessionInfo, ToolStatus};
use rein::app::update::TOP;
use rein::app::{AppEvent, Effect};
use rein_core::agent::{AgentCommand, AgentEvent, ContextStats, ToolOutcome, TurnOutcome, Usage};
use rein_core::context::budget::Breakdown;
use rein_core::tools::write_todos::{Todo, TodoStatus};
use support::app::Script;
use support::app::{app, sent};

// ---- helpers ----------------------------------------------------------------------------

/// The steps these tests take on the shared script.
trait Steps {
    fn turn(&mut self, text: &str);
    fn tool(&mut self, id: &str, name: &str, args: serde_json::Value);
    fn finish_tool(&mut self, id: &str, name: &str, result: &str, outcome: ToolOutcome);
    fn end_turn(&mut self, outcome: TurnOutcome);
    fn cells(&self) -> &[Cell];
    fn tool_cell(&self, id: &str) -> &rein::app::state::Versioned<rein::app::state::ToolCell>;
}

impl Steps for Script {
    fn turn(&mut self, text: &str) {
        self.agent(AgentEvent::TurnStarted { text: text.into() });
        self.agent(AgentEvent::RequestStarted { step: 1 });
    }

    fn tool(&mut self, id: &str, name: &str, args: serde_json::Value) {
        self.agent(AgentEvent::ToolCallStarted {
            id: id.into(),
            name: name.into(),
            args,
        });
    }

    fn finish_tool(&mut self, id: &str, name: &str, result: &str, outcome: ToolOutcome) {
        self.agent(AgentEvent::ToolFinished {
            id: id.into(),
            name: name.into(),
            result: result.into(),
            is_error: outcome.is_error(),
            outcome,
            duration: Duration::from_millis(120),
            stored: None,
        });
    }

    fn end_turn(&mut self, outcome: TurnOutcome) {
        self.agent(AgentEvent::TurnFinished { outcome });
    }

    fn cells(&self) -> &[Cell] {
        &self.app.transcript.cells
    }

    fn tool_cell(&self, id: &str) -> &rein::app::state::Versioned<rein::app::state::ToolCell> {
        self.cells()
            .iter()
            .find_map(|c| match c {
                Cell::Tool(t) if t.id == id => Some(t),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no tool cell {id}"))
    }
}

fn is_quit(effects: &[Effect]) -> bool {
    matches!(effects, [Effect::Quit])
}

fn is_interrupt(effects: &[Effect]) -> bool {
    matches!(effects, [Effect::Agent(AgentCommand::Interrupt)])
}

fn wheel(kind: MouseEventKind) -> AppEvent {
    AppEvent::Mouse(MouseEvent {
        kind,
        column: 10,
        row: 5,
        modifiers: KeyModifiers::NONE,
    })
}

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

// ---- gauge ------------------------------------------------------------------------------

/// The agent's count, as it sends it after a reply or a rewrite of the history.
fn stats(tokens: u64, chars_per_token: f64, estimated: bool) -> ContextStats {
    ContextStats {
        tokens,
        window: 100_000,
        compact_at: 0.8,
        estimated,
        chars_per_token,
        messages: 12,
        breakdown: Breakdown {
            system: 2_000,
            instructions: 0,
            tools: 3_000,
            user: 500,
            assistant: 1_500,
            tool_results: tokens.saturating_sub(7_000),
            summary: 0,
            reminder: 0,
            reasoning: 0,
        },
    }
}

#[test]
fn the_gauge_starts_from_the_agents_count_and_adds_at_the_learnt_rate() {
    let mut s = Script::with(app());
    s.turn("12345678"); // 8 characters
    assert_eq!(s.app.gauge.added_chars, 8);
    s.agent(AgentEvent::ReasoningDelta {
        text: "never sent back".into(),
    });
    s.agent(AgentEvent::TextDelta {
        text: "héllo".into(),
    });
    assert_eq!(
        s.app.gauge.added_chars, 13,
        "characters, not bytes; no reasoning"
    );
    assert_eq!(s.app.gauge.used(), 4, "four characters a token until told");

    // The count after the reply replaces the estimate; the window and threshold come with it.
    s.agent(AgentEvent::Context(stats(20_000, 2.5, false)));
    assert_eq!(s.app.gauge.reported, 20_000);
    assert_eq!(s.app.gauge.added_chars, 0);
    assert_eq!(s.app.gauge.limit, 100_000);
    assert_eq!(s.app.gauge.compact_at, 0.8);
    assert!(!s.app.gauge.estimated);
    assert_eq!(s.app.context.map(|c| c.messages), Some(12));

    // What streams in afterwards counts at 2.5 characters a token, not 4.
    s.tool("t", "bash", serde_json::json!({ "command": "ls" }));
    s.finish_tool("t", "bash", &"x".repeat(400), ToolOutcome::Ok);
    assert_eq!(s.app.gauge.added_chars, 400);
    assert_eq!(s.app.gauge.used(), 20_160);

    // Usage no longer moves the gauge: the agent's count is the one number.
    s.agent(AgentEvent::Usage(Usage {
        prompt_tokens: 90_000,
        completion_tokens: 10,
        total_tokens: 90_010,
        cached_tokens: None,
        cache_write_tokens: None,
        estimated: false,
    }));
    assert_eq!(s.app.gauge.used(), 20_160);

    s.agent(AgentEvent::Context(stats(21_000, 2.5, false)));
    assert_eq!(s.app.gauge.used(), 21_000);
}

#[test]
fn the_gauge_says_the_window_is_asked_until_the_answer_comes() {
    let mut s = Script::with(app());
    // The dashboard starts while the server is asked (`dashboard_start`).
    s.app.gauge.asking = true;
    assert_eq!(
        rein::ui::gauge::label(&s.app.gauge),
        "window: asking the server…"
    );
    // The agent's counts meanwhile are in the configured window: still asking.
    s.agent(AgentEvent::Context(stats(2_000, 4.0, true)));
    assert!(s.app.gauge.asking);
    assert_eq!(
        rein::ui::gauge::label(&s.app.gauge),
        "window: asking the server…"
    );
    s.agent(AgentEvent::WindowLearnt {
        window: 8_192,
        url: Some("http://127.0.0.1:8080/props".into()),
    });
    assert!(!s.app.gauge.asking);
    assert_eq!(s.app.gauge.limit, 8_192);
    assert_eq!(rein::ui::gauge::label(&s.app.gauge), "~24% · 2k/8.2k");
}

#[test]
fn a_server_silent_about_its_window_leaves_the_configured_one_on_the_gauge() {
    let mut s = Script::with(app());
    s.app.gauge.asking = true;
    s.agent(AgentEvent::WindowLearnt {
        window: 128_000,
        url: None,
    });
    assert_eq!(rein::ui::gauge::label(&s.app.gauge), "0% · 0/128k");
    // A switch brings its own window and ends the asking too.
    let mut s = Script::with(app());
    s.app.gauge.asking = true;
    s.agent(AgentEvent::ModelSwitched {
        name: "ollama/qwen3".into(),
        model: "qwen3".into(),
        base_url: "http://127.0.0.1:11434/v1".into(),
        window: 32_000,
        over_budget: None,
        prices: None,
    });
    assert!(!s.app.gauge.asking);
    assert_eq!(s.app.gauge.limit, 32_000);
}

#[test]
fn the_gauge_drops_at_once_after_a_compaction() {
    let mut s = Script::with(app());
    s.agent(AgentEvent::Context(stats(85_000, 3.0, false)));
    s.turn("go on");
    s.agent(AgentEvent::CompactionStarted {
        auto: true,
        messages: 58,
        pieces: 1,
    });
    s.agent(compacted(85_000, 30_000));
    s.agent(AgentEvent::Context(stats(30_000, 3.0, false)));
    assert_eq!(s.app.gauge.used(), 30_000);
}

// ---- context and compaction -------------------------------------------------------------

fn compacted(before_tokens: u64, after_tokens: u64) -> AgentEvent {
    AgentEvent::Compacted {
        auto: false,
        before_tokens,
        after_tokens,
        summarised: 58,
        kept: 6,
        pieces: 1,
        note: "## Goal\nFix the tab handling.\n## Done\nparse_line splits on spaces.".into(),
        usage: Usage::default(),
    }
}

fn compact_commands(effects: &[Effect]) -> Vec<Option<String>> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Agent(AgentCommand::Compact { focus }) => Some(focus.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn compact_sends_the_command_with_and_without_a_focus() {
    let mut s = Script::with(app());
    assert_eq!(compact_commands(&s.send("/compact")), vec![None]);
    assert_eq!(
        compact_commands(&s.send("/compact   keep the parser plan  ")),
        vec![Some("keep the parser plan".to_string())]
    );
    assert_eq!(compact_commands(&s.send("/COMPACT  ")), vec![None]);
    assert!(s.notices().is_empty(), "idle: it runs now, nothing to say");
    assert_eq!(
        s.app.activity,
        Activity::Idle,
        "the agent says when it starts"
    );
}

#[test]
fn compact_during_a_turn_says_it_is_queued() {
    let mut s = Script::with(app());
    s.turn("a long job");
    let effects = s.send("/compact");
    assert_eq!(
        compact_commands(&effects),
        vec![None],
        "the agent queues it"
    );
    assert_eq!(
        s.notices(),
        vec![(
            NoticeKind::Info,
            "compaction queued: it runs when this turn ends".to_string()
        )]
    );
    assert!(s.app.composer.queued.is_empty(), "not a message");
}

#[test]
fn a_compaction_shows_while_it_runs_then_as_a_folded_cell() {
    let mut s = Script::with(app());
    s.send("/compact");
    s.advance(Duration::from_secs(1));
    s.agent(AgentEvent::CompactionStarted {
        auto: false,
        messages: 58,
        pieces: 1,
    });
    assert!(
        matches!(s.app.activity, Activity::Compacting { messages: 58, in_turn: false, since } if since == s.now),
        "{:?}",
        s.app.activity
    );
    assert!(s.app.busy(), "Esc interrupts it; messages wait for it");
    s.agent(compacted(109_000, 38_000));
    assert_eq!(s.app.activity, Activity::Idle, "nothing was running before");
    let cell = match s.cells() {
        [Cell::Compaction(c)] => c,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        cell.summary,
        "compacted: 109k → 38k tokens (58 messages summarised, 6 kept)"
    );
    assert!(cell.note.contains("Fix the tab handling."));
    assert!(!cell.expanded, "folded by default");
    // Ctrl-O unfolds the last thing with something folded: here the note.
    s.ctrl('o');
    assert!(matches!(s.cells(), [Cell::Compaction(c)] if c.expanded));
    s.ctrl('o');
    assert!(matches!(s.cells(), [Cell::Compaction(c)] if !c.expanded));
}

#[test]
fn an_automatic_compaction_mid_turn_goes_back_to_thinking() {
    let mut s = Script::with(app());
    s.turn("go on");
    s.tool("t", "bash", serde_json::json!({ "command": "ls" }));
    s.finish_tool("t", "bash", "a\nb", ToolOutcome::Ok);
    s.agent(AgentEvent::CompactionStarted {
        auto: true,
        messages: 30,
        pieces: 2,
    });
    assert!(matches!(
        s.app.activity,
        Activity::Compacting { in_turn: true, .. }
    ));
    s.advance(Duration::from_secs(5));
    s.agent(compacted(90_000, 30_000));
    assert_eq!(s.app.activity, Activity::Thinking { since: s.now });
    // The newest folded thing is the note now.
    s.ctrl('o');
    assert!(!s.tool_cell("t").expanded);
}

#[test]
fn a_failed_compaction_is_an_error_and_the_activity_goes_back() {
    let mut s = Script::with(app());
    s.send("/compact");
    s.agent(AgentEvent::CompactionStarted {
        auto: false,
        messages: 10,
        pieces: 1,
    });
    s.agent(AgentEvent::CompactionFailed {
        message: "compaction failed: HTTP 500; the conversation is unchanged".into(),
    });
    assert_eq!(
        s.notices(),
        vec![(
            NoticeKind::Error,
            "compaction failed: HTTP 500; the conversation is unchanged".to_string()
        )]
    );
    assert_eq!(s.app.activity, Activity::Idle);

    s.turn("x");
    s.agent(AgentEvent::CompactionStarted {
        auto: true,
        messages: 10,
        pieces: 1,
    });
    s.agent(AgentEvent::CompactionFailed {
        message: "compaction interrupted; the conversation is unchanged".into(),
    });
    assert!(matches!(s.app.activity, Activity::Thinking { .. }));
}

#[test]
fn dropped_results_are_a_notice() {
    let mut s = Script::with(app());
    s.agent(AgentEvent::ResultsDropped {
        dropped: 3,
        before_tokens: 110_000,
        after_tokens: 70_000,
    });
    assert_eq!(
        s.notices(),
        vec![(
            NoticeKind::Info,
            "3 old tool results dropped to fit the context window, 110k → 70k tokens".to_string()
        )]
    );
}

#[test]
fn context_opens_a_layer_that_follows_the_count_and_closes_with_esc_or_q() {
    let mut s = Script::with(app());
    assert!(s.send("/context").is_empty());
    assert!(s.app.context_open);
    // Keys go to the layer: typing does not reach the input.
    s.plain(KeyCode::Char('x'));
    assert_eq!(s.input_lines(), [""]);
    s.agent(AgentEvent::Context(stats(40_000, 3.5, false)));
    assert_eq!(s.app.context.map(|c| c.tokens), Some(40_000));
    assert!(s.app.context_open, "a new count keeps it open");
    s.plain(KeyCode::Char('q'));
    assert!(!s.app.context_open);
    s.send("/context");
    assert!(
        s.plain(KeyCode::Esc).is_empty(),
        "Esc closes, interrupts nothing"
    );
    assert!(!s.app.context_open);
    s.type_text("q");
    assert_eq!(s.input_lines(), ["q"], "closed: keys edit the input again");
}

// ---- composer ---------------------------------------------------------------------------

#[test]
fn enter_sends_the_trimmed_text_and_remembers_it() {
    let mut s = Script::with(app());
    let effects = s.send("  fix the bug  ");
    assert_eq!(sent(&effects), vec!["fix the bug"]);
    assert_eq!(s.input_lines(), [""]);
    assert_eq!(s.app.composer.history, ["fix the bug"]);
    assert!(s.app.composer.queued.is_empty(), "idle: not queued");
    assert!(s.app.busy(), "the turn is under way");
    // Blank input sends nothing.
    s.agent(AgentEvent::TurnStarted {
        text: "fix the bug".into(),
    });
    s.end_turn(TurnOutcome::Completed);
    assert!(s.send("   ").is_empty());
    assert_eq!(s.input_lines(), ["   "]);
}

#[test]
fn messages_sent_while_busy_are_queued_until_their_turn_starts() {
    let mut s = Script::with(app());
    s.send("first");
    s.turn("first");
    s.agent(AgentEvent::TextDelta {
        text: "working".into(),
    });
    let effects = s.send("second");
    assert_eq!(sent(&effects), vec!["second"], "the agent queues it");
    s.send("third");
    assert_eq!(s.app.composer.queued, ["second", "third"]);
    let users = |s: &Script| -> Vec<String> {
        s.cells()
            .iter()
            .filter_map(|c| match c {
                Cell::User(u) => Some(u.text.clone()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(users(&s), ["first"]);
    s.end_turn(TurnOutcome::Completed);
    assert!(
        s.app.busy(),
        "the queued message starts the next turn at once"
    );
    s.send("fourth");
    assert_eq!(s.app.composer.queued, ["second", "third", "fourth"]);
    s.turn("second");
    assert_eq!(users(&s), ["first", "second"]);
    assert_eq!(s.app.composer.queued, ["third", "fourth"]);
    s.end_turn(TurnOutcome::Completed);
    s.turn("third");
    s.end_turn(TurnOutcome::Completed);
    s.turn("fourth");
    assert!(s.app.composer.queued.is_empty());
    assert_eq!(users(&s), ["first", "second", "third", "fourth"]);
    s.end_turn(TurnOutcome::Completed);
    assert!(!s.app.busy());
}

#[test]
fn a_second_message_before_the_turn_starts_is_queued_too() {
    let mut s = Script::with(app());
    s.send("one");
    s.send("two");
    assert_eq!(s.app.composer.queued, ["two"]);
}

#[test]
fn shift_enter_alt_enter_and_ctrl_j_insert_a_newline() {
    let mut s = Script::with(app());
    s.type_text("a");
    assert!(s.key(KeyCode::Enter, KeyModifiers::SHIFT).is_empty());
    s.type_text("b");
    assert!(s.key(KeyCode::Enter, KeyModifiers::ALT).is_empty());
    s.type_text("c");
    assert!(s.ctrl('j').is_empty());
    s.type_text("d");
    assert_eq!(s.input_lines(), ["a", "b", "c", "d"]);
    assert_eq!(sent(&s.plain(KeyCode::Enter)), vec!["a\nb\nc\nd"]);
}

#[test]
fn a_paste_of_many_lines_never_sends() {
    let mut s = Script::with(app());
    let effects = s.paste("line one\r\nline two\rline three\nline four\n");
    assert!(effects.is_empty());
    assert_eq!(
        s.input_lines(),
        ["line one", "line two", "line three", "line four", ""]
    );
    assert!(s.app.transcript.cells.is_empty());
    assert_eq!(
        sent(&s.plain(KeyCode::Enter)),
        vec!["line one\nline two\nline three\nline four"]
    );
}

#[test]
fn up_and_down_recall_earlier_inputs() {
    let mut s = Script::with(app());
    for text in ["alpha", "beta\ngamma"] {
        s.paste(text);
        s.plain(KeyCode::Enter);
        s.end_turn(TurnOutcome::Completed);
    }
    s.type_text("draft");
    s.plain(KeyCode::Up);
    assert_eq!(s.input_lines(), ["beta", "gamma"]);
    assert_eq!(s.app.composer.history_pos, Some(1));
    assert_eq!(s.app.composer.draft, "draft");
    // The cursor is on the first line, so Up recalls further.
    s.plain(KeyCode::Up);
    assert_eq!(s.input_lines(), ["alpha"]);
    s.plain(KeyCode::Up);
    assert_eq!(s.input_lines(), ["alpha"], "the oldest stays");
    s.plain(KeyCode::Down);
    assert_eq!(s.input_lines(), ["beta", "gamma"]);
    s.plain(KeyCode::Down);
    assert_eq!(s.input_lines(), ["draft"], "past the newest: the draft");
    assert_eq!(s.app.composer.history_pos, None);
    s.plain(KeyCode::Down);
    assert_eq!(s.input_lines(), ["draft"]);
}

#[test]
fn up_inside_a_multi_line_input_moves_the_cursor() {
    let mut s = Script::with(app());
    s.send("old");
    s.end_turn(TurnOutcome::Completed);
    s.at(AppEvent::Paste("one\ntwo".into()));
    s.plain(KeyCode::Up);
    assert_eq!(
        s.input_lines(),
        ["one", "two"],
        "moved up a line, no recall"
    );
    assert_eq!(s.app.composer.textarea.cursor().0, 0);
    s.plain(KeyCode::Up);
    assert_eq!(s.input_lines(), ["old"]);
}

#[test]
fn without_a_model_sending_shows_how_to_set_one() {
    let mut s = Script::with(app());
    s.app.info.setup = Some("set model in ~/.config/rein/config.toml".into());
    let effects = s.send("hello");
    assert!(effects.is_empty());
    assert!(s
        .app
        .hint
        .as_deref()
        .is_some_and(|h| h.contains("no model")));
    assert_eq!(s.input_lines(), ["hello"], "the text is kept");
    assert!(!s.app.busy());
    s.ctrl('c');
    assert!(is_quit(&s.send("/quit")));
}

// ---- slash commands ---------------------------------------------------------------------

#[test]
fn slash_commands_run_and_unknown_ones_only_hint() {
    let mut s = Script::with(app());
    let effects = s.send("/help");
    assert!(effects.is_empty());
    assert!(s.cells().is_empty(), "the help is a layer, not a notice");
    let help = s
        .app
        .help
        .as_ref()
        .expect("the help is open")
        .lines
        .join("\n");
    for needle in [
        "/clear",
        "/todos",
        "/context",
        "/compact [FOCUS]",
        "Context (/context)",
        "/quit",
        "Ctrl-C",
        "PgUp",
        "allow once",
        "F2",
    ] {
        assert!(help.contains(needle), "{needle} not in {help}");
    }
    assert_eq!(s.app.composer.history, ["/help"]);
    s.plain(KeyCode::Esc);
    assert!(s.app.help.is_none());

    assert!(s.app.show_todos);
    assert!(s.send("/todos").is_empty());
    assert!(!s.app.show_todos);
    s.ctrl('t');
    assert!(s.app.show_todos);

    let effects = s.send("/xyz now");
    assert!(effects.is_empty(), "never sent to the model");
    assert_eq!(
        s.app.hint.as_deref(),
        Some("unknown command /xyz; /help lists them")
    );
    assert_eq!(s.input_lines(), [""]);
    // Typing clears the hint.
    s.type_text("a");
    assert_eq!(s.app.hint, None);
    s.ctrl('c');

    assert_eq!(
        sent(&s.send("/etc/hosts is broken")),
        vec!["/etc/hosts is broken"]
    );
    s.end_turn(TurnOutcome::Completed);

    assert!(is_quit(&s.send("/quit")));
}

#[test]
fn clear_empties_the_transcript_and_todos_but_not_mid_turn() {
    let mut s = Script::with(app());
    s.turn("x");
    s.agent(AgentEvent::TodosUpdated {
        todos: vec![Todo {
            content: "a".into(),
            status: TodoStatus::Pending,
            active_form: None,
        }],
    });
    assert!(s.send("/clear").is_empty());
    assert!(s.app.hint.as_deref().is_some_and(|h| h.contains("Esc")));
    assert_eq!(s.cells().len(), 1);
    s.end_turn(TurnOutcome::Completed);
    s.plain(KeyCode::PageUp);
    let effects = s.send("/clear");
    assert!(
        matches!(
            effects.as_slice(),
            [
                Effect::Agent(AgentCommand::NewConversation),
                Effect::ReloadCommands
            ]
        ),
        "the agent starts over too, and the custom commands are read again: {effects:?}"
    );
    assert!(s.cells().is_empty());
    assert!(s.app.todos.is_empty());
    assert!(s.app.transcript.scroll.follow);
}

// ---- keys -------------------------------------------------------------------------------

#[test]
fn ctrl_c_and_esc_interrupt_a_running_turn() {
    let mut s = Script::with(app());
    s.turn("long job");
    assert!(is_interrupt(&s.ctrl('c')));
    assert_eq!(s.app.last_ctrl_c, Some(s.now));
    s.advance(Duration::from_secs(3));
    assert!(
        is_interrupt(&s.ctrl('c')),
        "three seconds later it interrupts again"
    );
    s.advance(Duration::from_secs(3));
    assert!(is_interrupt(&s.plain(KeyCode::Esc)));
    assert!(is_interrupt(&s.plain(KeyCode::Esc)), "Esc never quits");
    s.end_turn(TurnOutcome::Interrupted);
    assert!(s.plain(KeyCode::Esc).is_empty(), "idle: Esc does nothing");
}

#[test]
fn a_second_ctrl_c_within_two_seconds_quits() {
    let mut s = Script::with(app());
    s.turn("long job");
    assert!(is_interrupt(&s.ctrl('c')));
    assert_eq!(s.app.hint.as_deref(), Some("press Ctrl-C again to quit"));
    s.advance(Duration::from_millis(1900));
    assert!(is_quit(&s.ctrl('c')));
}

#[test]
fn ctrl_c_when_idle_clears_the_input_then_asks_for_a_second_press() {
    let mut s = Script::with(app());
    assert!(
        s.ctrl('c').is_empty(),
        "empty input: the first press only warns"
    );
    assert_eq!(s.app.hint.as_deref(), Some("press Ctrl-C again to quit"));
    s.advance(Duration::from_millis(1500));
    assert!(is_quit(&s.ctrl('c')), "the second within the window quits");

    let mut s = Script::with(app());
    s.type_text("half a thought");
    assert!(s.ctrl('c').is_empty());
    assert_eq!(s.input_lines(), [""]);
    s.advance(Duration::from_millis(500));
    assert!(is_quit(&s.ctrl('c')));

    // The hint goes when its time is up (a tick), and the next press starts over.
    let mut s = Script::with(app());
    s.ctrl('c');
    s.advance(Duration::from_millis(1500));
    s.at(AppEvent::Tick(s.now));
    assert_eq!(s.app.hint.as_deref(), Some("press Ctrl-C again to quit"));
    s.advance(Duration::from_secs(1));
    s.at(AppEvent::Tick(s.now));
    assert_eq!(s.app.hint, None, "the hint expires");
    assert_eq!(s.app.last_ctrl_c, None, "and no tick is needed any more");
    assert!(s.ctrl('c').is_empty(), "a first press again");
    assert!(is_quit(&s.ctrl('c')));

    // Any other key takes the hint back: the next Ctrl-C is a first press.
    let mut s = Script::with(app());
    s.ctrl('c');
    s.plain(KeyCode::PageUp);
    assert_eq!(s.app.hint, None);
    assert!(s.ctrl('c').is_empty(), "not a quit");
    s.type_text("x");
    assert!(s.ctrl('c').is_empty(), "clears the input, does not quit");
    assert_eq!(s.input(), "");
}

#[test]
fn ctrl_d_quits_on_an_empty_input_and_deletes_forward_otherwise() {
    let mut s = Script::with(app());
    s.type_text("abc");
    s.plain(KeyCode::Home);
    assert!(s.ctrl('d').is_empty());
    assert_eq!(
        s.input(),
        "bc",
        "with text: delete the character under the cursor"
    );
    s.ctrl('d');
    s.ctrl('d');
    assert_eq!(s.input(), "");
    assert!(is_quit(&s.ctrl('d')), "empty: quit at once");
}

#[test]
fn scrolling_up_stops_following_and_the_bottom_follows_again() {
    let mut s = Script::with(app());
    s.at(AppEvent::Resize {
        width: 100,
        height: 30,
    });
    assert_eq!(s.app.size, (100, 30));
    s.turn("x");
    // 300 paragraphs: about 600 lines drawn.
    let long: String = (0..300).map(|i| format!("line {i}\n\n")).collect();
    s.agent(AgentEvent::TextDelta { text: long });
    let scroll = |s: &Script| {
        (
            s.app.transcript.scroll.from_bottom,
            s.app.transcript.scroll.follow,
        )
    };
    assert_eq!(scroll(&s), (0, true));

    s.plain(KeyCode::PageUp);
    assert_eq!(scroll(&s), (22, false), "a page is the height less 8");
    s.at(wheel(MouseEventKind::ScrollUp));
    assert_eq!(scroll(&s), (25, false));
    s.at(wheel(MouseEventKind::ScrollDown));
    s.plain(KeyCode::PageDown);
    assert_eq!(scroll(&s), (0, true));
    s.plain(KeyCode::PageDown);
    assert_eq!(scroll(&s), (0, true));

    // Home and End when the input is empty.
    s.plain(KeyCode::Home);
    assert_eq!(scroll(&s), (TOP, false));
    // The frame shows the top: where it found that is where the next step down starts,
    // so the first page down from the top moves the view by a page.
    support::app::draw(&s.app, 100, 30, Instant::now());
    let top = s.app.transcript.shown_from_bottom.get().unwrap();
    assert!((550..=620).contains(&top), "{top}");
    s.plain(KeyCode::PageDown);
    assert_eq!(scroll(&s), (top - 22, false));
    s.plain(KeyCode::End);
    assert_eq!(scroll(&s), (0, true));

    // With text in the input, Home and End edit it; Ctrl-Home and Ctrl-End still scroll.
    s.type_text("abc");
    s.plain(KeyCode::Home);
    assert_eq!(scroll(&s), (0, true));
    assert_eq!(s.app.composer.textarea.cursor(), (0, 0));
    s.key(KeyCode::Home, KeyModifiers::CONTROL);
    assert_eq!(scroll(&s), (TOP, false));
    s.key(KeyCode::End, KeyModifiers::CONTROL);
    assert_eq!(scroll(&s), (0, true));
    assert_eq!(s.input_lines(), ["abc"]);

    // Sending returns to the bottom.
    s.plain(KeyCode::PageUp);
    s.end_turn(TurnOutcome::Completed);
    s.plain(KeyCode::Enter);
    assert_eq!(scroll(&s), (0, true));
}

#[test]
fn f2_toggles_mouse_capture_and_ctrl_g_no_longer_does() {
    let mut s = Script::with(app());
    assert!(!s.app.mouse_capture);
    assert!(matches!(
        s.plain(KeyCode::F(2)).as_slice(),
        [Effect::MouseCapture(true)]
    ));
    assert!(s.app.mouse_capture);
    assert!(matches!(s.ctrl('g').as_slice(), [Effect::EditInput { .. }]));
    assert!(s.app.mouse_capture);
    assert!(matches!(
        s.plain(KeyCode::F(2)).as_slice(),
        [Effect::MouseCapture(false)]
    ));
    assert!(!s.app.mouse_capture);
}

#[test]
fn unbound_keys_edit_the_input() {
    let mut s = Script::with(app());
    s.type_text("helo");
    s.plain(KeyCode::Left);
    s.type_text("l");
    s.plain(KeyCode::End);
    s.plain(KeyCode::Backspace);
    s.type_text("o!");
    assert_eq!(s.input_lines(), ["hello!"]);
}

#[test]
fn rename_names_the_session_and_needs_a_name() {
    let mut s = Script::with(app());
    let effects = s.send("/rename  Fix the flaky test ");
    assert!(
        matches!(effects.as_slice(), [Effect::Agent(AgentCommand::Rename(t))] if t == "Fix the flaky test"),
        "{effects:?}"
    );
    assert!(s.send("/rename").is_empty());
    assert!(s
        .app
        .hint
        .as_deref()
        .is_some_and(|h| h.contains("/rename needs a name")));
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
fn memory_lists_the_project_instructions_or_says_where_they_come_from() {
    let mut s = Script::with(app());
    assert!(s.send("/memory").is_empty());
    let (_, text) = s.notices().pop().expect("a notice");
    assert!(
        text.starts_with("No project instructions: rein reads AGENTS.md"),
        "{text}"
    );
    s.app.instructions = vec![
        "/repo/AGENTS.md (120 bytes)".into(),
        "/repo/sub/AGENTS.md (40000 bytes, cut)".into(),
    ];
    assert!(s.send("/memory").is_empty());
    let (_, text) = s.notices().pop().expect("a notice");
    assert_eq!(
        text,
        "Project instructions in the system prompt:\n  /repo/AGENTS.md (120 bytes)\n  /repo/sub/AGENTS.md (40000 bytes, cut)"
    );
    assert!(s.app.composer.textarea.is_empty());

    // `/clear` reads them again: the agent says what it found, and /memory follows.
    s.agent(AgentEvent::InstructionsLoaded {
        files: vec!["/repo/AGENTS.md (300 bytes)".into()],
        notices: vec!["/repo/sub/AGENTS.md was skipped: not UTF-8".into()],
    });
    let notices = s.notices();
    assert_eq!(
        notices[notices.len() - 2].1,
        "project instructions from /repo/AGENTS.md (300 bytes)"
    );
    assert!(s.send("/memory").is_empty());
    let (_, text) = s.notices().pop().expect("a notice");
    assert_eq!(
        text,
        "Project instructions in the system prompt:\n  /repo/AGENTS.md (300 bytes)\n  /repo/sub/AGENTS.md was skipped: not UTF-8"
    );

    // A folder's files loaded as the agent works there: said once, then listed after
    // the system prompt's; a new conversation starts without them.
    s.agent(AgentEvent::InstructionsAdded {
        files: vec!["/repo/lib/AGENTS.md (50 bytes)".into()],
        notices: vec!["/repo/lib/CLAUDE.md was not read: it leads outside the project".into()],
    });
    let notices = s.notices();
    assert_eq!(
        notices[notices.len() - 2].1,
        "instruction files for the folders worked in, sent to the model with the next message: /repo/lib/AGENTS.md (50 bytes)"
    );
    assert!(s.send("/memory").is_empty());
    let (_, text) = s.notices().pop().expect("a notice");
    assert!(
        text.ends_with(
            "\nLoaded for the folders worked in (sent with a message):\n  /repo/lib/AGENTS.md (50 bytes)\n  /repo/lib/CLAUDE.md was not read: it leads outside the project"
        ),
        "{text}"
    );
    s.agent(AgentEvent::InstructionsLoaded {
        files: vec!["/repo/AGENTS.md (300 bytes)".into()],
        notices: Vec::new(),
    });
    assert!(s.send("/memory").is_empty());
    let (_, text) = s.notices().pop().expect("a notice");
    assert!(!text.contains("/repo/lib"), "{text}");
}

// ---- the / completion list and custom commands ------------------------------------------

/// Custom commands from files in a temporary project (`name.md` → text).
fn custom_commands(
    files: &[(&str, &str)],
) -> (tempfile::TempDir, rein_core::custom_commands::CommandSet) {
    let dir = tempfile::tempdir().unwrap();
    let commands = dir.path().join(".agents/commands");
    std::fs::create_dir_all(&commands).unwrap();
    for (name, text) in files {
        std::fs::write(commands.join(name), text).unwrap();
    }
    let set = rein_core::custom_commands::CommandSet::discover(
        None,
        dir.path(),
        &rein::app::commands::is_builtin,
    );
    assert!(set.notices.is_empty(), "{:?}", set.notices);
    (dir, set)
}

/// An app with `/fix-issue` and `/review` as custom commands.
fn app_with_commands() -> (tempfile::TempDir, Script) {
    let (dir, set) = custom_commands(&[
        (
            "fix-issue.md",
            "---\ndescription: Fix a GitHub issue\nargument-hint: <issue-number>\n---\nFix issue #$1 ($ARGUMENTS).\n",
        ),
        ("review.md", "Review the staged diff.\n"),
    ]);
    let mut app = app();
    app.custom_commands = set;
    (dir, Script::with(app))
}

fn menu_names(s: &Script) -> Vec<String> {
    s.app.slash_matches().into_iter().map(|e| e.name).collect()
}

fn selected_name(s: &Script) -> String {
    let list = s.app.slash_matches();
    list[s.app.slash_selected(list.len())].name.clone()
}

#[test]
fn typing_a_slash_opens_the_list_of_built_in_then_custom_commands() {
    let (_dir, mut s) = app_with_commands();
    assert_eq!(rein::app::Layer::top(&s.app), rein::app::Layer::Main);
    s.type_text("/");
    assert_eq!(rein::app::Layer::top(&s.app), rein::app::Layer::Slash);
    let names = menu_names(&s);
    assert_eq!(names.first().map(String::as_str), Some("/help"));
    assert_eq!(
        &names[names.len() - 2..],
        ["/fix-issue", "/review"],
        "custom ones last"
    );
    assert_eq!(selected_name(&s), "/help");
}

#[test]
fn the_list_filters_as_the_user_types_prefix_matches_first() {
    let (_dir, mut s) = app_with_commands();
    s.type_text("/co");
    assert_eq!(
        menu_names(&s),
        ["/context", "/compact", "/cost"],
        "the table's order"
    );
    s.type_text("n");
    assert_eq!(menu_names(&s), ["/context"]);
    for _ in 0..3 {
        s.plain(KeyCode::Backspace);
    }
    assert_eq!(s.input(), "/");
    s.type_text("re");
    assert_eq!(menu_names(&s), ["/resume", "/rewind", "/rename", "/review"]);
    // Names that hold the text, then names that hold its letters in order.
    composer_set(&mut s, "/ss");
    assert_eq!(menu_names(&s), ["/fix-issue", "/skills", "/bashes"]);
    composer_set(&mut s, "/iss");
    assert_eq!(menu_names(&s), ["/fix-issue"]);
    composer_set(&mut s, "/xt");
    assert_eq!(menu_names(&s), ["/context"]);
}

#[test]
fn down_up_and_ctrl_n_ctrl_p_move_the_selection_and_wrap() {
    let (_dir, mut s) = app_with_commands();
    s.type_text("/co");
    assert_eq!(selected_name(&s), "/context");
    assert!(s.plain(KeyCode::Down).is_empty());
    assert_eq!(selected_name(&s), "/compact");
    s.ctrl('n');
    assert_eq!(selected_name(&s), "/cost");
    s.plain(KeyCode::Down);
    assert_eq!(selected_name(&s), "/context", "wraps to the first");
    s.plain(KeyCode::Up);
    assert_eq!(selected_name(&s), "/cost", "wraps to the last");
    s.ctrl('p');
    assert_eq!(selected_name(&s), "/compact");
    assert!(s.app.composer.history_pos.is_none(), "Up did not recall");
    assert_eq!(s.input(), "/co", "the text is unchanged");
    // Another letter: the selection starts again at the first match.
    s.type_text("s");
    assert_eq!(selected_name(&s), "/cost");
}

#[test]
fn tab_completes_the_selected_name_and_a_space_and_the_list_closes() {
    let (_dir, mut s) = app_with_commands();
    s.type_text("/co");
    assert!(s.plain(KeyCode::Tab).is_empty());
    assert_eq!(s.input(), "/context ");
    assert_eq!(s.app.composer.textarea.cursor(), (0, 9));
    assert_eq!(rein::app::Layer::top(&s.app), rein::app::Layer::Main);
    // The text after the word stays.
    composer_set(&mut s, "/fi 42");
    s.app
        .composer
        .textarea
        .move_cursor(tui_textarea::CursorMove::Jump(0, 3));
    assert_eq!(menu_names(&s), ["/fix-issue"]);
    s.plain(KeyCode::Tab);
    assert_eq!(s.input(), "/fix-issue 42");
}

fn composer_set(s: &mut Script, text: &str) {
    rein::app::composer::clear(&mut s.app.composer.textarea);
    s.app.composer.textarea.insert_str(text);
}

#[test]
fn enter_completes_a_partial_name_then_runs_it() {
    let (_dir, mut s) = app_with_commands();
    s.type_text("/cont");
    assert!(s.plain(KeyCode::Enter).is_empty());
    assert_eq!(s.input(), "/context ");
    assert!(!s.app.context_open, "not run yet");
    assert!(s.plain(KeyCode::Enter).is_empty());
    assert!(s.app.context_open, "the second Enter runs it");
    assert_eq!(s.input(), "");
}

#[test]
fn enter_runs_a_whole_name_at_once() {
    let (_dir, mut s) = app_with_commands();
    s.type_text("/todos");
    assert_eq!(rein::app::Layer::top(&s.app), rein::app::Layer::Slash);
    let shown = s.app.show_todos;
    s.plain(KeyCode::Enter);
    assert_eq!(s.app.show_todos, !shown);
    assert_eq!(s.input(), "");
    // An alias no entry shows (/exit) closes the list and is still a command.
    s.type_text("/exit");
    assert!(menu_names(&s).is_empty());
    assert!(is_quit(&s.plain(KeyCode::Enter)));
}

#[test]
fn esc_closes_the_list_keeps_the_text_and_does_not_interrupt() {
    let (_dir, mut s) = app_with_commands();
    s.turn("working");
    s.type_text("/rev");
    assert_eq!(rein::app::Layer::top(&s.app), rein::app::Layer::Slash);
    let effects = s.plain(KeyCode::Esc);
    assert!(!is_interrupt(&effects), "{effects:?}");
    assert_eq!(s.input(), "/rev");
    assert_eq!(rein::app::Layer::top(&s.app), rein::app::Layer::Main);
    // Closed, Esc is the main screen's again; typing opens the list anew.
    assert!(is_interrupt(&s.plain(KeyCode::Esc)));
    s.type_text("i");
    assert_eq!(menu_names(&s), ["/review"]);
}

#[test]
fn the_list_closes_when_the_text_no_longer_starts_a_command() {
    let (_dir, mut s) = app_with_commands();
    s.type_text("/review");
    assert!(!menu_names(&s).is_empty());
    s.type_text(" ");
    assert!(menu_names(&s).is_empty(), "a space after the name");
    composer_set(&mut s, "");
    s.type_text("/");
    assert!(!menu_names(&s).is_empty());
    s.plain(KeyCode::Backspace);
    assert!(menu_names(&s).is_empty(), "the slash deleted");
    s.type_text("/etc/hosts");
    assert!(menu_names(&s).is_empty(), "no command looks like a path");
    composer_set(&mut s, "see /help");
    assert!(menu_names(&s).is_empty(), "not at the start");
}

#[test]
fn enter_in_the_tail_of_a_paste_does_not_run_a_command() {
    let (_dir, mut s) = app_with_commands();
    s.at(AppEvent::Paste("/review".into()));
    let effects = s.plain(KeyCode::Enter);
    assert!(effects.is_empty(), "{effects:?}");
    assert_eq!(s.input_lines(), ["/review", ""]);
}

#[test]
fn a_custom_command_sends_its_prompt_and_the_transcript_shows_what_was_typed() {
    let (_dir, mut s) = app_with_commands();
    s.type_text("/fix-issue 123 \"the parser\"");
    let effects = s.plain(KeyCode::Enter);
    let expanded = "Fix issue #123 (123 \"the parser\").";
    assert_eq!(sent(&effects), [expanded]);
    assert_eq!(
        s.app.composer.history.last().map(String::as_str),
        Some("/fix-issue 123 \"the parser\""),
        "the history keeps what was typed"
    );
    s.turn(expanded);
    match s.cells().last() {
        Some(Cell::User(u)) => {
            assert_eq!(u.text, "/fix-issue 123 \"the parser\"");
            assert_eq!(
                u.expanded_from.as_deref(),
                Some(".agents/commands/fix-issue.md")
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(s.app.composer.sent_commands.is_empty());
    // An ordinary message is shown as sent.
    s.end_turn(TurnOutcome::Completed);
    let effects = s.send("hello");
    assert_eq!(sent(&effects), ["hello"]);
    s.turn("hello");
    assert!(matches!(s.cells().last(), Some(Cell::User(u)) if u.expanded_from.is_none()));
}

/// Issue 41: a project's command that hides the user's own of the same name says so as it
/// runs (a repository, or a model that wrote into it, could otherwise answer the name the
/// user trusts with a prompt of its own); one that hides nothing says nothing.
#[test]
fn a_project_command_that_hides_the_users_own_says_so_when_it_runs() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    for (dir, text) in [
        (home.path().join(".claude/commands"), "my own review"),
        (
            project.path().join(".claude/commands"),
            "the project's review",
        ),
    ] {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("review.md"), text).unwrap();
    }
    std::fs::write(project.path().join(".claude/commands/lint.md"), "lint it").unwrap();
    let mut app = app();
    app.custom_commands = rein_core::custom_commands::CommandSet::discover(
        Some(home.path()),
        project.path(),
        &rein::app::commands::is_builtin,
    );
    let mut s = Script::with(app);
    let effects = s.send("/review");
    assert_eq!(sent(&effects), ["the project's review"]);
    let (_, text) = s.notices().pop().expect("a notice");
    assert_eq!(
        text,
        "/review runs the project's .claude/commands/review.md, not your own \
         ~/.claude/commands/review.md, which it shadows"
    );
    s.turn("the project's review");
    s.end_turn(TurnOutcome::Completed);
    let before = s.notices().len();
    let effects = s.send("/lint");
    assert_eq!(sent(&effects), ["lint it"]);
    assert_eq!(s.notices().len(), before, "nothing hidden, nothing said");
}

#[test]
fn help_lists_the_custom_commands_with_their_hints_and_files() {
    let (_dir, mut s) = app_with_commands();
    s.plain(KeyCode::F(1));
    let text = s.app.help.as_ref().expect("help").lines.join("\n") + "\n";
    assert!(text.contains("Custom commands\n"), "{text}");
    assert!(
        text.contains(
            "  /fix-issue <issue-number>  Fix a GitHub issue  (project: .agents/commands/fix-issue.md)\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "  /review                    Review the staged diff.  (project: .agents/commands/review.md)\n"
        ),
        "{text}"
    );
    assert!(text.contains("Command completion (type /)"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("Tab ") && l.ends_with(" complete")),
        "{text}"
    );
}

/// A name shaped like a custom command's (`/word-with-hyphens`, `/ns:name`) that no file
/// defines is refused like any unknown command: a hint, nothing sent; a defined one still
/// expands, and a path stays a message.
#[test]
fn an_unknown_hyphenated_command_is_refused_not_sent() {
    let (_dir, mut s) = app_with_commands();
    for typed in ["/fix-issues 12", "/frontend:test"] {
        let effects = s.send(typed);
        assert!(
            effects.is_empty(),
            "{typed} never reaches the model: {effects:?}"
        );
        let name = typed.split_whitespace().next().unwrap();
        assert_eq!(
            s.app.hint.as_deref(),
            Some(format!("unknown command {name}; /help lists them").as_str())
        );
    }
    let effects = s.send("/fix-issue 12");
    assert_eq!(sent(&effects), ["Fix issue #12 (12)."]);
    s.end_turn(TurnOutcome::Completed);
    let effects = s.send("/usr/local-bin is missing");
    assert_eq!(sent(&effects), ["/usr/local-bin is missing"]);
}

/// Where `.agents/commands/x.md` and Claude Code's `.claude/commands/x.md` are both there,
/// `/help` names the one in force and the one it hides.
#[test]
fn help_names_the_claude_command_a_project_command_hides() {
    let dir = tempfile::tempdir().unwrap();
    for (folder, text) in [
        (".claude/commands", "claude's review"),
        (".agents/commands", "rein's review"),
    ] {
        std::fs::create_dir_all(dir.path().join(folder)).unwrap();
        std::fs::write(dir.path().join(folder).join("review.md"), text).unwrap();
    }
    let set = rein_core::custom_commands::CommandSet::discover(
        None,
        dir.path(),
        &rein::app::commands::is_builtin,
    );
    let mut app = app();
    app.custom_commands = set;
    let mut s = Script::with(app);
    s.plain(KeyCode::F(1));
    let help = s.app.help.as_ref().expect("the help overlay");
    assert!(
        help.lines.iter().any(|l| l
            == "  /review  rein's review  (project: .agents/commands/review.md; hides .claude/commands/review.md)"),
        "{:#?}",
        help.lines
    );
}

#[test]
fn custom_commands_read_again_after_clear_replace_the_old_ones() {
    let (_dir, mut s) = app_with_commands();
    let effects = s.send("/clear");
    assert!(
        effects.iter().any(|e| matches!(e, Effect::ReloadCommands)),
        "{effects:?}"
    );
    let dir = tempfile::tempdir().unwrap();
    let commands = dir.path().join(".agents/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(commands.join("deploy.md"), "Deploy it.").unwrap();
    std::fs::write(commands.join("Bad.md"), "x").unwrap();
    let set = rein_core::custom_commands::CommandSet::discover(
        None,
        dir.path(),
        &rein::app::commands::is_builtin,
    );
    assert!(s.at(AppEvent::CommandsLoaded(set)).is_empty());
    s.type_text("/");
    let names = menu_names(&s);
    assert!(names.contains(&"/deploy".to_string()), "{names:?}");
    assert!(!names.contains(&"/review".to_string()), "{names:?}");
    let (_, notice) = s.notices().pop().expect("the skipped file's notice");
    assert!(
        notice.starts_with("command .agents/commands/Bad.md skipped: the name \"Bad\""),
        "{notice}"
    );
}

#[test]
fn earlier_sessions_inputs_go_before_this_runs_and_a_recall_stays_on_its_entry() {
    let mut s = Script::with(app());
    s.send("explain the lexer");
    s.agent(AgentEvent::TurnFinished {
        outcome: rein_core::agent::TurnOutcome::Completed,
    });
    s.send("now the parser");
    s.agent(AgentEvent::TurnFinished {
        outcome: rein_core::agent::TurnOutcome::Completed,
    });
    // Recalling "now the parser" when the file's inputs arrive.
    s.plain(KeyCode::Up);
    assert_eq!(s.app.composer.history_pos, Some(1));
    s.at(AppEvent::HistoryLoaded(vec![
        "fix the parser".into(),
        "explain the lexer".into(),
    ]));
    assert_eq!(
        s.app.composer.history,
        ["fix the parser", "explain the lexer", "now the parser"],
        "not twice"
    );
    assert_eq!(s.app.composer.history_pos, Some(2));
    s.plain(KeyCode::Up);
    assert_eq!(
        rein::app::composer::text(&s.app.composer.textarea),
        "explain the lexer"
    );
    s.plain(KeyCode::Up);
    assert_eq!(
        rein::app::composer::text(&s.app.composer.textarea),
        "fix the parser"
    );
}

#[test]
fn sent_inputs_are_saved_when_the_history_file_is_on() {
    let mut s = Script::with(app());
    // Off (the demo, `ui.input_history = false`): nothing to save.
    let effects = s.send("/help");
    assert!(!effects.iter().any(|e| matches!(e, Effect::SaveInput(_))));
    s.plain(KeyCode::Esc);
    s.app.input_history = Some("/data/history.jsonl".into());
    let saved = |effects: &[Effect]| -> Vec<String> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::SaveInput(text) => Some(text.clone()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(saved(&s.send("fix the parser")), ["fix the parser"]);
    s.agent(AgentEvent::TurnFinished {
        outcome: rein_core::agent::TurnOutcome::Completed,
    });
    assert_eq!(saved(&s.send("/context")), ["/context"], "commands too");
    s.plain(KeyCode::Esc);
    s.agent(AgentEvent::TurnFinished {
        outcome: rein_core::agent::TurnOutcome::Completed,
    });
    // The same input twice in a row is one entry.
    assert_eq!(saved(&s.send("/context")), Vec::<String>::new());
}

#[test]
fn mcp_servers_say_when_they_are_ready_or_fail_and_slash_mcp_lists_them() {
    use rein_core::mcp::{McpEvent, ServerState};
    let mut s = Script::with(app());
    s.send("/mcp");
    // The servers' layer opens over the listing; Esc closes it.
    s.plain(KeyCode::Esc);
    assert!(s
        .notices()
        .pop()
        .unwrap()
        .1
        .starts_with("No MCP servers run"));
    for (name, state) in [
        ("github", ServerState::Starting),
        ("time", ServerState::Starting),
        ("github", ServerState::Ready { tools: 12 }),
        (
            "time",
            ServerState::Failed {
                reason: "it exited during initialize".into(),
                stderr: vec!["ModuleNotFoundError: mcp".into()],
            },
        ),
    ] {
        s.at(AppEvent::Mcp(McpEvent::ServerState {
            name: name.into(),
            state,
        }));
    }
    let notices = s.notices();
    let texts: Vec<&str> = notices.iter().map(|(_, t)| t.as_str()).collect();
    assert!(
        texts.contains(&"MCP server github: ready, 12 tools"),
        "{texts:?}"
    );
    let failed = notices.last().unwrap();
    assert_eq!(failed.0, NoticeKind::Error);
    assert_eq!(
        failed.1,
        "MCP server time failed: it exited during initialize\n  ModuleNotFoundError: mcp"
    );
    s.send("/mcp");
    // The servers' layer opens over the listing; Esc closes it.
    s.plain(KeyCode::Esc);
    assert_eq!(
        s.notices().pop().unwrap().1,
        "MCP servers:\n  github: ready, 12 tools\n  time: failed: it exited during initialize"
    );
    let effects = s.send("/mcp restart time");
    assert!(
        matches!(effects.as_slice(), [Effect::RestartMcp(name)] if name == "time"),
        "{effects:?}"
    );
    s.send("/mcp restart");
    assert_eq!(
        s.app.hint.as_deref(),
        Some("/mcp restart: expected /mcp, /mcp restart NAME, /mcp allow NAME, /mcp login NAME or /mcp logout NAME")
    );
}

#[test]
fn slash_mcp_login_runs_off_the_loop_shows_its_steps_and_restarts_the_server_once_logged_in() {
    use rein::app::event::McpLoginStep;
    use rein_core::mcp::oauth::LoginOutcome;
    use rein_core::mcp::{McpEvent, ServerState};
    let mut s = Script::with(app());
    for (name, state) in [
        (
            "docs",
            ServerState::NeedsLogin {
                name: "docs".into(),
            },
        ),
        ("time", ServerState::Disabled),
    ] {
        s.at(AppEvent::Mcp(McpEvent::ServerState {
            name: name.into(),
            state,
        }));
    }
    s.send("/mcp");
    // The servers' layer opens over the listing; Esc closes it.
    s.plain(KeyCode::Esc);
    assert!(
        s.notices().pop().unwrap().1.contains(
            "docs: needs login: the server asks for an OAuth login; `rein mcp login docs` in a \
             shell, or /mcp login docs in the dashboard, logs in"
        ),
        "{:?}",
        s.notices()
    );

    // Unknown and disabled servers, and a second login while one runs, ask nothing of the loop.
    for (input, hint) in [
        (
            "/mcp login nope",
            "no MCP server named nope in this session; /mcp lists them",
        ),
        (
            "/mcp login time",
            "the MCP server time is disabled (enabled = false)",
        ),
    ] {
        let effects = s.send(input);
        assert!(
            effects.iter().all(|e| !matches!(e, Effect::LoginMcp(_))),
            "{effects:?}"
        );
        assert_eq!(s.app.hint.as_deref(), Some(hint));
    }
    let effects = s.send("/mcp login docs");
    assert!(
        matches!(effects.as_slice(), [Effect::LoginMcp(name)] if name == "docs"),
        "{effects:?}"
    );
    assert!(s
        .notices()
        .pop()
        .unwrap()
        .1
        .starts_with("logging in to the MCP server docs (OAuth)"));
    let effects = s.send("/mcp login docs");
    assert!(
        effects.iter().all(|e| !matches!(e, Effect::LoginMcp(_))),
        "{effects:?}"
    );
    assert_eq!(
        s.app.hint.as_deref(),
        Some("a login to docs is under way: finish it in the browser")
    );

    // The URL, capped, attributed to the server.
    let huge = format!("https://auth.example/authorize?x={}", "a".repeat(10_000));
    let effects = s.at(AppEvent::McpLogin {
        name: "docs".into(),
        step: McpLoginStep::Url(huge),
    });
    assert!(effects.is_empty());
    let (kind, text) = s.notices().pop().unwrap();
    assert_eq!(kind, NoticeKind::Info);
    assert!(text.starts_with(
        "MCP server docs: open this URL in a browser to log in (rein tries to open it):\n  https://auth.example/authorize?x=aaa"
    ), "{text}");
    assert!(
        text.ends_with('…') && text.chars().count() < 4200,
        "{}",
        text.len()
    );

    // A failure says why and lets a new login start.
    s.at(AppEvent::McpLogin {
        name: "docs".into(),
        step: McpLoginStep::Finished(Err("no answer from the browser within 300 s".into())),
    });
    assert_eq!(
        s.notices().pop().unwrap(),
        (
            NoticeKind::Error,
            "the login to the MCP server docs failed: no answer from the browser within 300 s"
                .to_string()
        )
    );
    assert!(matches!(
        s.send("/mcp login docs").as_slice(),
        [Effect::LoginMcp(_)]
    ));

    // Logged in: the server restarts, so its tools appear.
    let effects = s.at(AppEvent::McpLogin {
        name: "docs".into(),
        step: McpLoginStep::Finished(Ok(LoginOutcome::LoggedIn)),
    });
    assert!(
        matches!(effects.as_slice(), [Effect::RestartMcp(name)] if name == "docs"),
        "{effects:?}"
    );
    assert_eq!(
        s.notices().pop().unwrap().1,
        "logged in to the MCP server docs; restarting it"
    );
}

#[test]
fn slash_mcp_logout_forgets_the_tokens_through_the_loop_and_restarts_the_server() {
    use rein::app::event::McpLoginStep;
    use rein_core::mcp::{McpEvent, ServerState};
    let mut s = Script::with(app());
    s.at(AppEvent::Mcp(McpEvent::ServerState {
        name: "docs".into(),
        state: ServerState::Ready { tools: 1 },
    }));
    let effects = s.send("/mcp logout nope");
    assert!(effects.is_empty(), "{effects:?}");
    let effects = s.send("/mcp logout docs");
    assert!(
        matches!(effects.as_slice(), [Effect::LogoutMcp(name)] if name == "docs"),
        "{effects:?}"
    );
    let effects = s.at(AppEvent::McpLogin {
        name: "docs".into(),
        step: McpLoginStep::LoggedOut(Ok(true)),
    });
    assert!(matches!(effects.as_slice(), [Effect::RestartMcp(name)] if name == "docs"));
    assert_eq!(
        s.notices().pop().unwrap().1,
        "logged out of the MCP server docs: its tokens are forgotten; restarting it"
    );
    let effects = s.at(AppEvent::McpLogin {
        name: "docs".into(),
        step: McpLoginStep::LoggedOut(Ok(false)),
    });
    assert!(effects.is_empty());
    assert_eq!(
        s.notices().pop().unwrap().1,
        "the MCP server docs had no login to forget"
    );
}

#[test]
fn slash_mcp_allow_starts_a_projects_server_that_waits_and_nothing_else() {
    use rein_core::mcp::{McpEvent, ServerState, Unapproved};
    let mut s = Script::with(app());
    for (name, state) in [
        ("github", ServerState::Ready { tools: 3 }),
        (
            "db",
            ServerState::NotAllowed {
                launch: "node db.js".into(),
                why: Unapproved::New,
            },
        ),
        (
            "docs",
            ServerState::NotAllowed {
                launch: "https://docs.example/mcp [sends your token from GITHUB_TOKEN]".into(),
                why: Unapproved::Changed(vec![
                    "bearer_token_env: (unset) -> \"GITHUB_TOKEN\"".into()
                ]),
            },
        ),
    ] {
        s.at(AppEvent::Mcp(McpEvent::ServerState {
            name: name.into(),
            state,
        }));
    }
    s.send("/mcp");
    // The servers' layer opens over the listing; Esc closes it.
    s.plain(KeyCode::Esc);
    assert_eq!(
        s.notices().pop().unwrap().1,
        "MCP servers:\n  github: ready, 3 tools\n  db: not allowed yet: the project declares it; it \
         would run `node db.js` outside rein's sandbox (/mcp allow db allows it for this project)\n  \
         docs: not allowed since the project changed it (bearer_token_env: (unset) -> \"GITHUB_TOKEN\"); \
         it would run `https://docs.example/mcp [sends your token from GITHUB_TOKEN]` outside rein's \
         sandbox (/mcp allow docs allows it for this project)"
    );
    // Only a server that waits is allowed; the command line is said.
    let effects = s.send("/mcp allow github");
    assert!(
        effects.iter().all(|e| !matches!(e, Effect::AllowMcp(_))),
        "{effects:?}"
    );
    assert!(s
        .notices()
        .pop()
        .unwrap()
        .1
        .contains("github needs no approval"));
    let effects = s.send("/mcp allow nope");
    assert!(effects.iter().all(|e| !matches!(e, Effect::AllowMcp(_))));
    assert!(s
        .app
        .hint
        .as_deref()
        .unwrap()
        .contains("no MCP server named nope"));
    let effects = s.send("/mcp allow db");
    assert!(
        matches!(effects.as_slice(), [Effect::AllowMcp(name)] if name == "db"),
        "{effects:?}"
    );
    let said = s.notices().pop().unwrap().1;
    assert!(
        said.contains("runs `node db.js` outside rein's sandbox") && !said.contains("changed"),
        "{said}"
    );
    // What changed since the user allowed it before is said with the approval.
    let effects = s.send("/mcp allow docs");
    assert!(
        matches!(effects.as_slice(), [Effect::AllowMcp(name)] if name == "docs"),
        "{effects:?}"
    );
    let said = s.notices().pop().unwrap().1;
    assert!(
        said.ends_with(
            "(changed since you allowed it before:\n  bearer_token_env: (unset) -> \"GITHUB_TOKEN\")"
        ),
        "{said}"
    );
}

/// Ctrl-Home anchors the view at the top: a frame lays out only the cells down to the view
/// (20 000 cells never drawn stay undrawn), PgDn and PgUp move from the top, the label
/// says there is more below without counting it, and reaching the end measures from the
/// bottom again.
#[test]
fn the_top_of_a_long_transcript_is_shown_without_laying_out_the_rest() {
    let mut s = Script::with(app());
    s.at(AppEvent::Resize {
        width: 100,
        height: 30,
    });
    for i in 0..20_000 {
        s.app.transcript.cells.push(rein::app::state::Cell::notice(
            NoticeKind::Info,
            format!("notice {i}"),
        ));
    }
    s.key(KeyCode::Home, KeyModifiers::CONTROL);
    assert_eq!(s.app.transcript.scroll.from_top, Some(0));
    let screen = support::app::draw(&s.app, 100, 30, Instant::now());
    assert!(
        screen.contains("notice 0\n") || screen.contains("notice 0 "),
        "{screen}"
    );
    assert!(screen.contains("↓ more (End)"), "{screen}");
    let drawn = s
        .app
        .transcript
        .cells
        .iter()
        .filter(|c| c.cache().0.borrow().is_some())
        .count();
    assert!(drawn < 100, "{drawn} cells laid out for the top");
    s.plain(KeyCode::PageDown);
    assert_eq!(s.app.transcript.scroll.from_top, Some(22));
    let screen = support::app::draw(&s.app, 100, 30, Instant::now());
    assert!(
        !screen.contains("notice 0 ") && screen.contains("notice 15"),
        "{screen}"
    );
    s.plain(KeyCode::PageUp);
    s.plain(KeyCode::PageUp);
    assert_eq!(s.app.transcript.scroll.from_top, Some(0));
    s.plain(KeyCode::End);
    assert_eq!(s.app.transcript.scroll.from_top, None);
    assert!(s.app.transcript.scroll.follow);
}

#[test]
fn background_commands_show_in_the_status_line_and_in_slash_bashes() {
    use rein_core::tools::background::{TaskInfo, TaskState};
    let mut s = Script::with(app());
    s.send("/bashes");
    assert!(
        s.notices()
            .pop()
            .unwrap()
            .1
            .starts_with("No background commands"),
        "{:?}",
        s.notices()
    );
    let task = |id: &str, state: TaskState, last: &str| TaskInfo {
        id: id.into(),
        command: format!("npm run {id}"),
        pid: 4242,
        state,
        last_line: last.into(),
        unread: false,
    };
    s.agent(AgentEvent::Background {
        tasks: vec![
            task(
                "bash-1",
                TaskState::Exited { code: 1 },
                "error: port in use",
            ),
            task("bash-2", TaskState::Running, "listening on :3000"),
        ],
    });
    let screen = support::app::draw(&s.app, 120, 20, Instant::now());
    assert!(screen.contains("1 bg"), "{screen}");
    s.send("/bashes");
    assert_eq!(
        s.notices().pop().unwrap().1,
        "Background commands (1 running; /bashes kill ID stops one, /bashes kill all):\n  \
         bash-2 running (pid 4242): npm run bash-2\n      listening on :3000\n  \
         bash-1 exited with code 1 (pid 4242): npm run bash-1\n      error: port in use"
    );
    let effects = s.send("/bashes kill bash-2");
    assert!(
        matches!(effects.as_slice(), [Effect::KillBackground(id)] if id == "bash-2"),
        "{effects:?}"
    );
    s.send("/bashes nope");
    assert_eq!(
        s.app.hint.as_deref(),
        Some("/bashes nope: expected /bashes, /bashes kill ID or /bashes kill all")
    );
    // None running: no count.
    s.agent(AgentEvent::Background {
        tasks: vec![task("bash-2", TaskState::Stopped, "listening on :3000")],
    });
    let screen = support::app::draw(&s.app, 120, 20, Instant::now());
    assert!(!screen.contains(" bg"), "{screen}");
}

// ---- a project's hooks ------------------------------------------------------------------

/// The question about a project's held hooks takes every key but answers only to its own:
/// `a` allows (the held hooks go to the loop), `n` keeps them held and lets a waiting
/// session start, `/hooks allow` asks again; typing, Enter, pastes and key repeats answer
/// nothing.
#[test]
fn the_question_about_a_projects_hooks_takes_only_its_answers() {
    use crossterm::event::{KeyEvent, KeyEventKind};
    use rein::app::hook_trust::HookTrust;
    use rein::app::layer::Layer;

    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".rein")).unwrap();
    std::fs::write(
        project.path().join(".rein/hooks.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch x"}]}]}}"#,
    )
    .unwrap();
    let loaded = rein_core::hooks::load(
        &data.path().join("config.toml"),
        project.path(),
        data.path(),
    );
    let held = loaded.held.expect("the project's hooks are held");
    assert!(!held.changed);
    let mut s = Script::with(app());
    s.app.hook_trust = Some(HookTrust::new(held));
    assert_eq!(Layer::top(&s.app), Layer::Hooks);

    s.type_text("y/hooks");
    assert!(s.plain(KeyCode::Enter).is_empty());
    assert!(s.paste("a").is_empty());
    let mut held_a = KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE);
    held_a.kind = KeyEventKind::Repeat;
    assert!(s.at(AppEvent::Key(held_a)).is_empty());
    assert_eq!(Layer::top(&s.app), Layer::Hooks);
    assert!(
        s.app.composer.textarea.is_empty(),
        "the keys went to the input"
    );

    let effects = s.plain(KeyCode::Char('n'));
    assert!(
        matches!(effects.as_slice(), [Effect::HooksAnswered]),
        "{effects:?}"
    );
    assert_eq!(Layer::top(&s.app), Layer::Main);
    assert!(s
        .notices()
        .pop()
        .unwrap()
        .1
        .starts_with("the project's 1 hook stays held"));
    s.send("/hooks");
    assert!(s.notices().pop().unwrap().1.contains("/hooks allow shows"));

    s.send("/hooks allow");
    assert_eq!(Layer::top(&s.app), Layer::Hooks);
    let effects = s.plain(KeyCode::Char('a'));
    assert!(
        matches!(effects.as_slice(), [Effect::AllowHooks(h)] if h.hooks.len() == 1),
        "{effects:?}"
    );
    assert!(s.app.hook_trust.is_none());
    // Nothing held now: /hooks allow approves them as they are now (a script of theirs
    // that changed during the session holds them until then), and says what it pinned.
    let effects = s.send("/hooks allow");
    assert!(
        matches!(effects.as_slice(), [.., Effect::ReapproveHooks]),
        "{effects:?}"
    );
    rein::app::update::hooks::reapproved(
        &mut s.app,
        Ok(vec![".claude/hooks/check.sh (sha256 0123abcd…)".into()]),
    );
    let said = s.notices().pop().unwrap().1;
    assert!(
        said.starts_with("allowed the project's hooks as they are now")
            && said.contains("\n  .claude/hooks/check.sh (sha256 0123abcd…)"),
        "{said}"
    );
    rein::app::update::hooks::reapproved(
        &mut s.app,
        Err(".rein/hooks.json does not exist or is not JSON".into()),
    );
    assert_eq!(
        s.notices().pop().unwrap().1,
        "no project hooks allowed: .rein/hooks.json does not exist or is not JSON"
    );

    // The loop allowed them: the transcript names them, /hooks lists them.
    rein::app::update::hooks::allowed(&mut s.app, Ok(vec!["Stop: touch x (project)".into()]));
    assert_eq!(
        s.notices().pop().unwrap().1,
        "allowed the project's hooks: 1 runs as you, outside rein's sandbox, until the file \
         changes:\n  Stop: touch x (project)"
    );
    assert_eq!(s.app.hooks, ["Stop: touch x (project)"]);
    rein::app::update::hooks::allowed(&mut s.app, Err("the disk is full".into()));
    assert_eq!(
        s.notices().pop(),
        Some((
            NoticeKind::Error,
            "the project's hooks stay held: the disk is full".into()
        ))
    );
}

/// `/mcp` opens the servers' layer over its listing: a server that needs a login says so,
/// and `l` on it logs in (as `/mcp login NAME` does); Down moves, `r` restarts the selected
/// one, `a` allows a project's server that waits; each closes the layer.
#[test]
fn the_mcp_layer_logs_in_restarts_and_allows_on_a_key() {
    use rein::app::layer::Layer;
    use rein_core::mcp::{McpEvent, ServerState, Unapproved};
    let mut s = Script::with(App::new(SessionInfo::default(), 128_000));
    for (name, state) in [
        (
            "docs",
            ServerState::NeedsLogin {
                name: "docs".into(),
            },
        ),
        ("github", ServerState::Ready { tools: 3 }),
        (
            "db",
            ServerState::NotAllowed {
                launch: "node db.js".into(),
                why: Unapproved::New,
            },
        ),
    ] {
        s.at(AppEvent::Mcp(McpEvent::ServerState {
            name: name.into(),
            state,
        }));
    }
    s.send("/mcp");
    assert_eq!(Layer::top(&s.app), Layer::Mcp);
    let screen = support::app::draw(&s.app, 100, 24, s.now);
    assert!(screen.contains("MCP servers (3)"), "{screen}");
    assert!(screen.contains("› docs: needs login"), "{screen}");
    assert!(screen.contains("l log in"), "{screen}");
    let effects = s.plain(KeyCode::Char('l'));
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::LoginMcp(n) if n == "docs")),
        "{effects:?}"
    );
    assert!(s.app.mcp_panel.is_none(), "the layer closes");

    s.send("/mcp");
    s.plain(KeyCode::Down);
    let effects = s.plain(KeyCode::Char('r'));
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::RestartMcp(n) if n == "github")),
        "{effects:?}"
    );

    s.send("/mcp");
    s.plain(KeyCode::Down);
    s.plain(KeyCode::Down);
    s.plain(KeyCode::Down);
    let effects = s.plain(KeyCode::Char('a'));
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::AllowMcp(n) if n == "db")),
        "{effects:?}"
    );

    // Esc closes it and nothing happens; keys that are no action do nothing.
    s.send("/mcp");
    assert!(s.plain(KeyCode::Char('x')).is_empty());
    assert!(s.plain(KeyCode::Esc).is_empty());
    assert_eq!(Layer::top(&s.app), Layer::Main);
}
