//! rein's core: the agent around any model, over chat completions, OpenAI's Responses API
//! or Anthropic's Messages API, and everything it stands on, with no terminal. The front
//! ends (the `rein` crate: the dashboard, headless mode, the command line) start a session
//! through [`start`] and then talk to the agent only through its handle, its commands and
//! its events. The compiler keeps this crate free of the terminal: it does not depend on
//! ratatui, crossterm or tui-textarea.
//!
//! From the bottom up:
//!
//! - **The ground floor**, leaves that import nothing of rein's upper floors: `text` (short
//!   words for things, the one sanitiser for printed text, timestamps and ids), `host` (the
//!   machine: rein's private files, link-proof file access, programs by absolute `PATH`,
//!   process trees, signals, a `.git` read as data) and `store` (JSON records in the data
//!   folder).
//! - **What a session is made of**: the messages and their wire forms (`conversation`), the
//!   settings (`config`), the permission checker (`permissions`) and the sandbox
//!   (`sandbox`), the user's consents and the guards over what steers rein outside the
//!   sandbox (`consent`), what a project tells the model (`instructions`, `skills`,
//!   `custom_commands`), the tools (`tools`), context engineering (`context`), session
//!   files and taking turns back (`session`), checkpoints (`checkpoint`), hooks (`hooks`),
//!   MCP servers (`mcp`) and the forms they ask for (`elicitation`), language servers and
//!   what an edit broke (`lsp`), the project's files for the `@` finder (`file_index`).
//! - **The agent** (`agent`): the runtime, a task behind a handle that talks only through
//!   its command and event channels.
//! - **The front door** (`start`): one way to start a session, for every front end.
//! - `demo` holds the scripted server that the tests, the benchmarks and `rein --demo`
//!   talk to.

pub mod agent;
pub mod checkpoint;
pub mod config;
pub mod consent;
pub mod context;
pub mod conversation;
pub mod custom_commands;
pub mod demo;
pub mod elicitation;
pub mod file_index;
pub mod hooks;
pub mod host;
pub mod instructions;
pub mod lsp;
pub mod mcp;
pub mod permissions;
pub mod sandbox;
pub mod session;
pub mod skills;
pub mod start;
pub(crate) mod store;
pub mod text;
pub mod tools;
