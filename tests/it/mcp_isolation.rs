//! What a server of the user's own config may reach of the project (issue 22): nothing
//! the table does not name. Each test puts hostile code in a project folder, where a
//! launcher that reads its working folder would find it (a Python module named like the
//! server, a package in `node_modules`, a script next to the config), and starts a
//! server of the user's through the real [`McpManager`]; the hostile code writes a
//! marker file if it ever runs. Each also shows the fixture is live: named explicitly
//! (`${project}`), or declared by the project itself, the same code does run.
//!
//! Python and node are on every machine that builds rein's tests; the tests that need
//! the registry servers (`mcp-server-time` from PyPI, `server-filesystem` from npm) skip
//! where they are missing, unless `REIN_MCP=1` (see `crates/test-support/src/mcp.rs`).

use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rein_core::mcp::{McpManager, Origin, ServerConfig, ServerState, Transport};
use serde_json::json;
use support::mcp::{installed, settled, state};

/// A project folder and a marker path outside it that the hostile code writes.
struct Fixture {
    project: tempfile::TempDir,
    elsewhere: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture {
            project: tempfile::tempdir().unwrap(),
            elsewhere: tempfile::tempdir().unwrap(),
        }
    }

    /// The project root, as rein has it (canonical).
    fn root(&self) -> PathBuf {
        self.project.path().canonicalize().unwrap()
    }

    fn marker(&self, name: &str) -> PathBuf {
        self.elsewhere.path().join(name)
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.root().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// A user's server, its marker variable set, with `cwd` and more `env`.
    fn server(
        &self,
        name: &str,
        command: &str,
        args: &[&str],
        cwd: Option<&str>,
        env: &[(&str, &str)],
    ) -> ServerConfig {
        let mut server = ServerConfig::stdio(name, command, args);
        server.startup_timeout = Duration::from_secs(20);
        if let Transport::Stdio {
            env: vars,
            cwd: dir,
            ..
        } = &mut server.transport
        {
            vars.push((
                "REIN_TEST_MARKER".into(),
                self.marker(name).display().to_string(),
            ));
            vars.extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
            *dir = cwd.map(PathBuf::from);
        }
        server
    }

    async fn start(&self, servers: Vec<ServerConfig>) -> McpManager {
        let (mcp, mut events) = McpManager::start(servers, &self.root());
        settled(&mut events, &mcp).await;
        mcp
    }

    fn ran(&self, name: &str) -> bool {
        self.marker(name).exists()
    }
}

fn failed(mcp: &McpManager, name: &str) -> String {
    match state(mcp, name) {
        ServerState::Failed { reason, stderr } => format!("{reason}\n{}", stderr.join("\n")),
        other => panic!("{name} did not fail: {other:?}"),
    }
}

fn executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

const HOSTILE_PY: &str = "import os, sys\n\
    open(os.environ['REIN_TEST_MARKER'], 'w').write('the project ran')\n\
    sys.exit(3)\n";

/// `python3 -m MODULE` where only the project has MODULE: the server starts in its own
/// folder, so Python does not find it; naming the project as the folder still does not
/// make Python import from it (`PYTHONSAFEPATH`), unless the table turns that off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_dash_m_does_not_import_the_projects_module() {
    let f = Fixture::new();
    f.write("rein_hostile_module.py", HOSTILE_PY);
    let mcp = f
        .start(vec![
            f.server(
                "plain",
                "python3",
                &["-m", "rein_hostile_module"],
                None,
                &[],
            ),
            f.server(
                "named",
                "python3",
                &["-m", "rein_hostile_module"],
                Some("${project}"),
                &[],
            ),
            f.server(
                "unsafe",
                "python3",
                &["-m", "rein_hostile_module"],
                Some("${project}"),
                &[("PYTHONSAFEPATH", "")],
            ),
        ])
        .await;
    let why = failed(&mcp, "plain");
    assert!(why.contains("No module named rein_hostile_module"), "{why}");
    assert!(!f.ran("plain"));
    let why = failed(&mcp, "named");
    assert!(why.contains("No module named rein_hostile_module"), "{why}");
    assert!(!f.ran("named"));
    // The fixture is live: with the safe path turned off, the project's module runs.
    failed(&mcp, "unsafe");
    assert!(f.ran("unsafe"), "the hostile module was not imported");
    mcp.shutdown().await;
}

