//! The user answered the approval modal ([`crate::app::approval`] decided the answer): the
//! request leaves the queue, its tool cell (or its subagent's call) shows the decision,
//! the status line says what runs next, and the agent gets the answer by the request's id.

use std::time::Instant;

use super::agent_events::tool_detail;
use crate::app::state::{Activity, App};
use crate::app::transcript::ToolStatus;
use crate::app::Effect;
use rein_core::agent::{AgentCommand, ApprovalDecision};

/// Answer the front request: pop it, count it, note the decision on its tool cell.
pub fn answer(app: &mut App, decision: ApprovalDecision, now: Instant, effects: &mut Vec<Effect>) {
    let Some(request) = app.approvals.pop_answered() else {
        return;
    };
    app.hint = None;
    let approved = !matches!(decision, ApprovalDecision::Deny { .. });
    // The agent's result settles the status; until then the call runs or was refused.
    let status = if approved {
        ToolStatus::Running
    } else {
        ToolStatus::Refused
    };
    let mut detail = None;
    if let Some(task_id) = &request.subagent {
        if let Some(call) = app.transcript.subagent_call_mut(task_id, &request.id) {
            call.status = status;
        }
    } else if let Some(cell) = app.transcript.tool_cell_mut(&request.id) {
        cell.status = status;
        cell.approved = approved;
        detail = Some((cell.name.clone(), cell.key_arg.clone()));
    }
    app.activity = if !app.approvals.queue.is_empty() {
        Activity::WaitingApproval { since: now }
    } else if approved {
        let (name, key_arg) = detail.unwrap_or_else(|| (request.tool.clone(), String::new()));
        Activity::Tool {
            detail: tool_detail(app, &name, &key_arg),
            name,
            since: now,
        }
    } else {
        Activity::Thinking { since: now }
    };
    effects.push(Effect::Agent(AgentCommand::Approval {
        id: request.id,
        decision,
    }));
}
