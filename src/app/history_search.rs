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
//! the text it had. Drawn by `crate::ui::history_search`. A leaf: it reads the history it
//! is given and changes only its own state.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use tui_textarea::TextArea;

use super::input::normalize_newlines;
use super::keymap::{keymap, Action, Mode};

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

/// What a key in the search leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchOutcome {
    /// The search stays open.
    Stay,
    /// Esc, Ctrl-G or Ctrl-C: close it; the input keeps its text.
    Close,
    /// Enter or Tab: close it and put history entry `.0` in the input box (not sent).
    Accept(Option<usize>),
}

/// The keymap modes the search consults.
pub const MODES: &[Mode] = &[Mode::Search];

/// What the footer names while the search is on top.
pub const FOOTER: &[(Mode, Action)] = &[
    (Mode::Search, Action::AcceptSearch),
    (Mode::Search, Action::SearchOlder),
    (Mode::Search, Action::CancelSearch),
];

impl HistorySearch {
    /// Search again for the current query, from `start` in `direction`; keep the last
    /// match when nothing holds it.
    fn research(&mut self, history: &[String], start: Option<usize>, direction: Direction) {
        let found = start.and_then(|s| find(history, &self.query, s, direction));
        self.failed = found.is_none() && (start.is_some() || !history.is_empty());
        if found.is_some() {
            self.found = found;
        }
    }

    /// A key while the search is open, over the earlier inputs `history` (oldest first);
    /// `input` is the input box, which the keymap's conditions read.
    pub fn handle_key(
        &mut self,
        key: &KeyEvent,
        history: &[String],
        input: &TextArea<'_>,
    ) -> SearchOutcome {
        if key.kind == KeyEventKind::Release {
            return SearchOutcome::Stay;
        }
        let newest = history.len().checked_sub(1);
        match keymap().action(MODES, key, input) {
            Some(Action::CancelSearch) => return SearchOutcome::Close,
            Some(Action::AcceptSearch) => return SearchOutcome::Accept(self.found),
            Some(Action::SearchOlder) => {
                let start = match self.found {
                    Some(i) => i.checked_sub(1),
                    None => newest,
                };
                self.research(history, start, Direction::Older);
            }
            Some(Action::SearchNewer) => {
                let start = self.found.map(|i| i + 1).filter(|&i| Some(i) <= newest);
                self.research(history, start, Direction::Newer);
            }
            Some(_) => {}
            None => self.edit_query(key, history),
        }
        SearchOutcome::Stay
    }

    /// Typing and Backspace change the query, and the search runs again.
    fn edit_query(&mut self, key: &KeyEvent, history: &[String]) {
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match key.code {
            KeyCode::Char(c) if plain && !c.is_control() => {
                self.query.push(c);
                // The match shown stays while it still holds the longer query.
                let start = self.found.or(history.len().checked_sub(1));
                self.research(history, start, Direction::Older);
            }
            KeyCode::Backspace if self.query.pop().is_some() => {
                let start = history.len().checked_sub(1);
                self.research(history, start, Direction::Older);
            }
            _ => {}
        }
    }

    /// A paste goes into the query (one line).
    pub fn paste(&mut self, text: &str, history: &[String]) {
        let line = normalize_newlines(text).replace('\n', " ");
        self.query.push_str(&line);
        let start = self.found.or(history.len().checked_sub(1));
        self.research(history, start, Direction::Older);
    }
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
