//! Words bash expands before the program sees them (issue 11, high): brace expansion and
//! pathname patterns around denied programs and dangerous flags are never allowed, while
//! the everyday forms stay allowed. The findings as regressions, then a property over
//! random compositions.

use super::support::rng::Rng;
use super::{check, defaults, judge};
use rein_core::permissions::rules::RuleAction::{self, Allow, Ask, Deny};

#[test]
fn the_reported_bypasses_are_closed() {
    check(
        &defaults(),
        &[
            (r"find . {-exec,} rm {} \;", Deny),
            ("rg {--pre=sh,} .", Ask),
            ("sort {-o,} FILE", Ask),
            ("git log -p {--ext-diff,}", Ask),
            ("pytest {-p,} plugin", Ask),
            ("find . {-delete,}", Ask),
            (r"find . -exe[c] rm {} \;", Ask),
            ("find . *", Ask),
            ("find . -delet?", Ask),
            ("{rm,echo} -rf x", Deny),
            ("time -p -- rm x", Deny),
            ("eval -- rm x", Deny),
        ],
    );
}

#[test]
fn everyday_expansions_stay_allowed() {
    check(
        &defaults(),
        &[
            ("wc -l src/{main,lib}.rs", Allow),
            ("ls *.{rs,toml}", Allow),
            ("cat src/*.rs", Allow),
            ("grep -rn foo src/{a,b}/*.rs", Allow),
            ("ls -la {src,tests}", Allow),
            ("head -n 5 file{1..3}.txt", Allow),
        ],
    );
}

/// `token` disguised the way bash would undo: braces around it, a bracket or `?` pattern in
/// it, quotes inside it, or as it is.
fn disguise(rng: &mut Rng, token: &str) -> String {
    let n = token.chars().count();
    let (head, last) = token.split_at(token.len() - token.chars().last().map_or(0, char::len_utf8));
    match rng.next() % 9 {
        0 => format!("{{{token},}}"),
        1 => format!("{{,{token}}}"),
        2 => format!("{{{token},{token}}}"),
        3 => format!("{head}[{last}]"),
        4 => format!("{head}?"),
        5 if n > 2 => format!("{}\"{}\"", &token[..1], &token[1..]),
        6 => format!("'{token}'"),
        7 => format!("{{{token},x}}"),
        _ => token.to_string(),
    }
}

/// A command built around something dangerous, and the least the verdict must be.
fn composition(rng: &mut Rng) -> (String, RuleAction) {
    let dangerous: &[(&str, &str, RuleAction)] = &[
        ("find .", "-delete", Ask),
        ("find .", "-fprint", Ask),
        ("rg x", "--pre=sh", Ask),
        ("sort", "-o", Ask),
        ("git log -p", "--ext-diff", Ask),
        ("git diff", "--output=x", Ask),
        ("pytest", "-p", Ask),
    ];
    if rng.next().is_multiple_of(3) {
        // A denied program, hidden in the program position or behind `find -exec`.
        let program = disguise(rng, "rm");
        let form = rng.pick(&[
            "{p} -rf x",
            r"find . -exec {p} {{}} \;",
            "xargs {p} -rf",
            "env {p} x",
        ]);
        return (form.replace("{p}", &program), Ask);
    }
    let (program, flag, least) = dangerous[(rng.next() % dangerous.len() as u64) as usize];
    let flag = disguise(rng, flag);
    let tail = rng.pick(&["FILE", "", "src", "*.rs"]);
    (format!("{program} {flag} {tail}"), least)
}

#[test]
fn random_compositions_are_never_allowed() {
    let rules = defaults();
    let mut rng = Rng(0x5EED);
    let mut failures = Vec::new();
    for _ in 0..3000 {
        let (command, least) = composition(&mut rng);
        let j = judge(&command, &rules);
        if j.action < least {
            failures.push(format!("{command:?}: {} ({})", j.action, j.reason));
        }
    }
    assert!(
        failures.is_empty(),
        "{} allowed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
