//! The models a provider's server lists, for `/model`: `GET {base_url}/models` with the
//! model's key and headers (Anthropic's API with its `x-api-key` and `anthropic-version`),
//! read as an OpenAI-style list (`data`, `models`, or a bare array of entries with an `id`,
//! `name` or `model`), with the context window where the entry says it.
//!
//! In: the [`ModelTarget`] in use. Out: the models, or one line saying why there are none
//! (the picker shows it; nothing is fatal). The answer is read with a cap
//! ([`MAX_ANSWER_BYTES`]) within [`TIMEOUT`]; at most [`MAX_MODELS`] names are kept, and a
//! name with spaces or control characters, or longer than [`MAX_NAME`], is no name.

use std::time::Duration;

use serde_json::Value;

use super::discover::MAX_ANSWER_BYTES;
use super::{ModelTarget, MAX_CONTEXT_WINDOW};
use crate::agent::client::{read_body, BodyEnd, ANTHROPIC_VERSION};
use crate::conversation::Api;

/// The longest the listing may take (a hosted list is a few hundred kilobytes).
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// The most models kept of a list.
pub const MAX_MODELS: usize = 2000;
/// The longest model id kept, in bytes.
pub const MAX_NAME: usize = 200;

/// One model the server lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerModel {
    /// The id the server takes (`anthropic/claude-sonnet-4.5`).
    pub id: String,
    /// The context window, where the entry says it.
    pub window: Option<u64>,
}

/// The URL the models of `target`'s server are listed at.
pub fn models_url(target: &ModelTarget) -> String {
    format!("{}/models", target.base_url.value.trim_end_matches('/'))
}

/// The models `target`'s server lists, in its order, or why there are none.
pub async fn list(target: &ModelTarget) -> Result<Vec<ServerModel>, String> {
    // A route a project wrote without the user's allow is asked nothing.
    target.check_route().map_err(|e| e.to_string())?;
    let url = models_url(target);
    let http = reqwest::Client::builder()
        .connect_timeout(TIMEOUT)
        .timeout(TIMEOUT)
        .user_agent(concat!("rein/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("cannot ask {url}: {e}"))?;
    let mut request = http.get(&url);
    let key = target.api_key.value.as_str();
    if target.api.value == Api::Anthropic {
        request = request.header("anthropic-version", ANTHROPIC_VERSION);
        if !key.is_empty() {
            request = request.header("x-api-key", key);
        }
    } else if !key.is_empty() {
        request = request.bearer_auth(key);
    }
    for (name, value) in &target.headers {
        request = request.header(name, value);
    }
    let asked = async {
        let mut response = request
            .send()
            .await
            .map_err(|e| format!("{url} did not answer: {}", without_url(&e)))?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("{url} answered {status}"));
        }
        let (body, end) = read_body(&mut response, MAX_ANSWER_BYTES, TIMEOUT).await;
        match end {
            BodyEnd::Complete => Ok(body),
            BodyEnd::Capped => Err(format!(
                "{url} answered more than {} MiB",
                MAX_ANSWER_BYTES >> 20
            )),
            BodyEnd::Failed(why) => Err(format!("{url} broke off its answer: {why}")),
        }
    };
    let body = tokio::time::timeout(TIMEOUT, asked)
        .await
        .map_err(|_| format!("{url} did not answer within {} s", TIMEOUT.as_secs()))??;
    let value: Value =
        serde_json::from_slice(&body).map_err(|_| format!("{url} did not answer with JSON"))?;
    parse(&value).ok_or_else(|| format!("{url} answered no model list"))
}

/// An OpenAI-style model list: its usable names, each once, with their windows.
pub fn parse(list: &Value) -> Option<Vec<ServerModel>> {
    let entries = list["data"]
        .as_array()
        .or_else(|| list["models"].as_array())
        .or_else(|| list.as_array())?;
    let mut models: Vec<ServerModel> = Vec::new();
    for entry in entries {
        if models.len() == MAX_MODELS {
            break;
        }
        let id = [&entry["id"], &entry["name"], &entry["model"]]
            .into_iter()
            .find_map(Value::as_str)
            .or_else(|| entry.as_str());
        let Some(id) = id.filter(|id| usable(id)) else {
            continue;
        };
        if models.iter().any(|m| m.id == id) {
            continue;
        }
        let window = [
            &entry["context_window"],
            &entry["context_length"],
            &entry["max_model_len"],
            &entry["max_context_length"],
            &entry["top_provider"]["context_length"],
            &entry["meta"]["n_ctx"],
        ]
        .into_iter()
        .find_map(|v| v.as_u64().filter(|n| (1..=MAX_CONTEXT_WINDOW).contains(n)));
        models.push(ServerModel {
            id: id.to_string(),
            window,
        });
    }
    Some(models)
}

/// A name `--model` can take: not empty, no spaces or control characters, not too long.
fn usable(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_NAME
        && !id.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// reqwest's error without the URL it repeats.
fn without_url(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    if let Some(url) = error.url() {
        text = text.replace(&format!(" ({url})"), "");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lists_of_every_shape_give_their_names_and_windows() {
        let openai = json!({"object": "list", "data": [
            {"id": "gpt-5", "object": "model"},
            {"id": "vllm-model", "max_model_len": 32768},
            {"id": "or/model", "context_length": 200000, "top_provider": {"context_length": 1}},
            {"id": "gpt-5"},
            {"id": "bad name"},
            {"id": "bell\u{7}"},
            {"id": ""},
            {"id": 7},
            {"id": "x".repeat(MAX_NAME + 1)},
            {"id": "huge", "context_window": 1u64 << 50},
        ]});
        let models = parse(&openai).unwrap();
        let shown: Vec<(&str, Option<u64>)> =
            models.iter().map(|m| (m.id.as_str(), m.window)).collect();
        assert_eq!(
            shown,
            [
                ("gpt-5", None),
                ("vllm-model", Some(32768)),
                ("or/model", Some(200000)),
                ("huge", None),
            ]
        );
        let ollama = json!({"models": [{"name": "qwen3-coder:latest", "model": "x"}]});
        assert_eq!(parse(&ollama).unwrap()[0].id, "qwen3-coder:latest");
        let bare = json!(["a", {"id": "b"}]);
        assert_eq!(parse(&bare).unwrap().len(), 2);
        assert_eq!(parse(&json!({"error": "no"})), None);
        let many: Vec<Value> = (0..MAX_MODELS + 5)
            .map(|i| json!({"id": format!("m{i}")}))
            .collect();
        assert_eq!(parse(&json!({"data": many})).unwrap().len(), MAX_MODELS);
    }
}
