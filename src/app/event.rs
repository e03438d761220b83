//! What flows into the update step ([`AppEvent`]) and out of it ([`Effect`]).

use std::time::Instant;

use crossterm::event::{KeyEvent, MouseEvent};

use crate::agent::{AgentCommand, AgentEvent, ApprovalDecision, ApprovalReply};

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
    /// Leave the dashboard.
    Quit,
}
