//! Reading a response's body with a cap on its bytes and a clock on each read (and, for
//! an error's body, on the whole), and the error text of a transport failure.

use std::time::Duration;

use tokio::time::Instant;

use super::error::ClientError;

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
pub(super) async fn read_body_within(
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
pub(super) fn after(d: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(d)
        .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 86_400))
}

/// An error with its sources, each once: "error decoding response body: invalid gzip
/// header".
pub(super) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
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
