//! The todo pane: the agent's plan (`write_todos`), with status marks, the item in
//! progress highlighted (in its `active_form` wording) and "done/total" in the title; and
//! the one-line summary that replaces the pane on narrow terminals.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Widget};

use super::sanitize::sanitize;
use super::theme;
use super::wrap::{truncate, wrap_into, WrapMode};
use crate::describe::{todo_counts as counts, todo_wording as wording};
use rein_core::tools::write_todos::{Todo, TodoStatus};

/// The marks of pending, in-progress and completed items.
pub const MARKS: [&str; 3] = ["☐ ", "▶ ", "☑ "];

fn mark(status: TodoStatus) -> &'static str {
    match status {
        TodoStatus::Pending => MARKS[0],
        TodoStatus::InProgress => MARKS[1],
        TodoStatus::Completed => MARKS[2],
    }
}

/// The pane: a bordered list, scrolled so the item in progress stays in view.
pub struct TodoPane<'a> {
    pub todos: &'a [Todo],
}

impl Widget for TodoPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let block = Block::default()
            .borders(Borders::LEFT)
            .border_style(theme::BORDER)
            .title(Line::from(vec![
                Span::styled(" Plan ", theme::TITLE),
                Span::styled(format!("{} ", counts(self.todos)), theme::DIM),
            ]));
        let inner = block.inner(area);
        block.render(area, buf);
        let inner = Rect {
            x: inner.x + 1,
            width: inner.width.saturating_sub(1),
            ..inner
        };
        if inner.is_empty() {
            return;
        }
        let mut lines: Vec<Line<'static>> = Vec::new();
        let mut active_line = None;
        for todo in self.todos {
            let style = match todo.status {
                TodoStatus::Pending => theme::TODO_PENDING,
                TodoStatus::InProgress => theme::TODO_ACTIVE,
                TodoStatus::Completed => theme::TODO_DONE,
            };
            if todo.status == TodoStatus::InProgress && active_line.is_none() {
                active_line = Some(lines.len());
            }
            let text = sanitize(wording(todo)).replace('\n', " ");
            let first = [Span::styled(
                mark(todo.status),
                style.remove_modifier(ratatui::style::Modifier::CROSSED_OUT),
            )];
            let rest = [Span::raw("  ")];
            wrap_into(
                &[Span::styled(text, style)],
                usize::from(inner.width),
                &first,
                &rest,
                WrapMode::Words,
                &mut lines,
            );
        }
        let height = usize::from(inner.height);
        let offset = match active_line {
            Some(a) if lines.len() > height => {
                a.saturating_sub(height / 3).min(lines.len() - height)
            }
            _ => 0,
        };
        for (y, line) in lines.iter().skip(offset).take(height).enumerate() {
            buf.set_line(inner.x, inner.y + y as u16, line, inner.width);
        }
    }
}

/// The one line shown above the input when the pane does not fit: counts and the item
/// in progress (else the next pending one).
pub fn summary_line(todos: &[Todo], width: u16) -> Line<'static> {
    let current = crate::describe::todo_current(todos);
    let head = format!("Plan {}", counts(todos));
    let mut spans = vec![Span::styled(head.clone(), theme::TITLE)];
    if let Some(t) = current {
        let style = if t.status == TodoStatus::InProgress {
            theme::TODO_ACTIVE
        } else {
            theme::TODO_PENDING
        };
        let room = usize::from(width).saturating_sub(head.chars().count() + 3 + 2);
        let text = sanitize(wording(t)).replace('\n', " ");
        spans.push(Span::styled(" · ", theme::DIM));
        spans.push(Span::styled(mark(t.status), style));
        spans.push(Span::styled(truncate(&text, room), style));
    }
    Line::from(spans)
}
