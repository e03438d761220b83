//! The `/context` layer: where the context window's tokens go.
//!
//! `/context` opens it over the dashboard; it shows `app.context`, the agent's last count,
//! so it follows every `AgentEvent::Context` that arrives while it is open (drawn by
//! `crate::ui::context_modal`). While open it takes every key: the keymap's `context`
//! bindings close it (Esc, q), anything else does nothing. An approval request goes over
//! it and takes the keys until answered.

use crossterm::event::{KeyEvent, KeyEventKind};

use super::keymap::{keymap, Action, Mode};
use super::state::App;

/// `/context`: open the layer.
pub fn open(app: &mut App) {
    app.context_open = true;
    app.hint = None;
}

/// A key while the layer is open.
pub fn handle_key(app: &mut App, key: KeyEvent) {
    if key.kind == KeyEventKind::Release {
        return;
    }
    let action = keymap()
        .lookup(&[Mode::Context], &key)
        .find(|b| b.applies(app))
        .map(|b| b.action);
    if action == Some(Action::CloseContext) {
        app.context_open = false;
    }
}
