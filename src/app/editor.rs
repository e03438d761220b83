//! Ctrl-G: the input box in the user's own editor.
//!
//! The key asks the loop to open the input's text in `$VISUAL` / `$EDITOR`
//! ([`Effect::EditInput`]); the loop suspends the dashboard, runs the editor on a temporary
//! file and comes back with [`super::AppEvent::Edited`]: the file's text replaces the
//! input (not sent), or, when the editor could not run or failed, the input keeps its text
//! and the hint says why. The agent goes on meanwhile; its events are applied once the
//! dashboard is back.

use super::composer;
use super::event::Effect;
use super::state::App;

/// Ctrl-G: hand the input's text to the loop for the editor.
pub fn open(app: &mut App, effects: &mut Vec<Effect>) {
    app.hint = None;
    effects.push(Effect::EditInput {
        text: composer::text(&app.composer.textarea),
    });
}

/// The editor closed: its text into the input, or the reason in the hint.
pub fn edited(app: &mut App, result: Result<String, String>) {
    match result {
        Ok(text) => composer::set_text(app, &text),
        Err(why) => app.hint = Some(why),
    }
}
