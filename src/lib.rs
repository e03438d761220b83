//! rein: a terminal coding agent around any model, over chat completions, OpenAI's
//! Responses API or Anthropic's Messages API.
//!
//! The library holds everything the front ends share; `src/main.rs` and `src/cli/` only
//! read the command line and start one. From the bottom up:
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
//!   MCP servers (`mcp`) and the forms they ask for (`elicitation`), the project's files for
//!   the `@` finder (`file_index`).
//! - **The agent** (`agent`): the runtime, a task behind a handle that talks only through
//!   its command and event channels; `describe` words its events once for every front end.
//! - **The front ends' parts**: the dashboard's pure state machine (`app`), its drawing
//!   (`ui`) and its terminal loop (`dashboard`), with the typed history (`input_history`)
//!   and Ctrl-G's editor (`external_editor`); the headless front end (`headless`).
//! - `demo` holds the scripted server that the tests, the benchmarks and `rein --demo`
//!   talk to; `architecture` (tests only) keeps the floors apart: no import circle ties
//!   the top-level modules.

pub mod agent;
pub mod app;
#[cfg(test)]
mod architecture;
pub mod checkpoint;
pub mod config;
pub mod consent;
pub mod context;
pub mod conversation;
pub mod custom_commands;
pub mod dashboard;
pub mod demo;
pub mod describe;
pub mod elicitation;
pub mod external_editor;
pub mod file_index;
pub mod headless;
pub mod hooks;
pub mod host;
pub mod input_history;
pub mod instructions;
pub mod mcp;
pub mod permissions;
pub mod sandbox;
pub mod session;
pub mod skills;
pub mod store;
pub mod text;
pub mod tools;
pub mod ui;
