//! Providers: where a model lives. The built-in presets (a base URL and the name of the
//! variable holding the key) and the `[providers.NAME]` tables of the config files, which
//! add providers or override parts of one.
//!
//! In: each file's `providers` table, read by [`read_table`] into [`ProviderLayer`]s (every
//! error names the file and the `providers.NAME.key` at fault). Out: [`merge`] lays the
//! user file's layers and then the project file's over the presets, field by field, into
//! the list of [`Provider`]s a model name's prefix can pick from. Nothing here reads the
//! environment; the key variables are looked up by the caller. The presets themselves, and
//! the models rein knows, are in `presets.rs`.

mod presets;

use std::path::Path;

use super::table::{
    describe, expected_int, in_file, is_variable_name, key_part, string, Problem, Table,
};
use super::{ConfigError, Source, Sourced, MAX_CONTEXT_WINDOW};
use crate::conversation::Api;

pub(super) use presets::{canonical, preset_names, presets};

/// How a server is asked for a model's context window (see `discover`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discovery {
    /// The server says nothing useful: do not ask.
    None,
    /// llama.cpp: `GET /props` at the server root.
    LlamaCpp,
    /// Ollama: `POST /api/show` at the server root (and `GET /api/ps`).
    Ollama,
    /// LM Studio: `GET /api/v0/models` at the server root.
    LmStudio,
    /// `GET {base_url}/models`, reading the context field the entry for the model has
    /// (OpenRouter, Groq, Mistral, vLLM).
    ModelList,
    /// An endpoint of unknown kind: `GET /props` at the root, then `GET {base_url}/models`.
    Probe,
}

/// A provider as rein uses it: a preset, a configured one, or a preset some file changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Provider {
    pub name: String,
    /// Without a trailing `/`; its source is [`Source::Preset`] for a preset's own URL.
    pub base_url: Sourced<String>,
    /// The name of the variable holding the key; empty when the server needs none.
    pub api_key_env: Sourced<String>,
    /// Extra HTTP headers sent with every request, in the order the files give them.
    pub headers: Vec<Header>,
    /// The configured models, by name.
    pub models: Vec<ModelEntry>,
    /// A built-in preset (perhaps changed by a file).
    pub builtin: bool,
    pub discovery: Discovery,
    /// The wire API its models are spoken to in (a model's entry may say otherwise).
    pub api: Sourced<Api>,
    /// Anthropic: the prompt cache's time to live, `"5m"` or `"1h"`; none: the API's.
    pub cache_ttl: Option<Sourced<String>>,
}

impl Provider {
    /// The entry for the model `name`: its own, or for a dated snapshot
    /// (`o4-mini-2025-04-16`) its model's (`o4-mini`), the same model with the same
    /// window, prices and reasoning.
    pub fn model(&self, name: &str) -> Option<&ModelEntry> {
        self.models.iter().find(|m| m.name == name).or_else(|| {
            let (base, date) = name.rsplit_once('-')?;
            let (base, month) = base.rsplit_once('-')?;
            let (base, year) = base.rsplit_once('-')?;
            let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
            if !(digits(year, 4) && digits(month, 2) && digits(date, 2)) {
                return None;
            }
            self.models.iter().find(|m| m.name == base)
        })
    }
}

/// One extra HTTP header and the file it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub name: String,
    pub value: Sourced<String>,
}

/// A `[providers.NAME.models.MODEL]` table; each value remembers its file.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelEntry {
    /// The model id sent to the server.
    pub name: String,
    pub context_window: Option<Sourced<u64>>,
    /// US dollars per million input tokens.
    pub input_price: Option<Sourced<f64>>,
    /// US dollars per million input tokens read from the provider's prompt cache.
    pub cached_input_price: Option<Sourced<f64>>,
    /// US dollars per million input tokens written to the provider's prompt cache
    /// (Anthropic bills them apart).
    pub cache_write_price: Option<Sourced<f64>>,
    /// US dollars per million output tokens.
    pub output_price: Option<Sourced<f64>>,
    /// The model takes images: the images tool results carry (an MCP server's
    /// screenshot, say) are sent to it, not only described.
    pub images: Option<Sourced<bool>>,
    /// The wire API of this model, when not its provider's.
    pub api: Option<Sourced<Api>>,
    /// Responses: the `reasoning.effort` it is sent with (`minimal`, `low`, `medium`,
    /// `high`); none: no reasoning settings are sent.
    pub reasoning_effort: Option<Sourced<String>>,
    /// Anthropic: extended thinking with this budget of tokens; none: off.
    pub thinking_budget: Option<Sourced<u64>>,
    /// The most tokens a reply may have (what a request asks for is kept under it).
    pub max_output_tokens: Option<Sourced<u64>>,
}

