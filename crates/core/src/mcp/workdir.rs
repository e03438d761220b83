//! The neutral folder a stdio server of the user's starts in when its table sets no `cwd`.
//!
//! A server the user configured runs outside the sandbox, and what its launcher finds in
//! its working folder it loads: `python3 -m mod` imports `mod.py` from there, npx and
//! node look for `node_modules`, `package.json` and `.npmrc` there *and in every folder
//! above it*, uv reads `uv.toml` and `pyproject.toml` up the tree, pyenv's shims
//! `.python-version`, mise and asdf `.tool-versions`. So the folder must hold nothing, and
//! neither it nor any folder above it may be the project (a project at `$HOME` has rein's
//! data folder inside it).
//!
//! The choice: a private folder rein creates for each manager, `rein-mcp-PID-N` (0700,
//! empty), in the first of these whose folder is not inside the project:
//! `$XDG_RUNTIME_DIR` (the user's own, 0700, on tmpfs, with only root's folders above it),
//! rein's data folder, the system's temporary folder (where other users may create
//! folders next to it, which is why it comes last). Each server gets its own subfolder
//! (`rein-mcp-PID-N/NAME`, 0700), so one server's files never sit in another's working
//! folder; a restart keeps it. The whole folder is removed when the manager goes (a
//! server that keeps files in its working folder wants a `cwd` of its own). Where no
//! candidate is outside the project (a project at `/`), a server without `cwd` does not
//! start, and the error says to give it one.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The manager's neutral folders: made at the first server that needs one.
pub(super) struct Workdirs {
    project: PathBuf,
    data_dir: Option<PathBuf>,
    base: Mutex<Option<PathBuf>>,
}

impl Workdirs {
    pub(super) fn new(project: &Path, data_dir: Option<&Path>) -> Workdirs {
        Workdirs {
            project: project.to_path_buf(),
            data_dir: data_dir.map(Path::to_path_buf),
            base: Mutex::new(None),
        }
    }

    /// The working folder of the server `name`: empty when first made, private, and
    /// neither the project nor under it. Errors are one line.
    pub(super) fn for_server(&self, name: &str) -> Result<PathBuf, String> {
        let base = {
            let mut base = self.base.lock().unwrap_or_else(|e| e.into_inner());
            match &*base {
                Some(dir) => dir.clone(),
                None => {
                    let dir = create_base(&self.candidates(), &self.project)?;
                    *base = Some(dir.clone());
                    dir
                }
            }
        };
        let dir = base.join(folder_name(name));
        match private_dir(&dir) {
            Ok(()) => Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(dir),
            Err(e) => Err(format!(
                "cannot make its working folder {}: {e}",
                dir.display()
            )),
        }
    }

    /// Where the folder may go, best first.
    fn candidates(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        if let Some(run) = std::env::var_os("XDG_RUNTIME_DIR") {
            out.push(PathBuf::from(run));
        }
        out.extend(self.data_dir.clone());
        out.push(std::env::temp_dir());
        out
    }
}

impl Drop for Workdirs {
    fn drop(&mut self) {
        let base = self.base.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(dir) = base.take() {
            // Never follows a link inside (std removes links, not what they point to).
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// A fresh private folder in the first candidate that is not inside `project`.
fn create_base(candidates: &[PathBuf], project: &Path) -> Result<PathBuf, String> {
    let project = project
        .canonicalize()
        .unwrap_or_else(|_| project.to_path_buf());
    let mut tried = Vec::new();
    for candidate in candidates {
        if !candidate.is_absolute() {
            continue;
        }
        // rein's data folder may not exist yet.
        let _ = std::fs::create_dir_all(candidate);
        let Ok(real) = candidate.canonicalize() else {
            continue;
        };
        tried.push(real.display().to_string());
        if real.starts_with(&project) {
            continue;
        }
        for n in 0..100 {
            let dir = real.join(format!("rein-mcp-{}-{n}", std::process::id()));
            match private_dir(&dir) {
                Ok(()) => return Ok(dir),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(_) => break,
            }
        }
    }
    Err(format!(
        "no folder outside the project {} to start it in (tried {}); give it a `cwd`",
        project.display(),
        if tried.is_empty() {
            "none".to_string()
        } else {
            tried.join(", ")
        }
    ))
}

/// Create `dir` (its parent must exist) readable by the user only; an existing one is an
/// error (`AlreadyExists`).
fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(dir)
}

/// A server's name as a folder name (config names are `[A-Za-z0-9_-]+` already).
fn folder_name(name: &str) -> String {
    let cleaned = super::names::sanitize(&name.chars().take(64).collect::<String>());
    if cleaned.is_empty() {
        "server".to_string()
    } else {
        cleaned
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_folder_is_private_empty_outside_the_project_and_removed_after() {
        let outside = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let data = project.path().join(".local/share/rein");
        // A project at $HOME: the data folder is inside it and is passed over.
        let base = create_base(
            &[data.clone(), outside.path().to_path_buf()],
            project.path(),
        )
        .unwrap();
        let real_project = project.path().canonicalize().unwrap();
        assert!(!base.starts_with(&real_project), "{}", base.display());
        assert!(base.starts_with(outside.path().canonicalize().unwrap()));
        let mode = std::fs::metadata(&base).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert_eq!(std::fs::read_dir(&base).unwrap().count(), 0, "empty");
        // Nothing fits: said, with what was tried.
        let err = create_base(&[data, PathBuf::from("relative")], project.path()).unwrap_err();
        assert!(err.contains("give it a `cwd`"), "{err}");
        let _ = std::fs::remove_dir_all(base);

        let dirs = Workdirs {
            project: project.path().to_path_buf(),
            data_dir: None,
            base: Mutex::new(None),
        };
        let a = dirs.for_server("time").unwrap();
        let b = dirs.for_server("fs").unwrap();
        assert_ne!(a, b, "a folder each");
        assert_eq!(a.parent(), b.parent());
        assert_eq!(dirs.for_server("time").unwrap(), a, "kept across restarts");
        assert!(!a.starts_with(&real_project));
        let mode = std::fs::metadata(&a).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        std::fs::write(a.join("left-behind"), "x").unwrap();
        let parent = a.parent().unwrap().to_path_buf();
        drop(dirs);
        assert!(!parent.exists(), "removed with the manager");
        assert_eq!(folder_name("a/../b"), "a____b");
        assert_eq!(folder_name(""), "server");
    }
}
