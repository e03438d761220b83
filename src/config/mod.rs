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
//! Each source is read into a `Layer` of optional values, the layers are stacked and the
//! highest value present wins. The model name may then pick a provider (a preset or a
//! `[providers.NAME]` table, `providers.rs`), which decides the base URL, the key, the
//! headers and the context window (`target.rs`, which states the rules). A missing file is skipped; a file that is present must be
//! valid. Loading never prints and never panics.

mod agents_env;
pub mod discover;
mod error;
mod file;
mod listing;
mod mcp;
pub mod planted;
mod providers;
mod secrets;
mod target;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

pub use error::ConfigError;
pub use providers::{Discovery, Header, ModelEntry, Provider};
pub use target::{ModelTarget, Prices, ResumeModel};

use crate::permissions::RuleAction;
use crate::sandbox::SandboxMode;

/// The largest config file rein reads (a real one is a few KiB).
pub(crate) const MAX_CONFIG_BYTES: u64 = 1024 * 1024;
pub use crate::permissions::policy::BashRuleEntry;
pub use crate::permissions::tools::ToolRuleEntry;
pub use crate::permissions::DEFAULT_SENSITIVE_READS;

const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
// One owner per default: the client's and the context's own constants.
const DEFAULT_CONTEXT_WINDOW: u64 = crate::context::DEFAULT_WINDOW;
const DEFAULT_IDLE_TIMEOUT_SECS: u64 = crate::agent::client::DEFAULT_IDLE_TIMEOUT.as_secs();
const DEFAULT_CONNECT_TIMEOUT_SECS: u64 = crate::agent::client::DEFAULT_CONNECT_TIMEOUT.as_secs();
const DEFAULT_MAX_TRIES: u32 = crate::agent::client::DEFAULT_MAX_TRIES;
const DEFAULT_BASH_TIMEOUT_SECS: u64 = 60;
const DEFAULT_MAX_STEPS: u32 = 200;
/// `ui.notify_after_secs`: as `app::attention::DEFAULT_NOTIFY_AFTER` (the dashboard's
/// default without settings); a test keeps the two equal.
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
/// Files and folders under the home directory that hold credentials and that no build or
/// test needs: covered by empty ones inside the sandbox (`sandbox.hide_secrets`).
pub const SECRET_FILES: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".agents/env",
    ".git-credentials",
    ".netrc",
    ".docker/config.json",
    ".kube",
    ".npmrc",
    ".pypirc",
    ".config/gh/hosts.yml",
];

impl Config {
    /// What the sandbox hides from commands: [`SECRET_FILES`] under `home` and rein's own
    /// config file, unless `sandbox.hide_secrets` is off.
    pub fn hidden_from_commands(&self, home: Option<&Path>) -> Vec<PathBuf> {
        if !self.sandbox_hide_secrets.value {
            return Vec::new();
        }
        let mut out: Vec<PathBuf> = home
            .map(|h| SECRET_FILES.iter().map(|f| h.join(f)).collect())
            .unwrap_or_default();
        out.push(self.user_config_path.clone());
        out
    }
}

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
    /// The model's context window in tokens, > 0.
    pub context_window: Sourced<u64>,
    /// Every provider: the presets (changed by the files where they say so), then the
    /// ones the files add.
    pub providers: Vec<Provider>,
    /// `[mcp_servers.NAME]`: the user's servers and the project's (a project's replaces
    /// the user's of the same name), by name; each knows the file that declared it.
    pub mcp_servers: Vec<crate::mcp::ServerConfig>,
    /// `[client]`: a stream that sends nothing for this long is an error, > 0.
    pub idle_timeout_secs: Sourced<u64>,
    /// `[client]`: how long to wait for a connection, > 0.
    pub connect_timeout_secs: Sourced<u64>,
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

