//! The session picker: a centred layer over the dashboard while `/resume` is open.
//!
//! Top to bottom: the title ("Resume a session (12)", or "(3 of 12)" while filtered), the
//! filter line, a header, one row per session (title or "(untitled)", with the session's
//! short id after it when another row shows the same title, "(open in rein pid N)" when
//! another rein has it open, how long ago it was last written, its message count, its
//! project with the home directory as `~` and a `●` for this project), the selected row
//! highlighted and kept in view, and the legend of `●` with the keys. Titles and paths
//! come from users and the disk, so they are sanitised. Ages are relative to the time the
//! list was read (`picker.now`), so drawing is a pure function of the state.

use std::collections::HashMap;

use std::path::Path;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::list_modal::{fit, ListModal};
use super::sanitize::sanitize;
use super::theme;
use super::wrap::{truncate, width};
use crate::app::picker::Picker;
use rein_core::session::{MessageCount, SessionSummary};

/// The widest the modal gets.
const MAX_WIDTH: u16 = 100;
/// Columns of the message count ("1234").
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

    /// One session as a row; `twin`: another row shows the same title, so the session's
    /// short id follows it.
    fn row(&self, s: &SessionSummary, selected: bool, twin: bool, cols: Columns) -> Line<'static> {
        let here = s.project == self.project;
        let (mut title, title_style) = match s.title.as_deref().map(str::trim) {
            Some(t) if !t.is_empty() => (sanitize(t).replace('\n', " "), theme::TEXT),
            _ => ("(untitled)".to_string(), theme::DIM),
        };
        if twin {
            // The short id goes in front of what is cut, so it shows however long the
            // title.
            let id = format!(" #{}", short_id(&s.id));
            let room = cols.title.saturating_sub(width(&id) + 1);
            title = format!("{}{id}", truncate(&title, room));
        }
        let base = if selected {
            theme::SELECTED
        } else {
            Style::new()
        };
        let mark = if selected { SELECTED_MARK } else { "  " };
        // Another rein has it open: choosing it continues in a copy.
        let open = s.open.map(|h| format!(" ({h})")).unwrap_or_default();
        let open_w = width(&open).min(cols.title / 2);
        Line::from(vec![
            Span::styled(mark, base.patch(theme::HINT)),
            Span::styled(
                fit(&title, cols.title - open_w, false),
                base.patch(title_style),
            ),
            Span::styled(fit(&open, open_w, false), base.patch(theme::WARNING)),
            Span::styled("  ", base),
            Span::styled(
                fit(&self.picker.age(s), cols.age, true),
                base.patch(theme::DIM),
            ),
            Span::styled("  ", base),
            Span::styled(fit(&count(s.messages), COUNT_W, true), base),
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
        let keys = [
            ("Enter".to_string(), "resume"),
            ("Esc".to_string(), "close"),
            ("↑↓".to_string(), "move"),
            ("type".to_string(), "to filter"),
        ];
        // The legend first: what `●` means is not a key, but it is what the footer explains.
        let keys = [
            ("●".to_string(), "this project"),
            keys[0].clone(),
            keys[1].clone(),
            keys[2].clone(),
            keys[3].clone(),
        ];
        let Some(list) = (ListModal {
            title: "Resume a session",
            shown: matches.len(),
            total: picker.sessions.len(),
            filter: &picker.filter,
            placeholder: "type part of a title, project or id",
            rows: matches.len(),
            keys: &keys,
            max_width: MAX_WIDTH,
        })
        .frame(area, buf) else {
            return;
        };
        let widest = |w: &dyn Fn(&SessionSummary) -> usize| matches.iter().map(|s| w(s)).max();
        let cols = Columns::new(
            list.text_w,
            widest(&|s| width(&picker.age(s))).unwrap_or(0),
            widest(&|s| width(&self.project_text(s))).unwrap_or(0),
        );
        let mut y = list.header_y;
        list.put(buf, &PickerModal::header(cols), y);
        y += 1;
        if matches.is_empty() {
            let filter = sanitize(&picker.filter).replace('\n', " ");
            let text = format!("no session matches \"{filter}\"");
            list.put(
                buf,
                &Line::from(Span::styled(truncate(&text, list.text_w), theme::WARNING)),
                y,
            );
        } else {
            let (selected, offset) = list.window(picker.selected, matches.len());
            let mut titles: HashMap<String, usize> = HashMap::new();
            for s in &matches {
                *titles.entry(title_key(s)).or_default() += 1;
            }
            for (i, s) in matches.iter().enumerate().skip(offset).take(list.rows_h) {
                let twin = titles.get(&title_key(s)).is_some_and(|&n| n > 1);
                list.put(buf, &self.row(s, i == selected, twin, cols), y);
                y += 1;
            }
        }
    }
}

/// A message count as the picker shows it: the loop made it exact where it could read
/// the file's tail ([`rein_core::session::exact_count`]); a tail too long to read leaves "at
/// least" (`40+`), no file to read "?".
pub fn count(messages: MessageCount) -> String {
    match messages {
        MessageCount::Exact(n) => n.to_string(),
        MessageCount::Approx(n) => format!("{n}+"),
        MessageCount::Unknown => "?".to_string(),
    }
}

/// What makes two rows' titles the same to the eye: the words, whatever the case.
fn title_key(s: &SessionSummary) -> String {
    s.title
        .as_deref()
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The part of a session id that tells sessions apart: its random end
/// (`20250101-120000-a1b2c3` is `a1b2c3`), or the whole id when it has no such part.
pub fn short_id(id: &str) -> &str {
    match id.rsplit_once('-') {
        Some((_, tail)) if !tail.is_empty() => tail,
        _ => id,
    }
}
