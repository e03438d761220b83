//! The streaming chat-completions client.
//!
//! One call to [`LlmClient::stream_chat`] is one model reply: it POSTs the history and the
//! tool schemas with `stream: true`, retries what is worth retrying (connect failures,
//! 408/429/5xx, a stream that broke before anything arrived) with exponential backoff or the
//! server's `Retry-After`, and feeds the SSE chunks to the [`Assembler`]. Text and reasoning
//! pieces and retry notices go out through a callback as they happen. Dropping the future
//! cancels the request at once (the connection is dropped with it).
//!
//! Two clocks watch a stream: a read that brings nothing for the idle timeout is a stall
//! ([`ClientError::Stalled`]); bytes that bring no part of the reply (SSE comments, blank
//! lines, Anthropic's `ping`, Responses status events, empty deltas) show the server is
//! there, but a reply that makes no progress ([`Assembler::progress`]) for the keep-alive
//! timeout is given up too ([`ClientError::KeptAlive`]); after the reply's finish it is
//! whole, and the stream ends there. Neither is retried. A reply that
//! grows past what rein keeps of one ([`Assembler::overflow`]: its bytes, its tool calls,
//! its parts) is stopped there ([`ClientError::ReplyTooLarge`], not retried either).

mod body;
mod config;
mod error;

use std::time::Duration;

use serde::Serialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

use super::events::Usage;
use super::sse::SseParser;
use super::stream::{body_error_message, AssembledReply, Assembler, ChunkError, StreamDelta};
use crate::context::budget::{tokens_at, DEFAULT_CHARS_PER_TOKEN};
use crate::conversation::wire::{wants_cache_markers, WireMessages, WireOptions};
use crate::conversation::{Api, Message, NativeOptions};
use body::{after, error_chain, read_body_within};
pub(crate) use body::{read_body, BodyEnd};
pub use config::{
    output_cap, sent_max_tokens, ClientConfig, AUTO_OUTPUT_TOKENS, DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_TRIES, KEEPALIVE_FACTOR, MAX_BODY_BYTES,
    MAX_ERROR_BODY_BYTES, MIN_AUTO_OUTPUT_TOKENS,
};
pub use error::ClientError;

/// What the client reports while a reply streams in.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientEvent<'a> {
    Delta(StreamDelta<'a>),
    Retrying {
        attempt: u32,
        max_attempts: u32,
        delay: Duration,
        reason: String,
    },
}

impl ClientEvent<'_> {
    /// The agent event for a retry, its reason prefixed with `who` (e.g. "subagent: ");
    /// `None` for a delta.
    pub(crate) fn retrying(self, who: &str) -> Option<super::events::AgentEvent> {
        match self {
            ClientEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                reason,
            } => Some(super::events::AgentEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                reason: format!("{who}{reason}"),
            }),
            ClientEvent::Delta(_) => None,
        }
    }
}

/// A client for one endpoint and model.
#[derive(Debug, Clone)]
pub struct LlmClient {
    http: reqwest::Client,
    config: ClientConfig,
    url: String,
}

#[derive(Serialize)]
struct RequestBody<'a> {
    model: &'a str,
    messages: WireMessages<'a>,
    #[serde(skip_serializing_if = "is_empty_array")]
    tools: &'a serde_json::Value,
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u64>,
}

