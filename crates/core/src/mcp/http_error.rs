//! What went wrong with one HTTP request to a streamable HTTP server, in plain words.
//!
//! rmcp reports a failed POST as a transport error whose text names Rust types ("Send
//! message error Transport [rmcp::transport::worker::WorkerTransport<…>] error: HTTP
//! 500"). Here its parts become one line, as rein words the model endpoint's errors: the
//! status and its reason, the page's title or message where rmcp kept the page (it reads
//! the body of a 4xx answer, not of a 5xx one), an answer over rmcp's size limit, or a
//! server that cannot be reached. The caller puts the server's name and URL in front.

use std::error::Error;

use rmcp::transport::streamable_http_client::HttpStatusError;
use rmcp::transport::DynamicTransportError;

/// One failed request, described.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum HttpProblem {
    /// An HTTP error status, with the message of its page when rmcp kept the page.
    Status { code: u16, message: Option<String> },
    /// The answer was larger than rmcp reads (`limit` bytes).
    TooLarge { limit: Option<usize> },
    /// No connection: what the system said.
    Unreachable(String),
    /// Anything else: rmcp's words, without its type names.
    Other(String),
}

impl HttpProblem {
    /// Read `error`, a transport error of rmcp's HTTP client.
    pub(super) fn of(error: &DynamicTransportError) -> HttpProblem {
        let inner: &(dyn Error + 'static) = error.error.as_ref();
        let mut chain = Some(inner);
        let mut innermost = inner;
        while let Some(e) = chain {
            if let Some(status) = e.downcast_ref::<HttpStatusError>() {
                return HttpProblem::Status {
                    code: status.status,
                    message: None,
                };
            }
            if let Some(io) = e.downcast_ref::<std::io::Error>() {
                use std::io::ErrorKind::*;
                if matches!(
                    io.kind(),
                    ConnectionRefused | ConnectionReset | ConnectionAborted | TimedOut | NotFound
                ) {
                    return HttpProblem::Unreachable(io.to_string());
                }
            }
            innermost = e;
            chain = e.source();
        }
        let text = inner.to_string();
        // rmcp's status error is `transparent`: its text, not a source to find.
        if let Some(code) = text
            .strip_prefix("HTTP ")
            .filter(|c| c.len() == 3)
            .and_then(|c| c.parse::<u16>().ok())
        {
            return HttpProblem::Status {
                code,
                message: None,
            };
        }
        if let Some(rest) = text.strip_prefix("HTTP response body exceeded the maximum size of ") {
            let limit = rest.split(' ').next().and_then(|n| n.parse::<usize>().ok());
            return HttpProblem::TooLarge { limit };
        }
        // reqwest's words for a request that got no answer (no server there, a name that
        // does not resolve, a TLS failure); rmcp keeps them without their cause.
        if text.starts_with("Client error: error sending request") {
            return HttpProblem::Unreachable("the request could not be sent".into());
        }
        // rmcp keeps a 4xx page: "unexpected server response: HTTP 400 Bad Request: <page>".
        if let Some((code, rest)) = text
            .strip_prefix("unexpected server response: HTTP ")
            .and_then(|rest| rest.split_once(' '))
        {
            if let Ok(code) = code.parse::<u16>() {
                let message = rest
                    .split_once(": ")
                    .map(|(_, page)| crate::agent::stream::body_error_message(page));
                return HttpProblem::Status { code, message };
            }
        }
        let words = innermost.to_string();
        if words.trim().is_empty() {
            HttpProblem::Other(text)
        } else {
            HttpProblem::Other(words)
        }
    }

    /// The problem after the server's name and URL: `what` is the request ("the call",
    /// "initialize").
    pub(super) fn describe(&self, what: &str) -> String {
        match self {
            HttpProblem::Status { code, message } => {
                let reason = reqwest::StatusCode::from_u16(*code)
                    .ok()
                    .and_then(|s| s.canonical_reason())
                    .map(|r| format!(" {r}"))
                    .unwrap_or_default();
                match message {
                    Some(m) if !m.is_empty() => {
                        format!("answered {what} with HTTP {code}{reason}: {m}")
                    }
                    _ => format!("answered {what} with HTTP {code}{reason}"),
                }
            }
            HttpProblem::TooLarge { limit } => format!(
                "sent an answer larger than {}, the most rein reads of one answer; {what} failed",
                super::result::size(limit.unwrap_or(super::stdio::MAX_MESSAGE_BYTES))
            ),
            HttpProblem::Unreachable(why) => format!("could not be reached ({why})"),
            HttpProblem::Other(why) => format!("failed {what}: {why}"),
        }
    }
}

/// A failed request of the server's at `url` (an HTTP server's; `None` over stdio) in one
/// line: `what` is the request (`tools/list`).
pub(super) fn request_failed(error: &rmcp::ServiceError, url: Option<&str>, what: &str) -> String {
    match (error, url) {
        (rmcp::ServiceError::TransportSend(e), Some(url)) => {
            format!("{url} {}", HttpProblem::of(e).describe(what))
        }
        _ => format!("{what} failed: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(error: impl Error + Send + Sync + 'static) -> HttpProblem {
        HttpProblem::of(&DynamicTransportError::from_parts(
            "rmcp::transport::worker::WorkerTransport<…>",
            std::any::TypeId::of::<()>(),
            Box::new(error),
        ))
    }

    #[derive(Debug, thiserror::Error)]
    #[error("{0}")]
    struct Said(String);

    #[test]
    fn statuses_pages_sizes_and_the_rest_in_plain_words() {
        let status = problem(HttpStatusError::new(502, None));
        assert_eq!(
            status.describe("the call"),
            "answered the call with HTTP 502 Bad Gateway"
        );
        // As rmcp sends it: inside its own error, which is `transparent`.
        let wrapped = problem(Said("HTTP 500".into()));
        assert_eq!(
            wrapped.describe("the call"),
            "answered the call with HTTP 500 Internal Server Error"
        );
        let page = problem(Said(
            "unexpected server response: HTTP 403 Forbidden: <html><head><title>Denied by policy</title></head></html>".into(),
        ));
        assert_eq!(
            page.describe("initialize"),
            "answered initialize with HTTP 403 Forbidden: Denied by policy"
        );
        let big = problem(Said(
            "HTTP response body exceeded the maximum size of 16777216 bytes".into(),
        ));
        assert_eq!(
            big.describe("the call"),
            "sent an answer larger than 16.0 MiB, the most rein reads of one answer; the call failed"
        );
        let refused = problem(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert!(matches!(refused, HttpProblem::Unreachable(_)));
        let unsent = problem(Said(
            "Client error: error sending request for url (http://127.0.0.1:9/mcp)".into(),
        ));
        assert_eq!(
            unsent.describe("initialize"),
            "could not be reached (the request could not be sent)"
        );
        let other = problem(Said("Session expired (HTTP 404)".into()));
        assert_eq!(
            other.describe("the call"),
            "failed the call: Session expired (HTTP 404)"
        );
    }
}
