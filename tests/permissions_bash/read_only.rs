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
