//! The input box: sending and queueing, new lines, pastes, recalling earlier inputs (this
//! session's and earlier sessions'), and sending without a model.

use crate::support;

use crossterm::event::{KeyCode, KeyModifiers};
use rein::app::state::Cell;
use rein::app::{AppEvent, Effect};
use rein_core::agent::{AgentEvent, TurnOutcome};
use support::app::Script;
use support::app::{app, sent};

use super::{is_quit, Steps};

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
