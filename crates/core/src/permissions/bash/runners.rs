//! Flags of the test runners and build tools the default rules allow (`pytest`, also as
//! `python3 -m pytest`; `cargo test`, `check`, `build`, `clippy`, `fmt`, `tree`, `metadata`)
//! that write or delete outside the project, load other code, change the configuration or
//! upload.
//!
//! The runners run the project's own code anyway (the sandbox confines that); these flags
//! reach further than the project: `pytest --basetemp=DIR` empties DIR, `--pastebin` uploads,
//! `-p` loads a plugin; `cargo --config 'target.X.runner=...'` runs any program,
//! `--target-dir`/`--manifest-path` build elsewhere, `cargo test -- --logfile=PATH` writes
//! there. pytest's parser accepts unambiguous abbreviations of long options, so any prefix
//! of three letters or more of a listed option counts; cargo's does not.

use super::flags::{abbreviates, long_name};

/// pytest's long options that reach beyond the project, and what they do.
const PYTEST_LONG: [(&str, &str); 20] = [
    ("basetemp", "deletes and recreates the directory it names"),
    ("pastebin", "uploads test output to a paste service"),
    ("junitxml", "writes a report to the file it names"),
    ("junit-xml", "writes a report to the file it names"),
    ("result-log", "writes a log to the file it names"),
    ("report-log", "writes a log to the file it names"),
    ("log-file", "writes a log to the file it names"),
    ("debug", "writes a debug log to a file"),
    (
        "override-ini",
        "overrides the configuration (plugins, paths, options)",
    ),
    ("config-file", "reads another configuration file"),
    ("rootdir", "sets another root directory"),
    (
        "confcutdir",
        "loads `conftest.py` files from other directories",
    ),
    ("pdbcls", "imports a debugger class to run"),
    ("cov-report", "writes a coverage report where it says"),
    ("html", "writes a report to the file it names"),
    ("json-report-file", "writes a report to the file it names"),
    ("alluredir", "writes reports to the directory it names"),
    ("benchmark-json", "writes a report to the file it names"),
    ("benchmark-save", "writes benchmark results"),
    (
        "benchmark-storage",
        "writes benchmark results where it says",
    ),
];

/// pytest's own long options that a listed one starts with: they are not abbreviations.
const PYTEST_EXACT: [&str; 2] = ["cov", "pdb"];

/// Why pytest's arguments reach beyond the project, if they do.
/// Whether a `--cov-report` value sends the report to the terminal only (`term`,
/// `term-missing`, with `:skip-covered`).
fn terminal_report(value: Option<&str>) -> bool {
    value.is_some_and(|v| {
        let kind = v.split(':').next().unwrap_or_default();
        matches!(kind, "term" | "term-missing")
            && v.split(':').skip(1).all(|flag| flag == "skip-covered")
    })
}

pub(super) fn pytest_hazard(args: &[&str]) -> Option<String> {
    let mut i = 0;
    while let Some(&arg) = args.get(i) {
        if arg == "--" {
            return None;
        }
        if let Some(name) = long_name(arg) {
            if PYTEST_EXACT.contains(&name) {
                i += 1;
                continue;
            }
            // A report to the terminal writes no file.
            if name == "cov-report" && terminal_report(arg.split_once('=').map(|(_, v)| v)) {
                i += 1;
                continue;
            }
            if let Some((_, what)) = PYTEST_LONG
                .iter()
                .find(|(full, _)| abbreviates(name, full, 3))
            {
                return Some(format!("{what} (`{arg}`)"));
            }
        } else if arg.starts_with('-') && arg != "-" {
            let cluster: Vec<char> = arg.chars().skip(1).collect();
            // `-p no:NAME` (or `-pno:NAME`) turns a plugin off.
            let value = if cluster.len() > 1 {
                Some(&arg[2..])
            } else {
                args.get(i + 1).copied()
            };
            if cluster.first() == Some(&'p') && value.is_some_and(|v| v.starts_with("no:")) {
                // A `no:NAME` in the next word is passed over as any word that is not a
                // flag is.
                i += 1;
                continue;
            }
            for (k, c) in cluster.iter().enumerate() {
                let what = match c {
                    'p' => "loads a plugin",
                    'c' => "reads another configuration file",
                    'o' => "overrides the configuration (plugins, paths, options)",
                    _ => "",
                };
                if !what.is_empty() {
                    return Some(format!("{what} (`{arg}`)"));
                }
                if matches!(c, 'k' | 'm' | 'r' | 'W' | 'n') {
                    if k + 1 == cluster.len() {
                        i += 1;
                    }
                    break;
                }
            }
        }
        i += 1;
    }
    None
}

