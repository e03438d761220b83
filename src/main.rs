//! The `rein` command line: parse flags, resolve configuration, start a front end.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};

use rein::agent::{AgentConfig, ClientConfig, SessionSetup};
use rein::app::attention::{Notifications, NotifyWhen};
use rein::app::keymap_user::UserKeymap;
use rein::app::state::{Cell, NoticeKind, SessionInfo};
use rein::app::App;
use rein::config::{Config, Environment, Overrides};
use rein::custom_commands::CommandSet;
use rein::headless::{self, HeadlessOptions, OutputFormat};
use rein::instructions::Instructions;
use rein::permissions::policy::RulePolicy;
use rein::permissions::ApprovalMode;
use rein::sandbox::{Sandbox, SandboxSettings};
use rein::session::{LoadedSession, SessionMeta, SessionWriter};
use rein::skills::SkillSet;

/// rein: a terminal coding agent for any OpenAI-compatible model.
#[derive(Debug, Parser)]
#[command(name = "rein", version, about, long_about = None)]
struct Cli {
    /// Run one prompt headless and exit ("-" reads the prompt from stdin).
    #[arg(short = 'p', long = "print", value_name = "PROMPT")]
    prompt: Option<String>,

    /// The project directory (default: the current directory).
    #[arg(long, value_name = "DIR", global = true)]
    cwd: Option<PathBuf>,

    /// Headless output: the reply as text, or one JSON object per agent event.
    #[arg(long, value_enum, default_value = "text")]
    output_format: Format,

    /// Headless: approve every action that would ask for approval. Where the sandbox
    /// works this is --mode auto (sandboxed commands are auto-approved, and shown so).
    #[arg(long)]
    yes: bool,

    /// The approval mode to start in: plan (read and explore only, nothing that writes
    /// runs), default, or auto (sandboxed commands that would ask run without asking;
    /// needs a working sandbox). A resumed session goes on in its own mode without it.
    #[arg(long, value_enum, value_name = "MODE")]
    mode: Option<ModeArg>,

    /// Open the dashboard on a built-in scripted model and a small example project: see
    /// every part of rein without an API key.
    #[arg(long, conflicts_with_all = ["prompt", "base_url", "model"])]
    demo: bool,

    /// Continue the latest session of this project.
    #[arg(long = "continue", short = 'c', conflicts_with = "resume")]
    continue_session: bool,

    /// Continue session ID (an id or a unique prefix of one; `rein sessions` lists them).
    /// Without an ID the dashboard opens with a session picker.
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    resume: Option<String>,

    /// With --continue or --resume: go on in a copy of the session (a new id), leaving
    /// the original as it is; the way to continue a session another rein has open.
    #[arg(long)]
    fork: bool,

    /// The chat-completions endpoint, e.g. http://127.0.0.1:8080/v1.
    #[arg(long, value_name = "URL", global = true)]
    base_url: Option<String>,

    /// The model: a name the endpoint knows, or PROVIDER/MODEL (e.g. ollama/qwen3-coder,
    /// openrouter/anthropic/claude-sonnet-4.5; `rein models` lists the providers).
    #[arg(long, value_name = "NAME", global = true)]
    model: Option<String>,

