//! Claude Code's matcher syntax: empty or `*` matches everything; names of letters, digits
//! and `_` joined by `|` match exactly those names; anything else is a regular expression
//! (`mcp__github__.*`, `Notebook.*`), matched anywhere in the name as Claude Code does
//! unless it anchors itself.

use regex::Regex;

/// A compiled matcher.
#[derive(Debug, Clone)]
pub enum Matcher {
    All,
    Names(Vec<String>),
    Pattern(Regex),
}

impl Matcher {
    /// The matcher `text` means; an error when it is a regular expression that does not
    /// compile.
    pub fn new(text: &str) -> Result<Matcher, String> {
        let text = text.trim();
        if text.is_empty() || text == "*" {
            return Ok(Matcher::All);
        }
        let is_name =
            |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if text.split('|').all(is_name) {
            return Ok(Matcher::Names(
                text.split('|').map(str::to_string).collect(),
            ));
        }
        Regex::new(text)
            .map(Matcher::Pattern)
            .map_err(|e| format!("not a regular expression ({})", last_line(&e.to_string())))
    }

    /// Whether `value` (a tool's name, a source, an agent type) is matched.
    pub fn matches(&self, value: &str) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Names(names) => names.iter().any(|n| n == value),
            Matcher::Pattern(re) => re.is_match(value),
        }
    }
}

/// A regular expression's error says what is wrong on its last line (the lines above
/// draw the pattern and point into it).
fn last_line(text: &str) -> &str {
    text.lines().last().unwrap_or(text).trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_forms() {
        let m = |t: &str| Matcher::new(t).unwrap();
        assert!(m("").matches("Bash") && m("*").matches("mcp__x__y"));
        assert!(m("Bash").matches("Bash") && !m("Bash").matches("BashOutput"));
        assert!(m("Write|Edit").matches("Edit") && !m("Write|Edit").matches("Read"));
        assert!(m("mcp__github__.*").matches("mcp__github__create_issue"));
        assert!(!m("mcp__github__.*").matches("mcp__gitlab__x"));
        assert!(m("Notebook.*").matches("NotebookEdit"));
        assert!(m("^Bash$").matches("Bash") && !m("^Bash$").matches("xBash"));
        // The regex crate's error in one line: its last, which says what is wrong.
        let bad = Matcher::new("(").unwrap_err();
        assert_eq!(bad, "not a regular expression (error: unclosed group)");
    }
}
