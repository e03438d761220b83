//! The session picker: a centred layer over the dashboard while `/resume` is open.
//!
//! Top to bottom: the title ("Resume a session (12)", or "(3 of 12)" while filtered), the
//! filter line, a header, one row per session (title or "(untitled)", how long ago it was
//! last written, its message count, its project with the home directory as `~` and a `●`
//! for this project), the selected row highlighted and kept in view, and the keys. Titles
//! and paths come from users and the disk, so they are sanitised. Ages are relative to the
//! time the list was read (`picker.now`), so drawing is a pure function of the state.

use std::path::Path;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Widget};

use super::layout::{centred, framed, modal_width};
use super::sanitize::sanitize;
use super::theme;
use super::wrap::{truncate, width};
use crate::app::picker::Picker;
use crate::session::SessionSummary;

/// The widest the modal gets.
const MAX_WIDTH: u16 = 100;
/// Columns of the message count ("~123").
const COUNT_W: usize = 4;
/// The marker in front of the selected row.
const SELECTED_MARK: &str = "› ";
/// Marks the sessions of the project rein runs in.
const HERE_MARK: &str = "● ";

/// The picker over a dashboard whose project is `project`.
pub struct PickerModal<'a> {
    pub picker: &'a Picker,
    pub project: &'a Path,
}

/// `text` padded (or cut) to exactly `w` columns, on the left or the right.
fn fit(text: &str, w: usize, right: bool) -> String {
    let text = truncate(text, w);
    let pad = " ".repeat(w.saturating_sub(width(&text)));
    if right {
        format!("{pad}{text}")
    } else {
        format!("{text}{pad}")
    }
}

/// The widths of the flexible columns.
#[derive(Clone, Copy)]
struct Columns {
    title: usize,
    age: usize,
    project: usize,
}

impl Columns {
    /// The marker, the count and the gaps.
    const FIXED: usize = 2 + 2 + 2 + COUNT_W + 2;

    /// The age column as wide as the widest age shown, the project column as wide as the
    /// widest project (at most 2/5 of what is left); the title gets the rest.
    fn new(text_w: usize, widest_age: usize, widest_project: usize) -> Columns {
        let age = widest_age.max("updated".len());
        let flexible = text_w.saturating_sub(Self::FIXED + age);
        let project = widest_project.max("project".len()).min(flexible * 2 / 5);
        Columns {
            title: flexible - project,
            age,
            project,
        }
    }
}

impl PickerModal<'_> {
    /// The project column's text: `~/src/parser`, with a `●` for this project.
    fn project_text(&self, s: &SessionSummary) -> String {
        format!(
            "{}{}",
            if s.project == self.project {
                HERE_MARK
            } else {
                ""
            },
            sanitize(&self.picker.project_label(&s.project)).replace('\n', " ")
        )
    }

    /// One session as a row.
    fn row(&self, s: &SessionSummary, selected: bool, cols: Columns) -> Line<'static> {
        let here = s.project == self.project;
        let (title, title_style) = match s.title.as_deref().map(str::trim) {
            Some(t) if !t.is_empty() => (sanitize(t).replace('\n', " "), theme::TEXT),
            _ => ("(untitled)".to_string(), theme::DIM),
        };
        let base = if selected {
            theme::SELECTED
        } else {
            Style::new()
        };
        let mark = if selected { SELECTED_MARK } else { "  " };
        Line::from(vec![
            Span::styled(mark, base.patch(theme::HINT)),
            Span::styled(fit(&title, cols.title, false), base.patch(title_style)),
            Span::styled("  ", base),
            Span::styled(
                fit(&self.picker.age(s), cols.age, true),
                base.patch(theme::DIM),
            ),
            Span::styled("  ", base),
            Span::styled(fit(&s.messages.to_string(), COUNT_W, true), base),
            Span::styled("  ", base),
            Span::styled(
                fit(&self.project_text(s), cols.project, false),
                base.patch(if here { theme::SUCCESS } else { theme::DIM }),
            ),
        ])
    }

    /// The column names over the rows.
    fn header(cols: Columns) -> Line<'static> {
        Line::from(Span::styled(
            format!(
                "  {}  {}  {}  {}",
                fit("title", cols.title, false),
                fit("updated", cols.age, true),
                fit("msgs", COUNT_W, true),
                fit("project", cols.project, false),
            ),
            theme::DIM,
        ))
    }
}

