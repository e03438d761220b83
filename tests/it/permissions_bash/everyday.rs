//! The everyday corpus: the share of everyday commands that ask, which issue 22 item 8
//! caps at 5 %.
//!
//! "Everyday" means what a coding agent runs, many times a session, to find its way around
//! a project and to check its work: list, read and search files; read the repository's
//! state and history; print facts about the system and the toolchain; and build, lint and
//! test a Rust or Python project (the toolchains the default rules know). The commands are
//! written as agents write them, pipes and `2>&1` included, and not chosen to pass: some of
//! them ask, and are meant to (`env` prints every token in the environment, `awk` and
//! `python3 -c` run programs, `less` and `ps` are left to the user's rules).
//!
//! Left out, and listed in [`OTHER_BUILDS`] instead: the build and test commands of other
//! ecosystems (`make`, `npm`, `go`). They run scripts of the project's own (a Makefile,
//! `package.json` scripts) or fetch packages, with flags rein does not read, so they ask by
//! design until the user allows them; counting them would measure the default rules'
//! choice of toolchains, not over-strictness.
//!
//! `cargo test --test it permissions_bash::everyday -- --nocapture` prints the figure.

use super::Policy;
use rein_core::permissions::rules::RuleAction;

pub(crate) const EVERYDAY: &[&str] = &[
    "ls",
    "ls -la",
    "ls -la src",
    "ls src/permissions/bash",
    "ls -1 tests | head -20",
    "ls -la ~/.ssh",
    "ls src/*.rs",
    "pwd",
    "tree -L 2",
    "tree -L 2 -I target",
    "cat Cargo.toml",
    "cat -n src/main.rs",
    "cat README.md | head -50",
    "head -n 40 src/lib.rs",
    "head -c 200 Cargo.lock",
    "tail -n 30 CHANGELOG.md",
    "tail -f /dev/null -n 0",
    "wc -l src/*.rs",
    "wc -l $(git ls-files '*.rs')",
    "find . -name '*.rs' -not -path './target/*'",
    "find src -type f -name '*.rs' | wc -l",
    "find . -maxdepth 2 -type d",
    "find . -name Cargo.toml -newer Cargo.lock",
    "find src -name '*.rs' -exec grep -l 'unwrap()' {} +",
    "grep -rn 'fn main' src",
    r#"grep -rn "TODO" --include='*.rs' ."#,
    "grep -rl 'RulePolicy' src tests",
    "grep -c 'unwrap' src/lib.rs",
    "grep -n 'pub fn' src/permissions/policy.rs | head",
    "grep -E 'fn (judge|check)' -r src",
    "grep -rn --exclude-dir=target 'deprecated' .",
    "rg 'fn judge' src",
    r#"rg -n 'unwrap\(\)' src --type rust"#,
    "rg -l TODO",
    "rg --files | head -50",
    "rg -C 3 'sensitive_argument' src/permissions",
    "rg -i 'error' -g '*.toml'",
    "git status",
    "git status --short",
    "git status -sb",
    "git diff",
    "git diff --stat",
    "git diff HEAD~1",
    "git diff --cached",
    "git diff main...HEAD --name-only",
    "git diff -- src/permissions",
    "git log --oneline -20",
    "git log -p -3 -- src/permissions/policy.rs",
    "git log --stat -5",
    "git log --graph --oneline --all | head -30",
    "git log --format='%h %an %s' -10",
    "git log -S 'sensitive_argument' --oneline",
    "git show HEAD",
    "git show --stat HEAD~2",
    "git show HEAD:Cargo.toml",
    "git branch",
    "git branch -a",
    "git branch -vv",
    "git branch --show-current",
    "git branch --merged main",
    "git rev-parse HEAD",
    "git rev-parse --show-toplevel",
    "git rev-parse --abbrev-ref HEAD",
    "git remote -v",
    "git blame src/permissions/policy.rs",
    "git blame -L 100,140 src/permissions/policy.rs",
    "git grep -n 'judge_bash'",
    "git grep -l 'RuleAction' -- '*.rs'",
    "git ls-files",
    "git ls-files | wc -l",
    "git ls-files src/permissions",
    "git tag -l",
    "git tag --list 'v*'",
    "git tag",
    "git describe --tags",
    "git describe --always --dirty",
    "git stash list",
    "git stash show -p stash@{0}",
    "git cat-file -p HEAD",
    "git cat-file -t HEAD~3",
    "git diff-tree --no-commit-id --name-only -r HEAD",
    "git ls-tree -r HEAD --name-only",
    "git rev-list --count HEAD",
    "git shortlog -sn",
    "git reflog -10",
    "git show-ref --tags",
    "git for-each-ref --format='%(refname:short)' refs/heads",
    "git merge-base HEAD main",
    "git log main..HEAD --oneline",
    "git worktree list",
    "git count-objects -vH",
    "git check-ignore -v target",
    "cargo check",
    "cargo check --all-targets",
    "cargo test",
    "cargo test --lib permissions",
    "cargo test --test permissions_bash -- --nocapture",
    "cargo build",
    "cargo build --release",
    "cargo clippy --all-targets -- -D warnings",
    "cargo fmt --check",
    "cargo fmt -- --check",
    "cargo --version",
    "cargo version",
    "cargo tree --depth 1",
    "cargo metadata --format-version 1 --no-deps",
    "rustc --version",
    "rustc -vV",
    "pytest",
    "pytest -x -q tests",
    "pytest tests/test_policy.py -k judge",
    "python3 --version",
    "python3 -m pytest -q",
    "node --version",
    "jq . package.json",
    "jq '.dependencies | keys' package.json",
    "jq -r '.scripts.test' package.json",
    "cat package.json | jq .name",
    r#"printf '%s\n' a b c"#,
    r#"printf 'x=%d\n' 3"#,
    r#"echo "$HOME""#,
    "echo done",
    "date",
    "date -u +%Y-%m-%dT%H:%M:%SZ",
    "uname -a",
    "uname -m",
    "whoami",
    "id -u",
    "hostname",
    "basename src/permissions/policy.rs .rs",
    "dirname src/permissions/policy.rs",
    "realpath src/../Cargo.toml",
    "readlink -f target",
    "which cargo",
    "command -v rg",
    "type cargo",
    "file target/debug/rein",
    "stat Cargo.toml",
    "stat -c '%s %n' src/*.rs",
    "du -sh target",
    "du -sh src/* | sort -h",
    "sort -u names.txt",
    "sort -n -k2 data.txt",
    "uniq -c sorted.txt",
    "cut -d: -f1 /etc/passwd",
    "cut -c1-80 src/lib.rs",
    r#"tr -d '\r' < notes.txt"#,
    "tr '[:upper:]' '[:lower:]' < a.txt",
    "nl -ba src/main.rs",
    "diff -u a.rs b.rs",
    "diff <(git show HEAD:Cargo.toml) Cargo.toml",
    "sed -n '1,40p' src/lib.rs",
    "sed -n 120,160p src/permissions/policy.rs",
    "sed -n '/fn judge_bash/,/^    }/p' src/permissions/policy.rs",
    "sed -ne 1,5p README.md",
    "sed 's/foo/bar/g' input.txt",
    "sed -n '$p' Cargo.lock",
    "grep -n judge src/permissions/policy.rs | head -5",
    "cat src/a.rs src/b.rs | wc -l",
    "ls target/debug 2>/dev/null",
    "test -f Cargo.toml && echo yes",
    "[ -d target ] || echo missing",
    r#"for f in src/*.rs; do wc -l "$f"; done"#,
    "cd src && ls",
    "cd tests && grep -l permissions *.rs",
    "env | sort",
    "timeout 60 cargo test --lib",
    "head -n 5 *.toml",
    "md5sum Cargo.lock",
    "sha256sum target/debug/rein",
    "column -t data.tsv",
    "awk '{print $1}' data.txt",
    "cat .env.example",
    "ls -la | grep rs",
    "echo $PATH",
    "which python3",
    "git log --oneline | head -5",
    "git diff --name-only HEAD~3",
    "git show --name-only HEAD",
    "git status --porcelain | wc -l",
    "grep -rn 'fn judge' . | head -20",
    "find . -name '*.py' | xargs grep -n 'import os'",
    r#"cat Cargo.toml | grep -A3 '\[dependencies\]'"#,
    "python3 -c 'import sys; print(sys.version)'",
    "ps aux | grep cargo",
    "df -h .",
    "git config user.email",
    "git log -1 --format=%cd",
    "wc -c README.md",
    "tail -n +20 src/main.rs | head -40",
    "grep -c '' src/lib.rs",
    "ls -R src | head -40",
    "cat -A Makefile | head",
    "less README.md",
    "cargo test 2>&1 | tail -20",
    "cargo build 2>&1 | grep -E '^(warning|error)'",
    "pytest -q 2>&1 | tail -5",
    "git diff --stat main",
    "git log --author=alice --since='2 weeks ago' --oneline",
    "head -n 20 src/*.rs",
    "grep -rn --include='*.rs' 'unsafe' src",
];

