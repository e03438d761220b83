//! A prompt's content blocks as the user message rein sends.
//!
//! Text as it is; a link to a project file as an `@path` mention (the agent attaches the
//! file as the dashboard's `@` does, under the same read rules); a link elsewhere as a
//! Markdown link; a file the editor embedded (its buffer, unsaved changes included) as a
//! fenced block named by its path, within the attachment bound; an image as a line naming
//! it (`[Image #1: shot.png, png 1280×800, 210.0 KiB]`) where it was attached, and the
//! image itself sent after the text when the model takes images and it passes
//! [`Image::check`] (the line says why when it is left out); a sound as a note that rein
//! does not read it.

use std::path::Path;

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};
use rein_core::agent::Prompt;
use rein_core::conversation::Image;

/// The most images one prompt sends.
pub const MAX_IMAGES: usize = 20;

/// How a prompt is read.
#[derive(Debug, Clone, Copy)]
pub struct Reading<'a> {
    /// The project root: a link to a file inside it is an `@` mention.
    pub root: &'a Path,
    /// The most bytes of embedded files, together.
    pub cap: usize,
    /// The model takes images.
    pub images: bool,
}

/// A `file://` URI as a path, its `%XX` escapes decoded (`None`: not a file URI, or not
/// UTF-8 once decoded).
fn file_path(uri: &str) -> Option<String> {
    decoded(uri.strip_prefix("file://")?)
}

/// `text` with its `%XX` escapes decoded (`None`: not UTF-8 once decoded).
fn decoded(text: &str) -> Option<String> {
    rein_core::text::percent_decoded(text)
}

/// `path` relative to `root` when it is inside it.
fn inside<'a>(path: &'a str, root: &Path) -> Option<&'a str> {
    let rel = Path::new(path).strip_prefix(root).ok()?.to_str()?;
    (!rel.is_empty() && !rel.contains(char::is_whitespace)).then_some(rel)
}

/// The user message for `blocks` (see the module doc).
pub fn message(blocks: &[ContentBlock], reading: Reading<'_>) -> Prompt {
    let Reading { root, cap, .. } = reading;
    let mut out = String::new();
    let mut images = Vec::new();
    let mut numbered = 0usize;
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
            ContentBlock::Image(image) => {
                numbered += 1;
                let mut checked = Image::check(&image.mime_type, &image.data);
                if checked.image.is_ok() && !reading.images {
                    checked.image = Err("the model is not known to take images (`images = true` in its model entry says it does)".into());
                } else if checked.image.is_ok() && images.len() >= MAX_IMAGES {
                    checked.image = Err(format!("a prompt sends at most {MAX_IMAGES} images"));
                }
                // Named by the last part of its URI, when it has one.
                let name = image.uri.as_deref().and_then(|uri| {
                    let last = uri.rsplit('/').next().filter(|n| !n.is_empty())?;
                    Some(decoded(last).unwrap_or_else(|| last.to_string()))
                });
                let label = checked.label(numbered, name.as_deref());
                if let Ok(image) = checked.image {
                    images.push(image);
                }
                label
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
    Prompt { text: out, images }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        EmbeddedResource, ImageContent, ResourceLink, TextContent, TextResourceContents,
    };

    /// The text of `blocks` read in `/p` with `cap`, for a model that takes images.
    fn message(blocks: &[ContentBlock], root: &Path, cap: usize) -> String {
        let reading = Reading {
            root,
            cap,
            images: true,
        };
        super::message(blocks, reading).text
    }

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

    /// A PNG's first bytes (signature and header) of 1280×800 and 1×1, as base64.
    const PNG_1280X800: &str = "iVBORw0KGgoAAAANSUhEUgAABQAAAAMgCAYAAAA=";
    const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAA=";

    #[test]
    fn images_are_named_where_attached_and_sent_when_the_model_takes_them() {
        let root = Path::new("/p");
        let blocks = vec![
            ContentBlock::Text(TextContent::new("What is wrong here")),
            ContentBlock::Image(
                ImageContent::new(PNG_1280X800, "image/png")
                    .uri("file:///home/u/Shot%201.png".to_string()),
            ),
            ContentBlock::Text(TextContent::new("and here")),
            ContentBlock::Image(ImageContent::new("bm90IGFuIGltYWdl", "image/png")),
        ];
        let reading = Reading {
            root,
            cap: 100,
            images: true,
        };
        let prompt = super::message(&blocks, reading);
        assert_eq!(
            prompt.text,
            "What is wrong here [Image #1: Shot 1.png, png 1280×800, 29 B] and here \
             [Image #2: png, 12 B; left out: its bytes are not a png image]"
        );
        assert_eq!(prompt.images.len(), 1, "the broken one is not sent");
        assert_eq!(prompt.images[0].mime_type, "image/png");
        // A model not known to take images: named, none sent, and the line says why.
        let prompt = super::message(
            &blocks,
            Reading {
                images: false,
                ..reading
            },
        );
        assert!(prompt.images.is_empty());
        assert!(
            prompt.text.contains("[Image #1: Shot 1.png, png 1280×800, 29 B; left out: the model is not known to take images"),
            "{}",
            prompt.text
        );
        // At most MAX_IMAGES a prompt.
        let many: Vec<_> = (0..MAX_IMAGES + 2)
            .map(|_| ContentBlock::Image(ImageContent::new(PNG_1X1, "image/png")))
            .collect();
        let prompt = super::message(&many, reading);
        assert_eq!(prompt.images.len(), MAX_IMAGES);
        assert!(
            prompt
                .text
                .contains("[Image #22: png 1×1, 29 B; left out: a prompt sends at most 20 images]"),
            "{}",
            prompt.text
        );
    }
}
