//! The `@` file finder: a small list over the input box that completes a file's path.
//!
//! Typing `@` at the start of the input or after whitespace opens it; the text between the
//! `@` and the cursor is the query. Typing and Backspace still edit the input box and the
//! list follows ([`FinderState::sync`] runs after every key and paste on the main screen); Up/Down
//! (Ctrl-P/Ctrl-N) move, Tab or Enter put the chosen path in place of the `@word`
//! (`@src/app/state.rs ` with a space after; a folder goes in as `@src/app/` and the list
//! stays open on it), Esc closes it and leaves the text as typed (that `@` stays closed
//! until the cursor leaves its word). A space, or moving the cursor out of the word,
//! closes it.
//!
//! The list matches the project's files ([`rein_core::file_index`]): the first `@` asks for a
//! scan (the router sends the loop `Effect::IndexFiles`), which comes back as
//! `AppEvent::FilesIndexed` ([`FinderState::indexed`]); until then the list says
//! "indexing…". A leaf: it edits the input box it is handed, and nothing else outside it. A scan older
//! than [`RESCAN_AFTER`] is redone in the background when the finder opens, the old index
//! serving meanwhile. The MCP servers' resources are listed after the files, as
//! `SERVER:URI` ([`FinderState::set_resources`]): chosen, `@SERVER:URI` attaches the
//! resource as a file's mention does. Matching itself is pure and quick (see the `finder` benchmark), so
//! it runs here, on each keystroke.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::KeyEvent;
use tui_textarea::{CursorMove, TextArea};

use super::keymap::{keymap, Action, Mode};
use rein_core::file_index::matcher::{Matches, PathMatcher};
use rein_core::file_index::FileIndex;

/// Rows the list shows at most.
pub const ROWS: usize = 8;
/// Hits kept per query (the list scrolls through them).
const KEPT: usize = 50;
/// An index this old is scanned again (in the background) when the finder opens.
pub const RESCAN_AFTER: Duration = Duration::from_secs(30);

/// The finder's state: the index, the open list, the matcher.
#[derive(Debug, Default)]
pub struct FinderState {
    /// What the list matches: the last scan, when one has arrived, and after its entries
    /// the servers' resources.
    pub index: Option<Arc<FileIndex>>,
    /// The last scan alone.
    files: Option<Arc<FileIndex>>,
    /// The MCP servers' resources as mentions (`SERVER:URI`).
    resources: Vec<String>,
    /// When the index arrived (update-step time).
    pub indexed_at: Option<Instant>,
    /// A scan is running.
    pub scanning: bool,
    /// The list, while it is open.
    pub open: Option<FinderList>,
    /// The `@` (row, column) the user closed the list on with Esc: it stays closed until
    /// the cursor leaves that word.
    pub dismissed: Option<(usize, usize)>,
    matcher: PathMatcher,
}

/// The open list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinderList {
    /// Where the `@` is: the input's row and the `@`'s column (in characters).
    pub row: usize,
    pub at: usize,
    /// The text between the `@` and the cursor.
    pub query: String,
    pub matches: Matches,
    pub selected: usize,
    /// The index the matches are from (matches are redone when a new one arrives).
    pub generation: Option<usize>,
}

/// The `@word` the cursor is in: its row, the `@`'s column, the query (up to the cursor)
/// and the word's length in characters after the `@` (up to the next whitespace).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Word {
    row: usize,
    at: usize,
    query: String,
    len: usize,
}

fn word_at_cursor(textarea: &TextArea<'_>) -> Option<Word> {
    let (row, col) = textarea.cursor();
    let line: Vec<char> = textarea.lines().get(row)?.chars().collect();
    let before = line.get(..col)?;
    let at = before
        .iter()
        .rposition(|c| c.is_whitespace() || *c == '@')?;
    if before[at] != '@' || (at > 0 && !line[at - 1].is_whitespace()) {
        return None;
    }
    let query: String = before[at + 1..].iter().collect();
    let len = line[at + 1..]
        .iter()
        .position(|c| c.is_whitespace())
        .unwrap_or(line.len() - at - 1);
    Some(Word {
        row,
        at,
        query,
        len,
    })
}

