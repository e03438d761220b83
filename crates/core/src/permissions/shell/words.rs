//! Reading one word: its raw text, its value after quote removal, and what it may hide.
//!
//! A word runs to the next unquoted metacharacter. On the way the reader collects the
//! literal value, counts expansions (any one makes the word non-literal), notes unquoted
//! glob and brace patterns, and remembers the first `=` so the grammar can tell an
//! assignment. `NAME=(...)` reads a bash array; the right side of `=~` in `[[ ]]` keeps its
//! parentheses and `|`.

use super::arithmetic::is_plain_arithmetic;
use super::parser::{is_meta, is_name, Parser};
use super::{ParseError, Word};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WordMode {
    Normal,
    /// The right side of `=~` in `[[ ]]`: parentheses and `|` belong to the word.
    Regex,
}

/// What a word reader accumulates.
#[derive(Default)]
pub(super) struct WordState {
    pub(super) literal: String,
    pub(super) expansions: usize,
    glob: bool,
    /// An unquoted `{` was seen, and since then an unquoted `,` or `..`.
    brace_open: bool,
    brace_list: bool,
    /// An unquoted `[` was seen: a later `]` makes a bracket expression.
    bracket_open: bool,
    /// The first unquoted `=`: its position, the literal length and expansions before it.
    eq: Option<(usize, usize, usize)>,
}

/// A word with what assignment detection needs.
pub(super) struct RawWord {
    pub(super) word: Word,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) literal: String,
    pub(super) expansions: usize,
    pub(super) eq: Option<(usize, usize, usize)>,
}

impl Parser<'_> {
    pub(super) fn read_word(&mut self, mode: WordMode) -> Result<Option<Word>, ParseError> {
        Ok(self.read_raw_word(mode)?.map(|raw| raw.word))
    }

    pub(super) fn read_raw_word(&mut self, mode: WordMode) -> Result<Option<RawWord>, ParseError> {
        let start = self.pos;
        let mut st = WordState::default();
        let mut parens = 0usize;
        while let Some(c) = self.peek() {
            let next = self.peek_at(1);
            match c {
                '<' | '>' if next == Some('(') => {
                    let construct = format!("{c}(...)");
                    self.bashism(&construct);
                    st.expansions += 1;
                    self.pos += 2;
                    self.parse_substitution()?;
                }
                '(' | ')' | '|' | '<' | '>' if mode == WordMode::Regex => {
                    if c == '(' {
                        parens += 1;
                    } else if c == ')' {
                        if parens == 0 {
                            break;
                        }
                        parens -= 1;
                    }
                    st.literal.push(c);
                    self.pos += 1;
                }
                '(' if self.array_assignment_here(start, &st) => {
                    self.bashism("NAME=(...)");
                    st.expansions += 1;
                    self.read_array()?;
                }
                c if is_meta(c) => break,
                '\\' => match next {
                    Some('\n') => self.pos += 2,
                    Some(n) => {
                        st.literal.push(n);
                        self.pos += 2;
                    }
                    None => {
                        st.literal.push('\\');
                        self.pos += 1;
                    }
                },
                '\'' => {
                    self.pos += 1;
                    let quoted = self.read_single_quoted()?;
                    st.literal.push_str(&quoted);
                }
                '"' => self.read_double_quoted(&mut st)?,
                '$' => self.read_dollar(&mut st, false)?,
                '`' => self.read_backquote(&mut st, false)?,
                _ => {
                    match c {
                        '*' | '?' => st.glob = true,
                        '[' => st.bracket_open = true,
                        ']' if st.bracket_open => st.glob = true,
                        '{' => {
                            st.brace_open = true;
                            st.brace_list = false;
                        }
                        ',' if st.brace_open => st.brace_list = true,
                        '.' if st.brace_open && st.literal.ends_with('.') => st.brace_list = true,
                        '}' if st.brace_list => st.glob = true,
                        '=' if st.eq.is_none() => {
                            st.eq = Some((self.pos, st.literal.len(), st.expansions))
                        }
                        _ => {}
                    }
                    st.literal.push(c);
                    self.pos += 1;
                }
            }
        }
        if self.pos == start {
            return Ok(None);
        }
        let raw = self.text(start, self.pos);
        let literal = (st.expansions == 0).then(|| st.literal.clone());
        Ok(Some(RawWord {
            word: Word {
                raw,
                literal,
                glob: st.glob,
            },
            start,
            end: self.pos,
            literal: st.literal,
            expansions: st.expansions,
            eq: st.eq,
        }))
    }

    /// `NAME=(` or `NAME+=(`: a bash array assignment.
    fn array_assignment_here(&self, start: usize, st: &WordState) -> bool {
        match st.eq {
            Some((eq, _, _)) if eq + 1 == self.pos => {
                let lhs = self.text(start, eq);
                is_name(lhs.strip_suffix('+').unwrap_or(&lhs))
            }
            _ => false,
        }
    }

    /// After `NAME=`: the elements up to `)`. A `[subscript]=value` element whose subscript
    /// is not plain arithmetic is a hazard: bash evaluates it (`a=([x]=1)` with
    /// `x='y[$(cmd)]'` runs `cmd`).
    fn read_array(&mut self) -> Result<(), ParseError> {
        self.enter()?;
        self.pos += 1;
        loop {
            self.skip_blanks();
            match self.peek() {
                Some('\n') => self.consume_newline()?,
                Some(')') => {
                    self.pos += 1;
                    break;
                }
                None => return Err(ParseError::new("unterminated array assignment")),
                _ => {
                    let Some(word) = self.read_word(WordMode::Normal)? else {
                        return Err(self.unexpected());
                    };
                    if let Some(subscript) = element_subscript(&word.raw) {
                        if !is_plain_arithmetic(subscript) {
                            self.out.hazards.push(word.raw.clone());
                        }
                    }
                }
            }
        }
        self.leave();
        Ok(())
    }
}

