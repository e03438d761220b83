//! A shell parser for permission checks: it finds every simple command a command string
//! would run, at any depth.
//!
//! A command string (POSIX sh plus the common bash syntax) flows in; out comes a flat
//! [`Script`]: every simple command — its words, leading `NAME=value` assignments,
//! redirections, and whether its stdin is a pipe — wherever it sits: in a list or pipeline,
//! inside `$(...)`, backquotes (also within double quotes), `<(...)`/`>(...)`, subshells,
//! `{ ...; }` groups, `if`/`while`/`until`/`for`/`select`/`case` conditions and bodies,
//! function bodies, parameter expansions such as `${X:-$(cmd)}`, arithmetic, and unquoted
//! here-document bodies. Redirections on a compound command are copied onto every command
//! inside it. The script also lists the functions it defines and the arithmetic that reads
//! variables (bash evaluates array subscripts in such values, which can run commands).
//!
//! It recognises, it does not interpret: nothing is expanded. A word keeps its raw text, and
//! its value after quote removal when no expansion is involved. Malformed input (an
//! unterminated quote, unbalanced parentheses, a missing `fi`/`done`/`esac`) is an error,
//! never a guess, and nesting deeper than [`MAX_DEPTH`] is an error too, so no input can
//! overflow the stack.

use std::collections::HashSet;

/// How deeply constructs may nest (substitutions, compound commands, quotes in expansions).
pub const MAX_DEPTH: usize = 64;

/// Why a command string does not parse, in a few words ("unterminated single quote").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ParseError {
    pub message: String,
}

impl ParseError {
    fn new(message: impl Into<String>) -> ParseError {
        ParseError {
            message: message.into(),
        }
    }
}

/// One shell word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The text as written, quotes and all.
    pub raw: String,
    /// The value after quote removal, when the word has no expansion (`$VAR`, `${...}`,
    /// `$(...)`, backquotes, `$((...))`, `<(...)`); otherwise `None`.
    pub literal: Option<String>,
    /// The word holds an unquoted `*`, `?`, `[...]` or `{a,b}`/`{1..3}`, so the shell may turn
    /// it into other words (pathname or brace expansion).
    pub glob: bool,
}

impl Word {
    /// The word's value when the shell will use it exactly as written: literal and no glob.
    pub fn literal_program(&self) -> Option<&str> {
        if self.glob {
            None
        } else {
            self.literal.as_deref()
        }
    }

    /// The literal value, or the raw text when the word has expansions.
    pub fn text(&self) -> &str {
        self.literal.as_deref().unwrap_or(&self.raw)
    }

    fn token(text: &str) -> Word {
        Word {
            raw: text.to_string(),
            literal: Some(text.to_string()),
            glob: false,
        }
    }
}

/// A redirection operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectOp {
    /// `<`
    Read,
    /// `>`
    Write,
    /// `>>`
    Append,
    /// `>|`
    Clobber,
    /// `<>`
    ReadWrite,
    /// `&>`
    WriteAll,
    /// `&>>`
    AppendAll,
    /// `<&`
    DupIn,
    /// `>&`
    DupOut,
    /// `<<`
    Heredoc,
    /// `<<-`
    HeredocTabs,
    /// `<<<`
    HereString,
}

impl RedirectOp {
    pub fn as_str(self) -> &'static str {
        match self {
            RedirectOp::Read => "<",
            RedirectOp::Write => ">",
            RedirectOp::Append => ">>",
            RedirectOp::Clobber => ">|",
            RedirectOp::ReadWrite => "<>",
            RedirectOp::WriteAll => "&>",
            RedirectOp::AppendAll => "&>>",
            RedirectOp::DupIn => "<&",
            RedirectOp::DupOut => ">&",
            RedirectOp::Heredoc => "<<",
            RedirectOp::HeredocTabs => "<<-",
            RedirectOp::HereString => "<<<",
        }
    }
}

/// A redirection: `2>err.log`, `>&2`, `<<EOF`, `{fd}>out`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The file descriptor written before the operator (`2`, `{fd}`), if any.
    pub fd: Option<String>,
    pub op: RedirectOp,
    /// The file, the descriptor, the here-string, or the here-document's delimiter.
    pub target: Word,
}

