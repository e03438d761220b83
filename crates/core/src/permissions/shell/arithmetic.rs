//! Arithmetic: `$((...))`, `((...))` and the obsolete `$[...]`.
//!
//! `$((` and `((` may also open `$( (...) )` and `( (...) )`: the expression is tried first,
//! and when it does not close with `))` the parser goes back to a snapshot and remembers the
//! position, so it never tries there again. Arithmetic that reads a variable or command
//! output is listed as a hazard: bash evaluates array subscripts inside such values.

use super::parser::Parser;
use super::words::WordState;
use super::ParseError;

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

impl Parser<'_> {
    /// At `$((` (prefix 3) or `((` (prefix 2): the expression's span when it closes with
    /// `))`, else `None` with nothing consumed (it is then `$( (...) )` or `( (...) )`).
    pub(super) fn try_arithmetic(
        &mut self,
        prefix: usize,
    ) -> Result<Option<(usize, usize)>, ParseError> {
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
    pub(super) fn read_old_arithmetic(&mut self) -> Result<(), ParseError> {
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
        self.leave();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_script;
    use super::is_plain_arithmetic;

    /// Each command's words as written, and the hazards.
    fn shape(input: &str) -> (Vec<Vec<String>>, Vec<String>) {
        let script = parse_script(input, 0).unwrap_or_else(|e| panic!("{input:?}: {e:?}"));
        let words = script
            .commands
            .iter()
            .map(|c| c.words.iter().map(|w| w.raw.clone()).collect())
            .collect();
        (words, script.hazards)
    }

    /// Each case: the words of every command (inner ones first) and the hazards, as bash
    /// reads them: nested parentheses and brackets, quotes, escapes and substitutions inside
    /// the arithmetic do not end it, and what runs inside is a command of its own.
    #[test]
    fn arithmetic_ends_where_bash_ends_it() {
        let w = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        for (input, words, hazards) in [
            (
                "echo $(( (1 + 2) * 3 )) z",
                vec![w(&["echo", "$(( (1 + 2) * 3 ))", "z"])],
                vec![],
            ),
            (
                "echo $(( \\) )) z",
                vec![w(&["echo", "$(( \\) ))", "z"])],
                vec!["$(( \\) ))"],
            ),
            (
                "echo $(( ')' )) z",
                vec![w(&["echo", "$(( ')' ))", "z"])],
                vec![],
            ),
            (
                "echo $(( \")\" )) z",
                vec![w(&["echo", "$(( \")\" ))", "z"])],
                vec![],
            ),
            (
                "echo $(( $(echo 1) )) z",
                vec![w(&["echo", "1"]), w(&["echo", "$(( $(echo 1) ))", "z"])],
                vec!["$(( $(echo 1) ))"],
            ),
            (
                "echo $(( `echo 1` )) z",
                vec![w(&["echo", "1"]), w(&["echo", "$(( `echo 1` ))", "z"])],
                vec!["$(( `echo 1` ))"],
            ),
            // A lone `)` ends the try: `$( (...) )`, however far a later `))` is.
            (
                "echo $((echo a) ); echo $((1))",
                vec![
                    w(&["echo", "a"]),
                    w(&["echo", "$((echo a) )"]),
                    w(&["echo", "$((1))"]),
                ],
                vec![],
            ),
            (
                "(( (1) )) && echo z",
                vec![w(&["((", " (1) ", "))"]), w(&["echo", "z"])],
                vec![],
            ),
            (
                "echo $[ x[1] ] z",
                vec![w(&["echo", "$[ x[1] ]", "z"])],
                vec!["$[ x[1] ]"],
            ),
            ("echo $[1+2] z", vec![w(&["echo", "$[1+2]", "z"])], vec![]),
            (
                "echo $[ \\] ] z",
                vec![w(&["echo", "$[ \\] ]", "z"])],
                vec!["$[ \\] ]"],
            ),
            (
                "echo $[ ']' ] z",
                vec![w(&["echo", "$[ ']' ]", "z"])],
                vec!["$[ ']' ]"],
            ),
            (
                "echo $[ \"]\" ] z",
                vec![w(&["echo", "$[ \"]\" ]", "z"])],
                vec!["$[ \"]\" ]"],
            ),
            (
                "echo $[ $(echo ]) ] z",
                vec![w(&["echo", "]"]), w(&["echo", "$[ $(echo ]) ]", "z"])],
                vec!["$[ $(echo ]) ]"],
            ),
            (
                "echo $[ `echo ]` ] z",
                vec![w(&["echo", "]"]), w(&["echo", "$[ `echo ]` ]", "z"])],
                vec!["$[ `echo ]` ]"],
            ),
        ] {
            let hazards: Vec<String> = hazards.iter().map(|h| h.to_string()).collect();
            assert_eq!(shape(input), (words, hazards), "{input:?}");
        }
    }

    /// A lone `)` ends the try for good, as in bash: what follows `$((echo a) )` is not
    /// more of an arithmetic expression, so a later `))` is a syntax error.
    #[test]
    fn a_lone_parenthesis_is_no_arithmetic() {
        assert!(parse_script("echo $((echo a) ) x)) y", 0).is_err());
    }

    #[test]
    fn special_parameters_are_plain_and_a_name_after_one_is_not() {
        assert!(is_plain_arithmetic("1 + $# * $? - $$ + $!"));
        assert!(is_plain_arithmetic("16#ff + 2"));
        // `$#a` is `$#` and then the variable `a`.
        assert!(!is_plain_arithmetic("1 + $#a"));
        assert!(!is_plain_arithmetic("$x"));
        assert!(!is_plain_arithmetic("a[1]"));
    }
}