/// The values one source provides; `None` where it says nothing.
#[derive(Debug, Default)]
struct Layer {
    base_url: Option<Sourced<String>>,
    api_key: Option<Sourced<String>>,
    /// `OPENAI_API_KEY`, a key below `REIN_API_KEY` that only some providers get.
    openai_api_key: Option<Sourced<String>>,
    model: Option<Sourced<String>>,
    context_window: Option<Sourced<u64>>,
    idle_timeout_secs: Option<Sourced<u64>>,
    connect_timeout_secs: Option<Sourced<u64>>,
    max_tries: Option<Sourced<u32>>,
    max_output_tokens: Option<Sourced<u64>>,
    bash_timeout_secs: Option<Sourced<u64>>,
    env_passthrough: Option<Sourced<Vec<String>>>,
    max_steps: Option<Sourced<u32>>,
    subagent_max_steps: Option<Sourced<u32>>,
    subagent_max_parallel: Option<Sourced<u32>>,
    instructions_max_bytes: Option<Sourced<u64>>,
    cap_chars: Option<Sourced<u64>>,
    attach_max_bytes: Option<Sourced<u64>>,
    attach_total_bytes: Option<Sourced<u64>>,
    stub_chars: Option<Sourced<u64>>,
    keep_recent: Option<Sourced<u64>>,
    compact_at: Option<Sourced<f64>>,
    compact_to: Option<Sourced<f64>>,
    compact_model: Option<Sourced<String>>,
    /// Rules add up across layers instead of replacing each other.
    bash_rules: Vec<BashRuleEntry>,
    tool_rules: Vec<ToolRuleEntry>,
    sensitive_reads: Option<Sourced<Vec<String>>>,
    sandbox_mode: Option<Sourced<SandboxMode>>,
    sandbox_network: Option<Sourced<bool>>,
    sandbox_hide_secrets: Option<Sourced<bool>>,
    sandbox_writable: Option<Sourced<Vec<String>>>,
    ui_bell: Option<Sourced<bool>>,
    ui_input_history: Option<Sourced<bool>>,
    ui_notifications: Option<Sourced<String>>,
    ui_notify_after_secs: Option<Sourced<u64>>,
    /// `[providers.NAME]` tables; they add up across layers, lowest first.
    providers: Vec<providers::ProviderLayer>,
    /// `[mcp_servers.NAME]` tables; a higher layer's replaces a lower one's of that name.
    mcp_servers: Vec<crate::mcp::ServerConfig>,
}

impl Layer {
    /// This layer's values, with `lower`'s filling the gaps.
    fn over(self, lower: Layer) -> Layer {
        Layer {
            base_url: self.base_url.or(lower.base_url),
            api_key: self.api_key.or(lower.api_key),
            openai_api_key: self.openai_api_key.or(lower.openai_api_key),
            model: self.model.or(lower.model),
            context_window: self.context_window.or(lower.context_window),
            idle_timeout_secs: self.idle_timeout_secs.or(lower.idle_timeout_secs),
            connect_timeout_secs: self.connect_timeout_secs.or(lower.connect_timeout_secs),
            max_tries: self.max_tries.or(lower.max_tries),
            max_output_tokens: self.max_output_tokens.or(lower.max_output_tokens),
            bash_timeout_secs: self.bash_timeout_secs.or(lower.bash_timeout_secs),
            env_passthrough: self.env_passthrough.or(lower.env_passthrough),
            max_steps: self.max_steps.or(lower.max_steps),
            subagent_max_steps: self.subagent_max_steps.or(lower.subagent_max_steps),
            subagent_max_parallel: self.subagent_max_parallel.or(lower.subagent_max_parallel),
            instructions_max_bytes: self.instructions_max_bytes.or(lower.instructions_max_bytes),
            cap_chars: self.cap_chars.or(lower.cap_chars),
            attach_max_bytes: self.attach_max_bytes.or(lower.attach_max_bytes),
            attach_total_bytes: self.attach_total_bytes.or(lower.attach_total_bytes),
            stub_chars: self.stub_chars.or(lower.stub_chars),
            keep_recent: self.keep_recent.or(lower.keep_recent),
            compact_at: self.compact_at.or(lower.compact_at),
            compact_to: self.compact_to.or(lower.compact_to),
            compact_model: self.compact_model.or(lower.compact_model),
            bash_rules: {
                let mut rules = lower.bash_rules;
                rules.extend(self.bash_rules);
                rules
            },
            tool_rules: {
                let mut rules = lower.tool_rules;
                rules.extend(self.tool_rules);
                rules
            },
            sensitive_reads: self.sensitive_reads.or(lower.sensitive_reads),
            sandbox_mode: self.sandbox_mode.or(lower.sandbox_mode),
            sandbox_network: self.sandbox_network.or(lower.sandbox_network),
            sandbox_hide_secrets: self.sandbox_hide_secrets.or(lower.sandbox_hide_secrets),
            sandbox_writable: self.sandbox_writable.or(lower.sandbox_writable),
            ui_bell: self.ui_bell.or(lower.ui_bell),
            ui_input_history: self.ui_input_history.or(lower.ui_input_history),
            ui_notifications: self.ui_notifications.or(lower.ui_notifications),
            ui_notify_after_secs: self.ui_notify_after_secs.or(lower.ui_notify_after_secs),
            providers: {
                let mut providers = lower.providers;
                providers.extend(self.providers);
                providers
            },
            mcp_servers: mcp::stack(lower.mcp_servers, self.mcp_servers),
        }
    }
}

