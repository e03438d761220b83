//! What commands must not write although the project is writable, and the paths the
//! backends are given: the project's `.git` (followed through a worktree's `gitdir:`
//! pointer to its git directory and `commondir`), `.rein` (created first, so a command
//! cannot plant one), the git directories of nested repositories (looked for within a
//! bounded scan), and every path with its links resolved as far as it exists.

use std::path::{Path, PathBuf};

use crate::consent::steering;

/// Most directories [`scan_project`] looks into.
const NESTED_SCAN_DIRS: usize = 20_000;
/// How deep it looks.
const NESTED_SCAN_DEPTH: usize = 8;

/// Folders a host tool reads more than one name from: where one exists, the sandbox binds
/// it whole, so a command cannot add the other name beside the one that exists (cargo
/// prefers `.cargo/config` to a `.cargo/config.toml` beside it). Not a cargo home kept in
/// the project (a `.cargo` holding `registry/`), which builds write to: there only the
/// steering files in it.
const WHOLE_FOLDERS: &[&str] = &[".cargo", ".vscode"];

/// The last part of a `.env.*` name that marks a committed template, not a secret:
/// `.env.example`, `.env.local.sample`.
const ENV_TEMPLATES: &[&str] = &["example", "sample", "template", "dist", "defaults"];

/// What one bounded walk of the project finds for the sandbox.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectScan {
    /// The `.git` directories (or pointer files) of repositories nested in the project,
    /// and `.rein` folders below its root: read-only inside.
    pub nested_git: Vec<PathBuf>,
    /// The steering files and folders ([`crate::consent::steering`]) at any depth, the root's
    /// included, as they exist: read-only inside.
    pub steering: Vec<PathBuf>,
    /// The project's secret files (`.env`, `.env.production`, …, not the templates):
    /// covered inside.
    pub secrets: Vec<PathBuf>,
}

/// Whether a file named `name` holds a project's secrets: `.env` or `.env.SOMETHING`
/// (`.env.local`, `.env.production.local`), in any case, except the committed templates
/// (`.env.example`, `.env.sample`, `.env.template`, `.env.dist`, `.env.defaults`).
pub fn is_env_secret(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if lower == ".env" {
        return true;
    }
    let Some(rest) = lower.strip_prefix(".env.") else {
        return false;
    };
    let last = rest.rsplit('.').next().unwrap_or(rest);
    !rest.is_empty() && !ENV_TEMPLATES.contains(&last)
}

/// Walk `root` once, at most `NESTED_SCAN_DEPTH` folders deep and through at most
/// `NESTED_SCAN_DIRS` folders, never following links nor entering `.git`, `target`,
/// `node_modules` or a steering folder (bound whole), for what [`ProjectScan`] holds. A
/// link is recorded by its name (the sandbox binds where it leads).
pub fn scan_project(root: &Path) -> ProjectScan {
    let mut found = ProjectScan::default();
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
            let path = entry.path();
            let text = name.to_string_lossy();
            if name == ".git" {
                if dir != root {
                    found.nested_git.push(path);
                }
                continue;
            }
            if text.eq_ignore_ascii_case(".rein") {
                // The root's own is protected by `protected_paths` (and created first).
                if dir != root {
                    found.nested_git.push(path);
                }
                continue;
            }
            if steering::AGENT_FOLDERS
                .iter()
                .chain(steering::HOST_TOOL_FOLDERS)
                .any(|f| text.eq_ignore_ascii_case(f))
            {
                found.steering.push(path);
                continue;
            }
            if kind.is_dir() && WHOLE_FOLDERS.iter().any(|f| text.eq_ignore_ascii_case(f)) {
                if path.join("registry").is_dir() {
                    // A cargo home: its config files only, and nothing below.
                    found.steering.extend(
                        ["config", "config.toml"]
                            .iter()
                            .map(|f| path.join(f))
                            .filter(|p| p.symlink_metadata().is_ok()),
                    );
                } else {
                    found.steering.push(path);
                }
                continue;
            }
            if !kind.is_dir() && steering::kind(&path, root).is_some() {
                found.steering.push(path.clone());
            }
            if (kind.is_file() || kind.is_symlink()) && is_env_secret(&text) {
                found.secrets.push(path);
                continue;
            }
            if kind.is_dir()
                && depth < NESTED_SCAN_DEPTH
                && name != "target"
                && name != "node_modules"
            {
                queue.push_back((path, depth + 1));
            }
        }
    }
    found.nested_git.sort();
    found.steering.sort();
    found.secrets.sort();
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
            let target = crate::host::git_pointer::gitdir_of(&git);
            paths.push(git);
            if let Some(target) = target {
                let common = crate::host::git_pointer::common_dir(&target);
                paths.push(target);
                paths.extend(common);
            }
        }
        _ => {}
    }
    paths.push(root.join(".rein"));
    paths
}

/// Make sure `.rein` exists so it can be bound read-only: a missing one could be created by
/// a command, with a `config.toml` that changes rein's own rules. A new one is 0700.
pub(super) fn ensure_rein_dir(root: &Path) -> Result<(), String> {
    let dir = root.join(".rein");
    let created = crate::host::private_fs::create_dir(&dir);
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

    /// One walk finds nested repositories, steering files and folders at any depth, and
    /// the project's secret files; it enters neither a steering folder nor `target`.
    #[test]
    fn one_scan_finds_repositories_steering_files_and_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in [
            ".git",
            "vendor/lib/.git",
            ".claude/hooks",
            "web/.vscode",
            "crates/a/.cargo",
            "home/.cargo/registry",
            "sub/.rein",
            ".venv/.env",
            "target/.claude",
            ".github/workflows",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in [
            ".envrc",
            "CLAUDE.md",
            "docs/deep/AGENTS.md",
            "web/.npmrc",
            "crates/a/.cargo/config.toml",
            "home/.cargo/config.toml",
            ".claude/hooks/x.sh",
            ".github/copilot-instructions.md",
            ".github/workflows/ci.yml",
            ".env",
            ".env.production.local",
            "api/.ENV.staging",
            ".env.example",
            "api/.env.local.sample",
            ".environment",
            "src/main.rs",
        ] {
            let path = root.join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        let scan = scan_project(root);
        let names = |list: &[PathBuf]| -> Vec<String> {
            list.iter()
                .map(|p| p.strip_prefix(root).unwrap().display().to_string())
                .collect()
        };
        assert_eq!(names(&scan.nested_git), ["sub/.rein", "vendor/lib/.git"]);
        assert_eq!(
            names(&scan.steering),
            [
                ".claude",
                ".envrc",
                ".github/copilot-instructions.md",
                "CLAUDE.md",
                "crates/a/.cargo",
                "docs/deep/AGENTS.md",
                "home/.cargo/config.toml",
                "web/.npmrc",
                "web/.vscode",
            ]
        );
        assert_eq!(
            names(&scan.secrets),
            [".env", ".env.production.local", "api/.ENV.staging"]
        );
    }

    #[test]
    fn env_secrets_by_name_but_not_the_templates() {
        for name in [
            ".env",
            ".env.local",
            ".env.production",
            ".ENV.Prod",
            ".env.x.local",
        ] {
            assert!(is_env_secret(name), "{name}");
        }
        for name in [
            ".env.example",
            ".env.sample",
            ".env.template",
            ".env.dist",
            ".env.defaults",
            ".env.local.example",
            ".env.",
            ".envrc",
            ".environment",
            "env",
            "prod.env",
        ] {
            assert!(!is_env_secret(name), "{name}");
        }
    }

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
