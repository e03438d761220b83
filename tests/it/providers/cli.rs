//! The providers through the real binary: `rein models`, `rein config`, headers and keys on
//! the wire, `describe`'s source column, the model list asked with the key.

use crate::support;

use rein_core::config::Overrides;
use serde_json::json;
use support::{rein_command, write};
use support::{Reply, ScriptedServer};
use tempfile::TempDir;

use super::{model, run, Fixture, TinyServer};

#[tokio::test]
async fn rein_models_lists_providers_keys_and_models_with_the_current_one_marked() {
    let home = TempDir::new().unwrap();
    let project = TempDir::new().unwrap();
    write(
        &home.path().join("rein-home").join("config.toml"),
        r#"
[providers.openrouter]
headers = { "X-Title" = "rein" }
[providers.openrouter.models."anthropic/claude-sonnet-4.5"]
context_window = 200000
input_price = 3
cached_input_price = 0.3
output_price = 15
[providers.openrouter.models."deepseek/deepseek-chat"]
context_window = 64000
[providers.lab]
base_url = "http://10.0.0.5:9000/v1"
"#,
    );
    let (code, stdout, stderr) = run(rein_command(home.path())
        .args([
            "models",
            "--model",
            "openrouter/anthropic/claude-sonnet-4.5",
            "--cwd",
        ])
        .arg(project.path())
        .env("OPENROUTER_API_KEY", "sk-or-1234567890"))
    .await;
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains("1234567890"), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0],
        "current model: openrouter/anthropic/claude-sonnet-4.5 (provider openrouter, picked by flag --model)"
    );
    let line = |start: &str| {
        lines
            .iter()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no line {start:?} in\n{stdout}"))
            .to_string()
    };
    let squeeze = |l: String| l.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(
        squeeze(line("openrouter ")),
        "openrouter https://openrouter.ai/api/v1 key OPENROUTER_API_KEY (set), api chat"
    );
    assert_eq!(
        squeeze(line("openai ")),
        "openai https://api.openai.com/v1 key OPENAI_API_KEY (not set), api responses"
    );
    assert_eq!(
        squeeze(line("ollama ")),
        "ollama http://localhost:11434/v1 no key needed, api chat"
    );
    assert!(line("lab ").contains("http://10.0.0.5:9000/v1"));
    assert!(
        line("lab ").contains("config.toml)"),
        "where it was configured"
    );
    assert_eq!(squeeze(line("    headers")), "headers: X-Title");
    assert_eq!(
        squeeze(line("  * anthropic")),
        "* anthropic/claude-sonnet-4.5 200000 tokens $3 in, $0.3 cached, $15 out per M tokens"
    );
    assert_eq!(
        squeeze(line("    deepseek/")),
        "deepseek/deepseek-chat 64000 tokens"
    );
    for preset in [
        "deepseek", "mistral", "groq", "gemini", "llamacpp", "vllm", "lmstudio",
    ] {
        line(&format!("{preset} "));
    }

    // A current model with no entry is listed under its provider.
    let (code, stdout, _) = run(rein_command(home.path())
        .args(["models", "--model", "ollama/qwen3-coder", "--cwd"])
        .arg(project.path()))
    .await;
    assert_eq!(code, 0);
    assert!(
        stdout.contains("  * qwen3-coder  (not configured)"),
        "{stdout}"
    );
}

#[tokio::test]
async fn rein_config_shows_the_provider_and_the_window_the_server_reported() {
    let server = TinyServer::start(vec![(
        "GET /props",
        json!({"default_generation_settings": {"n_ctx": 8192}}),
    )])
    .await;
    let home = TempDir::new().unwrap();
    let project = TempDir::new().unwrap();
    write(
        &home.path().join("rein-home").join("config.toml"),
        &format!(
            "[providers.llamacpp]\nbase_url = \"{}/v1\"\n",
            server.root()
        ),
    );
    let (code, stdout, stderr) = run(rein_command(home.path())
        .args(["config", "--model", "llamacpp/smollm2", "--cwd"])
        .arg(project.path()))
    .await;
    assert_eq!(code, 0, "{stderr}");
    let line = |name: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} in\n{stdout}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(line("provider"), "provider llamacpp (flag --model)");
    assert!(line("base_url").starts_with(&format!("base_url {}/v1 (", server.root())));
    assert_eq!(line("model"), "model smollm2 (flag --model)");
    assert_eq!(
        line("context_window"),
        format!("context_window 8192 (server {}/props)", server.root())
    );
}

