//! What `rein config` and `rein models` print.
//!
//! `rein config` ([`Config::describe`]): every setting with its value and source, the
//! provider in effect, its headers and the model's prices, the bash and tool rules and the files.
//! `rein models` ([`Config::models_listing`]): the model in effect, then one block per
//! provider (the
//! presets, then the configured ones): its base URL, its key variable and whether it is
//! set, its extra headers, and its configured models with context window and prices,
//! the current one marked `*`. Nothing is asked of any server.

use std::path::Path;

use super::{mask_secret, Config, Provider, RuleAction, SandboxMode, Source, Sourced};

/// The widest value the source column of `rein config` lines up after.
const VALUE_COLUMN: usize = 40;

impl Config {
    /// Lines for `rein config`: each setting with its value and source (the API key
    /// masked), then the files looked at. No trailing newline.
    pub fn describe(&self) -> String {
        fn shown<T: ToString>(s: &Sourced<T>) -> (String, &Source) {
            (s.value.to_string(), &s.source)
        }
        let text = |s: &Sourced<String>| match s.value.as_str() {
            "" => "(not set)".to_string(),
            v => v.to_string(),
        };
        let provider = self
            .providers
            .iter()
            .find(|p| p.name == self.provider.value);
        let mut settings = vec![
            (
                "provider".to_string(),
                (
                    match provider {
                        Some(p) if p.api_key_env.value.is_empty() => p.name.clone(),
                        Some(p) => format!("{} (key in {})", p.name, p.api_key_env.value),
                        None => "(none)".to_string(),
                    },
                    &self.provider.source,
                ),
            ),
            (
                "base_url".into(),
                (text(&self.base_url), &self.base_url.source),
            ),
            (
                "api_key".into(),
                (mask_secret(&self.api_key.value), &self.api_key.source),
            ),
            ("model".into(), (text(&self.model), &self.model.source)),
            ("api".into(), (self.api_text(), &self.api.source)),
        ];
        for header in provider.map_or(&[][..], |p| p.headers.as_slice()) {
            settings.push((
                format!("headers.{}", header.name),
                (header.value.value.clone(), &header.value.source),
            ));
        }
        let entry = provider.and_then(|p| p.model(&self.model.value));
        if let (Some(entry), false) = (entry, self.prices.is_empty()) {
            let source = [
                &entry.input_price,
                &entry.cached_input_price,
                &entry.output_price,
            ]
            .into_iter()
            .flatten()
            .map(|p| &p.source)
            .next();
            if let Some(source) = source {
                settings.push(("prices".into(), (self.prices.to_string(), source)));
            }
        }
        let rest = [
            ("context_window", shown(&self.context_window)),
            ("client.idle_timeout_secs", shown(&self.idle_timeout_secs)),
            (
                "client.keepalive_timeout_secs",
                match self.keepalive_timeout_secs.source {
                    Source::Default => (
                        format!(
                            "{} ({} idle timeouts)",
                            self.keepalive_timeout_secs.value,
                            crate::agent::client::KEEPALIVE_FACTOR
                        ),
                        &self.keepalive_timeout_secs.source,
                    ),
                    _ => shown(&self.keepalive_timeout_secs),
                },
            ),
            ("client.max_reply_mb", shown(&self.max_reply_mb)),
            (
                "client.connect_timeout_secs",
                shown(&self.connect_timeout_secs),
            ),
            (
                "client.window_timeout_secs",
                shown(&self.window_timeout_secs),
            ),
            ("client.max_tries", shown(&self.max_tries)),
            (
                "client.max_output_tokens",
                match self.max_output_tokens.source {
                    Source::Default => (
                        "auto (what is left of a known window, at most 32768)".to_string(),
                        &self.max_output_tokens.source,
                    ),
                    _ => shown(&self.max_output_tokens),
                },
            ),
            ("tools.bash_timeout_secs", shown(&self.bash_timeout_secs)),
            ("tools.max_background", shown(&self.max_background)),
            (
                "tools.env_passthrough",
                (
                    match self.env_passthrough.value.as_slice() {
                        [] => "(none)".to_string(),
                        names => names.join(", "),
                    },
                    &self.env_passthrough.source,
                ),
            ),
            ("agent.max_steps", shown(&self.max_steps)),
            ("subagent.max_steps", shown(&self.subagent_max_steps)),
            ("subagent.max_parallel", shown(&self.subagent_max_parallel)),
            (
                "instructions.max_bytes",
                shown(&self.instructions_max_bytes),
            ),
            ("context.cap_chars", shown(&self.cap_chars)),
            ("context.attach_max_bytes", shown(&self.attach_max_bytes)),
            (
                "context.attach_total_bytes",
                shown(&self.attach_total_bytes),
            ),
            ("context.stub_chars", shown(&self.stub_chars)),
            ("context.keep_recent", shown(&self.keep_recent)),
            ("context.compact_at", shown(&self.compact_at)),
            ("context.compact_to", shown(&self.compact_to)),
            (
                "context.compact_model",
                (
                    match self.compact_model.value.as_str() {
                        "" => "(same as model)".to_string(),
                        m => m.to_string(),
                    },
                    &self.compact_model.source,
                ),
            ),
            (
                "permissions.sensitive_reads",
                (
                    self.sensitive_reads.value.join(", "),
                    &self.sensitive_reads.source,
                ),
            ),
            (
                "sandbox.mode",
                (
                    match self.sandbox_mode.value {
                        SandboxMode::Auto => "auto",
                        SandboxMode::Required => "required",
                        SandboxMode::Off => "off",
                    }
                    .to_string(),
                    &self.sandbox_mode.source,
                ),
            ),
            ("sandbox.network", shown(&self.sandbox_network)),
            ("sandbox.hide_secrets", shown(&self.sandbox_hide_secrets)),
            (
                "sandbox.writable",
                (
                    match self.sandbox_writable.value.as_slice() {
                        [] => "(none)".to_string(),
                        paths => paths
                            .iter()
                            .map(|p| p.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", "),
                    },
                    &self.sandbox_writable.source,
                ),
            ),
            ("ui.bell", shown(&self.ui_bell)),
            ("ui.input_history", shown(&self.ui_input_history)),
            ("checkpoints.enabled", shown(&self.checkpoints_enabled)),
            (
                "checkpoints.max_file_mib",
                shown(&self.checkpoints_max_file_mib),
            ),
            (
                "checkpoints.max_folder_files",
                shown(&self.checkpoints_max_folder_files),
            ),
            ("checkpoints.quota_mib", shown(&self.checkpoints_quota_mib)),
            ("ui.notifications", shown(&self.ui_notifications)),
            ("ui.notify_after_secs", shown(&self.ui_notify_after_secs)),
        ];
        settings.extend(rest.into_iter().map(|(name, v)| (name.to_string(), v)));
        let located = |path: &Path| {
            let missing = if path.is_file() { "" } else { "  (not found)" };
            format!("{}{missing}", path.display())
        };
        let paths = [
            ("user config", located(&self.user_config_path)),
            (
                "project config",
                format!(
                    "{}{}",
                    located(&self.project_config_path),
                    match &self.project_routing {
                        Some(r) if r.allowed => format!("  (route allowed: {})", r.keys()),
                        Some(r) => format!("  (held until `rein config allow`: {})", r.keys()),
                        None => String::new(),
                    }
                ),
            ),
            ("project .mcp.json", located(&self.mcp_json_path)),
            ("data dir", self.data_dir.display().to_string()),
        ];

        let name_width = settings
            .iter()
            .map(|(name, _)| name.len())
            .chain(paths.iter().map(|(name, _)| name.len()))
            .max()
            .unwrap_or(0);
        // The source column lines up after values of up to VALUE_COLUMN characters; a
        // longer value (the sensitive_reads list) takes its own line's room only.
        let value_width = settings
            .iter()
            .map(|(_, (value, _))| value.chars().count())
            .filter(|&w| w <= VALUE_COLUMN)
            .max()
            .unwrap_or(0);
        let mut lines: Vec<String> = settings
            .iter()
            .map(|(name, (value, source))| {
                format!("{name:<name_width$}  {value:<value_width$}  ({source})")
            })
            .collect();
        for rule in &self.bash_rules {
            let action = match rule.action {
                RuleAction::Allow => "allow",
                RuleAction::Ask => "ask",
                RuleAction::Deny => "deny",
            };
            lines.push(format!(
                "{:<name_width$}  {action} `{}`  ({})",
                "permissions.bash",
                rule.pattern,
                rule.file.display()
            ));
        }
        for rule in &self.tool_rules {
            lines.push(format!(
                "{:<name_width$}  {} `{}`  ({})",
                "permissions.tools",
                rule.action,
                rule.pattern,
                rule.file.display()
            ));
        }
        for server in &self.mcp_servers {
            lines.push(format!(
                "{:<name_width$}  {}  ({})",
                format!("mcp_servers.{}", server.name),
                mcp_line(server),
                server.origin.path().display()
            ));
        }
        lines.extend(
            paths
                .iter()
                .map(|(name, path)| format!("{name:<name_width$}  {path}")),
        );
        lines.join("\n")
    }

