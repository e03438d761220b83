//! A ready server's resources: listed (every page, at most [`MAX_LISTED`]) and read by
//! URI within the server's `tool_timeout`. What a read gives is text for the model, cut
//! to the caller's limit: a text content as it is, up to what is left of the limit; a
//! binary one (a blob) named with its type and size, never inlined. The bytes a server
//! sends are bounded before they get here: a stdio line is cut as it is read (`stdio.rs`,
//! `rewrite.rs`), an HTTP answer over 16 MiB fails (`http_error.rs`), so a 100 MB
//! resource never sits whole in memory.

use std::time::Duration;

use rmcp::model::{PaginatedRequestParams, ReadResourceRequestParams, ResourceContents};

use super::{Live, McpManager};
use crate::mcp::http_error::request_failed;
use crate::mcp::{McpError, ServerState};

/// The most resources one server's listing keeps.
pub const MAX_LISTED: usize = 1000;
/// The most pages one listing asks for.
const MAX_PAGES: usize = 50;
/// The most contents of one read looked at.
const MAX_CONTENTS: usize = 100;

/// One resource a server lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpResource {
    pub server: String,
    pub uri: String,
    pub name: String,
    pub description: Option<String>,
    pub mime_type: Option<String>,
}

/// What reading a resource gave: the text the model reads, and whether it was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceText {
    pub text: String,
    pub cut: bool,
}

impl McpManager {
    /// The ready server `server`'s connection and its `tool_timeout`.
    pub(super) fn ready(&self, server: &str) -> Result<(Live, Duration), McpError> {
        let slots = self.slots();
        let slot = slots
            .iter()
            .find(|s| s.config.name == server)
            .ok_or_else(|| McpError::UnknownServer(server.to_string()))?;
        match (&slot.state, &slot.live) {
            (ServerState::Ready { .. }, Some(live)) => Ok((live.clone(), slot.config.tool_timeout)),
            (state, _) => Err(McpError::NotReady {
                server: server.to_string(),
                state: state.clone(),
            }),
        }
    }

    /// Whether a server of that name is configured.
    pub fn has_server(&self, name: &str) -> bool {
        self.slots().iter().any(|s| s.config.name == name)
    }

    /// The resources the ready server `server` lists (at most [`MAX_LISTED`]).
    pub async fn resources(&self, server: &str) -> Result<Vec<McpResource>, McpError> {
        let (live, timeout) = self.ready(server)?;
        list_resources(&live, server, timeout).await
    }

    /// Read the resource `uri` of the ready server `server`, as text of at most
    /// `max_bytes` (see the module doc).
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        max_bytes: usize,
    ) -> Result<ResourceText, McpError> {
        let (live, timeout) = self.ready(server)?;
        let read = live.peer.read_resource(ReadResourceRequestParams::new(uri));
        let result = tokio::time::timeout(timeout, read)
            .await
            .map_err(|_| timed_out(server, "resources/read", timeout))?
            .map_err(|e| failed(server, &live, &e, "resources/read"))?;
        Ok(resource_text(&result.contents, max_bytes))
    }
}

/// The contents of a read as text of at most `max_bytes`.
pub(crate) fn resource_text(contents: &[ResourceContents], max_bytes: usize) -> ResourceText {
    let mut text = String::new();
    let mut cut = contents.len() > MAX_CONTENTS;
    for content in contents.iter().take(MAX_CONTENTS) {
        let piece = match content {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "(binary content of {}, {}, about {} bytes: not attached)",
                crate::text::sanitize::line(uri, 200),
                crate::text::sanitize::line(mime_type.as_deref().unwrap_or("unknown type"), 100),
                blob.len() / 4 * 3
            ),
            _ => "(a content of a kind rein does not know: not attached)".to_string(),
        };
        if !text.is_empty() {
            text.push('\n');
        }
        let room = max_bytes.saturating_sub(text.len());
        if piece.len() > room {
            let mut end = room;
            while !piece.is_char_boundary(end) {
                end -= 1;
            }
            text.push_str(&piece[..end]);
            cut = true;
            break;
        }
        text.push_str(&piece);
    }
    ResourceText { text, cut }
}

/// Every page of `resources/list` of the connection `live` to `server` (at most
/// [`MAX_LISTED`] resources, [`MAX_PAGES`] pages), each page within `timeout`.
pub(super) async fn list_resources(
    live: &Live,
    server: &str,
    timeout: Duration,
) -> Result<Vec<McpResource>, McpError> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = PaginatedRequestParams::default().with_cursor(cursor.take());
        let page = tokio::time::timeout(timeout, live.peer.list_resources(Some(params)))
            .await
            .map_err(|_| timed_out(server, "resources/list", timeout))?
            .map_err(|e| failed(server, live, &e, "resources/list"))?;
        for r in page.resources {
            if out.len() == MAX_LISTED {
                return Ok(out);
            }
            out.push(McpResource {
                server: server.to_string(),
                uri: r.uri.clone(),
                name: r.name.clone(),
                description: r.description.clone(),
                mime_type: r.mime_type.clone(),
            });
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    Ok(out)
}

impl McpResource {
    /// How an `@` mention names it: `SERVER:URI`; `None` for a URI a mention cannot hold
    /// (whitespace or a control character in it, or longer than 2,000 bytes).
    pub fn mention(&self) -> Option<String> {
        let fits = !self.uri.is_empty()
            && self.uri.len() <= 2000
            && !self
                .uri
                .chars()
                .any(|c| c.is_whitespace() || c.is_control());
        fits.then(|| format!("{}:{}", self.server, self.uri))
    }
}

fn timed_out(server: &str, what: &str, timeout: Duration) -> McpError {
    McpError::Protocol {
        server: server.to_string(),
        message: format!(
            "{what} got no answer within {} s (mcp_servers.{server}.tool_timeout_secs)",
            timeout.as_secs()
        ),
    }
}

fn failed(server: &str, live: &Live, error: &rmcp::ServiceError, what: &str) -> McpError {
    match error {
        rmcp::ServiceError::McpError(e) => McpError::Rejected {
            server: server.to_string(),
            message: crate::text::sanitize::line(&e.message, 500),
        },
        other => McpError::Protocol {
            server: server.to_string(),
            message: request_failed(other, live.url.as_deref(), what),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_to_the_limit_and_blobs_are_described() {
        let contents = vec![
            ResourceContents::TextResourceContents {
                uri: "mem://a".into(),
                mime_type: None,
                text: "héllo world".into(),
                meta: None,
            },
            ResourceContents::BlobResourceContents {
                uri: "mem://b".into(),
                mime_type: Some("image/png".into()),
                blob: "AAAA".repeat(10),
                meta: None,
            },
        ];
        let whole = resource_text(&contents, 1000);
        assert!(!whole.cut);
        assert!(
            whole
                .text
                .starts_with("héllo world\n(binary content of mem://b, image/png, about 30 bytes"),
            "{}",
            whole.text
        );
        let cut = resource_text(&contents, 2);
        assert_eq!(
            cut,
            ResourceText {
                text: "h".into(),
                cut: true
            }
        );
    }
}
