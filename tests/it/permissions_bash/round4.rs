//! Regressions for the fourth red-team round (issue 41), through the real checker with the
//! default rules: bash 5.3's `${ cmd; }` command substitutions, sensitive files named by
//! pattern, by variable, by folder and through `cd`, and the default allows that run the
//! project's code, which hold only inside a working sandbox.

use super::{check, defaults, Policy};
use rein_core::permissions::bash::judge_as;
use rein_core::permissions::rules::RuleAction;
use rein_core::permissions::shell::Dialect;
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
        .map(rein_core::permissions::Grant::Bash)
        .collect();
    rein_core::permissions::PermissionPolicy::grant(&open.policy, &grants);
    open.check(&[
        ("cargo test", Allow),
        ("cargo test --all", Allow),
        ("cargo build", Ask),
    ]);
}

/// A project with a `.env` and sources, a home with an SSH key and a `.netrc`.
fn with_secrets() -> Policy {
    Policy::new().with_files(&[
        ".env",
        "src/main.rs",
        "src/lib.rs",
        "docs/guide.md",
        "~/.ssh/id_rsa",
        "~/.netrc",
        "~/notes/todo.txt",
    ])
}

/// Item 4: a sensitive file named by a pattern asks, whether or not a file of that name
/// exists; a pattern matches a leading dot only where bash's would (`GLOBIGNORE` set).
#[test]
fn sensitive_files_named_by_pattern_ask() {
    let p = with_secrets();
    p.check(&[
        ("cat .env*", Ask),
        ("cat .[e]nv", Ask),
        ("cat .en?", Ask),
        ("cat ./.e*", Ask),
        ("cat .[!x]nv", Ask),
        ("cat .env.prod*", Ask),
        ("head -n 3 .e??", Ask),
        ("tail .*", Ask),
        ("wc -c */.env", Ask),
        ("grep KEY .en[a-z]", Ask),
        ("sed -n p .e*", Ask),
        ("diff .env.example .e[n]v", Ask),
        ("cat ~/.ss?/id_rsa", Ask),
        ("cat ~/.ssh/id_*", Ask),
        ("cat ~/.*/id_rsa", Ask),
        ("cat ~/.n*rc", Ask),
        ("cat ../*/.env", Ask),
        ("GLOBIGNORE=.; cat *", Ask),
        ("GLOBIGNORE=x; head -1 ?env", Ask),
        ("cat < .e*", Ask),
        // Without `GLOBIGNORE`, `*` and `?` skip a leading dot, as bash's do.
        ("cat *", Allow),
        ("cat ?env", Allow),
        ("wc -l src/*.rs", Allow),
        ("head -5 docs/*.md", Allow),
        ("cat src/m?in.rs", Allow),
        ("cat .env.example", Allow),
        ("ls -la .e* ~/.ss?", Allow),
    ]);
}

/// Item 4: sensitive files named through variables, loops, `cd`, and the forms of `HOME`.
#[test]
fn sensitive_files_named_through_values_rein_can_follow_ask() {
    let p = with_secrets();
    p.check(&[
        ("f=.env; cat \"$f\"", Ask),
        ("f=.env; cat $f", Ask),
        ("f=.env cat \"$f\"", Ask),
        ("f=.e; cat ${f}nv", Ask),
        ("d=~/.ssh; cat $d/id_rsa", Ask),
        ("d=$HOME/.ssh && k=$d/id_rsa && cat \"$k\"", Ask),
        ("f='.env x'; cat $f", Ask),
        ("a=(x .env); cat ${a[1]}", Ask),
        ("for f in .env; do cat $f; done", Ask),
        ("for f in README .env; do head -1 \"$f\"; done", Ask),
        ("for f in .e*; do cat $f; done", Ask),
        ("cd ~/.ssh && cat id_rsa", Ask),
        ("cd ~ && cat .netrc", Ask),
        ("cd && cat .netrc", Ask),
        ("cd; cat .ssh/id_rsa", Ask),
        ("cd ~/notes; cd ..; cat .netrc", Ask),
        ("pushd ~ >/dev/null; cat .netrc", Ask),
        ("(cd ~ && grep x .netrc)", Ask),
        ("cat ${HOME%/}/.netrc", Ask),
        ("cat $HOME/.netrc", Ask),
        ("cat \"${HOME}\"/.ssh/id_rsa", Ask),
        ("cat ${HOME:-/x}/.netrc", Ask),
        ("cat ${x:-~}/.netrc", Ask),
        ("cat ~+/.env", Ask),
        ("cat \"$PWD/.env\"", Ask),
        ("cat ~-/.ssh/id_rsa", Ask),
        ("f=x; cat ${f/x/.env}", Ask),
        ("f=.ENV; cat ${f,,}", Ask),
        ("f=.env; g=$f; cat $g", Ask),
        ("cat ${HOME}/.ssh/id_${x:-rsa}", Ask),
        ("cd \"$HOME\"/.ssh && cat id_rsa", Ask),
        ("cd .. && cat */.env", Ask),
        ("xargs cat <<< .env", Ask),
        ("printf '%s\\n' .e* | xargs cat", Ask),
        ("cat $(ls -a | grep env)", Ask),
        ("echo ${ cat .env; }", Ask),
        // What rein cannot read may not itself be a sensitive name, but what is added to
        // it can make one.
        ("cat \"$x/.env\"", Ask),
        ("cat $dir/.ssh/id_rsa", Ask),
        ("cat /home/$USER/.netrc", Ask),
        ("cat \"$x\"", Allow),
        ("cat $1 \"$@\"", Allow),
        ("cat \"$x.txt\"", Allow),
        ("cat $(git rev-parse --show-toplevel)/README.md", Allow),
        ("f=src/main.rs; cat $f", Allow),
        ("for f in src/*.rs; do wc -l \"$f\"; done", Allow),
        ("cd src && cat main.rs", Allow),
        ("cd ~/notes && cat todo.txt", Allow),
        ("echo $HOME", Allow),
    ]);
}