    /// The language servers, a line each (what `rein config` prints after the settings):
    /// every one rein knows or the config names, the files it serves, and whether it was
    /// found on `PATH` (and where), is not installed, is off, or is a project's and held.
    pub fn lsp_listing(&self) -> String {
        let name_width = 28;
        let mut lines = Vec::new();
        let path_var = std::env::var_os("PATH");
        for server in crate::lsp::spec::merged(&self.lsp.servers) {
            let found = crate::lsp::spec::find_program(&server.command, path_var.as_deref());
            let state = match (self.lsp.enabled && server.enabled, found) {
                (false, _) => "off".to_string(),
                (true, Some(program)) => format!("found: {}", program.display()),
                (true, None) => format!("not installed ({} is not on PATH)", server.command),
            };
            lines.push(format!(
                "{:<name_width$}  .{}  {state}",
                format!("lsp.{}", server.name),
                server.extensions.join(" .")
            ));
        }
        for held in &self.lsp.held {
            lines.push(format!(
                "{:<name_width$}  held: a project's config may not name programs rein runs",
                format!("lsp.{held}")
            ));
        }
        lines.join("\n")
    }

    /// The text `rein models` prints, without a trailing newline.
    pub fn models_listing(&self) -> String {
        let mut lines = Vec::new();
        let current = match (self.model_name.as_str(), self.provider.value.as_str()) {
            ("", _) => "current model: (none configured)".to_string(),
            (name, "") => format!(
                "current model: {name} at {} (no provider; from {})",
                self.base_url.value, self.model.source
            ),
            (name, provider) => format!(
                "current model: {name} (provider {provider}, picked by {})",
                self.provider.source
            ),
        };
        lines.push(current);
        lines.push(String::new());

        let name_width = self
            .providers
            .iter()
            .map(|p| p.name.chars().count())
            .max()
            .unwrap_or(0);
        let url_width = self
            .providers
            .iter()
            .map(|p| p.base_url.value.chars().count())
            .max()
            .unwrap_or(0);
        for provider in &self.providers {
            lines.push(format!(
                "{:<name_width$}  {:<url_width$}  {}, api {}{}",
                provider.name,
                provider.base_url.value,
                self.key_status(provider),
                provider.api.value.name(),
                origin(provider)
            ));
            if !provider.headers.is_empty() {
                let names: Vec<&str> = provider.headers.iter().map(|h| h.name.as_str()).collect();
                lines.push(format!("    headers: {}", names.join(", ")));
            }
            lines.extend(self.model_lines(provider));
        }
        lines.push(String::new());
        lines.push(
            "Pick one with --model PROVIDER/MODEL (e.g. rein --model ollama/qwen3-coder); * marks \
             the current model. Add models and providers in config.toml under [providers.NAME]."
                .to_string(),
        );
        lines.join("\n")
    }

