//! bubblewrap (Linux): the argument list that wraps a command, and the check that bwrap can
//! create its namespaces here.
//!
//! The mounts are applied in order, each over the ones before: the whole filesystem
//! read-only, a fresh `/dev` and `/proc`, a private `/tmp`, the project and the extra
//! writable paths read-write, then the protected paths (`.git`, `.rein`, nested
//! repositories' `.git`, the steering files and folders) read-only on top, then rein's
//! private folders (its data folder) covered by an empty tmpfs, then the readable paths
//! shown again read-only (this rein's spill folders: the private `/tmp` or data folder
//! would hide them), then the hidden credentials and the project's `.env` files
//! (`sandbox.hide_secrets`: an empty tmpfs over a folder, `/dev/null` over a file). A
//! path that does not exist is left out: nothing is created to mount over. Then new user,
//! PID, IPC, UTS and cgroup namespaces, no network unless allowed, and no capabilities.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::{ProbeFailure, SandboxSettings};

/// Namespaces and process settings, shared by every command and the probe.
fn isolation_args(network: bool) -> Vec<&'static str> {
    let mut args = vec![
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ];
    if !network {
        args.push("--unshare-net");
    }
    // When rein runs as root, bwrap would otherwise keep every capability inside, enough to
    // remount `/` read-write and undo the sandbox.
    args.extend(["--die-with-parent", "--cap-drop", "ALL"]);
    args
}

/// The read-only base every command starts from.
const BASE_MOUNTS: [&str; 9] = [
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
];

/// Directories of per-user service sockets, replaced by an empty tmpfs inside.
const HIDDEN_DIRS: &[&str] = &["/run/user"];

/// Service sockets covered by `/dev/null` inside: reaching them would mean running
/// commands outside the sandbox.
const HIDDEN_SOCKETS: &[&str] = &[
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/containerd/containerd.sock",
    "/run/podman/podman.sock",
    "/run/dbus/system_bus_socket",
    "/var/run/dbus/system_bus_socket",
];

/// Mounts that hide host services reachable through Unix sockets: `--unshare-net` does not
/// cover those (the user's session bus and agents under /run/user, container engines, the
/// system bus). Only paths that exist on this host.
fn hidden_service_args() -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    for dir in HIDDEN_DIRS
        .iter()
        .filter_map(|d| Path::new(d).canonicalize().ok())
    {
        if dir.is_dir() {
            args.push("--tmpfs".into());
            args.push(dir.into());
        }
    }
    let mut sockets: Vec<PathBuf> = HIDDEN_SOCKETS
        .iter()
        .filter_map(|s| Path::new(s).canonicalize().ok())
        .collect();
    sockets.sort();
    sockets.dedup();
    for socket in sockets {
        args.push("--ro-bind".into());
        args.push("/dev/null".into());
        args.push(socket.into());
    }
    args
}

/// bwrap's options (everything before `-- sh -c COMMAND`) for a command in `root`.
/// Paths are resolved (symlinks followed), and readable, writable, protected and private
/// paths that do not exist are left out. `protected` comes from
/// [`super::protected_paths`]; `private` folders are emptied, and `readable` paths shown
/// read-only over them.
pub fn bwrap_args(
    root: &Path,
    settings: &SandboxSettings,
    readable: &[PathBuf],
    protected: &[PathBuf],
    private: &[PathBuf],
) -> Vec<OsString> {
    let root = super::real_path(root);
    let mut args: Vec<OsString> = BASE_MOUNTS.iter().map(OsString::from).collect();
    args.extend(hidden_service_args());
    let mut bind = |option: &str, path: &Path| {
        args.push(option.into());
        args.push(path.into());
        args.push(path.into());
    };
    bind("--bind", &root);
    for path in settings
        .writable
        .iter()
        .filter_map(|p| p.canonicalize().ok())
    {
        bind("--bind", &path);
    }
    for path in protected.iter().filter_map(|p| p.canonicalize().ok()) {
        bind("--ro-bind", &path);
    }
    for path in private.iter().filter_map(|p| p.canonicalize().ok()) {
        args.push("--tmpfs".into());
        args.push(path.into());
    }
    let mut bind = |option: &str, path: &Path| {
        args.push(option.into());
        args.push(path.into());
        args.push(path.into());
    };
    for path in readable.iter().filter_map(|p| p.canonicalize().ok()) {
        bind("--ro-bind", &path);
    }
    // Credentials no command needs, covered last so nothing above shows them again.
    for path in settings.hidden.iter().filter_map(|p| p.canonicalize().ok()) {
        if path.is_dir() {
            args.push("--tmpfs".into());
            args.push(path.into());
        } else {
            args.push("--ro-bind".into());
            args.push("/dev/null".into());
            args.push(path.into());
        }
    }
    args.extend(
        isolation_args(settings.network)
            .into_iter()
            .map(OsString::from),
    );
    args.push("--chdir".into());
    args.push(root.into());
    args
}

/// The first executable `bwrap` in the absolute folders of `path` (PATH's value): an
/// empty entry, `.` or another relative one names the folder rein was started in, often
/// the project, where a cloned repository could have put a `bwrap` of its own that rein
/// would run on the host at start (see [`crate::host::program_path`]).
pub(super) fn find_on_path(path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    crate::host::program_path::lookup("bwrap", path)
}

