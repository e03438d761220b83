//! A `tools/call` result as rein's tool result: text the model reads.
//!
//! Text blocks are the text. Images and audio become one line with their MIME type and
//! decoded size; images every provider takes ([`Image::check`]; at most [`MAX_IMAGES`] a
//! result) are also kept, for models that take images (`conversation::wire` sends them); an embedded resource is a line
//! with its URI, MIME type and size, followed by its text when it is text; a resource link
//! is a line with its URI, name, MIME type and size. `structuredContent` is added as JSON
//! unless a text block already holds the same JSON (servers are asked to send both). An
//! `isError` result is an error result the model reads and can act on. The text is capped
//! at [`MAX_RESULT_BYTES`] while it is built, with a closing line saying how much was left
//! out; the agent's own cap and spill apply on top.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

use crate::conversation::{Image, ToolResult};

/// The most bytes of text one call's result is turned into.
pub const MAX_RESULT_BYTES: usize = 4 * 1024 * 1024;
/// The most images kept of one result.
pub const MAX_IMAGES: usize = 4;

/// A call's result, converted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpOutput {
    /// What the model reads.
    pub text: String,
    /// The server flagged the result as an error (`isError`).
    pub is_error: bool,
    /// Bytes left out by the cap (0: the whole result is in `text`).
    pub omitted_bytes: usize,
    /// The images kept for a model that takes them (each described in `text` too).
    pub images: Vec<Image>,
}

impl McpOutput {
    /// As a rein tool result: an `isError` result is an error the model can act on.
    pub fn to_tool_result(&self) -> ToolResult {
        let mut result = if self.is_error {
            ToolResult::error(format!("Error: {}", self.text))
        } else {
            ToolResult::ok(self.text.clone())
        };
        result.images = self.images.clone();
        result
    }
}

/// Convert `result`, capping the text at `cap` bytes.
pub fn convert(result: &CallToolResult, cap: usize) -> McpOutput {
    let mut out = Capped::new(cap);
    let mut images = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => out.push(&t.text),
            ContentBlock::Image(i) => {
                let checked = Image::check(&i.mime_type, &i.data);
                out.push(&format!("[image: {}, {}]", i.mime_type, size(checked.size)));
                if let (true, Ok(image)) = (images.len() < MAX_IMAGES, checked.image) {
                    images.push(image);
                }
            }
            ContentBlock::Audio(a) => out.push(&format!(
                "[audio: {}, {}]",
                a.mime_type,
                size(decoded_len(&a.data))
            )),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents {
                    uri,
                    mime_type,
                    text,
                    ..
                } => {
                    out.push(&format!(
                        "[resource: {uri}, {}, {}]",
                        mime_type.as_deref().unwrap_or("text"),
                        size(text.len())
                    ));
                    out.push(text);
                }
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => out.push(&format!(
                    "[resource: {uri}, {}, {}]",
                    mime_type.as_deref().unwrap_or("binary"),
                    size(decoded_len(blob))
                )),
                _ => out.push("[resource of a kind rein does not know]"),
            },
            ContentBlock::ResourceLink(link) => {
                let mut words = vec![link.uri.clone(), format!("{:?}", link.name)];
                words.extend(link.mime_type.clone());
                words.extend(link.size.map(|s| size(s as usize)));
                if let Some(d) = &link.description {
                    words.push(d.clone());
                }
                out.push(&format!("[resource link: {}]", words.join(", ")));
            }
            _ => out.push("[content of a kind rein does not know]"),
        }
    }
    if let Some(structured) = &result.structured_content {
        let echoed = result.content.iter().any(|b| match b {
            ContentBlock::Text(t) => {
                serde_json::from_str::<serde_json::Value>(&t.text)
                    .ok()
                    .as_ref()
                    == Some(structured)
            }
            _ => false,
        });
        if !echoed {
            out.push(&structured.to_string());
        }
    }
    let is_error = result.is_error == Some(true);
    if out.text.is_empty() && out.omitted == 0 {
        out.push(if is_error {
            "the tool failed and said nothing more"
        } else {
            "(no output)"
        });
    }
    let mut out = out.finish(is_error);
    out.images = images;
    out
}

/// Text built block by block, one per line, cut at a byte cap on a character boundary.
struct Capped {
    text: String,
    cap: usize,
    omitted: usize,
}

impl Capped {
    fn new(cap: usize) -> Self {
        Capped {
            text: String::new(),
            cap,
            omitted: 0,
        }
    }

    fn push(&mut self, piece: &str) {
        let separator = usize::from(!self.text.is_empty());
        let room = self.cap.saturating_sub(self.text.len() + separator);
        if self.omitted > 0 || room == 0 {
            self.omitted += piece.len() + separator;
            return;
        }
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        if piece.len() <= room {
            self.text.push_str(piece);
            return;
        }
        let mut cut = room;
        while !piece.is_char_boundary(cut) {
            cut -= 1;
        }
        self.text.push_str(&piece[..cut]);
        self.omitted += piece.len() - cut;
    }

    fn finish(mut self, is_error: bool) -> McpOutput {
        if self.omitted > 0 {
            self.text.push_str(&format!(
                "\n[… {} more not shown: the result was over {}]",
                size(self.omitted),
                size(self.cap)
            ));
        }
        McpOutput {
            text: self.text,
            is_error,
            omitted_bytes: self.omitted,
            images: Vec::new(),
        }
    }
}

