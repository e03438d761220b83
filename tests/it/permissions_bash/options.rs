//! The options of the programs rein sees through (`env`, `git`, `sed`, the wrappers), one
//! test per program: each option is skipped with exactly the words it takes, so the
//! command after it is the one judged. Most cases here were missing until mutation
//! testing (TESTING.md) showed a changed option table passing every other test.

use super::{check, defaults, judge};
use rein_core::permissions::rules::RuleAction::{Allow, Ask, Deny};
use rein_core::permissions::rules::{BashRule, RuleOrigin};

/// The program and words of each part a command was judged as.
fn parts(command: &str) -> Vec<String> {
    judge(command, &defaults())
        .parts
        .iter()
        .map(|part| part.command.clone())
        .collect()
}

#[test]
fn env_skips_its_long_options_and_their_values() {
    check(
        &defaults(),
        &[
            ("env --ignore-environment ls", Allow),
            ("env --null --debug --list-signal-handling ls", Allow),
            (
                "env --ignore-signal --default-signal --block-signal ls",
                Allow,
            ),
            ("env --ignore-environment rm x", Deny),
            ("env --unset HOME ls", Allow),
            ("env --unset=HOME ls", Allow),
            ("env --chdir=/tmp ls", Allow),
            ("env --unset=HOME rm x", Deny),
            ("env --chdir /tmp rm x", Deny),
            ("env --frobnicate ls", Ask),
            ("env - ls", Allow),
            ("env - rm x", Deny),
            ("env -0v ls", Allow),
            ("env -x ls", Ask),
            // Not an assignment: GNU env refuses an empty name.
            ("env =x ls", Ask),
            // The words after `-S STRING` are quoted, not read as shell.
            ("env -S ls '; rm -rf x'", Allow),
            ("env -S 'ls; rm -rf x'", Deny),
        ],
    );
}

/// A word with an empty name before `=` is no assignment: it is the command env runs.
#[test]
fn env_takes_an_empty_name_for_the_command() {
    assert_eq!(parts("env =x ls"), ["=x ls"]);
    assert_eq!(parts("env A=1 ls"), ["ls"]);
}

/// `-S STRING` and `--split-string[=STRING]`: the string is the command line and the
/// words after it its arguments, whichever form names it.
#[test]
fn env_split_string_takes_the_words_after_it_as_arguments() {
    for (command, expected) in [
        ("env --split-string=git diff", "git diff"),
        ("env --split-string git diff", "git diff"),
        ("env -i --split-string git diff", "git diff"),
        ("env -S git diff", "git diff"),
        ("env -iS git diff", "git diff"),
        ("env -Sgit diff", "git diff"),
        ("env -u HOME -S 'git log' -1", "git log -1"),
        ("env -S 'git log'", "git log"),
        ("env -S 'git log' 'a b' \"c'd\"", "git log a b c'd"),
    ] {
        let parts = parts(command);
        assert_eq!(
            parts.last().map(String::as_str),
            Some(expected),
            "{command}: {parts:?}"
        );
        assert_eq!(judge(command, &defaults()).action, Allow, "{command}");
    }
}

/// `git --exec-path` alone prints where git's programs are, as `--version` prints the
/// version: nothing follows, and a rule of the user's for it is obeyed. With a value it
/// runs git's commands from there.
#[test]
fn git_information_options_end_the_command() {
    let mut rules = defaults();
    for rule in ["git --exec-path*", "git --html-path"] {
        rules
            .push(BashRule::new(
                rule,
                Allow,
                RuleOrigin::Config("/c.toml".into()),
            ))
            .expect("the rule compiles");
    }
    check(
        &rules,
        &[
            ("git --exec-path", Allow),
            ("git --html-path", Allow),
            ("git --exec-path=/tmp status", Ask),
            ("git --exec-path=/tmp", Ask),
        ],
    );
}

/// `git tag` and `git branch` list with only listing options; a short-option cluster is
/// read letter by letter (`-n` takes the digits after it), and `-` is a name.
#[test]
fn git_tag_and_branch_read_their_option_clusters() {
    check(
        &defaults(),
        &[
            ("git tag -n5 v*", Allow),
            ("git tag -ln", Allow),
            ("git tag -nl v*", Allow),
            ("git tag -nd v1", Ask),
            ("git tag -l5", Ask),
            ("git tag -", Ask),
            ("git branch -", Ask),
            ("git branch -av", Allow),
            ("git branch -vd x", Ask),
        ],
    );
}

