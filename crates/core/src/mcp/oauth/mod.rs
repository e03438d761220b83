//! OAuth login for remote (HTTP) MCP servers, per the MCP authorization spec, over rmcp's
//! `auth` support.
//!
//! In: a server's [`Target`] (its URL, a pre-registered client if the config names one,
//! rein's data folder). Out: tokens in the server's token file (`store.rs`:
//! `<data dir>/mcp-oauth/NAME.json`, 0600, bound to the URL), and for the connection an
//! HTTP client that sends them (`client.rs`).
//!
//! - `rein mcp login NAME` runs [`login`] (`flow.rs`): probe for the 401 challenge,
//!   discover the protected resource and its authorization server, take the configured
//!   client or register one, authorize in the browser with PKCE S256 and the `resource`
//!   parameter (`browser.rs` opens `$BROWSER` or the platform's opener, and the URL is
//!   always printed), wait on 127.0.0.1 for the callback (`callback.rs`: one request,
//!   its `state` checked, five minutes at most), and exchange the code.
//! - `rein mcp logout NAME` removes the token file ([`logout`]).
//! - Connecting: a server with tokens for its URL gets rmcp's `AuthClient` (refresh on
//!   expiry; a silent refresh and one retry on a 401); where a person can answer (print
//!   mode) one re-login after a 401 that the refresh did not mend, and a step-up login
//!   on a 403 `insufficient_scope`, at most twice a connection. A server that answers
//!   401 and has no tokens is [`ServerState::NeedsLogin`](super::ServerState::NeedsLogin).
//!   Reconnecting discovers the authorization server as the login did (the challenge's
//!   resource-metadata URL is kept with the tokens) and checks that its issuer is the one
//!   the tokens came from: another issuer means a new login, and the refresh token is
//!   never sent to it.
//! - The dashboard's `/mcp login NAME` runs [`login`] in the background with its own
//!   [`Prompt`] (the URL and notes as transcript lines), then restarts the server.
//!
//! What rmcp does not cover and rein adds: the token file and its URL binding, the
//! loopback callback listener, opening the browser, the probe for the first challenge,
//! the re-login and step-up on a live connection (rmcp reports the 401/403 to the caller),
//! keeping a registered confidential client's secret for refreshes, and taking a
//! 2025-03-26 server's root metadata whose issuer is a path of that same origin
//! (`legacy.rs`; rmcp refuses any issuer other than the one the URL was made from).

mod browser;
mod callback;
mod client;
#[cfg(test)]
mod fake_http;
mod flow;
mod legacy;
mod store;

pub use callback::CallbackParams;
pub(crate) use client::{OAuthHttpClient, Relogin};
pub use client::{MAX_RELOGINS, MAX_STEP_UPS};
pub use flow::{
    is_loopback_host, is_loopback_redirect, login, probe, stored, LoginOutcome, Prompt, Target,
    CALLBACK_TIMEOUT,
};
pub use store::TokenFile;

/// The command line's [`Prompt`]: the URL and notes go to stderr (stdout is the
/// answer's, in print mode).
pub struct StderrPrompt;

impl Prompt for StderrPrompt {
    fn url(&self, url: &str) {
        crate::text::sanitize::to_stderr(format_args!(
            "rein: open this URL in a browser to log in (rein tries to open it):\n  {url}\n"
        ));
    }

    fn note(&self, text: &str) {
        crate::text::sanitize::to_stderr(format_args!("rein: {text}\n"));
    }
}

/// Forget `target`'s tokens and client: whether there were any.
pub fn logout(target: &Target) -> Result<bool, String> {
    target.store().remove()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logout_forgets_the_client_and_says_whether_there_was_one() {
        let data = tempfile::tempdir().unwrap();
        let target = Target {
            name: "docs".into(),
            url: "https://docs.example/mcp".into(),
            client: Default::default(),
            data_dir: data.path().to_path_buf(),
            timeout: std::time::Duration::from_secs(5),
        };
        target.store().set_client("client-1", None).unwrap();
        assert_eq!(logout(&target), Ok(true));
        assert_eq!(target.store().client(), None);
        assert!(!target.store().path().exists());
        assert_eq!(logout(&target), Ok(false));
    }
}
