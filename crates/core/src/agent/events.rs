//! What flows out of the agent ([`AgentEvent`]) and into it ([`AgentCommand`]).
//!
//! Front ends (headless, dashboard) see the agent only through these two types, and both
//! are plain data: no channel rides inside an event, so an approval request is answered by
//! its id ([`AgentCommand::Approval`]). Every event serialises to one JSON object with a
//! `type` field; that is the headless `jsonl` format.

use std::time::Duration;

use serde::Serialize;

pub use super::usage::{Prices, Usage};
pub use crate::conversation::ToolOutcome;
use crate::permissions::tools::McpCall;
use crate::permissions::{ApprovalMode, Grant};
use crate::tools::write_todos::Todo;

/// Something that happened inside the agent, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A user turn began (the message is now part of the history).
    TurnStarted { text: String },
    /// A message the user sent while the turn ran went to the model with this step's tool
    /// results (it rides on the last one), before the next request: the turn goes on with
    /// it. Messages that no step took start the next turn instead ([`AgentEvent::TurnStarted`]).
    MessageDelivered { text: String },
    /// The files the turn's user message mentioned and carries for the model (right after
    /// [`AgentEvent::TurnStarted`], or after [`AgentEvent::MessageDelivered`] for a message
    /// taken mid-turn), by path as mentioned; only when there are some.
    Attached { paths: Vec<String> },
    /// A model request is about to be sent (step counts from 1 within the turn).
    RequestStarted { step: u32 },
    /// A piece of the assistant's visible reply.
    TextDelta { text: String },
    /// A piece of the model's reasoning: shown to the user; kept with the reply so the
    /// servers that need it get it back.
    ReasoningDelta { text: String },
    /// The model's reply is complete; its text, if any, and the finish reason. With
    /// `refusal` the text is the model's refusal (OpenAI's `refusal` field), streamed as
    /// text deltas like any reply.
    AssistantMessage {
        text: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        refusal: bool,
        finish_reason: Option<String>,
    },
    /// The reply was stopped because it repeated itself, or grew past what rein keeps of
    /// one: what streamed of its text and of its reasoning is cut back to these (each
    /// ending in a mark that says so; `None`: that stream was not cut). An
    /// [`AgentEvent::Error`] follows, and the turn ends.
    ReplyCut {
        text: Option<String>,
        reasoning: Option<String>,
    },
    /// A hook (Claude Code's) said something: blocked a call, added context, failed.
    /// `error` for what the user should notice (a block, a stop, a failure).
    Hook {
        event: String,
        message: String,
        error: bool,
    },
    /// The language servers' errors and warnings in the files the session touched (read or
    /// edited) changed: the totals, and each file that has some.
    Diagnostics {
        errors: usize,
        warnings: usize,
        files: Vec<crate::lsp::FileCount>,
    },
    /// The language servers started in this session changed (one started, stopped or said
    /// something): each as it is now.
    LanguageServers {
        servers: Vec<crate::lsp::ServerInfo>,
    },
    /// The background commands changed (one started, ended, printed a new last line, was
    /// read): all of them as they are now, oldest first.
    Background {
        tasks: Vec<crate::tools::background::TaskInfo>,
    },
    /// A tool call is about to be judged and run. `args` is the parsed argument object, or
    /// the raw text as a string when it was not valid JSON.
    ToolCallStarted {
        id: String,
        name: String,
        args: serde_json::Value,
    },
    /// The call passed its checks (and its approval, when one was asked) and runs now:
    /// the main agent's calls; a subagent reports its own through [`AgentEvent::Subagent`].
    ToolRunning { id: String },
    /// The permission check said `ask`: a front end must answer with
    /// [`AgentCommand::Approval`] and this `id` (a subagent's is `TASK/CALL`).
    ApprovalNeeded {
        id: String,
        name: String,
        /// One line describing the action ("bash: rm -rf build").
        summary: String,
        /// Why approval is needed (which rule).
        reason: String,
        /// What approving for the session would allow from now on.
        grants: Vec<Grant>,
        /// For file writes: a unified diff of the change.
        preview: Option<String>,
        /// Set when a subagent asks: the id of its `task` call.
        subagent: Option<String>,
        /// Set (above 0) when the loop guard asks: the model made this same call this many
        /// times in a row just before (or went round the same `period` calls this many
        /// times). Refusing it ends the turn; headless refuses it.
        #[serde(default, skip_serializing_if = "is_zero")]
        repeated: u32,
        /// With `repeated`: how many calls the loop goes round (1: the same call).
        #[serde(default, skip_serializing_if = "is_zero")]
        period: u32,
        /// For a tool from an MCP server: its server and tool, the arguments, and whether
        /// the project declared the server.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mcp: Option<McpCall>,
    },
    /// An MCP server asks the user to fill in a form while its tool runs (elicitation): a
    /// front end must answer with [`AgentCommand::FormAnswer`] and this `id`, unless a
    /// [`AgentEvent::FormClosed`] with the id comes first. The form's text is the server's,
    /// already sanitised and bounded.
    FormRequested {
        id: String,
        form: crate::elicitation::Form,
    },
    /// The form `id` is no longer open (its call ended, or the server withdrew it): a
    /// front end closes it; an answer sent now is dropped.
    FormClosed { id: String },
    /// Auto mode approved a call the rules would have asked about (it runs now, no modal):
    /// the same fields as [`AgentEvent::ApprovalNeeded`] that say what and why.
    AutoApproved {
        id: String,
        name: String,
        summary: String,
        reason: String,
        subagent: Option<String>,
    },
    /// The approval mode is now `mode` (a switch, or a resumed session's recorded mode
    /// when it is not the default): from the next tool call judged.
    ModeChanged { mode: ApprovalMode },
    /// The user ran `command` themselves (`!COMMAND`): it starts now (after the rules
    /// allowed it), or was denied (a `UserCommandFinished` follows at once).
    UserCommandStarted { id: String, command: String },
    /// The user's command ended: its output (capped like a tool result) and how it
    /// ended. Unless a rule denied it, the output goes to the model with the next message.
    UserCommandFinished {
        id: String,
        command: String,
        output: String,
        outcome: ToolOutcome,
        #[serde(rename = "duration_ms", serialize_with = "as_millis")]
        duration: Duration,
    },
    /// A running call of an external (MCP) tool said how it goes: its server's latest
    /// progress or log line, one sanitised line of at most `crate::mcp::LOG_LINE_CHARS`
    /// characters, at most about ten a second.
    ToolProgress { id: String, text: String },
    /// What a running `bash` call (`id`) printed since the last report, sanitised, at most
    /// ten reports a second (only when the front end asked: `AgentConfig::live_output`).
    /// The call's result has the whole output at the end.
    ToolOutput { id: String, text: String },
    /// A tool call finished (or was refused or failed): exactly one per started call.
    ToolFinished {
        id: String,
        name: String,
        result: String,
        /// `outcome.is_error()`, kept for readers of the JSONL from before `outcome`.
        is_error: bool,
        /// How the call ended: what a front end shows (never guessed from `result`).
        outcome: ToolOutcome,
        #[serde(rename = "duration_ms", serialize_with = "as_millis")]
        duration: Duration,
        /// Where the session file holds the result, when it was recorded before this
        /// event: a front end can keep only the head of a long one and read the rest back
        /// ([`crate::session::read_result`]).
        #[serde(skip)]
        stored: Option<crate::session::EntryAt>,
    },
    /// What a finished `write_file` or `str_replace` call changed in its file (after its
    /// [`AgentEvent::ToolFinished`]): the changed lines with a line of context.
    EditDiff {
        id: String,
        diff: crate::checkpoint::ShortDiff,
    },
    /// A subagent (the running `task` call `task_id`) did something. Its text is not
    /// streamed: only its steps, its tool calls and its usage are.
    Subagent {
        task_id: String,
        event: SubagentEvent,
    },
    /// The todo list changed (a `write_todos` call was accepted): the whole new list.
    TodosUpdated { todos: Vec<Todo> },
    /// The conversation is now recorded in a new session file (after a new conversation).
    SessionStarted {
        id: String,
        path: std::path::PathBuf,
    },
    /// Token usage of the last model call.
    Usage(Usage),
    /// A request failed in a way worth another try; the agent waits `delay` first.
    Retrying {
        attempt: u32,
        max_attempts: u32,
        #[serde(rename = "delay_ms", serialize_with = "as_millis")]
        delay: Duration,
        reason: String,
    },
    /// A tool result (call `id`) was longer than `context.cap_chars` and was cut to its
    /// head and tail as it arrived; `spill` holds the whole until the turn ends.
    ResultCapped {
        id: String,
        name: String,
        /// `total_chars`, `kept_chars` and `spill` (the file with the whole output).
        #[serde(flatten)]
        capped: crate::context::spill::Capped,
    },
    /// At a turn's end, old tool results were cut to short stubs: how many, and the
    /// history's size in characters before and after.
    ContextTrimmed {
        stubbed: usize,
        before_chars: usize,
        after_chars: usize,
    },
    /// Before a request the estimate was still over budget after stubbing: the oldest
    /// tool results were replaced by a one-line note. Tokens before and after.
    ResultsDropped {
        dropped: usize,
        before_tokens: u64,
        after_tokens: u64,
    },
    /// A compaction began: `auto` when the budget called for it, false for `/compact`.
    /// `messages` will be summarised in `pieces` model calls.
    CompactionStarted {
        auto: bool,
        messages: usize,
        pieces: usize,
    },
    /// The history was compacted: `summarised` messages became the handoff `note`, `kept`
    /// recent messages follow it. Tokens before and after; `usage` is the summariser's
    /// own (never part of the main window).
    Compacted {
        auto: bool,
        before_tokens: u64,
        after_tokens: u64,
        summarised: usize,
        kept: usize,
        pieces: usize,
        note: String,
        usage: Usage,
    },
    /// A compaction failed or was interrupted; the history is as it was.
    CompactionFailed { message: String },
    /// The context's size now: sent after every reply, every rewrite of the history, and
    /// when a session starts or resumes.
    Context(ContextStats),
    /// The conversation runs on another model from now on (`/model`, between turns): the
    /// name the user gave, the id sent to `base_url`, its context window, and the prices
    /// the front end passed along. When the history did not fit the new window's budget it
    /// was stubbed, dropped or compacted first (those events came before this one);
    /// `over_budget` holds the token count when even that could not make it fit. A
    /// `Context` event with the new window follows.
    ModelSwitched {
        name: String,
        model: String,
        base_url: String,
        window: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        over_budget: Option<OverBudget>,
        #[serde(skip_serializing_if = "Option::is_none")]
        prices: Option<Prices>,
    },
    /// The server was asked for the model's context window at start and the question is
    /// over: `window` is what the agent uses from now on, the server's answer (`url`
    /// reported it) or, when it said nothing in time, the configured (or default) window
    /// (`url` is `None`). A `Context` event with it follows.
    WindowLearnt {
        window: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        url: Option<String>,
    },
    /// The project instructions were read again for a new conversation (`/clear`): a
    /// label per file in the system prompt now (path, size, whether cut), and what was
    /// cut or skipped.
    InstructionsLoaded {
        files: Vec<String>,
        notices: Vec<String>,
    },
    /// The agent began to work in folders below the project that have instruction files
    /// of their own (`sub/AGENTS.md`): a label per file loaded (path, size, whether cut,
    /// what imported it), sent to the model with the next message; and what could not be
    /// read.
    InstructionsAdded {
        files: Vec<String>,
        notices: Vec<String>,
    },
    /// A batch of tool calls of turn `turn` changed these files (relative to the project),
    /// as the checkpoint after it found, whatever tool changed them.
    FilesChanged {
        turn: u64,
        paths: Vec<crate::checkpoint::RelPath>,
    },
    /// Files put back as a checkpoint had them ([`AgentCommand::Rewind`]): every path
    /// and what became of it, or why nothing could be restored.
    Rewound {
        #[serde(skip_serializing_if = "Option::is_none")]
        to_turn: Option<u64>,
        #[serde(flatten, serialize_with = "rewound_report")]
        report: Result<crate::checkpoint::RestoreReport, String>,
    },
    /// Something the user should know that is not an error.
    Notice { message: String },
    /// Something went wrong; the session stays usable.
    Error { message: String },
    /// A write to the session file failed, so nothing more of this conversation is
    /// recorded (the file stops at a clean point); `message` says which file and why.
    RecordingStopped { message: String },
    /// The turn is over; the agent waits for the next command.
    TurnFinished { outcome: TurnOutcome },
}

