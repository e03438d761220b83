//! Every source read into a [`Layer`]: a config file (its top level walked here, each part
//! handed to its reader: `file.rs` for rein's fixed keys, `providers.rs` for
//! `[providers.NAME]`, `mcp.rs` for `[mcp_servers.NAME]`), the environment's variables,
//! the command line's flags, and where the user's config file and rein's data folder are.
//! A `Layer` holds optional values; [`Layer::over`] stacks one over a lower one, the
//! higher value winning (rules, providers and MCP servers add up instead), and
//! [`precedence`] ranks the sources for the errors that name two of them.

use std::path::{Path, PathBuf};

use super::table::expected_int;
use super::{
    file, mcp, providers, BashRuleEntry, ConfigError, Environment, Overrides, Source, Sourced,
    ToolRuleEntry, MAX_CONTEXT_WINDOW,
};
use crate::sandbox::SandboxMode;

/// The values one source provides; `None` where it says nothing.
#[derive(Debug, Default)]
pub(super) struct Layer {
    pub(super) base_url: Option<Sourced<String>>,
    pub(super) api_key: Option<Sourced<String>>,
    /// `OPENAI_API_KEY`, a key below `REIN_API_KEY` that only some providers get.
    pub(super) openai_api_key: Option<Sourced<String>>,
    pub(super) model: Option<Sourced<String>>,
    pub(super) context_window: Option<Sourced<u64>>,
    pub(super) idle_timeout_secs: Option<Sourced<u64>>,
    pub(super) keepalive_timeout_secs: Option<Sourced<u64>>,
    pub(super) max_reply_mb: Option<Sourced<u64>>,
    pub(super) connect_timeout_secs: Option<Sourced<u64>>,
    pub(super) window_timeout_secs: Option<Sourced<u64>>,
    pub(super) max_tries: Option<Sourced<u32>>,
    pub(super) max_output_tokens: Option<Sourced<u64>>,
    pub(super) bash_timeout_secs: Option<Sourced<u64>>,
    pub(super) env_passthrough: Option<Sourced<Vec<String>>>,
    pub(super) max_steps: Option<Sourced<u32>>,
    pub(super) subagent_max_steps: Option<Sourced<u32>>,
    pub(super) subagent_max_parallel: Option<Sourced<u32>>,
    pub(super) max_background: Option<Sourced<u32>>,
    pub(super) instructions_max_bytes: Option<Sourced<u64>>,
    pub(super) cap_chars: Option<Sourced<u64>>,
    pub(super) attach_max_bytes: Option<Sourced<u64>>,
    pub(super) attach_total_bytes: Option<Sourced<u64>>,
    pub(super) stub_chars: Option<Sourced<u64>>,
    pub(super) keep_recent: Option<Sourced<u64>>,
    pub(super) compact_at: Option<Sourced<f64>>,
    pub(super) compact_to: Option<Sourced<f64>>,
    pub(super) compact_model: Option<Sourced<String>>,
    /// Rules add up across layers instead of replacing each other.
    pub(super) bash_rules: Vec<BashRuleEntry>,
    pub(super) tool_rules: Vec<ToolRuleEntry>,
    pub(super) sensitive_reads: Option<Sourced<Vec<String>>>,
    pub(super) sandbox_mode: Option<Sourced<SandboxMode>>,
    pub(super) sandbox_network: Option<Sourced<bool>>,
    pub(super) sandbox_hide_secrets: Option<Sourced<bool>>,
    pub(super) sandbox_writable: Option<Sourced<Vec<String>>>,
    pub(super) ui_bell: Option<Sourced<bool>>,
    pub(super) ui_input_history: Option<Sourced<bool>>,
    pub(super) checkpoints_enabled: Option<Sourced<bool>>,
    pub(super) checkpoints_max_file_mib: Option<Sourced<u64>>,
    pub(super) checkpoints_max_folder_files: Option<Sourced<u64>>,
    pub(super) checkpoints_quota_mib: Option<Sourced<u64>>,
    pub(super) ui_notifications: Option<Sourced<String>>,
    pub(super) ui_notify_after_secs: Option<Sourced<u64>>,
    /// `[providers.NAME]` tables; they add up across layers, lowest first.
    pub(super) providers: Vec<providers::ProviderLayer>,
    /// The `[providers]` table as the file wrote it (what a project's allow pins, see
    /// `routing.rs`); not stacked.
    pub(super) providers_raw: Option<toml::Value>,
    /// `[mcp_servers.NAME]` tables; a higher layer's replaces a lower one's of that name.
    pub(super) mcp_servers: Vec<crate::mcp::ServerConfig>,
    /// The `[lsp]` section; a higher layer's keys win, server tables merge by name.
    pub(super) lsp: super::lsp::LspLayer,
}

