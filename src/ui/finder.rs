//! The `@` file finder's list, drawn just above the input box over the transcript: a
//! rounded box titled with the query's match count, up to [`ROWS`] paths (the matched
//! characters highlighted, folders dimmed with their `/`, the selected row reversed), or
//! "indexing…" while the first scan runs, or "no matching files".

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};

use super::sanitize::sanitize;
use super::theme;
use super::wrap::truncate;
use crate::app::finder::{FinderState, ROWS};

/// The list, placed above `input` (the input box's rectangle) within `area`.
pub struct FinderPopup<'a> {
    pub finder: &'a FinderState,
    pub input: Rect,
}

impl FinderPopup<'_> {
    /// The box's rectangle: the input box's width (at most 72 columns), its rows above it.
    pub fn rect(&self, rows: usize) -> Rect {
        let height = (rows as u16 + 2).min(self.input.y);
        Rect {
            x: self.input.x,
            y: self.input.y.saturating_sub(height),
            width: self.input.width.min(72),
            height,
        }
    }
}

impl Widget for FinderPopup<'_> {
    fn render(self, _area: Rect, buf: &mut Buffer) {
        let Some(list) = &self.finder.open else {
            return;
        };
        let hits = &list.matches.hits;
        let message = match &self.finder.index {
            None => Some("indexing…".to_string()),
            Some(_) if hits.is_empty() => Some(if self.finder.scanning {
                "indexing…".to_string()
            } else {
                "no matching files".to_string()
            }),
            Some(_) => None,
        };
        let rows = if message.is_some() {
            1
        } else {
            hits.len().min(ROWS)
        };
        let rect = self.rect(rows);
        if rect.height < 3 || rect.width < 12 {
            return;
        }
        Clear.render(rect, buf);
        let mut title = match (&self.finder.index, message.is_some()) {
            (Some(index), false) => {
                let total = list.matches.total;
                let mut t = format!(" @ {} of {} ", hits.len().min(total), total);
                if index.truncated {
                    t.push_str(&format!("(index cut at {}) ", index.entries.len()));
                }
                t
            }
            _ => " @ files ".to_string(),
        };
        if self.finder.scanning && message.is_none() {
            title.push_str("(rescanning) ");
        }
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(theme::HINT)
            .title(Span::styled(title, theme::DIM));
        let inner = block.inner(rect);
        block.render(rect, buf);
        let width = usize::from(inner.width.saturating_sub(2));
        if let Some(message) = message {
            let line = Line::from(Span::styled(format!(" {message}"), theme::DIM));
            buf.set_line(inner.x, inner.y, &line, inner.width);
            return;
        }
        let Some(index) = &self.finder.index else {
            return;
        };
        let visible = usize::from(inner.height).clamp(1, ROWS);
        let first = (list.selected + 1).saturating_sub(visible);
        for (row, hit) in hits.iter().enumerate().skip(first).take(visible) {
            let Some(entry) = index.entries.get(hit.entry) else {
                continue;
            };
            let selected = row == list.selected;
            let base = if entry.is_dir {
                theme::DIM
            } else {
                theme::TEXT
            };
            let path = truncate(&sanitize(&entry.path), width);
            let mut spans = vec![Span::raw(" ")];
            for (i, c) in path.chars().enumerate() {
                let style = if hit.positions.binary_search(&(i as u32)).is_ok() {
                    theme::FINDER_MATCH
                } else {
                    base
                };
                spans.push(Span::styled(c.to_string(), style));
            }
            let mut line = Line::from(spans);
            if selected {
                line = line.patch_style(theme::SELECTED);
            }
            let y = inner.y + (row - first) as u16;
            if selected {
                buf.set_style(
                    Rect {
                        y,
                        height: 1,
                        ..inner
                    },
                    theme::SELECTED,
                );
            }
            buf.set_line(inner.x, y, &line, inner.width);
        }
    }
}
