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

use std::time::Duration;

use serde::Serialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

use super::events::Usage;
use super::sse::{size, SseParser, MAX_EVENT_BYTES};
use super::stream::{
    body_error_message, AssembledReply, Assembler, ChunkError, Overflow, StreamDelta,
    MAX_REPLY_BYTES,
};
use crate::context::budget::{tokens_at, DEFAULT_CHARS_PER_TOKEN};
use crate::conversation::wire::{wants_cache_markers, WireMessages, WireOptions};
use crate::conversation::{Api, Message, NativeOptions};

/// Where and how to reach the model.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// e.g. `https://api.openai.com/v1`; the API's path (`/chat/completions`,
    /// `/responses`, `/messages`) is appended.
    pub base_url: String,
    /// The wire API the model is spoken to in.
    pub api: Api,
    /// Responses: the `prompt_cache_key` (the session's id), so requests of one session
    /// reach the same cache.
    pub cache_key: Option<String>,
    /// Anthropic: the cache breakpoints' time to live (`"1h"`; none: the API's 5 minutes).
    pub cache_ttl: Option<String>,
    /// Responses: the `reasoning.effort` of a model that reasons (none: not sent).
    pub reasoning_effort: Option<String>,
    /// Anthropic: the thinking budget in tokens of a model that thinks (none: off).
    pub thinking_budget: Option<u64>,
    /// The most tokens the model's reply may have (none: not known).
    pub output_limit: Option<u64>,
    pub api_key: String,
    /// The model id sent to the server.
    pub model: String,
    /// The model as the user names it, provider prefix included (`ollama/qwen3-coder`):
    /// what the session file records and a resumed session is resolved by. The id by
    /// default.
    pub name: String,
    /// A stream that sends nothing for this long is given up.
    pub idle_timeout: Duration,
    /// A stream that sends only keep-alives, no part of the reply, for this long is given
    /// up (none: [`KEEPALIVE_FACTOR`] times the idle timeout; never less than it).
    pub keepalive_timeout: Option<Duration>,
    pub connect_timeout: Duration,
    /// Attempts per request, the first included.
    pub max_tries: u32,
    /// Sent as `max_tokens` when set: the most tokens a reply may have.
    pub max_output_tokens: Option<u64>,
    /// Without `max_output_tokens`, the agent caps each request whose window is known at
    /// what is left of it, at most [`AUTO_OUTPUT_TOKENS`] ([`output_cap`]); off when the
    /// user set `client.max_output_tokens = 0`.
    pub auto_output_cap: bool,
    /// The first retry's delay; each later one doubles, up to `max_backoff`.
    pub base_backoff: Duration,
    pub max_backoff: Duration,
    /// Extra HTTP headers sent with every request (a provider's, e.g. OpenRouter's
    /// `HTTP-Referer` and `X-Title`).
    pub extra_headers: Vec<(String, String)>,
    /// The most bytes one SSE event may hold ([`MAX_EVENT_BYTES`]).
    pub max_event_bytes: usize,
    /// The most bytes one reply may hold, all its parts together ([`MAX_REPLY_BYTES`];
    /// see [`Assembler::held`]).
    pub max_reply_bytes: usize,
    /// The most bytes of a non-streaming (plain JSON) answer ([`MAX_BODY_BYTES`]).
    pub max_body_bytes: usize,
    /// The most bytes read of an error answer's body; the rest is not read
    /// ([`MAX_ERROR_BODY_BYTES`]).
    pub max_error_body_bytes: usize,
    /// The model takes images: those tool results carry are sent, not only described.
    pub images: bool,
}

/// `client.idle_timeout_secs` unless configured: the longest silence a reply may have.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// `client.keepalive_timeout_secs` unless configured: this many idle timeouts (4 minutes
/// by default), so a model that thinks for minutes behind a gateway's keep-alives is
/// waited for.
pub const KEEPALIVE_FACTOR: u32 = 2;
/// `client.connect_timeout_secs` unless configured.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// `client.max_tries` unless configured: attempts per request, the first included.
pub const DEFAULT_MAX_TRIES: u32 = 5;
/// The most tokens a reply is given by default when the window is known ([`output_cap`]).
pub const AUTO_OUTPUT_TOKENS: u64 = 32_768;
/// The least a default output cap gives, however full the window.
pub const MIN_AUTO_OUTPUT_TOKENS: u64 = 1_024;

