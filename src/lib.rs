//! rein: a terminal coding agent around any OpenAI-compatible chat-completions model.
//!
//! The library holds everything both front ends share. From the bottom up: the
//! conversation's messages and their wire form (`conversation`); configuration
//! (`config`); the permission checker (`permissions`), the sandbox (`sandbox`) and the
//! file tools' link-proof file access (`safe_fs`); the tools (`tools`) and skills
//! (`skills`); context engineering (`context`) and session files (`session`); the agent
//! runtime (`agent`), which runs as a task behind a handle and talks only through its
//! command and event channels. On top: the dashboard's pure state machine (`app`), its
//! drawing (`ui`) and its terminal loop (`dashboard`), and the headless front end
//! (`headless`), which word events alike through `describe`. `text` holds the short words
//! every module may use (a line cut to a length, a duration, a token count), and
//! `sanitize` the one filter for text rein prints; `demo` holds the scripted server that the tests, the benchmarks
//! and `rein --demo` talk to; `stamp` the timestamps and ids, with no date library.

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
