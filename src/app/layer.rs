//! Which layer is on top: the one place that decides who takes keys, pastes and the mouse,
//! which keymap modes apply and what the footer names.
//!
//! From the top: an approval request (its feedback field while open), then a picker (the
//! session picker of `/resume` or the model picker of `/model`; one at a time), then the
//! `/context` layer, then the main screen. The UI draws them in the reverse order, so the
//! one on top is drawn last.

use super::keymap::Mode;
use super::state::App;

/// The layer that takes input now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// The approval modal: it takes every key until answered.
    Approval,
    /// The approval modal's "deny and say why" field.
    Feedback,
    /// The session picker (`/resume`).
    Sessions,
    /// The model picker (`/model`).
    Models,
    /// The `/context` layer.
    Context,
    /// The transcript and the input box.
    Main,
}

impl Layer {
    /// The layer on top in this state.
    pub fn top(app: &App) -> Layer {
        if !app.approvals.queue.is_empty() {
            if app.approvals.feedback.is_some() {
                Layer::Feedback
            } else {
                Layer::Approval
            }
        } else if app.picker.is_some() {
            Layer::Sessions
        } else if app.model_picker.is_some() {
            Layer::Models
        } else if app.context_open {
            Layer::Context
        } else {
            Layer::Main
        }
    }

    /// The keymap modes this layer consults, in lookup order.
    pub fn modes(self) -> &'static [Mode] {
        match self {
            Layer::Approval => &[Mode::Approval],
            Layer::Feedback => &[Mode::Feedback],
            Layer::Sessions => &[Mode::Picker],
            Layer::Models => &[Mode::Models],
            Layer::Context => &[Mode::Context],
            Layer::Main => &[Mode::Global, Mode::Composer],
        }
    }
}
