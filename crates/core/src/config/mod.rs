//! rein's settings, resolved from several sources, each value remembering where it came from.
//!
//! In: the project root, the command-line [`Overrides`] and an [`Environment`] (the process's
//! variables and home directory, injectable so tests never touch the real ones). Out: a
//! [`Config`] whose every setting is a [`Sourced`] value, or a one-line [`ConfigError`] that
//! names the file, variable or flag at fault and the key.
//!
//! Precedence, highest first:
//! 1. command-line flags;
//! 2. the environment: `REIN_BASE_URL`, `REIN_API_KEY`, `REIN_MODEL`, `REIN_CONTEXT_WINDOW`,
//!    with `OPENAI_BASE_URL` and `OPENAI_API_KEY` as fallbacks (an empty variable is unset);
//! 3. the project's `<root>/.rein/config.toml`;
//! 4. the user's `config.toml`, in `$REIN_HOME` when set, else in the platform config dir;
//! 5. the reference harness's `~/.agents/env`;
//! 6. the defaults.
//!
//! Each source is read into a `Layer` of optional values (`sources.rs`; the files in
//! `file.rs`, `~/.agents/env` in `agents_env.rs`), the layers are stacked and the highest
//! value present wins (`load.rs`). The model name may then pick a provider (a preset or a
//! `[providers.NAME]` table, `providers.rs`), which decides the base URL, the key, the
//! headers and the context window (`target.rs`, which states the rules). A missing file is
//! skipped; a file that is present must be valid. Loading never prints and never panics.
//! What the settings make for the rest of rein, the permission policy and what the sandbox
//! hides, is in `policy.rs`; `rein config`'s listing in `listing.rs`.

mod agents_env;
pub mod discover;
mod error;
mod file;
mod listing;
mod load;
mod lsp;
mod mcp;
mod mcp_json;
pub mod planted;
mod policy;
mod providers;
mod routing;
mod safety;
mod secrets;
pub mod server_models;
mod sources;
mod table;
mod target;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;

pub use error::ConfigError;
pub use load::expand_path;
pub use policy::SECRET_FILES;
pub use providers::{Discovery, Header, ModelEntry, Provider};
pub use routing::ProjectRouting;
pub use target::{ModelTarget, Origins, Prices, ResumeModel};

use crate::permissions::RuleAction;
use crate::sandbox::SandboxMode;
use sources::{positive_int, precedence, Layer};

/// The largest config file rein reads (a real one is a few KiB).
pub(crate) const MAX_CONFIG_BYTES: u64 = 1024 * 1024;
/// The longest timeout a setting may ask for: one day (longer ones overflow clocks and
/// are never meant).
const MAX_TIMEOUT_SECS: u64 = 86_400;
/// The largest context window accepted: far beyond any model, small enough for arithmetic.
const MAX_CONTEXT_WINDOW: u64 = 1_000_000_000;
pub use crate::permissions::policy::BashRuleEntry;
pub use crate::permissions::tools::ToolRuleEntry;
pub use crate::permissions::DEFAULT_SENSITIVE_READS;

