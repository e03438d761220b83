//! Starting one editor session: the project is the client's `cwd`, started through the
//! core's stages as the dashboard and print mode start theirs (`rein_core::start`), the
//! settings for that project, its hooks (the project's only as approved: the editor has no
//! place to ask, so unapproved ones are held), its MCP servers, a new session file, and the
//! agent.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rein_core::agent::{self, AgentHandle};
use rein_core::config::{Environment, Overrides};
use rein_core::permissions::ApprovalMode;
use rein_core::start::{
    agent_config, ask_window, record_into, start_mcp_with, Continue, Launch, LaunchOptions, Project,
};

/// A started session.
pub struct Started {
    /// The session file's id (the ACP session id): `rein -r ID` goes on with it.
    pub id: String,
    pub root: PathBuf,
    pub handle: AgentHandle,
    /// Whether commands run sandboxed (auto mode needs it).
    pub sandbox_works: bool,
    /// The MCP servers, shut down when the session ends.
    pub mcp: Option<rein_core::mcp::McpManager>,
    /// The mode it starts in (a continued session's own).
    pub mode: ApprovalMode,
    /// A continued session's conversation as the user saw it, and its todo list.
    pub transcript: Vec<rein_core::conversation::Message>,
    pub todos: Vec<rein_core::tools::write_todos::Todo>,
    /// The custom commands and skills, offered as slash commands.
    pub commands: rein_core::custom_commands::CommandSet,
    pub skills: Arc<rein_core::skills::SkillSet>,
    /// The most bytes of files a prompt may embed, in all (`attach_total_bytes`).
    pub attach_cap: usize,
    /// The model takes images (its entry's `images`): a prompt's images are sent.
    pub images: bool,
    /// The MCP servers' news (their prompts join the slash commands).
    pub mcp_events: Option<tokio::sync::mpsc::UnboundedReceiver<rein_core::mcp::McpEvent>>,
}

/// The editor's files for the session with this id, when the client offers them.
pub type Files<'a> = &'a dyn Fn(&str) -> Option<Arc<dyn rein_core::tools::editor::EditorFiles>>;

/// Start a session in `cwd`, a new one or the recorded session `resume`, its file tools
/// going through `files` where it gives them (call inside the runtime).
pub fn start(
    cwd: &Path,
    overrides: &Overrides,
    resume: Option<&str>,
    files: Files<'_>,
    editor_servers: &[agent_client_protocol::v1::schema::McpServer],
) -> Result<Started, String> {
    if !cwd.is_absolute() {
        return Err(format!(
            "cwd must be an absolute path, not {}",
            cwd.display()
        ));
    }
    let project = Project::open(Some(cwd), overrides, Environment::from_process())?;
    let guarded = project.guard()?;
    let options = LaunchOptions {
        mode: None,
        resume: Continue {
            latest: false,
            id: resume.map(str::to_string),
            fork: false,
            model_given: overrides.model.is_some(),
            shown: crate::app::resume::SHOWN,
        },
        is_builtin: &crate::app::commands::is_builtin,
    };
    let launch = Launch::prepare(project, guarded, options)?;
    let hooks = launch.hooks();
    let Launch {
        mut config,
        root,
        sandbox,
        policy,
        trust,
        guidance,
        resumed,
    } = launch;
    if resume.is_some() && resumed.is_none() {
        return Err("no session to continue".to_string());
    }
    let sandbox_works = sandbox.not_working_reason().is_none();
    let skills = guidance.skills.clone();
    let mut agent_config = agent_config(
        &config,
        root.clone(),
        sandbox,
        policy,
        guidance.skills,
        &guidance.instructions,
        Arc::new(hooks.hooks),
    )?;
    let recording = record_into(&config, &root, resumed);
    for notice in &recording.notices {
        eprintln!("rein: {notice}");
    }
    let session = recording.session?;
    let (transcript, todos, mode) = match &session.resumed {
        Some(loaded) => {
            if loaded.meta.project != root {
                return Err(format!(
                    "session {} belongs to {}, not {}",
                    loaded.id(),
                    loaded.meta.project.display(),
                    root.display()
                ));
            }
            (
                loaded.transcript.clone(),
                loaded.todos.clone(),
                loaded.mode.unwrap_or_default(),
            )
        }
        None => (Vec::new(), Vec::new(), ApprovalMode::Default),
    };
    let id = session.writer.id().to_string();
    agent_config.editor = files(&id);
    // A running command's output shows in the editor as it is printed.
    agent_config.live_output = true;
    // The editor's servers join the user's.
    let (extra, notices) = super::mcp::servers(editor_servers, &config.mcp_servers);
    for notice in notices {
        eprintln!("rein: warning: {notice}");
    }
    config.mcp_servers.extend(extra);
    let (started, _) = start_mcp_with(&config, &root, true, &trust.store, trust.problem);
    let (mcp, mcp_events) = match started {
        Some((manager, events)) => (Some(manager), Some(events)),
        None => (None, None),
    };
    if let Some(manager) = &mcp {
        agent_config.external_tools = Some(Arc::new(manager.clone()));
    }
    let window = ask_window(&config);
    let handle = agent::spawn_learning_window(agent_config, Some(session), window)
        .map_err(|e| e.to_string())?;
    Ok(Started {
        id,
        root,
        handle,
        sandbox_works,
        mcp,
        mode,
        transcript,
        todos,
        commands: guidance.commands,
        skills,
        mcp_events,
        attach_cap: usize::try_from(config.attach_total_bytes.value).unwrap_or(usize::MAX),
        images: config.images,
    })
}

/// The modes a session offers: auto only where the sandbox works.
pub fn modes(sandbox_works: bool) -> Vec<ApprovalMode> {
    ApprovalMode::ALL
        .into_iter()
        .filter(|m| sandbox_works || *m != ApprovalMode::Auto)
        .collect()
}
