//! From a model name to everything needed to talk to that model: a [`ModelTarget`].
//!
//! In: the name (`openrouter/anthropic/claude-sonnet-4.5`) with its source, the explicit
//! `base_url`, API keys and context window of the stacked layers, and the providers. Out:
//! the provider in effect (if any), the model id sent to the server, the base URL, the key,
//! the extra headers, the context window and the prices, each with where it came from.
//!
//! The rules (docs/providers.md and `config.example.toml` say the same):
//! - **Provider.** A name `P/REST` picks provider `P` (a preset or a `[providers.P]`) and
//!   sends `REST` as the model id, unless a `base_url` is set at the same level as the
//!   name or above (then the whole name is the id, sent to that `base_url`: Groq's
//!   `openai/gpt-oss-120b`). Otherwise the provider is the one whose `base_url` is the
//!   `base_url` in effect, if any (configured providers before presets).
//! - **Key.** The first of `--api-key`, `REIN_API_KEY`, `OPENAI_API_KEY`, `api_key` in the
//!   project file, the user file, `API_KEY` in `~/.agents/env` is used when it is set at the
//!   same level as what picked the provider (the name, or the `base_url`) or above;
//!   otherwise the provider's own variable (`OPENROUTER_API_KEY`, ...) when it is set,
//!   and failing that the first key of the list after all. `OPENAI_API_KEY` is on the
//!   list only for the `openai` provider, an endpoint that is no provider, or a
//!   `base_url` from `OPENAI_BASE_URL`: it is never sent to another provider.
//! - **Context window.** `--context-window` or `REIN_CONTEXT_WINDOW`, else the model's
//!   `[providers.P.models.M] context_window`, else what the server reports (asked at
//!   startup, see `discover`), else the `context_window` of the files, `~/.agents/env` or
//!   the default.

use std::collections::HashMap;

use super::providers::{canonical, Discovery, Provider};
use super::{precedence, Config, ConfigError, Source, Sourced, DEFAULT_BASE_URL};
use crate::conversation::Api;

/// Everything needed to talk to one model; what a `/model NAME` switch would use.
#[derive(Clone)]
pub struct ModelTarget {
    /// The name as given, provider prefix included: `openrouter/anthropic/claude-sonnet-4.5`.
    pub name: String,
    /// The provider in effect; empty when the endpoint is none of them.
    pub provider: Sourced<String>,
    /// The model id sent to the server: `anthropic/claude-sonnet-4.5`.
    pub model: Sourced<String>,
    /// Without a trailing `/`.
    pub base_url: Sourced<String>,
    /// Empty when there is none.
    pub api_key: Sourced<String>,
    /// Extra HTTP headers for every request.
    pub headers: Vec<(String, String)>,
    pub context_window: Sourced<u64>,
    pub prices: Prices,
    /// The model takes images (its entry's `images`; false unless configured).
    pub images: bool,
    /// How the server would be asked for the context window; [`Discovery::None`] when the
    /// window is configured (flag, variable or the model's entry) or the server cannot say.
    pub discovery: Discovery,
    /// The wire API the model is spoken to in: its entry's `api`, else its provider's,
    /// else chat completions.
    pub api: Sourced<Api>,
    /// Responses: the `reasoning.effort` its entry (or preset) gives.
    pub reasoning_effort: Option<String>,
    /// Anthropic: the thinking budget its entry gives.
    pub thinking_budget: Option<u64>,
    /// Anthropic: the provider's `cache_ttl`.
    pub cache_ttl: Option<String>,
    /// The most tokens a reply may have (its entry's `max_output_tokens`).
    pub output_limit: Option<u64>,
    /// Where the rest of the route came from, for [`check_route`](Self::check_route).
    pub origins: Origins,
}

/// Where a target's route came from besides its URL's and key's own sources.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Origins {
    /// The provider's `api_key_env`, with the file that named it, when the key was read from
    /// that variable.
    pub key_var: Option<Sourced<String>>,
    /// Where each of the provider's headers came from.
    pub headers: Vec<Source>,
    /// The user allowed the project file's routing settings as they are (`rein config
    /// allow`, see `routing.rs`).
    pub project_allowed: bool,
}

