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
//! The syntax is bash's by default. A string handed to `sh -c` runs in a POSIX shell (dash
//! on Debian), which reads bash-only syntax differently: in [`Dialect::Posix`] the parser
//! reads such text the way dash does (`[[` is a plain word, `((` two subshells, `$'` a
//! dollar sign and a quote, `&>` a background operator and a redirection) and lists every
//! bash-only construct it met as a divergence. [`Dialect::Zsh`] reads bash syntax and lists
//! zsh's parameter flags (`${(e)x}` evaluates a value).
//!
//! It recognises, it does not interpret: nothing is expanded. A word keeps its raw text, and
//! its value after quote removal when no expansion is involved (and no `$'...'` escape
//! whose value rein cannot be sure of). Malformed input (an unterminated quote, unbalanced
//! parentheses, a missing `fi`/`done`/`esac`, a here-document without its delimiter line) is
//! an error, never a guess, and nesting deeper than [`MAX_DEPTH`] is an error too, so no
//! input can overflow the stack.
//!
//! This file holds the public types and the entry points. The parser itself is one
//! recursive descent over the characters, its methods grouped by what they read: `parser`
//! (the cursor, tokens, errors and the depth bound), `grammar` (lists, pipelines, simple
//! commands, redirections), `compound` (`if`, loops, `case`, `[[ ]]`, subshells, functions),
//! `words` and `quotes` (one word and its quoting), `ansi_c` (the escapes of `$'...'`),
//! `expansion` (`$NAME`, `${...}`, `$(...)`), `arithmetic` (`$((...))`, `((...))`, `$[...]`),
//! `heredoc` and `delimiter` (here-documents and how their delimiter word is read).

mod ansi_c;
mod arithmetic;
mod braces;
mod compound;
mod delimiter;
mod expansion;
mod grammar;
mod heredoc;
mod parser;
mod quotes;
mod words;

pub use arithmetic::is_plain_arithmetic;
pub use braces::{expand_words, MAX_WORDS};

use parser::Parser;

/// Which shell reads the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// bash (the `bash` tool's shell, and `bash -c`).
    #[default]
    Bash,
    /// A POSIX shell such as dash (`sh -c`, `dash -c`): bash-only syntax is read the way
    /// dash reads it and listed as a divergence.
    Posix,
    /// zsh: bash syntax, with zsh's parameter flags listed as divergences.
    Zsh,
}

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
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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

    /// Plain words with no quotes or expansions, for the unit tests of what reads them.
    #[cfg(test)]
    pub(crate) fn plain(words: &[&str]) -> Vec<Word> {
        words
            .iter()
            .map(|w| Word {
                raw: w.to_string(),
                literal: Some(w.to_string()),
                glob: false,
            })
            .collect()
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
    /// `${x:$n}`, `${!ref}`, `${x@P}`, `a=([$k]=1)`): a value like `a[$(cmd)]` would run
    /// `cmd` there.
    pub hazards: Vec<String>,
    /// The variables `for NAME in WORDS` and `select NAME in WORDS` bind, with their words
    /// (`None` without `in`: the positional parameters).
    pub loops: Vec<(String, Option<Vec<Word>>)>,
    /// Constructs the dialect's shell reads differently from how bash does, each as a reason
    /// ("`[[` is bash-only syntax that sh (dash) reads differently"). Always empty for bash.
    pub divergences: Vec<String>,
}

/// Every simple command `command` would run, flattened.
pub fn parse(command: &str) -> Result<Vec<SimpleCommand>, ParseError> {
    parse_script(command, 0).map(|script| script.commands)
}

/// Parse `command` as bash, as if it were nested `depth` levels deep already (a string
/// handed to `sh -c` or `eval` continues its command's depth, so the bound holds across
/// them).
pub fn parse_script(command: &str, depth: usize) -> Result<Script, ParseError> {
    parse_script_as(command, depth, Dialect::Bash)
}

