//! Deciding whether a tool call may run: allow, ask the user, or deny.
//!
//! This is the seam the permissions work plugs into. The agent calls
//! [`PermissionPolicy::check`] for every well-formed tool call, after its arguments were
//! validated and before it runs; `Ask` makes the agent send an approval request to the front
//! end. Until the rule engine lands, [`AllowAll`] allows everything.

pub mod paths;

use std::path::Path;

/// A tool call as the policy sees it: validated arguments, and the project it runs in.
#[derive(Debug, Clone, Copy)]
pub struct ToolRequest<'a> {
    pub tool: &'a str,
    pub args: &'a serde_json::Value,
    pub root: &'a Path,
}

/// The policy's answer, with the reason shown to the user and the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// Ask the user. `grants` are what "allow for the rest of the session" would add.
    Ask {
        reason: String,
        grants: Vec<Grant>,
    },
    Deny {
        reason: String,
    },
}

/// Something the user may allow for the rest of the session from an approval prompt.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Grant {
    /// Bash commands matching this rule pattern are allowed.
    Bash(String),
    /// Writes to this (resolved) path are allowed.
    Write(std::path::PathBuf),
    /// Reads of this (resolved) path are allowed.
    Read(std::path::PathBuf),
}

impl Grant {
    /// In words, for the approval prompt: "allow `cargo build` for this session".
    pub fn describe(&self) -> String {
        match self {
            Grant::Bash(pattern) => format!("commands matching `{pattern}`"),
            Grant::Write(path) => format!("writes to {}", path.display()),
            Grant::Read(path) => format!("reads of {}", path.display()),
        }
    }
}

/// Judges tool calls. Pure apart from resolving paths: no user interaction.
pub trait PermissionPolicy: Send + Sync {
    fn check(&self, request: &ToolRequest<'_>) -> Verdict;

    /// The user allowed these for the rest of the session ("always allow this").
    fn grant(&self, _grants: &[Grant]) {}
}

/// The stand-in policy until the rule engine lands: every call is allowed.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl PermissionPolicy for AllowAll {
    fn check(&self, _request: &ToolRequest<'_>) -> Verdict {
        Verdict::Allow
    }
}

/// A rule's action (placeholder until rules.rs lands; then re-exported from there).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Allow,
    Ask,
    Deny,
}
