//! The built-in providers: each preset's base URL, the variable holding its key, how its
//! server is asked for a window, its wire API, and the models rein knows the window and
//! prices of. [`presets`] turns them into [`Provider`]s for `merge` to lay the files over;
//! [`canonical`] makes an alias the preset's name.

use super::{Discovery, ModelEntry, Provider};
use crate::config::{Source, Sourced};
use crate::conversation::Api;

/// One built-in provider.
struct Preset {
    name: &'static str,
    /// Other names the prefix may use.
    aliases: &'static [&'static str],
    base_url: &'static str,
    /// `""`: a local server that needs no key.
    api_key_env: &'static str,
    discovery: Discovery,
    /// The wire API its models are spoken to in.
    api: Api,
    /// The models rein knows the window and prices of (a file's entry overrides them).
    models: &'static [PresetModel],
}

/// A model a preset knows: its window, its prices in US dollars per million tokens as the
/// provider published them, and how it reasons.
struct PresetModel {
    name: &'static str,
    window: u64,
    input: f64,
    cached_input: f64,
    /// Writing to the prompt cache (Anthropic bills it apart).
    cache_write: Option<f64>,
    output: f64,
    /// The most tokens a reply may have.
    max_output: u64,
    images: bool,
    /// A Responses model that reasons: the `reasoning.effort` it is sent with.
    reasoning_effort: Option<&'static str>,
}

/// OpenAI's models on the Responses API (the codex and pro models answer nowhere else).
const OPENAI_MODELS: &[PresetModel] = &[
    PresetModel {
        name: "gpt-5",
        window: 400_000,
        input: 1.25,
        cached_input: 0.125,
        cache_write: None,
        output: 10.0,
        max_output: 128_000,
        images: true,
        reasoning_effort: Some("medium"),
    },
    PresetModel {
        name: "gpt-5-codex",
        window: 400_000,
        input: 1.25,
        cached_input: 0.125,
        cache_write: None,
        output: 10.0,
        max_output: 128_000,
        images: true,
        reasoning_effort: Some("medium"),
    },
    PresetModel {
        name: "gpt-5-mini",
        window: 400_000,
        input: 0.25,
        cached_input: 0.025,
        cache_write: None,
        output: 2.0,
        max_output: 128_000,
        images: true,
        reasoning_effort: Some("medium"),
    },
    PresetModel {
        name: "gpt-5-nano",
        window: 400_000,
        input: 0.05,
        cached_input: 0.005,
        cache_write: None,
        output: 0.4,
        max_output: 128_000,
        images: true,
        reasoning_effort: Some("medium"),
    },
    PresetModel {
        name: "gpt-5-pro",
        window: 400_000,
        input: 15.0,
        cached_input: 15.0,
        cache_write: None,
        output: 120.0,
        max_output: 272_000,
        images: true,
        reasoning_effort: Some("high"),
    },
    PresetModel {
        name: "o3",
        window: 200_000,
        input: 2.0,
        cached_input: 0.5,
        cache_write: None,
        output: 8.0,
        max_output: 100_000,
        images: true,
        reasoning_effort: Some("medium"),
    },
    PresetModel {
        name: "o3-pro",
        window: 200_000,
        input: 20.0,
        cached_input: 20.0,
        cache_write: None,
        output: 80.0,
        max_output: 100_000,
        images: true,
        reasoning_effort: Some("medium"),
    },
    PresetModel {
        name: "o4-mini",
        window: 200_000,
        input: 1.1,
        cached_input: 0.275,
        cache_write: None,
        output: 4.4,
        max_output: 100_000,
        images: true,
        reasoning_effort: Some("medium"),
    },
    PresetModel {
        name: "o3-mini",
        window: 200_000,
        input: 1.1,
        cached_input: 0.55,
        cache_write: None,
        output: 4.4,
        max_output: 100_000,
        images: false,
        reasoning_effort: Some("medium"),
    },
    PresetModel {
        name: "o1",
        window: 200_000,
        input: 15.0,
        cached_input: 7.5,
        cache_write: None,
        output: 60.0,
        max_output: 100_000,
        images: true,
        reasoning_effort: Some("medium"),
    },
    PresetModel {
        name: "codex-mini-latest",
        window: 200_000,
        input: 1.5,
        cached_input: 0.375,
        cache_write: None,
        output: 6.0,
        max_output: 100_000,
        images: true,
        reasoning_effort: Some("medium"),
    },
    PresetModel {
        name: "gpt-4.1",
        window: 1_047_576,
        input: 2.0,
        cached_input: 0.5,
        cache_write: None,
        output: 8.0,
        max_output: 32_768,
        images: true,
        reasoning_effort: None,
    },
    PresetModel {
        name: "gpt-4o",
        window: 128_000,
        input: 2.5,
        cached_input: 1.25,
        cache_write: None,
        output: 10.0,
        max_output: 16_384,
        images: true,
        reasoning_effort: None,
    },
];

