//! The session picker as a layer: `/resume` (or `rein --resume` with no id) opens it over the
//! dashboard; while it is open it takes every key, and choosing a session comes back as
//! [`PickerOutcome::Resume`] (the router asks the loop to load the file and restart the
//! agent on it; the picker never touches the disk). A leaf: it knows only its own state.
//!
//! In: the sessions the loop listed, with the time they were listed at (ages are relative
//! to it, so drawing stays a pure function of the state). States: open with a filter and a
//! selection, or closed. Typing filters (case-insensitive, over title, project and id),
//! Up/Down/PgUp/PgDn/Home/End move, Enter resumes the selected session, Esc or Ctrl-C
//! closes and leaves the current session as it is. A session another rein has open is
//! marked so; choosing it goes on in a copy (the loop forks it), since two writers on one
//! file would interleave their turns.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crossterm::event::{KeyEvent, KeyEventKind, MouseEvent, MouseEventKind};

use super::input::{edit_filter, paste_line};
use super::keymap::{keymap, Action, Mode};
use rein_core::session::{MessageCount, SessionSummary};

/// What the loop found when asked to list sessions (`Effect::OpenPicker`).
#[derive(Debug, Clone)]
pub struct SessionList {
    /// Most recently updated first, as [`rein_core::session::list`] returns them.
    pub sessions: Vec<SessionSummary>,
    /// When the list was read: the ages shown are relative to this.
    pub now: SystemTime,
    /// The home directory, shown as `~` in project paths.
    pub home: Option<PathBuf>,
    /// The session file this dashboard records into, left out of the list.
    pub current: Option<PathBuf>,
}

/// The open picker.
#[derive(Debug, Clone)]
pub struct Picker {
    /// The sessions that can be resumed, newest first.
    pub sessions: Vec<SessionSummary>,
    /// What the user typed to narrow the list.
    pub filter: String,
    /// The selected row, an index into [`Picker::matches`].
    pub selected: usize,
    pub now: SystemTime,
    pub home: Option<PathBuf>,
}

/// Shown instead of opening the picker when there is nothing to resume.
pub const NOTHING_TO_RESUME: &str = "no earlier sessions to resume";

/// Rows the mouse wheel moves the selection by.
const WHEEL_ROWS: usize = 3;

impl Picker {
    /// A picker over `list`, leaving out the current session and sessions with no messages
    /// (a dashboard opened and closed without a word). `None` when nothing is left.
    pub fn open(list: SessionList) -> Option<Picker> {
        let current = list.current.as_deref();
        let sessions: Vec<SessionSummary> = list
            .sessions
            .into_iter()
            .filter(|s| s.messages != MessageCount::Exact(0))
            .filter(|s| current != Some(s.path.as_path()))
            .collect();
        (!sessions.is_empty()).then_some(Picker {
            sessions,
            filter: String::new(),
            selected: 0,
            now: list.now,
            home: list.home,
        })
    }

    /// The sessions the filter lets through, in list order.
    pub fn matches(&self) -> Vec<&SessionSummary> {
        let needle = self.filter.trim().to_lowercase();
        self.sessions
            .iter()
            .filter(|s| needle.is_empty() || self.haystack(s).contains(&needle))
            .collect()
    }

    /// The selected session, if any matches.
    pub fn selected_session(&self) -> Option<&SessionSummary> {
        self.matches().get(self.selected).copied()
    }

    /// What the filter is matched against: title, project (as shown and in full), id.
    fn haystack(&self, s: &SessionSummary) -> String {
        format!(
            "{}\n{}\n{}\n{}",
            s.title.as_deref().unwrap_or(""),
            self.project_label(&s.project),
            s.project.display(),
            s.id
        )
        .to_lowercase()
    }

    /// A project path with the home directory as `~`.
    pub fn project_label(&self, project: &Path) -> String {
        rein_core::text::shorten_home(project, self.home.as_deref())
    }

    /// "just now", "3 min ago", "2 days ago": how long ago `s` was last written.
    pub fn age(&self, s: &SessionSummary) -> String {
        age(self.now.duration_since(s.updated).unwrap_or(Duration::ZERO))
    }

    fn move_by(&mut self, delta: isize) {
        let n = self.matches().len();
        if n == 0 {
            self.selected = 0;
            return;
        }
        let last = n - 1;
        self.selected = self.selected.saturating_add_signed(delta).min(last);
    }
}

