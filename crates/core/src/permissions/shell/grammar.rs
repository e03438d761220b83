//! The command grammar: lists, and-or lists, pipelines and simple commands.
//!
//! A list runs up to a closing token (`)`, `;;`, `fi`, `done`, ...) and holds and-or lists
//! (pipelines joined by `&&`/`||`); in a pipeline every command after the first has its
//! stdin piped. A simple command is split into leading assignments, words and redirections
//! and emitted into the script with where it sits. A compound command (see `compound`) has
//! its trailing redirections copied onto every command emitted inside it. In the POSIX
//! dialect `&>`, `|&`, `<<<`, `{fd}>`, `NAME[i]=`/`NAME+=` and the bash-only keywords are
//! listed as divergences, and read as dash reads them where that differs.

use super::arithmetic::is_plain_arithmetic;
use super::delimiter::heredoc_delimiter;
use super::heredoc::PendingHeredoc;
use super::parser::{is_name, is_name_char, is_name_start, Op, Parser};
use super::words::{RawWord, WordMode};
use super::{Context, ParseError, Redirect, RedirectOp, SimpleCommand, Word};

const CLOSERS: [&str; 8] = ["}", "then", "else", "elif", "fi", "do", "done", "esac"];

impl Parser<'_> {
    /// A list of and-or lists up to a closing token; returns how many it held.
    pub(super) fn parse_list(&mut self) -> Result<usize, ParseError> {
        self.enter()?;
        let mut count = 0;
        loop {
            self.skip_blanks();
            if self.peek() == Some('\n') {
                self.consume_newline()?;
                continue;
            }
            if self.at_list_end() {
                break;
            }
            self.parse_and_or()?;
            count += 1;
            self.skip_blanks();
            match self.peek_op() {
                Some((Op::Semi | Op::Amp, n)) => {
                    if self.posix() && self.at("&>") {
                        self.bashism("&>");
                    }
                    self.pos += n;
                }
                Some((Op::Newline, _)) => self.consume_newline()?,
                _ if self.at_list_end() => break,
                _ => return Err(self.unexpected()),
            }
        }
        self.leave();
        Ok(count)
    }

    fn at_list_end(&self) -> bool {
        self.eof()
            || matches!(
                self.peek_op(),
                Some((
                    Op::RParen | Op::DoubleSemi | Op::SemiAmp | Op::DoubleSemiAmp,
                    _
                ))
            )
            || CLOSERS.iter().any(|k| self.at_keyword(k))
            || (self.funsub && self.peek() == Some('}'))
    }

    /// A list that must hold at least one command, e.g. the body of `if`.
    pub(super) fn parse_body(&mut self, what: &str) -> Result<(), ParseError> {
        if self.parse_list()? == 0 {
            return Err(if self.eof() {
                self.missing(what)
            } else {
                self.unexpected()
            });
        }
        Ok(())
    }

    fn parse_and_or(&mut self) -> Result<(), ParseError> {
        self.parse_pipeline()?;
        loop {
            self.skip_blanks();
            match self.peek_op() {
                Some((Op::AndIf | Op::OrIf, n)) => {
                    self.pos += n;
                    self.skip_linebreaks()?;
                    self.parse_pipeline()?;
                }
                _ => return Ok(()),
            }
        }
    }

    fn parse_pipeline(&mut self) -> Result<(), ParseError> {
        let mut timed = false;
        loop {
            self.skip_blanks();
            if self.at_keyword("!") {
                self.pos += 1;
            } else if self.at_keyword("time") {
                self.pos += 4;
                timed = true;
                self.skip_blanks();
                if self.at_keyword("-p") {
                    self.pos += 2;
                    self.skip_blanks();
                }
                // `time -p -- CMD` runs CMD: the `--` ends the keyword's options.
                if self.at_keyword("--") {
                    self.pos += 2;
                }
            } else {
                break;
            }
        }
        let separator = matches!(
            self.peek_op(),
            Some((Op::Semi | Op::Amp | Op::Newline | Op::AndIf | Op::OrIf, _))
        );
        if timed && (separator || self.at_list_end()) {
            return Ok(());
        }
        let outer = self.piped;
        self.parse_command()?;
        loop {
            self.skip_blanks();
            match self.peek_op() {
                Some((op @ (Op::Pipe | Op::PipeAmp), n)) => {
                    if op == Op::PipeAmp {
                        self.bashism("|&");
                    }
                    self.pos += n;
                    self.skip_linebreaks()?;
                    self.piped = true;
                    let result = self.parse_command();
                    self.piped = outer;
                    result?;
                }
                _ => return Ok(()),
            }
        }
    }

    pub(super) fn at_compound(&self) -> bool {
        self.peek() == Some('(')
            || ["{", "if", "while", "until", "for", "case"]
                .iter()
                .any(|k| self.at_keyword(k))
            || (!self.posix() && (self.at_keyword("select") || self.at_keyword("[[")))
    }

    pub(super) fn parse_command(&mut self) -> Result<(), ParseError> {
        self.skip_blanks();
        for keyword in ["coproc", "function", "select", "[["] {
            if self.at_keyword(keyword) {
                self.bashism(keyword);
            }
        }
        if self.at_keyword("coproc") && !self.posix() {
            return self.parse_coproc();
        }
        if self.at_keyword("function") && !self.posix() {
            return self.parse_function_keyword();
        }
        if !self.at_compound() {
            return self.parse_simple();
        }
        let first = self.out.commands.len();
        if self.at("((") && self.posix() {
            // dash reads two nested subshells: `((. ./x))` runs `. ./x`.
            self.bashism("((");
            self.parse_subshell()?;
        } else if self.at("((") {
            self.parse_arith_command()?;
        } else if self.peek() == Some('(') {
            self.parse_subshell()?;
        } else if self.at_keyword("{") {
            self.pos += 1;
            self.parse_body("}")?;
            self.expect_keyword("}")?;
        } else if self.at_keyword("if") {
            self.parse_if()?;
        } else if self.at_keyword("while") || self.at_keyword("until") {
            self.pos += 5;
            self.parse_body("do")?;
            self.parse_do_done()?;
        } else if self.at_keyword("for") {
            self.pos += 3;
            self.parse_for()?;
        } else if self.at_keyword("select") {
            self.pos += 6;
            self.parse_for()?;
        } else if self.at_keyword("case") {
            self.parse_case()?;
        } else {
            self.parse_double_bracket()?;
        }
        let mut redirects = Vec::new();
        loop {
            self.skip_blanks();
            match self.peek_redirect() {
                Some(found) => redirects.push(self.parse_redirect(found)?),
                None => break,
            }
        }
        if !redirects.is_empty() {
            if let Some(inside) = self.out.commands.get_mut(first..) {
                for command in inside {
                    command.redirects.extend(redirects.iter().cloned());
                }
            }
        }
        Ok(())
    }

    pub(super) fn expect_keyword(&mut self, keyword: &str) -> Result<(), ParseError> {
        self.skip_blanks();
        if self.at_keyword(keyword) {
            self.pos += keyword.chars().count();
            Ok(())
        } else {
            Err(self.missing(keyword))
        }
    }

    fn parse_simple(&mut self) -> Result<(), ParseError> {
        let mut words: Vec<Word> = Vec::new();
        let mut assignments = Vec::new();
        let mut redirects = Vec::new();
        loop {
            self.skip_blanks();
            if let Some(found) = self.peek_redirect() {
                redirects.push(self.parse_redirect(found)?);
                continue;
            }
            if self.posix() && self.at_named_descriptor() {
                self.bashism("{fd}>");
            }
            let Some(raw) = self.read_raw_word(WordMode::Normal)? else {
                break;
            };
            if words.is_empty() {
                if let Some(assignment) = self.split_assignment(&raw) {
                    assignments.push(assignment);
                    continue;
                }
            }
            words.push(raw.word);
            if words.len() == 1 && assignments.is_empty() && redirects.is_empty() {
                self.skip_blanks();
                if self.peek() == Some('(') {
                    let name = words[0].text().to_string();
                    self.pos += 1;
                    self.skip_blanks();
                    if self.peek() != Some(')') {
                        return Err(ParseError::new(format!("unexpected `(` after `{name}`")));
                    }
                    self.pos += 1;
                    return self.parse_function_body(name);
                }
            }
        }
        if words.is_empty() && assignments.is_empty() && redirects.is_empty() {
            return Err(self.unexpected());
        }
        self.emit(words, assignments, redirects);
        Ok(())
    }

    pub(super) fn emit(
        &mut self,
        words: Vec<Word>,
        assignments: Vec<(String, Word)>,
        redirects: Vec<Redirect>,
    ) {
        self.out.commands.push(SimpleCommand {
            words,
            assignments,
            redirects,
            context: Context {
                piped_input: self.piped,
                depth: self.depth,
            },
        });
    }

    /// `{name}` right before `<` or `>`: a bash named descriptor (`{fd}>file`).
    fn at_named_descriptor(&self) -> bool {
        if self.peek() != Some('{') || !self.peek_at(1).is_some_and(is_name_start) {
            return false;
        }
        let mut n = 2;
        while self.peek_at(n).is_some_and(is_name_char) {
            n += 1;
        }
        self.peek_at(n) == Some('}') && matches!(self.peek_at(n + 1), Some('<' | '>'))
    }

    /// `NAME=value`, `NAME+=value`, `NAME[sub]=value` at the start of a simple command. In
    /// the POSIX dialect only `NAME=value` assigns: the others are a command's name there.
    fn split_assignment(&mut self, raw: &RawWord) -> Option<(String, Word)> {
        let (eq, literal_len, expansions_before) = raw.eq?;
        let whole = self.text(raw.start, eq);
        let lhs = whole.strip_suffix('+').unwrap_or(&whole);
        let (name, subscript) = match lhs.split_once('[') {
            Some((name, rest)) => (name, Some(rest.strip_suffix(']')?)),
            None => (lhs, None),
        };
        if !is_name(name) {
            return None;
        }
        if self.posix() && (subscript.is_some() || lhs.len() < whole.len()) {
            let construct = format!("{whole}=");
            self.bashism(&construct);
            return None;
        }
        if let Some(subscript) = subscript {
            if !is_plain_arithmetic(subscript) {
                self.out.hazards.push(raw.word.raw.clone());
            }
        }
        let literal = if raw.expansions == expansions_before {
            raw.literal.get(literal_len + 1..).map(str::to_string)
        } else {
            None
        };
        let value = Word {
            raw: self.text(eq + 1, raw.end),
            literal,
            glob: raw.word.glob,
        };
        Some((name.to_string(), value))
    }

    fn parse_redirect(
        &mut self,
        (fd, op, len): (Option<String>, RedirectOp, usize),
    ) -> Result<Redirect, ParseError> {
        self.pos += len;
        self.skip_blanks();
        let Some(target) = self.read_word(WordMode::Normal)? else {
            return Err(ParseError::new(format!(
                "redirection `{}` without a target",
                op.as_str()
            )));
        };
        if matches!(op, RedirectOp::Heredoc | RedirectOp::HeredocTabs) {
            let (delimiter, expand) = heredoc_delimiter(&target.raw, self.dialect)?;
            self.pending.push(PendingHeredoc {
                delimiter,
                strip_tabs: op == RedirectOp::HeredocTabs,
                expand,
            });
        }
        if op == RedirectOp::HereString {
            self.bashism("<<<");
        }
        Ok(Redirect { fd, op, target })
    }
}

