//! The main agent's state that has an owner of its own: what stops a turn, the session
//! file and what it last recorded, what changed between turns, the folders' instruction
//! files, and the external tools offered. Each is a plain record the agent's parts read
//! and write (`turn`, `tool_calls`, `recording`, `reminders`, `nested`, `offered_tools`).

use std::path::PathBuf;

use crate::agent::loop_guard::{SameCalls, Stopped};
use crate::context::changes::{Change, Snapshot};
use crate::permissions::ApprovalMode;
use crate::session::SessionWriter;
use crate::tools::external::ExternalSpec;

/// What stops a turn: the loop guard and the hooks. Each turn starts afresh.
#[derive(Default)]
pub(super) struct TurnStops {
    /// The loop guard's memory of the last calls of this turn.
    pub same_calls: SameCalls,
    /// Set when the loop guard ended the turn: the user refused the call it asked about,
    /// or the model sent again a call rein rejected several times in a row.
    pub loop_stopped: Option<Stopped>,
    /// Set when a hook said `continue: false` (its reason): the turn stops.
    pub hook_stopped: Option<String>,
}

impl TurnStops {
    /// A new turn: the user spoke in between.
    pub fn reset(&mut self) {
        self.same_calls.reset();
        self.loop_stopped = None;
        self.hook_stopped = None;
    }
}

/// The session file, and what it last recorded.
pub(super) struct SessionRecord {
    /// The session file every committed message, todo list and rule goes to.
    pub recorder: Option<SessionWriter>,
    /// Where a new conversation's session file goes.
    pub dir: Option<PathBuf>,
    /// Set once a write failed: the user hears about it once, not per entry.
    pub recorder_failed: bool,
    /// The model the resumed session last recorded (see `Entry::Model`), if any.
    pub recorded_model: Option<String>,
    /// The calibration last written to the session file.
    pub recorded_rate: Option<(u64, u64)>,
    /// The mode the session file last recorded (default for a new one).
    pub recorded_mode: ApprovalMode,
}

/// What changed in the project between the last turn and this one (the reminder says).
#[derive(Default)]
pub(super) struct BetweenTurns {
    /// The project's files as the last turn left them (none before the first turn).
    pub after_last_turn: Option<Snapshot>,
    /// What someone else changed between the last turn and this one.
    pub changed: Vec<Change>,
    /// The instruction files changed since the conversation began, not yet told.
    pub instructions_changed: Vec<PathBuf>,
}

/// The instruction files of folders below the project (`nested`).
#[derive(Default)]
pub(super) struct NestedInstructions {
    /// Those loaded so far.
    pub loaded: crate::instructions::Nested,
    /// Those loaded (or to send again) whose text waits for the next reminder.
    pub pending: crate::instructions::nested::Found,
}

/// The external tools (MCP servers') of this conversation.
pub(super) struct ExternalOffered {
    /// Every external tool offered in this conversation (and the resumed session's), for
    /// the history's calls to tools whose servers are gone.
    pub known: Vec<ExternalSpec>,
    /// Those last offered, as the session file records them.
    pub offered: Vec<ExternalSpec>,
}
