//! The `@` file finder through the real update step: each key (`@` opens it and asks for a
//! scan, typing filters, Up/Down and Ctrl-P/N move, Tab/Enter insert, Esc closes, a space
//! or a cursor move closes), the scan's result arriving while it is open, and its drawing
//! (a render snapshot). The scan and the matcher themselves have unit tests in
//! `crates/core/src/file_index/`.

use crate::support;

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyModifiers};
use rein::app::state::{App, SessionInfo};
use rein::app::{AppEvent, Effect, Layer};
use rein_core::file_index::FileIndex;
use support::app::{snapshot, Script};

const PROJECT: &str = "/work/project";

fn script() -> Script {
    let info = SessionInfo {
        model: "demo".into(),
        project: PathBuf::from(PROJECT),
        ..SessionInfo::default()
    };
    Script::with(App::new(info, 128_000))
}

fn index(paths: &[&str]) -> AppEvent {
    AppEvent::FilesIndexed(Box::new(FileIndex::of_paths(PROJECT, paths)))
}

const FILES: [&str; 7] = [
    "README.md",
    "src/",
    "src/app/",
    "src/main.rs",
    "src/app/state.rs",
    "src/app/update.rs",
    "src/ui/status.rs",
];

/// The paths the open list shows, in order.
fn listed(s: &Script) -> Vec<String> {
    let finder = &s.app.finder;
    let (Some(list), Some(index)) = (&finder.open, &finder.index) else {
        return Vec::new();
    };
    list.matches
        .hits
        .iter()
        .map(|h| index.entries[h.entry].path.clone())
        .collect()
}

fn selected(s: &Script) -> Option<String> {
    s.app.finder.selected_path().map(|(p, _)| p.to_string())
}

/// `@` typed, the scan asked for and answered.
fn opened() -> Script {
    let mut s = script();
    s.type_text("look at ");
    let effects = s.plain(KeyCode::Char('@'));
    assert!(
        matches!(&effects[..], [Effect::IndexFiles { root, .. }] if root == &PathBuf::from(PROJECT)),
        "{effects:?}"
    );
    s.at(index(&FILES));
    s
}

#[test]
fn at_opens_the_finder_and_asks_for_a_scan_once() {
    let mut s = script();
    s.type_text("hi ");
    assert_eq!(Layer::top(&s.app), Layer::Main);
    let effects = s.plain(KeyCode::Char('@'));
    assert!(matches!(&effects[..], [Effect::IndexFiles { .. }]));
    assert_eq!(Layer::top(&s.app), Layer::Finder);
    assert!(s.app.finder.scanning);
    assert!(listed(&s).is_empty(), "nothing until the scan arrives");
    // More keys while it scans ask for nothing more.
    s.type_text("st");
    s.at(index(&FILES));
    assert!(!s.app.finder.scanning);
    assert_eq!(
        listed(&s)[0],
        "src/app/state.rs",
        "the query typed meanwhile"
    );
    // Closed and opened again soon after: the index is reused, no new scan.
    s.plain(KeyCode::Char(' '));
    assert_eq!(Layer::top(&s.app), Layer::Main);
    let effects = s.plain(KeyCode::Char('@'));
    assert!(effects.is_empty(), "{effects:?}");
    assert_eq!(listed(&s).len(), FILES.len());
}

#[test]
fn at_inside_a_word_is_not_a_mention() {
    let mut s = script();
    s.type_text("mail ann@example.com");
    assert_eq!(Layer::top(&s.app), Layer::Main);
    assert!(s.app.finder.open.is_none());
}

#[test]
fn typing_filters_and_backspace_widens() {
    let mut s = opened();
    assert_eq!(
        listed(&s).len(),
        FILES.len(),
        "an empty query lists everything"
    );
    s.type_text("upd");
    assert_eq!(listed(&s), ["src/app/update.rs"]);
    assert_eq!(s.input(), "look at @upd");
    s.plain(KeyCode::Backspace);
    s.plain(KeyCode::Backspace);
    assert!(listed(&s).len() > 1);
    assert_eq!(s.app.finder.open.as_ref().unwrap().query, "u");
    // Backspace over the `@` closes it.
    s.plain(KeyCode::Backspace);
    s.plain(KeyCode::Backspace);
    assert_eq!(Layer::top(&s.app), Layer::Main);
}

#[test]
fn up_down_and_ctrl_p_n_move_the_selection_not_the_history() {
    let mut s = opened();
    s.app.composer.history.push("an earlier message".into());
    s.type_text("rs");
    let first = selected(&s).unwrap();
    s.plain(KeyCode::Down);
    let second = selected(&s).unwrap();
    assert_ne!(first, second);
    s.ctrl('n');
    s.ctrl('p');
    assert_eq!(selected(&s).unwrap(), second);
    s.plain(KeyCode::Up);
    assert_eq!(selected(&s).unwrap(), first);
    s.plain(KeyCode::Up);
    assert_eq!(selected(&s).unwrap(), first, "stops at the top");
    assert_eq!(s.input(), "look at @rs", "the history was not recalled");
}

#[test]
fn tab_inserts_the_path_with_a_space_and_closes() {
    let mut s = opened();
    s.type_text("stat");
    assert_eq!(selected(&s).as_deref(), Some("src/app/state.rs"));
    let effects = s.plain(KeyCode::Tab);
    assert!(effects.is_empty(), "{effects:?}");
    assert_eq!(s.input(), "look at @src/app/state.rs ");
    assert_eq!(Layer::top(&s.app), Layer::Main);
    // Typing goes on after it.
    s.type_text("please");
    assert_eq!(s.input(), "look at @src/app/state.rs please");
}

