//! The editor protocol (`rein acp`): rein as an Agent Client Protocol agent, JSON-RPC over
//! its stdin and stdout, a third front end over the same core as the dashboard and
//! headless mode.
//!
//! - [`tool_call`]: a tool call as the editor shows it (kind, title, places, diff).
//! - [`updates`]: the agent's events as `session/update`s.
//! - [`permission`]: an `ask` as the editor's permission question, its answer as the
//!   approval modal's.

pub mod commands;
pub mod files;
pub mod mcp;
pub mod permission;
pub mod pipes;
pub mod plan;
pub mod prompt;
pub mod replay;
pub mod server;
pub mod session;
pub mod start;
pub mod tool_call;
pub mod updates;
