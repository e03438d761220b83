//! What a wrapper command runs: `command`, `exec`, `nice`, `time`, `timeout`, `stdbuf`,
//! `ionice`, `setsid`, `nohup`, `xargs`, `watch`, `eval`, `sh -c`, `find -exec`,
//! `busybox APPLET` (and `env`, in `env_wrapper`).
//!
//! A program and its words flow in; out comes an [`Unwrap`]: the inner command's position
//! (with what it inherits: variables, `xargs`'s appended arguments and replace string), a
//! command string to parse and which shell reads it, a verdict that it runs nothing that
//! matters, or a reason rein cannot see past it. A wrapper's options are skipped by a table
//! of its flags and valued options; an option rein does not know makes the wrapper opaque,
//! since it might take a value.

use super::env_wrapper::env_inner;
use super::variables::EnvVar;
use crate::permissions::shell::Word;

/// POSIX shells whose `-c STRING` is parsed as a command of its own. `sh` is dash on
/// Debian, bash elsewhere: their strings are read both ways.
const POSIX_SHELLS: [&str; 7] = ["sh", "dash", "ksh", "mksh", "ash", "yash", "posh"];

/// Which shell reads a command string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reader {
    /// The shell running the command that holds it (`eval`).
    Caller,
    Bash,
    /// A POSIX shell that may be dash or bash.
    Posix,
    Zsh,
}

/// What a wrapper runs.
pub(super) enum Unwrap {
    /// Not a wrapper, or one with nothing to run: the command is judged itself.
    Itself,
    Inner {
        at: usize,
        env: Vec<EnvVar>,
        more_args: bool,
        /// The text `xargs -I` replaces with its input, inside any argument.
        placeholder: Option<String>,
        /// The file whose contents become the command's arguments (`xargs -a FILE`).
        arg_file: Option<String>,
    },
    /// A command string (`sh -c`, `eval`, `watch`, `env -S`) and the shell that reads it.
    Script(String, Reader),
    /// Runs nothing that matters (`command -v`, `xargs` without a command).
    Neutral(String),
    /// Something rein cannot see past.
    Opaque(String),
    /// `find -exec ...`: these word ranges (where `{}` stands for a file name), and then
    /// `find` itself.
    Execs(Vec<(usize, usize)>),
}

/// How a wrapper's options look.
struct Options {
    flags: &'static str,
    valued: &'static str,
    /// Short options whose value, if any, is attached (`xargs -i{}`).
    attached: &'static str,
    long_flags: &'static [&'static str],
    long_valued: &'static [&'static str],
}

const NO_OPTIONS: Options = Options {
    flags: "",
    valued: "",
    attached: "",
    long_flags: &[],
    long_valued: &[],
};