#[test]
fn enter_inserts_instead_of_sending() {
    let mut s = opened();
    s.type_text("main");
    let effects = s.plain(KeyCode::Enter);
    assert!(
        effects.is_empty(),
        "Enter picked, it did not send: {effects:?}"
    );
    assert_eq!(s.input(), "look at @src/main.rs ");
    // The next Enter sends, with the path in the text.
    let effects = s.plain(KeyCode::Enter);
    assert!(
        effects.iter().any(|e| matches!(e,
            Effect::Agent(rein_core::agent::AgentCommand::UserMessage(t)) if t == "look at @src/main.rs")),
        "{effects:?}"
    );
}

#[test]
fn a_word_in_the_middle_is_replaced_whole() {
    let mut s = opened();
    s.type_text("upd and more");
    // Back into the word, after "@up".
    for _ in 0.." and more".len() + 1 {
        s.plain(KeyCode::Left);
    }
    assert_eq!(Layer::top(&s.app), Layer::Finder);
    assert_eq!(s.app.finder.open.as_ref().unwrap().query, "up");
    s.plain(KeyCode::Tab);
    assert_eq!(s.input(), "look at @src/app/update.rs and more");
}

#[test]
fn a_folder_goes_in_with_its_slash_and_the_list_stays_open_inside_it() {
    let mut s = opened();
    s.type_text("src/ap");
    assert_eq!(selected(&s).as_deref(), Some("src/app/"));
    s.plain(KeyCode::Tab);
    assert_eq!(s.input(), "look at @src/app/");
    assert_eq!(Layer::top(&s.app), Layer::Finder);
    assert_eq!(s.app.finder.open.as_ref().unwrap().query, "src/app/");
    assert!(listed(&s).contains(&"src/app/state.rs".to_string()));
}

#[test]
fn esc_closes_and_leaves_the_text_until_the_word_is_left() {
    let mut s = opened();
    s.type_text("sta");
    let effects = s.plain(KeyCode::Esc);
    assert!(
        effects.is_empty(),
        "Esc closed the list, it did not interrupt"
    );
    assert_eq!(Layer::top(&s.app), Layer::Main);
    assert_eq!(s.input(), "look at @sta");
    // More typing in the same word keeps it closed.
    s.type_text("te");
    assert_eq!(Layer::top(&s.app), Layer::Main);
    // A new `@` opens it again.
    s.type_text(" @");
    assert_eq!(Layer::top(&s.app), Layer::Finder);
}

#[test]
fn a_space_or_moving_out_of_the_word_closes() {
    let mut s = opened();
    s.type_text("sta");
    s.plain(KeyCode::Char(' '));
    assert_eq!(Layer::top(&s.app), Layer::Main);
    assert_eq!(s.input(), "look at @sta ");
    let mut s = opened();
    s.type_text("sta");
    s.key(KeyCode::Home, KeyModifiers::NONE);
    assert_eq!(Layer::top(&s.app), Layer::Main);
}

#[test]
fn no_match_says_so_and_tab_then_closes_leaving_the_text() {
    let mut s = opened();
    s.type_text("zzz");
    assert!(listed(&s).is_empty());
    assert_eq!(Layer::top(&s.app), Layer::Finder);
    s.plain(KeyCode::Tab);
    assert_eq!(s.input(), "look at @zzz");
    assert_eq!(Layer::top(&s.app), Layer::Main);
}

#[test]
fn the_finder_over_the_input_box() {
    let mut s = opened();
    s.type_text("sta");
    s.plain(KeyCode::Down);
    snapshot("file_finder_open", &s.app, 80, 20, s.now);
}

#[test]
fn the_finder_while_indexing() {
    let mut s = script();
    s.plain(KeyCode::Char('@'));
    s.type_text("ma");
    snapshot("file_finder_indexing", &s.app, 60, 12, s.now);
}

#[test]
fn the_transcript_shows_an_attached_mention_as_a_chip_not_the_file() {
    use rein_core::agent::AgentEvent;
    let mut s = script();
    let text = "explain @src/main.rs and mail ann@example.com";
    s.agent(AgentEvent::TurnStarted { text: text.into() });
    s.agent(AgentEvent::Attached {
        paths: vec!["src/main.rs".into()],
    });
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(60, 12)).unwrap();
    terminal
        .draw(|frame| rein::ui::render(&s.app, frame, s.now))
        .unwrap();
    let buf = terminal.backend().buffer();
    let screen = rein::ui::buffer_text(buf);
    let (y, line) = screen
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("explain"))
        .unwrap();
    assert_eq!(line.trim_end(), format!("› {text}"));
    let chip = |col: u16| {
        buf[(col, y as u16)]
            .modifier
            .contains(ratatui::style::Modifier::REVERSED)
    };
    // "@src/main.rs" is 12 columns.
    let start = line.chars().position(|c| c == '@').unwrap() as u16;
    assert!(chip(start) && chip(start + 11), "the mention is a chip");
    assert!(!chip(start + 12) && !chip(0), "the rest is plain text");
    let at_ann = line.rfind('@').unwrap();
    let at_ann_col = line[..at_ann].chars().count() as u16;
    assert!(!chip(at_ann_col), "not attached: not a chip");
}
