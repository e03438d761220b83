//! The session picker (`/resume`): the update step with listed sessions and keys in,
//! state and effects out; the resumed session replacing the shown one; and the picker's
//! snapshot (`tests/snapshots/picker_*.txt`, `UPDATE_SNAPSHOTS=1` rewrites them).

use crate::support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rein::app::picker::{SessionList, NOTHING_TO_RESUME};
use rein::app::state::{Activity, App, Cell, NoticeKind, SessionInfo};
use rein::app::{AppEvent, Effect};
use rein_core::agent::{AgentCommand, AgentEvent, Message};
use rein_core::session::{Entry, MessageCount, SessionMeta, SessionSummary, SessionWriter};
use support::app::{assert_snapshot, Script};

// ---- helpers ----------------------------------------------------------------------------

const PROJECT: &str = "/home/ann/src/parser";

fn info() -> SessionInfo {
    SessionInfo {
        model: "qwen3-coder".into(),
        project: PathBuf::from(PROJECT),
        branch: Some("main".into()),
        sandbox: "on (bubblewrap)".into(),
        sandbox_ok: true,
        ..SessionInfo::default()
    }
}

/// A fixed wall clock for ages.
fn wall() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_750_000_000)
}

fn summary(
    id: &str,
    title: Option<&str>,
    project: &str,
    ago: Duration,
    messages: MessageCount,
) -> SessionSummary {
    SessionSummary {
        id: id.into(),
        path: PathBuf::from(format!("/data/sessions/{id}.jsonl")),
        title: title.map(str::to_string),
        project: project.into(),
        model: "m".into(),
        started: "2025-06-15T10:00:00Z".into(),
        updated: wall() - ago,
        messages,
        open: None,
    }
}

/// Newest first, as `rein_core::session::list` returns them.
fn sessions() -> Vec<SessionSummary> {
    vec![
        summary(
            "20250615-a1",
            Some("fix the flaky tab test"),
            PROJECT,
            Duration::from_secs(3 * 60),
            MessageCount::Exact(12),
        ),
        summary(
            "20250614-b2",
            Some("Add a --json flag to the CLI"),
            "/home/ann/src/cli",
            Duration::from_secs(5 * 3600),
            MessageCount::Approx(40),
        ),
        summary(
            "20250613-c3",
            None,
            "/srv/work/api",
            Duration::from_secs(2 * 86_400),
            MessageCount::Unknown,
        ),
        summary(
            "20250601-d4",
            Some("parser: handle \x1b[31mCRLF\x1b[0m input"),
            PROJECT,
            Duration::from_secs(40 * 86_400),
            MessageCount::Exact(7),
        ),
    ]
}

fn list(sessions: Vec<SessionSummary>) -> SessionList {
    SessionList {
        sessions,
        now: wall(),
        home: Some(PathBuf::from("/home/ann")),
        current: None,
    }
}

fn script() -> Script {
    Script::with(App::new(info(), 128_000))
}

/// The `/resume` picker's steps on the shared script.
trait SessionPicker {
    /// `/resume` + Enter, then the loop's answer: the listed sessions.
    fn open(&mut self);
    fn ids(&self) -> Vec<String>;
    fn selected(&self) -> String;
}

impl SessionPicker for Script {
    fn open(&mut self) {
        self.type_text("/resume");
        let effects = self.plain(KeyCode::Enter);
        assert!(
            matches!(effects.as_slice(), [Effect::OpenPicker]),
            "{effects:?}"
        );
        assert!(self.at(AppEvent::Sessions(list(sessions()))).is_empty());
        assert!(self.app.picker.is_some(), "the picker opens");
    }

    fn ids(&self) -> Vec<String> {
        self.app
            .picker
            .as_ref()
            .expect("the picker is open")
            .matches()
            .iter()
            .map(|s| s.id.clone())
            .collect()
    }

    fn selected(&self) -> String {
        let picker = self.app.picker.as_ref().expect("the picker is open");
        picker.selected_session().expect("a selection").id.clone()
    }
}

fn resumed_path(effects: &[Effect]) -> PathBuf {
    match effects {
        [Effect::ResumeSession(path)] => path.clone(),
        other => panic!("expected one ResumeSession, got {other:?}"),
    }
}

// ---- update step ------------------------------------------------------------------------

#[test]
fn resume_asks_the_loop_for_the_sessions_and_opens_on_the_newest() {
    let mut s = script();
    s.open();
    assert_eq!(s.input(), "", "the command left the input");
    assert_eq!(
        s.ids(),
        ["20250615-a1", "20250614-b2", "20250613-c3", "20250601-d4"]
    );
    assert_eq!(s.selected(), "20250615-a1");
}

