//! Drawing the dashboard: a pure function of the state (and the clock, for "running
//! `bash` for 12 s").
//!
//! [`render`] lays the frame out ([`layout`]) and draws each pane from `&App`: the
//! transcript ([`transcript`], Markdown by [`markdown`], wrapping by [`wrap`]) or the
//! first-run explanation ([`setup`]), the todo pane or its one-line summary ([`todo`](mod@todo)),
//! the input box ([`input`]), the hint, the status line and key hints ([`status`]), the
//! context gauge ([`gauge`]); over them, the open layers of [`crate::app::layer`]'s stack,
//! bottom up: the `@` file finder's list ([`finder`](mod@finder)) and the `/` completion
//! list ([`slash_menu`]) above the input, the Ctrl-R search over the input box
//! ([`history_search`]), the `/context` layer ([`context_modal`]), the help of `/help` and
//! F1 ([`help`](mod@help)), the model picker
//! ([`model_picker`]), the session picker ([`picker`]) and the approval modal
//! ([`approval_modal`]). Colours
//! come from [`theme`]; everything from the model or a tool passes [`sanitize`] before it
//! becomes a span. Nothing here writes to the state except
//! the transcript cells' render caches, which sit behind `RefCell`s for that purpose.

pub mod approval_modal;
pub mod context_modal;
pub mod diff;
pub mod finder;
pub mod form_modal;
pub mod gauge;
pub mod help;
pub mod history_search;
pub mod hook_trust;
pub mod input;
pub mod layout;
pub mod lines;
pub mod list_modal;
pub mod markdown;
pub mod mcp_panel;
pub mod model_picker;
pub mod pager;
pub mod picker;
pub mod plan_review;
pub mod rewind;
pub mod sanitize;
pub mod screen;
pub mod scroll;
pub mod setup;
pub mod slash_menu;
pub mod status;
pub mod theme;
pub mod todo;
pub mod transcript;
pub mod wrap;

use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::Frame;

use crate::app::{App, Layer};

/// Draw the whole dashboard for `app` as of `now`: the open layers bottom up
/// ([`Layer::stack`]), so the one on top is drawn last, over the others.
pub fn render(app: &App, frame: &mut Frame, now: Instant) {
    let area = frame.area();
    render_into(app, area, frame.buffer_mut(), now);
}

/// [`render`] into a buffer of the screen's `area` (the dashboard keeps its own two, for
/// [`diff`]). Returns where the panes went.
pub fn render_into(app: &App, area: Rect, buf: &mut Buffer, now: Instant) -> layout::Areas {
    let areas = layout::areas(app, area);
    if area.is_empty() {
        return areas;
    }
    for layer in Layer::stack(app).rev() {
        render_layer(layer, app, area, &areas, buf, now);
    }
    areas
}

