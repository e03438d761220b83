//! Snapshots of the approval modal and of a subagent's `task` cell, and tiny terminals.
//! Same files and switch as `tests/it/ui_render/`: `tests/snapshots/NAME.txt`,
//! `UPDATE_SNAPSHOTS=1` rewrites them.

use crate::support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ratatui::backend::TestBackend;
use ratatui::Terminal;
use tui_textarea::TextArea;

use rein::app::state::{Activity, App, Cell, PendingApproval, SessionInfo, ToolStatus};
use rein::ui::{buffer_text, render};
use rein_core::permissions::rules::prefix_pattern;
use rein_core::permissions::Grant;
use support::app::{assert_snapshot, draw};

fn request(
    tool: &str,
    summary: &str,
    reason: &str,
    grants: Vec<Grant>,
    preview: Option<&str>,
) -> PendingApproval {
    PendingApproval {
        id: format!("call-{tool}"),
        tool: tool.into(),
        summary: summary.into(),
        reason: reason.into(),
        grants,
        preview: preview.map(str::to_string),
        subagent: None,
        mcp: None,
    }
}

fn app_waiting(now: Instant) -> App {
    let info = SessionInfo {
        model: "qwen3-coder".into(),
        project: PathBuf::from("/projects/parser"),
        branch: Some("fix-tabs".into()),
        sandbox: "on (bubblewrap)".into(),
        sandbox_ok: true,
        setup: None,
        skills: Vec::new(),
        skill_notices: Vec::new(),
        prices: None,
    };
    let mut app = App::new(info, 128_000);
    let mut waiting = Cell::tool("c1", "bash", "cargo test --all-features", now);
    if let Cell::Tool(t) = &mut waiting {
        t.status = ToolStatus::WaitingApproval;
    }
    app.transcript.cells = vec![
        Cell::user("Run the whole suite and save a summary."),
        Cell::assistant("I'll run the tests, then write the summary.", true),
        waiting,
    ];
    app.activity = Activity::WaitingApproval {
        since: now - Duration::from_secs(7),
    };
    app.gauge.reported = 40_000;
    app
}

const COMMAND: &str = "cargo test --all-features -- --include-ignored parse::tabs parse::spaces 2>&1 | tee /tmp/rein-test-summary.txt";

fn command_request() -> PendingApproval {
    request(
        "bash",
        COMMAND,
        "`tee /tmp/rein-test-summary.txt` writes outside the project (ask rule `tee *`)",
        vec![
            Grant::Bash(
                "cargo test --all-features -- --include-ignored parse::tabs parse::spaces".into(),
            ),
            Grant::Bash("tee /tmp/rein-test-summary.txt".into()),
        ],
        None,
    )
}

const DIFF: &str = "--- a/src/parse.rs\n+++ b/src/parse.rs\n@@ -1,3 +1,5 @@\n fn parse_line(s: &str) -> Vec<&str> {\n-    s.split_whitespace().collect()\n+    s.split(' ')\n+        .filter(|w| !w.is_empty())\n+        .collect()\n }\n@@ -20,2 +22,6 @@\n #[test]\n+fn tabs_stay_inside_words() {\n+    assert_eq!(parse_line(\"a\\tb c\"), [\"a\\tb\", \"c\"]);\n+}\n";

fn diff_request() -> PendingApproval {
    request(
        "write_file",
        "src/parse.rs",
        "writes to files in the project ask first (default rule)",
        vec![Grant::Write(PathBuf::from("/projects/parser/src/parse.rs"))],
        Some(DIFF),
    )
}

#[test]
fn approval_modal_for_a_command() {
    let now = Instant::now() + Duration::from_secs(600);
    let mut app = app_waiting(now);
    app.approvals.queue.push_back(command_request());
    app.approvals.queue.push_back(command_request());
    app.approvals.batch_total = 3;
    app.approvals.answered = 1;
    let screen = draw(&app, 80, 30, now);
    assert_snapshot("approval_command_80x30", &screen);
    assert!(screen.contains("Allow `bash`?"));
    assert!(screen.contains("2 of 3"));
    assert!(screen.contains("commands matching `tee /tmp/rein-test-summary.txt`"));
    assert!(screen.contains("p  always allow in this project"));
    assert!(screen.contains("e  deny and tell rein why"));
}

