//! The dashboard's state: one struct the update step changes and the UI draws.
//!
//! The transcript is a list of cells. Finished cells never change, so their wrapped lines
//! are cached per width and version ([`RenderCache`]); only the live cell (the streaming
//! reply, the running tool) changes. Each cell's contents sit in a [`Versioned`], whose
//! version goes up whenever they are reached mutably, so a change and the bump that tells
//! the cache it is stale are one operation. Approval requests wait in a
//! queue and are answered in the order the model asked; the modal shows the front one.
//! The context gauge starts from the agent's last count ([`ContextStats`]) and adds what
//! streamed in since, at the rate the agent learnt; `/context` opens a layer that shows
//! where those tokens go.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ratatui::text::Line;
use tui_textarea::TextArea;

use super::attention::Notifications;
use super::finder::FinderState;
use super::history_search::HistorySearch;
use super::model_picker::ModelPicker;
use super::model_switch::PendingSwitch;
use super::picker::Picker;
use super::slash_menu::SlashMenu;
use crate::agent::{ContextStats, Prices, Usage, UsageTotals};
use crate::custom_commands::CommandSet;
use crate::permissions::{ApprovalMode, Grant};
use crate::tools::write_todos::Todo;

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
    /// The `@` file finder: the project's files and the list over the input box.
    pub finder: FinderState,
    /// A model switch the loop is resolving, and the messages held until it answers.
    pub model_switch: Option<PendingSwitch>,
    /// The agent's last count of the context and where it goes (`AgentEvent::Context`);
    /// `None` until the first one arrives.
    pub context: Option<ContextStats>,
    /// Whether the `/context` layer is open (it shows `context`, live).
    pub context_open: bool,
    /// Whether the terminal reports the mouse (off by default, so text selection works).
    pub mouse_capture: bool,
    /// When Ctrl-C was last pressed: a second one within a second quits.
    pub last_ctrl_c: Option<Instant>,
    /// The project instructions in the system prompt, a line each (path, size, whether
    /// cut), and what was skipped: `/memory` lists them.
    pub instructions: Vec<String>,
    /// The conversation is not being recorded (the session file could not be created or
    /// a write to it failed): the status line says so.
    pub not_recording: bool,
    /// When the last paste (or a key right behind it) arrived: keys this close behind a
    /// paste are the rest of it (see `update::PASTE_TAIL`).
    pub paste_tail: Option<Instant>,
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
    /// The file sent inputs are appended to (`crate::input_history`); `None`: not saved
    /// (`ui.input_history = false`, the demo, or a write failed).
    pub input_history: Option<std::path::PathBuf>,
    /// The MCP servers and their states, as they last reported (`/mcp`).
    pub mcp_servers: Vec<(String, crate::mcp::ServerState)>,
}

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

/// The conversation as the user sees it.
#[derive(Debug, Default)]
pub struct Transcript {
    pub cells: Vec<Cell>,
    pub scroll: Scroll,
    /// Where the last frame showed the view: `scroll.from_bottom` clamped to the top the
    /// renderer found (it knows the heights of what it laid out; the update step does not
    /// guess them); anchored at the top, how far above the end the view was when the
    /// frame reached the end, else `None`. Written while drawing, hence the cell; `None`
    /// before the first frame.
    pub shown_from_bottom: std::cell::Cell<Option<usize>>,
    /// Anchored at the top: `scroll.from_top` as the last frame showed it (clamped to the
    /// end, when it reached the end).
    pub shown_from_top: std::cell::Cell<Option<usize>>,
}

/// Where the transcript view is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scroll {
    /// Lines between the bottom of the view and the end of the transcript.
    pub from_bottom: usize,
    /// Whether the view sticks to the bottom as new lines arrive. Scrolling up turns it
    /// off; returning to the bottom turns it on again.
    pub follow: bool,
    /// Set when the view is anchored at the top (Ctrl-Home, or scrolled up until the top
    /// showed): lines between the top of the transcript and the top of the view. Then
    /// `from_bottom` is not used, and a frame lays out only the cells from the top to the
    /// view, never the rest (a frame near the top of 20 000 cells costs what it costs at
    /// 20).
    pub from_top: Option<usize>,
}

