//! Keys: interrupting and quitting, scrolling and following, mouse capture, unbound keys
//! that edit the input, the top of a long transcript, and a question layer that takes only
//! its answers.

use crate::support;

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyModifiers, MouseEvent, MouseEventKind};
use rein::app::state::NoticeKind;
use rein::app::update::TOP;
use rein::app::{AppEvent, Effect};
use rein_core::agent::{AgentEvent, TurnOutcome};
use support::app::app;
use support::app::Script;

use super::{is_interrupt, is_quit, Steps};

fn wheel(kind: MouseEventKind) -> AppEvent {
    AppEvent::Mouse(MouseEvent {
        kind,
        column: 10,
        row: 5,
        modifiers: KeyModifiers::NONE,
    })
}

// ---- keys -------------------------------------------------------------------------------

#[test]
fn ctrl_c_and_esc_interrupt_a_running_turn() {
    let mut s = Script::with(app());
    s.turn("long job");
    assert!(is_interrupt(&s.ctrl('c')));
    assert_eq!(s.app.last_ctrl_c, Some(s.now));
    s.advance(Duration::from_secs(3));
    assert!(
        is_interrupt(&s.ctrl('c')),
        "three seconds later it interrupts again"
    );
    s.advance(Duration::from_secs(3));
    assert!(is_interrupt(&s.plain(KeyCode::Esc)));
    assert!(is_interrupt(&s.plain(KeyCode::Esc)), "Esc never quits");
    s.end_turn(TurnOutcome::Interrupted);
    assert!(s.plain(KeyCode::Esc).is_empty(), "idle: Esc does nothing");
}

#[test]
fn a_second_ctrl_c_within_two_seconds_quits() {
    let mut s = Script::with(app());
    s.turn("long job");
    assert!(is_interrupt(&s.ctrl('c')));
    assert_eq!(s.app.hint.as_deref(), Some("press Ctrl-C again to quit"));
    s.advance(Duration::from_millis(1900));
    assert!(is_quit(&s.ctrl('c')));
}

#[test]
fn ctrl_c_when_idle_clears_the_input_then_asks_for_a_second_press() {
    let mut s = Script::with(app());
    assert!(
        s.ctrl('c').is_empty(),
        "empty input: the first press only warns"
    );
    assert_eq!(s.app.hint.as_deref(), Some("press Ctrl-C again to quit"));
    s.advance(Duration::from_millis(1500));
    assert!(is_quit(&s.ctrl('c')), "the second within the window quits");

    let mut s = Script::with(app());
    s.type_text("half a thought");
    assert!(s.ctrl('c').is_empty());
    assert_eq!(s.input_lines(), [""]);
    s.advance(Duration::from_millis(500));
    assert!(is_quit(&s.ctrl('c')));

    // The hint goes when its time is up (a tick), and the next press starts over.
    let mut s = Script::with(app());
    s.ctrl('c');
    s.advance(Duration::from_millis(1500));
    s.at(AppEvent::Tick(s.now));
    assert_eq!(s.app.hint.as_deref(), Some("press Ctrl-C again to quit"));
    s.advance(Duration::from_secs(1));
    s.at(AppEvent::Tick(s.now));
    assert_eq!(s.app.hint, None, "the hint expires");
    assert_eq!(s.app.last_ctrl_c, None, "and no tick is needed any more");
    assert!(s.ctrl('c').is_empty(), "a first press again");
    assert!(is_quit(&s.ctrl('c')));

    // Any other key takes the hint back: the next Ctrl-C is a first press.
    let mut s = Script::with(app());
    s.ctrl('c');
    s.plain(KeyCode::PageUp);
    assert_eq!(s.app.hint, None);
    assert!(s.ctrl('c').is_empty(), "not a quit");
    s.type_text("x");
    assert!(s.ctrl('c').is_empty(), "clears the input, does not quit");
    assert_eq!(s.input(), "");
}

#[test]
fn ctrl_d_quits_on_an_empty_input_and_deletes_forward_otherwise() {
    let mut s = Script::with(app());
    s.type_text("abc");
    s.plain(KeyCode::Home);
    assert!(s.ctrl('d').is_empty());
    assert_eq!(
        s.input(),
        "bc",
        "with text: delete the character under the cursor"
    );
    s.ctrl('d');
    s.ctrl('d');
    assert_eq!(s.input(), "");
    assert!(is_quit(&s.ctrl('d')), "empty: quit at once");
}

