//! Big pastes folded into one placeholder: a bracketed paste of more than [`FOLD_LINES`]
//! lines or [`FOLD_CHARS`] characters goes into the input as `[Pasted text #1 +400 lines]`
//! (`+1234 chars` for one long line), and the text is kept here until the message is sent,
//! when [`Pastes::expand`] puts every placeholder's text back (the model gets it whole).
//! Numbering starts at 1 for each message.
//!
//! A placeholder is one unit: Backspace at its end or Delete at its start removes it whole
//! ([`Pastes::token_before`], [`Pastes::token_after`]), and the cursor never rests inside
//! one ([`Pastes::token_around`] says where to put it instead), so it cannot be edited into
//! something else by accident. Only the exact text of a placeholder this message made is
//! expanded, in one pass (a pasted text that holds a placeholder's words stays as it is);
//! the same words typed by hand after the paste is gone are plain text. A leaf: text in,
//! text out.

/// A paste of more lines than this is folded.
pub const FOLD_LINES: usize = 5;
/// A paste of more characters than this is folded (one long line).
pub const FOLD_CHARS: usize = 800;

/// How every placeholder begins.
const OPENING: &str = "[Pasted text #";

/// The big pastes of the message being written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pastes {
    /// (placeholder, text), in paste order.
    items: Vec<(String, String)>,
}

/// The placeholder of paste `n` of `text`: its lines, or its characters when it is one line.
pub fn placeholder(n: usize, text: &str) -> String {
    let lines = text.lines().count();
    if lines > 1 {
        format!("{OPENING}{n} +{lines} lines]")
    } else {
        format!("{OPENING}{n} +{} chars]", text.chars().count())
    }
}

/// Whether a paste is big enough to fold.
pub fn folds(text: &str) -> bool {
    text.lines().count() > FOLD_LINES || text.chars().count() > FOLD_CHARS
}

impl Pastes {
    /// Keep `text` (already with `\n` line breaks) when it is big enough to fold, and
    /// return its placeholder; `None` when it goes into the input as it is.
    pub fn fold(&mut self, text: &str) -> Option<String> {
        if !folds(text) {
            return None;
        }
        let token = placeholder(self.items.len() + 1, text);
        self.items.push((token.clone(), text.to_string()));
        Some(token)
    }

    /// Forget every paste (the message was sent, or the input emptied).
    pub fn clear(&mut self) {
        self.items.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// `text` with each placeholder of this message replaced by its paste, in one pass.
    pub fn expand(&self, text: &str) -> String {
        if self.items.is_empty() {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(i) = rest.find(OPENING) {
            out.push_str(&rest[..i]);
            rest = &rest[i..];
            match self.item_at_start(rest) {
                Some((token, paste)) => {
                    out.push_str(paste);
                    rest = &rest[token.len()..];
                }
                None => {
                    out.push('[');
                    rest = &rest[1..];
                }
            }
        }
        out.push_str(rest);
        out
    }

    /// The paste whose placeholder `text` starts with.
    fn item_at_start(&self, text: &str) -> Option<(&str, &str)> {
        self.items
            .iter()
            .find(|(token, _)| text.starts_with(token.as_str()))
            .map(|(t, p)| (t.as_str(), p.as_str()))
    }

    /// The placeholders in `line`, as (first char, char after the last) columns.
    fn spans(&self, line: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        if self.items.is_empty() {
            return out;
        }
        let mut byte = 0;
        while let Some(i) = line[byte..].find(OPENING) {
            let at = byte + i;
            match self.item_at_start(&line[at..]) {
                Some((token, _)) => {
                    let start = line[..at].chars().count();
                    out.push((start, start + token.chars().count()));
                    byte = at + token.len();
                }
                None => byte = at + 1,
            }
        }
        out
    }

    /// The placeholder that ends at column `col` of `line` (Backspace there removes it):
    /// its first column.
    pub fn token_before(&self, line: &str, col: usize) -> Option<usize> {
        self.spans(line)
            .into_iter()
            .find(|&(_, end)| end == col)
            .map(|(start, _)| start)
    }

    /// The placeholder that starts at column `col` of `line` (Delete there removes it):
    /// the column after it.
    pub fn token_after(&self, line: &str, col: usize) -> Option<usize> {
        self.spans(line)
            .into_iter()
            .find(|&(start, _)| start == col)
            .map(|(_, end)| end)
    }

    /// The placeholder column `col` of `line` is strictly inside of, as (start, end).
    pub fn token_around(&self, line: &str, col: usize) -> Option<(usize, usize)> {
        self.spans(line)
            .into_iter()
            .find(|&(start, end)| start < col && col < end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> String {
        (1..=n)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn only_big_pastes_fold_and_each_message_counts_from_one() {
        let mut pastes = Pastes::default();
        assert_eq!(pastes.fold(&lines(FOLD_LINES)), None);
        assert_eq!(
            pastes.fold(&lines(400)).as_deref(),
            Some("[Pasted text #1 +400 lines]")
        );
        let long = "x".repeat(FOLD_CHARS + 1);
        assert_eq!(
            pastes.fold(&long).as_deref(),
            Some("[Pasted text #2 +801 chars]")
        );
        pastes.clear();
        assert!(pastes.is_empty());
        assert_eq!(
            pastes.fold(&lines(6)).as_deref(),
            Some("[Pasted text #1 +6 lines]")
        );
    }

    #[test]
    fn expanding_puts_each_paste_back_once() {
        let mut pastes = Pastes::default();
        // A paste that holds a placeholder's words: they stay as they are.
        let tricky = format!("{}\n[Pasted text #2 +6 lines]", lines(6));
        let one = pastes.fold(&tricky).unwrap();
        let two = pastes.fold(&lines(6)).unwrap();
        let typed = format!("look at {one} and {two} [Pasted text #9 +1 lines]");
        assert_eq!(
            pastes.expand(&typed),
            format!(
                "look at {tricky} and {} [Pasted text #9 +1 lines]",
                lines(6)
            )
        );
        assert_eq!(Pastes::default().expand(&typed), typed);
    }

    #[test]
    fn a_placeholder_is_found_at_its_ends_and_around_its_inside() {
        let mut pastes = Pastes::default();
        let token = pastes.fold(&lines(10)).unwrap();
        let line = format!("é {token} x");
        let (start, end) = (2, 2 + token.chars().count());
        assert_eq!(pastes.token_before(&line, end), Some(start));
        assert_eq!(pastes.token_before(&line, end + 1), None);
        assert_eq!(pastes.token_after(&line, start), Some(end));
        assert_eq!(pastes.token_after(&line, start + 1), None);
        assert_eq!(pastes.token_around(&line, start + 3), Some((start, end)));
        assert_eq!(pastes.token_around(&line, start), None);
        assert_eq!(pastes.token_around(&line, end), None);
        // Edited into something else, it is plain text.
        let broken = line.replace("#1", "#1x");
        assert_eq!(pastes.token_before(&broken, end + 1), None);
    }
}
