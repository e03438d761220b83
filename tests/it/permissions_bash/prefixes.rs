//! "Allow for this session" offers a command's prefix, as Claude Code's `git commit:*`:
//! what each command is offered, that the rule lets the same prefix through with other
//! arguments and nothing else, that what must be seen every time still asks, and that a
//! deny still wins; over a corpus, that every offer covers what asked and never names a
//! bare interpreter.

use super::everyday::{EVERYDAY, OTHER_BUILDS};
use super::{defaults, with_grants, Policy};
use rein_core::permissions::bash::judge;
use rein_core::permissions::policy::RulePolicy;
use rein_core::permissions::rules::{
    pattern_prefix, prefix_pattern, shown_pattern, BashRule, RuleAction, RuleOrigin,
};
use rein_core::permissions::{Grant, PermissionPolicy, ToolRequest, Verdict};
use RuleAction::{Allow, Ask, Deny};

/// Commands that ask, and what "allow for this session" offers for each, as the approval
/// prompt shows it.
const OFFERED: &[(&str, &[&str])] = &[
    ("git commit -m 'fix the parser'", &["git commit:*"]),
    (
        "git add -A && git commit -m wip",
        &["git add:*", "git commit:*"],
    ),
    ("git stash pop", &["git stash pop:*"]),
    ("git -C sub commit -m x", &["git commit:*"]),
    ("npm run test -- --watch=false", &["npm run test:*"]),
    ("npm install", &["npm install:*"]),
    ("cargo run --release", &["cargo run:*"]),
    ("docker compose up -d", &["docker compose up:*"]),
    ("make check", &["make check:*"]),
    ("go test ./...", &["go test:*"]),
    ("uv run pytest -q", &["uv run pytest:*"]),
    ("python3 -m pip install -e .", &["python3 -m pip:*"]),
    ("npx prettier --write src", &["npx prettier:*"]),
    // Wrappers and `sh -c` are seen through: the command they run is offered.
    ("timeout 60 npm run build", &["npm run build:*"]),
    ("bash -c 'make lint'", &["make lint:*"]),
    (
        "sh -c 'make lint && make test'",
        &["make lint:*", "make test:*"],
    ),
    // A bare interpreter, a runner of one, a program by path, no subcommand: exact only.
    ("python3 x.py", &["python3 x.py"]),
    ("python3 -c 'print(1)'", &["python3 -c print(1)"]),
    ("node scripts/gen.js", &["node scripts/gen.js"]),
    ("bash build.sh", &["bash build.sh"]),
    ("perl -pi.bak fix.pl", &["perl -pi.bak fix.pl"]),
    ("uv run python x.py", &["uv run python x.py"]),
    ("npx node x.js", &["npx node x.js"]),
    ("yarn node x.js", &["yarn node x.js"]),
    ("./run.sh test", &["./run.sh test"]),
    ("make", &["make"]),
    ("make -j4", &["make -j4"]),
    (
        "python3 x.py && git commit -m x",
        &["python3 x.py", "git commit:*"],
    ),
];

