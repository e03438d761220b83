//! One server's OAuth tokens on disk: `<data dir>/mcp-oauth/<server>.json`, 0600 in a
//! 0700 folder, replaced atomically (`private_fs::replace`), never in a config file or a
//! session file.
//!
//! The file records the URL the tokens were obtained for, and [`TokenFile`] answers only
//! for that URL: a config (a project's, say) that names the same server with another URL
//! gets no token, so rein never sends a token to a host it was not issued for. It also
//! keeps the client the login registered (its ID and, for a confidential client, the
//! secret the authorization server gave it), so a refresh authenticates as that client,
//! and where the login found the authorization server: the protected-resource metadata
//! URL the server's challenge named, so a reconnection (which gets no challenge) discovers
//! the same endpoints, and the issuer the tokens came from (rmcp keeps it with the
//! credentials), which a reconnection checks before a refresh token is sent anywhere.
//! rmcp reads and writes the tokens through its `CredentialStore` trait.

use std::path::{Path, PathBuf};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};

/// The largest token file read: anything bigger is not rein's.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The folder of the token files, in rein's data folder.
pub fn dir(data_dir: &Path) -> PathBuf {
    data_dir.join("mcp-oauth")
}

/// The token file of one server, bound to its URL.
#[derive(Debug, Clone)]
pub struct TokenFile {
    path: PathBuf,
    url: String,
}

/// What the file holds.
#[derive(Serialize, Deserialize)]
struct OnDisk {
    /// The MCP server URL the tokens were obtained for.
    url: String,
    /// The client the login used, with its secret when the authorization server gave one
    /// (a confidential client).
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    client_secret: Option<String>,
    /// The protected-resource metadata URL the server's 401 challenge named at the login.
    #[serde(default)]
    resource_metadata: Option<String>,
    credentials: Option<StoredCredentials>,
}

impl TokenFile {
    /// The file of the server `name` (a config name: `[A-Za-z0-9_-]+`) at `url`.
    pub fn new(data_dir: &Path, name: &str, url: &str) -> TokenFile {
        TokenFile {
            path: dir(data_dir).join(format!("{name}.json")),
            url: url.to_string(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's content when it is for this URL; `Ok(None)` when there is none (or it
    /// is another URL's); an error names the file.
    fn read(&self) -> Result<Option<OnDisk>, String> {
        let file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read {}: {e}", self.path.display())),
        };
        let mut text = String::new();
        use std::io::Read;
        file.take(MAX_FILE_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read {}: {e}", self.path.display()))?;
        if text.len() as u64 > MAX_FILE_BYTES {
            return Err(format!(
                "{} is larger than 1 MiB; it is not a token file of rein's (`rein mcp logout` removes it)",
                self.path.display()
            ));
        }
        let on_disk: OnDisk = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{} is not a token file rein can read ({e}); `rein mcp logout` removes it",
                self.path.display()
            )
        })?;
        Ok((on_disk.url == self.url).then_some(on_disk))
    }

