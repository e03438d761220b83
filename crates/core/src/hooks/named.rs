//! The project files a hook's command names: what an approval of the project's hooks pins
//! besides the definitions (`"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh`, `python3
//! scripts/lint.py`, `bash .claude/hooks/x.sh`).
//!
//! The command is read as `sh -c` would split it: quotes removed, backslashes taken,
//! `$CLAUDE_PROJECT_DIR` and `$REIN_PROJECT_DIR` (also in braces, also inside double
//! quotes) the project root, operators (`;`, `|`, `&`, `(`, `)`) between commands. Each
//! word that is then a path inside the project is named, relative to the project root
//! (where hooks run): the program of a command when it has a `/` in it (a bare name is
//! looked up in `PATH`), every argument, the value of a `--flag=value`. Left out: what a
//! redirection writes or reads (`>> hook.log`), a word with another variable, a command
//! substitution or a glob in it (its value is not known before it runs), `~`, and URLs.

use std::path::{Path, PathBuf};

/// The variables a hook's command may name the project by.
const PROJECT_VARS: &[&str] = &["CLAUDE_PROJECT_DIR", "REIN_PROJECT_DIR"];

/// The paths inside `root` (relative to it) that `command` names, each once, in order.
pub fn project_paths(command: &str, root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for word in words(command, root) {
        let Some(text) = candidate(&word) else {
            continue;
        };
        if let Some(rel) = crate::consent::file_pin::inside(Path::new(text), root) {
            if !out.contains(&rel) {
                out.push(rel);
            }
        }
    }
    out
}

/// One word of a command, after quote removal and the project's variables.
#[derive(Debug, Default)]
struct Word {
    text: String,
    /// A variable, a substitution, a glob or `~` was left in it: its value is unknown.
    unknown: bool,
    /// It is the program of its command.
    program: bool,
    /// It follows a redirection operator.
    redirected: bool,
}

/// Whether `word` may name a file, and the text that would: `None` for a program without
/// a `/`, a redirection, an unknown value, a flag, a URL.
fn candidate(word: &Word) -> Option<&str> {
    if word.unknown || word.redirected || word.text.is_empty() {
        return None;
    }
    if word.program && !word.text.contains('/') {
        return None;
    }
    let mut text = word.text.as_str();
    // `--config=x.toml`, `FOO=./x`: the value.
    if let Some((name, value)) = text.split_once('=') {
        let flag = name.starts_with('-')
            || (!name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_'));
        if flag {
            text = value;
        }
    }
    if text.is_empty() || text.starts_with('-') || text.contains("://") {
        return None;
    }
    Some(text)
}

/// The state of [`words`] between characters.
#[derive(Default)]
struct Split {
    out: Vec<Word>,
    word: Word,
    /// Something of `word` was seen (an empty `''` is a word).
    started: bool,
    /// The next word is a command's program.
    program_next: bool,
    /// The next word follows a redirection operator.
    redirect_next: bool,
}

impl Split {
    /// The word so far, ended: marked as a program or a redirection's target as it stands.
    fn finish(&mut self) {
        if !self.started {
            return;
        }
        let mut w = std::mem::take(&mut self.word);
        self.started = false;
        if self.redirect_next {
            w.redirected = true;
            self.redirect_next = false;
        } else if self.program_next {
            // `NAME=value cmd`: an assignment keeps the next word the program.
            let assignment = w.text.split_once('=').is_some_and(|(n, _)| {
                !n.is_empty() && n.chars().all(|c| c.is_alphanumeric() || c == '_')
            });
            if !assignment {
                w.program = true;
                self.program_next = false;
            }
        }
        self.out.push(w);
    }
}

/// The words of `command` (see the module doc).
fn words(command: &str, root: &Path) -> Vec<Word> {
    let root = root.to_string_lossy();
    let mut s = Split {
        program_next: true,
        ..Split::default()
    };
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => s.finish(),
            '\n' | ';' | '&' | '|' | '(' | ')' => {
                s.finish();
                s.program_next = true;
            }
            '<' | '>' => {
                // `2>file`: the digits were the descriptor, not a word.
                if s.started
                    && !s.word.text.is_empty()
                    && s.word.text.chars().all(|d| d.is_ascii_digit())
                {
                    s.word = Word::default();
                    s.started = false;
                } else {
                    s.finish();
                }
                while matches!(chars.peek(), Some('>' | '<' | '&' | '|')) {
                    chars.next();
                }
                s.redirect_next = true;
            }
            '#' if !s.started => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        s.program_next = true;
                        break;
                    }
                }
            }
            '\'' => {
                s.started = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    s.word.text.push(c);
                }
            }
            '"' => {
                s.started = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.peek() {
                            Some(&n @ ('$' | '`' | '"' | '\\')) => {
                                chars.next();
                                s.word.text.push(n);
                            }
                            _ => s.word.text.push('\\'),
                        },
                        '$' => dollar(&mut chars, &mut s.word, &root),
                        '`' => s.word.unknown = true,
                        c => s.word.text.push(c),
                    }
                }
            }
            '\\' => {
                s.started = true;
                if let Some(n) = chars.next() {
                    if n != '\n' {
                        s.word.text.push(n);
                    }
                }
            }
            '$' => {
                s.started = true;
                dollar(&mut chars, &mut s.word, &root);
            }
            '`' | '*' | '?' | '[' => {
                s.started = true;
                s.word.unknown = true;
                s.word.text.push(c);
            }
            '~' if !s.started => {
                s.started = true;
                s.word.unknown = true;
            }
            c => {
                s.started = true;
                s.word.text.push(c);
            }
        }
    }
    s.finish();
    s.out
}