    /// The API in effect, with the model's settings for it: `responses (reasoning
    /// effort medium)`, `anthropic (thinking 8000 tokens, cache 1h)`.
    fn api_text(&self) -> String {
        let mut notes = Vec::new();
        if let Some(effort) = &self.reasoning_effort {
            notes.push(format!("reasoning effort {effort}"));
        }
        if let Some(budget) = self.thinking_budget {
            notes.push(format!("thinking {budget} tokens"));
        }
        if let Some(ttl) = &self.cache_ttl {
            notes.push(format!("cache {ttl}"));
        }
        let name = self.api.value.name();
        match notes.is_empty() {
            true => name.to_string(),
            false => format!("{name} ({})", notes.join(", ")),
        }
    }

    fn key_status(&self, provider: &Provider) -> String {
        let var = &provider.api_key_env.value;
        if var.is_empty() {
            "no key needed".to_string()
        } else if self.inputs.key_vars.contains_key(var) {
            format!("key {var} (set)")
        } else {
            format!("key {var} (not set)")
        }
    }

    /// One line per configured model, and one for the current model when it is this
    /// provider's but has no entry.
    fn model_lines(&self, provider: &Provider) -> Vec<String> {
        let is_current = |id: &str| self.provider.value == provider.name && self.model.value == id;
        let mut rows: Vec<(String, String, String)> = provider
            .models
            .iter()
            .map(|m| {
                let mark = if is_current(&m.name) { "*" } else { " " };
                let window = m
                    .context_window
                    .as_ref()
                    .map_or("window not set".to_string(), |w| {
                        format!("{} tokens", w.value)
                    });
                let prices = m.prices();
                let prices = if prices.is_empty() {
                    String::new()
                } else {
                    prices.to_string()
                };
                let api = m
                    .api
                    .as_ref()
                    .filter(|a| a.value != provider.api.value)
                    .map_or(String::new(), |a| format!(" (api {})", a.value.name()));
                (format!("  {mark} {}{api}", m.name), window, prices)
            })
            .collect();
        let listed = provider.models.iter().any(|m| is_current(&m.name));
        if self.provider.value == provider.name && !listed && !self.model.value.is_empty() {
            rows.push((
                format!("  * {}", self.model.value),
                "(not configured)".to_string(),
                String::new(),
            ));
        }
        let width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
        let window_width = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
        rows.into_iter()
            .map(|(name, window, prices)| {
                format!("{name:<width$}  {window:<window_width$}  {prices}")
                    .trim_end()
                    .to_string()
            })
            .collect()
    }
}

