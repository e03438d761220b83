//! How a model names its provider, endpoint and key: preset prefixes, explicit keys, a key
//! in a file, the API each speaks, configured providers, a model switch, the window's
//! precedence, bad tables, and `describe`.

use rein_core::config::{Discovery, Overrides, Source};

use super::{env, flag, model, Fixture};

// ---- the prefix picks a provider ----

#[test]
fn a_preset_prefix_needs_only_the_key_in_the_environment() {
    let mut f = Fixture::new();
    f.set("OPENROUTER_API_KEY", "sk-or-1234567890abcdef");
    let c = f.load(&model("openrouter/anthropic/claude-sonnet-4.5"));
    assert_eq!(c.provider.value, "openrouter");
    assert_eq!(c.provider.source, flag("--model"));
    assert_eq!(c.model.value, "anthropic/claude-sonnet-4.5");
    assert_eq!(c.model_name, "openrouter/anthropic/claude-sonnet-4.5");
    assert_eq!(c.base_url.value, "https://openrouter.ai/api/v1");
    assert_eq!(c.base_url.source, Source::Preset("openrouter".into()));
    assert_eq!(c.api_key.value, "sk-or-1234567890abcdef");
    assert_eq!(c.api_key.source, env("OPENROUTER_API_KEY"));
    assert_eq!(c.discovery, Discovery::ModelList);
    assert!(c.warnings(true).is_empty(), "{:?}", c.warnings(true));

    let c = f.load(&model("ollama/qwen3-coder"));
    assert_eq!(c.provider.value, "ollama");
    assert_eq!(c.model.value, "qwen3-coder");
    assert_eq!(c.base_url.value, "http://localhost:11434/v1");
    assert_eq!(c.api_key.value, "", "a local server gets no key");
    assert!(c.warnings(true).is_empty(), "{:?}", c.warnings(true));

    // The alias names the same preset.
    let c = f.load(&model("llama.cpp/smollm2"));
    assert_eq!(c.provider.value, "llamacpp");
    assert_eq!(c.base_url.value, "http://localhost:8080/v1");
    assert_eq!(c.discovery, Discovery::LlamaCpp);

    // Every preset of the issue is there.
    for (name, url) in [
        ("openai", "https://api.openai.com/v1"),
        ("deepseek", "https://api.deepseek.com"),
        ("mistral", "https://api.mistral.ai/v1"),
        ("groq", "https://api.groq.com/openai/v1"),
        (
            "gemini",
            "https://generativelanguage.googleapis.com/v1beta/openai",
        ),
        ("vllm", "http://localhost:8000/v1"),
        ("lmstudio", "http://localhost:1234/v1"),
    ] {
        let c = f.load(&model(&format!("{name}/m")));
        assert_eq!(
            (c.provider.value.as_str(), c.base_url.value.as_str()),
            (name, url)
        );
    }
}

#[test]
fn a_model_id_with_a_slash_is_not_hijacked_by_an_explicit_base_url() {
    let mut f = Fixture::new();
    f.set("OPENAI_API_KEY", "sk-openai-1234567890");
    // Groq's `openai/gpt-oss-120b` with Groq's URL given at the same level: the whole
    // name is the model id.
    let c = f.load(&Overrides {
        base_url: Some("https://api.groq.com/openai/v1".into()),
        model: Some("openai/gpt-oss-120b".into()),
        ..Overrides::default()
    });
    assert_eq!(c.model.value, "openai/gpt-oss-120b");
    assert_eq!(c.base_url.value, "https://api.groq.com/openai/v1");
    // Groq by its URL; OPENAI_API_KEY is not sent to it.
    assert_eq!(c.provider.value, "groq");
    assert_eq!(c.api_key.value, "");

    // A base_url above the model (env over a file) wins the same way.
    f.set("REIN_BASE_URL", "https://api.groq.com/openai/v1");
    f.write_user("model = \"openai/gpt-oss-120b\"\n");
    let c = f.load(&Overrides::default());
    assert_eq!(c.model.value, "openai/gpt-oss-120b");
    assert_eq!(c.base_url.source, env("REIN_BASE_URL"));

    // The prefix spelled out picks the provider and keeps the rest whole.
    let c = f.load(&model("groq/openai/gpt-oss-120b"));
    assert_eq!(c.provider.value, "groq");
    assert_eq!(c.model.value, "openai/gpt-oss-120b");

    // A base_url below the model does not stop the prefix: REIN_MODEL over the file's URL.
    f.vars.remove("REIN_BASE_URL");
    f.write_user("base_url = \"http://127.0.0.1:9/v1\"\n");
    f.set("REIN_MODEL", "openrouter/anthropic/claude-sonnet-4.5");
    let c = f.load(&Overrides::default());
    assert_eq!(c.provider.value, "openrouter");
    assert_eq!(c.provider.source, env("REIN_MODEL"));
    assert_eq!(c.base_url.value, "https://openrouter.ai/api/v1");
    assert_eq!(c.model.value, "anthropic/claude-sonnet-4.5");
}

