//! MCP servers as tool providers (placeholder doc, replaced below).
mod config;
pub mod names;
pub mod result;
pub mod schema;
pub use config::{Origin, ServerConfig, Transport, DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT};
