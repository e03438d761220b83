//! The bash permission checker through its public API, with the default rules: a table of
//! cases per rule family, then the property that no composition hides a denied command.

use rein::permissions::bash::{judge, Judgement};
use rein::permissions::rules::{escape_glob, Action, BashRule, BashRules, RuleOrigin};
use rein::permissions::shell;

fn defaults() -> BashRules {
    BashRules::new(BashRules::defaults()).expect("the default rules compile")
}

fn check(rules: &BashRules, cases: &[(&str, Action)]) {
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

use Action::{Allow, Ask, Deny};

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
            ("FOO=1 ls", Allow),
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
            ("find . -name x -exec rm {} \\;", Deny),
            ("find . -execdir rm {} +", Deny),
            ("find . -ok rm {} ';'", Deny),
            ("find . -exec ls {} +", Allow),
            (
                "find . -name x -exec grep -l y {} \\; -exec cat {} \\;",
                Allow,
            ),
            ("sh -c 'rm -rf x'", Deny),
            ("bash -c \"rm x\"", Deny),
            ("bash -ec 'ls; rm x'", Deny),
            ("bash -o errexit -c 'rm x'", Deny),
            ("sh -c -- 'rm x'", Deny),
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
            ("ls | time rm x", Deny),
            ("builtin echo hi", Allow),
            ("builtin rm x", Deny),
            ("stdbuf -oL rm x", Deny),
            ("stdbuf -o L ls", Allow),
            ("ionice -c3 rm x", Deny),
            ("ionice -c 3 ls", Allow),
            ("setsid -f rm x", Deny),
            ("setsid ls", Allow),
            ("watch rm x", Deny),
            ("watch -n 1 'rm x'", Deny),
            ("watch -x rm x", Deny),
            ("watch -n 1 ls", Allow),
            ("/usr/bin/env rm x", Deny),
            ("env timeout 5 nice xargs rm", Deny),
        ],
    );
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
            ("{rm,x}", Ask),
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
}