/// "Allow for this session" names the prefix it adds, in Claude Code's words.
#[test]
fn approval_modal_offers_the_commands_prefix() {
    let now = Instant::now() + Duration::from_secs(600);
    let mut app = app_waiting(now);
    app.approvals.queue.push_back(request(
        "bash",
        "git add -A && git commit -m 'fix the tab parser'",
        "`git add -A` matches the default rule `*` (ask)",
        vec![
            Grant::Bash(prefix_pattern("git add")),
            Grant::Bash(prefix_pattern("git commit")),
        ],
        None,
    ));
    app.approvals.batch_total = 1;
    let screen = draw(&app, 80, 30, now);
    assert_snapshot("approval_prefix_80x30", &screen);
    assert!(screen.contains("a  allow for this session:"), "{screen}");
    assert!(screen.contains("· `git add` with any arguments (`git add:*`)"));
    assert!(screen.contains("· `git commit` with any arguments (`git commit:*`)"));
    assert!(!screen.contains("{git"), "the glob stays inside: {screen}");
}

#[test]
fn approval_modal_for_a_diff() {
    let now = Instant::now() + Duration::from_secs(600);
    let mut app = app_waiting(now);
    app.approvals.queue.push_back(diff_request());
    app.approvals.batch_total = 1;
    let screen = draw(&app, 80, 30, now);
    assert_snapshot("approval_diff_80x30", &screen);
    assert!(screen.contains("Allow `write_file`?"));
    assert!(!screen.contains("of 1"));
    // Only bash rules can be saved to the project.
    assert!(!screen.contains("always allow in this project"));
    // The diff is coloured by line kind.
    let mut terminal = Terminal::new(TestBackend::new(80, 30)).unwrap();
    terminal.draw(|f| render(&app, f, now)).unwrap();
    let buf = terminal.backend().buffer();
    let find = |needle: &str| {
        let text = buffer_text(buf);
        let y = text.lines().position(|l| l.contains(needle)).unwrap();
        let x = (0..80)
            .find(|&x| buf[(x, y as u16)].symbol() == &needle[..1])
            .unwrap();
        buf[(x, y as u16)].fg
    };
    use ratatui::style::Color;
    assert_eq!(find("+        .filter"), Color::Green);
    assert_eq!(find("-    s.split_whitespace"), Color::Red);
    assert_eq!(find("@@ -1,3"), Color::Cyan);
}

#[test]
fn approval_modal_scrolls_a_long_diff() {
    let now = Instant::now() + Duration::from_secs(600);
    let mut app = app_waiting(now);
    app.approvals.queue.push_back(diff_request());
    app.approvals.scroll = 4;
    let screen = draw(&app, 70, 20, now);
    assert_snapshot("approval_diff_scrolled_70x20", &screen);
    assert!(screen.contains("PgUp/PgDn · lines 5–"));
    assert!(!screen.contains("+++ b/src/parse.rs"));
}

#[test]
fn approval_modal_with_the_feedback_field() {
    let now = Instant::now() + Duration::from_secs(600);
    let mut app = app_waiting(now);
    app.approvals.queue.push_back(command_request());
    app.approvals.batch_total = 1;
    let mut field = TextArea::default();
    field.insert_str("use cargo nextest, and no tee");
    app.approvals.feedback = Some(field);
    let screen = draw(&app, 80, 30, now);
    assert_snapshot("approval_feedback_80x30", &screen);
    assert!(screen.contains("use cargo nextest, and no tee"));
}

#[test]
fn approval_modal_fits_a_narrow_terminal() {
    let now = Instant::now() + Duration::from_secs(600);
    let mut app = app_waiting(now);
    app.approvals.queue.push_back(command_request());
    app.approvals.batch_total = 3;
    let screen = draw(&app, 60, 20, now);
    assert_snapshot("approval_command_60x20", &screen);
    assert!(screen.contains("y  allow once"));
    assert!(screen.contains("e  deny and tell rein why"));
}

fn stats() -> rein_core::agent::ContextStats {
    rein_core::agent::ContextStats {
        tokens: 50_000,
        window: 128_000,
        compact_at: 0.85,
        estimated: false,
        chars_per_token: 3.6,
        messages: 20,
        breakdown: rein_core::context::budget::Breakdown {
            system: 3_000,
            instructions: 0,
            tools: 4_000,
            user: 1_000,
            assistant: 9_000,
            tool_results: 33_000,
            summary: 0,
            reminder: 100,
            reasoning: 0,
        },
    }
}

#[test]
fn tiny_terminals_do_not_panic() {
    let now = Instant::now() + Duration::from_secs(600);
    let mut app = app_waiting(now);
    app.todos = vec![rein_core::tools::write_todos::Todo {
        content: "a step".into(),
        status: rein_core::tools::write_todos::TodoStatus::InProgress,
        active_form: Some("Stepping".into()),
    }];
    app.hint = Some("a hint".into());
    app.composer.queued = vec!["queued".into()];
    app.context_open = true;
    for with_modal in [false, true] {
        if with_modal {
            app.approvals.queue.push_back(command_request());
            app.approvals.batch_total = 2;
            app.approvals.feedback = Some(TextArea::default());
        }
        for stats in [None, Some(stats())] {
            app.context = stats;
            for width in [0u16, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144] {
                for height in [0u16, 1, 2, 3, 4, 5, 6, 8, 13, 21] {
                    draw(&app, width, height, now);
                }
            }
        }
    }
}

