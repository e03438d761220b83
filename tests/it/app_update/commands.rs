//! Slash commands that act: the built-in ones and an unknown one, /clear, /rename, /memory,
//! and background commands in the status line and /bashes.

use crate::support;

use std::time::Instant;

use crossterm::event::KeyCode;
use rein::app::Effect;
use rein_core::agent::{AgentCommand, AgentEvent, TurnOutcome};
use rein_core::tools::write_todos::{Todo, TodoStatus};
use support::app::Script;
use support::app::{app, sent};

use super::{is_quit, Steps};

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