#[test]
fn parts_list_every_command_judged() {
    let judgement = judge("ls -la | grep x && timeout 5 rm -rf $(pwd)", &defaults());
    let parts: Vec<(&str, Action)> = judgement
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

#[test]
fn grants_let_exactly_the_asked_command_through() {
    for command in [
        "python3 x.py",
        "make -j4 && ./target/debug/app --flag '*'",
        "./ls",
        "timeout 5 python3 -m pytest [x]",
        "npm run build | tee-less {a,b}",
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

// ---- the property: no composition hides a denied command ----

const ALLOWED: [&str; 12] = [
    "ls",
    "pwd",
    "cat f",
    "grep -r x .",
    "git status",
    "cargo test",
    "echo hi",
    "find . -name x",
    "ls -la src",
    "head -n 5 f",
    "wc -l f",
    "git log --oneline",
];

const DENIED: [&str; 12] = [
    "rm -rf x",
    "sudo ls",
    "curl http://x",
    "git push origin main",
    "dd if=/dev/zero of=x",
    "ssh host",
    "wget http://x/y",
    "scp a host:b",
    "nc -l 1234",
    "shutdown now",
    "reboot",
    "su root",
];

const OPERATORS: [&str; 7] = [";", "&&", "||", "|", "|&", "&", "\n"];

/// Single-quote `text` for the shell.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Escape `text` for use inside backquotes.
fn backquoted(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('`', "\\`")
        .replace('$', "\\$")
}

/// Wrappers around a simple command.
fn wrap_simple(kind: usize, inner: &str) -> String {
    match kind % 17 {
        0 => format!("timeout 5 {inner}"),
        1 => format!("timeout -s KILL -k 2 10s {inner}"),
        2 => format!("env FOO=1 {inner}"),
        3 => format!("env -i -u X {inner}"),
        4 => format!("nice -n 5 {inner}"),
        5 => format!("nohup {inner}"),
        6 => format!("command {inner}"),
        7 => format!("exec {inner}"),
        8 => format!("time -p {inner}"),
        9 => format!("stdbuf -oL {inner}"),
        10 => format!("ionice -c3 {inner}"),
        11 => format!("setsid {inner}"),
        12 => format!("xargs -0 {inner}"),
        13 => format!("find . -exec {inner} \\;"),
        14 => format!("FOO=1 {inner}"),
        15 => format!("builtin {inner}"),
        _ => format!("ls | xargs -I@ {inner}"),
    }
}

/// Templates around any command string. A newline ends the inner command wherever text
/// follows it, so an inner here-document's delimiter stays alone on its line.
fn wrap_any(kind: usize, inner: &str) -> String {
    match kind % 20 {
        0 => format!("echo $({inner}\n)"),
        1 => format!("echo `{}\n`", backquoted(inner)),
        2 => format!("echo \"$({inner}\n)\""),
        3 => format!("diff <({inner}\n) y"),
        4 => format!("({inner}\n)"),
        5 => format!("{{ {inner}\n}}"),
        6 => format!("if true; then {inner}\nfi"),
        7 => format!("if {inner}\nthen ls; fi"),
        8 => format!("while false; do {inner}\ndone"),
        9 => format!("for f in a b; do {inner}\ndone"),
        10 => format!("case a in a) {inner}\n;; esac"),
        11 => format!("f() {{ {inner}\n}}"),
        12 => format!("sh -c {}", quote(inner)),
        13 => format!("bash -c {}", quote(inner)),
        14 => format!("eval {}", quote(inner)),
        15 => format!("echo ${{X:-$({inner}\n)}}"),
        16 => format!("cat <<E{n}\n$({inner}\n)\nE{n}\n", n = inner.len()),
        17 => format!("ls && {inner}"),
        18 => format!("{{ {inner}\n}} | wc -l"),
        _ => format!("ls >(cat) <({inner}\n)"),
    }
}

fn assert_denied(command: &str) {
    let judgement = DEFAULTS.with(|rules| judge(command, rules));
    assert_eq!(
        judgement.action, Deny,
        "{command:?} -> {} ({})",
        judgement.action, judgement.reason
    );
}

thread_local! {
    static DEFAULTS: BashRules = defaults();
}

#[test]
fn no_composition_hides_a_denied_command() {
    let mut count = 0;
    for denied in DENIED {
        for allowed in ALLOWED {
            let action = DEFAULTS.with(|rules| judge(allowed, rules).action);
            assert_eq!(action, Allow, "{allowed}");
            for op in OPERATORS {
                assert_denied(&format!("{allowed} {op} {denied}"));
                assert_denied(&format!("{denied} {op} {allowed}"));
                count += 2;
            }
            assert_denied(&format!("{allowed} $({denied})"));
            assert_denied(&format!("{allowed} \"`{}`\"", backquoted(denied)));
            count += 2;
        }
        for kind in 0..17 {
            assert_denied(&wrap_simple(kind, denied));
            count += 1;
        }
        for kind in 0..20 {
            assert_denied(&wrap_any(kind, denied));
            count += 1;
        }
        assert_denied(&format!("watch {denied}"));
        assert_denied(&format!("ls $(echo $({denied}))"));
        assert_denied(&format!("ls \"$(echo \"$({denied})\")\""));
        assert_denied(&format!(
            "sh -c {}",
            quote(&format!("bash -c {}", quote(denied)))
        ));
        assert_denied(&format!("xargs sh -c {}", quote(denied)));
        assert_denied(&format!("bash -c \"{denied}\""));
        count += 5;
    }
    assert!(count > 2000, "{count}");
}

#[test]
fn randomly_nested_templates_never_hide_a_denied_command() {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as usize
    };
    for _ in 0..3000 {
        let mut command = DENIED[next() % DENIED.len()].to_string();
        let mut simple = true;
        for _ in 0..=(next() % 3) {
            let allowed = ALLOWED[next() % ALLOWED.len()];
            // `find -exec` and `xargs -I@` put their input wherever `{}` and `@` appear: not
            // around a command holding those.
            let mut kind = next();
            if (kind % 17 == 13 && command.contains("{}"))
                || (kind % 17 == 16 && command.contains('@'))
            {
                kind = 0;
            }
            command = match next() % 4 {
                0 if simple => wrap_simple(kind, &command),
                0 => wrap_simple(kind, &format!("bash -c {}", quote(&command))),
                1 => {
                    let op = OPERATORS[next() % OPERATORS.len()];
                    if next() % 2 == 0 {
                        format!("{allowed} {op} {command}")
                    } else {
                        format!("{{ {command}\n}} {op} {allowed}")
                    }
                }
                _ => wrap_any(next(), &command),
            };
            simple = !command.contains(['\n', ';', '|', '&', '(', '{', '`', '$', '<', '>'])
                && !command.starts_with("FOO=");
        }
        assert_denied(&command);
    }
}

#[test]
fn garbage_never_panics_the_judge() {
    let rules = defaults();
    let alphabet: Vec<char> = "rm ls $'\"`\\(){}[]<>|&;#=*?!~-\nx/\u{0}é😀"
        .chars()
        .collect();
    let mut state: u64 = 0xdead_beef_cafe_f00d;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as usize
    };
    for _ in 0..3000 {
        let len = next() % 48;
        let input: String = (0..len)
            .map(|_| alphabet[next() % alphabet.len()])
            .collect();
        let judgement = judge(&input, &rules);
        if shell::parse(&input).is_err() {
            assert_ne!(judgement.action, Allow, "{input:?}");
        }
    }
    let deep = format!("sh -c {}", "'sh -c \"eval ".repeat(40));
    assert_eq!(judge(&deep, &rules).action, Ask);
    let wrappers = format!("{}rm x", "nice ".repeat(100));
    assert_ne!(judge(&wrappers, &rules).action, Allow);
}
