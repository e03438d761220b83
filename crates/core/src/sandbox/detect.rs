//! Deciding once per process start what is in force: `mode = "off"` means off by choice;
//! otherwise the backend for this OS is probed (bwrap must really create its namespaces
//! here, which many containers forbid; Seatbelt must run). A working backend means on; a
//! broken or missing one means off with a warning (`auto`) or every command refused
//! (`required`). A probe runs its check command to the end, at most [`PROBE_TIMEOUT`], and
//! reports the first line the program printed on stderr.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::{
    bwrap, seatbelt, Backend, CommandEnv, Sandbox, SandboxMode, SandboxSettings, SandboxState,
    OFF_BY_CHOICE,
};

/// How long a probe may take before the backend counts as broken.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

impl Sandbox {
    /// Decide what is in force for `root`, once per process start. Unless the mode is off,
    /// this finds the backend for this OS (`bwrap` on PATH on Linux, `/usr/bin/sandbox-exec`
    /// on macOS) and runs it once on `true` to prove it works here (a few milliseconds).
    /// `bwrap` is looked for in PATH's absolute folders only: a relative entry (`.`, an
    /// empty one) is the folder rein started in, often the project.
    pub fn detect(settings: SandboxSettings, root: &Path, readable: Vec<PathBuf>) -> Sandbox {
        Sandbox::decide(settings, root, readable, |settings| {
            if cfg!(target_os = "linux") {
                probe_bwrap(
                    bwrap::find_on_path(std::env::var_os("PATH").as_deref()),
                    settings,
                )
            } else if cfg!(target_os = "macos") {
                seatbelt::probe().map(|()| Backend::Seatbelt)
            } else {
                Err(
                    "no sandbox is available on this OS (rein uses bubblewrap on Linux and \
                     Seatbelt on macOS)"
                        .to_string(),
                )
            }
        })
    }

    /// [`Sandbox::detect`] with bubblewrap as the backend, whatever the OS, using the given
    /// `bwrap` executable (`None`: as if it were not installed) instead of looking on PATH.
    pub fn detect_with(
        settings: SandboxSettings,
        root: &Path,
        readable: Vec<PathBuf>,
        bwrap: Option<PathBuf>,
    ) -> Sandbox {
        Sandbox::decide(settings, root, readable, |settings| {
            probe_bwrap(bwrap, settings)
        })
    }

    pub(super) fn decide(
        settings: SandboxSettings,
        root: &Path,
        readable: Vec<PathBuf>,
        probe: impl FnOnce(&SandboxSettings) -> Result<Backend, String>,
    ) -> Sandbox {
        let (state, backend) = match settings.mode {
            SandboxMode::Off => (
                SandboxState::Off {
                    reason: OFF_BY_CHOICE.to_string(),
                    by_choice: true,
                },
                None,
            ),
            mode => match probe(&settings) {
                Ok(backend) => (
                    SandboxState::On {
                        detail: on_detail(&backend, &settings),
                    },
                    Some(backend),
                ),
                Err(reason) if mode == SandboxMode::Required => {
                    (SandboxState::Unavailable { reason }, None)
                }
                Err(reason) => (
                    SandboxState::Off {
                        reason,
                        by_choice: false,
                    },
                    None,
                ),
            },
        };
        Sandbox {
            settings,
            root: root.to_path_buf(),
            readable,
            state,
            backend,
            scan: std::sync::OnceLock::new(),
            steering_files: Default::default(),
            read_only: false,
            private: None,
            env: CommandEnv::default(),
        }
    }
}

/// The `detail` of the `On` state.
fn on_detail(backend: &Backend, settings: &SandboxSettings) -> String {
    let extra = match settings.writable.len() {
        0 => String::new(),
        1 => " (and 1 extra path)".to_string(),
        n => format!(" (and {n} extra paths)"),
    };
    let network = if settings.network {
        "network allowed"
    } else {
        "no network"
    };
    format!(
        "{}: the project is writable{extra}, .git and .rein read-only, {network}",
        backend.name()
    )
}

fn probe_bwrap(bwrap: Option<PathBuf>, settings: &SandboxSettings) -> Result<Backend, String> {
    let bwrap = bwrap.ok_or_else(|| {
        "bwrap was not found; install bubblewrap (Debian/Ubuntu: apt install bubblewrap)"
            .to_string()
    })?;
    bwrap::probe(&bwrap, settings.network)?;
    Ok(Backend::Bubblewrap(bwrap))
}

/// Why a backend's check failed.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum ProbeFailure {
    /// The program could not be started or waited for.
    Start(String),
    /// It ran and failed: the first line it printed on stderr, or its exit status.
    Failed(String),
}

