//! The scripted OpenAI-compatible server the tests and benchmarks talk to. It lives in the
//! library (`rein::demo`, which `rein --demo` plays too); this module only re-exports it,
//! so there is one copy of the code.
#![allow(dead_code, unused_imports)]

pub use rein::demo::reply::*;
pub use rein::demo::server::*;
