//! The `@` file finder: a small list over the input box that completes a file's path.
//!
//! Typing `@` at the start of the input or after whitespace opens it; the text between the
//! `@` and the cursor is the query. Typing and Backspace still edit the input box and the
//! list follows ([`sync`] runs after every key and paste on the main screen); Up/Down
//! (Ctrl-P/Ctrl-N) move, Tab or Enter put the chosen path in place of the `@word`
//! (`@src/app/state.rs ` with a space after; a folder goes in as `@src/app/` and the list
//! stays open on it), Esc closes it and leaves the text as typed (that `@` stays closed
//! until the cursor leaves its word). A space, or moving the cursor out of the word,
//! closes it.
//!
//! The list matches the project's files ([`crate::file_index`]): the first `@` asks the
//! loop for a scan ([`Effect::IndexFiles`]), which comes back as
//! [`super::AppEvent::FilesIndexed`]; until then the list says "indexing…". A scan older
//! than [`RESCAN_AFTER`] is redone in the background when the finder opens, the old index
//! serving meanwhile. Matching itself is pure and quick (see the `finder` benchmark), so
//! it runs here, on each keystroke.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::KeyEvent;
use tui_textarea::CursorMove;

use super::event::Effect;
use super::keymap::{keymap, Action, Mode};
use super::state::App;
use crate::file_index::matcher::{Matches, PathMatcher};
use crate::file_index::{FileIndex, DEFAULT_CAP};

/// Rows the list shows at most.
pub const ROWS: usize = 8;
/// Hits kept per query (the list scrolls through them).
const KEPT: usize = 50;
/// An index this old is scanned again (in the background) when the finder opens.
pub const RESCAN_AFTER: Duration = Duration::from_secs(30);

/// The finder's state: the index, the open list, the matcher.
#[derive(Debug, Default)]
pub struct FinderState {
    /// The last scan, when one has arrived.
    pub index: Option<Arc<FileIndex>>,
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

fn word_at_cursor(app: &App) -> Option<Word> {
    let textarea = &app.composer.textarea;
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

/// After a key or paste on the main screen: open, refilter or close the list for where the
/// cursor is now.
pub fn sync(app: &mut App, now: Instant, effects: &mut Vec<Effect>) {
    let Some(word) = word_at_cursor(app) else {
        app.finder.open = None;
        app.finder.dismissed = None;
        return;
    };
    if app.finder.dismissed == Some((word.row, word.at)) {
        return;
    }
    app.finder.dismissed = None;
    let opening = app.finder.open.is_none();
    if opening {
        request_scan(app, now, effects);
    }
    let same = app.finder.open.as_ref().is_some_and(|l| {
        l.row == word.row
            && l.at == word.at
            && l.query == word.query
            && l.generation == generation(&app.finder.index)
    });
    if !same {
        refilter(app, word.row, word.at, word.query);
    }
}

/// Ask for a scan when there is no index, or it is old, and none is running.
fn request_scan(app: &mut App, now: Instant, effects: &mut Vec<Effect>) {
    let finder = &mut app.finder;
    let stale = finder
        .indexed_at
        .is_none_or(|t| now.saturating_duration_since(t) >= RESCAN_AFTER);
    if stale && !finder.scanning {
        finder.scanning = true;
        effects.push(Effect::IndexFiles {
            root: app.info.project.clone(),
            cap: DEFAULT_CAP,
        });
    }
}

/// An index's identity, to tell a new scan from the one the matches came from.
fn generation(index: &Option<Arc<FileIndex>>) -> Option<usize> {
    index.as_ref().map(|i| Arc::as_ptr(i) as usize)
}

fn refilter(app: &mut App, row: usize, at: usize, query: String) {
    let finder = &mut app.finder;
    let matches = match &finder.index {
        Some(index) => finder.matcher.query(index, &query, KEPT),
        None => Matches::default(),
    };
    let selected = match &finder.open {
        Some(l) if l.query == query && l.row == row && l.at == at => {
            l.selected.min(matches.hits.len().saturating_sub(1))
        }
        _ => 0,
    };
    finder.open = Some(FinderList {
        row,
        at,
        query,
        matches,
        selected,
        generation: generation(&finder.index),
    });
}

/// A scan finished: keep it, and match the open list's query against it.
pub fn indexed(app: &mut App, index: FileIndex, now: Instant) {
    app.finder.index = Some(Arc::new(index));
    app.finder.indexed_at = Some(now);
    app.finder.scanning = false;
    if let Some(list) = app.finder.open.clone() {
        refilter(app, list.row, list.at, list.query);
    }
}

/// A key while the list is open: its own bindings (the `finder` mode); false when the key
/// is not one of them and goes on to the main screen.
pub fn handle_key(app: &mut App, key: &KeyEvent, now: Instant, effects: &mut Vec<Effect>) -> bool {
    let Some(action) = keymap()
        .lookup(&[Mode::Finder], key)
        .next()
        .map(|b| b.action)
    else {
        return false;
    };
    match action {
        Action::InsertPath => insert(app, now, effects),
        Action::ClosePicker => {
            if let Some(list) = app.finder.open.take() {
                app.finder.dismissed = Some((list.row, list.at));
            }
        }
        Action::ScrollUp => move_by(app, -1),
        Action::ScrollDown => move_by(app, 1),
        _ => return false,
    }
    true
}

fn move_by(app: &mut App, delta: isize) {
    if let Some(list) = app.finder.open.as_mut() {
        let last = list.matches.hits.len().saturating_sub(1);
        list.selected = list.selected.saturating_add_signed(delta).min(last);
    }
}

/// The selected entry's path and whether it is a folder.
pub fn selected_path(app: &App) -> Option<(&str, bool)> {
    let list = app.finder.open.as_ref()?;
    let hit = list.matches.hits.get(list.selected)?;
    let entry = app.finder.index.as_ref()?.entries.get(hit.entry)?;
    Some((entry.path.as_str(), entry.is_dir))
}

/// Tab or Enter: put the selected path in place of the `@word`. A file gets a space after
/// it and closes the list; a folder keeps it open, listing what is inside.
fn insert(app: &mut App, now: Instant, effects: &mut Vec<Effect>) {
    let Some((path, is_dir)) = selected_path(app).map(|(p, d)| (p.to_string(), d)) else {
        // Nothing to insert (no match yet): the list closes, the text stays.
        if let Some(list) = app.finder.open.take() {
            app.finder.dismissed = Some((list.row, list.at));
        }
        return;
    };
    let Some(word) = word_at_cursor(app) else {
        app.finder.open = None;
        return;
    };
    let textarea = &mut app.composer.textarea;
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
    app.hint = None;
    app.finder.open = None;
    sync(app, now, effects);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::state::SessionInfo;
    use tui_textarea::TextArea;

    fn app_with(text: &str, col: usize) -> App {
        let mut app = App::new(SessionInfo::default(), 1000);
        app.composer.textarea = TextArea::from([text]);
        app.composer
            .textarea
            .move_cursor(CursorMove::Jump(0, col as u16));
        app
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