#[test]
fn a_prefix_that_names_no_provider_is_part_of_the_model_id() {
    let f = Fixture::new();
    let c = f.load(&model("meta-llama/Llama-3.3-70B"));
    assert_eq!(c.model.value, "meta-llama/Llama-3.3-70B");
    assert_eq!(c.base_url.value, "https://api.openai.com/v1");
    assert_eq!(c.provider.value, "openai", "the default URL is OpenAI's");

    let c = f.load(&Overrides {
        base_url: Some("http://127.0.0.1:9/v1".into()),
        model: Some("my-model".into()),
        ..Overrides::default()
    });
    assert_eq!(c.provider.value, "", "an endpoint that is no provider");
    assert_eq!(c.discovery, Discovery::Probe);
}

#[test]
fn a_provider_without_a_model_is_an_error() {
    let f = Fixture::new();
    let e = f.try_load(&model("ollama/")).unwrap_err().to_string();
    assert_eq!(
        e,
        "flag --model: model `ollama/` names the provider `ollama` but no model after the `/`"
    );
}

// ---- keys ----

#[test]
fn explicit_keys_win_and_openai_api_key_never_goes_to_another_provider() {
    let mut f = Fixture::new();
    f.set("OPENAI_API_KEY", "sk-openai-1234567890");
    let c = f.load(&model("openrouter/x/y"));
    assert_eq!(
        c.api_key.value, "",
        "OPENAI_API_KEY is not sent to openrouter"
    );
    let warnings = c.warnings(true);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("set OPENROUTER_API_KEY"),
        "{warnings:?}"
    );

    // The openai provider does get it.
    let c = f.load(&model("openai/gpt-5"));
    assert_eq!(c.api_key.source, env("OPENAI_API_KEY"));

    // REIN_API_KEY with REIN_MODEL (same level): it goes with the model.
    f.set("REIN_API_KEY", "rk-1234567890abcdef")
        .set("REIN_MODEL", "openrouter/x/y")
        .set("OPENROUTER_API_KEY", "sk-or-1234567890");
    let c = f.load(&Overrides::default());
    assert_eq!(c.api_key.source, env("REIN_API_KEY"));

    // --model is above REIN_API_KEY, and the provider has its own key: that one.
    let c = f.load(&model("openrouter/x/y"));
    assert_eq!(c.api_key.source, env("OPENROUTER_API_KEY"));
    // ... but without the provider's own key, the explicit one is still used.
    f.vars.remove("OPENROUTER_API_KEY");
    let c = f.load(&model("openrouter/x/y"));
    assert_eq!(c.api_key.source, env("REIN_API_KEY"));

    // --api-key (a flag, like --model) always goes with it.
    f.set("OPENROUTER_API_KEY", "sk-or-1234567890");
    let c = f.load(&Overrides {
        api_key: Some("fk".into()),
        model: Some("openrouter/x/y".into()),
        ..Overrides::default()
    });
    assert_eq!(c.api_key.source, flag("--api-key"));
}

#[test]
fn a_key_in_a_file_goes_with_the_model_of_that_file() {
    let mut f = Fixture::new();
    f.write_user("model = \"deepseek/deepseek-chat\"\napi_key = \"sk-file-1234567890\"\n");
    f.set("DEEPSEEK_API_KEY", "sk-ds-1234567890");
    let c = f.load(&Overrides::default());
    assert_eq!(c.api_key.value, "sk-file-1234567890");
    assert_eq!(c.api_key.source, Source::UserFile(f.user_file()));
    // A model given above the file uses the provider's own key instead.
    let c = f.load(&model("deepseek/deepseek-reasoner"));
    assert_eq!(c.api_key.source, env("DEEPSEEK_API_KEY"));
}

#[test]
fn openai_base_url_and_key_stay_a_pair() {
    let mut f = Fixture::new();
    f.set("OPENAI_BASE_URL", "https://openrouter.ai/api/v1")
        .set("OPENAI_API_KEY", "sk-or-via-openai-var");
    let c = f.load(&model("meta-llama/llama-3.3-70b-instruct"));
    assert_eq!(c.provider.value, "openrouter");
    assert_eq!(c.api_key.source, env("OPENAI_API_KEY"));
}