#[cfg(test)]
mod tests {
    use crate::permissions::shell::tests::{programs, sorted, words};
    use crate::permissions::shell::{parse, Word};

    #[test]
    fn control_operators_split_commands_but_quotes_do_not() {
        assert_eq!(programs("grep \"a; rm -rf /\" x"), ["grep"]);
        for op in [";", "&&", "||", "|", "|&", "&", "\n"] {
            assert_eq!(programs(&format!("ls {op} rm x")), ["ls", "rm"], "{op:?}");
        }
        let commands = parse("ls | grep x | wc -l").unwrap();
        let piped: Vec<bool> = commands.iter().map(|c| c.context.piped_input).collect();
        assert_eq!(piped, [false, true, true]);
    }

    #[test]
    fn assignments_are_split_from_words() {
        let commands = parse("FOO=1 BAR+=\"a b\" arr[1]=x rm x=1").unwrap();
        let c = &commands[0];
        let names: Vec<&str> = c.assignments.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["FOO", "BAR", "arr"]);
        assert_eq!(c.assignments[1].1.literal.as_deref(), Some("a b"));
        assert_eq!(words(c), ["rm", "x=1"]);
        let bare = parse("PATH=/tmp:$PATH").unwrap();
        assert!(bare[0].words.is_empty());
        assert_eq!(bare[0].assignments[0].1.literal, None);
        assert_eq!(programs("a=(1 $(rm x) 3)"), ["rm", ""]);
        assert_eq!(programs("a=(x\ny); ls"), ["", "ls"]);
        // Only `(` right after the `=` opens an array.
        assert!(parse("a=b(c)").is_err());
        // A name starts with a letter or `_` and holds only those and digits; any other
        // word with `=` is the program.
        assert_eq!(programs("_x=1 ls"), ["ls"]);
        assert_eq!(programs("x_1=1 ls"), ["ls"]);
        assert_eq!(programs("1x=foo ls"), ["1x=foo"]);
        assert_eq!(programs("a-b=1 ls"), ["a-b=1"]);
        assert_eq!(programs("=1 ls"), ["=1"]);
    }

    #[test]
    fn redirections_are_detected() {
        let commands =
            parse("ls >out 2>&1 2>>log &>all <in {fd}>f >&2 >|c <>rw 3<&0 >&file").unwrap();
        let c = &commands[0];
        assert_eq!(words(c), ["ls"]);
        let ops: Vec<&str> = c.redirects.iter().map(|r| r.op.as_str()).collect();
        assert_eq!(
            ops,
            [">", ">&", ">>", "&>", "<", ">", ">&", ">|", "<>", "<&", ">&"]
        );
        let written: Vec<&str> = c
            .redirects
            .iter()
            .filter_map(|r| r.written_file().map(Word::text))
            .collect();
        assert_eq!(written, ["out", "log", "all", "f", "c", "rw", "file"]);
        assert_eq!(c.redirects[1].fd.as_deref(), Some("2"));
        assert_eq!(c.redirects[5].fd.as_deref(), Some("{fd}"));
        assert!(c.redirects[4].feeds_stdin());
        assert!(!c.redirects[0].feeds_stdin());
        // `{name}` before the operator names a descriptor; `{}` or `{1x}` is a word.
        for (input, fd, word) in [
            ("echo {}>out", None, Some("{}")),
            ("echo {1x}>out", None, Some("{1x}")),
            ("echo {x}>out", Some("{x}"), None),
            ("echo {x_1}>out", Some("{x_1}"), None),
        ] {
            let c = &parse(input).unwrap()[0];
            assert_eq!(c.redirects[0].fd.as_deref(), fd, "{input}");
            assert_eq!(words(c).get(1).copied(), word, "{input}");
        }
        let diff = parse("diff <(ls) >(cat)").unwrap();
        assert!(diff.iter().all(|c| c.redirects.is_empty()));
        assert_eq!(sorted(programs("diff <(ls) >(cat)")), ["cat", "diff", "ls"]);
    }

    #[test]
    fn compound_redirections_reach_every_command_inside() {
        let commands = parse("{ ls; pwd; } > out; while read l; do echo $l; done < in").unwrap();
        for c in &commands {
            assert_eq!(c.redirects.len(), 1, "{:?}", c.words);
        }
        let commands = parse("echo x | { cat; sh; }").unwrap();
        assert!(commands[1..].iter().all(|c| c.context.piped_input));
    }
}
