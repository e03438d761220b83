//! Arguments that make an otherwise harmless program act.
//!
//! `find -delete`, `sort -o FILE`, `tree -o` and `tree -R -H`, `uniq IN OUT`, `rg --pre`,
//! `file -C` write files or run programs, and so do some options of git's subcommands
//! (`git`), some flags of the test runners (`runners`) and a `sed` script that does more
//! than print (`sed`); long options are recognised by their unambiguous
//! abbreviations too (`file --comp`, `git diff --out`), and an argument rein cannot read
//! could be any of them. `date -s` and `date MMDDhhmm` set the clock, `printf -v NAME`
//! assigns a variable (asking for one that changes what runs, `PATH`, or whose subscript
//! is evaluated), and a jq program can reach past its input files (`jq`). In `test`, `[`
//! and `[[`, `-v 'a[$i]'` and the arithmetic comparisons of `[[` evaluate their operands,
//! which can run commands.

use super::git::{git_hazard, reads_only};
use super::jq::jq_hazard;
use super::runners::{cargo_hazard, pytest_hazard};
use super::sed::sed_hazard;
use super::variables::changes_what_runs;
use crate::permissions::shell::{self, Word};

/// Flags through which an otherwise read-only program writes files or runs programs.
pub(super) fn flag_hazard(program: &str, args: &[Word], text: &str) -> Option<String> {
    // These read their words themselves: most of them are data.
    let why = match program {
        "printf" => printf_hazard(args),
        "jq" => jq_hazard(args),
        // `python3 -m pytest ARGS` is pytest with ARGS.
        "python" | "python3" => {
            let module = args
                .get(..2)
                .map(|a| a.iter().map(Word::text).collect::<Vec<_>>());
            if module.as_deref() == Some(&["-m", "pytest"][..]) {
                return flag_hazard("pytest", args.get(2..).unwrap_or_default(), text);
            }
            None
        }
        _ => None,
    };
    if let Some(why) = why {
        return Some(format!("`{text}` {why}"));
    }
    let pytest = program.starts_with("pytest") || program == "py.test";
    if !pytest
        && !matches!(
            program,
            "find" | "sort" | "tree" | "uniq" | "git" | "rg" | "file" | "cargo" | "sed" | "date"
        )
    {
        return None;
    }
    let git_reader = args
        .first()
        .and_then(|w| w.literal.as_deref())
        .is_some_and(reads_only);
    let unreadable = args.iter().find(|w| w.literal.is_none());
    if let Some(word) = unreadable.filter(|_| program != "git" || git_reader) {
        return Some(format!(
            "`{text}` has an argument rein cannot read (`{}`), which could be an option that writes files or runs programs",
            word.raw
        ));
    }
    let args: Vec<&str> = args.iter().map(Word::text).collect();
    let why = match program {
        "find" => args
            .iter()
            .find(|a| {
                matches!(
                    **a,
                    "-delete" | "-fprint" | "-fprint0" | "-fprintf" | "-fls"
                )
            })
            .map(|a| format!("deletes or writes files (`{a}`)")),
        "sort" => sort_hazard(&args),
        "tree" => tree_hazard(&args),
        "uniq" => uniq_output(&args).map(|file| format!("writes its output to a file (`{file}`)")),
        "git" => git_hazard(&args),
        "rg" => args
            .iter()
            .find(|a| {
                let name = a.split('=').next().unwrap_or_default();
                matches!(name, "--pre" | "--hostname-bin")
            })
            .map(|a| format!("runs a program (`{a}`)")),
        "file" => args
            .iter()
            .find(|a| match long_name(a) {
                Some(name) => abbreviates(name, "compile", 2),
                None => a.starts_with('-') && a.contains('C'),
            })
            .map(|a| format!("writes a compiled magic file (`{a}`)")),
        "cargo" => cargo_hazard(&args),
        "sed" => sed_hazard(&args),
        "date" => date_hazard(&args),
        _ => pytest_hazard(&args),
    };
    why.map(|why| format!("`{text}` {why}"))
}

/// A long option's name, when `arg` is one: `--output=x` -> `output`.
pub(super) fn long_name(arg: &str) -> Option<&str> {
    let long = arg.strip_prefix("--")?;
    Some(long.split('=').next().unwrap_or_default())
}

/// Whether `name` is `full` or an abbreviation of it at least `min` characters long (GNU
/// and git accept unambiguous abbreviations of long options).
pub(super) fn abbreviates(name: &str, full: &str, min: usize) -> bool {
    name.len() >= min && full.starts_with(name)
}

/// bash's `printf -v NAME FORMAT ...` assigns NAME: one that changes what later commands run
/// (`PATH`, `BASH_CMDS`, ...) asks, as an assignment would, and so does a subscript, which
/// bash evaluates (`-v 'a[$(cmd)]'`). Options come before the format, `-v` as often as given.
fn printf_hazard(args: &[Word]) -> Option<String> {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let Some(option) = word.literal_program() else {
            return Some(format!(
                "has an argument rein cannot read where an option may be (`{}`), which could be `-v NAME`",
                word.raw
            ));
        };
        let Some(attached) = option.strip_prefix("-v") else {
            // The format (after `--`, or any other word: bash refuses other options).
            return None;
        };
        let name = if attached.is_empty() {
            i += 1;
            match args.get(i).map(|w| (w, w.literal_program())) {
                Some((_, Some(name))) => name,
                Some((w, None)) => {
                    return Some(format!("assigns a variable rein cannot name (`{}`)", w.raw))
                }
                None => return None,
            }
        } else {
            attached
        };
        let plain = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !plain {
            return Some(format!(
                "assigns `{name}`, whose name or subscript bash evaluates"
            ));
        }
        if changes_what_runs(name) {
            return Some(format!("sets `{name}`, which changes what runs"));
        }
        i += 1;
    }
    None
}

