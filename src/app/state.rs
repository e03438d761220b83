//! The dashboard's state: one struct the update step changes and the UI draws.
//!
//! [`App`] holds each piece in its own type, from its own leaf module: the transcript's
//! cells ([`super::transcript`]), the input box ([`super::composer`]), the approval queue
//! ([`super::approval`]), each layer's state (the pickers, the finder, the searches). Only
//! the router (`super::update`) changes it as a whole. Approval requests wait in a
//! queue and are answered in the order the model asked; the modal shows the front one.
//! The context gauge starts from the agent's last count ([`ContextStats`]) and adds what
//! streamed in since, at the rate the agent learnt; `/context` opens a layer that shows
//! where those tokens go.

use std::path::PathBuf;
use std::time::Instant;

use super::approval::Approvals;
use super::attention::Notifications;
use super::composer::Composer;
use super::finder::FinderState;
use super::history_search::HistorySearch;
use super::model_picker::ModelPicker;
use super::picker::Picker;
use super::slash_menu::{Entry, SlashMenu};
use super::transcript::Transcript;
use rein_core::agent::{ContextStats, Prices, UsageTotals};
use rein_core::custom_commands::CommandSet;
use rein_core::permissions::ApprovalMode;
use rein_core::tools::write_todos::Todo;

// The pieces the state is made of, where tests and the UI have long found them.
pub use super::approval::PendingApproval;
pub use super::composer::SentCommand;
pub use super::transcript::{
    AssistantCell, CachedRender, Cell, CompactionCell, NoticeCell, NoticeKind, ReasoningCell,
    RenderCache, ResultText, Scroll, StoredResult, SubagentCall, SubagentView, ToolCell,
    ToolStatus, UserCell, Versioned,
};

/// The whole dashboard.
pub struct App {
    pub info: SessionInfo,
    pub transcript: Transcript,
    pub composer: Composer,
    pub todos: Vec<Todo>,
    /// Whether the todo pane is shown (`/todos` toggles it).
    pub show_todos: bool,
    pub gauge: Gauge,
    pub activity: Activity,
    pub approvals: Approvals,
    /// The session picker (`/resume`), while it is open.
    pub picker: Option<Picker>,
    /// The model picker (`/model`), while it is open.
    pub model_picker: Option<ModelPicker>,
    /// The MCP servers' layer (`/mcp`), while it is open.
    pub mcp_panel: Option<crate::app::mcp_panel::McpPanel>,
    /// What the server of the model in use listed for `/model`, kept for the session (a
    /// failure is not kept: the next `/model` asks again).
    pub server_models: Option<crate::app::model_picker::ServerModels>,
    /// The rewind layer (`/rewind`, Esc Esc), while it is open.
    pub rewind: Option<super::rewind::RewindState>,
    /// When Esc was last pressed on an empty input while idle: a second press soon after
    /// opens the rewind layer.
    pub last_esc: Option<Instant>,
    /// The `@` file finder: the project's files and the list over the input box.
    pub finder: FinderState,
    /// A model switch the loop is resolving, and the messages held until it answers.
    pub model_switch: Option<PendingSwitch>,
    /// The agent's last count of the context and where it goes (`AgentEvent::Context`);
    /// `None` until the first one arrives.
    pub context: Option<ContextStats>,
    /// Whether the `/context` layer is open (it shows `context`, live).
    pub context_open: bool,
    /// The help layer (`/help`, F1), while it is open.
    pub help: Option<super::help::HelpView>,
    /// Whether the terminal reports the mouse (off by default, so text selection works).
    pub mouse_capture: bool,
    /// When Ctrl-C was last pressed: a second one within a second quits.
    pub last_ctrl_c: Option<Instant>,
    /// The project instructions in the system prompt, a line each (path, size, whether
    /// cut), and what was skipped: `/memory` lists them.
    pub instructions: Vec<String>,
    /// The instruction files of folders below the project loaded as the agent worked
    /// there (sent with a message, not in the system prompt), a line each, and what could
    /// not be read.
    pub nested_instructions: Vec<String>,
    /// The conversation is not being recorded (the session file could not be created or
    /// a write to it failed): the status line says so.
    pub not_recording: bool,
    /// When the last paste (or a key right behind it) arrived: keys this close behind a
    /// paste are the rest of it (see `update::PASTE_TAIL`).
    pub paste_tail: Option<Instant>,
    /// When a character last went into the input box, since the last Enter that sent it:
    /// a question that opens while the user types does not take their next keys as an
    /// answer ([`App::typing_past`]).
    pub typed_at: Option<Instant>,
    /// A question (an approval, the plan review) opened while the user was typing: until
    /// they pause for [`crate::app::approval::TYPING_PAUSE`], their typing keys go on into
    /// the input box instead of answering (a `y` or `a` in a word must not approve a
    /// command, or a plan in auto mode, they have not read). When the last such key came.
    pub typing_past: Option<Instant>,
    /// A one-line hint under the input (unknown command, "press Ctrl-C again to quit").
    pub hint: Option<String>,
    /// The terminal size, from the last resize.
    pub size: (u16, u16),
    /// The custom slash commands (`.agents/commands/*.md`), found at start.
    pub custom_commands: CommandSet,
    /// The `/` completion list's selection (whether it is open follows from the input).
    pub slash_menu: SlashMenu,
    /// The main agent's token usage in this conversation: the prompt-cache hit rate in
    /// the status line and `/context`, the cost in `/cost`.
    pub usage: UsageTotals,
    /// The approval mode (Shift+Tab; the status line shows it when not default).
    pub mode: ApprovalMode,
    /// Why auto mode is not offered ("auto mode needs the sandbox: ..."), or `None`
    /// when the sandbox works.
    pub no_auto: Option<String>,
    /// The hint saying why auto was skipped has been shown.
    pub auto_hint_shown: bool,
    /// The Ctrl-R search over earlier inputs, while it is open.
    pub search: Option<HistorySearch>,
    /// Whether the terminal has the focus, as it last reported; `None` until it reports
    /// (terminals without focus reporting never do). See [`super::attention`].
    pub focused: Option<bool>,
    /// When the running turn started, for the notification at its end.
    pub turn_started: Option<Instant>,
    /// When to notify (`ui.notifications`, `ui.notify_after_secs`).
    pub notifications: Notifications,
    /// The file sent inputs are appended to (`crate::dashboard::input_history`); `None`: not saved
    /// (`ui.input_history = false`, the demo, or a write failed).
    pub input_history: Option<std::path::PathBuf>,
    /// The MCP servers and their states, as they last reported (`/mcp`).
    pub mcp_servers: Vec<(String, rein_core::mcp::ServerState)>,
    /// The MCP servers an OAuth login runs for (`/mcp login NAME`), until it ends.
    pub mcp_logins: Vec<String>,
    /// The background commands, as the agent last reported them (`/bashes`, the status
    /// line's count).
    pub background: Vec<rein_core::tools::background::TaskInfo>,
    /// The language servers' errors and warnings in the files the session touched, as the
    /// agent last reported them (the status line's count).
    pub diagnostics: (usize, usize),
    /// The language servers started in this session, as the agent last reported them
    /// (`/lsp`).
    pub lsp_servers: Vec<rein_core::lsp::ServerInfo>,
    /// The hooks in force, a line each, and what was said about them at start (held,
    /// unusable lines): `/hooks`.
    pub hooks: Vec<String>,
    pub hook_notices: Vec<String>,
    /// The project's hooks held for the user's approval, and the question about them
    /// (open at start; `/hooks allow` opens it again).
    pub hook_trust: Option<super::hook_trust::HookTrust>,
    /// The prompt given on the command line (`rein "PROMPT"`), held while the question
    /// about the project's hooks is open: sent once it is answered.
    pub first_prompt: Option<String>,
    /// The plan offered for approval after a turn in plan mode, while it is.
    pub plan_review: Option<super::plan_review::PlanReview>,
    /// The transcript pager, while it is open.
    pub pager: Option<super::pager::Pager>,
    /// The MCP servers' forms waiting for the user (elicitation).
    pub forms: super::form::Forms,
}

