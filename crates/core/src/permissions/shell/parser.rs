//! The parser's state, and its cursor over the characters of a command string.
//!
//! The other files of the shell parser add methods to [`Parser`]; this one holds what they
//! all stand on: peeking at and matching text, skipping blanks and comments, the operator
//! and redirection tokens, the nesting bound ([`MAX_DEPTH`]), errors that quote what was
//! found, snapshots to backtrack from a wrong guess, and parsing text that is not part of
//! the input (a backquoted command, a here-document body) into the same script.

use std::collections::HashSet;

use super::heredoc::PendingHeredoc;
use super::{Dialect, ParseError, RedirectOp, Script, MAX_DEPTH};

/// A control operator token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    Newline,
    Semi,
    DoubleSemi,
    SemiAmp,
    DoubleSemiAmp,
    Amp,
    AndIf,
    OrIf,
    Pipe,
    PipeAmp,
    RParen,
}

/// Where to return to when `$((`/`((` turns out not to be arithmetic.
pub(super) struct Snapshot {
    pos: usize,
    depth: usize,
    commands: usize,
    functions: usize,
    hazards: usize,
    divergences: usize,
    loops: usize,
    pending: usize,
}

/// What [`Parser::sub_parse`] reads: a command list, or a here-document body to scan.
pub(super) enum Nested {
    Commands,
    Heredoc,
}

pub(super) fn is_meta(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | '|' | '&' | ';' | '(' | ')' | '<' | '>'
    )
}

pub(super) fn is_name_start(c: char) -> bool {
    c == '_' || c.is_ascii_alphabetic()
}

pub(super) fn is_name_char(c: char) -> bool {
    c == '_' || c.is_ascii_alphanumeric()
}

pub(super) fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(is_name_start) && chars.all(is_name_char)
}

pub(super) struct Parser<'o> {
    chars: Vec<char>,
    pub(super) pos: usize,
    pub(super) depth: usize,
    pub(super) piped: bool,
    pub(super) dialect: Dialect,
    pub(super) pending: Vec<PendingHeredoc>,
    /// Positions where `$((`/`((` was tried as arithmetic and failed: never retried, so
    /// nested failures cannot make parsing exponential.
    pub(super) not_arithmetic: HashSet<usize>,
    /// Inside bash 5.3's `${ ...; }` or `${| ...; }`: a word starting with `}` where a
    /// command may start ends it, whatever follows the brace (as bash's parser has it).
    pub(super) funsub: bool,
    pub(super) out: &'o mut Script,
}