/// A rewind's outcome in JSON: `report` when it ran, `error` when it could not.
fn rewound_report<S: serde::Serializer>(
    report: &Result<crate::checkpoint::RestoreReport, String>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(1))?;
    match report {
        Ok(report) => map.serialize_entry("report", report)?,
        Err(error) => map.serialize_entry("error", error)?,
    }
    map.end()
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn as_millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_millis().min(u128::from(u64::MAX)) as u64)
}

/// What a subagent reports while it works. Its approval requests are ordinary
/// [`AgentEvent::ApprovalNeeded`] events marked with the task's id.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SubagentEvent {
    /// It waits for a free slot: `subagent.max_parallel` subagents are running already.
    /// Its first `request_started` says it has begun.
    Queued,
    /// A model request is about to be sent (step counts from 1 up to `subagent.max_steps`).
    RequestStarted { step: u32 },
    /// One of its tool calls is about to be judged and run.
    ToolCallStarted {
        id: String,
        name: String,
        args: serde_json::Value,
    },
    /// One of its tool calls finished (or was refused or failed).
    ToolFinished {
        id: String,
        name: String,
        result: String,
        /// `outcome.is_error()`, kept for readers of the JSONL from before `outcome`.
        is_error: bool,
        /// How the call ended: what a front end shows (never guessed from `result`).
        outcome: ToolOutcome,
        #[serde(rename = "duration_ms", serialize_with = "as_millis")]
        duration: Duration,
    },
    /// Token usage of one of its model calls; not part of the main conversation's window.
    Usage(Usage),
    /// It is done (its answer is the `task` call's result): model calls made, tokens used
    /// over all of them, and whether it hit `subagent.max_steps`.
    Finished {
        steps: u32,
        usage: Usage,
        stopped_early: bool,
    },
}

