//! The plan review's side in the router: when a turn in plan mode ends with a plan it
//! opens ([`offer`]); its answer ([`answer`]) switches the mode and tells the model to go
//! ahead, or keeps planning, with what to change sent as the next message.

use std::time::Instant;

use crate::app::plan_review::{plan_of, PlanOutcome, PlanReview, APPROVED_MESSAGE};
use crate::app::state::App;
use crate::app::transcript::Cell;
use crate::app::Effect;
use rein_core::agent::TurnOutcome;
use rein_core::permissions::ApprovalMode;

/// A turn ended: in plan mode, completed, with nothing queued behind it and a reply with
/// words, its last reply is offered as the plan.
pub fn offer(app: &mut App, outcome: TurnOutcome) {
    if app.mode != ApprovalMode::Plan || outcome != TurnOutcome::Completed || app.busy() {
        return;
    }
    let turn: Vec<&str> = app
        .transcript
        .cells
        .iter()
        .rev()
        .take_while(|c| !matches!(c, Cell::User(_)))
        .filter_map(|c| match c {
            Cell::Assistant(a) => Some(a.text.as_str()),
            _ => None,
        })
        .collect();
    // Newest first above: the plan is the first of them.
    if let Some(plan) = plan_of(turn.into_iter().rev()) {
        app.plan_review = Some(PlanReview::open(plan, app.no_auto.clone()));
    }
}

/// The user answered the review.
pub fn answer(app: &mut App, outcome: PlanOutcome, now: Instant, effects: &mut Vec<Effect>) {
    app.plan_review = None;
    app.hint = None;
    match outcome {
        PlanOutcome::Stay | PlanOutcome::Hint(_) => {}
        PlanOutcome::Approve(mode) => {
            super::modes::set(app, mode, effects);
            super::send::send_text(app, APPROVED_MESSAGE.to_string(), now, effects);
        }
        PlanOutcome::KeepPlanning(Some(change)) => {
            super::send::send_text(app, change, now, effects);
        }
        PlanOutcome::KeepPlanning(None) => {}
    }
}
