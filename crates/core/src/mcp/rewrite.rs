//! One JSON message rewritten as it streams in, within limits rein can hold and parse: a
//! stdio server's line that is too long (over [`MAX_MESSAGE_BYTES`](super::stdio)) or
//! nested deeper than serde_json parses (its recursion limit is 128) becomes a message
//! that parses, instead of one rmcp dropped without a word while the call waited for its
//! whole timeout.
//!
//! Bytes go in ([`Rewriter::feed`], any number of pieces, never all of them at once);
//! JSON comes out ([`Rewriter::finish`]), re-emitted token by token, its whitespace gone:
//! - a container nested deeper than [`Limits::depth`] becomes the string
//!   `"(nested too deeply)"`;
//! - a string value longer than [`Limits::string`] is cut on a character boundary and ends
//!   with a line saying how much was left out;
//! - once the output holds [`Limits::total`] bytes, further array items and object members
//!   are left out, but for the top-level object's `jsonrpc`, `id`, `result` and `error`
//!   and the few scalars in those that say what the answer is (`isError`, an error's
//!   `code` and `message`), so the answer still reaches the call it answers.
//!
//! The input is not checked: what is not JSON comes out as something that is not JSON
//! either, and fails to parse as the original would have.

/// What a rewritten message may hold.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// The deepest nesting of arrays and objects kept (the top-level object is 1).
    pub depth: usize,
    /// The longest string value kept, in bytes as written (escapes included).
    pub string: usize,
    /// The output size after which only the top-level members are added.
    pub total: usize,
}

/// What replaces a container nested too deeply.
pub(super) const TOO_DEEP: &str = "(nested too deeply)";
/// The longest object key and the longest number or literal kept.
const KEY_BYTES: usize = 4096;
const LITERAL_BYTES: usize = 64;
/// The keys of the members kept once the output is full: the top-level object's
/// JSON-RPC members (the first four), then the scalars of those that still say what the
/// answer is (a result's `isError`, an error's `code` and `message`).
const KEPT_WHEN_FULL: &[&[u8]] = &[
    b"jsonrpc", b"id", b"result", b"error", b"isError", b"code", b"message",
];
/// The longest string kept once the output is full (a scalar member that is still kept).
const FULL_STRING_BYTES: usize = 1024;

/// An open array or object of the output.
struct Open {
    object: bool,
    /// Members or items written so far.
    written: usize,
    /// In an object: a key was read (it waits in [`Rewriter::key`]) and its value is next.
    value_next: bool,
}

/// A string being read: a key (kept aside until its value shows whether the member is
/// kept) or a value (written as it comes).
struct Text {
    key: bool,
    /// The most bytes of it kept.
    cap: usize,
    kept: usize,
    omitted: usize,
    /// Bytes of an escape sequence still to come.
    escape: u8,
}

/// A value left out, skipped to its end.
struct Skip {
    /// Nesting inside the skipped value.
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// A number or literal: it ends at the first delimiter, which is not skipped.
    literal: bool,
}

pub(super) struct Rewriter {
    limits: Limits,
    out: Vec<u8>,
    open: Vec<Open>,
    /// The key of the member whose value comes next, as written (without its quotes).
    key: Vec<u8>,
    text: Option<Text>,
    /// Reading a number or literal: how many of its bytes were written.
    literal: Option<usize>,
    skip: Option<Skip>,
}

impl Rewriter {
    pub(super) fn new(limits: Limits) -> Rewriter {
        Rewriter {
            limits,
            out: Vec::new(),
            open: Vec::new(),
            key: Vec::new(),
            text: None,
            literal: None,
            skip: None,
        }
    }

