//! A path relative to the project as the record holds it: the bytes of its name, any but
//! NUL, UTF-8 or not (`caf\xe9.txt` written by a Latin-1 tool is a file like any other and
//! is recorded and restored as one). It goes from `git status -z` and `git ls-tree -z`
//! through the session file to the file system without ever passing through a lossy
//! conversion.
//!
//! In a session file and in JSON a UTF-8 name is a plain string (as every rein before this
//! type wrote it); any other is `{"bytes": "<hex>"}`, which reads back to the same bytes.
//! Shown to a person ([`RelPath::shown`]), a name that needs it is quoted as git quotes
//! one: in double quotes, with `\\`, `\"`, `\n`, `\t`, `\r`, other control characters and
//! the bidirectional overrides by code (`\x1b`, `\u{202e}`) and each byte that is not
//! UTF-8 as `\xNN`; a plain name is shown as it is.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A project-relative path's bytes.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct RelPath(Vec<u8>);

impl RelPath {
    pub fn from_bytes(bytes: Vec<u8>) -> RelPath {
        RelPath(bytes)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The path to join to the project folder.
    pub fn as_path(&self) -> &Path {
        Path::new(OsStr::from_bytes(&self.0))
    }

    /// The name as text when it is UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }

    /// The folder it is in (`None` at the project's top).
    pub fn parent(&self) -> Option<RelPath> {
        let slash = self.0.iter().rposition(|&b| b == b'/')?;
        Some(RelPath(self.0[..slash].to_vec()))
    }

    /// Whether `self` is `folder` or lies under it.
    pub fn is_within(&self, folder: &RelPath) -> bool {
        self.0 == folder.0
            || (self.0.starts_with(&folder.0) && self.0.get(folder.0.len()) == Some(&b'/'))
    }

    /// The name for a person: see the module doc.
    pub fn shown(&self) -> Cow<'_, str> {
        match self.as_str() {
            Some(text) if !text.chars().any(needs_quotes) => Cow::Borrowed(text),
            _ => Cow::Owned(quoted(&self.0)),
        }
    }
}

impl From<&str> for RelPath {
    fn from(text: &str) -> RelPath {
        RelPath(text.as_bytes().to_vec())
    }
}

impl From<String> for RelPath {
    fn from(text: String) -> RelPath {
        RelPath(text.into_bytes())
    }
}

impl PartialEq<str> for RelPath {
    fn eq(&self, other: &str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl PartialEq<&str> for RelPath {
    fn eq(&self, other: &&str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl std::fmt::Display for RelPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown())
    }
}

impl std::fmt::Debug for RelPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", quoted(&self.0))
    }
}

/// Whether a name with `c` is shown quoted.
fn needs_quotes(c: char) -> bool {
    c == '"' || c == '\\' || c.is_control() || crate::text::sanitize::is_hidden(c)
}

/// `bytes` in double quotes with the escapes the module doc lists.
fn quoted(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                c if c.is_ascii_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
                c if c.is_control() || crate::text::sanitize::is_hidden(c) => {
                    out.push_str(&format!("\\u{{{:x}}}", c as u32))
                }
                c => out.push(c),
            }
        }
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02x}"));
        }
    }
    out.push('"');
    out
}

impl Serialize for RelPath {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.as_str() {
            Some(text) => s.serialize_str(text),
            None => {
                use serde::ser::SerializeMap;
                let hex: String = self.0.iter().map(|b| format!("{b:02x}")).collect();
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry("bytes", &hex)?;
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for RelPath {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RelPath, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            Text(String),
            Bytes { bytes: String },
        }
        match Form::deserialize(d)? {
            Form::Text(text) => Ok(RelPath::from(text)),
            Form::Bytes { bytes } => from_hex(&bytes)
                .map(RelPath)
                .ok_or_else(|| serde::de::Error::custom("a path's bytes are not hex")),
        }
    }
}

fn from_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_shown_plain_or_quoted_and_read_back_exactly() {
        let cases: &[(&[u8], &str)] = &[
            (b"src/main.rs", "src/main.rs"),
            (b"-rf", "-rf"),
            ("café/naïve.txt".as_bytes(), "café/naïve.txt"),
            (b"caf\xe9.txt", r#""caf\xe9.txt""#),
            (b"a\nb", r#""a\nb""#),
            (b"tab\there", r#""tab\there""#),
            (b"say \"hi\"", r#""say \"hi\"""#),
            (b"back\\slash", r#""back\\slash""#),
            (b"esc\x1b[2J", r#""esc\x1b[2J""#),
            ("rtl\u{202e}txt".as_bytes(), r#""rtl\u{202e}txt""#),
            (b"\xff\xfe", r#""\xff\xfe""#),
        ];
        for (bytes, shown) in cases {
            let path = RelPath::from_bytes(bytes.to_vec());
            assert_eq!(path.shown(), *shown);
            let json = serde_json::to_string(&path).unwrap();
            let back: RelPath = serde_json::from_str(&json).unwrap();
            assert_eq!(back, path, "{json}");
        }
        assert_eq!(
            serde_json::to_string(&RelPath::from_bytes(b"caf\xe9".to_vec())).unwrap(),
            r#"{"bytes":"636166e9"}"#
        );
        assert_eq!(
            serde_json::to_string(&RelPath::from("a b")).unwrap(),
            r#""a b""#
        );
        assert!(serde_json::from_str::<RelPath>(r#"{"bytes":"6"}"#).is_err());
    }

    #[test]
    fn folders_contain_their_paths_only() {
        let x = RelPath::from("x");
        assert!(RelPath::from("x/a").is_within(&x));
        assert!(x.is_within(&x));
        assert!(!RelPath::from("xy").is_within(&x));
        assert_eq!(RelPath::from("x/y/z").parent(), Some(RelPath::from("x/y")));
        assert_eq!(x.parent(), None);
    }

    #[test]
    fn a_path_equals_the_text_of_its_name_only() {
        let path = RelPath::from("src/a.rs");
        assert!(path == *"src/a.rs" && path == "src/a.rs");
        assert!(path != *"src/a.r" && path != "src/b.rs");
        assert!(RelPath::from_bytes(b"caf\xe9".to_vec()) != *"caf\u{e9}");
    }
}