impl Default for Scroll {
    fn default() -> Self {
        Scroll {
            from_bottom: 0,
            follow: true,
            from_top: None,
        }
    }
}

/// One entry of the transcript.
#[derive(Debug)]
pub enum Cell {
    User(Versioned<UserCell>),
    Assistant(Versioned<AssistantCell>),
    Reasoning(Versioned<ReasoningCell>),
    /// Boxed, as the largest: a transcript of 20 000 cells holds each other kind at the
    /// size of a user message.
    Tool(Box<Versioned<ToolCell>>),
    Notice(Versioned<NoticeCell>),
    Compaction(Versioned<CompactionCell>),
}

/// A cell's contents, the version its rendered lines are keyed on, and those lines.
///
/// The contents can be read freely (`Deref`), but reaching them mutably (`DerefMut`, as
/// `cell.status = ...` or `cell.text.push_str(...)` do) bumps the version, so no change can
/// leave the cache showing the lines from before. (Bevy's `Mut<T>` marks a component
/// changed the same way.) A bump without a change only costs one re-render.
#[derive(Debug)]
pub struct Versioned<T> {
    value: T,
    version: u64,
    /// The UI's rendered lines of `value` (behind a `RefCell`: rendering reads `&App`).
    pub cache: RenderCache,
}

impl<T> Versioned<T> {
    /// New contents at version 0, nothing rendered yet.
    pub fn new(value: T) -> Self {
        Versioned {
            value,
            version: 0,
            cache: RenderCache::default(),
        }
    }

    /// How many times the contents were reached mutably: the render cache's key.
    pub fn version(&self) -> u64 {
        self.version
    }
}

impl<T> Deref for Versioned<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for Versioned<T> {
    fn deref_mut(&mut self) -> &mut T {
        self.version = self.version.wrapping_add(1);
        &mut self.value
    }
}

#[derive(Debug)]
pub struct UserCell {
    pub text: String,
    /// For a custom command: the file its prompt came from (the model got the prompt, the
    /// cell shows what was typed).
    pub expanded_from: Option<String>,
    /// The files the message attached (`@path` mentions): shown as chips in the text.
    pub mentions: Vec<String>,
}

/// The assistant's reply, streamed in as Markdown.
#[derive(Debug)]
pub struct AssistantCell {
    pub text: String,
    /// False while it streams.
    pub finished: bool,
}

/// The model's reasoning: dimmed, collapsed to a line unless expanded.
#[derive(Debug)]
pub struct ReasoningCell {
    pub text: String,
    pub finished: bool,
    pub expanded: bool,
}

/// A tool call: one compact line, its result folded below it.
#[derive(Debug)]
pub struct ToolCell {
    pub id: String,
    pub name: String,
    /// The argument worth showing (command or path), one line.
    pub key_arg: String,
    pub status: ToolStatus,
    pub started: Instant,
    pub duration: Option<Duration>,
    /// The result text exactly as the model read it (a long one's head, when the session
    /// file holds it).
    pub result: Option<ResultText>,
    /// Show the whole result instead of the first few lines.
    pub expanded: bool,
    /// The user allowed it from the approval modal.
    pub approved: bool,
    /// For a `task` call: what its subagent is doing and has done.
    pub subagent: Option<SubagentView>,
    /// A word after the status: "auto-approved (auto mode)", "run by you".
    pub note: Option<String>,
}

/// A tool result as its cell keeps it: whole, or, for a long one the session file holds,
/// only what the folded view shows until the user expands it (a transcript of thousands of
/// results then costs their heads, not their text).
#[derive(Debug, Clone, PartialEq)]
pub enum ResultText {
    Whole(String),
    /// Boxed: a cell of the common kind stays as small as a `String`.
    Stored(Box<StoredResult>),
}

