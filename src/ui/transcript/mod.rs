//! The transcript pane: cells laid out into lines, only as many as the screen shows.
//!
//! Each cell renders to wrapped lines once per width and version and keeps them in its
//! [`RenderCache`](crate::app::transcript::RenderCache); the version is
//! [`Versioned::version`](crate::app::transcript::Versioned::version), which every change to a cell
//! (a status, a result, the `expanded` flag) bumps, so the key is the version alone. A
//! compaction shows its summary line and, folded, the size of its handoff note; expanded,
//! the note itself. Drawing walks up from the last cell, using each cell's cached height, until
//! the window `scroll.from_bottom` lines above the end is covered ([`window`]); the cells
//! above are never touched, so a frame costs the same with 20 cells or 20 000.
//! `from_bottom` is clamped to the real top here, and the clamped value is left in
//! [`Transcript::shown_from_bottom`] for the update step's next scroll.
//!
//! The cells' own lines are laid out in `cells` (and a tool call's in `tool`); this
//! module places them in the pane.

mod cells;
mod tool;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

pub use cells::{cell_lines, expanded_cell_lines, folded, gap};
pub use tool::status_mark;

use ratatui::text::Line;

use crate::app::transcript::{Cell, Scroll, Transcript};
use crate::ui::theme;

/// Which part of the transcript a view shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The topmost cell drawn.
    pub first: usize,
    /// Lines of that cell's block (its gap above, then its lines) above the view.
    pub skip: usize,
    /// `from_bottom`, clamped to what the transcript holds.
    pub from_bottom: usize,
}

/// The window of `height` lines ending `from_bottom` lines above the end of `count`
/// blocks, walking up from the last block and asking `block_height(i)` only for the
/// blocks it needs. A transcript shorter than the view starts at its top.
pub fn window(
    count: usize,
    height: usize,
    from_bottom: usize,
    mut block_height: impl FnMut(usize) -> usize,
) -> Window {
    let needed = from_bottom.saturating_add(height);
    let mut acc = 0usize;
    let mut first = count;
    while first > 0 && acc < needed {
        first -= 1;
        acc += block_height(first);
    }
    let from_bottom = if acc < needed {
        from_bottom.min(acc.saturating_sub(height))
    } else {
        from_bottom
    };
    Window {
        first,
        skip: acc.saturating_sub(from_bottom + height),
        from_bottom,
    }
}

/// The window of `height` lines starting `from_top` lines below the top of `count`
/// blocks, walking down from the first block and asking `block_height(i)` only for the
/// blocks down to the view's bottom (and one more, to know whether the end is near).
/// Returns it with `from_top` clamped when the end came first, and, when the walk
/// reached the end, how many lines are below the view.
pub fn window_from_top(
    count: usize,
    height: usize,
    from_top: usize,
    mut block_height: impl FnMut(usize) -> usize,
) -> (Window, usize, Option<usize>) {
    let needed = from_top.saturating_add(height);
    let mut heights = Vec::new();
    let mut acc = 0usize;
    while heights.len() < count && acc <= needed {
        let h = block_height(heights.len());
        heights.push(h);
        acc += h;
    }
    let reached_end = heights.len() == count;
    let from_top = if reached_end {
        from_top.min(acc.saturating_sub(height))
    } else {
        from_top
    };
    // The block holding line `from_top`.
    let mut above = 0usize;
    let mut first = 0usize;
    while first + 1 < heights.len() && above + heights[first] <= from_top {
        above += heights[first];
        first += 1;
    }
    let below = reached_end.then(|| acc.saturating_sub(from_top + height));
    (
        Window {
            first,
            skip: from_top - above.min(from_top),
            from_bottom: below.unwrap_or(0),
        },
        from_top,
        below,
    )
}

/// The block of cell `i`: the gap above it, then its lines.
fn block_height(cells: &[Cell], i: usize, height: impl FnOnce(usize) -> usize) -> usize {
    let gap = if i > 0 {
        gap(&cells[i - 1], &cells[i])
    } else {
        0
    };
    gap + height(i)
}

