//! The login: discovery, the client, the authorization code flow in the browser, and the
//! token exchange, with rmcp's `AuthorizationManager` doing the protocol.
//!
//! 1. [`probe`]: an unauthenticated `initialize` POST; a 401 carries the challenge
//!    (`WWW-Authenticate`, its `resource_metadata` and `scope`). A server that answers
//!    without one needs no login.
//! 2. Discovery (rmcp): the protected-resource metadata from the challenge's
//!    `resource_metadata`, else the well-known paths (path-based first), then the
//!    authorization server's metadata (RFC 8414, else OpenID discovery, else the
//!    2025-03-26 fallback endpoints); its issuer checked, with one allowance for
//!    2025-03-26 servers (`legacy.rs`).
//! 3. The client, in this order: the configured `oauth_client_id` (its secret from the
//!    variable `oauth_client_secret_env` names), the configured
//!    `oauth_client_metadata_url` where the authorization server supports client ID
//!    metadata documents, the client an earlier login used (kept in the token file), else
//!    dynamic client registration (RFC 7591) with the loopback redirect URI. rmcp picks the token endpoint's auth method the server supports
//!    (basic, post or none).
//! 4. The authorization URL (PKCE S256, `state`, the RFC 8707 `resource`, the scopes:
//!    the challenge's, else the resource's `scopes_supported`, else none) is checked to
//!    send the browser back to 127.0.0.1, shown, opened, and the callback waited for
//!    (`callback.rs`); the code is exchanged and the tokens saved (`store.rs`).
//!
//! Every request to the authorization server waits at most the server's
//! `startup_timeout`; the browser is given five minutes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::transport::auth::{AuthError, AuthorizationManager, OAuthClientConfig};

use super::browser;
use super::callback::Callback;
use super::store::TokenFile;
use crate::mcp::{OAuthClient, ServerConfig, Transport};

/// How long the user has to finish the login in the browser.
pub const CALLBACK_TIMEOUT: Duration = Duration::from_secs(300);
/// The name rein registers under.
const CLIENT_NAME: &str = "rein";
/// The most bytes of an answer the probe reads.
const PROBE_BODY_BYTES: usize = 64 * 1024;

/// What the login tells the person logging in.
pub trait Prompt: Send + Sync {
    /// The authorization URL, to print (it is also opened, when it can be).
    fn url(&self, url: &str);
    /// A line worth saying (the browser could not be opened).
    fn note(&self, text: &str);
}

/// One HTTP server's login settings.
#[derive(Debug, Clone)]
pub struct Target {
    pub name: String,
    pub url: String,
    pub client: OAuthClient,
    pub data_dir: PathBuf,
    /// The most one request to the authorization server may take.
    pub timeout: Duration,
}

/// How a login ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoginOutcome {
    LoggedIn,
    /// The server answered without asking for a login.
    NotNeeded,
}

impl Target {
    /// The login settings of `config`; `None` for a stdio server, or one that sends a
    /// static bearer token.
    pub fn of(config: &ServerConfig, data_dir: &Path) -> Option<Target> {
        match &config.transport {
            Transport::Http {
                url,
                oauth,
                bearer_token_env: None,
                ..
            } => Some(Target {
                name: config.name.clone(),
                url: url.clone(),
                client: oauth.clone(),
                data_dir: data_dir.to_path_buf(),
                timeout: config.startup_timeout,
            }),
            _ => None,
        }
    }

    /// The login settings of `config`, or why it cannot log in (in words for the user).
    pub fn for_login(config: &ServerConfig, data_dir: &Path) -> Result<Target, String> {
        let name = &config.name;
        match &config.transport {
            Transport::Stdio { .. } => Err(format!(
                "{name} is a stdio server (`command`); only HTTP servers (`url`) log in"
            )),
            Transport::Http {
                bearer_token_env: Some(var),
                ..
            } => Err(format!(
                "{name} sends the bearer token from {var} (bearer_token_env); remove that key to log in with OAuth instead"
            )),
            Transport::Http { .. } => {
                Target::of(config, data_dir).ok_or_else(|| format!("{name} cannot log in"))
            }
        }
    }

    pub fn store(&self) -> TokenFile {
        TokenFile::new(&self.data_dir, &self.name, &self.url)
    }

    /// The configured client's secret, from its variable.
    fn secret(&self) -> Result<Option<String>, String> {
        let Some(var) = &self.client.client_secret_env else {
            return Ok(None);
        };
        self.secret_of(var, std::env::var(var).ok())
    }

