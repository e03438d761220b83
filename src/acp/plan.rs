//! Plan mode's review in the editor, as the dashboard's: a turn in plan mode that ends
//! with a plan puts it to the user as a mode switch ("Ready to code?"); yes switches to
//! default or auto mode and tells the model to go ahead, within the same prompt; no keeps
//! planning and the prompt ends.

use agent_client_protocol::v1::schema::{
    ContentBlock, PermissionOption, PermissionOptionKind, RequestPermissionOutcome, TextContent,
    ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use rein_core::permissions::ApprovalMode;

pub use crate::app::plan_review::APPROVED_MESSAGE;

const AUTO: &str = "plan_auto";
const DEFAULT: &str = "plan_default";
const KEEP: &str = "plan_keep";

/// The tool call that shows the plan and carries the question.
pub fn announce(id: &str, plan: &str) -> ToolCall {
    ToolCall::new(id.to_string(), "Ready to code?")
        .kind(ToolKind::SwitchMode)
        .status(ToolCallStatus::Pending)
        .content(vec![ToolCallContent::from(ContentBlock::Text(
            TextContent::new(plan),
        ))])
}

/// The question's options: auto mode only where the sandbox works.
pub fn options(sandbox_works: bool) -> Vec<PermissionOption> {
    let mut out = Vec::new();
    if sandbox_works {
        out.push(PermissionOption::new(
            AUTO,
            "Yes, and run sandboxed commands without asking (auto mode)",
            PermissionOptionKind::AllowAlways,
        ));
    }
    out.push(PermissionOption::new(
        DEFAULT,
        "Yes, and ask me about each action (default mode)",
        PermissionOptionKind::AllowOnce,
    ));
    out.push(PermissionOption::new(
        KEEP,
        "No, keep planning",
        PermissionOptionKind::RejectOnce,
    ));
    out
}

/// The mode the answer switches to, or `None` to keep planning.
pub fn decision(outcome: &RequestPermissionOutcome) -> Option<ApprovalMode> {
    match outcome {
        RequestPermissionOutcome::Selected(chosen) => match &*chosen.option_id.0 {
            AUTO => Some(ApprovalMode::Auto),
            DEFAULT => Some(ApprovalMode::Default),
            _ => None,
        },
        _ => None,
    }
}

/// The review's tool call once answered.
pub fn answered(id: &str, approved: bool) -> ToolCallUpdate {
    let status = if approved {
        ToolCallStatus::Completed
    } else {
        ToolCallStatus::Failed
    };
    ToolCallUpdate::new(id.to_string(), ToolCallUpdateFields::new().status(status))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::SelectedPermissionOutcome;

    #[test]
    fn the_answer_picks_the_mode_or_keeps_planning() {
        let pick = |id: &str| {
            decision(&RequestPermissionOutcome::Selected(
                SelectedPermissionOutcome::new(id.to_string()),
            ))
        };
        assert_eq!(pick(AUTO), Some(ApprovalMode::Auto));
        assert_eq!(pick(DEFAULT), Some(ApprovalMode::Default));
        assert_eq!(pick(KEEP), None);
        assert_eq!(decision(&RequestPermissionOutcome::Cancelled), None);
        assert_eq!(options(true).len(), 3);
        assert_eq!(options(false).len(), 2, "no auto without the sandbox");
        let shown = serde_json::to_value(announce("r1", "1. Do it")).unwrap();
        assert_eq!(shown["kind"], "switch_mode");
        assert_eq!(shown["content"][0]["content"]["text"], "1. Do it");
    }
}
