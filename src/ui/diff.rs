//! The cells that changed between two frames: what ratatui's `Buffer::diff` finds, at a
//! fraction of its cost.
//!
//! ratatui measures the display width of both cells' symbols at every position, three
//! times, to handle wide characters (a cell after a wide one is covered; a narrow one
//! replacing a wide one uncovers the next). At 120×40 that is 14 400 Unicode width lookups
//! a frame, and in a profile of a streaming frame it was a fifth of all the work. Nearly
//! every cell holds one printable ASCII byte, whose width is 1 whatever the tables say, so
//! only the other symbols are looked up. The result is the same list, in the same order:
//! the tests compare the two on random screens with wide, zero-width and skipped cells.

use ratatui::buffer::{Buffer, Cell};
use unicode_width::UnicodeWidthStr;

#[cfg(doc)]
use super::scroll;
use super::scroll::Scroll;

/// The cells of `next` to write over a screen that shows `prev` (same area), with their
/// positions, left to right and top to bottom: `prev.diff(next)`.
pub fn diff<'a>(prev: &Buffer, next: &'a Buffer) -> Vec<(u16, u16, &'a Cell)> {
    diff_moved(prev, next, None)
}

/// [`diff`] over a screen that shows `prev` with `scroll` applied: the rows it moves are
/// compared where they went and the rows it uncovers as blank, as if `prev` had been
/// shifted first (the tests' `scroll::shift`), without moving a cell.
pub fn diff_moved<'a>(
    prev: &Buffer,
    next: &'a Buffer,
    scroll: Option<&Scroll>,
) -> Vec<(u16, u16, &'a Cell)> {
    let area = next.area;
    let columns = usize::from(area.width);
    let mut updates = Vec::new();
    if columns == 0 || prev.content.len() != next.content.len() {
        return updates;
    }
    let blank = if scroll.is_some() {
        vec![Cell::default(); columns]
    } else {
        Vec::new()
    };
    // Cells invalidated by drawing or replacing a preceding wide character.
    let mut invalidated: usize = 0;
    // Cells of `next` covered by a preceding wide character.
    let mut to_skip: usize = 0;
    for (row, next_row) in next.content.chunks_exact(columns).enumerate() {
        let y = area.y.saturating_add(row as u16);
        let prev_row = match scroll.and_then(|s| moved_from(s, y)) {
            Some(Some(from)) => {
                let start = usize::from(from - area.y) * columns;
                &prev.content[start..start + columns]
            }
            Some(None) => &blank[..],
            None => &prev.content[row * columns..(row + 1) * columns],
        };
        for (x, (current, previous)) in next_row.iter().zip(prev_row).enumerate() {
            let symbol = current.symbol();
            let same = same_cell(current, symbol, previous);
            if !current.skip && (!same || invalidated > 0) && to_skip == 0 {
                // x is below the width, a u16.
                updates.push((area.x.saturating_add(x as u16), y, current));
            }
            let width = symbol_width(symbol);
            to_skip = width.saturating_sub(1);
            // An unchanged cell is as wide as it was.
            let affected = if same {
                width
            } else {
                width.max(symbol_width(previous.symbol()))
            };
            invalidated = affected.max(invalidated).saturating_sub(1);
        }
    }
    updates
}

/// Where screen row `y` comes from after `scroll`: `None` outside the rows it moves,
/// `Some(None)` for a row it uncovers, else `Some(Some(row))`.
fn moved_from(scroll: &Scroll, y: u16) -> Option<Option<u16>> {
    if !scroll.rows.contains(&y) {
        return None;
    }
    let from = i32::from(y) + scroll.by;
    let inside = from >= i32::from(scroll.rows.start) && from < i32::from(scroll.rows.end);
    Some(inside.then_some(from as u16))
}

/// A symbol's display width: 1 for one printable ASCII byte, else the Unicode tables'.
/// `current == previous` (`symbol` being `current`'s symbol), field by field, a one-byte
/// symbol compared as a byte (the derived comparison calls `memcmp` for every cell).
fn same_cell(current: &Cell, symbol: &str, previous: &Cell) -> bool {
    let same_symbol = match (symbol.as_bytes(), previous.symbol().as_bytes()) {
        ([a], [b]) => a == b,
        (a, b) => a == b,
    };
    same_symbol
        && current.fg == previous.fg
        && current.bg == previous.bg
        && current.underline_color == previous.underline_color
        && current.modifier == previous.modifier
        && current.skip == previous.skip
}

