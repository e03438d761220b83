//! Drawing a frame on the terminal: ratatui's `Terminal::draw`, with the two buffers kept
//! here so that the cells to write are found by [`super::diff::diff`] (the same cells as
//! ratatui's own diff, without measuring every symbol's width).
//!
//! A frame follows the terminal's size (a new size clears the terminal, so every cell is
//! written), renders the dashboard into the next buffer, writes the cells that differ from
//! what is shown and flushes the backend once; the next buffer then becomes the shown one.
//! The size is the one the terminal last reported in a resize event (`app.size`): asking
//! the terminal itself opens `/dev/tty` each time, three system calls a frame. The cursor
//! is hidden once (the input box draws its own), not at every frame, which cost a write of
//! its own. After anything else had the screen (the external editor),
//! [`Screen::cleared`] makes the next frame ask the size, hide the cursor and write every
//! cell.
//!
//! When the transcript moved (a streamed reply scrolls it a few lines a frame, PgUp and
//! PgDn by pages), the terminal moves the rows it already shows ([`super::scroll`]) and
//! only the rows uncovered are written, not the whole pane.

use std::io;
use std::time::Instant;

use ratatui::backend::Backend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::Terminal;

use super::scroll::{self, ScrollRows};
use crate::app::App;

/// What the terminal shows, and the frame being drawn.
pub struct Screen {
    shown: Buffer,
    next: Buffer,
    /// Set when the terminal's own word on its size and cursor is needed (the first frame,
    /// after a clear).
    fresh: bool,
    /// The transcript's rectangle in the shown frame and a hash of each of its rows, to
    /// find how far it moved.
    shown_rows: Option<(Rect, Vec<u64>)>,
}

impl Default for Screen {
    fn default() -> Self {
        Screen::new()
    }
}

impl Screen {
    /// Nothing shown yet: the first frame writes every cell.
    pub fn new() -> Screen {
        Screen {
            shown: Buffer::empty(Rect::ZERO),
            next: Buffer::empty(Rect::ZERO),
            fresh: true,
            shown_rows: None,
        }
    }

    /// The terminal was cleared (or another program had it): the next frame asks its size,
    /// hides the cursor and writes every cell.
    pub fn cleared(&mut self) {
        self.shown = Buffer::empty(self.shown.area);
        self.fresh = true;
        self.shown_rows = None;
    }

    /// What the last frame put on the terminal.
    pub fn shown(&self) -> &Buffer {
        &self.shown
    }

