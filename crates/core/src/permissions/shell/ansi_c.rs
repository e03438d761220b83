//! The escapes of bash's `$'...'` quote, resolved as bash 5 resolves them.
//!
//! The quote's text (between `$'` and the closing `'`, found first: a backslash skips exactly
//! one character) flows in; out comes its value, or `None` when rein cannot be sure of it.
//! Escapes build bytes, as in bash: `\n`, `\t`, ..., `\NNN` (one to three octal digits, the
//! low byte kept), `\xHH` (one or two hex digits), `\uHHHH`/`\UHHHHHHHH`, `\cX` (a control
//! character; `\c\\` is one, and a `\c` that ends the text stays `\c`). A NUL byte ends the
//! value. An escape bash does not know stays as written (`\q`, `\8`, `\x` with no digit).
//! `None` for what depends on the locale or on details rein does not model: `\x{...}`,
//! `\c` before a non-ASCII character, a `\u` above ASCII, bytes that are not UTF-8.

/// The value of a `$'...'` quote whose text is `text`.
pub(super) fn decode_ansi_c(text: &str) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<u8> = Vec::with_capacity(text.len());
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        if c != '\\' {
            push_char(&mut out, c);
            continue;
        }
        let Some(&e) = chars.get(i) else {
            out.push(b'\\');
            break;
        };
        i += 1;
        let byte = match e {
            'a' => 0x07,
            'b' => 0x08,
            'e' | 'E' => 0x1b,
            'f' => 0x0c,
            'n' => b'\n',
            'r' => b'\r',
            't' => b'\t',
            'v' => 0x0b,
            '\\' | '\'' | '"' | '?' => e as u8,
            '0'..='7' => {
                let (value, used) = digits(chars.get(i - 1..).unwrap_or_default(), 8, 3);
                i += used - 1;
                (value & 0xff) as u8
            }
            'x' if chars.get(i) == Some(&'{') => return None,
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let (value, used) = digits(chars.get(i..).unwrap_or_default(), 16, max);
                if used == 0 {
                    out.push(b'\\');
                    push_char(&mut out, e);
                    continue;
                }
                i += used;
                // `\x` makes a byte; `\u` above ASCII depends on the locale.
                if e != 'x' && value >= 0x80 {
                    return None;
                }
                value as u8
            }
            'c' => match chars.get(i) {
                None => {
                    out.extend_from_slice(b"\\c");
                    continue;
                }
                Some('\\') => {
                    i += 1;
                    if chars.get(i) == Some(&'\\') {
                        i += 1;
                    }
                    0x1c
                }
                Some(&k) if k.is_ascii() => {
                    i += 1;
                    if k == '?' {
                        0x7f
                    } else {
                        (k as u8) & 0x1f
                    }
                }
                Some(_) => return None,
            },
            other => {
                out.push(b'\\');
                push_char(&mut out, other);
                continue;
            }
        };
        if byte == 0 {
            break;
        }
        out.push(byte);
    }
    String::from_utf8(out).ok()
}

fn push_char(out: &mut Vec<u8>, c: char) {
    let mut buf = [0; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

/// The value of up to `max` leading digits of `chars` in `radix`, and how many there were.
fn digits(chars: &[char], radix: u32, max: usize) -> (u32, usize) {
    let mut value: u32 = 0;
    let mut used = 0;
    for c in chars.iter().take(max) {
        let Some(digit) = c.to_digit(radix) else {
            break;
        };
        value = value.saturating_mul(radix).saturating_add(digit);
        used += 1;
    }
    (value, used)
}

#[cfg(test)]
mod tests {
    use super::decode_ansi_c;

    /// Each case checked against bash 5.2 (`printf %s $'...' | od -c`).
    #[test]
    fn escapes_resolve_as_in_bash() {
        for (text, value) in [
            (r"\x72m", Some("rm")),
            (r"\162m", Some("rm")),
            (r"\u0072m", Some("rm")),
            (r"\U00000072m", Some("rm")),
            (r"a\'b", Some("a'b")),
            (r"a\nb", Some("a\nb")),
            (r"r\0m", Some("r")),
            (r"\q", Some("\\q")),
            (r"\8", Some("\\8")),
            (r"\c", Some("\\c")),
            (r"a\c", Some("a\\c")),
            (r"\c\\", Some("\x1c")),
            (r"\c\'", Some("\x1c'")),
            (r"\c\\x", Some("\x1cx")),
            (r"\c\n", Some("\x1cn")),
            (r"\cA", Some("\x01")),
            (r"\ca", Some("\x01")),
            (r"\c?", Some("\x7f")),
            (r"\c[", Some("\x1b")),
            (r"\c@x", Some("")),
            (r"\x", Some("\\x")),
            (r"\x4", Some("\x04")),
            (r"\x414", Some("A4")),
            (r"\u", Some("\\u")),
            (r"\400", Some("")),
            (r"\0101", Some("\x081")),
            (r"x\101", Some("xA")),
            (r"\12x", Some("\nx")),
            (r"ab\7z", Some("ab\x07z")),
            (r"\u00412", Some("A2")),
            (r"\E", Some("\x1b")),
            (r#"\""#, Some("\"")),
            (r"\xc3\xa9", Some("é")),
            (r"\x{41}", None),
            (r"\u00e9", None),
            (r"\uD800", None),
            (r"\U110000", None),
            (r"\xff", None),
            ("\\cé", None),
            ("é", Some("é")),
        ] {
            assert_eq!(decode_ansi_c(text).as_deref(), value, "{text:?}");
        }
    }
}