#[tokio::test]
async fn a_providers_headers_and_key_reach_the_server() {
    let server = ScriptedServer::start(vec![Reply::text("hello from the provider")])
        .await
        .unwrap();
    let home = TempDir::new().unwrap();
    let project = TempDir::new().unwrap();
    write(
        &home.path().join("rein-home").join("config.toml"),
        &format!(
            "[providers.mine]\nbase_url = \"{}\"\napi_key_env = \"MINE_KEY\"\nheaders = {{ \"HTTP-Referer\" = \"https://example.com\", \"X-Title\" = \"rein\" }}\n",
            server.base_url()
        ),
    );
    let (code, stdout, stderr) = run(rein_command(home.path())
        .args(["-p", "hi", "--model", "mine/vendor/model-1", "--cwd"])
        .arg(project.path())
        .env("MINE_KEY", "mine-secret-123")
        .env("OPENAI_API_KEY", "sk-openai-not-for-mine"))
    .await;
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("hello from the provider"), "{stdout}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["model"], "vendor/model-1");
    let headers = &server.request_headers()[0];
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(header("x-title"), Some("rein"));
    assert_eq!(header("http-referer"), Some("https://example.com"));
    assert_eq!(header("authorization"), Some("Bearer mine-secret-123"));
}

/// `rein config` lines its sources up after the values, and one long value (the
/// sensitive_reads list) does not push every other line's source far to the right.
#[test]
fn describe_keeps_its_source_column_near_the_values() {
    let f = Fixture::new();
    let c = f.load(&Overrides::default());
    let text = c.describe();
    let settings: Vec<&str> = text
        .lines()
        .take_while(|l| !l.starts_with("user config"))
        .filter(|l| l.ends_with(')'))
        .collect();
    assert!(settings.len() > 10, "{text}");
    let long = settings
        .iter()
        .find(|l| l.starts_with("permissions.sensitive_reads"))
        .expect("the sensitive_reads line");
    assert!(long.len() > 120, "{long}");
    // Where each line's source starts: most lines share one column, near the values.
    let mut columns: std::collections::BTreeMap<usize, usize> = Default::default();
    for line in &settings {
        if let Some(at) = line.rfind("  (") {
            *columns.entry(at + 2).or_default() += 1;
        }
    }
    let (column, lines) = columns
        .iter()
        .max_by_key(|(_, n)| **n)
        .map(|(c, n)| (*c, *n))
        .unwrap_or_default();
    assert!(
        lines > 10 && column < 80,
        "the source column is at {column} for {lines} lines: {columns:?}\n{text}"
    );
}

/// Issue 28: `/model` lists what the provider's server lists, asked with the provider's key
/// and headers; a server that refuses says so in a line, never fatally.
#[tokio::test]
async fn the_servers_model_list_is_asked_with_the_providers_key() {
    use rein_core::config::server_models;
    let server = ScriptedServer::start(vec![]).await.unwrap();
    server.answer_models(
        200,
        json!({"data": [{"id": "qwen3-coder"}, {"id": "llama3.3", "context_length": 131072}]}),
    );
    let mut f = Fixture::new();
    f.write_user(&format!(
        "[providers.lab]\nbase_url = \"{}\"\napi_key_env = \"LAB_KEY\"\nheaders = {{ \"X-Title\" = \"rein\" }}\n",
        server.base_url()
    ));
    f.set("LAB_KEY", "sk-lab-123");
    let c = f.load(&model("lab/qwen3-coder"));
    let target = c.target();
    assert_eq!(
        server_models::models_url(&target),
        format!("{}/models", server.base_url())
    );
    let listed = server_models::list(&target).await.unwrap();
    let names: Vec<(&str, Option<u64>)> =
        listed.iter().map(|m| (m.id.as_str(), m.window)).collect();
    assert_eq!(names, [("qwen3-coder", None), ("llama3.3", Some(131072))]);
    let headers = server.model_list_headers();
    let has = |name: &str, value: &str| {
        headers[0]
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case(name) && v == value)
    };
    assert!(has("authorization", "Bearer sk-lab-123"), "{headers:?}");
    assert!(has("x-title", "rein"), "{headers:?}");

    server.answer_models(401, json!("bad key"));
    let why = server_models::list(&target).await.unwrap_err();
    assert!(why.contains("401") && why.contains("/models"), "{why}");
    drop(server);
    let why = server_models::list(&target).await.unwrap_err();
    assert!(why.contains("did not answer"), "{why}");
}
