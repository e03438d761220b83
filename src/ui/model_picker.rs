//! The model picker: a centred layer over the dashboard while `/model` is open.
//!
//! Top to bottom: the title ("Switch model (4)", or "(1 of 4)" while filtered), the filter
//! line, a header, one row per model (its name, `● in use` for the model in use, the
//! context window and the prices where configured), then the models the server listed
//! ("from the server" where the prices go), a last row offering the filter as a name when
//! it is not listed, the selected row highlighted and kept in view, a line saying what the
//! server answered (asking, how many, or why none), and the keys from the keymap. Names
//! come from config files and servers, so they are sanitised.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::list_modal::{fit, ListModal};
use super::sanitize::sanitize;
use super::theme;
use super::wrap::{truncate, width};
use crate::app::keymap::{keymap, Action, Mode};
use crate::app::model_picker::{ModelPicker, ModelRow, ServerState};
use rein_core::agent::Prices;
use rein_core::context::short_count;

/// The widest the modal gets.
const MAX_WIDTH: u16 = 96;
/// The marker in front of the selected row.
const SELECTED_MARK: &str = "› ";
/// After the name of the model in use.
const IN_USE: &str = "● in use";
/// Columns of the window ("1.0M").
const WINDOW_W: usize = 6;
/// Over the prices column.
const PRICES_HEADER: &str = "price per M tokens";
/// In the prices column of a model the server listed.
const SERVER_NOTE: &str = "from the server";

/// The line under the rows: what the server of the model in use answered.
fn server_line(picker: &ModelPicker) -> Option<(String, Style)> {
    let url = |u: &str| sanitize(u).replace('\n', " ");
    match &picker.server {
        ServerState::None => None,
        ServerState::Asking(u) => Some((format!("asking {} …", url(u)), theme::DIM)),
        ServerState::Listed(u) => {
            let n = picker.server_models.len();
            let models = if n == 1 { "model" } else { "models" };
            Some((format!("{n} more {models} from {}", url(u)), theme::DIM))
        }
        ServerState::Failed(why) => Some((
            format!("✗ the server listed no models: {}", url(why)),
            theme::WARNING,
        )),
    }
}

/// The picker.
pub struct ModelPickerModal<'a> {
    pub picker: &'a ModelPicker,
}

/// "$3 in · $15 out" (per million tokens, as the header says), with the cached price
/// when there is one.
fn prices_text(prices: Option<Prices>) -> String {
    match prices {
        None => "-".to_string(),
        Some(p) => match p.cached_input {
            Some(cached) => format!("${} in · ${cached} cached · ${} out", p.input, p.output),
            None => format!("${} in · ${} out", p.input, p.output),
        },
    }
}

impl ModelPickerModal<'_> {
    /// One row: marker, name (and `● in use`), window, prices.
    fn row(
        &self,
        row: ModelRow<'_>,
        selected: bool,
        name_w: usize,
        prices_w: usize,
    ) -> Line<'static> {
        let base = if selected {
            theme::SELECTED
        } else {
            Style::new()
        };
        let mark = if selected { SELECTED_MARK } else { "  " };
        let mut spans = vec![Span::styled(mark, base.patch(theme::HINT))];
        match row {
            ModelRow::Model(m) | ModelRow::Server(m) => {
                let in_use = m.name == self.picker.current;
                let name = sanitize(&m.name).replace('\n', " ");
                let suffix = if in_use {
                    format!("  {IN_USE}")
                } else {
                    String::new()
                };
                let name_room = name_w.saturating_sub(width(&suffix));
                let name = truncate(&name, name_room);
                let pad = " ".repeat(name_w.saturating_sub(width(&name) + width(&suffix)));
                spans.push(Span::styled(name, base.patch(theme::TEXT)));
                spans.push(Span::styled(suffix, base.patch(theme::SUCCESS)));
                spans.push(Span::styled(pad, base));
                spans.push(Span::styled("  ", base));
                let window = m.window.map_or("-".to_string(), short_count);
                spans.push(Span::styled(
                    fit(&window, WINDOW_W, true),
                    base.patch(if m.window.is_some() {
                        theme::TEXT
                    } else {
                        theme::DIM
                    }),
                ));
                spans.push(Span::styled("  ", base));
                let prices = match row {
                    ModelRow::Server(_) => SERVER_NOTE.to_string(),
                    _ => prices_text(m.prices),
                };
                spans.push(Span::styled(
                    fit(&prices, prices_w, false),
                    base.patch(theme::DIM),
                ));
            }
            ModelRow::Typed(name) => {
                let text = format!(
                    "use \"{}\" as typed (not configured)",
                    sanitize(name).replace('\n', " ")
                );
                let total = name_w + 2 + WINDOW_W + 2 + prices_w;
                spans.push(Span::styled(
                    fit(&text, total, false),
                    base.patch(theme::HINT),
                ));
            }
        }
        Line::from(spans)
    }
}

