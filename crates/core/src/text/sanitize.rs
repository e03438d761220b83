//! One sanitiser for every piece of text rein prints that it did not write itself: model
//! replies, tool output, commands and paths from the model, reasons that quote them,
//! session titles. Whatever the front end (the dashboard, headless text or JSONL, `rein
//! sessions export`, `rein policy check`), the same characters are made visible instead of
//! reaching the terminal: C0 controls (ESC and the rest) in caret notation (`^[`, `^M`),
//! DEL as `^?`, the C1 controls (`\u{9b}` starts a CSI on some terminals) and the
//! bidirectional embeddings, overrides and isolates by their code point (`\u{202e}`), so
//! no text can move the cursor, retitle the window, write the clipboard (OSC 52) or
//! pretend to read in another order. Newlines and tabs stay: callers lay those out.
//! [`to_stderr`] is where every front end writes its lines on stderr.

use std::borrow::Cow;
use std::io::Write;

/// `args` on stderr. Its reader gone (`rein -p … 2>&1 | head -1`) or any other error,
/// the text is dropped: there is nowhere left to say it, and it must not end the run
/// with a panic as `eprintln!` would.
pub fn to_stderr(args: std::fmt::Arguments) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_fmt(args).and_then(|()| stderr.flush());
}

/// `text` as one printable line: line ends and tabs as spaces, control characters shown or
/// dropped by [`sanitize`], at most `max` characters and `…` where it was cut. Reads at
/// most about `2 × max` characters of `text`, however long it is.
pub fn line(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .take(max.saturating_mul(2).saturating_add(1))
        .map(|c| {
            if matches!(c, '\n' | '\r' | '\t') {
                ' '
            } else {
                c
            }
        })
        .collect();
    let clean = sanitize(&flat);
    crate::text::clip(&clean, max)
}

/// How `c` is shown when it must not reach the terminal as it is; `None` when it may.
pub fn shown(c: char) -> Option<String> {
    match c {
        '\n' | '\t' => None,
        '\u{7f}' => Some("^?".to_string()),
        c if c < ' ' => Some(format!("^{}", char::from(b'@' + c as u8))),
        c if is_hidden(c) => Some(format!("\\u{{{:x}}}", c as u32)),
        _ => None,
    }
}

/// The characters shown by their code point: DEL, the C1 controls and the bidirectional
/// embeddings, overrides and isolates.
pub fn is_hidden(c: char) -> bool {
    matches!(c, '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every character [`shown`] replaces made visible; borrows when none is.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    let Some(first) = text.find(|c| shown(c).is_some()) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        match shown(c) {
            Some(s) => out.push_str(&s),
            None => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A line of JSON (serde_json escapes the C0 controls already) with the C1 controls and
/// the bidirectional overrides written as `\uXXXX` escapes too, so the line stays valid
/// JSON with the same value and prints harmlessly.
pub fn json_line(line: &str) -> Cow<'_, str> {
    if !line.chars().any(is_hidden) {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + 16);
    for c in line.chars() {
        if is_hidden(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_become_visible_and_layout_stays() {
        assert_eq!(sanitize("a\x1b[2Jb\r\n\tc\x07"), "a^[[2Jb^M\n\tc^G");
        assert_eq!(sanitize("\u{9b}31m x\u{7f}"), "\\u{9b}31m x^?");
        assert_eq!(
            sanitize("\x1b]52;c;aGk=\x07\x1b]0;pwned\x07"),
            "^[]52;c;aGk=^G^[]0;pwned^G"
        );
        assert_eq!(
            sanitize("abc\u{202e}def\u{2066}"),
            "abc\\u{202e}def\\u{2066}"
        );
        assert!(matches!(sanitize("plain\n\ttext"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_lines_keep_their_value() {
        let value = serde_json::json!({"text": "a\u{9b}b\u{202e}c\x1bd"});
        let line = serde_json::to_string(&value).unwrap();
        let safe = json_line(&line);
        assert!(!safe.chars().any(|c| is_hidden(c) || (c < ' ')), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
    }
}