/// Shown instead of sending while no model is configured ([`SessionInfo::setup`]).
pub const SETUP_HINT: &str =
    "no model is configured yet: set one as described above, then start rein again (/quit leaves)";

/// What the status line says about the session.
#[derive(Debug, Clone, Default)]
pub struct SessionInfo {
    pub model: String,
    pub project: PathBuf,
    pub branch: Option<String>,
    /// The sandbox in force, in words ("on (bubblewrap; ...)", "off: bwrap was not found").
    pub sandbox: String,
    /// False when commands run without the sandbox not by the user's choice (a warning).
    pub sandbox_ok: bool,
    /// Set when no model is configured: how to set one, shown in place of the transcript.
    pub setup: Option<String>,
    /// The skills the model can load: (name, description), by name. `/skills` lists them.
    pub skills: Vec<(String, String)>,
    /// The skills left out at startup, one sentence each naming the file and the problem.
    pub skill_notices: Vec<String>,
    /// The model's prices, when configured (`[providers.NAME.models.MODEL]`).
    pub prices: Option<Prices>,
}

/// The context gauge: tokens in the window over the model's limit.
///
/// `reported` is the agent's last count ([`ContextStats::tokens`], the one number its
/// thresholds use); what streamed in since (deltas, tool results, user messages) is added
/// at the characters per token the agent learnt, until the next count replaces it all.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gauge {
    pub limit: u64,
    /// Tokens in the window at the agent's last count.
    pub reported: u64,
    /// Characters added since that count.
    pub added_chars: u64,
    /// The rate `added_chars` are counted at: learnt from the server's usage reports,
    /// four until the agent says otherwise.
    pub chars_per_token: f64,
    /// The share of the window at which the agent compacts (marked in the bar).
    pub compact_at: f64,
    /// Whether the last count was rein's estimate (the server has not reported usage).
    pub estimated: bool,
    /// The server sent no usage with the last reply (the agent had to estimate it).
    pub no_server_usage: bool,
    /// The model's server is still being asked for the window (`limit` is only the
    /// configured or default one): the label says so instead of a share.
    pub asking: bool,
}