    /// Draw `app` as of `now` on `terminal`.
    pub fn draw<B: Backend + ScrollRows>(
        &mut self,
        terminal: &mut Terminal<B>,
        app: &App,
        now: Instant,
    ) -> io::Result<()> {
        let reported = Rect::new(0, 0, app.size.0, app.size.1);
        if self.fresh || reported.is_empty() {
            terminal.autoresize()?;
        } else if reported != terminal.get_frame().area() {
            // A resize event: the viewport follows it (and the terminal is cleared).
            terminal.resize(reported)?;
        }
        let area = terminal.get_frame().area();
        if self.next.area != area || self.shown.area != area {
            // A resize cleared the terminal: nothing of the last frame is on it.
            self.shown = Buffer::empty(area);
            self.next = Buffer::empty(area);
            self.shown_rows = None;
        }
        self.next.reset();
        let pane = super::render_into(app, area, &mut self.next, now).transcript;
        let backend = terminal.backend_mut();
        let rows = scroll::row_hashes(&self.next, pane);
        let mut moved = None;
        if let Some((shown_pane, shown_rows)) = self.shown_rows.take() {
            if shown_pane == pane && !self.fresh {
                let rest = area.width.saturating_sub(pane.width);
                let blank = scroll::blank_hash(pane.width);
                moved = scroll::find(&shown_rows, &rows, blank, pane.y, pane.width, rest);
            }
        }
        self.shown_rows = Some((pane, rows));
        if let Some(scroll) = &moved {
            backend.scroll_rows(scroll)?;
        }
        let updates = super::diff::diff_moved(&self.shown, &self.next, moved.as_ref());
        backend.draw(updates.into_iter())?;
        if std::mem::take(&mut self.fresh) {
            backend.hide_cursor()?;
        }
        backend.flush()?;
        std::mem::swap(&mut self.shown, &mut self.next);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::state::{Cell, SessionInfo};
    use ratatui::backend::TestBackend;

    fn text(buf: &Buffer) -> String {
        buf.content.iter().map(|c| c.symbol()).collect()
    }

    #[test]
    fn frames_put_on_the_terminal_what_terminal_draw_would() {
        let mut app = App::new(SessionInfo::default(), 1000);
        app.size = (60, 12);
        let mut ours = Terminal::new(TestBackend::new(60, 12)).unwrap();
        let mut theirs = Terminal::new(TestBackend::new(60, 12)).unwrap();
        let mut screen = Screen::new();
        let now = Instant::now();
        for step in 0..6 {
            app.transcript.cells.push(Cell::user(format!(
                "message {step}: 漢字 and 🦀 and plain text"
            )));
            if step == 3 {
                // A resize in between, as the terminal reports it.
                ours.backend_mut().resize(50, 10);
                theirs.backend_mut().resize(50, 10);
                app.size = (50, 10);
            }
            screen.draw(&mut ours, &app, now).unwrap();
            theirs.draw(|f| crate::ui::render(&app, f, now)).unwrap();
            assert_eq!(
                ours.backend().buffer(),
                theirs.backend().buffer(),
                "step {step}"
            );
            assert_eq!(text(screen.shown()), text(theirs.backend().buffer()));
        }
    }

    /// A reply of numbered lines growing by `lines` at a time.
    fn grow(app: &mut App, from: usize, lines: usize) {
        if let Some(Cell::Assistant(a)) = app.transcript.cells.last_mut() {
            for i in from..from + lines {
                a.text.push_str(&format!("- line {i} of the reply\n"));
            }
        }
    }

    #[test]
    fn a_growing_reply_moves_the_rows_and_the_screen_is_what_a_full_draw_gives() {
        let mut app = App::new(SessionInfo::default(), 1000);
        app.size = (60, 16);
        app.transcript.cells.push(Cell::user("write lines"));
        app.transcript.cells.push(Cell::assistant("", false));
        let mut ours = Terminal::new(TestBackend::new(60, 16)).unwrap();
        let mut theirs = Terminal::new(TestBackend::new(60, 16)).unwrap();
        let mut screen = Screen::new();
        let now = Instant::now();
        let mut from = 0;
        for step in 0..12 {
            grow(&mut app, from, 1 + step % 4);
            from += 1 + step % 4;
            if step == 8 {
                // Paging up and back: the rows move down, then up.
                app.transcript.scroll.from_bottom = 5;
            }
            if step == 10 {
                app.transcript.scroll.from_bottom = 0;
            }
            screen.draw(&mut ours, &app, now).unwrap();
            theirs.draw(|f| crate::ui::render(&app, f, now)).unwrap();
            assert_eq!(
                ours.backend().buffer(),
                theirs.backend().buffer(),
                "step {step}"
            );
        }
    }

    #[test]
    fn a_scrolling_reply_writes_the_move_and_only_the_new_rows() {
        let mut app = App::new(SessionInfo::default(), 1000);
        app.size = (80, 24);
        app.transcript.cells.push(Cell::user("write lines"));
        app.transcript.cells.push(Cell::assistant("", false));
        grow(&mut app, 0, 40);
        /// What the terminal is sent.
        #[derive(Clone, Default)]
        struct Sent(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);
        impl io::Write for Sent {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                self.0.borrow_mut().extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let sent = Sent::default();
        let backend = ratatui::backend::CrosstermBackend::new(sent.clone());
        let viewport = ratatui::TerminalOptions {
            viewport: ratatui::Viewport::Fixed(Rect::new(0, 0, 80, 24)),
        };
        let mut terminal = Terminal::with_options(backend, viewport).unwrap();
        let mut screen = Screen::new();
        let now = Instant::now();
        screen.draw(&mut terminal, &app, now).unwrap();
        let full = sent.0.borrow().len();
        grow(&mut app, 40, 3);
        screen.draw(&mut terminal, &app, now).unwrap();
        let all = sent.0.borrow();
        let out = &all[full..];
        let text = String::from_utf8_lossy(out);
        assert!(text.contains("S\x1b[r"), "a move up: {text:?}");
        // (Blank cells over blank ones are skipped, so words arrive apart.)
        for new in ["40", "41", "42"] {
            assert!(text.contains(new), "the new rows are written: {text:?}");
        }
        assert!(
            !text.contains("H39"),
            "rows that moved are not written again: {text:?}"
        );
        assert!(
            out.len() * 4 < full,
            "{} bytes against {full} for the first frame",
            out.len()
        );
    }

    #[test]
    fn after_a_clear_every_cell_is_written_again() {
        let app = App::new(SessionInfo::default(), 1000);
        let mut terminal = Terminal::new(TestBackend::new(40, 8)).unwrap();
        let mut screen = Screen::new();
        let now = Instant::now();
        screen.draw(&mut terminal, &app, now).unwrap();
        let drawn = terminal.backend().buffer().clone();
        terminal.backend_mut().clear().unwrap();
        screen.cleared();
        screen.draw(&mut terminal, &app, now).unwrap();
        assert_eq!(terminal.backend().buffer(), &drawn);
    }
}