impl Config {
    /// Resolve the settings for the project at `project_root`.
    pub fn load(
        project_root: &Path,
        overrides: &Overrides,
        env: &Environment,
    ) -> Result<Config, ConfigError> {
        let (user_config_path, data_dir) = user_paths(env)?;
        let project_config_path = project_root.join(".rein").join("config.toml");

        let agents = match &env.home {
            Some(home) => agents_env::read(&home.join(".agents").join("env"))?,
            None => Layer::default(),
        };
        let user = file::read(
            &user_config_path,
            &Source::UserFile(user_config_path.clone()),
        )?;
        // What a project's sensitive reads add to: the user's, else the defaults.
        let users_sensitive = user.sensitive_reads.as_ref().map_or_else(
            || {
                DEFAULT_SENSITIVE_READS
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            },
            |s| s.value.clone(),
        );
        // A project config a command may have planted is not read until confirmed.
        let held = planted::check(&data_dir, project_root, &project_config_path);
        let project = match held {
            Some(_) => Layer::default(),
            None => file::read(
                &project_config_path,
                &Source::ProjectFile(project_config_path.clone()),
            )?,
        };
        let flags = flag_layer(overrides)?;
        let vars = env_layer(env)?;
        // Every explicit key, highest first: which one is sent depends on the provider.
        let keys: Vec<Sourced<String>> = [
            &flags.api_key,
            &vars.api_key,
            &vars.openai_api_key,
            &project.api_key,
            &user.api_key,
            &agents.api_key,
        ]
        .into_iter()
        .flatten()
        .map(|k| Sourced::new(k.value.trim().to_string(), k.source.clone()))
        .collect();
        let window = flags
            .context_window
            .clone()
            .or_else(|| vars.context_window.clone());
        let fallback_window = or_default(
            project
                .context_window
                .clone()
                .or_else(|| user.context_window.clone())
                .or_else(|| agents.context_window.clone()),
            DEFAULT_CONTEXT_WINDOW,
        );
        let mut layer = flags.over(vars).over(project).over(user).over(agents);

        let providers = providers::merge(std::mem::take(&mut layer.providers))?;
        let key_vars = providers
            .iter()
            .filter_map(|p| {
                let var = p.api_key_env.value.as_str();
                let value = env.var(var).filter(|_| !var.is_empty())?;
                Some((var.to_string(), value.trim().to_string()))
            })
            .collect();
        let inputs = target::Inputs {
            base_url: layer
                .base_url
                .take()
                .map(|b| Sourced::new(b.value.trim().trim_end_matches('/').to_string(), b.source)),
            keys,
            window,
            fallback_window,
            key_vars,
        };
        let name = or_default(layer.model.take(), String::new());
        let target = target::resolve(&name, &inputs, &providers, DEFAULT_BASE_URL)?;
        let compact_at = or_default(layer.compact_at, DEFAULT_COMPACT_AT);
        let compact_to = or_default(layer.compact_to, DEFAULT_COMPACT_TO);
        check_compaction(&compact_at, &compact_to)?;
        let mut compact_model = or_default(layer.compact_model, String::new());
        compact_model.value = compact_model.value.trim().to_string();
        Ok(Config {
            base_url: target.base_url,
            api_key: target.api_key,
            model: target.model,
            model_name: target.name,
            provider: target.provider,
            headers: target.headers,
            prices: target.prices,
            images: target.images,
            discovery: target.discovery,
            context_window: target.context_window,
            providers,
            mcp_servers: layer.mcp_servers,
            idle_timeout_secs: or_default(layer.idle_timeout_secs, DEFAULT_IDLE_TIMEOUT_SECS),
            connect_timeout_secs: or_default(
                layer.connect_timeout_secs,
                DEFAULT_CONNECT_TIMEOUT_SECS,
            ),
            max_tries: or_default(layer.max_tries, DEFAULT_MAX_TRIES),
            max_output_tokens: or_default(layer.max_output_tokens, 0),
            bash_timeout_secs: or_default(layer.bash_timeout_secs, DEFAULT_BASH_TIMEOUT_SECS),
            env_passthrough: or_default(layer.env_passthrough, Vec::new()),
            max_steps: or_default(layer.max_steps, DEFAULT_MAX_STEPS),
            subagent_max_steps: or_default(layer.subagent_max_steps, DEFAULT_SUBAGENT_MAX_STEPS),
            subagent_max_parallel: or_default(
                layer.subagent_max_parallel,
                DEFAULT_SUBAGENT_MAX_PARALLEL,
            ),
            instructions_max_bytes: or_default(
                layer.instructions_max_bytes,
                crate::instructions::DEFAULT_MAX_BYTES as u64,
            ),
            cap_chars: or_default(layer.cap_chars, DEFAULT_CAP_CHARS),
            attach_max_bytes: or_default(
                layer.attach_max_bytes,
                crate::context::DEFAULT_ATTACH_MAX_BYTES as u64,
            ),
            attach_total_bytes: or_default(
                layer.attach_total_bytes,
                crate::context::DEFAULT_ATTACH_TOTAL_BYTES as u64,
            ),
            stub_chars: or_default(layer.stub_chars, DEFAULT_STUB_CHARS),
            keep_recent: or_default(layer.keep_recent, DEFAULT_KEEP_RECENT),
            compact_at,
            compact_to,
            compact_model,
            bash_rules: layer.bash_rules,
            tool_rules: layer.tool_rules,
            sensitive_reads: match layer.sensitive_reads {
                // A project may protect more files, never fewer: the file tools run outside
                // the sandbox.
                Some(Sourced {
                    value,
                    source: source @ Source::ProjectFile(_),
                }) => {
                    let mut all = users_sensitive;
                    for pattern in value {
                        if !all.contains(&pattern) {
                            all.push(pattern);
                        }
                    }
                    Sourced::new(all, source)
                }
                other => or_default(
                    other,
                    DEFAULT_SENSITIVE_READS
                        .iter()
                        .map(|s| s.to_string())
                        .collect(),
                ),
            },
            sandbox_mode: or_default(layer.sandbox_mode, SandboxMode::Auto),
            sandbox_network: or_default(layer.sandbox_network, false),
            sandbox_hide_secrets: or_default(layer.sandbox_hide_secrets, true),
            sandbox_writable: {
                let w = or_default(layer.sandbox_writable, Vec::new());
                let paths = w
                    .value
                    .iter()
                    .map(|p| expand_path(p, env.home.as_deref(), project_root))
                    .collect();
                Sourced::new(paths, w.source)
            },
            ui_bell: or_default(layer.ui_bell, true),
            ui_input_history: or_default(layer.ui_input_history, true),
            ui_notifications: or_default(layer.ui_notifications, NOTIFY_WHEN[0].to_string()),
            ui_notify_after_secs: or_default(layer.ui_notify_after_secs, DEFAULT_NOTIFY_AFTER_SECS),
            data_dir,
            user_config_path,
            project_config_path,
            held_project_config: held,
            inputs,
        })
    }

