//! Ctrl-R: a reverse incremental search over the earlier inputs (`composer.history`), as
//! in a shell.
//!
//! Opening it leaves the input box as it is; the search line takes every key (the
//! keymap's `search` mode; [`super::layer::Layer::Search`]). Typing refines the query and
//! the match becomes the newest earlier input that holds it (case-insensitive; the
//! current match stays while it still holds); Backspace shortens the query and searches
//! again from the newest. Ctrl-R (or Up) goes to the next older match, Ctrl-S (or Down)
//! to the next newer. When nothing matches the search says so and keeps the last match.
//! Enter or Tab puts the match in the input box, not sent, and Up/Down then go on from
//! there through the history; Esc, Ctrl-G or Ctrl-C closes the search and the input keeps
//! the text it had. Drawn by `crate::ui::history_search`.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::composer;
use super::keymap::{keymap, Action, Mode};
use super::state::App;

/// The search while it is open.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HistorySearch {
    pub query: String,
    /// The matching entry shown: an index into `composer.history`.
    pub found: Option<usize>,
    /// The last search found nothing (the prompt says "failing").
    pub failed: bool,
}

/// Which way to look from the current match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Older,
    Newer,
}

/// Whether `entry` holds `query`, ignoring case.
fn matches(entry: &str, query: &str) -> bool {
    query.is_empty() || entry.to_lowercase().contains(&query.to_lowercase())
}

/// The nearest entry holding `query`, from `start` (included) in `direction`.
fn find(history: &[String], query: &str, start: usize, direction: Direction) -> Option<usize> {
    match direction {
        Direction::Older => (0..=start.min(history.len().checked_sub(1)?))
            .rev()
            .find(|&i| matches(&history[i], query)),
        Direction::Newer => (start..history.len()).find(|&i| matches(&history[i], query)),
    }
}

/// Ctrl-R on the main screen: open the search (nothing found yet, the input untouched).
pub fn open(app: &mut App) {
    app.search = Some(HistorySearch::default());
    app.hint = None;
}

/// Search again for the current query, from `start` in `direction`; keep the last match
/// when nothing holds it.
fn research(app: &mut App, start: Option<usize>, direction: Direction) {
    let history = &app.composer.history;
    let Some(search) = app.search.as_mut() else {
        return;
    };
    let found = start.and_then(|s| find(history, &search.query, s, direction));
    search.failed = found.is_none() && (start.is_some() || !history.is_empty());
    if found.is_some() {
        search.found = found;
    }
}

/// A key while the search is open.
pub fn handle_key(app: &mut App, key: KeyEvent) {
    if key.kind == KeyEventKind::Release {
        return;
    }
    let action = keymap()
        .lookup(&[Mode::Search], &key)
        .find(|b| b.applies(app))
        .map(|b| b.action);
    let Some(search) = app.search.as_ref() else {
        return;
    };
    let newest = app.composer.history.len().checked_sub(1);
    let found = search.found;
    match action {
        Some(Action::CancelSearch) => app.search = None,
        Some(Action::AcceptSearch) => accept(app),
        Some(Action::SearchOlder) => {
            let start = match found {
                Some(i) => i.checked_sub(1),
                None => newest,
            };
            research(app, start, Direction::Older);
        }
        Some(Action::SearchNewer) => {
            let start = found.map(|i| i + 1).filter(|&i| Some(i) <= newest);
            research(app, start, Direction::Newer);
        }
        Some(_) => {}
        None => edit_query(app, &key),
    }
}

/// Typing and Backspace change the query, and the search runs again.
fn edit_query(app: &mut App, key: &KeyEvent) {
    let Some(search) = app.search.as_mut() else {
        return;
    };
    let plain = !key
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    match key.code {
        KeyCode::Char(c) if plain && !c.is_control() => {
            search.query.push(c);
            // The match shown stays while it still holds the longer query.
            let start = search.found.or(app.composer.history.len().checked_sub(1));
            research(app, start, Direction::Older);
        }
        KeyCode::Backspace if search.query.pop().is_some() => {
            let start = app.composer.history.len().checked_sub(1);
            research(app, start, Direction::Older);
        }
        _ => {}
    }
}

/// A paste while the search is open goes into the query (one line).
pub fn paste(app: &mut App, text: &str) {
    let Some(search) = app.search.as_mut() else {
        return;
    };
    let line = composer::normalize_newlines(text).replace('\n', " ");
    search.query.push_str(&line);
    let start = search.found.or(app.composer.history.len().checked_sub(1));
    research(app, start, Direction::Older);
}

/// Enter / Tab: the match into the input box (the text there before becomes the draft
/// that Down past the newest entry brings back), and the search closes.
fn accept(app: &mut App) {
    let Some(search) = app.search.take() else {
        return;
    };
    let Some(index) = search.found else {
        return;
    };
    composer::recall(app, index);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(entries: &[&str]) -> Vec<String> {
        entries.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn find_looks_from_the_start_in_its_direction_ignoring_case() {
        let h = history(&["cargo test", "git status", "Cargo build", "ls"]);
        assert_eq!(find(&h, "cargo", 3, Direction::Older), Some(2));
        assert_eq!(find(&h, "cargo", 1, Direction::Older), Some(0));
        assert_eq!(find(&h, "cargo", 1, Direction::Newer), Some(2));
        assert_eq!(find(&h, "zzz", 3, Direction::Older), None);
        assert_eq!(find(&h, "", 3, Direction::Older), Some(3));
        assert_eq!(find(&[], "x", 0, Direction::Older), None);
        assert_eq!(find(&h, "ls", 9, Direction::Older), Some(3));
    }
}
