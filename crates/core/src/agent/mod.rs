//! The agent runtime: a background task that loops the model and its tools.
//!
//! [`spawn`] starts the task and returns an [`AgentHandle`]: commands ([`AgentCommand`]) go
//! in, events ([`AgentEvent`]) come out. The outer loop (`runloop`) waits for a user
//! message; a turn opens with it (`runloop/user_message.rs`), then one loop, the same for
//! the main agent and a subagent (`turn_loop`), calls the model (`step`) and runs every
//! tool call it asked for, until a reply asks for no tools or the steps run out. A `task`
//! call runs a subagent ([`subagent`]) with its own history, on that same loop.
//!
//! Every tool call, the main agent's and a subagent's, takes the same named steps
//! (`toolcall`), under the loop guard (`loop_guard`):
//!
//! parse → pre-tool hooks → pin the path → judge (rules → approval mode → the hooks' word →
//! the loop guard) → approve (a denial ends it; PermissionRequest hooks, then the user) →
//! run (in the sandbox, read-only in plan mode) → post-tool hooks.
//!
//! The hooks' view of a call is built once, when it is parsed. The main agent's state is
//! split among owners (`runloop/state.rs`). When the server is still being asked for the
//! model's context window, [`spawn_learning_window`] hands the agent the answer's watch
//! ([`window`]). Nothing here knows about terminals.

pub mod attach;
pub mod client;
pub mod events;
mod forms;
mod inbox;
pub(crate) mod loop_guard;
mod mode;
pub mod repetition;
mod runloop;
pub use runloop::CheckpointSetup;
pub mod sse;
mod step;
pub mod stream;
pub mod subagent;
mod toolcall;
mod turn_loop;
pub mod usage;
pub mod window;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

pub use crate::conversation::{Message, ToolCall};
pub use client::{ClientConfig, ClientError, LlmClient};
pub use events::{
    model_switched_text, AgentCommand, AgentEvent, ApprovalDecision, ContextStats, EventFamily,
    ModelSwitch, OverBudget, Prompt, SubagentEvent, ToolOutcome, TurnOutcome,
};
pub use loop_guard::Loop;
pub use usage::{Prices, Usage, UsageTotals};

use crate::context::ContextConfig;
use crate::instructions::Instructions;
use crate::permissions::PermissionPolicy;
use crate::sandbox::Sandbox;
use crate::session::{LoadedSession, SessionWriter};
use crate::skills::SkillSet;
use crate::tools::background::{Background, OnChange};
use crate::tools::external::ExternalTools;
use crate::tools::ToolContext;

/// Everything the agent task needs to run.
#[derive(Clone)]
pub struct AgentConfig {
    pub client: ClientConfig,
    /// The project root: tools run here.
    pub root: PathBuf,
    pub bash_timeout: Duration,
    /// Model calls per user turn before the agent stops and hands back to the user.
    pub max_steps: u32,
    /// Model calls a subagent (one `task` call) may make before it returns what it has.
    pub subagent_max_steps: u32,
    /// Subagents that run at once; a reply's further `task` calls wait for a free slot.
    pub subagent_max_parallel: usize,
    /// Background commands (`bash` with `run_in_background`) that run at once.
    pub max_background: usize,
    /// The hooks (Claude Code's `hooks.json`) that run: the user's, and the project's the
    /// user approved. Empty: none, and nothing is spent on them.
    pub hooks: Arc<crate::hooks::Hooks>,
    /// The project instructions (AGENTS.md files) for the system prompt, shared by
    /// subagents; read again for the new conversation of `/clear`.
    pub instructions: Instructions,
    /// The permission policy every tool call goes through.
    pub policy: Arc<dyn PermissionPolicy>,
    /// The sandbox `bash` commands run in.
    pub sandbox: Arc<Sandbox>,
    /// The skills the system prompt lists and `read_skill` reads.
    pub skills: Arc<SkillSet>,
    /// `[context]`: capping tool results, spill files, stubbing old results.
    pub context: ContextConfig,
    /// Tools from outside rein (MCP servers), offered after rein's own from the next turn
    /// on as they come and go; subagents get none.
    pub external_tools: Option<Arc<dyn ExternalTools>>,
    /// Where the project's files are recorded around each turn (`None`: they are not).
    pub checkpoints: Option<CheckpointSetup>,
    /// The editor's view of files, when the front end offers one (the editor protocol):
    /// the file tools read and write through it.
    pub editor: Option<Arc<dyn crate::tools::editor::EditorFiles>>,
    /// Report what a running `bash` command prints as it prints it
    /// ([`AgentEvent::ToolOutput`]): for a front end that shows it live (the editor
    /// protocol); off, nothing is spent on it.
    pub live_output: bool,
    /// The session's language servers (`None`: none may run, and nothing is spent).
    pub lsp: Option<crate::lsp::Lsp>,
}