/// After a `$`: the project's variable becomes `root`; anything else leaves the word
/// unknown.
fn dollar(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, word: &mut Word, root: &str) {
    let mut name = String::new();
    if chars.peek() == Some(&'{') {
        chars.next();
        let mut closed = false;
        for c in chars.by_ref() {
            if c == '}' {
                closed = true;
                break;
            }
            name.push(c);
        }
        if closed && PROJECT_VARS.contains(&name.as_str()) {
            word.text.push_str(root);
        } else {
            word.unknown = true;
        }
        return;
    }
    while let Some(&c) = chars.peek() {
        if c.is_ascii_alphanumeric() || c == '_' {
            name.push(c);
            chars.next();
        } else {
            break;
        }
    }
    if PROJECT_VARS.contains(&name.as_str()) {
        word.text.push_str(root);
    } else {
        // `$1`, `$(...)`, `$?`, another variable, or a lone `$`.
        word.unknown = true;
        word.text.push('$');
        word.text.push_str(&name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(command: &str) -> Vec<String> {
        project_paths(command, Path::new("/p"))
            .into_iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn scripts_named_by_the_project_variable_or_relative_to_the_root() {
        assert_eq!(
            named("\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/check.sh"),
            [".claude/hooks/check.sh"]
        );
        assert_eq!(
            named("\"${CLAUDE_PROJECT_DIR}/.claude/hooks/check.sh\" --strict"),
            [".claude/hooks/check.sh"]
        );
        assert_eq!(named("$REIN_PROJECT_DIR/x.sh"), ["x.sh"]);
        assert_eq!(named("python3 scripts/lint.py"), ["scripts/lint.py"]);
        assert_eq!(named("bash .claude/hooks/x.sh"), [".claude/hooks/x.sh"]);
        assert_eq!(
            named("./check.sh && node tools/a.js"),
            ["check.sh", "tools/a.js"]
        );
        assert_eq!(
            named("FOO=lib/env.sh ./run.sh --config=conf/x.toml"),
            ["lib/env.sh", "run.sh", "conf/x.toml"]
        );
        assert_eq!(named("sh -c 'ls' ; python3 x\\ y.py"), ["ls", "x y.py"]);
        assert_eq!(named("cat /p/sub/a.py"), ["sub/a.py"]);
    }

    #[test]
    fn only_a_variable_name_before_an_equals_sign_makes_an_assignment_or_a_value() {
        // An assignment before the program keeps the next word the program.
        assert_eq!(named("FOO=1 lint.py"), ["1"]);
        assert_eq!(named("A_B=1 lint.py"), ["1"]);
        // A word whose part before `=` is not a variable name is a program, or a path.
        assert_eq!(named("a.b=c lint.py"), ["lint.py"]);
        assert_eq!(named("=c lint.py"), ["lint.py"]);
        assert_eq!(named("cat conf.d/a=b"), ["conf.d/a=b"]);
        assert_eq!(named("cat =x.sh"), ["=x.sh"]);
        assert_eq!(named("cat a_b=x.sh"), ["x.sh"]);
    }

    #[test]
    fn comments_home_and_descriptors_only_where_the_shell_sees_them() {
        // `#` and `~` inside a word are characters of it.
        assert_eq!(named("cat x#y.sh"), ["x#y.sh"]);
        assert_eq!(named("cat a~b.sh"), ["a~b.sh"]);
        // Digits before a redirection are its descriptor; another word before one is a
        // word; so is an empty `''`, the program of its command.
        assert_eq!(named("cat x 2>err.log"), ["x"]);
        assert_eq!(named("cat a.txt>out.log"), ["a.txt"]);
        assert_eq!(named("''>out.log lint.py"), ["lint.py"]);
        // Inside double quotes a backslash takes `$`, `` ` ``, `"` and `\`.
        assert_eq!(
            named(r#"cat "a\$b.sh" "c\"d" "e\\f" "g\h""#),
            ["a$b.sh", "c\"d", "e\\f", "g\\h"]
        );
        // Another variable in braces, or the project's unclosed, leaves the word unknown.
        assert_eq!(
            named("cat ${HOME}/x.sh ${CLAUDE_PROJECT_DIR/y.sh"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn what_is_not_a_project_file_is_left_out() {
        for command in [
            "echo done >> hook.log 2>&1",
            "cat < input.txt",
            "bash \"$HOME\"/x.sh",
            "python3 $1",
            "bash ~/hooks/x.sh",
            "cat /etc/passwd ../outside.sh",
            "curl https://example.com/x.sh",
            "bash scripts/*.sh",
            "echo $(cat x)",
            "# a comment naming x.sh",
        ] {
            let got = named(command);
            assert!(
                got.iter()
                    .all(|p| !p.ends_with(".sh") && !p.ends_with(".log") && !p.ends_with(".txt")),
                "{command}: {got:?}"
            );
        }
        // An argument may name a file: pinned absent, it only matters once one is there.
        assert_eq!(named("cargo fmt"), ["fmt"]);
        assert_eq!(
            named("jq -r .x | xargs cargo fmt --"),
            [".x", "cargo", "fmt"]
        );
    }
}
