//! Lone UTF-16 surrogate escapes, joined across events.
//!
//! A server that slices its text by UTF-16 index (JavaScript's `String.slice`) can send an
//! emoji's two halves in two events: `"content":"a \ud83d"` and then
//! `"content":"\ude00 b"`. Each event alone is not valid JSON text for a string (serde_json
//! refuses a lone surrogate), so before it is read, an event with one is rewritten: a high
//! half that ends a string is taken out and kept, and a low half that starts a string in
//! the next event is joined with it into the character. Any other lone half becomes
//! U+FFFD, the replacement character, so the turn goes on either way.

/// True when `data` may hold a surrogate escape (`\uD800`–`\uDFFF`): the cheap test that
/// keeps [`repair`] off the path of every other event.
pub(super) fn may_hold_one(data: &str) -> bool {
    let bytes = data.as_bytes();
    memchr::memchr_iter(b'\\', bytes).any(|i| {
        matches!(
            bytes.get(i + 1..i + 4),
            Some([b'u', b'd' | b'D', b'8' | b'9' | b'a'..=b'f' | b'A'..=b'F'])
        )
    })
}

/// The value of the four hex digits at `at`, when there are four.
fn hex4(bytes: &[u8], at: usize) -> Option<u16> {
    let digits = std::str::from_utf8(bytes.get(at..at + 4)?).ok()?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(digits, 16).ok()
}

fn is_high(unit: u16) -> bool {
    (0xD800..0xDC00).contains(&unit)
}

fn is_low(unit: u16) -> bool {
    (0xDC00..0xE000).contains(&unit)
}

