//! Deciding whether a tool call may run: allow, ask the user, or deny.
//!
//! The agent calls [`PermissionPolicy::check`] for every well-formed tool call, after its
//! arguments were validated and before it runs; `Ask` makes the agent send an approval
//! request to the front end. The policy rein runs with is [`policy::RulePolicy`]: bash
//! command lines are parsed ([`shell`]) and judged part by part against ordered glob rules
//! ([`rules`], [`bash`]); file tools go through path rules ([`paths`]); tools from MCP
//! servers (`mcp__SERVER__TOOL`) through rules on their names ([`tools`]). Permissions are
//! experience, not security: the sandbox (`crate::sandbox`) is what confines a command.

pub mod bash;
pub mod mode;
pub mod paths;
pub mod policy;
pub mod readable;
pub mod reads;
pub mod rules;
pub mod shell;
pub mod tools;

pub use mode::ApprovalMode;
pub use rules::RuleAction;

/// Files whose reading asks first unless the config (`permissions.sensitive_reads`) says otherwise.
pub const DEFAULT_SENSITIVE_READS: &[&str] = &[
    "~/.ssh/**",
    "~/.aws/**",
    "~/.gnupg/**",
    "**/.env",
    "**/.env.local",
    "**/.env.*.local",
    "**/.env.production",
    "**/.env.prod",
    "**/.env.development",
    "**/.env.dev",
    "**/.env.staging",
    "**/.env.test",
    "~/.agents/env",
    "~/.git-credentials",
    "~/.netrc",
    "~/.docker/config.json",
    "~/.kube/config",
    "~/.npmrc",
    "~/.pypirc",
    "~/.config/gh/hosts.yml",
    // Other tools' tokens (the same files `sandbox.hide_secrets` covers: config::SECRET_FILES).
    "~/.claude/.credentials.json",
    "~/.codex/auth.json",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.config/gcloud/application_default_credentials.json",
    "~/.config/gcloud/credentials.db",
    "~/.config/gcloud/access_tokens.db",
    "~/.config/gcloud/legacy_credentials/**",
    "~/.azure/msal_token_cache.*",
    "~/.azure/accessTokens.json",
    "~/.terraform.d/credentials.tfrc.json",
    "~/.gem/credentials",
    "~/.local/share/gem/credentials",
    "~/.vault-token",
    "~/.pgpass",
    "~/.my.cnf",
    "~/.config/github-copilot/hosts.json",
    "~/.config/github-copilot/apps.json",
    "~/.cache/huggingface/token",
    "~/.huggingface/token",
    "~/.config/hub",
    "~/.config/glab-cli/config.yml",
    "~/.config/doctl/config.yaml",
    "~/.fly/config.yml",
    "~/.s3cfg",
    "~/.boto",
    "~/.databrickscfg",
    "~/.config/rclone/rclone.conf",
    "~/.composer/auth.json",
    "~/.config/composer/auth.json",
    "~/.config/op/**",
    "~/.oci/**",
    "~/.password-store/**",
    "~/.local/share/keyrings/**",
    // What was typed in shells and consoles: tokens pasted on command lines.
    "~/.bash_history",
    "~/.zsh_history",
    "~/.zhistory",
    "~/.histfile",
    "~/.local/share/fish/fish_history",
    "~/.python_history",
    "~/.psql_history",
    "~/.mysql_history",
    "~/.node_repl_history",
    "~/.sqlite_history",
    "~/.irb_history",
    "~/.rediscli_history",
    "~/.lesshst",
];

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
    /// Calls to exactly this tool (an MCP tool's qualified name, `mcp__SERVER__TOOL`).
    Tool(String),
}

impl Grant {
    /// In words, for the approval prompt: "allow `cargo build` for this session".
    pub fn describe(&self) -> String {
        match self {
            Grant::Bash(pattern) => match rules::pattern_prefix(pattern) {
                Some(prefix) => format!("`{prefix}` with any arguments (`{prefix}:*`)"),
                None => format!("commands matching `{pattern}`"),
            },
            Grant::Write(path) => format!("writes to {}", path.display()),
            Grant::Read(path) => format!("reads of {}", path.display()),
            Grant::Tool(name) => format!("the tool `{name}`"),
        }
    }
}

/// Judges tool calls. Pure apart from resolving paths: no user interaction.
pub trait PermissionPolicy: Send + Sync {
    fn check(&self, request: &ToolRequest<'_>) -> Verdict;

    /// The user allowed these for the rest of the session ("always allow this").
    fn grant(&self, _grants: &[Grant]) {}

    /// `files` steer later work as `kind` says (the files an instruction file imports, the
    /// scripts an approved hook or server runs): writing one asks from now on.
    fn add_steering_files(
        &self,
        _files: &[std::path::PathBuf],
        _kind: crate::consent::steering::Kind,
    ) {
    }

    /// A new session starts (or another one is resumed): forget what was allowed for the
    /// old one.
    fn forget_session_grants(&self) {}

    /// The user allowed these for good in this project: write them where the next session
    /// reads them. Returns what was written, for the user.
    fn persist(&self, _grants: &[Grant]) -> Result<String, String> {
        Err("this policy cannot save rules".to_string())
    }
}

/// A policy that allows everything: for tests and benchmarks that are not about
/// permissions.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl PermissionPolicy for AllowAll {
    fn check(&self, _request: &ToolRequest<'_>) -> Verdict {
        Verdict::Allow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the approval prompt offers to allow, in words.
    #[test]
    fn a_grant_in_words() {
        let cases = [
            (
                Grant::Bash("cargo build*".into()),
                "commands matching `cargo build*`",
            ),
            (
                Grant::Bash(rules::prefix_pattern("git commit")),
                "`git commit` with any arguments (`git commit:*`)",
            ),
            (Grant::Write("/p/src/a.rs".into()), "writes to /p/src/a.rs"),
            (Grant::Read("/etc/hosts".into()), "reads of /etc/hosts"),
            (
                Grant::Tool("mcp__time__now".into()),
                "the tool `mcp__time__now`",
            ),
        ];
        for (grant, words) in cases {
            assert_eq!(grant.describe(), words);
        }
    }
}