    /// The secret given `value`, the value of the variable `var` (`None`: unset, or not
    /// Unicode).
    fn secret_of(&self, var: &str, value: Option<String>) -> Result<Option<String>, String> {
        match value {
            Some(secret) if !secret.trim().is_empty() => Ok(Some(secret.trim().to_string())),
            _ => Err(format!(
                "the environment variable {var} (mcp_servers.{}.oauth_client_secret_env) is not set",
                self.name
            )),
        }
    }

    /// `what` within the server's timeout, rmcp's error in words.
    async fn within<T>(
        &self,
        what: &str,
        work: impl std::future::Future<Output = Result<T, AuthError>>,
    ) -> Result<T, String> {
        match tokio::time::timeout(self.timeout, work).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(format!("{what} failed: {}", describe(&e))),
            Err(_) => Err(self.no_answer(what)),
        }
    }

    /// `what` got no answer within the server's timeout, in words.
    pub(super) fn no_answer(&self, what: &str) -> String {
        format!(
            "{what}: the authorization server did not answer within {} s (mcp_servers.{}.startup_timeout_secs)",
            self.timeout.as_secs(),
            self.name
        )
    }
}

/// rmcp's error, without the secrets it never holds but in fewer words.
fn describe(error: &AuthError) -> String {
    error.to_string()
}

/// Whether `host` is this machine.
pub fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether `uri` is a loopback redirect (`http://127.0.0.1:PORT/…`, `localhost`, `[::1]`).
pub fn is_loopback_redirect(uri: &str) -> bool {
    reqwest::Url::parse(uri)
        .is_ok_and(|url| url.scheme() == "http" && is_loopback_host(url.host_str().unwrap_or("")))
}

