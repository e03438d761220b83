//! The `/` completion list, drawn just above the input box over the bottom of the
//! transcript: one row per matching command, `/name hint` in a column, then its
//! description (dimmed, cut to fit) and, for a custom command, where it comes from. The
//! selected row is reversed; when there are more matches than rows, the rows scroll to
//! keep it in view and the title says "3 of 14". The list's state is in
//! [`crate::app::slash_menu`].

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Widget};

use super::layout::framed;
use super::sanitize::sanitize;
use super::theme;
use super::wrap::{truncate, width};
use crate::app::slash_menu::{self, Entry};
use crate::app::App;

/// The most rows shown at once.
pub const MAX_ROWS: usize = 8;
/// The widest the name column gets; longer names are cut.
const NAME_COLUMN_MAX: usize = 32;

/// The list for `app`, above `input` (the input box's rectangle) inside `area`.
pub struct SlashMenuPopup<'a> {
    pub app: &'a App,
    pub input: Rect,
}

impl Widget for SlashMenuPopup<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let entries = self.app.slash_matches();
        if entries.is_empty() {
            return;
        }
        let selected = self.app.slash_selected(entries.len());
        let room = usize::from(self.input.y.saturating_sub(area.y)).saturating_sub(2);
        let rows = entries.len().min(MAX_ROWS).min(room);
        if rows == 0 {
            return;
        }
        let height = rows as u16 + 2;
        let rect = Rect {
            x: self.input.x,
            y: self.input.y - height,
            width: self.input.width,
            height,
        };
        let total = slash_menu::entries(&self.app.custom_commands).len();
        let count = if entries.len() == total {
            format!("{total}")
        } else {
            format!("{} of {total}", entries.len())
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(theme::MODAL_BORDER)
            .title(Line::from(vec![
                Span::styled(" commands ", theme::TITLE),
                Span::styled(format!("({count}) "), theme::DIM),
            ]));
        let inner = framed(block, rect, buf, true);
        if inner.is_empty() {
            return;
        }
        let text_w = usize::from(inner.width);
        let name_w = entries
            .iter()
            .map(|e| width(&usage(e)))
            .max()
            .unwrap_or(0)
            .min(NAME_COLUMN_MAX)
            .min(text_w * 2 / 3);
        let first = (selected + 1).saturating_sub(rows);
        for (i, entry) in entries.iter().enumerate().skip(first).take(rows) {
            let line = row(entry, name_w, text_w, i == selected);
            buf.set_line(inner.x, inner.y + (i - first) as u16, &line, inner.width);
        }
    }
}

/// `/name hint`, as typed in the list's name column.
fn usage(entry: &Entry) -> String {
    let text = if entry.hint.is_empty() {
        entry.name.clone()
    } else {
        format!("{} {}", entry.name, entry.hint)
    };
    sanitize(&text).replace('\n', " ")
}

fn row(entry: &Entry, name_w: usize, text_w: usize, selected: bool) -> Line<'static> {
    let name = truncate(&usage(entry), name_w);
    let pad = " ".repeat(name_w.saturating_sub(width(&name)) + 2);
    let mut description = sanitize(&entry.description).replace('\n', " ");
    if let Some(source) = &entry.source {
        description = format!("{description} ({source})");
    }
    let room = text_w.saturating_sub(name_w + 2);
    let description = truncate(&description, room);
    let fill = " ".repeat(room.saturating_sub(width(&description)));
    let (name_style, text_style) = if selected {
        (theme::SELECTED.patch(theme::STRONG), theme::SELECTED)
    } else {
        (theme::HINT, theme::DIM)
    };
    Line::from(vec![
        Span::styled(name, name_style),
        Span::styled(pad, text_style),
        Span::styled(description, text_style),
        Span::styled(fill, text_style),
    ])
}