impl Widget for PickerModal<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let picker = self.picker;
        let matches = picker.matches();
        let (modal_w, text_w) = modal_width(area.width, MAX_WIDTH);
        // Borders 2, filter 1, blank 1, header 1, blank 1, keys 1.
        let chrome: u16 = 7;
        let max_h = area.height.saturating_sub(2).max(area.height.min(8));
        let rows_room = usize::from(max_h.saturating_sub(chrome).max(1));
        let rows_h = matches.len().clamp(1, rows_room);
        let modal_h = chrome + rows_h as u16;
        let rect = centred(area, modal_w, modal_h);

        let count = if picker.filter.trim().is_empty() {
            format!("({})", picker.sessions.len())
        } else {
            format!("({} of {})", matches.len(), picker.sessions.len())
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(theme::MODAL_BORDER)
            .title(Line::from(vec![
                Span::styled(" Resume a session ", theme::TITLE),
                Span::styled(format!("{count} "), theme::DIM),
            ]));
        let inner = framed(block, rect, buf, true);
        if inner.is_empty() {
            return;
        }
        let text_w = text_w.min(usize::from(inner.width));
        let bottom = inner.bottom();
        let put = |buf: &mut Buffer, line: &Line<'_>, y: u16| {
            if y < bottom {
                buf.set_line(inner.x, y, line, inner.width);
            }
        };
        let mut y = inner.y;

        let filter = sanitize(&picker.filter).replace('\n', " ");
        let filter_line = if filter.is_empty() {
            Line::from(vec![
                Span::styled("filter ", theme::DIM),
                Span::styled("▏", theme::HINT),
                Span::styled("type part of a title, project or id", theme::DIM),
            ])
        } else {
            let shown = truncate(&filter, text_w.saturating_sub(9));
            Line::from(vec![
                Span::styled("filter ", theme::DIM),
                Span::styled(shown, theme::STRONG),
                Span::styled("▏", theme::HINT),
            ])
        };
        put(buf, &filter_line, y);
        y += 2;

        let widest = |w: &dyn Fn(&SessionSummary) -> usize| matches.iter().map(|s| w(s)).max();
        let cols = Columns::new(
            text_w,
            widest(&|s| width(&picker.age(s))).unwrap_or(0),
            widest(&|s| width(&self.project_text(s))).unwrap_or(0),
        );
        put(buf, &PickerModal::header(cols), y);
        y += 1;

        if matches.is_empty() {
            let text = format!("no session matches \"{filter}\"");
            put(
                buf,
                &Line::from(Span::styled(truncate(&text, text_w), theme::WARNING)),
                y,
            );
        } else {
            let selected = picker.selected.min(matches.len() - 1);
            let offset = (selected + 1).saturating_sub(rows_h);
            for (i, s) in matches.iter().enumerate().skip(offset).take(rows_h) {
                put(buf, &self.row(s, i == selected, cols), y);
                y += 1;
            }
        }

        let keys = [
            ("Enter", "resume"),
            ("Esc", "close"),
            ("↑↓", "move"),
            ("type", "to filter"),
        ];
        let mut spans = Vec::new();
        let mut used = 0;
        for (i, (key, what)) in keys.iter().enumerate() {
            let sep = if i == 0 { "" } else { " · " };
            let w = width(sep) + width(key) + 1 + width(what);
            if used + w > text_w {
                break;
            }
            used += w;
            spans.push(Span::styled(sep, theme::DIM));
            spans.push(Span::styled(*key, theme::HINT));
            spans.push(Span::styled(format!(" {what}"), theme::DIM));
        }
        put(buf, &Line::from(spans), bottom.saturating_sub(1));
    }
}