impl Gauge {
    pub fn new(limit: u64) -> Self {
        Gauge {
            limit: limit.max(1),
            reported: 0,
            added_chars: 0,
            chars_per_token: rein_core::context::budget::DEFAULT_CHARS_PER_TOKEN,
            compact_at: rein_core::context::DEFAULT_COMPACT_AT,
            estimated: false,
            no_server_usage: false,
            asking: false,
        }
    }

    /// The window is known: the server's answer, or the configured one when it said
    /// nothing in time.
    pub fn learnt(&mut self, window: u64) {
        self.limit = window.max(1);
        self.asking = false;
    }

    /// Start from the agent's count: the window, the threshold and the learnt rate with it.
    pub fn apply(&mut self, stats: &ContextStats) {
        self.limit = stats.window.max(1);
        self.reported = stats.tokens;
        self.added_chars = 0;
        if stats.chars_per_token.is_finite() && stats.chars_per_token > 0.0 {
            self.chars_per_token = stats.chars_per_token;
        }
        if stats.compact_at.is_finite() {
            self.compact_at = stats.compact_at.clamp(0.0, 1.0);
        }
        self.estimated = stats.estimated;
    }

    /// An empty conversation with the same window, threshold and rate (`/clear`).
    pub fn cleared(&self) -> Self {
        Gauge {
            reported: 0,
            added_chars: 0,
            ..*self
        }
    }

    /// Tokens in the window now: the last count plus an estimate of what came since.
    pub fn used(&self) -> u64 {
        let added =
            rein_core::context::budget::tokens_at(self.added_chars as usize, self.chars_per_token);
        self.reported.saturating_add(added)
    }

    /// `used / limit`, capped at 1.
    pub fn ratio(&self) -> f64 {
        (self.used() as f64 / self.limit as f64).min(1.0)
    }
}

/// What the agent is doing, for the status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Activity {
    Idle,
    /// Waiting for the first token of a reply.
    Thinking {
        since: Instant,
    },
    Streaming {
        since: Instant,
    },
    /// Running a tool: its name and key argument, or the todo item's `active_form`.
    Tool {
        name: String,
        detail: String,
        since: Instant,
    },
    WaitingApproval {
        since: Instant,
    },
    /// The history is being summarised into a handoff note: `messages` of them. `in_turn`
    /// says whether something was running when it began (a turn, or a queued message),
    /// so the end of the compaction goes back to thinking rather than idle.
    Compacting {
        messages: usize,
        in_turn: bool,
        since: Instant,
    },
}

impl App {
    pub fn new(info: SessionInfo, context_window: u64) -> App {
        App {
            info,
            transcript: Transcript::default(),
            composer: Composer::default(),
            todos: Vec::new(),
            show_todos: true,
            gauge: Gauge::new(context_window),
            activity: Activity::Idle,
            approvals: Approvals::default(),
            picker: None,
            model_picker: None,
            mcp_panel: None,
            rewind: None,
            last_esc: None,
            finder: FinderState::default(),
            model_switch: None,
            context: None,
            context_open: false,
            help: None,
            mouse_capture: false,
            last_ctrl_c: None,
            not_recording: false,
            instructions: Vec::new(),
            nested_instructions: Vec::new(),
            paste_tail: None,
            typed_at: None,
            typing_past: None,
            hint: None,
            size: (80, 24),
            usage: UsageTotals::default(),
            custom_commands: CommandSet::empty(),
            slash_menu: SlashMenu::default(),
            mode: ApprovalMode::Default,
            no_auto: None,
            auto_hint_shown: false,
            search: None,
            focused: None,
            turn_started: None,
            notifications: Notifications::default(),
            input_history: None,
            mcp_servers: Vec::new(),
            mcp_logins: Vec::new(),
            background: Vec::new(),
            diagnostics: (0, 0),
            lsp_servers: Vec::new(),
            hooks: Vec::new(),
            hook_trust: None,
            forms: Default::default(),
            hook_notices: Vec::new(),
            first_prompt: None,
            plan_review: None,
            pager: None,
            server_models: None,
        }
    }

    /// Whether a turn is running (input is queued instead of sent).
    pub fn busy(&self) -> bool {
        self.activity != Activity::Idle
    }

    /// The `/` completion list as shown now (empty when it is closed).
    pub fn slash_matches(&self) -> Vec<Entry> {
        self.slash_menu
            .matches(&self.composer.textarea, &self.custom_commands)
    }

    /// The selected entry of the `/` completion list, an index into its `len` matches.
    pub fn slash_selected(&self, len: usize) -> usize {
        self.slash_menu.selected(&self.composer.textarea, len)
    }
}

/// A model switch being resolved (`super::update::model_switch`): the name asked for, and
/// the messages sent meanwhile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PendingSwitch {
    pub name: String,
    pub held: Vec<String>,
}
