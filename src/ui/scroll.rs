//! Moving the lines the terminal already shows instead of writing them again.
//!
//! A streamed reply scrolls the transcript a few lines a frame, and without help every
//! cell of it differs from the frame before, so each frame writes the whole pane. The
//! terminal can move lines itself: a scrolling region (DECSTBM, `CSI top;bottom r`) and a
//! scroll (`CSI n S` up, `CSI n T` down) move a band of rows and blank the rows uncovered,
//! and then only those and whatever else changed are written.
//!
//! Nothing here decides what is shown; it only guesses a move that saves writing. Each
//! row of the transcript's columns is hashed ([`row_hashes`]), and [`find`] looks for the
//! shift that lines up the most rows of the new frame with rows of the shown one, less
//! the rows that already matched where they were. The caller then compares the next
//! frame with the shown one as the terminal moved it (`diff::diff_moved`) and writes the
//! cells that still differ, so a wrong guess (a hash collision, a pane beside the
//! transcript that moves with it) costs writes, never a wrong screen.

use std::io;
use std::ops::Range;

use ratatui::backend::CrosstermBackend;
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;
use ratatui::style::Color;

/// A move of the rows `rows` (screen rows, top to bottom) by `by` lines: up when positive
/// (the row at `rows.start + by` ends at `rows.start`), down when negative; the rows it
/// uncovers are blank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scroll {
    pub rows: Range<u16>,
    pub by: i32,
}

/// A backend that can move rows in the terminal.
pub trait ScrollRows {
    /// Queue `scroll` (not flushed: it goes out with the frame's writes).
    fn scroll_rows(&mut self, scroll: &Scroll) -> io::Result<()>;
}

impl<W: io::Write> ScrollRows for CrosstermBackend<W> {
    fn scroll_rows(&mut self, scroll: &Scroll) -> io::Result<()> {
        use io::Write as _;
        let (direction, n) = if scroll.by > 0 {
            ('S', scroll.by)
        } else {
            ('T', -scroll.by)
        };
        // The region (1-based, inclusive), the move, the region back to the whole screen
        // (which also puts the cursor home; every frame's first write moves it anyway).
        // Colours and attributes were reset at the end of the last frame, so the rows
        // uncovered are blank in the default colours, as `diff_moved` takes them.
        write!(
            self,
            "\x1b[{};{}r\x1b[{n}{direction}\x1b[r",
            scroll.rows.start + 1,
            scroll.rows.end
        )
    }
}

impl ScrollRows for ratatui::backend::TestBackend {
    fn scroll_rows(&mut self, scroll: &Scroll) -> io::Result<()> {
        use ratatui::backend::Backend as _;
        // ratatui's own model of a terminal's scrolling region.
        match u16::try_from(scroll.by.unsigned_abs()) {
            Ok(n) if scroll.by > 0 => self.scroll_region_up(scroll.rows.clone(), n),
            Ok(n) => self.scroll_region_down(scroll.rows.clone(), n),
            Err(_) => Ok(()),
        }
    }
}

/// A hash of each row of `buf` within `rect`'s columns, for the rows of `rect`.
pub fn row_hashes(buf: &Buffer, rect: Rect) -> Vec<u64> {
    let rect = rect.intersection(buf.area);
    let width = usize::from(buf.area.width);
    let mut hashes = Vec::with_capacity(usize::from(rect.height));
    for y in rect.top()..rect.bottom() {
        let start = usize::from(y - buf.area.y) * width + usize::from(rect.x - buf.area.x);
        let row = &buf.content[start..start + usize::from(rect.width)];
        // Every other cell: a row that moved still matches, and two different rows of text
        // almost never agree on half their cells (when they do, a move costs writes).
        hashes.push(
            row.iter()
                .step_by(2)
                .fold(SEED, |h, cell| mix(h, cell_word(cell))),
        );
    }
    hashes
}

