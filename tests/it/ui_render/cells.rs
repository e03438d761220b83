//! Transcript cells: a tool cell redrawn after it changes, an edit's lines, an MCP call's
//! progress.

use crate::support;

use std::time::{Duration, Instant};

use rein::app::state::{App, Cell, ToolStatus};
use rein::app::update::update_at;
use rein::app::AppEvent;
use rein_core::agent::AgentEvent;
use support::app::{draw, snapshot};

use super::{apply, info, tool, Clock};

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