/// Where a provider's base URL was set, when a file set it.
fn origin(provider: &Provider) -> String {
    match &provider.base_url.source {
        Source::Preset(_) => String::new(),
        other => format!("  ({other})"),
    }
}

/// An MCP server in `rein config`: its transport, command line or URL, and what is not
/// the default (the token's variable, never a token).
fn mcp_line(server: &crate::mcp::ServerConfig) -> String {
    use crate::mcp::{
        Origin, SubagentTools, Transport, DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT,
    };
    let mut words = match server.shown() {
        Transport::Stdio { env_vars, .. } => {
            let mut w = vec![format!("stdio `{}`", server.summary())];
            if !env_vars.is_empty() {
                w.push(format!("gets {}", env_vars.join(" ")));
            }
            w
        }
        Transport::Http {
            bearer_token_env, ..
        } => {
            let mut w = vec![format!("http {}", server.summary())];
            if let Some(var) = bearer_token_env {
                w.push(format!("token in {var}"));
            }
            w
        }
    };
    if !server.enabled {
        words.push("disabled".into());
    }
    if server.startup_timeout != DEFAULT_STARTUP_TIMEOUT {
        words.push(format!("startup {}s", server.startup_timeout.as_secs()));
    }
    if server.tool_timeout != DEFAULT_TOOL_TIMEOUT {
        words.push(format!("calls {}s", server.tool_timeout.as_secs()));
    }
    if !server.allow.is_empty() {
        words.push(format!("allow {}", server.allow.join(" ")));
    }
    if !server.deny.is_empty() {
        words.push(format!("deny {}", server.deny.join(" ")));
    }
    match &server.subagents {
        SubagentTools::None => {}
        SubagentTools::All => words.push("subagents get all".into()),
        SubagentTools::ReadOnly => words.push("subagents get read-only tools".into()),
        SubagentTools::Only(globs) => words.push(format!("subagents get {}", globs.join(" "))),
    }
    if let Origin::Project(_) = server.origin {
        words.push("project server".into());
    }
    words.join(", ")
}
