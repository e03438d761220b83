//! Checkpoints: the project's files recorded before each turn and around each batch of tool
//! calls that could change them, whoever changes them (rein's own tools, bash, MCP tools),
//! so any turn can be taken back.
//!
//! The record is a private git repository in rein's data folder
//! (`<data>/checkpoints/<name>-<hash>/git`), one per work tree, with its own index over
//! the project's files: content addressing, deduplication and a stat cache come with it, and
//! a checkpoint of an unchanged tree is one `git status`. It records every file git would
//! not ignore (the project's `.gitignore` files, the repository's `info/exclude`, the
//! user's global excludes), tracked or not; outside a git repository the whole folder less
//! [`HEAVY_FOLDERS`]. The user's repository is never written, nor even run: it is read as
//! data (`user_repo.rs`). Nested repositories and submodules are left alone. Files over
//! [`Settings::max_file_bytes`] and untracked folders with more than
//! [`Settings::max_folder_files`] new files are skipped, and said so once ([`Skipped`]).
//! Sandboxed commands cannot write the record: it is outside the project.
//!
//! [`Store::take`] records the tree now (`take.rs`); `restore.rs` puts chosen paths back as
//! a checkpoint had them, leaving any the user changed since; `prune.rs` keeps the record
//! under its quota. The agent decides when (`agent/runloop/checkpoints.rs`) and the session
//! file keeps which checkpoint belongs to which turn (`session::Entry::Checkpoint`).

mod bulk;
pub mod diff;
mod git;
mod lock;
pub mod plan;
mod prune;
mod rel_path;
pub mod restore;
mod take;
mod user_repo;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

pub use diff::{DiffKind, DiffLine, FileDiff, ShortDiff};
pub use plan::{
    CheckpointAt, CheckpointRecord, PathStep, RestoreOrder, Rewind, Seen, TurnCheckpoints, TurnInfo,
};
pub use prune::Maintained;
pub use rel_path::RelPath;
pub use restore::{Outcome, PathReport, RestoreReport};
pub use take::MANY_FILES;

use git::Git;
use user_repo::UserRepo;

/// Folders never recorded outside a git repository (inside one, its ignore files decide).
pub const HEAVY_FOLDERS: &[&str] = &[
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".gradle",
    ".next",
    ".nuxt",
    ".cache",
    ".terraform",
    ".direnv",
    "build",
    "dist",
];

/// `[checkpoints]` in the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub enabled: bool,
    /// Files larger than this are not recorded (listed as skipped).
    pub max_file_bytes: u64,
    /// An untracked folder that brings more new files than this at once is not recorded.
    pub max_folder_files: usize,
    /// The record's size on disk past which the oldest checkpoints are pruned.
    pub quota_bytes: u64,
}

/// `checkpoints.max_file_mib`'s default.
pub const DEFAULT_MAX_FILE_MIB: u64 = 10;
/// `checkpoints.max_folder_files`'s default.
pub const DEFAULT_MAX_FOLDER_FILES: u64 = 10_000;
/// `checkpoints.quota_mib`'s default.
pub const DEFAULT_QUOTA_MIB: u64 = 2048;

const MIB: u64 = 1024 * 1024;

impl Default for Settings {
    fn default() -> Settings {
        Settings::from_config(
            true,
            DEFAULT_MAX_FILE_MIB,
            DEFAULT_MAX_FOLDER_FILES,
            DEFAULT_QUOTA_MIB,
        )
    }
}

impl Settings {
    /// The settings as the config gives them (sizes in MiB).
    pub fn from_config(
        enabled: bool,
        max_file_mib: u64,
        max_folder_files: u64,
        quota_mib: u64,
    ) -> Settings {
        Settings {
            enabled,
            max_file_bytes: max_file_mib.saturating_mul(MIB),
            max_folder_files: usize::try_from(max_folder_files).unwrap_or(usize::MAX),
            quota_bytes: quota_mib.saturating_mul(MIB),
        }
    }
}

/// Why a checkpoint could not be taken or used. Never a failed turn: the agent says it.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("git was not found in the absolute folders of PATH (checkpoints need it)")]
    NoGit,
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("git {command} failed: {message}")]
    Git { command: String, message: String },
    #[error("another rein held the project's checkpoint record for too long")]
    Busy,
    #[error("checkpoint {0} is no longer in the record (pruned to keep it under its quota)")]
    Pruned(String),
    #[error("{} is your home folder or the root, not a project: it is not recorded", .0.display())]
    NotAProject(PathBuf),
}

impl CheckpointError {
    fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError {
        let path = path.to_path_buf();
        move |source| CheckpointError::Io { what, path, source }
    }
}

/// What a checkpoint left out, and why: told once, when first left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Relative to the project (a folder ends in `/`).
    pub path: String,
    #[serde(flatten)]
    pub why: SkipReason,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum SkipReason {
    /// Over the size cap.
    TooBig { bytes: u64 },
    /// An untracked folder that brought this many new files at once.
    TooManyFiles { files: usize },
    /// A repository of its own (a nested repository or a submodule): left alone.
    Repository,
    /// A name that is not UTF-8 (what rein before 0.x did with one; such names are
    /// recorded now, and this reads older session files).
    NotUtf8,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.why {
            SkipReason::TooBig { bytes } => write!(
                f,
                "{} ({:.1} MiB, over the size cap)",
                self.path,
                *bytes as f64 / (1024.0 * 1024.0)
            ),
            SkipReason::TooManyFiles { files } => {
                write!(f, "{} ({files} new files, over the folder cap)", self.path)
            }
            SkipReason::Repository => write!(f, "{} (a repository of its own)", self.path),
            SkipReason::NotUtf8 => write!(f, "{} (a name that is not UTF-8)", self.path),
        }
    }
}