/// Anthropic's Claude models (cache writes at 1.25 times the input price, reads at a
/// tenth, for the default five-minute cache).
const ANTHROPIC_MODELS: &[PresetModel] = &[
    PresetModel {
        name: "claude-opus-4-5",
        window: 200_000,
        input: 5.0,
        cached_input: 0.5,
        cache_write: Some(6.25),
        output: 25.0,
        max_output: 64_000,
        images: true,
        reasoning_effort: None,
    },
    PresetModel {
        name: "claude-opus-4-1",
        window: 200_000,
        input: 15.0,
        cached_input: 1.5,
        cache_write: Some(18.75),
        output: 75.0,
        max_output: 32_000,
        images: true,
        reasoning_effort: None,
    },
    PresetModel {
        name: "claude-sonnet-4-5",
        window: 200_000,
        input: 3.0,
        cached_input: 0.3,
        cache_write: Some(3.75),
        output: 15.0,
        max_output: 64_000,
        images: true,
        reasoning_effort: None,
    },
    PresetModel {
        name: "claude-sonnet-4-0",
        window: 200_000,
        input: 3.0,
        cached_input: 0.3,
        cache_write: Some(3.75),
        output: 15.0,
        max_output: 64_000,
        images: true,
        reasoning_effort: None,
    },
    PresetModel {
        name: "claude-haiku-4-5",
        window: 200_000,
        input: 1.0,
        cached_input: 0.1,
        cache_write: Some(1.25),
        output: 5.0,
        max_output: 64_000,
        images: true,
        reasoning_effort: None,
    },
];

const PRESETS: &[Preset] = &[
    Preset {
        name: "openai",
        aliases: &[],
        base_url: "https://api.openai.com/v1",
        api_key_env: "OPENAI_API_KEY",
        discovery: Discovery::None,
        api: Api::Responses,
        models: OPENAI_MODELS,
    },
    Preset {
        name: "anthropic",
        aliases: &["claude"],
        base_url: "https://api.anthropic.com/v1",
        api_key_env: "ANTHROPIC_API_KEY",
        discovery: Discovery::None,
        api: Api::Anthropic,
        models: ANTHROPIC_MODELS,
    },
    Preset {
        name: "openrouter",
        aliases: &[],
        base_url: "https://openrouter.ai/api/v1",
        api_key_env: "OPENROUTER_API_KEY",
        discovery: Discovery::ModelList,
        api: Api::Chat,
        models: &[],
    },
    Preset {
        // DeepSeek documents https://api.deepseek.com (its /chat/completions is the
        // documented endpoint); https://api.deepseek.com/v1 works too.
        name: "deepseek",
        aliases: &[],
        base_url: "https://api.deepseek.com",
        api_key_env: "DEEPSEEK_API_KEY",
        discovery: Discovery::None,
        api: Api::Chat,
        models: &[],
    },
    Preset {
        name: "mistral",
        aliases: &[],
        base_url: "https://api.mistral.ai/v1",
        api_key_env: "MISTRAL_API_KEY",
        discovery: Discovery::ModelList,
        api: Api::Chat,
        models: &[],
    },
    Preset {
        name: "groq",
        aliases: &[],
        base_url: "https://api.groq.com/openai/v1",
        api_key_env: "GROQ_API_KEY",
        discovery: Discovery::ModelList,
        api: Api::Chat,
        models: &[],
    },
    Preset {
        name: "gemini",
        aliases: &[],
        base_url: "https://generativelanguage.googleapis.com/v1beta/openai",
        api_key_env: "GEMINI_API_KEY",
        discovery: Discovery::None,
        api: Api::Chat,
        models: &[],
    },
    Preset {
        name: "ollama",
        aliases: &[],
        base_url: "http://localhost:11434/v1",
        api_key_env: "",
        discovery: Discovery::Ollama,
        api: Api::Chat,
        models: &[],
    },
    Preset {
        name: "llamacpp",
        aliases: &["llama.cpp"],
        base_url: "http://localhost:8080/v1",
        api_key_env: "",
        discovery: Discovery::LlamaCpp,
        api: Api::Chat,
        models: &[],
    },
    Preset {
        name: "vllm",
        aliases: &[],
        base_url: "http://localhost:8000/v1",
        api_key_env: "",
        discovery: Discovery::ModelList,
        api: Api::Chat,
        models: &[],
    },
    Preset {
        name: "lmstudio",
        aliases: &[],
        base_url: "http://localhost:1234/v1",
        api_key_env: "",
        discovery: Discovery::LmStudio,
        api: Api::Chat,
        models: &[],
    },
];

