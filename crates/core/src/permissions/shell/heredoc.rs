//! Here-documents: `<<EOF` queues a pending body, and the next newline token reads it.
//!
//! A body runs to its delimiter line (leading tabs stripped first for `<<-`); the
//! delimiter is the word after `<<` with its quotes removed and nothing expanded (see
//! `delimiter`). With an unquoted delimiter the shell joins lines ending in a backslash
//! before it looks for the delimiter, and expands the body, so the body is scanned for
//! `$(...)`, `${...}` and backquotes, whose commands join the script; with a quoted one the
//! lines are compared as they are and the body is only text. A body that never meets its
//! delimiter is an error: the shell and rein would disagree on where commands start again.
//! dash ends a here-document opened inside `$(...)` at the `)`, and reads backslash-newline
//! in a body its own way: the POSIX dialect lists both.

use super::parser::{Nested, Parser};
use super::words::WordState;
use super::ParseError;

/// A here-document whose body starts after the next newline token.
pub(super) struct PendingHeredoc {
    pub(super) delimiter: String,
    pub(super) strip_tabs: bool,
    pub(super) expand: bool,
}

impl Parser<'_> {
    /// A newline token: here-document bodies start right after it.
    pub(super) fn consume_newline(&mut self) -> Result<(), ParseError> {
        self.advance(1);
        for doc in std::mem::take(&mut self.pending) {
            self.read_heredoc(doc)?;
        }
        Ok(())
    }

    /// At the end of a command list: a here-document still waiting for its body is an error.
    pub(super) fn no_pending_heredoc(&self) -> Result<(), ParseError> {
        match self.pending.first() {
            Some(doc) => Err(unterminated(doc)),
            None => Ok(()),
        }
    }

    fn read_heredoc(&mut self, doc: PendingHeredoc) -> Result<(), ParseError> {
        let mut body = String::new();
        loop {
            if self.eof() {
                return Err(unterminated(&doc));
            }
            let line = if doc.expand {
                self.read_joined_line()
            } else {
                self.read_line()
            };
            let compared = if doc.strip_tabs {
                line.trim_start_matches('\t')
            } else {
                &line
            };
            if compared == doc.delimiter {
                break;
            }
            body.push_str(&line);
            body.push('\n');
        }
        if doc.expand {
            self.sub_parse(&body, Nested::Heredoc)?;
        }
        Ok(())
    }

    /// One line as it is, without its newline.
    fn read_line(&mut self) -> String {
        let start = self.pos;
        while self.peek().is_some_and(|c| c != '\n') {
            self.pos += 1;
        }
        let line = self.text(start, self.pos);
        self.advance(1);
        line
    }

    /// One line of an expanded body: a backslash-newline joins the next line to it (`\\`
    /// is an escaped backslash, not a continuation).
    fn read_joined_line(&mut self) -> String {
        let mut line = String::new();
        let mut joined = false;
        while let Some(c) = self.peek() {
            match (c, self.peek_at(1)) {
                ('\n', _) => break,
                ('\\', Some('\n')) => {
                    joined = true;
                    self.pos += 2;
                }
                ('\\', Some(n)) => {
                    line.push('\\');
                    line.push(n);
                    self.pos += 2;
                }
                _ => {
                    line.push(c);
                    self.pos += 1;
                }
            }
        }
        self.advance(1);
        if joined && self.posix() {
            let reason = "a backslash-newline in a here-document, which sh (dash) joins differently from bash".to_string();
            self.diverge(reason);
        }
        line
    }

    pub(super) fn scan_heredoc_body(&mut self) -> Result<(), ParseError> {
        let mut state = WordState::default();
        while let Some(c) = self.peek() {
            match c {
                '\\' => self.advance(2),
                '$' => self.read_dollar(&mut state, true)?,
                '`' => self.read_backquote(&mut state, false)?,
                _ => self.pos += 1,
            }
        }
        Ok(())
    }
}

fn unterminated(doc: &PendingHeredoc) -> ParseError {
    ParseError::new(format!(
        "a here-document without its delimiter line `{}`",
        doc.delimiter.escape_debug()
    ))
}