    /// The next piece of the message.
    pub(super) fn feed(&mut self, bytes: &[u8]) {
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if let Some(skip) = &mut self.skip {
                if skip.literal {
                    if is_delimiter(b) {
                        self.skip = None;
                        continue; // the delimiter is read again, not skipped
                    }
                } else if skip.in_string {
                    if skip.escaped {
                        skip.escaped = false;
                    } else if b == b'\\' {
                        skip.escaped = true;
                    } else if b == b'"' {
                        skip.in_string = false;
                        if skip.depth == 0 {
                            self.skip = None;
                        }
                    }
                } else {
                    match b {
                        b'"' => skip.in_string = true,
                        b'{' | b'[' => skip.depth += 1,
                        b'}' | b']' => {
                            skip.depth = skip.depth.saturating_sub(1);
                            if skip.depth == 0 {
                                self.skip = None;
                            }
                        }
                        _ => {}
                    }
                }
                i += 1;
                continue;
            }
            if self.text.is_some() {
                i += self.string_bytes(&bytes[i..]);
                continue;
            }
            if let Some(len) = &mut self.literal {
                if is_delimiter(b) {
                    self.literal = None;
                    continue;
                }
                if *len < LITERAL_BYTES {
                    self.out.push(b);
                    *len += 1;
                }
                i += 1;
                continue;
            }
            i += 1;
            match b {
                b' ' | b'\t' | b'\r' | b'\n' | b',' | b':' => {}
                b'}' | b']' => {
                    if self.open.pop().is_some() {
                        self.out.push(b);
                    }
                }
                b'"' if self.key_next() => {
                    if let Some(open) = self.open.last_mut() {
                        open.value_next = true;
                    }
                    self.key.clear();
                    self.text = Some(Text {
                        key: true,
                        cap: KEY_BYTES,
                        kept: 0,
                        omitted: 0,
                        escape: 0,
                    });
                }
                _ => self.start_value(b),
            }
        }
    }

    /// The rewritten message.
    pub(super) fn finish(self) -> Vec<u8> {
        self.out
    }

    /// In an object, where a key comes next.
    fn key_next(&self) -> bool {
        self.open.last().is_some_and(|o| o.object && !o.value_next)
    }

    /// A value starts with `b` (the opening of a container or string, or a literal).
    fn start_value(&mut self, b: u8) {
        let depth = self.open.len();
        let full = self.out.len() >= self.limits.total;
        let container = matches!(b, b'{' | b'[');
        // Kept: anything while there is room; then only the top-level value, its
        // JSON-RPC members, and the scalars in those that say what the answer is.
        let keep = !full
            || depth == 0
            || (depth == 1 && KEPT_WHEN_FULL[..4].contains(&self.key.as_slice()))
            || (depth == 2 && !container && KEPT_WHEN_FULL.contains(&self.key.as_slice()));
        if let Some(open) = self.open.last_mut() {
            let object = open.object;
            open.value_next = false;
            if keep {
                if open.written > 0 {
                    self.out.push(b',');
                }
                open.written += 1;
                if object {
                    self.out.push(b'"');
                    self.out.extend_from_slice(&self.key);
                    self.out.extend_from_slice(b"\":");
                }
            }
        }
        if !keep {
            self.skip = Some(Skip {
                depth: usize::from(container),
                in_string: b == b'"',
                escaped: false,
                literal: !container && b != b'"',
            });
            return;
        }
        if container && depth >= self.limits.depth {
            self.out
                .extend_from_slice(format!("\"{TOO_DEEP}\"").as_bytes());
            self.skip = Some(Skip {
                depth: 1,
                in_string: false,
                escaped: false,
                literal: false,
            });
            return;
        }
        match b {
            b'{' | b'[' => {
                self.out.push(b);
                self.open.push(Open {
                    object: b == b'{',
                    written: 0,
                    value_next: false,
                });
            }
            b'"' => {
                self.out.push(b'"');
                self.text = Some(Text {
                    key: false,
                    cap: if full {
                        FULL_STRING_BYTES
                    } else {
                        self.limits.string
                    },
                    kept: 0,
                    omitted: 0,
                    escape: 0,
                });
            }
            _ => {
                self.out.push(b);
                self.literal = Some(1);
            }
        }
    }

    /// Bytes of the string being read, up to and including its closing quote; returns how
    /// many were read.
    fn string_bytes(&mut self, bytes: &[u8]) -> usize {
        let Some(text) = &mut self.text else {
            return 0;
        };
        for (n, &b) in bytes.iter().enumerate() {
            let in_escape = text.escape > 0;
            if in_escape {
                text.escape -= 1;
                // The letter after the backslash: `u` has four hex digits after it.
                if b == b'u' && text.escape == 0 {
                    text.escape = 4;
                }
            } else if b == b'"' {
                if !text.key {
                    if text.omitted > 0 {
                        let note = format!(
                            "\\n[… {} more not shown: rein cut this text as it read the server's answer]",
                            super::result::size(text.omitted)
                        );
                        self.out.extend_from_slice(note.as_bytes());
                    }
                    self.out.push(b'"');
                }
                self.text = None;
                return n + 1;
            } else if b == b'\\' {
                text.escape = 1;
            }
            // A cut falls before a character, outside an escape sequence.
            let boundary = !in_escape && (b & 0xC0) != 0x80;
            if text.omitted == 0 && (text.kept < text.cap || !boundary) {
                if text.key {
                    self.key.push(b);
                } else {
                    self.out.push(b);
                }
                text.kept += 1;
            } else {
                text.omitted += 1;
            }
        }
        bytes.len()
    }
}