    fn write(&self, on_disk: &OnDisk) -> Result<(), String> {
        let text = serde_json::to_vec_pretty(on_disk)
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
        if let Some(parent) = self.path.parent() {
            crate::host::private_fs::create_dir(parent)
                .map_err(|e| format!("cannot make {}: {e}", parent.display()))?;
        }
        crate::host::private_fs::replace(&self.path, &text)
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))
    }

    /// Whether the file holds an access token for this URL.
    pub fn has_tokens(&self) -> bool {
        matches!(
            self.read(),
            Ok(Some(OnDisk {
                credentials: Some(StoredCredentials {
                    token_response: Some(_),
                    ..
                }),
                ..
            }))
        )
    }

    /// The issuer of the authorization server the stored tokens came from, when its
    /// metadata named one.
    pub fn issuer(&self) -> Option<String> {
        self.read().ok().flatten()?.credentials?.issuer
    }

    /// The protected-resource metadata URL the login's challenge named.
    pub fn resource_metadata(&self) -> Option<String> {
        self.read().ok().flatten()?.resource_metadata
    }

    /// Keep where the login found the protected-resource metadata (`None`: the well-known
    /// paths).
    pub fn set_resource_metadata(&self, url: Option<String>) -> Result<(), String> {
        let Some(mut on_disk) = self.read()? else {
            return Ok(());
        };
        on_disk.resource_metadata = url;
        self.write(&on_disk)
    }

    /// The client the login used: its ID and secret.
    pub fn client(&self) -> Option<(String, Option<String>)> {
        let on_disk = self.read().ok().flatten()?;
        match on_disk.client_id {
            Some(id) => Some((id, on_disk.client_secret)),
            None => Some((on_disk.credentials?.client_id, None)),
        }
    }

    /// Keep the client a login uses (before its tokens arrive); the tokens stay until
    /// the new ones replace them.
    pub fn set_client(&self, id: &str, secret: Option<String>) -> Result<(), String> {
        let mut on_disk = self.read()?.unwrap_or(OnDisk {
            url: self.url.clone(),
            client_id: None,
            client_secret: None,
            resource_metadata: None,
            credentials: None,
        });
        on_disk.client_id = Some(id.to_string());
        on_disk.client_secret = secret;
        self.write(&on_disk)
    }

    /// Remove the file, whatever URL it is for; whether there was one.
    pub fn remove(&self) -> Result<bool, String> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(format!("cannot remove {}: {e}", self.path.display())),
        }
    }
}