impl Redirect {
    /// The file this redirection opens for writing, if it opens one (`2>&1` does not).
    pub fn written_file(&self) -> Option<&Word> {
        match self.op {
            RedirectOp::Write
            | RedirectOp::Append
            | RedirectOp::Clobber
            | RedirectOp::ReadWrite
            | RedirectOp::WriteAll
            | RedirectOp::AppendAll => Some(&self.target),
            RedirectOp::DupOut if !is_descriptor(&self.target) => Some(&self.target),
            _ => None,
        }
    }

    /// Whether this redirection gives the command's stdin something to read.
    pub fn feeds_stdin(&self) -> bool {
        let stdin = matches!(self.fd.as_deref(), None | Some("0"));
        let closes = self.op == RedirectOp::DupIn && self.target.literal.as_deref() == Some("-");
        stdin
            && !closes
            && matches!(
                self.op,
                RedirectOp::Read
                    | RedirectOp::ReadWrite
                    | RedirectOp::DupIn
                    | RedirectOp::Heredoc
                    | RedirectOp::HeredocTabs
                    | RedirectOp::HereString
            )
    }
}

/// `1`, `2-`, `-`: a descriptor to duplicate, move or close rather than a file.
fn is_descriptor(word: &Word) -> bool {
    match word.literal.as_deref() {
        Some("-") => true,
        Some(text) => {
            let digits = text.strip_suffix('-').unwrap_or(text);
            !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
        }
        None => false,
    }
}

/// Where a simple command sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Context {
    /// Its stdin is a pipe from a previous command: it is not first in its pipeline, or it
    /// sits inside a compound command (or substitution) that is not.
    pub piped_input: bool,
    /// How deeply it is nested (1 at the top level).
    pub depth: usize,
}

/// One simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The program and its arguments, after the leading assignments.
    pub words: Vec<Word>,
    /// Leading `NAME=value` assignments (the name without any `[subscript]` or `+`).
    pub assignments: Vec<(String, Word)>,
    /// Its own redirections, then those of every compound command around it.
    pub redirects: Vec<Redirect>,
    pub context: Context,
}

/// Everything a command string would run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Script {
    pub commands: Vec<SimpleCommand>,
    /// Names of the shell functions it defines.
    pub functions: Vec<String>,
    /// Arithmetic that reads variables or command output (`$((x+1))`, `${a[$i]}`,
    /// `${x:$n}`, `${!ref}`, `${x@P}`): a value like `a[$(cmd)]` would run `cmd` there.
    pub hazards: Vec<String>,
}

/// Every simple command `command` would run, flattened.
pub fn parse(command: &str) -> Result<Vec<SimpleCommand>, ParseError> {
    parse_script(command, 0).map(|script| script.commands)
}

/// Parse `command` as if it were nested `depth` levels deep already (a string handed to
/// `sh -c` or `eval` continues its command's depth, so the bound holds across them).
pub fn parse_script(command: &str, depth: usize) -> Result<Script, ParseError> {
    let mut script = Script::default();
    {
        let mut parser = Parser::new(command, depth, false, &mut script);
        if depth > MAX_DEPTH {
            return Err(ParseError::new("nested too deeply"));
        }
        parser.parse_list()?;
        parser.skip_blanks();
        if !parser.eof() {
            return Err(parser.unexpected());
        }
    }
    Ok(script)
}

/// Whether arithmetic text reads no variable and no command output: only numbers,
/// operators, parentheses, and the special parameters `$#`, `$?`, `$$`, `$!`.
pub fn is_plain_arithmetic(text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if c.is_ascii_digit() {
            while chars
                .get(i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '#' | '_' | '@'))
            {
                i += 1;
            }
            continue;
        }
        if c.is_alphabetic() || matches!(c, '_' | '`' | '[' | ']' | '\\') {
            return false;
        }
        if c == '$' {
            if matches!(chars.get(i + 1), Some('#' | '?' | '$' | '!')) {
                i += 2;
                continue;
            }
            return false;
        }
        i += 1;
    }
    true
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
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
    LParen,
    RParen,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WordMode {
    Normal,
    /// The right side of `=~` in `[[ ]]`: parentheses and `|` belong to the word.
    Regex,
}

