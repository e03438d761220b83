//! rein: a terminal coding agent around any OpenAI-compatible chat-completions model.
//!
//! The library holds everything the front ends share: the agent runtime (`agent`), the tools
//! (`tools`), the permission checker (`permissions`) and configuration (`config`). The
//! headless front end (`headless`) talks to the agent only through its command and event
//! channels, as the dashboard will.

pub mod agent;
pub mod app;
pub mod config;
pub mod context;
pub mod conversation;
pub mod dashboard;
pub mod demo;
pub mod headless;
pub mod permissions;
pub mod safe_fs;
pub mod sandbox;
pub mod sanitize;
pub mod session;
pub mod signals;
pub mod skills;
pub mod tools;
pub mod ui;
