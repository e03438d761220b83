//! The dashboard's state machine.
//!
//! Everything that happens arrives as one [`AppEvent`] (a key, a paste, a resize, an agent
//! event, a tick, the sessions or models listed for a picker, a model name resolved); [`update::update`] turns the [`App`] state and the event into a new state
//! and a list of [`Effect`]s (commands to the agent, answers to approvals, quit) that the
//! loop in [`crate::dashboard::run`] carries out. The update step never blocks and does no I/O; rendering
//! (`crate::ui`) is a pure function of the state.

pub mod agent_events;
pub mod approval;
pub mod attention;
pub mod commands;
pub mod composer;
pub mod context_view;
pub mod editor;
pub mod event;
pub mod finder;
pub mod history_search;
pub mod keymap;
pub mod keymap_user;
pub mod layer;
pub mod mcp_view;
pub mod model_picker;
pub mod model_switch;
pub mod modes;
pub mod picker;
pub mod resume;
pub mod slash_menu;
pub mod state;
pub mod update;

pub use event::{AppEvent, Effect};
pub use layer::Layer;
pub use state::App;
