//! The headless front end: the real `rein` binary against the scripted server, and
//! `headless::run` with a policy that asks.

use crate::support;

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::Output;

use serde_json::Value;
use support::rein_command;
use tokio::process::Command;

mod approvals;
mod errors;
mod output;
mod private_files;
mod processes;

/// Run a command to the end and collect its output.
async fn output_of(cmd: &mut Command) -> Output {
    tokio::time::timeout(support::GIVE_UP, cmd.output())
        .await
        .expect("rein finished")
        .expect("rein ran")
}

/// Run the binary with `args` in an isolated home.
async fn rein<I, S>(home: &Path, args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    output_of(rein_command(home).args(args)).await
}

/// The arguments of one print-mode turn: `-p PROMPT --base-url URL --model MODEL --cwd DIR`.
fn print_args(prompt: &str, base_url: &str, model: &str, cwd: &Path) -> Vec<OsString> {
    vec![
        "-p".into(),
        prompt.into(),
        "--base-url".into(),
        base_url.into(),
        "--model".into(),
        model.into(),
        "--cwd".into(),
        cwd.into(),
    ]
}

/// The last message of a request (its reminder, if it carries one, taken out).
fn last_stored(request: &Value) -> Value {
    support::agent::stored_messages(request)
        .pop()
        .expect("a message")
}
