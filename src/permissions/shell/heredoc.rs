//! Here-documents: `<<EOF` queues a pending body, and the next newline token reads it.
//!
//! A body runs to its delimiter line (leading tabs stripped first for `<<-`) or to the end
//! of the input. With an unquoted delimiter the shell expands the body, so it is scanned for
//! `$(...)`, `${...}` and backquotes, whose commands join the script; with a quoted one the
//! body is only text and is skipped.

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

    fn read_heredoc(&mut self, doc: PendingHeredoc) -> Result<(), ParseError> {
        let mut body = String::new();
        while !self.eof() {
            let start = self.pos;
            while self.peek().is_some_and(|c| c != '\n') {
                self.pos += 1;
            }
            let line = self.text(start, self.pos);
            let ended = self.eof();
            self.advance(1);
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
            if ended {
                break;
            }
        }
        if doc.expand {
            self.sub_parse(&body, Nested::Heredoc)?;
        }
        Ok(())
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
        assert_eq!(
            programs("cat <<-EOF\n\t$(pwd)\n\tEOF\nls"),
            ["cat", "pwd", "ls"]
        );
        assert_eq!(programs("cat <<EOF\n\\$(rm x)\nEOF"), ["cat"]);
        assert_eq!(
            programs("cat <<A; cat <<B\na\nA\nb $(pwd)\nB\n"),
            ["cat", "cat", "pwd"]
        );
        assert_eq!(programs("cat <<EOF\nno end"), ["cat"]);
    }
}
