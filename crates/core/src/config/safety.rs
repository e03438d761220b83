//! A project's settings that would lower the user's safety: ignored, or said at start.
//!
//! A cloned repository's `.rein/config.toml` is not the user's. What it may not do
//! silently, judged against the user's own value (their file, else the default):
//! - **ignored**, with a warning naming the key and the file: `checkpoints.enabled = false`
//!   (the record `rein rewind` takes the model's changes back from; only the user's own file
//!   may turn it off), and a `checkpoints.max_file_mib`, `checkpoints.max_folder_files` or
//!   `checkpoints.quota_mib` below the user's (they decide which files the record keeps and
//!   for how long, so a smaller one leaves changes that cannot be taken back);
//! - **obeyed, with a warning**: an `agent.max_steps`, `subagent.max_steps`,
//!   `subagent.max_parallel` or `tools.max_background` above the user's (how much the agent
//!   does before it hands back), and an `instructions.max_bytes` below the user's (it cuts
//!   the user's own AGENTS.md along with the project's).
//!
//! The rest is said elsewhere: `[sandbox]` is refused in a project's file (`file.rs`),
//! `permissions.sensitive_reads` only adds (`load.rs`), the project's allows are limited
//! and warned about and `tools.env_passthrough` is warned about (`policy.rs`), and the
//! keys that route requests are held (`routing.rs`).

use std::fmt::Display;

use super::{
    Layer, Source, Sourced, DEFAULT_MAX_STEPS, DEFAULT_SUBAGENT_MAX_PARALLEL,
    DEFAULT_SUBAGENT_MAX_STEPS,
};

/// Take out of `project` what it may not lower, and say what it lowers or raises; `user`
/// is the user's own file's layer.
pub(super) fn limit(project: &mut Layer, user: &Layer) -> Vec<String> {
    let mut notices = Vec::new();
    if let Some(off) = project.checkpoints_enabled.take_if(|e| !e.value) {
        let users_off = user.checkpoints_enabled.as_ref().is_some_and(|e| !e.value);
        if !users_off {
            notices.push(format!(
                "{} turns checkpoints off (checkpoints.enabled = false), which is ignored: only \
                 your own config.toml may turn off the record `rein rewind` takes changes back from",
                file(&off.source)
            ));
        }
    }
    use crate::checkpoint::{DEFAULT_MAX_FILE_MIB, DEFAULT_MAX_FOLDER_FILES, DEFAULT_QUOTA_MIB};
    let floors = [
        (
            &mut project.checkpoints_max_file_mib,
            &user.checkpoints_max_file_mib,
            DEFAULT_MAX_FILE_MIB,
            "checkpoints.max_file_mib",
        ),
        (
            &mut project.checkpoints_max_folder_files,
            &user.checkpoints_max_folder_files,
            DEFAULT_MAX_FOLDER_FILES,
            "checkpoints.max_folder_files",
        ),
        (
            &mut project.checkpoints_quota_mib,
            &user.checkpoints_quota_mib,
            DEFAULT_QUOTA_MIB,
            "checkpoints.quota_mib",
        ),
    ];
    for (value, users, default, key) in floors {
        let yours = users.as_ref().map_or(default, |u| u.value);
        if let Some(lower) = value.take_if(|v| v.value < yours) {
            notices.push(format!(
                "{} lowers {key} to {} (yours: {yours}), which is ignored: a project may not \
                 shrink the record `rein rewind` takes changes back from",
                file(&lower.source),
                lower.value
            ));
        }
    }
    let more = " (how much the agent does before it hands back to you); remove it if you did \
                not write that file";
    raised(
        &project.max_steps,
        &user.max_steps,
        DEFAULT_MAX_STEPS,
        "agent.max_steps",
        more,
        &mut notices,
    );
    raised(
        &project.subagent_max_steps,
        &user.subagent_max_steps,
        DEFAULT_SUBAGENT_MAX_STEPS,
        "subagent.max_steps",
        more,
        &mut notices,
    );
    raised(
        &project.subagent_max_parallel,
        &user.subagent_max_parallel,
        DEFAULT_SUBAGENT_MAX_PARALLEL,
        "subagent.max_parallel",
        more,
        &mut notices,
    );
    raised(
        &project.max_background,
        &user.max_background,
        crate::tools::background::DEFAULT_MAX_RUNNING as u32,
        "tools.max_background",
        more,
        &mut notices,
    );
    let yours = user
        .instructions_max_bytes
        .as_ref()
        .map_or(crate::instructions::DEFAULT_MAX_BYTES as u64, |u| u.value);
    if let Some(lower) = project
        .instructions_max_bytes
        .as_ref()
        .filter(|v| v.value < yours)
    {
        notices.push(format!(
            "{} lowers instructions.max_bytes to {} (yours: {yours}), which cuts your own \
             AGENTS.md too; remove it if you did not write that file",
            file(&lower.source),
            lower.value
        ));
    }
    notices
}

/// Say so when the project's `value` is above the user's (or `default`).
fn raised<T: PartialOrd + Copy + Display>(
    value: &Option<Sourced<T>>,
    users: &Option<Sourced<T>>,
    default: T,
    key: &str,
    why: &str,
    notices: &mut Vec<String>,
) {
    let yours = users.as_ref().map_or(default, |u| u.value);
    if let Some(higher) = value.as_ref().filter(|v| v.value > yours) {
        notices.push(format!(
            "{} raises {key} to {} (yours: {yours}){why}",
            file(&higher.source),
            higher.value
        ));
    }
}

/// "the project file PATH".
fn file(source: &Source) -> String {
    format!("the project file {source}")
}
