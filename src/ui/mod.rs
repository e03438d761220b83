//! Drawing the dashboard (placeholder until the renderer lands): a pure function of the
//! state.

use std::time::Instant;

use ratatui::Frame;

use crate::app::App;

/// Draw the whole dashboard for `app` as of `now`.
pub fn render(_app: &App, _frame: &mut Frame, _now: Instant) {}