/// The built-in openai and anthropic providers speak their own APIs and know their models;
/// a model's entry or a provider's table says otherwise, and a bad value names its key.
#[test]
fn openai_speaks_responses_anthropic_its_messages_and_a_table_can_say_otherwise() {
    use rein_core::conversation::Api;
    let mut f = Fixture::new();
    f.set("ANTHROPIC_API_KEY", "sk-ant-1234567890");
    let c = f.load(&model("anthropic/claude-sonnet-4-5"));
    assert_eq!(c.provider.value, "anthropic");
    assert_eq!(c.base_url.value, "https://api.anthropic.com/v1");
    assert_eq!(c.api.value, Api::Anthropic);
    assert_eq!(c.api_key.source, env("ANTHROPIC_API_KEY"));
    assert_eq!(c.context_window.value, 200_000);
    assert_eq!(c.prices.cache_write, Some(3.75));
    assert_eq!(c.output_limit, Some(64_000));
    let c = f.load(&model("openai/gpt-5-codex"));
    assert_eq!(c.api.value, Api::Responses);
    assert_eq!(c.reasoning_effort.as_deref(), Some("medium"));
    let c = f.load(&model("openrouter/openai/gpt-5"));
    assert_eq!(c.api.value, Api::Chat, "a gateway speaks chat completions");
    f.write_user(
        r#"
[providers.openai]
api = "chat"
models = { "gpt-5-codex" = { api = "responses", reasoning_effort = "high" } }
[providers.anthropic]
cache_ttl = "1h"
models = { "claude-haiku-4-5" = { thinking_budget = 4096 } }
"#,
    );
    let c = f.load(&model("openai/gpt-4o"));
    assert_eq!(c.api.value, Api::Chat);
    assert_eq!(c.api.source, Source::UserFile(f.user_file()));
    let c = f.load(&model("openai/gpt-5-codex"));
    assert_eq!(c.api.value, Api::Responses);
    assert_eq!(c.reasoning_effort.as_deref(), Some("high"));
    let c = f.load(&model("anthropic/claude-haiku-4-5"));
    assert_eq!(c.thinking_budget, Some(4096));
    assert_eq!(c.cache_ttl.as_deref(), Some("1h"));
    assert_eq!(c.context_window.value, 200_000, "the preset's window stays");
    for (text, key, says) in [
        (
            "[providers.openai]\napi = \"grpc\"\n",
            "providers.openai.api",
            "chat, responses, anthropic",
        ),
        (
            "[providers.anthropic]\ncache_ttl = \"2h\"\n",
            "providers.anthropic.cache_ttl",
            "\"5m\" or \"1h\"",
        ),
        (
            "[providers.openai.models.\"o3\"]\nreasoning_effort = \"max\"\n",
            "providers.openai.models.o3.reasoning_effort",
            "minimal, low, medium, high",
        ),
        (
            "[providers.anthropic.models.\"claude-haiku-4-5\"]\nthinking_budget = 10\n",
            "providers.anthropic.models.claude-haiku-4-5.thinking_budget",
            "1024",
        ),
    ] {
        f.write_user(text);
        let err = f.try_load(&Overrides::default()).unwrap_err().to_string();
        assert!(err.contains(key) && err.contains(says), "{text}: {err}");
    }
}

// ---- [providers.NAME] ----