/// What a key the finder took did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FinderKey {
    /// A path went into the input (the hint under it goes).
    pub inserted: bool,
    /// A scan of the project is wanted ([`FinderState::sync`] says when).
    pub scan: bool,
}

/// The keymap modes the finder consults before the main screen's.
pub const MODES: &[Mode] = &[Mode::Finder, Mode::Global, Mode::Composer];

/// What the footer names while the finder is on top.
pub const FOOTER: &[(Mode, Action)] = &[
    (Mode::Finder, Action::InsertPath),
    (Mode::Finder, Action::ScrollDown),
    (Mode::Finder, Action::ClosePicker),
];

impl FinderState {
    /// After a key or paste on the main screen: open, refilter or close the list for where
    /// the cursor is now. True when a scan of the project should start (the list just
    /// opened, and there is no index or it is old, and none runs): the router asks the
    /// loop for it, and [`FinderState::indexed`] takes the result.
    pub fn sync(&mut self, input: &TextArea<'_>, now: Instant) -> bool {
        let Some(word) = word_at_cursor(input) else {
            self.open = None;
            self.dismissed = None;
            return false;
        };
        if self.dismissed == Some((word.row, word.at)) {
            return false;
        }
        self.dismissed = None;
        let scan = self.open.is_none() && self.wants_scan(now);
        let same = self.open.as_ref().is_some_and(|l| {
            l.row == word.row
                && l.at == word.at
                && l.query == word.query
                && l.generation == generation(&self.index)
        });
        if !same {
            self.refilter(word.row, word.at, word.query);
        }
        scan
    }

    /// Whether to scan: no index, or an old one, and none running (then one is running).
    fn wants_scan(&mut self, now: Instant) -> bool {
        let stale = self
            .indexed_at
            .is_none_or(|t| now.saturating_duration_since(t) >= RESCAN_AFTER);
        let scan = stale && !self.scanning;
        if scan {
            self.scanning = true;
        }
        scan
    }

    fn refilter(&mut self, row: usize, at: usize, query: String) {
        let matches = match &self.index {
            Some(index) => self.matcher.query(index, &query, KEPT),
            None => Matches::default(),
        };
        let selected = match &self.open {
            Some(l) if l.query == query && l.row == row && l.at == at => {
                l.selected.min(matches.hits.len().saturating_sub(1))
            }
            _ => 0,
        };
        self.open = Some(FinderList {
            row,
            at,
            query,
            matches,
            selected,
            generation: generation(&self.index),
        });
    }

    /// A scan finished: keep it, and match the open list's query against it.
    pub fn indexed(&mut self, index: FileIndex, now: Instant) {
        self.files = Some(Arc::new(index));
        self.indexed_at = Some(now);
        self.scanning = false;
        self.combine();
    }

    /// The MCP servers' resources as mentions (`SERVER:URI`).
    pub fn resources(&self) -> &[String] {
        &self.resources
    }

    /// The MCP servers' resources now (`SERVER:URI` each), listed after the files.
    pub fn set_resources(&mut self, resources: Vec<String>) {
        if resources != self.resources {
            self.resources = resources;
            self.combine();
        }
    }

    /// The index the list matches: the files, then the resources (no copy without them).
    fn combine(&mut self) {
        self.index =
            self.files.as_ref().map(|files| {
                if self.resources.is_empty() {
                    return Arc::clone(files);
                }
                let mut both = FileIndex::clone(files);
                both.entries.extend(self.resources.iter().map(|r| {
                    rein_core::file_index::IndexEntry {
                        path: r.clone(),
                        is_dir: false,
                    }
                }));
                Arc::new(both)
            });
        if let Some(list) = self.open.clone() {
            self.refilter(list.row, list.at, list.query);
        }
    }

