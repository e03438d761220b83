//! The bash permission checker through its public API, with the default rules: a table of
//! cases per rule family here, the red-team findings as regressions in `redteam`, the
//! read-only forms of everyday programs and the forms of them that still ask in
//! `read_only`, the share of everyday commands that ask in `everyday`, each option of the
//! programs rein sees through taking exactly its words in `options`, the property
//! that no composition hides a denied command in `compositions`, and the prefixes "allow
//! for this session" offers in `prefixes`.

use crate::support;

mod compositions;
mod everyday;
mod expansions;
mod options;
mod prefixes;
mod read_only;
mod redteam;
mod round4;

use rein_core::permissions::bash::{judge, Judgement};
use rein_core::permissions::policy::RulePolicy;
use rein_core::permissions::rules::{escape_glob, BashRule, BashRules, RuleAction, RuleOrigin};
use rein_core::permissions::DEFAULT_SENSITIVE_READS;

fn defaults() -> BashRules {
    BashRules::new(BashRules::defaults()).expect("the default rules compile")
}

/// The policy the agent runs with: the default rules, the default sensitive reads, and a
/// project and a home folder of its own; its bash verdicts include the sensitive-file check.
struct Policy {
    policy: RulePolicy,
    _project: tempfile::TempDir,
    _home: tempfile::TempDir,
}

impl Policy {
    fn new() -> Policy {
        Policy::confined(true)
    }

    /// The policy where commands run without a working sandbox.
    fn unconfined() -> Policy {
        Policy::confined(false)
    }

    fn confined(confined: bool) -> Policy {
        let project = tempfile::tempdir().expect("a project folder");
        let home = tempfile::tempdir().expect("a home folder");
        let sensitive: Vec<String> = DEFAULT_SENSITIVE_READS
            .iter()
            .map(|s| s.to_string())
            .collect();
        let policy = RulePolicy::new(project.path(), &[], &sensitive, Some(home.path()))
            .expect("the default policy builds")
            .with_confinement(confined);
        Policy {
            policy,
            _project: project,
            _home: home,
        }
    }

    /// The project folder.
    fn root(&self) -> &std::path::Path {
        self._project.path()
    }

    /// Write `files` (paths under the project, or under the home with `~/`).
    fn with_files(self, files: &[&str]) -> Policy {
        for file in files {
            let path = match file.strip_prefix("~/") {
                Some(rest) => self._home.path().join(rest),
                None => self._project.path().join(file),
            };
            std::fs::create_dir_all(path.parent().expect("a folder")).expect("folders");
            std::fs::write(&path, "x").expect("a file");
        }
        self
    }

    fn check(&self, cases: &[(&str, RuleAction)]) {
        let mut failures = Vec::new();
        for (command, expected) in cases {
            let judgement = self.policy.judge_bash(command);
            if judgement.action != *expected {
                failures.push(format!(
                    "{command:?}: expected {expected}, got {} ({})",
                    judgement.action, judgement.reason
                ));
            }
        }
        assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    }
}