    /// The model's context window in tokens.
    #[arg(long, value_name = "TOKENS", global = true)]
    context_window: Option<u64>,

    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the resolved settings and where each came from (or confirm the project's).
    Config {
        #[command(subcommand)]
        command: Option<ConfigCommand>,
    },
    /// List the providers and configured models (the current one marked).
    Models,
    /// Inspect the permission rules.
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// List the recorded sessions, newest first (or export one).
    Sessions {
        #[command(subcommand)]
        command: Option<SessionsCommand>,
    },
    /// The MCP servers: list them, or allow one the project declares.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
}

#[derive(Debug, Subcommand)]
enum ConfigCommand {
    /// Obey this folder's `.rein/config.toml` as it is now, after rein held it because a
    /// command may have written it (a later change holds it again).
    Allow,
}

#[derive(Debug, Subcommand)]
enum McpCommand {
    /// Start the configured servers and list them with their state and tools.
    List,
    /// Allow the project's server NAME to run as it declares it (remembered for this
    /// project and that exact table: a change to any key asks again).
    Allow {
        /// The server's name, as in `[mcp_servers.NAME]`.
        name: String,
    },
}

#[derive(Debug, Subcommand)]
enum SessionsCommand {
    /// Print session ID as Markdown.
    Export {
        /// A session id or a unique prefix of one.
        id: String,
    },
}

#[derive(Debug, Subcommand)]
enum PolicyCommand {
    /// Judge a bash command as the agent would: prints `allow`, `ask` or `deny` and why.
    Check {
        /// The command line, as the model would send it.
        command: String,
        /// Print the verdict, the reason and every part as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ModeArg {
    Plan,
    Default,
    Auto,
}

impl From<ModeArg> for ApprovalMode {
    fn from(mode: ModeArg) -> ApprovalMode {
        match mode {
            ModeArg::Plan => ApprovalMode::Plan,
            ModeArg::Default => ApprovalMode::Default,
            ModeArg::Auto => ApprovalMode::Auto,
        }
    }
}

/// The mode to start in: `--mode`, or for headless `--yes` where the sandbox works (auto).
/// `--mode auto` without a working sandbox, and `--yes` with another mode, are errors.
fn start_mode(cli: &Cli, sandbox: &Sandbox) -> Result<Option<ApprovalMode>, String> {
    let mode = cli.mode.map(ApprovalMode::from);
    if cli.yes && cli.prompt.is_some() {
        if let Some(other) = mode.filter(|m| *m != ApprovalMode::Auto) {
            return Err(format!(
                "--yes approves what would ask, which is --mode auto; it cannot go with --mode {other}"
            ));
        }
        // Without a sandbox --yes keeps its old meaning: every question approved.
        return Ok(sandbox.works().then_some(ApprovalMode::Auto));
    }
    if let (Some(ApprovalMode::Auto), Some(reason)) = (mode, sandbox.not_working_reason()) {
        return Err(format!(
            "--mode auto: {}",
            rein::permissions::mode::auto_unavailable(reason)
        ));
    }
    Ok(mode)
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Jsonl,
}

fn main() -> ExitCode {
    if let Err(e) = color_eyre::install() {
        eprintln!("rein: {e}");
    }
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("rein: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, String> {
    if cli.demo {
        return run_demo();
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
        println!("{}", config.models_listing());
        return Ok(ExitCode::SUCCESS);
    }

    // Before the policy: a project's allow rules count only where a working sandbox
    // contains what they allow.
    let sandbox = detect_sandbox(&config, &root, &env);
    let confined = sandbox.not_working_reason().is_none();
    for warning in config.warnings(confined) {
        eprintln!("rein: warning: {warning}");
    }
    let policy = Arc::new(
        config
            .policy(&root, env.home.as_deref(), confined)
            .map_err(|e| e.to_string())?,
    );
    if let Some(Command::Policy {
        command: PolicyCommand::Check { command, json },
    }) = &cli.command
    {
        let judgement = policy.judge_bash(command);
        if *json {
            let text = serde_json::to_string(&judgement).map_err(|e| e.to_string())?;
            println!("{}", rein::sanitize::json_line(&text));
        } else {
            let line = format!("{} {}", judgement.action, judgement.reason);
            println!("{}", rein::sanitize::sanitize(&line));
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(Command::Sessions { command }) = &cli.command {
        return sessions_command(&config, command.as_ref());
    }
    if let Some(Command::Mcp { command }) = &cli.command {
        return mcp_command(&config, &root, command);
    }
    discover_window(&mut config);
    let mode = start_mode(&cli, &sandbox)?;

    if let Some(Command::Config {
        command: Some(ConfigCommand::Allow),
    }) = &cli.command
    {
        return config_allow(&config);
    }
    if let Some(Command::Config { command: None }) = &cli.command {
        println!("project    {}", root.display());
        println!("sandbox    {}", sandbox.describe());
        let keymap = user_keymap(&config);
        for error in &keymap.errors {
            eprintln!("rein: warning: keymap: {error}");
        }
        println!("keymap     {}", keymap.source());
        println!("{}", config.describe());
        return Ok(ExitCode::SUCCESS);
    }

    let skills = discover_skills(&config, &env, &root);
    let instructions = discover_instructions(&config, &env, &root);
    let commands =
        CommandSet::discover(env.home.as_deref(), &root, &rein::app::commands::is_builtin);
    if cli.fork && !cli.continue_session && cli.resume.is_none() {
        return Err("--fork goes with --continue or --resume ID".to_string());
    }
    if cli.prompt.is_some() && cli.resume.as_deref() == Some("") {
        return Err("headless --resume needs an ID; `rein sessions` lists them".to_string());
    }
    // The session to continue, and the model it goes on with.
    let resumed = resume_session(&mut config, &root, &cli)?;
    // From now on commands may run here: a `.rein/config.toml` that appears below this
    // folder later is held until confirmed (config::planted).
    if let Err(e) = rein::config::planted::record_root(&config.data_dir, &root) {
        eprintln!(
            "rein: warning: cannot record this folder in {}: {e}",
            config.data_dir.display()
        );
    }
    let Some(prompt) = cli.prompt.clone() else {
        let guidance = Guidance {
            skills,
            instructions,
            commands,
            mode,
        };
        return run_dashboard(config, root, sandbox, policy, guidance, resumed, &cli);
    };
    let prompt = if prompt == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read the prompt from stdin: {e}"))?;
        text
    } else {
        prompt
    };
    if prompt.trim().is_empty() {
        return Err("the prompt is empty".to_string());
    }
    for notice in &commands.notices {
        eprintln!("rein: warning: {notice}");
    }
    // `/name args` of a custom command: its prompt, as the dashboard sends it.
    let prompt = match commands.expand(&prompt) {
        Some(expansion) => {
            eprintln!(
                "rein: /{} expanded from {}",
                expansion.command.name, expansion.command.label
            );
            expansion.text
        }
        None => prompt,
    };
    if let Some(warning) = sandbox.warning() {
        eprintln!("rein: warning: {warning}");
    }
    if let Some(summary) = instructions.summary() {
        eprintln!("rein: {summary}");
    }
    for notice in &instructions.notices {
        eprintln!("rein: warning: {notice}");
    }
    let agent_config = agent_config(
        &config,
        root.clone(),
        sandbox,
        policy,
        skills,
        &instructions,
    )?;
    let session = match resumed {
        Some(resumed) => {
            let loaded = &resumed.session;
            eprintln!(
                "rein: continuing session {} ({} messages)",
                loaded.id(),
                loaded.message_count
            );
            for notice in loaded.notices.iter().chain(&resumed.model_notices) {
                eprintln!("rein: {notice}");
            }
            Some(resumed.setup(&config))
        }
        None => new_session(&config, &root)
            .inspect_err(|why| eprintln!("rein: warning: {why}"))
            .ok(),
    };
    let session_id = session.as_ref().map(|s| s.writer.id().to_string());
    let runtime = headless_runtime()?;
    let mut agent_config = agent_config;
    let mcp = runtime.block_on(async {
        let (started, notices) = start_mcp(&config, &root, true);
        for notice in &notices {
            eprintln!("rein: warning: {notice}");
        }
        let (manager, mut events) = started?;
        wait_for_mcp(
            &mut events,
            &manager,
            matches!(cli.output_format, Format::Jsonl),
        )
        .await;
        Some(manager)
    });
    if let Some(manager) = &mcp {
        agent_config.external_tools = Some(Arc::new(manager.clone()));
    }
    let options = HeadlessOptions {
        prompt,
        format: match cli.output_format {
            Format::Text => OutputFormat::Text,
            Format::Jsonl => OutputFormat::Jsonl,
        },
        yes: cli.yes,
        prices: rein::dashboard::usage_prices(&config.prices),
        mode,
    };
    let code = runtime.block_on(async {
        let code = headless::run_with_session(agent_config, options, session).await;
        if let Some(manager) = mcp {
            manager.shutdown().await;
        }
        code
    });
    if let Some(id) = session_id {
        eprintln!("rein: session {id} (continue it with --resume {id})");
    }
    // Do not wait for stray blocking work (a stuck read) on the way out.
    runtime.shutdown_timeout(Duration::from_millis(200));
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// The full-screen dashboard. Without a model it still opens, and explains how to set one.
fn run_dashboard(
    config: Config,
    root: PathBuf,
    sandbox: Arc<Sandbox>,
    policy: Arc<RulePolicy>,
    guidance: Guidance,
    resumed: Option<Resumed>,
    cli: &Cli,
) -> Result<ExitCode, String> {
    let Guidance {
        skills,
        instructions,
        commands,
        mode,
    } = guidance;
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return Err(
            "the dashboard needs a terminal; run a prompt headless with `rein -p \"PROMPT\"`"
                .to_string(),
        );
    }
    let info = SessionInfo {
        branch: rein::dashboard::git_branch(&root),
        setup: config
            .model
            .value
            .trim()
            .is_empty()
            .then(|| setup_text(&config)),
        prices: rein::dashboard::usage_prices(&config.prices),
        ..session_info(config.model_name.clone(), &root, &sandbox, &skills)
    };
    let mut app = App::new(info, config.context_window.value);
    app.no_auto = no_auto(&sandbox);
    app.notifications = notifications(&config);
    install_keymap(&config, &mut app);
    if config.ui_input_history.value {
        // Read off the loop once the dashboard runs (AppEvent::HistoryLoaded).
        app.input_history = Some(rein::input_history::path(&config.data_dir));
    }
    let runtime = runtime()?;
    let result = runtime.block_on(async {
        for line in instructions.summary().iter().chain(&instructions.notices) {
            app.transcript
                .cells
                .push(Cell::notice(NoticeKind::Info, line.clone()));
        }
        app.instructions = instructions.lines();
        for notice in &commands.notices {
            app.transcript
                .cells
                .push(Cell::notice(NoticeKind::Info, notice.clone()));
        }
        app.custom_commands = commands;
        // Listed now, started by the dashboard once its first frame is drawn.
        let (mcp, mcp_notices) = start_mcp(&config, &root, false);
        for notice in mcp_notices {
            app.transcript
                .cells
                .push(Cell::notice(NoticeKind::Info, notice));
        }
        let (mcp_manager, mcp_events) = match mcp {
            Some((manager, events)) => (Some(manager), Some(events)),
            None => (None, None),
        };
        let (agent, sessions) = match agent_config(
            &config,
            root.clone(),
            sandbox,
            policy,
            skills,
            &instructions,
        ) {
            Ok(mut agent_config) => {
                if let Some(manager) = &mcp_manager {
                    agent_config.external_tools = Some(Arc::new(manager.clone()));
                }
                let session = match resumed {
                    Some(mut resumed) => {
                        rein::app::resume::restore(&mut app, &mut resumed.session);
                        for notice in &resumed.model_notices {
                            app.transcript
                                .cells
                                .push(Cell::notice(NoticeKind::Info, notice.clone()));
                        }
                        Some(resumed.setup(&config))
                    }
                    None => match new_session(&config, &root) {
                        Ok(session) => Some(session),
                        Err(why) => {
                            app.transcript
                                .cells
                                .push(Cell::notice(NoticeKind::Error, why));
                            app.not_recording = true;
                            None
                        }
                    },
                };
                let sessions = rein::dashboard::Sessions {
                    data_dir: config.data_dir.clone(),
                    agent_config: agent_config.clone(),
                    current: session.as_ref().map(|s| s.writer.path().to_path_buf()),
                    pick_at_start: cli.resume.as_deref() == Some(""),
                };
                let agent = rein::agent::spawn_with_session(agent_config, session)
                    .map_err(|e| e.to_string())?;
                if let Some(mode) = mode {
                    agent.send(rein::agent::AgentCommand::SetMode(mode));
                }
                (Some(agent), Some(sessions))
            }
            Err(_) => (None, None),
        };
        let attention = attention(&config);
        let result = rein::dashboard::run(
            app,
            agent,
            attention,
            sessions,
            Some(config),
            mcp_manager.clone().zip(mcp_events),
        )
        .await
        .map_err(|e| format!("terminal error: {e}"));
        if let Some(manager) = mcp_manager {
            manager.shutdown().await;
        }
        result
    });
    runtime.shutdown_timeout(Duration::from_millis(200));
    result.map(|()| ExitCode::SUCCESS)
}

/// The configured MCP servers that may start (the project's only once allowed), started in
/// the background (call inside the runtime), with what to tell the user first: project
/// servers waiting for approval, a trust file rein could not read.
fn start_mcp(
    config: &Config,
    root: &Path,
    launch: bool,
) -> (
    Option<(
        rein::mcp::McpManager,
        tokio::sync::mpsc::UnboundedReceiver<rein::mcp::McpEvent>,
    )>,
    Vec<String>,
) {
    if config.mcp_servers.is_empty() {
        return (None, Vec::new());
    }
    let (trust, problem) = rein::trust::TrustStore::load(&config.data_dir);
    let startable = rein::mcp::external::startable(&config.mcp_servers, &trust, root);
    let mut notices = startable.notices;
    notices.extend(problem);
    if startable.start.is_empty() && startable.held.is_empty() {
        return (None, notices);
    }
    let (manager, events) = rein::mcp::McpManager::prepare(
        startable.start,
        startable.held,
        root,
        Some(&config.data_dir),
    );
    if launch {
        manager.launch();
    }
    (Some((manager, events)), notices)
}

/// Headless: wait until no server is starting any more (each has its own startup
/// timeout), so the first request already offers their tools; say which are ready and
/// which failed (on stderr; with `jsonl` also as `mcp_server` events on stdout).
async fn wait_for_mcp(
    events: &mut tokio::sync::mpsc::UnboundedReceiver<rein::mcp::McpEvent>,
    manager: &rein::mcp::McpManager,
    jsonl: bool,
) {
    use rein::mcp::{McpEvent, ServerState};
    let starting =
        |m: &rein::mcp::McpManager| m.states().iter().any(|(_, s)| *s == ServerState::Starting);
    while starting(manager) {
        let Ok(Some(event)) = tokio::time::timeout(Duration::from_secs(120), events.recv()).await
        else {
            break;
        };
        let McpEvent::ServerState { name, state } = event else {
            continue;
        };
        let mut line = serde_json::json!({"type": "mcp_server", "name": name});
        match &state {
            ServerState::Ready { tools } => {
                eprintln!("rein: MCP server {name} ready ({tools} tools)");
                line["state"] = "ready".into();
                line["tools"] = (*tools).into();
            }
            ServerState::Failed { reason, stderr } => {
                eprintln!("rein: warning: MCP server {name} failed: {reason}");
                for l in stderr.iter().rev().take(5).rev() {
                    eprintln!("rein:   {}", rein::sanitize::sanitize(l));
                }
                line["state"] = "failed".into();
                line["reason"] = reason.clone().into();
                line["stderr"] = stderr.clone().into();
            }
            _ => continue,
        }
        if jsonl {
            println!("{}", rein::sanitize::json_line(&line.to_string()));
        }
    }
}

/// `rein config allow`: obey the project's held `.rein/config.toml` as it is now.
fn config_allow(config: &Config) -> Result<ExitCode, String> {
    let file = &config.project_config_path;
    if config.held_project_config.is_none() {
        if file.exists() {
            println!("{} is obeyed already: nothing to allow", file.display());
        } else {
            println!("{} does not exist: nothing to allow", file.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let text = rein::config::planted::confirm(&config.data_dir, file)?;
    println!(
        "obeying {} from now on (until it changes); what it says:\n{}",
        file.display(),
        rein::sanitize::sanitize(&text)
    );
    Ok(ExitCode::SUCCESS)
}

/// `rein mcp list` and `rein mcp allow NAME`.
fn mcp_command(config: &Config, root: &Path, command: &McpCommand) -> Result<ExitCode, String> {
    match command {
        McpCommand::Allow { name } => {
            let Some(server) = config.mcp_servers.iter().find(|s| &s.name == name) else {
                return Err(format!(
                    "no MCP server named {name} is configured (`rein mcp list` lists them)"
                ));
            };
            if !matches!(server.origin, rein::mcp::Origin::Project(_)) {
                println!(
                    "{name} is declared in your own config ({}): it needs no approval",
                    server.origin.path().display()
                );
                return Ok(ExitCode::SUCCESS);
            }
            let (mut trust, _) = rein::trust::TrustStore::load(&config.data_dir);
            let why = rein::mcp::external::unapproved(server, &trust, root);
            trust
                .trust(root, name, &server.declared.to_json())
                .map_err(|e| format!("the approval was not saved: {e}"))?;
            // What is approved is the whole table: say it, key by key, and what changed.
            let mut said = format!(
                "allowed: the project's MCP server {name} may run `{}` outside rein's sandbox, \
                 in {}, as {} declares it now:",
                rein::mcp::external::launch(server),
                root.display(),
                server.origin.path().display()
            );
            for line in server.declared.lines() {
                said.push_str(&format!("\n  {line}"));
            }
            match why {
                Some(rein::mcp::Unapproved::Changed(changes)) => {
                    said.push_str("\nchanged since you allowed it before:");
                    for change in changes {
                        said.push_str(&format!("\n  {change}"));
                    }
                }
                None => said.push_str("\n(it was allowed as it is already)"),
                Some(_) => {}
            }
            said.push_str("\na change to any of these keys asks again");
            println!("{}", rein::sanitize::sanitize(&said));
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::List => {
            if config.mcp_servers.is_empty() {
                println!("no MCP servers are configured ([mcp_servers.NAME] in config.toml; see the README)");
                return Ok(ExitCode::SUCCESS);
            }
            let runtime = runtime()?;
            runtime.block_on(async {
                let (started, notices) = start_mcp(config, root, true);
                for notice in &notices {
                    println!("{}", rein::sanitize::sanitize(notice));
                }
                if let Some((manager, mut events)) = started {
                    while manager
                        .states()
                        .iter()
                        .any(|(_, s)| *s == rein::mcp::ServerState::Starting)
                    {
                        if events.recv().await.is_none() {
                            break;
                        }
                    }
                    let tools = manager.tools();
                    for (name, state) in manager.states() {
                        println!("{name}: {}", rein::sanitize::sanitize(&state.to_string()));
                        for tool in tools.iter().filter(|t| t.server == name) {
                            println!("  {}", tool.name);
                        }
                    }
                    manager.shutdown().await;
                }
            });
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `rein --demo`: the dashboard against the built-in scripted model, in a temporary copy
/// of the example project, with the first prompt already sent.
fn run_demo() -> Result<ExitCode, String> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return Err("the demo needs a terminal".to_string());
    }
    let runtime = runtime()?;
    let result = runtime.block_on(async {
        let demo = rein::demo::Demo::start()
            .await
            .map_err(|e| format!("cannot start the demo: {e}"))?;
        let root = demo.project_dir().to_path_buf();
        let overrides = Overrides {
            base_url: Some(demo.base_url()),
            model: Some(demo.model().to_string()),
            api_key: Some(String::new()),
            context_window: Some(demo.context_window()),
        };
        let env = Environment::from_process();
        let config = Config::load(&root, &overrides, &env).map_err(|e| e.to_string())?;
        tighten_data_dir(&config);
        let sandbox = detect_sandbox(&config, &root, &env);
        let confined = sandbox.not_working_reason().is_none();
        let policy = Arc::new(
            config
                .policy(&root, env.home.as_deref(), confined)
                .map_err(|e| e.to_string())?,
        );
        let skills = discover_skills(&config, &env, &root);
        let info = session_info(format!("{} (demo)", demo.model()), &root, &sandbox, &skills);
        let mut app = App::new(info, demo.context_window());
        app.no_auto = no_auto(&sandbox);
        app.notifications = notifications(&config);
        install_keymap(&config, &mut app);
        let instructions = discover_instructions(&config, &env, &root);
        let agent = rein::agent::spawn(agent_config(
            &config,
            root,
            sandbox,
            policy,
            skills,
            &instructions,
        )?)
        .map_err(|e| e.to_string())?;
        agent.send(rein::agent::AgentCommand::UserMessage(
            demo.first_prompt().to_string(),
        ));
        let result = rein::dashboard::run(app, Some(agent), attention(&config), None, None, None)
            .await
            .map_err(|e| format!("terminal error: {e}"));
        drop(demo);
        result
    });
    runtime.shutdown_timeout(Duration::from_millis(200));
    result.map(|()| ExitCode::SUCCESS)
}

/// The async runtime both front ends run on.
fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}

/// Headless: every task on one thread. The stream's pieces pass from the HTTP connection
/// to the agent to the output without a thread waking another (which cost more CPU in the
/// kernel than the parsing itself); commands and file work still go to the blocking pool.
fn headless_runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}

/// Why auto mode is not offered here, or `None` when the sandbox works.
fn no_auto(sandbox: &Sandbox) -> Option<String> {
    sandbox
        .not_working_reason()
        .map(rein::permissions::mode::auto_unavailable)
}

/// What the dashboard shows of a run: the model, the project, the sandbox and the skills
/// (no branch, setup text or prices: the callers add those they have).
fn session_info(model: String, root: &Path, sandbox: &Sandbox, skills: &SkillSet) -> SessionInfo {
    SessionInfo {
        model,
        project: root.to_path_buf(),
        branch: None,
        sandbox: sandbox.describe(),
        sandbox_ok: sandbox.warning().is_none(),
        setup: None,
        skills: skill_list(skills),
        skill_notices: skills.notices.clone(),
        prices: None,
    }
}

/// What the project and the user tell the model beyond the built-in prompt, found once at
/// start: the skills it may load, the AGENTS.md instructions and the custom commands.
struct Guidance {
    skills: Arc<SkillSet>,
    instructions: Instructions,
    commands: CommandSet,
    /// The approval mode to start in (`--mode`), when given.
    mode: Option<ApprovalMode>,
}

/// A session to continue (`--continue`, `--resume ID`), read and opened for appending.
struct Resumed {
    writer: SessionWriter,
    session: LoadedSession,
    /// Which model it goes on with, and why.
    model_notices: Vec<String>,
}

impl Resumed {
    fn setup(self, config: &Config) -> SessionSetup {
        SessionSetup {
            writer: self.writer,
            resumed: Some(self.session),
            data_dir: config.data_dir.clone(),
        }
    }
}

/// The session `--continue` or `--resume ID` names, if any (`--resume` without an ID
/// continues none: the dashboard opens its picker). The settings switch to the model the
/// session last ran on, unless `--model` is given or the name no longer resolves (see
/// `Config::model_for_resume`); its window is asked of the server as at startup.
fn resume_session(config: &mut Config, root: &Path, cli: &Cli) -> Result<Option<Resumed>, String> {
    let data_dir = config.data_dir.clone();
    let path = if cli.continue_session {
        match rein::session::latest_for_project(&data_dir, root) {
            Some(summary) => summary.path,
            None => {
                return Err(format!(
                    "no earlier session for {} to continue (`rein sessions` lists them)",
                    root.display()
                ))
            }
        }
    } else if let Some(id) = cli.resume.as_deref().filter(|id| !id.is_empty()) {
        rein::session::find(&data_dir, id).map_err(|e| e.to_string())?
    } else {
        return Ok(None);
    };
    // Long tool results only as their heads: the dashboard reads the rest back when one is
    // expanded, and headless shows none of them.
    let shown = rein::app::resume::SHOWN;
    let opened = if cli.fork {
        SessionWriter::fork_with(&data_dir, &path, shown)
    } else {
        SessionWriter::resume_with(&path, shown)
    };
    let (writer, session) = opened.map_err(|e| match rein::session::in_use(&e) {
        Some(busy) => format!("{busy}; wait for it to end, or add --fork to go on in a copy of it"),
        None => format!("cannot continue {}: {e}", path.display()),
    })?;
    let recorded = session
        .model
        .as_ref()
        .map(|m| (m.name.as_str(), m.base_url.as_str()));
    let decision = config.model_for_resume(recorded, cli.model.is_some());
    if let Some(target) = decision.target {
        config.set_target(target);
        discover_window(config);
    }
    Ok(Some(Resumed {
        writer,
        session,
        model_notices: decision.notices,
    }))
}

/// A new session file for this run, or why there is none: rein still runs when its data
/// folder cannot be written (a read-only `REIN_HOME`), only without recording.
fn new_session(config: &Config, root: &Path) -> Result<SessionSetup, String> {
    let data_dir = config.data_dir.clone();
    let meta = SessionMeta::new(root.to_path_buf(), config.model.value.clone());
    let writer = SessionWriter::create(&data_dir, meta).map_err(|e| {
        format!(
            "not recording this session: cannot create a session file under {}: {e}",
            data_dir.display()
        )
    })?;
    Ok(SessionSetup {
        writer,
        resumed: None,
        data_dir,
    })
}

/// `rein sessions` and `rein sessions export ID`.
fn sessions_command(
    config: &Config,
    command: Option<&SessionsCommand>,
) -> Result<ExitCode, String> {
    match command {
        Some(SessionsCommand::Export { id }) => {
            let path = rein::session::find(&config.data_dir, id).map_err(|e| e.to_string())?;
            let loaded = rein::session::load(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            // Model text and tool output are in it: shown, never obeyed by the terminal.
            let markdown = rein::session::export_markdown(&loaded);
            print!("{}", rein::sanitize::sanitize(&markdown));
        }
        None => {
            let sessions = rein::session::list(&config.data_dir);
            if sessions.is_empty() {
                println!(
                    "no sessions yet (they are kept in {})",
                    rein::session::sessions_dir(&config.data_dir).display()
                );
            }
            for s in sessions {
                let title = s.title.as_deref().unwrap_or("(untitled)");
                let open = s.open.map(|h| format!("  ({h})")).unwrap_or_default();
                println!(
                    "{}  {:>5} msgs  {}  {}  {}{open}",
                    s.id,
                    s.messages.to_string(),
                    s.started.get(..16).unwrap_or(&s.started).replace('T', " "),
                    rein::sanitize::sanitize(&s.project.display().to_string()),
                    rein::sanitize::sanitize(title)
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// rein's data folder and the folders of its own in it, made the user's alone: an older
/// rein made them 0755 (see `rein::private_fs`).
fn tighten_data_dir(config: &Config) {
    for problem in rein::private_fs::tighten_data_dir(&config.data_dir) {
        eprintln!("rein: warning: {problem}");
    }
}

/// The sandbox for `root` as the config asks: rein's data folder hidden inside but for
/// this rein's spill folders, and the secrets the config knows kept out of commands'
/// environment.
fn detect_sandbox(config: &Config, root: &Path, env: &Environment) -> Arc<Sandbox> {
    let sandbox = Sandbox::detect(
        SandboxSettings {
            mode: config.sandbox_mode.value,
            network: config.sandbox_network.value,
            writable: config.sandbox_writable.value.clone(),
            hidden: config.hidden_from_commands(env.home.as_deref()),
        },
        root,
        Vec::new(),
    )
    .with_private_data(&config.data_dir, &config.data_dir.join("spill"));
    Arc::new(sandbox.with_env(config.command_env(env)))
}

/// The skills of the user, of rein and of the project; each one skipped is a warning.
fn discover_skills(config: &Config, env: &Environment, root: &Path) -> Arc<SkillSet> {
    let skills = SkillSet::discover(env.home.as_deref(), &config.data_dir, root);
    for notice in &skills.notices {
        eprintln!("rein: warning: {notice}");
    }
    Arc::new(skills)
}

/// The AGENTS.md files for `root`: the user's (`~/.agents/AGENTS.md`, then `AGENTS.md` in
/// rein's config folder), then the repository's.
fn discover_instructions(config: &Config, env: &Environment, root: &Path) -> Instructions {
    let mut user = Vec::new();
    if let Some(home) = &env.home {
        user.push(home.join(".agents").join("AGENTS.md"));
    }
    if let Some(dir) = config.user_config_path.parent() {
        user.push(dir.join("AGENTS.md"));
    }
    user.dedup();
    rein::instructions::discover(&user, root, config.instructions_max_bytes.value as usize)
}

/// (name, description) per skill, for `/skills`.
fn skill_list(skills: &SkillSet) -> Vec<(String, String)> {
    skills
        .iter()
        .map(|s| (s.name.clone(), s.description.clone()))
        .collect()
}

fn attention(config: &Config) -> rein::dashboard::Attention {
    rein::dashboard::Attention {
        bell: config.ui_bell.value,
        notifications: config.ui_notifications.value != "never",
    }
}

/// When the dashboard notifies (`ui.notifications`, `ui.notify_after_secs`).
fn notifications(config: &Config) -> Notifications {
    Notifications {
        when: NotifyWhen::from_name(&config.ui_notifications.value).unwrap_or_default(),
        after: Duration::from_secs(config.ui_notify_after_secs.value),
    }
}

/// The keymap in force: the built-in one with the user's `keymap.toml` (beside
/// `config.toml`) merged in.
fn user_keymap(config: &Config) -> UserKeymap {
    let builtin = rein::app::keymap::builtin();
    match rein::app::keymap_user::path_beside(&config.user_config_path) {
        Some(path) => rein::app::keymap_user::load(&path, builtin),
        None => UserKeymap::builtin(builtin),
    }
}

/// Load the user's keymap and put it in force; its problems go to stderr now and, for
/// the dashboard, into the transcript (`app`).
fn install_keymap(config: &Config, app: &mut App) {
    let loaded = user_keymap(config);
    for error in &loaded.errors {
        eprintln!("rein: warning: keymap: {error}");
        app.transcript
            .cells
            .push(Cell::notice(NoticeKind::Error, format!("keymap: {error}")));
    }
    rein::app::keymap::install(loaded.keymap);
}

/// Ask the server for the model's context window when the settings leave it open, for at
/// most `discover::TIMEOUT` (2 s), before anything starts: a window that is found replaces
/// the `context_window` setting; a server that is down or says nothing changes nothing.
fn discover_window(config: &mut Config) {
    if config.discovery == rein::config::Discovery::None {
        return;
    }
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let target = config.target();
    if let Some(found) = runtime.block_on(rein::config::discover::context_window(&target)) {
        config.set_discovered_window(found.tokens, found.url);
    }
    runtime.shutdown_timeout(Duration::from_millis(100));
}

/// The first-run explanation shown when no model is configured.
fn setup_text(config: &Config) -> String {
    format!(
        "No model is configured yet.\n\n\
         rein talks to any OpenAI-compatible chat-completions endpoint. Tell it which one:\n\n\
         • a known provider: rein --model ollama/qwen3-coder, or with its key in the\n\
         \x20                   environment, OPENROUTER_API_KEY=... rein --model openrouter/MODEL\n\
         \x20                   (`rein models` lists the providers)\n\
         • for this shell:   export REIN_BASE_URL=http://127.0.0.1:8080/v1 REIN_MODEL=my-model\n\
         \x20                   (and REIN_API_KEY=... for hosted APIs)\n\
         • for good: put `model = \"...\"` (and `base_url = \"...\"`) in {}\n\
         • once:      rein --model NAME --base-url URL\n\n\
         Then start rein again. `rein config` shows what is set and where it came from.\n\
         Ctrl-C quits.",
        config.user_config_path.display()
    )
}

fn project_root(cwd: Option<&Path>) -> Result<PathBuf, String> {
    let dir = match cwd {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?,
    };
    let root = dir
        .canonicalize()
        .map_err(|e| format!("project directory {}: {e}", dir.display()))?;
    if !root.is_dir() {
        return Err(format!(
            "project directory {} is not a directory",
            root.display()
        ));
    }
    Ok(root)
}

fn agent_config(
    config: &Config,
    root: PathBuf,
    sandbox: Arc<Sandbox>,
    policy: Arc<RulePolicy>,
    skills: Arc<SkillSet>,
    instructions: &Instructions,
) -> Result<AgentConfig, String> {
    if config.model.value.trim().is_empty() {
        return Err(
            "no model configured: pass --model NAME (or PROVIDER/MODEL, e.g. ollama/qwen3-coder; `rein models` lists them), set REIN_MODEL, or set `model` in config.toml (`rein config` shows where settings come from)"
                .to_string(),
        );
    }
    let mut client = ClientConfig::new(
        config.base_url.value.clone(),
        config.api_key.value.clone(),
        config.model.value.clone(),
    );
    client.name = config.model_name.clone();
    client.idle_timeout = Duration::from_secs(config.idle_timeout_secs.value);
    client.connect_timeout = Duration::from_secs(config.connect_timeout_secs.value);
    client.max_tries = config.max_tries.value;
    client.max_output_tokens = Some(config.max_output_tokens.value).filter(|&n| n > 0);
    client.extra_headers = config.headers.clone();
    client.images = config.images;
    Ok(AgentConfig {
        client,
        sandbox,
        root,
        bash_timeout: Duration::from_secs(config.bash_timeout_secs.value),
        max_steps: config.max_steps.value,
        subagent_max_steps: config.subagent_max_steps.value,
        subagent_max_parallel: config.subagent_max_parallel.value as usize,
        instructions: instructions.clone(),
        policy,
        skills,
        context: config.context(),
        external_tools: None,
    })
}