/// The one token count the gauge and the thresholds use, and where it goes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ContextStats {
    /// Tokens the next request holds: the server's last report plus an estimate of what
    /// was appended since (or an estimate of the whole after a rewrite).
    pub tokens: u64,
    /// The model's context window.
    pub window: u64,
    /// The share of the window at which results are dropped and the history compacted.
    pub compact_at: f64,
    /// True until the server has reported usage in this session: every figure is then
    /// rein's guess at 4 characters a token.
    pub estimated: bool,
    /// The characters per token learnt from the server's reports.
    pub chars_per_token: f64,
    /// Messages in the history, the system prompt included.
    pub messages: usize,
    /// The request's parts, each estimated at `chars_per_token`.
    pub breakdown: crate::context::budget::Breakdown,
}

/// A conversation left over the new model's budget after a switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OverBudget {
    /// Tokens in the conversation.
    pub tokens: u64,
    /// The budget: `compact_at` of the new window.
    pub budget: u64,
}

/// What the user reads about a switch, in the dashboard and headless alike: "now using
/// ollama/qwen3-coder (window 32k tokens)", and what to do when the conversation does not
/// fit.
pub fn model_switched_text(name: &str, window: u64, over_budget: Option<OverBudget>) -> String {
    let short = crate::context::short_count;
    let mut text = format!("now using {name} (window {} tokens)", short(window));
    if let Some(over) = over_budget {
        text.push_str(&format!(
            "; the conversation ({} tokens) is over the new window's budget ({}) and could              not be compacted enough: /compact, or /clear to start over",
            short(over.tokens),
            short(over.budget)
        ));
    }
    text
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnOutcome {
    /// The model replied without tool calls.
    Completed,
    /// The user interrupted; every started tool call has its result.
    Interrupted,
    /// A request failed for good (the error event says why).
    Failed,
    /// The turn used `agent.max_steps` model calls.
    StepLimit,
}

/// The user's answer to an approval request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run it this once.
    Approve,
    /// Run it, and do not ask again for the same action in this session.
    ApproveForSession,
    /// Run it, and write the rule to the project's `.rein/config.toml` so it is allowed
    /// from now on.
    ApproveForProject,
    /// Do not run it; the model is told it was refused, with the user's words if any.
    Deny { feedback: Option<String> },
}

