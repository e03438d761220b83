//! The OS sandbox around `bash` commands: bubblewrap on Linux, Seatbelt on macOS.
//!
//! Permissions decide whether to interrupt the user; the sandbox decides what a command can
//! physically do. In: the settings (`sandbox.mode`, `sandbox.network`, `sandbox.writable`),
//! the project root and paths that must stay readable. Out: a [`Sandbox`] that says what is
//! in force and wraps a shell command so it can read anywhere but the credentials it
//! hides, write only the project (and the extra writable paths), never write `.git`,
//! `.rein` or the project's steering files ([`crate::consent::steering`]), and reach no network.
//!
//! [`Sandbox::detect`] decides once per process start (`detect.rs`): `mode = "off"` means
//! off by choice; otherwise the backend is probed (bwrap must really create its namespaces
//! here, which many containers forbid). A working backend means on; a broken or missing one
//! means off with a warning (`auto`) or every command refused (`required`).
//! [`Sandbox::command`] then builds the process to spawn for each command, sandboxed or not
//! with an environment that holds no secret rein can recognise ([`mod@env`]); what stays
//! read-only inside, and the project's secret files covered inside, are found by
//! `protected.rs` (one bounded walk of the project, when the first command runs), and
//! each backend's own arguments are built by `bwrap.rs` and `seatbelt.rs`.
//!
//! A path that does not exist cannot be mounted: a steering file or a `.env` a command
//! creates where none was (say a new `.envrc`, or `.cargo/config.toml` with no `.cargo`
//! folder) is not stopped by bubblewrap. rein creates nothing in the project to mount
//! over (it would litter every project with empty files); Seatbelt, which works on
//! paths, denies writing the root's steering paths whether they exist or not.

mod bwrap;
mod detect;
pub mod env;
mod protected;
mod seatbelt;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use bwrap::bwrap_args;
pub use env::CommandEnv;
pub use protected::{is_env_secret, protected_paths, scan_project, ProjectScan};
pub use seatbelt::seatbelt_profile;

use detect::{run_probe, ProbeFailure};
use protected::{ensure_rein_dir, real_path};

/// `sandbox.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// Use the sandbox when it works here; otherwise run unsandboxed, with a warning.
    #[default]
    Auto,
    /// Refuse to run commands without the sandbox.
    Required,
    /// Never sandbox.
    Off,
}

/// The `[sandbox]` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    pub mode: SandboxMode,
    /// Allow network access from commands.
    pub network: bool,
    /// Extra paths commands may write, besides the project.
    pub writable: Vec<PathBuf>,
    /// Files and folders covered by empty ones inside (credentials no command needs).
    pub hidden: Vec<PathBuf>,
    /// Cover the project's own secret files (`.env`, `.env.production`, …; see
    /// [`is_env_secret`]) inside too (`sandbox.hide_secrets`, on unless turned off).
    pub hide_project_secrets: bool,
}

impl Default for SandboxSettings {
    fn default() -> SandboxSettings {
        SandboxSettings {
            mode: SandboxMode::default(),
            network: false,
            writable: Vec::new(),
            hidden: Vec::new(),
            hide_project_secrets: true,
        }
    }
}

/// What is in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxState {
    /// Commands run inside the sandbox; `detail` says which and how, for the user.
    On { detail: String },
    /// Commands run without a sandbox; `reason` says why (shown as a warning unless the
    /// user turned it off).
    Off { reason: String, by_choice: bool },
    /// The sandbox is required but cannot run here: commands are refused.
    Unavailable { reason: String },
}