#[test]
fn configured_providers_add_and_override_with_headers_and_models() {
    let mut f = Fixture::new();
    f.write_user(
        r#"
[providers.openrouter]
headers = { "HTTP-Referer" = "https://example.com", "X-Title" = "rein" }

[providers.openrouter.models."anthropic/claude-sonnet-4.5"]
context_window = 200000
input_price = 3
cached_input_price = 0.3
output_price = 15.0

[providers.lab]
base_url = "http://10.0.0.5:9000/v1/"
api_key_env = "LAB_KEY"
models = { "qwen3-coder-30b" = { context_window = 65536 } }
"#,
    );
    f.write_project("[providers.openrouter]\nheaders = { \"X-Title\" = \"my project\" }\n");
    f.set("LAB_KEY", "lab-secret-1234567890");

    // The project's header is held until allowed, then laid over the user's.
    let c = f.load(&model("openrouter/anthropic/claude-sonnet-4.5"));
    assert_eq!(c.headers[1], ("X-Title".to_string(), "rein".to_string()));
    f.allow_project();
    let c = f.load(&model("openrouter/anthropic/claude-sonnet-4.5"));
    assert_eq!(
        c.headers,
        [
            (
                "HTTP-Referer".to_string(),
                "https://example.com".to_string()
            ),
            ("X-Title".to_string(), "my project".to_string()),
        ]
    );
    assert_eq!(c.context_window.value, 200_000);
    assert_eq!(c.context_window.source, Source::UserFile(f.user_file()));
    assert_eq!(
        c.discovery,
        Discovery::None,
        "a configured window is not asked for"
    );
    assert_eq!(c.prices.input, Some(3.0));
    assert_eq!(c.prices.cached_input, Some(0.3));
    assert_eq!(c.prices.output, Some(15.0));

    let c = f.load(&model("lab/qwen3-coder-30b"));
    assert_eq!(c.base_url.value, "http://10.0.0.5:9000/v1");
    assert_eq!(c.base_url.source, Source::UserFile(f.user_file()));
    assert_eq!(c.api_key.source, env("LAB_KEY"));
    assert_eq!(c.context_window.value, 65_536);
    assert!(c.headers.is_empty());

    // The presets' own models first (openai's, anthropic's), then the configured ones.
    let names = c.model_names();
    assert_eq!(
        names[names.len() - 2..],
        [
            "openrouter/anthropic/claude-sonnet-4.5",
            "lab/qwen3-coder-30b"
        ]
    );
    assert!(
        names.contains(&"openai/gpt-5-codex".to_string()),
        "{names:?}"
    );
    assert!(
        names.contains(&"anthropic/claude-sonnet-4-5".to_string()),
        "{names:?}"
    );
}

#[test]
fn resolve_model_gives_what_a_model_switch_needs() {
    let mut f = Fixture::new();
    f.write_user(
        "[providers.openrouter.models.\"anthropic/claude-sonnet-4.5\"]\ncontext_window = 200000\noutput_price = 15\n",
    );
    f.set("OPENROUTER_API_KEY", "sk-or-1234567890");
    let mut c = f.load(&model("ollama/qwen3-coder"));
    let t = c
        .resolve_model("openrouter/anthropic/claude-sonnet-4.5")
        .unwrap();
    assert_eq!(t.provider.value, "openrouter");
    assert_eq!(t.model.value, "anthropic/claude-sonnet-4.5");
    assert_eq!(t.base_url.value, "https://openrouter.ai/api/v1");
    assert_eq!(t.api_key.value, "sk-or-1234567890");
    assert_eq!(t.context_window.value, 200_000);
    assert_eq!(t.prices.output, Some(15.0));
    assert!(
        !format!("{t:?}").contains("1234567890"),
        "the key is masked"
    );
    c.set_target(t);
    assert_eq!(c.model_name, "openrouter/anthropic/claude-sonnet-4.5");
    assert_eq!(c.base_url.value, "https://openrouter.ai/api/v1");
    assert_eq!(c.target().context_window.value, 200_000);
    assert!(c.resolve_model("openrouter/").is_err());
}

#[test]
fn the_context_window_precedence() {
    let mut f = Fixture::new();
    f.write_user(
        "context_window = 32000\n[providers.ollama.models.big]\ncontext_window = 100000\n",
    );
    // The model's entry beats the `context_window` setting.
    let c = f.load(&model("ollama/big"));
    assert_eq!(c.context_window.value, 100_000);
    // Without an entry, the setting stays, and the server may be asked.
    let mut c = f.load(&model("ollama/small"));
    assert_eq!(c.context_window.value, 32_000);
    assert_eq!(c.discovery, Discovery::Ollama);
    c.set_discovered_window(8192, "http://localhost:11434/api/show".into());
    assert_eq!(c.context_window.value, 8192);
    assert_eq!(
        c.context_window.source,
        Source::Server("http://localhost:11434/api/show".into())
    );
    // REIN_CONTEXT_WINDOW and --context-window beat the entry, and nothing is asked.
    f.set("REIN_CONTEXT_WINDOW", "50000");
    let mut c = f.load(&model("ollama/big"));
    assert_eq!(c.context_window.value, 50_000);
    assert_eq!(c.discovery, Discovery::None);
    c.set_discovered_window(8192, "x".into());
    assert_eq!(c.context_window.value, 50_000, "an explicit window stays");
    let c = f.load(&Overrides {
        context_window: Some(60_000),
        model: Some("ollama/big".into()),
        ..Overrides::default()
    });
    assert_eq!(c.context_window.source, flag("--context-window"));
}