#[test]
fn typing_filters_by_title_project_and_id_ignoring_case() {
    let mut s = script();
    s.open();
    s.type_text("JSON");
    assert_eq!(s.ids(), ["20250614-b2"], "by title");
    for _ in 0..4 {
        s.plain(KeyCode::Backspace);
    }
    s.type_text("srv/work");
    assert_eq!(s.ids(), ["20250613-c3"], "by project");
    s.at(AppEvent::Key(KeyEvent::new(
        KeyCode::Char('u'),
        KeyModifiers::CONTROL,
    )));
    s.type_text("~/src/par");
    assert_eq!(
        s.ids(),
        ["20250615-a1", "20250601-d4"],
        "by project as shown"
    );
    s.plain(KeyCode::Down);
    assert_eq!(s.selected(), "20250601-d4");
    // Changing the filter starts at the top again.
    s.plain(KeyCode::Backspace);
    assert_eq!(s.selected(), "20250615-a1");
    s.at(AppEvent::Paste("\n0613".into()));
    assert_eq!(s.app.picker.as_ref().unwrap().filter, "~/src/pa 0613");
    assert!(s.ids().is_empty());
    // Enter with nothing selected does nothing.
    assert!(s.plain(KeyCode::Enter).is_empty());
    assert!(s.app.picker.is_some());
    s.at(AppEvent::Key(KeyEvent::new(
        KeyCode::Char('u'),
        KeyModifiers::CONTROL,
    )));
    s.type_text("20250613");
    assert_eq!(s.ids(), ["20250613-c3"], "by id");
}

#[test]
fn arrows_and_pages_move_within_the_list() {
    let mut s = script();
    s.open();
    s.plain(KeyCode::Up);
    assert_eq!(s.selected(), "20250615-a1", "stays at the top");
    s.plain(KeyCode::Down);
    s.plain(KeyCode::Down);
    assert_eq!(s.selected(), "20250613-c3");
    s.plain(KeyCode::PageDown);
    assert_eq!(s.selected(), "20250601-d4", "stops at the bottom");
    s.plain(KeyCode::Down);
    assert_eq!(s.selected(), "20250601-d4");
    s.plain(KeyCode::PageUp);
    assert_eq!(s.selected(), "20250615-a1");
    s.plain(KeyCode::End);
    assert_eq!(s.selected(), "20250601-d4");
    s.plain(KeyCode::Home);
    assert_eq!(s.selected(), "20250615-a1");
}

#[test]
fn enter_resumes_the_selected_session_and_closes() {
    let mut s = script();
    s.open();
    s.type_text("cli");
    s.plain(KeyCode::Down); // no further match: stays on the only one
    let path = resumed_path(&s.plain(KeyCode::Enter));
    assert_eq!(path, Path::new("/data/sessions/20250614-b2.jsonl"));
    assert!(s.app.picker.is_none());
}

#[test]
fn esc_closes_and_keeps_the_session() {
    let mut s = script();
    s.app.transcript.cells.push(Cell::user("earlier"));
    s.open();
    s.type_text("fix");
    assert!(s.plain(KeyCode::Esc).is_empty(), "Esc does not interrupt");
    assert!(s.app.picker.is_none());
    assert_eq!(s.app.transcript.cells.len(), 1);
    assert_eq!(s.input(), "", "the filter did not reach the input");
    // Ctrl-C closes it too, and does not quit.
    s.open();
    let effects = s.at(AppEvent::Key(KeyEvent::new(
        KeyCode::Char('c'),
        KeyModifiers::CONTROL,
    )));
    assert!(effects.is_empty(), "{effects:?}");
    assert!(s.app.picker.is_none());
}

#[test]
fn keys_do_not_reach_the_composer_or_the_main_screen_while_open() {
    let mut s = script();
    s.type_text("draft");
    s.app.composer.textarea.select_all();
    s.app.composer.textarea.cut();
    s.open();
    s.type_text("hello");
    assert_eq!(s.input(), "");
    // Keys bound on the main screen do nothing but their picker meaning.
    for code in [KeyCode::F(1), KeyCode::Tab, KeyCode::Left] {
        assert!(s.plain(code).is_empty());
    }
    let effects = s.at(AppEvent::Key(KeyEvent::new(
        KeyCode::Char('t'),
        KeyModifiers::CONTROL,
    )));
    assert!(effects.is_empty());
    assert!(s.app.show_todos, "Ctrl-T did not toggle the todo pane");
    assert!(s.app.transcript.cells.is_empty(), "F1 did not print help");
    assert_eq!(s.app.picker.as_ref().unwrap().filter, "hello");
}

