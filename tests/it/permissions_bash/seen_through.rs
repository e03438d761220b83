//! What the checker sees through: control operators and quotes, escapes, paths and
//! assignments, wrappers, xargs, substitutions and compound commands, redirections, what
//! cannot be seen through, interpreters on stdin, the length and depth limits.

use rein_core::permissions::bash::judge;
use rein_core::permissions::rules::RuleAction;

use RuleAction::{Allow, Ask, Deny};

use super::{check, defaults, Policy};

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