#[test]
fn bad_provider_tables_name_the_file_and_key() {
    let f = Fixture::new();
    let path = f.user_file().display().to_string();
    let cases = [
        (
            "[providers.openrouter]\nbase_ur = \"x\"\n",
            format!("{path}: unknown key `providers.openrouter.base_ur` (known keys in [providers.openrouter]: base_url, api_key_env, api, cache_ttl, headers, models)"),
        ),
        (
            "[providers.mine]\napi_key_env = \"X\"\n",
            format!("{path}: key `providers.mine`: `mine` is not a built-in provider, so it needs a base_url (built-in: openai, anthropic, openrouter, deepseek, mistral, groq, gemini, ollama, llamacpp, vllm, lmstudio)"),
        ),
        (
            "[providers.mine]\nbase_url = \"http://x\"\napi_key_env = \"sk-abc123\"\n",
            format!("{path}: key `providers.mine.api_key_env`: expected the name of an environment variable (letters, digits and `_`), got \"sk-abc123\"; the key itself belongs in that variable, never in a file"),
        ),
        (
            "[providers.mine]\nbase_url = \"ftp://x\"\n",
            format!("{path}: key `providers.mine.base_url`: expected an http:// or https:// URL, got \"ftp://x\""),
        ),
        (
            "[providers.openrouter.models.\"a/b\"]\ncontext_windw = 5\n",
            format!("{path}: key `providers.openrouter.models.\"a/b\".context_windw`: unknown key (a model has context_window, input_price, cached_input_price, cache_write_price, output_price, images, api, reasoning_effort, thinking_budget, max_output_tokens)"),
        ),
        (
            "[providers.openrouter.models.m]\nimages = \"yes\"\n",
            format!("{path}: key `providers.openrouter.models.m.images`: expected true or false, got string \"yes\""),
        ),
        (
            "[providers.openrouter.models.m]\ncontext_window = 0\n",
            format!("{path}: key `providers.openrouter.models.m.context_window`: expected an integer from 1 to 1000000000, got integer 0"),
        ),
        (
            "[providers.openrouter.models.m]\ninput_price = \"3\"\n",
            format!("{path}: key `providers.openrouter.models.m.input_price`: expected a price in US dollars per million tokens (a number from 0 to 100000), got string \"3\""),
        ),
        (
            "[providers.openrouter.models.m]\noutput_price = -1\n",
            format!("{path}: key `providers.openrouter.models.m.output_price`: expected a price from 0 to 100000 US dollars per million tokens, got -1"),
        ),
        (
            "[providers.openrouter]\nheaders = { \"Bad Name\" = \"x\" }\n",
            format!("{path}: key `providers.openrouter.headers.\"Bad Name\"`: not a valid HTTP header name"),
        ),
        (
            "[providers.openrouter]\nheaders = { Authorization = \"Bearer x\" }\n",
            format!("{path}: key `providers.openrouter.headers.Authorization`: the key is sent from the variable `api_key_env` names; a file never holds it"),
        ),
        (
            "[providers.openrouter]\nheaders = { \"X-Title\" = 3 }\n",
            format!("{path}: key `providers.openrouter.headers.X-Title`: expected a string, got integer 3"),
        ),
        (
            "[providers.\"a/b\"]\nbase_url = \"http://x\"\n",
            format!("{path}: key `providers.\"a/b\"`: a provider name may not be empty or contain `/` or spaces (it is the first part of a model name, as in `NAME/model`)"),
        ),
        (
            "providers = 3\n",
            format!("{path}: key `providers`: expected a table [providers.NAME], got integer 3"),
        ),
    ];
    for (text, expected) in cases {
        f.write_user(text);
        assert_eq!(f.error(), expected, "for {text:?}");
    }
}

#[test]
fn describe_shows_the_provider_and_where_it_came_from() {
    let mut f = Fixture::new();
    f.write_user(
        "[providers.openrouter]\nheaders = { \"X-Title\" = \"rein\" }\n[providers.openrouter.models.m]\ninput_price = 1\noutput_price = 2\n",
    );
    f.set("OPENROUTER_API_KEY", "sk-or-abcdefghijklmnop");
    let text = f.load(&model("openrouter/m")).describe();
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} in\n{text}"))
            .to_string()
    };
    assert!(line("provider").contains("openrouter (key in OPENROUTER_API_KEY)"));
    assert!(line("provider").ends_with("(flag --model)"));
    assert!(line("base_url").ends_with("(preset openrouter)"));
    assert!(line("api_key").ends_with("(env OPENROUTER_API_KEY)"));
    assert!(!text.contains("abcdefghijklmnop"));
    assert!(line("headers.X-Title").contains("rein"));
    assert!(line("prices").contains("$1 in, - cached, $2 out per M tokens"));
}