/// What the user sends: the words, and the images attached to them (each named in the
/// words where it was attached, see [`crate::conversation::image::Checked::label`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prompt {
    pub text: String,
    pub images: Vec<crate::conversation::Image>,
}

impl From<String> for Prompt {
    fn from(text: String) -> Self {
        Prompt {
            text,
            images: Vec::new(),
        }
    }
}

/// A prompt of these words and no images.
impl PartialEq<str> for Prompt {
    fn eq(&self, text: &str) -> bool {
        self.images.is_empty() && self.text == text
    }
}

impl PartialEq<&str> for Prompt {
    fn eq(&self, text: &&str) -> bool {
        self == *text
    }
}

impl From<&str> for Prompt {
    fn from(text: &str) -> Self {
        Prompt::from(text.to_string())
    }
}

/// What a front end asks of the agent.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentCommand {
    /// A user message: starts a turn, or, sent while one runs, is queued: the next step of
    /// the turn takes it with its tool results ([`AgentEvent::MessageDelivered`]), or, when
    /// no step comes, it starts the next turn. A message with images is not taken by a
    /// step (a tool result's reminder carries only text): it starts the next turn.
    UserMessage(Prompt),
    /// Stop the running turn now: drop the request, kill running commands. The messages and
    /// `!COMMAND`s queued during the turn are dropped too (the dashboard puts them back in
    /// the input); nothing queued starts a turn by itself after an interrupt.
    Interrupt,
    /// Take back what was sent during the turn and is still queued (Alt-Up): the last
    /// queued message with this text, or, with `command`, the last queued `!COMMAND` of
    /// this command. Nothing happens when it is not queued (any more).
    Withdraw { text: String, command: bool },
    /// The answer to `ApprovalNeeded { id, .. }`, the main agent's or a subagent's. An
    /// answer to a request that is no longer open (its turn was interrupted) is dropped.
    Approval {
        id: String,
        decision: ApprovalDecision,
    },
    /// The answer to `FormRequested { id, .. }`. An answer to a form that is no longer
    /// open is dropped.
    FormAnswer {
        id: String,
        answer: crate::elicitation::FormAnswer,
    },
    /// Forget the conversation (and the todo list) and start a new one.
    NewConversation,
    /// Give the session a title.
    Rename(String),
    /// Compact the conversation now (`/compact [focus]`): the whole history becomes a
    /// handoff note, written with the focus text in mind. Queued while a turn runs.
    Compact { focus: Option<String> },
    /// Switch the approval mode (Shift+Tab, `/mode`, `--mode`): at once, even mid-turn;
    /// it holds from the next tool call judged. Auto is refused without a sandbox.
    SetMode(ApprovalMode),
    /// Run a command as the user (`!COMMAND`): through the rules (a deny refuses it; an
    /// `ask` needs no approval, the user typed it) and the sandbox, between turns (queued
    /// while one runs); its output goes to the model with the next user message.
    RunCommand(String),
    /// Go on with another model (`/model`): between turns (queued while one runs), the
    /// history kept, compacted first when it does not fit the new window.
    SetModel(Box<ModelSwitch>),
    /// Put files back as checkpoints had them and record it (`/rewind`): between turns
    /// (queued while one runs).
    Rewind(Box<crate::checkpoint::RestoreOrder>),
    /// End the agent task (for [`EndReason::Other`](crate::hooks::EndReason)).
    Shutdown,
    /// End the agent task for this reason: a running turn stops, what it did is recorded,
    /// then the SessionEnd hooks run with it (`AgentHandle::end` waits for them).
    End(crate::hooks::EndReason),
}

