//! The input box: tui-textarea's own widget inside a border that grows with its lines (up
//! to [`MAX_LINES`]) and says how many messages are queued and the key that takes the last
//! back; above it, the queued messages themselves ([`QueueList`]), a dim line each.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Widget};

use super::sanitize::sanitize;
use super::theme;
use super::wrap::truncate;
use crate::app::composer::Composer;
use crate::app::keymap::{keymap, Action, Mode};

/// The most lines the box grows to; beyond, the text area scrolls.
pub const MAX_LINES: u16 = 8;
/// The most rows the queued messages take above the box; more are counted on the first.
pub const MAX_QUEUE_ROWS: usize = 3;

/// Rows the queued messages take above the box.
pub fn queue_height(composer: &Composer) -> u16 {
    composer.queued.len().min(MAX_QUEUE_ROWS) as u16
}

/// The messages queued while the agent works, oldest first, a line each (the first line of
/// each, as the user typed it: a paste as its placeholder); beyond [`MAX_QUEUE_ROWS`] the
/// first row counts the older ones.
pub struct QueueList<'a> {
    pub composer: &'a Composer,
}

impl Widget for QueueList<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let queued = &self.composer.queued;
        let rows = usize::from(area.height).min(queued.len());
        if rows == 0 {
            return;
        }
        let w = usize::from(area.width);
        let mut lines = Vec::new();
        let mut shown = &queued[queued.len() - rows..];
        if queued.len() > rows {
            let older = queued.len() - rows + 1;
            lines.push(format!("  … {older} more queued"));
            shown = &shown[1..];
        }
        for sent in shown {
            let text = self.composer.shown(sent);
            let first = sanitize(text.lines().next().unwrap_or_default()).into_owned();
            let more = if text.lines().nth(1).is_some() {
                " …"
            } else {
                ""
            };
            lines.push(format!("  ↳ {first}{more}"));
        }
        for (y, line) in (area.y..area.bottom()).zip(lines) {
            buf.set_string(area.x, y, truncate(&line, w), theme::DIM);
        }
    }
}

/// Rows the box takes, borders included.
pub fn height(composer: &Composer) -> u16 {
    let lines = composer
        .textarea
        .lines()
        .len()
        .clamp(1, usize::from(MAX_LINES));
    lines as u16 + 2
}

/// The box, drawn with `busy` telling whether a send is queued instead of sent.
pub struct InputBox<'a> {
    pub composer: &'a Composer,
    pub busy: bool,
}

impl Widget for InputBox<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let queued = self.composer.queued.len();
        let mut block = Block::default()
            .borders(Borders::ALL)
            .border_style(if self.busy { theme::DIM } else { theme::BORDER });
        if queued > 0 {
            let plural = if queued == 1 { "" } else { "s" };
            let key = keymap()
                .keys_for(Mode::Composer, Action::Unqueue)
                .and_then(|keys| keys.split('/').next().map(str::to_string));
            let title = match key {
                Some(key) => format!(" {queued} message{plural} queued · {key} edits the last "),
                None => format!(" {queued} message{plural} queued "),
            };
            block = block
                .title_top(Line::from(vec![Span::styled(title, theme::WARNING)]).right_aligned());
        }
        let inner = block.inner(area);
        block.render(area, buf);
        let inner = padded(inner);
        (&self.composer.textarea).render(inner, buf);
    }
}

/// `inner` less one column of padding after the border (the input box and what is drawn
/// over it).
pub fn padded(inner: Rect) -> Rect {
    Rect {
        x: inner.x.saturating_add(1).min(inner.right()),
        width: inner.width.saturating_sub(1),
        ..inner
    }
}
