//! One rein at a time in a project's record: an exclusive `flock` on `<record>/lock`,
//! which the kernel lets go when the holder exits, killed or not. Whoever takes it next
//! clears the lock files a killed git left behind (`index.lock` and the like): under this
//! lock nobody else can be running git on the record.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::{Duration, Instant};

use super::CheckpointError;

/// How long a checkpoint waits for another rein's before giving up (a notice, not a
/// failed turn).
const WAIT: Duration = Duration::from_secs(20);

/// The held lock: let go when dropped.
#[derive(Debug)]
pub(crate) struct RecordLock {
    _file: File,
}

/// Lock files git leaves when it is killed mid-write.
const STALE: [&str; 5] = [
    "index.lock",
    "HEAD.lock",
    "packed-refs.lock",
    "config.lock",
    "shallow.lock",
];

impl RecordLock {
    /// Take the lock of the record at `record` (its git folder is `record/git`).
    pub(crate) fn take(record: &Path) -> Result<RecordLock, CheckpointError> {
        RecordLock::take_within(record, WAIT)
    }

    /// [`RecordLock::take`], giving up after `wait`.
    fn take_within(record: &Path, wait: Duration) -> Result<RecordLock, CheckpointError> {
        let path = record.join("lock");
        let file = crate::host::private_fs::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(CheckpointError::io(
                "cannot open the checkpoint record's lock",
                &path,
            ))?;
        let started = Instant::now();
        loop {
            // SAFETY: a valid descriptor owned by `file`.
            let got = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if got == 0 {
                break;
            }
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(CheckpointError::io(
                    "cannot lock the checkpoint record",
                    &path,
                )(e));
            }
            if started.elapsed() > wait {
                return Err(CheckpointError::Busy);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let git = record.join("git");
        for name in STALE {
            let _ = std::fs::remove_file(git.join(name));
        }
        Ok(RecordLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rein waits while another holds the record, and says so once it gave up; the
    /// holder's stale git lock files are cleared only for whoever takes it next.
    #[test]
    fn a_held_record_is_waited_for_then_busy() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().to_path_buf();
        std::fs::create_dir_all(record.join("git")).unwrap();
        let held = RecordLock::take(&record).unwrap();
        std::fs::write(record.join("git/index.lock"), "").unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let other = record.clone();
        std::thread::spawn(move || {
            let _ = tx.send(RecordLock::take_within(&other, Duration::from_millis(100)));
        });
        // Far more than the 100 ms it waits: a contender that never gives up fails here.
        let answer = rx.recv_timeout(Duration::from_secs(20)).unwrap();
        assert!(matches!(answer, Err(CheckpointError::Busy)), "{answer:?}");
        assert!(record.join("git/index.lock").exists());
        drop(held);
        let _next = RecordLock::take(&record).unwrap();
        assert!(!record.join("git/index.lock").exists());
    }
}
