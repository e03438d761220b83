//! Regressions for the red-team review of the bash judge: each finding's command, as the
//! report wrote it, no longer allowed (and denied where a denied program is plainly there).
//! The numbers are the report's.

use super::{check, defaults};
use rein_core::permissions::bash::{judge, judge_as};
use rein_core::permissions::rules::RuleAction;
use rein_core::permissions::shell::Dialect;
use RuleAction::{Allow, Ask, Deny};

fn reason(command: &str) -> String {
    judge(command, &defaults()).reason
}

#[test]
fn f1_to_4_rein_splits_the_text_where_bash_does() {
    check(
        &defaults(),
        &[
            // 1: a backslash in `$'...'` skips one character; `\c` does not eat the quote.
            ("echo $'\\c'; rm -rf ~/x; echo ' # '", Deny),
            ("echo $'\\c\\\\'; rm -rf ~/x; echo ' # '", Deny),
            ("echo $'\\c'; touch pwned; echo ' # '", Ask),
            ("echo $'\\c'", Allow),
            // 2: a bare `{` does not nest inside `${...}`.
            ("echo ${x:-{}; rm -rf ~/x; echo }", Deny),
            ("echo ${x#{}; rm -rf ~/x; echo }", Deny),
            ("echo \"${x:-{}\"; rm -rf ~/x; echo \"}\"", Deny),
            ("echo ${x:-${y}}", Allow),
            // 3: the delimiter is the word without its quotes, nothing expanded.
            ("cat <<\"$E\"\nx\n$E\nrm -rf ~/x", Deny),
            ("cat <<\"${E}\"\nx\n${E}\nrm -rf ~/x", Deny),
            ("cat <<\"E\"$F\nx\nE$F\nrm -rf ~/x", Deny),
            ("cat <<EO\\\nF\n$(touch pwned)\nEOF", Ask),
            ("cat <<EO\\\nF\n$(rm -rf x)\nEOF", Deny),
            ("cat <<EOF\nEO\\\nF\nrm -rf x\nEOF", Deny),
            ("cat <<'EOF'\n$(rm -rf x)\nEOF", Allow),
            // ... and a body without its delimiter line does not parse.
            ("cat <<EOF\nx", Ask),
            ("cat <<EOF", Ask),
            ("echo `cat <<EOF`\nls", Ask),
            ("echo `cat <<EOF`\nrm -rf x", Deny),
            // 4: single quotes inside `$[...]`.
            ("echo $[ '] ' ]\nrm -rf x\n# '", Deny),
            ("echo $[ '] ' ]; rm -rf x; # '", Deny),
        ],
    );
    assert!(reason("cat <<EOF\nx").contains("delimiter line `EOF`"));
}

#[test]
fn f1_ansi_c_values_rein_cannot_be_sure_of_are_not_literal() {
    check(
        &defaults(),
        &[
            ("$'\\x72m' x", Deny),
            ("$'\\x{72}m' x", Ask),
            ("$'\\u0072m' x", Deny),
            ("l$'\\u00e9' x", Ask),
            ("$'r\\0x' m", Ask),
            ("$'l\\cs' x", Ask),
        ],
    );
}

#[test]
fn f5_to_7_strings_for_sh_are_read_as_dash_reads_them() {
    check(
        &defaults(),
        &[
            // 5: `[[` is a plain word to dash: `||`, `|` and `>` inside are operators.
            ("sh -c '[[ x || rm -rf ~ ]]'", Deny),
            ("dash -c '[[ x =~ a|rm -rf y ]]'", Deny),
            ("sh -c '[[ x =~ a|touch pwned ]]'", Ask),
            ("sh -c '[[ 1 > ~/.bashrc ]]'", Ask),
            ("sh -c '[[ -f x ]] && cat x'", Ask),
            ("bash -c '[[ -f x ]] && cat x'", Allow),
            // 6: `((` is two subshells to dash.
            ("sh -c '((. ./1x))'", Ask),
            ("sh -c '((1>2))'", Ask),
            ("sh -c '((rm -rf x))'", Deny),
            // 7: `$'...'`, `$\"...\"` and here-documents.
            ("sh -c \"echo \\$'\\\\'; rm -rf x; # '\"", Deny),
            ("sh -c \"echo \\$'\\\\'; touch pwned; # '\"", Ask),
            ("sh -c 'cat <<$\"EOF\"\n$EOF\nrm -rf x\nEOF'", Deny),
            ("sh -c 'echo $(cat <<EOF)\nrm -rf x\nEOF'", Deny),
            ("sh -c 'echo $(cat <<EOF)\ntouch pwned\nEOF'", Ask),
            ("sh -c 'ls &>/dev/null rm -rf x'", Deny),
            ("ksh -c 'a=(1 2)'", Ask),
            // What both shells read alike stays allowed.
            ("sh -c 'ls | wc -l'", Allow),
            ("sh -c 'cat <<EOF\nx\nEOF\n'", Allow),
            ("watch -n 1 'ls -la'", Allow),
            // zsh's parameter flags evaluate values; fish is not parsed.
            ("zsh -c 'echo ${(e)x}'", Ask),
            ("zsh -c 'ls'", Allow),
            ("fish -c 'rm -rf x'", Ask),
        ],
    );
    assert_eq!(
        reason("sh -c '[[ -f x ]]'"),
        "`[[` is bash-only syntax that sh (dash) reads differently"
    );
}