impl AgentConfig {
    pub(crate) fn tool_context(&self) -> ToolContext {
        ToolContext {
            root: self.root.clone(),
            bash_timeout: self.bash_timeout,
            secrets: vec![self.client.api_key.clone()]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect(),
            sandbox: self.sandbox.clone(),
            todos: Default::default(),
            skills: self.skills.clone(),
            editor: self.editor.clone(),
            live: None,
            lsp: self.lsp.clone(),
        }
    }
}

/// The system prompt for a project and its skills, from `crates/core/assets/system_prompt.md`. Build it
/// once per conversation: the same bytes every request keep the provider's prompt cache.
/// Without skills their section is left out, blank line and all.
pub fn system_prompt(root: &std::path::Path, skills: &SkillSet) -> String {
    fill_prompt(include_str!("../../assets/system_prompt.md"), root, skills)
}

/// `prompt` with the project instructions' section after it (unchanged when there is
/// none).
pub(crate) fn with_instructions(mut prompt: String, instructions: &str) -> String {
    if !instructions.trim().is_empty() {
        prompt.push('\n');
        prompt.push_str(instructions.trim_end());
        prompt.push('\n');
    }
    prompt
}

/// A prompt template with its `{{root}}`, `{{os}}` and `{{skills}}` filled in, ending in
/// exactly one newline.
pub(crate) fn fill_prompt(template: &str, root: &std::path::Path, skills: &SkillSet) -> String {
    let mut prompt = template
        .replace("{{root}}", &root.display().to_string())
        .replace("{{os}}", std::env::consts::OS)
        .replace("{{skills}}", skills.prompt_section().trim_end());
    prompt.truncate(prompt.trim_end().len());
    prompt.push('\n');
    prompt
}

/// The running agent: send commands, receive events. Dropping the handle (its command
/// sender) or sending [`AgentCommand::Shutdown`] ends the task, interrupting a running turn.
pub struct AgentHandle {
    pub commands: mpsc::UnboundedSender<AgentCommand>,
    pub events: mpsc::UnboundedReceiver<AgentEvent>,
    pub task: JoinHandle<()>,
    /// The session's background commands (`/bashes` stops one; headless lists what it
    /// stops at exit). The agent stops them all when it ends.
    pub background: Background,
    /// The session's hooks: how long its SessionEnd hooks may take ([`AgentHandle::end`]).
    pub hooks: Arc<crate::hooks::Hooks>,
}

/// How long [`AgentHandle::end`] gives the agent to stop a turn and record it, besides the
/// time its SessionEnd hooks may take.
const WIND_DOWN: Duration = Duration::from_secs(5);

impl AgentHandle {
    /// Send a command; false when the agent task has ended.
    pub fn send(&self, command: AgentCommand) -> bool {
        self.commands.send(command).is_ok()
    }

    /// Shut the agent down and wait until its task has ended (its session file closed
    /// and unlocked).
    pub async fn shut_down(self) {
        self.send(AgentCommand::Shutdown);
        let _ = self.task.await;
    }

