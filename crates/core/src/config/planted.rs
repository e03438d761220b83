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
//! telling their edit from a command's. The ledger is a `store::JsonStore`, and
//! nothing here panics on what it holds. A ledger rein cannot read cannot tell a planted
//! config from the user's, so every project config is held, the warning names the ledger
//! and what is wrong with it, and nothing is recorded in it (no folder, no `rein config
//! allow`) until the user repairs it or moves it aside: it is never emptied or written over.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::store::{JsonStore, StoreError};

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
    pub why: HeldWhy,
}

/// What holds a project config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeldWhy {
    /// It changed after rein first ran in this folder, which holds the project.
    Changed { root: PathBuf },
    /// The ledger cannot be read (its error, in words), so rein cannot tell.
    Ledger(String),
}

impl std::fmt::Display for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.why {
            HeldWhy::Changed { root } => write!(
                f,
                "{} is not obeyed: it changed while rein could run commands in {}, so a \
                 command may have written it; check it and run `rein config allow` here to \
                 obey it",
                self.file.display(),
                root.display()
            ),
            HeldWhy::Ledger(problem) => write!(
                f,
                "{} is not obeyed: rein cannot tell whether a command wrote it, because {problem}",
                self.file.display()
            ),
        }
    }
}

/// The ledger in the data folder `data_dir`.
fn ledger(data_dir: &Path) -> JsonStore {
    JsonStore::new(
        data_dir,
        FILE_NAME,
        MAX_BYTES,
        "rein's ledger of the folders it ran in and the project configs you allowed",
    )
}

fn load(data_dir: &Path) -> Result<Ledger, StoreError> {
    ledger(data_dir).read()
}

fn seconds(time: SystemTime) -> f64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Remember that rein runs a session in `root` (once: the first time counts).
pub fn record_root(data_dir: &Path, root: &Path) -> Result<(), StoreError> {
    let since = SystemTime::now()
        .checked_sub(CLOCK_SLACK)
        .unwrap_or(UNIX_EPOCH);
    ledger(data_dir).update(|ledger: &mut Ledger| {
        if !ledger.roots.iter().any(|r| r.path == root) {
            ledger.roots.push(Root {
                path: root.to_path_buf(),
                since: seconds(since),
            });
        }
    })
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
    let ledger = match load(data_dir) {
        Ok(ledger) => ledger,
        Err(e) => {
            return Some(Held {
                file: file.to_path_buf(),
                why: HeldWhy::Ledger(e.to_string()),
            })
        }
    };
    let root = ledger
        .roots
        .iter()
        .filter(|r| project != r.path && project.starts_with(&r.path) && latest >= r.since)
        .map(|r| r.path.clone())
        .next()?;
    let text = crate::host::safe_fs::read_small_text(file, MAX_BYTES).ok();
    let confirmed = text.as_ref().is_some_and(|text| {
        ledger
            .confirmed
            .iter()
            .any(|c| c.path == file && &c.text == text)
    });
    (!confirmed).then(|| Held {
        file: file.to_path_buf(),
        why: HeldWhy::Changed { root },
    })
}

/// Obey `file` as it is now (`rein config allow`): its text is recorded, and a later
/// change holds it again. Returns the text confirmed.
pub fn confirm(data_dir: &Path, file: &Path) -> Result<String, String> {
    let text = crate::host::safe_fs::read_small_text(file, MAX_BYTES)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    ledger(data_dir)
        .update(|ledger: &mut Ledger| {
            ledger.confirmed.retain(|c| c.path != file);
            ledger.confirmed.push(Confirmed {
                path: file.to_path_buf(),
                text: text.clone(),
            });
        })
        .map_err(|e| e.to_string())?;
    Ok(text)
}

/// Whether the user allowed `pinned`, the exact routing values of the project config
/// `file` (see `routing.rs`): a change of any of them is not allowed.
pub fn routing_allowed(data_dir: &Path, file: &Path, pinned: &str) -> bool {
    // A ledger rein cannot read allows nothing (said where the config is loaded).
    load(data_dir).is_ok_and(|ledger| {
        ledger
            .routing
            .iter()
            .any(|c| c.path == file && c.text == pinned)
    })
}

/// Follow the routing values `pinned` of `file` from now on (`rein config allow`): the
/// record replaces any earlier one of the file.
pub fn allow_routing(data_dir: &Path, file: &Path, pinned: &str) -> Result<(), String> {
    ledger(data_dir)
        .update(|ledger: &mut Ledger| {
            ledger.routing.retain(|c| c.path != file);
            ledger.routing.push(Confirmed {
                path: file.to_path_buf(),
                text: pinned.to_string(),
            });
        })
        .map_err(|e| e.to_string())
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
        super::ledger(data.path()).write(&ledger).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(check(data.path(), &top.join("old"), &old).is_none());
        let planted = top.join("sub/.rein/config.toml");
        write(
            &planted,
            "[[permissions.bash]]\npattern = \"*\"\naction = \"allow\"\n",
        );
        let project = top.join("sub");
        let held = check(data.path(), &project, &planted).expect("held");
        assert_eq!(held.why, HeldWhy::Changed { root: top.clone() });
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

    /// A ledger rein cannot read is never written over (`store`'s rule), and since it
    /// cannot tell a planted config from the user's, it holds every one, saying why.
    #[test]
    fn a_root_is_recorded_once_and_a_bad_ledger_holds_every_config_and_is_kept() {
        let data = tempfile::tempdir().unwrap();
        record_root(data.path(), Path::new("/p")).unwrap();
        let first = load(data.path()).unwrap().roots;
        record_root(data.path(), Path::new("/p")).unwrap();
        assert_eq!(load(data.path()).unwrap().roots, first);

        let path = data.path().join(FILE_NAME);
        std::fs::write(&path, "{ not json").unwrap();
        let err = record_root(data.path(), Path::new("/q")).unwrap_err();
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "{err}"
        );
        let project = tempfile::tempdir().unwrap();
        let file = project.path().join(".rein/config.toml");
        write(&file, "model = \"m\"\n");
        let held = check(data.path(), project.path(), &file).expect("held");
        let said = held.to_string();
        assert!(
            said.contains("is not obeyed") && said.contains("move it aside"),
            "{said}"
        );
        assert!(confirm(data.path(), &file).is_err());
        assert!(allow_routing(data.path(), &file, "x").is_err());
        assert!(!routing_allowed(data.path(), &file, "x"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
        // Moved aside: a new ledger starts.
        std::fs::rename(&path, data.path().join("old.json")).unwrap();
        record_root(data.path(), Path::new("/q")).unwrap();
        assert_eq!(load(data.path()).unwrap().roots.len(), 1);
    }
}