/// A model's prices in US dollars per million tokens, where configured.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Prices {
    pub input: Option<f64>,
    pub cached_input: Option<f64>,
    /// Writing to the prompt cache (Anthropic's cache writes).
    pub cache_write: Option<f64>,
    pub output: Option<f64>,
}

impl Prices {
    pub fn is_empty(&self) -> bool {
        self.input.is_none() && self.cached_input.is_none() && self.output.is_none()
    }
}

impl std::fmt::Display for Prices {
    /// `$3 in, $0.3 cached, $15 out per M tokens`; `-` for a price not set.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let price = |p: Option<f64>| p.map_or("-".to_string(), |p| format!("${p}"));
        let write = self
            .cache_write
            .map_or(String::new(), |w| format!(", ${w} cache write"));
        write!(
            f,
            "{} in, {} cached{write}, {} out per M tokens",
            price(self.input),
            price(self.cached_input),
            price(self.output)
        )
    }
}

impl ModelTarget {
    /// Whether rein may send anything to this target: refused when its URL, its key, the
    /// variable its key was read from or one of its headers came from a project file whose
    /// routing settings the user has not allowed (`rein config allow`). The project's
    /// values are held until then (`routing.rs`), so this refuses only what a path around
    /// the hold would let through; above all the user's key never goes to a URL a project
    /// wrote. The error says which value, from which file, and how to allow it.
    pub fn check_route(&self) -> Result<(), ConfigError> {
        if self.origins.project_allowed {
            return Ok(());
        }
        let allow = "check it and run `rein config allow` in the project to follow it";
        let refused = |problem: String| Err(ConfigError::Route(problem));
        if let Source::ProjectFile(path) = &self.base_url.source {
            return refused(format!(
                "base_url {:?} comes from the project file {}, which you have not allowed: rein                  sends nothing there, neither your key ({}) nor the conversation; {allow}",
                self.base_url.value,
                path.display(),
                self.api_key.source
            ));
        }
        if let Some(var) = &self.origins.key_var {
            if let Source::ProjectFile(path) = &var.source {
                return refused(format!(
                    "the project file {} names the variable {} as the API key of provider {},                      which you have not allowed: rein neither reads nor sends it; {allow}",
                    path.display(),
                    var.value,
                    self.provider.value
                ));
            }
        }
        if let Source::ProjectFile(path) = &self.api_key.source {
            return refused(format!(
                "the API key comes from the project file {}, which you have not allowed: the                  conversation would be sent in the name of whoever wrote it; {allow}",
                path.display()
            ));
        }
        if let Some(Source::ProjectFile(path)) = self
            .origins
            .headers
            .iter()
            .find(|s| matches!(s, Source::ProjectFile(_)))
        {
            return refused(format!(
                "a header of provider {} comes from the project file {}, which you have not                  allowed; {allow}",
                self.provider.value,
                path.display()
            ));
        }
        Ok(())
    }

    /// How this model is spoken to.
    pub fn api_settings(&self) -> crate::conversation::ApiSettings {
        crate::conversation::ApiSettings {
            api: self.api.value,
            reasoning_effort: self.reasoning_effort.clone(),
            thinking_budget: self.thinking_budget,
            cache_ttl: self.cache_ttl.clone(),
            output_limit: self.output_limit,
        }
    }
}

impl std::fmt::Debug for ModelTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelTarget")
            .field("name", &self.name)
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &super::mask_secret(&self.api_key.value))
            .field("headers", &self.headers)
            .field("context_window", &self.context_window)
            .field("prices", &self.prices)
            .field("discovery", &self.discovery)
            .field("api", &self.api)
            .finish()
    }
}

/// The model a resumed session runs on ([`Config::model_for_resume`]).
#[derive(Debug, Default)]
pub struct ResumeModel {
    /// The model to switch the settings to; `None` to stay on the model in effect.
    pub target: Option<ModelTarget>,
    /// What was decided and why, one sentence each.
    pub notices: Vec<String>,
}

