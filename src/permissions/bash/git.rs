//! git's global options, set aside before the rules see the command.
//!
//! `git -C dir push` and `git --no-pager push` are `git push` to the rules (so a deny rule
//! `git push*` holds). Options that only change where or how git works (`-C`, `--no-pager`,
//! `--bare`, the pathspec switches) are dropped. Options that can make git run programs or
//! use another repository's configuration ask as well: `-c` with a key outside a few
//! harmless ones (`core.pager`, `alias.*`, `diff.external` run programs), `--config-env`,
//! `--git-dir`, `--work-tree`, `--exec-path=DIR`, `--namespace`. An option rein does not
//! know asks, since it might take a value.

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

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Word> {
        text.split(' ')
            .map(|w| Word {
                raw: w.to_string(),
                literal: Some(w.to_string()),
                glob: false,
            })
            .collect()
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
}