    /// Things about the resolved settings a user should know before rein sends anything:
    /// those of [`model_warnings`](Self::model_warnings), and the project rules that
    /// allow: obeyed without asking when `confined` (commands run in a working sandbox,
    /// which contains what they allow), ignored otherwise; a project's tool allows are
    /// always ignored (MCP tools run outside the sandbox).
    pub fn warnings(&self, confined: bool) -> Vec<String> {
        let mut warnings = self.model_warnings(&self.target());
        if let Some(held) = &self.held_project_config {
            warnings.push(held.to_string());
        }
        for rule in &self.bash_rules {
            if rule.action == RuleAction::Allow && rule.project {
                warnings.push(if confined {
                    format!(
                        "the project file {} allows `{}` without asking (inside the sandbox); remove the rule if you did not write it",
                        rule.file.display(),
                        rule.pattern
                    )
                } else {
                    format!(
                        "the project file {} allows `{}`, which is ignored: commands run without a sandbox, and a project may only allow what the sandbox contains",
                        rule.file.display(),
                        rule.pattern
                    )
                });
            }
        }
        for rule in &self.tool_rules {
            if rule.action == RuleAction::Allow && rule.project {
                warnings.push(format!(
                    "the project file {} allows the tools `{}`, which is ignored: MCP tools run outside the sandbox, so only your own config (or `p` in the approval prompt) can allow them",
                    rule.file.display(),
                    rule.pattern
                ));
            }
        }
        if let (Source::ProjectFile(path), [_, ..]) = (
            &self.env_passthrough.source,
            self.env_passthrough.value.as_slice(),
        ) {
            warnings.push(format!(
                "the project file {} passes {} to commands (tools.env_passthrough), so the model sees their values; remove it if you did not write that file",
                path.display(),
                self.env_passthrough.value.join(", ")
            ));
        }
        warnings
    }

