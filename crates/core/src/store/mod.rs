//! rein's own records in its data folder, kept as JSON: the one way they are read, updated
//! and written.
//!
//! Each record is one file, the user's alone: the MCP servers and project hooks the user
//! approved (`trust`), the tools allowed for a project (`allowed_tools`), the folders rein
//! ran in and the project configs the user confirmed (`config::planted`), the host-tool
//! files as the user last saw them (`host_tools`), a project's guidance files at its last
//! start (`guidance`). A [`JsonStore`] names the file, the most bytes it may hold and what
//! it is, in words. Reading is bounded (`safe_fs::read_small_text`: a regular file of at
//! most that many bytes, UTF-8); writing replaces the file by rename, 0600 from the moment
//! it exists, never through a link (`private_fs::replace`). [`JsonStore::update`] reads,
//! changes and writes under an exclusive lock on the data folder (`flock`), so two reins
//! recording at once both keep what they recorded; an update that changes nothing writes
//! nothing.
//!
//! **A file rein cannot read is reported, never emptied or overwritten.** A missing file is
//! an empty record. Anything else that cannot be read (not JSON of the record's form,
//! larger than its bound, not a regular file, not readable) is a [`StoreError`] naming the
//! file and what is wrong: each caller says it once and takes the side that asks the user
//! again, never the side that approves more (no approval, no allow, a project config held,
//! every host-tool file there a change). An update of such a file is refused with the same
//! error, and the file is left as it is: nothing is recorded in it until the user repairs it
//! or moves it aside, as the error says (`mv FILE FILE.bad`; rein then starts a new one).

use std::fs::File;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;

#[cfg(test)]
mod tests;

/// One JSON record of rein's own: where it lives, how large it may grow, what it is.
#[derive(Debug, Clone, Default)]
pub struct JsonStore {
    path: PathBuf,
    max_bytes: u64,
    /// What the file holds, for the user: "rein's record of the MCP servers you approved".
    what: &'static str,
}

/// Why a record could not be read or written. Its words name the file and, for a file
/// rein cannot read, how to get going again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// The file is there but cannot be read: too large, not a regular file, not UTF-8, no
    /// permission.
    Unreadable { path: PathBuf, problem: String },
    /// The file was read but is not the record's JSON.
    Damaged {
        path: PathBuf,
        what: &'static str,
        problem: String,
    },
    /// The new record could not be written (the old one is as it was).
    Unwritable { path: PathBuf, problem: String },
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (path, what) = match self {
            StoreError::Unwritable { path, problem } => {
                return write!(f, "{} cannot be written ({problem})", path.display());
            }
            StoreError::Unreadable { path, problem } => {
                (path, format!("cannot be read ({problem})"))
            }
            StoreError::Damaged {
                path,
                what,
                problem,
            } => (path, format!("is not {what} ({problem})")),
        };
        let path = path.display();
        write!(
            f,
            "{path} {what}; rein leaves it as it is and records nothing in it until you repair \
             it or move it aside (`mv '{path}' '{path}.bad'`)"
        )
    }
}

impl std::error::Error for StoreError {}

impl From<StoreError> for io::Error {
    fn from(e: StoreError) -> io::Error {
        io::Error::other(e.to_string())
    }
}

impl JsonStore {
    /// The record `name` in the data folder `data_dir`, of at most `max_bytes`, holding
    /// `what` (words that follow "is not": "rein's list of allowed tools").
    pub fn new(data_dir: &Path, name: &str, max_bytes: u64, what: &'static str) -> JsonStore {
        JsonStore {
            path: data_dir.join(name),
            max_bytes,
            what,
        }
    }

    /// Where the record lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The record as it is on disk: the default when the file is missing, an error that
    /// names the file when it cannot be read (see the module doc).
    pub fn read<T: DeserializeOwned + Default>(&self) -> Result<T, StoreError> {
        let text = match crate::host::safe_fs::read_small_text(&self.path, self.max_bytes) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(T::default()),
            Err(e) => {
                return Err(StoreError::Unreadable {
                    path: self.path.clone(),
                    problem: e.to_string(),
                })
            }
        };
        serde_json::from_str(&text).map_err(|e| StoreError::Damaged {
            path: self.path.clone(),
            what: self.what,
            problem: e.to_string(),
        })
    }

    /// Put `record` in the file whole (0600, by rename, never through a link). For a
    /// record read just before, by a caller that alone writes it; [`update`](Self::update)
    /// otherwise.
    pub fn write<T: Serialize>(&self, record: &T) -> Result<(), StoreError> {
        let unwritable = |problem: String| StoreError::Unwritable {
            path: self.path.clone(),
            problem,
        };
        let text = serde_json::to_string_pretty(record).map_err(|e| unwritable(e.to_string()))?;
        crate::host::private_fs::replace(&self.path, text.as_bytes())
            .map_err(|e| unwritable(e.to_string()))
    }

    /// Read the record, let `change` change it, and write it back when it changed, all
    /// under the data folder's lock; what `change` returns. A file that cannot be read is
    /// left as it is and the update refused (the module doc).
    pub fn update<T, R>(&self, change: impl FnOnce(&mut T) -> R) -> Result<R, StoreError>
    where
        T: DeserializeOwned + Serialize + Default,
    {
        let _lock = self.lock()?;
        let mut record: T = self.read()?;
        let before = serde_json::to_value(&record).ok();
        let out = change(&mut record);
        let after = serde_json::to_value(&record).ok();
        if before.is_none() || before != after {
            self.write(&record)?;
        }
        Ok(out)
    }

    /// An exclusive lock on the folder the record lives in (made 0700 when missing), held
    /// until the file it returns is dropped. Where the file system takes no locks, none.
    fn lock(&self) -> Result<Option<File>, StoreError> {
        let folder = self
            .path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let unwritable = |e: io::Error| StoreError::Unwritable {
            path: self.path.clone(),
            problem: e.to_string(),
        };
        crate::host::private_fs::create_dir(folder).map_err(unwritable)?;
        let dir = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(folder)
            .map_err(unwritable)?;
        loop {
            // SAFETY: flock on a descriptor this function owns; no memory is passed.
            let got = unsafe { libc::flock(dir.as_raw_fd(), libc::LOCK_EX) };
            if got == 0 {
                return Ok(Some(dir));
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                // A file system without locks: the rename still keeps the file whole.
                Some(libc::ENOLCK) | Some(libc::EOPNOTSUPP) => return Ok(None),
                _ => return Err(unwritable(e)),
            }
        }
    }
}
