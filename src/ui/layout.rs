//! Where each pane goes for a terminal size.
//!
//! ```text
//! ┌ transcript ─────────────────────────┬ todo pane (≥ 90 columns) ┐
//! │                                     │                          │
//! ├ todo summary (narrower terminals) ──┴──────────────────────────┤
//! ├ queued messages (while some wait, up to 3 lines) ──────────────┤
//! ├ input (grows to 8 lines) ──────────────────────────────────────┤
//! ├ hint (when set) ───────────────────────────────────────────────┤
//! ├ status: activity │ model │ project (branch) │ [ctx] │ sandbox ─┤
//! └ key hints ··························· ctx ████░░░│░ 42% · 54k/128k┘
//! ```

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::{Block, Clear, Widget};

use super::input;
use crate::app::App;

/// The narrowest terminal that gets the todo pane beside the transcript.
pub const TODO_PANE_MIN_COLUMNS: u16 = 90;

/// The rectangles of one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    pub transcript: Rect,
    pub todo_pane: Option<Rect>,
    pub todo_summary: Option<Rect>,
    /// The queued messages above the input, while some wait.
    pub queue: Option<Rect>,
    pub input: Rect,
    pub hint: Option<Rect>,
    pub status: Rect,
    pub hints: Rect,
    pub gauge: Rect,
}

/// Lay out `area` for `app`.
pub fn areas(app: &App, area: Rect) -> Areas {
    let todos = app.show_todos && !app.todos.is_empty();
    let wide = area.width >= TODO_PANE_MIN_COLUMNS;
    let summary_h = u16::from(todos && !wide);
    let hint_h = u16::from(app.hint.is_some());
    let queue_h = input::queue_height(&app.composer);
    let [main, summary, queue, input, hint, status, footer] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(summary_h),
        Constraint::Length(queue_h),
        Constraint::Length(input::height(&app.composer)),
        Constraint::Length(hint_h),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let (transcript, todo_pane) = if todos && wide {
        let pane_w = (area.width * 3 / 10).clamp(28, 44);
        let [t, _, p] = Layout::horizontal([
            Constraint::Min(1),
            Constraint::Length(1),
            Constraint::Length(pane_w),
        ])
        .areas(main);
        (t, Some(p))
    } else {
        (main, None)
    };
    let gauge_w = (footer.width / 2).clamp(24.min(footer.width), 48);
    let [hints, _, gauge] = Layout::horizontal([
        Constraint::Min(0),
        Constraint::Length(1),
        Constraint::Length(gauge_w),
    ])
    .areas(footer);
    Areas {
        transcript,
        todo_pane,
        todo_summary: (summary_h > 0).then_some(summary),
        queue: (queue_h > 0).then_some(queue),
        input,
        hint: (hint_h > 0).then_some(hint),
        status,
        hints,
        gauge,
    }
}

/// A modal's width in an area `area_width` wide (two columns of margin each side, at most
/// `max`, at least 30 where the area allows) and the width of its text inside the borders
/// and padding.
pub fn modal_width(area_width: u16, max: u16) -> (u16, usize) {
    let modal_w = area_width
        .saturating_sub(4)
        .min(max)
        .max(area_width.min(30));
    (modal_w, usize::from(modal_w.saturating_sub(4)).max(1))
}

/// A modal's rectangle in `area`: `width` by `height` (at most the area), centred.
pub fn centred(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// A modal's frame: rounded, in the modal colour, titled `title`.
pub fn modal_block<'a>(title: impl Into<ratatui::text::Line<'a>>) -> Block<'a> {
    Block::default()
        .borders(ratatui::widgets::Borders::ALL)
        .border_type(ratatui::widgets::BorderType::Rounded)
        .border_style(super::theme::MODAL_BORDER)
        .title(title)
}

/// Draw `block` over `area` (cleared first when it is a modal over other panes) and return
/// its inside with one column of padding on each side.
pub fn framed(block: Block<'_>, area: Rect, buf: &mut Buffer, modal: bool) -> Rect {
    if modal {
        Clear.render(area, buf);
    }
    let inner = block.inner(area);
    block.render(area, buf);
    Rect {
        x: inner.x + 1,
        width: inner.width.saturating_sub(2),
        ..inner
    }
}

