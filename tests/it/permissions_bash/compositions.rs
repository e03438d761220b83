//! The property: no composition of templates hides a denied command (and garbage never
//! panics the judge).

use super::defaults;
use rein_core::permissions::bash::judge;
use rein_core::permissions::rules::{BashRules, RuleAction};
use rein_core::permissions::shell;
use RuleAction::{Allow, Ask, Deny};

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

/// How many templates `wrap_simple` has.
const SIMPLE_KINDS: usize = 18;

/// Wrappers around a simple command.
fn wrap_simple(kind: usize, inner: &str) -> String {
    match kind % SIMPLE_KINDS {
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
        16 => format!("busybox {inner}"),
        _ => format!("ls | xargs -I@ {inner}"),
    }
}

/// How many templates `wrap_any` has.
const ANY_KINDS: usize = 27;

/// Templates around any command string. A newline ends the inner command wherever text
/// follows it, so an inner here-document's delimiter stays alone on its line.
fn wrap_any(kind: usize, inner: &str) -> String {
    match kind % ANY_KINDS {
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
        // Text the shell and a careless parser split differently.
        19 => format!("echo $'\\c'; {inner}\necho ' # '"),
        20 => format!("echo ${{x:-{{}}; {inner}\necho }}"),
        21 => format!("echo \"${{x#{{}}\"; {inner}\necho \"}}\""),
        22 => format!("echo $[ '] ' ]\n{inner}\n# '"),
        23 => format!("cat <<\"$E\"\nx\n$E\n{inner}\n"),
        24 => format!("cat <<C{n}\\\nD\n$({inner}\n)\nC{n}D\n", n = inner.len()),
        25 => format!(
            "sh -c {}",
            quote(&format!(
                "echo $(cat <<P{n})\n{inner}\nP{n}\n",
                n = inner.len()
            ))
        ),
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
        for kind in 0..SIMPLE_KINDS {
            assert_denied(&wrap_simple(kind, denied));
            count += 1;
        }
        for kind in 0..ANY_KINDS {
            assert_denied(&wrap_any(kind, denied));
            count += 1;
        }
        // A POSIX shell reads bash-only syntax around a simple command its own way.
        for posix in [
            format!("[[ x || {denied} ]]"),
            format!("[[ x =~ a|{denied} ]]"),
            format!("echo $'\\'; {denied}; # '"),
            format!("echo $\"x\"; {denied}"),
            format!("ls &>/dev/null {denied}"),
            format!("cat <<$'EOF'\n$EOF\n{denied}\nEOF\n"),
        ] {
            assert_denied(&format!("sh -c {}", quote(&posix)));
            assert_denied(&format!("dash -c {}", quote(&posix)));
            count += 2;
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
            if (kind % SIMPLE_KINDS == 13 && command.contains("{}"))
                || (kind % SIMPLE_KINDS == 17 && command.contains('@'))
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
    // A string for `sh` is read twice (as bash and as dash): nesting them is bounded.
    let mut nested = "ls".to_string();
    for _ in 0..9 {
        nested = format!("sh -c {} && sh -c {}", quote(&nested), quote(&nested));
    }
    // Bounded by the count of command strings a judgement parses (256), not timed here:
    // `cargo bench --bench policy` measures the judge's speed.
    assert_eq!(judge(&nested, &rules).action, Ask);
}
