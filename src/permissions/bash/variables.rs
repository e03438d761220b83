//! Variables that change what a command runs: `PATH`, `LD_PRELOAD`, `GIT_SSH_COMMAND`,
//! `PAGER`, `RUSTC_WRAPPER`, ...
//!
//! A command run with one of them set (by a leading assignment, by `env NAME=value`, or
//! inherited by a command string from the `sh -c` that runs it) could run another program
//! or load other code than its text says, so what the rules allow is asked instead.

pub(super) fn sensitive_env(text: &str, env: &[String]) -> Option<String> {
    env.iter()
        .find(|name| changes_what_runs(name))
        .map(|name| format!("`{text}` runs with `{name}` set, which changes what runs"))
}

/// Variables through which a command can be made to run another program or load code.
fn changes_what_runs(name: &str) -> bool {
    const EXACT: [&str; 41] = [
        "PATH",
        "BASH_ENV",
        "ENV",
        "IFS",
        "PS4",
        "PROMPT_COMMAND",
        "SHELLOPTS",
        "BASHOPTS",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_EXEC_PATH",
        "GIT_EXTERNAL_DIFF",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "GIT_PROXY_COMMAND",
        "GIT_DIR",
        "GIT_PAGER",
        "PAGER",
        "EDITOR",
        "VISUAL",
        "HOME",
        "XDG_CONFIG_HOME",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONSTARTUP",
        "PYTEST_ADDOPTS",
        "PYTEST_PLUGINS",
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
    ];
    EXACT.contains(&name)
        || ["LD_", "DYLD_", "GIT_CONFIG", "BASH_FUNC_"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
        || (name.starts_with("CARGO_")
            && [
                "HOME",
                "RUNNER",
                "RUSTC",
                "RUSTDOC",
                "LINKER",
                "WRAPPER",
                "RUSTFLAGS",
            ]
            .iter()
            .any(|part| name.contains(part)))
}