#[test]
fn f5_to_7_a_command_line_for_sh_itself_can_be_judged_as_sh() {
    let rules = defaults();
    for (command, bash, posix) in [
        ("[[ x || rm -rf ~ ]]", Allow, Deny),
        ("((. ./1x))", Allow, Ask),
        ("echo $'\\'; rm -rf x; # '", Allow, Deny),
        ("ls -la | wc -l", Allow, Allow),
    ] {
        assert_eq!(judge(command, &rules).action, bash, "{command}");
        assert_eq!(
            judge_as(command, &rules, Dialect::Posix).action,
            posix,
            "{command}"
        );
    }
}

#[test]
fn f8_and_9_bash_tables_and_array_subscripts() {
    check(
        &defaults(),
        &[
            ("BASH_CMDS+=([ls]=/bin/rm); ls -rf ~/x", Ask),
            ("BASH_CMDS=([ls]=/bin/rm); ls -rf ~/x", Ask),
            ("BASH_CMDS[ls]=/bin/rm; ls -rf ~/x", Ask),
            ("BASH_ALIASES[ls]=rm; ls -rf ~/x", Ask),
            ("bash -c 'BASH_CMDS+=([ls]=/bin/rm); ls -rf ~/x'", Ask),
            ("x='y[$(touch pwned)]'; a=([x]=1)", Ask),
            ("a=([$i]=1)", Ask),
            ("a=(1 2 [5]=3)", Allow),
            ("a=([$(rm -rf x)]=1)", Deny),
        ],
    );
}

#[test]
fn f10_to_12_flags_that_write_or_run() {
    check(
        &defaults(),
        &[
            // 10
            ("env -S 'git diff\\_--output=x'", Ask),
            ("env -S 'ls ${HOME}'", Ask),
            ("env -S 'ls -la'", Allow),
            // 11
            ("tree -fo out", Ask),
            ("tree -ao out.txt", Ask),
            ("tree -R -L 1 -H .", Ask),
            ("tree -L 2 -a --dirsfirst", Allow),
            // 12
            ("file --comp -m x", Ask),
            ("file --co -m x", Ask),
            ("file -b x", Allow),
            ("git diff --out=x", Ask),
            ("git log --ext", Ask),
            ("sort --co=sh x", Ask),
        ],
    );
}

#[test]
fn f13_only_a_few_variables_ride_on_an_allowed_command() {
    let mut cases = vec![
        ("LANG=C ls", Allow),
        ("LC_ALL=C.UTF-8 grep -r x .", Allow),
        ("RUST_BACKTRACE=1 RUST_LOG=debug cargo test", Allow),
        ("NO_COLOR=1 TERM=dumb git log", Allow),
        ("GIT_PAGER=cat git log", Allow),
        ("PAGER= git log", Allow),
        ("PAGER=less git log", Ask),
        ("GIT_PAGER='sh -c x' git log", Ask),
        ("env GIT_TRACE=/x git status", Ask),
        ("GIT_TRACE=/x sh -c 'git status'", Ask),
        ("PYTEST_ADDOPTS='-p x' pytest", Ask),
        ("FOO=1 rm x", Deny),
    ];
    let names = [
        "GIT_TRACE",
        "GIT_INDEX_FILE",
        "GIT_COMMON_DIR",
        "GIT_WORK_TREE",
        "RUSTUP_TOOLCHAIN",
        "RUSTUP_HOME",
        "CC",
        "CXX",
        "AR",
        "CARGO_TARGET_DIR",
        "PYTHONUSERBASE",
        "PYTHONPYCACHEPREFIX",
    ];
    let commands: Vec<String> = names
        .iter()
        .map(|name| format!("{name}=/any/path git status"))
        .collect();
    for command in &commands {
        cases.push((command, Ask));
    }
    check(&defaults(), &cases);
    for (name, command) in names.iter().zip(&commands) {
        assert!(reason(command).contains(&format!("`{name}`")), "{command}");
    }
}