/// [`parse_script`] in the given dialect.
pub fn parse_script_as(
    command: &str,
    depth: usize,
    dialect: Dialect,
) -> Result<Script, ParseError> {
    let mut script = Script::default();
    {
        // The list enters a level, which holds the bound (`Parser::enter`).
        let mut parser = Parser::new(command, depth, false, dialect, &mut script);
        parser.parse_list()?;
        parser.skip_blanks();
        if !parser.eof() {
            return Err(parser.unexpected());
        }
        parser.no_pending_heredoc()?;
    }
    Ok(script)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Helpers for the tests of every file of the parser.

    pub(super) fn words(command: &SimpleCommand) -> Vec<&str> {
        command.words.iter().map(Word::text).collect()
    }

    pub(super) fn programs(input: &str) -> Vec<String> {
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

    pub(super) fn sorted(mut list: Vec<String>) -> Vec<String> {
        list.sort();
        list
    }

    /// What reaches a command's stdin: a file, a descriptor duplicated onto 0, a here
    /// document or string; not a descriptor closed, another descriptor, or an output.
    #[test]
    fn which_redirections_feed_stdin() {
        for (command, feeds) in [
            ("cat < f", true),
            ("cat 0< f", true),
            ("cat < -", true),
            ("cat <> f", true),
            ("cat <&3", true),
            ("cat 0<&3", true),
            ("cat <<< x", true),
            ("cat << EOF\nx\nEOF", true),
            ("cat <<- EOF\nx\nEOF", true),
            ("cat <&-", false),
            ("cat 0<&-", false),
            ("cat 3< f", false),
            ("cat 3<&-", false),
            ("cat > f", false),
            ("cat 0> f", false),
            ("cat >&-", false),
            ("cat 2>&1", false),
        ] {
            let commands = parse(command).unwrap();
            let redirect = &commands[0].redirects[0];
            assert_eq!(redirect.feeds_stdin(), feeds, "{command}");
        }
    }

    /// A script handed down one level above the bound still parses (its own list is the
    /// last level); from the bound on it is an error, however much deeper.
    #[test]
    fn a_script_past_the_nesting_bound_is_an_error() {
        assert!(parse_script("ls", MAX_DEPTH - 1).is_ok());
        for depth in [MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 2, 1_000] {
            let error = parse_script("ls", depth).unwrap_err();
            assert_eq!(error.to_string(), "nested too deeply", "{depth}");
        }
        // Levels left are given back: a hundred groups one after another are one level.
        let sequential = "(ls); $(ls); { ls; }; ".repeat(100);
        assert!(parse_script(&sequential, MAX_DEPTH - 3).is_ok());
    }

    /// A backslash before a newline joins the lines, between words and around operators
    /// as inside a word.
    #[test]
    fn line_continuations_are_blanks() {
        for (input, expected) in [
            ("ls \\\n-la", vec!["ls -la"]),
            ("ls \\\n| rm x", vec!["ls", "rm x"]),
            ("ls \\\n&& rm x", vec!["ls", "rm x"]),
            ("ls; \\\n rm x", vec!["ls", "rm x"]),
            ("\\\n\\\n rm x", vec!["rm x"]),
            ("ls \\\n # a comment\nrm x", vec!["ls", "rm x"]),
        ] {
            let commands = parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
            let shown: Vec<String> = commands.iter().map(|c| words(c).join(" ")).collect();
            assert_eq!(shown, expected, "{input:?}");
        }
    }

    /// In bash `&>` (and `&>>`) sends both outputs to a file: a redirection, not `&`
    /// ending a command (the POSIX dialect reads it as that; see below).
    #[test]
    fn bash_reads_ampersand_greater_as_a_redirection() {
        for (input, op) in [("ls &>/dev/null rm x", "&>"), ("ls &>>log rm x", "&>>")] {
            let commands = parse(input).unwrap();
            assert_eq!(commands.len(), 1, "{input}");
            assert_eq!(words(&commands[0]), ["ls", "rm", "x"], "{input}");
            assert_eq!(commands[0].redirects[0].op.as_str(), op, "{input}");
        }
        // Digits before it are a word of the command, as bash reads them (`&>` takes no
        // descriptor).
        let digits = &parse("ls 2&>>log rm x").unwrap()[0];
        assert_eq!(words(digits), ["ls", "2", "rm", "x"]);
        assert_eq!(digits.redirects[0].fd, None);
        assert_eq!(digits.redirects[0].op.as_str(), "&>>");
        // Also right after the `time` keyword, where a `&` would end the timed pipeline.
        let timed = parse("time &>/dev/null ls").unwrap();
        assert_eq!(timed.len(), 1);
        assert_eq!(words(&timed[0]), ["ls"]);
        assert_eq!(timed[0].redirects[0].op.as_str(), "&>");
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
            ("ls (", "unexpected `(` after `ls`"),
            ("(ls) (", "unexpected `(`"),
            ("a=(x", "unterminated array assignment"),
            (
                "case x in a) ls; b) rm y; esac",
                "expected `esac`, unexpected `)`",
            ),
            // A function's name is a command's only word: no assignment, redirection or
            // second word before the `()`.
            ("FOO=1 f() { ls; }", "unexpected `(`"),
            (">out f() { ls; }", "unexpected `(`"),
            ("ls x () { ls; }", "unexpected `(`"),
            ("({ ls; } x)", "unexpected `x`"),
            ("if { ls; } x; then ls; fi", "unexpected `x`"),
            ("{ ls; } (", "unexpected `(`"),
            ("ls <", "redirection `<` without a target"),
            // What is shown of an unexpected word stops at 20 characters.
            (
                "(ls) abcdefghijklmnopqrstuvwxyz",
                "unexpected `abcdefghijklmnopqrst`",
            ),
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
    fn the_posix_dialect_reads_bash_only_syntax_as_dash_does() {
        for (input, expected, construct) in [
            ("[[ x || rm -rf y ]]", vec!["[[", "rm"], "`[[`"),
            ("[[ x =~ a|rm y ]]", vec!["[[", "rm"], "`[[`"),
            ("((. ./x))", vec!["."], "`((`"),
            ("echo $'\\'; rm x; # '", vec!["echo", "rm"], "`$'`"),
            ("echo $\"a\"; rm x", vec!["echo", "rm"], "`$\"`"),
            ("echo $[ '] ' ]\nrm x\n# '", vec!["echo", "rm"], "`$[`"),
            ("ls &>/dev/null rm x", vec!["ls", "rm"], "`&>`"),
            ("ls &>>log rm x", vec!["ls", "rm"], "`&>`"),
            ("case x in a) ls;& b) rm y;; esac", vec!["ls", "rm"], "`;&`"),
            (
                "case x in a) ls;;& b) rm y;; esac",
                vec!["ls", "rm"],
                "`;;&`",
            ),
            ("{fd}>x rm y", vec!["{fd}"], "`{fd}>`"),
            ("a[1]=x rm y", vec!["a[1]=x"], "`a[1]=`"),
            ("a+=x", vec!["a+=x"], "`a+=`"),
            ("function f {\nrm x", vec!["function", "rm"], "`function`"),
            ("coproc rm x", vec!["coproc"], "`coproc`"),
            ("cat <<< x", vec!["cat"], "`<<<`"),
            ("cat <(rm x)", vec!["cat", "rm"], "`<(...)`"),
            ("ls |& rm x", vec!["ls", "rm"], "`|&`"),
            ("a=(1 2)", vec![""], "`NAME=(...)`"),
            (
                "cat <<$'EOF'\n$EOF\nrm x\nEOF\n",
                vec!["cat", "rm", "EOF"],
                "`$'`",
            ),
            (
                "echo $(cat <<EOF)\nrm x\nEOF\n",
                vec!["echo", "cat", "rm", "EOF"],
                "here-document",
            ),
            (
                "cat <<EOF\nx\\\nEOF\nrm x\nEOF\n",
                vec!["cat"],
                "backslash-newline",
            ),
        ] {
            let script = parse_script_as(input, 0, Dialect::Posix)
                .unwrap_or_else(|e| panic!("{input:?}: {e}"));
            let found: Vec<&str> = script
                .commands
                .iter()
                .map(|c| c.words.first().map(Word::text).unwrap_or_default())
                .collect();
            assert_eq!(sorted_strs(found), sorted_strs(expected), "{input:?}");
            assert!(
                script.divergences.iter().any(|d| d.contains(construct)),
                "{input:?}: {:?}",
                script.divergences
            );
            let bash = parse_script(input, 0).map(|s| s.divergences);
            assert!(bash.is_err() || bash == Ok(Vec::new()), "{input:?}");
        }
        for input in [
            "ls -la | grep x && echo \"$(pwd)\" > /dev/null",
            "case x in a) ls;; esac; for f in a b; do cat $f; done",
            "cat <<'EOF'\n$x\nEOF\n",
            "echo $((1 + 2)) ${x:-y} `pwd`",
            // Inside double quotes `$'` is plain text in both dialects.
            "echo \"$'x'\"",
            // Braces that are no named descriptor: not a name, no `}`, nothing after it.
            "echo {1}>x",
            "echo {x >x",
            "echo {x}y >x",
            "echo {x} >x",
        ] {
            let script = parse_script_as(input, 0, Dialect::Posix).unwrap();
            assert!(
                script.divergences.is_empty(),
                "{input:?}: {:?}",
                script.divergences
            );
        }
    }

    #[test]
    fn zsh_parameter_flags_are_divergences() {
        let script = parse_script_as("echo ${(e)x}", 0, Dialect::Zsh).unwrap();
        assert_eq!(script.divergences.len(), 1);
        assert!(parse_script("echo ${(e)x}", 0)
            .unwrap()
            .divergences
            .is_empty());
    }

    fn sorted_strs(mut list: Vec<&str>) -> Vec<&str> {
        list.sort();
        list
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
