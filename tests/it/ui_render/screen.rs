//! The dashboard's screen: the transcript, the todo pane, wide and narrow terminals,
//! scrolling, the input with queued messages, the first run, escape sequences shown as
//! text, a huge transcript.

use crate::support;

use ratatui::backend::TestBackend;
use ratatui::Terminal;
use rein::app::state::{Activity, App, Cell, ToolStatus};
use rein::ui::render;
use support::app::{draw, snapshot};

use super::{busy_app, info, tool, Clock};

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