/// The real `mcp-server-time`, with a hostile `mcp_server_time.py` in the project: the
/// installed one starts and lists its tools, the project's copy never runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_time_server_starts_from_its_venv_not_from_the_project() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let f = Fixture::new();
    f.write("mcp_server_time.py", HOSTILE_PY);
    f.write("mcp_server_time/__init__.py", HOSTILE_PY);
    let python = python.to_str().unwrap();
    let mcp = f
        .start(vec![
            f.server("time", python, &["-m", "mcp_server_time"], None, &[]),
            f.server(
                "intime",
                python,
                &["-m", "mcp_server_time"],
                Some("${project}"),
                &[],
            ),
        ])
        .await;
    for name in ["time", "intime"] {
        assert!(
            matches!(state(&mcp, name), ServerState::Ready { .. }),
            "{name}: {:?}",
            state(&mcp, name)
        );
        assert!(!f.ran(name), "{name} imported the project's module");
    }
    let out = mcp
        .call(
            "mcp__time__get_current_time",
            json!({"timezone": "UTC"}),
            None,
            std::future::pending::<()>(),
        )
        .await
        .unwrap();
    assert!(out.text.contains("\"timezone\": \"UTC\""), "{}", out.text);
    mcp.shutdown().await;
}

/// npx and node look for `node_modules` in their folder and every folder above it. A
/// package only the project has: `npx -y PKG` and `node -e "require('PKG')"` do not find
/// it (npx is kept offline, so it cannot fetch one either); run in the project, they do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn npx_and_node_do_not_run_the_projects_node_modules() {
    let f = Fixture::new();
    let pkg = "rein-hostile-fixture";
    f.write(
        "package.json",
        &json!({"name": "p", "version": "1.0.0", "dependencies": {pkg: "1.0.0"}}).to_string(),
    );
    f.write(
        &format!("node_modules/{pkg}/package.json"),
        &json!({"name": pkg, "version": "1.0.0", "bin": {pkg: "bin.js"}, "main": "bin.js"})
            .to_string(),
    );
    let bin = f.write(
        &format!("node_modules/{pkg}/bin.js"),
        "#!/usr/bin/env node\n\
         require('fs').writeFileSync(process.env.REIN_TEST_MARKER, 'the project ran');\n\
         process.exit(3);\n",
    );
    executable(&bin);
    std::fs::create_dir_all(f.root().join("node_modules/.bin")).unwrap();
    std::os::unix::fs::symlink(
        format!("../{pkg}/bin.js"),
        f.root().join(format!("node_modules/.bin/{pkg}")),
    )
    .unwrap();
    let offline = [("npm_config_offline", "true")];
    let require = format!("require('{pkg}')");
    let mcp = f
        .start(vec![
            f.server("npx", "npx", &["-y", pkg], None, &offline),
            f.server("node", "node", &["-e", &require], None, &[]),
            f.server("npxin", "npx", &["-y", pkg], Some("${project}"), &offline),
            f.server("nodein", "node", &["-e", &require], Some("${project}"), &[]),
        ])
        .await;
    let why = failed(&mcp, "npx");
    assert!(!f.ran("npx"), "npx ran the project's package: {why}");
    let why = failed(&mcp, "node");
    assert!(why.contains("Cannot find module"), "{why}");
    assert!(!f.ran("node"));
    // The fixture is live: in the project (named as the folder), both find the package.
    // This is why docs/mcp.md names the project in `args`, not in `cwd`.
    failed(&mcp, "npxin");
    failed(&mcp, "nodein");
    assert!(f.ran("npxin") && f.ran("nodein"));
    mcp.shutdown().await;
}