/// sed's options that take a value take exactly one word, attached or not, and after
/// `--` every word is a file.
#[test]
fn sed_options_take_their_values() {
    check(
        &defaults(),
        &[
            ("sed -n --expression 1p f", Allow),
            ("sed -n --expression 'w out' f", Ask),
            ("sed -n --expression='w out' f", Ask),
            ("sed -n --line-length 5 p f", Allow),
            ("sed -n --line-length=5 p f", Allow),
            ("sed -nl 5 p f", Allow),
            ("sed -nl5 p f", Allow),
            ("sed -n -l 5 -e 'w out' f", Ask),
            ("sed -e p -- -i", Allow),
            ("sed -e p -i", Ask),
        ],
    );
    for (command, why) in [
        ("sed -i s/a/b/ f", "edits files in place (`-i`)"),
        ("sed -ni 1p f", "edits files in place (`-ni`)"),
        ("sed --in-pl 1p f", "edits files in place (`--in-pl`)"),
        ("sed -f script.sed f", "reads its script from a file (`-f`)"),
        (
            "sed -nf script.sed f",
            "reads its script from a file (`-nf`)",
        ),
        (
            "sed -x 1p f",
            "an option rein does not read as printing (`-x`)",
        ),
    ] {
        let reason = judge(command, &defaults()).reason;
        assert!(reason.contains(why), "{command}: {reason}");
    }
}

/// `date`, `sort`, `uniq` and `printf` skip exactly the values of their options: a value
/// not skipped would be read as an operand (a date to set, an output file) or an option.
/// (`tree` has no such values: only its short options can write.)
#[test]
fn date_sort_uniq_and_printf_skip_their_option_values() {
    check(
        &defaults(),
        &[
            ("date --date yesterday +%F", Allow),
            ("date --date=yesterday 0101", Ask),
            ("date --da yesterday", Allow),
            ("date --d yesterday", Ask),
            ("date --ref Cargo.toml", Allow),
            ("date --re Cargo.toml", Ask),
            ("date --rfc-3339 seconds", Allow),
            ("date -ud yesterday", Allow),
            ("date -dyesterday +%F", Allow),
            ("date -dyesterday 0101", Ask),
            ("date -Iseconds", Allow),
            ("date -- +%F", Allow),
            ("date -- 0101", Ask),
            ("date - +%F", Ask),
            // `-s` takes any date, `+1 hour` too, which is no format.
            ("date -s '+1 hour'", Ask),
            ("sort -k1 -o f", Ask),
            ("sort -k 1 -o f", Ask),
            ("sort -T /tmp -o out", Ask),
            ("sort -S 50% x", Allow),
            ("sort -t , -k 2 x", Allow),
            ("sort -- -o", Allow),
            ("sort notes.md", Allow),
            // A temporary folder named `--` is no end of the options.
            ("sort -T -- -o out x", Ask),
            ("tree foo", Allow),
            ("tree --noreport", Allow),
            ("sort -t o notes.md", Allow),
            ("uniq -cf 2 a", Allow),
            ("uniq -f2 a b", Ask),
            ("uniq -w 3 a", Allow),
            ("uniq -s 3 a b", Ask),
            ("uniq --skip-fields 2 a", Allow),
            ("uniq --skip-fields=2 a b", Ask),
            ("uniq --check-chars 3 a", Allow),
            ("uniq -- -c out", Ask),
            // `-` is standard input, so `out` is the output.
            ("uniq - out", Ask),
            ("uniq -", Allow),
            ("uniq -c -- a", Allow),
            ("printf -v x -v y '%s' z", Allow),
            ("printf -vx -- '%s' a", Allow),
            ("printf -v", Allow),
            ("printf -v x -v PATH", Ask),
            ("printf -v \"$N\" x", Ask),
            ("printf -v 9x y", Ask),
        ],
    );
}

/// A sed script is read as GNU sed's compiler reads it, and the reason says what was found:
/// what a command may not be followed by, a relative range end without its number, a
/// newline or backslash as a delimiter, the `s` flags that write or run.
#[test]
fn sed_scripts_are_read_as_gnu_sed_reads_them() {
    check(
        &defaults(),
        &[
            ("sed -n pp f", Ask),
            ("sed -n 'p;p' f", Allow),
            ("sed -n '1,+p' f", Ask),
            ("sed -n '1,+3p' f", Allow),
            ("sed -n '1,~4p' f", Allow),
            ("sed 's\na\nb\n' f", Ask),
            ("sed 's\\a\\b\\' f", Ask),
            ("sed 's|a|b|g' f", Allow),
        ],
    );
    for (command, why) in [
        ("sed -n pp f", "(`p` after the command `p`)"),
        ("sed -n '1,+p' f", "a range without its end"),
        ("sed 's\na\nb\n' f", "`s` without a delimiter"),
        (
            "sed -n '/abc p' f",
            "an address without its closing delimiter",
        ),
        ("sed 's/a/b' f", "`s` without its closing delimiter"),
        ("sed 's/a/b/w out' f", "writes a file (`s///w`)"),
        ("sed 's/a/b/e' f", "runs its result as a command (`s///e`)"),
    ] {
        let reason = judge(command, &defaults()).reason;
        assert!(reason.contains(why), "{command}: {reason}");
    }
}