/// A here-document whose body starts after the next newline token.
struct PendingHeredoc {
    delimiter: String,
    strip_tabs: bool,
    expand: bool,
}

/// What a word reader accumulates.
#[derive(Default)]
struct WordState {
    literal: String,
    expansions: usize,
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
struct RawWord {
    word: Word,
    start: usize,
    end: usize,
    literal: String,
    expansions: usize,
    eq: Option<(usize, usize, usize)>,
}

/// Where to return to when `$((`/`((` turns out not to be arithmetic.
struct Snapshot {
    pos: usize,
    depth: usize,
    commands: usize,
    functions: usize,
    hazards: usize,
    pending: usize,
}

enum Nested {
    Commands,
    Heredoc,
}

const CLOSERS: [&str; 8] = ["}", "then", "else", "elif", "fi", "do", "done", "esac"];

fn is_meta(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | '|' | '&' | ';' | '(' | ')' | '<' | '>'
    )
}

fn is_name_start(c: char) -> bool {
    c == '_' || c.is_ascii_alphabetic()
}

fn is_name_char(c: char) -> bool {
    c == '_' || c.is_ascii_alphanumeric()
}

fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(is_name_start) && chars.all(is_name_char)
}

struct Parser<'o> {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
    piped: bool,
    pending: Vec<PendingHeredoc>,
    /// Positions where `$((`/`((` was tried as arithmetic and failed: never retried, so
    /// nested failures cannot make parsing exponential.
    not_arithmetic: HashSet<usize>,
    out: &'o mut Script,
}

impl<'o> Parser<'o> {
    fn new(text: &str, depth: usize, piped: bool, out: &'o mut Script) -> Parser<'o> {
        Parser {
            chars: text.chars().collect(),
            pos: 0,
            depth,
            piped,
            pending: Vec::new(),
            not_arithmetic: HashSet::new(),
            out,
        }
    }

    // ---- characters ----

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }

    fn eof(&self) -> bool {
        self.pos >= self.chars.len()
    }