/// What the stacked layers say that a model's resolution needs, kept so that another
/// model can be resolved later with the same settings.
#[derive(Debug, Clone)]
pub(super) struct Inputs {
    /// The `base_url` that wins the layers, if any layer set one.
    pub base_url: Option<Sourced<String>>,
    /// Explicit keys, highest precedence first; `OPENAI_API_KEY` among them at its place.
    pub keys: Vec<Sourced<String>>,
    /// `--context-window` or `REIN_CONTEXT_WINDOW`.
    pub window: Option<Sourced<u64>>,
    /// The `context_window` of the files, `~/.agents/env`, or the default.
    pub fallback_window: Sourced<u64>,
    /// The providers' key variables that are set, by name.
    pub key_vars: HashMap<String, String>,
    /// The user allowed the project file's routing settings (`routing.rs`).
    pub project_allowed: bool,
}

const OPENAI_KEY: &str = "OPENAI_API_KEY";

/// Resolve `name` (trimmed) against the inputs and providers.
pub(super) fn resolve(
    name: &Sourced<String>,
    inputs: &Inputs,
    providers: &[Provider],
    default_base_url: &str,
) -> Result<ModelTarget, ConfigError> {
    let full = name.value.trim();
    let by_prefix = full.split_once('/').and_then(|(prefix, rest)| {
        let provider = providers.iter().find(|p| p.name == canonical(prefix))?;
        let blocked = inputs
            .base_url
            .as_ref()
            .is_some_and(|b| precedence(&b.source) >= precedence(&name.source));
        (!blocked).then_some((provider, rest.trim()))
    });

    let (provider, model, base_url, selector) = match by_prefix {
        Some((provider, "")) => {
            return Err(ConfigError::Conflict {
                origin: name.source.to_string(),
                problem: format!(
                    "model `{full}` names the provider `{}` but no model after the `/`",
                    provider.name
                ),
            })
        }
        Some((provider, rest)) => (
            Some(provider),
            rest.to_string(),
            provider.base_url.clone(),
            name.source.clone(),
        ),
        None => {
            let base_url = inputs
                .base_url
                .clone()
                .unwrap_or_else(|| Sourced::new(default_base_url.to_string(), Source::Default));
            let provider = providers
                .iter()
                .filter(|p| !p.builtin)
                .chain(providers.iter().filter(|p| p.builtin))
                .find(|p| p.base_url.value == base_url.value);
            let selector = base_url.source.clone();
            (provider, full.to_string(), base_url, selector)
        }
    };

    let api_key = key_for(provider, &base_url, &selector, inputs);
    let origins = Origins {
        key_var: provider
            .filter(|p| {
                !p.api_key_env.value.is_empty()
                    && api_key.source == Source::Env(p.api_key_env.value.clone())
            })
            .map(|p| p.api_key_env.clone()),
        headers: provider.map_or_else(Vec::new, |p| {
            p.headers.iter().map(|h| h.value.source.clone()).collect()
        }),
        project_allowed: inputs.project_allowed,
    };
    let entry = provider.and_then(|p| p.model(&model));
    let (context_window, discovery) =
        match (&inputs.window, entry.and_then(|e| e.context_window.clone())) {
            (Some(explicit), _) => (explicit.clone(), Discovery::None),
            (None, Some(configured)) => (configured, Discovery::None),
            (None, None) => (
                inputs.fallback_window.clone(),
                provider.map_or(Discovery::Probe, |p| p.discovery),
            ),
        };
    let prices = entry.map_or_else(Prices::default, |e| e.prices());
    let api = entry
        .and_then(|e| e.api.clone())
        .or_else(|| provider.map(|p| p.api.clone()))
        .unwrap_or_else(|| Sourced::new(Api::Chat, Source::Default));
    Ok(ModelTarget {
        name: full.to_string(),
        provider: Sourced::new(
            provider.map_or_else(String::new, |p| p.name.clone()),
            selector,
        ),
        model: Sourced::new(model, name.source.clone()),
        base_url,
        api_key,
        headers: provider.map_or_else(Vec::new, |p| {
            p.headers
                .iter()
                .map(|h| (h.name.clone(), h.value.value.clone()))
                .collect()
        }),
        context_window,
        prices,
        images: entry
            .and_then(|e| e.images.as_ref())
            .is_some_and(|i| i.value),
        discovery: if full.is_empty() {
            Discovery::None
        } else {
            discovery
        },
        api,
        reasoning_effort: entry
            .and_then(|e| e.reasoning_effort.as_ref())
            .map(|e| e.value.clone()),
        thinking_budget: entry
            .and_then(|e| e.thinking_budget.as_ref())
            .map(|b| b.value),
        cache_ttl: provider
            .and_then(|p| p.cache_ttl.as_ref())
            .map(|t| t.value.clone()),
        output_limit: entry
            .and_then(|e| e.max_output_tokens.as_ref())
            .map(|m| m.value),
        origins,
    })
}

