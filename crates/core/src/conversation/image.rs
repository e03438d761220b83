//! An image for the model: one a tool's result carries (an MCP tool's screenshot) or one
//! the user attached to a message (the editor's image block).
//!
//! An image is kept only when every provider takes it: PNG, JPEG, GIF or WebP, at most
//! [`MAX_IMAGE_BYTES`] decoded, valid base64 whose first bytes are the signature of the
//! type it claims. A provider refuses the whole request for a broken image, and every
//! later request of the session would carry it again, so an image that fails a check is
//! described instead ([`Checked::label`] says why) and never sent.

use base64::Engine;

/// The largest image sent, decoded (providers refuse larger ones: 5 MB is Anthropic's
/// limit, the strictest).
pub const MAX_IMAGE_BYTES: usize = 5 * 1000 * 1000;

/// The image types sent: what OpenAI, Anthropic and Gemini all take, with their short
/// names and file signatures.
const TYPES: &[(&str, &str)] = &[
    ("image/png", "png"),
    ("image/jpeg", "jpeg"),
    ("image/gif", "gif"),
    ("image/webp", "webp"),
];

/// An image as the model gets it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Image {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub mime_type: String,
    /// Base64, without line breaks.
    pub data: String,
}

impl Image {
    /// What an image counts for in the context estimate, in characters: about what
    /// providers charge for a screenshot-sized image (~1,500 tokens), at 4 a token.
    pub const APPROX_CHARS: usize = 6_000;

    /// As a `data:` URL, the form every chat-completions server takes in `image_url`.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.mime_type, self.data)
    }

    /// Check an image given as a MIME type and base64 `data` (see the module doc).
    pub fn check(mime_type: &str, data: &str) -> Checked {
        let mime = mime_type.trim().to_ascii_lowercase();
        let compact: String = data.split_ascii_whitespace().collect();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(compact.as_bytes())
            .ok();
        let size = bytes.as_ref().map_or(compact.len() / 4 * 3, Vec::len);
        let kind = TYPES.iter().find(|(m, _)| *m == mime).map(|(_, k)| *k);
        let refused = match (&bytes, kind) {
            (_, None) => Some(format!(
                "{} is not a type models take (PNG, JPEG, GIF or WebP)",
                if mime.is_empty() { "no type" } else { &mime }
            )),
            (None, _) => Some("its data is not base64".to_string()),
            (Some(b), _) if b.is_empty() => Some("it is empty".to_string()),
            (Some(_), _) if size > MAX_IMAGE_BYTES => Some(format!(
                "it is over the {} providers take",
                human_size(MAX_IMAGE_BYTES)
            )),
            (Some(b), Some(kind)) if sniff(b) != Some(kind) => {
                Some(format!("its bytes are not a {kind} image"))
            }
            _ => None,
        };
        let dimensions = bytes.as_deref().and_then(dimensions);
        Checked {
            kind: kind.map_or(mime.clone(), str::to_string),
            size,
            dimensions,
            image: match refused {
                None => Ok(Image {
                    mime_type: mime,
                    data: compact,
                }),
                Some(why) => Err(why),
            },
        }
    }
}

/// What checking an image found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// `png`, `jpeg`, `gif`, `webp`, or the MIME type given for another.
    pub kind: String,
    /// Decoded bytes (estimated when the data is not base64).
    pub size: usize,
    /// Width and height, read from the header.
    pub dimensions: Option<(u32, u32)>,
    /// The image to send, or why it is not sent.
    pub image: Result<Image, String>,
}

impl Checked {
    /// The line a transcript and the model read where the image was attached:
    /// `[Image #1: shot.png, png 1280×800, 210.0 KiB]`, with why it was left out when it
    /// was.
    pub fn label(&self, number: usize, name: Option<&str>) -> String {
        let mut what = self.kind.clone();
        if let Some((w, h)) = self.dimensions {
            what.push_str(&format!(" {w}×{h}"));
        }
        let name = name.map(|n| format!("{n}, ")).unwrap_or_default();
        let size = human_size(self.size);
        match &self.image {
            Ok(_) => format!("[Image #{number}: {name}{what}, {size}]"),
            Err(why) => format!("[Image #{number}: {name}{what}, {size}; left out: {why}]"),
        }
    }
}

/// `812 B`, `5.3 KiB`, `10.0 MiB`.
pub fn human_size(bytes: usize) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b < KIB {
        format!("{bytes} B")
    } else if b < KIB * KIB {
        format!("{:.1} KiB", b / KIB)
    } else {
        format!("{:.1} MiB", b / KIB / KIB)
    }
}

/// The type `bytes` start with the signature of.
fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("webp")
    } else {
        None
    }
}

