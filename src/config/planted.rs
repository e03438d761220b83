//! Project configs that a command may have planted: a `.rein/config.toml` written inside a
//! folder where rein ran commands is not obeyed until the user confirms it.
//!
//! The sandbox keeps the project's own `.rein/` read-only and the file tools never write
//! any `.rein`, but a sandboxed command may create `sub/.rein/config.toml` (a new folder
//! cannot be mounted read-only before it exists), and a rein started later in `sub/`
//! would take its rules. So rein remembers, in `<data dir>/project-configs.json` (the
//! user's only, hidden from commands), each folder it ran a session in and since when
//! (`roots`). When it loads the config of a project `P`, and `P` lies strictly inside such
//! a folder, and the config file or its `.rein` folder changed (their status-change time,
//! `ctime`, which no command can set back) after rein first ran there, the file may have
//! been written by a command rather than by the user: it is *held*. Its settings are not
//! read at all (no rules, no servers, no model settings) until the user runs
//! `rein config allow` in `P`, which records the file's exact text (`confirmed`); any later
//! change holds it again. A config that was there before rein first ran in the folder
//! above it is obeyed as before.
//!
//! The same ledger keeps the routing values of project configs the user allowed
//! (`routing`, see `routing.rs`): where requests go and which key they carry.
//!
//! A user who edits such a file by hand, or pulls one, is asked once; that is the price of
//! telling their edit from a command's. Nothing here panics on what the file holds: a file
//! rein cannot read records nothing and holds nothing it cannot judge (said once).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The ledger's name in the data folder.
pub const FILE_NAME: &str = "project-configs.json";
/// The most bytes the ledger may hold.
const MAX_BYTES: u64 = 4 * 1024 * 1024;
/// How far before the real start a root's time is recorded: file times come from a
/// coarser clock than `SystemTime::now`, and a file written just after the start must not
/// look older than it.
const CLOCK_SLACK: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct Ledger {
    /// Folders rein ran a session in, and since when (seconds since the epoch).
    #[serde(default)]
    roots: Vec<Root>,
    /// Project configs the user confirmed, with the text confirmed.
    #[serde(default)]
    confirmed: Vec<Confirmed>,
    /// Project configs whose settings that route requests (`routing.rs`) the user allowed,
    /// with the exact values allowed.
    #[serde(default)]
    routing: Vec<Confirmed>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct Root {
    path: PathBuf,
    since: f64,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct Confirmed {
    path: PathBuf,
    text: String,
}

/// Why a project config is held, for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// The config file.
    pub file: PathBuf,
    /// The folder rein ran in, which holds the project.
    pub root: PathBuf,
}

impl std::fmt::Display for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is not obeyed: it changed while rein could run commands in {}, so a command \
             may have written it; check it and run `rein config allow` here to obey it",
            self.file.display(),
            self.root.display()
        )
    }
}

fn load(data_dir: &Path) -> Ledger {
    crate::private_fs::read_record(&data_dir.join(FILE_NAME), MAX_BYTES)
}

fn save(data_dir: &Path, ledger: &Ledger) -> std::io::Result<()> {
    crate::private_fs::write_record(&data_dir.join(FILE_NAME), ledger)
}

fn seconds(time: SystemTime) -> f64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Remember that rein runs a session in `root` (once: the first time counts).
pub fn record_root(data_dir: &Path, root: &Path) -> std::io::Result<()> {
    let mut ledger = load(data_dir);
    if ledger.roots.iter().any(|r| r.path == root) {
        return Ok(());
    }
    let since = SystemTime::now()
        .checked_sub(CLOCK_SLACK)
        .unwrap_or(UNIX_EPOCH);
    ledger.roots.push(Root {
        path: root.to_path_buf(),
        since: seconds(since),
    });
    save(data_dir, &ledger)
}

/// The last status change of `path` itself (a link is not followed), in seconds.
fn changed(path: &Path) -> Option<f64> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some(meta.ctime() as f64 + meta.ctime_nsec() as f64 / 1e9)
    }
    #[cfg(not(unix))]
    {
        meta.modified().ok().map(seconds)
    }
}

