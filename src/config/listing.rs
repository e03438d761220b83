//! `rein models`: the providers and models the settings know, as plain text.
//!
//! In: a loaded [`Config`]. Out: the model in effect, then one block per provider (the
//! presets, then the configured ones): its base URL, its key variable and whether it is
//! set, its extra headers, and its configured models with context window and prices,
//! the current one marked `*`. Nothing is asked of any server.

use super::{Config, Provider, Source};

impl Config {
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
                "{:<name_width$}  {:<url_width$}  {}{}",
                provider.name,
                provider.base_url.value,
                self.key_status(provider),
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
                let prices = super::Prices {
                    input: m.input_price.as_ref().map(|p| p.value),
                    cached_input: m.cached_input_price.as_ref().map(|p| p.value),
                    output: m.output_price.as_ref().map(|p| p.value),
                };
                let prices = if prices.is_empty() {
                    String::new()
                } else {
                    prices.to_string()
                };
                (format!("  {mark} {}", m.name), window, prices)
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