/// A box of scrolling text over the screen (the help, a project's hooks): `title` on its
/// border, the body (made by `body` for the text's width) from line `scroll` on, the last
/// page kept in view and "↓ N more" above the keys when more is below, and the line of
/// keys (made by `keys` for the inside's width) at the bottom. At most `max_width` wide.
pub fn scrolling_text_modal(
    area: Rect,
    buf: &mut Buffer,
    max_width: u16,
    title: ratatui::text::Span<'_>,
    scroll: u16,
    body: impl FnOnce(usize) -> Vec<ratatui::text::Line<'static>>,
    keys: impl FnOnce(usize) -> ratatui::text::Line<'static>,
) {
    let (modal_w, text_w) = modal_width(area.width, max_width);
    let body = body(text_w);
    // Borders 2, a blank line above the body, one above the keys, the keys.
    let wanted = u16::try_from(body.len())
        .unwrap_or(u16::MAX)
        .saturating_add(5);
    let rect = centred(area, modal_w, wanted);
    let inner = framed(modal_block(title), rect, buf, true);
    if inner.is_empty() {
        return;
    }
    let keys_y = inner.bottom().saturating_sub(1);
    let top = inner.y + u16::from(inner.height > 3);
    let room = usize::from(keys_y.saturating_sub(top + u16::from(inner.height > 4)));
    // The scroll, kept so the last page stays in view.
    let skip = usize::from(scroll).min(body.len().saturating_sub(room));
    for (y, line) in (top..top + room as u16).zip(body.iter().skip(skip)) {
        buf.set_line(inner.x, y, line, inner.width);
    }
    if skip + room < body.len() {
        let more = format!("↓ {} more", body.len() - skip - room);
        let x = inner
            .right()
            .saturating_sub(super::wrap::width(&more) as u16);
        buf.set_string(x, keys_y.saturating_sub(1), more, super::theme::DIM);
    }
    buf.set_line(
        inner.x,
        keys_y,
        &keys(usize::from(inner.width)),
        inner.width,
    );
}

/// A modal's keys line from the keymap, "Esc close · PgDn page down · …": the `footer`'s
/// bindings in order, as many as fit in `text_w`; `fallback` (keys only) when none does.
pub fn keys_line(
    footer: &[(crate::app::keymap::Mode, crate::app::keymap::Action)],
    text_w: usize,
    fallback: &str,
) -> ratatui::text::Line<'static> {
    use super::theme;
    use super::wrap::{truncate, width};
    use ratatui::text::{Line, Span};
    let mut spans = Vec::new();
    let mut used = 0;
    for &(mode, action) in footer {
        let Some((keys, desc)) = crate::app::keymap::keymap().hint(mode, action) else {
            continue;
        };
        let sep = if spans.is_empty() { "" } else { " · " };
        let w = width(sep) + width(&keys) + 1 + width(desc);
        if used + w > text_w {
            break;
        }
        used += w;
        spans.push(Span::styled(sep, theme::DIM));
        spans.push(Span::styled(keys, theme::HINT));
        spans.push(Span::styled(format!(" {desc}"), theme::DIM));
    }
    if spans.is_empty() && !fallback.is_empty() {
        spans.push(Span::styled(truncate(fallback, text_w), theme::HINT));
    }
    Line::from(spans)
}

/// A scrolling modal's bottom title: " PgUp/PgDn · lines 4–20 of 120 ", right-aligned;
/// `first` is the scroll (0-based), `shown` the rows of text in view.
pub fn lines_shown(first: usize, shown: usize, total: usize) -> ratatui::text::Line<'static> {
    ratatui::text::Line::from(ratatui::text::Span::styled(
        format!(
            " PgUp/PgDn · lines {}–{} of {total} ",
            first + 1,
            first + shown
        ),
        super::theme::HINT,
    ))
    .right_aligned()
}