/// `data` with its lone surrogate escapes joined or replaced (see the module's text), or
/// `None` when it has none and nothing is pending. `pending` carries a high half that ended
/// a string from one event to the next; it is dropped when the next event does not start a
/// string with the low half.
pub(super) fn repair(data: &str, pending: &mut Option<u16>) -> Option<String> {
    let bytes = data.as_bytes();
    let mut carried = pending.take();
    let mut out: Option<String> = None;
    // The bytes of `data` before `copied` are in `out` (once it exists).
    let mut copied = 0;
    let mut replace = |out: &mut Option<String>, from: usize, to: usize, with: &str| {
        let o = out.get_or_insert_with(|| String::with_capacity(data.len() + 8));
        o.push_str(data.get(copied..from).unwrap_or_default());
        o.push_str(with);
        copied = to;
    };
    let mut in_string = false;
    let mut string_start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !in_string {
            if b == b'"' {
                in_string = true;
                string_start = i + 1;
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                i += 1;
            }
            b'\\' if bytes.get(i + 1) == Some(&b'u') => {
                let Some(unit) = hex4(bytes, i + 2) else {
                    // Not an escape serde_json reads either: left for it to report.
                    i += 2;
                    continue;
                };
                let next = i + 6;
                if is_high(unit) {
                    let low = (bytes.get(next..next + 2) == Some(b"\\u"))
                        .then(|| hex4(bytes, next + 2))
                        .flatten()
                        .filter(|&u| is_low(u));
                    if low.is_some() {
                        // A whole pair: serde_json reads it.
                        i = next + 6;
                    } else if bytes.get(next) == Some(&b'"') {
                        replace(&mut out, i, next, "");
                        *pending = Some(unit);
                        i = next;
                    } else {
                        replace(&mut out, i, next, "\u{FFFD}");
                        i = next;
                    }
                } else if is_low(unit) {
                    let joined = if i == string_start {
                        carried.take()
                    } else {
                        None
                    }
                    .map(|high| {
                        0x10000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(unit) - 0xDC00)
                    })
                    .and_then(char::from_u32);
                    let mut buf = [0; 4];
                    let with = match joined {
                        Some(c) => &*c.encode_utf8(&mut buf),
                        None => "\u{FFFD}",
                    };
                    replace(&mut out, i, next, with);
                    i = next;
                } else {
                    i = next;
                }
            }
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    let mut out = out?;
    out.push_str(data.get(copied..).unwrap_or_default());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content(s: &str) -> String {
        format!(r#"{{"choices":[{{"index":0,"delta":{{"content":"{s}"}}}}]}}"#)
    }

    fn text_of(data: &str) -> String {
        let v: serde_json::Value = serde_json::from_str(data).unwrap();
        v["choices"][0]["delta"]["content"]
            .as_str()
            .unwrap()
            .to_string()
    }

    #[test]
    fn halves_in_two_events_join_into_the_character() {
        let mut pending = None;
        let first = repair(&content(r"a \ud83d"), &mut pending).unwrap();
        assert_eq!(text_of(&first), "a ");
        assert_eq!(pending, Some(0xD83D));
        let second = repair(&content(r"\ude00 b"), &mut pending).unwrap();
        assert_eq!(text_of(&second), "\u{1F600} b");
        assert_eq!(pending, None);
    }

    #[test]
    fn a_whole_pair_and_plain_text_are_left_alone() {
        let mut pending = None;
        assert!(may_hold_one(&content(r"\ud83d\ude00")));
        assert_eq!(repair(&content(r"x \ud83d\ude00 y"), &mut pending), None);
        assert_eq!(repair(&content(r"\u00e9 \\ud83d"), &mut pending), None);
        assert!(!may_hold_one(&content(r"\u00e9 \n")));
        assert!(!may_hold_one(&content("plain")));
        assert_eq!(pending, None);
    }

    #[test]
    fn lone_halves_elsewhere_become_the_replacement_character() {
        let mut pending = None;
        let mid = repair(&content(r"a \ud83d b"), &mut pending).unwrap();
        assert_eq!(text_of(&mid), "a \u{FFFD} b");
        let low = repair(&content(r"\ude00 c"), &mut pending).unwrap();
        assert_eq!(text_of(&low), "\u{FFFD} c");
        // A high half kept but not continued by a low one is dropped with the event.
        repair(&content(r"d \udbff"), &mut pending).unwrap();
        assert_eq!(repair(&content("e"), &mut pending), None);
        assert_eq!(pending, None);
        // A low half that does not start its string is not joined.
        repair(&content(r"f \ud83d"), &mut pending).unwrap();
        let late = repair(&content(r"g \ude00"), &mut pending).unwrap();
        assert_eq!(text_of(&late), "g \u{FFFD}");
    }

    #[test]
    fn broken_escapes_are_left_for_the_parser_to_report() {
        let mut pending = None;
        assert_eq!(repair(&content(r"\ud8"), &mut pending), None);
        assert_eq!(repair(r#""\u"#, &mut pending), None);
    }

    /// Every other escape is passed over whole: the hex-like text after `\n` or `\"` is
    /// text, not a half, and a lone half after a broken escape, another escape or a whole
    /// pair is still replaced.
    #[test]
    fn other_escapes_are_passed_over_whole() {
        let mut pending = None;
        for text in [r"\ndc00", r#"\"d83d"#] {
            assert_eq!(repair(&content(text), &mut pending), None, "{text}");
        }
        for (text, repaired) in [
            (r"\u12 \ud83d b", "\\u12 \u{FFFD} b"),
            (r"\n \ud83d b", "\\n \u{FFFD} b"),
            (r"\ud83d\ude00 \ud83d b", "\\ud83d\\ude00 \u{FFFD} b"),
        ] {
            assert_eq!(
                repair(&content(text), &mut pending),
                Some(content(repaired)),
                "{text}"
            );
        }
        assert_eq!(pending, None);
    }

    /// Only strings are looked into: an escape after one, outside any (which no JSON
    /// has), is left for the parser to report, even with a high half pending.
    #[test]
    fn nothing_outside_a_string_is_touched() {
        let mut pending = Some(0xD83D);
        assert_eq!(repair(r#"{"a":"b"\udc00}"#, &mut pending), None);
        assert_eq!(pending, None);
    }
}