/// A dashboard with one `task` call whose subagent has made two model calls and now runs
/// `rg`, fed through the update step as the agent reports it.
fn app_with_a_running_task(now: Instant) -> App {
    use rein::app::update::update_at;
    use rein::app::AppEvent;
    use rein_core::agent::{AgentEvent, SubagentEvent, Usage};
    let mut app = app_waiting(now);
    app.transcript.cells.truncate(2);
    app.activity = Activity::Idle;
    let sub = |event| {
        AppEvent::Agent(AgentEvent::Subagent {
            task_id: "t1".into(),
            event,
        })
    };
    let events = [
        AppEvent::Agent(AgentEvent::ToolCallStarted {
            id: "t1".into(),
            name: "task".into(),
            args: serde_json::json!({"description": "Where is the tab width decided?"}),
        }),
        sub(SubagentEvent::RequestStarted { step: 1 }),
        sub(SubagentEvent::Usage(Usage {
            prompt_tokens: 900,
            completion_tokens: 100,
            total_tokens: 1000,
            cached_tokens: None,
            cache_write_tokens: None,
            estimated: false,
        })),
        sub(SubagentEvent::ToolCallStarted {
            id: "s1".into(),
            name: "read_file".into(),
            args: serde_json::json!({"path": "src/parse.rs"}),
        }),
        sub(SubagentEvent::ToolFinished {
            id: "s1".into(),
            name: "read_file".into(),
            result: "fn parse_line".into(),
            is_error: false,
            outcome: rein_core::agent::ToolOutcome::Ok,
            duration: Duration::from_millis(3),
        }),
        sub(SubagentEvent::RequestStarted { step: 2 }),
        sub(SubagentEvent::ToolCallStarted {
            id: "s2".into(),
            name: "bash".into(),
            args: serde_json::json!({"command": "rg -n tab_width src"}),
        }),
    ];
    for event in events {
        update_at(&mut app, event, now);
    }
    app
}

#[test]
fn a_running_subagent_is_one_entry_with_its_current_step() {
    let now = Instant::now() + Duration::from_secs(600);
    let mut app = app_with_a_running_task(now);
    assert_eq!(app.transcript.cells.len(), 3, "one cell for the task");
    let screen = draw(&app, 80, 16, now);
    assert_snapshot("subagent_running_80x16", &screen);
    assert!(
        screen.contains("▸ task Where is the tab width decided?"),
        "{screen}"
    );
    assert!(
        screen.contains("↳ ▸ bash rg -n tab_width src · step 2"),
        "{screen}"
    );
    assert!(
        !screen.contains("read_file"),
        "folded: only the current step\n{screen}"
    );
    // Expanded (Ctrl-O), its own calls show.
    rein::app::update::update_at(
        &mut app,
        rein::app::AppEvent::Key(crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Char('o'),
            crossterm::event::KeyModifiers::CONTROL,
        )),
        now,
    );
    let screen = draw(&app, 80, 16, now);
    assert!(screen.contains("↳ ✓ read_file src/parse.rs"), "{screen}");
    assert!(screen.contains("↳ ▸ bash rg -n tab_width src"), "{screen}");
    // The gauge did not count the subagent's tokens.
    assert_eq!(app.gauge.reported, 40_000);
}

#[test]
fn a_finished_subagent_shows_its_answer_and_its_own_usage() {
    use rein::app::update::update_at;
    use rein::app::AppEvent;
    use rein_core::agent::{AgentEvent, SubagentEvent, Usage};
    let now = Instant::now() + Duration::from_secs(600);
    let mut app = app_with_a_running_task(now);
    let usage = Usage {
        prompt_tokens: 2_000,
        completion_tokens: 400,
        total_tokens: 2_400,
        cached_tokens: None,
        cache_write_tokens: None,
        estimated: false,
    };
    for event in [
        AppEvent::Agent(AgentEvent::Subagent {
            task_id: "t1".into(),
            event: SubagentEvent::Finished {
                steps: 3,
                usage,
                stopped_early: false,
            },
        }),
        AppEvent::Agent(AgentEvent::ToolFinished {
            id: "t1".into(),
            name: "task".into(),
            result: "src/parse.rs:12 sets TAB_WIDTH = 4".into(),
            is_error: false,
            outcome: rein_core::agent::ToolOutcome::Ok,
            duration: Duration::from_millis(2500),
            stored: None,
        }),
    ] {
        update_at(&mut app, event, now);
    }
    let screen = draw(&app, 80, 16, now);
    assert!(
        screen.contains(
            "✓ task Where is the tab width decided? · 3 model calls · 2.4k tokens · 2.5s"
        ),
        "{screen}"
    );
    assert!(
        screen.contains("│ src/parse.rs:12 sets TAB_WIDTH = 4"),
        "{screen}"
    );
    assert!(!screen.contains("step 2"), "{screen}");
    assert_eq!(app.gauge.reported, 40_000);
}