fn check(rules: &BashRules, cases: &[(&str, RuleAction)]) {
    let mut failures = Vec::new();
    for (command, expected) in cases {
        let judgement = judge(command, rules);
        if judgement.action != *expected {
            failures.push(format!(
                "{command:?}: expected {expected}, got {} ({})",
                judgement.action, judgement.reason
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

use RuleAction::{Allow, Ask, Deny};

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
fn control_operators_split_commands_and_quotes_are_respected() {
    check(
        &defaults(),
        &[
            ("grep \"a; rm -rf /\" x", Allow),
            ("grep 'a && rm x' x", Allow),
            ("echo 'rm x' \"| rm y\"", Allow),
            ("ls; rm -rf /", Deny),
            ("ls && rm x", Deny),
            ("ls || rm x", Deny),
            ("ls | rm x", Deny),
            ("ls |& rm x", Deny),
            ("ls & rm x", Deny),
            ("ls\nrm x", Deny),
            ("ls # ; rm x", Allow),
            ("ls \\; rm x", Allow),
            ("ls && git status | wc -l", Allow),
        ],
    );
}

#[test]
fn quoting_escaping_paths_and_assignments_are_seen_through() {
    check(
        &defaults(),
        &[
            ("\\rm x", Deny),
            ("'rm' x", Deny),
            ("r\"\"m x", Deny),
            ("$'\\x72m' x", Deny),
            ("$'\\162m' x", Deny),
            ("r\\\nm x", Deny),
            ("/bin/rm x", Deny),
            ("/usr/bin/rm -rf x", Deny),
            ("./rm x", Deny),
            ("../x/rm x", Deny),
            ("FOO=1 rm x", Deny),
            ("./ls", Ask),
            ("/tmp/ls -la", Ask),
            ("/bin/ls", Allow),
            ("/usr/bin/git status", Allow),
            ("PATH=/tmp/evil:$PATH ls", Ask),
            ("LD_PRELOAD=/tmp/x.so ls", Ask),
            ("GIT_CONFIG_GLOBAL=/tmp/c git status", Ask),
            ("PATH=/tmp/evil", Ask),
            ("LANG=C ls", Allow),
            ("FOO=1 ls", Ask),
            ("FOO=1", Allow),
            ("X=$(rm x)", Deny),
        ],
    );
}

#[test]
fn wrappers_are_transparent() {
    check(
        &defaults(),
        &[
            ("timeout 5 ls", Allow),
            ("timeout -s KILL 5 rm -rf x", Deny),
            ("timeout --signal=KILL -k 1 5s rm x", Deny),
            ("timeout 5", Ask),
            ("env ls", Allow),
            ("env -i FOO=1 rm x", Deny),
            ("env -u HOME -C /tmp -- rm x", Deny),
            ("env PATH=/tmp ls", Ask),
            ("env -S 'rm -rf' x", Deny),
            ("env --split-string='ls -la'", Allow),
            ("env --frobnicate rm x", Ask),
            ("xargs rm", Deny),
            ("xargs -0 -n1 rm -f", Deny),
            ("xargs -I{} rm {}", Deny),
            ("xargs ls", Allow),
            ("xargs", Allow),
            ("xargs -I % sh -c 'echo %'", Ask),
            ("xargs -I{} sh -c 'echo {}'", Ask),
            ("xargs --replace sh -c 'echo {}'", Ask),
            ("xargs -0i sh -c 'echo {}'", Ask),
            ("xargs -I % echo %", Allow),
            ("find . -exec sh -c 'echo {}' \\;", Ask),
            ("find . -exec sh -c 'echo \"$1\"' _ {} \\;", Allow),
            ("ls | xargs xargs", Ask),
            ("xargs eval", Ask),
            ("xargs eval echo", Ask),
            ("xargs eval rm", Deny),
            ("xargs sh -c", Ask),
            ("xargs env", Ask),
            ("xargs -n 1 sh -c 'rm $0'", Deny),
            // The replace string in each of its forms, and letters of option values that
            // are not one: only a real one puts the input inside the script.
            ("xargs -iX sh -c 'echo X'", Ask),
            ("xargs -i sh -c 'echo {}'", Ask),
            ("xargs -i sh -c 'echo X'", Allow),
            ("xargs -di sh -c 'echo {}'", Allow),
            ("xargs -E xIy sh -c 'echo y'", Allow),
            ("xargs --interactive sh -c 'echo nteractive'", Allow),
            // `-` alone is not an option: it is the command.
            ("nice - ls", Ask),
            ("find . -name x -exec rm {} \\;", Deny),
            ("find . -execdir rm {} +", Deny),
            ("find . -ok rm {} ';'", Deny),
            ("find . -exec ls {} +", Allow),
            // `;` ends a command, and `+` only right after `{}`; anything else (another
            // `-exec` too) is an argument of the command before.
            ("find . -exec echo + \\; -exec rm x \\;", Deny),
            ("find . -exec echo {} + -exec rm x \\;", Deny),
            (
                "find . -exec echo {} \\; -exec echo + -exec rm x \\;",
                Allow,
            ),
            ("find . -exec echo {} {} -exec rm x \\;", Allow),
            // An -exec with no command runs nothing: find is judged itself.
            ("find . -exec \\;", Allow),
            (
                "find . -name x -exec grep -l y {} \\; -exec cat {} \\;",
                Allow,
            ),
            ("sh -c 'rm -rf x'", Deny),
            ("bash -c \"rm x\"", Deny),
            ("bash -ec 'ls; rm x'", Deny),
            ("bash -o errexit -c 'rm x'", Deny),
            ("sh -c -- 'rm x'", Deny),
            // After `--` or `-` the next word is a script file, whatever it looks like.
            ("bash -- -c 'rm x'", Ask),
            ("sh - -c 'rm x'", Ask),
            // A long option is one word; `+c` or `+` alone is no command string.
            ("bash --norc -c 'rm x'", Deny),
            ("bash --login -c ls", Allow),
            ("sh + -c 'rm x'", Ask),
            ("bash +c 'rm x'", Ask),
            ("bash -lc \"ls\"", Allow),
            ("sh -c 'ls | wc -l'", Allow),
            ("sh -c \"$CMD\"", Ask),
            ("bash script.sh", Ask),
            ("eval \"rm x\"", Deny),
            ("eval rm x", Deny),
            ("eval 'echo $(rm x)'", Deny),
            ("eval ls", Allow),
            ("eval $CMD", Ask),
            ("nice -n 5 nohup rm x", Deny),
            ("nice -10 ls", Allow),
            ("nohup ls", Allow),
            ("command rm x", Deny),
            ("command -p ls", Allow),
            ("command -v rm", Allow),
            ("exec rm x", Deny),
            ("exec -a name rm x", Deny),
            ("exec ls", Allow),
            ("time rm x", Deny),
            ("time -p ls", Allow),
            // GNU time (not the shell's keyword) writing its report to a file.
            ("/usr/bin/time -p ls", Allow),
            ("/usr/bin/time -o report ls", Ask),
            ("env time --output=report ls", Ask),
            ("ls | time rm x", Deny),
            ("builtin echo hi", Allow),
            ("builtin rm x", Deny),
            ("stdbuf -oL rm x", Deny),
            ("stdbuf -o L ls", Allow),
            ("ionice -c3 rm x", Deny),
            ("ionice -c 3 ls", Allow),
            // After -p, -P or -u the words are process, group or user ids, not a command.
            ("ionice -p ls", Ask),
            ("ionice -c3 -P ls", Ask),
            ("ionice -u ls", Ask),
            ("ionice --pid ls", Ask),
            ("ionice --pgid ls", Ask),
            ("ionice --uid ls", Ask),
            ("setsid -f rm x", Deny),
            ("setsid ls", Ask),
            ("watch rm x", Deny),
            ("watch -n 1 'rm x'", Deny),
            ("watch -n 1 'ls; rm x'", Deny),
            ("watch -x rm x", Deny),
            // -x runs its words as they are (a program named `ls; rm x`), without a shell.
            ("watch -x 'ls; rm x'", Ask),
            ("watch --exec 'ls; rm x'", Ask),
            ("watch -n 1 ls", Allow),
            ("/usr/bin/env rm x", Deny),
            ("env timeout 5 nice xargs rm", Deny),
        ],
    );
}

#[test]
fn what_xargs_appends_or_reads_is_judged_too() {
    Policy::new().check(&[
        // The appended arguments could be the flag that writes or runs.
        ("xargs find .", Ask),
        ("xargs rg x", Ask),
        ("xargs git diff", Ask),
        ("xargs sort", Ask),
        ("xargs -0 tree", Ask),
        ("find . -name '*.rs' | xargs grep -n unwrap", Allow),
        ("xargs cat", Allow),
        ("xargs -n 1 ls", Allow),
        // `-a FILE`: the file's contents become the arguments.
        ("xargs -a ~/.ssh/id_rsa echo", Ask),
        ("xargs -0a ~/.ssh/id_rsa cat", Ask),
        ("xargs --arg-file=~/.aws/credentials ls", Ask),
        ("xargs --arg-file ~/.aws/credentials ls", Ask),
        ("xargs -a files.txt cat", Allow),
        ("xargs -a files.txt rm", Deny),
    ]);
    let judgement = judge("xargs -a files.txt cat", &defaults());
    let parts: Vec<&str> = judgement.parts.iter().map(|p| p.command.as_str()).collect();
    assert_eq!(parts, ["xargs -a files.txt", "cat"]);
    // The file named in each form of the option (the reason of the xargs part), and the
    // input named where there is none.
    for (command, from) in [
        ("xargs -a list cat", "from `list`"),
        ("xargs -alist cat", "from `list`"),
        ("xargs -0a list cat", "from `list`"),
        ("xargs --arg-file=list cat", "from `list`"),
        ("xargs --arg-file list cat", "from `list`"),
        ("xargs -n 1 cat", "from its input"),
        ("xargs -da cat", "from its input"),
        ("xargs -E tail cat", "from its input"),
        ("xargs -Eab cat", "from its input"),
    ] {
        let judgement = judge(command, &defaults());
        assert!(
            judgement.parts[0].reason.ends_with(from),
            "{command}: {}",
            judgement.parts[0].reason
        );
    }
}

#[test]
fn substitutions_and_compound_commands_are_judged() {
    check(
        &defaults(),
        &[
            ("echo $(rm x)", Deny),
            ("echo `rm x`", Deny),
            ("echo \"$(rm x)\"", Deny),
            ("echo \"`rm x`\"", Deny),
            ("diff <(rm x) y", Deny),
            ("cat >(rm x)", Deny),
            ("(rm x)", Deny),
            ("{ rm x; }", Deny),
            ("if true; then rm x; fi", Deny),
            ("if rm x; then ls; fi", Deny),
            ("if false; then ls; else rm x; fi", Deny),
            ("for f in a; do rm $f; done", Deny),
            ("for f in $(rm x); do ls; done", Deny),
            ("while false; do rm x; done", Deny),
            ("until rm x; do ls; done", Deny),
            ("case a in a) rm x;; esac", Deny),
            ("case $(rm x) in a) ls;; esac", Deny),
            ("f() { rm x; }", Deny),
            ("function f { rm x; }", Deny),
            ("echo ${X:-$(rm x)}", Deny),
            ("echo $(( $(rm x) + 1 ))", Deny),
            ("[[ $(rm x) ]]", Deny),
            ("ls > $(rm x)", Deny),
            ("cat <<EOF\n$(rm x)\nEOF", Deny),
            ("cat <<EOF\n`rm x`\nEOF", Deny),
            ("cat <<'EOF'\n$(rm x)\nEOF", Allow),
            ("cat <<\"EOF\"\n$(rm x)\nEOF", Allow),
            ("cat <<EOF\n\\$(rm x)\nEOF", Allow),
            ("echo '$(rm x)'", Allow),
            ("echo \"\\$(rm x)\"", Allow),
            ("echo $(ls) `pwd` \"$(git status)\"", Allow),
            ("if [ -f x ]; then cat x; else echo none; fi", Allow),
            ("for f in *.rs; do wc -l $f; done", Allow),
            ("cd src && ls", Allow),
            ("true && false || :", Allow),
            ("[[ -n $x && -f y ]]", Allow),
            ("(( 1 + 2 ))", Allow),
        ],
    );
}

#[test]
fn redirections_that_write_files_ask() {
    check(
        &defaults(),
        &[
            ("ls > out", Ask),
            ("ls >> out", Ask),
            ("ls &> out", Ask),
            ("ls &>> out", Ask),
            ("ls >| out", Ask),
            ("ls <> out", Ask),
            ("ls 2> err", Ask),
            ("ls >& out", Ask),
            ("ls > $F", Ask),
            ("> out", Ask),
            ("{ ls; } > out", Ask),
            ("sh -c 'ls' > out", Ask),
            ("timeout 5 ls > out", Ask),
            ("echo hi > /dev/null", Allow),
            ("ls 2>/dev/null >/dev/stderr", Allow),
            ("ls 2>&1", Allow),
            ("ls >&2", Allow),
            ("ls 3>&-", Allow),
            ("grep x < in", Allow),
            ("cat < <(find . -name x)", Allow),
            ("while read -r l; do echo $l; done < <(rm x)", Deny),
            ("cat <<< 'hi'", Allow),
            ("find . -delete", Ask),
            ("find . -fprint f", Ask),
            ("find . -fprintf f %p", Ask),
            ("find . -fls f", Ask),
            ("find . $ACTION", Ask),
            ("sort -o f x", Ask),
            ("sort -ro f x", Ask),
            ("sort --output=f x", Ask),
            ("sort --compress-program=gzip x", Ask),
            ("sort -k 2 -t , x", Allow),
            ("tree -o f", Ask),
            ("uniq a b", Ask),
            ("uniq -c -f 2 a", Allow),
            ("git diff --output=x", Ask),
            ("git log --output x", Ask),
            ("git diff --ext-diff", Ask),
            ("git difftool -x 'rm -rf x'", Ask),
            ("rg --pre ./x pat", Ask),
            ("rg --pre=./x pat", Ask),
            ("rg --pre-glob '*.gz' pat", Allow),
        ],
    );
}

#[test]
fn what_cannot_be_seen_through_asks() {
    check(
        &defaults(),
        &[
            ("$CMD x", Ask),
            ("${X:-rm} x", Ask),
            ("$(echo rm) x", Ask),
            ("\"$(echo ls)\"", Ask),
            ("r* x", Ask),
            ("{rm,x}", Deny),
            ("echo 'rm x' | sh", Ask),
            ("echo 'print(1)' | python3", Ask),
            ("cat x | bash -s", Ask),
            ("cat x | python3 -", Ask),
            ("bash < script.sh", Ask),
            ("python3 <<< 'print(1)'", Ask),
            ("python3 <<EOF\nprint(1)\nEOF", Ask),
            ("echo x | { sh; }", Ask),
            ("echo 'unterminated", Ask),
            ("ls )", Ask),
            ("if true; then ls", Ask),
            ("", Ask),
            ("   ", Ask),
            ("# just a comment", Ask),
            ("ls() { :; }; ls", Ask),
            ("x='a[$(rm -rf x)]'; echo $((x))", Ask),
            ("x=$(cat f); [[ $x -eq 1 ]]", Ask),
            ("echo ${!ref}", Ask),
            ("echo ${p@P}", Ask),
            ("echo $((1 + 2))", Allow),
            ("[[ $# -eq 0 ]]", Allow),
            ("BASH_ENV=x bash -c ls", Ask),
            ("ls `", Ask),
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

fn with_grants(mut rules: BashRules, judgement: &Judgement) -> BashRules {
    for grant in &judgement.grants {
        rules
            .push(BashRule::new(grant.clone(), Allow, RuleOrigin::Session))
            .unwrap();
    }
    rules
}

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

/// An interpreter with a version in its name is still an interpreter: fed on stdin, it
/// asks for that reason; named a script, it does not get it.
#[test]
fn versioned_interpreters_fed_on_stdin_say_so() {
    let policy = Policy::new();
    let reason = |c: &str| policy.policy.judge_bash(c).reason;
    for command in [
        "echo 'print(1)' | python3",
        "echo 'print(1)' | python3.12",
        "python3.12 < script.py",
        "echo 'puts 1' | ruby-3",
        "echo x | bash -s",
    ] {
        let why = reason(command);
        assert!(
            why.contains("interpreter fed a script on stdin"),
            "{command}: {why}"
        );
    }
    for command in [
        "cat data.csv | python3 script.py",
        "echo x | python3.12 -c 'print(1)'",
    ] {
        let why = reason(command);
        assert!(
            !why.contains("interpreter fed a script"),
            "{command}: {why}"
        );
    }
}

/// A judgement parses at most 256 command strings, the command itself the first of them:
/// 255 `eval`s are judged like one, a 256th asks.
#[test]
fn the_command_string_limit_is_256() {
    let at = vec!["eval ls"; 255].join("; ");
    let judgement = judge(&at, &defaults());
    assert_eq!(judgement.action, Allow, "{}", judgement.reason);
    let over = vec!["eval ls"; 256].join("; ");
    let judgement = judge(&over, &defaults());
    assert_eq!(judgement.action, Ask);
    assert!(
        judgement.reason.contains("too many command strings"),
        "{}",
        judgement.reason
    );
}

/// At most 32 wrappers inside each other are seen through (`nice nice ... ls`), a 33rd
/// asks; and command strings inside command strings deepen the parser's nesting bound,
/// so `eval eval ... ls` cannot nest deeper than a script could.
#[test]
fn wrappers_and_command_strings_nest_only_so_deep() {
    let nested = |wrapper: &str, n: usize| format!("{}ls", wrapper.repeat(n));
    let at = judge(&nested("nice ", 32), &defaults());
    assert_eq!(at.action, Allow, "{}", at.reason);
    let over = judge(&nested("nice ", 33), &defaults());
    assert_eq!(over.action, Ask);
    assert!(over.reason.contains("too many wrapper"), "{}", over.reason);
    assert_eq!(over.parts.len(), 1);

    // Each string is one level deeper and its command one more: 31 fit in the 64 levels.
    let shallow = judge(&nested("eval ", 31), &defaults());
    assert_eq!(shallow.action, Allow, "{}", shallow.reason);
    let deep = judge(&nested("eval ", 32), &defaults());
    assert_eq!(deep.action, Ask);
    assert!(deep.reason.contains("nested too deeply"), "{}", deep.reason);

    // What `find -exec` runs and git after its global options are one wrapper deeper.
    for command in ["find . -exec ls {} +", "git -C . status"] {
        let at = format!("{}{command}", "nice ".repeat(31));
        let judgement = judge(&at, &defaults());
        assert_eq!(judgement.action, Allow, "{at}: {}", judgement.reason);
        let over = format!("nice {at}");
        let judgement = judge(&over, &defaults());
        assert!(
            judgement.reason.contains("too many wrapper"),
            "{over}: {}",
            judgement.reason
        );
    }
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
