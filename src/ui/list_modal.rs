//! The frame both pickers (`/resume`, `/model`) draw in: a centred, rounded box titled
//! "Title (12)" or "(3 of 12)" while filtered, the filter line (a placeholder while empty),
//! room for a header and the rows, and the key hints on the last line, cut to fit. The
//! picker draws its own header and rows into what [`ListModal::frame`] returns.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::layout::{centred, framed, modal_width};
use super::sanitize::sanitize;
use super::theme;
use super::wrap::{truncate, width};

/// What a picker shows around its rows.
pub struct ListModal<'a> {
    pub title: &'a str,
    /// Rows shown (after filtering) and in all.
    pub shown: usize,
    pub total: usize,
    pub filter: &'a str,
    /// What the empty filter line says to type.
    pub placeholder: &'a str,
    /// Rows to make room for (the frame takes at most what the screen allows).
    pub rows: usize,
    /// (keys, what they do), in order; the ones that do not fit are left out.
    pub keys: &'a [(String, &'a str)],
    pub max_width: u16,
}

/// Where the picker draws: the box's inside, the text width, the line for its header (the
/// rows follow it) and how many rows fit.
pub struct ListArea {
    pub inner: Rect,
    pub text_w: usize,
    pub header_y: u16,
    pub rows_h: usize,
}

impl ListArea {
    /// Draw `line` at `y` when it is inside the box.
    pub fn put(&self, buf: &mut Buffer, line: &Line<'_>, y: u16) {
        if y < self.inner.bottom() {
            buf.set_line(self.inner.x, y, line, self.inner.width);
        }
    }

    /// The selected row (within `len`) and the first row shown so it stays in view.
    pub fn window(&self, selected: usize, len: usize) -> (usize, usize) {
        let selected = selected.min(len.saturating_sub(1));
        (selected, (selected + 1).saturating_sub(self.rows_h))
    }
}

/// `text` padded (or cut) to exactly `w` columns, on the left or the right.
pub fn fit(text: &str, w: usize, right: bool) -> String {
    let text = truncate(text, w);
    let pad = " ".repeat(w.saturating_sub(width(&text)));
    if right {
        format!("{pad}{text}")
    } else {
        format!("{text}{pad}")
    }
}

impl ListModal<'_> {
    /// Draw the box, the filter line and the keys; `None` when there is no room inside.
    pub fn frame(&self, area: Rect, buf: &mut Buffer) -> Option<ListArea> {
        let (modal_w, text_w) = modal_width(area.width, self.max_width);
        // Borders 2, filter 1, blank 1, header 1, blank 1, keys 1.
        let chrome: u16 = 7;
        let max_h = area.height.saturating_sub(2).max(area.height.min(8));
        let rows_room = usize::from(max_h.saturating_sub(chrome).max(1));
        let rows_h = self.rows.clamp(1, rows_room);
        let rect = centred(area, modal_w, chrome + rows_h as u16);
        let count = if self.filter.trim().is_empty() {
            format!("({})", self.total)
        } else {
            format!("({} of {})", self.shown, self.total)
        };
        let block = super::layout::modal_block(Line::from(vec![
            Span::styled(format!(" {} ", self.title), theme::TITLE),
            Span::styled(format!("{count} "), theme::DIM),
        ]));
        let inner = framed(block, rect, buf, true);
        if inner.is_empty() {
            return None;
        }
        let list = ListArea {
            inner,
            text_w: text_w.min(usize::from(inner.width)),
            header_y: inner.y + 2,
            rows_h,
        };
        let filter = sanitize(self.filter).replace('\n', " ");
        let filter_line = if filter.is_empty() {
            Line::from(vec![
                Span::styled("filter ", theme::DIM),
                Span::styled("▏", theme::HINT),
                Span::styled(self.placeholder.to_string(), theme::DIM),
            ])
        } else {
            let shown = truncate(&filter, list.text_w.saturating_sub(9));
            Line::from(vec![
                Span::styled("filter ", theme::DIM),
                Span::styled(shown, theme::STRONG),
                Span::styled("▏", theme::HINT),
            ])
        };
        list.put(buf, &filter_line, inner.y);
        let mut spans = Vec::new();
        let mut used = 0;
        for (i, (key, what)) in self.keys.iter().enumerate() {
            let sep = if i == 0 { "" } else { " · " };
            let w = width(sep) + width(key) + 1 + width(what);
            if used + w > list.text_w {
                break;
            }
            used += w;
            spans.push(Span::styled(sep, theme::DIM));
            spans.push(Span::styled(key.clone(), theme::HINT));
            spans.push(Span::styled(format!(" {what}"), theme::DIM));
        }
        list.put(buf, &Line::from(spans), inner.bottom().saturating_sub(1));
        Some(list)
    }
}
