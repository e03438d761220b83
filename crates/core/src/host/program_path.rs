//! Finding a program rein starts outside the sandbox (an MCP server, git for the
//! checkpoints) by name: in the *absolute* folders of `PATH` only. An empty entry, `.` or a
//! relative one is the working folder of whoever looks a name up, which for rein is often
//! the project, and a cloned project must not be able to put a program there that rein
//! then runs.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// The absolute entries of a `PATH` value, in order.
pub fn absolute_entries(path: &OsStr) -> OsString {
    let kept: Vec<PathBuf> = std::env::split_paths(path)
        .filter(|p| p.is_absolute())
        .collect();
    std::env::join_paths(kept).unwrap_or_default()
}

/// `name` in the absolute folders of `path`: the first executable file.
pub fn lookup(name: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn only_absolute_folders_are_searched() {
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "x").unwrap();
        let path = std::env::join_paths([Path::new("."), Path::new(""), dir.path()]).unwrap();
        assert_eq!(lookup("tool", Some(&path)), Some(tool));
        // Not executable, or not there: not found.
        assert_eq!(lookup("plain", Some(&path)), None);
        assert_eq!(lookup("tool", None), None);
        let relative = std::env::join_paths([Path::new("rel"), Path::new(".")]).unwrap();
        assert_eq!(absolute_entries(&path), dir.path().as_os_str());
        assert_eq!(absolute_entries(&relative), OsString::new());
    }
}