/// `date -s`/`--set` and an operand that is not a `+FORMAT` (`date 0101120024`) set the
/// system clock. The values of `-d`, `-f`, `-r` (and their long forms) are skipped.
fn date_hazard(args: &[&str]) -> Option<String> {
    let valued = [("date", 2), ("file", 1), ("reference", 3), ("rfc-3339", 5)];
    let mut operands_only = false;
    let mut i = 0;
    while let Some(&arg) = args.get(i) {
        i += 1;
        if operands_only || arg == "-" || !arg.starts_with('-') {
            if !arg.starts_with('+') {
                return Some(format!("sets the system clock (`{arg}`)"));
            }
            continue;
        }
        if arg == "--" {
            operands_only = true;
            continue;
        }
        if let Some(name) = long_name(arg) {
            if abbreviates(name, "set", 1) {
                return Some(format!("sets the system clock (`{arg}`)"));
            }
            let takes_value = valued
                .iter()
                .any(|(full, min)| abbreviates(name, full, *min));
            if takes_value && !arg.contains('=') {
                i += 1;
            }
            continue;
        }
        for (k, c) in arg.char_indices().skip(1) {
            match c {
                's' => return Some(format!("sets the system clock (`{arg}`)")),
                'd' | 'f' | 'r' => {
                    i += usize::from(k + 1 == arg.len());
                    break;
                }
                'I' => break,
                _ => {}
            }
        }
    }
    None
}

fn sort_hazard(args: &[&str]) -> Option<String> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if *arg == "--" {
            return None;
        }
        if let Some(name) = long_name(arg) {
            if abbreviates(name, "output", 1) {
                return Some(format!("writes its output to a file (`{arg}`)"));
            }
            if abbreviates(name, "compress-program", 2) {
                return Some(format!("runs a program (`{arg}`)"));
            }
        } else if let Some(flags) = arg.strip_prefix('-') {
            // A cluster of short options (`-` alone is an empty one).
            let cluster: Vec<char> = flags.chars().collect();
            for (k, c) in cluster.iter().enumerate() {
                if *c == 'o' {
                    return Some(format!("writes its output to a file (`{arg}`)"));
                }
                if matches!(c, 'k' | 't' | 'S' | 'T') {
                    if k + 1 == cluster.len() {
                        i += 1;
                    }
                    break;
                }
            }
        }
        i += 1;
    }
    None
}

/// `tree -o FILE` (anywhere in a cluster: `-fo out`) writes its output to a file; `-R`
/// reruns it in every directory, writing `00Tree.html` there with `-H`.
fn tree_hazard(args: &[&str]) -> Option<String> {
    for arg in args {
        if *arg == "--" {
            return None;
        }
        if arg.starts_with("--") || !arg.starts_with('-') {
            continue;
        }
        if arg.contains('o') {
            return Some(format!("writes its output to a file (`{arg}`)"));
        }
        if arg.contains('R') {
            return Some(format!("writes a file into every directory (`{arg}`)"));
        }
    }
    None
}

/// `uniq [OPTION]... [INPUT [OUTPUT]]`: the OUTPUT operand, if given.
fn uniq_output<'a>(args: &[&'a str]) -> Option<&'a str> {
    let mut operands = Vec::new();
    let mut options = true;
    let mut i = 0;
    while let Some(&arg) = args.get(i) {
        if options && arg == "--" {
            options = false;
        } else if options && arg.starts_with("--") {
            let valued = ["skip-fields", "skip-chars", "check-chars"];
            let name = long_name(arg).unwrap_or_default();
            if !arg.contains('=') && valued.iter().any(|v| abbreviates(name, v, 2)) {
                i += 1;
            }
        } else if options && arg.len() > 1 && arg.starts_with('-') {
            let cluster: Vec<char> = arg.chars().skip(1).collect();
            if let Some(k) = cluster.iter().position(|c| matches!(c, 'f' | 's' | 'w')) {
                if k + 1 == cluster.len() {
                    i += 1;
                }
            }
        } else {
            operands.push(arg);
        }
        i += 1;
    }
    operands.get(1).copied()
}

/// `[[ $x -eq 1 ]]` and `-v 'a[$i]'` evaluate their operands as arithmetic.
pub(super) fn test_hazard(program: &str, words: &[Word], text: &str) -> Option<String> {
    if !matches!(program, "[[" | "test" | "[") {
        return None;
    }
    for (i, word) in words.iter().enumerate() {
        match word.literal.as_deref() {
            Some("-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge") if program == "[[" => {
                let operands = [
                    i.checked_sub(1).and_then(|j| words.get(j)),
                    words.get(i + 1),
                ];
                if let Some(operand) = operands
                    .into_iter()
                    .flatten()
                    .find(|o| !shell::is_plain_arithmetic(&o.raw))
                {
                    return Some(format!(
                        "`{text}` compares `{}` as arithmetic, which runs any command hidden in its value",
                        operand.raw
                    ));
                }
            }
            Some("-v") => {
                let name = words.get(i + 1).map(Word::text).unwrap_or_default();
                if let Some((_, subscript)) = name.split_once('[') {
                    if !shell::is_plain_arithmetic(subscript.trim_end_matches(']')) {
                        return Some(format!(
                            "`{text}` evaluates the subscript of `{name}`, which can run commands"
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    None
}
