//! The rules themselves: the defaults parse, allow, ask and deny, a deny over a parse failure,
//! reasons and parts, later rules over earlier ones, a program by path, a git subcommand
//! that writes.

use rein_core::permissions::bash::judge;
use rein_core::permissions::rules::{BashRule, BashRules, RuleAction, RuleOrigin};

use RuleAction::{Allow, Ask, Deny};

use super::{check, defaults};

#[test]
fn the_default_rules_parse_and_compile() {
    let rules = BashRules::defaults();
    assert!(rules.len() > 40);
    assert_eq!(rules[0].pattern, "*");
    assert!(rules.iter().all(|r| r.origin == RuleOrigin::Default));
    defaults();
}

#[test]
fn rules_allow_ask_and_deny_plain_commands() {
    check(
        &defaults(),
        &[
            ("ls", Allow),
            ("ls -la src", Allow),
            ("pwd", Allow),
            ("cat README.md", Allow),
            ("grep -rn 'fn main' src", Allow),
            ("git status", Allow),
            ("git log --oneline -5", Allow),
            ("cargo test --all", Allow),
            ("echo", Allow),
            ("echo hi", Allow),
            ("tree", Allow),
            ("python3 x.py", Ask),
            ("make", Ask),
            ("rm -rf build", Deny),
            ("sudo ls", Deny),
            ("curl http://x", Deny),
            ("git push origin main", Deny),
            ("mkfs.ext4 /dev/sda", Deny),
        ],
    );
}

#[test]
fn a_deny_on_a_line_that_parses_wins_over_a_parse_failure() {
    check(
        &defaults(),
        &[
            ("rm -rf x\necho 'unterminated", Deny),
            ("ls\necho 'unterminated", Ask),
        ],
    );
}

#[test]
fn reasons_name_the_part_and_the_rule() {
    let rules = defaults();
    let reason = |command: &str| judge(command, &rules).reason;
    assert_eq!(
        reason("ls; rm -rf build"),
        "`rm -rf build` matches deny rule `rm *`"
    );
    assert_eq!(
        reason("python3 x.py"),
        "`python3 x.py` matches the default rule `*` (ask)"
    );
    assert_eq!(
        reason("ls > out.txt"),
        "`ls > out.txt` writes to a file (`out.txt`)"
    );
    assert_eq!(
        reason("$CMD x"),
        "the program name `$CMD` is not a literal word"
    );
    assert_eq!(
        reason("echo 'oops"),
        "the command does not parse (unterminated single quote)"
    );
    assert_eq!(reason(" # nothing"), "empty command");
    assert_eq!(
        reason("./ls"),
        "`./ls` runs a program by path, outside the system directories"
    );
    assert!(reason("PATH=/x ls").contains("`PATH`"));
    assert!(reason("echo x | sh").contains("interpreter fed a script on stdin"));
    assert_eq!(reason("ls -la"), "`ls -la` matches allow rule `ls *`");
    for startup in ["bash --rcfile x -c ls", "bash --init-file x -c ls"] {
        assert!(
            reason(startup).contains("reads its startup commands from a file"),
            "{startup}"
        );
    }
    // xargs with no command runs `echo`, which is all it does.
    assert_eq!(reason("xargs -0"), "`xargs -0` runs `echo` on its input");
}

#[test]
fn parts_list_every_command_judged() {
    let judgement = judge("ls -la | grep x && timeout 5 rm -rf $(pwd)", &defaults());
    let parts: Vec<(&str, RuleAction)> = judgement
        .parts
        .iter()
        .map(|p| (p.command.as_str(), p.action))
        .collect();
    assert_eq!(
        parts,
        [
            ("ls -la", Allow),
            ("grep x", Allow),
            ("pwd", Allow),
            ("rm -rf $(pwd)", Deny)
        ]
    );
    assert_eq!(judgement.action, Deny);
    assert!(judgement.grants.is_empty());
    let json = serde_json::to_value(&judgement).unwrap();
    assert_eq!(json["action"], "deny");
    assert_eq!(json["parts"][3]["action"], "deny");
}

#[test]
fn later_rules_override_earlier_ones() {
    let mut rules = defaults();
    rules
        .push(BashRule::new("python3 *", Allow, RuleOrigin::Session))
        .unwrap();
    rules
        .push(BashRule::new(
            "ls /etc*",
            Deny,
            RuleOrigin::Config("/c.toml".into()),
        ))
        .unwrap();
    check(
        &rules,
        &[
            ("python3 x.py", Allow),
            ("echo 'x' | python3", Ask),
            ("python3 x.py > out", Ask),
            ("ls /etc/passwd", Deny),
            ("ls /tmp", Allow),
        ],
    );
    assert!(judge("ls /etc", &rules).reason.contains("/c.toml"));
}

/// A deny rule for a program with arguments (`rm *`) does not reach the bare program, and
/// a program run by path that no rule allows asks for the rule's reason; only git's
/// listing subcommands are read for a form that writes (`echo tag v1` makes no tag).
#[test]
fn a_bare_program_and_a_program_by_path_keep_their_own_verdicts() {
    check(&defaults(), &[("rm", Ask), ("rm x", Deny), ("./frob", Ask)]);
    assert!(judge("./frob", &defaults())
        .reason
        .contains("the default rule `*`"));
    assert!(judge("./ls -la", &defaults())
        .reason
        .contains("runs a program by path"));
    assert!(judge("echo tag v1", &defaults()).action == Allow);
}

/// A subcommand of git that is not one of the read-only ones the default rules allow
/// whole is judged by the user's rule for it, whatever its arguments: a message in a
/// variable is no option that writes.
#[test]
fn a_rule_for_a_git_subcommand_that_writes_is_obeyed_with_any_argument() {
    let mut rules = defaults();
    rules
        .push(BashRule::new(
            "git commit *",
            Allow,
            RuleOrigin::Config("/c.toml".into()),
        ))
        .expect("the rule compiles");
    check(
        &rules,
        &[
            ("git commit -m \"$MSG\"", Allow),
            ("git log \"$RANGE\"", Ask),
        ],
    );
}
