//! Which of a project's own MCP servers the user has allowed to run.
//!
//! A project's `.rein/config.toml` may declare MCP servers, but a cloned repository must
//! not be able to start programs on its own: a project server runs only once the user has
//! approved it, with what it would run shown, and the approval is remembered for that
//! project, that server and that exact `[mcp_servers.NAME]` table (every key as written,
//! in the canonical form `mcp::pin` gives it), together with the project files the table
//! names (its script, its program: [`crate::consent::file_pin::Pins`]). Change any key (a pull that
//! edits the command, adds a header or names a token variable) or any of those files (the
//! model rewrites `mcp_tools.py`) and rein asks again. A project's hooks are approved here
//! too, under a name no server can have (`hooks::TRUST_NAME`), with the files their
//! commands name.
//!
//! The approvals live in one file, `<data dir>/trusted-mcp-servers.json`, readable by the
//! user only: a JSON list of `{project, server, table}`. An approval an older rein wrote
//! holds `launch` (the one-line command line it pinned) instead of `table`; it is read, but
//! it approves nothing any more: the server is asked about again (and the question says
//! why), and the new approval replaces it. An approval without `files` (written before
//! rein pinned files) approves a table that names no project file, and nothing else. The file
//! is a `store::JsonStore`: one rein cannot read is no approval at all (everything is
//! asked again), said once, and left as it is; a new approval is refused, with the error, until
//! the user repairs the file or moves it aside. Nothing here panics on what the file holds.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::consent::file_pin::Pins;
use crate::store::JsonStore;

/// One approval: this server of this project may run as this table declares it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Approval {
    project: PathBuf,
    server: String,
    /// The approved table, canonical.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    table: Option<Value>,
    /// What an older rein pinned instead: the command line only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    launch: Option<String>,
    /// The project files the table names, as they were (absent when an older rein wrote
    /// the approval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    files: Option<Pins>,
}

/// What the user approved of a server before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approved<'a> {
    /// This table, and the project files it named as they were (`None`: an approval
    /// written before rein pinned files, which approves no table that names one).
    Table(&'a Value, Option<&'a Pins>),
    /// Its command line, with an older rein: no approval of its table.
    OlderForm,
}

/// The approvals on disk, as read at start.
#[derive(Debug, Clone, Default)]
pub struct TrustStore {
    file: JsonStore,
    approvals: Vec<Approval>,
}

/// The most bytes the file may hold (a few thousand approvals).
const MAX_BYTES: u64 = 1024 * 1024;

impl TrustStore {
    /// The store in `data_dir`, and what went wrong reading it, in words, if anything did
    /// (a missing file is no approval yet, not an error).
    pub fn load(data_dir: &Path) -> (TrustStore, Option<String>) {
        let file = JsonStore::new(
            data_dir,
            "trusted-mcp-servers.json",
            MAX_BYTES,
            "rein's list of the project MCP servers and hooks you approved",
        );
        let (approvals, problem) = match file.read::<Vec<Approval>>() {
            Ok(list) => (list, None),
            Err(e) => (
                Vec::new(),
                Some(format!(
                    "{e}; every project MCP server will be asked about again"
                )),
            ),
        };
        (TrustStore { file, approvals }, problem)
    }

    /// Whether the user allowed `server` of `project` to run as `table` declares it (its
    /// files left aside: [`Approved::Table`] has them).
    pub fn is_trusted(&self, project: &Path, server: &str, table: &Value) -> bool {
        matches!(self.approved(project, server), Some(Approved::Table(t, _)) if t == table)
    }

