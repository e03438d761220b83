//! Providers: where a model lives. The built-in presets (a base URL and the name of the
//! variable holding the key) and the `[providers.NAME]` tables of the config files, which
//! add providers or override parts of one.
//!
//! In: each file's `providers` table, read by [`read_table`] into [`ProviderLayer`]s (every
//! error names the file and the `providers.NAME.key` at fault). Out: [`merge`] lays the
//! user file's layers and then the project file's over the presets, field by field, into
//! the list of [`Provider`]s a model name's prefix can pick from. Nothing here reads the
//! environment; the key variables are looked up by the caller.

use std::path::Path;

use super::table::{
    describe, expected_int, in_file, is_variable_name, key_part, string, Problem, Table,
};
use super::{ConfigError, Source, Sourced, MAX_CONTEXT_WINDOW};

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

/// One built-in provider.
struct Preset {
    name: &'static str,
    /// Other names the prefix may use.
    aliases: &'static [&'static str],
    base_url: &'static str,
    /// `""`: a local server that needs no key.
    api_key_env: &'static str,
    discovery: Discovery,
}

const PRESETS: &[Preset] = &[
    Preset {
        name: "openai",
        aliases: &[],
        base_url: "https://api.openai.com/v1",
        api_key_env: "OPENAI_API_KEY",
        discovery: Discovery::None,
    },
    Preset {
        name: "openrouter",
        aliases: &[],
        base_url: "https://openrouter.ai/api/v1",
        api_key_env: "OPENROUTER_API_KEY",
        discovery: Discovery::ModelList,
    },
    Preset {
        // DeepSeek documents https://api.deepseek.com (its /chat/completions is the
        // documented endpoint); https://api.deepseek.com/v1 works too.
        name: "deepseek",
        aliases: &[],
        base_url: "https://api.deepseek.com",
        api_key_env: "DEEPSEEK_API_KEY",
        discovery: Discovery::None,
    },
    Preset {
        name: "mistral",
        aliases: &[],
        base_url: "https://api.mistral.ai/v1",
        api_key_env: "MISTRAL_API_KEY",
        discovery: Discovery::ModelList,
    },
    Preset {
        name: "groq",
        aliases: &[],
        base_url: "https://api.groq.com/openai/v1",
        api_key_env: "GROQ_API_KEY",
        discovery: Discovery::ModelList,
    },
    Preset {
        name: "gemini",
        aliases: &[],
        base_url: "https://generativelanguage.googleapis.com/v1beta/openai",
        api_key_env: "GEMINI_API_KEY",
        discovery: Discovery::None,
    },
    Preset {
        name: "ollama",
        aliases: &[],
        base_url: "http://localhost:11434/v1",
        api_key_env: "",
        discovery: Discovery::Ollama,
    },
    Preset {
        name: "llamacpp",
        aliases: &["llama.cpp"],
        base_url: "http://localhost:8080/v1",
        api_key_env: "",
        discovery: Discovery::LlamaCpp,
    },
    Preset {
        name: "vllm",
        aliases: &[],
        base_url: "http://localhost:8000/v1",
        api_key_env: "",
        discovery: Discovery::ModelList,
    },
    Preset {
        name: "lmstudio",
        aliases: &[],
        base_url: "http://localhost:1234/v1",
        api_key_env: "",
        discovery: Discovery::LmStudio,
    },
];

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
    /// US dollars per million output tokens.
    pub output_price: Option<Sourced<f64>>,
    /// The model takes images: the images tool results carry (an MCP server's
    /// screenshot, say) are sent to it, not only described.
    pub images: Option<Sourced<bool>>,
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
}

const PROVIDER_KEYS: &str = "base_url, api_key_env, headers, models";
const MODEL_KEYS: &str = "context_window, input_price, cached_input_price, output_price, images";
/// The highest price accepted, in dollars per million tokens: far above any model.
const MAX_PRICE: f64 = 100_000.0;

/// The presets, in their fixed order.
pub(super) fn presets() -> Vec<Provider> {
    PRESETS
        .iter()
        .map(|p| Provider {
            name: p.name.to_string(),
            base_url: Sourced::new(p.base_url.to_string(), Source::Preset(p.name.to_string())),
            api_key_env: Sourced::new(
                p.api_key_env.to_string(),
                Source::Preset(p.name.to_string()),
            ),
            headers: Vec::new(),
            models: Vec::new(),
            builtin: true,
            discovery: p.discovery,
        })
        .collect()
}

/// The canonical name for `name`: a preset's alias is the preset (`llama.cpp` is
/// `llamacpp`); any other name is itself.
pub(super) fn canonical(name: &str) -> &str {
    PRESETS
        .iter()
        .find(|p| p.aliases.contains(&name))
        .map_or(name, |p| p.name)
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
        let mut entry = ModelEntry {
            name: name.clone(),
            context_window: None,
            input_price: None,
            cached_input_price: None,
            output_price: None,
            images: None,
        };
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
            match field.as_str() {
                "context_window" => {
                    let n = match value {
                        toml::Value::Integer(n) => u64::try_from(*n)
                            .ok()
                            .filter(|n| (1..=MAX_CONTEXT_WINDOW).contains(n)),
                        _ => None,
                    };
                    let Some(n) = n else {
                        return Err((
                            key,
                            format!(
                                "expected {}, got {}",
                                expected_int(1, MAX_CONTEXT_WINDOW),
                                describe(value)
                            ),
                        ));
                    };
                    entry.context_window = Some(Sourced::new(n, source.clone()));
                }
                "input_price" => entry.input_price = price(value)?,
                "cached_input_price" => entry.cached_input_price = price(value)?,
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
        for header in layer.headers {
            provider
                .headers
                .retain(|h| !h.name.eq_ignore_ascii_case(&header.name));
            provider.headers.push(header);
        }
        for model in layer.models {
            match provider.models.iter_mut().find(|m| m.name == model.name) {
                Some(old) => {
                    old.context_window = model.context_window.or(old.context_window.take());
                    old.input_price = model.input_price.or(old.input_price.take());
                    old.cached_input_price =
                        model.cached_input_price.or(old.cached_input_price.take());
                    old.output_price = model.output_price.or(old.output_price.take());
                    old.images = model.images.or(old.images.take());
                }
                None => provider.models.push(model),
            }
        }
    }
    Ok(providers)
}

/// The presets' names, for messages.
pub(super) fn preset_names() -> String {
    PRESETS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_name_their_preset() {
        assert_eq!(canonical("llama.cpp"), "llamacpp");
        assert_eq!(canonical("llamacpp"), "llamacpp");
        assert_eq!(canonical("mine"), "mine");
    }
}
