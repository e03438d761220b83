//! What the record reads of the user's own repository, as data and without running git
//! on it (a project's `.git/config` can name programs, and the record never runs them):
//! where it is, its `info/exclude`, and the paths its index tracks.
//!
//! The index is read for one question only: does the user's repository track any file
//! under a folder (an untracked folder is one it does not, as `git status` shows it
//! whole). Versions 2, 3 and 4 of the index format are read (a sparse index's folder
//! entry tracks what is under it); an index rein cannot read (split, another hash,
//! damaged) is as if the repository tracked everything, so the folder cap never skips
//! what the user may track.

use std::path::{Path, PathBuf};

/// The user's repository around the project, found by walking up from it.
#[derive(Debug, Clone)]
pub(crate) struct UserRepo {
    /// The work tree's top: the folder holding `.git`.
    pub top: PathBuf,
    /// The repository's own folder (`.git`, or where a `.git` file points).
    pub git_dir: PathBuf,
    /// The folder shared by all its worktrees (`info/exclude` lives there).
    pub common_dir: PathBuf,
}

impl UserRepo {
    /// The repository `root` is in, if any.
    pub(crate) fn find(root: &Path) -> Option<UserRepo> {
        let mut dir = Some(root);
        while let Some(d) = dir {
            let dot_git = d.join(".git");
            if let Ok(meta) = std::fs::symlink_metadata(&dot_git) {
                if meta.is_dir() {
                    return Some(UserRepo {
                        top: d.to_path_buf(),
                        git_dir: dot_git.clone(),
                        common_dir: dot_git,
                    });
                }
                if meta.is_file() {
                    // Bounded, regular files only: a crafted `.git` file may point at a
                    // folder whose `commondir` is a named pipe or a link to a device.
                    let git_dir = crate::host::git_pointer::gitdir_of(&dot_git)?;
                    let common_dir = crate::host::git_pointer::common_dir(&git_dir)
                        .unwrap_or_else(|| git_dir.clone());
                    return Some(UserRepo {
                        top: d.to_path_buf(),
                        git_dir,
                        common_dir,
                    });
                }
            }
            dir = d.parent();
        }
        None
    }

    /// The repository's `info/exclude` (at most 1 MiB of it), or nothing.
    pub(crate) fn info_exclude(&self) -> String {
        crate::host::safe_fs::read_small_text(&self.common_dir.join("info/exclude"), 1 << 20)
            .unwrap_or_default()
    }

    /// The paths the repository's index tracks, sorted; `None` when it cannot be read.
    pub(crate) fn tracked(&self) -> Option<Vec<Vec<u8>>> {
        let bytes = read_regular(&self.git_dir.join("index"), MAX_INDEX_BYTES)?;
        let mut paths = parse_index(&bytes)?;
        paths.sort();
        Some(paths)
    }
}

/// The most bytes of an index read (a larger one is as if it could not be read).
const MAX_INDEX_BYTES: u64 = 512 * 1024 * 1024;

/// The bytes of the regular file at `path`, at most `max`: `None` when it is not one (a
/// named pipe is opened without blocking and never read), is larger, or cannot be read.
fn read_regular(path: &Path, max: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= max).then_some(bytes)
}

/// Whether `tracked` (sorted) holds a path under folder `dir` (no trailing slash).
pub(crate) fn tracks_under(tracked: &[Vec<u8>], dir: &[u8]) -> bool {
    let mut prefix = dir.to_vec();
    prefix.push(b'/');
    let at = tracked.partition_point(|p| p.as_slice() < prefix.as_slice());
    tracked.get(at).is_some_and(|p| p.starts_with(&prefix))
}

