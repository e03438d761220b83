//! Issue 22 item 8, "over-strict": everyday read-only commands are allowed, and the forms
//! of the same programs that write files or run programs still ask. Judged by the policy
//! the agent runs with, so the sensitive-file check has its say too.

use super::Policy;
use rein_core::permissions::rules::RuleAction;
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

#[test]
fn git_reads_its_history_objects_and_refs_without_asking() {
    Policy::new().check(&[
        ("git grep -n judge_bash", Allow),
        ("git grep -l RuleAction -- '*.rs'", Allow),
        ("git ls-files", Allow),
        ("git ls-files -z src | xargs -0 wc -l", Allow),
        ("git ls-tree -r HEAD --name-only", Allow),
        ("git blame -L 10,20 src/lib.rs", Allow),
        ("git tag -l", Allow),
        ("git tag --list 'v*'", Allow),
        ("git tag -n", Allow),
        ("git tag --sort=-creatordate", Allow),
        ("git tag --contains HEAD", Allow),
        ("git tag", Allow),
        ("git describe", Allow),
        ("git describe --tags --always --dirty", Allow),
        ("git stash list", Allow),
        ("git stash show -p 'stash@{0}'", Allow),
        ("git cat-file -p HEAD", Allow),
        ("git cat-file -t HEAD~3", Allow),
        ("git diff-tree --name-only -r HEAD", Allow),
        ("git diff-tree --no-commit-id --name-only -r HEAD", Allow),
        ("git diff-index --quiet HEAD", Allow),
        ("git rev-list --count HEAD", Allow),
        ("git shortlog -sn", Allow),
        ("git reflog", Allow),
        ("git reflog -10", Allow),
        ("git reflog show --oneline HEAD", Allow),
        ("git show-ref --tags", Allow),
        (
            "git for-each-ref --format='%(refname:short)' refs/heads",
            Allow,
        ),
        ("git merge-base HEAD main", Allow),
        ("git name-rev HEAD", Allow),
        ("git count-objects -vH", Allow),
        ("git check-ignore -v target", Allow),
        ("git worktree list", Allow),
        ("git branch -a", Allow),
        ("git branch --merged main", Allow),
        ("git branch --list 'feat*'", Allow),
        ("git --version", Allow),
        ("git -C sub --no-pager grep x", Allow),
    ]);
}

#[test]
fn git_forms_that_create_change_write_or_run_still_ask() {
    Policy::new().check(&[
        // Creating, deleting, verifying tags and branches; changing the stash and reflog.
        ("git tag v2", Ask),
        ("git tag --list v2 -d v1", Ask),
        ("git tag -a v2 -m release", Ask),
        ("git tag -d v1", Ask),
        ("git tag -v v1", Ask),
        ("git tag --sort=refname v2", Ask),
        ("git -C . tag v2", Ask),
        ("git branch feature", Ask),
        ("git branch -v feature", Ask),
        ("git branch -D old", Ask),
        ("git branch -m new", Ask),
        ("git branch -u origin/main", Ask),
        ("git stash", Ask),
        ("git stash push -m wip", Ask),
        ("git stash pop", Ask),
        ("git stash drop", Ask),
        ("git stash apply", Ask),
        ("git reflog expire --expire=now --all", Ask),
        ("git reflog delete 'HEAD@{1}'", Ask),
        // Options that write a file or run a program, whatever the subcommand.
        ("git grep -O foo", Ask),
        ("git grep -lOvim foo", Ask),
        ("git grep --open-files-in-pager=vim foo", Ask),
        ("git log --output=/tmp/x", Ask),
        ("git show --output x HEAD", Ask),
        ("git diff-tree --ext-diff -p HEAD", Ask),
        ("git stash show --ext-diff", Ask),
        ("git stash list --output=x", Ask),
        ("git cat-file --textconv HEAD:f", Ask),
        ("git cat-file --filters HEAD:f", Ask),
        ("git -c core.pager='sh -c x' grep -p foo", Ask),
        ("git -c diff.external=./x diff-tree -p HEAD", Ask),
        ("GIT_EXTERNAL_DIFF=./x git diff-tree -p HEAD", Ask),
        ("git grep $PATTERN", Ask),
        ("git blame $FILE", Ask),
        ("xargs git tag", Ask),
        ("xargs git grep x", Ask),
        ("git ls-files > files.txt", Ask),
        // Sensitive files named through a pathspec, a revision or --no-index.
        ("git grep --no-index KEY ~/.ssh", Ask),
        ("git cat-file -p HEAD:.env", Ask),
        ("git blame --contents ~/.aws/credentials f", Ask),
        ("git tag -l && git push --tags", Deny),
    ]);
}

