//! The transcript pager: the whole frame, the transcript's cells with everything folded
//! laid out expanded (tool outputs held in memory, diffs, subagents' calls, reasoning,
//! handoff notes), a title saying so and the keys to leave.
//!
//! A frame lays out only the cells the view walks over ([`View::render`]): a folded cell's
//! expanded lines are made when it comes into view and kept while it stays there
//! ([`PagerLayout::drawn`]); its height is kept per cell and version
//! ([`PagerLayout::heights`]), so scrolling back over it measures nothing. Other cells'
//! lines are the transcript's own cache.
//!
//! [`PagerLayout::drawn`]: crate::app::pager::PagerLayout::drawn
//! [`PagerLayout::heights`]: crate::app::pager::PagerLayout::heights

use std::rc::Rc;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::layout::{framed, modal_block};
use super::theme;
use super::transcript::{cell_lines, expanded_cell_lines, folded, View};
use crate::app::keymap::{keymap, Action, Mode};
use crate::app::pager::{DrawnCell, Pager};
use crate::app::transcript::Cell;

/// The pager over the transcript's `cells`.
pub struct PagerModal<'a> {
    pub pager: &'a Pager,
    pub cells: &'a [Cell],
}

/// A cell's version, whatever its kind.
fn version(cell: &Cell) -> u64 {
    match cell {
        Cell::User(c) => c.version(),
        Cell::Assistant(c) => c.version(),
        Cell::Reasoning(c) => c.version(),
        Cell::Tool(c) => c.version(),
        Cell::Notice(c) => c.version(),
        Cell::Compaction(c) => c.version(),
    }
}

/// Lines of a cell as the pager shows it.
enum PagerLines<'c> {
    Cached(std::cell::Ref<'c, [Line<'static>]>),
    Expanded(Rc<Vec<Line<'static>>>),
}

impl std::ops::Deref for PagerLines<'_> {
    type Target = [Line<'static>];

    fn deref(&self) -> &[Line<'static>] {
        match self {
            PagerLines::Cached(lines) => lines,
            PagerLines::Expanded(lines) => lines,
        }
    }
}

impl Widget for PagerModal<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let close = keymap()
            .keys_for(Mode::Pager, Action::ClosePager)
            .unwrap_or_default();
        let block = modal_block(Line::from(vec![Span::styled(
            " Transcript, everything expanded ",
            theme::TITLE,
        )]))
        .title_bottom(
            Line::from(Span::styled(
                format!(" {close} closes · PgUp/PgDn · Home/End "),
                theme::HINT,
            ))
            .right_aligned(),
        );
        let inner = framed(block, area, buf, true);
        if inner.is_empty() {
            return;
        }
        let width = inner.width;
        let cells = self.cells;
        let mut layout = self.pager.layout.borrow_mut();
        layout.heights.resize(cells.len(), None);
        // The cells drawn by the last frame, to reuse; this frame's replace them.
        let last = std::mem::take(&mut layout.drawn);
        let expanded = |i: usize, drawn: &mut Vec<DrawnCell>| -> Rc<Vec<Line<'static>>> {
            let cell = &cells[i];
            let v = version(cell);
            let found = drawn
                .iter()
                .chain(last.iter())
                .find(|d| d.index == i && d.version == v && d.width == width)
                .map(|d| d.lines.clone());
            let lines = found.unwrap_or_else(|| Rc::new(expanded_cell_lines(cell, width)));
            if !drawn.iter().any(|d| d.index == i) {
                drawn.push(DrawnCell {
                    index: i,
                    version: v,
                    width,
                    lines: lines.clone(),
                });
            }
            lines
        };
        let layout = std::cell::RefCell::new(&mut *layout);
        let view = View {
            cells,
            scroll: &self.pager.scroll,
            shown_from_bottom: &self.pager.shown_from_bottom,
            shown_from_top: &self.pager.shown_from_top,
        };
        view.render(
            inner,
            buf,
            |i| {
                let cell = &cells[i];
                if !folded(cell) {
                    return cell_lines(cell, width).len();
                }
                let key = (version(cell), width);
                let mut layout = layout.borrow_mut();
                if let Some(Some((v, w, h))) = layout.heights.get(i) {
                    if (*v, *w) == key {
                        return *h;
                    }
                }
                // Measured once; the lines are not kept unless the cell is drawn.
                let h = expanded_cell_lines(cell, width).len();
                if let Some(slot) = layout.heights.get_mut(i) {
                    *slot = Some((key.0, key.1, h));
                }
                h
            },
            |i| {
                let cell = &cells[i];
                if !folded(cell) {
                    return PagerLines::Cached(cell_lines(cell, width));
                }
                let mut layout = layout.borrow_mut();
                PagerLines::Expanded(expanded(i, &mut layout.drawn))
            },
        );
    }
}
