//! [`Config::load`]: the layers read from every source and stacked, highest first; the
//! model name resolved to its provider and target; each setting's default filled in by
//! the module that owns it; and the checks that need more than one layer
//! (`context.compact_to` below `context.compact_at`).

use std::path::{Path, PathBuf};

use super::sources::{env_layer, flag_layer, read_file, user_paths, Layer};
use super::{
    agents_env, mcp, mcp_json, or_default, planted, precedence, providers, routing, safety, target,
    Config, ConfigError, Environment, Overrides, Source, Sourced, DEFAULT_BASE_URL,
    DEFAULT_BASH_TIMEOUT_SECS, DEFAULT_CAP_CHARS, DEFAULT_COMPACT_AT, DEFAULT_COMPACT_TO,
    DEFAULT_CONNECT_TIMEOUT_SECS, DEFAULT_CONTEXT_WINDOW, DEFAULT_IDLE_TIMEOUT_SECS,
    DEFAULT_KEEP_RECENT, DEFAULT_MAX_REPLY_MB, DEFAULT_MAX_STEPS, DEFAULT_MAX_TRIES,
    DEFAULT_NOTIFY_AFTER_SECS, DEFAULT_STUB_CHARS, DEFAULT_SUBAGENT_MAX_PARALLEL,
    DEFAULT_SUBAGENT_MAX_STEPS, DEFAULT_WINDOW_TIMEOUT_SECS, NOTIFY_WHEN,
};
use crate::permissions::DEFAULT_SENSITIVE_READS;
use crate::sandbox::SandboxMode;

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
        let user = read_file(
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
        let mut project = match held {
            Some(_) => Layer::default(),
            None => read_file(
                &project_config_path,
                &Source::ProjectFile(project_config_path.clone()),
            )?,
        };
        // What the project may not lower of the user's safety, and where requests go and
        // what they carry: held until the user allows those exact values.
        let project_safety = safety::limit(&mut project, &user);
        let project_routing = routing::take(&mut project, &user, &agents, &project_config_path)
            .map(|(taken, mut found)| {
                found.allowed =
                    planted::routing_allowed(&data_dir, &project_config_path, found.pinned());
                if found.allowed {
                    taken.restore(&mut project);
                }
                found
            });
        let project_allowed = project_routing.as_ref().is_some_and(|r| r.allowed);
        // Claude Code's `.mcp.json`: project servers too, below the project's own file
        // (its `[mcp_servers.X]` replaces the `.mcp.json` entry `X`); held until allowed.
        let mcp_json_path = project_root.join(mcp_json::FILE);
        let mcp_json = mcp_json::read(&mcp_json_path, env);
        project.mcp_servers =
            mcp::stack(mcp_json.servers, std::mem::take(&mut project.mcp_servers));
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
            project_allowed,
        };
        let name = or_default(layer.model.take(), String::new());
        let target = target::resolve(&name, &inputs, &providers, DEFAULT_BASE_URL)?;
        let compact_at = or_default(layer.compact_at, DEFAULT_COMPACT_AT);
        let compact_to = or_default(layer.compact_to, DEFAULT_COMPACT_TO);
        check_compaction(&compact_at, &compact_to)?;
        let mut compact_model = or_default(layer.compact_model, String::new());
        compact_model.value = compact_model.value.trim().to_string();
        let idle_timeout_secs = or_default(layer.idle_timeout_secs, DEFAULT_IDLE_TIMEOUT_SECS);
        let keepalive_timeout_secs = or_default(
            layer.keepalive_timeout_secs,
            idle_timeout_secs
                .value
                .saturating_mul(u64::from(crate::agent::client::KEEPALIVE_FACTOR)),
        );
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
            api: target.api,
            reasoning_effort: target.reasoning_effort,
            thinking_budget: target.thinking_budget,
            cache_ttl: target.cache_ttl,
            output_limit: target.output_limit,
            origins: target.origins,
            context_window: target.context_window,
            providers,
            mcp_servers: layer.mcp_servers,
            lsp: layer.lsp.settings(),
            idle_timeout_secs,
            keepalive_timeout_secs,
            max_reply_mb: or_default(layer.max_reply_mb, DEFAULT_MAX_REPLY_MB),
            connect_timeout_secs: or_default(
                layer.connect_timeout_secs,
                DEFAULT_CONNECT_TIMEOUT_SECS,
            ),
            window_timeout_secs: or_default(layer.window_timeout_secs, DEFAULT_WINDOW_TIMEOUT_SECS),
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
            max_background: or_default(
                layer.max_background,
                crate::tools::background::DEFAULT_MAX_RUNNING as u32,
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
            checkpoints_enabled: or_default(layer.checkpoints_enabled, true),
            checkpoints_max_file_mib: or_default(
                layer.checkpoints_max_file_mib,
                crate::checkpoint::DEFAULT_MAX_FILE_MIB,
            ),
            checkpoints_max_folder_files: or_default(
                layer.checkpoints_max_folder_files,
                crate::checkpoint::DEFAULT_MAX_FOLDER_FILES,
            ),
            checkpoints_quota_mib: or_default(
                layer.checkpoints_quota_mib,
                crate::checkpoint::DEFAULT_QUOTA_MIB,
            ),
            ui_notifications: or_default(layer.ui_notifications, NOTIFY_WHEN[0].to_string()),
            ui_notify_after_secs: or_default(layer.ui_notify_after_secs, DEFAULT_NOTIFY_AFTER_SECS),
            data_dir,
            user_config_path,
            project_config_path,
            held_project_config: held,
            project_routing,
            project_safety,
            mcp_json_path,
            mcp_json_problems: mcp_json.problems,
            inputs,
        })
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
