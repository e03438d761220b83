//! The models `/model` offers (the configured ones, and what the model's server lists),
//! a name resolved for a switch (asking the server for its window off the loop), and the
//! settings kept up to date once the agent runs on another model or learns its window.

use super::Loop;
use crate::app::event::{ModelResolved, ResolvedModel};
use crate::app::model_picker::{ModelChoice, ModelList, ServerModels};
use crate::app::AppEvent;
use rein_core::agent::ModelSwitch;
use rein_core::config::{discover, Config, Discovery, ModelTarget, Source};

/// The models `/model` offers: the one in use with the window in effect, then every
/// `[providers.NAME.models.MODEL]` entry with its configured window (or the
/// `--context-window` that applies to all) and prices.
pub(super) fn list_models(config: &Config) -> ModelList {
    let explicit_window = matches!(
        config.context_window.source,
        Source::Flag(_) | Source::Env(_)
    )
    .then_some(config.context_window.value);
    let models = config
        .providers
        .iter()
        .flat_map(|p| p.models.iter().map(move |m| (p, m)))
        .map(|(p, m)| ModelChoice {
            name: format!("{}/{}", p.name, m.name),
            window: explicit_window.or(m.context_window.as_ref().map(|w| w.value)),
            prices: usage_prices(&m.prices()),
        })
        .collect();
    // A model with a server to ask: one whose base URL is there (the demo's is not).
    let server_url = (!config.model.value.is_empty() && !config.base_url.value.is_empty())
        .then(|| rein_core::config::server_models::models_url(&config.target()));
    ModelList {
        current: ModelChoice {
            name: config.model_name.clone(),
            window: Some(config.context_window.value),
            prices: usage_prices(&config.prices),
        },
        models,
        server_url,
    }
}

/// What `target`'s server lists, named as `--model` takes them: with the provider's prefix
/// when the model in use was named with it (`openrouter/…`), else as the server says (a
/// name without a prefix goes to the same `base_url`).
pub(super) async fn server_models(target: &rein_core::config::ModelTarget) -> ServerModels {
    let url = rein_core::config::server_models::models_url(target);
    let prefix = Some(target.provider.value.as_str())
        .filter(|p| !p.is_empty() && target.name.starts_with(&format!("{p}/")))
        .map(|p| format!("{p}/"))
        .unwrap_or_default();
    let result = rein_core::config::server_models::list(target)
        .await
        .map(|models| {
            models
                .into_iter()
                .map(|m| ModelChoice {
                    name: format!("{prefix}{}", m.id),
                    window: m.window,
                    prices: None,
                })
                .collect()
        });
    ServerModels { url, result }
}

/// Resolve `name` for a switch. The answer comes back at once, unless the server must be
/// asked for the window: then a task asks it (within `client.window_timeout_secs`) and the answer
/// arrives on the background channel.
pub(super) fn resolve_model(name: String, ctx: &mut Loop<'_>) -> Option<AppEvent> {
    let answer =
        |name: String, result| AppEvent::ModelResolved(Box::new(ModelResolved { name, result }));
    let Some(config) = ctx.config.as_deref() else {
        return Some(answer(
            name,
            Err("this dashboard runs on its one model only".to_string()),
        ));
    };
    let target = match config.resolve_model(&name) {
        Ok(target) => target,
        Err(e) => {
            let message = format!(
                "cannot switch to {name}: {e}; still using {}",
                config.model_name
            );
            return Some(answer(name, Err(message)));
        }
    };
    let warnings = config.model_warnings(&target);
    if target.discovery == Discovery::None {
        return Some(answer(name, Ok(ready(target, None, warnings))));
    }
    let background = ctx.background.clone();
    let limit = config.window_timeout();
    tokio::spawn(async move {
        let found = discover::context_window_within(&target, limit)
            .await
            .map(|d| d.tokens);
        let _ = background.send(answer(name, Ok(ready(target, found, warnings))));
    });
    None
}

/// What the agent needs to switch to `target`; `window` is what its server reported.
fn ready(target: ModelTarget, window: Option<u64>, warnings: Vec<String>) -> ResolvedModel {
    ResolvedModel {
        switch: ModelSwitch {
            window_known: window.is_some_and(|w| w > 0) || target.context_window.is_known(),
            window: window
                .filter(|&w| w > 0)
                .unwrap_or(target.context_window.value),
            prices: usage_prices(&target.prices),
            images: target.images,
            api: target.api_settings(),
            name: target.name,
            model: target.model.value,
            base_url: target.base_url.value,
            api_key: target.api_key.value,
            headers: target.headers,
        },
        warnings,
    }
}

/// The agent runs on `name` now: so do the settings a resumed session starts from and
/// the next `/model` list.
pub(super) fn model_switched(name: &str, window: u64, ctx: &mut Loop<'_>) {
    let Some(config) = ctx.config.as_deref_mut() else {
        return;
    };
    let Ok(mut target) = config.resolve_model(name) else {
        return;
    };
    target.context_window.value = window;
    target.discovery = Discovery::None;
    config.set_target(target);
    if let Some(sessions) = ctx.sessions.as_deref_mut() {
        let agent = &mut sessions.agent_config;
        agent.client.base_url = config.base_url.value.clone();
        agent.client.api_key = config.api_key.value.clone();
        agent.client.model = config.model.value.clone();
        agent.client.name = config.model_name.clone();
        agent.client.extra_headers = config.headers.clone();
        agent.context.window = window;
        // The switch brought its window: the question about the first model is moot.
        sessions.window = None;
    }
}

/// The server answered the question about the window (or did not in time): the settings
/// `/model` lists and an agent started later on a resumed session run on `window`.
pub(super) fn window_learnt(window: u64, url: Option<&str>, ctx: &mut Loop<'_>) {
    if let (Some(config), Some(url)) = (ctx.config.as_deref_mut(), url) {
        config.set_discovered_window(window, url.to_string());
    }
    if let Some(sessions) = ctx.sessions.as_deref_mut() {
        sessions.agent_config.context.window = window;
        sessions.window = None;
    }
}

/// A model's prices for the cost shown in `/cost`, `/context`, the model picker and the
/// headless summary: `None` unless both the input and the output price are configured.
pub fn usage_prices(prices: &rein_core::config::Prices) -> Option<rein_core::agent::Prices> {
    Some(rein_core::agent::Prices {
        input: prices.input?,
        cached_input: prices.cached_input,
        cache_write: prices.cache_write,
        output: prices.output?,
    })
}