    fn advance(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.chars.len());
    }

    fn at(&self, text: &str) -> bool {
        text.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }

    /// An unquoted reserved word (or `{`, `}`, `!`, `[[`, `]]`) followed by a boundary.
    fn at_keyword(&self, keyword: &str) -> bool {
        let n = keyword.chars().count();
        self.at(keyword) && self.peek_at(n).is_none_or(is_meta)
    }

    fn text(&self, from: usize, to: usize) -> String {
        self.chars
            .get(from..to.min(self.chars.len()))
            .map(|s| s.iter().collect())
            .unwrap_or_default()
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ParseError::new("nested too deeply"));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn unexpected(&self) -> ParseError {
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

    fn missing(&self, what: &str) -> ParseError {
        if self.eof() {
            ParseError::new(format!("missing `{what}`"))
        } else {
            let found = self.unexpected().message;
            ParseError::new(format!("expected `{what}`, {found}"))
        }
    }

    /// Blanks, line continuations and comments (a `#` here always starts a word).
    fn skip_blanks(&mut self) {
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

    fn skip_linebreaks(&mut self) -> Result<(), ParseError> {
        loop {
            self.skip_blanks();
            if self.peek() == Some('\n') {
                self.consume_newline()?;
            } else {
                return Ok(());
            }
        }
    }

    fn peek_op(&self) -> Option<(Op, usize)> {
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
                Some('>') => return None,
                _ => (Op::Amp, 1),
            },
            '|' => match next {
                Some('|') => (Op::OrIf, 2),
                Some('&') => (Op::PipeAmp, 2),
                _ => (Op::Pipe, 1),
            },
            '(' => (Op::LParen, 1),
            ')' => (Op::RParen, 1),
            _ => return None,
        })
    }

    /// A redirection operator here (with its descriptor), and its length.
    fn peek_redirect(&self) -> Option<(Option<String>, RedirectOp, usize)> {
        let mut i = self.pos;
        let mut fd = None;
        while self.chars.get(i).is_some_and(|c| c.is_ascii_digit()) {
            i += 1;
        }
        if i > self.pos {
            fd = Some(self.text(self.pos, i));
        } else if self.peek() == Some('{') {
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
            (Some('&'), Some('>'), Some('>')) if fd.is_none() => (RedirectOp::AppendAll, 3),
            (Some('&'), Some('>'), _) if fd.is_none() => (RedirectOp::WriteAll, 2),
            _ => return None,
        };
        Some((fd, op, i + len - self.pos))
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            pos: self.pos,
            depth: self.depth,
            commands: self.out.commands.len(),
            functions: self.out.functions.len(),
            hazards: self.out.hazards.len(),
            pending: self.pending.len(),
        }
    }

    fn restore(&mut self, s: Snapshot) {
        self.pos = s.pos;
        self.depth = s.depth;
        self.out.commands.truncate(s.commands);
        self.out.functions.truncate(s.functions);
        self.out.hazards.truncate(s.hazards);
        self.pending.truncate(s.pending);
    }

    // ---- lists, pipelines, commands ----

    /// A list of and-or lists up to a closing token; returns how many it held.
    fn parse_list(&mut self) -> Result<usize, ParseError> {
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
                Some((Op::Semi | Op::Amp, n)) => self.pos += n,
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
    }

    /// A list that must hold at least one command, e.g. the body of `if`.
    fn parse_body(&mut self, what: &str) -> Result<(), ParseError> {
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
                Some((Op::Pipe | Op::PipeAmp, n)) => {
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

    fn at_compound(&self) -> bool {
        self.peek() == Some('(')
            || ["{", "if", "while", "until", "for", "select", "case", "[["]
                .iter()
                .any(|k| self.at_keyword(k))
    }

    fn parse_command(&mut self) -> Result<(), ParseError> {
        self.skip_blanks();
        if self.at_keyword("coproc") {
            return self.parse_coproc();
        }
        if self.at_keyword("function") {
            return self.parse_function_keyword();
        }
        if !self.at_compound() {
            return self.parse_simple();
        }
        let first = self.out.commands.len();
        if self.at("((") {
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

    /// `coproc COMMAND` or `coproc NAME COMPOUND-COMMAND`: the command runs in the background.
    fn parse_coproc(&mut self) -> Result<(), ParseError> {
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

    fn expect_keyword(&mut self, keyword: &str) -> Result<(), ParseError> {
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

    fn emit(
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

    /// `NAME=value`, `NAME+=value`, `NAME[sub]=value` at the start of a simple command.
    fn split_assignment(&mut self, raw: &RawWord) -> Option<(String, Word)> {
        let (eq, literal_len, expansions_before) = raw.eq?;
        let lhs = self.text(raw.start, eq);
        let lhs = lhs.strip_suffix('+').unwrap_or(&lhs);
        let (name, subscript) = match lhs.split_once('[') {
            Some((name, rest)) => (name, Some(rest.strip_suffix(']')?)),
            None => (lhs, None),
        };
        if !is_name(name) {
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
            self.pending.push(PendingHeredoc {
                delimiter: target.text().to_string(),
                strip_tabs: op == RedirectOp::HeredocTabs,
                expand: !target.raw.contains(['\'', '"', '\\']),
            });
        }
        Ok(Redirect { fd, op, target })
    }

    /// A newline token: here-document bodies start right after it.
    fn consume_newline(&mut self) -> Result<(), ParseError> {
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

    /// Parse text that is not part of this parser's input: a backquoted command or a
    /// here-document body.
    fn sub_parse(&mut self, text: &str, kind: Nested) -> Result<(), ParseError> {
        self.enter()?;
        let (depth, piped) = (self.depth, self.piped);
        let mut sub = Parser::new(text, depth, piped, &mut *self.out);
        match kind {
            Nested::Commands => {
                sub.parse_list()?;
                sub.skip_blanks();
                if !sub.eof() {
                    return Err(sub.unexpected());
                }
            }
            Nested::Heredoc => sub.scan_heredoc_body()?,
        }
        self.leave();
        Ok(())
    }

    fn scan_heredoc_body(&mut self) -> Result<(), ParseError> {
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

    fn parse_function_body(&mut self, name: String) -> Result<(), ParseError> {
        self.out.functions.push(name);
        self.skip_linebreaks()?;
        if !self.at_compound() {
            return Err(ParseError::new(
                "a function body must be a compound command like `{ ...; }`",
            ));
        }
        self.parse_command()
    }

    fn parse_function_keyword(&mut self) -> Result<(), ParseError> {
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

    fn parse_subshell(&mut self) -> Result<(), ParseError> {
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
    fn parse_arith_command(&mut self) -> Result<(), ParseError> {
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

    fn parse_if(&mut self) -> Result<(), ParseError> {
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

    fn parse_do_done(&mut self) -> Result<(), ParseError> {
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
    fn parse_for(&mut self) -> Result<(), ParseError> {
        self.skip_blanks();
        if self.at("((") {
            if self.try_arithmetic(2)?.is_none() {
                return Err(ParseError::new("unterminated `for ((`"));
            }
            self.skip_blanks();
            if self.peek() == Some(';') {
                self.pos += 1;
            }
            return self.parse_do_done();
        }
        if self.read_word(WordMode::Normal)?.is_none() {
            return Err(ParseError::new("`for` without a variable name"));
        }
        self.skip_linebreaks()?;
        if self.at_keyword("in") {
            self.pos += 2;
            loop {
                self.skip_blanks();
                if self.read_word(WordMode::Normal)?.is_none() {
                    break;
                }
            }
            match self.peek_op() {
                Some((Op::Semi, n)) => self.pos += n,
                Some((Op::Newline, _)) => self.consume_newline()?,
                _ => return Err(self.unexpected()),
            }
        } else if self.peek() == Some(';') {
            self.pos += 1;
        }
        self.parse_do_done()
    }

    fn parse_case(&mut self) -> Result<(), ParseError> {
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
                Some((Op::DoubleSemi | Op::SemiAmp | Op::DoubleSemiAmp, n)) => self.pos += n,
                _ if self.at_keyword("esac") => {}
                _ => return Err(self.missing("esac")),
            }
        }
    }

    /// `[[ ... ]]`, emitted as a simple command whose words run from `[[` to `]]`.
    fn parse_double_bracket(&mut self) -> Result<(), ParseError> {
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
            let operator = ["&&", "||", "(", ")", "<", ">"]
                .into_iter()
                .find(|op| self.at(op));
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

    // ---- words ----

    fn read_word(&mut self, mode: WordMode) -> Result<Option<Word>, ParseError> {
        Ok(self.read_raw_word(mode)?.map(|raw| raw.word))
    }

    fn read_raw_word(&mut self, mode: WordMode) -> Result<Option<RawWord>, ParseError> {
        let start = self.pos;
        let mut st = WordState::default();
        let mut parens = 0usize;
        while let Some(c) = self.peek() {
            let next = self.peek_at(1);
            match c {
                '<' | '>' if next == Some('(') => {
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
                    if self.read_word(WordMode::Normal)?.is_none() {
                        return Err(self.unexpected());
                    }
                }
            }
        }
        self.leave();
        Ok(())
    }

    /// After an opening `'`: the text up to the closing one.
    fn read_single_quoted(&mut self) -> Result<String, ParseError> {
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
    fn read_double_quoted(&mut self, st: &mut WordState) -> Result<(), ParseError> {
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

    /// At a `$`: an expansion, a `$'...'` or `$"..."` quote, or a plain dollar sign.
    fn read_dollar(&mut self, st: &mut WordState, quoted: bool) -> Result<(), ParseError> {
        match self.peek_at(1) {
            Some('\'') if !quoted => {
                self.pos += 2;
                let decoded = self.read_ansi_c()?;
                st.literal.push_str(&decoded);
            }
            Some('"') if !quoted => {
                self.pos += 1;
                self.read_double_quoted(st)?;
            }
            Some('(') => {
                st.expansions += 1;
                if self.peek_at(2) == Some('(') && self.try_arithmetic(3)?.is_some() {
                    return Ok(());
                }
                self.pos += 2;
                self.parse_substitution()?;
            }
            Some('[') => {
                st.expansions += 1;
                self.read_old_arithmetic()?;
            }
            Some('{') => {
                st.expansions += 1;
                self.read_parameter(quoted)?;
            }
            Some(c) if is_name_start(c) => {
                st.expansions += 1;
                self.pos += 1;
                while self.peek().is_some_and(is_name_char) {
                    self.pos += 1;
                }
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                st.expansions += 1;
                self.pos += 2;
            }
            _ => {
                st.literal.push('$');
                self.pos += 1;
            }
        }
        Ok(())
    }

    /// After `$(` or `<(`: a command list up to the closing `)`.
    fn parse_substitution(&mut self) -> Result<(), ParseError> {
        self.enter()?;
        self.parse_list()?;
        self.skip_blanks();
        if self.peek() != Some(')') {
            return Err(if self.eof() {
                ParseError::new("unterminated `$(`")
            } else {
                self.unexpected()
            });
        }
        self.pos += 1;
        self.leave();
        Ok(())
    }

    /// At `$((` (prefix 3) or `((` (prefix 2): the expression's span when it closes with
    /// `))`, else `None` with nothing consumed (it is then `$( (...) )` or `( (...) )`).
    fn try_arithmetic(&mut self, prefix: usize) -> Result<Option<(usize, usize)>, ParseError> {
        let at = self.pos;
        if self.not_arithmetic.contains(&at) {
            return Ok(None);
        }
        let snapshot = self.snapshot();
        self.pos += prefix;
        match self.scan_arithmetic() {
            Ok(Some(end)) => {
                let from = at + prefix;
                if !is_plain_arithmetic(&self.text(from, end)) {
                    let whole = self.text(at, self.pos);
                    self.out.hazards.push(whole);
                }
                Ok(Some((from, end)))
            }
            Ok(None) | Err(_) => {
                self.restore(snapshot);
                self.not_arithmetic.insert(at);
                Ok(None)
            }
        }
    }

    /// Scans an arithmetic expression up to `))`; returns where the expression ends.
    fn scan_arithmetic(&mut self) -> Result<Option<usize>, ParseError> {
        self.enter()?;
        let mut parens = 0usize;
        let mut st = WordState::default();
        loop {
            let Some(c) = self.peek() else {
                return Ok(None);
            };
            match c {
                '(' => {
                    parens += 1;
                    self.pos += 1;
                }
                ')' if parens > 0 => {
                    parens -= 1;
                    self.pos += 1;
                }
                ')' if self.peek_at(1) == Some(')') => {
                    let end = self.pos;
                    self.pos += 2;
                    self.leave();
                    return Ok(Some(end));
                }
                ')' => return Ok(None),
                '\\' => self.advance(2),
                '\'' => {
                    self.pos += 1;
                    self.read_single_quoted()?;
                }
                '"' => self.read_double_quoted(&mut st)?,
                '$' => self.read_dollar(&mut st, false)?,
                '`' => self.read_backquote(&mut st, false)?,
                _ => self.pos += 1,
            }
        }
    }

    /// At `$[`: the obsolete arithmetic form, up to the matching `]`.
    fn read_old_arithmetic(&mut self) -> Result<(), ParseError> {
        self.enter()?;
        let at = self.pos;
        self.pos += 2;
        let mut brackets = 0usize;
        let mut st = WordState::default();
        loop {
            let Some(c) = self.peek() else {
                return Err(ParseError::new("unterminated `$[`"));
            };
            match c {
                '[' => {
                    brackets += 1;
                    self.pos += 1;
                }
                ']' if brackets > 0 => {
                    brackets -= 1;
                    self.pos += 1;
                }
                ']' => {
                    if !is_plain_arithmetic(&self.text(at + 2, self.pos)) {
                        let whole = self.text(at, self.pos + 1);
                        self.out.hazards.push(whole);
                    }
                    self.pos += 1;
                    break;
                }
                '\\' => self.advance(2),
                '"' => self.read_double_quoted(&mut st)?,
                '$' => self.read_dollar(&mut st, false)?,
                '`' => self.read_backquote(&mut st, false)?,
                _ => self.pos += 1,
            }
        }
        self.leave();
        Ok(())
    }

    /// At `${`: a parameter expansion up to its matching `}`; words inside it (defaults,
    /// patterns) may hold substitutions.
    fn read_parameter(&mut self, quoted: bool) -> Result<(), ParseError> {
        self.enter()?;
        let at = self.pos;
        self.pos += 2;
        let mut braces = 0usize;
        let mut st = WordState::default();
        loop {
            let Some(c) = self.peek() else {
                return Err(ParseError::new("unterminated `${`"));
            };
            match c {
                '}' if braces == 0 => {
                    let content = self.text(at + 2, self.pos);
                    self.pos += 1;
                    if parameter_hazard(&content) {
                        let whole = self.text(at, self.pos);
                        self.out.hazards.push(whole);
                    }
                    break;
                }
                '}' => {
                    braces -= 1;
                    self.pos += 1;
                }
                '{' => {
                    braces += 1;
                    self.pos += 1;
                }
                '\\' => self.advance(2),
                '\'' if !quoted => {
                    self.pos += 1;
                    self.read_single_quoted()?;
                }
                '"' => self.read_double_quoted(&mut st)?,
                '$' => self.read_dollar(&mut st, quoted)?,
                '`' => self.read_backquote(&mut st, quoted)?,
                _ => self.pos += 1,
            }
        }
        self.leave();
        Ok(())
    }

    /// At a backquote: the command up to the closing one, with `\$`, `` \` ``, `\\` (and
    /// `\"` inside double quotes) unescaped, parsed as a command list of its own.
    fn read_backquote(&mut self, st: &mut WordState, quoted: bool) -> Result<(), ParseError> {
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
    fn read_ansi_c(&mut self) -> Result<String, ParseError> {
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

/// Whether a parameter expansion's inside (between `${` and `}`) evaluates something that
/// a variable's value could turn into a command: a non-numeric array subscript or
/// substring offset, an indirect reference, or prompt expansion (`@P`).
fn parameter_hazard(content: &str) -> bool {
    if content.ends_with("@P") {
        return true;
    }
    let body = content
        .strip_prefix('#')
        .filter(|b| !b.is_empty())
        .unwrap_or(content);
    if let Some(reference) = body.strip_prefix('!') {
        let list = reference.ends_with('*')
            || reference.ends_with('@')
            || reference.ends_with("[@]")
            || reference.ends_with("[*]");
        return !reference.is_empty() && !list;
    }
    let chars: Vec<char> = body.chars().collect();
    let mut i = 0;
    if chars.first().copied().is_some_and(is_name_start) {
        while chars.get(i).copied().is_some_and(is_name_char) {
            i += 1;
        }
    } else {
        i = 1;
    }
    let rest: String = chars
        .get(i..)
        .map(|s| s.iter().collect())
        .unwrap_or_default();
    if let Some(after) = rest.strip_prefix('[') {
        let Some(close) = after.find(']') else {
            return true;
        };
        let subscript = &after[..close];
        if !matches!(subscript, "@" | "*") && !is_plain_arithmetic(subscript) {
            return true;
        }
        return offset_hazard(&after[close + 1..]);
    }
    offset_hazard(&rest)
}

/// `:offset` or `:offset:length` after a parameter name is arithmetic.
fn offset_hazard(rest: &str) -> bool {
    match rest.strip_prefix(':') {
        Some(after) if !after.starts_with(['-', '=', '?', '+']) => !is_plain_arithmetic(after),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(command: &SimpleCommand) -> Vec<&str> {
        command.words.iter().map(Word::text).collect()
    }

    fn programs(input: &str) -> Vec<String> {
        parse(input)
            .unwrap_or_else(|e| panic!("{input:?}: {e}"))
            .iter()
            .map(|c| {
                c.words
                    .first()
                    .map(|w| w.text().to_string())
                    .unwrap_or_default()
            })
            .collect()
    }

    fn sorted(mut list: Vec<String>) -> Vec<String> {
        list.sort();
        list
    }

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
    fn ansi_c_quotes_resolve_their_escapes() {
        let commands =
            parse(r"x $'\x72m' $'\162m' $'\u0072m' $'a\'b' $'a\nb' $'r\0m' $'\q'").unwrap();
        assert_eq!(
            words(&commands[0])[1..],
            ["rm", "rm", "rm", "a'b", "a\nb", "r", "\\q"]
        );
    }

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

    #[test]
    fn comments_start_only_at_a_word() {
        assert_eq!(programs("ls # ; rm x"), ["ls"]);
        assert_eq!(programs("ls a#b; rm x"), ["ls", "rm"]);
        assert_eq!(programs("ls \\#; rm x"), ["ls", "rm"]);
        assert_eq!(programs("# only a comment"), Vec::<String>::new());
        assert_eq!(programs("ls;# x\nrm x"), ["ls", "rm"]);
    }

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

    #[test]
    fn functions_and_hazards_are_listed() {
        let script = parse_script("ls() { :; }; function g { :; }", 0).unwrap();
        assert_eq!(script.functions, ["ls", "g"]);
        for input in [
            "echo $((x + 1))",
            "(( y ))",
            "echo ${a[$i]}",
            "echo ${s:$n}",
            "echo ${!ref}",
            "echo ${p@P}",
            "echo $[n]",
            "a[$i]=1",
        ] {
            let script = parse_script(input, 0).unwrap();
            assert_eq!(script.hazards.len(), 1, "{input}");
        }
        for input in [
            "echo $((1 + 2 * 0x10))",
            "echo ${a[1]} ${s:1:2} ${!p*} ${#x} ${x:-y}",
            "(( $# > 0 ))",
        ] {
            let script = parse_script(input, 0).unwrap();
            assert!(script.hazards.is_empty(), "{input}: {:?}", script.hazards);
        }
    }

    #[test]
    fn line_continuations_join_words() {
        assert_eq!(programs("r\\\nm x"), ["rm"]);
        assert_eq!(programs("ls \\\n -la"), ["ls"]);
    }

    #[test]
    fn malformed_input_is_an_error() {
        for (input, message) in [
            ("echo 'a", "unterminated single quote"),
            ("echo \"a", "unterminated double quote"),
            ("echo $(ls", "unterminated `$(`"),
            ("echo `ls", "unterminated backquote"),
            ("echo ${x", "unterminated `${`"),
            ("ls )", "unexpected `)`"),
            ("(ls", "missing `)`"),
            ("{ ls; ", "missing `}`"),
            ("if a; then b", "missing `fi`"),
            ("while a; do b", "missing `done`"),
            ("case a in b) c", "missing `esac`"),
            ("ls |", "unexpected end of input"),
            ("; ls", "unexpected `;`"),
            ("ls >", "redirection `>` without a target"),
            ("then", "unexpected `then`"),
            (
                "f() ls",
                "a function body must be a compound command like `{ ...; }`",
            ),
            ("echo $'a", "unterminated `$'` quote"),
        ] {
            assert_eq!(parse(input).unwrap_err().message, message, "{input:?}");
        }
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{}ls{}", "$(".repeat(200), ")".repeat(200));
        assert_eq!(parse(&deep).unwrap_err().message, "nested too deeply");
        let ok = format!("{}ls{}", "$(".repeat(20), ")".repeat(20));
        assert_eq!(parse(&ok).unwrap().len(), 21);
        for opener in ["(", "{ ", "\"${x:-", "$((", "((", "a=(", "if ", "<("] {
            let input = opener.repeat(5000);
            assert!(parse(&input).is_err(), "{opener}");
        }
    }

    #[test]
    fn garbage_never_panics() {
        let alphabet: Vec<char> =
            "ab $'\"`\\(){}[]<>|&;#=*?!~-\n\t0123456789:+%/@^,.é😀\u{0}\u{202e}"
                .chars()
                .collect();
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..4000 {
            let len = (next() % 40) as usize;
            let input: String = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            let _ = parse(&input);
        }
        let tokens = [
            "$(",
            ")",
            "`",
            "'",
            "\"",
            "${",
            "}",
            "$((",
            "))",
            "<<EOF\n",
            "EOF\n",
            "case x in ",
            "esac",
            ";;",
            "if ",
            "then ",
            "fi",
            "[[ ",
            " ]]",
            "a=(",
            "((",
            "\n",
            " | ",
            "{ ",
            "; ",
        ];
        for _ in 0..4000 {
            let len = (next() % 12) as usize;
            let input: String = (0..len)
                .map(|_| tokens[(next() % tokens.len() as u64) as usize])
                .collect();
            let _ = parse(&input);
        }
    }
}
