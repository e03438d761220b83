//! The `/context` layer: where the context window's tokens go.
//!
//! `/context` opens it over the dashboard; it shows `app.context`, the agent's last count,
//! so it follows every `AgentEvent::Context` that arrives while it is open (drawn by
//! `crate::ui::context_modal`). While open it takes every key: the keymap's `context`
//! bindings close it (Esc, q), anything else does nothing. An approval request goes over
//! it and takes the keys until answered. A leaf: whether it is open is all its state.

use crossterm::event::{KeyEvent, KeyEventKind};
use tui_textarea::TextArea;

use super::keymap::{keymap, Action, Mode};

/// The keymap modes the layer consults.
pub const MODES: &[Mode] = &[Mode::Context];

/// What the footer names while the layer is on top.
pub const FOOTER: &[(Mode, Action)] = &[(Mode::Context, Action::CloseContext)];

/// A key while the layer is open: true when it closes the layer. `input` is the input
/// box, which the keymap's conditions read.
pub fn closes(key: &KeyEvent, input: &TextArea<'_>) -> bool {
    key.kind != KeyEventKind::Release
        && keymap().action(MODES, key, input) == Some(Action::CloseContext)
}
