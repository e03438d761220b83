//! File mentions: `@path` in a user's message, and the files attached for them.
//!
//! A mention is a word that starts with `@` at the start of the text or after whitespace
//! (`mail ann@example.com` holds none); punctuation that ends a sentence after it
//! (`see @src/main.rs.`) is not part of the path. The agent attaches each mentioned
//! regular file of the project ([`Attachment`], built in `crate::agent::attach`), and the
//! attachment's text is stored with the message, so a resumed session sends the same
//! bytes; the wire form puts it after the user's words ([`super::wire`]), and the
//! transcript shows the mention as a chip, never the file.

use std::ops::Range;

use serde::{Deserialize, Serialize};

/// A file the user attached to a message by mentioning it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    /// As mentioned: relative to the project root.
    pub path: String,
    /// What the model reads: the block with the path and the content (or why there is
    /// none), exactly as sent.
    pub text: String,
}

/// Characters that may end a sentence right after a mention without being part of it.
const TRAILING: &[char] = &['.', ',', ';', ':', '!', '?', ')', ']', '}', '"', '\'', '`'];

/// The mentions in `text`: the byte range of each `@path` (the `@` included) and the path.
pub fn mentions(text: &str) -> Vec<(Range<usize>, &str)> {
    let mut out = Vec::new();
    let mut word_start = None;
    let mut prev_space = true;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        if c.is_whitespace() {
            if let Some(start) = word_start.take() {
                let word: &str = &text[start..i];
                let path = word[1..].trim_end_matches(TRAILING);
                if !path.is_empty() {
                    out.push((start..start + 1 + path.len(), path));
                }
            }
            prev_space = true;
            continue;
        }
        if prev_space && c == '@' {
            word_start = Some(i);
        }
        prev_space = false;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(text: &str) -> Vec<&str> {
        mentions(text).into_iter().map(|(_, p)| p).collect()
    }

    #[test]
    fn a_mention_starts_a_word_and_sheds_trailing_punctuation() {
        assert_eq!(
            paths("explain @src/main.rs and @README.md."),
            ["src/main.rs", "README.md"]
        );
        assert_eq!(paths("@a.txt,\n(@b.rs)"), ["a.txt"]);
        assert_eq!(paths("mail ann@example.com or @ alone"), Vec::<&str>::new());
        let text = "see @x/y.rs?";
        let (range, path) = &mentions(text)[0];
        assert_eq!(&text[range.clone()], "@x/y.rs");
        assert_eq!(*path, "x/y.rs");
    }

    #[test]
    fn unicode_text_around_mentions_keeps_its_ranges() {
        let text = "→ @café/naïve.md ✓";
        let (range, path) = &mentions(text)[0];
        assert_eq!(&text[range.clone()], "@café/naïve.md");
        assert_eq!(*path, "café/naïve.md");
    }
}
