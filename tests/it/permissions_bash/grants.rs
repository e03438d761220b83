//! Grants: exactly the asked command let through, asks no rule can lift, a compound command.

use rein_core::permissions::bash::judge;
use rein_core::permissions::rules::{escape_glob, RuleAction};

use RuleAction::{Allow, Ask, Deny};

use super::{defaults, with_grants, Policy};

/// Commands without a prefix to offer (an interpreter, a program by path, no subcommand):
/// the grant is exactly the command.
#[test]
fn grants_let_exactly_the_asked_command_through() {
    for command in [
        "python3 x.py",
        "make -j4 && ./target/debug/app --flag '*'",
        "./ls",
        "timeout 5 python3 x.py [x]",
        "./x {a,b} | ./y",
        "xargs python3 x.py",
    ] {
        let first = judge(command, &defaults());
        assert_eq!(first.action, Ask, "{command}");
        assert!(!first.grants.is_empty(), "{command}");
        let rules = with_grants(defaults(), &first);
        let again = judge(command, &rules);
        assert_eq!(again.action, Allow, "{command}: {}", again.reason);
        let other = judge(&format!("{command} --other"), &rules);
        assert_eq!(other.action, Ask, "{command} --other");
    }
    assert_eq!(escape_glob("a*b?[c]{d}\\"), "a\\*b\\?\\[c\\]\\{d\\}\\\\");
}

#[test]
fn asks_no_rule_can_lift_offer_no_grants() {
    for command in [
        "ls > out",
        "$CMD",
        "echo 'oops",
        "PATH=/x ls",
        "echo x | sh",
        "python3 x.py > out",
        "find . -delete",
        "echo $((x))",
        "",
    ] {
        let judgement = judge(command, &defaults());
        assert_eq!(judgement.action, Ask, "{command}");
        assert!(
            judgement.grants.is_empty(),
            "{command}: {:?}",
            judgement.grants
        );
    }
}

/// A compound command whose asking parts can be granted only in part offers no grant: a
/// session rule for the grantable part would still leave the command asking, so "allow
/// for this session" would allow nothing it promised. Whatever part the ask comes from,
/// by the rules or by a sensitive file named in an allowed command's arguments.
#[test]
fn a_compound_command_offers_grants_only_when_every_asking_part_can_be_granted() {
    for command in [
        "python3 x.py && ls > out",
        "ls > out; python3 x.py",
        "python3 x.py | sh",
        "make -j4 && find . -delete",
    ] {
        let judgement = judge(command, &defaults());
        assert_eq!(judgement.action, Ask, "{command}");
        let asking = judgement.parts.iter().filter(|p| p.action == Ask).count();
        assert!(asking >= 2, "{command}: {:?}", judgement.parts);
        assert!(
            judgement.grants.is_empty(),
            "{command}: {:?}",
            judgement.grants
        );
    }
    // Every asking part grantable: one grant each, once each.
    let both = judge("python3 x.py && make -j4 && python3 x.py", &defaults());
    assert_eq!(both.grants, ["python3 x.py", "make -j4"]);
    let rules = with_grants(defaults(), &both);
    assert_eq!(
        judge("python3 x.py && make -j4 && python3 x.py", &rules).action,
        Allow
    );

    // The policy's sensitive-file check makes an allowed part ask; the grants it offers
    // follow the same rule.
    let p = Policy::new();
    let mixed = p.policy.judge_bash("cat ~/.ssh/config && ls > out");
    assert_eq!(mixed.action, Ask);
    assert!(mixed.grants.is_empty(), "{:?}", mixed.grants);
    let grantable = p.policy.judge_bash("cat ~/.ssh/config && python3 x.py");
    assert_eq!(grantable.action, Ask);
    assert_eq!(grantable.grants, ["cat ~/.ssh/config", "python3 x.py"]);
    let twice = p
        .policy
        .judge_bash("cat ~/.ssh/config; python3 x.py; cat ~/.ssh/config");
    assert_eq!(twice.grants, ["cat ~/.ssh/config", "python3 x.py"]);
    // A deny stays a deny, with nothing to grant.
    let denied = p.policy.judge_bash("cat ~/.ssh/config && rm -rf /");
    assert_eq!(denied.action, Deny);
    assert!(denied.grants.is_empty(), "{:?}", denied.grants);
}
