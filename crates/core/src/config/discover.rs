//! Asking the model server for a model's context window, when the settings do not say.
//!
//! In: a [`ModelTarget`] (its base URL, key, headers, model id and [`Discovery`] kind).
//! Out: the window in tokens and the URL that reported it, or `None`. Each kind of server
//! says it its own way:
//! - llama.cpp: `GET /props` at the server root (not under `/v1`):
//!   `default_generation_settings.n_ctx` (one slot's window), or `n_ctx` at the top;
//! - Ollama: `GET /api/ps` (the window a loaded model runs with), else `POST /api/show`
//!   with `{"model": ID}`: `num_ctx` in `parameters` (the Modelfile's), else
//!   `model_info["<arch>.context_length"]` (the model's maximum; Ollama may run it with
//!   less, see `OLLAMA_CONTEXT_LENGTH`);
//! - LM Studio: `GET /api/v0/models`: `loaded_context_length`, else `max_context_length`;
//! - an OpenAI-style model list, `GET {base_url}/models`, whose entry for the model has
//!   one of `max_model_len` (vLLM), `context_window` (Groq), `context_length`
//!   (OpenRouter), `max_context_length` (Mistral) or `meta.n_ctx` (llama.cpp);
//! - an endpoint of unknown kind is asked as llama.cpp, then for its model list, then as
//!   Ollama.
//!
//! A target whose route a project wrote without the user's allow
//! ([`ModelTarget::check_route`]) is asked nothing. Everything is capped at the window timeout ([`TIMEOUT`] by default) in
//! all and nothing is ever fatal: a server that is
//! down, slow, or answers something else yields `None`, and the configured window stays.
//! The front ends ask in the background ([`ask`]): the answer comes on a watch the agent
//! is spawned with (`crate::agent::window`), so nothing waits for it to start.

use std::time::Duration;

use serde_json::Value;

use super::MAX_CONTEXT_WINDOW;
use super::{Discovery, ModelTarget};
use crate::agent::client::{read_body, BodyEnd};
use crate::agent::window::{self, Answer, WindowProbe, WindowWatch};

/// The longest discovery may take, every request included, unless the settings say
/// otherwise (`client.window_timeout_secs`, [`crate::config::Config::window_timeout`]).
pub const TIMEOUT: Duration = Duration::from_secs(2);

/// The most bytes of an answer read (a hosted model list is a few hundred kilobytes; a
/// larger answer is no answer).
pub const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// A window the server reported, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovered {
    pub tokens: u64,
    /// The URL that answered, e.g. `http://127.0.0.1:8080/props`.
    pub url: String,
}

/// The context window of `target`'s model as its server reports it, within [`TIMEOUT`].
pub async fn context_window(target: &ModelTarget) -> Option<Discovered> {
    context_window_within(target, TIMEOUT).await
}

/// [`ask_within`] the default [`TIMEOUT`].
pub fn ask(target: ModelTarget) -> Option<WindowWatch> {
    ask_within(target, TIMEOUT)
}

/// Ask `target`'s server for the window in a task of its own (call inside a tokio
/// runtime): the answer, or [`Answer::Silent`] after `limit` or a failure, comes on the
/// returned watch. `None` when there is nothing to ask (the window is configured, or no
/// model is).
pub fn ask_within(target: ModelTarget, limit: Duration) -> Option<WindowWatch> {
    if target.discovery == Discovery::None
        || target.model.value.trim().is_empty()
        || target.check_route().is_err()
    {
        return None;
    }
    let (answer, watch) = window::channel();
    tokio::spawn(async move {
        let answered = match context_window_within(&target, limit).await {
            Some(found) => Answer::Reported {
                tokens: found.tokens,
                url: found.url,
            },
            None => Answer::Silent,
        };
        let _ = answer.send(WindowProbe::Answered(answered));
    });
    Some(watch)
}

/// [`context_window`] with another time limit.
pub async fn context_window_within(target: &ModelTarget, limit: Duration) -> Option<Discovered> {
    if target.discovery == Discovery::None || target.model.value.is_empty() {
        return None;
    }
    // A route a project wrote without the user's allow is asked nothing (its key and
    // headers would go with the question).
    if target.check_route().is_err() {
        return None;
    }
    let http = reqwest::Client::builder()
        .connect_timeout(limit)
        .timeout(limit)
        .user_agent(concat!("rein/", env!("CARGO_PKG_VERSION")))
        .build()
        .ok()?;
    let asker = Asker {
        http,
        target,
        limit,
    };
    tokio::time::timeout(limit, asker.ask())
        .await
        .ok()
        .flatten()
}

struct Asker<'a> {
    http: reqwest::Client,
    target: &'a ModelTarget,
    limit: Duration,
}