/// The sandbox for one project.
#[derive(Debug, Clone)]
pub struct Sandbox {
    settings: SandboxSettings,
    root: PathBuf,
    /// Paths outside the project that must stay readable inside (rein's data dir, where
    /// large outputs are spilled), even when they lie under the private `/tmp`.
    readable: Vec<PathBuf>,
    state: SandboxState,
    /// The program that wraps commands; `Some` exactly when the state is `On`.
    backend: Option<Backend>,
    /// What one walk of the project found, when the first command runs (not at start-up):
    /// the git directories of nested repositories (vendored checkouts, submodules) and
    /// the steering files at any depth, read-only inside as the project's own `.git` is,
    /// and the project's secret files, covered inside.
    scan: std::sync::OnceLock<ProjectScan>,
    /// Files known to steer only from what rein read at start (the files instruction
    /// files import, the scripts approved hooks and servers run): read-only inside.
    /// Shared by clones (plan mode's read-only copy).
    steering_files: std::sync::Arc<std::sync::RwLock<Vec<PathBuf>>>,
    /// Plan mode: the project and the extra writable paths are read-only inside too.
    read_only: bool,
    /// What is removed from a command's environment (see [`mod@env`]).
    env: CommandEnv,
    /// rein's data folder, hidden inside, and the folder of its spill folders, of which
    /// this process's stay readable ([`Sandbox::with_private_data`]).
    private: Option<PrivateData>,
}

/// rein's own data folder, kept from commands: it holds every project's sessions, input
/// history, spill files and approvals. Only the spill folders of this rein
/// (`<spill>/<pid>-<turn>`, where the model is told to read a long output) show inside.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PrivateData {
    dir: PathBuf,
    spill: PathBuf,
}

/// A sandbox program that was found and works here.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Backend {
    /// The `bwrap` executable to run.
    Bubblewrap(PathBuf),
    Seatbelt,
}

impl Backend {
    fn name(&self) -> &'static str {
        match self {
            Backend::Bubblewrap(_) => "bubblewrap",
            Backend::Seatbelt => "seatbelt",
        }
    }
}

const OFF_BY_CHOICE: &str = "sandbox.mode = \"off\"";
impl Sandbox {
    /// No sandbox, by choice (tests, `sandbox.mode = "off"`).
    pub fn off(root: &Path) -> Sandbox {
        Sandbox {
            settings: SandboxSettings {
                mode: SandboxMode::Off,
                ..SandboxSettings::default()
            },
            root: root.to_path_buf(),
            readable: Vec::new(),
            state: SandboxState::Off {
                reason: OFF_BY_CHOICE.to_string(),
                by_choice: true,
            },
            backend: None,
            scan: std::sync::OnceLock::new(),
            steering_files: Default::default(),
            read_only: false,
            private: None,
            env: CommandEnv::default(),
        }
    }

    /// This sandbox with rein's data folder `dir` hidden from commands (an empty folder
    /// inside, or denied on macOS), except the spill folders of this process in `spill`
    /// (`<pid>-<turn>`), which stay readable. A data folder that holds the project is left
    /// as it is: hiding it would hide the project.
    pub fn with_private_data(mut self, dir: &Path, spill: &Path) -> Sandbox {
        if !real_path(&self.root).starts_with(real_path(dir)) {
            self.private = Some(PrivateData {
                dir: dir.to_path_buf(),
                spill: spill.to_path_buf(),
            });
        }
        self
    }

