//! The host-tool files at a project's root as the user last saw them, and what changed
//! since: the guard in front of everything rein runs outside the sandbox in the project.
//!
//! A hook runs `sh -c` in the project root, and a stdio MCP server may start in the
//! project; `cargo`, `npm`, `direnv`, `mise`, `pre-commit` … started there read the
//! folder's host-tool files (`.cargo/config.toml` with an alias and a runner, `.npmrc`
//! with a `script-shell`: [`crate::consent::steering`]'s [`Kind::HostTool`] list) and run what they
//! name, outside the sandbox. The sandbox keeps the existing ones read-only and the file
//! tools ask before writing one, but a sandboxed command can still *create* one where
//! none was (a missing file cannot be bound read-only). So rein records, per project, the
//! state of each of them at the root (absent, or the SHA-256 of its contents: a
//! [`Pins`]) in `<data dir>/host-tool-files.json` (the user's only, written by rename).
//! The state at a project's first session is the baseline: the user's checkout. Before a
//! hook runs and before a stdio server starts in the project, [`check`] compares: a file
//! created, changed or removed since is a [`HostToolChange`], and what would have run is
//! held until the user looks and runs `rein steering allow` in the project ([`accept`]),
//! which records the files as they are. A write the user approved in the approval
//! question updates the record of that file ([`record_write`]).
//!
//! Nothing here panics on what the files hold. The record is a `store::JsonStore`:
//! one rein cannot read is never taken as no record (which would make the files as they are
//! the baseline) nor written over. Every host-tool file at the root is then a change, as
//! against an empty record, and nothing is recorded (`baseline`, `accept` and
//! `record_write` return the error naming the file) until the user repairs the record or
//! moves it aside.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::consent::file_pin::{PinChange, Pins};
use crate::consent::steering::{self, Kind};
use crate::store::JsonStore;

/// The record's name in the data folder.
pub const FILE_NAME: &str = "host-tool-files.json";
/// The most bytes the record may hold.
const MAX_BYTES: u64 = 4 * 1024 * 1024;
/// What a user runs in the project to take its host-tool files as they are.
pub const ALLOW_COMMAND: &str = "rein steering allow";

#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct Ledger {
    #[serde(default)]
    projects: BTreeMap<PathBuf, Pins>,
}

fn record(data_dir: &Path) -> JsonStore {
    JsonStore::new(
        data_dir,
        FILE_NAME,
        MAX_BYTES,
        "rein's record of your projects' host-tool files",
    )
}

/// The host-tool files watched at a project root, relative to it.
pub fn watched(root: &Path) -> Vec<PathBuf> {
    steering::at_root(root)
        .into_iter()
        .filter(|path| steering::kind(path, root) == Some(Kind::HostTool))
        .filter_map(|path| path.strip_prefix(root).ok().map(Path::to_path_buf))
        .collect()
}

/// A host-tool file at the project root that is not as rein recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostToolChange {
    /// The file, absolute.
    pub file: PathBuf,
    /// What changed.
    pub change: PinChange,
}

impl HostToolChange {
    /// What happened to it, in a few words: `was created`, `changed`, `was removed`.
    pub fn what(&self) -> String {
        let line = self.change.to_string();
        let prefix = format!("file {}: ", self.change.path);
        line.strip_prefix(&prefix).unwrap_or(&line).to_string()
    }
}

impl std::fmt::Display for HostToolChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} since rein last recorded it, without your approval; a build tool started \
             in the project reads it and may run what it names outside the sandbox",
            self.file.display(),
            self.what()
        )
    }
}

/// The host-tool files of `root` that changed since rein recorded them (none at a
/// project's first check, which records them as they are).
pub fn check(data_dir: &Path, root: &Path) -> Vec<HostToolChange> {
    let paths = watched(root);
    let store = record(data_dir);
    // A record rein cannot read: every file there is a change (sessions say why at start,
    // where `baseline` returns the error).
    let pins = match store.read::<Ledger>() {
        Ok(ledger) => ledger.projects.get(root).cloned(),
        Err(_) => Some(Pins::default()),
    };
    let Some(pins) = pins else {
        // A record that cannot be written is taken again at the next check (sessions
        // record the baseline at start, `baseline`, and say when they cannot).
        let _ = store.update(|ledger: &mut Ledger| {
            ledger
                .projects
                .entry(root.to_path_buf())
                .or_insert_with(|| Pins::take(root, &paths));
        });
        return Vec::new();
    };
    pins.changes(root, &paths)
        .into_iter()
        .map(|change| HostToolChange {
            file: root.join(&change.path),
            change,
        })
        .collect()
}