/// The `max_tokens` a request is sent with: the configured one; else, when the default cap
/// is on and the `window` is known, what is left of it once the request's `used` tokens
/// (and a tenth more, for the estimate's error) are in, between
/// [`MIN_AUTO_OUTPUT_TOKENS`] and [`AUTO_OUTPUT_TOKENS`]. A local server then stops at the
/// cap instead of generating until its context is full.
pub fn output_cap(config: &ClientConfig, window: Option<u64>, used: u64) -> Option<u64> {
    if config.max_output_tokens.is_some() || !config.auto_output_cap {
        return config.max_output_tokens;
    }
    let left = window?.saturating_sub(used.saturating_add(used / 10));
    Some(left.clamp(MIN_AUTO_OUTPUT_TOKENS, AUTO_OUTPUT_TOKENS))
}

/// The reply limit a request is sent with when `asked` was asked for: never more than the
/// model can give; Anthropic, which needs a figure, the model's limit when nothing was
/// asked (its wire writes a default when the limit is not known either).
pub fn sent_max_tokens(config: &ClientConfig, asked: Option<u64>) -> Option<u64> {
    match (asked, config.output_limit) {
        (Some(asked), Some(limit)) => Some(asked.min(limit)),
        (None, Some(limit)) if config.api == Api::Anthropic => Some(limit),
        (asked, _) => asked,
    }
}

/// The most bytes of a non-streaming answer read by default: 64 MiB.
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;
/// The most bytes of an error body read by default: 1 MiB (its message is one line).
pub const MAX_ERROR_BODY_BYTES: usize = 1024 * 1024;

impl ClientConfig {
    /// How long a stream may send only keep-alives: the configured time, else
    /// [`KEEPALIVE_FACTOR`] idle timeouts; never less than the idle timeout.
    pub fn keepalive_limit(&self) -> Duration {
        let idle = self.idle_timeout;
        self.keepalive_timeout
            .unwrap_or_else(|| idle.saturating_mul(KEEPALIVE_FACTOR))
            .max(idle)
    }

    /// Speak to the model as `settings` say.
    pub fn set_api(&mut self, settings: &crate::conversation::ApiSettings) {
        self.api = settings.api;
        self.reasoning_effort = settings.reasoning_effort.clone();
        self.thinking_budget = settings.thinking_budget;
        self.cache_ttl = settings.cache_ttl.clone();
        self.output_limit = settings.output_limit;
    }

    pub fn new(
        base_url: impl Into<String>,
        api_key: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        let model = model.into();
        ClientConfig {
            base_url: base_url.into(),
            api: Api::Chat,
            cache_key: None,
            cache_ttl: None,
            reasoning_effort: None,
            thinking_budget: None,
            output_limit: None,
            api_key: api_key.into(),
            name: model.clone(),
            model,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            keepalive_timeout: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            max_tries: DEFAULT_MAX_TRIES,
            max_output_tokens: None,
            auto_output_cap: false,
            base_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(30),
            extra_headers: Vec::new(),
            max_event_bytes: MAX_EVENT_BYTES,
            max_reply_bytes: MAX_REPLY_BYTES,
            max_body_bytes: MAX_BODY_BYTES,
            max_error_body_bytes: MAX_ERROR_BODY_BYTES,
            images: false,
        }
    }
}

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

/// Why a reply could not be had. Each message tells the user what happened in one line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClientError {
    #[error("the model server answered {status}: {message}")]
    Http { status: u16, message: String },
    #[error("cannot reach the model server at {url}: {detail}")]
    Connect { url: String, detail: String },
    #[error("the model server reported an error: {0}")]
    Server(String),
    /// An error the server reported inside its stream that says to try again later (a
    /// rate limit, an overload): retried like a 429 or 529.
    #[error("the model server is busy: {0}")]
    Busy(String),
    #[error("the reply stream broke off: {0}")]
    StreamCut(String),
    #[error(
        "the model server sent nothing for {} and was given up on (client.idle_timeout_secs)",
        seconds(*.0)
    )]
    Stalled(Duration),
    /// Bytes kept coming, but no part of the reply, for the keep-alive timeout (not
    /// retried, as a stall is not).
    #[error(
        "the model server sent only keep-alives, no part of the reply, for {} and was given \
         up on (client.keepalive_timeout_secs)",
        seconds(*.0)
    )]
    KeptAlive(Duration),
    /// The reply grew past what rein keeps of one (not retried: the model would most
    /// likely do it again).
    #[error("{0}; it was stopped there")]
    ReplyTooLarge(Overflow),
    #[error("{0}")]
    BadResponse(String),
    #[error("cannot build the HTTP client: {0}")]
    Setup(String),
    /// The base URL cannot be an endpoint (a config error, not retried).
    #[error("{0}")]
    BadUrl(String),
    /// One SSE event, or a non-streaming answer, was larger than rein reads (not retried:
    /// the server would most likely send it again).
    #[error(
        "{what} exceeded {}, the most rein reads; the reply was stopped there",
        size(*.limit)
    )]
    TooLarge { what: &'static str, limit: usize },
}

