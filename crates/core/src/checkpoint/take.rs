//! Taking a checkpoint: what changed since the record's last one (one `git status` over
//! the project, which for an unchanged tree is all it costs), what to leave out of it, and
//! the new tree recorded as a commit that a ref keeps (`refs/rein/<commit>`).
//!
//! Left out, once and then for good (their patterns go to the record's `info/exclude`,
//! kept in `<record>/skipped`): a repository of its own, a file over the size cap, an
//! untracked folder (one the user's repository tracks nothing under; outside a repository,
//! a top-level folder) that brings more new files at once than the folder cap. A name is
//! bytes from end to end (`-z` lists, [`RelPath`]): one that is not UTF-8, or holds a
//! newline, a tab, quotes or a backslash, is recorded like any other. A recorded file that
//! grows over the cap leaves the record.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use super::user_repo::tracks_under;
use super::{CheckpointError, RelPath, SkipReason, Skipped, Store, Taken, HEAVY_FOLDERS};

/// Changes up to this many are added by name; more go in as one pack ([`super::bulk`]).
pub(super) const ADD_BY_NAME: usize = 1000;

/// New or changed files past which a checkpoint is said before it records them (a
/// project's first checkpoint records every file): about a second's work.
pub const MANY_FILES: usize = 10_000;

/// What `git status` said changed since the record's index.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Status {
    /// Recorded paths that changed or went away (top-relative).
    pub tracked: Vec<Vec<u8>>,
    /// Paths not recorded yet; a folder (ending in `/`) is a repository of its own.
    pub untracked: Vec<Vec<u8>>,
}

/// Read `git status --porcelain=v2 -z` output.
pub(super) fn parse_status(out: &[u8]) -> Status {
    let mut status = Status::default();
    let mut items = out.split(|&b| b == 0).peekable();
    while let Some(item) = items.next() {
        let fields = |n: usize| {
            item.splitn(n, |&b| b == b' ')
                .nth(n - 1)
                .map(<[u8]>::to_vec)
        };
        match item.first() {
            Some(b'1') => status.tracked.extend(fields(9)),
            Some(b'2') => {
                status.tracked.extend(fields(10));
                // The original path follows as its own item.
                if let Some(orig) = items.next() {
                    status.tracked.push(orig.to_vec());
                }
            }
            Some(b'u') => status.tracked.extend(fields(11)),
            Some(b'?') => status.untracked.extend(item.get(2..).map(<[u8]>::to_vec)),
            _ => {}
        }
    }
    status
}

/// `path` as an `info/exclude` pattern that matches exactly it, anchored at the top (a
/// folder gets its trailing `/`).
pub(super) fn literal_pattern(path: &[u8], folder: bool) -> Vec<u8> {
    let mut out = vec![b'/'];
    let trailing_spaces = path.iter().rev().take_while(|&&b| b == b' ').count();
    for (i, &b) in path.iter().enumerate() {
        if matches!(b, b'\\' | b'*' | b'?' | b'[') || i >= path.len() - trailing_spaces {
            out.push(b'\\');
        }
        out.push(b);
    }
    if folder {
        out.push(b'/');
    }
    out
}

impl Store {
    /// Record the project's files now. `since`: a checkpoint to list the changed paths
    /// against (the caller's previous one).
    pub fn take(&self, since: Option<&str>) -> Result<Taken, CheckpointError> {
        self.take_noting(since, &mut |_| {})
    }

    /// [`Store::take`], calling `many` with the number of files to record first when they
    /// are more than [`MANY_FILES`] (so the caller can say a slow checkpoint is coming).
    pub fn take_noting(
        &self,
        since: Option<&str>,
        many: &mut dyn FnMut(usize),
    ) -> Result<Taken, CheckpointError> {
        let _lock = super::lock::RecordLock::take(&self.record)?;
        self.take_locked_noting(since, many)
    }

    pub(super) fn take_locked(&self, since: Option<&str>) -> Result<Taken, CheckpointError> {
        self.take_locked_noting(since, &mut |_| {})
    }

    fn take_locked_noting(
        &self,
        since: Option<&str>,
        many: &mut dyn FnMut(usize),
    ) -> Result<Taken, CheckpointError> {
        let mut skipped_lines = self.read_skipped();
        self.write_excludes(&skipped_lines)?;
        let last = self.last();
        let out = self.git.run_paths(
            &[
                "status",
                "--porcelain=v2",
                "-z",
                "--untracked-files=all",
                "--no-renames",
                "--ignore-submodules=all",
                "--",
            ],
            &[self.scope_spec()],
            None,
        )?;
        let status = parse_status(&out);
        let mut skipped = Vec::new();
        let commit = match &last {
            Some((commit, _)) if status == Status::default() => commit.clone(),
            _ => {
                let (add, drop) = self.sort_out(&status, &mut skipped, &mut skipped_lines);
                if add.len() > self.many_from {
                    many(add.len());
                }
                if !skipped.is_empty() {
                    self.write_skipped(&skipped_lines)?;
                    self.write_excludes(&skipped_lines)?;
                }
                if !drop.is_empty() {
                    let mut list = Vec::new();
                    for path in &drop {
                        list.extend_from_slice(path);
                        list.push(0);
                    }
                    self.git.run(
                        &[
                            "rm",
                            "--cached",
                            "-q",
                            "--ignore-unmatch",
                            "--pathspec-from-file=-",
                            "--pathspec-file-nul",
                        ],
                        Some(&list),
                    )?;
                }
                self.add(&add)?;
                let tree = text(self.git.run(&["write-tree"], None)?);
                match &last {
                    Some((commit, last_tree)) if *last_tree == tree => commit.clone(),
                    _ => self.commit(&tree)?,
                }
            }
        };
        let changed = match since {
            Some(since) if since != commit => self.changed_between(since, &commit)?,
            _ => Vec::new(),
        };
        Ok(Taken {
            commit,
            changed,
            skipped,
        })
    }

