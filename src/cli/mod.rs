//! The `rein` command line behind `main`: the flags ([`args`]), then one run.
//!
//! [`run`] resolves the settings in stages and hands over as soon as a stage is enough: the
//! project folder and the config (`rein models` needs no more), the sandbox and the
//! permission policy (`rein policy check`, `rein sessions`, `rein mcp`), the approval mode
//! and, for `rein config` alone, the model's window asked of the server, then the skills,
//! AGENTS.md files, custom commands and the session to continue, which start a front end:
//! the dashboard ([`dashboard_start`]) or, with a prompt, print mode ([`print_mode`]). The
//! front ends ask the server for the window in the background, so neither waits for it
//! to start. The subcommands'
//! own work is in [`commands`]; what the stages build is in [`setup`] and [`resume`].
//! Errors are the one line `main` prints after `rein: `.

mod args;
mod commands;
mod dashboard_start;
pub(crate) mod out;
mod piped;
mod print_mode;
mod resume;
mod rewind;
mod setup;

use out::errln;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use rein_core::config::{Config, Environment, Overrides};
use rein_core::custom_commands::CommandSet;
use rein_core::instructions::Instructions;
use rein_core::permissions::policy::RulePolicy;
use rein_core::permissions::ApprovalMode;
use rein_core::sandbox::Sandbox;
use rein_core::skills::SkillSet;

pub(crate) use args::Cli;
use args::{start_mode, Command, ConfigCommand, PolicyCommand};
use resume::{resume_session, Resumed};
use setup::{
    detect_sandbox, discover_instructions, discover_skills, discover_window, project_root,
    tighten_data_dir,
};

/// What the project and the user tell the model beyond the built-in prompt, found once at
/// start: the skills it may load, the AGENTS.md instructions and the custom commands.
struct Guidance {
    skills: Arc<SkillSet>,
    instructions: Instructions,
    commands: CommandSet,
    /// The project's instruction files, skills, commands and agent definitions that are new
    /// or changed since the last session here (`rein_core::consent::guidance`), a line each.
    changes: Vec<String>,
    /// What the settings' warnings said (a project's held endpoint, its ignored allows and
    /// lowered safety settings), printed on stderr already; the dashboard shows them too.
    warnings: Vec<String>,
    /// The approval mode to start in (`--mode`), when given.
    mode: Option<ApprovalMode>,
}

/// What a front end starts from, once `run` has resolved it.
struct Launch {
    config: Config,
    root: PathBuf,
    sandbox: Arc<Sandbox>,
    policy: Arc<RulePolicy>,
    guidance: Guidance,
    /// The session to continue, and the model it goes on with.
    resumed: Option<Resumed>,
}

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
    let root = project_root(cli.cwd.as_deref())?;
    let overrides = Overrides {
        base_url: cli.base_url.clone(),
        model: cli.model.clone(),
        context_window: cli.context_window,
        ..Overrides::default()
    };
    let env = Environment::from_process();
    let mut config = Config::load(&root, &overrides, &env).map_err(|e| e.to_string())?;
    tighten_data_dir(&config);
    if let Some(Command::Models) = &cli.command {
        return Ok(commands::models(&config));
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
        return rewind::rewind(&config, &root, args);
    }
    if let Some(Command::Diff { since, resume }) = &cli.command {
        return rewind::diff(&config, &root, *since, resume.as_deref());
    }

    // Before the policy: a project's allow rules count only where a working sandbox
    // contains what they allow.
    let sandbox = detect_sandbox(&config, &root, &env);
    let confined = sandbox.not_working_reason().is_none();
    let warnings = config.warnings(confined);
    for warning in &warnings {
        errln!("rein: warning: {warning}");
    }
    let policy = Arc::new(
        config
            .policy(&root, env.home.as_deref(), confined)
            .map_err(|e| e.to_string())?,
    );
    // The project files an approved hook or project server runs (its script): writing one
    // asks, and commands cannot change them, as for the host tools' own files.
    let pinned = rein_core::consent::trust::TrustStore::load(&config.data_dir)
        .0
        .pinned_files(&root);
    policy.add_steering_files(&pinned, rein_core::consent::steering::Kind::HostTool);
    sandbox.add_steering_files(&pinned);
    if let Some(Command::Policy {
        command: PolicyCommand::Check { command, json },
    }) = &cli.command
    {
        return commands::policy_check(&policy, command, *json);
    }
    if let Some(Command::Sessions { command }) = &cli.command {
        return commands::sessions_command(&config, command.as_ref());
    }
    if let Some(Command::Mcp { command }) = &cli.command {
        return commands::mcp_command(&config, &root, command);
    }
    if let Some(Command::Hooks { command }) = &cli.command {
        return commands::hooks_command(&config, &root, command.as_ref());
    }
    if let Some(Command::Steering { command }) = &cli.command {
        return commands::steering_command(&config, &root, command.is_some());
    }
    let mode = start_mode(&cli, &sandbox)?;

    if let Some(Command::Config {
        command: Some(ConfigCommand::Allow),
    }) = &cli.command
    {
        return commands::config_allow(&config);
    }
    if let Some(Command::Config { command: None }) = &cli.command {
        // It shows the window: asked now, and waited for.
        discover_window(&mut config);
        return Ok(commands::config_show(&config, &root, &sandbox));
    }

    let skills = discover_skills(&config, &env, &root);
    let instructions = discover_instructions(&config, &env, &root, &policy, &sandbox);
    let commands =
        CommandSet::discover(env.home.as_deref(), &root, &rein::app::commands::is_builtin);
    let changes = setup::review_guidance(&config, &root, &instructions, &skills, &commands);
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
    // A base URL that cannot work is a configuration error: said before any session is
    // made (an empty one is the dashboard's first-run screen).
    if !config.base_url.value.trim().is_empty() {
        rein_core::agent::client::check_base_url(&config.base_url.value)?;
    }
    // The session to continue, and the model it goes on with.
    let resumed = resume_session(&mut config, &root, &cli)?;
    // From now on commands may run here: a `.rein/config.toml` that appears below this
    // folder later is held until confirmed (config::planted).
    if let Err(e) = rein_core::config::planted::record_root(&config.data_dir, &root) {
        errln!(
            "rein: warning: cannot record this folder in {}: {e}",
            config.data_dir.display()
        );
    }
    let launch = Launch {
        config,
        root,
        sandbox,
        policy,
        guidance: Guidance {
            skills,
            instructions,
            commands,
            changes,
            warnings,
            mode,
        },
        resumed,
    };
    match print_prompt {
        Some(prompt) => print_mode::run(launch, &cli, prompt),
        None => dashboard_start::run_dashboard(launch, &cli),
    }
}
