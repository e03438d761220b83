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

use std::io;
use std::time::Instant;

use ratatui::backend::Backend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::Terminal;

use crate::app::App;

/// What the terminal shows, and the frame being drawn.
pub struct Screen {
    shown: Buffer,
    next: Buffer,
    /// Set when the terminal's own word on its size and cursor is needed (the first frame,
    /// after a clear).
    fresh: bool,
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
        }
    }

    /// The terminal was cleared (or another program had it): the next frame asks its size,
    /// hides the cursor and writes every cell.
    pub fn cleared(&mut self) {
        self.shown = Buffer::empty(self.shown.area);
        self.fresh = true;
    }

    /// What the last frame put on the terminal.
    pub fn shown(&self) -> &Buffer {
        &self.shown
    }

    /// Draw `app` as of `now` on `terminal`.
    pub fn draw<B: Backend>(
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
        }
        self.next.reset();
        super::render_into(app, area, &mut self.next, now);
        let updates = super::diff::diff(&self.shown, &self.next);
        let backend = terminal.backend_mut();
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
