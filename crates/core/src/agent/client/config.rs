//! Where and how to reach the model ([`ClientConfig`]), the defaults of its timeouts,
//! tries and read limits, and the reply limit a request is sent with ([`output_cap`],
//! [`sent_max_tokens`]).

use std::time::Duration;

use crate::agent::sse::MAX_EVENT_BYTES;
use crate::agent::stream::MAX_REPLY_BYTES;
use crate::conversation::Api;

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
    /// see [`Assembler::held`](crate::agent::stream::Assembler::held)).
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