const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
// One owner per default: the client's and the context's own constants.
const DEFAULT_CONTEXT_WINDOW: u64 = crate::context::DEFAULT_WINDOW;
const DEFAULT_IDLE_TIMEOUT_SECS: u64 = crate::agent::client::DEFAULT_IDLE_TIMEOUT.as_secs();
const DEFAULT_MAX_REPLY_MB: u64 = (crate::agent::stream::MAX_REPLY_BYTES >> 20) as u64;
const DEFAULT_WINDOW_TIMEOUT_SECS: u64 = discover::TIMEOUT.as_secs();
const DEFAULT_CONNECT_TIMEOUT_SECS: u64 = crate::agent::client::DEFAULT_CONNECT_TIMEOUT.as_secs();
const DEFAULT_MAX_TRIES: u32 = crate::agent::client::DEFAULT_MAX_TRIES;
const DEFAULT_BASH_TIMEOUT_SECS: u64 = 60;
const DEFAULT_MAX_STEPS: u32 = 200;
/// `ui.notify_after_secs`, the default without settings: the dashboard's
/// `DEFAULT_NOTIFY_AFTER` is built from it.
pub const DEFAULT_NOTIFY_AFTER_SECS: u64 = 5;
/// The values of `ui.notifications`, the default first.
pub const NOTIFY_WHEN: [&str; 3] = ["unfocused", "always", "never"];
const DEFAULT_SUBAGENT_MAX_STEPS: u32 = 12;
const DEFAULT_SUBAGENT_MAX_PARALLEL: u32 = 4;
const DEFAULT_CAP_CHARS: u64 = crate::context::DEFAULT_CAP_CHARS as u64;
const DEFAULT_STUB_CHARS: u64 = crate::context::DEFAULT_STUB_CHARS as u64;
const DEFAULT_KEEP_RECENT: u64 = crate::context::DEFAULT_KEEP_RECENT as u64;
const DEFAULT_COMPACT_AT: f64 = crate::context::DEFAULT_COMPACT_AT;
const DEFAULT_COMPACT_TO: f64 = crate::context::DEFAULT_COMPACT_TO;

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Default,
    /// The reference harness's `~/.agents/env`.
    AgentsEnv(PathBuf),
    /// The user's `config.toml`.
    UserFile(PathBuf),
    /// The project's `.rein/config.toml`.
    ProjectFile(PathBuf),
    /// An environment variable, by name.
    Env(String),
    /// A command-line flag, e.g. `--model`.
    Flag(String),
    /// A built-in provider preset, by name.
    Preset(String),
    /// Reported by the model server, at this URL.
    Server(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::AgentsEnv(path) | Source::UserFile(path) | Source::ProjectFile(path) => {
                write!(f, "{}", path.display())
            }
            Source::Env(var) => write!(f, "env {var}"),
            Source::Flag(flag) => write!(f, "flag {flag}"),
            Source::Preset(name) => write!(f, "preset {name}"),
            Source::Server(url) => write!(f, "server {url}"),
        }
    }
}

/// A setting's value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Sourced<T> {
    pub value: T,
    pub source: Source,
}

impl<T> Sourced<T> {
    pub fn new(value: T, source: Source) -> Self {
        Sourced { value, source }
    }

    /// Set by the user (a file, a variable, a flag) or reported by the server: not rein's
    /// default or a preset's guess.
    pub fn is_known(&self) -> bool {
        !matches!(self.source, Source::Default | Source::Preset(_))
    }
}

