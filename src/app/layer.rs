//! The layer stack: the one place that says which layers are open and in what order, so
//! who takes keys, pastes and the mouse, which keymap modes apply, what the footer names
//! and the order the UI draws in all follow from it.
//!
//! From the top ([`Layer::ORDER`]):
//!
//! 1. the approval modal's "deny and say why" field, while it is open ([`Layer::Feedback`]);
//! 2. the approval modal, while requests wait ([`Layer::Approval`]);
//! 3. the session picker of `/resume` ([`Layer::Sessions`]);
//! 4. the model picker of `/model` ([`Layer::Models`]);
//! 5. the `/context` layer ([`Layer::Context`]);
//! 6. the Ctrl-R search over earlier inputs, drawn over the input box ([`Layer::Search`]);
//! 7. the `/` completion list above the input box, while the input's first word starts a
//!    command ([`Layer::Slash`]; unbound keys go on to the main screen's);
//! 8. the `@` file finder's list over the input box ([`Layer::Finder`]): its few keys come
//!    first, every other key goes on to the main screen under it;
//! 9. the main screen: the transcript and the input box ([`Layer::Main`]), always open.
//!
//! [`Layer::stack`] is the open ones, top first; [`Layer::top`], the first of them, takes
//! the input (the update step routes keys, pastes and the mouse by it) and names the keymap
//! modes ([`Layer::modes`]) and the footer's hints ([`Layer::footer`]). The UI draws the
//! stack bottom up, so the layer on top is drawn last, over the others.
//!
//! A new layer is a variant here, its place in [`Layer::ORDER`] and its test in
//! [`Layer::is_open`]; the compiler then asks for its modes, its footer, its input handlers
//! (`update::route`) and its drawing (`crate::ui::render`).

use super::keymap::{Action, Mode};
use super::state::App;

/// A layer of the dashboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// The approval modal's "deny and say why" field (drawn as part of the modal).
    Feedback,
    /// The approval modal: it takes every key until answered.
    Approval,
    /// The session picker (`/resume`).
    Sessions,
    /// The model picker (`/model`).
    Models,
    /// The `/context` layer.
    Context,
    /// The Ctrl-R history search, over the input box.
    Search,
    /// The `/` completion list (`super::slash_menu`).
    Slash,
    /// The `@` file finder's list (the input box keeps taking the other keys).
    Finder,
    /// The transcript and the input box.
    Main,
}

impl Layer {
    /// Every layer, top first.
    pub const ORDER: [Layer; 9] = [
        Layer::Feedback,
        Layer::Approval,
        Layer::Sessions,
        Layer::Models,
        Layer::Context,
        Layer::Search,
        Layer::Slash,
        Layer::Finder,
        Layer::Main,
    ];

    /// Whether this layer is open in this state.
    pub fn is_open(self, app: &App) -> bool {
        match self {
            Layer::Feedback => !app.approvals.queue.is_empty() && app.approvals.feedback.is_some(),
            Layer::Approval => !app.approvals.queue.is_empty(),
            Layer::Sessions => app.picker.is_some(),
            Layer::Models => app.model_picker.is_some(),
            Layer::Context => app.context_open,
            Layer::Search => app.search.is_some(),
            Layer::Slash => super::slash_menu::is_open(app),
            Layer::Finder => app.finder.open.is_some(),
            Layer::Main => true,
        }
    }

    /// The open layers, top first (`.rev()` for the drawing order).
    pub fn stack(app: &App) -> impl DoubleEndedIterator<Item = Layer> + '_ {
        Layer::ORDER.into_iter().filter(move |l| l.is_open(app))
    }

    /// The layer on top in this state: the one that takes input.
    pub fn top(app: &App) -> Layer {
        Layer::stack(app).next().unwrap_or(Layer::Main)
    }

    /// The keymap modes this layer consults, in lookup order.
    pub fn modes(self) -> &'static [Mode] {
        match self {
            Layer::Approval => &[Mode::Approval],
            Layer::Feedback => &[Mode::Feedback],
            Layer::Sessions => &[Mode::Picker],
            Layer::Models => &[Mode::Models],
            Layer::Context => &[Mode::Context],
            Layer::Search => &[Mode::Search],
            Layer::Slash => &[Mode::Slash, Mode::Global, Mode::Composer],
            Layer::Finder => &[Mode::Finder, Mode::Global, Mode::Composer],
            Layer::Main => &[Mode::Global, Mode::Composer],
        }
    }

    /// The bindings the footer names while this layer is on top, most useful first (the
    /// main screen's depend on whether a turn runs); keys and words come from the keymap
    /// (`assets/keymap.toml`), so the footer says what the keys really do.
    pub fn footer(self, busy: bool) -> &'static [(Mode, Action)] {
        match self {
            Layer::Sessions => &[
                (Mode::Picker, Action::Resume),
                (Mode::Picker, Action::ClosePicker),
                (Mode::Picker, Action::ClearFilter),
            ],
            Layer::Models => &[
                (Mode::Models, Action::ChooseModel),
                (Mode::Models, Action::ClosePicker),
                (Mode::Models, Action::ClearFilter),
            ],
            Layer::Context => &[(Mode::Context, Action::CloseContext)],
            Layer::Search => &[
                (Mode::Search, Action::AcceptSearch),
                (Mode::Search, Action::SearchOlder),
                (Mode::Search, Action::CancelSearch),
            ],
            Layer::Slash => &[
                (Mode::Slash, Action::SlashComplete),
                (Mode::Slash, Action::SlashAccept),
                (Mode::Slash, Action::SlashNext),
                (Mode::Slash, Action::SlashClose),
            ],
            Layer::Finder => &[
                (Mode::Finder, Action::InsertPath),
                (Mode::Finder, Action::ScrollDown),
                (Mode::Finder, Action::ClosePicker),
            ],
            Layer::Feedback => &[
                (Mode::Feedback, Action::SubmitFeedback),
                (Mode::Feedback, Action::CloseFeedback),
            ],
            Layer::Approval => &[
                (Mode::Approval, Action::Deny),
                (Mode::Approval, Action::PageDown),
            ],
            Layer::Main if busy => &[
                (Mode::Global, Action::Cancel),
                (Mode::Global, Action::Help),
                (Mode::Global, Action::PageUp),
                (Mode::Global, Action::ToggleToolOutput),
            ],
            Layer::Main => &[
                (Mode::Composer, Action::Send),
                (Mode::Global, Action::Help),
                (Mode::Composer, Action::Newline),
                (Mode::Global, Action::PageUp),
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::state::SessionInfo;

    #[test]
    fn the_order_names_every_layer_once_and_ends_with_the_main_screen() {
        for layer in Layer::ORDER {
            assert_eq!(
                Layer::ORDER.iter().filter(|&&l| l == layer).count(),
                1,
                "{layer:?}"
            );
        }
        assert_eq!(Layer::ORDER.last(), Some(&Layer::Main));
    }

    #[test]
    fn the_top_is_the_first_open_layer_and_the_main_screen_is_always_under_it() {
        let mut app = App::new(SessionInfo::default(), 1000);
        assert_eq!(Layer::stack(&app).collect::<Vec<_>>(), [Layer::Main]);
        assert_eq!(Layer::top(&app), Layer::Main);
        app.context_open = true;
        assert_eq!(
            Layer::stack(&app).collect::<Vec<_>>(),
            [Layer::Context, Layer::Main]
        );
        assert_eq!(Layer::top(&app), Layer::Context);
        assert_eq!(
            Layer::stack(&app).rev().collect::<Vec<_>>(),
            [Layer::Main, Layer::Context],
            "drawn bottom up"
        );
    }
}
