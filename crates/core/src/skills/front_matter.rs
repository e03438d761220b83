//! The front matter of a `SKILL.md`: the `name` and `description` between the `---` lines
//! at the top of the file; [`split`] reads any keys of such a block and the body after it
//! (custom commands use it for `description` and `argument-hint`).
//!
//! Text flows in, a [`FrontMatter`] (or a [`Block`]) or a [`FrontMatterError`] (a sentence
//! naming the problem) flows out. This is not a YAML parser: it reads the simple form skills use,
//! `key: value` on one line, the value optionally in single or double quotes. A value
//! continued on indented lines, or given as a `>`/`|` block, is joined into one line. Other
//! keys, comments and nested values are ignored.

/// What a skill says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontMatter {
    pub name: String,
    /// One line, whitespace collapsed, at most [`MAX_DESCRIPTION_CHARS`] characters.
    pub description: String,
}

/// Longest name accepted.
pub const MAX_NAME_CHARS: usize = 64;
/// Longest description kept; a longer one is cut (with `…`), as every skill's description
/// is part of every request.
pub const MAX_DESCRIPTION_CHARS: usize = 300;

/// Why a front matter was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontMatterError {
    #[error("it does not start with a front matter: the first line must be `---`, then `name: ...` and `description: ...` lines, then `---`")]
    NoOpening,
    #[error("the front matter has no closing `---` line")]
    NoClosing,
    #[error("the front matter has no `{0}: ...` line")]
    Missing(&'static str),
    #[error("`{0}` is empty")]
    Empty(&'static str),
    #[error("`{0}` is given twice")]
    Twice(&'static str),
    #[error("the name \"{name}\" {why}")]
    BadName { name: String, why: &'static str },
}

/// A front matter's values for the keys asked for, and the text after its closing line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block<'a> {
    /// `(key, value)` for each asked-for key the block gives, each value one line.
    pub values: Vec<(&'static str, String)>,
    /// The rest of the file, after the closing `---` line.
    pub body: &'a str,
}

impl Block<'_> {
    /// The value given for `key`, if any.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Read the `---` block at the top of `text`, keeping the values of `keys` (others are
/// ignored); a key given twice is an error. Shared by skills and custom commands
/// (`crate::custom_commands`).
pub fn split<'a>(text: &'a str, keys: &[&'static str]) -> Result<Block<'a>, FrontMatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let first_end = text.find('\n').unwrap_or(text.len());
    if text[..first_end].trim_end() != "---" {
        return Err(FrontMatterError::NoOpening);
    }
    let mut block = Vec::new();
    let mut body = None;
    let mut offset = (first_end + 1).min(text.len());
    while offset < text.len() {
        let end = text[offset..]
            .find('\n')
            .map_or(text.len(), |i| offset + i + 1);
        let line = text[offset..end].trim_end_matches(['\n', '\r']);
        if line.trim_end() == "---" {
            body = Some(&text[end..]);
            break;
        }
        block.push(line);
        offset = end;
    }
    let Some(body) = body else {
        return Err(FrontMatterError::NoClosing);
    };

    let mut values: Vec<(&'static str, String)> = Vec::new();
    let mut i = 0;
    while i < block.len() {
        let line = block[i];
        i += 1;
        if is_indented(line) || line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let Some(&key) = keys.iter().find(|k| **k == key.trim()) else {
            continue;
        };
        let mut parts = vec![value.trim()];
        while i < block.len() && is_indented(block[i]) {
            parts.push(block[i].trim());
            i += 1;
        }
        if values.iter().any(|(k, _)| *k == key) {
            return Err(FrontMatterError::Twice(key));
        }
        values.push((key, scalar(&parts)));
    }
    Ok(Block { values, body })
}

/// Read the front matter at the top of a `SKILL.md`.
pub fn parse(text: &str) -> Result<FrontMatter, FrontMatterError> {
    let block = split(text, &["name", "description"])?;
    let name = block
        .get("name")
        .ok_or(FrontMatterError::Missing("name"))?
        .to_string();
    let description = block
        .get("description")
        .ok_or(FrontMatterError::Missing("description"))?
        .to_string();
    if name.is_empty() {
        return Err(FrontMatterError::Empty("name"));
    }
    if description.is_empty() {
        return Err(FrontMatterError::Empty("description"));
    }
    check_name(&name)?;
    Ok(FrontMatter {
        name,
        description: cap(description, MAX_DESCRIPTION_CHARS),
    })
}

fn is_indented(line: &str) -> bool {
    line.starts_with([' ', '\t'])
}

/// A value from its first line and continuation lines: one line, unquoted, whitespace
/// collapsed.
fn scalar(parts: &[&str]) -> String {
    let block_marker = matches!(parts.first(), Some(first) if is_block_marker(first));
    let rest = if block_marker { &parts[1..] } else { parts };
    let joined = rest
        .iter()
        .filter(|p| !p.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    let value = if block_marker {
        joined
    } else {
        unquote(&joined)
    };
    // One line, with no control characters: it goes into the system prompt as is.
    value
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `|`, `>`, with an optional chomping sign (`|-`, `>+`) and indentation digit.
fn is_block_marker(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some('|' | '>'))
        && chars.all(|c| c == '-' || c == '+' || c.is_ascii_digit())
}

fn unquote(s: &str) -> String {
    if s.len() >= 2 && s.starts_with('"') && s.ends_with('"') {
        let inner = &s[1..s.len() - 1];
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n' | 't') => out.push(' '),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        }
        out
    } else if s.len() >= 2 && s.starts_with('\'') && s.ends_with('\'') {
        s[1..s.len() - 1].replace("''", "'")
    } else {
        s.to_string()
    }
}

fn check_name(name: &str) -> Result<(), FrontMatterError> {
    let why = if name.chars().any(char::is_whitespace) {
        Some("has whitespace in it")
    } else if name.contains(['/', '\\']) {
        Some("has a `/` or `\\` in it")
    } else if name.chars().count() > MAX_NAME_CHARS {
        Some("is longer than 64 characters")
    } else {
        None
    };
    match why {
        Some(why) => Err(FrontMatterError::BadName {
            name: name.chars().flat_map(char::escape_debug).take(80).collect(),
            why,
        }),
        None => Ok(()),
    }
}

/// `text` cut to `max` characters, ending in `…` when it was cut.
pub fn cap(text: String, max: usize) -> String {
    if text.chars().count() <= max {
        return text;
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.truncate(out.trim_end().len());
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> FrontMatter {
        parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    #[test]
    fn the_simple_form() {
        let fm = ok("---\nname: pdf-forms\ndescription: Fill in PDF forms.\n---\n# PDF\n");
        assert_eq!(fm.name, "pdf-forms");
        assert_eq!(fm.description, "Fill in PDF forms.");
    }

    #[test]
    fn quotes_crlf_bom_other_keys_and_comments() {
        let text = "\u{feff}---\r\n# a comment\r\nlicense: MIT\r\nname: \"review\"\r\ndescription: 'Review a diff: it''s \"careful\"'\r\nmetadata:\r\n  name: nested\r\nallowed-tools: [bash]\r\n---\r\nbody\r\n";
        let fm = ok(text);
        assert_eq!(fm.name, "review");
        assert_eq!(fm.description, "Review a diff: it's \"careful\"");
        let fm = ok("---\nname: a\ndescription: \"say \\\"hi\\\" \\\\ now\"\n---\n");
        assert_eq!(fm.description, "say \"hi\" \\ now");
    }

    #[test]
    fn a_value_on_several_lines_becomes_one_line() {
        let fm = ok("---\nname: a\ndescription: >-\n  Folded text\n  over lines.\n---\n");
        assert_eq!(fm.description, "Folded text over lines.");
        let fm = ok("---\nname: a\ndescription: |\n  Literal\n  text\n---\n");
        assert_eq!(fm.description, "Literal text");
        let fm = ok("---\nname: a\ndescription: Plain text\n  continued here.\nversion: 2\n---\n");
        assert_eq!(fm.description, "Plain text continued here.");
        let fm = ok("---\nname: a\ndescription: tabs\tand\u{7}bells   collapse\n---\n");
        assert_eq!(fm.description, "tabs and bells collapse");
    }

    #[test]
    fn a_long_description_is_cut() {
        let long = "word ".repeat(200);
        let fm = ok(&format!("---\nname: a\ndescription: {long}\n---\n"));
        assert_eq!(fm.description.chars().count(), MAX_DESCRIPTION_CHARS);
        assert!(fm.description.ends_with("word…"), "{}", fm.description);
    }

    #[test]
    fn malformed_front_matter_is_an_error_that_says_why() {
        use FrontMatterError::*;
        let cases: &[(&str, FrontMatterError)] = &[
            ("# Title\nname: a\n", NoOpening),
            ("", NoOpening),
            ("\n---\nname: a\ndescription: b\n---\n", NoOpening),
            ("---\nname: a\ndescription: b\n", NoClosing),
            ("---\ndescription: b\n---\n", Missing("name")),
            ("---\nname: a\n---\n", Missing("description")),
            ("---\nname:\ndescription: b\n---\n", Empty("name")),
            (
                "---\nname: a\ndescription: \"\"\n---\n",
                Empty("description"),
            ),
            (
                "---\nname: a\nname: b\ndescription: c\n---\n",
                Twice("name"),
            ),
            (
                "---\nname: two words\ndescription: b\n---\n",
                BadName {
                    name: "two words".into(),
                    why: "has whitespace in it",
                },
            ),
            (
                "---\nname: ../escape\ndescription: b\n---\n",
                BadName {
                    name: "../escape".into(),
                    why: "has a `/` or `\\` in it",
                },
            ),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text).as_ref(), Err(want), "{text:?}");
        }
        let long = "x".repeat(65);
        let err = parse(&format!("---\nname: {long}\ndescription: b\n---\n")).unwrap_err();
        assert!(
            err.to_string().ends_with("is longer than 64 characters"),
            "{err}"
        );
    }

    #[test]
    fn split_keeps_the_asked_keys_and_returns_the_body() {
        let text =
            "---\r\ndescription: Review it\r\nargument-hint: <pr>\r\nname: x\r\n---\r\nBody $1\n";
        let block = split(text, &["description", "argument-hint"]).unwrap();
        assert_eq!(block.get("description"), Some("Review it"));
        assert_eq!(block.get("argument-hint"), Some("<pr>"));
        assert_eq!(block.get("name"), None, "not asked for");
        assert_eq!(block.body, "Body $1\n");
        let block = split("---\n---", &["description"]).unwrap();
        assert_eq!((block.values.len(), block.body), (0, ""));
        assert_eq!(
            split("no block\n", &["description"]),
            Err(FrontMatterError::NoOpening)
        );
        assert_eq!(
            split(
                "---\ndescription: a\ndescription: b\n---\n",
                &["description"]
            ),
            Err(FrontMatterError::Twice("description"))
        );
    }

    #[test]
    fn errors_read_as_sentences() {
        assert_eq!(
            FrontMatterError::Missing("description").to_string(),
            "the front matter has no `description: ...` line"
        );
        assert_eq!(
            FrontMatterError::BadName {
                name: "a b".into(),
                why: "has whitespace in it"
            }
            .to_string(),
            "the name \"a b\" has whitespace in it"
        );
    }
}
