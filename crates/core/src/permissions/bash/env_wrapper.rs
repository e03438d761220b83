//! What `env [OPTION]... [NAME=VALUE]... [COMMAND [ARG]...]` runs.
//!
//! Its options are skipped, its assignments become variables set for the command, and the
//! command after them is judged. `env -S STRING` (`--split-string`) splits the string like a
//! command line, so it is judged as a command string, with the arguments after it appended.
//! Its own escapes (`\_` is a space, `\c` ends the string) and `${VAR}` are not modelled:
//! a string holding `\` or `$` is opaque.

use super::variables::EnvVar;
use super::wrappers::{Reader, Unwrap};
use crate::permissions::shell::Word;

/// `env [OPTION]... [NAME=VALUE]... [COMMAND [ARG]...]`.
pub(super) fn env_inner(words: &[Word]) -> Unwrap {
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let Some(arg) = word.literal_program() else {
            break;
        };
        if arg == "--" {
            i += 1;
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            match name {
                "ignore-environment"
                | "null"
                | "debug"
                | "list-signal-handling"
                | "ignore-signal"
                | "default-signal"
                | "block-signal" => {}
                "unset" | "chdir" if value.is_none() => i += 1,
                "unset" | "chdir" => {}
                "split-string" => {
                    return match value {
                        Some(value) => split_string(value, words.get(i + 1..)),
                        None => split_word(words.get(i + 1), words.get(i + 2..)),
                    }
                }
                _ => {
                    return Unwrap::Opaque(format!(
                        "rein does not know the option `{arg}` of `env`"
                    ))
                }
            }
            i += 1;
            continue;
        }
        // A cluster of short options; `-` alone (an empty cluster) is the old `-i`.
        if let Some(flags) = arg.strip_prefix('-') {
            let cluster: Vec<char> = flags.chars().collect();
            for (k, c) in cluster.iter().enumerate() {
                match c {
                    'i' | '0' | 'v' => {}
                    'u' | 'C' => {
                        if k + 1 == cluster.len() {
                            i += 1;
                        }
                        break;
                    }
                    'S' => {
                        let rest: String =
                            cluster.get(k + 1..).unwrap_or_default().iter().collect();
                        return if rest.is_empty() {
                            split_word(words.get(i + 1), words.get(i + 2..))
                        } else {
                            split_string(&rest, words.get(i + 1..))
                        };
                    }
                    _ => {
                        return Unwrap::Opaque(format!(
                            "rein does not know the option `-{c}` of `env`"
                        ))
                    }
                }
            }
            i += 1;
            continue;
        }
        break;
    }
    let mut env = Vec::new();
    while let Some(word) = words.get(i) {
        match word.text().split_once('=') {
            Some((name, value)) if !name.is_empty() => {
                let value = word.literal.is_some().then_some(value);
                env.push(EnvVar::new(name, value));
                i += 1;
            }
            _ => break,
        }
    }
    if i < words.len() {
        Unwrap::Inner {
            at: i,
            env,
            more_args: false,
            placeholder: None,
            arg_file: None,
        }
    } else {
        Unwrap::Itself
    }
}

fn split_word(string: Option<&Word>, rest: Option<&[Word]>) -> Unwrap {
    match string {
        Some(word) => match word.literal_program() {
            Some(text) => split_string(text, rest),
            None => Unwrap::Opaque(format!(
                "`env -S` splits `{}`, which is not a literal word",
                word.raw
            )),
        },
        None => Unwrap::Itself,
    }
}

/// `env -S STRING ARGS...`: the string split like a command line, then the arguments.
fn split_string(string: &str, rest: Option<&[Word]>) -> Unwrap {
    if string.contains(['\\', '$']) {
        return Unwrap::Opaque(format!(
            "`env -S` resolves its own escapes and variables in `{string}`, which rein does not model"
        ));
    }
    let mut script = string.to_string();
    for word in rest.unwrap_or_default() {
        let Some(text) = word.literal_program() else {
            return Unwrap::Opaque(format!(
                "the argument `{}` of `env` is not a literal word",
                word.raw
            ));
        };
        match shlex::try_quote(text) {
            Ok(quoted) => {
                script.push(' ');
                script.push_str(&quoted);
            }
            Err(_) => return Unwrap::Opaque("cannot quote the arguments of `env -S`".to_string()),
        }
    }
    Unwrap::Script(script, Reader::Bash)
}
