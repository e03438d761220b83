//! The bubblewrap sandbox, for real: commands go through the `bash` tool exactly as the agent
//! runs them, and every effect is checked on the host.
//!
//! The tests are in this folder, a file a topic (`writes`, `hidden`, `isolation`,
//! `without_bwrap`); this file holds their helpers and the harness. Most tests need bwrap
//! to work here. The binary has its own small harness (`harness = false` in Cargo.toml) so that where bwrap is missing or cannot create namespaces, those tests are
//! reported as `ignored` with the reason, never as passed; under CI (`CI` set, as `.ci/run`
//! runs it with bubblewrap installed) a missing or broken bwrap fails the run instead.
//! The output follows libtest's format, closing line included.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test's unwrap is an assertion

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::OnceLock;
use std::time::Duration;
use std::time::Instant;

use rein_core::sandbox::{Sandbox, SandboxMode, SandboxSettings, SandboxState};
use rein_core::skills::SkillSet;
use rein_core::tools::bash::{run, Args};
use rein_core::tools::ToolContext;

use hidden::{
    a_gitdir_pointer_and_its_target_are_read_only, host_service_sockets_under_run_user_are_hidden,
    project_secrets_are_hidden_from_commands,
    reins_data_folder_is_hidden_but_its_own_spill_folders, secrets_are_hidden_from_commands,
    steering_and_env_links_out_of_the_project_do_not_break_commands, steering_files_are_read_only,
};
use isolation::{
    no_controlling_terminal_inside, the_network_is_off_unless_allowed,
    the_timeout_kills_everything_in_the_sandbox, tmp_is_private_and_readable_paths_show_through,
};
use without_bwrap::{
    auto_without_bwrap_runs_unsandboxed_with_a_warning,
    required_without_bwrap_refuses_and_runs_nothing,
};
use writes::{
    background_commands_run_in_the_sandbox, extra_writable_paths_are_writable, git_is_read_only,
    nested_repositories_are_read_only_too, output_exit_codes_and_the_environment_pass_through,
    plan_mode_keeps_the_project_read_only,
    rein_config_cannot_be_written_even_when_rein_did_not_exist,
    writes_land_in_the_project_and_nowhere_else,
};

mod hidden;
mod isolation;
mod without_bwrap;
mod writes;

/// The detected sandbox for `root` (the harness runs these tests only where it works).
fn sandboxed(root: &Path, settings: SandboxSettings, readable: Vec<PathBuf>) -> Sandbox {
    let settings = SandboxSettings {
        mode: SandboxMode::Auto,
        ..settings
    };
    let sandbox = Sandbox::detect(settings, root, readable);
    if let SandboxState::On { .. } = sandbox.state() {
        return sandbox;
    }
    // The harness checked before running this test that the sandbox works here.
    panic!("the sandbox is {}", sandbox.describe());
}

fn context(sandbox: Sandbox, timeout: Duration) -> ToolContext {
    ToolContext {
        root: sandbox.root().to_path_buf(),
        bash_timeout: timeout,
        secrets: Vec::new(),
        sandbox: Arc::new(sandbox),
        todos: Default::default(),
        skills: Arc::new(SkillSet::empty()),
        editor: None,
        live: None,
        lsp: None,
    }
}

/// Run `command` through the real `bash` tool.
async fn sh(ctx: &ToolContext, command: &str) -> Result<String, String> {
    run(
        Args {
            command: command.to_string(),
            run_in_background: None,
        },
        ctx,
    )
    .await
    .map(|ran| ran.text)
}

/// A directory on the host that is neither in the project nor under `/tmp` (which the
/// sandbox replaces), so commands see it, read-only.
fn outside_dir() -> tempfile::TempDir {
    // The target dir may itself lie under /tmp (a checkout there); /var/tmp never does.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let base = if target.starts_with("/tmp") && Path::new("/var/tmp").is_dir() {
        Path::new("/var/tmp")
    } else {
        target
    };
    tempfile::Builder::new()
        .prefix("rein-sandbox-test")
        .tempdir_in(base)
        .unwrap()
}

fn in_host_tmp() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("rein-sandbox-test")
        .tempdir_in("/tmp")
        .unwrap()
}

fn q(path: &Path) -> String {
    shlex::try_quote(&path.to_string_lossy())
        .unwrap()
        .into_owned()
}

// ---- the harness ----

type TestFn = fn() -> Pin<Box<dyn Future<Output = ()>>>;

/// A test: its name, what it needs (a reason to skip it, or `None`), and its body.
struct Case {
    name: &'static str,
    requires: fn() -> Option<String>,
    run: TestFn,
}