/// The presets, in their fixed order.
pub(in crate::config) fn presets() -> Vec<Provider> {
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
            models: p
                .models
                .iter()
                .map(|m| {
                    let from = || Source::Preset(p.name.to_string());
                    ModelEntry {
                        context_window: Some(Sourced::new(m.window, from())),
                        input_price: Some(Sourced::new(m.input, from())),
                        cached_input_price: Some(Sourced::new(m.cached_input, from())),
                        cache_write_price: m.cache_write.map(|x| Sourced::new(x, from())),
                        output_price: Some(Sourced::new(m.output, from())),
                        images: Some(Sourced::new(m.images, from())),
                        max_output_tokens: Some(Sourced::new(m.max_output, from())),
                        reasoning_effort: m
                            .reasoning_effort
                            .map(|e| Sourced::new(e.to_string(), from())),
                        ..ModelEntry::named(m.name)
                    }
                })
                .collect(),
            builtin: true,
            discovery: p.discovery,
            api: Sourced::new(p.api, Source::Preset(p.name.to_string())),
            cache_ttl: None,
        })
        .collect()
}

/// The canonical name for `name`: a preset's alias is the preset (`llama.cpp` is
/// `llamacpp`); any other name is itself.
pub(in crate::config) fn canonical(name: &str) -> &str {
    PRESETS
        .iter()
        .find(|p| p.aliases.contains(&name))
        .map_or(name, |p| p.name)
}

/// The presets' names, for messages.
pub(in crate::config) fn preset_names() -> String {
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

    /// The o-series reason (`o4-mini` included), and a dated snapshot is its model; no
    /// other name is taken for one it merely starts like.
    #[test]
    fn reasoning_models_and_their_dated_snapshots() {
        let presets = presets();
        let openai = presets.iter().find(|p| p.name == "openai").unwrap();
        let effort = |name: &str| {
            openai
                .model(name)
                .and_then(|m| m.reasoning_effort.as_ref())
                .map(|e| e.value.clone())
        };
        for name in [
            "o4-mini",
            "o3",
            "o3-mini",
            "o1",
            "gpt-5",
            "o4-mini-2025-04-16",
            "gpt-5-2025-08-07",
        ] {
            assert_eq!(effort(name).as_deref(), Some("medium"), "{name}");
        }
        assert_eq!(openai.model("o4-mini-2025-04-16").unwrap().name, "o4-mini");
        assert_eq!(
            openai.model("gpt-5-mini-2025-08-07").unwrap().name,
            "gpt-5-mini"
        );
        for name in [
            "gpt-5-chat-latest",
            "my-deployment",
            "o4-mini-2025-4-16",
            "o4-mini-high",
            "gpt-4o-2024",
        ] {
            assert!(openai.model(name).is_none(), "{name}");
        }
        assert!(effort("gpt-4o-2024-08-06").is_none());
    }
}