/// Item 4: a program reading a folder whole, or fed the names a listing prints, asks when a
/// sensitive file (or a sensitive pattern's folder) is there; a filter that keeps the
/// sensitive names out, or a folder without them, stays allowed.
#[test]
fn folders_read_whole_ask_where_they_hold_sensitive_files() {
    let p = with_secrets();
    p.check(&[
        ("grep -r TOKEN .", Ask),
        ("grep -rn TOKEN", Ask),
        ("grep -R TOKEN ./", Ask),
        ("grep --recursive TOKEN .", Ask),
        ("grep -d recurse TOKEN .", Ask),
        ("grep -r . ~", Ask),
        ("cd ~ && grep -r x .", Ask),
        ("rg --hidden TOKEN", Ask),
        ("rg -uu TOKEN", Ask),
        ("rg -g '.env*' TOKEN", Ask),
        ("rg -uu TOKEN ~", Ask),
        ("diff -r . /tmp", Ask),
        ("find . -print0 | xargs -0 grep ''", Ask),
        ("find . | xargs cat", Ask),
        ("find . -type f | xargs head -n 50", Ask),
        ("find . -name '.env*' -exec cat {} +", Ask),
        ("find . -type f -exec cat {} \\;", Ask),
        ("cat $(find . -name '.env*')", Ask),
        ("head $(find . -type f)", Ask),
        ("for f in $(find .); do cat $f; done", Ask),
        ("ls -a | xargs cat", Ask),
        ("find ~ -name id_rsa | xargs cat", Ask),
        ("grep -rl KEY . | xargs cat", Ask),
        ("grep -rn TOKEN src", Allow),
        ("grep -r TOKEN --include='*.rs' .", Allow),
        ("grep -r TOKEN src/*", Allow),
        ("rg TOKEN", Allow),
        ("rg -n 'fn main' src", Allow),
        ("find . -name '*.rs' | xargs wc -l", Allow),
        ("find src -type f -exec wc -l {} +", Allow),
        ("ls | xargs wc -l", Allow),
        // ripgrep skips hidden files and folders unless told otherwise.
        ("rg TOKEN ~", Allow),
        ("find . -type f | wc -l", Allow),
        ("ls -R ~", Allow),
        ("grep -c x src/main.rs", Allow),
        // Globs and pathspecs that only take files by name read no `.env`.
        ("rg -i error -g '*.toml'", Allow),
        ("rg TOKEN --glob='*.rs'", Allow),
        ("rg TOKEN -g '!*.md'", Ask),
        ("rg TOKEN --iglob '*.RS'", Ask),
        ("rg TOKEN -g 'src/**'", Ask),
        ("wc -l $(git ls-files '*.rs')", Allow),
        ("git ls-files '*.md' | xargs wc -l", Allow),
        ("git ls-files | xargs cat", Ask),
        ("git ls-files '.e*' | xargs cat", Ask),
        ("git ls-files -x '*.o' '*.rs' '.env' | xargs cat", Ask),
    ]);
    // A project without sensitive files: reading it whole is fine.
    let clean = Policy::new().with_files(&["src/main.rs", "README.md"]);
    clean.check(&[
        ("grep -rn TODO .", Allow),
        ("find . -type f | xargs cat", Allow),
        ("rg --hidden TODO", Allow),
    ]);
    // A tree whose ignore files are a pipe nobody writes or a link to /dev/zero: ripgrep's
    // rules cannot be read, so what `rg` reads cannot be told (it asks), and the checker
    // never opens them (the test finishing is the other half: it hung, or ran out of
    // memory). `grep -r` reads no ignore file and is judged as before.
    let hostile = Policy::new().with_files(&["src/main.rs", "vendor/x.rs"]);
    let made = std::process::Command::new("mkfifo")
        .arg(hostile.root().join(".ignore"))
        .status();
    assert!(made.unwrap().success());
    std::os::unix::fs::symlink("/dev/zero", hostile.root().join("vendor/.gitignore")).unwrap();
    hostile.check(&[
        ("rg TODO", Ask),
        ("rg TODO src", Ask),
        ("grep -rn TODO .", Allow),
    ]);
}

/// Item 4: the reason says what was read and why, and "allow for this session" lets the
/// command through.
#[test]
fn a_sensitive_read_says_which_file_and_can_be_allowed() {
    let p = with_secrets();
    let j = p.policy.judge_bash("grep -r TOKEN .");
    assert!(
        j.reason.contains(".env") && j.reason.contains("`**/.env`"),
        "{}",
        j.reason
    );
    let j = p.policy.judge_bash("cat .e*");
    assert!(j.reason.contains("could name"), "{}", j.reason);
    let grants: Vec<_> = j
        .grants
        .into_iter()
        .map(rein_core::permissions::Grant::Bash)
        .collect();
    assert_eq!(grants.len(), 1);
    rein_core::permissions::PermissionPolicy::grant(&p.policy, &grants);
    p.check(&[("cat .e*", Allow), ("cat .en?", Ask)]);
}