    /// Split status into the paths to add (or record as gone) and the recorded ones to
    /// drop from the record; what is left out is pushed onto `skipped` and its pattern
    /// onto `lines`.
    fn sort_out(
        &self,
        status: &Status,
        skipped: &mut Vec<Skipped>,
        lines: &mut Vec<Vec<u8>>,
    ) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
        let top = self.git.work_tree().to_path_buf();
        let cap = self.settings.max_file_bytes;
        let mut skip = |path: &[u8], folder: bool, why: SkipReason| {
            lines.push(literal_pattern(path, folder));
            let shown = self
                .project_path(path)
                .unwrap_or_else(|| RelPath::from_bytes(path.to_vec()))
                .to_string();
            skipped.push(Skipped {
                path: if folder { format!("{shown}/") } else { shown },
                why,
            });
        };
        let size = |path: &[u8]| {
            std::fs::symlink_metadata(top.join(OsStr::from_bytes(path)))
                .ok()
                .filter(|m| m.is_file())
                .map(|m| m.len())
        };
        let mut add = Vec::new();
        let mut drop = Vec::new();
        for path in &status.tracked {
            match size(path) {
                Some(bytes) if bytes > cap => {
                    skip(path, false, SkipReason::TooBig { bytes });
                    drop.push(path.clone());
                }
                _ => add.push(path.clone()),
            }
        }
        // New files, grouped by the untracked folder they are in.
        let tracked = self.user_tracked();
        let mut groups: BTreeMap<Vec<u8>, Vec<&Vec<u8>>> = BTreeMap::new();
        let mut loose = Vec::new();
        for path in &status.untracked {
            if let Some(folder) = path.strip_suffix(b"/") {
                skip(folder, true, SkipReason::Repository);
                continue;
            }
            match self.untracked_folder(path, tracked.as_deref().map(Vec::as_slice)) {
                Some(folder) => groups.entry(folder.to_vec()).or_default().push(path),
                None => loose.push(path),
            }
        }
        for (folder, files) in groups {
            if files.len() > self.settings.max_folder_files {
                skip(
                    &folder,
                    true,
                    SkipReason::TooManyFiles { files: files.len() },
                );
            } else {
                loose.extend(files);
            }
        }
        for path in loose {
            match size(path) {
                Some(bytes) if bytes > cap => skip(path, false, SkipReason::TooBig { bytes }),
                _ => add.push(path.clone()),
            }
        }
        (add, drop)
    }

    /// The outermost folder above `path` that the user's repository tracks nothing under
    /// (`tracked`: its paths, sorted; unreadable: none is); outside a repository, the
    /// path's top-level folder. `None`: the file is in no such folder.
    fn untracked_folder<'a>(
        &self,
        path: &'a [u8],
        tracked: Option<&[Vec<u8>]>,
    ) -> Option<&'a [u8]> {
        let slashes = path
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == b'/')
            .map(|(i, _)| i);
        if self.user.is_none() {
            let scope = self.scope.len();
            return path
                .iter()
                .enumerate()
                .skip(scope)
                .find(|(_, &b)| b == b'/')
                .map(|(i, _)| &path[..i]);
        }
        let tracked = tracked?;
        slashes
            .map(|i| &path[..i])
            .find(|folder| !tracks_under(tracked, folder))
    }

    /// Record `paths` (changed, new or gone) in the index.
    fn add(&self, paths: &[Vec<u8>]) -> Result<(), CheckpointError> {
        if paths.is_empty() {
            return Ok(());
        }
        if paths.len() > self.bulk_from && self.bulk_add(paths).is_ok() {
            return Ok(());
        }
        if paths.len() <= self.bulk_from {
            let mut list = Vec::new();
            for path in paths {
                list.extend_from_slice(path);
                list.push(0);
            }
            let by_name = self.git.run(
                &["add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"],
                Some(&list),
            );
            // A path gone between status and add: add the whole project instead.
            if by_name.is_ok() {
                return Ok(());
            }
        }
        self.git
            .run_paths(&["add", "-A", "--"], &[self.scope_spec()], None)?;
        Ok(())
    }

    /// A commit of `tree`, kept by its own ref and made the record's HEAD.
    fn commit(&self, tree: &str) -> Result<String, CheckpointError> {
        let commit = text(
            self.git
                .run(&["commit-tree", "-m", "rein checkpoint", tree], None)?,
        );
        if commit.len() < 40 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(CheckpointError::Git {
                command: "commit-tree".to_string(),
                message: format!("gave `{commit}`, not a commit id"),
            });
        }
        // Loose refs written as git writes them (the id and a newline, renamed into place;
        // the record's lock keeps other writers out): one process less a checkpoint.
        let git_dir = self.git.git_dir();
        let line = format!("{commit}\n");
        let refs = git_dir.join("refs/rein");
        for path in [refs.join(&commit), git_dir.join("HEAD")] {
            crate::host::private_fs::replace(&path, line.as_bytes()).map_err(
                CheckpointError::io("cannot write to the checkpoint record", &path),
            )?;
        }
        let _ = crate::host::private_fs::replace(
            &self.record.join("last"),
            format!("{commit} {tree}\n").as_bytes(),
        );
        Ok(commit)
    }

    /// The record's last checkpoint and its tree, when the record's HEAD is still it.
    fn last(&self) -> Option<(String, String)> {
        let text = std::fs::read_to_string(self.record.join("last")).ok()?;
        let (commit, tree) = text.trim().split_once(' ')?;
        let head = std::fs::read_to_string(self.git.git_dir().join("HEAD")).ok()?;
        (head.trim() == commit).then(|| (commit.to_string(), tree.to_string()))
    }

    /// The paths (relative to the project) that differ between checkpoints `a` and `b`.
    pub fn changed_between(&self, a: &str, b: &str) -> Result<Vec<RelPath>, CheckpointError> {
        let out = self.git.run_paths(
            &[
                "diff-tree",
                "-r",
                "-z",
                "--no-renames",
                "--name-only",
                a,
                b,
                "--",
            ],
            &[self.scope_spec()],
            None,
        )?;
        Ok(out
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .filter_map(|p| self.project_path(p))
            .collect())
    }

    fn read_skipped(&self) -> Vec<Vec<u8>> {
        std::fs::read(self.record.join("skipped"))
            .unwrap_or_default()
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    }

    fn write_skipped(&self, lines: &[Vec<u8>]) -> Result<(), CheckpointError> {
        let path = self.record.join("skipped");
        crate::host::private_fs::replace(&path, &lines.join(&b'\n')).map_err(CheckpointError::io(
            "cannot write to the checkpoint record",
            &path,
        ))
    }

    /// The record's `info/exclude`: the user's repository's own, the heavy folders outside
    /// a repository, what was skipped. Written only when it changes (git's untracked cache
    /// starts over when it does).
    fn write_excludes(&self, skipped: &[Vec<u8>]) -> Result<(), CheckpointError> {
        let mut text = b"# rein's checkpoint record: rebuilt by rein, do not edit\n".to_vec();
        match &self.user {
            Some(user) => text.extend_from_slice(user.info_exclude().as_bytes()),
            None => {
                for folder in HEAVY_FOLDERS {
                    text.extend_from_slice(format!("{folder}/\n").as_bytes());
                }
            }
        }
        text.push(b'\n');
        for line in skipped {
            text.extend_from_slice(line);
            text.push(b'\n');
        }
        let path = self.git.git_dir().join("info/exclude");
        if std::fs::read(&path).ok().as_deref() == Some(text.as_slice()) {
            return Ok(());
        }
        crate::host::private_fs::replace(&path, &text).map_err(CheckpointError::io(
            "cannot write to the checkpoint record",
            &path,
        ))
    }
}

