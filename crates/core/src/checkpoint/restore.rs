//! Putting paths back as a checkpoint had them, never over someone else's work.
//!
//! A restore first takes a checkpoint of the files as they are (the one `--undo` goes back
//! to), then decides each path from three versions: the one to put back (`target`), the
//! one this session last left (`expected`) and the one there now. Already the target: left
//! as it is. Not what this session left: someone else changed it since (the user, another
//! session), so it is kept and said, unless forced. Otherwise the target's version is
//! written (its mode and kind too: file, executable, link) or, absent from the target, the
//! file is removed, along with folders that became empty and were made after `made_after`.
//!
//! Removals go first, then the writes, so a turn that put a folder where a file was (or a
//! file or link where a folder was) is taken back: the turn's files in the folder are
//! removed, the folder with them, and the file goes back; the reverse, the file or link
//! goes and the folder is made again for its files. What else stands in the way of a write
//! (a folder still holding files this session did not leave there, a file where a folder
//! must be) is kept and named, unless forced; forced, it is removed and each of its files
//! reported as removed (the checkpoint before the restore holds them, so `--undo` brings
//! them back), except files not in the record (ignored, over the size cap), which nothing
//! could bring back: those are never removed, and the path is kept and says why.
//!
//! Every path is reported: restored, removed, unchanged, kept and why, failed and why. A
//! second checkpoint after the writes is what an undo expects to find.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::time::SystemTime;

use serde::Serialize;

use super::plan::PathStep;
use super::{CheckpointError, RelPath, Store};
use crate::host::safe_fs::{PutKind, WriteError};

/// What happened to one path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// Written back (or would be, in a dry run).
    Restored,
    /// Removed: it did not exist at the checkpoint.
    Removed,
    /// Already as it was.
    Unchanged,
    /// Left as it is: `why`.
    Kept { why: String },
    /// Could not be written: `why`.
    Failed { why: String },
}

/// One path of a restore.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathReport {
    pub path: RelPath,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// What a restore did (or, dry, would do).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RestoreReport {
    /// The checkpoint of the files just before the restore.
    pub before: String,
    /// The checkpoint just after it (the same as `before` in a dry run).
    pub after: String,
    pub paths: Vec<PathReport>,
}

impl RestoreReport {
    /// The paths written or removed.
    pub fn changed(&self) -> Vec<RelPath> {
        self.paths
            .iter()
            .filter(|p| matches!(p.outcome, Outcome::Restored | Outcome::Removed))
            .map(|p| p.path.clone())
            .collect()
    }

    /// The paths kept because someone else changed them.
    pub fn kept(&self) -> impl Iterator<Item = &PathReport> {
        self.paths
            .iter()
            .filter(|p| matches!(p.outcome, Outcome::Kept { .. }))
    }
}

/// A tree entry: mode and object id.
type Entry = (String, String);

/// Why a changed path is kept.
pub const CHANGED_SINCE: &str =
    "changed since this session last wrote it (by you or another session); --force takes the checkpoint's version";
const NOT_RECORDED: &str =
    "not in the record now (over the size cap?), so rein cannot tell who changed it; --force takes the checkpoint's version";

