//! Issue 22 item 8, "over-strict": everyday read-only commands are allowed, and the forms
//! of the same programs that write files or run programs still ask. Judged by the policy
//! the agent runs with, so the sensitive-file check has its say too.

use super::Policy;
use rein::permissions::rules::RuleAction;
use RuleAction::{Allow, Ask, Deny};

#[test]
fn sed_is_allowed_when_its_script_only_prints() {
    Policy::new().check(&[
        ("sed -n 1p -- f", Allow),
        ("sed -ne 1,5p f", Allow),
        ("sed -n '/a/,/b/p' f", Allow),
        ("sed -n '$p' Cargo.lock", Allow),
        ("sed -n -e 10p -e 20p f", Allow),
        ("sed 's/foo/bar/g' f", Allow),
        ("sed -E 's/([a-z]+)/<\\1>/' f", Allow),
        ("git diff | sed 's/^/> /'", Allow),
        ("sed -n '/^fn /{p;q}' src/lib.rs", Allow),
        // Writes, runs, reads a file it names, or cannot be seen.
        ("sed -i s/a/b/ f", Ask),
        ("sed -n 1p f -i", Ask),
        ("sed --in-place=.bak 1p f", Ask),
        ("sed -n 'w out' f", Ask),
        ("sed -n '1W out' f", Ask),
        ("sed -n '1e rm x' f", Ask),
        ("sed -n 's/a/b/w out' f", Ask),
        ("sed 's/a/b/e' f", Ask),
        ("sed -n -e 1p -e 'w out' f", Ask),
        ("sed -n '1r /etc/shadow' f", Ask),
        ("sed -f script.sed f", Ask),
        ("sed -n \"$S\" f", Ask),
        ("sed '1a text' f", Ask),
        ("xargs sed -n", Ask),
        ("sed -n 1p ~/.ssh/id_rsa", Ask),
        ("sed -n 1p f > out", Ask),
        ("sed -n '1e rm -rf x' f; rm -rf y", Deny),
    ]);
}

#[test]
fn printing_facts_and_text_filters_are_allowed() {
    Policy::new().check(&[
        ("printf '%s\n' a b c", Allow),
        ("printf -- '-%s\n' x", Allow),
        ("printf '%s' \"$x\"", Allow),
        ("printf -v line '%s' x", Allow),
        ("date", Allow),
        ("date -u +%Y-%m-%dT%H:%M:%SZ", Allow),
        ("date -d yesterday +%F", Allow),
        ("date -r Cargo.toml", Allow),
        ("uname -a", Allow),
        ("uname", Allow),
        ("whoami", Allow),
        ("id -un", Allow),
        ("hostname", Allow),
        ("hostname -f", Allow),
        ("nproc", Allow),
        ("type cargo", Allow),
        ("basename src/lib.rs .rs", Allow),
        ("dirname src/lib.rs", Allow),
        ("realpath src/../Cargo.toml", Allow),
        ("readlink -f target", Allow),
        ("tr -d '\\r' < notes.txt", Allow),
        ("tr a-z A-Z", Allow),
        ("nl -ba src/main.rs", Allow),
        ("git log | nl", Allow),
        ("column -t data.tsv", Allow),
        ("sha256sum Cargo.lock", Allow),
        ("jq . package.json", Allow),
        ("jq -r '.scripts.test' package.json", Allow),
        ("cat package.json | jq .name", Allow),
        ("jq --arg v \"$V\" '.a == $v' f.json", Allow),
        ("jq '.build.env' config.json", Allow),
    ]);
}

#[test]
fn the_forms_of_those_programs_that_write_or_reach_further_ask() {
    Policy::new().check(&[
        // A variable that changes what runs, or a subscript bash evaluates.
        ("printf -v PATH /tmp/evil", Ask),
        ("printf -vBASH_ENV x", Ask),
        ("printf -v a -v PATH x", Ask),
        ("printf -v 'a[$(touch x)]' 1", Ask),
        ("printf $OPT x", Ask),
        ("printf x > out", Ask),
        // The clock.
        ("date -s 2020-01-01", Ask),
        ("date --set=2020-01-01", Ask),
        ("date --s x", Ask),
        ("date -us x", Ask),
        ("date 0101120024", Ask),
        ("date $WHEN", Ask),
        ("hostname newname", Ask),
        ("hostname -F name.txt", Ask),
        // What a jq program reads beyond its files, and sensitive files it names.
        ("jq . ~/.aws/credentials", Ask),
        ("jq -n --rawfile k ~/.ssh/id_rsa '$k'", Ask),
        ("jq --slurpfile c ~/.docker/config.json -n '$c'", Ask),
        (
            "jq -n 'import \"config\" as $c {search: \"~/.docker\"}; $c'",
            Ask,
        ),
        ("jq -n env", Ask),
        ("jq -n '$ENV.GITHUB_TOKEN'", Ask),
        ("jq -f prog.jq data.json", Ask),
        ("jq . \"$F\"", Ask),
        ("xargs jq .", Ask),
        ("cat ~/.ssh/id_rsa | tr a b", Ask),
        ("nl ~/.ssh/id_rsa", Ask),
        ("printf x; rm -rf y", Deny),
    ]);
}