fn is_empty_array(v: &serde_json::Value) -> bool {
    v.as_array().is_none_or(|a| a.is_empty())
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

/// One failed attempt: the error, and a delay the server asked for.
struct Failure {
    error: ClientError,
    retry_after: Option<Duration>,
}

impl From<ClientError> for Failure {
    fn from(error: ClientError) -> Self {
        Failure {
            error,
            retry_after: None,
        }
    }
}

impl LlmClient {
    pub fn new(config: ClientConfig) -> Result<Self, ClientError> {
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .user_agent(concat!("rein/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ClientError::Setup(e.to_string()))?;
        let url = endpoint(&config.base_url, config.api)?;
        Ok(LlmClient { http, config, url })
    }

    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// The same endpoint and settings with another model (a separate summariser).
    pub fn with_model(&self, model: &str) -> LlmClient {
        let mut client = self.clone();
        client.config.model = model.to_string();
        client
    }

    /// Stream one reply to `messages` (sent as [`crate::conversation::wire`] writes them).
    /// `tools` is the JSON array of tool schemas (may be empty). Cancel by dropping the
    /// future.
    pub async fn stream_chat(
        &self,
        messages: &[Message],
        tools: &serde_json::Value,
        on_event: &mut (dyn FnMut(ClientEvent<'_>) + Send),
    ) -> Result<AssembledReply, ClientError> {
        self.stream_chat_into(messages, tools, &mut Assembler::new(), on_event)
            .await
    }

    /// [`LlmClient::stream_chat`], assembling the reply in `assembler`: after a failure, or
    /// once the future is dropped, it holds what streamed ([`Assembler::take_streamed`]),
    /// so a caller keeps no copy of the text of its own.
    pub async fn stream_chat_into(
        &self,
        messages: &[Message],
        tools: &serde_json::Value,
        assembler: &mut Assembler,
        on_event: &mut (dyn FnMut(ClientEvent<'_>) + Send),
    ) -> Result<AssembledReply, ClientError> {
        let cap = self.config.max_output_tokens;
        self.stream_chat_capped(messages, tools, cap, assembler, on_event)
            .await
    }

    /// [`LlmClient::stream_chat_into`], sent with `max_tokens` (none: not sent) whatever
    /// the configuration says ([`output_cap`] works it out).
    pub async fn stream_chat_capped(
        &self,
        messages: &[Message],
        tools: &serde_json::Value,
        max_tokens: Option<u64>,
        assembler: &mut Assembler,
        on_event: &mut (dyn FnMut(ClientEvent<'_>) + Send),
    ) -> Result<AssembledReply, ClientError> {
        let max_tokens = sent_max_tokens(&self.config, max_tokens);
        let body = match self.config.api {
            Api::Chat => serde_json::to_vec(&RequestBody {
                model: &self.config.model,
                messages: self.wire(messages),
                tools,
                stream: true,
                stream_options: StreamOptions {
                    include_usage: true,
                },
                max_tokens,
            }),
            Api::Responses => serde_json::to_vec(&crate::conversation::responses::request(
                messages,
                tools,
                &self.native_options(max_tokens),
            )),
            Api::Anthropic => serde_json::to_vec(&crate::conversation::anthropic::request(
                messages,
                tools,
                &self.native_options(max_tokens),
            )),
        }
        .map_err(|e| ClientError::BadResponse(e.to_string()))?;
        let max = self.config.max_tries.max(1);
        let mut attempt = 1;
        loop {
            *assembler = Assembler::new();
            match self.attempt(&body, assembler, on_event).await {
                Ok(()) => {
                    let reasoning_chars = assembler.reasoning_len();
                    let mut reply = std::mem::take(assembler).finish();
                    if reply.usage.is_none() {
                        reply.usage =
                            Some(estimate_usage(messages, tools, &reply, reasoning_chars));
                    }
                    return Ok(reply);
                }
                Err(failure) => {
                    if attempt >= max || assembler.started() || !failure.error.retryable() {
                        return Err(failure.error);
                    }
                    let delay = failure
                        .retry_after
                        .unwrap_or_else(|| backoff(&self.config, attempt))
                        .min(Duration::from_secs(120));
                    attempt += 1;
                    on_event(ClientEvent::Retrying {
                        attempt,
                        max_attempts: max,
                        delay,
                        reason: failure.error.to_string(),
                    });
                    tokio::time::sleep(delay).await;
                }
            }
        }
    }

    /// What a native API's request is written with, for a reply of at most `max_tokens`.
    fn native_options(&self, max_tokens: Option<u64>) -> NativeOptions<'_> {
        NativeOptions {
            model: &self.config.model,
            max_tokens,
            images: self.config.images,
            cache_key: self.config.cache_key.as_deref(),
            cache_ttl: self.config.cache_ttl.as_deref(),
            reasoning_effort: self.config.reasoning_effort.as_deref(),
            thinking_budget: self.config.thinking_budget,
        }
    }

    /// Feed one SSE event's data (or a whole non-streaming body) to the reader of this
    /// client's API.
    fn read(
        &self,
        assembler: &mut Assembler,
        data: &str,
        on_delta: &mut dyn FnMut(StreamDelta<'_>),
    ) -> Result<(), ChunkError> {
        match self.config.api {
            Api::Chat => assembler.push(data, on_delta),
            Api::Responses => assembler.push_responses(data, on_delta),
            Api::Anthropic => assembler.push_anthropic(data, on_delta),
        }
    }

    /// How `messages` go out to this client's model.
    pub fn wire<'a>(&'a self, messages: &'a [Message]) -> WireMessages<'a> {
        WireMessages {
            history: messages,
            options: WireOptions {
                model: &self.config.model,
                cache_control: wants_cache_markers(&self.config.model),
                images: self.config.images,
            },
        }
    }

    async fn attempt(
        &self,
        body: &[u8],
        assembler: &mut Assembler,
        on_event: &mut (dyn FnMut(ClientEvent<'_>) + Send),
    ) -> Result<(), Failure> {
        let mut request = self
            .http
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .body(body.to_vec());
        match self.config.api {
            // Anthropic's own headers: the key and the API version.
            Api::Anthropic => {
                request = request.header("anthropic-version", ANTHROPIC_VERSION);
                if !self.config.api_key.is_empty() {
                    request = request.header("x-api-key", &self.config.api_key);
                }
            }
            Api::Chat | Api::Responses => {
                if !self.config.api_key.is_empty() {
                    request = request.bearer_auth(&self.config.api_key);
                }
            }
        }
        for (name, value) in &self.config.extra_headers {
            request = request.header(name, value);
        }
        let idle = self.config.idle_timeout;
        let quiet = self.config.keepalive_limit();
        let response = match tokio::time::timeout(idle, request.send()).await {
            Err(_) => return Err(ClientError::Stalled(idle).into()),
            Ok(Err(e)) => {
                if e.is_connect() {
                    if let Some(message) = self.plain_http_behind_https().await {
                        return Err(ClientError::BadUrl(message).into());
                    }
                }
                return Err(self.transport_error(e).into());
            }
            Ok(Ok(r)) => r,
        };
        let mut response = response;
        let status = response.status();
        if !status.is_success() {
            let retry_after = retry_after(response.headers());
            // Whatever arrived before a stall, a break or the cap is what there is to show.
            let limit = self.config.max_error_body_bytes;
            let (bytes, _) = read_body_within(&mut response, limit, idle, Some(quiet)).await;
            let text = String::from_utf8_lossy(&bytes);
            let reason = status.canonical_reason().unwrap_or("");
            return Err(Failure {
                error: ClientError::Http {
                    status: status.as_u16(),
                    message: format!("{reason}: {}", body_error_message(&text))
                        .trim_start_matches(": ")
                        .to_string(),
                },
                retry_after,
            });
        }
        let is_sse = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_none_or(|ct| ct.contains("event-stream"));
        if !is_sse {
            // A server that ignored `stream: true`: one JSON body with the whole message.
            let limit = self.config.max_body_bytes;
            let too_large = ClientError::TooLarge {
                what: "the model server's answer (not streamed)",
                limit,
            };
            if response.content_length().is_some_and(|n| n > limit as u64) {
                return Err(too_large.into());
            }
            let (bytes, end) = read_body_within(&mut response, limit, idle, Some(quiet)).await;
            match end {
                BodyEnd::Complete => {}
                BodyEnd::Capped => return Err(too_large.into()),
                BodyEnd::Failed(e) => return Err(e.into()),
            }
            let pushed = self
                .read(assembler, &String::from_utf8_lossy(&bytes), &mut |d| {
                    on_event(ClientEvent::Delta(d))
                })
                .map_err(|e| chunk_failure(e).into())
                .and_then(|()| self.bounded(assembler).map_err(Failure::from));
            on_event(ClientEvent::Delta(StreamDelta::Flush));
            return pushed;
        }
        // The idle clock restarts on every read, so SSE comments (`: ping`, OpenRouter's
        // `: OPENROUTER PROCESSING`) keep a slow stream from stalling though they carry no
        // event; the keep-alive clock restarts only when the reply makes progress.
        let mut parser = SseParser::new(self.config.max_event_bytes);
        let mut done = false;
        let mut progress = assembler.progress();
        let mut content_by = after(quiet);
        'reading: loop {
            let wait = idle.min(content_by.saturating_duration_since(Instant::now()));
            let bytes = match tokio::time::timeout(wait, response.chunk()).await {
                // Keep-alives came since the reply's last progress (a read with progress
                // would have left the whole idle timeout to wait); after the reply's finish
                // they are a server that does not close, and the reply is whole.
                Err(_) if wait < idle && assembler.finish_reason().is_some() => break,
                Err(_) if wait < idle => return Err(ClientError::KeptAlive(quiet).into()),
                Err(_) => return Err(ClientError::Stalled(idle).into()),
                Ok(Err(e)) => return Err(ClientError::StreamCut(error_chain(&e)).into()),
                Ok(Ok(None)) => break,
                Ok(Ok(Some(bytes))) => bytes,
            };
            parser.feed(&bytes).map_err(|e| ClientError::TooLarge {
                what: "one event from the model server",
                limit: e.limit,
            })?;
            while let Some(event) = parser.next_event() {
                let data = event.trim();
                if data.is_empty() {
                    continue;
                }
                if data == "[DONE]" && self.config.api == Api::Chat {
                    done = true;
                    break 'reading;
                }
                self.read(assembler, data, &mut |d| on_event(ClientEvent::Delta(d)))
                    .map_err(chunk_failure)?;
                self.bounded(assembler)?;
                // A native API's reply ends at its terminal event (`response.completed`,
                // `message_stop`): what follows is not read, the connection is dropped.
                if self.config.api != Api::Chat && assembler.finish_reason().is_some() {
                    break 'reading;
                }
            }
            if assembler.progress() != progress {
                progress = assembler.progress();
                content_by = after(quiet);
            } else if Instant::now() >= content_by {
                // Keep-alives that come faster than any timer fires.
                if assembler.finish_reason().is_some() {
                    break;
                }
                return Err(ClientError::KeptAlive(quiet).into());
            }
            // This read's pieces are out; the next read may wait.
            on_event(ClientEvent::Delta(StreamDelta::Flush));
        }
        on_event(ClientEvent::Delta(StreamDelta::Flush));
        let finished = done || assembler.finish_reason().is_some();
        if !finished {
            return Err(ClientError::StreamCut(
                "the connection closed before the reply was complete".to_string(),
            )
            .into());
        }
        Ok(())
    }

    /// The reply in `assembler` as far as it came, when it is within what rein keeps of
    /// one; else the error that stops it.
    fn bounded(&self, assembler: &Assembler) -> Result<(), ClientError> {
        match assembler.overflow(self.config.max_reply_bytes) {
            Some(overflow) => Err(ClientError::ReplyTooLarge(overflow)),
            None => Ok(()),
        }
    }

    /// After a failed connection to an `https://` URL: whether the server there speaks
    /// plain HTTP (it answers a plain request with `HTTP/`), and if so the message that
    /// says so. Without this the TLS handshake fails with "received corrupt message of
    /// type InvalidContentType", or waits for the connect timeout, and is retried.
    async fn plain_http_behind_https(&self) -> Option<String> {
        let url = reqwest::Url::parse(&self.url).ok()?;
        if url.scheme() != "https" {
            return None;
        }
        let host = url.host_str()?;
        let port = url.port_or_known_default()?;
        let address = format!("{host}:{port}");
        let probe = async {
            let mut stream = tokio::net::TcpStream::connect(&address).await.ok()?;
            let request = format!("GET / HTTP/1.0\r\nHost: {host}\r\n\r\n");
            stream.write_all(request.as_bytes()).await.ok()?;
            let mut head = [0u8; 5];
            stream.read_exact(&mut head).await.ok()?;
            Some(&head == b"HTTP/")
        };
        let plain = tokio::time::timeout(Duration::from_secs(3), probe)
            .await
            .ok()??;
        let base = self.config.base_url.trim();
        let fixed = base
            .strip_prefix("https://")
            .map(|rest| format!("http://{rest}"))
            .unwrap_or_else(|| "http://".to_string());
        plain.then(|| {
            format!(
                "the server at {address} answered plain HTTP to an https:// URL; use {fixed} as the base URL"
            )
        })
    }

    fn transport_error(&self, e: reqwest::Error) -> ClientError {
        let mut detail = error_chain(&e);
        if e.is_timeout() && e.is_connect() {
            detail = format!(
                "connect timed out after {} s",
                self.config.connect_timeout.as_secs()
            );
        }
        ClientError::Connect {
            url: self.url.clone(),
            detail,
        }
    }
}

fn chunk_failure(e: ChunkError) -> ClientError {
    match e {
        ChunkError::Server(m) => ClientError::Server(m),
        ChunkError::Busy(m) => ClientError::Busy(m),
        other @ (ChunkError::Malformed { .. } | ChunkError::Unexpected { .. }) => {
            ClientError::BadResponse(other.to_string())
        }
    }
}

/// Whether `base_url` can be a chat-completions endpoint: why not, in words, when it
/// cannot (checked before a session is made, so a typo is a configuration error).
pub fn check_base_url(base_url: &str) -> Result<(), String> {
    endpoint(base_url, Api::Chat)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The `anthropic-version` header sent to Anthropic's API.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The URL of `api` for `base_url`: `/chat/completions`, `/responses` or `/messages` after
/// its path, before any query (Azure's `?api-version=...`); a URL that is not `http` or
/// `https` is refused at once rather than retried.
fn endpoint(base_url: &str, api: Api) -> Result<String, ClientError> {
    let mut url = reqwest::Url::parse(base_url.trim()).map_err(|e| {
        ClientError::BadUrl(format!(
            "the base URL \"{base_url}\" is not a URL ({e}); write it as http://HOST:PORT/v1"
        ))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ClientError::BadUrl(format!(
            "the base URL \"{base_url}\" is not http:// or https://"
        )));
    }
    let tail = match api {
        Api::Chat => "/chat/completions",
        Api::Responses => "/responses",
        Api::Anthropic => "/messages",
    };
    let path = format!("{}{tail}", url.path().trim_end_matches('/'));
    url.set_path(&path);
    Ok(url.to_string())
}

/// The delay before attempt `attempt + 1`: base × 2^(attempt-1), capped.
fn backoff(config: &ClientConfig, attempt: u32) -> Duration {
    let factor = 1u32 << (attempt.saturating_sub(1)).min(16);
    config
        .base_backoff
        .saturating_mul(factor)
        .min(config.max_backoff)
}

/// `Retry-After` in seconds (or `retry-after-ms`); HTTP dates and absurd values are ignored.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
    };
    let seconds = number("retry-after-ms")
        .map(|ms| ms / 1000.0)
        .or_else(|| number("retry-after"))?;
    if (0.0..86_400.0).contains(&seconds) {
        Duration::try_from_secs_f64(seconds).ok()
    } else {
        None
    }
}

/// Usage estimated from the request and the reply when the server sent none.
fn estimate_usage(
    messages: &[Message],
    tools: &serde_json::Value,
    reply: &AssembledReply,
    reasoning_chars: usize,
) -> Usage {
    let tools_chars = if is_empty_array(tools) {
        0
    } else {
        tools.to_string().len()
    };
    let prompt_chars: usize =
        messages.iter().map(|m| m.approx_chars() + 8).sum::<usize>() + tools_chars;
    let completion_chars = reply.text.len()
        + reasoning_chars
        + reply
            .tool_calls
            .iter()
            .map(|c| c.function.name.len() + c.function.arguments.len())
            .sum::<usize>();
    let prompt = tokens_at(prompt_chars, DEFAULT_CHARS_PER_TOKEN);
    let completion = tokens_at(completion_chars, DEFAULT_CHARS_PER_TOKEN);
    Usage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
        cached_tokens: None,
        cache_write_tokens: None,
        estimated: true,
    }
}

#[cfg(test)]
mod tests;