#[test]
fn scrolling_up_stops_following_and_the_bottom_follows_again() {
    let mut s = Script::with(app());
    s.at(AppEvent::Resize {
        width: 100,
        height: 30,
    });
    assert_eq!(s.app.size, (100, 30));
    s.turn("x");
    // 300 paragraphs: about 600 lines drawn.
    let long: String = (0..300).map(|i| format!("line {i}\n\n")).collect();
    s.agent(AgentEvent::TextDelta { text: long });
    let scroll = |s: &Script| {
        (
            s.app.transcript.scroll.from_bottom,
            s.app.transcript.scroll.follow,
        )
    };
    assert_eq!(scroll(&s), (0, true));

    s.plain(KeyCode::PageUp);
    assert_eq!(scroll(&s), (22, false), "a page is the height less 8");
    s.at(wheel(MouseEventKind::ScrollUp));
    assert_eq!(scroll(&s), (25, false));
    s.at(wheel(MouseEventKind::ScrollDown));
    s.plain(KeyCode::PageDown);
    assert_eq!(scroll(&s), (0, true));
    s.plain(KeyCode::PageDown);
    assert_eq!(scroll(&s), (0, true));

    // Home and End when the input is empty.
    s.plain(KeyCode::Home);
    assert_eq!(scroll(&s), (TOP, false));
    // The frame shows the top: where it found that is where the next step down starts,
    // so the first page down from the top moves the view by a page.
    support::app::draw(&s.app, 100, 30, Instant::now());
    let top = s.app.transcript.shown_from_bottom.get().unwrap();
    assert!((550..=620).contains(&top), "{top}");
    s.plain(KeyCode::PageDown);
    assert_eq!(scroll(&s), (top - 22, false));
    s.plain(KeyCode::End);
    assert_eq!(scroll(&s), (0, true));

    // With text in the input, Home and End edit it; Ctrl-Home and Ctrl-End still scroll.
    s.type_text("abc");
    s.plain(KeyCode::Home);
    assert_eq!(scroll(&s), (0, true));
    assert_eq!(s.app.composer.textarea.cursor(), (0, 0));
    s.key(KeyCode::Home, KeyModifiers::CONTROL);
    assert_eq!(scroll(&s), (TOP, false));
    s.key(KeyCode::End, KeyModifiers::CONTROL);
    assert_eq!(scroll(&s), (0, true));
    assert_eq!(s.input_lines(), ["abc"]);

    // Sending returns to the bottom.
    s.plain(KeyCode::PageUp);
    s.end_turn(TurnOutcome::Completed);
    s.plain(KeyCode::Enter);
    assert_eq!(scroll(&s), (0, true));
}

#[test]
fn f2_toggles_mouse_capture_and_ctrl_g_no_longer_does() {
    let mut s = Script::with(app());
    assert!(!s.app.mouse_capture);
    assert!(matches!(
        s.plain(KeyCode::F(2)).as_slice(),
        [Effect::MouseCapture(true)]
    ));
    assert!(s.app.mouse_capture);
    assert!(matches!(s.ctrl('g').as_slice(), [Effect::EditInput { .. }]));
    assert!(s.app.mouse_capture);
    assert!(matches!(
        s.plain(KeyCode::F(2)).as_slice(),
        [Effect::MouseCapture(false)]
    ));
    assert!(!s.app.mouse_capture);
}

#[test]
fn unbound_keys_edit_the_input() {
    let mut s = Script::with(app());
    s.type_text("helo");
    s.plain(KeyCode::Left);
    s.type_text("l");
    s.plain(KeyCode::End);
    s.plain(KeyCode::Backspace);
    s.type_text("o!");
    assert_eq!(s.input_lines(), ["hello!"]);
}

/// Ctrl-Home anchors the view at the top: a frame lays out only the cells down to the view
/// (20 000 cells never drawn stay undrawn), PgDn and PgUp move from the top, the label
/// says there is more below without counting it, and reaching the end measures from the
/// bottom again.
#[test]
fn the_top_of_a_long_transcript_is_shown_without_laying_out_the_rest() {
    let mut s = Script::with(app());
    s.at(AppEvent::Resize {
        width: 100,
        height: 30,
    });
    for i in 0..20_000 {
        s.app.transcript.cells.push(rein::app::state::Cell::notice(
            NoticeKind::Info,
            format!("notice {i}"),
        ));
    }
    s.key(KeyCode::Home, KeyModifiers::CONTROL);
    assert_eq!(s.app.transcript.scroll.from_top, Some(0));
    let screen = support::app::draw(&s.app, 100, 30, Instant::now());
    assert!(
        screen.contains("notice 0\n") || screen.contains("notice 0 "),
        "{screen}"
    );
    assert!(screen.contains("↓ more (End)"), "{screen}");
    let drawn = s
        .app
        .transcript
        .cells
        .iter()
        .filter(|c| c.cache().0.borrow().is_some())
        .count();
    assert!(drawn < 100, "{drawn} cells laid out for the top");
    s.plain(KeyCode::PageDown);
    assert_eq!(s.app.transcript.scroll.from_top, Some(22));
    let screen = support::app::draw(&s.app, 100, 30, Instant::now());
    assert!(
        !screen.contains("notice 0 ") && screen.contains("notice 15"),
        "{screen}"
    );
    s.plain(KeyCode::PageUp);
    s.plain(KeyCode::PageUp);
    assert_eq!(s.app.transcript.scroll.from_top, Some(0));
    s.plain(KeyCode::End);
    assert_eq!(s.app.transcript.scroll.from_top, None);
    assert!(s.app.transcript.scroll.follow);
}