/// A long result the session file holds, as its cell keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredResult {
    /// Its first lines ([`crate::session::result_head`]).
    pub head: String,
    /// How many lines follow the head.
    pub more_lines: usize,
    /// Where the session file holds all of it.
    pub at: crate::session::EntryAt,
    /// All of it, once read back for the expanded view (dropped when folded again), or why
    /// it could not be read.
    pub whole: Option<Result<String, String>>,
}

impl ResultText {
    /// `text` as a cell keeps it: a long result the session file holds (`at`) as its
    /// head, anything else whole.
    pub fn kept(text: String, at: Option<crate::session::EntryAt>) -> ResultText {
        let lines = crate::ui::transcript::FOLDED_RESULT_LINES;
        match at.and_then(|at| Some((crate::session::result_head(&text, lines)?, at))) {
            Some(((head, more_lines), at)) => ResultText::Stored(Box::new(StoredResult {
                head,
                more_lines,
                at,
                whole: None,
            })),
            None => ResultText::Whole(text),
        }
    }

    /// The whole text when the cell has it.
    pub fn whole(&self) -> Option<&str> {
        match self {
            ResultText::Whole(text) => Some(text),
            ResultText::Stored(stored) => stored.whole.as_ref()?.as_deref().ok(),
        }
    }
}

impl From<String> for ResultText {
    fn from(text: String) -> Self {
        ResultText::Whole(text)
    }
}

impl From<&str> for ResultText {
    fn from(text: &str) -> Self {
        ResultText::Whole(text.to_string())
    }
}

/// A running (or finished) subagent as its `task` cell shows it: the current step, and
/// its own calls when expanded.
#[derive(Debug, Default)]
pub struct SubagentView {
    /// Model calls made so far.
    pub steps: u32,
    /// Its tool calls, oldest first.
    pub calls: Vec<SubagentCall>,
    /// Tokens over its model calls: its own, not the main conversation's.
    pub usage: Usage,
    /// Set when it is done.
    pub finished: bool,
    /// It used all of `subagent.max_steps`.
    pub stopped_early: bool,
    /// It waits for a free slot (`subagent.max_parallel` others are running).
    pub queued: bool,
}

/// One tool call of a subagent.
#[derive(Debug)]
pub struct SubagentCall {
    pub id: String,
    pub name: String,
    pub key_arg: String,
    pub status: ToolStatus,
}

/// Where a tool call stands, with the permission verdict when there was one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolStatus {
    Running,
    WaitingApproval,
    /// Finished; `approved` says the user allowed it from the modal.
    Done {
        approved: bool,
    },
    Failed,
    /// The user refused it, or the rules denied it.
    Refused,
    Interrupted,
}

/// An error, a retry, a notice ("context compacted"), an interruption mark.
#[derive(Debug)]
pub struct NoticeCell {
    pub kind: NoticeKind,
    pub text: String,
}

/// A finished compaction: its one-line summary, and the handoff note that replaced the
/// older messages, folded unless expanded.
#[derive(Debug)]
pub struct CompactionCell {
    /// Whether the budget called for it (false for `/compact`).
    pub auto: bool,
    /// "compacted: 109k → 38k tokens (58 messages summarised, 6 kept)".
    pub summary: String,
    /// The handoff note the model wrote.
    pub note: String,
    pub expanded: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    Info,
    Retry,
    Error,
    Interrupted,
}

/// A cell's rendered lines for one width, kept until the width or the cell changes.
#[derive(Debug, Default)]
pub struct RenderCache(pub RefCell<Option<Box<CachedRender>>>);

