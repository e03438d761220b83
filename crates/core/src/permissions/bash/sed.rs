//! Whether a `sed` command only prints.
//!
//! sed's arguments flow in (after `sed`); out comes why it might write a file or run a
//! program, or `None` when all it can do is print to standard output. The options are read
//! as GNU sed reads them (short clusters such as `-ne 1p`, long options and their
//! unambiguous abbreviations, options after the operands); `-i`/`--in-place` edits files
//! and `-f`/`--file` takes a script rein cannot see, so both ask, as does an option rein
//! does not know. The script is every `-e`/`--expression` value joined by newlines, as sed
//! joins them, or else the first operand.
//!
//! The script is then read command by command, the way GNU sed's compiler reads it: line,
//! `$`, `first~step`, `/regex/` and `\cregexc` addresses, `!`, `{ }` blocks, labels, and
//! `s` and `y` with any delimiter (a backslash escapes the next character, an unescaped
//! newline ends the command), labels up to a blank, `;` or `}`. Only commands that print, move between lines or change the
//! buffer in memory pass: `p P = l d D n N g G h H x z F q Q b t T :`, `y`, and `s` with
//! the flags `g p i I m M` and a number. `w`/`W` and `s///w` write files, `e` and `s///e`
//! run commands, `r`/`R` read a file the script names (where the sensitive-file check
//! cannot see it), and `a`/`i`/`c` take text up to the end of the line; all of them, and
//! anything rein does not read, ask.

use super::flags::long_name;

/// sed's long options that take no value and change nothing outside its output.
const LONG_FLAGS: [&str; 14] = [
    "quiet",
    "silent",
    "regexp-extended",
    "separate",
    "unbuffered",
    "null-data",
    "zero-terminated",
    "posix",
    "sandbox",
    "debug",
    "binary",
    "follow-symlinks",
    "help",
    "version",
];

/// Why `sed ARGS` might do more than print, if it might.
pub(super) fn sed_hazard(args: &[&str]) -> Option<String> {
    let mut expressions: Vec<&str> = Vec::new();
    let mut operands = Vec::new();
    let mut options = true;
    let mut words = args.iter().copied();
    while let Some(arg) = words.next() {
        if !options || arg == "-" || !arg.starts_with('-') {
            operands.push(arg);
            continue;
        }
        if arg == "--" {
            options = false;
            continue;
        }
        if let Some(name) = long_name(arg) {
            let attached = arg.split_once('=').map(|(_, v)| v);
            match long_option(name) {
                Long::Flag => {}
                Long::Expression => {
                    expressions.push(attached.or_else(|| words.next()).unwrap_or_default())
                }
                Long::LineLength => {
                    if attached.is_none() {
                        words.next();
                    }
                }
                Long::Refused(why) => return Some(format!("{why} (`{arg}`)")),
            }
            continue;
        }
        for (k, c) in arg.char_indices().skip(1) {
            match c {
                'n' | 'E' | 'r' | 's' | 'u' | 'z' | 'b' => {}
                'e' | 'l' => {
                    // The value is the rest of the cluster, or else the next word.
                    let rest = &arg[k + 1..];
                    let value = if rest.is_empty() {
                        words.next().unwrap_or_default()
                    } else {
                        rest
                    };
                    if c == 'e' {
                        expressions.push(value);
                    }
                    break;
                }
                'i' => return Some(format!("edits files in place (`{arg}`)")),
                'f' => return Some(format!("reads its script from a file (`{arg}`)")),
                _ => {
                    return Some(format!(
                        "runs with an option rein does not read as printing (`{arg}`)"
                    ))
                }
            }
        }
    }
    let script = if expressions.is_empty() {
        operands.first().copied().unwrap_or_default().to_string()
    } else {
        expressions.join("\n")
    };
    script_hazard(&script).map(|why| format!("runs a sed script that {why} (`{script}`)"))
}

