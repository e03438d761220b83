//! The help layer (`crate::app::help`): the commands and the keys in a box over the
//! dashboard, scrolled, with its own keys on the last line.
//!
//! A section's title (a line that does not start with a space) is bold; its rows are
//! wrapped under their indent. The text passes through the sanitizer (custom commands'
//! descriptions come from the project's files). A text taller than the box scrolls; the
//! keys line stays, with how many lines are below.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::layout::{keys_line, scrolling_text_modal};
use super::sanitize::sanitize;
use super::theme;
use super::wrap::{width, wrap_into, WrapMode};
use crate::app::help::{HelpView, FOOTER};

/// The widest the box gets.
const MAX_WIDTH: u16 = 100;

/// The text at `text_w` columns.
pub fn body_lines(help: &HelpView, text_w: usize) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for line in &help.lines {
        let line = sanitize(line).into_owned();
        let indent = line.len() - line.trim_start().len();
        let style = if indent == 0 {
            theme::STRONG
        } else {
            theme::TEXT
        };
        // A row's continuation lines go under its description (after the first two
        // spaces past its name or keys), else a little in from its text.
        let hang = " ".repeat(hang_of(&line, indent).min(text_w / 2));
        wrap_into(
            &[Span::styled(line, style)],
            text_w,
            &[],
            &[Span::raw(hang)],
            WrapMode::Words,
            &mut out,
        );
    }
    out
}

/// Where a row's description starts: after the run of two or more spaces that ends its
/// name or keys; `indent + 2` when there is none.
fn hang_of(line: &str, indent: usize) -> usize {
    let row = &line[indent..];
    match row.find("  ") {
        Some(at) => {
            let gap = row[at..].len() - row[at..].trim_start().len();
            indent + width(&row[..at]) + gap
        }
        None => indent + 2,
    }
}

impl Widget for &HelpView {
    fn render(self, area: Rect, buf: &mut Buffer) {
        scrolling_text_modal(
            area,
            buf,
            MAX_WIDTH,
            Span::styled(" Help ", theme::TITLE),
            self.scroll,
            |text_w| body_lines(self, text_w),
            |text_w| keys_line(FOOTER, text_w, "Esc close"),
        );
    }
}