#[test]
fn a_listing_subcommand_asked_about_can_be_granted_and_a_users_rule_is_obeyed() {
    use super::{defaults, with_grants};
    use rein_core::permissions::bash::judge;
    use rein_core::permissions::rules::{prefix_pattern, BashRule, RuleOrigin};
    // What is offered is the subcommand's prefix, `git tag:*`: the user approves every tag
    // for the session, and what writes a file still asks.
    let first = judge("git tag v2", &defaults());
    assert_eq!(first.action, Ask);
    assert_eq!(first.grants, [prefix_pattern("git tag")]);
    let granted = with_grants(defaults(), &first);
    assert_eq!(judge("git tag v2", &granted).action, Allow);
    assert_eq!(judge("git tag v3", &granted).action, Allow);
    assert_eq!(judge("git tag -l --output=x", &granted).action, Ask);
    assert_eq!(judge("git branch -D old", &granted).action, Ask);
    let mut rules = defaults();
    rules
        .push(BashRule::new(
            "git tag *",
            Allow,
            RuleOrigin::Config("/u/config.toml".into()),
        ))
        .expect("the rule compiles");
    assert_eq!(judge("git tag v2", &rules).action, Allow);
    // A user's rule does not lift what writes a file.
    assert_eq!(judge("git tag -l --output=x", &rules).action, Ask);
}

#[test]
fn names_and_metadata_of_sensitive_files_are_not_their_contents() {
    Policy::new().check(&[
        ("ls -la ~/.ssh", Allow),
        ("ls ~/.aws/credentials", Allow),
        ("ls -la ~/.ssh | head", Allow),
        ("ls ~/.ssh | grep -c id_", Allow),
        ("stat -c '%s %n' ~/.ssh/id_rsa", Allow),
        ("[ -d ~/.gnupg ] && ls ~/.gnupg", Allow),
        ("test -f ~/.netrc || echo none", Allow),
        ("realpath ~/.ssh/config", Allow),
        ("readlink -f ~/.docker/config.json", Allow),
        ("basename ~/.ssh/id_rsa", Allow),
        // The contents, or names handed on to something that opens them.
        ("cat ~/.ssh/id_rsa", Ask),
        ("grep x ~/.ssh/config", Ask),
        ("head -1 ~/.aws/credentials", Ask),
        ("file ~/.ssh/id_rsa", Ask),
        ("find ~/.ssh -type f", Ask),
        ("tree ~/.ssh", Ask),
        ("du -a ~/.ssh", Ask),
        ("ls -d ~/.ssh/* | xargs cat", Ask),
        ("ls -d ~/.ssh/* | xargs -n1 head", Ask),
        ("cat $(ls -d ~/.ssh/*)", Ask),
        ("f=$(realpath ~/.ssh/id_rsa); head \"$f\"", Ask),
        ("ls ~/.ssh | sort --files0-from=-", Ask),
        ("ls ~/.ssh; cat notes.txt", Ask),
        ("ls < ~/.ssh/id_rsa", Ask),
        ("xargs -a ~/.ssh/id_rsa ls", Ask),
        ("ls ~/.ssh; rm -rf x", Deny),
    ]);
}

#[test]
fn the_rust_and_python_toolchains_build_lint_and_say_their_versions() {
    Policy::new().check(&[
        ("cargo build", Allow),
        ("cargo build --release", Allow),
        ("cargo clippy --all-targets -- -D warnings", Allow),
        ("cargo fmt", Allow),
        ("cargo fmt --check", Allow),
        ("cargo tree --depth 1", Allow),
        ("cargo metadata --format-version 1 --no-deps", Allow),
        ("cargo --version", Allow),
        ("cargo version", Allow),
        ("rustc --version", Allow),
        ("rustc -vV", Allow),
        ("python3 -m pytest -q tests", Allow),
        ("python3 --version", Allow),
        ("node --version", Allow),
        // Further than the project, or running what was built.
        ("cargo build --target-dir /tmp/elsewhere", Ask),
        ("cargo clippy --config 'target.x.runner=\"sh\"'", Ask),
        ("cargo fmt --manifest-path ../other/Cargo.toml", Ask),
        ("cargo run", Ask),
        ("cargo install ripgrep", Ask),
        ("python3 -m pytest --basetemp=/home", Ask),
        ("python3 -m pytest -p evil", Ask),
        ("python3 -m pip install x", Ask),
        ("xargs cargo build", Ask),
        ("RUSTC_WRAPPER=./x cargo build", Ask),
    ]);
}
