//! An `ask` as the editor's permission question, and its answer as the approval modal's.
//!
//! Four options, as the protocol names them: allow once, allow always (the session grant
//! rein offers: the command prefix, the file, the MCP tool), reject once and reject
//! always. "Always" lasts the session, as in the dashboard: an allow is the agent's own
//! session grant; a reject is remembered here and answers the same question again without
//! asking. A question with nothing to grant (the loop guard's, a subagent's refused tool)
//! has no "always" options. A cancelled question refuses the call and stops the turn.

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, ToolCallUpdate,
    ToolCallUpdateFields,
};
use rein_core::agent::ApprovalDecision;
use rein_core::permissions::Grant;

pub const ALLOW_ONCE: &str = "allow_once";
pub const ALLOW_ALWAYS: &str = "allow_always";
pub const REJECT_ONCE: &str = "reject_once";
pub const REJECT_ALWAYS: &str = "reject_always";

/// What the model reads when the user rejected the call in the editor.
const REJECTED: &str = "the user rejected this in the editor";
/// What the model reads when an earlier "reject always" answered.
const REJECTED_ALWAYS: &str = "the user rejected this for the rest of the session";

/// The grants in words, for the "always" option's name.
fn grants_in_words(grants: &[Grant]) -> String {
    grants
        .iter()
        .map(Grant::describe)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The options of a question that would grant `grants` for the session.
pub fn options(grants: &[Grant]) -> Vec<PermissionOption> {
    let mut out = vec![PermissionOption::new(
        ALLOW_ONCE,
        "Allow once",
        PermissionOptionKind::AllowOnce,
    )];
    if !grants.is_empty() {
        out.push(PermissionOption::new(
            ALLOW_ALWAYS,
            format!("Allow for this session: {}", grants_in_words(grants)),
            PermissionOptionKind::AllowAlways,
        ));
    }
    out.push(PermissionOption::new(
        REJECT_ONCE,
        "Reject",
        PermissionOptionKind::RejectOnce,
    ));
    if !grants.is_empty() {
        out.push(PermissionOption::new(
            REJECT_ALWAYS,
            format!("Reject for this session: {}", grants_in_words(grants)),
            PermissionOptionKind::RejectAlways,
        ));
    }
    out
}

/// The tool call the question is about: its id, with rein's one line and why it asks.
pub fn question(id: &str, summary: &str, reason: &str) -> ToolCallUpdate {
    let title = if reason.is_empty() {
        summary.to_string()
    } else {
        format!("{summary} ({reason})")
    };
    ToolCallUpdate::new(id.to_string(), ToolCallUpdateFields::new().title(title))
}

/// The answer the agent gets for the client's `outcome`, and whether the session now
/// rejects these grants without asking. A cancelled question is refused (the turn is
/// being stopped).
pub fn decision(outcome: &RequestPermissionOutcome) -> (ApprovalDecision, bool) {
    let refuse = |feedback: &str| ApprovalDecision::Deny {
        feedback: Some(feedback.to_string()),
    };
    match outcome {
        RequestPermissionOutcome::Selected(chosen) => match &*chosen.option_id.0 {
            ALLOW_ONCE => (ApprovalDecision::Approve, false),
            ALLOW_ALWAYS => (ApprovalDecision::ApproveForSession, false),
            REJECT_ALWAYS => (refuse(REJECTED), true),
            // Reject, or an option rein never offered: refused.
            _ => (refuse(REJECTED), false),
        },
        _ => (ApprovalDecision::Deny { feedback: None }, false),
    }
}

/// Grants the user rejected for the session: a question asking for any of them again is
/// refused without asking.
#[derive(Debug, Default)]
pub struct Rejected(Vec<Grant>);

impl Rejected {
    pub fn add(&mut self, grants: &[Grant]) {
        for g in grants {
            if !self.0.contains(g) {
                self.0.push(g.clone());
            }
        }
    }

    /// The answer to a question for `grants`, when the session already rejected them all.
    pub fn answer(&self, grants: &[Grant]) -> Option<ApprovalDecision> {
        (!grants.is_empty() && grants.iter().all(|g| self.0.contains(g))).then(|| {
            ApprovalDecision::Deny {
                feedback: Some(REJECTED_ALWAYS.to_string()),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::SelectedPermissionOutcome;

    #[test]
    fn the_four_options_and_what_each_answers() {
        let grants = vec![Grant::Bash("{cargo test,cargo test *}".into())];
        let kinds: Vec<_> = options(&grants).iter().map(|o| o.kind).collect();
        assert_eq!(
            kinds,
            vec![
                PermissionOptionKind::AllowOnce,
                PermissionOptionKind::AllowAlways,
                PermissionOptionKind::RejectOnce,
                PermissionOptionKind::RejectAlways
            ]
        );
        assert!(
            options(&grants)[1]
                .name
                .contains("`cargo test` with any arguments"),
            "{:?}",
            options(&grants)[1]
        );
        // Nothing to grant: no "always".
        assert_eq!(options(&[]).len(), 2);
        let pick = |id: &str| {
            decision(&RequestPermissionOutcome::Selected(
                SelectedPermissionOutcome::new(id.to_string()),
            ))
        };
        assert_eq!(pick(ALLOW_ONCE), (ApprovalDecision::Approve, false));
        assert_eq!(
            pick(ALLOW_ALWAYS),
            (ApprovalDecision::ApproveForSession, false)
        );
        assert!(matches!(
            pick(REJECT_ONCE),
            (ApprovalDecision::Deny { .. }, false)
        ));
        assert!(matches!(
            pick(REJECT_ALWAYS),
            (ApprovalDecision::Deny { .. }, true)
        ));
        assert!(matches!(
            pick("made_up"),
            (ApprovalDecision::Deny { .. }, false)
        ));
        assert_eq!(
            decision(&RequestPermissionOutcome::Cancelled),
            (ApprovalDecision::Deny { feedback: None }, false)
        );
    }

    #[test]
    fn a_rejection_for_the_session_answers_the_same_question_again() {
        let mut rejected = Rejected::default();
        let grants = vec![Grant::Bash("rm:*".into())];
        assert_eq!(rejected.answer(&grants), None);
        rejected.add(&grants);
        assert!(matches!(
            rejected.answer(&grants),
            Some(ApprovalDecision::Deny { .. })
        ));
        assert_eq!(rejected.answer(&[Grant::Bash("ls:*".into())]), None);
        assert_eq!(rejected.answer(&[]), None, "nothing to match: asked");
    }
}
