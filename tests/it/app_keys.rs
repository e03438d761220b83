//! The keys of issue 14 through the real update step: the Ctrl-R history search, Ctrl-G's
//! request for the external editor and what comes back, the reasoning toggle's new key,
//! and when a waiting approval or a long turn notifies, by focus and setting; plus the
//! footer while the search is open and a snapshot of the search line.

use crate::support;

use std::time::Duration;

use crossterm::event::{KeyCode, KeyModifiers};
use rein::app::attention::{Notifications, NotifyWhen};
use rein::app::{AppEvent, Effect, Layer};
use rein_core::agent::{AgentEvent, TurnOutcome};
use support::app::app;
use support::app::{snapshot, Script};

/// An idle app whose history holds these inputs, oldest first (sent through the input
/// box, as a user would).
fn with_history(entries: &[&str]) -> Script {
    let mut s = Script::with(app());
    for entry in entries {
        s.send(entry);
        s.agent(AgentEvent::TurnStarted {
            text: entry.to_string(),
        });
        s.agent(AgentEvent::TurnFinished {
            outcome: TurnOutcome::Completed,
        });
    }
    assert_eq!(s.app.composer.history.len(), entries.len());
    s
}

fn shown(s: &Script) -> Option<&str> {
    let search = s.app.search.as_ref()?;
    search.found.map(|i| s.app.composer.history[i].as_str())
}

#[test]
fn ctrl_r_finds_the_newest_match_and_again_the_older_ones() {
    let mut s = with_history(&["cargo test", "git status", "cargo build --release", "ls"]);
    s.type_text("draft");
    assert!(s.ctrl('r').is_empty());
    assert_eq!(Layer::top(&s.app), Layer::Search);
    assert_eq!(shown(&s), None, "nothing before a query");
    s.type_text("carg");
    assert_eq!(shown(&s), Some("cargo build --release"));
    assert_eq!(
        s.input(),
        "draft",
        "the input keeps its text while searching"
    );
    s.ctrl('r');
    assert_eq!(shown(&s), Some("cargo test"));
    // No older one: the search fails and keeps the last match.
    s.ctrl('r');
    assert_eq!(shown(&s), Some("cargo test"));
    assert!(s.app.search.as_ref().unwrap().failed);
    // Ctrl-S (and Down) go back to newer ones.
    s.ctrl('s');
    assert_eq!(shown(&s), Some("cargo build --release"));
    assert!(!s.app.search.as_ref().unwrap().failed);
    s.plain(KeyCode::Up);
    assert_eq!(shown(&s), Some("cargo test"));
    s.plain(KeyCode::Down);
    assert_eq!(shown(&s), Some("cargo build --release"));
}

#[test]
fn typing_refines_and_backspace_widens_the_search_ignoring_case() {
    let mut s = with_history(&["Git status", "git stash pop", "ls"]);
    s.ctrl('r');
    s.type_text("GIT ST");
    assert_eq!(shown(&s), Some("git stash pop"));
    s.type_text("at");
    assert_eq!(shown(&s), Some("Git status"));
    s.type_text("z");
    assert!(s.app.search.as_ref().unwrap().failed);
    assert_eq!(shown(&s), Some("Git status"), "the last match stays");
    s.plain(KeyCode::Backspace);
    assert!(!s.app.search.as_ref().unwrap().failed);
    for _ in 0.."stat".len() {
        s.plain(KeyCode::Backspace);
    }
    assert_eq!(s.app.search.as_ref().unwrap().query, "GIT ");
    assert_eq!(
        shown(&s),
        Some("git stash pop"),
        "searched again from the newest"
    );
}

#[test]
fn enter_puts_the_match_in_the_input_without_sending_and_tab_too() {
    let mut s = with_history(&["first thing", "second thing", "third"]);
    s.type_text("my draft");
    s.ctrl('r');
    s.type_text("thing");
    let effects = s.plain(KeyCode::Enter);
    assert!(effects.is_empty(), "accepting sends nothing: {effects:?}");
    assert!(s.app.search.is_none());
    assert_eq!(s.input(), "second thing");
    // Up and Down go on from the accepted entry; past the newest comes the draft back.
    s.plain(KeyCode::Up);
    assert_eq!(s.input(), "first thing");
    s.plain(KeyCode::Down);
    s.plain(KeyCode::Down);
    assert_eq!(s.input(), "third");
    s.plain(KeyCode::Down);
    assert_eq!(s.input(), "my draft");

    s.ctrl('r');
    s.type_text("fir");
    s.plain(KeyCode::Tab);
    assert_eq!(s.input(), "first thing");
    assert!(s.app.search.is_none());
}

#[test]
fn esc_ctrl_g_and_ctrl_c_cancel_and_the_input_is_as_it_was() {
    for cancel in [
        (KeyCode::Esc, KeyModifiers::NONE),
        (KeyCode::Char('g'), KeyModifiers::CONTROL),
        (KeyCode::Char('c'), KeyModifiers::CONTROL),
    ] {
        let mut s = with_history(&["cargo test"]);
        s.type_text("half typed");
        s.ctrl('r');
        s.type_text("cargo");
        assert_eq!(shown(&s), Some("cargo test"));
        let effects = s.key(cancel.0, cancel.1);
        assert!(effects.is_empty(), "{cancel:?} did {effects:?}");
        assert!(s.app.search.is_none(), "{cancel:?}");
        assert_eq!(s.input(), "half typed", "{cancel:?}");
    }
}