impl Widget for ModelPickerModal<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let picker = self.picker;
        let rows = picker.rows();
        let listed = rows
            .iter()
            .filter(|r| !matches!(r, ModelRow::Typed(_)))
            .count();
        let status = server_line(picker);
        let keys = keymap();
        let key = |action: Action, fallback: &str| {
            keys.keys_for(Mode::Models, action)
                .and_then(|k| k.split('/').next().map(str::to_string))
                .unwrap_or_else(|| fallback.to_string())
        };
        let hints = [
            (key(Action::ChooseModel, "Enter"), "switch"),
            (key(Action::ClosePicker, "Esc"), "close"),
            ("↑↓".to_string(), "move"),
            ("type".to_string(), "to filter"),
        ];
        let Some(list) = (ListModal {
            title: "Switch model",
            shown: listed,
            total: picker.models.len() + picker.server_models.len(),
            filter: &picker.filter,
            placeholder: "type part of a name, or a whole PROVIDER/MODEL",
            rows: rows.len() + usize::from(status.is_some()),
            keys: &hints,
            max_width: MAX_WIDTH,
        })
        .frame(area, buf) else {
            return;
        };
        let (text_w, rows_h) = (list.text_w, list.rows_h);
        let filter = sanitize(&picker.filter).replace('\n', " ");
        let mut y = list.header_y;
        let put = |buf: &mut Buffer, line: &Line<'_>, y: u16| list.put(buf, line, y);

        // The name column as wide as the widest name, the prices column the rest; when both
        // do not fit, the prices give way first, down to a third of the room.
        let fixed = SELECTED_MARK.len() + 2 + WINDOW_W + 2;
        let room = text_w.saturating_sub(fixed);
        let (mut name_need, mut prices_need) = (width("model"), width(PRICES_HEADER));
        for row in &rows {
            if let ModelRow::Model(m) | ModelRow::Server(m) = row {
                let suffix = if m.name == picker.current {
                    2 + width(IN_USE)
                } else {
                    0
                };
                name_need = name_need.max(width(&m.name) + suffix);
                prices_need = prices_need.max(width(&prices_text(m.prices)));
            }
        }
        let prices_w = if name_need + prices_need <= room {
            prices_need
        } else {
            prices_need
                .min(room / 3)
                .max(room.saturating_sub(name_need))
        };
        let name_w = room.saturating_sub(prices_w);
        let header = format!(
            "  {}  {}  {}",
            fit("model", name_w, false),
            fit("window", WINDOW_W, true),
            fit(PRICES_HEADER, prices_w, false),
        );
        put(buf, &Line::from(Span::styled(header, theme::DIM)), y);
        y += 1;

        if rows.is_empty() {
            let text = if picker.models.is_empty() {
                "no models configured: type a PROVIDER/MODEL".to_string()
            } else {
                format!("no model matches \"{filter}\"")
            };
            put(
                buf,
                &Line::from(Span::styled(truncate(&text, text_w), theme::WARNING)),
                y,
            );
        } else {
            // The server's line keeps the last row of the list.
            let rows_h = rows_h.saturating_sub(usize::from(status.is_some())).max(1);
            let selected = picker.selected.min(rows.len().saturating_sub(1));
            let offset = (selected + 1).saturating_sub(rows_h);
            for (i, row) in rows.iter().enumerate().skip(offset).take(rows_h) {
                put(buf, &self.row(*row, i == selected, name_w, prices_w), y);
                y += 1;
            }
        }
        if let Some((text, style)) = status {
            let y = list.header_y + 1 + list.rows_h.max(1) as u16 - 1;
            let y = y.max(list.header_y + 2);
            put(
                buf,
                &Line::from(Span::styled(truncate(&text, text_w), style)),
                y,
            );
        }
    }
}