/// Run `bwrap` once on `true` with the namespaces and base mounts of a real command.
pub(super) fn probe(bwrap: &Path, network: bool) -> Result<(), String> {
    let mut cmd = std::process::Command::new(bwrap);
    cmd.args(BASE_MOUNTS)
        .args(isolation_args(network))
        .args(["--", "true"]);
    super::run_probe(cmd).map_err(|failure| match failure {
        ProbeFailure::Start(e) => format!(
            "bwrap ({}) could not be started: {e}; reinstall bubblewrap",
            bwrap.display()
        ),
        ProbeFailure::Failed(line) => format!("bwrap cannot create namespaces here: {line}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[OsString]) -> Vec<String> {
        args.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    /// A project with `.git/` and `.rein/`, an existing and a missing readable path, an
    /// existing and a missing writable path.
    #[test]
    fn mounts_come_in_order_and_missing_paths_are_left_out() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("proj");
        let data = base.join("data");
        let cache = base.join("cache");
        for dir in [&root.join(".git"), &root.join(".rein"), &data, &cache] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let settings = SandboxSettings {
            writable: vec![cache.clone(), base.join("no-such-cache")],
            ..SandboxSettings::default()
        };
        let private = base.join("rein-data");
        let spill = private.join("spill/7-1");
        std::fs::create_dir_all(&spill).unwrap();
        let readable = [data.clone(), base.join("no-such-data"), spill.clone()];
        let protected = super::super::protected_paths(&root);
        let args = strings(&bwrap_args(
            &root,
            &settings,
            &readable,
            &protected,
            &[private.clone(), base.join("no-such-private")],
        ));
        let (p, s) = (private.display().to_string(), spill.display().to_string());
        let (r, d, c) = (
            root.display().to_string(),
            data.display().to_string(),
            cache.display().to_string(),
        );
        let git = format!("{r}/.git");
        let rein = format!("{r}/.rein");
        let hidden = strings(&hidden_service_args());
        #[rustfmt::skip]
        let mut expected: Vec<&str> = vec![
            "--ro-bind", "/", "/",
            "--dev", "/dev",
            "--proc", "/proc",
            "--tmpfs", "/tmp",
        ];
        expected.extend(hidden.iter().map(String::as_str));
        #[rustfmt::skip]
        expected.extend([
            "--bind", &r, &r,
            "--bind", &c, &c,
            "--ro-bind", &git, &git,
            "--ro-bind", &rein, &rein,
            "--tmpfs", &p,
            "--ro-bind", &d, &d,
            "--ro-bind", &s, &s,
            "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--unshare-net",
            "--die-with-parent", "--cap-drop", "ALL",
            "--chdir", &r,
        ]);
        assert_eq!(args, expected);
        assert!(!args.iter().any(|a| a == "--new-session"));
    }

    #[test]
    fn host_service_sockets_are_hidden() {
        let hidden = strings(&hidden_service_args());
        if Path::new("/run/user").is_dir() {
            assert_eq!(hidden[..2], ["--tmpfs", "/run/user"]);
        }
        for pair in hidden.windows(3).filter(|w| w[0] == "--ro-bind") {
            assert_eq!(pair[1], "/dev/null");
        }
    }

    #[test]
    fn network_keeps_the_network_namespace() {
        let tmp = tempfile::tempdir().unwrap();
        let settings = SandboxSettings {
            network: true,
            ..SandboxSettings::default()
        };
        let args = strings(&bwrap_args(tmp.path(), &settings, &[], &[], &[]));
        assert!(!args.iter().any(|a| a == "--unshare-net"));
        assert!(args.iter().any(|a| a == "--unshare-user"));
    }

    #[test]
    fn symlinked_paths_are_resolved() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        std::fs::create_dir(base.join("real")).unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
        let args = strings(&bwrap_args(
            &base.join("link"),
            &SandboxSettings::default(),
            &[],
            &[],
            &[],
        ));
        let real = base.join("real").display().to_string();
        let at = args.iter().position(|a| a == "--bind").unwrap();
        assert_eq!(args[at + 1..at + 3], [real.clone(), real.clone()]);
        assert_eq!(args[args.len() - 2..], ["--chdir".to_string(), real]);
    }

    #[test]
    fn a_gitdir_target_is_protected_after_the_writable_paths() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("proj");
        let gitdir = base.join("elsewhere/gitdir");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&gitdir).unwrap();
        std::fs::write(root.join(".git"), "gitdir: ../elsewhere/gitdir\n").unwrap();
        let settings = SandboxSettings {
            writable: vec![base.join("elsewhere")],
            ..SandboxSettings::default()
        };
        let protected = super::super::protected_paths(&root);
        let args = strings(&bwrap_args(&root, &settings, &[], &protected, &[]));
        let pos = |value: &Path| {
            let value = value.display().to_string();
            args.iter().position(|a| *a == value).unwrap()
        };
        assert_eq!(args[pos(&gitdir) - 1], "--ro-bind");
        assert!(pos(&gitdir) > pos(&base.join("elsewhere")));
        assert_eq!(args[pos(&root.join(".git")) - 1], "--ro-bind");
        // `.rein` does not exist here (the command builder creates it), so it is left out.
        assert!(!args.iter().any(|a| a.ends_with("/.rein")));
    }
}
