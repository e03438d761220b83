//! What can go wrong while resolving the settings, as one-line messages.
//!
//! Every message starts with where the bad value came from (a file path, `env VAR` or
//! `flag --name`), then names the key, then says what was expected and what was found, so
//! the user knows exactly which line to fix.

use std::path::PathBuf;

/// A setting could not be resolved. The `Display` text is a single line.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A config file exists but could not be read (a missing file is skipped, not an error).
    #[error("{}: cannot read: {error}", path.display())]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },

    /// A config file is not valid TOML.
    #[error("{}: not valid TOML: {message}{}", path.display(), line_suffix(*line))]
    Syntax {
        path: PathBuf,
        message: String,
        line: Option<usize>,
    },

    /// A known key in a config file has a value of the wrong type or out of range.
    #[error("{}: key `{key}`: {problem}", path.display())]
    Value {
        path: PathBuf,
        key: String,
        problem: String,
    },

    /// A config file holds a key rein does not know (usually a typo).
    #[error("{}: unknown key `{key}` ({known})", path.display())]
    UnknownKey {
        path: PathBuf,
        key: String,
        known: String,
    },

    /// A config file holds a table rein does not know (usually a typo).
    #[error("{}: unknown section `[{section}]` ({known})", path.display())]
    UnknownSection {
        path: PathBuf,
        section: String,
        known: String,
    },

    /// An environment variable holds a value that cannot be used.
    #[error("env {var}: {problem}")]
    Env { var: String, problem: String },

    /// A line of `~/.agents/env` holds a value that cannot be used.
    #[error("{}: {key}: {problem}", path.display())]
    AgentsEnv {
        path: PathBuf,
        key: String,
        problem: String,
    },

    /// A command-line flag holds a value that cannot be used.
    #[error("flag {flag}: {problem}")]
    Flag { flag: String, problem: String },

    /// Two settings, each valid alone, do not fit together. `origin` is where the value
    /// that wins the precedence came from; `problem` names both keys, their values and
    /// where the other one came from.
    #[error("{origin}: {problem}")]
    Conflict { origin: String, problem: String },

    /// A model target whose URL, key or headers a project file set without the user's
    /// allow: nothing is sent to it (`ModelTarget::check_route`).
    #[error("{0}")]
    Route(String),

    /// Neither `REIN_HOME` nor a home directory is available to hold the user's files.
    #[error(
        "cannot find a home directory for the user config and data; \
         set REIN_HOME to a directory rein may use"
    )]
    NoHome,
}

fn line_suffix(line: Option<usize>) -> String {
    line.map(|n| format!(" (line {n})")).unwrap_or_default()
}
