//! What rein knows of git: its global options, the options of its subcommands that write
//! or run, and which forms of its listing subcommands only read.
//!
//! Global options are set aside before the rules see the command: `git -C dir push` and
//! `git --no-pager push` are `git push` to the rules (so a deny rule `git push*` holds).
//! Options that only change where or how git works (`-C`, `--no-pager`, `--bare`, the
//! pathspec switches) are dropped. Options that can make git run programs or use another
//! repository's configuration ask as well: `-c` with a key outside a few harmless ones
//! (`core.pager`, `alias.*`, `diff.external` run programs), `--config-env`, `--git-dir`,
//! `--work-tree`, `--exec-path=DIR`, `--namespace`. An option rein does not know asks,
//! since it might take a value.
//!
//! Whatever the subcommand, `--output=FILE` writes a file, `--ext-diff` and `difftool`/
//! `mergetool` run other programs, `--textconv`/`--filters` run the conversion programs
//! the configuration names, and `git grep -O`/`--open-files-in-pager` runs a pager: these
//! ask ([`git_hazard`]). The subcommands the default rules allow whole ([`reads_only`]) ask
//! for an argument rein cannot read, which could be such an option.
//!
//! `git tag`, `git branch` and `git reflog` list, but also create, delete or expire. The
//! default rules allow them whole and [`git_write_form`] picks out what is not a listing:
//! `git tag NAME`, `git branch -d x`, `git reflog expire`. Such a command asks as any
//! command no rule allows would, and a rule of the user's own for it is obeyed.

use super::flags::{abbreviates, long_name};
use crate::permissions::shell::Word;

/// Where git's subcommand starts (1 without global options), and why its global options ask.
pub(super) struct GitGlobals {
    pub(super) at: usize,
    pub(super) concern: Option<String>,
}

/// Read git's global options from `words[1]`; `Err` says why rein cannot.
pub(super) fn git_globals(words: &[Word]) -> Result<GitGlobals, String> {
    let mut concern = None;
    let mut note = |why: String| {
        if concern.is_none() {
            concern = Some(why);
        }
    };
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let Some(arg) = word.literal_program() else {
            return Err(format!(
                "the argument `{}` of `git` is not a literal word",
                word.raw
            ));
        };
        if !arg.starts_with('-') {
            break;
        }
        let (name, attached) = match arg.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (arg, None),
        };
        let value = attached.or_else(|| words.get(i + 1).map(Word::text));
        let takes_next = attached.is_none();
        match name {
            "--no-pager"
            | "-P"
            | "-p"
            | "--paginate"
            | "--bare"
            | "--no-replace-objects"
            | "--literal-pathspecs"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs"
            | "--no-optional-locks"
            | "--no-advice"
            | "--no-lazy-fetch" => {}
            "-C" => {
                if takes_next {
                    i += 1;
                }
            }
            "-c" => {
                let setting = value.unwrap_or_default();
                let key = setting.split('=').next().unwrap_or_default();
                if !harmless_setting(key) {
                    note(format!(
                        "sets git configuration (`{setting}`), which can make git run programs"
                    ));
                }
                if takes_next {
                    i += 1;
                }
            }
            "--config-env" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix" => {
                note(format!(
                    "makes git use other configuration or another repository (`{name}`)"
                ));
                if takes_next {
                    i += 1;
                }
            }
            "--exec-path" if attached.is_some() => {
                note("runs git's commands from another directory (`--exec-path`)".to_string());
            }
            "--exec-path" | "--version" | "--help" | "-h" | "-v" | "--html-path" | "--man-path"
            | "--info-path" => {
                return Ok(GitGlobals { at: 1, concern });
            }
            _ => return Err(format!("rein does not know the option `{arg}` of `git`")),
        }
        i += 1;
    }
    Ok(GitGlobals { at: i, concern })
}

/// Configuration keys that cannot make git run anything or write elsewhere.
fn harmless_setting(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    ["color.", "advice."].iter().any(|p| key.starts_with(p))
        || matches!(
            key.as_str(),
            "core.quotepath"
                | "core.abbrev"
                | "log.date"
                | "log.decorate"
                | "log.abbrevcommit"
                | "user.name"
                | "user.email"
                | "column.ui"
                | "init.defaultbranch"
        )
}

/// The subcommands the default rules allow, in all or some of their forms.
pub(super) fn reads_only(subcommand: &str) -> bool {
    matches!(
        subcommand,
        "diff"
            | "log"
            | "show"
            | "status"
            | "grep"
            | "ls-files"
            | "ls-tree"
            | "blame"
            | "tag"
            | "branch"
            | "describe"
            | "stash"
            | "cat-file"
            | "diff-tree"
            | "diff-files"
            | "diff-index"
            | "rev-list"
            | "shortlog"
            | "reflog"
            | "show-ref"
            | "for-each-ref"
            | "merge-base"
            | "name-rev"
            | "count-objects"
            | "check-ignore"
            | "whatchanged"
            | "worktree"
    )
}

