//! Compound commands and function definitions: `( )`, `(( ))`, `if`, `while`/`until`
//! bodies, `for`, `select`, `case`, `[[ ]]`, `coproc`, `f() { }` and `function f { }`
//! (`grammar` dispatches to them, and reads `{ ...; }` groups itself).
//!
//! Their conditions and bodies are lists, so every command inside is emitted like any other.
//! `(( ))` and `[[ ]]` are emitted as simple commands of their own, named `((` and `[[`, so
//! the judge sees them. A missing `fi`, `done`, `esac` or `)` is an error that names it.
//! (In the POSIX dialect `grammar` reads `[[`, `select`, `coproc` and `function` as plain
//! words and `((` as two subshells, as dash does.)

use super::parser::{Op, Parser};
use super::words::WordMode;
use super::{ParseError, Word};

impl Parser<'_> {
    /// `coproc COMMAND` or `coproc NAME COMPOUND-COMMAND`: the command runs in the background.
    pub(super) fn parse_coproc(&mut self) -> Result<(), ParseError> {
        self.pos += "coproc".len();
        self.skip_blanks();
        if !self.at_compound() {
            let snapshot = self.snapshot();
            let named = self.read_word(WordMode::Normal)?.is_some();
            self.skip_blanks();
            if !(named && self.at_compound()) {
                self.restore(snapshot);
            }
        }
        self.parse_command()
    }

    pub(super) fn parse_function_body(&mut self, name: String) -> Result<(), ParseError> {
        self.out.functions.push(name);
        self.skip_linebreaks()?;
        if !self.at_compound() {
            return Err(ParseError::new(
                "a function body must be a compound command like `{ ...; }`",
            ));
        }
        self.parse_command()
    }

    pub(super) fn parse_function_keyword(&mut self) -> Result<(), ParseError> {
        self.pos += "function".len();
        self.skip_blanks();
        let Some(name) = self.read_word(WordMode::Normal)? else {
            return Err(ParseError::new("`function` without a name"));
        };
        self.skip_blanks();
        if self.peek() == Some('(') {
            self.pos += 1;
            self.skip_blanks();
            if self.peek() != Some(')') {
                return Err(self.missing(")"));
            }
            self.pos += 1;
        }
        self.parse_function_body(name.text().to_string())
    }

    pub(super) fn parse_subshell(&mut self) -> Result<(), ParseError> {
        self.pos += 1;
        self.parse_body(")")?;
        self.skip_blanks();
        if self.peek() != Some(')') {
            return Err(self.missing(")"));
        }
        self.pos += 1;
        Ok(())
    }

    /// `(( expression ))`, or `( (...) )` when it does not close with `))`.
    pub(super) fn parse_arith_command(&mut self) -> Result<(), ParseError> {
        match self.try_arithmetic(2)? {
            Some((from, to)) => {
                let expression = Word {
                    raw: self.text(from, to),
                    literal: None,
                    glob: false,
                };
                self.emit(
                    vec![Word::token("(("), expression, Word::token("))")],
                    Vec::new(),
                    Vec::new(),
                );
                Ok(())
            }
            None => self.parse_subshell(),
        }
    }

    pub(super) fn parse_if(&mut self) -> Result<(), ParseError> {
        self.pos += 2;
        self.parse_body("then")?;
        self.expect_keyword("then")?;
        self.parse_body("fi")?;
        loop {
            self.skip_blanks();
            if self.at_keyword("elif") {
                self.pos += 4;
                self.parse_body("then")?;
                self.expect_keyword("then")?;
                self.parse_body("fi")?;
            } else if self.at_keyword("else") {
                self.pos += 4;
                self.parse_body("fi")?;
                return self.expect_keyword("fi");
            } else {
                return self.expect_keyword("fi");
            }
        }
    }

    pub(super) fn parse_do_done(&mut self) -> Result<(), ParseError> {
        self.skip_linebreaks()?;
        if self.at_keyword("{") {
            self.pos += 1;
            self.parse_body("}")?;
            return self.expect_keyword("}");
        }
        self.expect_keyword("do")?;
        self.parse_body("done")?;
        self.expect_keyword("done")
    }

    /// After `for` or `select`: `NAME [in WORDS] ; do ... done` or `((a; b; c)) do ... done`.
    pub(super) fn parse_for(&mut self) -> Result<(), ParseError> {
        self.skip_blanks();
        if self.at("((") {
            self.bashism("for ((");
            if self.try_arithmetic(2)?.is_none() {
                return Err(ParseError::new("unterminated `for ((`"));
            }
            self.skip_blanks();
            if self.peek() == Some(';') {
                self.pos += 1;
            }
            return self.parse_do_done();
        }
        let Some(name) = self.read_word(WordMode::Normal)? else {
            return Err(ParseError::new("`for` without a variable name"));
        };
        let name = name.text().to_string();
        self.skip_linebreaks()?;
        if self.at_keyword("in") {
            self.pos += 2;
            let mut words = Vec::new();
            loop {
                self.skip_blanks();
                match self.read_word(WordMode::Normal)? {
                    Some(word) => words.push(word),
                    None => break,
                }
            }
            self.out.loops.push((name, Some(words)));
            match self.peek_op() {
                Some((Op::Semi, n)) => self.pos += n,
                Some((Op::Newline, _)) => self.consume_newline()?,
                _ => return Err(self.unexpected()),
            }
        } else {
            self.out.loops.push((name, None));
            if self.peek() == Some(';') {
                self.pos += 1;
            }
        }
        self.parse_do_done()
    }

    pub(super) fn parse_case(&mut self) -> Result<(), ParseError> {
        self.pos += 4;
        self.skip_blanks();
        if self.read_word(WordMode::Normal)?.is_none() {
            return Err(ParseError::new("`case` without a word"));
        }
        self.skip_linebreaks()?;
        self.expect_keyword("in")?;
        loop {
            self.skip_linebreaks()?;
            if self.at_keyword("esac") {
                self.pos += 4;
                return Ok(());
            }
            if self.eof() {
                return Err(self.missing("esac"));
            }
            if self.peek() == Some('(') {
                self.pos += 1;
            }
            loop {
                self.skip_blanks();
                if self.read_word(WordMode::Normal)?.is_none() {
                    return Err(self.unexpected());
                }
                self.skip_blanks();
                match self.peek() {
                    Some('|') => self.pos += 1,
                    Some(')') => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Err(self.missing(")")),
                }
            }
            self.parse_list()?;
            self.skip_blanks();
            match self.peek_op() {
                Some((op @ (Op::DoubleSemi | Op::SemiAmp | Op::DoubleSemiAmp), n)) => {
                    if op != Op::DoubleSemi {
                        let construct = self.text(self.pos, self.pos + n);
                        self.bashism(&construct);
                    }
                    self.pos += n;
                }
                _ if self.at_keyword("esac") => {}
                _ => return Err(self.missing("esac")),
            }
        }
    }

    /// `[[ ... ]]`, emitted as a simple command whose words run from `[[` to `]]`.
    pub(super) fn parse_double_bracket(&mut self) -> Result<(), ParseError> {
        self.pos += 2;
        let mut words = vec![Word::token("[[")];
        let mut regex_next = false;
        loop {
            self.skip_blanks();
            if self.peek() == Some('\n') {
                self.consume_newline()?;
                continue;
            }
            if self.at_keyword("]]") {
                self.pos += 2;
                words.push(Word::token("]]"));
                break;
            }
            if self.eof() {
                return Err(self.missing("]]"));
            }
            // After `=~` the pattern is one word, parentheses and all (bash reads
            // `[[ x =~ (a|b)c ]]`, where a `(` elsewhere would group).
            let operator = ["&&", "||", "(", ")", "<", ">"]
                .into_iter()
                .find(|op| !regex_next && self.at(op));
            if let Some(op) = operator {
                self.pos += op.len();
                words.push(Word::token(op));
                continue;
            }
            let mode = if regex_next {
                WordMode::Regex
            } else {
                WordMode::Normal
            };
            let Some(word) = self.read_word(mode)? else {
                return Err(self.unexpected());
            };
            regex_next = word.literal.as_deref() == Some("=~");
            words.push(word);
        }
        self.emit(words, Vec::new(), Vec::new());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::permissions::shell::tests::{programs, sorted};

    #[test]
    fn substitutions_and_compound_commands_are_flattened() {
        let cases = [
            ("echo $(rm x)", vec!["echo", "rm"]),
            ("echo `rm x`", vec!["echo", "rm"]),
            ("echo \"a `rm \\\"x\\\"` b\"", vec!["echo", "rm"]),
            ("echo \"$(rm \"x\")\"", vec!["echo", "rm"]),
            ("echo ${X:-$(rm x)}", vec!["echo", "rm"]),
            ("echo $(( $(rm x) + 1 ))", vec!["echo", "rm"]),
            ("(rm x)", vec!["rm"]),
            ("{ rm x; }", vec!["rm"]),
            (
                "if a; then b; elif c; then d; else e; fi",
                vec!["a", "b", "c", "d", "e"],
            ),
            ("while a; do b; done", vec!["a", "b"]),
            ("until a; do b; done", vec!["a", "b"]),
            ("for f in a $(b); do c $f; done", vec!["b", "c"]),
            ("for ((i=0; i<3; i++)); do c; done", vec!["c"]),
            ("select x in a; do b; done", vec!["b"]),
            (
                "case $(a) in x|y) b;; (z) c;& *) d;;& esac",
                vec!["a", "b", "c", "d"],
            ),
            ("case x in x) esac", vec![]),
            ("f() { a; }", vec!["a"]),
            ("function f { a; }", vec!["a"]),
            ("function f() ( a )", vec!["a"]),
            ("[[ -n $(a) && $x =~ ^(b|c)$ ]]", vec!["a", "[["]),
            ("(( $(a) > 1 ))", vec!["a", "(("]),
            ("echo $((rm x) )", vec!["echo", "rm"]),
            ("! time -p a | b", vec!["a", "b"]),
            // `--` ends the keyword's options; with nothing to time it times nothing.
            ("for x in a; { b; }", vec!["b"]),
            ("for ((i = 0; i < 3; i++)); do a; done", vec!["a"]),
            ("for x in a b\ndo c; done", vec!["c"]),
            ("for x; do a; done", vec!["a"]),
            ("for x\ndo a; done", vec!["a"]),
            ("ls; [[ -n $(a) ]] && b", vec!["ls", "a", "[[", "b"]),
            ("echo 0123456789; [[ -n x ]]; b", vec!["echo", "[[", "b"]),
            ("ls; [[ ( -n x ) && -n y ]] && b", vec!["ls", "[[", "b"]),
            ("time -p -- a x", vec!["a"]),
            ("time -- a", vec!["a"]),
            ("time", vec![]),
            ("time -p", vec![]),
            ("time; a", vec!["a"]),
            ("time -p && a", vec!["a"]),
            ("time\na", vec!["a"]),
            ("echo $(case x in y) a;; esac)", vec!["a", "echo"]),
            ("x=$(a) y=`b`", vec!["a", "b", ""]),
            ("coproc a x", vec!["a"]),
            ("coproc NAME { a; }", vec!["a"]),
            ("coproc ( a )", vec!["a"]),
        ];
        for (input, expected) in cases {
            let expected: Vec<String> = expected.into_iter().map(String::from).collect();
            assert_eq!(sorted(programs(input)), sorted(expected), "{input:?}");
        }
    }
}
