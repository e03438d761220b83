//! rein's front ends over one agent: the dashboard's pure state machine (`app`), its
//! drawing (`ui`) and its terminal loop (`dashboard`, with the typed history and Ctrl-G's
//! editor); the headless front end (`headless`); the editor protocol (`acp`, `rein acp`:
//! the agent's events as the Agent Client Protocol's updates); `describe` words the agent's
//! events once for the dashboard and headless mode. `src/main.rs` and
//! `src/cli/` read the command line and start one.
//!
//! Everything that is not a terminal (the agent, its tools, permissions, the sandbox,
//! sessions, MCP, hooks, the config) is the core crate, `rein_core` (crates/core); a
//! front end starts a session through `rein_core::start` and talks to the agent only
//! through its handle. `architecture` (tests only) keeps the floors apart in both crates:
//! no import circle ties the top-level modules of either.

pub mod acp;
pub mod app;
#[cfg(test)]
mod architecture;
pub mod dashboard;
pub mod describe;
pub mod headless;
pub mod ui;
