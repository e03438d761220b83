//! Which of a project's own MCP servers the user has allowed to run.
//!
//! A project's `.rein/config.toml` may declare MCP servers, but a cloned repository must
//! not be able to start programs on its own: a project server runs only once the user has
//! approved it, with the command line (or URL) it would run shown, and the approval is
//! remembered for that project, that server and that exact command line. Change any of
//! them (a pull that edits the command) and rein asks again.
//!
//! The approvals live in one file, `<data dir>/trusted-mcp-servers.json`, readable by the
//! user only: a JSON list of `{project, server, launch}`, where `launch` is the text the
//! user saw and approved. A file rein cannot read is no approval at all (everything is
//! asked again) and is said once; it is replaced on the next approval. Nothing here panics
//! on what the file holds.

use std::io;
use std::path::{Path, PathBuf};

/// One approval: this server of this project may run this.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Approval {
    project: PathBuf,
    server: String,
    launch: String,
}

/// The approvals on disk, as read at start.
#[derive(Debug, Clone, Default)]
pub struct TrustStore {
    path: PathBuf,
    approvals: Vec<Approval>,
}

/// The most bytes the file may hold (a few thousand approvals).
const MAX_BYTES: u64 = 1024 * 1024;

impl TrustStore {
    /// The store in `data_dir`, and what went wrong reading it, in words, if anything did
    /// (a missing file is no approval yet, not an error).
    pub fn load(data_dir: &Path) -> (TrustStore, Option<String>) {
        let path = data_dir.join("trusted-mcp-servers.json");
        let read = crate::safe_fs::read_small_text(&path, MAX_BYTES);
        let (approvals, problem) = match read {
            Ok(text) => match serde_json::from_str::<Vec<Approval>>(&text) {
                Ok(list) => (list, None),
                Err(e) => (
                    Vec::new(),
                    Some(format!(
                        "{} is not a list of approvals ({e}); every project MCP server will be \
                         asked about again",
                        path.display()
                    )),
                ),
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => (Vec::new(), None),
            Err(e) => (
                Vec::new(),
                Some(format!(
                    "{} cannot be read ({e}); every project MCP server will be asked about again",
                    path.display()
                )),
            ),
        };
        (TrustStore { path, approvals }, problem)
    }

    /// Whether the user allowed `server` of `project` to run `launch`.
    pub fn is_trusted(&self, project: &Path, server: &str, launch: &str) -> bool {
        self.approvals
            .iter()
            .any(|a| a.project == project && a.server == server && a.launch == launch)
    }

    /// Remember that the user allowed `server` of `project` to run `launch` (an earlier
    /// approval of the same server with another command line is replaced), and write the
    /// file.
    pub fn trust(&mut self, project: &Path, server: &str, launch: &str) -> io::Result<()> {
        self.approvals
            .retain(|a| !(a.project == project && a.server == server));
        self.approvals.push(Approval {
            project: project.to_path_buf(),
            server: server.to_string(),
            launch: launch.to_string(),
        });
        self.save()
    }

    /// Forget every approval of `project`'s servers (`rein mcp forget`), and write the file.
    pub fn forget_project(&mut self, project: &Path) -> io::Result<usize> {
        let before = self.approvals.len();
        self.approvals.retain(|a| a.project != project);
        let gone = before - self.approvals.len();
        if gone > 0 {
            self.save()?;
        }
        Ok(gone)
    }

    fn save(&self) -> io::Result<()> {
        let text = serde_json::to_string_pretty(&self.approvals).map_err(io::Error::other)?;
        // 0600 from the moment it exists, in a 0700 data folder when it makes one.
        crate::private_fs::replace(&self.path, text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_approval_holds_for_its_project_server_and_command_line_only() {
        let data = tempfile::tempdir().unwrap();
        let (mut store, problem) = TrustStore::load(data.path());
        assert!(problem.is_none(), "a missing file is no approval yet");
        let (p, q) = (Path::new("/work/p"), Path::new("/work/q"));
        assert!(!store.is_trusted(p, "db", "node server.js"));
        store.trust(p, "db", "node server.js").unwrap();
        assert!(store.is_trusted(p, "db", "node server.js"));
        assert!(
            !store.is_trusted(q, "db", "node server.js"),
            "another project"
        );
        assert!(
            !store.is_trusted(p, "web", "node server.js"),
            "another server"
        );
        assert!(
            !store.is_trusted(p, "db", "node server.js --evil"),
            "another command line"
        );
        // Read back by a later rein; a new command line replaces the old approval.
        let (mut again, _) = TrustStore::load(data.path());
        assert!(again.is_trusted(p, "db", "node server.js"));
        again.trust(p, "db", "node v2.js").unwrap();
        let (third, _) = TrustStore::load(data.path());
        assert!(third.is_trusted(p, "db", "node v2.js"));
        assert!(!third.is_trusted(p, "db", "node server.js"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let file = data.path().join("trusted-mcp-servers.json");
            let mode = std::fs::metadata(file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn a_bad_file_is_no_approval_and_says_so() {
        let data = tempfile::tempdir().unwrap();
        let file = data.path().join("trusted-mcp-servers.json");
        std::fs::write(&file, "{ not json").unwrap();
        let (mut store, problem) = TrustStore::load(data.path());
        let problem = problem.expect("a problem");
        assert!(problem.contains("asked about again"), "{problem}");
        assert!(!store.is_trusted(Path::new("/p"), "s", "x"));
        // The next approval replaces the file.
        store.trust(Path::new("/p"), "s", "x").unwrap();
        assert!(TrustStore::load(data.path())
            .0
            .is_trusted(Path::new("/p"), "s", "x"));
        assert_eq!(store.forget_project(Path::new("/p")).unwrap(), 1);
        assert!(!TrustStore::load(data.path())
            .0
            .is_trusted(Path::new("/p"), "s", "x"));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_in_place_of_the_file_is_not_written_through() {
        let data = tempfile::tempdir().unwrap();
        let elsewhere = data.path().join("elsewhere.json");
        std::fs::write(&elsewhere, "[]").unwrap();
        std::os::unix::fs::symlink(&elsewhere, data.path().join("trusted-mcp-servers.json"))
            .unwrap();
        let (mut store, _) = TrustStore::load(data.path());
        assert!(store.trust(Path::new("/p"), "s", "x").is_err());
        assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "[]");
    }
}