impl ClientError {
    /// Failures worth another try. A stream that already showed text is not retried (the
    /// user would see it twice); the caller only asks for failures before the first delta.
    fn retryable(&self) -> bool {
        match self {
            ClientError::Http { status, .. } => matches!(status, 408 | 409 | 425 | 429 | 500..=599),
            ClientError::Connect { .. } | ClientError::StreamCut(_) | ClientError::Busy(_) => true,
            // A server that went quiet for the whole idle timeout would most likely do it
            // again; retrying would multiply a two-minute wait.
            ClientError::Stalled(_)
            | ClientError::KeptAlive(_)
            | ClientError::ReplyTooLarge(_)
            | ClientError::Server(_)
            | ClientError::BadResponse(_)
            | ClientError::Setup(_)
            | ClientError::BadUrl(_)
            | ClientError::TooLarge { .. } => false,
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

/// How reading a body ended.
pub(crate) enum BodyEnd {
    Complete,
    /// The body went past the limit; what was read stops at it.
    Capped,
    /// A read stalled for the idle timeout or failed.
    Failed(ClientError),
}

/// At most `limit` bytes of `response`'s body, each read within `idle`; the rest is never
/// read (an endless body costs `limit` bytes of memory, not all of it).
pub(crate) async fn read_body(
    response: &mut reqwest::Response,
    limit: usize,
    idle: Duration,
) -> (Vec<u8>, BodyEnd) {
    read_body_within(response, limit, idle, None).await
}

/// [`read_body`], the whole body within `total` when one is given: a body that trickles
/// in (a byte a second) fails there with [`ClientError::KeptAlive`], what came kept.
async fn read_body_within(
    response: &mut reqwest::Response,
    limit: usize,
    idle: Duration,
    total: Option<Duration>,
) -> (Vec<u8>, BodyEnd) {
    let end_by = total.map(after);
    let mut body = Vec::new();
    loop {
        let wait = end_by.map_or(idle, |end| {
            idle.min(end.saturating_duration_since(Instant::now()))
        });
        let bytes = match tokio::time::timeout(wait, response.chunk()).await {
            Err(_) if wait < idle => {
                let total = total.unwrap_or(idle);
                return (body, BodyEnd::Failed(ClientError::KeptAlive(total)));
            }
            Err(_) => return (body, BodyEnd::Failed(ClientError::Stalled(idle))),
            Ok(Err(e)) => {
                return (
                    body,
                    BodyEnd::Failed(ClientError::StreamCut(error_chain(&e))),
                )
            }
            Ok(Ok(None)) => return (body, BodyEnd::Complete),
            Ok(Ok(Some(bytes))) => bytes,
        };
        let room = limit - body.len();
        if bytes.len() > room {
            body.extend_from_slice(&bytes[..room]);
            return (body, BodyEnd::Capped);
        }
        body.extend_from_slice(&bytes);
    }
}

/// The instant `d` from now (far in the future when that cannot be told).
fn after(d: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(d)
        .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 86_400))
}

/// An error with its sources, each once: "error decoding response body: invalid gzip
/// header".
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut detail = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !detail.contains(&s_text) {
            detail.push_str(": ");
            detail.push_str(&s_text);
        }
        source = s.source();
    }
    detail
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