/// A relative command of the user's is not the project's program: `./server.sh` is
/// refused, `node server.js` finds no `server.js`, a bare `server.sh` is not looked up
/// through `.` in PATH. The project's own (approved) server runs its `./server.sh`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relative_command_does_not_reach_into_the_project() {
    let f = Fixture::new();
    let script = f.write(
        "server.sh",
        "#!/bin/sh\necho \"the project ran\" > \"$REIN_TEST_MARKER\"\nexit 3\n",
    );
    executable(&script);
    f.write(
        "server.js",
        "require('fs').writeFileSync(process.env.REIN_TEST_MARKER, 'the project ran');\n",
    );
    let path = [("PATH", ".:/usr/local/bin:/usr/bin:/bin")];
    let mut theirs = f.server("theirs", "./server.sh", &[], None, &[]);
    theirs.origin = Origin::Project(f.root().join(".rein/config.toml"));
    let mcp = f
        .start(vec![
            f.server("dotslash", "./server.sh", &[], None, &[]),
            f.server("nodejs", "node", &["server.js"], None, &[]),
            f.server("bare", "server.sh", &[], Some("${project}"), &path),
            f.server("named", "${project}/server.sh", &[], None, &[]),
            theirs,
        ])
        .await;
    let why = failed(&mcp, "dotslash");
    assert!(
        why.starts_with(
            "mcp_servers.dotslash.command: a command with a `/` must be an absolute path"
        ),
        "{why}"
    );
    let why = failed(&mcp, "nodejs");
    assert!(why.contains("Cannot find module"), "{why}");
    let why = failed(&mcp, "bare");
    assert!(
        why.contains(
            "`server.sh` is not in any absolute folder of PATH (/usr/local/bin:/usr/bin:/bin)"
        ),
        "{why}"
    );
    for name in ["dotslash", "nodejs", "bare"] {
        assert!(!f.ran(name), "{name} ran the project's script");
    }
    // Named explicitly, or declared (and approved) by the project: it runs.
    failed(&mcp, "named");
    failed(&mcp, "theirs");
    assert!(f.ran("named") && f.ran("theirs"));
    mcp.shutdown().await;
}

/// Where a user's server runs: a private, empty folder of its own, outside the project,
/// with no relative folder in its PATH and no `PYTHONSAFEPATH` it does not need; a
/// project's server runs in the project.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_server_runs_in_a_private_empty_folder_of_its_own() {
    let f = Fixture::new();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/hostile_server.py");
    let script = script.to_str().unwrap();
    let path = [("PATH", ".::bin:/usr/local/bin:/usr/bin:/bin")];
    let mut theirs = f.server("theirs", "python3", &[script, "where"], None, &path);
    theirs.origin = Origin::Project(f.root().join(".rein/config.toml"));
    let mcp = f
        .start(vec![
            f.server("a", "python3", &[script, "where"], None, &path),
            f.server("b", "python3", &[script, "where"], None, &[]),
            theirs,
        ])
        .await;
    let mut where_ = std::collections::HashMap::new();
    for name in ["a", "b", "theirs"] {
        let out = mcp
            .call(
                &format!("mcp__{name}__work"),
                json!({}),
                None,
                std::future::pending::<()>(),
            )
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let got: serde_json::Value = serde_json::from_str(&out.text).unwrap();
        where_.insert(name, got);
    }
    let root = f.root();
    let cwd = |name: &str| PathBuf::from(where_[name]["cwd"].as_str().unwrap());
    for name in ["a", "b"] {
        let dir = cwd(name);
        assert!(
            !dir.starts_with(&root),
            "{name} runs in the project: {dir:?}"
        );
        assert!(
            !root.starts_with(&dir),
            "{name} runs above the project: {dir:?}"
        );
        assert_eq!(
            where_[name]["entries"],
            json!([]),
            "{name}'s folder is empty"
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{name}'s folder is private");
        assert_eq!(where_[name]["PYTHONSAFEPATH"], json!(null));
    }
    assert_ne!(cwd("a"), cwd("b"), "a folder each");
    assert_eq!(where_["a"]["PATH"], "/usr/local/bin:/usr/bin:/bin");
    assert_eq!(
        cwd("theirs"),
        root,
        "the project's server runs in the project"
    );
    assert_eq!(where_["theirs"]["PATH"], "/usr/local/bin:/usr/bin:/bin");
    let base = cwd("a").parent().unwrap().to_path_buf();
    mcp.shutdown().await;
    drop(mcp);
    assert!(!base.exists(), "the folders go with the manager");
}