/// The subscript of an array element written `[subscript]=value` or `[subscript]+=value`.
fn element_subscript(raw: &str) -> Option<&str> {
    let rest = raw.strip_prefix('[')?;
    let close = rest.find("]=").or_else(|| rest.find("]+="))?;
    Some(&rest[..close])
}

#[cfg(test)]
mod tests {
    use crate::permissions::shell::tests::{programs, words};
    use crate::permissions::shell::{parse, parse_script};

    #[test]
    fn words_have_raw_text_and_literal_values() {
        let commands = parse(r#"grep -r "a; b" 'c d' e\ f $'\x72m' r""m"#).unwrap();
        assert_eq!(commands.len(), 1);
        assert_eq!(
            words(&commands[0]),
            ["grep", "-r", "a; b", "c d", "e f", "rm", "rm"]
        );
        assert_eq!(commands[0].words[3].raw, "'c d'");
        let commands = parse("echo $HOME ${X:-y} \"$(pwd)\" '$(no)' *.rs").unwrap();
        let echo = commands.iter().find(|c| c.words[0].raw == "echo").unwrap();
        assert_eq!(echo.words[1].literal, None);
        assert_eq!(echo.words[2].literal, None);
        assert_eq!(echo.words[3].literal, None);
        assert_eq!(echo.words[4].literal.as_deref(), Some("$(no)"));
        assert!(echo.words[5].glob && echo.words[5].literal_program().is_none());
        assert_eq!(echo.words[5].literal.as_deref(), Some("*.rs"));
    }

    #[test]
    fn array_subscripts_that_are_not_plain_arithmetic_are_hazards() {
        for (input, hazards) in [
            ("a=([x]=1)", 1),
            ("a=([$i]=1 [2]=3)", 1),
            ("BASH_CMDS+=([ls]=/bin/rm)", 1),
            ("a=([0]=x [1+1]=y z)", 0),
            ("a=('[x]=1' \\[y]=2)", 0),
        ] {
            let script = parse_script(input, 0).unwrap();
            assert_eq!(
                script.hazards.len(),
                hazards,
                "{input}: {:?}",
                script.hazards
            );
        }
    }

    /// Which words the shell would expand as a pattern or a brace list: `*`, `?`, a
    /// bracket closed after it opened, braces holding a comma or `..`; not a `]`, `}`, `,`
    /// or `.` on its own.
    #[test]
    fn which_words_are_globs() {
        for (word, glob) in [
            ("*.rs", true),
            ("a?", true),
            ("[ab]", true),
            ("{a,b}", true),
            ("{1..3}", true),
            ("a]", false),
            ("a[", false),
            ("a,b}", false),
            ("a.}", false),
            ("a..}", false),
            ("{a.b}", false),
            ("a}", false),
            ("{a}", false),
            ("{a,b", false),
        ] {
            let commands = parse(&format!("ls {word}")).unwrap();
            assert_eq!(commands[0].words[1].glob, glob, "{word}");
        }
    }

    /// An assignment ends its name at the first `=`; the rest is the value.
    #[test]
    fn the_first_equals_sign_ends_the_name() {
        let commands = parse("a=b=c ls").unwrap();
        assert_eq!(words(&commands[0]), ["ls"]);
        assert_eq!(commands[0].assignments[0].0, "a");
        assert_eq!(commands[0].assignments[0].1.literal.as_deref(), Some("b=c"));
    }

    /// A `[[ =~ ]]` pattern holds its parentheses and bars, nested or not, also at its
    /// start; a `)` it did not open ends it; the commands after it are read.
    #[test]
    fn a_regex_holds_its_groups() {
        for (input, pattern) in [
            ("[[ x =~ ((a)|b)c ]] && rm y", "((a)|b)c"),
            ("[[ x =~ a(b)(c) ]] && rm y", "a(b)(c)"),
            ("[[ x =~ (a|b)c ]] && rm y", "(a|b)c"),
            ("[[ x =~ a|(b) ]] && rm y", "a|(b)"),
            // bash refuses a `)` the pattern did not open; rein ends the pattern there.
            ("[[ x =~ a) ]] && rm y", "a"),
            ("[[ x =~ (a)) ]] && rm y", "(a)"),
        ] {
            let commands = parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            let test = commands.iter().find(|c| c.words[0].text() == "[[").unwrap();
            assert!(words(test).contains(&pattern), "{input}: {:?}", words(test));
            assert!(programs(input).contains(&"rm".to_string()), "{input}");
        }
    }

    #[test]
    fn line_continuations_join_words() {
        assert_eq!(programs("r\\\nm x"), ["rm"]);
        assert_eq!(programs("ls \\\n -la"), ["ls"]);
    }
}