/// The resolved settings.
#[derive(Clone)]
pub struct Config {
    /// The chat-completions endpoint's base, without a trailing `/`: the `base_url`
    /// setting, or the provider's when the model name picked one.
    pub base_url: Sourced<String>,
    /// Empty when none is configured.
    pub api_key: Sourced<String>,
    /// The model id sent to the server (the name without a provider prefix). Empty when
    /// none is configured; the caller reports "no model configured".
    pub model: Sourced<String>,
    /// The model as named in the settings, provider prefix included
    /// (`openrouter/anthropic/claude-sonnet-4.5`); the status line shows it.
    pub model_name: String,
    /// The provider in effect (picked by the model name's prefix, or the one whose
    /// base URL is `base_url`); empty when the endpoint is none of them. Its source is
    /// what picked it.
    pub provider: Sourced<String>,
    /// The provider's extra HTTP headers, sent with every request.
    pub headers: Vec<(String, String)>,
    /// The model's prices from its `[providers.P.models.M]` entry.
    pub prices: Prices,
    /// The model takes images (its entry's `images`).
    pub images: bool,
    /// How the server may be asked for the context window at startup
    /// ([`discover::context_window`]); `None` when the window is configured.
    pub discovery: Discovery,
    /// The wire API the model is spoken to in (see [`ModelTarget::api`]).
    pub api: Sourced<crate::conversation::Api>,
    /// Responses: the model's `reasoning.effort`.
    pub reasoning_effort: Option<String>,
    /// Anthropic: the model's thinking budget.
    pub thinking_budget: Option<u64>,
    /// Anthropic: the provider's cache time to live.
    pub cache_ttl: Option<String>,
    /// The model's output limit (its entry's `max_output_tokens`).
    pub output_limit: Option<u64>,
    /// Where the rest of the model's route came from ([`ModelTarget::check_route`]).
    pub origins: Origins,
    /// The model's context window in tokens, > 0.
    pub context_window: Sourced<u64>,
    /// Every provider: the presets (changed by the files where they say so), then the
    /// ones the files add.
    pub providers: Vec<Provider>,
    /// `[mcp_servers.NAME]`: the user's servers and the project's (a project's replaces
    /// the user's of the same name; the project's `.mcp.json` entries are the project's
    /// too, below its `.rein/config.toml`), by name; each knows the file that declared it.
    pub mcp_servers: Vec<crate::mcp::ServerConfig>,
    /// `[lsp]`: the language servers (the defaults found on `PATH`, the user's tables).
    pub lsp: crate::lsp::LspSettings,
    /// `[client]`: a stream that sends nothing for this long is an error, > 0.
    pub idle_timeout_secs: Sourced<u64>,
    /// `[client]`: a stream that sends only keep-alives, no part of the reply, for this
    /// long is an error; by default two idle timeouts
    /// ([`crate::agent::client::KEEPALIVE_FACTOR`]).
    pub keepalive_timeout_secs: Sourced<u64>,
    /// `[client]`: the most MiB one reply may hold, 1..=1024.
    pub max_reply_mb: Sourced<u64>,
    /// `[client]`: how long to wait for a connection, > 0.
    pub connect_timeout_secs: Sourced<u64>,
    /// `[client]`: how long the question about the model's window may take, every
    /// request included (at start, for `rein config`, on `/model`), > 0.
    pub window_timeout_secs: Sourced<u64>,
    /// `[client]`: attempts per request, the first included, 1..=10.
    pub max_tries: Sourced<u32>,
    /// `[client]`: the most tokens a reply may have (sent as `max_tokens`); 0: the
    /// server's default, nothing sent.
    pub max_output_tokens: Sourced<u64>,
    /// `[tools]`: how long a `bash` command may run, > 0.
    pub bash_timeout_secs: Sourced<u64>,
    /// `tools.env_passthrough`: variables commands get although their names look secret
    /// (never one that holds a provider key; see [`crate::sandbox::env`]).
    pub env_passthrough: Sourced<Vec<String>>,
    /// `[agent]`: model calls per user turn before the agent stops, > 0.
    pub max_steps: Sourced<u32>,
    /// `[subagent]`: model calls one subagent (a `task` call) may make, > 0.
    pub subagent_max_steps: Sourced<u32>,
    /// `[subagent]`: subagents that run at once (the rest of a reply's `task` calls wait),
    /// 1 to 64.
    pub subagent_max_parallel: Sourced<u32>,
    /// `tools.max_background`: background commands that run at once, 1..=32.
    pub max_background: Sourced<u32>,
    /// `[instructions]`: the most bytes the AGENTS.md files take in the system prompt,
    /// together (0 turns them off).
    pub instructions_max_bytes: Sourced<u64>,
    /// `[context]`: a tool result longer than this many characters is cut on arrival
    /// (head and tail kept, the whole in a spill file), >= 1000.
    pub cap_chars: Sourced<u64>,
    /// `[context]`: the most bytes of one file an `@path` mention attaches (0: mentions
    /// attach only the path).
    pub attach_max_bytes: Sourced<u64>,
    /// `[context]`: the most bytes a message's attachments take together.
    pub attach_total_bytes: Sourced<u64>,
    /// `[context]`: at a turn's end, old tool results are cut to this many characters.
    pub stub_chars: Sourced<u64>,
    /// `[context]`: the most recent messages stubbing leaves whole.
    pub keep_recent: Sourced<u64>,
    /// `[context]`: the share of the context window (0 to 1, exclusive) over which old
    /// tool results are dropped and, when that is not enough, the history is compacted.
    pub compact_at: Sourced<f64>,
    /// `[context]`: the share of the window (0 to 1, exclusive) a compacted history may
    /// fill at most; smaller than `compact_at`.
    pub compact_to: Sourced<f64>,
    /// `[context]`: the model that writes handoff notes, trimmed; empty: `model`.
    pub compact_model: Sourced<String>,
    /// `[[permissions.bash]]` rules: the user file's, then the project file's (appended
    /// after the defaults; a deny from either wins, and the project's allows count only
    /// where the sandbox confines commands: see [`Config::policy`]).
    pub bash_rules: Vec<BashRuleEntry>,
    /// `[[permissions.tools]]` rules on tool names (MCP tools): the user file's, then the
    /// project file's (whose allows are never obeyed); a deny wins, else the last match.
    pub tool_rules: Vec<ToolRuleEntry>,
    /// `permissions.sensitive_reads`: globs of files whose reading asks first (`~` is the
    /// home directory). A project's list adds to the user's (or the defaults), never
    /// replaces it.
    pub sensitive_reads: Sourced<Vec<String>>,
    /// `sandbox.mode`.
    pub sandbox_mode: Sourced<SandboxMode>,
    /// `sandbox.network`: allow commands network access.
    pub sandbox_network: Sourced<bool>,
    /// `sandbox.hide_secrets`: cover the files users keep secrets in ([`SECRET_FILES`],
    /// rein's own config file) with empty ones inside the sandbox.
    pub sandbox_hide_secrets: Sourced<bool>,
    /// `sandbox.writable`: extra paths commands may write (`~` expanded, relative paths
    /// against the project).
    pub sandbox_writable: Sourced<Vec<PathBuf>>,
    /// `ui.bell`: ring the terminal bell when an approval is needed.
    pub ui_bell: Sourced<bool>,
    /// `ui.input_history`: save what is typed in the dashboard to `history.jsonl` in the
    /// data folder, for Up and Ctrl-R in later sessions of the project.
    pub ui_input_history: Sourced<bool>,
    /// `[checkpoints]`: whether the project's files are recorded around each turn, and
    /// the record's bounds.
    pub checkpoints_enabled: Sourced<bool>,
    pub checkpoints_max_file_mib: Sourced<u64>,
    pub checkpoints_max_folder_files: Sourced<u64>,
    pub checkpoints_quota_mib: Sourced<u64>,
    /// `ui.notifications`: when a waiting approval or a long turn's end posts a desktop
    /// notification (OSC 9): `"unfocused"` (the terminal lost the focus), `"always"`,
    /// `"never"` (one of [`NOTIFY_WHEN`]).
    pub ui_notifications: Sourced<String>,
    /// `ui.notify_after_secs`: a turn at least this long notifies when it ends.
    pub ui_notify_after_secs: Sourced<u64>,
    /// Where rein keeps its own files: `$REIN_HOME` when set, else the platform data dir.
    pub data_dir: PathBuf,
    /// Where the user's `config.toml` is looked for.
    pub user_config_path: PathBuf,
    /// `<root>/.rein/config.toml`.
    pub project_config_path: PathBuf,
    /// Why that file is not obeyed, when a command may have written it
    /// ([`planted`]); its settings are then left out.
    pub held_project_config: Option<planted::Held>,
    /// What that file says about where requests go and what they carry, and whether the
    /// user allowed it (held until then: `routing.rs`).
    pub project_routing: Option<ProjectRouting>,
    /// What that file would lower of the user's safety, ignored or obeyed (`safety.rs`),
    /// one sentence each for the start.
    pub project_safety: Vec<String>,
    /// `<root>/.mcp.json`: Claude Code's MCP servers of the project, read into
    /// `mcp_servers` as project servers.
    pub mcp_json_path: PathBuf,
    /// A sentence per `.mcp.json` entry left out (the file and the key, and why).
    pub mcp_json_problems: Vec<String>,
    /// What resolving another model name needs ([`Config::resolve_model`]).
    inputs: target::Inputs,
}

