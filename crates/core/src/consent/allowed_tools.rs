//! The tools the user allowed for a project from the approval prompt ("always allow in
//! this project"), kept where the project cannot write.
//!
//! A tool from an MCP server runs outside the sandbox, so an allow for one must be the
//! user's word, not the project's: rein does not obey a project file's tool `allow` rules,
//! and the approval prompt's `p` for such a tool writes here instead of to the project's
//! `.rein/config.toml`. The file is `<data dir>/allowed-tools.json`, readable by the user
//! only and never written through a link: a JSON list of `{project, pattern}`. Its rules
//! join the user's own (`RuleOrigin::Config` with this file's path) for that project only.
//! The file is a `store::JsonStore`: one rein cannot read is no allow at all (those
//! tools ask again), said once, and left as it is; a new allow is refused, with the error,
//! until the user repairs the file or moves it aside. Nothing here panics on what the file
//! holds.

use std::io;
use std::path::{Path, PathBuf};

use crate::store::JsonStore;

/// One allow: in this project, tools matching this glob run without asking.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Allow {
    project: PathBuf,
    pattern: String,
}

/// The allows on disk, as read at start.
#[derive(Debug, Clone, Default)]
pub struct AllowedTools {
    file: JsonStore,
    allows: Vec<Allow>,
}

/// The file's name in the data folder.
pub const FILE_NAME: &str = "allowed-tools.json";
/// The most bytes the file may hold.
const MAX_BYTES: u64 = 1024 * 1024;

impl AllowedTools {
    /// The store in `data_dir`, and what went wrong reading it, in words, if anything did
    /// (a missing file is no allow yet, not an error).
    pub fn load(data_dir: &Path) -> (AllowedTools, Option<String>) {
        let file = JsonStore::new(
            data_dir,
            FILE_NAME,
            MAX_BYTES,
            "rein's list of the tools you allowed for your projects",
        );
        let (allows, problem) = match file.read::<Vec<Allow>>() {
            Ok(list) => (list, None),
            Err(e) => (
                Vec::new(),
                Some(format!(
                    "{e}; the tools you allowed for your projects will ask again"
                )),
            ),
        };
        (AllowedTools { file, allows }, problem)
    }

    /// Where the store lives (the origin its rules are described with).
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The patterns allowed for `project`, in the order they were allowed.
    pub fn patterns(&self, project: &Path) -> Vec<String> {
        self.allows
            .iter()
            .filter(|a| a.project == project)
            .map(|a| a.pattern.clone())
            .collect()
    }

    /// Remember that tools matching `patterns` run without asking in `project`, and write
    /// the file (a pattern already there is not added twice).
    pub fn allow(&mut self, project: &Path, patterns: &[&str]) -> io::Result<()> {
        // What another rein allowed meanwhile is kept: the file is read again.
        self.allows = self.file.update(|allows: &mut Vec<Allow>| {
            for pattern in patterns {
                let allow = Allow {
                    project: project.to_path_buf(),
                    pattern: pattern.to_string(),
                };
                if !allows.contains(&allow) {
                    allows.push(allow);
                }
            }
            allows.clone()
        })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allows_hold_for_their_project_and_survive_a_restart() {
        let data = tempfile::tempdir().unwrap();
        let (mut store, problem) = AllowedTools::load(data.path());
        assert!(problem.is_none(), "a missing file is no allow yet");
        let (p, q) = (Path::new("/work/p"), Path::new("/work/q"));
        store.allow(p, &["mcp__gh__list_issues"]).unwrap();
        store
            .allow(p, &["mcp__gh__list_issues", "mcp__gh__get_\\*"])
            .unwrap();
        let (again, _) = AllowedTools::load(data.path());
        assert_eq!(
            again.patterns(p),
            ["mcp__gh__list_issues", "mcp__gh__get_\\*"]
        );
        assert!(again.patterns(q).is_empty(), "another project");
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

    #[test]
    fn a_bad_file_is_no_allow_and_says_so() {
        let data = tempfile::tempdir().unwrap();
        std::fs::write(data.path().join(FILE_NAME), "[{\"project\": 3}]").unwrap();
        let (mut store, problem) = AllowedTools::load(data.path());
        assert!(problem.unwrap().contains("will ask again"));
        assert!(store.patterns(Path::new("/p")).is_empty());
        // Never written over (`store`'s rule): refused until the file is moved aside.
        assert!(store.allow(Path::new("/p"), &["mcp__a__b"]).is_err());
        assert_eq!(
            std::fs::read_to_string(data.path().join(FILE_NAME)).unwrap(),
            "[{\"project\": 3}]"
        );
        std::fs::remove_file(data.path().join(FILE_NAME)).unwrap();
        store.allow(Path::new("/p"), &["mcp__a__b"]).unwrap();
        assert_eq!(
            AllowedTools::load(data.path()).0.patterns(Path::new("/p")),
            ["mcp__a__b"]
        );
    }
}
