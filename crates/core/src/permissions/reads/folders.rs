//! Folders read whole: which programs read or list them (`grep -r`, `rg`, `find`, `ls`,
//! ...), and what a folder holds, looked through on disk, bounded.

use std::path::{Path, PathBuf};

use super::{lits, meets, pattern_toks, WordPattern, MAX_WALK, SKIPPED_DIRS};
use crate::permissions::bash::Operands;
use crate::permissions::paths::PathRules;
use crate::permissions::shell::Word;

/// How a folder is read whole.
#[derive(Debug, Clone, Copy, Default)]
pub struct Walk {
    /// Files and folders whose name starts with a dot are read too.
    pub hidden: bool,
    /// The ignore files (`.gitignore`, `.ignore`, ...) are obeyed, as ripgrep and git do.
    pub ignores: bool,
    /// Only the folder's own entries (`ls` without `-R`).
    pub shallow: bool,
}

/// What a folder read whole holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Below {
    Nothing,
    /// A sensitive file (or a sensitive pattern's own folder), and the pattern as configured.
    Sensitive(PathBuf, String),
    /// More than [`MAX_WALK`] entries: not looked through.
    TooMany,
    /// A folder whose ignore files are not regular files (a pipe, a device): not looked
    /// through ([`crate::file_index::guard`]).
    Unreadable,
}

/// A sensitive file (or a sensitive pattern's own folder) below `folder`, read as `walk`
/// says, with the pattern it matches. `names`: basename patterns a file must match to count (`find -name`,
/// `grep --include`), none for every file. `pattern`: the word's own pattern, which an
/// entry directly below the folder must match (`grep -r x src/*`).
pub fn sensitive_below(
    paths: &PathRules,
    folder: &Path,
    walk: Walk,
    names: &[String],
    pattern: Option<&WordPattern>,
    dotglob: bool,
) -> Below {
    let named = |path: &Path| {
        names.is_empty()
            || path.file_name().is_some_and(|n| {
                let name = n.to_string_lossy();
                names
                    .iter()
                    .any(|p| meets(&lits(&name), &pattern_toks(p), true))
            })
    };
    let hidden = |path: &Path| {
        path.strip_prefix(folder).is_ok_and(|rest| {
            rest.components()
                .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
        })
    };
    for (_, configured, prefix) in paths.sensitive_patterns() {
        let Some(prefix) = prefix else { continue };
        if prefix.starts_with(folder)
            && prefix != folder
            && (walk.hidden || !hidden(prefix))
            && !(walk.shallow && prefix.parent() != Some(folder))
            && std::fs::symlink_metadata(prefix).is_ok()
        {
            return Below::Sensitive(prefix.to_path_buf(), configured.to_string());
        }
    }
    if !std::fs::symlink_metadata(folder).is_ok_and(|m| m.is_dir()) {
        return Below::Nothing;
    }
    let mut builder = ignore::WalkBuilder::new(folder);
    builder
        .standard_filters(walk.ignores)
        .hidden(!walk.hidden)
        .follow_links(false)
        .max_depth(walk.shallow.then_some(1));
    if walk.ignores {
        builder.require_git(false);
    }
    let skipped = |e: &ignore::DirEntry| {
        !(e.depth() > 0
            && e.file_type().is_some_and(|t| t.is_dir())
            && SKIPPED_DIRS.contains(&e.file_name().to_string_lossy().as_ref()))
    };
    // A walk that reads ignore files never reads a hostile tree's (a pipe, a link to
    // /dev/zero); a folder left unlooked-at for that is one rein cannot vouch for.
    let unread = if walk.ignores {
        Some(crate::file_index::guard::guard(
            &mut builder,
            folder,
            skipped,
        ))
    } else {
        builder.filter_entry(skipped);
        None
    };
    let unread = || {
        unread
            .as_ref()
            .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
    };
    for (seen, entry) in builder.build().enumerate() {
        if seen > MAX_WALK {
            return Below::TooMany;
        }
        let Ok(entry) = entry else { continue };
        let path = entry.path();
        if entry.depth() == 0 {
            continue;
        }
        if let Some(pattern) = pattern {
            // The word's own pattern chooses the entries directly below the folder.
            let top: PathBuf = folder.join(
                path.strip_prefix(folder)
                    .ok()
                    .and_then(|r| r.components().next())
                    .map(|c| c.as_os_str().to_os_string())
                    .unwrap_or_default(),
            );
            let top = lits(&top.display().to_string());
            let chosen = meets(&top, &pattern.0, dotglob);
            if !chosen {
                continue;
            }
        }
        if let Some(configured) = paths.sensitive_name(path) {
            if named(path) {
                return Below::Sensitive(path.to_path_buf(), configured.to_string());
            }
        }
    }
    if unread() {
        return Below::Unreadable;
    }
    Below::Nothing
}

