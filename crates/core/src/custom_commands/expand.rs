//! A custom command's prompt with its arguments put in.
//!
//! `$ARGUMENTS` becomes the whole argument text as typed (trimmed); `$1` … `$9` the
//! arguments split as a shell would (`shlex`: `"two words"` is one argument), a missing one
//! nothing. When the arguments do not split (an unclosed quote) they are split at
//! whitespace instead. Any other `$` stays as it is. A prompt that uses none of these and
//! is given arguments gets them appended on a last line, `ARGUMENTS: …`, so nothing typed
//! is lost (as Claude Code does).

/// The most bytes an expanded prompt may take: a cloned repository's command file of
/// `$ARGUMENTS $1 …` times a long argument could otherwise build gigabytes.
pub const MAX_EXPANDED_BYTES: usize = 4 << 20;

/// `body` with `args` put in.
pub fn substitute(body: &str, args: &str) -> String {
    substitute_within(body, args, MAX_EXPANDED_BYTES).0
}

/// [`substitute`], stopping at `max` bytes (on a character boundary): the text, and
/// whether it was cut there.
pub fn substitute_within(body: &str, args: &str, max: usize) -> (String, bool) {
    let mut out = Bounded {
        text: String::new(),
        max,
        cut: false,
    };
    substitute_into(body, args, &mut out);
    (out.text, out.cut)
}

/// A string that takes no more than `max` bytes.
struct Bounded {
    text: String,
    max: usize,
    cut: bool,
}

impl Bounded {
    fn push_str(&mut self, s: &str) {
        if self.cut {
            return;
        }
        let room = self.max.saturating_sub(self.text.len());
        if s.len() <= room {
            self.text.push_str(s);
            return;
        }
        let mut end = room;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        self.text.push_str(&s[..end]);
        self.cut = true;
    }

    fn push(&mut self, c: char) {
        self.push_str(c.encode_utf8(&mut [0; 4]));
    }
}

fn substitute_into(body: &str, args: &str, out: &mut Bounded) {
    let args = args.trim();
    let positional: Vec<String> =
        shlex::split(args).unwrap_or_else(|| args.split_whitespace().map(str::to_string).collect());
    let mut used = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        if out.cut {
            return;
        }
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(args);
            used = true;
            rest = tail;
            continue;
        }
        match after.as_bytes().first() {
            Some(d @ b'1'..=b'9') => {
                let index = usize::from(d - b'1');
                if let Some(arg) = positional.get(index) {
                    out.push_str(arg);
                }
                used = true;
                rest = &after[1..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    if !used && !args.is_empty() {
        out.push_str("\n\nARGUMENTS: ");
        out.push_str(args);
    }
}

#[cfg(test)]
mod tests {
    use super::substitute;

    /// Issue 25: a command file of `$ARGUMENTS` times a long argument stops at the cap,
    /// on a character boundary (at once: `substitute_into` reads no further once cut; no
    /// test times it).
    #[test]
    fn an_expansion_stops_at_its_cap() {
        let body = "$ARGUMENTS $1 ".repeat(5_000);
        let args = "é".repeat(25_000);
        let (text, cut) = super::substitute_within(&body, &args, 1_000_001);
        assert!(cut);
        assert!(
            text.len() <= 1_000_001 && text.len() > 999_990,
            "{}",
            text.len()
        );
        let (small, cut) = super::substitute_within("a $1 b", "x", 100);
        assert_eq!((small.as_str(), cut), ("a x b", false));
        let (edge, cut) = super::substitute_within("abc", "", 3);
        assert_eq!((edge.as_str(), cut), ("abc", false));
        let (over, cut) = super::substitute_within("abcd", "", 3);
        assert_eq!((over.as_str(), cut), ("abc", true));
    }

    #[test]
    fn arguments_is_the_whole_text() {
        assert_eq!(
            substitute("Fix issue $ARGUMENTS now.", "  123 and \"more\" "),
            "Fix issue 123 and \"more\" now."
        );
        assert_eq!(
            substitute("$ARGUMENTS|$ARGUMENTS", "a b"),
            "a b|a b",
            "every occurrence"
        );
        assert_eq!(substitute("Fix $ARGUMENTS.", ""), "Fix .");
    }

    #[test]
    fn positional_arguments_split_as_a_shell_would() {
        assert_eq!(
            substitute("pr $1 by $2, focus: $3", "42 'Ann Lee' \"error handling\""),
            "pr 42 by Ann Lee, focus: error handling"
        );
        assert_eq!(
            substitute("$9-$1", "a b c d e f g h i"),
            "i-a",
            "up to nine"
        );
        // `$10` is `$1` then `0`.
        assert_eq!(substitute("$10", "x"), "x0");
    }

    #[test]
    fn missing_arguments_become_nothing() {
        assert_eq!(substitute("[$1][$2]", "only"), "[only][]");
        assert_eq!(substitute("[$1]", ""), "[]");
    }

    #[test]
    fn an_unclosed_quote_splits_at_whitespace() {
        assert_eq!(substitute("$1|$2", "it's fine"), "it's|fine");
    }

    #[test]
    fn other_dollars_stay() {
        assert_eq!(
            substitute("cost $ 5, $0, $HOME, $ARG, end$", ""),
            "cost $ 5, $0, $HOME, $ARG, end$"
        );
        assert_eq!(substitute("héllo $1 ü", "ö"), "héllo ö ü");
    }

    #[test]
    fn arguments_a_prompt_does_not_use_are_appended() {
        assert_eq!(
            substitute("Review the diff.", "focus on tests"),
            "Review the diff.\n\nARGUMENTS: focus on tests"
        );
        assert_eq!(substitute("Review the diff.", "  "), "Review the diff.");
        assert_eq!(
            substitute("Check $1.", "a b"),
            "Check a.",
            "$1 counts as used"
        );
    }
}