impl Store {
    /// Restore `steps`: see the module doc. `force` writes over changes made since and
    /// removes what stands in the way; `dry_run` decides and writes nothing.
    pub fn restore(
        &self,
        steps: &[PathStep],
        force: bool,
        dry_run: bool,
        made_after: Option<SystemTime>,
    ) -> Result<RestoreReport, CheckpointError> {
        let _lock = super::lock::RecordLock::take(&self.record)?;
        let before = self.take_locked(None)?.commit;
        let paths: Vec<&RelPath> = steps.iter().map(|s| &s.path).collect();
        let mut commits: BTreeSet<&str> = steps
            .iter()
            .flat_map(|s| [s.target.as_str(), s.expected.as_str()])
            .collect();
        commits.insert(&before);
        let mut trees: HashMap<&str, BTreeMap<RelPath, Entry>> = HashMap::new();
        for commit in commits {
            trees.insert(commit, self.entries(commit, &paths)?);
        }
        let empty = BTreeMap::new();
        let tree = |commit: &str| trees.get(commit).unwrap_or(&empty);
        let mut reports = Vec::new();
        let mut writes: Vec<(RelPath, Entry)> = Vec::new();
        let mut removals: Vec<RelPath> = Vec::new();
        for step in steps {
            let now = tree(&before).get(&step.path);
            let target = tree(&step.target).get(&step.path);
            let expected = tree(&step.expected).get(&step.path);
            // A folder there now is not this path's own content: its files are paths of
            // their own, and what is left of it stands in the way of a write (below).
            let file_on_disk = self.on_disk(&step.path) == Some(false);
            let outcome = if now == target && (now.is_some() || !file_on_disk) {
                Some(Outcome::Unchanged)
            } else if now.is_none() && file_on_disk && !force {
                Some(Outcome::Kept {
                    why: NOT_RECORDED.to_string(),
                })
            } else if now != expected && !force {
                Some(Outcome::Kept {
                    why: CHANGED_SINCE.to_string(),
                })
            } else {
                None
            };
            match (outcome, target) {
                (Some(outcome), _) => reports.push(PathReport {
                    path: step.path.clone(),
                    outcome,
                }),
                (None, Some(entry)) => writes.push((step.path.clone(), entry.clone())),
                (None, None) => removals.push(step.path.clone()),
            }
        }
        // What stands in the way of each write once the removals are done.
        let removing: BTreeSet<&RelPath> = removals.iter().collect();
        let mut clear: Vec<(RelPath, Entry, Vec<RelPath>)> = Vec::new();
        for (path, entry) in writes {
            match self.in_the_way(&path, &removing, force, &before) {
                Ok(extra) => clear.push((path, entry, extra)),
                Err(why) => reports.push(PathReport {
                    path,
                    outcome: Outcome::Kept { why },
                }),
            }
        }
        if dry_run {
            let mut removed: BTreeSet<RelPath> = removals.into_iter().collect();
            for (path, _, extra) in clear {
                removed.extend(extra);
                reports.push(PathReport {
                    path,
                    outcome: Outcome::Restored,
                });
            }
            reports.extend(removed.into_iter().map(|path| PathReport {
                path,
                outcome: Outcome::Removed,
            }));
            reports.sort_by(|a, b| a.path.cmp(&b.path));
            return Ok(RestoreReport {
                after: before.clone(),
                before,
                paths: reports,
            });
        }
        // Deepest first, so a folder's files go before the folder can.
        removals.sort_by(|a, b| b.cmp(a));
        for path in removals {
            let outcome = match crate::host::safe_fs::remove(&self.root.join(path.as_path())) {
                Ok(_) => {
                    self.remove_made_folders(&path, made_after);
                    Outcome::Removed
                }
                Err(e) => Outcome::Failed { why: describe(&e) },
            };
            reports.push(PathReport { path, outcome });
        }
        self.write_back(clear, &mut reports)?;
        reports.sort_by(|a, b| a.path.cmp(&b.path));
        let after = self.take_locked(None)?.commit;
        Ok(RestoreReport {
            before,
            after,
            paths: reports,
        })
    }

    /// What is at `path` now: `None` nothing, `Some(true)` a folder, `Some(false)` a file
    /// or a link (never followed).
    fn on_disk(&self, path: &RelPath) -> Option<bool> {
        std::fs::symlink_metadata(self.root.join(path.as_path()))
            .ok()
            .map(|m| m.is_dir())
    }

