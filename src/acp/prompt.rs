//! A prompt's content blocks as the user message rein sends.
//!
//! Text as it is; a link to a project file as an `@path` mention (the agent attaches the
//! file as the dashboard's `@` does, under the same read rules); a link elsewhere as a
//! Markdown link; a file the editor embedded (its buffer, unsaved changes included) as a
//! fenced block named by its path, within the attachment bound; an image or a sound as a
//! note that rein cannot read it yet.

use std::path::Path;

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};

/// A `file://` URI as a path, its `%XX` escapes decoded (`None`: not a file URI, or not
/// UTF-8 once decoded).
fn file_path(uri: &str) -> Option<String> {
    let raw = uri.strip_prefix("file://")?.as_bytes();
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            raw[i],
            raw.get(i + 1).and_then(|&b| hex(b)),
            raw.get(i + 2).and_then(|&b| hex(b)),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// `path` relative to `root` when it is inside it.
fn inside<'a>(path: &'a str, root: &Path) -> Option<&'a str> {
    let rel = Path::new(path).strip_prefix(root).ok()?.to_str()?;
    (!rel.is_empty() && !rel.contains(char::is_whitespace)).then_some(rel)
}

/// The user message for `blocks`, embedded files bounded to `cap` bytes in all.
pub fn message(blocks: &[ContentBlock], root: &Path, cap: usize) -> String {
    let mut out = String::new();
    let mut embedded = 0usize;
    for block in blocks {
        let part = match block {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::ResourceLink(link) => {
                let path = file_path(&link.uri);
                match path.as_deref().and_then(|p| inside(p, root)) {
                    Some(rel) => format!("@{rel}"),
                    None => format!("[{}]({})", link.name, link.uri),
                }
            }
            ContentBlock::Resource(resource) => match &resource.resource {
                EmbeddedResourceResource::TextResourceContents(file) => {
                    let path = file_path(&file.uri);
                    let name = path
                        .as_deref()
                        .map(|p| inside(p, root).unwrap_or(p))
                        .unwrap_or(&file.uri);
                    let left = cap.saturating_sub(embedded);
                    if file.text.len() > left {
                        format!("[{name}: attached by the editor, left out: over the attachment limit of {cap} bytes]")
                    } else {
                        embedded += file.text.len();
                        let fence = if file.text.contains("```") {
                            "````"
                        } else {
                            "```"
                        };
                        format!(
                            "\n{name} (from the editor):\n{fence}\n{}\n{fence}\n",
                            file.text
                        )
                    }
                }
                EmbeddedResourceResource::BlobResourceContents(blob) => {
                    format!("[{}: a binary attachment rein does not read]", blob.uri)
                }
                _ => String::new(),
            },
            ContentBlock::Image(_) => {
                "[an image was attached; rein does not read images yet]".into()
            }
            ContentBlock::Audio(_) => "[a recording was attached; rein does not read sound]".into(),
            _ => String::new(),
        };
        if part.is_empty() {
            continue;
        }
        if !out.is_empty() && !out.ends_with(char::is_whitespace) && !part.starts_with('\n') {
            out.push(' ');
        }
        out.push_str(&part);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        EmbeddedResource, ResourceLink, TextContent, TextResourceContents,
    };

    #[test]
    fn text_links_and_embedded_files_become_one_message() {
        let root = Path::new("/p");
        let blocks = vec![
            ContentBlock::Text(TextContent::new("Fix")),
            ContentBlock::ResourceLink(ResourceLink::new("main.rs", "file:///p/src/main.rs")),
            ContentBlock::Text(TextContent::new("and see")),
            ContentBlock::ResourceLink(ResourceLink::new("notes", "https://example.org/n")),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                    "fn main() {}",
                    "file:///p/src/lib.rs",
                )),
            )),
        ];
        let text = message(&blocks, root, 1000);
        assert!(
            text.starts_with("Fix @src/main.rs and see [notes](https://example.org/n)"),
            "{text}"
        );
        assert!(
            text.contains("src/lib.rs (from the editor):\n```\nfn main() {}\n```"),
            "{text}"
        );
        // Over the bound: named, left out.
        let text = message(&blocks, root, 4);
        assert!(
            text.contains("left out: over the attachment limit"),
            "{text}"
        );
        // An escaped path is decoded; one with a space is a link, not a mention.
        let escaped = [
            ContentBlock::ResourceLink(ResourceLink::new("é", "file:///p/caf%C3%A9.rs")),
            ContentBlock::ResourceLink(ResourceLink::new("sp", "file:///p/a%20b.rs")),
        ];
        assert_eq!(
            message(&escaped, root, 10),
            "@café.rs [sp](file:///p/a%20b.rs)"
        );
        // A file outside the project is not a mention.
        let outside = [ContentBlock::ResourceLink(ResourceLink::new(
            "x",
            "file:///etc/passwd",
        ))];
        assert_eq!(message(&outside, root, 10), "[x](file:///etc/passwd)");
    }
}
