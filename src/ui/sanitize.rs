//! Text from the model or a tool, made safe to draw.
//!
//! Everything the dashboard shows that it did not write itself passes through
//! [`sanitize`] before it becomes a `Span`: escape sequences and other control characters
//! come out as visible marks (`^[`, `^M`, `^?`, `\u{9b}`) instead of being obeyed, so no
//! output can move the cursor, retitle the window or write the clipboard; tabs become
//! spaces to the next stop; bidirectional overrides are shown too, so text cannot pretend
//! to read in another order. Newlines stay: callers split lines on them.

use std::borrow::Cow;

use unicode_width::UnicodeWidthChar;

/// Columns between tab stops.
pub const TAB_WIDTH: usize = 4;

/// Whether `c` must be replaced before it reaches the terminal (tabs are expanded here;
/// which characters are unsafe is [`rein_core::text::sanitize`]'s one decision).
fn needs_care(c: char) -> bool {
    c == '\t' || rein_core::text::sanitize::shown(c).is_some()
}

/// `text` with control characters made visible and tabs expanded (stops every
/// [`TAB_WIDTH`] columns from the start of each line). Borrows when nothing changes.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    match text.find(needs_care) {
        None => Cow::Borrowed(text),
        Some(first) => {
            let mut out = String::with_capacity(text.len() + 16);
            out.push_str(&text[..first]);
            let line_start = text[..first].rfind('\n').map_or(0, |i| i + 1);
            let mut col = unicode_width::UnicodeWidthStr::width(&text[line_start..first]);
            for c in text[first..].chars() {
                push_safe(&mut out, c, &mut col);
            }
            Cow::Owned(out)
        }
    }
}

fn push_safe(out: &mut String, c: char, col: &mut usize) {
    match c {
        '\n' => {
            out.push('\n');
            *col = 0;
        }
        '\t' => {
            let n = TAB_WIDTH - *col % TAB_WIDTH;
            out.extend(std::iter::repeat_n(' ', n));
            *col += n;
        }
        c => match rein_core::text::sanitize::shown(c) {
            Some(shown) => {
                *col += shown.len();
                out.push_str(&shown);
            }
            None => {
                out.push(c);
                *col += c.width().unwrap_or(0);
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_text_is_borrowed() {
        assert!(matches!(sanitize("plain text\nline two"), Cow::Borrowed(_)));
    }

    #[test]
    fn escapes_become_visible() {
        assert_eq!(sanitize("a\x1b[2Jb\r\nc\x07"), "a^[[2Jb^M\nc^G");
        assert_eq!(sanitize("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(sanitize("x\u{7f}"), "x^?");
        // OSC 52 (clipboard write) and OSC 0 (window title) are shown, not obeyed.
        assert_eq!(
            sanitize("\x1b]52;c;aGk=\x07\x1b]0;pwned\x07"),
            "^[]52;c;aGk=^G^[]0;pwned^G"
        );
        assert_eq!(sanitize("abc\u{202e}def"), "abc\\u{202e}def");
    }

    #[test]
    fn tabs_expand_to_stops() {
        assert_eq!(sanitize("\tx"), "    x");
        assert_eq!(sanitize("ab\tc"), "ab  c");
        assert_eq!(sanitize("abcd\te\n\tf"), "abcd    e\n    f");
        assert_eq!(sanitize("中\tx"), "中  x");
    }
}
