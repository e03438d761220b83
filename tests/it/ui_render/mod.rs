//! Snapshots of the dashboard: ratatui's `TestBackend` draws the real `rein::ui::render`
//! for a given state, and the screen's text is compared with `tests/snapshots/NAME.txt`.
//! `UPDATE_SNAPSHOTS=1 cargo test --test it ui_render::` writes the files instead; review them
//! before committing. (The approval modal's snapshots are made next to the code, in
//! `src/ui/snapshot_tests.rs`: an approval request can only be built inside the crate.)

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rein::app::state::{Activity, App, Cell, NoticeKind, SessionInfo, ToolStatus};
use rein::app::update::update_at;
use rein::app::AppEvent;
use rein_core::agent::AgentEvent;
use rein_core::tools::write_todos::{Todo, TodoStatus};

mod cells;
mod layers;
mod screen;
mod status;

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

fn apply(app: &mut App, event: AgentEvent, now: Instant) {
    update_at(app, AppEvent::Agent(event), now);
}
