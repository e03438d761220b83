//! The HTTP client of a server rein logged in to: rmcp's `AuthClient` (it sends the
//! stored access token, refreshes it when it expires, and retries once after a silent
//! refresh when the server rejects it), wrapped so that where a person can answer (print
//! mode only: `rein mcp list` and the dashboard never open a browser by themselves), the
//! server's verdicts lead to the browser again:
//!
//! - a 401 that the refresh could not mend (a revoked refresh token, say): one new login
//!   for the connection ([`MAX_RELOGINS`]), then the request once more;
//! - a 403 `insufficient_scope`: one step-up authorization asking for the wider scope
//!   (what was granted plus what the challenge names), then the request once more; at
//!   most [`MAX_STEP_UPS`] for the connection, so a server that always wants more cannot
//!   keep the browser opening.
//!
//! In the dashboard no browser opens by itself: the error stands, `/mcp` shows the server
//! needs a login, and `/mcp login NAME` logs in.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use futures_util::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{AuthClient, AuthorizationManager};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use super::flow::{self, Prompt, Target};

/// The most step-up authorizations one connection asks for.
pub const MAX_STEP_UPS: u32 = 2;
/// The most new logins after a 401 one connection asks for.
pub const MAX_RELOGINS: u32 = 1;

type Inner = AuthClient<reqwest013::Client>;
type Error = StreamableHttpError<reqwest013::Error>;

/// Who answers when the server wants a new login: the server's login settings and how
/// to show the URL.
pub struct Relogin {
    pub target: Target,
    pub prompt: Box<dyn Prompt>,
}

/// rmcp's `AuthClient`, and the re-login where a person can answer.
#[derive(Clone)]
pub struct OAuthHttpClient {
    inner: Inner,
    relogin: Option<Arc<Relogin>>,
    step_ups: Arc<AtomicU32>,
    relogins: Arc<AtomicU32>,
}

impl OAuthHttpClient {
    pub fn new(manager: AuthorizationManager, relogin: Option<Relogin>) -> OAuthHttpClient {
        OAuthHttpClient {
            inner: AuthClient::new(reqwest013::Client::new(), manager),
            relogin: relogin.map(Arc::new),
            step_ups: Arc::new(AtomicU32::new(0)),
            relogins: Arc::new(AtomicU32::new(0)),
        }
    }

    /// After `error`, log in again (a 401) or step up (a 403 `insufficient_scope`) when
    /// that is allowed; whether the request is worth sending once more.
    async fn recover(&self, error: &Error) -> bool {
        let Some(relogin) = &self.relogin else {
            return false;
        };
        let (challenge, wider) = match error {
            StreamableHttpError::AuthRequired(e) => {
                if self.relogins.fetch_add(1, Ordering::SeqCst) >= MAX_RELOGINS {
                    relogin.prompt.note(&format!(
                        "the MCP server {:?} refused the token again; rein does not open the browser a second time (`rein mcp login {}` logs in)",
                        relogin.target.name, relogin.target.name
                    ));
                    return false;
                }
                (e.www_authenticate_header.clone(), None)
            }
            StreamableHttpError::InsufficientScope(e) => {
                if self.step_ups.fetch_add(1, Ordering::SeqCst) >= MAX_STEP_UPS {
                    relogin.prompt.note(&format!(
                        "the MCP server {:?} asks for a wider scope again; rein stopped after {MAX_STEP_UPS} step-up logins",
                        relogin.target.name
                    ));
                    return false;
                }
                (
                    e.www_authenticate_header.clone(),
                    Some(e.required_scope.clone().unwrap_or_default()),
                )
            }
            _ => return false,
        };
        let mut manager = self.inner.auth_manager.lock().await;
        let scope = wider.or_else(|| scope_of(&challenge));
        let scopes = manager.select_scopes(scope.as_deref().filter(|s| !s.is_empty()), &[]);
        relogin.prompt.note(&format!(
            "the MCP server {:?} asks for a new login{}",
            relogin.target.name,
            if scopes.is_empty() {
                String::new()
            } else {
                format!(" (scope {})", scopes.join(" "))
            }
        ));
        match flow::authorize(
            &mut manager,
            &relogin.target,
            &scopes,
            false,
            relogin.prompt.as_ref(),
        )
        .await
        {
            Ok(()) => true,
            Err(why) => {
                relogin.prompt.note(&format!("the login failed: {why}"));
                false
            }
        }
    }
}

/// The `scope` of a `WWW-Authenticate` challenge.
fn scope_of(challenge: &str) -> Option<String> {
    let at = challenge.find("scope=\"")? + "scope=\"".len();
    let rest = &challenge[at..];
    Some(rest[..rest.find('"')?].to_string())
}

impl StreamableHttpClient for OAuthHttpClient {
    type Error = reqwest013::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let first = self
            .inner
            .post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header,
                custom_headers.clone(),
            )
            .await;
        match first {
            Err(error) if self.recover(&error).await => {
                self.inner
                    .post_message(uri, message, session_id, None, custom_headers)
                    .await
            }
            other => other,
        }
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let first = self
            .inner
            .post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header,
                custom_headers.clone(),
                limits,
            )
            .await;
        match first {
            Err(error) if self.recover(&error).await => {
                self.inner
                    .post_message_with_response_limits(
                        uri,
                        message,
                        session_id,
                        None,
                        custom_headers,
                        limits,
                    )
                    .await
            }
            other => other,
        }
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<sse_stream::Sse, SseError>>, Error> {
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<sse_stream::Sse, SseError>>, Error> {
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }
}

/// rmcp's reqwest (0.13), as its streamable HTTP transport uses it.
mod reqwest013 {
    pub use ::reqwest013::{Client, Error};
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_scope_of_a_challenge() {
        assert_eq!(
            super::scope_of(r#"Bearer error="insufficient_scope", scope="read write""#),
            Some("read write".into())
        );
        assert_eq!(super::scope_of("Bearer realm=\"x\""), None);
    }
}
