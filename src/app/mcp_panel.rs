//! The MCP servers as a layer: `/mcp` opens it over the dashboard, one row a server (its
//! state, what it offers), and keys act on the selected one as the `/mcp` subcommands do:
//! `l` logs in (a server that needs a login says so), `o` logs out, `r` restarts, `a`
//! allows a project's server that waits (keys in the keymap's `mcp` mode). Up/Down move,
//! Esc or `q` closes. A key that acts closes the layer too, so the transcript shows what
//! the action says (a login's URL). A leaf: it knows its selection; the rows are the
//! app's servers, read by the router and the renderer.

use crossterm::event::{KeyEvent, KeyEventKind, MouseEvent, MouseEventKind};
use tui_textarea::TextArea;

use super::keymap::{keymap, Action, Mode};

/// The keymap modes of the layer.
pub const MODES: &[Mode] = &[Mode::Mcp];

/// What the footer names while the layer is on top.
pub const FOOTER: &[(Mode, Action)] = &[
    (Mode::Mcp, Action::McpLogin),
    (Mode::Mcp, Action::McpRestart),
    (Mode::Mcp, Action::McpAllow),
    (Mode::Mcp, Action::McpLogout),
    (Mode::Mcp, Action::ClosePicker),
];

/// The open layer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpPanel {
    /// The selected server, an index into the app's servers.
    pub selected: usize,
}

/// What a key in the layer leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpPanelOutcome {
    Stay,
    Close,
    /// Act on the selected server.
    Login,
    Logout,
    Restart,
    Allow,
}

impl McpPanel {
    /// A key, with `count` servers listed; `input` is the input box (the keymap's
    /// conditions read it).
    pub fn handle_key(
        &mut self,
        key: &KeyEvent,
        count: usize,
        input: &TextArea<'_>,
    ) -> McpPanelOutcome {
        if key.kind == KeyEventKind::Release {
            return McpPanelOutcome::Stay;
        }
        match keymap().action(MODES, key, input) {
            Some(Action::ScrollUp) => self.selected = self.selected.saturating_sub(1),
            Some(Action::ScrollDown) => {
                self.selected = (self.selected + 1).min(count.saturating_sub(1))
            }
            Some(Action::ClosePicker) => return McpPanelOutcome::Close,
            Some(Action::McpLogin) => return McpPanelOutcome::Login,
            Some(Action::McpLogout) => return McpPanelOutcome::Logout,
            Some(Action::McpRestart) => return McpPanelOutcome::Restart,
            Some(Action::McpAllow) => return McpPanelOutcome::Allow,
            _ => {}
        }
        McpPanelOutcome::Stay
    }

    /// The mouse wheel moves the selection.
    pub fn mouse(&mut self, mouse: &MouseEvent, count: usize) {
        match mouse.kind {
            MouseEventKind::ScrollUp => self.selected = self.selected.saturating_sub(1),
            MouseEventKind::ScrollDown => {
                self.selected = (self.selected + 1).min(count.saturating_sub(1))
            }
            _ => {}
        }
    }
}