/// The key for `provider` at `base_url`, picked by what `selector` is (see the module's
/// rules).
fn key_for(
    provider: Option<&Provider>,
    base_url: &Sourced<String>,
    selector: &Source,
    inputs: &Inputs,
) -> Sourced<String> {
    let openai_ok = provider.is_none_or(|p| p.api_key_env.value == OPENAI_KEY)
        || base_url.source == Source::Env("OPENAI_BASE_URL".to_string());
    let mut explicit = inputs
        .keys
        .iter()
        .filter(|k| openai_ok || k.source != Source::Env(OPENAI_KEY.to_string()));
    let first = explicit.next();
    let Some(provider) = provider else {
        return first.cloned().unwrap_or_else(none);
    };
    if let Some(key) = first.filter(|k| precedence(&k.source) >= precedence(selector)) {
        return key.clone();
    }
    let var = &provider.api_key_env.value;
    if let Some(value) = inputs.key_vars.get(var).filter(|_| !var.is_empty()) {
        return Sourced::new(value.clone(), Source::Env(var.clone()));
    }
    first.cloned().unwrap_or_else(none)
}

fn none() -> Sourced<String> {
    Sourced::new(String::new(), Source::Default)
}

impl Config {
    /// What talking to model `name` would take with these settings, as if `name` were
    /// given with `--model` (a `/model NAME` switch): its provider, id, base URL, key,
    /// headers, context window and prices. Errors like the loader's, and a target whose
    /// route a project wrote without the user's allow is refused
    /// ([`ModelTarget::check_route`]).
    pub fn resolve_model(&self, name: &str) -> Result<ModelTarget, ConfigError> {
        let name = Sourced::new(name.to_string(), Source::Flag("--model".to_string()));
        let target = resolve(&name, &self.inputs, &self.providers, DEFAULT_BASE_URL)?;
        target.check_route()?;
        Ok(target)
    }