/// An age in words, coarse: the picker needs "which one", not a timestamp.
pub fn age(d: Duration) -> String {
    let s = d.as_secs();
    let plural = |n: u64, unit: &str| {
        if n == 1 {
            format!("1 {unit} ago")
        } else {
            format!("{n} {unit}s ago")
        }
    };
    match s {
        0..60 => "just now".to_string(),
        60..3600 => format!("{} min ago", s / 60),
        3600..86_400 => plural(s / 3600, "hour"),
        86_400..2_592_000 => plural(s / 86_400, "day"),
        2_592_000..31_536_000 => plural(s / 2_592_000, "month"),
        _ => plural(s / 31_536_000, "year"),
    }
}

/// What a key, paste or wheel turn in the picker leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickerOutcome {
    /// The picker stays open (its filter or selection may have changed).
    Stay,
    /// Esc: close it, nothing changes.
    Close,
    /// Enter: resume this session (the router closes the picker, unless a turn runs).
    Resume(PathBuf),
}

impl Picker {
    /// A key while the picker is open; `page` is the rows a page moves.
    pub fn handle_key(&mut self, key: &KeyEvent, page: usize) -> PickerOutcome {
        if key.kind == KeyEventKind::Release {
            return PickerOutcome::Stay;
        }
        let action = keymap().lookup(MODES, key).next().map(|b| b.action);
        let Some(action) = action else {
            if edit_filter(&mut self.filter, key) {
                self.selected = 0;
            }
            return PickerOutcome::Stay;
        };
        match action {
            Action::ClosePicker => return PickerOutcome::Close,
            Action::Resume => {
                if let Some(s) = self.selected_session() {
                    return PickerOutcome::Resume(s.path.clone());
                }
            }
            Action::ScrollUp => self.move_by(-1),
            Action::ScrollDown => self.move_by(1),
            Action::PageUp => self.move_by(-(page as isize)),
            Action::PageDown => self.move_by(page as isize),
            Action::ScrollTop => self.selected = 0,
            Action::ScrollBottom => self.move_by(isize::MAX),
            Action::ClearFilter => {
                self.filter.clear();
                self.selected = 0;
            }
            _ => {}
        }
        PickerOutcome::Stay
    }

    /// A paste goes into the filter, as one line.
    pub fn paste(&mut self, text: &str) {
        self.filter.push_str(&paste_line(text));
        self.selected = 0;
    }

    /// The mouse wheel moves the selection.
    pub fn mouse(&mut self, mouse: &MouseEvent) {
        match mouse.kind {
            MouseEventKind::ScrollUp => self.move_by(-(WHEEL_ROWS as isize)),
            MouseEventKind::ScrollDown => self.move_by(WHEEL_ROWS as isize),
            _ => {}
        }
    }
}

/// The keymap modes the picker consults.
pub const MODES: &[Mode] = &[Mode::Picker];

/// What the footer names while the picker is on top.
pub const FOOTER: &[(Mode, Action)] = &[
    (Mode::Picker, Action::Resume),
    (Mode::Picker, Action::ClosePicker),
    (Mode::Picker, Action::ClearFilter),
];

/// "/resume waits for the turn to end (Esc interrupts it)".
pub fn busy_hint() -> String {
    let esc = keymap()
        .keys_for(Mode::Global, Action::Interrupt)
        .unwrap_or_else(|| "Esc".to_string());
    format!("/resume waits for the turn to end ({esc} interrupts it)")
}

/// Rows a page moves, for a terminal `height` rows high: the rows the modal shows, about
/// the terminal less its frame.
pub fn page(height: u16) -> usize {
    usize::from(height.saturating_sub(10)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_are_coarse_words() {
        assert_eq!(age(Duration::from_secs(5)), "just now");
        assert_eq!(age(Duration::from_secs(3 * 60 + 5)), "3 min ago");
        assert_eq!(age(Duration::from_secs(3600)), "1 hour ago");
        assert_eq!(age(Duration::from_secs(5 * 3600)), "5 hours ago");
        assert_eq!(age(Duration::from_secs(2 * 86_400 + 7)), "2 days ago");
        assert_eq!(age(Duration::from_secs(40 * 86_400)), "1 month ago");
        assert_eq!(age(Duration::from_secs(800 * 86_400)), "2 years ago");
    }
}
