//! Putting paths back as a checkpoint had them, never over someone else's work.
//!
//! A restore first takes a checkpoint of the files as they are (the one `--undo` goes back
//! to), then decides each path from three versions: the one to put back (`target`), the
//! one this session last left (`expected`) and the one there now. Already the target: left
//! as it is. Not what this session left: someone else changed it since (the user, another
//! session), so it is kept and said, unless forced. Otherwise the target's version is
//! written (its mode and kind too: file, executable, link) or, absent from the target, the
//! file is removed, along with folders that became empty and were made after `made_after`.
//! Every path is reported: restored, removed, unchanged, kept and why, failed and why. A
//! second checkpoint after the writes is what an undo expects to find.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::time::SystemTime;

use serde::Serialize;

use super::plan::PathStep;
use super::{CheckpointError, Store};
use crate::safe_fs::{PutKind, WriteError};

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
    pub path: String,
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
    pub fn changed(&self) -> Vec<String> {
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
    /// Restore `steps`: see the module doc. `force` writes over changes made since;
    /// `dry_run` decides and writes nothing.
    pub fn restore(
        &self,
        steps: &[PathStep],
        force: bool,
        dry_run: bool,
        made_after: Option<SystemTime>,
    ) -> Result<RestoreReport, CheckpointError> {
        let _lock = super::lock::RecordLock::take(&self.record)?;
        let before = self.take_locked(None)?.commit;
        let paths: Vec<&str> = steps.iter().map(|s| s.path.as_str()).collect();
        let mut commits: BTreeSet<&str> = steps
            .iter()
            .flat_map(|s| [s.target.as_str(), s.expected.as_str()])
            .collect();
        commits.insert(&before);
        let mut trees: HashMap<&str, BTreeMap<String, Entry>> = HashMap::new();
        for commit in commits {
            trees.insert(commit, self.entries(commit, &paths)?);
        }
        let empty = BTreeMap::new();
        let tree = |commit: &str| trees.get(commit).unwrap_or(&empty);
        let mut reports = Vec::new();
        let mut writes: Vec<(String, Entry)> = Vec::new();
        let mut removals: Vec<String> = Vec::new();
        for step in steps {
            let now = tree(&before).get(&step.path);
            let target = tree(&step.target).get(&step.path);
            let expected = tree(&step.expected).get(&step.path);
            let on_disk = std::fs::symlink_metadata(self.root.join(&step.path)).is_ok();
            let outcome = if now == target && (now.is_some() || !on_disk) {
                Some(Outcome::Unchanged)
            } else if now.is_none() && on_disk && !force {
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
        if dry_run {
            reports.extend(writes.into_iter().map(|(path, _)| PathReport {
                path,
                outcome: Outcome::Restored,
            }));
            reports.extend(removals.into_iter().map(|path| PathReport {
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
        self.write_back(&writes, &mut reports)?;
        for path in removals {
            let outcome = match crate::safe_fs::remove(&self.root.join(&path)) {
                Ok(_) => {
                    self.remove_made_folders(&path, made_after);
                    Outcome::Removed
                }
                Err(e) => Outcome::Failed { why: describe(&e) },
            };
            reports.push(PathReport { path, outcome });
        }
        reports.sort_by(|a, b| a.path.cmp(&b.path));
        let after = self.take_locked(None)?.commit;
        Ok(RestoreReport {
            before,
            after,
            paths: reports,
        })
    }

    /// Write each path's recorded version.
    fn write_back(
        &self,
        writes: &[(String, Entry)],
        reports: &mut Vec<PathReport>,
    ) -> Result<(), CheckpointError> {
        let ids: Vec<String> = writes.iter().map(|(_, (_, id))| id.clone()).collect();
        let contents = self.git.cat_blobs(&ids)?;
        for ((path, (mode, _)), content) in writes.iter().zip(contents) {
            let what = match mode.as_str() {
                "120000" => PutKind::Link,
                "100755" => PutKind::File { executable: true },
                _ => PutKind::File { executable: false },
            };
            let outcome = match crate::safe_fs::put(&self.root.join(path), &content, what) {
                Ok(_) => Outcome::Restored,
                Err(WriteError::Directory) => Outcome::Kept {
                    why: "a folder is there now".to_string(),
                },
                Err(e) => Outcome::Failed { why: describe(&e) },
            };
            reports.push(PathReport {
                path: path.clone(),
                outcome,
            });
        }
        Ok(())
    }

    /// Remove the folders above `path` that are empty now and were made after `made_after`
    /// (by the turns being taken back), up to the project.
    fn remove_made_folders(&self, path: &str, made_after: Option<SystemTime>) {
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
        let mut folder = Path::new(path).parent();
        while let Some(dir) = folder.filter(|d| !d.as_os_str().is_empty()) {
            let full = self.root.join(dir);
            let made = std::fs::symlink_metadata(&full).and_then(|m| m.created());
            if !made.is_ok_and(|t| t > made_after) {
                return;
            }
            if !crate::safe_fs::remove_empty_dir(&full).unwrap_or(false) {
                return;
            }
            folder = dir.parent();
        }
    }

    /// The entries of `paths` (relative to the project) in checkpoint `commit`.
    pub(super) fn entries(
        &self,
        commit: &str,
        paths: &[&str],
    ) -> Result<BTreeMap<String, Entry>, CheckpointError> {
        let mut out = BTreeMap::new();
        for chunk in paths.chunks(200) {
            let tops: Vec<String> = chunk.iter().map(|p| self.to_top(p)).collect();
            let mut args = vec!["ls-tree", "-r", "-z", "--full-tree", commit, "--"];
            args.extend(tops.iter().map(String::as_str));
            let listing = match self.git.run(&args, None) {
                Ok(listing) => listing,
                Err(CheckpointError::Git { message, .. })
                    if message.contains("not a tree") || message.contains("Not a valid object") =>
                {
                    return Err(CheckpointError::Pruned(commit.to_string()))
                }
                Err(e) => return Err(e),
            };
            for line in listing.split(|&b| b == 0).filter(|l| !l.is_empty()) {
                let line = String::from_utf8_lossy(line);
                let Some((meta, path)) = line.split_once('\t') else {
                    continue;
                };
                let mut parts = meta.split(' ');
                let (Some(mode), Some(_kind), Some(id)) =
                    (parts.next(), parts.next(), parts.next())
                else {
                    continue;
                };
                if let Some(path) = self.project_path(path) {
                    out.insert(path.to_string(), (mode.to_string(), id.to_string()));
                }
            }
        }
        Ok(out)
    }
}

fn describe(e: &WriteError) -> String {
    e.to_string()
}