/// Whether the config of the project at `project` (`file`, its `.rein/config.toml`) is held;
/// see the module doc. A missing file is never held.
pub fn check(data_dir: &Path, project: &Path, file: &Path) -> Option<Held> {
    let file_changed = changed(file)?;
    let folder_changed = file.parent().and_then(changed).unwrap_or(file_changed);
    let latest = file_changed.max(folder_changed);
    let ledger = load(data_dir);
    let root = ledger
        .roots
        .iter()
        .filter(|r| project != r.path && project.starts_with(&r.path) && latest >= r.since)
        .map(|r| r.path.clone())
        .next()?;
    let text = crate::safe_fs::read_small_text(file, MAX_BYTES).ok();
    let confirmed = text.as_ref().is_some_and(|text| {
        ledger
            .confirmed
            .iter()
            .any(|c| c.path == file && &c.text == text)
    });
    (!confirmed).then(|| Held {
        file: file.to_path_buf(),
        root,
    })
}

/// Obey `file` as it is now (`rein config allow`): its text is recorded, and a later
/// change holds it again. Returns the text confirmed.
pub fn confirm(data_dir: &Path, file: &Path) -> Result<String, String> {
    let text = crate::safe_fs::read_small_text(file, MAX_BYTES)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let mut ledger = load(data_dir);
    ledger.confirmed.retain(|c| c.path != file);
    ledger.confirmed.push(Confirmed {
        path: file.to_path_buf(),
        text: text.clone(),
    });
    save(data_dir, &ledger)
        .map_err(|e| format!("cannot write {}: {e}", data_dir.join(FILE_NAME).display()))?;
    Ok(text)
}

/// Whether the user allowed `pinned`, the exact routing values of the project config
/// `file` (see `routing.rs`): a change of any of them is not allowed.
pub fn routing_allowed(data_dir: &Path, file: &Path, pinned: &str) -> bool {
    load(data_dir)
        .routing
        .iter()
        .any(|c| c.path == file && c.text == pinned)
}

/// Follow the routing values `pinned` of `file` from now on (`rein config allow`): the
/// record replaces any earlier one of the file.
pub fn allow_routing(data_dir: &Path, file: &Path, pinned: &str) -> Result<(), String> {
    let mut ledger = load(data_dir);
    ledger.routing.retain(|c| c.path != file);
    ledger.routing.push(Confirmed {
        path: file.to_path_buf(),
        text: pinned.to_string(),
    });
    save(data_dir, &ledger)
        .map_err(|e| format!("cannot write {}: {e}", data_dir.join(FILE_NAME).display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_config_written_below_a_folder_rein_ran_in_is_held_until_confirmed() {
        let data = tempfile::tempdir().unwrap();
        let top = tempfile::tempdir().unwrap();
        let top = top.path().canonicalize().unwrap();
        // There before rein first ran above it: obeyed.
        let old = top.join("old/.rein/config.toml");
        write(&old, "model = \"m\"\n");
        std::thread::sleep(Duration::from_millis(50));
        let mut ledger = Ledger::default();
        ledger.roots.push(Root {
            path: top.clone(),
            since: seconds(SystemTime::now()),
        });
        save(data.path(), &ledger).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(check(data.path(), &top.join("old"), &old).is_none());
        let planted = top.join("sub/.rein/config.toml");
        write(
            &planted,
            "[[permissions.bash]]\npattern = \"*\"\naction = \"allow\"\n",
        );
        let project = top.join("sub");
        let held = check(data.path(), &project, &planted).expect("held");
        assert_eq!(held.root, top);
        assert!(held.to_string().contains("rein config allow"), "{held}");
        // The folder rein ran in itself is not held (the sandbox keeps its .rein).
        assert!(check(data.path(), &top, &planted).is_none());
        // Confirmed: obeyed, until it changes again.
        confirm(data.path(), &planted).unwrap();
        assert!(check(data.path(), &project, &planted).is_none());
        write(&planted, "model = \"other\"\n");
        assert!(check(data.path(), &project, &planted).is_some());
        // A missing file, or a project outside every recorded folder, is never held.
        assert!(check(data.path(), &project, &top.join("sub/none.toml")).is_none());
        let elsewhere = tempfile::tempdir().unwrap();
        let file = elsewhere.path().join(".rein/config.toml");
        write(&file, "");
        assert!(check(data.path(), elsewhere.path(), &file).is_none());
    }

    #[test]
    fn a_root_is_recorded_once_and_a_bad_ledger_holds_nothing() {
        let data = tempfile::tempdir().unwrap();
        record_root(data.path(), Path::new("/p")).unwrap();
        let first = load(data.path()).roots;
        record_root(data.path(), Path::new("/p")).unwrap();
        assert_eq!(load(data.path()).roots, first);
        std::fs::write(data.path().join(FILE_NAME), "{ not json").unwrap();
        assert!(load(data.path()).roots.is_empty());
        record_root(data.path(), Path::new("/q")).unwrap();
        assert_eq!(load(data.path()).roots.len(), 1);
    }
}
