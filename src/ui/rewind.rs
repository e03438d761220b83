//! The rewind layer: a centred box over the dashboard.
//!
//! The list: one row per turn (number, time, how many files it changed, the first line of
//! the message), the newest at the bottom, the selected one marked and kept in view. The
//! choice: the turn's line, the three choices (code and conversation, code only,
//! conversation only) with the chosen one marked, and the preview under them: each path
//! and what would become of it (restore, remove, keep and why), or "working out…". Paths
//! and messages come from the project and the user, so they are sanitised.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::layout::{centred, framed, modal_width};
use super::list_modal::fit;
use super::theme;
use super::wrap::truncate;
use crate::app::rewind::{Preview, RewindState, RewindTurn, RewindWhat, Stage};

const MAX_WIDTH: u16 = 100;

/// The layer's box.
pub struct RewindModal<'a> {
    pub state: &'a RewindState,
}

fn one_line(text: &str) -> String {
    rein_core::text::sanitize::line(text, usize::MAX)
}

fn turn_row(t: &RewindTurn, selected: bool, w: usize) -> Line<'static> {
    let base = if selected {
        theme::SELECTED
    } else {
        Style::new()
    };
    let time = t.time.get(11..16).unwrap_or("");
    let files = match t.files.len() {
        0 => "no files".to_string(),
        1 => "1 file".to_string(),
        n => format!("{n} files"),
    };
    let head = format!("{:>4}  {time}  {files:>9}  ", t.turn);
    let rest = w.saturating_sub(head.chars().count() + 2);
    Line::from(vec![
        Span::styled(if selected { "› " } else { "  " }, base.patch(theme::HINT)),
        Span::styled(head, base.patch(theme::DIM)),
        Span::styled(fit(&one_line(&t.headline), rest, false), base),
    ])
}

impl ratatui::widgets::Widget for RewindModal<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let state = self.state;
        let (modal_w, text_w) = modal_width(area.width, MAX_WIDTH);
        let (body, keys): (Vec<Line<'static>>, &str) = match &state.stage {
            Stage::Turns => {
                let mut lines = vec![Line::from(Span::styled(
                    "Take back a turn: its files, its conversation, or both",
                    theme::DIM,
                ))];
                lines.push(Line::default());
                // Keep the selection in view: as many rows as fit, ending at it or after.
                let room = usize::from(area.height.saturating_sub(9)).max(1);
                let first = (state.selected + 1).saturating_sub(room);
                for (i, t) in state.turns.iter().enumerate().skip(first).take(room) {
                    lines.push(turn_row(t, i == state.selected, text_w));
                }
                (lines, "Enter choose · ↑↓ move · Esc close")
            }
            Stage::Choose { what, preview } => {
                let mut lines = Vec::new();
                if let Some(t) = state.turn() {
                    lines.push(Line::from(vec![
                        Span::styled(format!("Back to before turn {}: ", t.turn), theme::TITLE),
                        Span::raw(truncate(&one_line(&t.headline), text_w.saturating_sub(24))),
                    ]));
                }
                lines.push(Line::default());
                for w in RewindWhat::ALL {
                    let chosen = w == *what;
                    lines.push(Line::from(vec![
                        Span::styled(if chosen { "› " } else { "  " }, theme::HINT),
                        Span::styled(
                            w.label(),
                            if chosen {
                                theme::SELECTED
                            } else {
                                Style::new()
                            },
                        ),
                    ]));
                }
                lines.push(Line::default());
                match preview {
                    Preview::Loading => lines.push(Line::from(Span::styled(
                        "working out what changes…",
                        theme::DIM,
                    ))),
                    Preview::Failed(e) => lines.push(Line::from(Span::styled(
                        truncate(&one_line(e), text_w),
                        theme::ERROR,
                    ))),
                    Preview::Ready(paths) if paths.is_empty() => {
                        lines.push(Line::from(Span::styled("no file changes", theme::DIM)))
                    }
                    Preview::Ready(paths) => {
                        let room = usize::from(area.height.saturating_sub(14)).max(1);
                        for p in paths.iter().take(room) {
                            let style = match p.action {
                                "keep" => theme::WARNING,
                                "remove" => theme::ERROR,
                                "restore" => theme::SUCCESS,
                                _ => theme::DIM,
                            };
                            let why = p
                                .why
                                .as_deref()
                                .map(|w| format!("  ({w})"))
                                .unwrap_or_default();
                            let text = format!("{:<8} {}{why}", p.action, one_line(&p.path));
                            lines.push(Line::from(Span::styled(truncate(&text, text_w), style)));
                        }
                        if paths.len() > room {
                            lines.push(Line::from(Span::styled(
                                format!("… and {} more", paths.len() - room),
                                theme::DIM,
                            )));
                        }
                    }
                }
                if what.conversation() {
                    lines.push(Line::default());
                    lines.push(Line::from(Span::styled(
                        "the conversation goes on in a new session; the message comes back to edit",
                        theme::DIM,
                    )));
                }
                (lines, "Enter rewind · ↑↓ choose · Esc back")
            }
        };
        let height = (body.len() as u16 + 4).min(area.height);
        let rect = centred(area, modal_w, height);
        let block = super::layout::modal_block(Span::styled(" Rewind ", theme::TITLE));
        let inner = framed(block, rect, buf, true);
        if inner.is_empty() {
            return;
        }
        for (y, line) in (inner.y..inner.bottom().saturating_sub(1)).zip(body.iter()) {
            buf.set_line(inner.x, y, line, inner.width);
        }
        let keys = Line::from(Span::styled(
            truncate(keys, usize::from(inner.width)),
            theme::DIM,
        ));
        buf.set_line(
            inner.x,
            inner.bottom().saturating_sub(1),
            &keys,
            inner.width,
        );
    }
}