    /// What must be removed before `path` can be written, once `removing` is gone: a file
    /// or link where one of its folders must be, the files of a folder where it must be.
    /// Nothing, or (forced) what the record holds: the list. Otherwise why the path is
    /// kept.
    fn in_the_way(
        &self,
        path: &RelPath,
        removing: &BTreeSet<&RelPath>,
        force: bool,
        before: &str,
    ) -> Result<Vec<RelPath>, String> {
        let mut extra = Vec::new();
        let mut folder = path.parent();
        let mut above = Vec::new();
        while let Some(dir) = folder {
            folder = dir.parent();
            above.push(dir);
        }
        for dir in above.iter().rev() {
            if self.on_disk(dir) == Some(false) && !removing.contains(dir) {
                extra.push(dir.clone());
            }
        }
        if self.on_disk(path) == Some(true) {
            let full = self.root.join(path.as_path());
            let mut files = Vec::new();
            files_under(&full, path, &mut files);
            extra.extend(files.into_iter().filter(|f| !removing.contains(f)));
        }
        if extra.is_empty() {
            return Ok(extra);
        }
        let named = name_some(&extra);
        if !force {
            return Err(if self.on_disk(path) == Some(true) {
                format!(
                    "a folder is there now, holding files this session did not leave there \
                     ({named}); --force removes them (`--undo` brings them back)"
                )
            } else {
                format!(
                    "a file is there now where its folder must be ({named}); --force removes it \
                     (`--undo` brings it back)"
                )
            });
        }
        let refs: Vec<&RelPath> = extra.iter().collect();
        let recorded = self.entries(before, &refs).map_err(|e| e.to_string())?;
        let unrecorded: Vec<RelPath> = extra
            .iter()
            .filter(|p| !recorded.contains_key(*p))
            .cloned()
            .collect();
        if !unrecorded.is_empty() {
            return Err(format!(
                "in the way are files not in the record (ignored, or over the size cap: {}), \
                 which nothing could bring back, so rein does not remove them; move them away \
                 and rewind again",
                name_some(&unrecorded)
            ));
        }
        Ok(extra)
    }

    /// Write each path's recorded version, once what stands in its way is removed.
    fn write_back(
        &self,
        writes: Vec<(RelPath, Entry, Vec<RelPath>)>,
        reports: &mut Vec<PathReport>,
    ) -> Result<(), CheckpointError> {
        let ids: Vec<String> = writes.iter().map(|(_, (_, id), _)| id.clone()).collect();
        let contents = self.git.cat_blobs(&ids)?;
        for ((path, (mode, _), extra), content) in writes.into_iter().zip(contents) {
            for gone in extra {
                let outcome = match crate::host::safe_fs::remove(&self.root.join(gone.as_path())) {
                    Ok(_) => Outcome::Removed,
                    Err(e) => Outcome::Failed { why: describe(&e) },
                };
                reports.push(PathReport {
                    path: gone,
                    outcome,
                });
            }
            let full = self.root.join(path.as_path());
            if self.on_disk(&path) == Some(true) {
                remove_empty_folders(&full);
            }
            let what = match mode.as_str() {
                "120000" => PutKind::Link,
                "100755" => PutKind::File { executable: true },
                _ => PutKind::File { executable: false },
            };
            let outcome = match crate::host::safe_fs::put(&full, &content, what) {
                Ok(_) => Outcome::Restored,
                Err(WriteError::Directory) => Outcome::Kept {
                    why: "a folder is there now".to_string(),
                },
                Err(e) => Outcome::Failed { why: describe(&e) },
            };
            reports.push(PathReport { path, outcome });
        }
        Ok(())
    }

    /// Remove the folders above `path` that are empty now and were made after `made_after`
    /// (by the turns being taken back), up to the project.
    fn remove_made_folders(&self, path: &RelPath, made_after: Option<SystemTime>) {
        let Some(made_after) = made_after else {
            return;
        };
        // A folder's birth time comes from the kernel's coarse clock, a tick (up to 10 ms)
        // behind the clock the turn's time was read from: a folder the turn made at once
        // can read as made a little before it. 50 ms of slack covers the tick; a folder
        // the user made in the 50 ms before sending the turn, and left empty, is all it
        // could take too.
        let made_after = made_after
            .checked_sub(std::time::Duration::from_millis(50))
            .unwrap_or(made_after);
        let mut folder = path.as_path().parent();
        while let Some(dir) = folder.filter(|d| !d.as_os_str().is_empty()) {
            let full = self.root.join(dir);
            let made = std::fs::symlink_metadata(&full).and_then(|m| m.created());
            if !made.is_ok_and(|t| t > made_after) {
                return;
            }
            if !crate::host::safe_fs::remove_empty_dir(&full).unwrap_or(false) {
                return;
            }
            folder = dir.parent();
        }
    }

