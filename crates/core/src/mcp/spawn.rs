//! How a stdio server's table becomes a process: the program, its arguments, its folder
//! and its environment, decided before anything is started.
//!
//! What rein starts outside the sandbox loads nothing from the project unless the config
//! names it. A server in the user's own file therefore:
//!
//! - **starts in a neutral folder** when it sets no `cwd` (`workdir.rs`: private, empty,
//!   not in the project and with no folder of the project above it), so `python3 -m mod`,
//!   npx, node, uv and the version managers' shims find nothing of the project there;
//! - **names the project explicitly**: `${project}` in `args`, `cwd`, `env` values and
//!   `command` is the project root (`npx -y @modelcontextprotocol/server-filesystem
//!   ${project}`). It is the only placeholder; other text is passed as written;
//! - **takes no path relative to anything implicit**: a `cwd` must be absolute, `~/…` or
//!   `${project}/…` (a relative one is refused; `config/mcp.rs` already says so with the
//!   file and the key), and so must a `command` with a `/` in it. A bare command name is
//!   looked up by rein in the *absolute* folders of `PATH` only, and the `PATH` the server
//!   gets keeps only those too: an empty entry, `.` or any relative one would mean its
//!   working folder, and a relative `command` would mean whatever folder rein runs in;
//! - **gets `PYTHONSAFEPATH=1`** (unless its `env` sets the variable) when its `cwd` is the
//!   project or inside it: Python 3.11 and newer then never put the working folder at the
//!   front of `sys.path` for `-m` and `-c`, so naming the project as the folder to work in
//!   does not make its modules importable. Elsewhere it is not set: in the neutral folder
//!   there is nothing to import, and in a folder of the user's own it would stop their
//!   script from importing the modules next to it (the variable also drops the script's
//!   own folder). npx and uv have no such switch: a `cwd` in the project lets them read its
//!   `node_modules`, `.npmrc` and `pyproject.toml`, which is why docs/mcp.md names the
//!   project in `args` instead.
//!
//! Nothing else of rein's environment reaches a server but what `BASE_ENV` lists, the
//! `LC_*` and `XDG_*` variables and what the table passes by name (`env_vars`) or sets
//! (`env`): no `NODE_PATH`, `NODE_OPTIONS`, `PYTHONPATH`, `PYTHONSTARTUP`, `LD_PRELOAD`.
//!
//! A server the *project* declares runs only once the user approved its whole table
//! (`pin.rs`), folder included: it starts in the project (its `cwd` relative to the
//! project), and a relative `command` is the project's program, as approved. Its bare
//! command names are still looked up in the absolute folders of `PATH` only.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use super::{Origin, ServerConfig, Transport};

/// The placeholder for the project root.
pub const PROJECT: &str = "${project}";

/// The variables of rein's environment every stdio server gets: what programs need to
/// find their tools, home, locale, terminal, temporary folder, proxy and certificates.
pub const BASE_ENV: &[&str] = &[
    "HOME",
    "USER",
    "LOGNAME",
    "PATH",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TMPDIR",
    "TZ",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "__CF_USER_TEXT_ENCODING",
];

/// Whether rein's variable `name` goes to a stdio server whose table passes `env_vars`:
/// the [`BASE_ENV`] ones, the locale's `LC_*` and `XDG_*` folders, and those it names.
fn passed_on(name: &str, env_vars: &[String]) -> bool {
    BASE_ENV.contains(&name)
        || name.starts_with("LC_")
        || name.starts_with("XDG_")
        || env_vars.iter().any(|v| v == name)
}

/// What to start, decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Plan {
    /// The program, an absolute path (or, for a project's server, one in the project).
    pub program: PathBuf,
    /// `argv[0]`: the command as written, as a shell would pass it.
    pub arg0: OsString,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    /// The whole environment (the child's is cleared first).
    pub env: Vec<(OsString, OsString)>,
}