impl<'o> Parser<'o> {
    pub(super) fn new(
        text: &str,
        depth: usize,
        piped: bool,
        dialect: Dialect,
        out: &'o mut Script,
    ) -> Parser<'o> {
        Parser {
            chars: text.chars().collect(),
            pos: 0,
            depth,
            piped,
            dialect,
            pending: Vec::new(),
            not_arithmetic: HashSet::new(),
            funsub: false,
            out,
        }
    }

    pub(super) fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    pub(super) fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }

    pub(super) fn posix(&self) -> bool {
        self.dialect == Dialect::Posix
    }

    /// In the POSIX dialect, note that `construct` is bash-only syntax.
    pub(super) fn bashism(&mut self, construct: &str) {
        if self.posix() {
            let reason =
                format!("`{construct}` is bash-only syntax that sh (dash) reads differently");
            self.diverge(reason);
        }
    }

    /// Note a construct this dialect's shell reads differently from bash (once each).
    pub(super) fn diverge(&mut self, reason: String) {
        if !self.out.divergences.contains(&reason) {
            self.out.divergences.push(reason);
        }
    }

    pub(super) fn eof(&self) -> bool {
        self.pos >= self.chars.len()
    }

    pub(super) fn advance(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.chars.len());
    }

    pub(super) fn at(&self, text: &str) -> bool {
        text.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }

    /// An unquoted reserved word (or `{`, `}`, `!`, `[[`, `]]`) followed by a boundary.
    pub(super) fn at_keyword(&self, keyword: &str) -> bool {
        let n = keyword.chars().count();
        self.at(keyword) && self.peek_at(n).is_none_or(is_meta)
    }

    pub(super) fn text(&self, from: usize, to: usize) -> String {
        self.chars
            .get(from..to.min(self.chars.len()))
            .map(|s| s.iter().collect())
            .unwrap_or_default()
    }

    pub(super) fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ParseError::new("nested too deeply"));
        }
        Ok(())
    }

    pub(super) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    pub(super) fn unexpected(&self) -> ParseError {
        if self.eof() {
            return ParseError::new("unexpected end of input");
        }
        if let Some((op, n)) = self.peek_op() {
            if op == Op::Newline {
                return ParseError::new("unexpected newline");
            }
            return ParseError::new(format!(
                "unexpected `{}`",
                self.text(self.pos, self.pos + n)
            ));
        }
        let mut end = self.pos;
        while end < self.chars.len() && end < self.pos + 20 && !is_meta(self.chars[end]) {
            end += 1;
        }
        let shown = if end == self.pos { self.pos + 1 } else { end };
        ParseError::new(format!("unexpected `{}`", self.text(self.pos, shown)))
    }

    pub(super) fn missing(&self, what: &str) -> ParseError {
        if self.eof() {
            ParseError::new(format!("missing `{what}`"))
        } else {
            let found = self.unexpected().message;
            ParseError::new(format!("expected `{what}`, {found}"))
        }
    }

    /// Blanks, line continuations and comments (a `#` here always starts a word).
    pub(super) fn skip_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(' ' | '\t') => self.pos += 1,
                Some('\\') if self.peek_at(1) == Some('\n') => self.pos += 2,
                Some('#') => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                _ => return,
            }
        }
    }

    pub(super) fn skip_linebreaks(&mut self) -> Result<(), ParseError> {
        loop {
            self.skip_blanks();
            if self.peek() == Some('\n') {
                self.consume_newline()?;
            } else {
                return Ok(());
            }
        }
    }

    pub(super) fn peek_op(&self) -> Option<(Op, usize)> {
        let next = self.peek_at(1);
        Some(match self.peek()? {
            '\n' => (Op::Newline, 1),
            ';' => match (next, self.peek_at(2)) {
                (Some(';'), Some('&')) => (Op::DoubleSemiAmp, 3),
                (Some(';'), _) => (Op::DoubleSemi, 2),
                (Some('&'), _) => (Op::SemiAmp, 2),
                _ => (Op::Semi, 1),
            },
            '&' => match next {
                Some('&') => (Op::AndIf, 2),
                Some('>') if !self.posix() => return None,
                _ => (Op::Amp, 1),
            },
            '|' => match next {
                Some('|') => (Op::OrIf, 2),
                Some('&') => (Op::PipeAmp, 2),
                _ => (Op::Pipe, 1),
            },
            ')' => (Op::RParen, 1),
            _ => return None,
        })
    }

    /// A redirection operator here (with its descriptor), and its length.
    pub(super) fn peek_redirect(&self) -> Option<(Option<String>, RedirectOp, usize)> {
        let mut i = self.pos;
        let mut fd = None;
        while self.chars.get(i).is_some_and(|c| c.is_ascii_digit()) {
            i += 1;
        }
        if i > self.pos {
            fd = Some(self.text(self.pos, i));
        } else if self.peek() == Some('{') && !self.posix() {
            let mut j = i + 1;
            while self.chars.get(j).copied().is_some_and(is_name_char) {
                j += 1;
            }
            let named = self.chars.get(i + 1).copied().is_some_and(is_name_start);
            if named && self.chars.get(j) == Some(&'}') {
                fd = Some(self.text(i, j + 1));
                i = j + 1;
            }
        }
        let at = |k: usize| self.chars.get(i + k).copied();
        let (op, len) = match (at(0), at(1), at(2)) {
            (Some('<'), Some('<'), Some('<')) => (RedirectOp::HereString, 3),
            (Some('<'), Some('<'), Some('-')) => (RedirectOp::HeredocTabs, 3),
            (Some('<'), Some('<'), _) => (RedirectOp::Heredoc, 2),
            (Some('<'), Some('&'), _) => (RedirectOp::DupIn, 2),
            (Some('<'), Some('>'), _) => (RedirectOp::ReadWrite, 2),
            (Some('<' | '>'), Some('('), _) => return None,
            (Some('<'), _, _) => (RedirectOp::Read, 1),
            (Some('>'), Some('>'), _) => (RedirectOp::Append, 2),
            (Some('>'), Some('&'), _) => (RedirectOp::DupOut, 2),
            (Some('>'), Some('|'), _) => (RedirectOp::Clobber, 2),
            (Some('>'), _, _) => (RedirectOp::Write, 1),
            (Some('&'), Some('>'), Some('>')) if fd.is_none() && !self.posix() => {
                (RedirectOp::AppendAll, 3)
            }
            (Some('&'), Some('>'), _) if fd.is_none() && !self.posix() => (RedirectOp::WriteAll, 2),
            _ => return None,
        };
        Some((fd, op, i + len - self.pos))
    }

    pub(super) fn snapshot(&self) -> Snapshot {
        Snapshot {
            pos: self.pos,
            depth: self.depth,
            commands: self.out.commands.len(),
            functions: self.out.functions.len(),
            hazards: self.out.hazards.len(),
            divergences: self.out.divergences.len(),
            loops: self.out.loops.len(),
            pending: self.pending.len(),
        }
    }

    pub(super) fn restore(&mut self, s: Snapshot) {
        self.pos = s.pos;
        self.depth = s.depth;
        self.out.commands.truncate(s.commands);
        self.out.functions.truncate(s.functions);
        self.out.hazards.truncate(s.hazards);
        self.out.divergences.truncate(s.divergences);
        self.out.loops.truncate(s.loops);
        self.pending.truncate(s.pending);
    }

    /// Parse text that is not part of this parser's input: a backquoted command or a
    /// here-document body.
    pub(super) fn sub_parse(&mut self, text: &str, kind: Nested) -> Result<(), ParseError> {
        self.enter()?;
        let (depth, piped, dialect) = (self.depth, self.piped, self.dialect);
        let mut sub = Parser::new(text, depth, piped, dialect, &mut *self.out);
        match kind {
            Nested::Commands => {
                sub.parse_list()?;
                sub.skip_blanks();
                if !sub.eof() {
                    return Err(sub.unexpected());
                }
                sub.no_pending_heredoc()?;
            }
            Nested::Heredoc => sub.scan_heredoc_body()?,
        }
        self.leave();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::permissions::shell::tests::programs;

    #[test]
    fn comments_start_only_at_a_word() {
        assert_eq!(programs("ls # ; rm x"), ["ls"]);
        assert_eq!(programs("ls a#b; rm x"), ["ls", "rm"]);
        assert_eq!(programs("ls \\#; rm x"), ["ls", "rm"]);
        assert_eq!(programs("# only a comment"), Vec::<String>::new());
        assert_eq!(programs("ls;# x\nrm x"), ["ls", "rm"]);
    }
}