/// The hash of a row of `width` blank cells, as a scroll leaves it.
pub fn blank_hash(width: u16) -> u64 {
    let blank = cell_word(&Cell::default());
    (0..width).step_by(2).fold(SEED, |h, _| mix(h, blank))
}

const SEED: u64 = 0x243f_6a88_85a3_08d3;

fn mix(h: u64, word: u64) -> u64 {
    (h.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95)
}

/// One cell as a word: its symbol (a one-byte symbol as that byte, others by their
/// bytes), colours and modifiers. Equal cells give equal words; unequal ones almost always
/// differ (an underline colour or a skipped cell is not worth reading for a guess).
fn cell_word(cell: &Cell) -> u64 {
    let symbol = match cell.symbol().as_bytes() {
        [b] => u64::from(*b),
        bytes => bytes
            .iter()
            .fold(0x100u64, |h, b| h.rotate_left(7) ^ u64::from(*b)),
    };
    let style = color_word(cell.fg)
        ^ color_word(cell.bg).rotate_left(24)
        ^ (u64::from(cell.modifier.bits()) << 48);
    symbol.rotate_left(40) ^ style
}

fn color_word(color: Color) -> u64 {
    match color {
        Color::Reset => 0,
        Color::Rgb(r, g, b) => 0x100_0000 | u64::from(r) << 16 | u64::from(g) << 8 | u64::from(b),
        Color::Indexed(i) => 0x200_0000 | u64::from(i),
        // The 16 named colours: their own small numbers.
        named => 0x300_0000 | named_index(named),
    }
}

fn named_index(color: Color) -> u64 {
    const NAMED: [Color; 16] = [
        Color::Black,
        Color::Red,
        Color::Green,
        Color::Yellow,
        Color::Blue,
        Color::Magenta,
        Color::Cyan,
        Color::Gray,
        Color::DarkGray,
        Color::LightRed,
        Color::LightGreen,
        Color::LightYellow,
        Color::LightBlue,
        Color::LightMagenta,
        Color::LightCyan,
        Color::White,
    ];
    NAMED.iter().position(|c| *c == color).unwrap_or(16) as u64
}

/// The move that saves the most rows, if it saves at least `MIN_GAIN`: `old` and `new`
/// are the rows' hashes (the shown frame's and the next one's, rows `top..`), `blank` the
/// hash of a blank row. `rest` is the screen's width outside the hashed columns: those
/// columns move too, and count as rewritten on every row of the band.
pub fn find(
    old: &[u64],
    new: &[u64],
    blank: u64,
    top: u16,
    columns: u16,
    rest: u16,
) -> Option<Scroll> {
    let h = old.len().min(new.len());
    let stays = |r: usize| new[r] == old[r];
    // The rows that match where they are need no writing whatever happens.
    let mut best: Option<(usize, Scroll)> = None;
    for k in 1..h {
        for up in [true, false] {
            // Runs of rows r with new[r] == old[r ± k].
            let mut r = 0;
            while r + k < h {
                let matches = |r: usize| {
                    if up {
                        new[r] == old[r + k]
                    } else {
                        new[r + k] == old[r]
                    }
                };
                if !matches(r) {
                    r += 1;
                    continue;
                }
                let start = r;
                while r + k < h && matches(r) {
                    r += 1;
                }
                // Up: new rows start..r come from old rows start+k..r+k; the band is
                // start..r+k and its last k rows are uncovered. Down: new rows
                // start+k..r+k come from old start..r; the band is start..r+k and its
                // first k rows are uncovered.
                let band = start..r + k;
                let uncovered = if up { r..r + k } else { start..start + k };
                let moved = r - start;
                let free = uncovered.filter(|&i| new[i] == blank).count();
                let lost = band.clone().filter(|&i| stays(i)).count();
                let saved = (moved + free) * usize::from(columns);
                let cost = lost * usize::from(columns) + band.len() * usize::from(rest);
                if saved > cost + MIN_GAIN * usize::from(columns) {
                    let gain = saved - cost;
                    if best.as_ref().is_none_or(|(g, _)| gain > *g) {
                        let by = if up { k as i32 } else { -(k as i32) };
                        let rows = (top + band.start as u16)..(top + band.end as u16);
                        best = Some((gain, Scroll { rows, by }));
                    }
                }
            }
        }
    }
    best.map(|(_, scroll)| scroll)
}

