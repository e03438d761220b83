//! rein's integration tests, one binary: a module a subject, each a file of this folder, or
//! a folder of files by topic (`MODULE/mod.rs` and its topics) where one file would pass
//! 800 lines (`cargo test --test it hooks::` runs one module, `cargo test --test it NAME`
//! the tests whose path contains NAME). One binary links rein once where a binary a file
//! linked it sixty times. The sandbox's own harness is `crates/core/tests/sandbox/`, a
//! binary of its own.
//!
//! The tests share one process: a test that reads or needs process-wide state (its own
//! memory, a variable in its environment) runs its body in a process of its own
//! ([`support::alone`]), and none changes the process's environment, current folder, umask
//! or signal handling for the others. A real model (all cores, for minutes) and a tmux screen
//! (a deadline) never run at once ([`support::machine`]).

// A test's unwrap is an assertion. clippy.toml's allow-unwrap-in-tests covers only the
// `#[test]` functions, not the helpers beside them, which Cargo.toml's [lints] would deny.
#![allow(clippy::unwrap_used, clippy::expect_used)]

/// The helpers the tests share (`crates/test-support`), and the two that run the real
/// binary, whose path only an integration test knows.
mod support {
    pub use rein_test_support::*;

    use std::path::Path;

    /// The `rein` binary cargo built for these tests.
    const REIN: &str = env!("CARGO_BIN_EXE_rein");

    /// [`rein_in_at`] the real binary.
    pub fn rein_in(home: &Path, project: &Path) -> std::process::Command {
        rein_in_at(REIN, home, project)
    }

    /// [`rein_command_at`] the real binary.
    pub fn rein_command(home: &Path) -> tokio::process::Command {
        rein_command_at(REIN, home)
    }
}

mod acp;
mod agent_loop;
mod app_habits;
mod app_keys;
mod app_modes;
mod app_update;
mod approval_modal;
mod background;
mod compaction;
mod config_example;
mod config_files;
mod context;
mod custom_commands;
mod demo;
mod elicitation_agent;
mod elicitation_form;
mod external_tools;
mod file_finder;
mod file_links;
mod first_prompt_and_init;
mod guards;
mod headless;
mod headless_modes;
mod hooks;
mod hooks_matrix;
mod hostile_streams;
mod instructions;
mod lsp;
mod mcp_binary;
mod mcp_client_features;
mod mcp_conformance;
mod mcp_elicit;
mod mcp_faults;
mod mcp_isolation;
mod mcp_json;
mod mcp_oauth;
mod mcp_servers;
mod mentions;
mod model_switch;
mod model_switch_agent;
mod modes;
mod native_agent;
mod native_rules;
mod permissions_bash;
mod picker;
mod policy_cli;
mod print_mode_cli;
mod project_rules;
mod provider_replay;
mod providers;
mod real_llm;
mod replay_anthropic;
mod replay_responses;
mod request_order;
mod rewind;
mod runaway;
mod scripted_server;
mod session_store;
mod sessions;
mod skills;
mod steering_writes;
mod stream_bounds;
mod subagent;
mod tmux_e2e;
mod ui_approval;
mod ui_render;