#[cfg(test)]
mod tests {
    use crate::permissions::shell::tests::{programs, sorted};
    use crate::permissions::shell::{parse, RedirectOp};

    #[test]
    fn heredoc_bodies_are_skipped_or_scanned() {
        let commands = parse("cat <<EOF\nrm -rf /\n$(pwd)\nEOF\nls").unwrap();
        assert_eq!(
            sorted(programs("cat <<EOF\nrm -rf /\n$(pwd)\nEOF\nls")),
            ["cat", "ls", "pwd"]
        );
        assert_eq!(commands[0].redirects[0].op, RedirectOp::Heredoc);
        assert_eq!(commands[0].redirects[0].target.text(), "EOF");
        assert_eq!(programs("cat <<'EOF'\n$(rm x)\nEOF"), ["cat"]);
        assert_eq!(programs("cat <<\"EOF\"\n`rm x`\nEOF"), ["cat"]);
        assert_eq!(sorted(programs("cat <<EOF\n`rm x`\nEOF")), ["cat", "rm"]);
        assert_eq!(
            programs("cat <<-EOF\n\t$(pwd)\n\tEOF\nls"),
            ["cat", "pwd", "ls"]
        );
        assert_eq!(programs("cat <<EOF\n\\$(rm x)\nEOF"), ["cat"]);
        assert_eq!(
            programs("cat <<A; cat <<B\na\nA\nb $(pwd)\nB\n"),
            ["cat", "cat", "pwd"]
        );
        assert!(parse("cat <<EOF\nno end").is_err());
        assert!(parse("cat <<EOF").is_err());
        assert!(parse("echo `cat <<EOF`\nrm x").is_err());
        assert_eq!(programs("cat <<EOF\nx\nEOF"), ["cat"]);
    }

    #[test]
    fn the_delimiter_is_the_word_without_its_quotes() {
        for (input, expected) in [
            ("cat <<\"$E\"\nx\n$E\nrm x\n", vec!["cat", "rm"]),
            ("cat <<\"${E}\"\nx\n${E}\nrm x\n", vec!["cat", "rm"]),
            ("cat <<\"E\"$F\nx\nE$F\nrm x\n", vec!["cat", "rm"]),
            ("cat <<$'E\\x4fF'\nx\nEOF\nrm x\n", vec!["cat", "rm"]),
            ("cat <<$\"EOF\"\nx\nEOF\nrm x\n", vec!["cat", "rm"]),
            ("cat <<$'E\\'F'\nx\nE'F\nrm x\n", vec!["cat", "rm"]),
            ("cat <<E\\OF\n$(pwd)\nEOF\nrm x\n", vec!["cat", "rm"]),
            ("cat <<\\$E\nx\n$E\nrm x\n", vec!["cat", "rm"]),
            ("cat <<\"EO\\\nF\"\n$(pwd)\nEOF\nrm x\n", vec!["cat", "rm"]),
        ] {
            assert_eq!(programs(input), expected, "{input:?}");
        }
    }

    #[test]
    fn unquoted_bodies_join_continued_lines_before_the_delimiter_check() {
        // The word `EO\<newline>F` is `EOF`, unquoted: the body is expanded.
        assert_eq!(programs("cat <<EO\\\nF\n$(pwd)\nEOF\n"), ["cat", "pwd"]);
        // `EO\` + `F` is the delimiter line `EOF`; `x\` + `EOF` is not.
        assert_eq!(
            programs("cat <<EOF\nEO\\\nF\nrm x\nEOF\n"),
            ["cat", "rm", "EOF"]
        );
        assert_eq!(programs("cat <<EOF\nx\\\nEOF\nrm x\nEOF\n"), ["cat"]);
        assert_eq!(programs("cat <<EOF\nx\\\\\nEOF\nrm x\n"), ["cat", "rm"]);
        assert_eq!(
            programs("cat <<-EOF\n\tEO\\\nF\nrm x\nEOF\n"),
            ["cat", "rm", "EOF"]
        );
        // A quoted delimiter compares lines as they are.
        assert_eq!(programs("cat <<'EOF'\nEO\\\nF\nrm x\nEOF\n"), ["cat"]);
    }
}