    /// The private folders hidden inside, and the paths shown read-only: the readable
    /// paths and this process's spill folders as they are now (a turn's folder exists
    /// once something spilled; each command gets a fresh sandbox).
    fn private_and_shown(&self) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let mut shown = self.readable.clone();
        let Some(private) = &self.private else {
            return (Vec::new(), shown);
        };
        let own = format!("{}-", std::process::id());
        if let Ok(entries) = std::fs::read_dir(&private.spill) {
            for entry in entries.flatten() {
                let name = entry.file_name();
                let mine = name.to_str().is_some_and(|n| {
                    n.strip_prefix(&own).is_some_and(|turn| {
                        !turn.is_empty() && turn.bytes().all(|b| b.is_ascii_digit())
                    })
                });
                if mine && entry.file_type().is_ok_and(|t| t.is_dir()) {
                    shown.push(entry.path());
                }
            }
        }
        (vec![private.dir.clone()], shown)
    }

    /// This sandbox with the project (and the extra writable paths) read-only: what plan
    /// mode runs commands in, so an allowed command that writes fails rather than writes.
    /// Without a working backend nothing changes: commands then run as the rules allow.
    pub fn read_only(&self) -> Sandbox {
        Sandbox {
            read_only: true,
            ..self.clone()
        }
    }

    /// This sandbox with the secrets and passed-through names of `env` (the config's):
    /// what [`command`](Self::command) removes from every command's environment.
    pub fn with_env(self, env: CommandEnv) -> Sandbox {
        Sandbox { env, ..self }
    }

    /// What is removed from a command's environment.
    pub fn env(&self) -> &CommandEnv {
        &self.env
    }

    /// Whether commands run in a working sandbox (what auto mode needs).
    pub fn works(&self) -> bool {
        matches!(self.state, SandboxState::On { .. })
    }

    /// Why the sandbox does not work here, or `None` when it does.
    pub fn not_working_reason(&self) -> Option<&str> {
        match &self.state {
            SandboxState::On { .. } => None,
            SandboxState::Off { reason, .. } | SandboxState::Unavailable { reason } => Some(reason),
        }
    }

    /// Make `files` (absolute, or relative to the project) read-only inside from the next
    /// command on, where they exist: files known to steer only from what rein read at
    /// start (what instruction files import, the scripts approved hooks and servers run).
    pub fn add_steering_files(&self, files: &[PathBuf]) {
        let mut list = self
            .steering_files
            .write()
            .unwrap_or_else(|e| e.into_inner());
        for file in files {
            let file = self.root.join(file);
            if !list.contains(&file) {
                list.push(file);
            }
        }
    }

    /// The paths that are read-only inside: `.git`, `.rein`, nested repositories' git
    /// directories and `.rein` folders, the steering files (the root's as they are now,
    /// those found below it, those added), and in read-only mode the project and the
    /// extra writable paths. Only paths that lead into something a command could write
    /// (the project, an extra writable path): the rest is read-only already, and a link
    /// to `/proc/N/…` must not make every command fail.
    fn protected(&self) -> Vec<PathBuf> {
        let mut protected = Vec::new();
        if self.read_only {
            // Mounted (bwrap) or denied (Seatbelt) after the writable binds: these win.
            protected.push(self.root.clone());
            protected.extend(self.settings.writable.iter().cloned());
        }
        protected.extend(protected_paths(&self.root));
        let scan = self.scan();
        protected.extend(scan.nested_git.iter().cloned());
        // The root's steering paths are looked at again for each command: one created
        // since the walk (by a write the user approved) is protected from then on. Never
        // the project itself or a folder above it (a hook that names the project folder).
        let root = real_path(&self.root);
        let added = self
            .steering_files
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        protected.extend(
            crate::consent::steering::at_root(&self.root)
                .into_iter()
                .chain(scan.steering.iter().cloned())
                .chain(added)
                .filter(|p| !root.starts_with(real_path(p))),
        );
        let writable: Vec<PathBuf> = std::iter::once(root)
            .chain(self.settings.writable.iter().map(|w| real_path(w)))
            .collect();
        let mut seen = std::collections::HashSet::new();
        protected.retain(|p| {
            let real = real_path(p);
            writable.iter().any(|w| real.starts_with(w)) && seen.insert(p.clone())
        });
        protected
    }

    /// What is covered inside: the configured credentials, then the project's secret
    /// files unless that is turned off.
    fn hidden(&self) -> Vec<PathBuf> {
        let mut hidden = self.settings.hidden.clone();
        if self.settings.hide_project_secrets {
            // A `.env` that is a link is hidden where it leads, but not into the kernel's
            // own filesystems (a link to `/proc/N/…` would make every command fail).
            hidden.extend(
                self.scan()
                    .secrets
                    .iter()
                    .filter(|p| {
                        let real = real_path(p);
                        !["/proc", "/sys", "/dev"]
                            .iter()
                            .any(|k| real.starts_with(k))
                    })
                    .cloned(),
            );
        }
        hidden
    }

    /// The walk of the project, done on first use.
    fn scan(&self) -> &ProjectScan {
        self.scan.get_or_init(|| scan_project(&self.root))
    }

    /// The settings a backend gets for one command: the configured ones with what is
    /// hidden completed.
    fn command_settings(&self) -> SandboxSettings {
        SandboxSettings {
            hidden: self.hidden(),
            ..self.settings.clone()
        }
    }

    pub fn state(&self) -> &SandboxState {
        &self.state
    }

    pub fn settings(&self) -> &SandboxSettings {
        &self.settings
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn readable(&self) -> &[PathBuf] {
        &self.readable
    }

    /// One line to show the user when commands run unsandboxed although they did not turn
    /// the sandbox off, or are refused because it is required and cannot run.
    pub fn warning(&self) -> Option<String> {
        match &self.state {
            SandboxState::On { .. }
            | SandboxState::Off {
                by_choice: true, ..
            } => None,
            SandboxState::Off { reason, .. } => Some(format!(
                "commands run without a sandbox: {reason}. Set sandbox.mode = \"off\" to accept \
                 that, or \"required\" to refuse to run commands unsandboxed."
            )),
            SandboxState::Unavailable { reason } => Some(format!(
                "commands are refused: the sandbox is required (sandbox.mode = \"required\") \
                 but cannot run: {reason}"
            )),
        }
    }

    /// One line for status lines and `rein config`.
    pub fn describe(&self) -> String {
        match (&self.state, &self.backend) {
            (SandboxState::On { .. }, Some(backend)) => {
                let extra = match self.settings.writable.len() {
                    0 => String::new(),
                    1 => " + 1 extra path".to_string(),
                    n => format!(" + {n} extra paths"),
                };
                let network = if self.settings.network { "on" } else { "off" };
                format!(
                    "on ({}; project{extra} writable, network {network})",
                    backend.name()
                )
            }
            (SandboxState::On { detail }, None) => format!("on ({detail})"),
            (SandboxState::Off { reason, by_choice }, _) if *by_choice => {
                format!("off ({reason})")
            }
            (SandboxState::Off { reason, .. }, _) => format!("off: {reason}"),
            (SandboxState::Unavailable { reason }, _) => {
                format!("required but unavailable: {reason}")
            }
        }
    }

    /// The process to spawn for `bash -c shell_command` (see [`shell_program`]) in the
    /// project root: wrapped in the sandbox when it is on, plain when it is off, and an
    /// error when it is required but cannot run; sandboxed or not, with rein's environment
    /// less what [`mod@env`] removes (`keys_in_use`: the provider keys of the models in use,
    /// removed under any name). The caller sets stdio and the session.
    pub fn command(
        &self,
        shell_command: &str,
        keys_in_use: &[String],
    ) -> Result<tokio::process::Command, String> {
        let mut cmd = self.wrapped(shell_program(), keys_in_use)?;
        cmd.arg("-c").arg(shell_command);
        Ok(cmd)
    }

    /// This sandbox for `program`, which rein runs for itself on the project's code (a
    /// language server): no network whatever `sandbox.network` says, `cache` writable
    /// besides what commands may write, and the program's own folders readable where the
    /// sandbox's private `/tmp` would hide them (its install prefix: the folder above a
    /// `bin` or `.bin`, and the folder of the file it links to).
    pub fn for_tool(&self, cache: &Path, program: &Path) -> Sandbox {
        let mut out = self.clone();
        out.settings.network = false;
        out.settings.writable.push(cache.to_path_buf());
        let found = program.parent().map(|dir| {
            match dir.file_name().and_then(|n| n.to_str()) {
                Some("bin" | ".bin") => dir.parent().unwrap_or(dir),
                _ => dir,
            }
            .to_path_buf()
        });
        let real = program
            .canonicalize()
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf));
        let tmp = Path::new("/tmp");
        for dir in found.into_iter().chain(real) {
            let under_tmp = dir.starts_with(tmp)
                || dir
                    .canonicalize()
                    .is_ok_and(|d| d.starts_with(tmp) || d.starts_with(std::env::temp_dir()));
            if under_tmp && !out.readable.iter().any(|r| dir.starts_with(r)) {
                out.readable.push(dir);
            }
        }
        out
    }

    /// The process to spawn for `program` (its arguments are the caller's to add) in the
    /// project root, as [`Sandbox::command`] wraps the shell.
    pub fn program(
        &self,
        program: &Path,
        keys_in_use: &[String],
    ) -> Result<tokio::process::Command, String> {
        self.wrapped(program, keys_in_use)
    }

    /// `program` wrapped in the sandbox (or plain, see [`Sandbox::command`]), in the
    /// project root, with the environment less what [`mod@env`] removes.
    fn wrapped(
        &self,
        program: &Path,
        keys_in_use: &[String],
    ) -> Result<tokio::process::Command, String> {
        let shell = program;
        let mut cmd = match &self.backend {
            Some(Backend::Bubblewrap(bwrap)) => {
                ensure_rein_dir(&self.root)?;
                let protected = self.protected();
                let (private, shown) = self.private_and_shown();
                let settings = self.command_settings();
                let args = bwrap_args(&self.root, &settings, &shown, &protected, &private);
                let mut cmd = tokio::process::Command::new(bwrap);
                cmd.args(args).arg("--").arg(shell);
                cmd
            }
            Some(Backend::Seatbelt) => {
                ensure_rein_dir(&self.root)?;
                let protected = self.protected();
                let (private, shown) = self.private_and_shown();
                let settings = self.command_settings();
                let profile = seatbelt_profile(&self.root, &settings, &protected, &private, &shown);
                let mut cmd = tokio::process::Command::new(seatbelt::SANDBOX_EXEC);
                cmd.arg("-p").arg(profile).arg(shell);
                cmd
            }
            None => match &self.state {
                SandboxState::Unavailable { reason } => {
                    return Err(format!(
                        "the sandbox is required (sandbox.mode = \"required\") but cannot run: \
                         {reason}"
                    ));
                }
                _ => tokio::process::Command::new(shell),
            },
        };
        cmd.current_dir(&self.root);
        for name in self.env.removed(std::env::vars_os(), keys_in_use) {
            cmd.env_remove(name);
        }
        Ok(cmd)
    }
}

