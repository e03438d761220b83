//! The approval mode on the dashboard, and the user's own commands (`!COMMAND`).
//!
//! Shift+Tab (`cycle_mode`) goes default → auto → plan → default
//! ([`ApprovalMode::next`]); without a working sandbox auto is skipped, and the first
//! time that happens the hint under the input says why. The new mode is shown at once
//! (`app.mode`, the status line) and sent to the agent ([`AgentCommand::SetMode`]); the
//! agent's [`AgentEvent::ModeChanged`] (a switch, `--mode`, a resumed session's mode) sets
//! it too and leaves a notice in the transcript. A call auto mode approved is marked so
//! in its cell.
//!
//! A message that starts with `!` is a command the user runs: sent as
//! [`AgentCommand::RunCommand`] (queued like a message while a turn runs) and shown as a
//! tool cell marked "run by you" when the agent starts it.

use std::time::Instant;

use crate::app::state::{Activity, App};
use crate::app::transcript::{Cell, NoticeKind, ToolStatus};
use crate::app::Effect;
use rein_core::agent::{AgentCommand, AgentEvent, ToolOutcome};
use rein_core::permissions::ApprovalMode;

/// What a tool cell says of a call auto mode approved.
pub const AUTO_APPROVED: &str = "auto-approved (auto mode)";
/// What a tool cell says of a command the user ran.
pub const RUN_BY_YOU: &str = "run by you";

/// Shift+Tab: the next mode.
pub fn cycle(app: &mut App, effects: &mut Vec<Effect>) {
    let works = app.no_auto.is_none();
    let next = app.mode.next(works);
    if app.mode == ApprovalMode::Default && !works && !app.auto_hint_shown {
        app.auto_hint_shown = true;
        app.hint = app.no_auto.clone();
    } else {
        app.hint = None;
    }
    set(app, next, effects);
}

/// Switch to `mode` (Shift+Tab, `/mode`).
pub fn set(app: &mut App, mode: ApprovalMode, effects: &mut Vec<Effect>) {
    app.mode = mode;
    effects.push(Effect::Agent(AgentCommand::SetMode(mode)));
}

/// The agent's word on the mode: it holds from the next tool call.
pub fn changed(app: &mut App, mode: ApprovalMode) {
    app.mode = mode;
    app.transcript
        .cells
        .push(Cell::notice(NoticeKind::Info, mode.describe()));
}

/// A call auto mode approved: its cell says so.
pub fn auto_approved(app: &mut App, id: &str) {
    if let Some(cell) = app.transcript.tool_cell_mut(id) {
        cell.note = Some(AUTO_APPROVED.to_string());
    }
}

/// The command of a `!COMMAND` message, if `text` is one.
pub fn user_command(text: &str) -> Option<&str> {
    text.strip_prefix('!')
        .map(str::trim)
        .filter(|c| !c.is_empty())
}

/// Send `!COMMAND` (`text` is the whole message, `!` included).
pub fn submit_command(
    app: &mut App,
    text: &str,
    command: &str,
    now: Instant,
    effects: &mut Vec<Effect>,
) {
    if app.busy() {
        app.composer.queued.push(text.to_string());
    } else {
        app.activity = Activity::Tool {
            name: "bash".to_string(),
            detail: command.to_string(),
            since: now,
        };
    }
    effects.push(Effect::Agent(AgentCommand::RunCommand(command.to_string())));
}

/// The user's command starts, or ended.
pub fn command_event(app: &mut App, event: AgentEvent, now: Instant) {
    match event {
        AgentEvent::UserCommandStarted { id, command } => {
            let queued = format!("!{command}");
            if let Some(i) = app.composer.queued.iter().position(|q| *q == queued) {
                app.composer.queued.remove(i);
            }
            app.activity = Activity::Tool {
                name: "bash".to_string(),
                detail: command.clone(),
                since: now,
            };
            let mut cell = Cell::tool(id, "bash", command, now);
            if let Cell::Tool(tool) = &mut cell {
                tool.note = Some(RUN_BY_YOU.to_string());
            }
            app.transcript.cells.push(cell);
        }
        AgentEvent::UserCommandFinished {
            id,
            output,
            outcome,
            duration,
            ..
        } => {
            if let Some(cell) = app.transcript.tool_cell_mut(&id) {
                cell.status = match outcome {
                    ToolOutcome::Ok => ToolStatus::Done { approved: false },
                    ToolOutcome::Denied => ToolStatus::Refused,
                    ToolOutcome::Interrupted => ToolStatus::Interrupted,
                    _ => ToolStatus::Failed,
                };
                cell.duration = Some(duration);
                cell.result = Some(output.into());
            }
            app.activity = if app.composer.queued.is_empty() {
                Activity::Idle
            } else {
                Activity::Thinking { since: now }
            };
        }
        _ => {}
    }
}