impl ModelEntry {
    /// Its prices, where set.
    pub fn prices(&self) -> super::Prices {
        let value = |p: &Option<Sourced<f64>>| p.as_ref().map(|s| s.value);
        super::Prices {
            input: value(&self.input_price),
            cached_input: value(&self.cached_input_price),
            cache_write: value(&self.cache_write_price),
            output: value(&self.output_price),
        }
    }

    /// An entry for `name` that says nothing yet.
    fn named(name: &str) -> ModelEntry {
        ModelEntry {
            name: name.to_string(),
            context_window: None,
            input_price: None,
            cached_input_price: None,
            cache_write_price: None,
            output_price: None,
            images: None,
            api: None,
            reasoning_effort: None,
            thinking_budget: None,
            max_output_tokens: None,
        }
    }

    /// `other`'s values over this entry's, where it has them.
    fn lay(&mut self, other: ModelEntry) {
        self.context_window = other.context_window.or(self.context_window.take());
        self.input_price = other.input_price.or(self.input_price.take());
        self.cached_input_price = other.cached_input_price.or(self.cached_input_price.take());
        self.cache_write_price = other.cache_write_price.or(self.cache_write_price.take());
        self.output_price = other.output_price.or(self.output_price.take());
        self.images = other.images.or(self.images.take());
        self.api = other.api.or(self.api.take());
        self.reasoning_effort = other.reasoning_effort.or(self.reasoning_effort.take());
        self.thinking_budget = other.thinking_budget.or(self.thinking_budget.take());
        self.max_output_tokens = other.max_output_tokens.or(self.max_output_tokens.take());
    }
}

/// What one file says about one provider; `None` where it says nothing.
#[derive(Debug, Clone)]
pub(super) struct ProviderLayer {
    name: String,
    path: std::path::PathBuf,
    base_url: Option<Sourced<String>>,
    api_key_env: Option<Sourced<String>>,
    headers: Vec<Header>,
    models: Vec<ModelEntry>,
    api: Option<Sourced<Api>>,
    cache_ttl: Option<Sourced<String>>,
}

impl ProviderLayer {
    /// The provider it is about (an alias already made the preset's name).
    pub(super) fn name(&self) -> &str {
        &self.name
    }
}

const PROVIDER_KEYS: &str = "base_url, api_key_env, api, cache_ttl, headers, models";
const MODEL_KEYS: &str = "context_window, input_price, cached_input_price, cache_write_price, \
                          output_price, images, api, reasoning_effort, thinking_budget, \
                          max_output_tokens";
/// The reasoning efforts the Responses API takes.
const EFFORTS: [&str; 4] = ["minimal", "low", "medium", "high"];
/// The most thinking tokens accepted.
const MAX_THINKING_BUDGET: u64 = 1_000_000;
/// The highest price accepted, in dollars per million tokens: far above any model.
const MAX_PRICE: f64 = 100_000.0;

/// `api = "responses"`: one of the APIs rein speaks.
fn api_value(value: &toml::Value, key: &str, source: &Source) -> Result<Sourced<Api>, Problem> {
    let name = string(value).map_err(|p| (key.to_string(), p))?;
    let known: Vec<&str> = Api::ALL.iter().map(|a| a.name()).collect();
    Api::from_name(name.trim())
        .map(|api| Sourced::new(api, source.clone()))
        .ok_or_else(|| {
            (
                key.to_string(),
                format!("expected one of {}, got {name:?}", known.join(", ")),
            )
        })
}

