//! The MCP servers' layer (`/mcp`): a centred box over the dashboard, one row a server
//! (the selected one marked and highlighted): its name, its state and what it offers, then
//! the keys from the keymap. Names and states come from config files and servers, so they
//! are sanitised.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::layout::{keys_line, scrolling_text_modal};
use super::sanitize::sanitize;
use super::theme;
use super::wrap::truncate;
use crate::app::mcp_panel::{McpPanel, FOOTER};
use crate::app::update::mcp::offers;
use crate::app::App;

/// The widest the box gets.
const MAX_WIDTH: u16 = 100;
/// Rows kept above the selected one when the list scrolls.
const ROWS_ABOVE: usize = 3;

/// The layer.
pub struct McpPanelModal<'a> {
    pub panel: &'a McpPanel,
    pub app: &'a App,
}

impl McpPanelModal<'_> {
    fn rows(&self, text_w: usize) -> Vec<Line<'static>> {
        self.app
            .mcp_servers
            .iter()
            .enumerate()
            .map(|(i, (name, state))| {
                let selected = i == self.panel.selected;
                let text = sanitize(&format!("{name}: {state}{}", offers(self.app, name)))
                    .replace('\n', " ");
                let mark = if selected { "› " } else { "  " };
                let style = if selected {
                    theme::SELECTED
                } else {
                    theme::TEXT
                };
                Line::from(Span::styled(
                    truncate(&format!("{mark}{text}"), text_w),
                    style,
                ))
            })
            .collect()
    }
}

impl Widget for McpPanelModal<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let count = self.app.mcp_servers.len();
        let title = format!(" MCP servers ({count}) ");
        let scroll = u16::try_from(self.panel.selected.saturating_sub(ROWS_ABOVE)).unwrap_or(0);
        scrolling_text_modal(
            area,
            buf,
            MAX_WIDTH,
            Span::styled(title, theme::TITLE),
            scroll,
            |text_w| self.rows(text_w),
            |text_w| keys_line(FOOTER, text_w, "Esc close"),
        );
    }
}
