//! Variables set for a command: which of them change what it runs, and which may ride on a
//! command the rules allow.
//!
//! A command run with `PATH`, `LD_PRELOAD`, `GIT_SSH_COMMAND`, `BASH_CMDS`, ... set (by a
//! leading assignment, by `env NAME=value`, or inherited by a command string from the
//! `sh -c` that runs it) could run another program or load other code than its text says.
//! For a command the rules allow, the list is turned around: only variables known to change
//! nothing but formatting, locale and logging ([`rides_on_allowed`]) may be set; any other
//! (`GIT_TRACE=/path` writes that file, `CC=` picks the compiler a build runs) asks.
//! A command that only assigns (`X=1; ...`) asks when it sets a variable of the first kind.

/// A variable set for a command: its name, and its value when literal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct EnvVar {
    pub(super) name: String,
    pub(super) value: Option<String>,
}

impl EnvVar {
    pub(super) fn new(name: &str, value: Option<&str>) -> EnvVar {
        EnvVar {
            name: name.to_string(),
            value: value.map(str::to_string),
        }
    }
}

/// Why `text`, run with `env` set, could run something else than it says.
pub(super) fn sensitive_env(text: &str, env: &[EnvVar]) -> Option<String> {
    env.iter()
        .find(|var| changes_what_runs(&var.name) && !rides_on_allowed(var))
        .map(|var| {
            format!(
                "`{text}` runs with `{}` set, which changes what runs",
                var.name
            )
        })
}

/// Why `text`, which the rules allow, may not run with `env` set: the first variable that is
/// not one of the few that ride on an allowed command.
pub(super) fn env_on_allowed(text: &str, env: &[EnvVar]) -> Option<String> {
    let var = env.iter().find(|var| !rides_on_allowed(var))?;
    if changes_what_runs(&var.name) {
        return sensitive_env(text, std::slice::from_ref(var));
    }
    Some(format!(
        "`{text}` runs with `{}` set; only locale, terminal, colour and logging variables (`LANG`, `LC_*`, `TZ`, `NO_COLOR`, `RUST_LOG`, ...) may be set for a command the rules allow",
        var.name
    ))
}

/// Variables that change only formatting, locale, logging or test threading.
fn rides_on_allowed(var: &EnvVar) -> bool {
    const NAMES: [&str; 24] = [
        "LANG",
        "LANGUAGE",
        "TZ",
        "TERM",
        "COLUMNS",
        "LINES",
        "NO_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "FORCE_COLOR",
        "CI",
        "DEBUG",
        "RUST_BACKTRACE",
        "RUST_LOG",
        "RUST_TEST_THREADS",
        "RUST_MIN_STACK",
        "CARGO_TERM_COLOR",
        "CARGO_INCREMENTAL",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
        "GIT_PAGER",
        "PAGER",
        "LC_ALL",
    ];
    let name = var.name.as_str();
    match name {
        // A pager is a program: only `cat` or none.
        "GIT_PAGER" | "PAGER" => matches!(var.value.as_deref(), Some("" | "cat")),
        _ => NAMES.contains(&name) || name.starts_with("LC_"),
    }
}

/// Variables through which a command can be made to run another program, load code, or
/// write or read elsewhere than its text says.
pub(super) fn changes_what_runs(name: &str) -> bool {
    const EXACT: [&str; 52] = [
        "PATH",
        "BASH_ENV",
        "ENV",
        "IFS",
        "PS0",
        "PS4",
        "PROMPT_COMMAND",
        "SHELLOPTS",
        "BASHOPTS",
        "BASH_CMDS",
        "BASH_ALIASES",
        "BASH_LOADABLES_PATH",
        "BASH_XTRACEFD",
        "BASH_COMPAT",
        "EXECIGNORE",
        "CDPATH",
        "SHELL",
        "PAGER",
        "EDITOR",
        "VISUAL",
        "BROWSER",
        "LESSOPEN",
        "LESSCLOSE",
        "MANPAGER",
        "SSH_ASKPASS",
        "HOME",
        "XDG_CONFIG_HOME",
        "TMPDIR",
        "PERL5LIB",
        "PERL5OPT",
        "PERLLIB",
        "RUBYOPT",
        "RUBYLIB",
        "NODE_OPTIONS",
        "NODE_PATH",
        "RUSTC",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTDOC",
        "RUSTFLAGS",
        "RUSTDOCFLAGS",
        "RIPGREP_CONFIG_PATH",
        "CC",
        "CXX",
        "CPP",
        "AR",
        "LD",
        "MAKEFLAGS",
        "CFLAGS",
        "CXXFLAGS",
        "LDFLAGS",
        "PYTEST_ADDOPTS",
    ];
    EXACT.contains(&name)
        || [
            "LD_",
            "DYLD_",
            "GIT_",
            "BASH_FUNC_",
            "CARGO_",
            "RUSTUP_",
            "PYTHON",
            "PYTEST_",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(name: &str, value: &str) -> Vec<EnvVar> {
        vec![EnvVar::new(name, Some(value))]
    }

    #[test]
    fn only_a_few_variables_ride_on_an_allowed_command() {
        for (name, value) in [
            ("LANG", "C"),
            ("LC_ALL", "C"),
            ("LC_MESSAGES", "C"),
            ("RUST_BACKTRACE", "1"),
            ("NO_COLOR", "1"),
            ("GIT_PAGER", "cat"),
            ("PAGER", ""),
        ] {
            assert_eq!(env_on_allowed("ls", &var(name, value)), None, "{name}");
        }
        for (name, value) in [
            ("GIT_TRACE", "/tmp/x"),
            ("GIT_INDEX_FILE", "x"),
            ("CC", "/tmp/evil"),
            ("CARGO_TARGET_DIR", "/x"),
            ("RUSTUP_TOOLCHAIN", "x"),
            ("PYTHONUSERBASE", "/x"),
            ("PYTEST_ADDOPTS", "-p x"),
            ("PAGER", "less"),
            ("GIT_PAGER", "sh -c x"),
            ("FOO", "1"),
        ] {
            let reason = env_on_allowed("ls", &var(name, value)).unwrap_or_default();
            assert!(reason.contains(&format!("`{name}`")), "{name}: {reason}");
        }
        assert!(env_on_allowed("ls", &[EnvVar::new("PAGER", None)]).is_some());
    }

    #[test]
    fn bash_lookup_tables_change_what_runs() {
        for name in ["BASH_CMDS", "BASH_ALIASES", "BASH_ENV", "PATH", "GIT_DIR"] {
            assert!(sensitive_env("x", &var(name, "")).is_some(), "{name}");
        }
        assert!(sensitive_env("x", &var("FOO", "")).is_none());
    }
}