/// Everything the agent needs to talk to another model: plain data, resolved by the
/// front end from the settings (`Config::resolve_model`).
#[derive(Clone, PartialEq)]
pub struct ModelSwitch {
    /// The model as the user names it (`ollama/qwen3-coder`).
    pub name: String,
    /// The id sent to the server (`qwen3-coder`).
    pub model: String,
    /// The chat-completions base, e.g. `http://127.0.0.1:11434/v1`.
    pub base_url: String,
    /// Empty when none is needed.
    pub api_key: String,
    /// Extra HTTP headers for every request (the provider's).
    pub headers: Vec<(String, String)>,
    /// The model's context window in tokens.
    pub window: u64,
    /// The server reported the window or the user set it (not a default guess).
    pub window_known: bool,
    /// The model's prices, when configured: handed back in
    /// [`AgentEvent::ModelSwitched`] for the front end's cost figures.
    pub prices: Option<Prices>,
    /// The model takes images (its entry's `images`).
    pub images: bool,
    /// The API it is spoken to in, and that API's settings for it.
    pub api: crate::conversation::ApiSettings,
}

impl std::fmt::Debug for ModelSwitch {
    /// The key masked, so it never reaches a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelSwitch")
            .field("name", &self.name)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &if self.api_key.is_empty() { "" } else { "***" })
            .field("headers", &self.headers)
            .field("window", &self.window)
            .field("prices", &self.prices)
            .field("images", &self.images)
            .finish()
    }
}