/// A duration in words for messages: "120 s", "300 ms".
fn seconds(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{} s", d.as_secs())
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
mod tests {
    use super::*;

    #[test]
    fn the_default_output_cap_is_what_is_left_of_a_known_window() {
        let mut config = ClientConfig::new("http://x/v1", "", "m");
        config.auto_output_cap = true;
        assert_eq!(output_cap(&config, Some(8_000), 5_000), Some(2_500));
        assert_eq!(
            output_cap(&config, Some(200_000), 5_000),
            Some(AUTO_OUTPUT_TOKENS)
        );
        // However full the window, a reply gets room to say something.
        assert_eq!(
            output_cap(&config, Some(8_000), 7_900),
            Some(MIN_AUTO_OUTPUT_TOKENS)
        );
        assert_eq!(output_cap(&config, None, 5_000), None);
        config.max_output_tokens = Some(100);
        assert_eq!(output_cap(&config, Some(8_000), 5_000), Some(100));
        config.max_output_tokens = None;
        config.auto_output_cap = false;
        assert_eq!(output_cap(&config, Some(8_000), 5_000), None);
    }

    #[test]
    fn the_endpoint_goes_before_the_query_and_odd_urls_are_refused() {
        assert_eq!(
            endpoint("https://api.openai.com/v1/", Api::Chat).unwrap(),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(
            endpoint(
                "https://x.openai.azure.com/openai/deployments/d?api-version=2024-10-21",
                Api::Chat
            )
                .unwrap(),
            "https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21"
        );
        assert_eq!(
            endpoint("http://127.0.0.1:8080", Api::Chat).unwrap(),
            "http://127.0.0.1:8080/chat/completions"
        );
        assert!(endpoint("localhost:8080/v1", Api::Chat)
            .unwrap_err()
            .to_string()
            .contains("http"));
        assert!(endpoint("ftp://host/v1", Api::Chat)
            .unwrap_err()
            .to_string()
            .contains("http"));
        assert!(endpoint("not a url", Api::Chat).is_err());
        // The native APIs' paths, before the query too.
        assert_eq!(
            endpoint("https://api.openai.com/v1", Api::Responses).unwrap(),
            "https://api.openai.com/v1/responses"
        );
        assert_eq!(
            endpoint("https://api.anthropic.com/v1/", Api::Anthropic).unwrap(),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            endpoint(
                "https://x.azure.com/openai/v1?api-version=preview",
                Api::Responses
            )
            .unwrap(),
            "https://x.azure.com/openai/v1/responses?api-version=preview"
        );
    }

    #[test]
    fn a_request_never_asks_more_than_the_model_gives() {
        let mut c = ClientConfig::new("http://x", "", "m");
        assert_eq!(sent_max_tokens(&c, None), None);
        assert_eq!(sent_max_tokens(&c, Some(40_000)), Some(40_000));
        c.output_limit = Some(32_000);
        assert_eq!(sent_max_tokens(&c, Some(40_000)), Some(32_000));
        assert_eq!(sent_max_tokens(&c, Some(1_000)), Some(1_000));
        assert_eq!(
            sent_max_tokens(&c, None),
            None,
            "chat: nothing asked, nothing sent"
        );
        c.api = Api::Anthropic;
        assert_eq!(sent_max_tokens(&c, None), Some(32_000));
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let mut c = ClientConfig::new("http://x", "", "m");
        c.base_backoff = Duration::from_millis(500);
        c.max_backoff = Duration::from_secs(3);
        assert_eq!(backoff(&c, 1), Duration::from_millis(500));
        assert_eq!(backoff(&c, 2), Duration::from_secs(1));
        assert_eq!(backoff(&c, 3), Duration::from_secs(2));
        assert_eq!(backoff(&c, 4), Duration::from_secs(3));
        assert_eq!(backoff(&c, 40), Duration::from_secs(3));
    }

    #[test]
    fn retry_after_header_forms() {
        let mut h = reqwest::header::HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
        h.insert("retry-after-ms", "1e30".parse().unwrap());
        assert_eq!(
            retry_after(&h),
            None,
            "absurd values are ignored, not a panic"
        );
        h.insert("retry-after-ms", "NaN".parse().unwrap());
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after-ms", "-5".parse().unwrap());
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn what_is_retried() {
        let http = |status| ClientError::Http {
            status,
            message: String::new(),
        };
        assert!(http(429).retryable());
        assert!(http(503).retryable());
        assert!(!http(401).retryable());
        assert!(!http(400).retryable());
        assert!(!ClientError::Server("x".into()).retryable());
    }
}
