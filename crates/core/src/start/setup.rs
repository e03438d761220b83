//! What a run is set up from, shared by the front ends and the subcommands: the project
//! folder, rein's data folder tightened, the sandbox, the skills and AGENTS.md files, the
//! model's context window asked of the server (in the background for the front ends, at
//! once for `rein config`), the agent's settings and the MCP servers that may start.

use super::errln;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::agent::window::WindowWatch;
use crate::agent::{AgentConfig, ClientConfig};
use crate::config::{Config, Environment};
use crate::instructions::Instructions;
use crate::permissions::policy::RulePolicy;
use crate::sandbox::{Sandbox, SandboxSettings};
use crate::skills::SkillSet;

/// The project folder: `--cwd`, else the current one, with its links resolved.
pub fn project_root(cwd: Option<&Path>) -> Result<PathBuf, String> {
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

/// rein's data folder and the folders of its own in it, made the user's alone: an older
/// rein made them 0755 (see `crate::host::private_fs`).
pub fn tighten_data_dir(config: &Config) {
    for problem in crate::host::private_fs::tighten_data_dir(&config.data_dir) {
        errln!("rein: warning: {problem}");
    }
}

/// The sandbox for `root` as the config asks: rein's data folder hidden inside but for
/// this rein's spill folders, and the secrets the config knows kept out of commands'
/// environment.
pub fn detect_sandbox(config: &Config, root: &Path, env: &Environment) -> Arc<Sandbox> {
    let sandbox = Sandbox::detect(
        SandboxSettings {
            mode: config.sandbox_mode.value,
            network: config.sandbox_network.value,
            writable: config.sandbox_writable.value.clone(),
            hidden: config.hidden_from_commands(env.home.as_deref()),
            hide_project_secrets: config.sandbox_hide_secrets.value,
        },
        root,
        Vec::new(),
    )
    .with_private_data(&config.data_dir, &config.data_dir.join("spill"));
    Arc::new(sandbox.with_env(config.command_env(env)))
}

/// The skills of the user, of rein and of the project; each one skipped is a warning.
pub fn discover_skills(config: &Config, env: &Environment, root: &Path) -> Arc<SkillSet> {
    let skills = SkillSet::discover(env.home.as_deref(), &config.data_dir, root);
    for notice in &skills.notices {
        errln!("rein: warning: {notice}");
    }
    Arc::new(skills)
}

/// The AGENTS.md and CLAUDE.md files for `root`: the user's (`~/.agents/AGENTS.md`, or
/// failing that `~/.claude/CLAUDE.md` or `~/.codex/AGENTS.md`; then `AGENTS.md` in rein's
/// config folder), then the repository's, their imports read by `policy`'s rules. The
/// files they import steer later sessions as they do: from now on writing one asks
/// (`policy`) and commands cannot write it (`sandbox`).
pub fn discover_instructions(
    config: &Config,
    env: &Environment,
    root: &Path,
    policy: &Arc<RulePolicy>,
    sandbox: &Sandbox,
) -> Instructions {
    let mut user: Vec<Vec<PathBuf>> = Vec::new();
    if let Some(home) = &env.home {
        user.push(vec![
            home.join(".agents").join("AGENTS.md"),
            home.join(".claude").join("CLAUDE.md"),
            home.join(".codex").join("AGENTS.md"),
        ]);
    }
    if let Some(dir) = config.user_config_path.parent() {
        let own = dir.join("AGENTS.md");
        if !user.iter().flatten().any(|p| *p == own) {
            user.push(vec![own]);
        }
    }
    let rules: Arc<dyn crate::permissions::PermissionPolicy> = policy.clone();
    let instructions = crate::instructions::discover_with(
        crate::instructions::Discovery {
            user,
            max_bytes: config.instructions_max_bytes.value as usize,
            rules: crate::instructions::ReadRules {
                policy: rules,
                root: root.to_path_buf(),
                max_import_bytes: config.attach_max_bytes.value as usize,
                home: env.home.clone(),
            },
        },
        root,
    );
    let imported: Vec<PathBuf> = instructions
        .files
        .iter()
        .filter(|f| f.imported_by.is_some())
        .map(|f| f.path.clone())
        .collect();
    policy.add_steering_files(&imported, crate::consent::steering::Kind::Instructions);
    sandbox.add_steering_files(&imported);
    instructions
}

/// The project's guidance (its instruction files and their imports, skills, custom
/// commands and agent definitions) compared with the last session here: a line for the
/// user per kind of change (`crate::consent::guidance`), recorded for the next start.
pub fn review_guidance(
    config: &Config,
    root: &Path,
    instructions: &Instructions,
    skills: &SkillSet,
    commands: &crate::custom_commands::CommandSet,
) -> Vec<String> {
    use crate::consent::guidance::Guide;
    let dirs = crate::instructions::project_dirs(root);
    let top = dirs.first().cloned().unwrap_or_else(|| root.to_path_buf());
    let mut files: Vec<Guide> = instructions
        .files
        .iter()
        .filter(|f| f.path.starts_with(&top))
        .map(|f| Guide {
            path: f.path.clone(),
            what: match &f.imported_by {
                Some(by) => format!(
                    "imported by {}",
                    by.strip_prefix(&top).unwrap_or(by).display()
                ),
                None => "instructions".to_string(),
            },
        })
        .collect();
    files.extend(
        skills
            .iter()
            .filter(|s| s.source == crate::skills::SkillSource::Project)
            .map(|s| Guide {
                path: s.path.clone(),
                what: format!("skill `{}`", s.name),
            }),
    );
    files.extend(
        commands
            .iter()
            .filter(|c| c.source == crate::custom_commands::CommandSource::Project)
            .map(|c| Guide {
                path: c.path.clone(),
                what: format!("command /{}", c.name),
            }),
    );
    files.extend(crate::consent::guidance::agent_definitions(&dirs));
    crate::consent::guidance::review(&config.data_dir, &top, &files).notices(&top)
}

/// Ask the server for the model's context window when the settings leave it open, for at
/// most `client.window_timeout_secs` (2 s by default), and wait (`rein config`, which shows it): a window that
/// is found replaces the `context_window` setting; a server that is down or says nothing
/// changes nothing. The front ends ask in the background instead ([`ask_window`]).
pub fn discover_window(config: &mut Config) {
    if config.discovery == crate::config::Discovery::None {
        return;
    }
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let target = config.target();
    let limit = config.window_timeout();
    if let Some(found) = runtime.block_on(crate::config::discover::context_window_within(
        &target, limit,
    )) {
        config.set_discovered_window(found.tokens, found.url);
    }
    runtime.shutdown_timeout(Duration::from_millis(100));
}

/// Ask the server for the model's context window in the background when the settings
/// leave it open (call inside the runtime; see `crate::config::discover::ask`): the agent
/// is spawned with the returned watch. `None` when the window is configured.
pub fn ask_window(config: &Config) -> Option<WindowWatch> {
    if config.discovery == crate::config::Discovery::None {
        return None;
    }
    crate::config::discover::ask_within(config.target(), config.window_timeout())
}

pub fn agent_config(
    config: &Config,
    root: PathBuf,
    sandbox: Arc<Sandbox>,
    policy: Arc<RulePolicy>,
    skills: Arc<SkillSet>,
    instructions: &Instructions,
    hooks: Arc<crate::hooks::Hooks>,
) -> Result<AgentConfig, String> {
    if config.model.value.trim().is_empty() {
        return Err(
            "no model configured: pass --model NAME (or PROVIDER/MODEL, e.g. ollama/qwen3-coder; `rein models` lists them), set REIN_MODEL, or set `model` in config.toml (`rein config` shows where settings come from)"
                .to_string(),
        );
    }
    // Nothing goes to a route a project wrote without the user's allow (held at load;
    // this refuses whatever a path around the hold would let through).
    config.target().check_route().map_err(|e| e.to_string())?;
    let mut client = ClientConfig::new(
        config.base_url.value.clone(),
        config.api_key.value.clone(),
        config.model.value.clone(),
    );
    client.name = config.model_name.clone();
    client.idle_timeout = Duration::from_secs(config.idle_timeout_secs.value);
    client.keepalive_timeout = Some(Duration::from_secs(config.keepalive_timeout_secs.value));
    client.max_reply_bytes = usize::try_from(config.max_reply_mb.value)
        .map_or(usize::MAX, |mb| mb.saturating_mul(1024 * 1024));
    client.connect_timeout = Duration::from_secs(config.connect_timeout_secs.value);
    client.max_tries = config.max_tries.value;
    client.max_output_tokens = Some(config.max_output_tokens.value).filter(|&n| n > 0);
    // Unset: each request is capped at what is left of a known window (0 turns it off).
    client.auto_output_cap = config.max_output_tokens.source == crate::config::Source::Default;
    client.extra_headers = config.headers.clone();
    client.images = config.images;
    client.set_api(&config.api_settings());
    let root_for_lsp = root.clone();
    let sandbox_for_lsp = sandbox.clone();
    let secrets_for_lsp: Vec<String> = Some(config.api_key.value.clone())
        .filter(|k| !k.is_empty())
        .into_iter()
        .collect();
    Ok(AgentConfig {
        client,
        sandbox,
        root,
        bash_timeout: Duration::from_secs(config.bash_timeout_secs.value),
        max_steps: config.max_steps.value,
        subagent_max_steps: config.subagent_max_steps.value,
        subagent_max_parallel: config.subagent_max_parallel.value as usize,
        max_background: config.max_background.value as usize,
        hooks,
        instructions: instructions.clone(),
        policy,
        skills,
        context: config.context(),
        external_tools: None,
        checkpoints: Some(crate::agent::CheckpointSetup {
            data_dir: config.data_dir.clone(),
            settings: config.checkpoint_settings(),
        }),
        editor: None,
        live_output: false,
        lsp: crate::lsp::Lsp::new(&config.lsp, &root_for_lsp, sandbox_for_lsp, secrets_for_lsp),
    })
}

/// The configured MCP servers that may start (the project's only once allowed), started in
/// the background (call inside the runtime), with what to tell the user first: project
/// servers waiting for approval, a trust file rein could not read.
pub fn start_mcp(
    config: &Config,
    root: &Path,
    launch: bool,
) -> (
    Option<(
        crate::mcp::McpManager,
        tokio::sync::mpsc::UnboundedReceiver<crate::mcp::McpEvent>,
    )>,
    Vec<String>,
) {
    if config.mcp_servers.is_empty() {
        return (None, Vec::new());
    }
    let (trust, problem) = crate::consent::trust::TrustStore::load(&config.data_dir);
    start_mcp_with(config, root, launch, &trust, problem)
}

/// [`start_mcp`] with the trust store a start has already read, and what reading it said.
pub fn start_mcp_with(
    config: &Config,
    root: &Path,
    launch: bool,
    trust: &crate::consent::trust::TrustStore,
    problem: Option<String>,
) -> (
    Option<(
        crate::mcp::McpManager,
        tokio::sync::mpsc::UnboundedReceiver<crate::mcp::McpEvent>,
    )>,
    Vec<String>,
) {
    if config.mcp_servers.is_empty() {
        return (None, Vec::new());
    }
    let startable = crate::mcp::external::startable(&config.mcp_servers, trust, root);
    let mut notices = startable.notices;
    notices.extend(problem);
    if startable.start.is_empty() && startable.held.is_empty() {
        return (None, notices);
    }
    let (manager, events) = crate::mcp::McpManager::prepare(
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