/// Settings given on the command line; `None` leaves the lower layers to decide.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key: Option<String>,
    pub context_window: Option<u64>,
}

/// Everything the loader reads from the process, injectable for tests.
#[derive(Debug, Clone)]
pub struct Environment {
    pub vars: HashMap<String, String>,
    pub home: Option<PathBuf>,
}

impl Environment {
    /// The current process's variables (those that are valid UTF-8) and home directory.
    pub fn from_process() -> Self {
        let vars = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        let home = directories::BaseDirs::new().map(|dirs| dirs.home_dir().to_path_buf());
        Environment { vars, home }
    }

    /// A variable's value, `None` when unset or empty.
    fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

impl Config {
    /// The `[checkpoints]` settings.
    pub fn checkpoint_settings(&self) -> crate::checkpoint::Settings {
        crate::checkpoint::Settings::from_config(
            self.checkpoints_enabled.value,
            self.checkpoints_max_file_mib.value,
            self.checkpoints_max_folder_files.value,
            self.checkpoints_quota_mib.value,
        )
    }

    /// The `[context]` settings as the agent takes them; spill files go to
    /// `<data dir>/spill`, which the sandbox keeps readable.
    pub fn context(&self) -> crate::context::ContextConfig {
        let size = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        crate::context::ContextConfig {
            cap_chars: size(self.cap_chars.value),
            stub_chars: size(self.stub_chars.value),
            keep_recent: size(self.keep_recent.value),
            spill_dir: Some(self.data_dir.join("spill")),
            window: self.context_window.value,
            window_known: self.context_window.is_known(),
            compact_at: self.compact_at.value,
            compact_to: self.compact_to.value,
            compact_model: self.compact_model.value.clone(),
            attach_max_bytes: size(self.attach_max_bytes.value),
            attach_total_bytes: size(self.attach_total_bytes.value),
        }
    }
}

/// Like the derived `Debug`, but with the API key masked so it never reaches a log.
impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let api_key = Sourced::new(
            mask_secret(&self.api_key.value),
            self.api_key.source.clone(),
        );
        f.debug_struct("Config")
            .field("base_url", &self.base_url)
            .field("api_key", &api_key)
            .field("model", &self.model)
            .field("context_window", &self.context_window)
            .field("idle_timeout_secs", &self.idle_timeout_secs)
            .field("keepalive_timeout_secs", &self.keepalive_timeout_secs)
            .field("window_timeout_secs", &self.window_timeout_secs)
            .field("max_reply_mb", &self.max_reply_mb)
            .field("connect_timeout_secs", &self.connect_timeout_secs)
            .field("max_tries", &self.max_tries)
            .field("max_output_tokens", &self.max_output_tokens)
            .field("bash_timeout_secs", &self.bash_timeout_secs)
            .field("env_passthrough", &self.env_passthrough)
            .field("max_steps", &self.max_steps)
            .field("subagent_max_steps", &self.subagent_max_steps)
            .field("subagent_max_parallel", &self.subagent_max_parallel)
            .field("max_background", &self.max_background)
            .field("instructions_max_bytes", &self.instructions_max_bytes)
            .field("cap_chars", &self.cap_chars)
            .field("attach_max_bytes", &self.attach_max_bytes)
            .field("attach_total_bytes", &self.attach_total_bytes)
            .field("stub_chars", &self.stub_chars)
            .field("keep_recent", &self.keep_recent)
            .field("compact_at", &self.compact_at)
            .field("compact_to", &self.compact_to)
            .field("compact_model", &self.compact_model)
            .field("bash_rules", &self.bash_rules)
            .field("tool_rules", &self.tool_rules)
            .field("sensitive_reads", &self.sensitive_reads)
            .field("sandbox_mode", &self.sandbox_mode)
            .field("sandbox_network", &self.sandbox_network)
            .field("sandbox_hide_secrets", &self.sandbox_hide_secrets)
            .field("sandbox_writable", &self.sandbox_writable)
            .field("ui_bell", &self.ui_bell)
            .field("ui_input_history", &self.ui_input_history)
            .field("checkpoints_enabled", &self.checkpoints_enabled)
            .field("checkpoints_max_file_mib", &self.checkpoints_max_file_mib)
            .field(
                "checkpoints_max_folder_files",
                &self.checkpoints_max_folder_files,
            )
            .field("checkpoints_quota_mib", &self.checkpoints_quota_mib)
            .field("ui_notifications", &self.ui_notifications)
            .field("ui_notify_after_secs", &self.ui_notify_after_secs)
            .field("data_dir", &self.data_dir)
            .field("user_config_path", &self.user_config_path)
            .field("project_config_path", &self.project_config_path)
            .finish()
    }
}

/// A secret for display: `"(not set)"` when empty, else an ellipsis with at most the last 4
/// characters (fewer for short secrets) and a short `sk-`-style prefix on long ones.
pub fn mask_secret(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return "(not set)".to_string();
    }
    let long = chars.len() >= 16;
    let tail = if long { 4 } else { chars.len() / 4 };
    let prefix = match chars.iter().position(|&c| c == '-') {
        Some(dash) if long && dash <= 3 => dash + 1,
        _ => 0,
    };
    let head: String = chars[..prefix].iter().collect();
    let end: String = chars[chars.len() - tail..].iter().collect();
    format!("{head}…{end}")
}

fn or_default<T>(value: Option<Sourced<T>>, default: T) -> Sourced<T> {
    value.unwrap_or(Sourced::new(default, Source::Default))
}