#[test]
fn a_paste_goes_into_the_query_and_enter_with_nothing_found_changes_nothing() {
    let mut s = with_history(&["echo one\necho two"]);
    s.ctrl('r');
    s.at(AppEvent::Paste("two".into()));
    assert_eq!(shown(&s), Some("echo one\necho two"));
    let mut s = with_history(&[]);
    s.type_text("x");
    s.ctrl('r');
    s.type_text("nothing");
    assert!(s.plain(KeyCode::Enter).is_empty());
    assert_eq!(s.input(), "x");
}

#[test]
fn the_footer_names_the_search_keys_while_it_is_open() {
    let mut s = with_history(&["cargo test"]);
    s.ctrl('r');
    let hints = rein::ui::status::hints(&s.app);
    assert_eq!(
        hints,
        [
            ("Enter".to_string(), "put it in the input".to_string()),
            ("Ctrl-R".to_string(), "older match".to_string()),
            ("Esc".to_string(), "cancel".to_string()),
        ]
    );
}

#[test]
fn the_search_line_is_drawn_over_the_input_box() {
    let mut s = with_history(&["cargo test --all", "ls -la", "git status"]);
    s.type_text("draft");
    s.ctrl('r');
    s.type_text("test");
    let screen = snapshot("history_search_80x12", &s.app, 80, 12, s.now);
    assert!(screen.contains("reverse-i-search: test"), "{screen}");
    assert!(screen.contains("cargo test --all"), "{screen}");
    assert!(!screen.contains("draft"), "{screen}");
    s.type_text("zzz");
    let screen = snapshot("history_search_failing_80x12", &s.app, 80, 12, s.now);
    assert!(
        screen.contains("failing reverse-i-search: testzzz"),
        "{screen}"
    );
}

