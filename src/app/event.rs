//! What flows into the update step ([`AppEvent`]) and out of it ([`Effect`]).

use std::path::PathBuf;
use std::time::Instant;

use crossterm::event::{KeyEvent, MouseEvent};

use super::picker::SessionList;
use crate::agent::{AgentCommand, AgentEvent, ApprovalDecision, ApprovalReply};
use crate::session::LoadedSession;

/// Everything the dashboard reacts to, in one stream.
#[derive(Debug)]
pub enum AppEvent {
    Key(KeyEvent),
    /// Bracketed paste: inserted as text, never sent by itself.
    Paste(String),
    Resize {
        width: u16,
        height: u16,
    },
    Mouse(MouseEvent),
    Agent(AgentEvent),
    /// A timer tick while something is running (status line clocks); `now` is when it fired.
    Tick(Instant),
    /// The sessions the loop listed for `/resume`: opens the picker.
    Sessions(SessionList),
    /// The loop switched to a chosen session (the agent runs on it now), or could not: the
    /// reason, and the current session goes on.
    Resumed(Result<Box<LoadedSession>, String>),
}

/// What the update step asks the loop to do.
#[derive(Debug)]
pub enum Effect {
    /// Send a command to the agent.
    Agent(AgentCommand),
    /// Answer an approval request.
    Answer {
        reply: ApprovalReply,
        decision: ApprovalDecision,
    },
    /// Ring the terminal bell and post a desktop notification (OSC 9).
    Notify { message: String },
    /// Turn mouse capture on or off.
    MouseCapture(bool),
    /// List the sessions on disk and come back with [`AppEvent::Sessions`].
    OpenPicker,
    /// Load the session file, restart the agent on it, and come back with
    /// [`AppEvent::Resumed`].
    ResumeSession(PathBuf),
    /// Leave the dashboard.
    Quit,
}