/// The decoded length of base64 text (padding and line breaks left out).
fn decoded_len(base64: &str) -> usize {
    let chars = base64
        .bytes()
        .filter(|b| !matches!(b, b'=' | b'\n' | b'\r' | b' '))
        .count();
    chars * 3 / 4
}

/// `812 B`, `5.3 KiB`, `10.0 MiB`.
pub(super) fn size(bytes: usize) -> String {
    crate::conversation::image::human_size(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(value: serde_json::Value) -> CallToolResult {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn every_kind_of_content_becomes_a_line() {
        let r = result(json!({
            "content": [
                {"type": "text", "text": "Here it is:"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "audio", "data": "A".repeat(4096), "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "demo://r/1", "mimeType": "text/plain", "text": "hello"}},
                {"type": "resource", "resource": {"uri": "demo://r/2", "blob": "AAAA"}},
                {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt", "mimeType": "text/plain", "size": 2048},
            ]
        }));
        let out = convert(&r, MAX_RESULT_BYTES);
        assert_eq!(
            out.text,
            "Here it is:\n[image: image/png, 8 B]\n[audio: audio/wav, 3.0 KiB]\n\
             [resource: demo://r/1, text/plain, 5 B]\nhello\n[resource: demo://r/2, binary, 3 B]\n\
             [resource link: file:///a.txt, \"a.txt\", text/plain, 2.0 KiB]"
        );
        assert!(!out.is_error);
        // The image is kept for models that take images.
        let mut expected = ToolResult::ok(out.text.clone());
        expected.images = vec![Image {
            mime_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        }];
        assert_eq!(out.to_tool_result(), expected);
    }

    #[test]
    fn only_images_a_provider_takes_are_kept() {
        let png = |data: &str| json!({"type": "image", "data": data, "mimeType": "image/png"});
        let r = result(json!({"content": [
            png("iVBO\nRw0KGgo="),
            json!({"type": "image", "data": "AAAA", "mimeType": "image/svg+xml"}),
            png("not base64!"),
            png(""),
            json!({"type": "image", "data": "A".repeat(7_000_000), "mimeType": "image/png"}),
            // A JPEG called a PNG: a provider would refuse the request.
            png("/9j/4A=="),
            json!({"type": "image", "data": "/9j/4A==", "mimeType": "IMAGE/JPEG"}),
            png("iVBORw0KGgo="), png("iVBORw0KGgo="), png("iVBORw0KGgo="),
        ]}));
        let out = convert(&r, MAX_RESULT_BYTES);
        // Every one is described; four at most are kept, of the kinds every provider
        // takes, valid, what they claim to be and not too big; line breaks go.
        assert_eq!(out.text.lines().count(), 10);
        let kept: Vec<(&str, &str)> = out
            .images
            .iter()
            .map(|i| (i.mime_type.as_str(), i.data.as_str()))
            .collect();
        assert_eq!(
            kept,
            [
                ("image/png", "iVBORw0KGgo="),
                ("image/jpeg", "/9j/4A=="),
                ("image/png", "iVBORw0KGgo="),
                ("image/png", "iVBORw0KGgo=")
            ]
        );
    }

    #[test]
    fn structured_content_is_added_unless_a_text_block_holds_it() {
        let echoed = result(json!({
            "content": [{"type": "text", "text": "{\"t\": 33, \"c\": \"Cloudy\"}"}],
            "structuredContent": {"c": "Cloudy", "t": 33}
        }));
        assert_eq!(convert(&echoed, 100).text, "{\"t\": 33, \"c\": \"Cloudy\"}");
        let only = result(json!({"content": [], "structuredContent": {"ok": true}}));
        assert_eq!(convert(&only, 100).text, "{\"ok\":true}");
    }

    #[test]
    fn an_error_result_is_an_error_the_model_reads() {
        let r = result(
            json!({"content": [{"type": "text", "text": "Invalid timezone"}], "isError": true}),
        );
        let out = convert(&r, 100);
        assert!(out.is_error);
        assert_eq!(
            out.to_tool_result(),
            ToolResult::error("Error: Invalid timezone")
        );
        let silent = result(json!({"content": [], "isError": true}));
        assert_eq!(
            convert(&silent, 100).text,
            "the tool failed and said nothing more"
        );
        assert_eq!(
            convert(&result(json!({"content": []})), 100).text,
            "(no output)"
        );
    }

    #[test]
    fn a_big_result_is_cut_at_the_cap_on_a_character_boundary() {
        let big = "é".repeat(1000); // 2000 bytes
        let r = result(json!({"content": [
            {"type": "text", "text": "head"},
            {"type": "text", "text": big},
            {"type": "text", "text": "tail"}
        ]}));
        let out = convert(&r, 101);
        let shown = out.text.lines().take(2).collect::<Vec<_>>().join("\n");
        assert!(shown.len() <= 101, "{}", shown.len());
        assert!(shown.starts_with("head\néé"));
        // Everything past the cap: the rest of the big block and the tail with their newlines.
        assert_eq!(out.omitted_bytes, (4 + 1 + 2000 + 1 + 4) - 101);
        assert!(
            out.text
                .ends_with("[… 1.9 KiB more not shown: the result was over 101 B]"),
            "{}",
            out.text
        );
    }
}
