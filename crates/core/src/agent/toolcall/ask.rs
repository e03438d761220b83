//! Step 5: settle the verdict. A rule's denial or plan mode's refusal ends the call; an
//! auto-approval is announced; a question goes first to the PermissionRequest hooks (which
//! may answer for the user, never for the loop guard's question), then to the user, whose
//! answer may allow more for the session or the project. Out: an [`Approval`], or how the
//! call [`Ended`].

use tokio::sync::oneshot;

use super::hooks::PermissionAnswer;
use super::{Approval, Call, Ended, ToolEnv};
use crate::agent::events::{AgentEvent, ApprovalDecision};
use crate::agent::inbox::Inbox;
use crate::conversation::ToolResult;
use crate::permissions::mode::ModeDecision;
use crate::permissions::{ApprovalMode, Grant};

impl ToolEnv<'_> {
    /// Step 5: what `verdict` leaves of `call` (judged in `mode`).
    pub(super) async fn approve(
        &self,
        verdict: ModeDecision,
        call: &mut Call<'_>,
        mode: ApprovalMode,
        inbox: &mut Option<&mut Inbox>,
    ) -> Result<Approval, Ended> {
        match verdict {
            ModeDecision::Run => Ok(Approval::default()),
            ModeDecision::Deny { reason } => Err(ToolResult::denied(call.name, &reason).into()),
            ModeDecision::PlanRefused => Err(ToolResult::plan_mode(call.name).into()),
            ModeDecision::AutoApproved { reason } => {
                self.emit(AgentEvent::AutoApproved {
                    id: self.request_id(call.call),
                    name: call.name.to_string(),
                    summary: call.prepared.summary(),
                    reason,
                    subagent: self.subagent.map(str::to_string),
                });
                Ok(Approval::default())
            }
            ModeDecision::Ask { reason, grants } => match self.permission_hooks(call).await {
                Some(PermissionAnswer::Allow { updated_input }) => {
                    // Its `updatedInput` is what runs, judged again: the hook answers the
                    // question, never a rule's deny or plan mode's refusal.
                    if let Some(input) = updated_input {
                        self.rewritten(call, &input, mode)?;
                    }
                    Ok(Approval::default())
                }
                Some(PermissionAnswer::Deny { reason, stop }) => Err(Ended {
                    hook_stop: stop,
                    ..ToolResult::hook_blocked(call.name, &reason).into()
                }),
                None => {
                    self.notify_hooks(call.name);
                    self.ask(inbox, call, reason, grants).await
                }
            },
        }
    }

    /// `call` with the arguments a PermissionRequest hook rewrote (`input`, Claude Code's
    /// field names), pinned and judged again in `mode`: how the call ends instead when
    /// they are wrong, or a rule or the mode refuses them.
    fn rewritten(
        &self,
        call: &mut Call<'_>,
        input: &serde_json::Value,
        mode: ApprovalMode,
    ) -> Result<(), Ended> {
        let mut prepared = self.reparse(call, input)?;
        prepared
            .pin_path(self.root)
            .map_err(|text| format!("{text} (the arguments a hook rewrote)"))?;
        call.replace(prepared);
        match self.rules_and_mode(call, mode) {
            ModeDecision::Deny { reason } => Err(ToolResult::denied(call.name, &reason).into()),
            ModeDecision::PlanRefused => Err(ToolResult::plan_mode(call.name).into()),
            _ => Ok(()),
        }
    }

    /// Put the call to the user and wait for the answer. A subagent has no inbox: the main
    /// agent's passes the answer on, by the request's id.
    async fn ask(
        &self,
        inbox: &mut Option<&mut Inbox>,
        call: &Call<'_>,
        reason: String,
        grants: Vec<Grant>,
    ) -> Result<Approval, Ended> {
        let id = self.request_id(call.call);
        let answer = match self.subagent {
            Some(_) => {
                let (reply, answer) = oneshot::channel();
                if let Ok(mut open) = self.open.lock() {
                    open.insert(id.clone(), reply);
                }
                Some(answer)
            }
            None => None,
        };
        self.emit(self.question(call, id.clone(), reason, grants.clone()));
        let decision = match (inbox.as_deref_mut(), answer) {
            (_, Some(answer)) => answer.await.ok(),
            (Some(inbox), None) => inbox.wait_approval(&id).await,
            (None, None) => None,
        };
        if let Ok(mut open) = self.open.lock() {
            open.remove(&id);
        }
        self.answered(call, decision, grants)
    }

    /// The question about `call` (`id`), for the front end.
    fn question(
        &self,
        call: &Call<'_>,
        id: String,
        reason: String,
        grants: Vec<Grant>,
    ) -> AgentEvent {
        let (name, prepared) = (call.name, &call.prepared);
        AgentEvent::ApprovalNeeded {
            id,
            name: name.to_string(),
            summary: prepared.summary(),
            reason,
            grants,
            preview: prepared.preview(self.ctx),
            subagent: self.subagent.map(str::to_string),
            repeated: self.looping.map_or(0, |found| found.times),
            period: self.looping.map_or(0, |found| found.period),
            mcp: crate::permissions::tools::McpCall::for_call(name, &prepared.args).map(
                |mut mcp| {
                    // The configured names, and who declared the server.
                    if let Some(source) = call.external.as_ref().and_then(|s| s.source.as_ref()) {
                        mcp.server = source.server.clone();
                        mcp.tool = source.tool.clone();
                        mcp.project_server = source.project;
                    }
                    mcp
                },
            ),
        }
    }

    /// What the user's `decision` (none: interrupted) makes of `call`; what they allowed
    /// for the session or the project (`grants`) is granted, and saved for the project.
    fn answered(
        &self,
        call: &Call<'_>,
        decision: Option<ApprovalDecision>,
        grants: Vec<Grant>,
    ) -> Result<Approval, Ended> {
        let granted = match decision {
            None => {
                return Err(Ended {
                    interrupted: true,
                    ..ToolResult::interrupted().into()
                })
            }
            Some(ApprovalDecision::Deny { feedback }) => {
                return Err(Ended {
                    loop_refused: self.looping.is_some(),
                    ..ToolResult::refused(call.name, feedback.as_deref()).into()
                })
            }
            Some(ApprovalDecision::Approve) => Vec::new(),
            Some(ApprovalDecision::ApproveForSession) => {
                self.policy.grant(&grants);
                grants
            }
            Some(ApprovalDecision::ApproveForProject) => {
                self.policy.grant(&grants);
                match self.policy.persist(&grants) {
                    Ok(saved) => self.emit(AgentEvent::Notice { message: saved }),
                    Err(e) => self.emit(AgentEvent::Error {
                        message: format!("the rule was not saved: {e}"),
                    }),
                }
                grants
            }
        };
        Ok(Approval {
            approved: true,
            granted,
        })
    }
}
