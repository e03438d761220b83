//! What the harness reads of the project's git repository, without running git: the current
//! branch (the dashboard's status line and the model's reminder both show it).

/// The current branch of the git repository at `root`, read from `.git/HEAD` (no git
/// process): the branch name, or the short commit for a detached head.
pub fn git_branch(root: &std::path::Path) -> Option<String> {
    let git = root.join(".git");
    let dir = if git.is_file() {
        crate::host::git_pointer::gitdir_of(&git)?
    } else {
        git
    };
    // Bounded, a regular file only: a project's `HEAD` may be a pipe or a link to a device.
    let head = crate::host::safe_fs::read_small_text(
        &dir.join("HEAD"),
        crate::host::git_pointer::MAX_BYTES,
    )
    .ok()?;
    let head = head.trim();
    match head.strip_prefix("ref: ") {
        Some(reference) => Some(
            reference
                .strip_prefix("refs/heads/")
                .unwrap_or(reference)
                .to_string(),
        ),
        None => Some(head.chars().take(7).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_from_head() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(git_branch(dir.path()), None);
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/feature/x\n").unwrap();
        assert_eq!(git_branch(dir.path()).as_deref(), Some("feature/x"));
        std::fs::write(
            dir.path().join(".git/HEAD"),
            "0123456789abcdef0123456789abcdef01234567\n",
        )
        .unwrap();
        assert_eq!(git_branch(dir.path()).as_deref(), Some("0123456"));
    }

    /// A cloned project's `HEAD` that is a pipe nobody writes, or a link to `/dev/zero`,
    /// gives no branch (the status line and the reminder asked it at every turn: a hang, or
    /// a read without end). The test finishing is the assertion.
    #[test]
    fn a_head_that_is_a_pipe_or_a_device_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(dir.path().join(".git/HEAD"))
            .status();
        assert!(made.unwrap().success());
        assert_eq!(git_branch(dir.path()), None);
        std::fs::remove_file(dir.path().join(".git/HEAD")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", dir.path().join(".git/HEAD")).unwrap();
        assert_eq!(git_branch(dir.path()), None);
    }
}