/// A wrapper with nothing to run is a command of its own, judged by the rules for it.
#[test]
fn a_wrapper_with_nothing_to_run_is_judged_itself() {
    for command in [
        "nice",
        "nice -n 5",
        "nohup",
        "timeout 5",
        "stdbuf -oL",
        "watch -x",
        "watch -n 1",
        "eval",
        "eval --",
        "busybox --list",
        "busybox",
        "xargs -0",
    ] {
        let judgement = judge(command, &defaults());
        let parts: Vec<&str> = judgement.parts.iter().map(|p| p.command.as_str()).collect();
        assert_eq!(parts, [command], "{command}");
    }
}

/// Every option of every wrapper rein sees through, in each form it can be written
/// (alone, with its value attached or as the next word, long with `=` or a space): the
/// command after them is the one judged, so `rm x` behind any of them is denied.
#[test]
fn every_wrapper_option_is_skipped_with_its_value() {
    struct Wrapper {
        name: &'static str,
        flags: &'static str,
        valued: &'static str,
        long_flags: &'static [&'static str],
        long_valued: &'static [&'static str],
    }
    // What each option means is in its manual; those that change what the wrapper does
    // (`command -v`, `time -o`, `ionice -p`) have tests of their own.
    let wrappers = [
        Wrapper {
            name: "command",
            flags: "p",
            valued: "",
            long_flags: &[],
            long_valued: &[],
        },
        Wrapper {
            name: "exec",
            flags: "cl",
            valued: "a",
            long_flags: &[],
            long_valued: &[],
        },
        Wrapper {
            name: "nice",
            flags: "0123456789",
            valued: "n",
            long_flags: &[],
            long_valued: &["adjustment"],
        },
        Wrapper {
            // bash's own `time` keyword takes only `-p`; the program takes the rest.
            name: "/usr/bin/time",
            flags: "pvaq",
            valued: "f",
            long_flags: &["portability", "verbose", "append", "quiet"],
            long_valued: &["format"],
        },
        Wrapper {
            name: "timeout",
            flags: "fpv",
            valued: "ks",
            long_flags: &["foreground", "preserve-status", "verbose"],
            long_valued: &["kill-after", "signal"],
        },
        Wrapper {
            name: "stdbuf",
            flags: "",
            valued: "ioe",
            long_flags: &[],
            long_valued: &["input", "output", "error"],
        },
        Wrapper {
            name: "ionice",
            flags: "t",
            valued: "cn",
            long_flags: &["ignore"],
            long_valued: &["class", "classdata"],
        },
        Wrapper {
            name: "setsid",
            flags: "cfw",
            valued: "",
            long_flags: &["ctty", "fork", "wait"],
            long_valued: &[],
        },
        Wrapper {
            name: "xargs",
            flags: "0rtpx",
            valued: "adEILnPs",
            long_flags: &[
                "null",
                "no-run-if-empty",
                "verbose",
                "interactive",
                "exit",
                "open-tty",
                "show-limits",
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
        Wrapper {
            name: "watch",
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
        },
    ];
    let mut commands = Vec::new();
    for w in &wrappers {
        let inner = if w.name == "timeout" {
            "5 rm x"
        } else {
            "rm x"
        };
        let name = w.name;
        for c in w.flags.chars() {
            commands.push(format!("{name} -{c} {inner}"));
        }
        for c in w.valued.chars() {
            commands.push(format!("{name} -{c} 5 {inner}"));
            commands.push(format!("{name} -{c}5 {inner}"));
        }
        for long in w.long_flags {
            commands.push(format!("{name} --{long} {inner}"));
        }
        for long in w.long_valued {
            commands.push(format!("{name} --{long} 5 {inner}"));
            commands.push(format!("{name} --{long}=5 {inner}"));
        }
        commands.push(format!("{name} -- {inner}"));
    }
    let mut failures = Vec::new();
    for command in &commands {
        let judgement = judge(command, &defaults());
        if judgement.action != Deny {
            failures.push(format!(
                "{command}: {} ({})",
                judgement.action, judgement.reason
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// `[[ A -eq B ]]` evaluates both operands as arithmetic (which runs a substitution hidden
/// in a variable's value); `test` and `[` compare integers and evaluate nothing. `-v NAME`
/// evaluates NAME's subscript in all three.
#[test]
fn test_and_brackets_evaluate_arithmetic_only_where_bash_does() {
    check(
        &defaults(),
        &[
            ("[[ $x -eq 1 ]]", Ask),
            ("[[ 1 -eq $x ]]", Ask),
            ("[[ 1 -lt 2 ]]", Allow),
            ("test \"$x\" -eq 1", Allow),
            ("[ 1 -eq \"$x\" ]", Allow),
            ("test -v 'a[$(touch x)]'", Ask),
            ("[ -v 'a[$i]' ]", Ask),
            ("[[ -v 'a[$(touch x)]' ]]", Ask),
            ("test -v a", Allow),
            ("[[ -v a[1] ]]", Allow),
        ],
    );
}
