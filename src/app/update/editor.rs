//! Ctrl-G: the input box in the user's own editor.
//!
//! The key asks the loop to open the input's text (big pastes whole) in `$VISUAL` / `$EDITOR`
//! ([`Effect::EditInput`]); the loop suspends the dashboard, runs the editor on a temporary
//! file and comes back with [`crate::app::AppEvent::Edited`]: the file's text replaces the
//! input (not sent), or, when the editor could not run or failed, the input keeps its text
//! and the hint says why. The agent goes on meanwhile; its events are applied once the
//! dashboard is back.

use crate::app::state::App;
use crate::app::Effect;

/// Ctrl-G: hand the input's text to the loop for the editor.
pub fn open(app: &mut App, effects: &mut Vec<Effect>) {
    app.hint = None;
    effects.push(Effect::EditInput {
        text: app.composer.whole_text(),
    });
}

/// The editor closed: its text into the input, or the reason in the hint.
pub fn edited(app: &mut App, result: Result<String, String>) {
    match result {
        Ok(text) => {
            app.composer.set_text(&text);
            app.hint = None;
        }
        Err(why) => app.hint = Some(why),
    }
}