/// cargo's options that reach beyond the project, and what they do.
const CARGO_LONG: [(&str, &str); 6] = [
    (
        "config",
        "sets configuration, which can name a program to run (`target.<triple>.runner`)",
    ),
    ("target-dir", "builds into another directory"),
    ("manifest-path", "builds another package"),
    ("artifact-dir", "copies artifacts to another directory"),
    ("out-dir", "copies artifacts to another directory"),
    ("lockfile-path", "uses another lock file"),
];

/// Why cargo's arguments (after `cargo`) reach beyond the project, if they do. After `--`
/// come the test harness's arguments, of which `--logfile` writes a file.
pub(super) fn cargo_hazard(args: &[&str]) -> Option<String> {
    let mut harness = false;
    for &arg in args {
        if arg == "--" && !harness {
            harness = true;
            continue;
        }
        if arg.starts_with("-Z") {
            return Some(format!("enables unstable options (`{arg}`)"));
        }
        if harness {
            if long_name(arg) == Some("logfile") {
                return Some(format!("writes a log to the file it names (`{arg}`)"));
            }
            continue;
        }
        if arg.starts_with("-C") {
            return Some(format!("works in another directory (`{arg}`)"));
        }
        if let Some(name) = long_name(arg) {
            if let Some((_, what)) = CARGO_LONG.iter().find(|(full, _)| *full == name) {
                return Some(format!("{what} (`{arg}`)"));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(args: &str) -> Vec<&str> {
        args.split(' ').filter(|a| !a.is_empty()).collect()
    }

    #[test]
    fn pytest_flags_that_reach_beyond_the_project() {
        for args in [
            "--basetemp=/home",
            "--basetemp /home",
            "--bas=/x",
            "--pastebin=all",
            "--junitxml=/etc/x.xml",
            "--junit-xml x",
            "--result-log=x",
            "-p evil",
            "-pevil",
            "-vp evil",
            "-c other.ini",
            "-o addopts=-pevil",
            "--override-ini=x=y",
            "--rootdir=/",
            "--confcutdir=/",
            "--log-file=/x",
            "--debug",
            "--debug=/x",
            "--pdbcls=mod:Cls",
            "--cov-report=html:/x",
            "--cov-report=term:x",
            "--cov-report=xml",
            "--cov-report",
            // A plugin turned off, then one loaded.
            "-p no:cacheprovider -p evil",
            "-pno:cacheprovider -c x.ini",
            // `-r` takes its value in the same word, `-k` the next one.
            "-rA -p evil",
            "-k x -p evil",
            "-x -o a=b",
        ] {
            assert!(pytest_hazard(&split(args)).is_some(), "{args}");
        }
        for (args, flag) in [
            ("-p no:x -p evil", "`-p`"),
            ("-k x -c other.ini", "`-c`"),
            ("-vx -o a=b", "`-o`"),
        ] {
            let why = pytest_hazard(&split(args)).unwrap_or_default();
            assert!(why.contains(flag), "{args}: {why}");
        }
        for args in [
            "",
            "-x -q tests",
            "-k test_p",
            "-k 'p or c'",
            "-vv -rA",
            "--cov=src",
            "--pdb",
            "--cache-clear",
            "-n 4",
            "-- -p",
            "-x -- -p evil",
            "--cov-report=term",
            "--cov-report=term-missing",
            "--cov-report=term-missing:skip-covered",
            "-p no:cacheprovider",
            "-pno:cacheprovider -x",
            "-p no:randomly -p no:cacheprovider tests",
            // The next word is `-k`'s or `-m`'s expression, not a flag.
            "-k -p",
            "-m -c",
            "-vk -o",
            "-W error -x",
            "-n -p",
            // Paths are not flags, whatever letters they hold.
            "tests/conftest.py -x",
        ] {
            assert_eq!(pytest_hazard(&split(args)), None, "{args}");
        }
    }

    #[test]
    fn cargo_flags_that_reach_beyond_the_project() {
        for args in [
            "test --config target.x.runner=\"touch\"",
            "test --config=x",
            "check --target-dir=/elsewhere",
            "check --target-dir /elsewhere",
            "check --manifest-path=/other/Cargo.toml",
            "test -Zunstable-options",
            "test -Z x",
            "test --artifact-dir=/x",
            "test --out-dir /x",
            "test --lockfile-path /x",
            "test -- --logfile=/x",
            "test -- --logfile /x",
            "test -C /x",
        ] {
            assert!(cargo_hazard(&split(args)).is_some(), "{args}");
        }
        for args in [
            "test",
            "test --all --release",
            "test -p foo -- --nocapture --test-threads 1",
            "check --all-targets --features x",
            "test -- --config",
        ] {
            assert_eq!(cargo_hazard(&split(args)), None, "{args}");
        }
    }
}