    /// A key while the list is open: its own bindings (the `finder` mode); `None` when the
    /// key is not one of them and goes on to the main screen. Inserting a path edits
    /// `input`.
    pub fn handle_key(
        &mut self,
        key: &KeyEvent,
        input: &mut TextArea<'static>,
        now: Instant,
    ) -> Option<FinderKey> {
        let action = keymap()
            .lookup(&[Mode::Finder], key)
            .next()
            .map(|b| b.action)?;
        let mut done = FinderKey {
            inserted: false,
            scan: false,
        };
        match action {
            Action::InsertPath => done = self.insert(input, now),
            Action::ClosePicker => {
                if let Some(list) = self.open.take() {
                    self.dismissed = Some((list.row, list.at));
                }
            }
            Action::ScrollUp => self.move_by(-1),
            Action::ScrollDown => self.move_by(1),
            _ => return None,
        }
        Some(done)
    }

    fn move_by(&mut self, delta: isize) {
        if let Some(list) = self.open.as_mut() {
            let last = list.matches.hits.len().saturating_sub(1);
            list.selected = list.selected.saturating_add_signed(delta).min(last);
        }
    }

    /// The selected entry's path and whether it is a folder.
    pub fn selected_path(&self) -> Option<(&str, bool)> {
        let list = self.open.as_ref()?;
        let hit = list.matches.hits.get(list.selected)?;
        let entry = self.index.as_ref()?.entries.get(hit.entry)?;
        Some((entry.path.as_str(), entry.is_dir))
    }

    /// Tab or Enter: put the selected path in place of the `@word`. A file gets a space
    /// after it and closes the list; a folder keeps it open, listing what is inside.
    fn insert(&mut self, textarea: &mut TextArea<'static>, now: Instant) -> FinderKey {
        let nothing = FinderKey {
            inserted: false,
            scan: false,
        };
        let Some((path, is_dir)) = self.selected_path().map(|(p, d)| (p.to_string(), d)) else {
            // Nothing to insert (no match yet): the list closes, the text stays.
            if let Some(list) = self.open.take() {
                self.dismissed = Some((list.row, list.at));
            }
            return nothing;
        };
        let Some(word) = word_at_cursor(textarea) else {
            self.open = None;
            return nothing;
        };
        let next = textarea
            .lines()
            .get(word.row)
            .and_then(|l| l.chars().nth(word.at + 1 + word.len));
        let (row, at) = (
            u16::try_from(word.row).unwrap_or(u16::MAX),
            u16::try_from(word.at).unwrap_or(u16::MAX),
        );
        textarea.move_cursor(CursorMove::Jump(row, at));
        textarea.delete_str(word.len + 1);
        textarea.insert_str(format!("@{path}"));
        if !is_dir {
            match next {
                Some(c) if c.is_whitespace() => textarea.move_cursor(CursorMove::Forward),
                _ => {
                    textarea.insert_char(' ');
                }
            }
        }
        self.open = None;
        FinderKey {
            inserted: true,
            scan: self.sync(textarea, now),
        }
    }
}

/// An index's identity, to tell a new scan from the one the matches came from.
fn generation(index: &Option<Arc<FileIndex>>) -> Option<usize> {
    index.as_ref().map(|i| Arc::as_ptr(i) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app_with(text: &str, col: usize) -> TextArea<'static> {
        let mut textarea = TextArea::from([text.to_string()]);
        textarea.move_cursor(CursorMove::Jump(0, col as u16));
        textarea
    }

    #[test]
    fn the_word_is_an_at_sign_at_the_start_or_after_whitespace() {
        let word = word_at_cursor(&app_with("see @src/ma", 11)).unwrap();
        assert_eq!((word.at, word.query.as_str(), word.len), (4, "src/ma", 6));
        let word = word_at_cursor(&app_with("@st more", 2)).unwrap();
        assert_eq!((word.at, word.query.as_str(), word.len), (0, "s", 2));
        assert!(word_at_cursor(&app_with("mail a@b.c", 10)).is_none());
        assert!(word_at_cursor(&app_with("@src more", 9)).is_none());
        assert!(word_at_cursor(&app_with("no at here", 5)).is_none());
    }
}
