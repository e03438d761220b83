//! A repository's `.git` read as data, never run: a `.git` that is a file (a worktree's,
//! a submodule's) names the repository's folder in a `gitdir: PATH` line, and that folder's
//! `commondir` names the folder it shares with the main work tree (its hooks and config).
//! Both are the project's files, which a cloned repository or a command may have made a
//! named pipe or a link to `/dev/zero`: they are read as regular files of at most
//! [`MAX_BYTES`], or not at all.

use std::path::{Path, PathBuf};

/// The most bytes a `.git` file, a `commondir` or a `HEAD` is read for.
pub const MAX_BYTES: u64 = 64 * 1024;

/// The folder the `.git` file at `git_file` names (`gitdir: PATH`, relative to the folder
/// the file is in), as written: `None` when it is not a regular file of at most
/// [`MAX_BYTES`] with such a line.
pub fn gitdir_of(git_file: &Path) -> Option<PathBuf> {
    let text = crate::host::safe_fs::read_small_text(git_file, MAX_BYTES).ok()?;
    let target = text
        .lines()
        .find_map(|line| line.strip_prefix("gitdir:"))
        .map(str::trim)
        .filter(|t| !t.is_empty())?;
    Some(git_file.parent()?.join(target))
}

/// The folder a worktree's git folder shares with the main work tree, named by its
/// `commondir` file (relative to `gitdir`): `None` when there is no such regular file.
pub fn common_dir(gitdir: &Path) -> Option<PathBuf> {
    let text = crate::host::safe_fs::read_small_text(&gitdir.join("commondir"), MAX_BYTES).ok()?;
    let common = text
        .lines()
        .next()
        .map(str::trim)
        .filter(|t| !t.is_empty())?;
    Some(gitdir.join(common))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pointer_and_its_commondir_are_read_and_pipes_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".git"), "gitdir: ../repo/.git/worktrees/w\n").unwrap();
        assert_eq!(
            gitdir_of(&root.join(".git")),
            Some(root.join("../repo/.git/worktrees/w"))
        );
        let gd = root.join("gd");
        std::fs::create_dir(&gd).unwrap();
        std::fs::write(gd.join("commondir"), "../..\n").unwrap();
        assert_eq!(common_dir(&gd), Some(gd.join("../..")));
        // The test finishing is half the assertion: a pipe nobody writes is not waited on.
        std::fs::remove_file(gd.join("commondir")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(gd.join("commondir"))
            .status();
        assert!(made.unwrap().success());
        assert_eq!(common_dir(&gd), None);
        std::fs::remove_file(root.join(".git")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join(".git")).unwrap();
        assert_eq!(gitdir_of(&root.join(".git")), None);
        std::fs::remove_file(root.join(".git")).unwrap();
        std::fs::write(root.join(".git"), "gitdir:   \n").unwrap();
        assert_eq!(gitdir_of(&root.join(".git")), None, "an empty target");
    }
}