#[derive(Debug, Clone)]
pub struct CachedRender {
    pub width: u16,
    /// The key the lines were made from: the cell's [`Versioned::version`].
    pub version: u64,
    pub lines: Vec<Line<'static>>,
    /// For streaming Markdown: how many bytes of the text are rendered for good (complete
    /// blocks), and how many of `lines` they produced; only the rest is re-rendered.
    pub stable_bytes: usize,
    pub stable_lines: usize,
    /// For streaming Markdown: when `stable_bytes` falls inside a fenced code block (long
    /// code is made stable line by line), the byte range of the fence's opening line.
    pub open_fence: Option<std::ops::Range<usize>>,
    /// For streaming Markdown: the text from `stable_bytes` goes on with the long
    /// paragraph before it (no blank line between).
    pub joined: bool,
}

/// The input box and what it remembers.
pub struct Composer {
    pub textarea: TextArea<'static>,
    /// Earlier inputs, oldest first (Up/Down recall them).
    pub history: Vec<String>,
    /// The history entry being shown, when recalling.
    pub history_pos: Option<usize>,
    /// What was typed before recalling started, restored past the newest entry.
    pub draft: String,
    /// Messages sent while the agent worked, delivered when its turn ends (shown as
    /// queued until then).
    pub queued: Vec<String>,
    /// Custom commands sent whose turn has not started yet: when it does, the transcript
    /// shows what was typed instead of the prompt.
    pub sent_commands: Vec<SentCommand>,
}

/// A custom command as typed and as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentCommand {
    /// `/fix-issue 123`.
    pub typed: String,
    /// The prompt the model gets.
    pub expanded: String,
    /// Where the prompt came from (`.agents/commands/fix-issue.md`).
    pub from: String,
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
}

impl Gauge {
    pub fn new(limit: u64) -> Self {
        Gauge {
            limit: limit.max(1),
            reported: 0,
            added_chars: 0,
            chars_per_token: crate::context::budget::DEFAULT_CHARS_PER_TOKEN,
            compact_at: crate::context::DEFAULT_COMPACT_AT,
            estimated: false,
            no_server_usage: false,
        }
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
            crate::context::budget::tokens_at(self.added_chars as usize, self.chars_per_token);
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

/// Approval requests, answered in the order the model asked.
#[derive(Default)]
pub struct Approvals {
    pub queue: VecDeque<PendingApproval>,
    /// How many requests the current batch had (for "1 of 3"), and how many are answered.
    pub batch_total: usize,
    pub answered: usize,
    /// The one-line "deny and tell the agent why" field, while it is open.
    pub feedback: Option<TextArea<'static>>,
    /// Lines the modal's command or diff is scrolled by.
    pub scroll: u16,
}

/// One approval request waiting for the user; answered by its `id`.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingApproval {
    pub id: String,
    pub tool: String,
    /// The full command, or the path for file writes.
    pub summary: String,
    /// Which part of the command, which rule.
    pub reason: String,
    /// What "allow for the session" (and "always in this project") would add.
    pub grants: Vec<Grant>,
    /// A unified diff of the change, for file writes.
    pub preview: Option<String>,
    /// Set when a subagent asks: the id of its `task` call.
    pub subagent: Option<String>,
    /// For a tool from an MCP server: server, tool, arguments (shown as formatted JSON).
    pub mcp: Option<crate::permissions::tools::McpCall>,
}

impl App {
    pub fn new(info: SessionInfo, context_window: u64) -> App {
        let mut textarea = TextArea::default();
        textarea.set_placeholder_text(
            "Ask rein to do something…  (Enter sends, Shift+Enter or Ctrl+J for a new line, /help)",
        );
        App {
            info,
            transcript: Transcript::default(),
            composer: Composer {
                textarea,
                history: Vec::new(),
                history_pos: None,
                draft: String::new(),
                queued: Vec::new(),
                sent_commands: Vec::new(),
            },
            todos: Vec::new(),
            show_todos: true,
            gauge: Gauge::new(context_window),
            activity: Activity::Idle,
            approvals: Approvals::default(),
            picker: None,
            model_picker: None,
            finder: FinderState::default(),
            model_switch: None,
            context: None,
            context_open: false,
            mouse_capture: false,
            last_ctrl_c: None,
            not_recording: false,
            instructions: Vec::new(),
            paste_tail: None,
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
        }
    }

