//! rein: a terminal coding agent around any model, over chat completions, OpenAI's
//! Responses API or Anthropic's Messages API.
//!
//! The library holds everything the front ends share; `src/main.rs` and `src/cli/` only
//! read the command line and start one. From the bottom up:
//!
//! - **The ground floor**, leaves that import nothing of rein's upper floors: `text` (short
//!   words for things: one line, a clip, a duration), `sanitize` (the one filter for text
//!   rein prints), `stamp` (timestamps and ids, with no date library), `signals` (what ends
//!   rein from outside), `private_fs` (rein's own files are the user's alone), `store` (its
//!   JSON records in the data folder), `safe_fs` (the file tools' link-proof access),
//!   `program_path` (finding a program by name in absolute `PATH` folders only),
//!   `process_tree` (killing all a child started), `git_pointer` (a `.git` read as data),
//!   `file_pin` (a file's state as an approval pins it).
//! - **What a session is made of**: the messages and their wire forms (`conversation`), the
//!   settings (`config`), the permission checker (`permissions`) and the sandbox
//!   (`sandbox`), the files that steer what runs outside it (`steering`) and the guard over
//!   a project's host-tool files (`host_tools`), what a project tells the model and how it
//!   changed (`instructions`, `skills`, `custom_commands`, `guidance`), the user's consents
//!   (`trust` for project MCP servers, `allowed_tools`), the tools (`tools`), context
//!   engineering (`context`), session files (`session`), checkpoints (`checkpoint`) and
//!   taking turns back (`rewind`), hooks (`hooks`), MCP servers (`mcp`) and the forms they
//!   ask for (`elicitation`), the project's files for the `@` finder (`file_index`).
//! - **The agent** (`agent`): the runtime, a task behind a handle that talks only through
//!   its command and event channels; `describe` words its events once for every front end.
//! - **The front ends' parts**: the dashboard's pure state machine (`app`), its drawing
//!   (`ui`) and its terminal loop (`dashboard`), with the typed history (`input_history`)
//!   and Ctrl-G's editor (`external_editor`); the headless front end (`headless`).
//! - `demo` holds the scripted server that the tests, the benchmarks and `rein --demo`
//!   talk to; `architecture` (tests only) keeps the floors apart: no import circle ties
//!   the top-level modules.

pub mod agent;
pub mod allowed_tools;
pub mod app;
#[cfg(test)]
mod architecture;
pub mod checkpoint;
pub mod config;
pub mod context;
pub mod conversation;
pub mod custom_commands;
pub mod dashboard;
pub mod demo;
pub mod describe;
pub mod elicitation;
pub mod external_editor;
pub mod file_index;
pub mod file_pin;
pub mod git_pointer;
pub mod guidance;
pub mod headless;
pub mod hooks;
pub mod host_tools;
pub mod input_history;
pub mod instructions;
pub mod mcp;
pub mod permissions;
pub mod private_fs;
pub mod process_tree;
pub mod program_path;
pub mod rewind;
pub mod safe_fs;
pub mod sandbox;
pub mod sanitize;
pub mod session;
pub mod signals;
pub mod skills;
pub mod stamp;
pub mod steering;
pub mod store;
pub mod text;
pub mod tools;
pub mod trust;
pub mod ui;
