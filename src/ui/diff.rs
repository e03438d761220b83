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

/// The cells of `next` to write over a screen that shows `prev` (same area), with their
/// positions, left to right and top to bottom: `prev.diff(next)`.
pub fn diff<'a>(prev: &Buffer, next: &'a Buffer) -> Vec<(u16, u16, &'a Cell)> {
    let area = next.area;
    let columns = usize::from(area.width).max(1);
    let mut updates = Vec::new();
    // Cells invalidated by drawing or replacing a preceding wide character.
    let mut invalidated: usize = 0;
    // Cells of `next` covered by a preceding wide character.
    let mut to_skip: usize = 0;
    for (i, (current, previous)) in next.content.iter().zip(&prev.content).enumerate() {
        let symbol = current.symbol();
        let same = same_cell(current, symbol, previous);
        if !current.skip && (!same || invalidated > 0) && to_skip == 0 {
            // The index is below width × height, both u16, so each part fits a u16.
            let x = area.x.saturating_add((i % columns) as u16);
            let y = area.y.saturating_add((i / columns) as u16);
            updates.push((x, y, current));
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
    updates
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
