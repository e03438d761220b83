//! An `ignore` walk a hostile tree cannot hang or exhaust.
//!
//! ripgrep's walker reads every folder's `.gitignore`, `.ignore` and `.rgignore`, a
//! repository's `info/exclude` (through a `.git` pointer file and its `commondir` when the
//! `.git` is a file), and those of the folders above the walk's root, each whole and
//! following links: a `.gitignore` that is a link to `/dev/zero` grows without end until
//! rein runs out of memory, one that is a named pipe nobody writes blocks it for ever. A
//! cloned repository, or a command the model ran, can put either there. So [`guard`] looks
//! at those files first, as the walker would find them (links followed, without opening
//! anything that is not a regular file): a folder below the root whose files are not
//! regular files of at most [`MAX_IGNORE_BYTES`] is not entered, and when the root's or a
//! folder's above it are not, the walk reads no ignore file at all. Either way the flag
//! it returns is set, so a caller that must see everything (the permission checker) can
//! say it could not.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The largest ignore file a walk reads.
pub const MAX_IGNORE_BYTES: u64 = 1024 * 1024;

/// The ignore files of a folder the walker reads by name.
const NAMES: &[&str] = &[".gitignore", ".ignore", ".rgignore"];

/// Keep `builder`'s walk of `root` off ignore files it must not read (see the module doc),
/// with `also` as the walk's own entry filter. The flag is set when some folder's files
/// were left unread (its folder not entered, or no ignore file read at all).
pub fn guard(
    builder: &mut ignore::WalkBuilder,
    root: &Path,
    also: impl Fn(&ignore::DirEntry) -> bool + Send + Sync + 'static,
) -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    if !root.ancestors().all(readable) {
        flag.store(true, Ordering::Relaxed);
        builder
            .parents(false)
            .ignore(false)
            .git_ignore(false)
            .git_exclude(false);
    }
    let seen = flag.clone();
    builder.filter_entry(move |entry| {
        if !also(entry) {
            return false;
        }
        let folder = entry.depth() > 0 && entry.file_type().is_some_and(|t| t.is_dir());
        if folder && !readable(entry.path()) {
            seen.store(true, Ordering::Relaxed);
            return false;
        }
        true
    });
    flag
}

/// Whether every ignore file the walker would read for `dir` is absent or a regular file
/// of at most [`MAX_IGNORE_BYTES`] (a link is judged by what it leads to).
pub fn readable(dir: &Path) -> bool {
    NAMES.iter().all(|name| small_or_absent(&dir.join(name)))
        && git_files(dir).iter().all(|f| small_or_absent(f))
}

fn small_or_absent(path: &Path) -> bool {
    match std::fs::metadata(path) {
        Ok(meta) => meta.is_file() && meta.len() <= MAX_IGNORE_BYTES,
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

/// The files of `dir`'s repository the walker reads besides its ignore files: the `.git`
/// pointer file and `commondir` when `.git` is a file, and `info/exclude`. A `.git` that
/// is neither a folder nor a readable pointer gives a path that fails the check.
fn git_files(dir: &Path) -> Vec<PathBuf> {
    let git = dir.join(".git");
    let Ok(meta) = std::fs::metadata(&git) else {
        return Vec::new();
    };
    if meta.is_dir() {
        return vec![git.join("info/exclude")];
    }
    if !small_or_absent(&git) {
        return vec![git];
    }
    let Some(target) = crate::host::git_pointer::gitdir_of(&git) else {
        return Vec::new();
    };
    let common = target.join("commondir");
    let mut out = vec![common.clone(), target.join("info/exclude")];
    if small_or_absent(&common) {
        if let Some(shared) = crate::host::git_pointer::common_dir(&target) {
            out.push(shared.join("info/exclude"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fifo(path: &Path) {
        let made = std::process::Command::new("mkfifo").arg(path).status();
        assert!(made.unwrap().success());
    }

    /// The test finishing is half the assertion: a pipe nobody writes and a link to
    /// `/dev/zero` among the ignore files are never opened.
    #[test]
    fn hostile_ignore_files_are_never_read_and_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for sub in ["ok", "zero", "pipe", "pointer", "deep/er"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
            std::fs::write(root.join(sub).join("f.rs"), "x").unwrap();
        }
        std::fs::write(root.join("ok/.gitignore"), "*.log\n").unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join("zero/.gitignore")).unwrap();
        fifo(&root.join("pipe/.ignore"));
        std::fs::write(root.join("pointer/.git"), "gitdir: gd\n").unwrap();
        std::fs::create_dir(root.join("pointer/gd")).unwrap();
        fifo(&root.join("pointer/gd/commondir"));
        let mut builder = ignore::WalkBuilder::new(root);
        builder.hidden(false).require_git(false);
        let flag = guard(&mut builder, root, |_| true);
        let mut found: Vec<String> = builder
            .build()
            .flatten()
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .map(|e| e.path().strip_prefix(root).unwrap().display().to_string())
            .collect();
        found.sort();
        assert_eq!(found, ["deep/er/f.rs", "ok/.gitignore", "ok/f.rs"]);
        assert!(flag.load(Ordering::Relaxed));

        // A root whose own ignore file cannot be read: walked without any ignore file.
        let hostile = root.join("zero");
        let mut builder = ignore::WalkBuilder::new(&hostile);
        let flag = guard(&mut builder, &hostile, |_| true);
        assert_eq!(builder.build().flatten().count(), 2, "the folder and f.rs");
        assert!(flag.load(Ordering::Relaxed));

        // A tidy tree sets nothing.
        let mut builder = ignore::WalkBuilder::new(root.join("ok"));
        let flag = guard(&mut builder, &root.join("ok"), |_| true);
        assert_eq!(builder.build().flatten().count(), 2);
        assert!(!flag.load(Ordering::Relaxed));
    }
}