/// How `operands`' program reads the folders among its arguments: whole, as [`Walk`] says,
/// and the basename patterns a file must match to be read; `None` when it does not read
/// folders whole. With no folder among its arguments, such a program reads `.`
/// (`grep -r x`, `rg x`).
pub fn reads_folders(operands: &Operands) -> Option<(Walk, Vec<String>)> {
    let args: Vec<&str> = operands.args.iter().map(Word::text).collect();
    let flag = |short: char, long: &[&str]| {
        args.iter().any(|a| {
            long.contains(a)
                || (a.starts_with('-')
                    && !a.starts_with("--")
                    && a[1..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphabetic())
                        .any(|c| c == short))
        })
    };
    let valued = |names: &[&str]| -> Vec<String> {
        let mut out = Vec::new();
        for (i, a) in args.iter().enumerate() {
            for name in names {
                if let Some(v) = a.strip_prefix(&format!("{name}=")) {
                    out.push(v.to_string());
                } else if a == name {
                    if let Some(v) = args.get(i + 1) {
                        out.push(v.to_string());
                    }
                }
            }
        }
        out
    };
    let all = Walk {
        hidden: true,
        ignores: false,
        shallow: false,
    };
    match operands.program.as_str() {
        "grep" | "egrep" | "fgrep" | "zgrep" => {
            let recursive = flag('r', &["--recursive"])
                || flag('R', &["--dereference-recursive"])
                || args.contains(&"--directories=recurse")
                || args.windows(2).any(|w| w == ["-d", "recurse"]);
            recursive.then(|| (all, valued(&["--include"])))
        }
        "rgrep" => Some((all, valued(&["--include"]))),
        "rg" | "ripgrep" => {
            let unrestricted = args
                .iter()
                .filter(|a| a.starts_with('-') && !a.starts_with("--"))
                .map(|a| a.matches('u').count())
                .sum::<usize>();
            let given = valued(&["-g", "--glob", "--iglob"]);
            let globs = !given.is_empty();
            let hidden = flag('.', &["--hidden"]) || unrestricted >= 2 || globs;
            let ignores =
                !(args.iter().any(|a| a.starts_with("--no-ignore")) || unrestricted >= 1 || globs);
            // Globs that only include, by a file's name (`-g '*.toml'`), are the names a
            // file must have to be read, as `grep --include` is; a negated, case-blind or
            // path glob is not read as a filter.
            let includes = if valued(&["--iglob"]).is_empty()
                && given
                    .iter()
                    .all(|g| !g.starts_with('!') && !g.contains('/'))
            {
                given
            } else {
                Vec::new()
            };
            Some((
                Walk {
                    hidden,
                    ignores,
                    shallow: false,
                },
                includes,
            ))
        }
        "ag" | "ack" | "ugrep" => Some((all, Vec::new())),
        "diff" => flag('r', &["--recursive"]).then(|| (all, Vec::new())),
        "cp" => (flag('r', &["--recursive"]) || flag('R', &[]) || flag('a', &["--archive"]))
            .then(|| (all, Vec::new())),
        "rsync" => {
            (flag('r', &["--recursive"]) || flag('a', &["--archive"])).then(|| (all, Vec::new()))
        }
        "zip" => flag('r', &["--recurse-paths"]).then(|| (all, Vec::new())),
        "tar" | "bsdtar" | "7z" | "scp" => Some((all, Vec::new())),
        _ => None,
    }
}

/// How `operands`' program lists the folders among its arguments, when it prints names
/// another command on the line may open (`find`, `ls`, `git ls-files`, `rg --files`, ...),
/// with the basename patterns a name must match to be printed.
pub fn lists_folders(operands: &Operands) -> Option<(Walk, Vec<String>)> {
    let args: Vec<&str> = operands.args.iter().map(Word::text).collect();
    let all = Walk {
        hidden: true,
        ignores: false,
        shallow: false,
    };
    match operands.program.as_str() {
        "find" => {
            let mut names = Vec::new();
            let alternatives = args
                .iter()
                .any(|a| matches!(*a, "-o" | "-or" | "!" | "-not" | ","));
            for w in args.windows(2) {
                if matches!(w[0], "-name" | "-iname") && !alternatives {
                    names.push(w[1].to_string());
                }
            }
            Some((all, names))
        }
        "ls" => {
            let short = |c: char| {
                args.iter()
                    .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(c))
            };
            Some((
                Walk {
                    hidden: short('a') || short('A') || args.contains(&"--all"),
                    ignores: false,
                    shallow: !(short('R') || args.contains(&"--recursive")),
                },
                Vec::new(),
            ))
        }
        "tree" | "du" | "fd" | "fdfind" => Some((all, Vec::new())),
        "git" if args.first() == Some(&"ls-files") => {
            // Pathspecs that are all name globs (`'*.rs'`) list only files of such names;
            // a folder, a path or a pathspec with magic lists what it will.
            let specs: Vec<&str> = args[1..]
                .iter()
                .copied()
                .filter(|a| !a.starts_with('-'))
                .collect();
            let names = if !specs.is_empty()
                && specs.iter().all(|p| {
                    p.contains(['*', '?', '['])
                        && !p.contains('/')
                        && !p.starts_with(':')
                        && !p.contains("**")
                }) {
                specs.iter().map(|p| p.to_string()).collect()
            } else {
                Vec::new()
            };
            Some((
                Walk {
                    hidden: true,
                    ignores: true,
                    shallow: false,
                },
                names,
            ))
        }
        "rg" if args
            .iter()
            .any(|a| matches!(*a, "--files" | "-l" | "--files-with-matches")) =>
        {
            reads_folders(operands)
        }
        "grep" | "egrep" | "fgrep"
            if args.iter().any(|a| {
                a.starts_with('-') && !a.starts_with("--") && (a.contains('l') || a.contains('L'))
            }) =>
        {
            reads_folders(operands)
        }
        _ => None,
    }
}