/// One checkpoint just taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taken {
    /// The commit that holds the tree.
    pub commit: String,
    /// Paths (relative to the project) that differ from the checkpoint it was asked to
    /// compare with, sorted.
    pub changed: Vec<RelPath>,
    /// What was left out for the first time.
    pub skipped: Vec<Skipped>,
}

/// A project's record.
#[derive(Debug)]
pub struct Store {
    git: Git,
    /// `<data>/checkpoints/<key>`: the git folder, the lock, the skipped list.
    record: PathBuf,
    /// The project folder.
    root: PathBuf,
    /// The project folder relative to the work tree's top, with a trailing `/` (empty
    /// when it is the top).
    scope: Vec<u8>,
    user: Option<UserRepo>,
    settings: Settings,
    /// The user's index paths, with the index's modification time and length they were
    /// read at.
    tracked: Mutex<Option<TrackedCache>>,
    /// Changes past this many go in as one pack ([`bulk`]); tests lower it.
    bulk_from: usize,
    /// Files to record past which a checkpoint is said first ([`MANY_FILES`]); tests
    /// lower it.
    many_from: usize,
}

type TrackedCache = (std::time::SystemTime, u64, std::sync::Arc<Vec<Vec<u8>>>);

impl Store {
    /// The record of the project at `root` (absolute, canonical) under `data_dir`, made if
    /// it is not there yet.
    pub fn open(
        data_dir: &Path,
        root: &Path,
        settings: Settings,
    ) -> Result<Store, CheckpointError> {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let home = home.and_then(|h| h.canonicalize().ok());
        if root.parent().is_none() || home.as_deref() == Some(root) {
            return Err(CheckpointError::NotAProject(root.to_path_buf()));
        }
        let user = UserRepo::find(root);
        let top = user
            .as_ref()
            .map_or(root, |u| u.top.as_path())
            .to_path_buf();
        let record = record_dir(data_dir, &top);
        crate::host::private_fs::create_dir(&record).map_err(CheckpointError::io(
            "cannot make the checkpoint record",
            &record,
        ))?;
        let _ = crate::host::private_fs::replace(
            &record.join("work-tree"),
            top.as_os_str().as_encoded_bytes(),
        );
        let git = Git::new(&record.join("git"), &top)?;
        {
            let _lock = lock::RecordLock::take(&record)?;
            git.init()?;
        }
        let scope = match root.strip_prefix(&top) {
            Ok(rel) if rel.as_os_str().is_empty() => Vec::new(),
            Ok(rel) => [rel.as_os_str().as_encoded_bytes(), b"/"].concat(),
            Err(_) => Vec::new(),
        };
        Ok(Store {
            git,
            record,
            root: root.to_path_buf(),
            scope,
            user,
            settings,
            tracked: Mutex::new(None),
            bulk_from: take::ADD_BY_NAME,
            many_from: MANY_FILES,
        })
    }

    /// The project folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The record's folder.
    pub fn record(&self) -> &Path {
        &self.record
    }

    /// A path relative to the work tree's top, from one relative to the project.
    fn to_top(&self, path: &RelPath) -> Vec<u8> {
        [self.scope.as_slice(), path.as_bytes()].concat()
    }

    /// A path relative to the project, from one relative to the work tree's top (`None`:
    /// outside the project).
    fn project_path(&self, path: &[u8]) -> Option<RelPath> {
        path.strip_prefix(self.scope.as_slice())
            .map(|p| RelPath::from_bytes(p.to_vec()))
    }

    /// The pathspec of the whole project, for git commands run at the top.
    fn scope_spec(&self) -> &std::ffi::OsStr {
        use std::os::unix::ffi::OsStrExt;
        if self.scope.is_empty() {
            std::ffi::OsStr::new(".")
        } else {
            std::ffi::OsStr::from_bytes(&self.scope)
        }
    }

    /// The user's tracked paths (sorted), read again only when the index changed.
    fn user_tracked(&self) -> Option<std::sync::Arc<Vec<Vec<u8>>>> {
        let user = self.user.as_ref()?;
        let meta = std::fs::metadata(user.git_dir.join("index")).ok()?;
        let stamp = (meta.modified().ok()?, meta.len());
        let mut cache = self.tracked.lock().ok()?;
        if let Some((time, len, paths)) = cache.as_ref() {
            if (*time, *len) == stamp {
                return Some(paths.clone());
            }
        }
        let paths = std::sync::Arc::new(user.tracked()?);
        *cache = Some((stamp.0, stamp.1, paths.clone()));
        Some(paths)
    }
}

/// The record's folder for the work tree at `top`: its last name and a hash of the whole
/// path (FNV-1a, the same in every rein version), so two projects never share one.
pub fn record_dir(data_dir: &Path, top: &Path) -> PathBuf {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in top.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let name: String = top
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "root".to_string())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    data_dir
        .join("checkpoints")
        .join(format!("{name}-{hash:016x}"))
}

#[cfg(test)]
mod tests;
