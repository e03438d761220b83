//! The transcript as the dashboard keeps it: a list of cells, and where the view is.
//!
//! Finished cells never change, so the UI caches their wrapped lines per width and version
//! ([`RenderCache`]); only the live cell (the streaming reply, the running tool) changes.
//! Each cell's contents sit in a [`Versioned`], whose version goes up whenever they are
//! reached mutably, so a change and the bump that tells the cache it is stale are one
//! operation. Where the view is ([`Scroll`]) moves here too ([`Transcript::scroll_up`],
//! [`Transcript::scroll_down`]), from what the last frame found ([`Transcript::shown_from_bottom`]):
//! the update step never measures a cell. A leaf: it knows nothing of the rest of the
//! dashboard.

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};
use std::time::{Duration, Instant};

use ratatui::text::Line;

use rein_core::agent::Usage;

/// Result lines shown under a folded tool call (and kept of a long stored result).
pub const FOLDED_RESULT_LINES: usize = 3;

/// Where Home puts the view: past any real top (the UI clamps it when drawing).
pub const TOP: usize = usize::MAX / 2;

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
    /// Anchored at the top, when the last frame found `scroll.from_top` past the end: where
    /// it showed the view instead (`None` when it showed it where asked, so keys pressed
    /// between two frames all count).
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
    /// For a `write_file` or `str_replace` call: the lines it changed.
    pub diff: Option<rein_core::checkpoint::ShortDiff>,
    /// While an MCP call runs: its server's latest progress or log line.
    pub progress: Option<String>,
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
    /// Its first lines ([`rein_core::session::result_head`]).
    pub head: String,
    /// How many lines follow the head.
    pub more_lines: usize,
    /// Where the session file holds all of it.
    pub at: rein_core::session::EntryAt,
    /// All of it, once read back for the expanded view (dropped when folded again), or why
    /// it could not be read.
    pub whole: Option<Result<String, String>>,
}

impl ResultText {
    /// `text` as a cell keeps it: a long result the session file holds (`at`) as its
    /// head, anything else whole.
    pub fn kept(text: String, at: Option<rein_core::session::EntryAt>) -> ResultText {
        let lines = FOLDED_RESULT_LINES;
        match at.and_then(|at| Some((rein_core::session::result_head(&text, lines)?, at))) {
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
            diff: None,
            progress: None,
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

impl Transcript {
    /// The tool cell of a call, newest first, to change: finding it bumps its version.
    pub fn tool_cell_mut(&mut self, id: &str) -> Option<&mut ToolCell> {
        self.cells.iter_mut().rev().find_map(|c| match c {
            Cell::Tool(t) if t.id == id => Some(&mut ***t),
            _ => None,
        })
    }

    /// The subagent call an approval request `approval_id` is about (the agent names it
    /// `TASK/CALL`), in the `task` cell of `task_id`.
    pub fn subagent_call_mut(
        &mut self,
        task_id: &str,
        approval_id: &str,
    ) -> Option<&mut SubagentCall> {
        let call_id = approval_id
            .strip_prefix(task_id)
            .and_then(|rest| rest.strip_prefix('/'))?;
        let cell = self.tool_cell_mut(task_id)?;
        let view = cell.subagent.as_mut()?;
        view.calls.iter_mut().rev().find(|c| c.id == call_id)
    }

    /// A notice at the end, the view back at the bottom to show it.
    pub fn notice(&mut self, kind: NoticeKind, text: impl Into<String>) {
        self.cells.push(Cell::notice(kind, text));
        self.scroll = Scroll::default();
    }

    /// Home: anchored at the top.
    pub fn scroll_to_top(&mut self) {
        self.scroll = Scroll {
            from_bottom: TOP,
            follow: false,
            from_top: Some(0),
        }
    }

    /// Away from the bottom: stop following. Once the last frame found the top, the view
    /// is anchored there (see [`Scroll::from_top`]).
    pub fn scroll_up(&mut self, lines: usize) {
        let shown = (self.shown_from_bottom.get(), self.shown_from_top.get());
        scroll_up(&mut self.scroll, shown, lines);
    }

    /// Toward the bottom; reaching it follows again. Past the top (many pages up) the view
    /// starts from where the last frame showed it, so the first step down moves it; the
    /// renderer found that place, so no cell is measured here. Anchored at the top, the
    /// view moves down from it until a frame reaches the end.
    pub fn scroll_down(&mut self, lines: usize) {
        let shown = (self.shown_from_bottom.get(), self.shown_from_top.get());
        scroll_down(&mut self.scroll, shown, lines);
    }
}

/// [`Transcript::scroll_up`] of any view of cells (the transcript pane, the pager), from
/// what its last frame showed: `(shown_from_bottom, shown_from_top)`.
pub fn scroll_up(scroll: &mut Scroll, shown: (Option<usize>, Option<usize>), lines: usize) {
    if let Some(n) = anchored_at(scroll, shown.1) {
        scroll.from_top = Some(n.saturating_sub(lines));
        return;
    }
    if shown.0.is_some_and(|s| s < scroll.from_bottom) {
        // The top showed already (the view was clamped there): anchor at it.
        scroll.from_top = Some(0);
        scroll.from_bottom = TOP;
        scroll.follow = false;
        return;
    }
    scroll.from_bottom = scroll.from_bottom.saturating_add(lines).min(TOP);
    scroll.follow = scroll.from_bottom == 0;
}

/// [`Transcript::scroll_down`] of any view of cells (see [`scroll_up`]).
pub fn scroll_down(scroll: &mut Scroll, shown: (Option<usize>, Option<usize>), lines: usize) {
    if let Some(n) = anchored_at(scroll, shown.1) {
        match shown.0 {
            // The last frame reached the end: measured from there now.
            Some(rest) => {
                let from_bottom = rest.saturating_sub(lines);
                *scroll = Scroll {
                    from_bottom,
                    follow: from_bottom == 0,
                    from_top: None,
                };
            }
            None => scroll.from_top = Some(n.saturating_add(lines)),
        }
        return;
    }
    let start = match shown.0 {
        Some(shown) => scroll.from_bottom.min(shown),
        None => scroll.from_bottom,
    };
    scroll.from_bottom = start.saturating_sub(lines);
    scroll.follow = scroll.from_bottom == 0;
}

/// Anchored at the top: how far below it the view is, as the last frame showed it
/// (clamped to the end when it reached the end).
fn anchored_at(scroll: &Scroll, shown_from_top: Option<usize>) -> Option<usize> {
    let n = scroll.from_top?;
    Some(shown_from_top.map_or(n, |shown| n.min(shown)))
}
