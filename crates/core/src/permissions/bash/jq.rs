//! Whether a `jq` command only reads the files it names.
//!
//! jq's arguments flow in (after `jq`); out comes why it might read what the command line
//! does not show, or `None`. jq writes nothing and runs nothing; what it reads is its input
//! files and `--rawfile`/`--slurpfile` files, all arguments the sensitive-file check sees.
//! Beyond them a program can load a module or a JSON data file from a search path
//! (`import "config" as $c {search: "~/.docker"}`, `include`, `modulemeta`), and `env` or
//! `$ENV` hand it the whole environment, as `env` would print it; a program with any of
//! these words asks, as does a program read from a file (`-f`/`--from-file`), which rein
//! cannot see. Options are read as jq reads them: anywhere on the line, long ones exact,
//! short ones in clusters (`-nr`); a word rein cannot read asks unless it is the value of
//! `--arg`/`--argjson` (data jq only binds to a variable), since it could be an option.

use crate::permissions::shell::Word;

/// jq's long options that take no value.
const LONG_FLAGS: [&str; 25] = [
    "seq",
    "stream",
    "stream-errors",
    "slurp",
    "raw-input",
    "null-input",
    "compact-output",
    "tab",
    "color-output",
    "monochrome-output",
    "ascii-output",
    "unbuffered",
    "sort-keys",
    "raw-output",
    "raw-output0",
    "join-output",
    "nul-output",
    "exit-status",
    "args",
    "jsonargs",
    "help",
    "version",
    "build-configuration",
    "debug-dump-disasm",
    "debug-trace",
];

/// Words of a jq program that reach beyond its input files.
const REACHING: [&str; 5] = ["import", "include", "modulemeta", "env", "$ENV"];

/// Why `jq ARGS` might read more than its arguments name, if it might.
pub(super) fn jq_hazard(args: &[Word]) -> Option<String> {
    let mut program = None;
    let mut options = true;
    let mut i = 0;
    while let Some(word) = args.get(i) {
        i += 1;
        let Some(arg) = word.literal_program() else {
            return Some(format!(
                "has an argument rein cannot read (`{}`), which could be an option",
                word.raw
            ));
        };
        if !options || arg == "-" || !arg.starts_with('-') {
            if program.is_none() {
                program = Some(arg);
            }
            continue;
        }
        if arg == "--" {
            options = false;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            // Data bound to a variable; a file the sensitive-file check sees; a number; a
            // folder to search for modules, which only `import` and `include` use.
            let skip = match long {
                "arg" | "argjson" => 2,
                "slurpfile" | "rawfile" => {
                    let files = args.get(i..i + 2).unwrap_or_default();
                    if let Some(unread) = files.iter().find(|w| w.literal_program().is_none()) {
                        return Some(format!("reads a file rein cannot name (`{}`)", unread.raw));
                    }
                    2
                }
                "indent" | "library-path" => 1,
                "from-file" => return Some(format!("reads its program from a file (`{arg}`)")),
                long if LONG_FLAGS.contains(&long) => 0,
                _ => return Some(format!("runs with an option rein does not know (`{arg}`)")),
            };
            i += skip;
            continue;
        }
        // `-Lpath` or `-L path`: a module folder.
        if let Some(path) = arg.strip_prefix("-L") {
            i += usize::from(path.is_empty());
            continue;
        }
        for c in arg.chars().skip(1) {
            match c {
                'n' | 'r' | 'j' | 'a' | 's' | 'S' | 'C' | 'M' | 'e' | 'c' | 'h' | 'V' | 'R' => {}
                'f' => return Some(format!("reads its program from a file (`{arg}`)")),
                _ => return Some(format!("runs with an option rein does not know (`{arg}`)")),
            }
        }
    }
    program.and_then(reaching_word).map(|word| {
        format!(
            "runs a program that uses `{word}`, which reads what the command line does not name"
        )
    })
}

/// The first word of [`REACHING`] that `program` uses as a word of its own (not `.env`,
/// `$env` or `environment`).
fn reaching_word(program: &str) -> Option<&'static str> {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    REACHING.into_iter().find(|word| {
        program.match_indices(word).any(|(at, _)| {
            let before = program[..at].chars().next_back();
            let after = program[at + word.len()..].chars().next();
            !before.is_some_and(|c| is_name(c) || c == '.' || c == '$')
                && !after.is_some_and(is_name)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(args: &[&str]) -> Vec<Word> {
        Word::plain(args)
    }

    fn hazard(args: &[&str]) -> Option<String> {
        jq_hazard(&words(args))
    }

    #[test]
    fn programs_over_named_inputs_pass() {
        for args in [
            &[".", "package.json"][..],
            &["-r", ".scripts.test", "package.json"],
            &["-nr", "1 + 1"],
            &[".dependencies | keys", "package.json", "-c"],
            &["--arg", "v", "x", ".a == $v", "f.json"],
            &["--argjson", "n", "1", ".[$n]"],
            &["--rawfile", "t", "notes.txt", "-n", "$t"],
            &["--slurpfile", "d", "data.json", "-n", "$d"],
            &["--indent", "4", "."],
            &["-L", "lib", "."],
            &[".env", ".env.example"],
            &[".environment", "f"],
            &["--", "-1", "f"],
            &["--tab", "--sort-keys", "."],
            // A flag's value is never the program.
            &["--arg", "v", "env", "."],
            // `env` inside a longer name is not `env`.
            &[".a | environ", "f"],
            &[".my_env", "f"],
        ] {
            assert_eq!(hazard(args), None, "{args:?}");
        }
    }

    #[test]
    fn a_program_from_a_file_says_so() {
        for args in [&["-f", "prog.jq", "f"][..], &["--from-file", "prog.jq"]] {
            let why = hazard(args).unwrap_or_default();
            assert!(
                why.contains("reads its program from a file"),
                "{args:?}: {why}"
            );
        }
    }

    #[test]
    fn programs_that_reach_further_ask() {
        for args in [
            &["-n", "import \"config\" as $c {search: \"~/.docker\"}; $c"][..],
            &["-n", "include \"x\"; 1"],
            &["-n", "\"x\" | modulemeta"],
            &["-n", "env"],
            &["-n", "env.HOME"],
            &["-n", "$ENV"],
            &["-f", "prog.jq", "f"],
            &["--from-file", "prog.jq"],
            &["-nf", "prog.jq"],
            &["-x", "."],
            &["--frobnicate", "."],
            &["--raw", "."],
        ] {
            assert!(hazard(args).is_some(), "{args:?}");
        }
        let unreadable = Word {
            raw: "$X".to_string(),
            literal: None,
            glob: false,
        };
        let mut args = words(&[".", "f"]);
        args.push(unreadable.clone());
        assert!(jq_hazard(&args).is_some());
        // The value of `--arg` is only data.
        let mut args = words(&["--arg", "v"]);
        args.push(unreadable.clone());
        args.extend(words(&[".a == $v", "f"]));
        assert_eq!(jq_hazard(&args), None);
        let mut args = words(&["--rawfile", "t"]);
        args.push(unreadable);
        assert!(jq_hazard(&args).is_some());
    }
}