fn symbol_width(symbol: &str) -> usize {
    match symbol.as_bytes() {
        [b] if (0x20..0x7f).contains(b) => 1,
        _ => symbol.width(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use ratatui::style::{Color, Style};

    /// A small deterministic generator (xorshift), so a failure can be replayed.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// A screen of random cells: mostly ASCII, some wide (漢, 🦀), zero-width (a combining
    /// mark), control-looking and skipped cells, in a few styles.
    fn random_buffer(rng: &mut Rng, area: Rect) -> Buffer {
        let mut buf = Buffer::empty(area);
        let symbols = [
            " ", "a", "Z", "~", "漢", "🦀", "e\u{301}", "\u{301}", "é", "\u{7f}", "",
        ];
        for y in area.top()..area.bottom() {
            let mut x = area.left();
            while x < area.right() {
                let pick = match rng.below(10) {
                    0..=6 => rng.below(4) as usize,
                    _ => 4 + rng.below((symbols.len() - 4) as u64) as usize,
                };
                let style = match rng.below(6) {
                    0 => Style::default().fg(Color::Red),
                    1 => Style::default().bg(Color::Blue),
                    2 => Style::default().underline_color(Color::Green),
                    3 => Style::default().add_modifier(ratatui::style::Modifier::BOLD),
                    _ => Style::default(),
                };
                let cell = &mut buf[(x, y)];
                cell.set_symbol(symbols[pick]).set_style(style);
                if rng.below(40) == 0 {
                    cell.set_skip(true);
                }
                x += 1;
            }
        }
        buf
    }

    #[test]
    fn the_same_cells_as_ratatuis_diff_on_random_screens() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for round in 0..400 {
            let area = Rect::new(
                rng.below(3) as u16,
                rng.below(3) as u16,
                1 + rng.below(30) as u16,
                1 + rng.below(8) as u16,
            );
            let prev = random_buffer(&mut rng, area);
            // The next frame: a copy with some cells changed, or a different screen.
            let mut next = prev.clone();
            if rng.below(3) == 0 {
                next = random_buffer(&mut rng, area);
            } else {
                let other = random_buffer(&mut rng, area);
                for i in 0..next.content.len() {
                    if rng.below(5) == 0 {
                        next.content[i] = other.content[i].clone();
                    }
                }
            }
            assert_eq!(
                diff(&prev, &next),
                prev.diff(&next),
                "round {round}, {area:?}"
            );
        }
    }

    #[test]
    fn a_move_compares_as_if_the_shown_screen_had_been_shifted() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..400 {
            let area = Rect::new(
                rng.below(3) as u16,
                rng.below(3) as u16,
                1 + rng.below(20) as u16,
                2 + rng.below(10) as u16,
            );
            let prev = random_buffer(&mut rng, area);
            let mut next = random_buffer(&mut rng, area);
            // Most rows of the next frame are rows of the last one, moved.
            let first = area.y + rng.below(u64::from(area.height)) as u16;
            let last = first + 1 + rng.below(u64::from(area.bottom() - first)) as u16;
            let by = rng.below(u64::from(area.height)) as i32 - (area.height / 2) as i32;
            let scroll = Scroll {
                rows: first..last,
                by,
            };
            let mut shifted = prev.clone();
            super::super::scroll::shift(&mut shifted, &scroll);
            for y in area.top()..area.bottom() {
                if rng.below(4) != 0 {
                    for x in area.left()..area.right() {
                        next[(x, y)] = shifted[(x, y)].clone();
                    }
                }
            }
            assert_eq!(
                diff_moved(&prev, &next, Some(&scroll)),
                diff(&shifted, &next),
                "round {round}, {area:?}, {scroll:?}"
            );
        }
    }

    #[test]
    fn an_unchanged_screen_has_nothing_to_write_and_a_new_one_everything() {
        let area = Rect::new(0, 0, 10, 3);
        let mut a = Buffer::empty(area);
        a.set_string(0, 0, "hello 漢字", Style::default());
        assert!(diff(&a, &a.clone()).is_empty());
        let blank = Buffer::empty(area);
        assert_eq!(diff(&blank, &a), blank.diff(&a));
        assert_eq!(
            diff(&blank, &a).len(),
            7,
            "h e l l o and two wide characters (the space was blank already)"
        );
    }

    #[test]
    fn printable_ascii_is_one_column_and_the_rest_asks_the_tables() {
        for b in 0x20u8..0x7f {
            let s = (b as char).to_string();
            assert_eq!(symbol_width(&s), s.width(), "{s:?}");
        }
        assert_eq!(symbol_width("漢"), 2);
        assert_eq!(symbol_width("\u{301}"), 0);
        assert_eq!(symbol_width(""), 0);
    }
}