/// The paths of a git index file (format versions 2 to 4, SHA-1), or `None`.
fn parse_index(bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
    let header = bytes.get(..12)?;
    if &header[..4] != b"DIRC" {
        return None;
    }
    let version = u32::from_be_bytes(header[4..8].try_into().ok()?);
    let count = u32::from_be_bytes(header[8..12].try_into().ok()?) as usize;
    if !(2..=4).contains(&version) {
        return None;
    }
    const FIXED: usize = 62; // times, dev, ino, mode, ids, size, SHA-1, flags
    let mut paths: Vec<Vec<u8>> = Vec::with_capacity(count.min(1 << 20));
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let flags = u16::from_be_bytes(bytes.get(at + 60..at + 62)?.try_into().ok()?);
        at += FIXED;
        if flags & 0x4000 != 0 {
            if version < 3 {
                return None;
            }
            let extended = u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?);
            // Skip-worktree and intent-to-add are still tracked paths (a sparse index's
            // folder entry `dir/` counts as tracking under `dir`); anything else: give up.
            if extended & !0x6000 != 0 {
                return None;
            }
            at += 2;
        }
        let path = if version == 4 {
            let (strip, used) = varint(bytes.get(at..)?)?;
            at += used;
            let end = at + bytes.get(at..)?.iter().position(|&b| b == 0)?;
            let keep = previous.len().checked_sub(strip)?;
            let mut path = previous[..keep].to_vec();
            path.extend_from_slice(&bytes[at..end]);
            at = end + 1;
            path
        } else {
            let end = at + bytes.get(at..)?.iter().position(|&b| b == 0)?;
            let path = bytes[at..end].to_vec();
            // Entries are padded with NULs to a multiple of eight bytes.
            let len = end + 1 - start;
            at = start + len.div_ceil(8) * 8;
            path
        };
        if path.is_empty() {
            return None;
        }
        previous.clone_from(&path);
        paths.push(path);
    }
    Some(paths)
}