/// Width and height from an image's header (`None`: not one of the four types, or a
/// header cut short).
fn dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    let be16 = |at: usize| Some(u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?));
    let le16 = |at: usize| Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?));
    let be32 = |at: usize| Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let le24 = |at: usize| {
        let b = bytes.get(at..at + 3)?;
        Some(u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16)
    };
    match sniff(bytes)? {
        "png" => Some((be32(16)?, be32(20)?)),
        "gif" => Some((u32::from(le16(6)?), u32::from(le16(8)?))),
        "webp" => match bytes.get(12..16)? {
            b"VP8X" => Some((le24(24)? + 1, le24(27)? + 1)),
            b"VP8L" => {
                let b = u32::from_le_bytes(bytes.get(21..25)?.try_into().ok()?);
                Some(((b & 0x3fff) + 1, ((b >> 14) & 0x3fff) + 1))
            }
            b"VP8 " => Some((u32::from(le16(26)? & 0x3fff), u32::from(le16(28)? & 0x3fff))),
            _ => None,
        },
        _ => {
            // JPEG: the first start-of-frame marker's height and width, walking the
            // segments from the start.
            let mut at = 2;
            loop {
                while *bytes.get(at)? != 0xff {
                    at += 1;
                }
                while *bytes.get(at)? == 0xff {
                    at += 1;
                }
                let marker = *bytes.get(at)?;
                at += 1;
                if matches!(marker, 0xd0..=0xd9 | 0x01) {
                    continue;
                }
                let len = usize::from(be16(at)?);
                if matches!(marker, 0xc0..=0xcf) && !matches!(marker, 0xc4 | 0xc8 | 0xcc) {
                    return Some((u32::from(be16(at + 5)?), u32::from(be16(at + 3)?)));
                }
                at += len;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(bytes: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// A PNG header of `w`×`h` (signature and IHDR; enough for every check here).
    fn png(w: u32, h: u32) -> Vec<u8> {
        let mut out = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        out.extend(w.to_be_bytes());
        out.extend(h.to_be_bytes());
        out.extend([8, 6, 0, 0, 0]);
        out
    }

    #[test]
    fn a_good_image_is_kept_with_its_size_and_dimensions() {
        let checked = Image::check(" IMAGE/PNG", &b64(&png(1280, 800)));
        assert_eq!(checked.dimensions, Some((1280, 800)));
        let image = checked.image.clone().unwrap();
        assert_eq!(image.mime_type, "image/png");
        assert!(image.data_url().starts_with("data:image/png;base64,iVBOR"));
        assert_eq!(
            checked.label(1, Some("shot.png")),
            "[Image #1: shot.png, png 1280×800, 29 B]"
        );
        // Line breaks in the base64 are dropped from what is sent.
        let mut wrapped = b64(&png(2, 3));
        wrapped.insert(8, '\n');
        let image = Image::check("image/png", &wrapped).image.unwrap();
        assert!(!image.data.contains('\n'));
    }

    #[test]
    fn a_broken_or_mislabelled_image_is_described_not_sent() {
        let cases = [
            ("image/png", "not base64!".to_string(), "not base64"),
            ("image/png", String::new(), "empty"),
            ("image/svg+xml", b64(b"<svg/>"), "not a type models take"),
            ("image/jpeg", b64(&png(1, 1)), "not a jpeg image"),
            ("image/png", b64(b"hello world"), "not a png image"),
        ];
        for (mime, data, why) in cases {
            let checked = Image::check(mime, &data);
            let label = checked.label(2, None);
            assert!(checked.image.is_err(), "{mime} {data}");
            assert!(label.contains(why), "{label}");
            assert!(label.starts_with("[Image #2: "), "{label}");
        }
        let mut big = png(1, 1);
        big.resize(MAX_IMAGE_BYTES + 1, 0);
        let checked = Image::check("image/png", &b64(&big));
        assert!(checked
            .label(1, None)
            .contains("left out: it is over the 4.8 MiB"));
    }

    #[test]
    fn dimensions_of_each_type() {
        let gif = b"GIF89a\x40\x01\xf0\x00".to_vec();
        assert_eq!(dimensions(&gif), Some((320, 240)));
        // WebP, extended: canvas 640×480 stored minus one.
        let mut vp8x = b"RIFF\0\0\0\0WEBPVP8X\x0a\0\0\0\0\0\0\0".to_vec();
        vp8x.extend([0x7f, 0x02, 0x00, 0xdf, 0x01, 0x00]);
        assert_eq!(dimensions(&vp8x), Some((640, 480)));
        // WebP, lossless: 14-bit fields minus one after the 0x2f signature byte.
        let mut vp8l = b"RIFF\0\0\0\0WEBPVP8L\0\0\0\0\x2f".to_vec();
        let packed: u32 = 99 | (49 << 14);
        vp8l.extend(packed.to_le_bytes());
        assert_eq!(dimensions(&vp8l), Some((100, 50)));
        // JPEG: an APP0 segment, then a baseline frame of 600 high, 800 wide.
        let mut jpeg = vec![0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00];
        jpeg.extend([0xff, 0xc0, 0x00, 0x11, 0x08, 0x02, 0x58, 0x03, 0x20]);
        assert_eq!(dimensions(&jpeg), Some((800, 600)));
        // A JPEG cut short: no dimensions, no panic.
        assert_eq!(dimensions(&jpeg[..10]), None);
        assert_eq!(dimensions(&[0xff, 0xd8, 0xff]), None);
    }
}