    /// End the session for `reason` and wait until the agent has stopped: a running turn
    /// ended and recorded, then the SessionEnd hooks run (each bounded by its timeout; past
    /// a second the agent says it waits for them). Every event that comes meanwhile goes
    /// to `seen`. The wait is bounded by five seconds and the longest SessionEnd hook's
    /// timeout: when that passes, or `give_up` (a Ctrl-C) comes first, the agent is
    /// stopped where it is, and a hook still running is killed with all it started.
    pub async fn end(
        mut self,
        reason: crate::hooks::EndReason,
        give_up: impl std::future::Future<Output = ()>,
        mut seen: impl FnMut(AgentEvent),
    ) {
        self.send(AgentCommand::End(reason));
        let hooks = self.hooks.end_timeout(reason).unwrap_or_default();
        let deadline = tokio::time::Instant::now() + WIND_DOWN + hooks + Duration::from_secs(1);
        let mut give_up = std::pin::pin!(give_up);
        let ended = loop {
            tokio::select! {
                biased;
                _ = &mut self.task => break true,
                Some(event) = self.events.recv() => seen(event),
                () = &mut give_up => break false,
                () = tokio::time::sleep_until(deadline) => break false,
            }
        };
        if !ended {
            self.task.abort();
            // The task's futures are dropped: a running hook's processes are killed.
            let _ = tokio::time::timeout(Duration::from_secs(1), &mut self.task).await;
        }
        while let Ok(event) = self.events.try_recv() {
            seen(event);
        }
    }
}

/// Where the agent records the conversation: the session file it appends to, and the
/// session it continues (its history, todos and rules), if any.
pub struct SessionSetup {
    pub writer: SessionWriter,
    pub resumed: Option<LoadedSession>,
    /// Where a new session file goes when the user starts a new conversation.
    pub data_dir: PathBuf,
}

/// Start the agent task on the current tokio runtime, recording nothing.
pub fn spawn(config: AgentConfig) -> Result<AgentHandle, ClientError> {
    spawn_with_session(config, None)
}

/// Start the agent task, recording the conversation in `session` (and continuing the
/// session it was resumed from).
pub fn spawn_with_session(
    config: AgentConfig,
    session: Option<SessionSetup>,
) -> Result<AgentHandle, ClientError> {
    spawn_learning_window(config, session, None)
}

/// [`spawn_with_session`] while the server is still being asked for the window
/// (`window`; `None`: the window in `config` is the one): the agent runs on
/// `config.context.window` until the answer comes, and decides nothing on it meanwhile
/// (see [`window`]).
pub fn spawn_learning_window(
    config: AgentConfig,
    session: Option<SessionSetup>,
    window: Option<window::WindowWatch>,
) -> Result<AgentHandle, ClientError> {
    let mut config = config;
    // The Responses API's `prompt_cache_key`: the session's requests reach one cache.
    if let Some(session) = &session {
        config
            .client
            .cache_key
            .get_or_insert_with(|| session.writer.id().to_string());
    }
    let client = LlmClient::new(config.client.clone())?;
    let hooks = config.hooks.clone();
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    let (event_tx, event_rx) = mpsc::unbounded_channel();
    // Background commands tell their snapshots; the front end hears them as an event.
    let snapshots = event_tx.clone();
    let on_change: OnChange = Arc::new(move |tasks| {
        let _ = snapshots.send(AgentEvent::Background { tasks });
    });
    let background = Background::new(Some(on_change), config.max_background);
    let agent = runloop::Agent::new(
        config,
        client,
        cmd_rx,
        event_tx,
        session,
        window,
        background.clone(),
    );
    let task = tokio::spawn(agent.run());
    Ok(AgentHandle {
        hooks,
        commands: cmd_tx,
        events: event_rx,
        task,
        background,
    })
}