/// Git's offset varint (index version 4): the value and the bytes it took.
fn varint(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut value: usize = 0;
    for (i, &b) in bytes.iter().enumerate().take(9) {
        if i > 0 {
            value = value.checked_add(1)?.checked_shl(7)?;
        }
        value |= usize::from(b & 0x7f);
        if b & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let status = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(status.status.success(), "{status:?}");
    }

    /// The index git itself writes, in each version, reads back as `git ls-files` lists it.
    #[test]
    fn every_index_version_git_writes_reads_back() {
        for version in ["2", "3", "4"] {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            git(root, &["init", "-q"]);
            for path in [
                "a.txt",
                "src/lib.rs",
                "src/long/deeper/name.rs",
                "src/lo.rs",
                "z",
            ] {
                let full = root.join(path);
                std::fs::create_dir_all(full.parent().unwrap()).unwrap();
                std::fs::write(full, path).unwrap();
            }
            std::fs::write(root.join("untracked.txt"), "u").unwrap();
            git(root, &["add", "a.txt", "src", "z"]);
            // An intent-to-add entry has an extended flag (version 3).
            std::fs::write(root.join("later.txt"), "l").unwrap();
            git(root, &["add", "-N", "later.txt"]);
            git(root, &["update-index", "--index-version", version]);
            let repo = UserRepo::find(&root.join("src/long")).unwrap();
            assert_eq!(repo.top, root);
            let tracked = repo.tracked().expect(version);
            let names: Vec<String> = tracked
                .iter()
                .map(|p| String::from_utf8_lossy(p).to_string())
                .collect();
            assert_eq!(
                names,
                [
                    "a.txt",
                    "later.txt",
                    "src/lib.rs",
                    "src/lo.rs",
                    "src/long/deeper/name.rs",
                    "z"
                ],
                "version {version}"
            );
            assert!(tracks_under(&tracked, b"src"));
            assert!(tracks_under(&tracked, b"src/long"));
            assert!(!tracks_under(&tracked, b"sr"));
            assert!(!tracks_under(&tracked, b"src/lon"));
            assert!(!tracks_under(&tracked, b"a.txt"));
        }
    }

    /// A big repository's index (here 12,000 files, over 2 MiB in version 2) is read
    /// whole, in version 4 too (where a path drops more than 127 bytes of the one before).
    #[test]
    fn the_index_of_a_big_repository_is_read() {
        use std::io::Write;
        let long = "n".repeat(150);
        let paths: Vec<String> = (0..12_000)
            .map(|i| format!("dir{:02}/{long}{i:05}", i / 1000))
            .collect();
        for version in ["2", "4"] {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            git(root, &["init", "-q"]);
            let empty = "e69de29bb2d1d6434b8b29ae77ad084e3c1a1f8a";
            let info: String = paths
                .iter()
                .map(|p| format!("100644 {empty}\t{p}\n"))
                .collect();
            let mut child = Command::new("git")
                .args(["update-index", "--index-info"])
                .current_dir(root)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .stdin(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(info.as_bytes())
                .unwrap();
            assert!(child.wait().unwrap().success());
            git(root, &["update-index", "--index-version", version]);
            if version == "2" {
                assert!(std::fs::metadata(root.join(".git/index")).unwrap().len() > 2 << 20);
            }
            let tracked = UserRepo::find(root).unwrap().tracked().expect(version);
            assert!(
                tracked
                    .iter()
                    .map(Vec::as_slice)
                    .eq(paths.iter().map(String::as_bytes)),
                "version {version}"
            );
            assert!(tracks_under(&tracked, b"dir07"));
        }
    }

    /// A file is read whole up to its limit; one byte more and it is not read at all.
    #[test]
    fn a_file_over_the_limit_is_not_read_and_one_at_it_is_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index");
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(read_regular(&path, 10).as_deref(), Some(&b"0123456789"[..]));
        assert_eq!(read_regular(&path, 9), None);
        assert_eq!(read_regular(dir.path(), 10), None, "a folder is no file");
    }

    /// A sparse index keeps a folder outside the sparse checkout as one entry (`b/`): the
    /// repository tracks what is under that folder.
    #[test]
    fn a_sparse_index_tracks_under_its_folder_entries() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        for path in ["a/x", "b/c/y", "top"] {
            let full = root.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, path).unwrap();
        }
        git(root, &["add", "-A"]);
        git(
            root,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "x",
            ],
        );
        git(
            root,
            &["sparse-checkout", "init", "--cone", "--sparse-index"],
        );
        git(root, &["sparse-checkout", "set", "a"]);
        let tracked = UserRepo::find(root).unwrap().tracked().expect("read");
        assert_eq!(tracked, [&b"a/x"[..], b"b/", b"top"]);
        assert!(tracks_under(&tracked, b"b"));
        assert!(tracks_under(&tracked, b"a"));
        assert!(!tracks_under(&tracked, b"top"));
    }

    #[test]
    fn a_damaged_index_is_unreadable_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        std::fs::write(root.join("a"), "a").unwrap();
        git(root, &["add", "a"]);
        let index = std::fs::read(root.join(".git/index")).unwrap();
        for cut in 0..index.len() {
            let _ = parse_index(&index[..cut]);
        }
        let mut bad = index.clone();
        bad[3] = b'X';
        assert_eq!(parse_index(&bad), None);
    }

    #[test]
    fn worktrees_find_their_common_folder() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("main");
        std::fs::create_dir(&root).unwrap();
        git(&root, &["init", "-q"]);
        std::fs::write(root.join("a"), "a").unwrap();
        git(&root, &["add", "a"]);
        git(
            &root,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "a",
            ],
        );
        let other = dir.path().join("other");
        git(&root, &["worktree", "add", "-q", other.to_str().unwrap()]);
        std::fs::write(root.join(".git/info/exclude"), "*.log\n").unwrap();
        let repo = UserRepo::find(&other).unwrap();
        assert_eq!(repo.top, other);
        assert_eq!(
            repo.common_dir.canonicalize().unwrap(),
            root.join(".git").canonicalize().unwrap()
        );
        assert_eq!(repo.info_exclude(), "*.log\n");
        assert!(repo.tracked().unwrap().contains(&b"a".to_vec()));
    }
}
