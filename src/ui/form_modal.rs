//! An MCP server's form (`crate::app::form`), drawn so it cannot pass for rein's own
//! approval: a blue double border instead of the approval modal's yellow rounded one, a
//! title and a first line that name the server and say the question is the server's, its
//! message set off as a quote (`│ `), then the fields. The server's words are already
//! sanitised and bounded (`rein_core::elicitation`); they are drawn through the UI's sanitiser
//! again, and cut to the width, so nothing the server wrote reaches the terminal raw.
//!
//! Fields: one line each (`›` marks the chosen one, `*` a required one), the chosen field's
//! description and what it takes on the line under it, only the fields that fit around the
//! chosen one (a form of 1,000 fields draws the same few lines). An error line says why
//! the last try to send failed; the keys line comes from the keymap.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Widget};

use super::layout::{centred, framed, keys_line, modal_width};
use super::sanitize::sanitize;
use super::theme;
use super::wrap::{truncate, width, wrap_text};
use crate::app::form::{Forms, OpenForm, Value, FOOTER};
use rein_core::elicitation::{Field, FieldKind, TextFormat};

/// The widest the form gets.
const MAX_WIDTH: u16 = 90;
/// The most lines of the server's message shown.
const MESSAGE_LINES: usize = 6;
/// The form's border: not the approval modal's colour or shape.
const FORM_BORDER: Style = Style::new().fg(Color::Blue);

/// What the chosen field takes, in a few words.
fn takes(field: &Field) -> String {
    let mut out = match &field.kind {
        FieldKind::Text {
            min_length,
            max_length,
            format,
            ..
        } => {
            let mut t = match format {
                Some(TextFormat::Email) => "an email address".to_string(),
                Some(TextFormat::Uri) => "a URI".to_string(),
                Some(TextFormat::Date) => "a date, YYYY-MM-DD".to_string(),
                Some(TextFormat::DateTime) => "a date and time".to_string(),
                None => "text".to_string(),
            };
            match (min_length, max_length) {
                (Some(a), Some(b)) => t.push_str(&format!(", {a} to {b} characters")),
                (Some(a), None) => t.push_str(&format!(", at least {a} characters")),
                (None, Some(b)) => t.push_str(&format!(", at most {b} characters")),
                (None, None) => {}
            }
            t
        }
        FieldKind::Number {
            integer,
            minimum,
            maximum,
            ..
        } => {
            let mut t = if *integer {
                "a whole number"
            } else {
                "a number"
            }
            .to_string();
            match (minimum, maximum) {
                (Some(a), Some(b)) => t.push_str(&format!(", {a} to {b}")),
                (Some(a), None) => t.push_str(&format!(", at least {a}")),
                (None, Some(b)) => t.push_str(&format!(", at most {b}")),
                (None, None) => {}
            }
            t
        }
        FieldKind::Boolean { .. } => "yes or no (Space)".to_string(),
        FieldKind::Choice { choices, .. } => format!("one of {} (← →)", choices.len()),
    };
    if field.required {
        out.push_str("; required");
    }
    out
}

/// A field's value as shown.
fn shown_value(field: &Field, value: &Value) -> (String, Style) {
    match (value, &field.kind) {
        (Value::Typed(text), _) if text.is_empty() => ("…".to_string(), theme::DIM),
        (Value::Typed(text), _) => (sanitize(text).into_owned(), theme::TEXT),
        (Value::Flag(None), _) => ("yes / no".to_string(), theme::DIM),
        (Value::Flag(Some(true)), _) => ("yes".to_string(), theme::TEXT),
        (Value::Flag(Some(false)), _) => ("no".to_string(), theme::TEXT),
        (Value::Choice(Some(c)), FieldKind::Choice { choices, .. }) => (
            choices
                .get(*c)
                .map(|c| format!("‹ {} ›", c.label))
                .unwrap_or_default(),
            theme::TEXT,
        ),
        (Value::Choice(_), _) => ("‹ choose ›".to_string(), theme::DIM),
    }
}