/// Rows a move must save (in cells, as rows of the hashed width) to be worth its bytes.
const MIN_GAIN: usize = 2;

/// Move `buf`'s rows as the terminal moves them for `scroll`, blanking the rows uncovered:
/// the model the tests hold `diff_moved` and the backends to.
#[cfg(test)]
pub fn shift(buf: &mut Buffer, scroll: &Scroll) {
    let width = usize::from(buf.area.width);
    let top = usize::from(scroll.rows.start.saturating_sub(buf.area.y)) * width;
    let bottom = usize::from(scroll.rows.end.saturating_sub(buf.area.y)) * width;
    let bottom = bottom.min(buf.content.len());
    if top >= bottom {
        return;
    }
    let band = &mut buf.content[top..bottom];
    let n = (scroll.by.unsigned_abs() as usize * width).min(band.len());
    let len = band.len();
    if scroll.by > 0 {
        band.rotate_left(n);
        band[len - n..].fill_with(Cell::default);
    } else {
        band.rotate_right(n);
        band[..n].fill_with(Cell::default);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;
    use ratatui::style::Style;

    /// A buffer whose rows say `rows[i]` (blank where empty).
    fn screen(width: u16, rows: &[&str]) -> Buffer {
        let mut buf = Buffer::empty(Rect::new(0, 0, width, rows.len() as u16));
        for (y, text) in rows.iter().enumerate() {
            buf.set_string(0, y as u16, text, Style::default());
        }
        buf
    }

    fn hashes(buf: &Buffer, rows: Range<u16>) -> Vec<u64> {
        row_hashes(
            buf,
            Rect::new(0, rows.start, buf.area.width, rows.len() as u16),
        )
    }

    #[test]
    fn a_pane_that_grew_at_the_bottom_moves_up_by_what_it_grew() {
        // The transcript (rows 0..6) scrolled by two lines; the input (row 6) stayed.
        let old = screen(
            20,
            &[
                "a one", "b two", "c three", "d four", "e five", "f six", "> input",
            ],
        );
        let new = screen(
            20,
            &[
                "c three", "d four", "e five", "f six", "g seven", "h eight", "> input",
            ],
        );
        let found = find(
            &hashes(&old, 0..6),
            &hashes(&new, 0..6),
            blank_hash(20),
            0,
            20,
            0,
        );
        assert_eq!(found, Some(Scroll { rows: 0..6, by: 2 }));
    }

    #[test]
    fn paging_up_moves_down_and_offset_panes_keep_their_rows() {
        let old = screen(10, &["", "c", "d", "e", "f", "g"]);
        let new = screen(10, &["", "a", "b", "c", "d", "e"]);
        // The pane starts at row 1 of the screen.
        let found = find(
            &hashes(&old, 1..6),
            &hashes(&new, 1..6),
            blank_hash(10),
            1,
            10,
            0,
        );
        assert_eq!(found, Some(Scroll { rows: 1..6, by: -2 }));
    }

    #[test]
    fn no_move_when_nothing_lines_up_or_too_little_does() {
        let old = screen(10, &["a", "b", "c", "d", "e", "f"]);
        let new = screen(10, &["u", "v", "w", "x", "y", "z"]);
        assert_eq!(
            find(
                &hashes(&old, 0..6),
                &hashes(&new, 0..6),
                blank_hash(10),
                0,
                10,
                0
            ),
            None
        );
        // One row gained is not worth the escape sequences.
        let new = screen(10, &["b", "x", "y", "z", "w", "v"]);
        assert_eq!(
            find(
                &hashes(&old, 0..6),
                &hashes(&new, 0..6),
                blank_hash(10),
                0,
                10,
                0
            ),
            None
        );
        // Rows that already match where they are are not given up for a move.
        let old = screen(10, &["", "", "", "a", "b", "c"]);
        let new = screen(10, &["", "", "", "", "b", "c"]);
        assert_eq!(
            find(
                &hashes(&old, 0..6),
                &hashes(&new, 0..6),
                blank_hash(10),
                0,
                10,
                0
            ),
            None
        );
    }

    #[test]
    fn a_wide_pane_beside_the_transcript_makes_a_move_not_worth_it() {
        let old = screen(10, &["a", "b", "c", "d", "e", "f"]);
        let new = screen(10, &["c", "d", "e", "f", "g", "h"]);
        let (o, n) = (hashes(&old, 0..6), hashes(&new, 0..6));
        assert!(find(&o, &n, blank_hash(10), 0, 10, 2).is_some());
        // 60 columns beside it would all be written again on every row of the band.
        assert_eq!(find(&o, &n, blank_hash(10), 0, 10, 60), None);
    }

    #[test]
    fn rows_uncovered_that_should_be_blank_count_for_the_move() {
        // The reply ended: its last lines moved up and blank rows follow.
        let old = screen(10, &["a", "b", "c", "d", "e", "f"]);
        let new = screen(10, &["d", "e", "f", "", "", ""]);
        let found = find(
            &hashes(&old, 0..6),
            &hashes(&new, 0..6),
            blank_hash(10),
            0,
            10,
            0,
        );
        assert_eq!(found, Some(Scroll { rows: 0..6, by: 3 }));
    }

    #[test]
    fn shift_moves_rows_as_ratatuis_model_of_a_terminal_does() {
        let rows = [
            "zero", "one", "two", "three", "four", "five", "six", "seven",
        ];
        for scroll in [
            Scroll { rows: 0..8, by: 3 },
            Scroll { rows: 2..7, by: 1 },
            Scroll { rows: 1..5, by: -2 },
            Scroll { rows: 3..8, by: 5 },
            Scroll { rows: 0..4, by: -9 },
        ] {
            let mut ours = screen(8, &rows);
            shift(&mut ours, &scroll);
            let mut terminal = TestBackend::with_lines(rows.map(|r| format!("{r:8}")));
            terminal.scroll_rows(&scroll).unwrap();
            assert_eq!(&ours, terminal.buffer(), "{scroll:?}");
        }
    }

    #[test]
    fn crossterm_gets_a_region_a_move_and_the_region_reset() {
        let mut out = Vec::new();
        let mut backend = CrosstermBackend::new(&mut out);
        backend.scroll_rows(&Scroll { rows: 0..34, by: 5 }).unwrap();
        backend
            .scroll_rows(&Scroll {
                rows: 2..10,
                by: -3,
            })
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out),
            "\x1b[1;34r\x1b[5S\x1b[r\x1b[3;10r\x1b[3T\x1b[r"
        );
    }

    #[test]
    fn equal_rows_hash_alike_and_a_colour_or_symbol_tells_them_apart() {
        let a = screen(6, &["abcdef"]);
        let mut b = a.clone();
        assert_eq!(hashes(&a, 0..1), hashes(&b, 0..1));
        b[(2, 0)].set_fg(Color::Red);
        assert_ne!(hashes(&a, 0..1), hashes(&b, 0..1));
        let mut c = a.clone();
        c[(4, 0)].set_symbol("漢");
        assert_ne!(hashes(&a, 0..1), hashes(&c, 0..1));
        assert_eq!(hashes(&screen(6, &[""]), 0..1), vec![blank_hash(6)]);
    }
}
