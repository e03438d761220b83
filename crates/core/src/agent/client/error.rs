//! Why a reply could not be had ([`ClientError`]), each message one line for the user, and
//! which failures are worth another try.

use std::time::Duration;

use crate::agent::sse::size;
use crate::agent::stream::Overflow;

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
    pub(super) fn retryable(&self) -> bool {
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

/// A duration in words for messages: "120 s", "300 ms".
fn seconds(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{} s", d.as_secs())
    }
}