/// Build and test commands of other ecosystems: they ask by design (see the module).
pub(crate) const OTHER_BUILDS: &[&str] = &[
    "make",
    "make test",
    "npm test",
    "npm run build",
    "npm install",
    "go test ./...",
    "go build ./...",
    "go vet ./...",
];

#[test]
fn at_most_five_percent_of_everyday_commands_ask() {
    // In a bare project, and in one with a `.env` (issue 41: a recursive read of a folder
    // holding one asks, so the share must hold where most web projects are).
    for (what, policy) in [
        ("a bare project", Policy::new()),
        (
            "a project with a .env",
            Policy::new().with_files(&[".env", "src/main.rs", "README.md"]),
        ),
    ] {
        let asking: Vec<String> = EVERYDAY
            .iter()
            .filter_map(|command| {
                let judgement = policy.policy.judge_bash(command);
                (judgement.action != RuleAction::Allow).then(|| {
                    format!(
                        "  {command}  -> {} ({})",
                        judgement.action, judgement.reason
                    )
                })
            })
            .collect();
        let (n, k) = (EVERYDAY.len(), asking.len());
        let share = 100.0 * k as f64 / n as f64;
        eprintln!(
            "everyday corpus in {what}: {n} commands, {k} ask = {share:.1} %\n{}",
            asking.join("\n")
        );
        assert!(n >= 150, "the corpus has {n} commands");
        assert!(
            k * 100 <= n * 5,
            "{k} of {n} everyday commands ask in {what} ({share:.1} %, more than 5 %):\n{}",
            asking.join("\n")
        );
    }
}

#[test]
fn other_ecosystems_builds_ask_and_are_not_denied() {
    let policy = Policy::new();
    for command in OTHER_BUILDS {
        let judgement = policy.policy.judge_bash(command);
        assert_eq!(
            judgement.action,
            RuleAction::Ask,
            "{command}: {}",
            judgement.reason
        );
        assert!(
            !judgement.grants.is_empty(),
            "{command} can be allowed for the session"
        );
    }
}
