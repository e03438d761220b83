//! The help layer: `/help` and F1 open it over the dashboard, with the slash commands, the
//! custom ones and every mode's keys as the keymap in force has them (a user's rebinding
//! shows), drawn by `crate::ui::help`. Nothing goes into the transcript.
//!
//! While open it takes every key: the keymap's `help` bindings scroll it (Up/Down, PgUp/PgDn,
//! Home/End) and close it (Esc, q, F1, Ctrl-C); other keys do nothing. A leaf: the text,
//! made when it opened, and the scroll are all it knows.

use crossterm::event::{KeyEvent, KeyEventKind, MouseEvent};
use tui_textarea::TextArea;

use super::keymap::{keymap, Action, Mode};
use super::text_scroll;

/// The keymap modes the layer consults.
pub const MODES: &[Mode] = &[Mode::Help];

/// What the footer names while the layer is on top.
pub const FOOTER: &[(Mode, Action)] = &[
    (Mode::Help, Action::CloseHelp),
    (Mode::Help, Action::PageDown),
    (Mode::Help, Action::PageUp),
];

/// The help text, and how far it is scrolled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelpView {
    /// The text, a line each (`super::commands::help_text_with` made it).
    pub lines: Vec<String>,
    /// Lines scrolled past (the drawing keeps the last page in view).
    pub scroll: u16,
}

/// What a key in the layer leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HelpOutcome {
    /// Nothing to tell the router (the text may have scrolled).
    Stay,
    /// The layer closes.
    Close,
}

impl HelpView {
    /// The layer, open at the top of `text`.
    pub fn new(text: &str) -> HelpView {
        HelpView {
            lines: text.lines().map(str::to_string).collect(),
            scroll: 0,
        }
    }

    /// A key while the layer is open; `rows` is the terminal's height (a page is half of
    /// it), `input` the input box, which the keymap's conditions read.
    pub fn handle_key(&mut self, key: &KeyEvent, rows: u16, input: &TextArea<'_>) -> HelpOutcome {
        if key.kind == KeyEventKind::Release {
            return HelpOutcome::Stay;
        }
        match keymap().action(MODES, key, input) {
            Some(Action::CloseHelp) => return HelpOutcome::Close,
            Some(action) => {
                let most = self.most_scroll();
                text_scroll::act(&mut self.scroll, action, rows, most);
            }
            None => {}
        }
        HelpOutcome::Stay
    }

    /// The mouse wheel scrolls the text.
    pub fn mouse(&mut self, mouse: &MouseEvent) {
        let most = self.most_scroll();
        text_scroll::wheel(&mut self.scroll, mouse, most);
    }

    /// A bound for the scroll: the text's lines (the drawing, which knows the height and
    /// the wrapping, keeps the last page in view).
    fn most_scroll(&self) -> u16 {
        u16::try_from(self.lines.len()).unwrap_or(u16::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyModifiers};

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn it_scrolls_within_its_text_and_closes_on_its_keys() {
        let input = TextArea::default();
        let mut help = HelpView::new("one\ntwo\nthree");
        assert_eq!(help.lines.len(), 3);
        assert_eq!(
            help.handle_key(&key(KeyCode::Down), 24, &input),
            HelpOutcome::Stay
        );
        assert_eq!(help.scroll, 1);
        help.handle_key(&key(KeyCode::PageDown), 24, &input);
        assert_eq!(help.scroll, 3, "no further than the text");
        help.handle_key(&key(KeyCode::Home), 24, &input);
        assert_eq!(help.scroll, 0);
        help.handle_key(&key(KeyCode::Char('x')), 24, &input);
        assert_eq!(help.scroll, 0, "other keys do nothing");
        for close in [KeyCode::Esc, KeyCode::Char('q'), KeyCode::F(1)] {
            assert_eq!(help.handle_key(&key(close), 24, &input), HelpOutcome::Close);
        }
    }
}