impl Widget for &Transcript {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let width = area.width;
        let view = View {
            cells: &self.cells,
            scroll: &self.scroll,
            shown_from_bottom: &self.shown_from_bottom,
            shown_from_top: &self.shown_from_top,
        };
        view.render(
            area,
            buf,
            |i| cell_lines(&self.cells[i], width).len(),
            |i| cell_lines(&self.cells[i], width),
        );
    }
}

/// A view of cells: the transcript pane's, or the pager's (which lays them out expanded).
pub struct View<'a> {
    pub cells: &'a [Cell],
    pub scroll: &'a Scroll,
    /// Where the frame showed the view, for the update step's next scroll.
    pub shown_from_bottom: &'a std::cell::Cell<Option<usize>>,
    pub shown_from_top: &'a std::cell::Cell<Option<usize>>,
}

impl View<'_> {
    /// Draw the lines in view: `height(i)` is cell `i`'s line count, `lines(i)` its lines,
    /// each asked only of the cells the window walks over.
    pub fn render<L: std::ops::Deref<Target = [Line<'static>]>>(
        &self,
        area: Rect,
        buf: &mut Buffer,
        mut height: impl FnMut(usize) -> usize,
        mut lines: impl FnMut(usize) -> L,
    ) {
        if area.is_empty() {
            return;
        }
        let cells = self.cells;
        let view_height = usize::from(area.height);
        // Anchored at the top, the label cannot count what lies below without laying it
        // all out: it says so without a number until the view nears the end.
        let (win, label) = match self.scroll.from_top {
            Some(n) => {
                let (win, from_top, below) = window_from_top(cells.len(), view_height, n, |i| {
                    block_height(cells, i, &mut height)
                });
                // Only a view clamped at the end says where it was: an unclamped one is
                // where the scroll put it, however many keys moved it since this frame.
                self.shown_from_top.set((from_top < n).then_some(from_top));
                self.shown_from_bottom.set(below);
                let label = match below {
                    Some(0) => None,
                    Some(b) => Some(format!(" ↓ {b} more lines (End) ")),
                    None => Some(" ↓ more (End) ".to_string()),
                };
                (win, label)
            }
            None => {
                let win = window(cells.len(), view_height, self.scroll.from_bottom, |i| {
                    block_height(cells, i, &mut height)
                });
                self.shown_from_top.set(None);
                self.shown_from_bottom.set(Some(win.from_bottom));
                let label = (win.from_bottom > 0)
                    .then(|| format!(" ↓ {} more lines (End) ", win.from_bottom));
                (win, label)
            }
        };
        let mut skip = win.skip;
        let mut y = area.top();
        for i in win.first..cells.len() {
            let gap = if i > 0 {
                gap(&cells[i - 1], &cells[i])
            } else {
                0
            };
            for _ in 0..gap {
                if skip > 0 {
                    skip -= 1;
                } else {
                    y += 1;
                }
            }
            if y >= area.bottom() {
                break;
            }
            let lines = lines(i);
            // Skipping into a slice is free, however long the cell.
            let from = skip.min(lines.len());
            skip -= from;
            let room = usize::from(area.bottom() - y);
            for line in lines[from..].iter().take(room) {
                crate::ui::lines::set_line(buf, area.left(), y, line, area.width);
                y += 1;
            }
        }
        if let Some(label) = label {
            let w = super::wrap::width(&label) as u16;
            if w <= area.width {
                buf.set_string(
                    area.right() - w,
                    area.bottom() - 1,
                    label,
                    theme::HINT.add_modifier(ratatui::style::Modifier::REVERSED),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::transcript::ToolStatus;
    use ratatui::text::Line;
    use std::time::{Duration, Instant};

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn window_at_the_bottom_touches_only_visible_blocks() {
        let mut asked = Vec::new();
        let win = window(20_000, 10, 0, |i| {
            asked.push(i);
            3
        });
        assert_eq!(asked, [19_999, 19_998, 19_997, 19_996]);
        assert_eq!(
            win,
            Window {
                first: 19_996,
                skip: 2,
                from_bottom: 0
            }
        );
    }

    #[test]
    fn window_scrolled_up() {
        // Blocks of 5 lines; a view of 4 ending 12 lines above the end needs the last 16
        // lines: blocks 16..20 (20 lines), the first 4 of them above the view.
        let win = window(20, 4, 12, |_| 5);
        assert_eq!(
            win,
            Window {
                first: 16,
                skip: 4,
                from_bottom: 12
            }
        );
    }

    #[test]
    fn window_clamps_past_the_top() {
        let win = window(3, 4, 1_000, |_| 2);
        assert_eq!(
            win,
            Window {
                first: 0,
                skip: 0,
                from_bottom: 2
            }
        );
        // Shorter than the view: starts at the top.
        let win = window(2, 10, 0, |_| 2);
        assert_eq!(
            win,
            Window {
                first: 0,
                skip: 0,
                from_bottom: 0
            }
        );
    }

    #[test]
    fn tool_cell_folds_its_result() {
        let mut cell = Cell::tool("1", "bash", "cargo test", Instant::now());
        if let Cell::Tool(t) = &mut cell {
            t.status = ToolStatus::Done { approved: true };
            t.duration = Some(Duration::from_millis(1234));
            t.result = Some("a\nb\nc\nd\ne\n".into());
        }
        assert_eq!(
            texts(&cell_lines(&cell, 40)),
            [
                "✓ bash cargo test · approved · 1.2s",
                "  │ a",
                "  │ b",
                "  │ c",
                "  … 2 more lines (Ctrl-O)"
            ]
        );
        // Expanding changes the key, so the cache is not reused.
        if let Cell::Tool(t) = &mut cell {
            t.expanded = true;
        }
        assert_eq!(cell_lines(&cell, 40).len(), 6);
    }

    #[test]
    fn long_key_argument_is_cut_to_the_line() {
        let cell = Cell::tool("1", "bash", "x".repeat(100), Instant::now());
        let lines = cell_lines(&cell, 30);
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].width(), 30);
        assert!(texts(&lines)[0].ends_with('…'));
    }

    #[test]
    fn reasoning_collapses_to_one_line() {
        let mut cell = Cell::reasoning("one\ntwo\nthree", true);
        assert_eq!(
            texts(&cell_lines(&cell, 60)),
            ["∴ thinking… (3 lines, Alt-R)"]
        );
        if let Cell::Reasoning(r) = &mut cell {
            r.expanded = true;
        }
        assert_eq!(texts(&cell_lines(&cell, 60)), ["∴ one", "  two", "  three"]);
    }

    #[test]
    fn caches_are_kept_per_width() {
        let cell = Cell::user("hello there, this wraps at a small width");
        let a = cell_lines(&cell, 12).len();
        let b = cell_lines(&cell, 80).len();
        assert!(a > b);
        if let Cell::User(u) = &cell {
            assert_eq!(u.cache.0.borrow().as_ref().unwrap().width, 80);
        }
    }

    #[test]
    fn a_window_from_the_top_asks_only_for_the_blocks_down_to_the_view() {
        // 1 000 blocks of 3 lines; a view of 10 lines 7 lines below the top.
        let mut asked = 0;
        let (win, from_top, below) = window_from_top(1000, 10, 7, |_| {
            asked += 1;
            3
        });
        assert!(asked <= 7, "{asked} blocks measured");
        assert_eq!((win.first, win.skip, from_top, below), (2, 1, 7, None));
        // Near the end: clamped, and what is below is counted.
        let (win, from_top, below) = window_from_top(4, 10, 50, |_| 3);
        assert_eq!((from_top, below), (2, Some(0)));
        assert_eq!((win.first, win.skip), (0, 2));
        let (_, from_top, below) = window_from_top(4, 10, 1, |_| 3);
        assert_eq!((from_top, below), (1, Some(1)));
        // Shorter than the view.
        let (win, from_top, below) = window_from_top(2, 10, 5, |_| 3);
        assert_eq!((win.first, win.skip, from_top, below), (0, 0, 0, Some(0)));
    }
}