#[test]
fn the_offer_is_the_commands_prefix_or_the_exact_command() {
    let mut failures = Vec::new();
    for (command, expected) in OFFERED {
        let judgement = judge(command, &defaults());
        let shown: Vec<String> = judgement
            .grants
            .iter()
            .map(|g| shown_pattern(g).into_owned())
            .collect();
        if judgement.action != Ask || shown != *expected {
            failures.push(format!(
                "{command}: {} {shown:?}, expected {expected:?}",
                judgement.action
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// After `git commit:*` is allowed: other commits run, whatever their arguments; another
/// subcommand, a longer word, and what must be seen every time still ask; denies stay.
#[test]
fn a_prefix_lets_its_other_commands_through_and_nothing_else() {
    let first = judge("git commit -m one", &defaults());
    assert_eq!(first.grants, [prefix_pattern("git commit")]);
    let rules = with_grants(defaults(), &first);
    for (command, expected) in [
        ("git commit -m one", Allow),
        ("git commit -m 'another message'", Allow),
        ("git commit --amend --no-edit", Allow),
        ("git commit", Allow),
        ("git status && git commit -am three", Allow),
        ("timeout 10 git commit -m x", Allow),
        ("git -C sub commit -m x", Allow),
        ("git commit-tree HEAD", Ask),
        ("git checkout .", Ask),
        ("git commit -m x > log.txt", Ask),
        ("git commit -m x && python3 x.py", Ask),
        ("GIT_DIR=/x git commit -m y", Ask),
        ("git commit -m \"$(curl evil)\"", Deny),
        ("git push origin main", Deny),
        ("git commit -m x; rm -rf build", Deny),
    ] {
        let judgement = judge(command, &rules);
        assert_eq!(
            judgement.action, expected,
            "{command}: {}",
            judgement.reason
        );
    }
}

/// A deny of the user's file under the prefix wins over the session's prefix, and a
/// prefix over a denied command is no allow.
#[test]
fn a_deny_still_wins_over_a_prefix_allowed_for_the_session() {
    let mut rules = defaults();
    rules
        .push(BashRule::new(
            "git commit --no-verify*",
            Deny,
            RuleOrigin::Config("/home/u/.config/rein/config.toml".into()),
        ))
        .unwrap();
    let first = judge("git commit -m one", &rules);
    let rules = with_grants(rules, &first);
    assert_eq!(judge("git commit -m two", &rules).action, Allow);
    assert_eq!(judge("git commit --no-verify -m two", &rules).action, Deny);
    let mut rules = defaults();
    rules
        .push(BashRule::new(
            prefix_pattern("git push"),
            Allow,
            RuleOrigin::Session,
        ))
        .unwrap();
    assert_eq!(judge("git push origin main", &rules).action, Deny);
}

/// The real checker: the grant the agent gets from `check` goes back through `grant`;
/// the prefix then covers other arguments, but not a sensitive file among them.
#[test]
fn the_policy_grants_the_prefix_it_offered() {
    let p = Policy::new();
    let policy: &RulePolicy = &p.policy;
    let args = |command: &str| serde_json::json!({ "command": command });
    let check = |command: &str| {
        policy.check(&ToolRequest {
            tool: "bash",
            args: &args(command),
            root: std::path::Path::new("/"),
        })
    };
    let Verdict::Ask { grants, .. } = check("npm run test -- --ci") else {
        panic!("npm asks");
    };
    assert_eq!(grants, [Grant::Bash(prefix_pattern("npm run test"))]);
    assert_eq!(
        grants[0].describe(),
        "`npm run test` with any arguments (`npm run test:*`)"
    );
    policy.grant(&grants);
    assert_eq!(check("npm run test"), Verdict::Allow);
    assert_eq!(check("npm run test -- --watch"), Verdict::Allow);
    assert!(matches!(check("npm run deploy"), Verdict::Ask { .. }));
    let Verdict::Ask { reason, grants } = check("npm run test ~/.ssh/id_rsa") else {
        panic!("a sensitive file asks");
    };
    assert!(reason.contains("sensitive"), "{reason}");
    assert_eq!(grants, [Grant::Bash("npm run test ~/.ssh/id_rsa".into())]);
    assert!(matches!(
        check("npm run test; rm -rf /"),
        Verdict::Deny { .. }
    ));
}

/// Over the everyday corpus and compositions of its commands: every offer lets the
/// command through, is a prefix of words of a part that asked, and never a bare
/// interpreter or a program that runs others.
#[test]
fn every_offer_covers_what_asked_and_names_no_bare_interpreter() {
    let interpreters = [
        "python", "python3", "node", "bash", "sh", "zsh", "perl", "ruby", "env", "sudo", "xargs",
        "find", "awk", "deno", "bun", "php", "lua",
    ];
    let mut corpus: Vec<String> = EVERYDAY
        .iter()
        .chain(OTHER_BUILDS)
        .chain(OFFERED.iter().map(|(c, _)| c))
        .map(|c| c.to_string())
        .collect();
    let asking: Vec<String> = corpus
        .iter()
        .filter(|c| judge(c, &defaults()).action == Ask)
        .cloned()
        .collect();
    for a in &asking {
        for b in asking.iter().take(12) {
            corpus.push(format!("{a} && {b}"));
        }
    }
    let mut offers = 0;
    for command in &corpus {
        let judgement = judge(command, &defaults());
        if judgement.action != Ask || judgement.grants.is_empty() {
            continue;
        }
        let rules = with_grants(defaults(), &judgement);
        let again = judge(command, &rules);
        assert_eq!(again.action, Allow, "{command}: {}", again.reason);
        for grant in &judgement.grants {
            offers += 1;
            let Some(prefix) = pattern_prefix(grant) else {
                continue;
            };
            let asked = judgement.parts.iter().any(|p| {
                p.action == Ask
                    && (p.command == prefix || p.command.starts_with(&format!("{prefix} ")))
            });
            assert!(asked, "{command}: {prefix} covers no part that asked");
            assert!(
                !interpreters.contains(&prefix),
                "{command}: a bare interpreter `{prefix}`"
            );
        }
    }
    assert!(offers > 100, "{offers}");
}