/// Issue 41: approving a project's server (`python3 mcp_tools.py`) pins the script it
/// names with its table. The model rewrites the script: a restart does not run it (the
/// server is held as changed, naming the file), the next session holds it too, and
/// allowing it again runs what is there now. A user's server that starts in the project
/// is not started after a host-tool file appeared there without the user's approval.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_servers_script_changed_since_its_approval_is_held_at_every_start() {
    use rein_core::consent::trust::TrustStore;
    use rein_core::mcp::{external, Unapproved};
    let f = Fixture::new();
    let root = f.root();
    let data = tempfile::tempdir().unwrap();
    let server_py = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/hostile_server.py");
    f.write("mcp_tools.py", &std::fs::read_to_string(server_py).unwrap());
    let mut tools = f.server("tools", "python3", &["mcp_tools.py", "plain"], None, &[]);
    tools.origin = Origin::Project(root.join(".rein/config.toml"));
    let (mut trust, _) = TrustStore::load(data.path());
    let files = external::approve(&tools, &root, &mut trust).unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].starts_with("mcp_tools.py (sha256 "), "{files:?}");
    let (mcp, mut events) =
        McpManager::prepare(vec![tools.clone()], Vec::new(), &root, Some(data.path()));
    mcp.launch();
    settled(&mut events, &mcp).await;
    assert!(
        matches!(state(&mcp, "tools"), ServerState::Ready { .. }),
        "{mcp:?}"
    );
    // The model rewrites the script; the server is restarted.
    f.write("mcp_tools.py", HOSTILE_PY);
    mcp.restart("tools").unwrap();
    settled(&mut events, &mcp).await;
    match state(&mcp, "tools") {
        ServerState::NotAllowed {
            why: Unapproved::Changed(changes),
            ..
        } => assert_eq!(changes, ["file mcp_tools.py: changed"]),
        other => panic!("not held: {other:?}"),
    }
    assert!(!f.ran("tools"), "the rewritten script ran");
    // The next session holds it from the start, and says which file changed.
    let (mut trust, _) = TrustStore::load(data.path());
    let out = external::startable(std::slice::from_ref(&tools), &trust, &root);
    assert!(out.start.is_empty());
    assert!(
        out.notices[0].contains("changed since you allowed it (file mcp_tools.py: changed)"),
        "{}",
        out.notices[0]
    );
    // Allowed again: what is there now runs.
    external::approve(&tools, &root, &mut trust).unwrap();
    mcp.allow("tools").unwrap();
    settled(&mut events, &mcp).await;
    assert!(f.ran("tools"), "allowed again, the new script runs");

    // A host-tool file created since rein recorded the project's: a user's server that
    // starts in the project is not started.
    rein_core::consent::host_tools::baseline(data.path(), &root).unwrap();
    f.write(".envrc", "export PATH=$PWD/evil:$PATH\n");
    let (mcp2, mut events2) = McpManager::prepare(
        vec![f.server(
            "nearby",
            "python3",
            &["-c", "import os; open(os.environ['REIN_TEST_MARKER'], 'w')"],
            Some("${project}"),
            &[],
        )],
        Vec::new(),
        &root,
        Some(data.path()),
    );
    mcp2.launch();
    settled(&mut events2, &mcp2).await;
    let why = failed(&mcp2, "nearby");
    assert!(
        why.contains("not started: it starts in the project, and")
            && why.contains(".envrc was created (a file) since rein last recorded it"),
        "{why}"
    );
    assert!(!f.ran("nearby"));
    mcp.shutdown().await;
    mcp2.shutdown().await;
}
