//! The keys a Claude Code or Codex user already knows (issue 28), through the real update
//! step: `\` then Enter, Ctrl-U and undo, big pastes folded into placeholders, the queue
//! of messages sent while the agent works (Alt-Up, Esc), and the help layer (`/help`, F1).
//! Ctrl-C and Ctrl-D are in `app_update.rs` beside the other Ctrl-C tests; the screens are
//! in `ui_render.rs`.

use crate::support;

use crossterm::event::{KeyCode, KeyModifiers};
use rein::app::state::Cell;
use rein::app::{AppEvent, Effect, Layer};
use rein_core::agent::{AgentCommand, AgentEvent, TurnOutcome};
use support::app::Script;
use support::app::{app, sent};

fn lines(n: usize) -> String {
    (1..=n)
        .map(|i| format!("row {i} of the log"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text of each user cell of the transcript.
fn user_cells(s: &Script) -> Vec<String> {
    s.app
        .transcript
        .cells
        .iter()
        .filter_map(|c| match c {
            Cell::User(u) => Some(u.text.clone()),
            _ => None,
        })
        .collect()
}

/// A running turn (the agent is working).
fn busy() -> Script {
    let mut s = Script::with(app());
    s.send("first task");
    s.agent(AgentEvent::TurnStarted {
        text: "first task".into(),
    });
    s.agent(AgentEvent::RequestStarted { step: 1 });
    assert!(s.app.busy());
    s
}

// ---- typing ------------------------------------------------------------------------------

#[test]
fn a_backslash_before_enter_starts_a_new_line_instead_of_sending() {
    let mut s = Script::with(app());
    s.type_text("first line \\");
    assert!(s.plain(KeyCode::Enter).is_empty(), "not sent");
    assert_eq!(s.input_lines(), ["first line ", ""]);
    s.type_text("second");
    let effects = s.plain(KeyCode::Enter);
    assert_eq!(sent(&effects), ["first line \nsecond"]);

    // A backslash elsewhere in the line is text: Enter sends it.
    let mut s = Script::with(app());
    s.type_text("C:\\dir x");
    assert_eq!(sent(&s.plain(KeyCode::Enter)), ["C:\\dir x"]);
}

#[test]
fn ctrl_u_deletes_to_the_start_of_the_line_and_undo_brings_it_back() {
    let mut s = Script::with(app());
    s.type_text("keep this");
    s.key(KeyCode::Enter, KeyModifiers::SHIFT);
    s.type_text("drop this part");
    for _ in 0.." part".len() {
        s.plain(KeyCode::Left);
    }
    assert!(s.ctrl('u').is_empty());
    assert_eq!(s.input_lines(), ["keep this", " part"]);
    assert_eq!(s.app.composer.textarea.cursor(), (1, 0));
    s.ctrl('z');
    assert_eq!(s.input_lines(), ["keep this", "drop this part"]);
    // Ctrl-_ arrives as Ctrl-7 from most terminals; both undo.
    s.ctrl('u');
    s.ctrl('7');
    assert_eq!(s.input_lines(), ["keep this", "drop this part"]);
    s.ctrl('u');
    s.ctrl('_');
    assert_eq!(s.input_lines(), ["keep this", "drop this part"]);
}

// ---- pastes ------------------------------------------------------------------------------

#[test]
fn a_big_paste_is_one_placeholder_sent_whole_and_shown_folded() {
    let log = lines(400);
    let mut s = Script::with(app());
    s.type_text("why does this fail? ");
    s.paste(&log);
    assert_eq!(
        s.input(),
        "why does this fail? [Pasted text #1 +400 lines]",
        "one line in the input"
    );
    s.type_text(" thanks");
    let effects = s.plain(KeyCode::Enter);
    let whole = format!("why does this fail? {log} thanks");
    assert_eq!(
        sent(&effects),
        vec![whole.clone()],
        "the model gets it whole"
    );
    assert_eq!(
        s.app.composer.history,
        vec![whole.clone()],
        "Up recalls it whole"
    );
    s.agent(AgentEvent::TurnStarted {
        text: whole.clone(),
    });
    assert_eq!(
        user_cells(&s),
        ["why does this fail? [Pasted text #1 +400 lines] thanks"],
        "the transcript folds it the same way"
    );
    s.agent(AgentEvent::TurnFinished {
        outcome: TurnOutcome::Completed,
    });

    // The next message counts from 1 again; a small paste goes in as it is.
    s.paste("two\nlines");
    s.paste(&lines(6));
    assert_eq!(s.input(), "two\nlines[Pasted text #1 +6 lines]");
    s.plain(KeyCode::Up);
    s.plain(KeyCode::Up);
    assert_eq!(s.input(), whole, "history recall gives the whole text");
    // Down on its last line walks on, to the draft.
    for _ in 0..400 {
        s.plain(KeyCode::Down);
    }
    assert_eq!(
        s.input(),
        "two\nlines[Pasted text #1 +6 lines]",
        "and the draft comes back with its placeholder"
    );
    let effects = s.plain(KeyCode::Enter);
    assert_eq!(sent(&effects), [format!("two\nlines{}", lines(6))]);
}

#[test]
fn backspace_and_delete_take_a_placeholder_whole_and_the_cursor_never_rests_inside() {
    let mut s = Script::with(app());
    s.type_text("a ");
    s.paste(&lines(10));
    s.type_text(" b");
    let token = "[Pasted text #1 +10 lines]";
    assert_eq!(s.input(), format!("a {token} b"));
    // Left from the end: over " b", then into the placeholder, which the cursor skips.
    s.plain(KeyCode::Left);
    s.plain(KeyCode::Left);
    assert_eq!(s.app.composer.textarea.cursor(), (0, 2 + token.len()));
    s.plain(KeyCode::Left);
    assert_eq!(
        s.app.composer.textarea.cursor(),
        (0, 2),
        "skipped to its start"
    );
    s.plain(KeyCode::Right);
    assert_eq!(
        s.app.composer.textarea.cursor(),
        (0, 2 + token.len()),
        "and to its end"
    );
    // Typing never lands inside it.
    s.type_text("!");
    assert_eq!(s.input(), format!("a {token}! b"));
    s.plain(KeyCode::Backspace);
    assert_eq!(s.input(), format!("a {token} b"));
    s.plain(KeyCode::Backspace);
    assert_eq!(s.input(), "a  b", "Backspace at its end takes it whole");
    s.ctrl('z');
    assert_eq!(s.input(), format!("a {token} b"), "one undo brings it back");
    s.plain(KeyCode::Home);
    s.plain(KeyCode::Right);
    s.plain(KeyCode::Right);
    s.plain(KeyCode::Delete);
    assert_eq!(s.input(), "a  b", "Delete at its start takes it whole");
    // Gone from the input, it is not sent.
    assert_eq!(sent(&s.plain(KeyCode::Enter)), ["a  b"]);
}

#[test]
fn the_editor_gets_the_paste_whole_and_ctrl_c_forgets_it() {
    let mut s = Script::with(app());
    s.paste(&lines(8));
    let effects = s.ctrl('g');
    match effects.as_slice() {
        [Effect::EditInput { text }] => assert_eq!(*text, lines(8)),
        other => panic!("{other:?}"),
    }
    s.at(AppEvent::Edited(Ok(format!("{}\nmore", lines(8)))));
    assert_eq!(s.input(), format!("{}\nmore", lines(8)));
    assert!(s.app.composer.pastes.is_empty());

    let mut s = Script::with(app());
    s.paste(&lines(8));
    s.ctrl('c');
    assert_eq!(s.input(), "");
    assert!(s.app.composer.pastes.is_empty());
    // The same words typed by hand are plain text now.
    s.type_text("[Pasted text #1 +8 lines]");
    assert_eq!(
        sent(&s.plain(KeyCode::Enter)),
        ["[Pasted text #1 +8 lines]"]
    );
}

// ---- the queue ---------------------------------------------------------------------------

#[test]
fn messages_sent_while_the_agent_works_are_queued_and_listed() {
    let mut s = busy();
    let effects = s.send("also update the docs");
    assert_eq!(
        sent(&effects),
        ["also update the docs"],
        "the agent gets it at once and queues it"
    );
    s.paste(&lines(20));
    s.plain(KeyCode::Enter);
    assert_eq!(
        s.app.composer.queued,
        ["also update the docs".to_string(), lines(20)]
    );
    assert_eq!(
        s.app.composer.shown(&lines(20)),
        "[Pasted text #1 +20 lines]",
        "listed as typed"
    );
    // The next step takes the first: it leaves the queue and shows where the model got it.
    s.agent(AgentEvent::MessageDelivered {
        text: "also update the docs".into(),
    });
    assert_eq!(s.app.composer.queued, [lines(20)]);
    assert_eq!(
        user_cells(&s),
        ["first task", "also update the docs"],
        "in the transcript where the model got it"
    );
    s.agent(AgentEvent::MessageDelivered { text: lines(20) });
    assert!(s.app.composer.queued.is_empty());
    assert_eq!(
        user_cells(&s).last().map(String::as_str),
        Some("[Pasted text #1 +20 lines]")
    );
    s.agent(AgentEvent::TurnFinished {
        outcome: TurnOutcome::Completed,
    });
    assert!(!s.app.busy(), "nothing left to start a turn");
}

#[test]
fn alt_up_takes_the_last_queued_message_back_for_editing() {
    let mut s = busy();
    s.send("run the tests");
    s.send("!git status");
    s.send("and lint");
    s.type_text("draft");
    let effects = s.key(KeyCode::Up, KeyModifiers::ALT);
    assert!(
        matches!(effects.as_slice(), [Effect::Agent(AgentCommand::Withdraw { text, command: false })] if text == "and lint"),
        "{effects:?}"
    );
    assert_eq!(s.input(), "and lint\ndraft");
    assert_eq!(s.app.composer.queued, ["run the tests", "!git status"]);
    // A queued `!COMMAND` is withdrawn as a command (the input emptied first: Ctrl-U
    // three times; Ctrl-C would interrupt the turn).
    for _ in 0..3 {
        s.ctrl('u');
    }
    assert_eq!(s.input(), "");
    let effects = s.key(KeyCode::Up, KeyModifiers::ALT);
    assert!(
        matches!(effects.as_slice(), [Effect::Agent(AgentCommand::Withdraw { text, command: true })] if text == "git status"),
        "{effects:?}"
    );
    assert_eq!(s.input(), "!git status");
    // Edited and sent again, it queues again.
    s.type_text(" --short");
    assert_eq!(
        s.plain(KeyCode::Enter).len(),
        1,
        "sent as a command once more"
    );
    assert_eq!(
        s.app.composer.queued,
        ["run the tests", "!git status --short"]
    );
}

#[test]
fn esc_interrupts_without_firing_the_queue_which_goes_back_into_the_input() {
    let mut s = busy();
    s.send("then refactor");
    s.send("and add a test");
    s.type_text("half typed");
    let effects = s.plain(KeyCode::Esc);
    assert!(
        matches!(effects.as_slice(), [Effect::Agent(AgentCommand::Interrupt)]),
        "only the interrupt: {effects:?}"
    );
    assert!(s.app.composer.queued.is_empty());
    assert_eq!(s.input(), "then refactor\nand add a test\nhalf typed");
    let effects = s.agent(AgentEvent::TurnFinished {
        outcome: TurnOutcome::Interrupted,
    });
    assert!(sent(&effects).is_empty());
    assert!(!s.app.busy(), "no new turn starts by itself");
    assert_eq!(user_cells(&s), ["first task"]);
}

#[test]
fn ctrl_c_while_busy_also_keeps_the_queue_from_firing() {
    let mut s = busy();
    s.send("one more thing");
    let effects = s.ctrl('c');
    assert!(matches!(
        effects.as_slice(),
        [Effect::Agent(AgentCommand::Interrupt)]
    ));
    assert_eq!(s.input(), "one more thing");
    assert_eq!(s.app.hint.as_deref(), Some("press Ctrl-C again to quit"));
}

// ---- help --------------------------------------------------------------------------------

#[test]
fn f1_and_slash_help_open_a_layer_and_nothing_goes_into_the_transcript() {
    let mut s = Script::with(app());
    s.at(AppEvent::Resize {
        width: 80,
        height: 20,
    });
    assert!(s.plain(KeyCode::F(1)).is_empty());
    assert_eq!(Layer::top(&s.app), Layer::Help);
    let help = s.app.help.as_ref().unwrap();
    assert!(help.lines.iter().any(|l| l.contains("Ctrl-U")), "{help:?}");
    assert!(help.lines.iter().any(|l| l.contains("Alt-Up")));
    assert!(help.lines.iter().any(|l| l.contains("Pasted text")));
    // It scrolls, takes every key, and closes on its own.
    s.plain(KeyCode::PageDown);
    assert_eq!(s.app.help.as_ref().unwrap().scroll, 10);
    s.type_text("typed");
    assert_eq!(s.input(), "", "keys do not reach the input");
    s.plain(KeyCode::F(1));
    assert!(s.app.help.is_none());
    assert!(s.app.transcript.cells.is_empty());

    s.send("/help");
    assert!(s.app.help.is_some());
    s.plain(KeyCode::Char('q'));
    assert!(s.app.help.is_none());
    assert!(s.app.transcript.cells.is_empty());
    assert_eq!(s.input(), "");
}