impl Asker<'_> {
    async fn ask(&self) -> Option<Discovered> {
        let base = self.target.base_url.value.trim_end_matches('/');
        let root = base.strip_suffix("/v1").unwrap_or(base);
        match self.target.discovery {
            Discovery::None => None,
            Discovery::LlamaCpp => self.llama_cpp(root).await,
            Discovery::Ollama => self.ollama(root).await,
            Discovery::LmStudio => self.model_list(&format!("{root}/api/v0/models")).await,
            Discovery::ModelList => self.model_list(&format!("{base}/models")).await,
            Discovery::Probe => {
                if let Some(found) = self.llama_cpp(root).await {
                    return Some(found);
                }
                if let Some(found) = self.model_list(&format!("{base}/models")).await {
                    return Some(found);
                }
                self.ollama(root).await
            }
        }
    }

    async fn llama_cpp(&self, root: &str) -> Option<Discovered> {
        let url = format!("{root}/props");
        let props = self.json(self.http.get(&url)).await?;
        let n = tokens(&props["default_generation_settings"]["n_ctx"])
            .or_else(|| tokens(&props["n_ctx"]))?;
        Some(Discovered { tokens: n, url })
    }

    async fn ollama(&self, root: &str) -> Option<Discovered> {
        let model = self.target.model.value.as_str();
        let tagged = format!("{model}:latest");
        let ps_url = format!("{root}/api/ps");
        if let Some(ps) = self.json(self.http.get(&ps_url)).await {
            let running = ps["models"].as_array().and_then(|models| {
                models.iter().find(|m| {
                    [&m["name"], &m["model"]]
                        .iter()
                        .any(|n| n.as_str() == Some(model) || n.as_str() == Some(&tagged))
                })
            });
            if let Some(n) = running.and_then(|m| tokens(&m["context_length"])) {
                return Some(Discovered {
                    tokens: n,
                    url: ps_url,
                });
            }
        }
        let url = format!("{root}/api/show");
        let show = self
            .json(
                self.http
                    .post(&url)
                    .json(&serde_json::json!({ "model": model })),
            )
            .await?;
        let num_ctx = show["parameters"].as_str().and_then(|text| {
            text.lines().find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next() == Some("num_ctx"))
                    .then(|| words.next()?.parse::<u64>().ok())
                    .flatten()
                    .filter(|n| (1..=MAX_CONTEXT_WINDOW).contains(n))
            })
        });
        let info = &show["model_info"];
        let trained = || {
            let arch = info["general.architecture"].as_str()?;
            tokens(&info[format!("{arch}.context_length").as_str()])
        };
        let any = || {
            info.as_object()?
                .iter()
                .find(|(k, _)| k.ends_with(".context_length"))
                .and_then(|(_, v)| tokens(v))
        };
        let n = num_ctx.or_else(trained).or_else(any)?;
        Some(Discovered { tokens: n, url })
    }

    /// An OpenAI-style list (`data`, or `models`, or a bare array) holding the model.
    async fn model_list(&self, url: &str) -> Option<Discovered> {
        let list = self.json(self.http.get(url)).await?;
        let entries = list["data"]
            .as_array()
            .or_else(|| list["models"].as_array())
            .or_else(|| list.as_array())?;
        let model = self.target.model.value.as_str();
        let entry = entries.iter().find(|e| {
            [&e["id"], &e["name"], &e["model"]]
                .iter()
                .any(|n| n.as_str() == Some(model))
        })?;
        let n = [
            &entry["loaded_context_length"],
            &entry["max_model_len"],
            &entry["context_window"],
            &entry["context_length"],
            &entry["max_context_length"],
            &entry["meta"]["n_ctx"],
            &entry["top_provider"]["context_length"],
        ]
        .into_iter()
        .find_map(tokens)?;
        Some(Discovered {
            tokens: n,
            url: url.to_string(),
        })
    }

    /// Send `request` with the key and headers; the body as JSON when the answer is a
    /// success.
    async fn json(&self, mut request: reqwest::RequestBuilder) -> Option<Value> {
        if !self.target.api_key.value.is_empty() {
            request = request.bearer_auth(&self.target.api_key.value);
        }
        for (name, value) in &self.target.headers {
            request = request.header(name, value);
        }
        let mut response = request.send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        // Read with a cap: a server that answers with an endless body costs
        // `MAX_ANSWER_BYTES`, not the memory it can fill in the time limit.
        let (body, end) = read_body(&mut response, MAX_ANSWER_BYTES, self.limit).await;
        match end {
            BodyEnd::Complete => serde_json::from_slice(&body).ok(),
            BodyEnd::Capped | BodyEnd::Failed(_) => None,
        }
    }
}

/// A positive token count in range, from a JSON number.
fn tokens(v: &Value) -> Option<u64> {
    v.as_u64().filter(|n| (1..=MAX_CONTEXT_WINDOW).contains(n))
}