/// Issue 13, item 4: one layer order decides both who takes the keys and what is drawn on
/// top. Models listed (for an earlier `/model`) after the session picker opened go under
/// it: the session picker is drawn over the model picker, and takes the keys, until it
/// closes.
#[test]
fn a_model_picker_that_opens_under_the_session_picker_stays_under_it() {
    let mut s = script();
    s.open();
    let choice = |name: &str| rein::app::model_picker::ModelChoice {
        name: name.into(),
        window: None,
        prices: None,
    };
    let models = rein::app::model_picker::ModelList {
        current: choice("ollama/qwen3-coder"),
        models: vec![choice("ollama/qwen3-coder"), choice("openai/gpt-4.1")],
        server_url: None,
    };
    assert!(s.at(AppEvent::Models(models)).is_empty());
    assert_eq!(rein::app::Layer::top(&s.app), rein::app::Layer::Sessions);
    let screen = draw(&s.app, 80, 24);
    assert!(screen.contains("Resume a session"), "{screen}");
    assert!(!screen.contains("Switch model"), "{screen}");
    assert!(screen.contains("Enter resume"), "{screen}");
    // Esc closes the one on top; the model picker shows, and takes the keys.
    assert!(s.plain(KeyCode::Esc).is_empty());
    assert!(s.app.picker.is_none());
    assert_eq!(rein::app::Layer::top(&s.app), rein::app::Layer::Models);
    let screen = draw(&s.app, 80, 24);
    assert!(screen.contains("Switch model"), "{screen}");
}

#[test]
fn resume_is_refused_while_a_turn_runs() {
    let mut s = script();
    s.at(AppEvent::Agent(AgentEvent::TurnStarted {
        text: "go".into(),
    }));
    assert!(s.app.busy());
    s.type_text("/resume");
    let effects = s.plain(KeyCode::Enter);
    assert!(effects.is_empty(), "{effects:?}");
    assert!(s.app.picker.is_none());
    let hint = s.app.hint.clone().unwrap_or_default();
    assert!(hint.contains("/resume waits for the turn to end"), "{hint}");
}

#[test]
fn enter_waits_when_a_turn_started_while_the_picker_was_open() {
    let mut s = script();
    s.open();
    s.app.activity = Activity::Thinking { since: s.now };
    assert!(s.plain(KeyCode::Enter).is_empty());
    assert!(s.app.picker.is_some(), "still open");
    assert!(s
        .app
        .hint
        .as_deref()
        .is_some_and(|h| h.contains("waits for the turn")));
}

#[test]
fn the_current_session_and_empty_ones_are_left_out() {
    let mut s = script();
    let mut all = sessions();
    all.push(summary(
        "20250615-e5",
        None,
        PROJECT,
        Duration::ZERO,
        MessageCount::Exact(0),
    ));
    let mut listed = list(all);
    listed.current = Some(PathBuf::from("/data/sessions/20250615-a1.jsonl"));
    s.at(AppEvent::Sessions(listed));
    assert_eq!(s.ids(), ["20250614-b2", "20250613-c3", "20250601-d4"]);
}

#[test]
fn nothing_to_resume_is_a_hint_not_an_empty_picker() {
    let mut s = script();
    s.at(AppEvent::Sessions(list(Vec::new())));
    assert!(s.app.picker.is_none());
    assert_eq!(s.app.hint.as_deref(), Some(NOTHING_TO_RESUME));
}