/// What a long option of sed does.
enum Long {
    Flag,
    Expression,
    LineLength,
    Refused(&'static str),
}

/// The long option `name` names, exactly or as an unambiguous abbreviation; one that is
/// neither is refused (sed refuses it too, and rein does not guess).
fn long_option(name: &str) -> Long {
    let valued = [
        ("expression", Long::Expression),
        ("line-length", Long::LineLength),
        ("in-place", Long::Refused("edits files in place")),
        ("file", Long::Refused("reads its script from a file")),
    ];
    let flags = LONG_FLAGS.iter().map(|full| (*full, Long::Flag));
    let mut matches: Vec<(&str, Long)> = valued
        .into_iter()
        .chain(flags)
        .filter(|(full, _)| !name.is_empty() && full.starts_with(name))
        .collect();
    if let Some(exact) = matches.iter().position(|(full, _)| *full == name) {
        return matches.swap_remove(exact).1;
    }
    match (matches.pop(), matches.is_empty()) {
        (Some((_, long)), true) => long,
        _ => Long::Refused("runs with an option rein does not read as printing"),
    }
}

/// Why `script` may do more than print to standard output, if it may.
fn script_hazard(script: &str) -> Option<String> {
    let mut reader = ScriptReader {
        chars: script.chars().collect(),
        at: 0,
    };
    reader.commands().err()
}

/// A cursor over a sed script.
struct ScriptReader {
    chars: Vec<char>,
    at: usize,
}

impl ScriptReader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek();
        self.at += usize::from(c.is_some());
        c
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.at += 1;
        }
    }

    fn digits(&mut self) -> bool {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        self.at > start
    }

    fn commands(&mut self) -> Result<(), String> {
        let mut depth = 0usize;
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';')) {
                self.at += 1;
            }
            let Some(first) = self.peek() else {
                return if depth == 0 {
                    Ok(())
                } else {
                    Err("does not parse (an unclosed `{`)".to_string())
                };
            };
            if first == '#' {
                while self.next().is_some_and(|c| c != '\n') {}
                continue;
            }
            if self.address()? {
                self.skip_blanks();
                if self.peek() == Some(',') {
                    self.at += 1;
                    self.skip_blanks();
                    if !self.address()? && !self.relative_address() {
                        return Err("does not parse (a range without its end)".to_string());
                    }
                }
            }
            self.skip_blanks();
            while self.peek() == Some('!') {
                self.at += 1;
                self.skip_blanks();
            }
            let Some(command) = self.next() else {
                return Err("does not parse (an address without a command)".to_string());
            };
            match command {
                '{' => {
                    depth += 1;
                    continue;
                }
                '}' => {
                    depth = depth
                        .checked_sub(1)
                        .ok_or_else(|| "does not parse (a `}` without its `{`)".to_string())?;
                }
                'p' | 'P' | '=' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | 'z'
                | 'F' => {}
                'l' | 'q' | 'Q' => {
                    self.skip_blanks();
                    self.digits();
                }
                'b' | 't' | 'T' | ':' => {
                    self.skip_blanks();
                    while self
                        .peek()
                        .is_some_and(|c| !matches!(c, ' ' | '\t' | '\n' | ';' | '}'))
                    {
                        self.at += 1;
                    }
                }
                'y' => {
                    let delimiter = self.delimiter('y')?;
                    self.delimited(delimiter, 'y')?;
                    self.delimited(delimiter, 'y')?;
                }
                's' => {
                    let delimiter = self.delimiter('s')?;
                    self.delimited(delimiter, 's')?;
                    self.delimited(delimiter, 's')?;
                    self.substitution_flags()?;
                }
                'w' | 'W' => return Err(format!("writes a file (`{command}`)")),
                'e' => return Err("runs a command (`e`)".to_string()),
                'r' | 'R' => return Err(format!("reads a file it names (`{command}`)")),
                other => return Err(format!("does more than print (`{other}`)")),
            }
            self.end_of_command(command)?;
        }
    }

    /// An address, if one starts here: a line number (`first~step` too), `$`, `/regex/` or
    /// `\cregexc`, with the regex flags `I` and `M`.
    fn address(&mut self) -> Result<bool, String> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                self.digits();
                if self.peek() == Some('~') {
                    self.at += 1;
                    self.digits();
                }
            }
            Some('$') => self.at += 1,
            Some('/') => {
                self.at += 1;
                self.delimited('/', 'a')?;
                self.regex_flags();
            }
            Some('\\') => {
                self.at += 1;
                let delimiter = self.delimiter('a')?;
                self.delimited(delimiter, 'a')?;
                self.regex_flags();
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The end of a range written relative to its start: `+N` or `~N`.
    fn relative_address(&mut self) -> bool {
        if matches!(self.peek(), Some('+' | '~')) {
            self.at += 1;
            return self.digits();
        }
        false
    }

    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.at += 1;
        }
    }

    /// The delimiter after `s`, `y` or `\` in an address: any character but a newline or a
    /// backslash.
    fn delimiter(&mut self, of: char) -> Result<char, String> {
        match self.next() {
            Some(c) if c != '\n' && c != '\\' => Ok(c),
            _ => Err(format!("does not parse (`{of}` without a delimiter)")),
        }
    }

    /// Up to and past the next unescaped `delimiter`, as GNU sed's `match_slash` reads: a
    /// backslash takes the next character with it, an unescaped newline is an error.
    fn delimited(&mut self, delimiter: char, of: char) -> Result<(), String> {
        loop {
            match self.next() {
                Some('\\') => {
                    if self.next().is_none() {
                        break;
                    }
                }
                Some(c) if c == delimiter => return Ok(()),
                Some('\n') | None => break,
                Some(_) => {}
            }
        }
        let what = if of == 'a' {
            "an address".to_string()
        } else {
            format!("`{of}`")
        };
        Err(format!(
            "does not parse ({what} without its closing delimiter)"
        ))
    }

    /// The flags after `s///`: those that only change the match; `w` and `e` are refused.
    fn substitution_flags(&mut self) -> Result<(), String> {
        while let Some(c) = self.peek() {
            match c {
                'g' | 'p' | 'i' | 'I' | 'm' | 'M' => self.at += 1,
                c if c.is_ascii_digit() => self.at += 1,
                'w' => return Err("writes a file (`s///w`)".to_string()),
                'e' => return Err("runs its result as a command (`s///e`)".to_string()),
                _ => break,
            }
        }
        Ok(())
    }

    /// After a command: blanks, then its end (`;`, a newline, `}` or a comment).
    fn end_of_command(&mut self, command: char) -> Result<(), String> {
        self.skip_blanks();
        match self.peek() {
            None | Some(';' | '\n' | '}' | '#') => Ok(()),
            Some(other) => Err(format!(
                "does not parse (`{other}` after the command `{command}`)"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(args: &str) -> Vec<&str> {
        args.split(' ').filter(|a| !a.is_empty()).collect()
    }

    #[test]
    fn scripts_that_only_print_pass() {
        for script in [
            "",
            "p",
            "1p",
            "$p",
            "1,20p",
            "5p;9p",
            "/a/,/b/p",
            "/^fn judge/,/^    }/p",
            "\\|a/b|p",
            "0,/x/p",
            "0~4p",
            "3,+2p",
            "3,~4p",
            "/x/Ip",
            "/x/!p",
            "1!G;h;$!d",
            "$=",
            "s/a/b/",
            "s/a/b/g",
            "s|a|b|2p",
            "s/a\\/w/b/g",
            "s/a/b\\\nc/",
            "s;a;b;g",
            "y/abc/xyz/",
            "1{p;q}",
            "/x/{\n  s/a/b/\n  p\n}",
            ":a;N;$!ba;s/\\n/ /g",
            "l 40",
            "q5",
            "# a comment\np",
            "1d",
            "n;p",
        ] {
            assert_eq!(script_hazard(script), None, "{script:?}");
        }
    }

    #[test]
    fn scripts_that_write_run_or_read_are_refused() {
        for script in [
            "w out",
            "1w out",
            "W out",
            "/x/w out",
            "p;w out",
            "1{p;w out\n}",
            "s/a/b/w out",
            "s/a/b/gw out",
            "s|a|b|e",
            "s/a/b/e",
            "1e rm x",
            "e",
            "r /etc/passwd",
            "1r/root/.ssh/id_rsa",
            "R x",
            "a text",
            "1i\\\ntext",
            "c x",
            "v",
            "L",
            // A delimiter in a bracket is still a delimiter: the `w` is a flag.
            "s/[/]/x/w out",
            "s/a/b",
            "y/ab/x",
            "/x",
            "1,",
            "1{p",
            "}",
            "pw out",
            "b x;w out",
            ":a w out",
        ] {
            assert!(script_hazard(script).is_some(), "{script:?}");
        }
    }

    #[test]
    fn options_and_operands_are_read_as_gnu_sed_reads_them() {
        for args in [
            "-n 1p",
            "-n 1p -- f",
            "-ne 1,5p f",
            "-n -e 1p -e 2p f",
            "--quiet --expression=1p f",
            "--expr 1p f",
            "-E -s -u -z s/a+/b/ f",
            "-l 40 -n l f",
            "--posix --sandbox -n p f",
            "s/a/b/ f -n",
            "-n -e 1p w",
        ] {
            assert_eq!(sed_hazard(&split(args)), None, "{args}");
        }
        for args in [
            "-i s/a/b/ f",
            "-n 1p f -i",
            "-i.bak 1p f",
            "--in-place 1p f",
            "--in 1p f",
            "-f script.sed f",
            "--file=script.sed f",
            "-n w-out f",
            "-n -e 1p -e w_out f",
            "-e 1{ -e w_out -e } f",
            "--frobnicate 1p f",
            "--s 1p f",
            "-n1p f",
            "-x 1p f",
        ] {
            assert!(sed_hazard(&split(args)).is_some(), "{args}");
        }
        // Joined as sed joins them: a block over several `-e` holds a write.
        assert!(sed_hazard(&["-e", "1{", "-e", "w out", "-e", "}"]).is_some());
        assert_eq!(sed_hazard(&["-e", "1{", "-e", "p", "-e", "}"]), None);
    }
}
