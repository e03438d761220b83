//! The input box: tui-textarea's own widget inside a border that grows with its lines (up
//! to [`MAX_LINES`]), and says how many messages wait for the end of the turn.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Widget};

use super::theme;
use crate::app::composer::Composer;

/// The most lines the box grows to; beyond, the text area scrolls.
pub const MAX_LINES: u16 = 8;

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
            block = block.title_top(
                Line::from(vec![Span::styled(
                    format!(" {queued} message{plural} queued for the end of the turn "),
                    theme::WARNING,
                )])
                .right_aligned(),
            );
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