#[test]
fn a_resumed_session_replaces_the_conversation_shown() {
    let data = tempfile::tempdir().unwrap();
    let meta = SessionMeta::new(PROJECT, "m");
    let mut writer = SessionWriter::create(data.path(), meta).unwrap();
    writer
        .append(&Entry::message(Message::user("what does the parser do?")))
        .unwrap();
    writer
        .append(&Entry::message(Message::assistant(
            "It splits lines.".to_string(),
            Vec::new(),
        )))
        .unwrap();
    let path = writer.path().to_path_buf();
    drop(writer);
    let loaded = rein_core::session::load(&path).unwrap();

    let mut s = script();
    s.type_text("old question");
    s.plain(KeyCode::Enter);
    s.at(AppEvent::Agent(AgentEvent::TurnFinished {
        outcome: rein_core::agent::TurnOutcome::Completed,
    }));
    s.app.gauge.reported = 90_000;
    assert_eq!(s.app.composer.history, ["old question"]);
    s.at(AppEvent::Resumed(Ok(Box::new(loaded))));
    let texts: Vec<String> = s
        .app
        .transcript
        .cells
        .iter()
        .filter_map(|c| match c {
            Cell::User(u) => Some(u.text.clone()),
            Cell::Assistant(a) => Some(a.text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["what does the parser do?", "It splits lines."]);
    // The input history is the user's: it stays, and the session's inputs join it once.
    assert_eq!(
        s.app.composer.history,
        ["old question", "what does the parser do?"]
    );
    s.at(AppEvent::Resumed(Ok(Box::new(
        rein_core::session::load(&path).unwrap(),
    ))));
    assert_eq!(
        s.app.composer.history,
        ["old question", "what does the parser do?"]
    );
    assert_eq!(s.app.gauge.reported, 0);
    assert!(!s.app.busy());
}

#[test]
fn a_session_that_cannot_be_resumed_is_an_error_notice() {
    let mut s = script();
    s.app.transcript.cells.push(Cell::user("keep me"));
    s.at(AppEvent::Resumed(
        Err("cannot resume /x.jsonl: gone".into()),
    ));
    let cells = &s.app.transcript.cells;
    assert_eq!(cells.len(), 2);
    assert!(matches!(&cells[1], Cell::Notice(n) if n.kind == NoticeKind::Error));
}

#[test]
fn a_message_after_closing_goes_to_the_agent_as_usual() {
    let mut s = script();
    s.open();
    s.plain(KeyCode::Esc);
    s.type_text("hello");
    let effects = s.plain(KeyCode::Enter);
    assert!(matches!(
        effects.as_slice(),
        [Effect::Agent(AgentCommand::UserMessage(t))] if t == "hello"
    ));
}

// ---- rendering --------------------------------------------------------------------------

fn draw(app: &App, width: u16, height: u16) -> String {
    support::app::draw(app, width, height, Instant::now())
}

fn open_picker() -> Script {
    let mut s = script();
    s.app
        .transcript
        .cells
        .push(Cell::user("this is the session underneath"));
    s.open();
    s.plain(KeyCode::Down);
    s
}

#[test]
fn snapshot_picker_80x24() {
    let s = open_picker();
    let screen = draw(&s.app, 80, 24);
    assert_snapshot("picker_80x24", &screen);
    assert!(screen.contains("Resume a session (4)"), "{screen}");
    assert!(screen.contains("› Add a --json flag"), "{screen}");
    assert!(screen.contains("(untitled)"));
    assert!(screen.contains("3 min ago") && screen.contains("2 days ago"));
    // Issue 28: no `~` counts (a count the loop could not make exact is "at least"), and
    // a legend says what `●` means.
    assert!(screen.contains("40+") && screen.contains('?'));
    assert!(!screen.contains("~40"), "{screen}");
    assert!(screen.contains("● ~/src/parser"), "this project is marked");
    assert!(screen.contains("● this project · Enter resume"), "{screen}");
    assert!(!screen.contains('\x1b'), "titles are sanitised");
}

#[test]
fn snapshot_picker_filtered_60x20() {
    let mut s = open_picker();
    s.type_text("parser");
    let screen = draw(&s.app, 60, 20);
    assert_snapshot("picker_filtered_60x20", &screen);
    assert!(screen.contains("(2 of 4)"), "{screen}");
    assert!(screen.contains("filter parser"), "{screen}");
    assert!(screen.contains("Enter resume"), "{screen}");
}

/// Issue 28: sessions with the same title (whatever the case and spacing) show their short
/// ids, so they can be told apart (and the id typed into the filter finds one); other
/// titles do not.
#[test]
fn identical_titles_show_their_short_ids() {
    let mut s = script();
    s.type_text("/resume");
    s.plain(KeyCode::Enter);
    let twins = vec![
        summary(
            "20250615-101500-a1b2c3",
            Some("fix the tests"),
            PROJECT,
            Duration::from_secs(60),
            MessageCount::Exact(4),
        ),
        summary(
            "20250615-090000-d4e5f6",
            Some("Fix  the tests"),
            PROJECT,
            Duration::from_secs(120),
            MessageCount::Exact(9),
        ),
        summary(
            "20250614-080000-0789ab",
            Some("a title of its own"),
            PROJECT,
            Duration::from_secs(3600),
            MessageCount::Exact(2),
        ),
    ];
    s.at(AppEvent::Sessions(list(twins)));
    let screen = draw(&s.app, 80, 24);
    assert_snapshot("picker_twins_80x24", &screen);
    assert!(screen.contains("fix the tests #a1b2c3"), "{screen}");
    assert!(screen.contains("Fix  the tests #d4e5f6"), "{screen}");
    assert!(!screen.contains("#0789ab"), "{screen}");
    s.type_text("d4e5");
    let screen = draw(&s.app, 80, 24);
    assert!(screen.contains("(1 of 3)"), "{screen}");
    // Alone in the list now, it needs no id.
    assert!(!screen.contains("#d4e5f6"), "{screen}");
}