/// A command's output as one trimmed line.
fn text(out: Vec<u8>) -> String {
    String::from_utf8_lossy(&out).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_give_their_paths() {
        let out = b"1 .M N... 100644 100644 100644 aaaa aaaa src/a file.rs\0\
            1 .D N... 100644 100644 000000 bbbb bbbb gone.rs\0\
            2 R. N... 100644 100644 100644 cccc cccc R100 new name\0old name\0\
            u UU N... 100644 100644 100644 100644 d1 d2 d3 both.rs\0\
            ? new.txt\0? nested/\0";
        let status = parse_status(out);
        let tracked: Vec<&[u8]> = status.tracked.iter().map(Vec::as_slice).collect();
        assert_eq!(
            tracked,
            [
                &b"src/a file.rs"[..],
                b"gone.rs",
                b"new name",
                b"old name",
                b"both.rs"
            ]
        );
        let untracked: Vec<&[u8]> = status.untracked.iter().map(Vec::as_slice).collect();
        assert_eq!(untracked, [&b"new.txt"[..], b"nested/"]);
        assert_eq!(parse_status(b""), Status::default());
    }

    #[test]
    fn patterns_match_the_path_literally() {
        assert_eq!(literal_pattern(b"a/b.bin", false), b"/a/b.bin");
        assert_eq!(literal_pattern(b"data", true), b"/data/");
        assert_eq!(literal_pattern(b"x*[y]?\\z", false), b"/x\\*\\[y]\\?\\\\z");
        assert_eq!(literal_pattern(b"#a!b ", false), b"/#a!b\\ ");
        assert_eq!(literal_pattern(b"a  ", false), b"/a\\ \\ ");
    }
}
