//! Dollar expansions: `$NAME`, `$1`, `${...}`, `$(...)` (and the body of `<(...)`), bash
//! 5.3's `${ cmd; }` and `${| cmd; }`, and the `$'...'` and `$"..."` quotes.
//!
//! Nothing is expanded: each expansion is found, skipped and counted, so its word is known
//! not to be literal. Commands inside `$(...)` and inside a parameter expansion's words
//! (`${X:-$(cmd)}`) join the script, and so do those of `${ cmd; }` (`${` then a blank, a
//! newline or `|`: a command list, as `$(...)` is). A parameter expansion that evaluates a value as
//! arithmetic — a non-numeric subscript or offset, `${!ref}`, `${x@P}` — is a hazard.
//! `${...}` ends at the first `}` that is not quoted or inside a nested expansion: a bare
//! `{` does not nest (`${x:-{}` is `${x:-{}`). In the POSIX dialect `$'`, `$"` and `$[`
//! are a plain dollar sign, as in dash; in zsh, `${(flags)...}` is a divergence.

use super::arithmetic::is_plain_arithmetic;
use super::parser::{is_name_char, is_name_start, Parser};
use super::words::WordState;
use super::{Dialect, ParseError};

impl Parser<'_> {
    /// At a `$`: an expansion, a `$'...'` or `$"..."` quote, or a plain dollar sign.
    pub(super) fn read_dollar(
        &mut self,
        st: &mut WordState,
        quoted: bool,
    ) -> Result<(), ParseError> {
        match self.peek_at(1) {
            Some(c @ ('\'' | '"' | '[')) if self.posix() && (c == '[' || !quoted) => {
                let construct = format!("${c}");
                self.bashism(&construct);
                st.literal.push('$');
                self.pos += 1;
            }
            Some('\'') if !quoted => {
                self.pos += 2;
                match self.read_ansi_c()? {
                    Some(decoded) => st.literal.push_str(&decoded),
                    None => st.expansions += 1,
                }
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
            Some('{') if self.at_funsub() => {
                st.expansions += 1;
                self.parse_funsub()?;
            }
            Some('{') => {
                st.expansions += 1;
                if self.posix() && matches!(self.peek_at(2), Some(' ' | '\t' | '\n' | '|')) {
                    self.bashism("${ ");
                }
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

    /// After `$(` or `<(`: a command list up to the closing `)`. A here-document opened
    /// inside still waits for the next newline in bash; dash ends it at the `)`.
    pub(super) fn parse_substitution(&mut self) -> Result<(), ParseError> {
        self.enter()?;
        let pending = self.pending.len();
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
        if self.posix() && self.pending.len() > pending {
            self.pending.truncate(pending);
            let reason = "a here-document inside `$(...)` whose body starts after the `)`, which sh (dash) ends at the `)`".to_string();
            self.diverge(reason);
        }
        self.leave();
        Ok(())
    }

    /// At `${` followed by a blank, a newline or `|`, outside the POSIX dialect: bash 5.3's
    /// command substitution run in the current shell (`${ cmd; }`, `${| cmd; }`, which sets
    /// `REPLY`). dash reads it as a (bad) parameter expansion; zsh's reading depends on its
    /// version, so there it is a divergence as well.
    fn at_funsub(&self) -> bool {
        !self.posix() && matches!(self.peek_at(2), Some(' ' | '\t' | '\n' | '|'))
    }

    /// At `${ ` or `${|`: a command list up to a `}` where a command may start, which ends
    /// it even when more of the word follows (`${ echo a;}b`).
    fn parse_funsub(&mut self) -> Result<(), ParseError> {
        self.enter()?;
        if self.dialect == Dialect::Zsh {
            self.diverge(
                "`${ ...; }` is a command substitution in bash 5.3, which zsh reads differently by version"
                    .to_string(),
            );
        }
        self.pos += 2;
        if self.peek() == Some('|') {
            self.pos += 1;
        }
        let outer = std::mem::replace(&mut self.funsub, true);
        let list = self.parse_list();
        self.funsub = outer;
        list?;
        self.skip_blanks();
        if self.peek() != Some('}') {
            return Err(if self.eof() {
                ParseError::new("unterminated `${ `")
            } else {
                self.unexpected()
            });
        }
        self.pos += 1;
        self.leave();
        Ok(())
    }

    /// At `${`: a parameter expansion up to its matching `}`; words inside it (defaults,
    /// patterns) may hold substitutions.
    fn read_parameter(&mut self, quoted: bool) -> Result<(), ParseError> {
        self.enter()?;
        let at = self.pos;
        self.pos += 2;
        let mut st = WordState::default();
        if self.dialect == Dialect::Zsh && self.peek() == Some('(') {
            self.diverge(
                "`${(...)...}` uses zsh parameter flags, which can evaluate a value as a command"
                    .to_string(),
            );
        }
        loop {
            let Some(c) = self.peek() else {
                return Err(ParseError::new("unterminated `${`"));
            };
            match c {
                '}' => {
                    let content = self.text(at + 2, self.pos);
                    self.pos += 1;
                    if parameter_hazard(&content) {
                        let whole = self.text(at, self.pos);
                        self.out.hazards.push(whole);
                    }
                    break;
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
    use crate::permissions::shell::tests::programs;
    use crate::permissions::shell::{parse, parse_script};

    /// What a `$` starts: a variable (a name, a digit, a special character), a quote of
    /// its own outside double quotes (inside them `$'` and `$"` are plain text), or a
    /// plain `$`.
    #[test]
    fn what_a_dollar_sign_starts() {
        for (input, literal) in [
            (r#"echo "$'a\x41'""#, Some(r"$'a\x41'")),
            (r#"echo "a$""#, Some("a$")),
            (r#"echo $"x""#, Some("x")),
            (r"echo $'a\x41'", Some("aA")),
            ("echo $%", Some("$%")),
            ("echo a$", Some("a$")),
            ("echo $x", None),
            ("echo $1", None),
            ("echo $@", None),
            ("echo $-", None),
            ("echo $[1+2]", None),
            ("echo ${x}", None),
            // A backslash in `${...}` escapes the `}` after it.
            (r"echo ${x:-a\}b}", None),
        ] {
            let commands = parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(commands[0].words.len(), 2, "{input}");
            assert_eq!(commands[0].words[1].literal.as_deref(), literal, "{input}");
        }
        assert_eq!(programs("echo 0123456789 $(rm x)"), ["rm", "echo"]);
        // Quotes and backquotes inside `${...}`: a quoted `}` does not end it, and a
        // command in backquotes there is read.
        assert_eq!(programs(r#"echo ${x:-"}; rm y"}"#), ["echo"]);
        assert_eq!(programs("echo ${x:-`rm y`}"), ["rm", "echo"]);
        // Inside double quotes a single quote in `${...}` quotes nothing: bash runs the
        // substitution and prints the quotes.
        assert_eq!(programs(r#"echo "${x:-'$(rm y)'}""#), ["rm", "echo"]);
        // The escaped `}` does not end the expansion, so no command follows it.
        assert_eq!(programs(r"echo ${x:-\}; rm y}"), ["echo"]);
    }

    /// bash 5.3's `${ cmd; }` and `${| cmd; }` run commands (a blank, a tab, a newline or
    /// `|` after the brace), in a word, in double quotes, in a here-document, in a
    /// parameter's default and in arithmetic; a `}` where a command may start ends them,
    /// even joined to more of the word. `${x}` and friends stay parameter expansions.
    #[test]
    fn bash_5_3_command_substitutions_in_braces_are_read_as_commands() {
        for input in [
            "echo ${ rm -rf x; }",
            "echo ${ rm -rf x;}",
            "echo ${\trm -rf x;}",
            "echo ${\nrm -rf x\n}",
            "echo ${|rm -rf x; }",
            "echo ${| rm -rf x\n}",
            "echo \"${ rm -rf x; }\"",
            "echo a${ rm -rf x;}b",
            "echo ${x:-${ rm -rf x; }}",
            "echo $(( ${ rm -rf x; } + 1 ))",
            "cat <<EOF\n${ rm -rf x; }\nEOF",
            "echo ${ { rm -rf x; }; }",
        ] {
            let found = programs(input);
            assert!(found.iter().any(|p| p == "rm"), "{input:?}: {found:?}");
        }
        // The inside is a list of its own: `}` as an argument does not end it.
        assert_eq!(programs("echo ${ echo }; rm x; }"), ["echo", "rm", "echo"]);
        for input in ["echo ${x}", "echo ${#x}", "echo ${x:-y}", "echo \"${x%/}\""] {
            assert_eq!(programs(input), ["echo"], "{input}");
        }
        for input in ["echo ${ rm x", "echo ${ rm x }"] {
            assert!(parse(input).is_err(), "{input}");
        }
    }

    #[test]
    fn a_bare_brace_does_not_nest_in_a_parameter_expansion() {
        for input in [
            "echo ${x:-{}; rm -rf x; echo }",
            "echo ${x#{}; rm -rf x; echo }",
            "echo \"${x:-{}\"; rm -rf x; echo \"}\"",
        ] {
            assert_eq!(programs(input), ["echo", "rm", "echo"], "{input}");
        }
        assert_eq!(programs("echo ${x:-${y:-a}}; rm x"), ["echo", "rm"]);
        assert_eq!(programs("echo ${x:-'}'}; rm x"), ["echo", "rm"]);
    }

    #[test]
    fn functions_and_hazards_are_listed() {
        let script = parse_script("ls() { :; }; function g { :; }", 0).unwrap();
        assert_eq!(script.functions, ["ls", "g"]);
        for input in [
            "echo $((x + 1))",
            "(( y ))",
            "echo ${a[$i]}",
            "echo ${#a[$i]}",
            "echo ${a[1]:$n}",
            "echo ${s:$n}",
            "echo ${!ref}",
            "echo ${p@P}",
            "echo $[n]",
            "a[$i]=1",
        ] {
            let script = parse_script(input, 0).unwrap();
            assert_eq!(script.hazards.len(), 1, "{input}");
        }
        // The hazard is the whole expansion, braces included.
        let script = parse_script("echo ${a[$i]}x", 0).unwrap();
        assert_eq!(script.hazards, ["${a[$i]}"]);
        for input in [
            "echo $((1 + 2 * 0x10))",
            "echo ${a[1]} ${s:1:2} ${!p*} ${#x} ${x:-y}",
            "echo ${!p@} ${!a[@]} ${!a[*]} ${#} ${#a[1]}",
            "(( $# > 0 ))",
        ] {
            let script = parse_script(input, 0).unwrap();
            assert!(script.hazards.is_empty(), "{input}: {:?}", script.hazards);
        }
    }
}