/// Options of git's subcommands (`args[0]` is the subcommand) that write files or run
/// programs.
pub(super) fn git_hazard(args: &[&str]) -> Option<String> {
    let subcommand = args.first().copied().unwrap_or_default();
    if matches!(subcommand, "difftool" | "mergetool") {
        return Some(format!("runs an external tool (`{subcommand}`)"));
    }
    // cat-file has few long options: `--t` is already `--textconv`.
    let least = if subcommand == "cat-file" { 1 } else { 3 };
    for arg in args.iter().skip(1) {
        if let Some(name) = long_name(arg) {
            if abbreviates(name, "output", 3) {
                return Some(format!("writes its output to a file (`{arg}`)"));
            }
            if abbreviates(name, "ext-diff", 3) {
                return Some(format!("runs an external diff program (`{arg}`)"));
            }
            if abbreviates(name, "textconv", least) || abbreviates(name, "filters", least) {
                return Some(format!(
                    "runs the conversion programs the configuration names (`{arg}`)"
                ));
            }
            if subcommand == "grep" && abbreviates(name, "open-files-in-pager", 2) {
                return Some(format!("opens the files in a pager program (`{arg}`)"));
            }
        } else if subcommand == "grep" && arg.starts_with('-') && arg.contains('O') {
            // `-O[PAGER]`, alone or in a cluster (`-lO`); a pattern `-e -O` asks too.
            return Some(format!("opens the files in a pager program (`{arg}`)"));
        }
    }
    None
}

/// Why `git ARGS`, allowed by a default rule, is not one of the read-only forms that rule
/// means (`args[0]` is the subcommand).
pub(super) fn git_write_form(args: &[&str]) -> Option<String> {
    let rest = args.get(1..).unwrap_or_default();
    match args.first().copied() {
        Some("tag") => listing_form("tag", rest, &TAG),
        Some("branch") => listing_form("branch", rest, &BRANCH),
        Some("reflog") => reflog_form(rest),
        _ => None,
    }
}

/// The options of a subcommand that lists unless given a name.
struct Listing {
    /// Options that make it list (names after them are patterns).
    lists: &'static [&'static str],
    /// Options that change only how it lists.
    plain: &'static [&'static str],
    /// Long options that take the next word as their value.
    valued: &'static [&'static str],
    /// Short options that make it list, and those that change only how.
    short_lists: &'static str,
    short_plain: &'static str,
    /// What it does with a name when it does not list.
    creates: &'static str,
}

const TAG: Listing = Listing {
    lists: &[
        "list",
        "contains",
        "no-contains",
        "merged",
        "no-merged",
        "points-at",
    ],
    plain: &[
        "sort",
        "no-sort",
        "format",
        "no-format",
        "column",
        "no-column",
        "color",
        "no-color",
        "ignore-case",
        "no-ignore-case",
        "omit-empty",
        "no-omit-empty",
    ],
    valued: &["sort", "format"],
    short_lists: "ln",
    short_plain: "i",
    creates: "creates a tag",
};

const BRANCH: Listing = Listing {
    lists: &[
        "list",
        "all",
        "remotes",
        "contains",
        "no-contains",
        "merged",
        "no-merged",
        "points-at",
        "show-current",
    ],
    plain: &[
        "verbose",
        "quiet",
        "sort",
        "no-sort",
        "format",
        "no-format",
        "column",
        "no-column",
        "color",
        "no-color",
        "ignore-case",
        "no-ignore-case",
        "abbrev",
        "no-abbrev",
        "omit-empty",
        "no-omit-empty",
    ],
    valued: &["sort", "format"],
    short_lists: "lar",
    short_plain: "vqi",
    creates: "creates a branch",
};

/// `git tag`/`git branch` with only listing options, or with an option that makes it list
/// (`-l`, `--contains`, ...; names are then patterns). Any other option (`-d`, `-f`, `-m`,
/// `-a`, ...) or a name without a listing option is not a listing.
fn listing_form(subcommand: &str, args: &[&str], options: &Listing) -> Option<String> {
    let mut lists = false;
    let mut name = None;
    let mut i = 0;
    while let Some(&arg) = args.get(i) {
        i += 1;
        if arg == "--" {
            name = name.or_else(|| args.get(i).copied());
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (option, value) = match long.split_once('=') {
                Some((option, value)) => (option, Some(value)),
                None => (long, None),
            };
            if options.lists.contains(&option) {
                lists = true;
            } else if !options.plain.contains(&option) {
                return Some(format!(
                    "is not a listing (`{arg}`: rein reads only the listing options of `git {subcommand}`)"
                ));
            }
            if value.is_none() && options.valued.contains(&option) {
                i += 1;
            }
            continue;
        }
        if arg.len() > 1 && arg.starts_with('-') {
            for (k, c) in arg.char_indices().skip(1) {
                if options.short_lists.contains(c) {
                    lists = true;
                    // `-n3`: the lines of each tag message.
                    if c == 'n' && arg[k + 1..].bytes().all(|b| b.is_ascii_digit()) {
                        break;
                    }
                } else if !options.short_plain.contains(c) {
                    return Some(format!(
                        "is not a listing (`{arg}`: rein reads only the listing options of `git {subcommand}`)"
                    ));
                }
            }
            continue;
        }
        name = name.or(Some(arg));
    }
    match name {
        Some(name) if !lists => Some(format!("{} (`{name}`)", options.creates)),
        _ => None,
    }
}

