//! Interpreters fed a script on stdin: `curl ... | sh`, `python3 < script.py`.
//!
//! A shell or another interpreter (version suffixes stripped: `python3.12`) whose stdin is
//! a pipe or a redirection, and whose arguments name no script or code of their own (or
//! name `-`, `/dev/stdin`, or pass `sh -s`), runs whatever arrives there, which no rule
//! can see.

use super::invocation::Invocation;
use crate::permissions::shell::{Redirect, Word};

/// Shells of every syntax, as interpreters.
const SHELL_FAMILY: [&str; 11] = [
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "csh", "tcsh", "fish",
];

/// Other programs that run a script fed on stdin (version suffixes stripped: `python3.12`).
const INTERPRETERS: [&str; 19] = [
    "python",
    "pypy",
    "perl",
    "ruby",
    "irb",
    "node",
    "nodejs",
    "deno",
    "bun",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "wish",
    "osascript",
    "pwsh",
    "powershell",
    "R",
    "Rscript",
];

/// An interpreter reading its script from stdin, which a pipe or redirection fills.
pub(super) fn stdin_script(program: &str, inv: &Invocation<'_>, text: &str) -> Option<String> {
    let family = family(program);
    if !is_interpreter(program) {
        return None;
    }
    let fed =
        inv.command.context.piped_input || inv.command.redirects.iter().any(Redirect::feeds_stdin);
    let args = inv.words.get(1..).unwrap_or_default();
    (fed && reads_script_from_stdin(family, args))
        .then(|| format!("`{text}` is an interpreter fed a script on stdin"))
}

/// The program without its version suffix: `python3.12` is `python`, `ruby-3` is `ruby`.
pub(super) fn family(program: &str) -> &str {
    program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-')
}

/// A shell or another interpreter, whatever its version suffix.
pub(super) fn is_interpreter(program: &str) -> bool {
    let family = family(program);
    INTERPRETERS.contains(&family) || SHELL_FAMILY.contains(&family)
}

/// No script or code argument (or `-`, `/dev/stdin`, `sh -s`): the script comes on stdin.
fn reads_script_from_stdin(family: &str, args: &[Word]) -> bool {
    let shell = SHELL_FAMILY.contains(&family);
    let valued: &[&str] = if shell {
        &["-o", "+o", "-O", "+O", "--rcfile", "--init-file"]
    } else if matches!(family, "python" | "pypy") {
        &["-W", "-X", "--check-hash-based-pycs"]
    } else {
        &[]
    };
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let arg = word.text();
        if matches!(arg, "-" | "/dev/stdin") {
            return true;
        }
        if arg == "--" {
            return args
                .get(i + 1)
                .is_none_or(|w| matches!(w.text(), "-" | "/dev/stdin"));
        }
        if valued.contains(&arg) {
            i += 2;
            continue;
        }
        if shell && arg.starts_with('-') && !arg.starts_with("--") && arg.contains('s') {
            return true;
        }
        if !arg.starts_with('-') {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(args: &[&str]) -> Vec<Word> {
        Word::plain(args)
    }

    fn from_stdin(family: &str, args: &[&str]) -> bool {
        reads_script_from_stdin(family, &words(args))
    }

    #[test]
    fn no_script_named_means_the_script_is_on_stdin() {
        for (family, args) in [
            ("python", &[][..]),
            ("python", &["-"]),
            ("python", &["/dev/stdin"]),
            ("python", &["-u"]),
            ("python", &["--"]),
            ("python", &["--", "-"]),
            ("python", &["-W", "ignore"]),
            ("python", &["-X", "dev", "-"]),
            ("bash", &["-s"]),
            ("bash", &["-s", "arg.sh"]),
            ("bash", &["-xs", "arg.sh"]),
            ("bash", &["-o", "pipefail"]),
            ("bash", &["--rcfile", "rc.sh"]),
        ] {
            assert!(from_stdin(family, args), "{family} {args:?}");
        }
    }

    #[test]
    fn a_script_or_code_named_is_not_stdin() {
        for (family, args) in [
            ("python", &["script.py"][..]),
            ("python", &["-u", "script.py"]),
            ("python", &["-c", "print(1)"]),
            ("python", &["--", "script.py"]),
            ("python", &["-W", "ignore", "script.py"]),
            ("bash", &["script.sh"]),
            ("bash", &["-x", "script.sh"]),
            ("bash", &["--posix", "script.sh"]),
            ("bash", &["--rcfile", "rc.sh", "script.sh"]),
            // `-s` is the shells' only: for python it is an option like another.
            ("python", &["-s", "script.py"]),
        ] {
            assert!(!from_stdin(family, args), "{family} {args:?}");
        }
    }
}
