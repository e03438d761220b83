//! Quoting: `'...'`, `"..."`, `$'...'` and backquotes.
//!
//! Single quotes keep their text as it is; double quotes keep it too, but for `\` escapes
//! and the expansions inside; `$'...'` is found first and then resolves its ANSI-C escapes
//! (`ansi_c`). A backquoted command is unescaped and parsed as a command list of its own.

use super::ansi_c::decode_ansi_c;
use super::parser::{Nested, Parser};
use super::words::WordState;
use super::ParseError;

impl Parser<'_> {
    /// After an opening `'`: the text up to the closing one.
    pub(super) fn read_single_quoted(&mut self) -> Result<String, ParseError> {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c == '\'' {
                let text = self.text(start, self.pos);
                self.pos += 1;
                return Ok(text);
            }
            self.pos += 1;
        }
        Err(ParseError::new("unterminated single quote"))
    }

    /// At an opening `"`.
    pub(super) fn read_double_quoted(&mut self, st: &mut WordState) -> Result<(), ParseError> {
        self.pos += 1;
        loop {
            let Some(c) = self.peek() else {
                return Err(ParseError::new("unterminated double quote"));
            };
            match c {
                '"' => {
                    self.pos += 1;
                    return Ok(());
                }
                '\\' => match self.peek_at(1) {
                    Some('\n') => self.pos += 2,
                    Some(n @ ('$' | '`' | '"' | '\\')) => {
                        st.literal.push(n);
                        self.pos += 2;
                    }
                    _ => {
                        st.literal.push('\\');
                        self.pos += 1;
                    }
                },
                '$' => self.read_dollar(st, true)?,
                '`' => self.read_backquote(st, true)?,
                _ => {
                    st.literal.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// At a backquote: the command up to the closing one, with `\$`, `` \` ``, `\\` (and
    /// `\"` inside double quotes) unescaped, parsed as a command list of its own.
    pub(super) fn read_backquote(
        &mut self,
        st: &mut WordState,
        quoted: bool,
    ) -> Result<(), ParseError> {
        st.expansions += 1;
        self.pos += 1;
        let mut inner = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(ParseError::new("unterminated backquote"));
            };
            match c {
                '`' => {
                    self.pos += 1;
                    break;
                }
                '\\' => match self.peek_at(1) {
                    Some(n @ ('$' | '`' | '\\')) => {
                        inner.push(n);
                        self.pos += 2;
                    }
                    Some('"') if quoted => {
                        inner.push('"');
                        self.pos += 2;
                    }
                    // Any other backslash stays, `\` and a newline too: the inner command's
                    // own reading joins the lines.
                    _ => {
                        inner.push('\\');
                        self.pos += 1;
                    }
                },
                _ => {
                    inner.push(c);
                    self.pos += 1;
                }
            }
        }
        self.sub_parse(&inner, Nested::Commands)
    }

    /// After `$'`: the quote's text up to the closing `'` (a backslash skips exactly one
    /// character, so `$'\c'` ends at its second quote, as in bash), then its value; `None`
    /// when rein cannot be sure of the value (see `ansi_c`).
    pub(super) fn read_ansi_c(&mut self) -> Result<Option<String>, ParseError> {
        let start = self.pos;
        loop {
            match self.peek() {
                None => return Err(ParseError::new("unterminated `$'` quote")),
                Some('\'') => break,
                Some('\\') => self.advance(2),
                Some(_) => self.pos += 1,
            }
        }
        let text = self.text(start, self.pos);
        self.pos += 1;
        Ok(decode_ansi_c(&text))
    }
}

#[cfg(test)]
mod tests {
    use crate::permissions::shell::parse;
    use crate::permissions::shell::tests::{programs, words};

    /// In double quotes a backslash escapes only `$`, `` ` ``, `"`, `\` and a newline (which
    /// it removes); before anything else it stays.
    #[test]
    fn backslashes_in_double_quotes() {
        for (input, literal) in [
            (r#"echo "a\"b""#, r#"a"b"#),
            (r#"echo "a\$b""#, "a$b"),
            (r#"echo "a\\b""#, r"a\b"),
            (r#"echo "a\`b""#, "a`b"),
            (r#"echo "a\nb""#, r"a\nb"),
            ("echo \"a\\\nb\"", "ab"),
        ] {
            let commands = parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(words(&commands[0])[1], literal, "{input}");
        }
    }

    /// Inside backquotes a backslash escapes `$`, `` ` `` and `\` (and `"` when the
    /// backquotes are inside double quotes) and removes a newline; the command read is
    /// the text so unescaped.
    #[test]
    fn backslashes_in_backquotes() {
        for (input, inner) in [
            (r"echo `echo \$x`", vec!["echo", "$x"]),
            (r"echo `echo \\x`", vec!["echo", "x"]),
            (r"echo `echo \nx`", vec!["echo", r"nx"]),
            ("echo `echo a\\\nb`", vec!["echo", "ab"]),
            (r#"echo "`echo \"a b\"`""#, vec!["echo", "a b"]),
            (r#"echo `echo \"a`"#, vec!["echo", r#""a"#]),
        ] {
            let commands = parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(words(&commands[0]), inner, "{input}");
        }
        // A nested backquote runs its command too.
        assert_eq!(programs(r"echo `echo \`rm x\``"), ["rm", "echo", "echo"]);
        // A word with backquotes is an expansion: no literal value, whatever else it holds.
        let commands = parse("echo `pwd` x`pwd`y").unwrap();
        let outer = commands.last().unwrap();
        assert_eq!(outer.words[1].literal, None);
        assert_eq!(outer.words[2].literal, None);
    }

    #[test]
    fn ansi_c_quotes_resolve_their_escapes() {
        let commands =
            parse(r"x $'\x72m' $'\162m' $'\u0072m' $'a\'b' $'a\nb' $'r\0m' $'\q'").unwrap();
        assert_eq!(
            words(&commands[0])[1..],
            ["rm", "rm", "rm", "a'b", "a\nb", "r", "\\q"]
        );
        let commands = parse("x $'\\u00e9' $'\\x{72}m'").unwrap();
        assert!(commands[0].words[1..].iter().all(|w| w.literal.is_none()));
    }

    #[test]
    fn a_backslash_in_ansi_c_quotes_skips_one_character() {
        assert_eq!(
            programs("echo $'\\c'; rm -rf x; echo ' # '"),
            ["echo", "rm", "echo"]
        );
        assert_eq!(
            programs("echo $'\\c\\\\'; rm x; echo ' # '"),
            ["echo", "rm", "echo"]
        );
        assert_eq!(words(&parse("echo $'\\c'").unwrap()[0]), ["echo", "\\c"]);
    }
}