    /// How long the question about the model's window may take
    /// (`client.window_timeout_secs`).
    pub fn window_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.window_timeout_secs.value)
    }

    /// The model in effect, as [`resolve_model`](Self::resolve_model) returns one.
    pub fn target(&self) -> ModelTarget {
        ModelTarget {
            name: self.model_name.clone(),
            provider: self.provider.clone(),
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            api_key: self.api_key.clone(),
            headers: self.headers.clone(),
            context_window: self.context_window.clone(),
            prices: self.prices,
            images: self.images,
            discovery: self.discovery,
            api: self.api.clone(),
            reasoning_effort: self.reasoning_effort.clone(),
            thinking_budget: self.thinking_budget,
            cache_ttl: self.cache_ttl.clone(),
            output_limit: self.output_limit,
            origins: self.origins.clone(),
        }
    }

    /// How the model in effect is spoken to.
    pub fn api_settings(&self) -> crate::conversation::ApiSettings {
        self.target().api_settings()
    }

    /// Make `target` the model in effect (after a `/model` switch).
    pub fn set_target(&mut self, target: ModelTarget) {
        self.model_name = target.name;
        self.provider = target.provider;
        self.model = target.model;
        self.base_url = target.base_url;
        self.api_key = target.api_key;
        self.headers = target.headers;
        self.context_window = target.context_window;
        self.prices = target.prices;
        self.images = target.images;
        self.discovery = target.discovery;
        self.api = target.api;
        self.reasoning_effort = target.reasoning_effort;
        self.thinking_budget = target.thinking_budget;
        self.cache_ttl = target.cache_ttl;
        self.output_limit = target.output_limit;
        self.origins = target.origins;
    }

    /// Which model a resumed session goes on with: the one it last ran on (`recorded`,
    /// its name and base URL from the session file), unless the user named one with
    /// `--model` on this command line (`model_flag`), or the name no longer resolves, or
    /// it now resolves to another endpoint than the one the session ran at (the
    /// conversation is not sent somewhere it never went); then the model in effect. `Some`
    /// target when that means a switch from the model in effect; the notices say what was
    /// decided and why (and warn about the target as
    /// [`model_warnings`](Self::model_warnings) does).
    pub fn model_for_resume(
        &self,
        recorded: Option<(&str, &str)>,
        model_flag: bool,
    ) -> ResumeModel {
        let Some((name, base_url)) = recorded
            .map(|(n, b)| (n.trim(), b.trim().trim_end_matches('/')))
            .filter(|&(n, _)| !n.is_empty() && n != self.model_name)
        else {
            return ResumeModel::default();
        };
        let current = if self.model_name.trim().is_empty() {
            "no model (none is configured)".to_string()
        } else {
            self.model_name.clone()
        };
        let fallback = |why: String| ResumeModel {
            target: None,
            notices: vec![format!(
                "this session last ran on {name}; {why}; using {current}"
            )],
        };
        if model_flag {
            return fallback("--model names another".to_string());
        }
        match self.resolve_model(name) {
            Ok(target) if target.base_url.value != base_url => fallback(format!(
                "that name now leads to {} instead of {base_url}",
                target.base_url.value
            )),
            Ok(target) => {
                let mut notices = vec![format!(
                    "continuing on {name}, the model this session last ran on"
                )];
                notices.extend(self.model_warnings(&target));
                ResumeModel {
                    target: Some(target),
                    notices,
                }
            }
            Err(e) => fallback(format!("the name does not resolve any more ({e})")),
        }
    }

    /// The context window the server reported at `url`; it wins over the
    /// `context_window` setting, never over a flag, variable or model entry (those leave
    /// [`discovery`](Self::discovery) at `None`, and nothing is asked).
    pub fn set_discovered_window(&mut self, tokens: u64, url: String) {
        if self.discovery != Discovery::None && tokens > 0 {
            self.context_window = Sourced::new(tokens, Source::Server(url));
            self.discovery = Discovery::None;
        }
    }

    /// Every configured model as a name `--model` takes (`provider/model`), in the
    /// providers' order.
    pub fn model_names(&self) -> Vec<String> {
        self.providers
            .iter()
            .flat_map(|p| {
                p.models
                    .iter()
                    .map(move |m| format!("{}/{}", p.name, m.name))
            })
            .collect()
    }

    /// What to know before talking to `target`: that rein will not (a route a project wrote
    /// that the user has not allowed, [`ModelTarget::check_route`]); a provider whose key
    /// variable is not set.
    pub fn model_warnings(&self, target: &ModelTarget) -> Vec<String> {
        let mut warnings = Vec::new();
        let key = &target.api_key;
        if let Err(refused) = target.check_route() {
            warnings.push(refused.to_string());
        }
        let provider = self
            .providers
            .iter()
            .find(|p| p.name == target.provider.value);
        if let Some(provider) = provider {
            let var = &provider.api_key_env;
            if key.value.is_empty() && !var.value.is_empty() && !target.model.value.is_empty() {
                warnings.push(format!(
                    "provider {} needs an API key and none is set: set {} (or REIN_API_KEY)",
                    provider.name, var.value
                ));
            }
        }
        warnings
    }
}