/// The fields' lines that fit in `rows`, the chosen one in view.
fn field_lines(open: &OpenForm, text_w: usize, rows: usize) -> Vec<Line<'static>> {
    let fields = &open.form.fields;
    if fields.is_empty() {
        return vec![Line::styled("(no fields: sending says yes)", theme::DIM)];
    }
    // One line a field, two for the chosen one.
    let shown = rows.saturating_sub(1).max(1);
    let first = open
        .chosen
        .saturating_sub(shown / 2)
        .min(fields.len().saturating_sub(shown));
    let mut out = Vec::new();
    for (i, (field, value)) in fields
        .iter()
        .zip(&open.values)
        .enumerate()
        .skip(first)
        .take(shown)
    {
        let chosen = i == open.chosen;
        let label = format!(
            "{} {}{}: ",
            if chosen { "›" } else { " " },
            sanitize(&field.label),
            if field.required { "*" } else { "" }
        );
        let label = truncate(&label, text_w / 2);
        let (value, style) = shown_value(field, value);
        let room = text_w.saturating_sub(width(&label));
        // The end of a long text is what is being typed.
        let value = if chosen && width(&value) > room && room > 1 {
            let tail: String = value
                .chars()
                .rev()
                .take(room - 1)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            format!("…{tail}")
        } else {
            truncate(&value, room)
        };
        let label_style = if chosen { theme::KEY } else { theme::TEXT };
        let value_style = if chosen {
            style.patch(theme::SELECTED)
        } else {
            style
        };
        out.push(Line::from(vec![
            Span::styled(label, label_style),
            Span::styled(value, value_style),
        ]));
        if chosen {
            let mut about = takes(field);
            if let Some(d) = &field.description {
                about = format!("{} ({about})", sanitize(d));
            }
            out.push(Line::styled(
                truncate(&format!("    {about}"), text_w),
                theme::DIM,
            ));
        }
    }
    out
}

impl Widget for &Forms {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Some(open) = self.queue.front() else {
            return;
        };
        let (modal_w, text_w) = modal_width(area.width, MAX_WIDTH);
        let server = sanitize(&open.form.server).into_owned();
        let mut head = Vec::new();
        wrap_text(
            format!("The MCP server \"{server}\" asks you (its question, not rein's):"),
            theme::STRONG,
            text_w,
            &mut head,
        );
        let mut message = Vec::new();
        for line in sanitize(&open.form.message).lines() {
            wrap_text(
                line.to_string(),
                theme::EMPHASIS,
                text_w.saturating_sub(2).max(1),
                &mut message,
            );
        }
        if message.len() > MESSAGE_LINES {
            message.truncate(MESSAGE_LINES);
            message.push(Line::styled("…", theme::DIM));
        }
        for line in &mut message {
            line.spans.insert(0, Span::styled("│ ", FORM_BORDER));
        }
        head.extend(message);
        head.push(Line::default());
        let more = if self.queue.len() > 1 {
            format!(" · {} more forms wait", self.queue.len() - 1)
        } else {
            String::new()
        };
        let count = Line::styled(
            format!(
                "field {} of {}{more}",
                (open.chosen + 1).min(open.form.fields.len()),
                open.form.fields.len()
            ),
            theme::DIM,
        );
        // Borders 2, the count, the error, the keys, and the fields under the head.
        let fields_wanted = open.form.fields.len().max(1) + 1;
        let wanted = u16::try_from(head.len() + fields_wanted + 5).unwrap_or(u16::MAX);
        let rect = centred(area, modal_w, wanted);
        let title = Span::styled(
            truncate(&format!(" Form from MCP server \"{server}\" "), text_w),
            theme::TITLE,
        );
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Double)
            .border_style(FORM_BORDER)
            .title(title);
        let inner = framed(block, rect, buf, true);
        if inner.is_empty() {
            return;
        }
        let rows = usize::from(inner.height);
        // The head may take at most half the room; the fields get the rest.
        head.truncate((rows / 2).max(1));
        let field_rows = rows.saturating_sub(head.len() + 3).max(1);
        let mut lines = head;
        lines.extend(field_lines(open, text_w, field_rows));
        for (y, line) in (inner.y..).zip(lines.iter().take(rows.saturating_sub(3))) {
            buf.set_line(inner.x, y, line, inner.width);
        }
        let bottom = inner.bottom();
        if let Some(error) = &open.error {
            let error = Line::styled(truncate(&sanitize(error), text_w), theme::ERROR);
            buf.set_line(inner.x, bottom.saturating_sub(3), &error, inner.width);
        }
        buf.set_line(inner.x, bottom.saturating_sub(2), &count, inner.width);
        buf.set_line(
            inner.x,
            bottom.saturating_sub(1),
            &keys_line(FOOTER, usize::from(inner.width), ""),
            inner.width,
        );
    }
}