/// `git reflog` shows, unless a subcommand expires, deletes, drops or writes entries. A
/// first word of lowercase letters other than `show`, `list` and `exists` might be one
/// rein does not know yet, so it asks too (a ref is rarely spelled so: `HEAD`, `main@{1}`).
fn reflog_form(args: &[&str]) -> Option<String> {
    if let Some(sub) = args
        .iter()
        .find(|a| matches!(**a, "expire" | "delete" | "drop" | "write"))
    {
        return Some(format!("changes the reflog (`{sub}`)"));
    }
    let first = args.iter().find(|a| !a.starts_with('-'))?;
    let word = first.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
    (word && !matches!(*first, "show" | "list" | "exists"))
        .then(|| format!("might be a subcommand that changes the reflog (`{first}`)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Word> {
        Word::plain(&text.split(' ').collect::<Vec<_>>())
    }

    #[test]
    fn global_options_are_set_aside() {
        for (command, at, asks) in [
            ("git status", 1, false),
            ("git -C . push", 3, false),
            ("git --no-pager log", 2, false),
            ("git -P -C a -C b diff", 6, false),
            ("git -c color.ui=always diff", 3, false),
            ("git -c core.pager=x diff", 3, true),
            ("git -c alias.st=!rm st", 3, true),
            ("git --git-dir=/x status", 2, true),
            ("git --work-tree /x status", 3, true),
            ("git --exec-path=/x status", 2, true),
            ("git --version", 1, false),
        ] {
            let found = git_globals(&words(command)).unwrap();
            assert_eq!(found.at, at, "{command}");
            assert_eq!(found.concern.is_some(), asks, "{command}");
        }
        assert!(git_globals(&words("git --frobnicate push")).is_err());
    }

    fn split(args: &str) -> Vec<&str> {
        args.split(' ').filter(|a| !a.is_empty()).collect()
    }

    #[test]
    fn listing_forms_of_tag_branch_and_reflog_only_list() {
        for args in [
            "tag",
            "tag -l",
            "tag --list v*",
            "tag -l --sort=-creatordate",
            "tag --sort -creatordate",
            "tag -n",
            "tag -n5 v1*",
            "tag --contains HEAD",
            "tag --points-at HEAD",
            "tag -li",
            "tag --format %(refname) -l v*",
            "branch",
            "branch -a",
            "branch -vv",
            "branch -av",
            "branch --show-current",
            "branch --merged main",
            "branch --contains HEAD feat*",
            "branch --list feat*",
            "branch --sort=-committerdate",
            "reflog",
            "reflog -10",
            "reflog show --oneline main",
            "reflog HEAD",
            "reflog exists refs/heads/x",
            "status",
            "log --oneline",
        ] {
            assert_eq!(git_write_form(&split(args)), None, "{args}");
        }
        for args in [
            "tag v2",
            "tag v2 HEAD~1",
            "tag -a v2 -m x",
            "tag -d v1",
            "tag -f v1",
            "tag -v v1",
            "tag -s v2",
            "tag --delete v1",
            "tag --sort=refname v2",
            "tag -i v2",
            "tag -- v2",
            "tag --create-reflog v2",
            "branch feature",
            "branch -v feature",
            "branch -d old",
            "branch -D old",
            "branch -m new",
            "branch -f main HEAD~3",
            "branch -u origin/main",
            "branch --set-upstream-to=origin/main",
            "branch --edit-description",
            "branch -r -d origin/x",
            "branch --sort=refname new",
            "reflog expire --all",
            "reflog delete HEAD@{1}",
            "reflog -n1 expire",
            "reflog drop",
            "reflog frobnicate",
        ] {
            assert!(git_write_form(&split(args)).is_some(), "{args}");
        }
    }

    #[test]
    fn options_that_write_or_run_are_found_in_any_subcommand() {
        for args in [
            "diff --output=x",
            "log --out x",
            "show --ext-diff",
            "stash show --ext-diff",
            "stash list --output=x",
            "grep -O x",
            "grep -Oless x",
            "grep -lO x",
            "grep --open-files-in-pager=vim x",
            "grep --open x",
            "cat-file --textconv HEAD:x",
            "cat-file --filters HEAD:x",
            "cat-file --t HEAD:x",
            "grep --textconv x",
            "difftool",
            "mergetool",
        ] {
            assert!(git_hazard(&split(args)).is_some(), "{args}");
        }
        for args in [
            "grep -n -i x",
            "grep -e x -- src",
            "grep --only-matching x",
            "cat-file -p HEAD",
            "cat-file --batch-check",
            "log --oneline --no-textconv",
            "blame -L 1,5 f",
            "diff-tree --no-commit-id --name-only -r HEAD",
        ] {
            assert_eq!(git_hazard(&split(args)), None, "{args}");
        }
    }
}