/// What the wrapper `program` runs. `more_args`: another `xargs` appends arguments, so a
/// wrapper without a command of its own would run them.
pub(super) fn unwrap(program: &str, words: &[Word], more_args: bool) -> Unwrap {
    let inner = |at: usize| {
        if at < words.len() {
            Unwrap::Inner {
                at,
                env: Vec::new(),
                more_args: false,
                placeholder: None,
                arg_file: None,
            }
        } else {
            Unwrap::Itself
        }
    };
    let options = match program {
        "env" => return env_inner(words),
        "find" => return find_execs(words),
        "eval" => {
            // `eval -- CMD` evaluates CMD: the `--` ends eval's (empty) option list.
            let from = match words.get(1).and_then(|w| w.literal_program()) {
                Some("--") => 2,
                _ => 1,
            };
            return match words.get(from..) {
                Some(args) if !args.is_empty() => script_of(program, args, Reader::Caller),
                _ => Unwrap::Itself,
            };
        }
        "bash" => return shell_script(program, words, Reader::Bash),
        "zsh" => return shell_script(program, words, Reader::Zsh),
        p if POSIX_SHELLS.contains(&p) => return shell_script(program, words, Reader::Posix),
        // A multi-call binary: `busybox rm -rf x` is `rm -rf x`.
        "busybox" | "toybox" => {
            return match words.get(1).and_then(Word::literal_program) {
                Some(applet) if !applet.starts_with('-') => inner(1),
                _ => Unwrap::Itself,
            }
        }
        "command" => Options {
            flags: "pvV",
            ..NO_OPTIONS
        },
        "builtin" | "nohup" => NO_OPTIONS,
        "exec" => Options {
            flags: "cl",
            valued: "a",
            ..NO_OPTIONS
        },
        "nice" => Options {
            flags: "0123456789",
            valued: "n",
            long_valued: &["adjustment"],
            ..NO_OPTIONS
        },
        "time" => Options {
            flags: "pvaq",
            valued: "fo",
            long_flags: &["portability", "verbose", "append", "quiet"],
            long_valued: &["format", "output"],
            ..NO_OPTIONS
        },
        "timeout" => Options {
            flags: "fpv",
            valued: "ks",
            long_flags: &["foreground", "preserve-status", "verbose"],
            long_valued: &["kill-after", "signal"],
            ..NO_OPTIONS
        },
        "stdbuf" => Options {
            valued: "ioe",
            long_valued: &["input", "output", "error"],
            ..NO_OPTIONS
        },
        "ionice" => Options {
            flags: "tpPu",
            valued: "cn",
            long_flags: &["ignore", "pid", "pgid", "uid"],
            long_valued: &["class", "classdata"],
            ..NO_OPTIONS
        },
        "setsid" => Options {
            flags: "cfw",
            long_flags: &["ctty", "fork", "wait"],
            ..NO_OPTIONS
        },
        "xargs" => Options {
            flags: "0rtpxo",
            valued: "adEILnPs",
            attached: "eil",
            long_flags: &[
                "null",
                "no-run-if-empty",
                "verbose",
                "interactive",
                "exit",
                "open-tty",
                "show-limits",
                "replace",
                "eof",
                "max-lines",
            ],
            long_valued: &[
                "arg-file",
                "delimiter",
                "max-args",
                "max-procs",
                "max-chars",
                "process-slot-var",
            ],
        },
        "watch" => Options {
            flags: "bcdegtwpx",
            valued: "n",
            long_flags: &[
                "beep",
                "color",
                "no-color",
                "differences",
                "errexit",
                "chgexit",
                "no-title",
                "no-wrap",
                "precise",
                "exec",
            ],
            long_valued: &["interval"],
            ..NO_OPTIONS
        },
        _ => return Unwrap::Itself,
    };
    let (at, seen) = match skip_options(program, words, &options) {
        Ok(found) => found,
        Err(why) => return Unwrap::Opaque(why),
    };
    let short_has = |c: char| seen.iter().any(|a| !a.starts_with("--") && a.contains(c));
    match program {
        "command" if short_has('v') || short_has('V') => {
            Unwrap::Neutral("only looks a command up".to_string())
        }
        "time" if short_has('o') || seen.iter().any(|a| a.starts_with("--output")) => {
            Unwrap::Opaque("writes its report to a file".to_string())
        }
        "timeout" => inner(at + 1),
        "ionice"
            if short_has('p')
                || short_has('P')
                || short_has('u')
                || seen
                    .iter()
                    .any(|a| matches!(*a, "--pid" | "--pgid" | "--uid")) =>
        {
            Unwrap::Itself
        }
        "xargs" if at >= words.len() && more_args => Unwrap::Itself,
        "xargs" if at >= words.len() => Unwrap::Neutral("runs `echo` on its input".to_string()),
        "xargs" => Unwrap::Inner {
            at,
            env: Vec::new(),
            more_args: true,
            placeholder: xargs_placeholder(words.get(1..at).unwrap_or_default()),
            arg_file: xargs_arg_file(words.get(1..at).unwrap_or_default()),
        },
        "watch" if short_has('x') || seen.contains(&"--exec") => inner(at),
        "watch" => match words.get(at..) {
            Some(args) if !args.is_empty() => script_of(program, args, Reader::Posix),
            _ => Unwrap::Itself,
        },
        _ => inner(at),
    }
}

/// Skip a wrapper's options from `words[1]`; returns where its operands start and the
/// options seen. An option rein does not know is an error: it might take a value.
fn skip_options<'w>(
    program: &str,
    words: &'w [Word],
    options: &Options,
) -> Result<(usize, Vec<&'w str>), String> {
    let mut seen = Vec::new();
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let Some(arg) = word.literal_program() else {
            return Err(format!(
                "the argument `{}` of `{program}` is not a literal word",
                word.raw
            ));
        };
        if arg == "--" {
            return Ok((i + 1, seen));
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, has_value) = match long.split_once('=') {
                Some((name, _)) => (name, true),
                None => (long, false),
            };
            if options.long_valued.contains(&name) {
                if !has_value {
                    i += 1;
                }
            } else if !options.long_flags.contains(&name) {
                return Err(format!(
                    "rein does not know the option `{arg}` of `{program}`"
                ));
            }
        } else if arg.len() > 1 && arg.starts_with('-') {
            let cluster: Vec<char> = arg.chars().skip(1).collect();
            for (k, c) in cluster.iter().enumerate() {
                if options.flags.contains(*c) {
                    continue;
                }
                if options.attached.contains(*c) {
                    break;
                }
                if options.valued.contains(*c) {
                    if k + 1 == cluster.len() {
                        i += 1;
                    }
                    break;
                }
                return Err(format!(
                    "rein does not know the option `-{c}` of `{program}`"
                ));
            }
        } else {
            return Ok((i, seen));
        }
        seen.push(arg);
        i += 1;
    }
    Ok((i, seen))
}

