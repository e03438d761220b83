//! What keeps a hook from running, decided every time it is about to run.
//!
//! Two things, both read from disk at each firing (a hook that fires reads a few small
//! files; no hook, no cost):
//!
//! - **the host-tool files** at the project root ([`crate::consent::host_tools`]): one created,
//!   changed or removed since rein recorded it, other than by a write the user approved,
//!   holds every hook, the user's own too (a user's `cargo fmt` hook would run the
//!   alias a planted `.cargo/config.toml` names);
//! - **the project's approval** ([`ProjectApproval`]): the project's hooks run only while
//!   the trust store approves their definitions as loaded *and* the project files their
//!   commands name are as pinned. The model rewrites `.claude/hooks/check.sh`; the next
//!   event finds it changed and the project's hooks are held.
//!
//! What holds them comes back as data, a [`Hold`], which the front end words once.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::consent::file_pin::{PinChange, Pins};
use crate::consent::host_tools::HostToolChange;
use crate::consent::trust::{Approved, TrustStore};

/// The name a project's hooks are approved under in the trust store (no MCP server's
/// table can equal a hooks file's, so the two never approve each other).
pub const TRUST_NAME: &str = "(hooks)";

/// What the project's hooks in force were approved as: the definitions, and the project
/// paths their commands name (each checked against the approval's pins).
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectApproval {
    pub declared: Value,
    pub paths: Vec<PathBuf>,
}

/// Why the project's hooks wait for the user's approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeldWhy {
    /// The user never approved them.
    New,
    /// The user approved other definitions (`hooks.json` changed since).
    Changed,
    /// Files the commands name are not as they were when the user approved them.
    Files(Vec<PinChange>),
    /// The user approved them with an older rein, which pinned the definitions but not the
    /// files their commands name (these, there now).
    Unpinned(Vec<PinChange>),
}

impl std::fmt::Display for HeldWhy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = |changes: &[PinChange]| {
            changes
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        };
        match self {
            HeldWhy::New => f.write_str("you have not approved them"),
            HeldWhy::Changed => f.write_str("the file changed since you approved it"),
            HeldWhy::Files(changes) => write!(
                f,
                "a file they run changed since you approved them ({})",
                list(changes)
            ),
            HeldWhy::Unpinned(changes) => write!(
                f,
                "you approved them with an older rein, which did not pin the files they run ({})",
                list(changes)
            ),
        }
    }
}

/// Why the project's hooks, declared as `declared` and naming `paths`, do not run as the
/// trust store approves them; `None` when they do.
pub fn verdict(
    store: &TrustStore,
    root: &Path,
    declared: &Value,
    paths: &[PathBuf],
) -> Option<HeldWhy> {
    match store.approved(root, TRUST_NAME) {
        None | Some(Approved::OlderForm) => Some(HeldWhy::New),
        Some(Approved::Table(table, _)) if table != declared => Some(HeldWhy::Changed),
        Some(Approved::Table(_, None)) => {
            let there = Pins::default().changes(root, paths);
            (!there.is_empty()).then_some(HeldWhy::Unpinned(there))
        }
        Some(Approved::Table(_, Some(pins))) => {
            let changes = pins.changes(root, paths);
            (!changes.is_empty()).then_some(HeldWhy::Files(changes))
        }
    }
}

/// What kept hooks from running, for the front end.
#[derive(Debug, Clone, PartialEq)]
pub enum Hold {
    /// A host-tool file at the project root changed without the user's approval: no hook
    /// runs until the user takes it as it is (`rein steering allow`).
    HostTool(HostToolChange),
    /// The project's hooks no longer run as the user approved them.
    Project(HeldWhy),
}

impl std::fmt::Display for Hold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Hold::HostTool(change) => write!(
                f,
                "hooks held: {change}; check it, then run `{}` in the project to let hooks \
                 run with it as it is",
                crate::consent::host_tools::ALLOW_COMMAND
            ),
            Hold::Project(why) => write!(
                f,
                "the project's hooks are held: {why}; `rein hooks allow` shows them with the \
                 files they run and approves them"
            ),
        }
    }
}

/// What holds the hooks of `root` now: the host-tool files' changes (any hook), and, when
/// `project` hooks are about to run, why their approval no longer holds.
pub fn holds(data_dir: &Path, root: &Path, project: Option<&ProjectApproval>) -> Vec<Hold> {
    let mut out: Vec<Hold> = crate::consent::host_tools::check(data_dir, root)
        .into_iter()
        .map(Hold::HostTool)
        .collect();
    if let Some(approval) = project {
        let (store, _) = TrustStore::load(data_dir);
        if let Some(why) = verdict(&store, root, &approval.declared, &approval.paths) {
            out.push(Hold::Project(why));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consent::file_pin::FileState;

    /// An approval an older rein wrote, without the files: it approves the definitions
    /// while they name no project file that is there, and holds them, naming the files,
    /// once one is.
    #[test]
    fn an_approval_without_pinned_files_holds_once_a_named_file_is_there() {
        let project = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let root = project.path();
        let declared = serde_json::json!({"hooks": {"Stop": []}});
        let older = serde_json::json!([{"project": root, "server": TRUST_NAME, "table": declared}]);
        std::fs::write(
            data.path().join("trusted-mcp-servers.json"),
            older.to_string(),
        )
        .unwrap();
        let (store, problem) = TrustStore::load(data.path());
        assert_eq!(problem, None);
        let named = vec![PathBuf::from("check.sh")];
        assert_eq!(verdict(&store, root, &declared, &[]), None);
        assert_eq!(verdict(&store, root, &declared, &named), None);
        std::fs::write(root.join("check.sh"), "exit 0\n").unwrap();
        assert!(
            matches!(
                verdict(&store, root, &declared, &named),
                Some(HeldWhy::Unpinned(c)) if c.len() == 1 && c[0].path == "check.sh"
            ),
            "held, naming the file"
        );
    }

    /// Why hooks are held, in the words the held notice shows: each reason, and the files
    /// that changed listed one after another.
    #[test]
    fn a_hold_says_why_in_words_and_names_the_files() {
        let changes = vec![
            PinChange {
                path: ".claude/hooks/check.sh".into(),
                before: FileState::File("aa".into()),
                now: FileState::File("bb".into()),
            },
            PinChange {
                path: "scripts/lint.py".into(),
                before: FileState::File("cc".into()),
                now: FileState::Absent,
            },
        ];
        assert_eq!(HeldWhy::New.to_string(), "you have not approved them");
        assert_eq!(
            HeldWhy::Changed.to_string(),
            "the file changed since you approved it"
        );
        assert_eq!(
            HeldWhy::Files(changes.clone()).to_string(),
            "a file they run changed since you approved them (file .claude/hooks/check.sh: \
             changed; file scripts/lint.py: was removed)"
        );
        assert!(HeldWhy::Unpinned(changes)
            .to_string()
            .starts_with("you approved them with an older rein, which did not pin the files"));
    }
}