/// A byte that ends a number or literal.
fn is_delimiter(b: u8) -> bool {
    matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n' | b':')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    const ROOMY: Limits = Limits {
        depth: 100,
        string: 1 << 20,
        total: 1 << 20,
    };

    fn rewrite(text: &str, limits: Limits, piece: usize) -> Value {
        let mut r = Rewriter::new(limits);
        for chunk in text.as_bytes().chunks(piece) {
            r.feed(chunk);
        }
        let out = r.finish();
        serde_json::from_slice(&out)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out)))
    }

    #[test]
    fn json_within_the_limits_comes_out_the_same() {
        let value = json!({
            "jsonrpc": "2.0", "id": 7,
            "result": {"content": [{"type": "text", "text": "a \"quoted\" \\ \u{e9} \n line"}],
                       "isError": false, "n": [1, -2.5e3, true, null, [], {}]}
        });
        for piece in [1, 3, 1000] {
            let pretty = serde_json::to_string_pretty(&value).unwrap();
            assert_eq!(rewrite(&pretty, ROOMY, piece), value);
        }
    }

    #[test]
    fn nesting_too_deep_becomes_a_string() {
        let text = format!("{{\"id\":1,\"r\":{}0{}}}", "[".repeat(300), "]".repeat(300));
        let out = rewrite(&text, Limits { depth: 5, ..ROOMY }, 7);
        assert_eq!(out["id"], 1);
        // Five levels of containers: the object and four arrays.
        assert_eq!(out["r"][0][0][0][0], TOO_DEEP);
    }

    #[test]
    fn a_long_string_is_cut_on_a_character_and_an_escape() {
        // Every cut point: in a two-byte character, in `\n`, in `\u00e9`.
        for cap in 0..14 {
            let text = json!({"id": 1, "s": "ab\u{e9}\n\\u00e9zz", "t": "x"}).to_string();
            let text = text.replace("\\\\u00e9", "\\u00e9");
            let out = rewrite(
                &text,
                Limits {
                    string: cap,
                    ..ROOMY
                },
                2,
            );
            let s = out["s"].as_str().unwrap();
            let (kept, note) = s.split_once("\n[…").unwrap_or((s, ""));
            assert!("ab\u{e9}\n\u{e9}zz".starts_with(kept), "{cap}: {s:?}");
            assert_eq!(
                note.is_empty(),
                kept == "ab\u{e9}\n\u{e9}zz",
                "{cap}: {s:?}"
            );
            if cap > 0 {
                assert_eq!(out["t"], "x");
            }
        }
    }

    #[test]
    fn a_full_output_keeps_the_top_level_members_and_scalars_near_them() {
        let big = "y".repeat(5000);
        let text = json!({
            "jsonrpc": "2.0",
            "result": {"content": [{"text": big}, {"text": "second"}], "more": {"a": 1}, "other": 5, "isError": true},
            "zz_extra": 1,
            "id": "last",
        })
        .to_string();
        let out = rewrite(
            &text,
            Limits {
                depth: 100,
                string: 1000,
                total: 500,
            },
            64,
        );
        assert_eq!(out["id"], "last");
        assert_eq!(out["jsonrpc"], "2.0");
        assert_eq!(out["result"]["isError"], true);
        assert!(out["result"].get("more").is_none());
        assert!(out["result"].get("other").is_none());
        assert!(out.get("zz_extra").is_none());
        let content = out["result"]["content"].as_array().unwrap();
        assert_eq!(content.len(), 1);
        let text = content[0]["text"].as_str().unwrap();
        assert!(text.starts_with(&"y".repeat(1000)), "{text}");
        assert!(
            text.ends_with("more not shown: rein cut this text as it read the server's answer]")
        );
    }
}
