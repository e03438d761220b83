//! MCP servers as tool providers (placeholder doc, replaced below).
mod config;
pub use config::{Origin, ServerConfig, Transport, DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT};