/// The `providers` table of one file.
pub(super) fn read_table(
    value: &toml::Value,
    path: &Path,
    source: &Source,
) -> Result<Vec<ProviderLayer>, ConfigError> {
    let bad = in_file(path);
    let table = Table::of("providers", value, "a table [providers.NAME]").map_err(&bad)?;
    let mut layers = Vec::new();
    for (name, key, value) in table.entries() {
        if name.trim().is_empty() || name.contains('/') || name.contains(char::is_whitespace) {
            return Err(bad((
                key,
                "a provider name may not be empty or contain `/` or spaces (it is the first part \
                 of a model name, as in `NAME/model`)"
                    .to_string(),
            )));
        }
        let fields = Table::of(&key, value, "a table [providers.NAME]").map_err(&bad)?;
        let mut layer = ProviderLayer {
            name: canonical(name).to_string(),
            path: path.to_path_buf(),
            base_url: None,
            api_key_env: None,
            headers: Vec::new(),
            models: Vec::new(),
            api: None,
            cache_ttl: None,
        };
        for (entry, key, value) in fields.entries() {
            match entry.as_str() {
                "base_url" => {
                    let url = string(value).map_err(|p| bad((key.clone(), p)))?;
                    let url = url.trim().trim_end_matches('/').to_string();
                    if !(url.starts_with("http://") || url.starts_with("https://")) {
                        return Err(bad((
                            key,
                            format!("expected an http:// or https:// URL, got {url:?}"),
                        )));
                    }
                    layer.base_url = Some(Sourced::new(url, source.clone()));
                }
                "api_key_env" => {
                    let var = string(value).map_err(|p| bad((key.clone(), p)))?;
                    let var = var.trim().to_string();
                    if !var.is_empty() && !is_variable_name(&var) {
                        return Err(bad((
                            key,
                            format!(
                                "expected the name of an environment variable (letters, digits \
                                 and `_`), got {var:?}; the key itself belongs in that variable, \
                                 never in a file"
                            ),
                        )));
                    }
                    layer.api_key_env = Some(Sourced::new(var, source.clone()));
                }
                "api" => layer.api = Some(api_value(value, &key, source).map_err(&bad)?),
                "cache_ttl" => {
                    let ttl = string(value).map_err(|p| bad((key.clone(), p)))?;
                    if !matches!(ttl.trim(), "5m" | "1h") {
                        return Err(bad((
                            key,
                            format!("expected \"5m\" or \"1h\" (Anthropic's two), got {ttl:?}"),
                        )));
                    }
                    layer.cache_ttl = Some(Sourced::new(ttl.trim().to_string(), source.clone()));
                }
                "headers" => layer.headers = headers(value, &key, source).map_err(&bad)?,
                "models" => layer.models = models(value, &key, source).map_err(&bad)?,
                _ => {
                    return Err(ConfigError::UnknownKey {
                        path: path.to_path_buf(),
                        key,
                        known: format!(
                            "known keys in [providers.{}]: {PROVIDER_KEYS}",
                            key_part(name)
                        ),
                    })
                }
            }
        }
        layers.push(layer);
    }
    Ok(layers)
}

/// `headers = { "X-Title" = "rein" }`: names and values checked as HTTP allows.
fn headers(value: &toml::Value, key: &str, source: &Source) -> Result<Vec<Header>, Problem> {
    let table = Table::of(key, value, "a table of header names and string values")?;
    let mut out = Vec::new();
    for (name, key, value) in table.entries() {
        if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err((key, "not a valid HTTP header name".to_string()));
        }
        if name.eq_ignore_ascii_case("authorization") {
            return Err((
                key,
                "the key is sent from the variable `api_key_env` names; a file never holds it"
                    .to_string(),
            ));
        }
        let value = string(value).map_err(|p| (key.clone(), p))?;
        if reqwest::header::HeaderValue::from_str(&value).is_err() {
            return Err((
                key,
                "not a valid HTTP header value (printable ASCII, no line breaks)".to_string(),
            ));
        }
        out.push(Header {
            name: name.clone(),
            value: Sourced::new(value, source.clone()),
        });
    }
    Ok(out)
}

