//! One writer per session file.
//!
//! Two rein processes appending to one session interleave their entries, and the next
//! resume reads a history in which one turn's tool results belong to the other: the model
//! is then told those calls were not run. So a [`super::SessionWriter`] holds an advisory
//! lock (`flock`, exclusive) on the session file for as long as it lives, and writes its
//! process id into `<id>.lock` beside it so that a second process can say who has it. The
//! lock, not the pid file, decides: the kernel drops the lock when the holder exits, even by
//! `SIGKILL`, and a pid file left behind by a killed process is only overwritten by the next
//! holder.
//!
//! The lock is taken on an open file description, so a second open of the same file in
//! the same process contends too: an agent has to have ended before another can go on
//! with its session.

use std::fmt;
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long to keep trying when the lock is taken: long enough to ride out a probe by a
/// listing in another process, short enough to answer at once when the session is open.
const WAIT: Duration = Duration::from_millis(300);

/// The session is being written by another rein (or another agent of this one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InUse {
    pub id: String,
    /// The process that holds it, when its pid file says.
    pub pid: Option<u32>,
}

impl fmt::Display for InUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pid {
            Some(pid) => write!(f, "session {} is open in rein pid {pid}", self.id),
            None => write!(f, "session {} is open in another rein process", self.id),
        }
    }
}

impl std::error::Error for InUse {}

/// The [`InUse`] inside an error from opening a session for writing, if that is what it
/// is.
pub fn in_use(error: &io::Error) -> Option<&InUse> {
    error.get_ref()?.downcast_ref::<InUse>()
}

/// The pid file that goes with the session file at `session`.
pub fn pid_path(session: &Path) -> PathBuf {
    session.with_extension("lock")
}

fn session_id(session: &Path) -> String {
    session
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn read_pid(session: &Path) -> Option<u32> {
    let text = fs::read_to_string(pid_path(session)).ok()?;
    text.trim().parse().ok()
}

/// Take the exclusive lock on `file` (the session file at `path`) and record this
/// process's pid. Fails with an [`InUse`] error (kind `ResourceBusy`) when another writer
/// keeps it past the wait.
pub(super) fn acquire(file: &File, path: &Path) -> io::Result<()> {
    let start = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(TryLockError::Error(e)) if e.kind() == io::ErrorKind::Unsupported => {
                // A filesystem without locks (some network mounts): write unguarded
                // rather than not at all.
                return Ok(());
            }
            Err(TryLockError::Error(e)) => return Err(e),
            Err(TryLockError::WouldBlock) => {
                let pid = read_pid(path);
                if start.elapsed() >= WAIT {
                    return Err(io::Error::new(
                        io::ErrorKind::ResourceBusy,
                        InUse {
                            id: session_id(path),
                            pid,
                        },
                    ));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
    // Informational only: a failure to write it costs the other process the pid in its
    // message, nothing more.
    let _ = crate::host::private_fs::replace(
        &pid_path(path),
        format!("{}\n", std::process::id()).as_bytes(),
    );
    Ok(())
}

/// Forget the pid file of a writer that is letting go (its lock goes with the file).
pub(super) fn release(path: &Path) {
    if read_pid(path) == Some(std::process::id()) {
        let _ = fs::remove_file(pid_path(path));
    }
}

/// A writer that has a session open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holder {
    /// Its process, as its pid file says (`None` when the file is gone or unreadable).
    pub pid: Option<u32>,
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pid {
            Some(pid) => write!(f, "open in rein pid {pid}"),
            None => write!(f, "open in another rein"),
        }
    }
}

/// Who is writing the session file at `path` right now, if anyone. Never blocks; the
/// probe holds a shared lock for a moment, which a writer starting at that instant rides
/// out (see `WAIT`).
pub fn holder(path: &Path) -> Option<Holder> {
    let file = OpenOptions::new().read(true).open(path).ok()?;
    match file.try_lock_shared() {
        Ok(()) => None,
        Err(TryLockError::WouldBlock) => Some(Holder {
            pid: read_pid(path),
        }),
        Err(TryLockError::Error(_)) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_writer_is_told_who_has_it_and_gets_it_once_let_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("abc.jsonl");
        fs::write(&path, "").unwrap();
        let first = OpenOptions::new().append(true).open(&path).unwrap();
        acquire(&first, &path).unwrap();
        assert_eq!(
            holder(&path),
            Some(Holder {
                pid: Some(std::process::id())
            })
        );
        // Whoever holds it, the pid file names them.
        fs::write(pid_path(&path), "999999999\n").unwrap();
        let second = OpenOptions::new().append(true).open(&path).unwrap();
        let err = acquire(&second, &path).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ResourceBusy);
        assert_eq!(
            in_use(&err),
            Some(&InUse {
                id: "abc".into(),
                pid: Some(999_999_999)
            })
        );
        assert_eq!(err.to_string(), "session abc is open in rein pid 999999999");
        drop(first);
        // A process another test forks at this moment shares the descriptor until it
        // execs (the file is close-on-exec), so the lock may linger for an instant.
        let deadline = Instant::now() + Duration::from_secs(5);
        while holder(&path).is_some() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(holder(&path), None);
        acquire(&second, &path).unwrap();
        release(&path);
        assert!(!pid_path(&path).exists());
    }
}