/// The replace string of `xargs -I R`, `-iR`, `-i` or `--replace[=R]` among its options.
fn xargs_placeholder(options: &[Word]) -> Option<String> {
    for (i, word) in options.iter().enumerate() {
        let arg = word.text();
        if let Some(long) = arg.strip_prefix("--replace") {
            return Some(long.strip_prefix('=').unwrap_or("{}").to_string());
        }
        if arg.starts_with("--") || !arg.starts_with('-') {
            continue;
        }
        for (k, c) in arg.char_indices().skip(1) {
            let rest = &arg[k + c.len_utf8()..];
            match c {
                'I' if rest.is_empty() => {
                    return Some(options.get(i + 1).map(Word::text).unwrap_or("").to_string())
                }
                'I' => return Some(rest.to_string()),
                'i' if rest.is_empty() => return Some("{}".to_string()),
                'i' => return Some(rest.to_string()),
                'a' | 'd' | 'E' | 'L' | 'n' | 'P' | 's' | 'e' | 'l' => break,
                _ => {}
            }
        }
    }
    None
}

/// The file of `xargs -a FILE`, `-aFILE` or `--arg-file[=]FILE` among its options.
fn xargs_arg_file(options: &[Word]) -> Option<String> {
    for (i, word) in options.iter().enumerate() {
        let arg = word.text();
        let next = || options.get(i + 1).map(|w| w.text().to_string());
        if let Some(long) = arg.strip_prefix("--arg-file") {
            return match long.strip_prefix('=') {
                Some(file) => Some(file.to_string()),
                None => next(),
            };
        }
        if arg.starts_with("--") || !arg.starts_with('-') {
            continue;
        }
        for (k, c) in arg.char_indices().skip(1) {
            let rest = &arg[k + c.len_utf8()..];
            match c {
                'a' if rest.is_empty() => return next(),
                'a' => return Some(rest.to_string()),
                'd' | 'E' | 'I' | 'L' | 'n' | 'P' | 's' | 'e' | 'i' | 'l' => break,
                _ => {}
            }
        }
    }
    None
}

/// Literal arguments joined by spaces, as `eval` and `watch` do, to parse as a command.
fn script_of(program: &str, args: &[Word], reader: Reader) -> Unwrap {
    let mut parts = Vec::with_capacity(args.len());
    for arg in args {
        match arg.literal_program() {
            Some(text) => parts.push(text),
            None => {
                return Unwrap::Opaque(format!(
                    "`{program}` runs `{}`, which is not a literal word",
                    arg.raw
                ))
            }
        }
    }
    Unwrap::Script(parts.join(" "), reader)
}

/// `sh -c STRING`: the string; a script file or stdin: the shell is judged itself.
fn shell_script(program: &str, words: &[Word], reader: Reader) -> Unwrap {
    let mut command_string = false;
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let Some(arg) = word.literal_program() else {
            return Unwrap::Opaque(format!(
                "the argument `{}` of `{program}` is not a literal word",
                word.raw
            ));
        };
        if arg == "--" || arg == "-" {
            i += 1;
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            if long.starts_with("rcfile") || long.starts_with("init-file") {
                return Unwrap::Opaque("reads its startup commands from a file".to_string());
            }
            i += 1;
            continue;
        }
        if arg.len() > 1 && (arg.starts_with('-') || arg.starts_with('+')) {
            let mut values = 0;
            for c in arg.chars().skip(1) {
                match c {
                    'c' if arg.starts_with('-') => command_string = true,
                    'o' | 'O' => values += 1,
                    _ => {}
                }
            }
            i += 1 + values;
            continue;
        }
        break;
    }
    if !command_string {
        return Unwrap::Itself;
    }
    match words.get(i) {
        Some(word) => match word.literal_program() {
            Some(text) => Unwrap::Script(text.to_string(), reader),
            None => Unwrap::Opaque(format!(
                "runs the command string `{}`, which is not a literal word",
                word.raw
            )),
        },
        None => Unwrap::Itself,
    }
}

/// The commands `find` runs with `-exec`, `-execdir`, `-ok` and `-okdir`.
fn find_execs(words: &[Word]) -> Unwrap {
    let mut ranges = Vec::new();
    let mut i = 1;
    while i < words.len() {
        let action = words[i].literal.as_deref();
        if !matches!(action, Some("-exec" | "-execdir" | "-ok" | "-okdir")) {
            i += 1;
            continue;
        }
        let from = i + 1;
        let mut end = from;
        while let Some(word) = words.get(end) {
            let text = word.literal.as_deref();
            // The word before (the action itself for the first, never `{}`).
            let after_braces = end
                .checked_sub(1)
                .and_then(|before| words.get(before))
                .is_some_and(|before| before.literal.as_deref() == Some("{}"));
            if text == Some(";") || (text == Some("+") && after_braces) {
                break;
            }
            end += 1;
        }
        // An empty range (`-exec ;`) runs nothing and judges nothing.
        ranges.push((from, end));
        // The word at `end` (`;`, `+`) is no action, so the search goes on from it.
        i = end;
    }
    if ranges.is_empty() {
        Unwrap::Itself
    } else {
        Unwrap::Execs(ranges)
    }
}