/// `models."anthropic/claude-sonnet-4.5" = { context_window = ..., ... }`.
fn models(value: &toml::Value, key: &str, source: &Source) -> Result<Vec<ModelEntry>, Problem> {
    let table = Table::of(key, value, "a table [providers.NAME.models.MODEL]")?;
    let mut out = Vec::new();
    for (name, key, value) in table.entries() {
        if name.trim().is_empty() {
            return Err((key, "the model name is empty".to_string()));
        }
        let fields = Table::of(&key, value, &format!("a table with {MODEL_KEYS}"))?;
        let mut entry = ModelEntry::named(name);
        for (field, key, value) in fields.entries() {
            let price = |value: &toml::Value| {
                let x = match value {
                    toml::Value::Float(x) => *x,
                    toml::Value::Integer(n) => *n as f64,
                    other => {
                        return Err((
                            key.clone(),
                            format!(
                            "expected a price in US dollars per million tokens (a number from 0 \
                                 to {MAX_PRICE}), got {}",
                            describe(other)
                        ),
                        ))
                    }
                };
                if x.is_finite() && (0.0..=MAX_PRICE).contains(&x) {
                    Ok(Some(Sourced::new(x, source.clone())))
                } else {
                    Err((
                        key.clone(),
                        format!(
                            "expected a price from 0 to {MAX_PRICE} US dollars per million \
                             tokens, got {x}"
                        ),
                    ))
                }
            };
            // A whole number from `lo` to `hi` (`why` said after the range).
            let int = |lo: u64, hi: u64, why: &str| {
                let n = match value {
                    toml::Value::Integer(n) => {
                        u64::try_from(*n).ok().filter(|n| (lo..=hi).contains(n))
                    }
                    _ => None,
                };
                n.map(|n| Sourced::new(n, source.clone())).ok_or_else(|| {
                    (
                        key.clone(),
                        format!(
                            "expected {}{why}, got {}",
                            expected_int(lo, hi),
                            describe(value)
                        ),
                    )
                })
            };
            match field.as_str() {
                "context_window" => {
                    entry.context_window = Some(int(1, MAX_CONTEXT_WINDOW, "")?);
                }
                "input_price" => entry.input_price = price(value)?,
                "cached_input_price" => entry.cached_input_price = price(value)?,
                "cache_write_price" => entry.cache_write_price = price(value)?,
                "api" => entry.api = Some(api_value(value, &key, source)?),
                "reasoning_effort" => {
                    let effort = string(value).map_err(|p| (key.clone(), p))?;
                    if !EFFORTS.contains(&effort.trim()) {
                        return Err((
                            key,
                            format!("expected one of {}, got {effort:?}", EFFORTS.join(", ")),
                        ));
                    }
                    entry.reasoning_effort =
                        Some(Sourced::new(effort.trim().to_string(), source.clone()));
                }
                "max_output_tokens" => {
                    entry.max_output_tokens = Some(int(1, MAX_CONTEXT_WINDOW, "")?);
                }
                "thinking_budget" => {
                    entry.thinking_budget = Some(int(
                        1_024,
                        MAX_THINKING_BUDGET,
                        " (Anthropic's least is 1024)",
                    )?);
                }
                "output_price" => entry.output_price = price(value)?,
                "images" => match value {
                    toml::Value::Boolean(b) => {
                        entry.images = Some(Sourced::new(*b, source.clone()));
                    }
                    other => {
                        return Err((
                            key,
                            format!("expected true or false, got {}", describe(other)),
                        ))
                    }
                },
                _ => return Err((key, format!("unknown key (a model has {MODEL_KEYS})"))),
            }
        }
        out.push(entry);
    }
    Ok(out)
}

/// The presets with each file's layers laid over them, lowest first (the user file's,
/// then the project file's). A provider no preset names needs a `base_url` somewhere.
pub(super) fn merge(layers: Vec<ProviderLayer>) -> Result<Vec<Provider>, ConfigError> {
    let mut providers = presets();
    for layer in layers {
        let at = match providers.iter().position(|p| p.name == layer.name) {
            Some(at) => at,
            None => {
                let Some(base_url) = layer.base_url.clone() else {
                    return Err(ConfigError::Value {
                        path: layer.path.clone(),
                        key: format!("providers.{}", key_part(&layer.name)),
                        problem: format!(
                            "`{}` is not a built-in provider, so it needs a base_url (built-in: {})",
                            layer.name,
                            preset_names()
                        ),
                    });
                };
                let source = base_url.source.clone();
                providers.push(Provider {
                    name: layer.name.clone(),
                    base_url,
                    api_key_env: Sourced::new(String::new(), source),
                    headers: Vec::new(),
                    models: Vec::new(),
                    builtin: false,
                    discovery: Discovery::Probe,
                    api: Sourced::new(Api::Chat, Source::Default),
                    cache_ttl: None,
                });
                providers.len() - 1
            }
        };
        let provider = &mut providers[at];
        if let Some(url) = layer.base_url {
            provider.base_url = url;
        }
        if let Some(var) = layer.api_key_env {
            provider.api_key_env = var;
        }
        if let Some(api) = layer.api {
            provider.api = api;
        }
        if let Some(ttl) = layer.cache_ttl {
            provider.cache_ttl = Some(ttl);
        }
        for header in layer.headers {
            provider
                .headers
                .retain(|h| !h.name.eq_ignore_ascii_case(&header.name));
            provider.headers.push(header);
        }
        for model in layer.models {
            match provider.models.iter_mut().find(|m| m.name == model.name) {
                Some(old) => old.lay(model),
                None => provider.models.push(model),
            }
        }
    }
    Ok(providers)
}
