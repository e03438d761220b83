//! Step 4: judge a call. The permission rules say allow, ask or deny; the approval mode
//! makes its decision of that ([`mode::decide`]); a PreToolUse hook's allow skips a
//! question and its ask asks; the loop guard asks whatever came before (auto mode too).
//! Out: one [`ModeDecision`], for step 5 to settle.

use super::{Call, ToolEnv};
use crate::hooks::Permission;
use crate::permissions::mode::{self, ModeDecision};
use crate::permissions::{ApprovalMode, ToolRequest};

impl ToolEnv<'_> {
    /// Step 4: the verdict on `call` in `mode`, with the PreToolUse hooks' word `hook`.
    pub(super) fn judge(
        &self,
        call: &Call<'_>,
        mode: ApprovalMode,
        hook: Option<&(Permission, String)>,
    ) -> ModeDecision {
        let decision = self.rules_and_mode(call, mode);
        let decision = hook_word(decision, hook, self.looping.is_some());
        self.loop_guard_word(decision)
    }

    /// What the rules say of `call`, as `mode` decides it.
    pub(super) fn rules_and_mode(&self, call: &Call<'_>, mode: ApprovalMode) -> ModeDecision {
        let verdict = self.policy.check(&ToolRequest {
            tool: &call.prepared.name,
            args: &call.prepared.args,
            root: self.root,
        });
        mode::decide(mode, call.name, verdict, self.mode.sandbox_works())
    }

    /// The loop guard asks whatever the mode (auto mode too), saying why first.
    fn loop_guard_word(&self, decision: ModeDecision) -> ModeDecision {
        let Some(found) = self.looping else {
            return decision;
        };
        let why = format!("{}; it may be stuck in a loop", found.already());
        match decision {
            ModeDecision::Run | ModeDecision::AutoApproved { .. } => ModeDecision::Ask {
                reason: why,
                grants: Vec::new(),
            },
            ModeDecision::Ask { reason, grants } => ModeDecision::Ask {
                reason: format!("{why}; {reason}"),
                grants,
            },
            other => other,
        }
    }
}

/// A PreToolUse hook's word on `decision`: allow skips the question (never a rule's deny
/// or plan mode's refusal, never the loop guard's question, and never the sandbox, which
/// runs the call all the same); ask asks.
fn hook_word(
    decision: ModeDecision,
    hook: Option<&(Permission, String)>,
    looping: bool,
) -> ModeDecision {
    match (decision, hook) {
        (ModeDecision::Ask { .. }, Some((Permission::Allow, reason))) if !looping => {
            ModeDecision::AutoApproved {
                reason: if reason.is_empty() {
                    "a PreToolUse hook allowed it".to_string()
                } else {
                    format!("a PreToolUse hook allowed it: {reason}")
                },
            }
        }
        (
            ModeDecision::Run | ModeDecision::AutoApproved { .. },
            Some((Permission::Ask, reason)),
        ) => ModeDecision::Ask {
            reason: if reason.is_empty() {
                "a PreToolUse hook asks".to_string()
            } else {
                format!("a PreToolUse hook asks: {reason}")
            },
            grants: Vec::new(),
        },
        (decision, _) => decision,
    }
}