/// Run a backend's check command to the end (at most [`PROBE_TIMEOUT`]).
pub(super) fn run_probe(mut cmd: std::process::Command) -> Result<(), ProbeFailure> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| ProbeFailure::Start(e.to_string()))?;
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < PROBE_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ProbeFailure::Failed(format!(
                    "its check did not finish within {} s",
                    PROBE_TIMEOUT.as_secs()
                )));
            }
            Err(e) => return Err(ProbeFailure::Start(e.to_string())),
        }
    };
    if status.success() {
        return Ok(());
    }
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = pipe.read_to_string(&mut stderr);
    }
    Err(ProbeFailure::Failed(
        stderr
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| format!("its check failed ({status})")),
    ))
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

    fn fake(backend: Result<Backend, String>, mode: SandboxMode) -> Sandbox {
        Sandbox::decide(settings(mode), Path::new("/p"), Vec::new(), |_| backend)
    }

    fn missing() -> Result<Backend, String> {
        Err(
            "bwrap was not found; install bubblewrap (Debian/Ubuntu: apt install bubblewrap)"
                .to_string(),
        )
    }

    #[test]
    fn off_by_choice_never_probes_and_never_warns() {
        let s = Sandbox::decide(settings(SandboxMode::Off), Path::new("/p"), vec![], |_| {
            panic!("probed although the mode is off")
        });
        assert_eq!(
            s.state(),
            &SandboxState::Off {
                reason: "sandbox.mode = \"off\"".to_string(),
                by_choice: true
            }
        );
        assert_eq!(s.warning(), None);
        assert_eq!(s.describe(), "off (sandbox.mode = \"off\")");
        assert_eq!(Sandbox::off(Path::new("/p")).describe(), s.describe());
    }

    #[test]
    fn auto_follows_the_probe() {
        let on = fake(
            Ok(Backend::Bubblewrap("/usr/bin/bwrap".into())),
            SandboxMode::Auto,
        );
        assert_eq!(
            on.state(),
            &SandboxState::On {
                detail: "bubblewrap: the project is writable, .git and .rein read-only, \
                         no network"
                    .to_string()
            }
        );
        assert_eq!(on.warning(), None);
        assert_eq!(
            on.describe(),
            "on (bubblewrap; project writable, network off)"
        );

        let off = fake(missing(), SandboxMode::Auto);
        assert!(matches!(
            off.state(),
            SandboxState::Off {
                by_choice: false,
                ..
            }
        ));
        assert_eq!(
            off.describe(),
            "off: bwrap was not found; install bubblewrap (Debian/Ubuntu: apt install bubblewrap)"
        );
        let warning = off.warning().unwrap();
        assert!(
            warning.starts_with("commands run without a sandbox: bwrap was not found;"),
            "{warning}"
        );
        assert!(!warning.contains('\n'));
    }

    #[test]
    fn required_without_a_backend_refuses() {
        let s = fake(missing(), SandboxMode::Required);
        assert!(matches!(s.state(), SandboxState::Unavailable { .. }));
        assert!(s
            .describe()
            .starts_with("required but unavailable: bwrap was not found;"));
        assert!(s.warning().unwrap().starts_with("commands are refused:"));
        let err = s.command("true", &[]).unwrap_err();
        assert_eq!(
            err,
            "the sandbox is required (sandbox.mode = \"required\") but cannot run: bwrap was \
             not found; install bubblewrap (Debian/Ubuntu: apt install bubblewrap)"
        );
    }

    #[test]
    fn describe_counts_extra_paths_and_network() {
        let s = Sandbox::decide(
            SandboxSettings {
                mode: SandboxMode::Required,
                network: true,
                writable: vec!["/a".into(), "/b".into()],
                ..SandboxSettings::default()
            },
            Path::new("/p"),
            vec![],
            |_| Ok(Backend::Seatbelt),
        );
        assert_eq!(
            s.describe(),
            "on (seatbelt; project + 2 extra paths writable, network on)"
        );
        assert_eq!(
            s.state(),
            &SandboxState::On {
                detail: "seatbelt: the project is writable (and 2 extra paths), .git and .rein \
                         read-only, network allowed"
                    .to_string()
            }
        );
    }

    #[test]
    fn probe_reports_the_first_stderr_line() {
        let mut cmd = std::process::Command::new("sh");
        cmd.args([
            "-c",
            "echo out; echo >&2; echo '  bwrap: no namespaces  ' >&2; echo more >&2; exit 1",
        ]);
        assert_eq!(
            run_probe(cmd),
            Err(ProbeFailure::Failed("bwrap: no namespaces".to_string()))
        );
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "exit 0"]);
        assert_eq!(run_probe(cmd), Ok(()));
        let cmd = std::process::Command::new("/no/such/program");
        assert!(matches!(run_probe(cmd), Err(ProbeFailure::Start(_))));
    }
}