/// Draw one layer: the main screen's panes, or a modal over the whole frame.
fn render_layer(
    layer: Layer,
    app: &App,
    area: Rect,
    areas: &layout::Areas,
    buf: &mut Buffer,
    now: Instant,
) {
    match layer {
        Layer::Main => render_main(app, areas, buf, now),
        Layer::Slash => {
            let input = areas.input;
            buf_render(slash_menu::SlashMenuPopup { app, input }, area, buf);
        }
        Layer::Context => buf_render(
            context_modal::ContextModal {
                stats: app.context.as_ref(),
                usage: &app.usage,
                prices: app.info.prices,
            },
            area,
            buf,
        ),
        Layer::Help => {
            if let Some(help) = &app.help {
                buf_render(help, area, buf);
            }
        }
        Layer::Sessions => {
            if let Some(picker) = &app.picker {
                buf_render(
                    picker::PickerModal {
                        picker,
                        project: &app.info.project,
                    },
                    area,
                    buf,
                );
            }
        }
        Layer::Rewind => {
            if let Some(state) = &app.rewind {
                buf_render(rewind::RewindModal { state }, area, buf);
            }
        }
        Layer::Models => {
            if let Some(picker) = &app.model_picker {
                buf_render(model_picker::ModelPickerModal { picker }, area, buf);
            }
        }
        Layer::Mcp => {
            if let Some(panel) = &app.mcp_panel {
                buf_render(mcp_panel::McpPanelModal { panel, app }, area, buf);
            }
        }
        Layer::Approval => buf_render(&app.approvals, area, buf),
        Layer::Form => buf_render(&app.forms, area, buf),
        Layer::Plan => {
            if let Some(review) = &app.plan_review {
                buf_render(review, area, buf);
            }
        }
        Layer::Pager => {
            if let Some(pager) = &app.pager {
                let cells = &app.transcript.cells;
                buf_render(pager::PagerModal { pager, cells }, area, buf);
            }
        }
        Layer::Hooks => {
            if let Some(trust) = &app.hook_trust {
                buf_render(trust, area, buf);
            }
        }
        Layer::Finder => {
            let input = areas.input;
            buf_render(
                finder::FinderPopup {
                    finder: &app.finder,
                    input,
                },
                area,
                buf,
            );
        }
        // The field is part of the approval modal, drawn with it.
        Layer::Feedback => {}
        Layer::Search => {
            if let Some(search) = &app.search {
                let input = areas.input;
                buf_render(
                    history_search::SearchBox {
                        search,
                        history: &app.composer.history,
                    },
                    input,
                    buf,
                );
            }
        }
    }
}

/// The main screen: transcript (or the first-run explanation), todo pane, input, hint,
/// status line, key hints and gauge.
fn render_main(app: &App, areas: &layout::Areas, buf: &mut Buffer, now: Instant) {
    match &app.info.setup {
        Some(text) => buf_render(setup::SetupScreen { text }, areas.transcript, buf),
        None => buf_render(&app.transcript, areas.transcript, buf),
    }
    if let Some(pane) = areas.todo_pane {
        buf_render(todo::TodoPane { todos: &app.todos }, pane, buf);
    }
    if let Some(line) = areas.todo_summary.filter(|r| !r.is_empty()) {
        buf.set_line(
            line.x,
            line.y,
            &todo::summary_line(&app.todos, line.width),
            line.width,
        );
    }
    if let Some(rect) = areas.queue {
        buf_render(
            input::QueueList {
                composer: &app.composer,
            },
            rect,
            buf,
        );
    }
    buf_render(
        input::InputBox {
            composer: &app.composer,
            busy: app.busy(),
        },
        areas.input,
        buf,
    );
    if let (Some(rect), Some(hint)) = (areas.hint.filter(|r| !r.is_empty()), &app.hint) {
        let text = sanitize::sanitize(hint).replace('\n', " ");
        let line = Line::from(Span::styled(
            wrap::truncate(&text, usize::from(rect.width)),
            theme::HINT,
        ));
        buf.set_line(rect.x, rect.y, &line, rect.width);
    }
    buf_render(status::StatusLine { app, now }, areas.status, buf);
    if !areas.hints.is_empty() {
        let hints = status::hints_line(app, usize::from(areas.hints.width));
        buf.set_line(areas.hints.x, areas.hints.y, &hints, areas.hints.width);
    }
    buf_render(&app.gauge, areas.gauge, buf);
}

/// Draw `widget` unless its area is empty (a pane squeezed out of a tiny terminal).
fn buf_render(widget: impl ratatui::widgets::Widget, area: Rect, buf: &mut Buffer) {
    if !area.is_empty() {
        widget.render(area, buf);
    }
}

/// The text of a buffer, one line per row with trailing spaces cut; the cell hidden
/// behind a wide character is skipped. For snapshot tests and terminal checks.
pub fn buffer_text(buf: &ratatui::buffer::Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let mut line = String::new();
        let mut hidden = 0usize;
        for x in area.left()..area.right() {
            if hidden > 0 {
                hidden -= 1;
                continue;
            }
            let symbol = buf[(x, y)].symbol();
            line.push_str(symbol);
            hidden = wrap::width(symbol).saturating_sub(1);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