    /// The `[context]` settings as the agent takes them; spill files go to
    /// `<data dir>/spill`, which the sandbox keeps readable.
    /// The permission policy these settings make for the project at `root`: the default
    /// rules, then the user's and the project's (the project's allows only when `confined`:
    /// commands run in a working sandbox); the tool-name rules for MCP tools, with the
    /// tools the user allowed for this project from the approval prompt after their own
    /// file's; the sensitive reads (rein's own config file always among them: it may hold
    /// `api_key`); and "always allow in this project" saving a command's rule to the
    /// project's config file and a tool's to rein's data folder ([`AllowedTools`]).
    ///
    /// [`AllowedTools`]: crate::allowed_tools::AllowedTools
    pub fn policy(
        &self,
        root: &Path,
        home: Option<&Path>,
        confined: bool,
    ) -> Result<crate::permissions::policy::RulePolicy, crate::permissions::policy::PolicyError>
    {
        use crate::allowed_tools::AllowedTools;
        use crate::permissions::policy::RuleList;
        let mut sensitive = self.sensitive_reads.value.clone();
        sensitive.push(crate::permissions::rules::escape_glob(
            &self.user_config_path.display().to_string(),
        ));
        let bash: Vec<BashRuleEntry> = self
            .bash_rules
            .iter()
            .filter(|r| confined || !(r.project && r.action == RuleAction::Allow))
            .cloned()
            .collect();
        let (stored, _) = AllowedTools::load(&self.data_dir);
        let mut tools: Vec<ToolRuleEntry> = Vec::with_capacity(self.tool_rules.len());
        let (users, projects): (Vec<_>, Vec<_>) =
            self.tool_rules.iter().cloned().partition(|r| !r.project);
        tools.extend(users);
        tools.extend(
            stored
                .patterns(root)
                .into_iter()
                .map(|pattern| ToolRuleEntry {
                    pattern,
                    action: RuleAction::Allow,
                    file: stored.path().to_path_buf(),
                    project: false,
                }),
        );
        tools.extend(projects);
        let project_file = self.project_config_path.clone();
        let data_dir = self.data_dir.clone();
        let project = root.to_path_buf();
        let saver: crate::permissions::policy::RuleSaver =
            std::sync::Arc::new(move |rules: &[(RuleList, &str)]| {
                let commands: Vec<(RuleList, &str)> = rules
                    .iter()
                    .copied()
                    .filter(|(list, _)| *list == RuleList::Bash)
                    .collect();
                let tools: Vec<&str> = rules
                    .iter()
                    .filter(|(list, _)| *list == RuleList::Tools)
                    .map(|(_, pattern)| *pattern)
                    .collect();
                let mut written = None;
                if !tools.is_empty() {
                    let (mut store, _) = AllowedTools::load(&data_dir);
                    store
                        .allow(&project, &tools)
                        .map_err(|e| format!("cannot write {}: {e}", store.path().display()))?;
                    written = Some(store.path().to_path_buf());
                }
                if !commands.is_empty() {
                    file::save_allow_rules(&project_file, &commands)?;
                    written = Some(project_file.clone());
                }
                Ok(written.unwrap_or_else(|| project_file.clone()))
            });
        // This rein's spill folders (`<spill>/<pid>-<turn>`, see `context::spill`) are the
        // only part of the data folder read without asking.
        let spill = crate::permissions::rules::escape_glob(
            &self.data_dir.join("spill").display().to_string(),
        );
        let pid = std::process::id();
        let shown = [format!("{spill}/{pid}-*"), format!("{spill}/{pid}-*/**")];
        let config_dirs: Vec<PathBuf> = self
            .user_config_path
            .parent()
            .map(Path::to_path_buf)
            .into_iter()
            .collect();
        Ok(
            crate::permissions::policy::RulePolicy::new(root, &bash, &sensitive, home)?
                .with_tool_rules(&tools)?
                .with_rein_folders(&self.data_dir, &config_dirs, &shown)
                .with_saver(saver),
        )
    }