/// Record `root`'s host-tool files as they are when rein has no record of the project
/// yet (its first session: the user's checkout is the baseline).
pub fn baseline(data_dir: &Path, root: &Path) -> std::io::Result<()> {
    record(data_dir).update(|ledger: &mut Ledger| {
        ledger
            .projects
            .entry(root.to_path_buf())
            .or_insert_with(|| Pins::take(root, &watched(root)));
    })?;
    Ok(())
}

/// The user takes `root`'s host-tool files as they are (`rein steering allow`): what had
/// changed since the record, and the files there now (a line each).
pub fn accept(data_dir: &Path, root: &Path) -> std::io::Result<(Vec<HostToolChange>, Vec<String>)> {
    let changes = check(data_dir, root);
    let pins = Pins::take(root, &watched(root));
    let lines = pins.lines();
    record(data_dir).update(|ledger: &mut Ledger| {
        ledger.projects.insert(root.to_path_buf(), pins);
    })?;
    Ok((changes, lines))
}

/// The user approved a write of `path` (absolute) in the approval question: when it is a
/// host-tool file at `root`, its record becomes what is there now. Whether it was one.
pub fn record_write(data_dir: &Path, root: &Path, path: &Path) -> std::io::Result<bool> {
    let Some(rel) = crate::consent::file_pin::inside(path, root) else {
        return Ok(false);
    };
    if !watched(root).contains(&rel) {
        return Ok(false);
    }
    record(data_dir).update(|ledger: &mut Ledger| {
        ledger
            .projects
            .entry(root.to_path_buf())
            .or_insert_with(|| Pins::take(root, &watched(root)))
            .set(root, &rel);
    })?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_changed_and_removed_files_are_changes_until_accepted() {
        let data = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let root = project.path().canonicalize().unwrap();
        std::fs::write(root.join(".envrc"), "export A=1\n").unwrap();
        // The first check is the baseline.
        assert!(check(data.path(), &root).is_empty());
        assert!(check(data.path(), &root).is_empty());
        std::fs::create_dir_all(root.join(".cargo")).unwrap();
        std::fs::write(root.join(".cargo/config.toml"), "[alias]\nfmt = \"run\"\n").unwrap();
        std::fs::write(root.join(".envrc"), "export A=2\n").unwrap();
        let changes = check(data.path(), &root);
        let lines: Vec<String> = changes
            .iter()
            .map(|c| format!("{} {}", c.change.path, c.what()))
            .collect();
        assert_eq!(
            lines,
            [".cargo/config.toml was created (a file)", ".envrc changed"]
        );
        // Not a host-tool file: nothing recorded.
        assert!(!record_write(data.path(), &root, &root.join("src/main.rs")).unwrap());
        // An approved write records that file only.
        assert!(record_write(data.path(), &root, &root.join(".envrc")).unwrap());
        assert_eq!(check(data.path(), &root).len(), 1);
        let (accepted, files) = accept(data.path(), &root).unwrap();
        assert_eq!(accepted.len(), 1);
        assert_eq!(files.len(), 2);
        assert!(check(data.path(), &root).is_empty());
        std::fs::remove_file(root.join(".envrc")).unwrap();
        assert_eq!(check(data.path(), &root)[0].what(), "was removed");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(data.path().join(FILE_NAME))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    /// A record rein cannot read is not "no record": the files there are not taken as the
    /// baseline, every one is a change, and the record is left as it is.
    #[test]
    fn a_bad_record_makes_every_file_a_change_and_is_kept() {
        let data = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let root = project.path().canonicalize().unwrap();
        std::fs::write(root.join(".envrc"), "export A=1\n").unwrap();
        let path = data.path().join(FILE_NAME);
        std::fs::write(&path, "{\"projects\": 7}").unwrap();
        let changes = check(data.path(), &root);
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].what(), "was created (a file)");
        let err = baseline(data.path(), &root).unwrap_err();
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "{err}"
        );
        assert!(accept(data.path(), &root).is_err());
        assert!(record_write(data.path(), &root, &root.join(".envrc")).is_err());
        assert_eq!(check(data.path(), &root).len(), 1);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"projects\": 7}");
    }
}