impl Layer {
    /// This layer's values, with `lower`'s filling the gaps.
    pub(super) fn over(self, lower: Layer) -> Layer {
        Layer {
            base_url: self.base_url.or(lower.base_url),
            api_key: self.api_key.or(lower.api_key),
            openai_api_key: self.openai_api_key.or(lower.openai_api_key),
            model: self.model.or(lower.model),
            context_window: self.context_window.or(lower.context_window),
            idle_timeout_secs: self.idle_timeout_secs.or(lower.idle_timeout_secs),
            keepalive_timeout_secs: self.keepalive_timeout_secs.or(lower.keepalive_timeout_secs),
            max_reply_mb: self.max_reply_mb.or(lower.max_reply_mb),
            connect_timeout_secs: self.connect_timeout_secs.or(lower.connect_timeout_secs),
            window_timeout_secs: self.window_timeout_secs.or(lower.window_timeout_secs),
            max_tries: self.max_tries.or(lower.max_tries),
            max_output_tokens: self.max_output_tokens.or(lower.max_output_tokens),
            bash_timeout_secs: self.bash_timeout_secs.or(lower.bash_timeout_secs),
            env_passthrough: self.env_passthrough.or(lower.env_passthrough),
            max_steps: self.max_steps.or(lower.max_steps),
            subagent_max_steps: self.subagent_max_steps.or(lower.subagent_max_steps),
            subagent_max_parallel: self.subagent_max_parallel.or(lower.subagent_max_parallel),
            max_background: self.max_background.or(lower.max_background),
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
            checkpoints_enabled: self.checkpoints_enabled.or(lower.checkpoints_enabled),
            checkpoints_max_file_mib: self
                .checkpoints_max_file_mib
                .or(lower.checkpoints_max_file_mib),
            checkpoints_max_folder_files: self
                .checkpoints_max_folder_files
                .or(lower.checkpoints_max_folder_files),
            checkpoints_quota_mib: self.checkpoints_quota_mib.or(lower.checkpoints_quota_mib),
            ui_notifications: self.ui_notifications.or(lower.ui_notifications),
            ui_notify_after_secs: self.ui_notify_after_secs.or(lower.ui_notify_after_secs),
            providers: {
                let mut providers = lower.providers;
                providers.extend(self.providers);
                providers
            },
            providers_raw: None,
            mcp_servers: mcp::stack(lower.mcp_servers, self.mcp_servers),
            lsp: self.lsp.over(lower.lsp),
        }
    }
}

/// Read one config file into a layer whose values carry `source`. A missing file is an
/// empty layer.
pub(super) fn read_file(path: &Path, source: &Source) -> Result<Layer, ConfigError> {
    let text = match crate::host::safe_fs::read_small_text(path, super::MAX_CONFIG_BYTES) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Layer::default()),
        Err(error) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                error,
            })
        }
    };
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| syntax_error(path, &text, &e))?;
    walk(&table, path, source)
}

/// A parsed file's top level, entry by entry: the tables other readers own go to them,
/// the rest is checked against rein's own keys.
fn walk(table: &toml::Table, path: &Path, source: &Source) -> Result<Layer, ConfigError> {
    let mut layer = Layer::default();
    for (name, value) in table {
        match name.as_str() {
            "providers" => {
                layer.providers = providers::read_table(value, path, source)?;
                layer.providers_raw = Some(value.clone());
            }
            "mcp_servers" => layer.mcp_servers = mcp::read_table(value, path, source)?,
            "lsp" => layer.lsp = super::lsp::read_table(value, path, source)?,
            _ => file::read_entry(name, value, path, source, &mut layer)?,
        }
    }
    Ok(layer)
}

/// toml's own `Display` spans several lines with a source excerpt; keep its message on one
/// line and add the line number from the error's span.
fn syntax_error(path: &Path, text: &str, error: &toml::de::Error) -> ConfigError {
    let message = error
        .message()
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    let line = error.span().map(|span| {
        let before = &text.as_bytes()[..span.start.min(text.len())];
        before.iter().filter(|&&b| b == b'\n').count() + 1
    });
    ConfigError::Syntax {
        path: path.to_path_buf(),
        message,
        line,
    }
}

/// The user's config file and rein's data dir: both in `$REIN_HOME` when set, else the
/// platform's config and data dirs.
pub(super) fn user_paths(env: &Environment) -> Result<(PathBuf, PathBuf), ConfigError> {
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
pub(super) fn env_layer(env: &Environment) -> Result<Layer, ConfigError> {
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
pub(super) fn flag_layer(overrides: &Overrides) -> Result<Layer, ConfigError> {
    let flag = |name: &str| Source::Flag(name.to_string());
    let text = |value: &Option<String>, name: &str| {
        value.as_ref().map(|v| Sourced::new(v.clone(), flag(name)))
    };
    let context_window = match overrides.context_window {
        Some(n) if n == 0 || n > MAX_CONTEXT_WINDOW => {
            return Err(ConfigError::Flag {
                flag: "--context-window".to_string(),
                problem: format!("expected {}, got {n}", expected_int(1, MAX_CONTEXT_WINDOW)),
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
pub(super) fn positive_int(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n > 0 && n <= MAX_CONTEXT_WINDOW => Ok(n),
        _ => Err(format!(
            "expected {}, got {text:?}",
            expected_int(1, MAX_CONTEXT_WINDOW)
        )),
    }
}

/// A source's rank in the precedence list, higher winning.
pub(super) fn precedence(source: &Source) -> u8 {
    match source {
        Source::Default | Source::Preset(_) | Source::Server(_) => 0,
        Source::AgentsEnv(_) => 1,
        Source::UserFile(_) => 2,
        Source::ProjectFile(_) => 3,
        Source::Env(_) => 4,
        Source::Flag(_) => 5,
    }
}
