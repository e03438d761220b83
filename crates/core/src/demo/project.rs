//! The demo's example project: a fresh copy in a temporary directory, removed on drop.
//!
//! The files are compiled in from `crates/core/assets/demo/project/`: a tiny shell calculator whose
//! `add` subtracts and the test that catches it. Each demo gets its own directory under
//! the system's temporary directory, named after the process and the time, so the replayed
//! session edits a throwaway copy and never the user's files.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// The project's files: (name, contents).
pub(super) const FILES: &[(&str, &str)] = &[
    (
        "README.md",
        include_str!("../../assets/demo/project/README.md"),
    ),
    ("calc.sh", include_str!("../../assets/demo/project/calc.sh")),
    (
        "test_calc.sh",
        include_str!("../../assets/demo/project/test_calc.sh"),
    ),
];

/// Names tried before giving up on finding a free directory name.
const NAME_ATTEMPTS: u32 = 100;

/// A temporary copy of the example project; dropping it deletes the directory.
#[derive(Debug)]
pub(super) struct DemoProject {
    dir: PathBuf,
}

impl DemoProject {
    /// Creates a fresh directory under the system's temporary directory and writes the
    /// project into it.
    pub fn create() -> io::Result<DemoProject> {
        let base = std::env::temp_dir();
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let mut attempt = 0;
        let dir = loop {
            let dir = base.join(format!(
                "rein-demo-{}-{nanos}-{attempt}",
                std::process::id()
            ));
            // The user's alone (0700), like everything rein makes for the user.
            match crate::host::private_fs::create_new_dir(&dir) {
                Ok(()) => break dir,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < NAME_ATTEMPTS => {
                    attempt += 1;
                }
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!(
                            "could not create the demo project in \"{}\": {e}",
                            base.display()
                        ),
                    ))
                }
            }
        };
        // Owned from here: an error below removes the directory again.
        let mut project = DemoProject { dir };
        // The agent resolves paths; a symlinked temp dir (macOS's /tmp) must not look
        // like a different place.
        if let Ok(real) = project.dir.canonicalize() {
            project.dir = real;
        }
        for (name, contents) in FILES {
            let path = project.dir.join(name);
            std::fs::write(&path, contents).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("could not write \"{}\": {e}", path.display()),
                )
            })?;
        }
        Ok(project)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for DemoProject {
    fn drop(&mut self) {
        // Best effort: a leftover directory in the temp dir harms nobody.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_project_is_a_fresh_copy_removed_on_drop() {
        let a = DemoProject::create().unwrap();
        let b = DemoProject::create().unwrap();
        assert_ne!(a.dir(), b.dir());
        for (name, contents) in FILES {
            assert_eq!(
                std::fs::read_to_string(a.dir().join(name)).unwrap(),
                *contents
            );
        }
        std::fs::write(a.dir().join("extra.txt"), "made by the agent").unwrap();
        let dir = a.dir().to_path_buf();
        drop(a);
        assert!(!dir.exists());
        assert!(b.dir().exists());
    }

    #[test]
    fn the_example_test_fails_until_add_adds() {
        let project = DemoProject::create().unwrap();
        let run = || {
            std::process::Command::new("sh")
                .arg("test_calc.sh")
                .current_dir(project.dir())
                .output()
                .unwrap()
        };
        let before = run();
        assert_eq!(before.status.code(), Some(1));
        let out = String::from_utf8_lossy(&before.stdout);
        assert!(out.contains("FAIL add 2 3: expected 5, got -1"), "{out}");
        assert!(out.contains("PASS sub 7 4"), "{out}");

        let calc = project.dir().join("calc.sh");
        let fixed = std::fs::read_to_string(&calc).unwrap().replacen(
            "add() {\n  echo $(( $1 - $2 ))",
            "add() {\n  echo $(( $1 + $2 ))",
            1,
        );
        std::fs::write(&calc, fixed).unwrap();
        let after = run();
        assert!(after.status.success(), "{after:?}");
        assert_eq!(
            String::from_utf8_lossy(&after.stdout)
                .matches("PASS")
                .count(),
            3
        );
    }
}
