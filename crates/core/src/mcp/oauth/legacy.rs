//! Discovery of the authorization server, with one narrow allowance for servers of the
//! 2025-03-26 spec.
//!
//! rmcp discovers the metadata and checks its `issuer` (RFC 8414 §3.3: the issuer must be
//! the one the well-known URL was made from). A 2025-03-26 server has no
//! protected-resource metadata: its authorization server's metadata sits at its own
//! origin's root (`https://mcp.example/.well-known/oauth-authorization-server`), and some
//! such servers (the TypeScript SDK's, which does not check the issuer) name an issuer
//! under a path of that same origin (`https://mcp.example/oauth`). rmcp refuses that
//! metadata. rein takes it when, and only when, the metadata was asked of an origin's
//! root and the issuer it names is on that very origin: then nobody but the origin's
//! owner can have written it, so no other authorization server can have slipped in (the
//! mix-up §3.3 prevents). An issuer on another origin, or a mismatch found through
//! protected-resource metadata under a path, stays refused. The issuer pinned with the
//! tokens is then the one the metadata names, checked on every reconnection as ever.

use rmcp::transport::auth::{AuthError, AuthorizationManager, AuthorizationMetadata};

use super::flow::Target;

/// The most bytes of a metadata document read.
const METADATA_BYTES: usize = 256 * 1024;

/// The authorization server's metadata for `target` and whether it was discovered (not
/// the 2025-03-26 fallback endpoints), or why there is none.
pub async fn resolve(
    manager: &mut AuthorizationManager,
    target: &Target,
    challenge: Option<&str>,
) -> Result<(AuthorizationMetadata, bool), String> {
    const WHAT: &str = "discovering the authorization server";
    let outcome = tokio::time::timeout(
        target.timeout,
        manager.resolve_metadata_from_challenge(challenge),
    )
    .await;
    match outcome {
        Ok(Ok(resolution)) => {
            let discovered = resolution.source.is_discovered();
            Ok((resolution.metadata, discovered))
        }
        Ok(Err(AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        })) => {
            let refused = format!(
                "{WHAT} failed: its metadata names the issuer {received_issuer}, not \
                 {expected_issuer} where it was asked (RFC 8414 §3.3)"
            );
            let Some(root) = same_origin_root(&expected_issuer, &received_issuer) else {
                return Err(refused);
            };
            match fetch_metadata(target, &root, &received_issuer).await {
                Some(metadata) => Ok((metadata, true)),
                None => Err(refused),
            }
        }
        Ok(Err(e)) => Err(format!("{WHAT} failed: {e}")),
        Err(_) => Err(target.no_answer(WHAT)),
    }
}

/// `expected` as a URL when it is an origin's root (no path) and `received` is an issuer
/// on the same origin (an `https` one, or `http` to this machine; no query or fragment).
pub fn same_origin_root(expected: &str, received: &str) -> Option<reqwest::Url> {
    let root = reqwest::Url::parse(expected).ok()?;
    let issuer = reqwest::Url::parse(received).ok()?;
    let secure = issuer.scheme() == "https"
        || (issuer.scheme() == "http" && super::flow::is_loopback_host(issuer.host_str()?));
    let fits = matches!(root.path(), "" | "/")
        && root.query().is_none()
        && issuer.query().is_none()
        && issuer.fragment().is_none()
        && root.origin() == issuer.origin()
        && root.origin().is_tuple()
        && secure;
    fits.then_some(root)
}

