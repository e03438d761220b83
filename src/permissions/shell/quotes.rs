//! Quoting: `'...'`, `"..."`, `$'...'` and backquotes.
//!
//! Single quotes keep their text as it is; double quotes keep it too, but for `\` escapes
//! and the expansions inside; `$'...'` resolves its ANSI-C escapes (a `\0` ends the value,
//! as in bash). A backquoted command is unescaped and parsed as a command list of its own.

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
                    Some('\n') => self.pos += 2,
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

    /// After `$'`: the ANSI-C quoted text, escapes resolved, up to the closing `'`.
    pub(super) fn read_ansi_c(&mut self) -> Result<String, ParseError> {
        let mut out = String::new();
        let mut truncated = false;
        loop {
            let Some(c) = self.peek() else {
                return Err(ParseError::new("unterminated `$'` quote"));
            };
            self.pos += 1;
            let decoded = match c {
                '\'' => return Ok(out),
                '\\' => {
                    let Some(e) = self.peek() else {
                        return Err(ParseError::new("unterminated `$'` quote"));
                    };
                    self.pos += 1;
                    match e {
                        'a' => '\x07',
                        'b' => '\x08',
                        'e' | 'E' => '\x1b',
                        'f' => '\x0c',
                        'n' => '\n',
                        'r' => '\r',
                        't' => '\t',
                        'v' => '\x0b',
                        '\\' | '\'' | '"' | '?' => e,
                        '0'..='7' => {
                            self.pos -= 1;
                            let value = self.read_digits(8, 3).unwrap_or(0);
                            char::from_u32(value & 0xff).unwrap_or('\u{fffd}')
                        }
                        'x' | 'u' | 'U' => {
                            let max = match e {
                                'x' => 2,
                                'u' => 4,
                                _ => 8,
                            };
                            match self.read_digits(16, max) {
                                Some(value) => char::from_u32(value).unwrap_or('\u{fffd}'),
                                None => {
                                    if !truncated {
                                        out.push('\\');
                                    }
                                    e
                                }
                            }
                        }
                        'c' => match self.peek() {
                            Some(k) => {
                                self.pos += 1;
                                if k == '?' {
                                    '\x7f'
                                } else {
                                    char::from_u32(u32::from(k) & 0x1f).unwrap_or('\u{fffd}')
                                }
                            }
                            None => return Err(ParseError::new("unterminated `$'` quote")),
                        },
                        other => {
                            if !truncated {
                                out.push('\\');
                            }
                            other
                        }
                    }
                }
                other => other,
            };
            if decoded == '\0' {
                truncated = true;
            } else if !truncated {
                out.push(decoded);
            }
        }
    }

    /// Up to `max` digits in `radix`; `None` when there is none.
    fn read_digits(&mut self, radix: u32, max: usize) -> Option<u32> {
        let mut value: Option<u32> = None;
        for _ in 0..max {
            let Some(digit) = self.peek().and_then(|c| c.to_digit(radix)) else {
                break;
            };
            value = Some(
                value
                    .unwrap_or(0)
                    .saturating_mul(radix)
                    .saturating_add(digit),
            );
            self.pos += 1;
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use crate::permissions::shell::parse;
    use crate::permissions::shell::tests::words;

    #[test]
    fn ansi_c_quotes_resolve_their_escapes() {
        let commands =
            parse(r"x $'\x72m' $'\162m' $'\u0072m' $'a\'b' $'a\nb' $'r\0m' $'\q'").unwrap();
        assert_eq!(
            words(&commands[0])[1..],
            ["rm", "rm", "rm", "a'b", "a\nb", "r", "\\q"]
        );
    }
}
