//! Asking a server for its window: llama.cpp, Ollama and OpenRouter's answers, an answer
//! past the cap, an unknown endpoint probed.

use std::time::Duration;

use rein_core::config::{discover, Discovery, Overrides};
use serde_json::{json, Value};
use tokio::net::TcpListener;

use super::{model, Fixture, TinyServer};

/// A user file with provider `name` of a preset's kind pointed at `server`.
fn fixture_for(preset: &str, server: &TinyServer) -> Fixture {
    let f = Fixture::new();
    f.write_user(&format!(
        "[providers.{preset}]\nbase_url = \"{}/v1\"\nheaders = {{ \"X-Title\" = \"rein\" }}\n",
        server.root()
    ));
    f
}

#[tokio::test]
async fn llama_cpp_reports_its_window_in_props_at_the_server_root() {
    let server = TinyServer::start(vec![(
        "GET /props",
        json!({"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1}),
    )])
    .await;
    let f = fixture_for("llamacpp", &server);
    let c = f.load(&model("llamacpp/smollm2"));
    let found = discover::context_window(&c.target()).await.unwrap();
    assert_eq!(found.tokens, 8192);
    assert_eq!(found.url, format!("{}/props", server.root()));
    assert_eq!(server.routes_seen(), ["GET /props"]);
    // The provider's headers go along.
    assert!(server.seen.lock().unwrap()[0]
        .1
        .to_lowercase()
        .contains("x-title: rein"));

    // Newer builds: `n_ctx` at the top.
    let server = TinyServer::start(vec![("GET /props", json!({"n_ctx": 4096}))]).await;
    let f = fixture_for("llamacpp", &server);
    let c = f.load(&model("llamacpp/smollm2"));
    assert_eq!(
        discover::context_window(&c.target()).await.unwrap().tokens,
        4096
    );
}

#[tokio::test]
async fn ollama_reports_num_ctx_else_the_models_context_length() {
    let server = TinyServer::start(vec![(
        "POST /api/show",
        json!({
            "parameters": "stop \"<|im_end|>\"\nnum_ctx 32768",
            "model_info": {"general.architecture": "qwen3", "qwen3.context_length": 262144}
        }),
    )])
    .await;
    let f = fixture_for("ollama", &server);
    let c = f.load(&model("ollama/qwen3-coder"));
    let found = discover::context_window(&c.target()).await.unwrap();
    assert_eq!(found.tokens, 32768);
    assert_eq!(server.routes_seen(), ["GET /api/ps", "POST /api/show"]);
    let body: Value = serde_json::from_str(&server.seen.lock().unwrap()[1].2).unwrap();
    assert_eq!(body, json!({"model": "qwen3-coder"}));

    let server = TinyServer::start(vec![(
        "POST /api/show",
        json!({"model_info": {"general.architecture": "qwen3", "qwen3.context_length": 262144}}),
    )])
    .await;
    let f = fixture_for("ollama", &server);
    let c = f.load(&model("ollama/qwen3-coder"));
    assert_eq!(
        discover::context_window(&c.target()).await.unwrap().tokens,
        262_144
    );

    // A loaded model's window, as Ollama runs it, comes first.
    let server = TinyServer::start(vec![
        (
            "GET /api/ps",
            json!({"models": [{"name": "qwen3-coder:latest", "context_length": 4096}]}),
        ),
        ("POST /api/show", json!({"parameters": "num_ctx 32768"})),
    ])
    .await;
    let f = fixture_for("ollama", &server);
    let c = f.load(&model("ollama/qwen3-coder"));
    let found = discover::context_window(&c.target()).await.unwrap();
    assert_eq!(found.tokens, 4096);
    assert_eq!(found.url, format!("{}/api/ps", server.root()));
}

#[tokio::test]
async fn openrouter_reports_context_length_in_its_model_list() {
    let server = TinyServer::start(vec![(
        "GET /api/v1/models",
        json!({"data": [
            {"id": "other/model", "context_length": 1000},
            {"id": "anthropic/claude-sonnet-4.5", "context_length": 1000000}
        ]}),
    )])
    .await;
    let f = Fixture::new();
    f.write_user(&format!(
        "[providers.openrouter]\nbase_url = \"{}/api/v1\"\n",
        server.root()
    ));
    let c = f.load(&model("openrouter/anthropic/claude-sonnet-4.5"));
    let found = discover::context_window(&c.target()).await.unwrap();
    assert_eq!(found.tokens, 1_000_000);
    assert_eq!(found.url, format!("{}/api/v1/models", server.root()));
}

#[tokio::test]
async fn an_answer_past_the_cap_is_no_answer_and_the_probe_goes_on() {
    // A `/props` far larger than any real one (a window inside it, after the padding), then
    // a model list that says the window: the first is cut at the cap and read as nothing.
    let pad = "x".repeat(discover::MAX_ANSWER_BYTES + 1024);
    let server = TinyServer::start(vec![
        (
            "GET /props",
            json!({"pad": pad, "default_generation_settings": {"n_ctx": 999}}),
        ),
        (
            "GET /v1/models",
            json!({"data": [{"id": "my-model", "max_model_len": 16384}]}),
        ),
    ])
    .await;
    let f = Fixture::new();
    let c = f.load(&Overrides {
        base_url: Some(format!("{}/v1", server.root())),
        model: Some("my-model".into()),
        ..Overrides::default()
    });
    let found = discover::context_window(&c.target()).await.unwrap();
    assert_eq!(found.tokens, 16384);
    assert_eq!(server.routes_seen(), ["GET /props", "GET /v1/models"]);
}

#[tokio::test]
async fn an_unknown_endpoint_is_probed_and_silence_changes_nothing() {
    // vLLM-style list on an endpoint that is no provider.
    let server = TinyServer::start(vec![(
        "GET /v1/models",
        json!({"data": [{"id": "my-model", "max_model_len": 16384}]}),
    )])
    .await;
    let f = Fixture::new();
    let c = f.load(&Overrides {
        base_url: Some(format!("{}/v1", server.root())),
        model: Some("my-model".into()),
        ..Overrides::default()
    });
    assert_eq!(c.discovery, Discovery::Probe);
    let found = discover::context_window(&c.target()).await.unwrap();
    assert_eq!(found.tokens, 16384);
    assert_eq!(server.routes_seen(), ["GET /props", "GET /v1/models"]);

    // A server that knows nothing: None, quickly.
    let empty = TinyServer::start(vec![]).await;
    let c = f.load(&Overrides {
        base_url: Some(format!("{}/v1", empty.root())),
        model: Some("my-model".into()),
        ..Overrides::default()
    });
    assert_eq!(discover::context_window(&c.target()).await, None);

    // A server that never answers: None within the time limit.
    let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let c = f.load(&Overrides {
        base_url: Some(format!("http://{}/v1", silent.local_addr().unwrap())),
        model: Some("my-model".into()),
        ..Overrides::default()
    });
    // The server would hold the question for ever: ending at all is the limit's work (the
    // outer timeout a guard against a hang, not a claim about speed).
    let found = tokio::time::timeout(
        crate::support::GIVE_UP,
        discover::context_window_within(&c.target(), Duration::from_millis(300)),
    )
    .await
    .expect("the limit ended the question");
    assert_eq!(found, None);

    // Nothing is asked when the window is configured.
    let c = f.load(&Overrides {
        base_url: Some(format!("{}/v1", server.root())),
        model: Some("my-model".into()),
        context_window: Some(1000),
        ..Overrides::default()
    });
    let before = server.routes_seen().len();
    assert_eq!(discover::context_window(&c.target()).await, None);
    assert_eq!(server.routes_seen().len(), before);
}
