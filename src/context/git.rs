//! What the harness reads of the project's git repository, without running git: the current
//! branch (the dashboard's status line and the model's reminder both show it).

/// The current branch of the git repository at `root`, read from `.git/HEAD` (no git
/// process): the branch name, or the short commit for a detached head.
pub fn git_branch(root: &std::path::Path) -> Option<String> {
    let git = root.join(".git");
    let dir = if git.is_file() {
        let text = std::fs::read_to_string(&git).ok()?;
        let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
        root.join(target)
    } else {
        git
    };
    let head = std::fs::read_to_string(dir.join("HEAD")).ok()?;
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
}
