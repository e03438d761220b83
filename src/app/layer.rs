//! The layer stack: the one place that says which layers are open and in what order, so
//! who takes keys, pastes and the mouse, which keymap modes apply, what the footer names
//! and the order the UI draws in all follow from it.
//!
//! From the top ([`Layer::ORDER`]):
//!
//! 1. the approval modal's "deny and say why" field, while it is open ([`Layer::Feedback`]);
//! 2. the approval modal, while requests wait ([`Layer::Approval`]);
//! 3. an MCP server's form, while forms wait ([`Layer::Form`]: below rein's own approval,
//!    drawn unlike it);
//! 3. the question about a project's held hooks ([`Layer::Hooks`]), at start and by
//!    `/hooks allow`; the plan review after a turn in plan mode ([`Layer::Plan`]); the
//!    transcript pager ([`Layer::Pager`]);
//! 4. the session picker of `/resume` ([`Layer::Sessions`]), and the rewind layer of
//!    `/rewind` and Esc Esc ([`Layer::Rewind`]);
//! 4. the model picker of `/model` ([`Layer::Models`]), and the MCP servers of `/mcp`
//!    ([`Layer::Mcp`]);
//! 5. the `/context` layer ([`Layer::Context`]), and the help of `/help` and F1
//!    ([`Layer::Help`]);
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
//! Each layer is a leaf module that owns its state, handles its keys on that state alone
//! and returns an outcome; its keymap modes and footer are constants there, which the
//! matches below name. A new layer is that file, a variant here with its place in
//! [`Layer::ORDER`] and its test in [`Layer::is_open`] (reading the field of [`App`] that
//! holds its state); the compiler then asks for its modes and footer here, for its
//! outcome's handling in the router (`super::update::route`) and for its drawing
//! (`crate::ui::render`).

use super::keymap::{Action, Mode};
use super::state::App;
use super::{
    approval, context_view, finder, form, help, history_search, hook_trust, mcp_panel,
    model_picker, pager, picker, plan_review, rewind, slash_menu,
};

/// A layer of the dashboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// The approval modal's "deny and say why" field (drawn as part of the modal).
    Feedback,
    /// The approval modal: it takes every key until answered.
    Approval,
    /// An MCP server's form (elicitation): it takes every key until answered.
    Form,
    /// The question about a project's held hooks.
    Hooks,
    /// The plan review: a turn in plan mode ended with a plan.
    Plan,
    /// The transcript pager.
    Pager,
    /// The session picker (`/resume`).
    Sessions,
    /// The rewind layer (`/rewind`, Esc Esc).
    Rewind,
    /// The model picker (`/model`).
    Models,
    /// The MCP servers (`/mcp`).
    Mcp,
    /// The `/context` layer.
    Context,
    /// The help layer (`/help`, F1).
    Help,
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
    pub const ORDER: [Layer; 16] = [
        Layer::Feedback,
        Layer::Approval,
        Layer::Form,
        Layer::Hooks,
        Layer::Plan,
        Layer::Pager,
        Layer::Sessions,
        Layer::Rewind,
        Layer::Models,
        Layer::Mcp,
        Layer::Context,
        Layer::Help,
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
            Layer::Form => !app.forms.queue.is_empty(),
            Layer::Hooks => app.hook_trust.as_ref().is_some_and(|t| t.open),
            Layer::Plan => app.plan_review.is_some(),
            Layer::Pager => app.pager.is_some(),
            Layer::Sessions => app.picker.is_some(),
            Layer::Rewind => app.rewind.is_some(),
            Layer::Models => app.model_picker.is_some(),
            Layer::Mcp => app.mcp_panel.is_some(),
            Layer::Context => app.context_open,
            Layer::Help => app.help.is_some(),
            Layer::Search => app.search.is_some(),
            Layer::Slash => app
                .slash_menu
                .is_open(&app.composer.textarea, &app.custom_commands),
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

    /// The keymap modes this layer consults, in lookup order (each layer's module says).
    pub fn modes(self) -> &'static [Mode] {
        match self {
            Layer::Approval => approval::MODES,
            Layer::Feedback => approval::FEEDBACK_MODES,
            Layer::Form => form::MODES,
            Layer::Hooks => hook_trust::MODES,
            Layer::Plan => plan_review::MODES,
            Layer::Pager => pager::MODES,
            Layer::Sessions => picker::MODES,
            Layer::Rewind => rewind::MODES,
            Layer::Models => model_picker::MODES,
            Layer::Mcp => mcp_panel::MODES,
            Layer::Context => context_view::MODES,
            Layer::Help => help::MODES,
            Layer::Search => history_search::MODES,
            Layer::Slash => slash_menu::MODES,
            Layer::Finder => finder::MODES,
            Layer::Main => MAIN_MODES,
        }
    }

    /// The bindings the footer names while this layer is on top, most useful first (the
    /// main screen's depend on whether a turn runs); keys and words come from the keymap
    /// (`assets/keymap.toml`), so the footer says what the keys really do.
    pub fn footer(self, busy: bool) -> &'static [(Mode, Action)] {
        match self {
            Layer::Form => form::FOOTER,
            Layer::Hooks => hook_trust::FOOTER,
            Layer::Plan => plan_review::FOOTER,
            Layer::Pager => pager::FOOTER,
            Layer::Sessions => picker::FOOTER,
            Layer::Rewind => rewind::FOOTER,
            Layer::Models => model_picker::FOOTER,
            Layer::Mcp => mcp_panel::FOOTER,
            Layer::Context => context_view::FOOTER,
            Layer::Help => help::FOOTER,
            Layer::Search => history_search::FOOTER,
            Layer::Slash => slash_menu::FOOTER,
            Layer::Finder => finder::FOOTER,
            Layer::Feedback => approval::FEEDBACK_FOOTER,
            Layer::Approval => approval::FOOTER,
            Layer::Main if busy => &[
                (Mode::Global, Action::Interrupt),
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

/// The main screen's keymap modes: its global keys, then the input box's.
pub const MAIN_MODES: &[Mode] = &[Mode::Global, Mode::Composer];

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
