//! The delimiter of a here-document: the word after `<<`, its quotes removed, nothing
//! expanded.
//!
//! `<<"$E"` ends at a line `$E`, `<<"E"$F` at `E$F`, `<<E\OF` at `EOF`. A backslash-newline
//! is a line continuation, not quoting (`<<EO\<newline>F` is an unquoted `EOF`); any other
//! quoting (`'`, `"`, `\`) makes the body plain text. bash resolves `$'...'` and `$"..."` in
//! the word (`<<$'EOF'` ends at `EOF`); dash reads them as a dollar sign and a quote (it ends
//! at `$EOF`). A delimiter holding a command substitution is not modelled: an error.

use super::ansi_c::decode_ansi_c;
use super::{Dialect, ParseError};

/// The delimiter written as `raw`, and whether the body is expanded (nothing is quoted).
pub(super) fn heredoc_delimiter(raw: &str, dialect: Dialect) -> Result<(String, bool), ParseError> {
    if raw.contains('`') || raw.contains("$(") {
        return Err(ParseError::new(
            "a here-document delimiter holding a command substitution",
        ));
    }
    let chars: Vec<char> = raw.chars().collect();
    let bash = dialect != Dialect::Posix;
    let mut out = String::new();
    let mut quoted = false;
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let next = chars.get(i + 1).copied();
        match c {
            '\\' => {
                match next {
                    Some('\n') => {}
                    Some(n) => {
                        quoted = true;
                        out.push(n);
                    }
                    None => {
                        quoted = true;
                        out.push('\\');
                    }
                }
                i += 2;
            }
            '\'' => {
                quoted = true;
                let close = find(&chars, i + 1, '\'')?;
                out.extend(&chars[i + 1..close]);
                i = close + 1;
            }
            '$' if bash && next == Some('\'') => {
                quoted = true;
                let mut end = i + 2;
                while let Some(&d) = chars.get(end) {
                    match d {
                        '\'' => break,
                        '\\' => end += 2,
                        _ => end += 1,
                    }
                }
                let text: String = chars.get(i + 2..end).unwrap_or_default().iter().collect();
                if end >= chars.len() {
                    return Err(ParseError::new("unterminated `$'` quote"));
                }
                let Some(value) = decode_ansi_c(&text) else {
                    return Err(ParseError::new(format!(
                        "a here-document delimiter `$'{text}'` whose value rein cannot be sure of"
                    )));
                };
                out.push_str(&value);
                i = end + 1;
            }
            '$' if bash && next == Some('"') => i += 1,
            '"' => {
                quoted = true;
                i += 1;
                loop {
                    match (chars.get(i), chars.get(i + 1)) {
                        (None, _) => return Err(ParseError::new("unterminated double quote")),
                        (Some('"'), _) => break,
                        (Some('\\'), Some('\n')) => i += 2,
                        (Some('\\'), Some(&e @ ('$' | '`' | '"' | '\\'))) => {
                            out.push(e);
                            i += 2;
                        }
                        (Some(&d), _) => {
                            out.push(d);
                            i += 1;
                        }
                    }
                }
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok((out, !quoted))
}

fn find(chars: &[char], from: usize, wanted: char) -> Result<usize, ParseError> {
    chars
        .iter()
        .skip(from)
        .position(|&c| c == wanted)
        .map(|k| from + k)
        .ok_or_else(|| ParseError::new("unterminated single quote"))
}

#[cfg(test)]
mod tests {
    use super::heredoc_delimiter;
    use crate::permissions::shell::Dialect::{Bash, Posix};

    /// Each case checked against bash 5.2 and dash 0.5.12: which line ends the body.
    #[test]
    fn delimiters_lose_their_quotes_and_expand_nothing() {
        for (raw, bash, dash, expand) in [
            ("EOF", "EOF", "EOF", true),
            ("'EOF'", "EOF", "EOF", false),
            ("\"$E\"", "$E", "$E", false),
            ("\"${E}\"", "${E}", "${E}", false),
            ("\"E\"$F", "E$F", "E$F", false),
            ("$E", "$E", "$E", true),
            ("\\$E", "$E", "$E", false),
            ("\"\\$E\"", "$E", "$E", false),
            ("\"E\\$F\"", "E$F", "E$F", false),
            ("E\"O\"F", "EOF", "EOF", false),
            ("\\EOF", "EOF", "EOF", false),
            ("E\\OF", "EOF", "EOF", false),
            ("EO\\\nF", "EOF", "EOF", true),
            ("\"EO\\\nF\"", "EOF", "EOF", false),
            ("'EO\\\nF'", "EO\\\nF", "EO\\\nF", false),
            ("$'EOF'", "EOF", "$EOF", false),
            ("$\"EOF\"", "EOF", "$EOF", false),
            ("$'E\\x4fF'", "EOF", "$E\\x4fF", false),
            ("E$'\\n'F", "E\nF", "E$\\nF", false),
        ] {
            assert_eq!(
                heredoc_delimiter(raw, Bash).unwrap(),
                (bash.to_string(), expand),
                "{raw:?}"
            );
            assert_eq!(
                heredoc_delimiter(raw, Posix).unwrap(),
                (dash.to_string(), expand),
                "{raw:?}"
            );
        }
        assert!(heredoc_delimiter("$(echo)", Bash).is_err());
        assert!(heredoc_delimiter("$'\\x{41}'", Bash).is_err());
    }
}
