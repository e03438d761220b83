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
    use std::sync::Mutex;
    use std::time::Duration;

    use rmcp::transport::auth::AuthorizationMetadata;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    /// How the fake MCP server answers `/mcp`.
    #[derive(Clone, Copy)]
    enum Verdict {
        /// 202 to the first request that carries the first token issued, 401 to all else.
        TheFirstTokenOnce,
        /// 403 `insufficient_scope` (wanting `files:write`) to everything.
        WantsScope,
    }

    /// A fake MCP server on 127.0.0.1 that is also its own token endpoint (`/token`,
    /// issuing `tok-1`, `tok-2`, …, no refresh token); it records each request's method,
    /// path and `Authorization`.
    struct Fake {
        port: u16,
        seen: Arc<Mutex<Vec<Seen>>>,
    }

    /// A request's method and path, and its `Authorization`.
    type Seen = (String, Option<String>);

    impl Fake {
        async fn start(verdict: Verdict) -> Fake {
            let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
            let port = listener.local_addr().unwrap().port();
            let seen = Arc::new(Mutex::new(Vec::new()));
            let book = seen.clone();
            tokio::spawn(async move {
                let issued = Arc::new(AtomicU32::new(0));
                let accepted = Arc::new(AtomicU32::new(0));
                loop {
                    let (mut stream, _) = listener.accept().await.unwrap();
                    let mut request = Vec::new();
                    let mut buf = [0u8; 4096];
                    let head_end = loop {
                        let n = stream.read(&mut buf).await.unwrap();
                        request.extend_from_slice(&buf[..n]);
                        if let Some(at) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                            break at + 4;
                        }
                        assert!(n > 0, "the request ended within its head");
                    };
                    let head = String::from_utf8_lossy(&request[..head_end]).into_owned();
                    let header = |name: &str| {
                        head.lines().find_map(|line| {
                            let (key, value) = line.split_once(':')?;
                            key.eq_ignore_ascii_case(name)
                                .then(|| value.trim().to_string())
                        })
                    };
                    let length: usize = header("content-length").map_or(0, |l| l.parse().unwrap());
                    while request.len() < head_end + length {
                        let n = stream.read(&mut buf).await.unwrap();
                        assert!(n > 0, "the request ended within its body");
                        request.extend_from_slice(&buf[..n]);
                    }
                    let mut words = head.split(' ');
                    let method = words.next().unwrap_or("").to_string();
                    let path = words.next().unwrap_or("").to_string();
                    let auth = header("authorization");
                    book.lock()
                        .unwrap()
                        .push((format!("{method} {path}"), auth.clone()));
                    let (status, extra, body) = if path == "/token" {
                        let n = issued.fetch_add(1, Ordering::SeqCst) + 1;
                        (
                            "200 OK",
                            "Content-Type: application/json\r\n".to_string(),
                            format!(
                                r#"{{"access_token":"tok-{n}","token_type":"Bearer","expires_in":3600}}"#
                            ),
                        )
                    } else {
                        match verdict {
                            Verdict::TheFirstTokenOnce
                                if auth.as_deref() == Some("Bearer tok-1")
                                    && accepted.fetch_add(1, Ordering::SeqCst) == 0 =>
                            {
                                ("202 Accepted", String::new(), String::new())
                            }
                            Verdict::TheFirstTokenOnce => (
                                "401 Unauthorized",
                                "WWW-Authenticate: Bearer scope=\"read\"\r\n".to_string(),
                                String::new(),
                            ),
                            Verdict::WantsScope => (
                                "403 Forbidden",
                                "WWW-Authenticate: Bearer error=\"insufficient_scope\", scope=\"files:write\"\r\n".to_string(),
                                String::new(),
                            ),
                        }
                    };
                    let answer = format!(
                        "HTTP/1.1 {status}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(answer.as_bytes()).await;
                    let _ = stream.shutdown().await;
                }
            });
            Fake { port, seen }
        }

        fn url(&self) -> String {
            format!("http://127.0.0.1:{}/mcp", self.port)
        }

        /// The `Authorization` of each request to `/mcp` with `method`.
        fn to_mcp(&self, method: &str) -> Vec<Option<String>> {
            let wanted = format!("{method} /mcp");
            self.seen
                .lock()
                .unwrap()
                .iter()
                .filter(|(what, _)| *what == wanted)
                .map(|(_, auth)| auth.clone())
                .collect()
        }
    }

    /// The person at the terminal: records the URLs and notes, and as a browser would,
    /// sends the authorization server's answer (a code and the URL's `state`) to the URL's
    /// `redirect_uri`.
    #[derive(Clone, Default)]
    struct Person {
        urls: Arc<Mutex<Vec<String>>>,
        notes: Arc<Mutex<Vec<String>>>,
    }

    impl Prompt for Person {
        fn url(&self, url: &str) {
            self.urls.lock().unwrap().push(url.to_string());
            let parsed = reqwest::Url::parse(url).unwrap();
            let param = |key: &str| {
                parsed
                    .query_pairs()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| v.into_owned())
                    .unwrap()
            };
            let mut back = reqwest::Url::parse(&param("redirect_uri")).unwrap();
            back.query_pairs_mut()
                .append_pair("code", "the-code")
                .append_pair("state", &param("state"));
            tokio::spawn(async move {
                let _ = reqwest::get(back).await;
            });
        }

        fn note(&self, text: &str) {
            self.notes.lock().unwrap().push(text.to_string());
        }
    }

    /// A client of `fake` that has no tokens yet; `person` answers a login when given.
    async fn client(
        fake: &Fake,
        data: &std::path::Path,
        person: Option<&Person>,
    ) -> OAuthHttpClient {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let target = Target {
            name: "docs".into(),
            url: fake.url(),
            client: crate::mcp::OAuthClient {
                client_id: Some("rein-test".into()),
                ..Default::default()
            },
            data_dir: data.to_path_buf(),
            timeout: Duration::from_secs(20),
        };
        let mut manager = AuthorizationManager::new(fake.url().as_str())
            .await
            .unwrap();
        manager.set_credential_store(target.store());
        // The browser never goes to this authorization endpoint (the person answers at
        // once), and rein does not open a plain-http URL away from this machine.
        let metadata: AuthorizationMetadata = serde_json::from_value(serde_json::json!({
            "authorization_endpoint": "http://auth.invalid/authorize",
            "token_endpoint": format!("http://127.0.0.1:{}/token", fake.port),
        }))
        .unwrap();
        manager.set_metadata(metadata);
        let relogin = person.map(|person| Relogin {
            target,
            prompt: Box::new(person.clone()),
        });
        OAuthHttpClient::new(manager, relogin)
    }

    fn notification() -> ClientJsonRpcMessage {
        serde_json::from_value(serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/initialized"
        }))
        .unwrap()
    }

    async fn post(
        client: &OAuthHttpClient,
        fake: &Fake,
    ) -> Result<StreamableHttpPostResponse, Error> {
        client
            .post_message(
                fake.url().into(),
                notification(),
                None,
                None,
                HashMap::new(),
            )
            .await
    }

    async fn post_with_limits(
        client: &OAuthHttpClient,
        fake: &Fake,
    ) -> Result<StreamableHttpPostResponse, Error> {
        client
            .post_message_with_response_limits(
                fake.url().into(),
                notification(),
                None,
                None,
                HashMap::new(),
                StreamableHttpResponseLimits::default(),
            )
            .await
    }

    #[tokio::test]
    async fn without_a_person_to_log_in_a_401_is_the_answer_and_nothing_is_sent_again() {
        let fake = Fake::start(Verdict::TheFirstTokenOnce).await;
        let data = tempfile::tempdir().unwrap();
        let client = client(&fake, data.path(), None).await;
        let error = post(&client, &fake).await.unwrap_err();
        assert!(
            matches!(error, StreamableHttpError::AuthRequired(_)),
            "{error}"
        );
        let error = post_with_limits(&client, &fake).await.unwrap_err();
        assert!(
            matches!(error, StreamableHttpError::AuthRequired(_)),
            "{error}"
        );
        assert_eq!(fake.to_mcp("POST"), vec![None, None]);
        // Ending the session passes the server's verdict on too.
        assert!(client
            .delete_session(fake.url().into(), "s-1".into(), None, HashMap::new())
            .await
            .is_err());
        assert_eq!(fake.to_mcp("DELETE"), vec![None]);
    }

    #[tokio::test]
    async fn a_401_leads_to_one_new_login_and_the_request_once_more_and_no_second_login() {
        let fake = Fake::start(Verdict::TheFirstTokenOnce).await;
        let data = tempfile::tempdir().unwrap();
        let person = Person::default();
        let client = client(&fake, data.path(), Some(&person)).await;
        assert!(matches!(
            post(&client, &fake).await,
            Ok(StreamableHttpPostResponse::Accepted)
        ));
        assert_eq!(
            fake.to_mcp("POST"),
            vec![None, Some("Bearer tok-1".to_string())]
        );
        let urls = person.urls.lock().unwrap().clone();
        assert_eq!(urls.len(), 1);
        // The challenge's scope is asked for.
        assert!(urls[0].contains("scope=read"), "{}", urls[0]);
        // The token is refused again: no second login on this connection.
        let error = post(&client, &fake).await.unwrap_err();
        assert!(
            matches!(error, StreamableHttpError::AuthRequired(_)),
            "{error}"
        );
        assert_eq!(person.urls.lock().unwrap().len(), 1);
        let notes = person.notes.lock().unwrap().join("\n");
        assert!(
            notes.contains("does not open the browser a second time"),
            "{notes}"
        );
    }

    #[tokio::test]
    async fn a_403_for_a_wider_scope_leads_to_at_most_the_step_up_limit_of_logins() {
        let fake = Fake::start(Verdict::WantsScope).await;
        let data = tempfile::tempdir().unwrap();
        let person = Person::default();
        let client = client(&fake, data.path(), Some(&person)).await;
        for _ in 0..=MAX_STEP_UPS {
            let error = post_with_limits(&client, &fake).await.unwrap_err();
            assert!(
                matches!(error, StreamableHttpError::InsufficientScope(_)),
                "{error}"
            );
        }
        let urls = person.urls.lock().unwrap().clone();
        assert_eq!(urls.len(), MAX_STEP_UPS as usize);
        for url in &urls {
            assert!(url.contains("scope=files%3Awrite"), "{url}");
        }
        // Each step-up sent the request once more, with the new token.
        assert_eq!(
            fake.to_mcp("POST"),
            vec![
                None,
                Some("Bearer tok-1".to_string()),
                Some("Bearer tok-1".to_string()),
                Some("Bearer tok-2".to_string()),
                Some("Bearer tok-2".to_string()),
            ]
        );
        let notes = person.notes.lock().unwrap().join("\n");
        assert!(notes.contains("stopped after 2 step-up logins"), "{notes}");
    }

    #[test]
    fn the_scope_of_a_challenge() {
        assert_eq!(
            super::scope_of(r#"Bearer error="insufficient_scope", scope="read write""#),
            Some("read write".into())
        );
        assert_eq!(super::scope_of("Bearer realm=\"x\""), None);
    }
}