    /// Whether a turn is running (input is queued instead of sent).
    pub fn busy(&self) -> bool {
        self.activity != Activity::Idle
    }
}

impl Cell {
    /// The cell's rendered lines, as the UI last cached them.
    pub fn cache(&self) -> &RenderCache {
        match self {
            Cell::User(c) => &c.cache,
            Cell::Assistant(c) => &c.cache,
            Cell::Reasoning(c) => &c.cache,
            Cell::Tool(c) => &c.cache,
            Cell::Notice(c) => &c.cache,
            Cell::Compaction(c) => &c.cache,
        }
    }

    pub fn user(text: impl Into<String>) -> Cell {
        Cell::User(Versioned::new(UserCell {
            text: text.into(),
            expanded_from: None,
            mentions: Vec::new(),
        }))
    }

    /// A custom command as typed, and the file its prompt came from.
    pub fn user_command(typed: impl Into<String>, from: impl Into<String>) -> Cell {
        Cell::User(Versioned::new(UserCell {
            text: typed.into(),
            expanded_from: Some(from.into()),
            mentions: Vec::new(),
        }))
    }

    /// A reply; `finished` false while it streams.
    pub fn assistant(text: impl Into<String>, finished: bool) -> Cell {
        Cell::Assistant(Versioned::new(AssistantCell {
            text: text.into(),
            finished,
        }))
    }

    pub fn reasoning(text: impl Into<String>, finished: bool) -> Cell {
        Cell::Reasoning(Versioned::new(ReasoningCell {
            text: text.into(),
            finished,
            expanded: false,
        }))
    }

    /// A tool call that just started.
    pub fn tool(
        id: impl Into<String>,
        name: impl Into<String>,
        key_arg: impl Into<String>,
        started: Instant,
    ) -> Cell {
        Cell::Tool(Box::new(Versioned::new(ToolCell {
            id: id.into(),
            name: name.into(),
            key_arg: key_arg.into(),
            status: ToolStatus::Running,
            started,
            duration: None,
            result: None,
            expanded: false,
            approved: false,
            subagent: None,
            note: None,
        })))
    }

    /// A finished compaction, its note folded.
    pub fn compaction(auto: bool, summary: impl Into<String>, note: impl Into<String>) -> Cell {
        Cell::Compaction(Versioned::new(CompactionCell {
            auto,
            summary: summary.into(),
            note: note.into(),
            expanded: false,
        }))
    }

    pub fn notice(kind: NoticeKind, text: impl Into<String>) -> Cell {
        Cell::Notice(Versioned::new(NoticeCell {
            kind,
            text: text.into(),
        }))
    }
}

/// `path` with the home directory shown as `~`.
pub fn shorten_home(path: &Path, home: Option<&Path>) -> String {
    if let Some(home) = home {
        if home.parent().is_some() {
            if let Ok(rest) = path.strip_prefix(home) {
                return if rest.as_os_str().is_empty() {
                    "~".to_string()
                } else {
                    format!("~/{}", rest.display())
                };
            }
        }
    }
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_becomes_tilde() {
        let home = Path::new("/home/ann");
        assert_eq!(
            shorten_home(Path::new("/home/ann/src/x"), Some(home)),
            "~/src/x"
        );
        assert_eq!(shorten_home(Path::new("/home/ann"), Some(home)), "~");
        assert_eq!(shorten_home(Path::new("/srv/x"), Some(home)), "/srv/x");
        assert_eq!(
            shorten_home(Path::new("/srv/x"), Some(Path::new("/"))),
            "/srv/x"
        );
    }
}
