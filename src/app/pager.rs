//! The transcript pager as a layer: the whole transcript over the dashboard, every tool
//! output, diff, subagent's calls, reasoning and handoff note expanded, as Claude Code's
//! transcript view (Ctrl+O there; Alt-O or F4 here, since Ctrl-O expands the last output in
//! place).
//!
//! It opens at the end and scrolls like the transcript pane (the keymap's `pager` mode:
//! Up/Down or k/j a line, PgUp/PgDn or b/Space a page, Home/End or g/G the ends; the
//! wheel), through the same [`Scroll`] and from what the last frame showed, so the update
//! step never measures a cell; q, Esc or the key that opened it closes it. What it
//! draws follows the screen: the renderer lays out only the cells in view (and keeps the
//! heights it measured, per cell and version, in [`PagerLayout`]). A leaf: its scroll and
//! that cache are all it owns; the cells are the transcript's.

use std::cell::{Cell, RefCell};

use crossterm::event::{KeyEvent, KeyEventKind, MouseEvent, MouseEventKind};
use tui_textarea::TextArea;

use super::keymap::{keymap, Action, Mode};
use super::transcript::{scroll_down, scroll_up, Scroll, TOP};

/// Lines the mouse wheel scrolls by.
const WHEEL_LINES: usize = 3;

/// The keymap modes of the pager.
pub const MODES: &[Mode] = &[Mode::Pager];

/// What the footer names while the pager is on top.
pub const FOOTER: &[(Mode, Action)] = &[
    (Mode::Pager, Action::ClosePager),
    (Mode::Pager, Action::PageDown),
    (Mode::Pager, Action::ScrollTop),
];

/// The pager's view of the transcript.
#[derive(Debug, Default)]
pub struct Pager {
    pub scroll: Scroll,
    /// What the last frame showed (see the transcript's fields of the same names).
    pub shown_from_bottom: Cell<Option<usize>>,
    pub shown_from_top: Cell<Option<usize>>,
    /// The renderer's measurements, kept between frames.
    pub layout: RefCell<PagerLayout>,
}

/// What the renderer keeps between frames: each cell's height as laid out expanded (by
/// cell, with the version and width it was measured at), and the lines of the cells the
/// last frame drew, so scrolling inside a long output lays it out once.
#[derive(Debug, Default)]
pub struct PagerLayout {
    pub heights: Vec<Option<(u64, u16, usize)>>,
    pub drawn: Vec<DrawnCell>,
}

/// The lines of one cell as the pager last drew it.
#[derive(Debug)]
pub struct DrawnCell {
    pub index: usize,
    pub version: u64,
    pub width: u16,
    pub lines: std::rc::Rc<Vec<ratatui::text::Line<'static>>>,
}

/// What a key or the wheel in the pager leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PagerOutcome {
    Stay,
    Close,
}

impl Pager {
    /// A key while the pager is up; `rows` is the terminal's height (a page is the pager's
    /// height less a line of overlap), `input` the input box (the keymap's conditions).
    pub fn handle_key(&mut self, key: &KeyEvent, rows: u16, input: &TextArea<'_>) -> PagerOutcome {
        if key.kind == KeyEventKind::Release {
            return PagerOutcome::Stay;
        }
        let page = usize::from(rows.saturating_sub(3).max(1));
        match keymap().action(MODES, key, input) {
            Some(Action::ClosePager) => return PagerOutcome::Close,
            Some(Action::ScrollUp) => self.up(1),
            Some(Action::ScrollDown) => self.down(1),
            Some(Action::PageUp) => self.up(page),
            Some(Action::PageDown) => self.down(page),
            Some(Action::ScrollTop) => {
                self.scroll = Scroll {
                    from_bottom: TOP,
                    follow: false,
                    from_top: Some(0),
                }
            }
            Some(Action::ScrollBottom) => self.scroll = Scroll::default(),
            _ => {}
        }
        PagerOutcome::Stay
    }

    /// The wheel scrolls.
    pub fn mouse(&mut self, mouse: &MouseEvent) {
        match mouse.kind {
            MouseEventKind::ScrollUp => self.up(WHEEL_LINES),
            MouseEventKind::ScrollDown => self.down(WHEEL_LINES),
            _ => {}
        }
    }

    fn shown(&self) -> (Option<usize>, Option<usize>) {
        (self.shown_from_bottom.get(), self.shown_from_top.get())
    }

    fn up(&mut self, lines: usize) {
        let shown = self.shown();
        scroll_up(&mut self.scroll, shown, lines);
    }

    fn down(&mut self, lines: usize) {
        let shown = self.shown();
        scroll_down(&mut self.scroll, shown, lines);
    }
}
