//! The OS sandbox around `bash` commands: bubblewrap on Linux, Seatbelt on macOS.
//!
//! Permissions decide whether to interrupt the user; the sandbox decides what a command can
//! physically do. In: the settings (`sandbox.mode`, `sandbox.network`, `sandbox.writable`),
//! the project root and paths that must stay readable. Out: a [`Sandbox`] that says what is
//! in force and wraps a shell command so it can read anywhere, write only the project (and
//! the extra writable paths), never write `.git` or `.rein`, and reach no network.

use std::path::{Path, PathBuf};

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
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SandboxSettings {
    pub mode: SandboxMode,
    /// Allow network access from commands.
    pub network: bool,
    /// Extra paths commands may write, besides the project.
    pub writable: Vec<PathBuf>,
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
}

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
                reason: "sandbox.mode = \"off\"".to_string(),
                by_choice: true,
            },
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
}