/// The kinds of event a front end lays out in one place each (see [`AgentEvent::family`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventFamily {
    /// A session or turn starts or ends, a request goes out, usage arrives.
    Turn,
    /// The reply and its reasoning as they stream, and the finished message.
    Reply,
    /// A tool call starts or ends; the plan changes.
    Tool,
    /// A subagent's progress.
    Subagent,
    /// An approval is needed.
    Approval,
    /// A server's form is open or closed.
    Form,
    /// The context window: trims, caps, drops, compaction, the count, a model switch.
    Context,
    /// Retries, notices and errors.
    Notice,
}

impl AgentEvent {
    /// Which family this event belongs to: both front ends route by it, so a new event
    /// gets its place in one match.
    pub fn family(&self) -> EventFamily {
        match self {
            AgentEvent::SessionStarted { .. }
            | AgentEvent::TurnStarted { .. }
            | AgentEvent::MessageDelivered { .. }
            | AgentEvent::Attached { .. }
            | AgentEvent::RequestStarted { .. }
            | AgentEvent::Usage(_)
            | AgentEvent::TurnFinished { .. } => EventFamily::Turn,
            AgentEvent::TextDelta { .. }
            | AgentEvent::ReasoningDelta { .. }
            | AgentEvent::AssistantMessage { .. }
            | AgentEvent::ReplyCut { .. } => EventFamily::Reply,
            AgentEvent::ToolCallStarted { .. }
            | AgentEvent::ToolRunning { .. }
            | AgentEvent::ToolFinished { .. }
            | AgentEvent::EditDiff { .. }
            | AgentEvent::TodosUpdated { .. }
            | AgentEvent::ToolProgress { .. }
            | AgentEvent::ToolOutput { .. }
            | AgentEvent::UserCommandStarted { .. }
            | AgentEvent::UserCommandFinished { .. }
            | AgentEvent::Background { .. }
            | AgentEvent::Diagnostics { .. }
            | AgentEvent::LanguageServers { .. } => EventFamily::Tool,
            AgentEvent::Subagent { .. } => EventFamily::Subagent,
            AgentEvent::ApprovalNeeded { .. } | AgentEvent::AutoApproved { .. } => {
                EventFamily::Approval
            }
            AgentEvent::FormRequested { .. } | AgentEvent::FormClosed { .. } => EventFamily::Form,
            AgentEvent::ContextTrimmed { .. }
            | AgentEvent::ResultCapped { .. }
            | AgentEvent::ResultsDropped { .. }
            | AgentEvent::CompactionStarted { .. }
            | AgentEvent::Compacted { .. }
            | AgentEvent::CompactionFailed { .. }
            | AgentEvent::Context(_)
            | AgentEvent::InstructionsLoaded { .. }
            | AgentEvent::WindowLearnt { .. }
            | AgentEvent::ModelSwitched { .. } => EventFamily::Context,
            AgentEvent::Retrying { .. }
            | AgentEvent::ModeChanged { .. }
            | AgentEvent::Hook { .. }
            | AgentEvent::Notice { .. }
            | AgentEvent::InstructionsAdded { .. }
            | AgentEvent::FilesChanged { .. }
            | AgentEvent::Rewound { .. }
            | AgentEvent::Error { .. }
            | AgentEvent::RecordingStopped { .. } => EventFamily::Notice,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::{Outcome, PathReport, RestoreReport};

    /// A rewind's JSONL line: `report` when it ran, `error` when it could not.
    #[test]
    fn a_rewind_serialises_its_report_or_its_error() {
        let done = AgentEvent::Rewound {
            to_turn: Some(2),
            report: Ok(RestoreReport {
                before: "b".into(),
                after: "a".into(),
                paths: vec![PathReport {
                    path: "x.rs".into(),
                    outcome: Outcome::Kept {
                        why: "changed".into(),
                    },
                }],
            }),
        };
        assert_eq!(
            serde_json::to_value(&done).unwrap(),
            serde_json::json!({
                "type": "rewound",
                "to_turn": 2,
                "report": {"before": "b", "after": "a", "paths": [
                    {"path": "x.rs", "outcome": "kept", "why": "changed"}
                ]}
            })
        );
        let failed = AgentEvent::Rewound {
            to_turn: None,
            report: Err("no record".into()),
        };
        assert_eq!(
            serde_json::to_value(&failed).unwrap(),
            serde_json::json!({"type": "rewound", "error": "no record"})
        );
    }
}