#[test]
fn ctrl_g_asks_for_the_editor_with_the_input_and_takes_its_text_back() {
    let mut s = Script::with(app());
    s.type_text("first line");
    s.ctrl('j');
    s.type_text("second");
    match s.ctrl('g').as_slice() {
        [Effect::EditInput { text }] => assert_eq!(text, "first line\nsecond"),
        other => panic!("{other:?}"),
    }
    assert!(s
        .at(AppEvent::Edited(Ok("rewritten\nby the editor".into())))
        .is_empty());
    assert_eq!(s.input(), "rewritten\nby the editor");
    assert_eq!(
        s.app.composer.textarea.cursor(),
        (1, 13),
        "cursor at the end"
    );
    // Nothing is sent until Enter.
    match s.plain(KeyCode::Enter).as_slice() {
        [Effect::Agent(rein_core::agent::AgentCommand::UserMessage(text))] => {
            assert_eq!(text, "rewritten\nby the editor")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_editor_that_fails_leaves_the_input_and_says_why() {
    let mut s = Script::with(app());
    s.type_text("keep me");
    s.ctrl('g');
    s.at(AppEvent::Edited(Err(
        "the editor `vim` failed (exit status: 1); the input is unchanged".into(),
    )));
    assert_eq!(s.input(), "keep me");
    assert!(s.app.hint.as_deref().unwrap().contains("`vim` failed"));
}

#[test]
fn ctrl_g_works_while_the_agent_runs() {
    let mut s = Script::with(app());
    s.send("go");
    s.agent(AgentEvent::TurnStarted { text: "go".into() });
    assert!(s.app.busy());
    s.type_text("next");
    assert!(matches!(s.ctrl('g').as_slice(), [Effect::EditInput { text }] if text == "next"));
    // Agent events that arrived while the editor was open are applied after it.
    s.agent(AgentEvent::TextDelta { text: "hi".into() });
    s.at(AppEvent::Edited(Ok("next, edited".into())));
    assert_eq!(s.input(), "next, edited");
}

// ---- notifications ----------------------------------------------------------------------

fn approval(s: &mut Script) -> Vec<Effect> {
    s.agent(AgentEvent::ApprovalNeeded {
        id: "c1".into(),
        name: "bash".into(),
        summary: "rm -rf build".into(),
        reason: "asks".into(),
        grants: Vec::new(),
        preview: None,
        subagent: None,
        repeated: 0,
        period: 0,
        mcp: None,
    })
}

fn notifies(effects: &[Effect]) -> Option<&str> {
    effects.iter().find_map(|e| match e {
        Effect::Notify { message } => Some(message.as_str()),
        _ => None,
    })
}

fn with_setting(when: NotifyWhen, focus: Option<bool>) -> Script {
    let mut s = Script::with(app());
    s.app.notifications = Notifications {
        when,
        after: Duration::from_secs(5),
    };
    if let Some(focused) = focus {
        s.at(AppEvent::Focus(focused));
    }
    s
}

/// A turn of `secs` seconds that replies "All done.", and the effects of its end.
fn turn_of(s: &mut Script, secs: u64) -> Vec<Effect> {
    s.send("do it");
    s.agent(AgentEvent::TurnStarted {
        text: "do it".into(),
    });
    s.agent(AgentEvent::TextDelta {
        text: "All done.".into(),
    });
    s.advance(Duration::from_secs(secs));
    s.agent(AgentEvent::TurnFinished {
        outcome: TurnOutcome::Completed,
    })
}

#[test]
fn focus_events_are_kept_in_the_state() {
    let mut s = Script::with(app());
    assert_eq!(s.app.focused, None);
    assert!(s.at(AppEvent::Focus(false)).is_empty());
    assert_eq!(s.app.focused, Some(false));
    s.at(AppEvent::Focus(true));
    assert_eq!(s.app.focused, Some(true));
}

#[test]
fn an_approval_notifies_unless_the_terminal_has_the_focus() {
    // (setting, focus, notifies)
    let cases = [
        (NotifyWhen::Unfocused, None, true),
        (NotifyWhen::Unfocused, Some(false), true),
        (NotifyWhen::Unfocused, Some(true), false),
        (NotifyWhen::Always, Some(true), true),
        (NotifyWhen::Always, None, true),
        // `never` still asks for the bell (the loop posts no OSC 9 with it).
        (NotifyWhen::Never, Some(false), true),
    ];
    for (when, focus, expected) in cases {
        let mut s = with_setting(when, focus);
        s.send("go");
        s.agent(AgentEvent::TurnStarted { text: "go".into() });
        let effects = approval(&mut s);
        assert_eq!(
            notifies(&effects).is_some(),
            expected,
            "{when:?} focus {focus:?}: {effects:?}"
        );
        if expected {
            assert_eq!(
                notifies(&effects),
                Some("rein asks for approval: rm -rf build")
            );
        }
    }
}

#[test]
fn a_long_turn_notifies_when_it_ends_unfocused() {
    // (setting, focus, turn length, notifies)
    let cases = [
        (NotifyWhen::Unfocused, Some(false), 6, true),
        (NotifyWhen::Unfocused, Some(false), 4, false),
        (NotifyWhen::Unfocused, Some(true), 60, false),
        // A terminal that never reported the focus: only `always` notifies.
        (NotifyWhen::Unfocused, None, 60, false),
        (NotifyWhen::Always, None, 60, true),
        (NotifyWhen::Always, Some(true), 6, true),
        (NotifyWhen::Always, Some(true), 2, false),
        (NotifyWhen::Never, Some(false), 60, false),
    ];
    for (when, focus, secs, expected) in cases {
        let mut s = with_setting(when, focus);
        let effects = turn_of(&mut s, secs);
        assert_eq!(
            notifies(&effects).is_some(),
            expected,
            "{when:?} focus {focus:?} {secs}s: {effects:?}"
        );
        if expected {
            let took = if secs < 60 {
                format!("{secs}s")
            } else {
                "1m 00s".to_string()
            };
            assert_eq!(
                notifies(&effects),
                Some(format!("rein is done ({took}): All done.").as_str())
            );
        }
    }
}

#[test]
fn focus_lost_during_the_turn_counts_and_a_queued_message_holds_the_call() {
    let mut s = with_setting(NotifyWhen::Unfocused, Some(true));
    s.send("do it");
    s.agent(AgentEvent::TurnStarted {
        text: "do it".into(),
    });
    s.at(AppEvent::Focus(false));
    s.advance(Duration::from_secs(30));
    // A message queued behind the turn starts the next one at once: no call yet.
    s.send("and then this");
    let effects = s.agent(AgentEvent::TurnFinished {
        outcome: TurnOutcome::Completed,
    });
    assert!(notifies(&effects).is_none(), "{effects:?}");
    s.agent(AgentEvent::TurnStarted {
        text: "and then this".into(),
    });
    s.advance(Duration::from_secs(10));
    let effects = s.agent(AgentEvent::TurnFinished {
        outcome: TurnOutcome::Interrupted,
    });
    assert_eq!(notifies(&effects), Some("rein is done (10s)"));
}

/// Each key of the search looks through the whole history: with 10,000 inputs of 200
/// characters (far more than a session sends) a key still takes a few milliseconds.
/// `cargo test --test it app_keys::search_keys_stay_quick -- --nocapture` prints the figure;
/// no test asserts it (a loaded machine would fail it for nothing).
#[test]
fn search_keys_stay_quick_over_a_long_history() {
    let mut s = Script::with(app());
    s.app.composer.history = (0..10_000)
        .map(|i| format!("entry {i}: {}", "lorem ipsum dolor sit amet ".repeat(7)))
        .collect();
    s.ctrl('r');
    let started = std::time::Instant::now();
    // A query nothing holds: every key scans every entry.
    let query = "no such text here";
    s.type_text(query);
    let per_key = started.elapsed() / query.len() as u32;
    println!("search: {per_key:?} per key over 10,000 entries of ~200 characters");
    assert!(s.app.search.as_ref().unwrap().failed);
}
