//! Starting a session, the one way every front end does it (the dashboard, headless
//! mode and the editor protocol), in stages a subcommand can stop after:
//!
//! 1. [`Project::open`]: the project folder (`--cwd` or the current one, links resolved)
//!    and the settings for it; rein's data folder made the user's alone.
//! 2. [`Project::guard`]: the sandbox and the permission policy, with the project files an
//!    approved hook or server runs pinned (writing one asks, commands cannot change it).
//! 3. [`Launch::prepare`]: what the project tells the model (skills, AGENTS.md files and
//!    their imports, custom commands), compared with the last session here; the session
//!    to continue, or none; the folder recorded as one commands may run in.
//!
//! A front end then takes from the [`Launch`] the hooks ([`Launch::hooks`], read with the
//! approvals of this start), the MCP servers ([`start_mcp_with`]), the question about the
//! model's window ([`ask_window`]), the agent's settings ([`agent_config`]) and the
//! session to record into ([`record_into`]: the continued one or a new one), and talks to the agent
//! through its handle. What a stage has to say goes to stderr as it is found, a warning a
//! line.

mod session;
mod setup;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use session::{new_session, record_into, resume_session, Continue, Recording, Resumed};
pub use setup::{
    agent_config, ask_window, detect_sandbox, discover_instructions, discover_skills,
    discover_window, project_root, review_guidance, start_mcp, start_mcp_with, tighten_data_dir,
};

use crate::config::{Config, Environment, Overrides};
use crate::consent::trust::TrustStore;
use crate::custom_commands::CommandSet;
use crate::instructions::Instructions;
use crate::permissions::policy::RulePolicy;
use crate::permissions::ApprovalMode;
use crate::sandbox::Sandbox;
use crate::skills::SkillSet;

/// A line to stderr; dropped if stderr cannot take it.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::text::sanitize::to_stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use errln;

/// Stage 1: the project folder and its settings.
pub struct Project {
    pub root: PathBuf,
    pub config: Config,
    pub env: Environment,
}

impl Project {
    /// The project in `cwd` (else the current folder) with the settings for it: the
    /// user's and the project's files, the environment and `overrides` (the command
    /// line). rein's data folder is made the user's alone (a problem is a warning).
    pub fn open(
        cwd: Option<&Path>,
        overrides: &Overrides,
        env: Environment,
    ) -> Result<Project, String> {
        let root = project_root(cwd)?;
        let config = Config::load(&root, overrides, &env).map_err(|e| e.to_string())?;
        tighten_data_dir(&config);
        Ok(Project { root, config, env })
    }

    /// Stage 2: the sandbox for this project and the permission policy. A project's allow
    /// rules count only where a working sandbox contains what they allow; the settings'
    /// warnings (a project's held endpoint, its ignored allows, its lowered safety
    /// settings) are said on stderr and kept for a front end that shows them again.
    pub fn guard(&self) -> Result<Guarded, String> {
        let sandbox = detect_sandbox(&self.config, &self.root, &self.env);
        let confined = sandbox.not_working_reason().is_none();
        let warnings = self.config.warnings(confined);
        for warning in &warnings {
            errln!("rein: warning: {warning}");
        }
        let policy = Arc::new(
            self.config
                .policy(&self.root, self.env.home.as_deref(), confined)
                .map_err(|e| e.to_string())?,
        );
        // The project files an approved hook or project server runs (its script): writing
        // one asks, and commands cannot change them, as for the host tools' own files.
        // Read once for the whole start: the pins here, the project's hooks and servers
        // later.
        let (trust, trust_problem) = TrustStore::load(&self.config.data_dir);
        let pinned = trust.pinned_files(&self.root);
        policy.add_steering_files(&pinned, crate::consent::steering::Kind::HostTool);
        sandbox.add_steering_files(&pinned);
        Ok(Guarded {
            sandbox,
            policy,
            warnings,
            trust: Trust {
                store: trust,
                problem: trust_problem,
            },
        })
    }
}

