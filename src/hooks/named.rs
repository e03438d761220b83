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
        if let Some(rel) = crate::file_pin::inside(Path::new(text), root) {
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

/// The words of `command` (see the module doc).
fn words(command: &str, root: &Path) -> Vec<Word> {
    let root = root.to_string_lossy();
    let mut out = Vec::new();
    let mut word = Word::default();
    let mut started = false;
    let mut program_next = true;
    let mut redirect_next = false;
    let mut chars = command.chars().peekable();
    let finish = |word: &mut Word,
                  started: &mut bool,
                  program_next: &mut bool,
                  redirect_next: &mut bool,
                  out: &mut Vec<Word>| {
        if !*started {
            return;
        }
        let mut w = std::mem::take(word);
        *started = false;
        if *redirect_next {
            w.redirected = true;
            *redirect_next = false;
        } else if *program_next {
            // `NAME=value cmd`: an assignment keeps the next word the program.
            let assignment = w.text.split_once('=').is_some_and(|(n, _)| {
                !n.is_empty() && n.chars().all(|c| c.is_alphanumeric() || c == '_')
            });
            if !assignment {
                w.program = true;
                *program_next = false;
            }
        }
        out.push(w);
    };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => finish(
                &mut word,
                &mut started,
                &mut program_next,
                &mut redirect_next,
                &mut out,
            ),
            '\n' | ';' | '&' | '|' | '(' | ')' => {
                finish(
                    &mut word,
                    &mut started,
                    &mut program_next,
                    &mut redirect_next,
                    &mut out,
                );
                program_next = true;
            }
            '<' | '>' => {
                // `2>file`: the digits were the descriptor, not a word.
                if started && !word.text.is_empty() && word.text.chars().all(|d| d.is_ascii_digit())
                {
                    word = Word::default();
                    started = false;
                } else {
                    finish(
                        &mut word,
                        &mut started,
                        &mut program_next,
                        &mut redirect_next,
                        &mut out,
                    );
                }
                while matches!(chars.peek(), Some('>' | '<' | '&' | '|')) {
                    chars.next();
                }
                redirect_next = true;
            }
            '#' if !started => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        program_next = true;
                        break;
                    }
                }
            }
            '\'' => {
                started = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.text.push(c);
                }
            }
            '"' => {
                started = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.peek() {
                            Some(&n @ ('$' | '`' | '"' | '\\')) => {
                                chars.next();
                                word.text.push(n);
                            }
                            _ => word.text.push('\\'),
                        },
                        '$' => dollar(&mut chars, &mut word, &root),
                        '`' => word.unknown = true,
                        c => word.text.push(c),
                    }
                }
            }
            '\\' => {
                started = true;
                if let Some(n) = chars.next() {
                    if n != '\n' {
                        word.text.push(n);
                    }
                }
            }
            '$' => {
                started = true;
                dollar(&mut chars, &mut word, &root);
            }
            '`' | '*' | '?' | '[' => {
                started = true;
                word.unknown = true;
                word.text.push(c);
            }
            '~' if !started => {
                started = true;
                word.unknown = true;
            }
            c => {
                started = true;
                word.text.push(c);
            }
        }
    }
    finish(
        &mut word,
        &mut started,
        &mut program_next,
        &mut redirect_next,
        &mut out,
    );
    out
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