/// The plan for a stdio server of `project`: `neutral` gives the folder a user's server
/// without `cwd` starts in, `vars` is rein's environment. Errors are one line.
pub(super) fn plan(
    config: &ServerConfig,
    project: &Path,
    neutral: impl FnOnce() -> Result<PathBuf, String>,
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> Result<Plan, String> {
    let Transport::Stdio {
        command,
        args,
        env,
        env_vars,
        cwd,
    } = &config.transport
    else {
        return Err("not a stdio server".to_string());
    };
    let users = matches!(config.origin, Origin::User(_));
    let vars: Vec<(OsString, OsString)> = vars.into_iter().collect();
    let home = vars
        .iter()
        .find(|(k, _)| k == "HOME")
        .map(|(_, v)| PathBuf::from(v))
        .filter(|h| h.is_absolute());
    let key = |entry: &str| format!("mcp_servers.{}.{entry}", config.name);

    let cwd = match cwd {
        Some(dir) => {
            let written = dir.to_string_lossy();
            let dir = path(&written, project, home.as_deref())
                .map_err(|e| format!("{}: {e}", key("cwd")))?;
            if dir.is_absolute() {
                dir
            } else if users {
                return Err(format!("{}: {}", key("cwd"), RELATIVE_CWD));
            } else {
                project.join(dir)
            }
        }
        None if users => neutral()?,
        None => project.to_path_buf(),
    };

    // The environment: what it gets of rein's, then what its table sets.
    let mut out: Vec<(OsString, OsString)> = vars
        .into_iter()
        .filter(|(k, _)| passed_on(&k.to_string_lossy(), env_vars))
        .collect();
    for (name, value) in env {
        out.retain(|(k, _)| k != name.as_str());
        out.push((name.into(), expand(value, project)));
    }
    // Only the absolute folders of PATH: an empty entry, `.` or a relative one is the
    // working folder of whoever looks a name up.
    let path_var = out.iter_mut().find(|(k, _)| k == "PATH").map(|(_, v)| {
        *v = crate::host::program_path::absolute_entries(v);
        v.clone()
    });
    let safe_path = env.iter().any(|(k, _)| k == "PYTHONSAFEPATH");
    let in_project = cwd.starts_with(project)
        || cwd
            .canonicalize()
            .is_ok_and(|real| real.starts_with(project));
    if users && !safe_path && in_project {
        out.push(("PYTHONSAFEPATH".into(), "1".into()));
    }

    let program = if command.contains('/') || command.starts_with('~') || command.contains(PROJECT)
    {
        let program = path(command, project, home.as_deref())
            .map_err(|e| format!("{}: {e}", key("command")))?;
        if program.is_absolute() {
            program
        } else if users {
            return Err(format!("{}: {}", key("command"), RELATIVE_COMMAND));
        } else {
            project.join(program)
        }
    } else {
        crate::host::program_path::lookup(command, path_var.as_deref()).ok_or_else(|| {
            format!(
                "`{command}` is not in any absolute folder of PATH ({}); give {} its full path",
                path_var
                    .as_deref()
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "not set".to_string()),
                key("command")
            )
        })?
    };
    Ok(Plan {
        program,
        arg0: OsString::from(command),
        args: args.iter().map(|a| expand(a, project)).collect(),
        cwd,
        env: out,
    })
}

/// Whether the stdio server `config` starts in `project` or a folder of it (a project's
/// server without `cwd`, or any whose `cwd` is there): a host tool it starts there reads
/// the project's host-tool files, so the host-tool guard applies to it.
pub(super) fn starts_in_project(config: &ServerConfig, project: &Path) -> bool {
    let Transport::Stdio { cwd, .. } = &config.transport else {
        return false;
    };
    let users = matches!(config.origin, Origin::User(_));
    let Some(dir) = cwd else {
        return !users;
    };
    let written = dir.to_string_lossy();
    if written == "~" || written.starts_with("~/") {
        return false;
    }
    let dir = PathBuf::from(expand(&written, project));
    let dir = if dir.is_absolute() {
        dir
    } else {
        project.join(dir)
    };
    dir.starts_with(project)
        || dir
            .canonicalize()
            .is_ok_and(|real| real.starts_with(project))
}

/// Why a relative `cwd` in the user's own file is refused (the config error says it too).
pub const RELATIVE_CWD: &str = "a relative folder in your own config would be relative to \
    whatever folder rein runs in; write an absolute path, `~/…`, or `${project}/…` to name \
    a folder of the project";

/// Why a relative `command` with a `/` in the user's own file is refused.
pub const RELATIVE_COMMAND: &str = "a command with a `/` must be an absolute path, `~/…` or \
    `${project}/…` (rein does not look it up in the project or the folder it runs in); a \
    bare name is looked up in PATH";