#[test]
fn f14_test_runner_flags_that_reach_beyond_the_project() {
    check(
        &defaults(),
        &[
            ("pytest --basetemp=/home", Ask),
            ("pytest --pastebin=all", Ask),
            ("pytest --junitxml=/etc/x.xml", Ask),
            ("pytest --junit-xml=x", Ask),
            ("pytest -p evil", Ask),
            ("pytest -c other.ini", Ask),
            ("pytest -o addopts=x", Ask),
            ("pytest --rootdir=/", Ask),
            ("pytest --confcutdir=/", Ask),
            ("pytest --log-file=/x", Ask),
            ("pytest --debug", Ask),
            ("pytest $ARGS", Ask),
            ("pytest -x -q -k 'test_p or c' tests", Allow),
            ("pytest --cov=src --cache-clear", Allow),
            (
                "cargo test --config 'target.x86_64-unknown-linux-gnu.runner=\"touch /tmp/pwned\"'",
                Ask,
            ),
            ("cargo test --target-dir=/tmp/elsewhere", Ask),
            ("cargo test -- --logfile=/tmp/x", Ask),
            ("cargo check --manifest-path=/other/Cargo.toml", Ask),
            ("cargo test -Zunstable-options", Ask),
            ("cargo check --artifact-dir /x", Ask),
            ("cargo test --lockfile-path /x", Ask),
            ("cargo test --all -- --nocapture", Allow),
            ("cargo check --all-targets", Allow),
        ],
    );
}

#[test]
fn f15_and_18_network_redirections_and_setsid() {
    check(
        &defaults(),
        &[
            ("cat </dev/tcp/example.com/80", Deny),
            ("cat < /dev/tcp/example.com/80", Deny),
            ("wc </dev/udp/8.8.8.8/53", Deny),
            ("bash -c 'cat </dev/tcp/x/80'", Deny),
            ("echo x > \"/dev/tcp/$H/80\"", Deny),
            ("exec 3<>/dev/tcp/h/80", Deny),
            ("cat < $F", Ask),
            ("cat <&\"$FD\"", Ask),
            ("cat <(ls $D)", Allow),
            ("cat < f", Allow),
            ("cat <&0", Allow),
            ("cat <&3-", Allow),
            ("cat <<EOF\n/dev/tcp/x/1\nEOF", Allow),
            ("setsid -f tail -f /dev/null", Ask),
            ("setsid -f rm x", Deny),
        ],
    );
    assert_eq!(
        reason("cat </dev/tcp/example.com/80"),
        "`< /dev/tcp/example.com/80` opens a network connection"
    );
    assert!(reason("setsid -f tail -f /dev/null").contains("leaves the process group"));
    assert!(reason("cat <&\"$FD\"").contains("could be a network connection"));
}

#[test]
fn f19_denied_programs_behind_git_options_and_busybox_are_denied() {
    check(
        &defaults(),
        &[
            ("git -C . push origin main", Deny),
            ("git --no-pager push", Deny),
            ("git -c x=y push", Deny),
            ("git -P -C a --bare push", Deny),
            ("git --git-dir=.git push", Deny),
            ("busybox rm -rf x", Deny),
            ("busybox wget http://x", Deny),
            ("busybox sh -c 'rm x'", Deny),
            ("fish -c 'rm -rf x'", Ask),
            ("git -C sub status", Allow),
            ("git --no-pager log --oneline", Allow),
            ("git -c color.ui=always diff", Allow),
            ("git -c core.pager=x diff", Ask),
            ("git -c alias.st='!rm -rf x' st", Ask),
            ("git --git-dir=/x status", Ask),
            ("git --frobnicate status", Ask),
            ("git -C . diff --output=x", Ask),
            ("busybox ls -la", Allow),
            ("busybox --list", Ask),
        ],
    );
}