// ---- a project's hooks ------------------------------------------------------------------

/// The question about a project's held hooks takes every key but answers only to its own:
/// `a` allows (the held hooks go to the loop), `n` keeps them held and lets a waiting
/// session start, `/hooks allow` asks again; typing, Enter, pastes and key repeats answer
/// nothing.
#[test]
fn the_question_about_a_projects_hooks_takes_only_its_answers() {
    use crossterm::event::{KeyEvent, KeyEventKind};
    use rein::app::hook_trust::HookTrust;
    use rein::app::layer::Layer;

    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".rein")).unwrap();
    std::fs::write(
        project.path().join(".rein/hooks.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch x"}]}]}}"#,
    )
    .unwrap();
    let loaded = rein_core::hooks::load(
        &data.path().join("config.toml"),
        project.path(),
        data.path(),
    );
    let held = loaded.held.expect("the project's hooks are held");
    assert!(!held.changed);
    let mut s = Script::with(app());
    s.app.hook_trust = Some(HookTrust::new(held));
    assert_eq!(Layer::top(&s.app), Layer::Hooks);

    s.type_text("y/hooks");
    assert!(s.plain(KeyCode::Enter).is_empty());
    assert!(s.paste("a").is_empty());
    let mut held_a = KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE);
    held_a.kind = KeyEventKind::Repeat;
    assert!(s.at(AppEvent::Key(held_a)).is_empty());
    assert_eq!(Layer::top(&s.app), Layer::Hooks);
    assert!(
        s.app.composer.textarea.is_empty(),
        "the keys went to the input"
    );

    let effects = s.plain(KeyCode::Char('n'));
    assert!(
        matches!(effects.as_slice(), [Effect::HooksAnswered]),
        "{effects:?}"
    );
    assert_eq!(Layer::top(&s.app), Layer::Main);
    assert!(s
        .notices()
        .pop()
        .unwrap()
        .1
        .starts_with("the project's 1 hook stays held"));
    s.send("/hooks");
    assert!(s.notices().pop().unwrap().1.contains("/hooks allow shows"));

    s.send("/hooks allow");
    assert_eq!(Layer::top(&s.app), Layer::Hooks);
    let effects = s.plain(KeyCode::Char('a'));
    assert!(
        matches!(effects.as_slice(), [Effect::AllowHooks(h)] if h.hooks.len() == 1),
        "{effects:?}"
    );
    assert!(s.app.hook_trust.is_none());
    // Nothing held now: /hooks allow approves them as they are now (a script of theirs
    // that changed during the session holds them until then), and says what it pinned.
    let effects = s.send("/hooks allow");
    assert!(
        matches!(effects.as_slice(), [.., Effect::ReapproveHooks]),
        "{effects:?}"
    );
    rein::app::update::hooks::reapproved(
        &mut s.app,
        Ok(vec![".claude/hooks/check.sh (sha256 0123abcd…)".into()]),
    );
    let said = s.notices().pop().unwrap().1;
    assert!(
        said.starts_with("allowed the project's hooks as they are now")
            && said.contains("\n  .claude/hooks/check.sh (sha256 0123abcd…)"),
        "{said}"
    );
    rein::app::update::hooks::reapproved(
        &mut s.app,
        Err(".rein/hooks.json does not exist or is not JSON".into()),
    );
    assert_eq!(
        s.notices().pop().unwrap().1,
        "no project hooks allowed: .rein/hooks.json does not exist or is not JSON"
    );

    // The loop allowed them: the transcript names them, /hooks lists them.
    rein::app::update::hooks::allowed(&mut s.app, Ok(vec!["Stop: touch x (project)".into()]));
    assert_eq!(
        s.notices().pop().unwrap().1,
        "allowed the project's hooks: 1 runs as you, outside rein's sandbox, until the file \
         changes:\n  Stop: touch x (project)"
    );
    assert_eq!(s.app.hooks, ["Stop: touch x (project)"]);
    rein::app::update::hooks::allowed(&mut s.app, Err("the disk is full".into()));
    assert_eq!(
        s.notices().pop(),
        Some((
            NoticeKind::Error,
            "the project's hooks stay held: the disk is full".into()
        ))
    );
}