macro_rules! test {
    ($name:ident, $requires:expr) => {
        Case {
            name: stringify!($name),
            requires: $requires,
            run: || Box::pin($name()),
        }
    };
}

/// Nothing beyond the machine itself.
fn nothing() -> Option<String> {
    None
}

/// A working bubblewrap.
fn bwrap() -> Option<String> {
    static UNAVAILABLE: OnceLock<Option<String>> = OnceLock::new();
    UNAVAILABLE.get_or_init(sandbox_unavailable).clone()
}

/// A working bubblewrap and a `/run/user` to hide (created when missing, as root can).
fn bwrap_and_run_user() -> Option<String> {
    let run_user = Path::new("/run/user");
    if !run_user.is_dir() && std::fs::create_dir_all(run_user).is_err() {
        return Some("/run/user does not exist here and cannot be created".to_string());
    }
    bwrap()
}

const CASES: &[Case] = &[
    test!(writes_land_in_the_project_and_nowhere_else, bwrap),
    test!(background_commands_run_in_the_sandbox, bwrap),
    test!(plan_mode_keeps_the_project_read_only, bwrap),
    test!(output_exit_codes_and_the_environment_pass_through, bwrap),
    test!(git_is_read_only, bwrap),
    test!(nested_repositories_are_read_only_too, bwrap),
    test!(secrets_are_hidden_from_commands, bwrap),
    test!(a_gitdir_pointer_and_its_target_are_read_only, bwrap),
    test!(
        rein_config_cannot_be_written_even_when_rein_did_not_exist,
        bwrap
    ),
    test!(steering_files_are_read_only, bwrap),
    test!(project_secrets_are_hidden_from_commands, bwrap),
    test!(
        steering_and_env_links_out_of_the_project_do_not_break_commands,
        bwrap
    ),
    test!(the_network_is_off_unless_allowed, bwrap),
    test!(tmp_is_private_and_readable_paths_show_through, bwrap),
    test!(reins_data_folder_is_hidden_but_its_own_spill_folders, bwrap),
    test!(extra_writable_paths_are_writable, bwrap),
    test!(no_controlling_terminal_inside, bwrap),
    test!(the_timeout_kills_everything_in_the_sandbox, bwrap),
    test!(required_without_bwrap_refuses_and_runs_nothing, nothing),
    test!(auto_without_bwrap_runs_unsandboxed_with_a_warning, nothing),
    test!(
        host_service_sockets_under_run_user_are_hidden,
        bwrap_and_run_user
    ),
];

/// Why bwrap-backed tests cannot run here, or `None` when the sandbox works.
fn sandbox_unavailable() -> Option<String> {
    let probe = tempfile::tempdir().ok()?;
    let sandbox = Sandbox::detect(SandboxSettings::default(), probe.path(), Vec::new());
    match sandbox.state() {
        SandboxState::On { .. } => None,
        _ => Some(format!("the sandbox is {}", sandbox.describe())),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        for case in CASES {
            println!("{}: test", case.name);
        }
        return ExitCode::SUCCESS;
    }
    let exact = args.iter().any(|a| a == "--exact");
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let selected = |name: &str| {
        filters.is_empty()
            || filters.iter().any(|f| {
                if exact {
                    name == f.as_str()
                } else {
                    name.contains(f.as_str())
                }
            })
    };
    if let (Some(reason), Some(_)) = (bwrap(), std::env::var_os("CI")) {
        println!("error: bubblewrap must work under CI (.ci/run installs it), but {reason}");
        return ExitCode::from(101);
    }
    let start = Instant::now();
    let (mut passed, mut failed, mut ignored, mut filtered) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    println!(
        "\nrunning {} tests",
        CASES.iter().filter(|c| selected(c.name)).count()
    );
    for case in CASES {
        if !selected(case.name) {
            filtered += 1;
            continue;
        }
        if let Some(reason) = (case.requires)() {
            println!("test {} ... ignored, {reason}", case.name);
            ignored += 1;
            continue;
        }
        let outcome = std::panic::catch_unwind(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a tokio runtime");
            runtime.block_on((case.run)());
        });
        match outcome {
            Ok(()) => {
                println!("test {} ... ok", case.name);
                passed += 1;
            }
            Err(_) => {
                println!("test {} ... FAILED", case.name);
                failures.push(case.name);
                failed += 1;
            }
        }
    }
    if !failures.is_empty() {
        println!("\nfailures:");
        for name in &failures {
            println!("    {name}");
        }
    }
    println!(
        "\ntest result: {}. {passed} passed; {failed} failed; {ignored} ignored; 0 measured; {filtered} filtered out; finished in {:.2}s\n",
        if failed == 0 { "ok" } else { "FAILED" },
        start.elapsed().as_secs_f64()
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(101)
    }
}
