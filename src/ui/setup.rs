//! The first-run screen: with no model configured, the transcript's place explains how to
//! set one (the text comes from the front end, `SessionInfo::setup`).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Widget};

use super::layout::framed;
use super::sanitize::sanitize;
use super::theme;
use super::wrap::{wrap_into, WrapMode};

/// The explanation, in a frame, each paragraph wrapped with its own hanging indent (so a
/// bullet's continuation lines sit under its text).
pub struct SetupScreen<'a> {
    pub text: &'a str,
}

impl Widget for SetupScreen<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(theme::HINT)
            .title(Span::styled(" Welcome to rein ", theme::HEADING));
        let inner = framed(block, area, buf, false);
        if inner.is_empty() {
            return;
        }
        let text = sanitize(self.text);
        let mut lines: Vec<Line<'static>> = Vec::new();
        for line in text.split('\n') {
            let body = line.trim_start_matches([' ', '•', '-', '*']);
            let indent = crate::ui::wrap::width(&line[..line.len() - body.len()]);
            let rest = [Span::raw(" ".repeat(indent))];
            wrap_into(
                &[Span::styled(line, theme::TEXT)],
                usize::from(inner.width),
                &[],
                &rest,
                WrapMode::Words,
                &mut lines,
            );
        }
        for (y, line) in lines.iter().take(usize::from(inner.height)).enumerate() {
            buf.set_line(inner.x, inner.y + y as u16, line, inner.width);
        }
    }
}
