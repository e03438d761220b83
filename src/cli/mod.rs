//! The `rein` command line behind `main`: the flags ([`args`]), then one run.
//!
//! [`run`] starts a session in the core's stages (`rein_core::start`) and hands over as
//! soon as a stage is enough: the project folder and the config (`rein models` needs no
//! more), the sandbox and the permission policy (`rein policy check`, `rein sessions`,
//! `rein mcp`), the approval mode and, for `rein config` alone, the model's window asked
//! of the server, then the skills, AGENTS.md files, custom commands and the session to
//! continue, which start a front end: the dashboard ([`dashboard_start`]) or, with a
//! prompt, print mode ([`print_mode`]). The front ends ask the server for the window in
//! the background, so neither waits for it to start. The subcommands' own work is in
//! [`commands`]. Errors are the one line `main` prints after `rein: `.

mod args;
mod commands;
mod dashboard_start;
pub(crate) mod out;
mod piped;
mod print_mode;
mod rewind;

use std::process::ExitCode;

use rein_core::config::{Environment, Overrides};
use rein_core::start::{discover_window, Continue, Launch, LaunchOptions, Project};

pub(crate) use args::Cli;
use args::{start_mode, Command, ConfigCommand, PolicyCommand};

/// One run of `rein`: a subcommand, the dashboard or print mode; the exit code, or the
/// error to print.
pub(crate) fn run(cli: Cli) -> Result<ExitCode, String> {
    if cli.demo {
        return dashboard_start::run_demo();
    }
    // `-p PROMPT` or `-p` with the positional prompt: print mode; `None`: the dashboard.
    let print_prompt = cli.print_prompt()?;
    if cli.command.is_some() && (cli.prompt.is_some() || cli.print.is_some()) {
        return Err(
            "a prompt does not go with a subcommand; a prompt that is a subcommand's name goes after -p or --"
                .to_string(),
        );
    }
    let overrides = Overrides {
        base_url: cli.base_url.clone(),
        model: cli.model.clone(),
        context_window: cli.context_window,
        ..Overrides::default()
    };
    // The editor protocol: each session's project is the folder the editor gives.
    if let Some(Command::Acp) = &cli.command {
        // One thread, as headless: a streamed reply passes from the connection to the
        // agent to the editor without a thread waking another.
        headless_runtime()?.block_on(rein::acp::server::serve(overrides))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut project = Project::open(cli.cwd.as_deref(), &overrides, Environment::from_process())?;
    let (config, root) = (&project.config, &project.root);
    if let Some(Command::Models) = &cli.command {
        return Ok(commands::models(config));
    }
    if let Some(Command::Rewind {
        list,
        to,
        undo,
        code,
        conversation,
        dry_run,
        force,
        json,
        resume,
    }) = &cli.command
    {
        let args = rewind::RewindArgs {
            list: *list,
            to: *to,
            undo: *undo,
            code: *code,
            conversation: *conversation,
            dry_run: *dry_run,
            force: *force,
            json: *json,
            resume: resume.as_deref(),
        };
        return rewind::rewind(config, root, args);
    }
    if let Some(Command::Diff { since, resume }) = &cli.command {
        return rewind::diff(config, root, *since, resume.as_deref());
    }

    let guarded = project.guard()?;
    let (config, root) = (&project.config, &project.root);
    let (sandbox, policy) = (&guarded.sandbox, &guarded.policy);
    if let Some(Command::Policy {
        command: PolicyCommand::Check { command, json },
    }) = &cli.command
    {
        return commands::policy_check(policy, command, *json);
    }
    if let Some(Command::Sessions { command }) = &cli.command {
        return commands::sessions_command(config, command.as_ref());
    }
    if let Some(Command::Mcp { command }) = &cli.command {
        return commands::mcp_command(config, root, command);
    }
    if let Some(Command::Hooks { command }) = &cli.command {
        return commands::hooks_command(config, root, command.as_ref());
    }
    if let Some(Command::Steering { command }) = &cli.command {
        return commands::steering_command(config, root, command.is_some());
    }
    let mode = start_mode(&cli, sandbox)?;

    if let Some(Command::Config {
        command: Some(ConfigCommand::Allow),
    }) = &cli.command
    {
        return commands::config_allow(config);
    }
    if let Some(Command::Config { command: None }) = &cli.command {
        // It shows the window: asked now, and waited for.
        discover_window(&mut project.config);
        return Ok(commands::config_show(
            &project.config,
            &project.root,
            &guarded.sandbox,
        ));
    }

    if cli.fork && !cli.continue_session && cli.resume.is_none() {
        return Err("--fork goes with --continue or --resume ID".to_string());
    }
    if print_prompt.is_some() && cli.resume.as_deref() == Some("") {
        return Err("headless --resume needs an ID; `rein sessions` lists them".to_string());
    }
    if cli.prompt.is_some() && cli.resume.as_deref() == Some("") {
        return Err(
            "a first prompt with --resume needs the session's ID (the picker would choose after it was sent); `rein sessions` lists them"
                .to_string(),
        );
    }
    let options = LaunchOptions {
        mode,
        resume: Continue {
            latest: cli.continue_session,
            id: cli.resume.clone(),
            fork: cli.fork,
            model_given: cli.model.is_some(),
            // Long tool results only as their heads: the dashboard reads the rest back
            // when one is expanded, and headless shows none of them.
            shown: rein::app::resume::SHOWN,
        },
        is_builtin: &rein::app::commands::is_builtin,
    };
    let launch = Launch::prepare(project, guarded, options)?;
    match print_prompt {
        Some(prompt) => print_mode::run(launch, &cli, prompt),
        None => dashboard_start::run_dashboard(launch, &cli),
    }
}

/// The async runtime both front ends run on.
pub(super) fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}

/// Headless: every task on one thread. The stream's pieces pass from the HTTP connection
/// to the agent to the output without a thread waking another (which cost more CPU in the
/// kernel than the parsing itself); commands and file work still go to the blocking pool.
pub(super) fn headless_runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}