/// Send an unauthenticated `initialize`: `Some(challenge)` when the server answers 401
/// (its `WWW-Authenticate`, perhaps empty), `None` when it answers without asking.
pub async fn probe(target: &Target) -> Result<Option<String>, String> {
    let client = reqwest::Client::builder()
        .timeout(target.timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "rein", "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let answer = client
        .post(&target.url)
        .header("Accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .map_err(|e| format!("{} could not be reached ({e})", target.url))?;
    let status = answer.status();
    if status == reqwest::StatusCode::UNAUTHORIZED {
        let challenge = answer
            .headers()
            .get_all(reqwest::header::WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find(|v| v.trim_start().to_ascii_lowercase().starts_with("bearer"))
            .unwrap_or("")
            .to_string();
        return Ok(Some(challenge));
    }
    // Read a little of the body, so the connection ends cleanly; the content is not used.
    let mut answer = answer;
    let mut read = 0;
    while let Ok(Some(chunk)) = answer.chunk().await {
        read += chunk.len();
        if read > PROBE_BODY_BYTES {
            break;
        }
    }
    if status.is_success() {
        Ok(None)
    } else {
        Err(format!(
            "{} answered initialize with HTTP {} (not 401: rein cannot tell where to log in)",
            target.url,
            status.as_u16()
        ))
    }
}

/// A manager for `target`, its tokens in the token file.
pub async fn manager(target: &Target) -> Result<AuthorizationManager, String> {
    // rmcp's reqwest needs a TLS provider installed; a second install is refused harmlessly.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut manager = AuthorizationManager::new(target.url.as_str())
        .await
        .map_err(|e| format!("{}: {}", target.url, describe(&e)))?;
    manager.set_credential_store(target.store());
    Ok(manager)
}

/// Log in to `target` from scratch: probe, discover, authorize in the browser.
pub async fn login(target: &Target, prompt: &dyn Prompt) -> Result<LoginOutcome, String> {
    // A server may let `initialize` through and ask for a login only for its tools: then
    // the login goes by its published metadata, and a server with none needs no login.
    let challenge = probe(target).await?;
    let mut manager = manager(target).await?;
    let (metadata, discovered) = super::legacy::resolve(
        &mut manager,
        target,
        challenge.as_deref().filter(|c| !c.is_empty()),
    )
    .await?;
    if challenge.is_none() && !discovered {
        return Ok(LoginOutcome::NotNeeded);
    }
    let store = target.store();
    if store.has_tokens() && store.issuer() != metadata.issuer {
        // The tokens and the client are another authorization server's: never offered to
        // this one.
        store.remove()?;
    }
    let documents = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    manager.set_metadata(metadata);
    let scopes = manager.select_initial_scopes(&[]).await;
    authorize(&mut manager, target, &scopes, documents, prompt).await?;
    // Where the challenge pointed: a reconnection gets no challenge, and discovers the
    // same way from this.
    store.set_resource_metadata(
        challenge
            .as_deref()
            .and_then(|c| resource_metadata_of(c, target)),
    )?;
    Ok(LoginOutcome::LoggedIn)
}

/// The protected-resource metadata URL a `WWW-Authenticate` challenge names.
fn resource_metadata_of(challenge: &str, target: &Target) -> Option<String> {
    let base = reqwest::Url::parse(&target.url).ok()?;
    rmcp::transport::auth::WWWAuthenticateParams::parse(challenge, &base)
        .resource_metadata_url
        .map(|url| url.to_string())
}

/// The browser part, with a manager that knows the authorization server: the client,
/// the authorization URL for `scopes`, the callback, the token exchange.
pub async fn authorize(
    manager: &mut AuthorizationManager,
    target: &Target,
    scopes: &[String],
    documents: bool,
    prompt: &dyn Prompt,
) -> Result<(), String> {
    let callback = Callback::bind()
        .await
        .map_err(|e| format!("cannot listen on 127.0.0.1 for the login's callback: {e}"))?;
    let redirect = callback.redirect_uri();
    let store = target.store();
    let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let config = if let Some(id) = &target.client.client_id {
        let mut config =
            OAuthClientConfig::new(id.clone(), redirect.clone()).with_scopes(scopes.to_vec());
        if let Some(secret) = target.secret()? {
            config = config.with_client_secret(secret);
        }
        config
    } else if let Some(document) = target
        .client
        .client_metadata_url
        .as_ref()
        .filter(|_| documents)
    {
        // The document's URL is the client ID (a public client).
        OAuthClientConfig::new(document.clone(), redirect.clone()).with_scopes(scopes.to_vec())
    } else if let Some((id, secret)) = store.client().filter(|_| store.has_tokens()) {
        let mut config = OAuthClientConfig::new(id, redirect.clone()).with_scopes(scopes.to_vec());
        if let Some(secret) = secret {
            config = config.with_client_secret(secret);
        }
        config
    } else {
        target
            .within(
                "registering rein with the authorization server",
                manager.register_client(CLIENT_NAME, &redirect, &refs),
            )
            .await?
    };
    if !is_loopback_redirect(&config.redirect_uri) {
        return Err(format!(
            "refused: the login would send the browser back to {:?}, not to this machine",
            config.redirect_uri
        ));
    }
    store.set_client(&config.client_id, config.client_secret.clone())?;
    manager.configure_client(config).map_err(|e| {
        format!(
            "the authorization server's metadata cannot be used: {}",
            describe(&e)
        )
    })?;
    let url = target
        .within(
            "preparing the authorization URL",
            manager.get_authorization_url(&refs),
        )
        .await?;
    let parsed = reqwest::Url::parse(&url)
        .map_err(|e| format!("the authorization URL {url:?} is not a URL ({e})"))?;
    let param = |key: &str| {
        parsed
            .query_pairs()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.into_owned())
    };
    match param("redirect_uri") {
        Some(back) if back == redirect => {}
        other => {
            return Err(format!(
                "refused: the authorization URL sends the browser back to {other:?}, not to rein's {redirect}"
            ))
        }
    }
    let state = param("state").ok_or("the authorization URL carries no state")?;
    prompt.url(&url);
    if let Err(why) = browser::open(&url) {
        prompt.note(&why);
    }
    let params = callback.wait(&state, CALLBACK_TIMEOUT).await?;
    target
        .within(
            "exchanging the authorization code for a token",
            manager.exchange_code_for_token_with_issuer(
                &params.code,
                &params.state,
                params.issuer.as_deref(),
            ),
        )
        .await?;
    Ok(())
}

/// A manager ready to send `target`'s stored tokens (and refresh them), or `None` when
/// there are none for its URL. An authorization server whose issuer is not the one the
/// tokens came from is an error, and the tokens are removed.
pub async fn stored(target: &Target) -> Result<Option<AuthorizationManager>, String> {
    let store = target.store();
    if !store.has_tokens() {
        return Ok(None);
    }
    let mut manager = manager(target).await?;
    // Discovered as the login did: from the resource-metadata URL its challenge named.
    let challenge = store
        .resource_metadata()
        .map(|url| format!("Bearer resource_metadata=\"{url}\""));
    let (metadata, _) = super::legacy::resolve(&mut manager, target, challenge.as_deref()).await?;
    if let Some(issuer) = store.issuer() {
        if metadata.issuer.as_deref() != Some(issuer.as_str()) {
            // The refresh token is never sent to another issuer: the tokens and the client
            // registered with the old one are dropped.
            store.remove()?;
            return Err(format!(
                "its authorization server is now {}, not {issuer:?} that issued rein's tokens; rein dropped them",
                metadata
                    .issuer
                    .as_deref()
                    .map_or("one without an issuer".to_string(), |i| format!("{i:?}"))
            ));
        }
    }
    manager.set_metadata(metadata);
    let Some((id, secret)) = store.client() else {
        return Ok(None);
    };
    let secret = match (&target.client.client_id, secret) {
        (Some(configured), _) if configured == &id => target.secret()?,
        (_, secret) => secret,
    };
    let mut config = OAuthClientConfig::new(id, "http://127.0.0.1/callback");
    if let Some(secret) = secret {
        config = config.with_client_secret(secret);
    }
    manager.configure_client(config).map_err(|e| {
        format!(
            "the authorization server's metadata cannot be used: {}",
            describe(&e)
        )
    })?;
    Ok(Some(manager))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(bearer_token_env: Option<&str>, oauth: OAuthClient) -> ServerConfig {
        let mut config = ServerConfig::stdio("docs", "unused", &[]);
        config.transport = Transport::Http {
            url: "https://docs.example/mcp".into(),
            headers: Vec::new(),
            bearer_token_env: bearer_token_env.map(String::from),
            oauth,
        };
        config.startup_timeout = Duration::from_secs(7);
        config
    }

    #[test]
    fn only_an_http_server_without_a_static_token_logs_in() {
        let data = Path::new("/data");
        let client = OAuthClient {
            client_id: Some("id-1".into()),
            ..Default::default()
        };
        let target = Target::of(&http(None, client.clone()), data).unwrap();
        assert_eq!(target.name, "docs");
        assert_eq!(target.url, "https://docs.example/mcp");
        assert_eq!(target.client, client);
        assert_eq!(target.data_dir, data);
        assert_eq!(target.timeout, Duration::from_secs(7));
        assert!(Target::for_login(&http(None, client), data).is_ok());

        assert!(Target::of(&http(Some("TOKEN"), OAuthClient::default()), data).is_none());
        let error =
            Target::for_login(&http(Some("TOKEN"), OAuthClient::default()), data).unwrap_err();
        assert!(error.contains("bearer_token_env"), "{error}");
        let stdio = ServerConfig::stdio("docs", "server", &[]);
        assert!(Target::of(&stdio, data).is_none());
        let error = Target::for_login(&stdio, data).unwrap_err();
        assert!(error.contains("is a stdio server"), "{error}");
    }

    #[test]
    fn the_client_secret_comes_from_its_variable_trimmed_and_an_unset_one_is_an_error() {
        let mut target = Target::of(&http(None, OAuthClient::default()), Path::new("/d")).unwrap();
        assert_eq!(target.secret(), Ok(None));
        // Read, never set, here: tests run in threads.
        let path = std::env::var("PATH").unwrap();
        target.client.client_secret_env = Some("PATH".into());
        assert_eq!(target.secret(), Ok(Some(path.trim().to_string())));
        target.client.client_secret_env = Some("REIN_TEST_NEVER_SET_7F3A".into());
        let error = target.secret().unwrap_err();
        assert!(
            error.contains(
                "REIN_TEST_NEVER_SET_7F3A (mcp_servers.docs.oauth_client_secret_env) is not set"
            ),
            "{error}"
        );
    }

    #[tokio::test]
    async fn work_on_the_authorization_server_fails_in_words_or_within_the_timeout() {
        let mut target = Target::of(&http(None, OAuthClient::default()), Path::new("/d")).unwrap();
        let error = target
            .within("registering", async {
                Err::<(), _>(AuthError::RegistrationFailed("no room".into()))
            })
            .await
            .unwrap_err();
        assert_eq!(error, "registering failed: Registration failed: no room");
        target.timeout = Duration::from_millis(1);
        let error = target
            .within(
                "registering",
                std::future::pending::<Result<(), AuthError>>(),
            )
            .await
            .unwrap_err();
        assert_eq!(
            error,
            "registering: the authorization server did not answer within 0 s (mcp_servers.docs.startup_timeout_secs)"
        );
    }

    #[test]
    fn a_loopback_redirect_is_plain_http_to_this_machine() {
        assert!(is_loopback_redirect("http://127.0.0.1:8080/callback"));
        assert!(is_loopback_redirect("http://localhost/callback"));
        assert!(is_loopback_redirect("http://[::1]:9/callback"));
        assert!(!is_loopback_redirect("https://127.0.0.1/callback"));
        assert!(!is_loopback_redirect("http://evil.example/callback"));
        assert!(!is_loopback_redirect("https://evil.example/callback"));
        assert!(!is_loopback_redirect("not a url"));
    }

    #[test]
    fn a_blank_client_secret_is_as_good_as_none() {
        let target = Target::of(&http(None, OAuthClient::default()), Path::new("/d")).unwrap();
        assert_eq!(
            target.secret_of("S", Some(" s3 \n".into())),
            Ok(Some("s3".into()))
        );
        for value in [Some(" \t\n".to_string()), Some(String::new()), None] {
            let error = target.secret_of("S", value).unwrap_err();
            assert!(error.contains("S (mcp_servers.docs.oauth_client_secret_env) is not set"));
        }
    }

    /// A target at `url`, its requests given `timeout`.
    fn at(url: &str, timeout: Duration) -> Target {
        let mut target = Target::of(&http(None, OAuthClient::default()), Path::new("/d")).unwrap();
        target.url = url.to_string();
        target.timeout = timeout;
        target
    }

    #[tokio::test]
    async fn the_probe_gives_a_401s_bearer_challenge_and_nothing_else() {
        use super::super::fake_http::{serve, Answer};
        let asks = Answer::new(
            "401 Unauthorized",
            "WWW-Authenticate: Basic realm=\"x\"\r\nWWW-Authenticate: Bearer resource_metadata=\"http://127.0.0.1:9/prm\"\r\n",
            "",
        );
        let silent = Answer::new("401 Unauthorized", "", "");
        let base = serve(vec![("/asks", asks), ("/silent", silent)]).await;
        let timeout = Duration::from_secs(60);
        assert_eq!(
            probe(&at(&format!("{base}/asks"), timeout)).await,
            Ok(Some(
                "Bearer resource_metadata=\"http://127.0.0.1:9/prm\"".into()
            ))
        );
        assert_eq!(
            probe(&at(&format!("{base}/silent"), timeout)).await,
            Ok(Some(String::new()))
        );
    }

    #[tokio::test]
    async fn the_probe_reads_at_most_its_cap_of_an_answer_without_a_challenge() {
        use super::super::fake_http::{serve, Answer, Body};
        let long = Answer::new("200 OK", "", vec![b'x'; 3 * PROBE_BODY_BYTES]);
        let endless = Answer {
            status: "200 OK",
            headers: String::new(),
            body: Body::Endless,
        };
        let failing = Answer::new("500 Internal Server Error", "", "broken");
        let base = serve(vec![
            ("/long", long),
            ("/endless", endless),
            ("/failing", failing),
        ])
        .await;
        // Longer than any test run: only the byte cap ends the endless body.
        let timeout = Duration::from_secs(3600);
        assert_eq!(probe(&at(&format!("{base}/long"), timeout)).await, Ok(None));
        assert_eq!(
            probe(&at(&format!("{base}/endless"), timeout)).await,
            Ok(None)
        );
        let error = probe(&at(&format!("{base}/failing"), timeout))
            .await
            .unwrap_err();
        assert!(error.ends_with("/failing answered initialize with HTTP 500 (not 401: rein cannot tell where to log in)"), "{error}");
    }

    #[test]
    fn the_resource_metadata_url_is_the_challenges_resolved_against_the_server() {
        let target = at("https://docs.example/mcp/", Duration::from_secs(1));
        assert_eq!(
            resource_metadata_of(
                r#"Bearer resource_metadata="https://meta.example/prm", scope="read""#,
                &target
            ),
            Some("https://meta.example/prm".into())
        );
        assert_eq!(
            resource_metadata_of(r#"Bearer resource_metadata="/prm""#, &target),
            Some("https://docs.example/prm".into())
        );
        assert_eq!(
            resource_metadata_of(r#"Bearer scope="read""#, &target),
            None
        );
    }
}
