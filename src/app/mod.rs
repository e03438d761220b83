//! The dashboard's state machine.
//!
//! Everything that happens arrives as one [`AppEvent`] (a key, a paste, a resize, an agent
//! event, a tick, the sessions or models listed for a picker, a model name resolved); [`update::update`] turns the [`App`] state and the event into a new state
//! and a list of [`Effect`]s (commands to the agent, answers to approvals, quit) that the
//! loop in [`crate::dashboard::run`] carries out. The update step never blocks and does no
//! I/O; rendering (`crate::ui`) is a pure function of the state.
//!
//! The modules form layers, none importing one above it (a unit test checks that no import
//! circle forms, and that only the router touches `App`):
//! - leaves, each owning one piece of state and knowing nothing of `App` or `Effect`:
//!   [`keymap`] (and [`keymap_user`]), [`input`], [`paste`], [`transcript`], [`composer`],
//!   [`commands`], [`attention`], and the layers [`approval`], [`picker`],
//!   [`model_picker`], [`context_view`], [`help`], [`history_search`], [`slash_menu`],
//!   [`finder`];
//! - [`state`], the [`App`] made of them, and [`event`], what flows in and out;
//! - [`layer`], which of them is open and on top;
//! - [`update`], the router, the only code that changes `App` as a whole (its submodules
//!   apply agent events, answers, commands, sends, switches).

pub mod approval;
#[cfg(test)]
mod architecture;
pub mod attention;
pub mod commands;
pub mod composer;
pub mod context_view;
pub mod event;
pub mod finder;
pub mod form;
pub mod help;
pub mod history_search;
pub mod hook_trust;
pub mod input;
pub mod keymap;
pub mod keymap_user;
pub mod layer;
pub mod mcp_panel;
pub mod model_picker;
pub mod pager;
pub mod paste;
pub mod picker;
pub mod plan_review;
pub mod rewind;
pub mod slash_menu;
pub mod state;
pub mod text_scroll;
pub mod transcript;
pub mod update;

pub use event::{AppEvent, Effect};
pub use layer::Layer;
pub use state::App;
pub use update::{agent_events, resume};