    pub fn context(&self) -> crate::context::ContextConfig {
        let size = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        crate::context::ContextConfig {
            cap_chars: size(self.cap_chars.value),
            stub_chars: size(self.stub_chars.value),
            keep_recent: size(self.keep_recent.value),
            spill_dir: Some(self.data_dir.join("spill")),
            window: self.context_window.value,
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
            .field("connect_timeout_secs", &self.connect_timeout_secs)
            .field("max_tries", &self.max_tries)
            .field("max_output_tokens", &self.max_output_tokens)
            .field("bash_timeout_secs", &self.bash_timeout_secs)
            .field("env_passthrough", &self.env_passthrough)
            .field("max_steps", &self.max_steps)
            .field("subagent_max_steps", &self.subagent_max_steps)
            .field("subagent_max_parallel", &self.subagent_max_parallel)
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

/// The user's config file and rein's data dir: both in `$REIN_HOME` when set, else the
/// platform's config and data dirs.
fn user_paths(env: &Environment) -> Result<(PathBuf, PathBuf), ConfigError> {
    if let Some(home) = env.var("REIN_HOME") {
        let home = PathBuf::from(home);
        return Ok((home.join("config.toml"), home));
    }
    let dirs = directories::ProjectDirs::from("", "", "rein").ok_or(ConfigError::NoHome)?;
    Ok((
        dirs.config_dir().join("config.toml"),
        dirs.data_dir().to_path_buf(),
    ))
}

/// The environment's layer. An empty variable counts as unset.
fn env_layer(env: &Environment) -> Result<Layer, ConfigError> {
    let first = |names: &[&str]| {
        names.iter().find_map(|&name| {
            env.var(name)
                .map(|v| Sourced::new(v.to_string(), Source::Env(name.to_string())))
        })
    };
    let var = "REIN_CONTEXT_WINDOW";
    let context_window = match env.var(var) {
        Some(text) => {
            let n = positive_int(text).map_err(|problem| ConfigError::Env {
                var: var.to_string(),
                problem,
            })?;
            Some(Sourced::new(n, Source::Env(var.to_string())))
        }
        None => None,
    };
    Ok(Layer {
        base_url: first(&["REIN_BASE_URL", "OPENAI_BASE_URL"]),
        api_key: first(&["REIN_API_KEY"]),
        openai_api_key: first(&["OPENAI_API_KEY"]),
        model: first(&["REIN_MODEL"]),
        context_window,
        ..Layer::default()
    })
}

/// The command line's layer. A flag given with an empty string still wins.
fn flag_layer(overrides: &Overrides) -> Result<Layer, ConfigError> {
    let flag = |name: &str| Source::Flag(name.to_string());
    let text = |value: &Option<String>, name: &str| {
        value.as_ref().map(|v| Sourced::new(v.clone(), flag(name)))
    };
    let context_window = match overrides.context_window {
        Some(n) if n == 0 || n > file::MAX_CONTEXT_WINDOW => {
            return Err(ConfigError::Flag {
                flag: "--context-window".to_string(),
                problem: format!(
                    "expected {}, got {n}",
                    file::expected_int(1, file::MAX_CONTEXT_WINDOW)
                ),
            })
        }
        Some(n) => Some(Sourced::new(n, flag("--context-window"))),
        None => None,
    };
    Ok(Layer {
        base_url: text(&overrides.base_url, "--base-url"),
        api_key: text(&overrides.api_key, "--api-key"),
        model: text(&overrides.model, "--model"),
        context_window,
        ..Layer::default()
    })
}

/// A context window from text (surrounding whitespace allowed), or the problem in words.
fn positive_int(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n > 0 && n <= file::MAX_CONTEXT_WINDOW => Ok(n),
        _ => Err(format!(
            "expected {}, got {text:?}",
            file::expected_int(1, file::MAX_CONTEXT_WINDOW)
        )),
    }
}

/// `~/x` against the home directory, a relative path against the project.
pub fn expand_path(path: &str, home: Option<&Path>, project_root: &Path) -> PathBuf {
    if let (Some(rest), Some(home)) = (path.strip_prefix("~/"), home) {
        return home.join(rest);
    }
    if path == "~" {
        if let Some(home) = home {
            return home.to_path_buf();
        }
    }
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        project_root.join(p)
    }
}

/// `context.compact_to` must stay below `context.compact_at` once the layers are stacked.
/// The error leads with the source that wins the precedence (the one most likely just
/// edited) and names both keys, their values and where each came from.
fn check_compaction(at: &Sourced<f64>, to: &Sourced<f64>) -> Result<(), ConfigError> {
    if to.value < at.value {
        return Ok(());
    }
    let from = |source: &Source| match source {
        Source::Default => "the default".to_string(),
        other => format!("from {other}"),
    };
    let (origin, problem) = if precedence(&at.source) > precedence(&to.source) {
        (
            &at.source,
            format!(
                "key `context.compact_at` = {} must be larger than `context.compact_to` = {} ({})",
                at.value,
                to.value,
                from(&to.source)
            ),
        )
    } else {
        (
            &to.source,
            format!(
                "key `context.compact_to` = {} must be smaller than `context.compact_at` = {} ({})",
                to.value,
                at.value,
                from(&at.source)
            ),
        )
    };
    Err(ConfigError::Conflict {
        origin: origin.to_string(),
        problem,
    })
}

/// A source's rank in the precedence list, higher winning.
fn precedence(source: &Source) -> u8 {
    match source {
        Source::Default | Source::Preset(_) | Source::Server(_) => 0,
        Source::AgentsEnv(_) => 1,
        Source::UserFile(_) => 2,
        Source::ProjectFile(_) => 3,
        Source::Env(_) => 4,
        Source::Flag(_) => 5,
    }
}

fn or_default<T>(value: Option<Sourced<T>>, default: T) -> Sourced<T> {
    value.unwrap_or(Sourced::new(default, Source::Default))
}