/// The metadata at `root`'s well-known URLs (OAuth's, then OpenID's) whose issuer is
/// `issuer`: read without redirects, within the server's timeout, at most
/// [`METADATA_BYTES`].
async fn fetch_metadata(
    target: &Target,
    root: &reqwest::Url,
    issuer: &str,
) -> Option<AuthorizationMetadata> {
    let client = reqwest::Client::builder()
        .timeout(target.timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .ok()?;
    for path in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ] {
        let Ok(url) = root.join(path) else { continue };
        let Ok(mut answer) = client.get(url).send().await else {
            continue;
        };
        if !answer.status().is_success() {
            continue;
        }
        let mut body = Vec::new();
        let mut whole = true;
        while let Ok(Some(chunk)) = answer.chunk().await {
            body.extend_from_slice(&chunk);
            if body.len() > METADATA_BYTES {
                whole = false;
                break;
            }
        }
        if !whole {
            continue;
        }
        let Ok(metadata) = serde_json::from_slice::<AuthorizationMetadata>(&body) else {
            continue;
        };
        if metadata.issuer.as_deref() == Some(issuer) {
            return Some(metadata);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::fake_http::{serve, Answer};
    use super::*;
    use crate::mcp::OAuthClient;

    #[test]
    fn only_an_issuer_on_the_roots_own_origin_is_taken() {
        assert!(
            same_origin_root("http://localhost:3000/", "http://localhost:3000/oauth").is_some()
        );
        assert!(same_origin_root("https://mcp.example", "https://mcp.example/oauth").is_some());
        // Another origin: host, port or scheme.
        assert!(same_origin_root("https://mcp.example/", "https://as.example/oauth").is_none());
        assert!(
            same_origin_root("http://localhost:3000/", "http://localhost:3001/oauth").is_none()
        );
        assert!(same_origin_root("https://mcp.example/", "http://mcp.example/oauth").is_none());
        // Asked under a path (a resource's named server): not the allowance.
        assert!(
            same_origin_root("https://mcp.example/tenant", "https://mcp.example/other").is_none()
        );
        // Plain http away from this machine, a query, junk.
        assert!(same_origin_root("http://mcp.example/", "http://mcp.example/oauth").is_none());
        assert!(
            same_origin_root("https://mcp.example/", "https://mcp.example/oauth?x=1").is_none()
        );
        assert!(same_origin_root("not a url", "https://mcp.example/oauth").is_none());
    }

    /// Authorization-server metadata naming `issuer`, its authorization endpoint at
    /// `endpoint`, padded with spaces to `length` bytes.
    fn metadata(issuer: &str, endpoint: &str, length: usize) -> Vec<u8> {
        let text = format!(
            r#"{{"issuer":"{issuer}","authorization_endpoint":"{endpoint}","token_endpoint":"https://as.example/token"}}"#
        );
        format!("{text}{}", " ".repeat(length - text.len())).into_bytes()
    }

    fn target(url: &str) -> Target {
        Target {
            name: "docs".into(),
            url: url.to_string(),
            client: OAuthClient::default(),
            data_dir: std::path::PathBuf::from("/d"),
            timeout: std::time::Duration::from_secs(60),
        }
    }

    const OAUTH: &str = "/.well-known/oauth-authorization-server";
    const OPENID: &str = "/.well-known/openid-configuration";

    #[tokio::test]
    async fn the_roots_metadata_is_taken_whole_within_its_cap_and_only_for_the_issuer() {
        let issuer = "https://mcp.example/oauth";
        // Another issuer's at the OAuth URL; the issuer's at the OpenID one, exactly at
        // the cap.
        let base = serve(vec![
            (
                OAUTH,
                Answer::new(
                    "200 OK",
                    "",
                    metadata("https://as.example", "https://a/1", 200),
                ),
            ),
            (
                OPENID,
                Answer::new("200 OK", "", metadata(issuer, "https://a/2", 256 * 1024)),
            ),
        ])
        .await;
        let root = reqwest::Url::parse(&base).unwrap();
        let found = fetch_metadata(&target(&base), &root, issuer).await.unwrap();
        assert_eq!(found.authorization_endpoint, "https://a/2");
        assert_eq!(found.issuer.as_deref(), Some(issuer));

        // A failed answer is not read, and a document past the cap is not taken.
        let base = serve(vec![
            (
                OAUTH,
                Answer::new("404 Not Found", "", metadata(issuer, "https://a/3", 200)),
            ),
            (
                OPENID,
                Answer::new(
                    "200 OK",
                    "",
                    metadata(issuer, "https://a/4", 256 * 1024 + 1),
                ),
            ),
        ])
        .await;
        let root = reqwest::Url::parse(&base).unwrap();
        assert!(fetch_metadata(&target(&base), &root, issuer)
            .await
            .is_none());
    }
}
