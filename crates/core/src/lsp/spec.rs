//! Which language servers there are: the defaults rein knows, found on `PATH` with no
//! configuration, and the user's `[lsp.NAME]` tables, which add a server or change a
//! default (`enabled = false` turns one off).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One language server as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// `pyright`, or the name of its `[lsp.NAME]` table.
    pub name: String,
    /// The program and its arguments.
    pub command: String,
    pub args: Vec<String>,
    /// The file extensions it serves, without the dot (`py`).
    pub extensions: Vec<String>,
    /// Variables set for it, besides rein's environment less its secrets.
    pub env: BTreeMap<String, String>,
    /// Files that mark a project root for it (`Cargo.toml`): a file is served from the
    /// nearest folder above it that has one, inside the project (the project otherwise).
    pub root_markers: Vec<String>,
    /// `initializationOptions`, as the server documents them.
    pub initialization_options: Option<serde_json::Value>,
    /// What the server is told for `workspace/configuration`, by section.
    pub settings: Option<serde_json::Value>,
    pub enabled: bool,
}

impl ServerSpec {
    fn default_of(
        name: &str,
        command: &str,
        args: &[&str],
        extensions: &[&str],
        markers: &[&str],
        settings: Option<serde_json::Value>,
    ) -> ServerSpec {
        ServerSpec {
            name: name.into(),
            command: command.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            extensions: extensions.iter().map(|e| e.to_string()).collect(),
            env: BTreeMap::new(),
            root_markers: markers.iter().map(|m| m.to_string()).collect(),
            initialization_options: None,
            settings,
            enabled: true,
        }
    }

    /// Whether it serves `path` (by its extension).
    pub fn serves(&self, path: &Path) -> bool {
        path.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| self.extensions.iter().any(|x| x.eq_ignore_ascii_case(e)))
    }
}

/// The servers rein knows without configuration, in the order they are tried for a file:
/// a Python file goes to pyright, or basedpyright where only that is installed.
pub fn defaults() -> Vec<ServerSpec> {
    // Pyright checks every file of the workspace, not only the open ones, so a changed
    // signature's broken callers are reported too.
    let python = serde_json::json!({
        "python": {"analysis": {"diagnosticMode": "workspace"}},
        "basedpyright": {"analysis": {"diagnosticMode": "workspace"}},
    });
    let py = ["py", "pyi"];
    let py_markers = [
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "pyrightconfig.json",
    ];
    vec![
        ServerSpec::default_of(
            "rust-analyzer",
            "rust-analyzer",
            &[],
            &["rs"],
            &["Cargo.toml"],
            None,
        ),
        ServerSpec::default_of(
            "pyright",
            "pyright-langserver",
            &["--stdio"],
            &py,
            &py_markers,
            Some(python.clone()),
        ),
        ServerSpec::default_of(
            "basedpyright",
            "basedpyright-langserver",
            &["--stdio"],
            &py,
            &py_markers,
            Some(python),
        ),
        ServerSpec::default_of(
            "typescript",
            "typescript-language-server",
            &["--stdio"],
            &["ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts"],
            &["tsconfig.json", "jsconfig.json", "package.json"],
            None,
        ),
        ServerSpec::default_of("gopls", "gopls", &[], &["go"], &["go.mod"], None),
        ServerSpec::default_of(
            "clangd",
            "clangd",
            &[],
            &["c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx"],
            &[
                "compile_commands.json",
                "compile_flags.txt",
                "CMakeLists.txt",
            ],
            None,
        ),
    ]
}

/// The defaults with the user's tables over them: a table of a default's name changes the
/// keys it sets (`enabled = false` turns it off); another name adds a server, tried
/// before the defaults.
pub fn merged(configured: &[ServerSpec]) -> Vec<ServerSpec> {
    let mut out: Vec<ServerSpec> = configured
        .iter()
        .filter(|c| !defaults().iter().any(|d| d.name == c.name))
        .cloned()
        .collect();
    for default in defaults() {
        match configured.iter().find(|c| c.name == default.name) {
            Some(mine) => out.push(mine.clone()),
            None => out.push(default),
        }
    }
    out
}

/// `program` as found in the absolute folders of `path_var` (`PATH`: a relative entry
/// would be the project, which must not plant a server rein runs), or as given when it
/// names a path (absolute: the config refuses a relative one).
pub fn find_program(program: &str, path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        let runs = std::fs::metadata(&p).is_ok_and(|m| {
            use std::os::unix::fs::PermissionsExt;
            m.is_file() && m.permissions().mode() & 0o111 != 0
        });
        return (p.is_absolute() && runs).then_some(p);
    }
    crate::host::program_path::lookup(program, path_var)
}

/// The folder a server serves `file` from: the nearest one above it, inside `project`,
/// that holds one of `markers`; `project` when none does.
pub fn root_for(file: &Path, project: &Path, markers: &[String]) -> PathBuf {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if !d.starts_with(project) {
            break;
        }
        if markers.iter().any(|m| d.join(m).exists()) {
            return d.to_path_buf();
        }
        if d == project {
            break;
        }
        dir = d.parent();
    }
    project.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_users_table_changes_a_default_or_adds_a_server_first() {
        let mut off = defaults().into_iter().find(|d| d.name == "gopls").unwrap();
        off.enabled = false;
        let mut mine = off.clone();
        mine.name = "ruff".into();
        mine.command = "ruff".into();
        mine.extensions = vec!["py".into()];
        mine.enabled = true;
        let all = merged(&[off, mine]);
        assert_eq!(all[0].name, "ruff");
        assert!(!all.iter().find(|s| s.name == "gopls").unwrap().enabled);
        assert_eq!(all.len(), defaults().len() + 1);
        let py = all.iter().find(|s| s.serves(Path::new("a/b.PY"))).unwrap();
        assert_eq!(py.name, "ruff");
    }

    #[test]
    fn the_root_is_the_nearest_marked_folder_inside_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path();
        std::fs::create_dir_all(project.join("crates/a/src")).unwrap();
        std::fs::write(project.join("crates/a/Cargo.toml"), "").unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "").unwrap();
        let markers = vec!["Cargo.toml".to_string()];
        assert_eq!(
            root_for(&project.join("crates/a/src/lib.rs"), project, &markers),
            project.join("crates/a")
        );
        assert_eq!(
            root_for(&project.join("x.rs"), project, &markers),
            project.to_path_buf()
        );
        // A marker above the project does not count.
        let inner = project.join("crates/b");
        std::fs::create_dir_all(&inner).unwrap();
        assert_eq!(root_for(&inner.join("m.rs"), &inner, &markers), inner);
    }

    #[test]
    fn a_program_is_found_on_the_path_only_when_executable() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("srv");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::write(dir.path().join("plain"), "").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([Path::new("."), dir.path()]).unwrap();
        assert_eq!(find_program("srv", Some(&path)), Some(exe.clone()));
        // A relative folder of PATH (the project, often) is not searched.
        let here = std::env::join_paths([Path::new(".")]).unwrap();
        assert_eq!(find_program("srv", Some(&here)), None);
        assert_eq!(find_program("plain", Some(&path)), None);
        assert_eq!(find_program("none", Some(&path)), None);
        assert_eq!(find_program(exe.to_str().unwrap(), None), Some(exe));
    }
}
