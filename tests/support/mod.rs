//! Shared test code. The scripted OpenAI-compatible server the tests and benchmarks talk
//! to lives in the library (`rein::demo`, which `rein --demo` plays too); this module only
//! re-exports it, so there is one copy of the code. `agent` is the harness the agent tests
//! share, `app` the one of the dashboard's state machine and its snapshots.
#![allow(dead_code, unused_imports)]

pub mod agent;
pub mod app;
pub mod mcp;
pub mod rng;

pub use rein::demo::reply::*;
pub use rein::demo::server::*;
