//! The gauge, the context layer and the status line: levels and colours, where the tokens
//! go, a compaction running and folded, an estimated count, a queued task, nothing
//! recorded.

use crate::support;

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use rein::app::state::{Activity, App, Cell};
use rein::app::update::update_at;
use rein::app::AppEvent;
use rein::ui::render;
use rein_core::agent::{AgentEvent, ContextStats, Usage};
use rein_core::context::budget::Breakdown;
use support::app::{draw, snapshot};

use super::{apply, busy_app, info, Clock};

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