#[test]
fn approval_modal_says_when_a_subagent_asks() {
    let now = Instant::now() + Duration::from_secs(600);
    let mut app = app_with_a_running_task(now);
    let mut request = command_request();
    request.subagent = Some("t1".into());
    app.approvals.queue.push_back(request);
    app.approvals.batch_total = 1;
    let screen = draw(&app, 80, 30, now);
    assert!(
        screen.contains("Allow `bash`? (from a subagent)"),
        "{screen}"
    );
}

/// The screen's words in order, the modal's side borders left out: wrapped text reads as
/// one line.
fn flat(screen: &str) -> String {
    screen
        .replace('│', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A call to an MCP tool whose arguments hold a long body, nested objects and an array.
fn mcp_request(project_server: bool) -> PendingApproval {
    let body = "When a line holds a tab, `parse_line` splits inside the word: \"a\\tb c\" \
                becomes three words instead of two. Steps: run the parser on the file in \
                tests/data/tabs.txt and compare with the expected output; the second column \
                is wrong from line 3 on. This started with the change to split on spaces \
                only. Expected: tabs stay inside words, as before. Seen on 0.4.1 and main.";
    let args = serde_json::json!({
        "owner": "rein-dev",
        "repo": "parser",
        "title": "Tabs split words in parse_line",
        "body": body,
        "labels": ["bug", "parser"],
        "milestone": {"number": 3, "due": null},
    });
    let mut r = request(
        "mcp__github__create_issue",
        "mcp__github__create_issue",
        "no [[permissions.tools]] rule matches `mcp__github__create_issue`",
        vec![Grant::Tool("mcp__github__create_issue".into())],
        None,
    );
    r.mcp = Some(rein_core::permissions::tools::McpCall {
        server: "github".into(),
        tool: "create_issue".into(),
        args,
        project_server,
    });
    r
}

#[test]
fn approval_modal_for_an_mcp_call() {
    let now = Instant::now() + Duration::from_secs(600);
    let mut app = app_waiting(now);
    app.approvals.queue.push_back(mcp_request(false));
    app.approvals.batch_total = 1;
    let screen = draw(&app, 100, 30, now);
    assert_snapshot("approval_mcp_100x30", &screen);
    assert!(screen.contains("Allow `mcp__github__create_issue`?"));
    assert!(screen.contains("server github · tool create_issue"));
    assert!(screen.contains("  \"owner\": \"rein-dev\","));
    assert!(screen.contains("more characters]"), "the long body is cut");
    assert!(screen.contains("a  allow `mcp__github__create_issue` for this session"));
    assert!(screen.contains("p  always allow in this project"));
    assert!(
        flat(&screen)
            .contains("why no [[permissions.tools]] rule matches `mcp__github__create_issue`"),
        "{screen}"
    );
    assert!(!screen.contains("outside rein's sandbox"));
}

#[test]
fn approval_modal_for_a_project_server_says_it_runs_outside_the_sandbox() {
    let now = Instant::now() + Duration::from_secs(600);
    let mut app = app_waiting(now);
    app.approvals.queue.push_back(mcp_request(true));
    app.approvals.batch_total = 1;
    let screen = draw(&app, 60, 20, now);
    assert_snapshot("approval_mcp_project_60x20", &screen);
    assert!(screen.contains("PgUp/PgDn · lines 1–"), "the JSON scrolls");
    assert!(
        flat(&screen).contains(
            "declared by the project's .rein/config.toml and runs outside rein's sandbox"
        ),
        "{screen}"
    );
    assert!(screen.contains("y  allow once"));
    assert!(screen.contains("e  deny and tell rein why"));
}

#[test]
fn approval_modal_scrolls_to_the_end_of_long_mcp_arguments() {
    let now = Instant::now() + Duration::from_secs(600);
    let mut app = app_waiting(now);
    app.approvals.queue.push_back(mcp_request(false));
    app.approvals.scroll = u16::MAX;
    let screen = draw(&app, 60, 20, now);
    assert_snapshot("approval_mcp_scrolled_60x20", &screen);
    // The arguments in the model's order: the last key, `milestone`, ends the scroll.
    assert!(screen.contains("\"due\": null"), "{screen}");
    assert!(screen.contains(" of 22 ╯"), "{screen}");
    assert!(!screen.contains("server github"));
}