/// Stage 2's result: what keeps the model's actions in bounds.
pub struct Guarded {
    pub sandbox: Arc<Sandbox>,
    pub policy: Arc<RulePolicy>,
    /// The settings' warnings, already said on stderr.
    pub warnings: Vec<String>,
    /// The project servers and hooks the user approved, as read at this start.
    pub trust: Trust,
}

/// The trust store as a start read it (once), and what reading it said (a file rein could
/// not read is reported, never emptied).
pub struct Trust {
    pub store: TrustStore,
    pub problem: Option<String>,
}

/// What the project and the user tell the model beyond the built-in prompt, found once at
/// start: the skills it may load, the AGENTS.md instructions and the custom commands.
pub struct Guidance {
    pub skills: Arc<SkillSet>,
    pub instructions: Instructions,
    pub commands: CommandSet,
    /// The project's instruction files, skills, commands and agent definitions that are new
    /// or changed since the last session here (`crate::consent::guidance`), a line each.
    pub changes: Vec<String>,
    /// What the settings' warnings said (a project's held endpoint, its ignored allows and
    /// lowered safety settings), printed on stderr already; the dashboard shows them too.
    pub warnings: Vec<String>,
    /// The approval mode to start in (`--mode`), when given.
    pub mode: Option<ApprovalMode>,
}

/// What a front end asks of stage 3.
pub struct LaunchOptions<'a> {
    /// The approval mode to start in, when given.
    pub mode: Option<ApprovalMode>,
    /// The session to go on with.
    pub resume: Continue,
    /// Whether a name is one of the front end's own commands (a custom command of that
    /// name is shadowed, and said so).
    pub is_builtin: &'a dyn Fn(&str) -> bool,
}

/// What a front end starts from: the settings, the project, its guards, its guidance and
/// the session to continue.
pub struct Launch {
    pub config: Config,
    pub root: PathBuf,
    pub sandbox: Arc<Sandbox>,
    pub policy: Arc<RulePolicy>,
    /// The approvals read at this start, for the project's hooks and servers.
    pub trust: Trust,
    pub guidance: Guidance,
    /// The session to continue, and the model it goes on with.
    pub resumed: Option<Resumed>,
}

impl Launch {
    /// Stage 3: the guidance, the session to continue (the settings switch to its model
    /// unless one was named), and this folder recorded as one commands may run in (a
    /// `.rein/config.toml` that appears below it later is held until confirmed).
    pub fn prepare(
        project: Project,
        guarded: Guarded,
        options: LaunchOptions<'_>,
    ) -> Result<Launch, String> {
        let Project {
            root,
            mut config,
            env,
        } = project;
        let Guarded {
            sandbox,
            policy,
            warnings,
            trust,
        } = guarded;
        let skills = discover_skills(&config, &env, &root);
        let instructions = discover_instructions(&config, &env, &root, &policy, &sandbox);
        let commands = CommandSet::discover(env.home.as_deref(), &root, options.is_builtin);
        let changes = review_guidance(&config, &root, &instructions, &skills, &commands);
        // A base URL that cannot work is a configuration error: said before any session
        // is made (an empty one is the dashboard's first-run screen).
        if !config.base_url.value.trim().is_empty() {
            crate::agent::client::check_base_url(&config.base_url.value)?;
        }
        let resumed = resume_session(&mut config, &root, &options.resume)?;
        if let Err(e) = crate::config::planted::record_root(&config.data_dir, &root) {
            errln!(
                "rein: warning: cannot record this folder in {}: {e}",
                config.data_dir.display()
            );
        }
        Ok(Launch {
            config,
            root,
            sandbox,
            policy,
            trust,
            guidance: Guidance {
                skills,
                instructions,
                commands,
                changes,
                warnings,
                mode: options.mode,
            },
            resumed,
        })
    }

    /// The hooks this start runs: the user's, and the project's the user approved (the
    /// rest held and named in the notices), read with the approvals of this start.
    pub fn hooks(&self) -> crate::hooks::Loaded {
        crate::hooks::load_with(
            &self.config.user_config_path,
            &self.root,
            &self.config.data_dir,
            Some(&self.trust.store),
        )
    }
}