    /// The entries of `paths` (relative to the project) in checkpoint `commit`.
    pub(super) fn entries(
        &self,
        commit: &str,
        paths: &[&RelPath],
    ) -> Result<BTreeMap<RelPath, Entry>, CheckpointError> {
        use std::os::unix::ffi::OsStrExt;
        let mut out = BTreeMap::new();
        for chunk in paths.chunks(200) {
            let tops: Vec<Vec<u8>> = chunk.iter().map(|p| self.to_top(p)).collect();
            let specs: Vec<&std::ffi::OsStr> = tops
                .iter()
                .map(|t| std::ffi::OsStr::from_bytes(t))
                .collect();
            let args = ["ls-tree", "-r", "-z", "--full-tree", commit, "--"];
            let listing = match self.git.run_paths(&args, &specs, None) {
                Ok(listing) => listing,
                Err(CheckpointError::Git { message, .. })
                    if message.contains("not a tree") || message.contains("Not a valid object") =>
                {
                    return Err(CheckpointError::Pruned(commit.to_string()))
                }
                Err(e) => return Err(e),
            };
            for line in listing.split(|&b| b == 0).filter(|l| !l.is_empty()) {
                let Some(tab) = line.iter().position(|&b| b == b'\t') else {
                    continue;
                };
                let (meta, path) = (String::from_utf8_lossy(&line[..tab]), &line[tab + 1..]);
                let mut parts = meta.split(' ');
                let (Some(mode), Some(_kind), Some(id)) =
                    (parts.next(), parts.next(), parts.next())
                else {
                    continue;
                };
                if let Some(path) = self.project_path(path) {
                    out.insert(path, (mode.to_string(), id.to_string()));
                }
            }
        }
        Ok(out)
    }
}

/// The files and links under the folder `full` (`rel` in the project), links not followed.
fn files_under(full: &Path, rel: &RelPath, out: &mut Vec<RelPath>) {
    let Ok(entries) = std::fs::read_dir(full) else {
        return;
    };
    for entry in entries.flatten() {
        use std::os::unix::ffi::OsStrExt;
        let name = entry.file_name();
        let child = RelPath::from_bytes([rel.as_bytes(), b"/", name.as_bytes()].concat());
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => files_under(&entry.path(), &child, out),
            _ => out.push(child),
        }
    }
}

/// Remove the empty folders under `full`, and it, deepest first (links not followed).
fn remove_empty_folders(full: &Path) {
    if let Ok(entries) = std::fs::read_dir(full) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|k| k.is_dir()) {
                remove_empty_folders(&entry.path());
            }
        }
    }
    let _ = crate::host::safe_fs::remove_empty_dir(full);
}

/// The first few of `paths`, and how many more.
fn name_some(paths: &[RelPath]) -> String {
    let mut text: Vec<String> = paths.iter().take(3).map(ToString::to_string).collect();
    if paths.len() > 3 {
        text.push(format!("and {} more", paths.len() - 3));
    }
    text.join(", ")
}

fn describe(e: &WriteError) -> String {
    e.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_list_of_paths_is_named_by_its_first_three() {
        let paths =
            |n: usize| -> Vec<RelPath> { (0..n).map(|i| RelPath::from(format!("f{i}"))).collect() };
        assert_eq!(name_some(&paths(3)), "f0, f1, f2");
        assert_eq!(name_some(&paths(5)), "f0, f1, f2, and 2 more");
    }
}