/// The shell commands run in: bash, whose syntax the permission checker parses (the tool is
/// called `bash`, and models write bash), or `sh` where no bash is installed.
pub fn shell_program() -> &'static Path {
    static SHELL: OnceLock<PathBuf> = OnceLock::new();
    SHELL.get_or_init(|| {
        [
            "/bin/bash",
            "/usr/bin/bash",
            "/usr/local/bin/bash",
            "/opt/homebrew/bin/bash",
        ]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("sh"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(mode: SandboxMode) -> SandboxSettings {
        SandboxSettings {
            mode,
            ..SandboxSettings::default()
        }
    }

    #[test]
    fn a_tool_gets_no_network_its_cache_and_its_install_folder_under_tmp() {
        let dir = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
        let bin = dir.path().join("node_modules/.bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("srv"), "").unwrap();
        let mut open = Sandbox::off(Path::new("/p"));
        open.settings.network = true;
        let tool = open.for_tool(Path::new("/c"), &bin.join("srv"));
        assert!(!tool.settings.network);
        assert_eq!(tool.settings.writable, [PathBuf::from("/c")]);
        assert_eq!(tool.readable, [dir.path().join("node_modules")]);
        // A program the root's read-only view already shows adds nothing.
        let plain = open.for_tool(Path::new("/c"), Path::new("/usr/bin/python3"));
        assert!(plain.readable.is_empty());
        // The program as given is run, directly.
        let cmd = tool.program(&bin.join("srv"), &[]).unwrap();
        assert_eq!(cmd.as_std().get_program(), bin.join("srv"));
        assert_eq!(cmd.as_std().get_args().count(), 0);
    }

    #[test]
    fn off_runs_plain_sh_in_the_root() {
        let cmd = Sandbox::off(Path::new("/p"))
            .command("echo hi", &[])
            .unwrap();
        let std = cmd.as_std();
        assert_eq!(std.get_program(), shell_program());
        let args: Vec<_> = std.get_args().collect();
        assert_eq!(args, ["-c", "echo hi"]);
        assert_eq!(std.get_current_dir(), Some(Path::new("/p")));
    }

    #[test]
    fn bubblewrap_command_ends_with_the_shell_and_creates_rein() {
        let dir = tempfile::tempdir().unwrap();
        let s = Sandbox::decide(settings(SandboxMode::Auto), dir.path(), vec![], |_| {
            Ok(Backend::Bubblewrap("/usr/bin/bwrap".into()))
        });
        let cmd = s.command("echo hi", &[]).unwrap();
        let std = cmd.as_std();
        assert_eq!(std.get_program(), "/usr/bin/bwrap");
        let args: Vec<_> = std.get_args().collect();
        let tail: Vec<&std::ffi::OsStr> = vec![
            "--".as_ref(),
            shell_program().as_os_str(),
            "-c".as_ref(),
            "echo hi".as_ref(),
        ];
        assert_eq!(args[args.len() - 4..], tail[..]);
        assert!(dir.path().join(".rein").is_dir());
        let rein = dir.path().canonicalize().unwrap().join(".rein");
        assert!(args
            .windows(3)
            .any(|w| w[0] == "--ro-bind" && w[1] == rein.as_os_str() && w[2] == w[1]));
    }

    #[test]
    fn seatbelt_command_runs_sandbox_exec() {
        let dir = tempfile::tempdir().unwrap();
        let s = Sandbox::decide(settings(SandboxMode::Auto), dir.path(), vec![], |_| {
            Ok(Backend::Seatbelt)
        });
        let cmd = s.command("echo hi", &[]).unwrap();
        let std = cmd.as_std();
        assert_eq!(std.get_program(), "/usr/bin/sandbox-exec");
        let args: Vec<_> = std.get_args().collect();
        assert_eq!(args[0], "-p");
        assert!(args[1].to_string_lossy().starts_with("(version 1)"));
        let tail: Vec<&std::ffi::OsStr> = vec![
            shell_program().as_os_str(),
            "-c".as_ref(),
            "echo hi".as_ref(),
        ];
        assert_eq!(args[2..], tail[..]);
    }

    /// Seatbelt denies writing the steering paths (the root's whether or not they exist,
    /// those found below it, those added) and reading the project's secret files, after
    /// the project's write allow; a template stays readable.
    #[test]
    fn seatbelt_denies_steering_writes_and_secret_reads() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("sub/.claude")).unwrap();
        std::fs::write(root.join(".envrc"), "x").unwrap();
        std::fs::write(root.join(".env"), "K=v").unwrap();
        std::fs::write(root.join(".env.example"), "K=").unwrap();
        let s = Sandbox::decide(settings(SandboxMode::Auto), &root, vec![], |_| {
            Ok(Backend::Seatbelt)
        });
        s.add_steering_files(&[PathBuf::from("docs/style.md")]);
        let cmd = s.command("true", &[]).unwrap();
        let profile = cmd
            .as_std()
            .get_args()
            .nth(1)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let quoted = |rel: &str| format!("(subpath \"{}\")", root.join(rel).display());
        let allow = profile.find("(allow file-write*").unwrap();
        let deny_writes = profile.find("(deny file-write*").unwrap();
        let deny_reads = profile.find("(deny file-read* file-write*").unwrap();
        assert!(allow < deny_writes && deny_writes < deny_reads, "{profile}");
        for rel in [
            ".envrc",
            ".cargo/config.toml",
            "CLAUDE.md",
            "sub/.claude",
            "docs/style.md",
        ] {
            let at = profile
                .find(&quoted(rel))
                .unwrap_or_else(|| panic!("{rel}: {profile}"));
            assert!(at > deny_writes && at < deny_reads, "{rel}: {profile}");
        }
        assert!(
            profile.find(&quoted(".env")).unwrap() > deny_reads,
            "{profile}"
        );
        assert!(!profile.contains(&quoted(".env.example")), "{profile}");
        // With the secrets shown (`sandbox.hide_secrets = false`), `.env` is not denied.
        let shown = Sandbox::decide(
            SandboxSettings {
                hide_project_secrets: false,
                ..settings(SandboxMode::Auto)
            },
            &root,
            vec![],
            |_| Ok(Backend::Seatbelt),
        );
        let cmd = shown.command("true", &[]).unwrap();
        let profile = cmd
            .as_std()
            .get_args()
            .nth(1)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(!profile.contains(&quoted(".env")), "{profile}");
    }

    #[test]
    fn a_broken_rein_symlink_refuses_to_run() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("nowhere/else", dir.path().join(".rein")).unwrap();
        let s = Sandbox::decide(settings(SandboxMode::Auto), dir.path(), vec![], |_| {
            Ok(Backend::Bubblewrap("/usr/bin/bwrap".into()))
        });
        let err = s.command("true", &[]).unwrap_err();
        assert!(err.starts_with("could not create "), "{err}");
    }
}