#[async_trait::async_trait]
impl CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let on_disk = self.read().map_err(AuthError::CredentialStoreError)?;
        Ok(on_disk.and_then(|d| d.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let previous = self.read().ok().flatten();
        let resource_metadata = previous.as_ref().and_then(|p| p.resource_metadata.clone());
        // A secret belongs to the client it was issued with.
        let client_secret = previous
            .filter(|p| p.client_id.as_deref() == Some(credentials.client_id.as_str()))
            .and_then(|p| p.client_secret);
        self.write(&OnDisk {
            url: self.url.clone(),
            client_id: Some(credentials.client_id.clone()),
            client_secret,
            resource_metadata,
            credentials: Some(credentials),
        })
        .map_err(AuthError::CredentialStoreError)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.remove()
            .map(|_| ())
            .map_err(AuthError::CredentialStoreError)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn credentials(client: &str) -> StoredCredentials {
        StoredCredentials::new(client.into(), None, vec!["read".into()], Some(1))
    }

    #[tokio::test]
    async fn tokens_are_private_and_bound_to_their_url() {
        let data = tempfile::tempdir().unwrap();
        let file = TokenFile::new(data.path(), "docs", "https://docs.example/mcp");
        assert!(file.load().await.unwrap().is_none());
        file.set_client("client-1", Some("s".into())).unwrap();
        file.save(credentials("client-1")).await.unwrap();
        let mode = std::fs::metadata(file.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let folder = std::fs::metadata(dir(data.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(folder & 0o777, 0o700);
        assert_eq!(
            file.load().await.unwrap().map(|c| c.client_id),
            Some("client-1".into())
        );
        assert_eq!(file.client(), Some(("client-1".into(), Some("s".into()))));

        // The same name at another URL (a project's table, say) gets nothing.
        let elsewhere = TokenFile::new(data.path(), "docs", "https://evil.example/mcp");
        assert!(elsewhere.load().await.unwrap().is_none());
        assert!(!elsewhere.has_tokens());
        assert_eq!(elsewhere.client(), None);

        // Another client's save drops the old client's secret.
        file.save(credentials("client-2")).await.unwrap();
        assert_eq!(file.client(), Some(("client-2".into(), None)));
        assert!(file.remove().unwrap());
        assert!(!file.remove().unwrap());
    }

    /// What the record keeps besides the tokens reads back as saved: the issuer the
    /// tokens came from, where the login found the resource metadata (kept only once
    /// there is a record), whether an access token is held; clearing forgets it all.
    #[tokio::test]
    async fn the_record_keeps_its_issuer_resource_metadata_and_tokens_until_cleared() {
        let data = tempfile::tempdir().unwrap();
        let file = TokenFile::new(data.path(), "docs", "https://docs.example/mcp");
        let metadata = "https://docs.example/.well-known/oauth-protected-resource";
        // No record yet: nothing to keep it in.
        file.set_resource_metadata(Some(metadata.into())).unwrap();
        assert_eq!(file.resource_metadata(), None);
        assert!(!file.path().exists());
        let mut saved = credentials("client-1");
        saved.issuer = Some("https://auth.example".into());
        saved.token_response = Some(
            serde_json::from_value(serde_json::json!({
                "access_token": "a",
                "token_type": "bearer"
            }))
            .unwrap(),
        );
        file.save(saved).await.unwrap();
        assert!(file.has_tokens());
        assert_eq!(file.issuer(), Some("https://auth.example".into()));
        assert_eq!(file.resource_metadata(), None);
        file.set_resource_metadata(Some(metadata.into())).unwrap();
        assert_eq!(file.resource_metadata(), Some(metadata.into()));
        assert!(file.has_tokens());
        file.set_resource_metadata(None).unwrap();
        assert_eq!(file.resource_metadata(), None);
        // Credentials without an access token: none held.
        file.save(credentials("client-1")).await.unwrap();
        assert!(!file.has_tokens());
        assert_eq!(file.issuer(), None);
        file.clear().await.unwrap();
        assert!(!file.path().exists());
        assert!(file.load().await.unwrap().is_none());
    }

    #[test]
    fn a_file_up_to_one_mib_is_read_and_a_larger_one_is_refused() {
        let data = tempfile::tempdir().unwrap();
        let file = TokenFile::new(data.path(), "docs", "https://docs.example/mcp");
        file.set_client("client-1", None).unwrap();
        let text = std::fs::read_to_string(file.path()).unwrap();
        // Whitespace after the JSON: the file is still rein's, just long.
        let pad = |to: usize| format!("{text}{}", " ".repeat(to - text.len()));
        std::fs::write(file.path(), pad(64 * 1024)).unwrap();
        assert_eq!(file.client(), Some(("client-1".into(), None)));
        std::fs::write(file.path(), pad(1024 * 1024)).unwrap();
        assert_eq!(file.client(), Some(("client-1".into(), None)));
        std::fs::write(file.path(), pad(1024 * 1024 + 1)).unwrap();
        assert_eq!(file.client(), None);
        let error = file.set_client("client-2", None).unwrap_err();
        assert!(error.contains("is larger than 1 MiB"), "{error}");
    }

    #[tokio::test]
    async fn a_file_that_cannot_be_opened_is_an_error_and_only_a_missing_one_is_none() {
        let data = tempfile::tempdir().unwrap();
        let file = TokenFile::new(data.path(), "docs", "https://docs.example/mcp");
        assert!(file.load().await.unwrap().is_none());
        // The folder is a file: opening the token file fails, and not as missing.
        std::fs::write(dir(data.path()), "").unwrap();
        let error = file.load().await.unwrap_err().to_string();
        assert!(error.contains("cannot read"), "{error}");
        assert!(error.contains("docs.json"), "{error}");
        let error = file.remove().unwrap_err();
        assert!(error.contains("cannot remove"), "{error}");
    }

    #[tokio::test]
    async fn a_damaged_file_is_an_error_naming_it() {
        let data = tempfile::tempdir().unwrap();
        let file = TokenFile::new(data.path(), "docs", "https://docs.example/mcp");
        std::fs::create_dir_all(dir(data.path())).unwrap();
        std::fs::write(file.path(), "{not json").unwrap();
        let error = file.load().await.unwrap_err().to_string();
        assert!(error.contains("docs.json"), "{error}");
        assert!(error.contains("rein mcp logout"), "{error}");
    }
}