    /// What the user last approved of `server` of `project`, if anything.
    pub fn approved(&self, project: &Path, server: &str) -> Option<Approved<'_>> {
        let approval = self
            .approvals
            .iter()
            .find(|a| a.project == project && a.server == server)?;
        Some(match &approval.table {
            Some(table) => Approved::Table(table, approval.files.as_ref()),
            None => Approved::OlderForm,
        })
    }

    /// Remember that the user allowed `server` of `project` to run as `table` declares it,
    /// naming no project file (an earlier approval of the same server is replaced), and
    /// write the file.
    pub fn trust(&mut self, project: &Path, server: &str, table: &Value) -> io::Result<()> {
        self.trust_pinned(project, server, table, &Pins::default())
    }

    /// [`trust`](Self::trust), with the project files the table names as they are
    /// (`files`): a later change to one of them asks again.
    pub fn trust_pinned(
        &mut self,
        project: &Path,
        server: &str,
        table: &Value,
        files: &Pins,
    ) -> io::Result<()> {
        let approval = Approval {
            project: project.to_path_buf(),
            server: server.to_string(),
            table: Some(table.clone()),
            launch: None,
            files: Some(files.clone()),
        };
        // What another rein approved meanwhile is kept: the file is read again.
        self.approvals = self.file.update(|approvals: &mut Vec<Approval>| {
            approvals.retain(|a| !(a.project == project && a.server == server));
            approvals.push(approval);
            approvals.clone()
        })?;
        Ok(())
    }

    /// Every project file an approval of `project` pins (a project server's script, a
    /// project hook's), absolute, sorted, each once: the files whose change holds what the
    /// user approved, for rules that ask before writing them.
    pub fn pinned_files(&self, project: &Path) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self
            .approvals
            .iter()
            .filter(|a| a.project == project)
            .filter_map(|a| a.files.as_ref())
            .flat_map(|pins| pins.paths().map(|p| project.join(p)))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Forget every approval of `project`'s servers (`rein mcp forget`), and write the file.
    pub fn forget_project(&mut self, project: &Path) -> io::Result<usize> {
        let (gone, left) = self.file.update(|approvals: &mut Vec<Approval>| {
            let before = approvals.len();
            approvals.retain(|a| a.project != project);
            (before - approvals.len(), approvals.clone())
        })?;
        self.approvals = left;
        Ok(gone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_approval_holds_for_its_project_server_and_table_only() {
        let data = tempfile::tempdir().unwrap();
        let (mut store, problem) = TrustStore::load(data.path());
        assert!(problem.is_none(), "a missing file is no approval yet");
        let (p, q) = (Path::new("/work/p"), Path::new("/work/q"));
        let table = json!({"command": "node", "args": ["server.js"]});
        assert!(!store.is_trusted(p, "db", &table));
        assert_eq!(store.approved(p, "db"), None);
        store.trust(p, "db", &table).unwrap();
        assert!(store.is_trusted(p, "db", &table));
        assert!(!store.is_trusted(q, "db", &table), "another project");
        assert!(!store.is_trusted(p, "web", &table), "another server");
        let evil = json!({"command": "node", "args": ["server.js"], "env": {"LD_PRELOAD": "x"}});
        assert!(!store.is_trusted(p, "db", &evil), "another table");
        assert_eq!(
            store.approved(p, "db"),
            Some(Approved::Table(&table, Some(&Pins::default())))
        );
        assert!(store.pinned_files(p).is_empty());
        // Read back by a later rein; a new table replaces the old approval.
        let (mut again, _) = TrustStore::load(data.path());
        assert!(again.is_trusted(p, "db", &table));
        let v2 = json!({"command": "node", "args": ["v2.js"]});
        again.trust(p, "db", &v2).unwrap();
        let (third, _) = TrustStore::load(data.path());
        assert!(third.is_trusted(p, "db", &v2));
        assert!(!third.is_trusted(p, "db", &table));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let file = data.path().join("trusted-mcp-servers.json");
            let mode = std::fs::metadata(file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    /// An older rein pinned the command line only (`launch`): read, approving nothing,
    /// replaced by the next approval.
    #[test]
    fn an_older_approval_of_the_command_line_approves_nothing_now() {
        let data = tempfile::tempdir().unwrap();
        let file = data.path().join("trusted-mcp-servers.json");
        std::fs::write(
            &file,
            r#"[{"project": "/p", "server": "docs", "launch": "https://docs.example/mcp"},
                {"project": "/p", "server": "db", "launch": "node db.js"}]"#,
        )
        .unwrap();
        let (mut store, problem) = TrustStore::load(data.path());
        assert_eq!(problem, None);
        let p = Path::new("/p");
        let table = json!({"url": "https://docs.example/mcp"});
        assert_eq!(store.approved(p, "docs"), Some(Approved::OlderForm));
        assert!(!store.is_trusted(p, "docs", &table));
        store.trust(p, "docs", &table).unwrap();
        let (read, _) = TrustStore::load(data.path());
        assert!(read.is_trusted(p, "docs", &table));
        assert_eq!(read.approved(p, "db"), Some(Approved::OlderForm), "kept");
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text.matches("launch").count(), 1, "{text}");
    }

    /// The files approvals pin, for the file rules: every approval of the project's.
    #[test]
    fn the_files_pinned_for_a_project_are_listed() {
        let data = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let root = project.path();
        std::fs::write(root.join("mcp_tools.py"), "x").unwrap();
        std::fs::create_dir_all(root.join(".claude/hooks")).unwrap();
        std::fs::write(root.join(".claude/hooks/check.sh"), "y").unwrap();
        let (mut store, _) = TrustStore::load(data.path());
        let pins = |p: &str| Pins::take(root, &[PathBuf::from(p), PathBuf::from("gone.py")]);
        store
            .trust_pinned(root, "tools", &json!({}), &pins("mcp_tools.py"))
            .unwrap();
        store
            .trust_pinned(root, "(hooks)", &json!({}), &pins(".claude/hooks/check.sh"))
            .unwrap();
        store
            .trust_pinned(
                Path::new("/elsewhere"),
                "x",
                &json!({}),
                &pins("mcp_tools.py"),
            )
            .unwrap();
        assert_eq!(
            TrustStore::load(data.path()).0.pinned_files(root),
            [
                root.join(".claude/hooks/check.sh"),
                root.join("mcp_tools.py")
            ]
        );
    }

    /// A file rein cannot read approves nothing, is said, and is never written over: the
    /// next approval is refused until the user moves it aside (`store`'s rule).
    #[test]
    fn a_bad_file_is_no_approval_and_says_so() {
        let data = tempfile::tempdir().unwrap();
        let file = data.path().join("trusted-mcp-servers.json");
        std::fs::write(&file, "{ not json").unwrap();
        let (mut store, problem) = TrustStore::load(data.path());
        let problem = problem.expect("a problem");
        assert!(problem.contains("asked about again"), "{problem}");
        assert!(problem.contains(&file.display().to_string()), "{problem}");
        let x = json!({"command": "x"});
        assert!(!store.is_trusted(Path::new("/p"), "s", &x));
        let refused = store.trust(Path::new("/p"), "s", &x).unwrap_err();
        assert!(refused.to_string().contains("move it aside"), "{refused}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "{ not json");
        // Moved aside: the next approval starts a new file.
        std::fs::rename(&file, data.path().join("bad.json")).unwrap();
        store.trust(Path::new("/p"), "s", &x).unwrap();
        assert!(TrustStore::load(data.path())
            .0
            .is_trusted(Path::new("/p"), "s", &x));
        assert_eq!(store.forget_project(Path::new("/p")).unwrap(), 1);
        assert!(!TrustStore::load(data.path())
            .0
            .is_trusted(Path::new("/p"), "s", &x));
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
        assert!(store
            .trust(Path::new("/p"), "s", &json!({"command": "x"}))
            .is_err());
        assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "[]");
    }
}