/// `text` with `${project}` replaced by the project root.
fn expand(text: &str, project: &Path) -> OsString {
    let mut out = Vec::new();
    let mut parts = text.split(PROJECT);
    if let Some(first) = parts.next() {
        out.extend_from_slice(first.as_bytes());
    }
    for part in parts {
        out.extend_from_slice(project.as_os_str().as_bytes());
        out.extend_from_slice(part.as_bytes());
    }
    OsString::from_vec(out)
}

/// A path as written: `~` or `~/…` from `home`, `${project}` expanded.
fn path(text: &str, project: &Path, home: Option<&Path>) -> Result<PathBuf, String> {
    if text == "~" || text.starts_with("~/") {
        let home = home.ok_or("`~` needs HOME, which is not set (or not absolute)")?;
        return Ok(home.join(expand(text[1..].trim_start_matches('/'), project)));
    }
    Ok(PathBuf::from(expand(text, project)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;
    use std::os::unix::fs::PermissionsExt;

    fn executable(path: &Path) {
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn vars(path: &str) -> Vec<(OsString, OsString)> {
        [
            ("PATH", path),
            ("HOME", "/home/u"),
            ("OPENAI_API_KEY", "sk-x"),
            ("LC_ALL", "C"),
        ]
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect()
    }

    fn get<'a>(plan: &'a Plan, name: &str) -> Option<&'a OsStr> {
        plan.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_os_str())
    }

    fn neutral() -> Result<PathBuf, String> {
        Ok(PathBuf::from("/run/user/1/rein-mcp-1-0/s"))
    }

    #[test]
    fn a_users_server_starts_in_the_neutral_folder_and_names_the_project_explicitly() {
        let bin = tempfile::tempdir().unwrap();
        executable(&bin.path().join("npx"));
        let project = Path::new("/work/p");
        let mut server = ServerConfig::stdio(
            "fs",
            "npx",
            &["-y", "fs", "${project}", "--root=${project}/src"],
        );
        if let Transport::Stdio { env, .. } = &mut server.transport {
            env.push(("WHERE".into(), "${project}".into()));
        }
        // `.`, an empty entry and a relative one are dropped, here and for the lookup.
        let path = format!(".::bin:{}", bin.path().display());
        let plan = plan(&server, project, neutral, vars(&path)).unwrap();
        assert_eq!(plan.program, bin.path().join("npx"));
        assert_eq!(plan.arg0, "npx");
        assert_eq!(plan.cwd, PathBuf::from("/run/user/1/rein-mcp-1-0/s"));
        assert_eq!(plan.args, ["-y", "fs", "/work/p", "--root=/work/p/src"]);
        assert_eq!(get(&plan, "WHERE"), Some(OsStr::new("/work/p")));
        assert_eq!(get(&plan, "PATH"), Some(bin.path().as_os_str()));
        assert_eq!(get(&plan, "LC_ALL"), Some(OsStr::new("C")));
        assert_eq!(get(&plan, "OPENAI_API_KEY"), None);
        assert_eq!(
            get(&plan, "PYTHONSAFEPATH"),
            None,
            "nothing to import there"
        );
    }

    #[test]
    fn a_cwd_in_the_project_is_named_and_python_does_not_import_from_it() {
        let project = Path::new("/work/p");
        let mut server = ServerConfig::stdio("t", "/usr/bin/python3", &["-m", "mcp_server_time"]);
        let set = |server: &mut ServerConfig, dir: &str| {
            if let Transport::Stdio { cwd, .. } = &mut server.transport {
                *cwd = Some(PathBuf::from(dir));
            }
        };
        set(&mut server, "${project}/tools");
        let plan = plan(&server, project, neutral, vars("/usr/bin")).unwrap();
        assert_eq!(plan.cwd, PathBuf::from("/work/p/tools"));
        assert_eq!(get(&plan, "PYTHONSAFEPATH"), Some(OsStr::new("1")));
        // The table's own word wins.
        if let Transport::Stdio { env, .. } = &mut server.transport {
            env.push(("PYTHONSAFEPATH".into(), String::new()));
        }
        let plan = super::plan(&server, project, neutral, vars("/usr/bin")).unwrap();
        assert_eq!(get(&plan, "PYTHONSAFEPATH"), Some(OsStr::new("")));
        // A folder of the user's own: their script may import what sits next to it.
        set(&mut server, "~/mcp");
        if let Transport::Stdio { env, .. } = &mut server.transport {
            env.clear();
        }
        let plan = super::plan(&server, project, neutral, vars("/usr/bin")).unwrap();
        assert_eq!(plan.cwd, PathBuf::from("/home/u/mcp"));
        assert_eq!(get(&plan, "PYTHONSAFEPATH"), None);
        // Relative: refused, naming the key.
        set(&mut server, "tools");
        let err = super::plan(&server, project, neutral, vars("/usr/bin")).unwrap_err();
        assert!(
            err.starts_with("mcp_servers.t.cwd: a relative folder"),
            "{err}"
        );
    }

    #[test]
    fn commands_resolve_nowhere_implicit() {
        let project = tempfile::tempdir().unwrap();
        let project = project.path();
        executable(&project.join("server.sh"));
        let bin = tempfile::tempdir().unwrap();
        let path = format!(".:{}", bin.path().display());
        for relative in ["./server.sh", "bin/srv", "../x"] {
            let server = ServerConfig::stdio("s", relative, &[]);
            let err = plan(&server, project, neutral, vars(&path)).unwrap_err();
            assert!(
                err.starts_with("mcp_servers.s.command: a command with a `/`"),
                "{err}"
            );
        }
        // A bare name found only through `.` (in the project, were that the folder) or
        // nowhere: not found, and the message says where it looked.
        let server = ServerConfig::stdio("s", "server.sh", &[]);
        let err = plan(&server, project, neutral, vars(&path)).unwrap_err();
        assert!(
            err.contains("`server.sh` is not in any absolute folder of PATH"),
            "{err}"
        );
        assert!(err.contains("mcp_servers.s.command"), "{err}");
        // Named explicitly, it runs.
        let server = ServerConfig::stdio("s", "${project}/server.sh", &[]);
        let plan_ = plan(&server, project, neutral, vars(&path)).unwrap();
        assert_eq!(plan_.program, project.join("server.sh"));
        let server = ServerConfig::stdio("s", "~/bin/srv", &[]);
        assert_eq!(
            plan(&server, project, neutral, vars(&path))
                .unwrap()
                .program,
            PathBuf::from("/home/u/bin/srv")
        );
        // A project's approved server: relative means the project, and it runs there.
        let mut server = ServerConfig::stdio("s", "./server.sh", &[]);
        server.origin = Origin::Project(project.join(".rein/config.toml"));
        if let Transport::Stdio { cwd, .. } = &mut server.transport {
            *cwd = Some(PathBuf::from("sub"));
        }
        let plan_ = plan(&server, project, || Err("not asked".into()), vars(&path)).unwrap();
        assert_eq!(plan_.program, project.join("./server.sh"));
        assert_eq!(plan_.cwd, project.join("sub"));
        assert_eq!(
            get(&plan_, "PYTHONSAFEPATH"),
            None,
            "it runs the project's code by approval"
        );
        // ... but its bare names are not looked up through `.` either.
        let mut server = ServerConfig::stdio("s", "server.sh", &[]);
        server.origin = Origin::Project(project.join(".rein/config.toml"));
        assert!(plan(&server, project, || Err("x".into()), vars(&path)).is_err());
    }

    #[test]
    fn a_server_gets_what_programs_need_and_what_its_table_names() {
        let named = vec!["GITHUB_TOKEN".to_string()];
        for var in [
            "PATH",
            "HOME",
            "LANG",
            "LC_ALL",
            "XDG_CACHE_HOME",
            "https_proxy",
        ] {
            assert!(passed_on(var, &[]), "{var}");
        }
        for var in [
            "OPENAI_API_KEY",
            "REIN_API_KEY",
            "ANTHROPIC_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "GITHUB_TOKEN",
            "NODE_PATH",
            "NODE_OPTIONS",
            "PYTHONPATH",
        ] {
            assert!(!passed_on(var, &[]), "{var}");
        }
        assert!(passed_on("GITHUB_TOKEN", &named));
        assert!(!passed_on("GITHUB_TOKEN_2", &named));
    }
}
