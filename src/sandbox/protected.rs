//! What commands must not write although the project is writable, and the paths the
//! backends are given: the project's `.git` (followed through a worktree's `gitdir:`
//! pointer to its git directory and `commondir`), `.rein` (created first, so a command
//! cannot plant one), the git directories of nested repositories (looked for within a
//! bounded scan), and every path with its links resolved as far as it exists.

use std::path::{Path, PathBuf};

/// Most directories [`nested_git_dirs`] looks into.
const NESTED_SCAN_DIRS: usize = 20_000;
/// How deep it looks.
const NESTED_SCAN_DEPTH: usize = 8;

/// The `.git` directories (or `.git` pointer files) of repositories nested in `root`, not
/// `root`'s own: looked for at most `NESTED_SCAN_DEPTH` folders deep, in at most
/// `NESTED_SCAN_DIRS` folders, never following links nor entering `.git`, `target` or
/// `node_modules`.
pub fn nested_git_dirs(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut queue = std::collections::VecDeque::from([(root.to_path_buf(), 0usize)]);
    let mut visited = 0;
    while let Some((dir, depth)) = queue.pop_front() {
        visited += 1;
        if visited > NESTED_SCAN_DIRS {
            break;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if name == ".git" {
                if dir != root {
                    found.push(entry.path());
                }
                continue;
            }
            if kind.is_dir()
                && depth < NESTED_SCAN_DEPTH
                && name != "target"
                && name != "node_modules"
            {
                queue.push_back((entry.path(), depth + 1));
            }
        }
    }
    found.sort();
    found
}

/// The paths inside (or belonging to) the project that commands must not write, even though
/// the project is writable: `.git` (a directory, or a `gitdir:` pointer file, in which case
/// also the git directory it names and that directory's `commondir`), and `.rein`, whether
/// or not it exists yet.
pub fn protected_paths(root: &Path) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    let git = root.join(".git");
    match std::fs::metadata(&git) {
        Ok(meta) if meta.is_dir() => paths.push(git),
        Ok(meta) if meta.is_file() => {
            // A worktree or submodule: `.git` names the real git directory. The file itself
            // is protected too, or a command could point it at a git directory of its own.
            let target = gitdir_target(root, &git);
            paths.push(git);
            if let Some(target) = target {
                let common = common_dir(&target);
                paths.push(target);
                paths.extend(common);
            }
        }
        _ => {}
    }
    paths.push(root.join(".rein"));
    paths
}

/// The directory a `.git` file's `gitdir: PATH` line names (relative to the project root).
fn gitdir_target(root: &Path, git_file: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(git_file).ok()?;
    let target = text
        .lines()
        .find_map(|line| line.strip_prefix("gitdir:"))
        .map(str::trim)
        .filter(|t| !t.is_empty())?;
    Some(root.join(target))
}

/// A worktree's shared git directory, named by the `commondir` file in its git directory
/// (relative to that directory). It holds the hooks and config git runs later.
fn common_dir(gitdir: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(gitdir.join("commondir")).ok()?;
    let common = text
        .lines()
        .next()
        .map(str::trim)
        .filter(|t| !t.is_empty())?;
    Some(gitdir.join(common))
}

/// Make sure `.rein` exists so it can be bound read-only: a missing one could be created by
/// a command, with a `config.toml` that changes rein's own rules. A new one is 0700.
pub(super) fn ensure_rein_dir(root: &Path) -> Result<(), String> {
    let dir = root.join(".rein");
    let created = crate::private_fs::create_dir(&dir);
    if dir.exists() {
        return Ok(());
    }
    let why = match created {
        Err(e) => e.to_string(),
        Ok(()) => "it vanished".to_string(),
    };
    Err(format!(
        "could not create {} ({why}); the sandbox must protect it, so commands cannot run. \
         Make it a directory (or remove a broken symlink there)",
        dir.display()
    ))
}

/// `path` with symlinks resolved as far as it exists, the rest appended unchanged.
pub(super) fn real_path(path: &Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => real_path(parent).join(name),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_paths_of_a_plain_repo() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(protected_paths(root), [root.join(".rein")]);
        std::fs::create_dir(root.join(".git")).unwrap();
        assert_eq!(
            protected_paths(root),
            [root.join(".git"), root.join(".rein")]
        );
    }

    #[test]
    fn protected_paths_follow_a_gitdir_file_and_its_commondir() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".git"), "gitdir: ../main/.git/worktrees/wt\n").unwrap();
        // No such directory: the pointer is still followed (and bwrap_args skips it).
        assert_eq!(
            protected_paths(root),
            [
                root.join(".git"),
                root.join("../main/.git/worktrees/wt"),
                root.join(".rein")
            ]
        );
        let gitdir = root.join("wt-gitdir");
        std::fs::create_dir(&gitdir).unwrap();
        std::fs::write(gitdir.join("commondir"), "../shared\n").unwrap();
        std::fs::write(root.join(".git"), format!("gitdir: {}\n", gitdir.display())).unwrap();
        assert_eq!(
            protected_paths(root),
            [
                root.join(".git"),
                gitdir.clone(),
                gitdir.join("../shared"),
                root.join(".rein")
            ]
        );
    }

    #[test]
    fn real_path_resolves_what_exists() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        assert_eq!(real_path(&dir.path().join("a/b")), real.join("a/b"));
        assert_eq!(real_path(Path::new("/no/such")), Path::new("/no/such"));
    }
}
