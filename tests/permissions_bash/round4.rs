//! Regressions for the fourth red-team round (issue 41), through the real checker with the
//! default rules: bash 5.3's `${ cmd; }` command substitutions, sensitive files named by
//! pattern, by variable, by folder and through `cd`, and the default allows that run the
//! project's code, which hold only inside a working sandbox.

use super::{check, defaults, Policy};
use rein::permissions::bash::judge_as;
use rein::permissions::rules::RuleAction;
use rein::permissions::shell::Dialect;
use RuleAction::{Allow, Ask, Deny};

/// Item 3: every form of `${ cmd; }` and `${| cmd; }` runs its commands, judged as those of
/// `$(...)` are; parameter expansions stay what they were.
#[test]
fn bash_5_3_brace_substitutions_are_judged_as_commands() {
    check(
        &defaults(),
        &[
            ("echo ${ rm -rf x; }", Deny),
            ("echo ${ rm -rf x;}", Deny),
            ("echo ${\trm -rf x;}", Deny),
            ("echo ${\nrm -rf x\n}", Deny),
            ("echo ${| rm -rf x; }", Deny),
            ("echo ${|rm -rf x;}", Deny),
            ("echo \"${ rm -rf x; }\"", Deny),
            ("cat <<EOF\n${ rm -rf x; }\nEOF", Deny),
            ("echo x${ rm -rf x;}y", Deny),
            ("echo ${x:-${ rm -rf x; }}", Deny),
            ("echo $(( ${ rm -rf x; } + 1 ))", Deny),
            ("echo ${ touch pwned; }", Ask),
            ("echo ${ python3 -c 'import os'; }", Ask),
            ("${ echo rm; } -rf x", Ask),
            ("echo ${ ls; }", Allow),
            ("echo \"${ git status --short; }\"", Allow),
            // Parameter expansions are what they were.
            ("echo ${HOME}", Allow),
            ("echo ${#x} ${x:-y} ${x%/} ${x//a/b}", Allow),
            // Unterminated, or closed by a `}` that is an argument: does not parse.
            ("echo ${ ls }", Ask),
            ("echo ${ ls", Ask),
        ],
    );
    // dash reads `${ ` as a parameter (a bad one): a string for `sh -c` that holds one asks.
    for command in ["echo ${ ls; }", "echo ${|ls;}"] {
        let j = judge_as(command, &defaults(), Dialect::Posix);
        assert_eq!(j.action, Ask, "{command}: {}", j.reason);
        let j = judge_as(command, &defaults(), Dialect::Zsh);
        assert_eq!(j.action, Ask, "{command}: {}", j.reason);
    }
    check(&defaults(), &[("sh -c 'echo ${ rm -rf x; }'", Deny)]);
}

/// Item 6: without a working sandbox the default allows that run the project's code (its
/// build scripts, tests, or a toolchain it names) ask, through wrappers and command strings
/// too; inside one they are allowed as before; what reads only is not touched.
#[test]
fn project_code_holds_only_inside_a_sandbox() {
    let open = Policy::unconfined();
    let confined = Policy::new();
    let runs_code = [
        "cargo test",
        "cargo test --all",
        "cargo check",
        "cargo build --release",
        "cargo clippy --all-targets -- -D warnings",
        "cargo fmt --check",
        "cargo tree",
        "cargo metadata --format-version 1",
        "cargo --version",
        "rustc -vV",
        "pytest",
        "pytest -q tests/",
        "python -m pytest -x",
        "python3 -m pytest",
        "timeout 600 cargo test",
        "ls && cargo test",
        "bash -c 'cargo test'",
        "echo $(cargo check)",
        "cd sub && cargo build",
    ];
    for command in runs_code {
        let j = open.policy.judge_bash(command);
        assert_eq!(j.action, Ask, "{command}: {}", j.reason);
        assert!(
            j.reason.contains("runs the project's code")
                && j.reason.contains("commands run without a sandbox"),
            "{command}: {}",
            j.reason
        );
        assert!(!j.grants.is_empty(), "{command}: the user may allow it");
        assert_eq!(
            confined.policy.judge_bash(command).action,
            Allow,
            "{command}"
        );
    }
    open.check(&[
        ("git status", Allow),
        ("ls -la", Allow),
        ("grep -rn fn src", Allow),
        ("python3 --version", Allow),
        ("cargo publish", Ask),
        ("rm -rf target", Deny),
        ("cargo test; rm -rf x", Deny),
    ]);
    // "Allow for this session" is the user's word: it lets the command through.
    let j = open.policy.judge_bash("cargo test");
    let grants: Vec<_> = j
        .grants
        .into_iter()
        .map(rein::permissions::Grant::Bash)
        .collect();
    rein::permissions::PermissionPolicy::grant(&open.policy, &grants);
    open.check(&[
        ("cargo test", Allow),
        ("cargo test --all", Allow),
        ("cargo build", Ask),
    ]);
}
