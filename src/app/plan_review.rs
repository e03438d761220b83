//! The plan review as a layer: a turn in plan mode ended with a plan (the reply's text),
//! and the plan is offered for approval, as Claude Code's plan mode does.
//!
//! States: the choices (the keymap's `plan` mode: approve and go on in default mode,
//! approve and go on in auto mode, keep planning, keep planning and say what to change),
//! and the one-line "what to change" field (the `feedback` mode's keys: Enter sends it, Esc
//! goes back to the choices). Nothing but an explicit choice approves: unbound keys, key
//! repeats and pastes (outside the field) do nothing. The plan scrolls (Up/Down,
//! PgUp/PgDn, the wheel). A leaf: the plan, its scroll and the field are all it knows; the
//! router switches the mode and sends the message an outcome asks for.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent};
use tui_textarea::TextArea;

use super::keymap::{keymap, Action, Mode};
use rein_core::permissions::ApprovalMode;

/// What the model is told when the plan is approved.
pub const APPROVED_MESSAGE: &str =
    "The plan is approved. Go ahead and implement it now, step by step.";

/// The plan offered for approval.
#[derive(Debug, Default)]
pub struct PlanReview {
    /// The plan: the text of the turn's last reply.
    pub plan: String,
    /// Lines the plan is scrolled by.
    pub scroll: u16,
    /// The most the plan can scroll as the last frame laid it out (written while drawing,
    /// hence the cell): scrolling stops there.
    pub max_scroll: std::cell::Cell<u16>,
    /// The "what to change" field, while it is open.
    pub feedback: Option<TextArea<'static>>,
    /// Why auto mode cannot be chosen (no working sandbox), if it cannot.
    pub no_auto: Option<String>,
}

/// What a key, paste or wheel turn in the review leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanOutcome {
    /// Nothing for the router (the plan may have scrolled, or the field changed).
    Stay,
    /// A one-line hint under the input: why this choice is not offered.
    Hint(String),
    /// Approved: switch to this mode and tell the model to go ahead.
    Approve(ApprovalMode),
    /// Keep planning: the review closes; with text, it goes to the model as a message.
    KeepPlanning(Option<String>),
}

/// The keymap modes of the review's choices.
pub const MODES: &[Mode] = &[Mode::Plan];
/// The keymap modes while its field is open.
pub const FEEDBACK_MODES: &[Mode] = &[Mode::Feedback];

/// What the footer names while the review is on top.
pub const FOOTER: &[(Mode, Action)] = &[
    (Mode::Plan, Action::ApprovePlan),
    (Mode::Plan, Action::KeepPlanning),
    (Mode::Plan, Action::PageDown),
];

impl PlanReview {
    /// The review of `plan`; `no_auto` says why auto mode cannot be chosen, if it cannot.
    pub fn open(plan: String, no_auto: Option<String>) -> PlanReview {
        PlanReview {
            plan,
            no_auto,
            ..PlanReview::default()
        }
    }

    /// A key while the review is up; `rows` is the terminal's height (a page is about
    /// half of it), `input` the input box, which the keymap's conditions read.
    pub fn handle_key(&mut self, key: &KeyEvent, rows: u16, input: &TextArea<'_>) -> PlanOutcome {
        let field_open = self.feedback.is_some();
        if key.kind == KeyEventKind::Release || (key.kind == KeyEventKind::Repeat && !field_open) {
            return PlanOutcome::Stay;
        }
        let modes = if field_open { FEEDBACK_MODES } else { MODES };
        let action = keymap().action(modes, key, input);
        let page = (rows / 2).saturating_sub(4).max(1);
        match action {
            Some(Action::PageUp) => self.scroll = self.scroll.saturating_sub(page),
            Some(Action::PageDown) => self.scroll_down(page),
            Some(Action::ScrollUp) => self.scroll = self.scroll.saturating_sub(1),
            Some(Action::ScrollDown) => self.scroll_down(1),
            _ if field_open => match action {
                Some(Action::SubmitFeedback) => {
                    let text = self
                        .feedback
                        .as_ref()
                        .map(|f| f.lines().join(" ").trim().to_string())
                        .unwrap_or_default();
                    if text.is_empty() {
                        return PlanOutcome::Hint(
                            "say what to change, or Esc to go back to the choices".to_string(),
                        );
                    }
                    return PlanOutcome::KeepPlanning(Some(text));
                }
                Some(Action::CloseFeedback) => self.feedback = None,
                Some(Action::Deny) => return PlanOutcome::KeepPlanning(None),
                Some(_) => {}
                None => {
                    if !inserts_newline(key) {
                        if let Some(field) = self.feedback.as_mut() {
                            field.input(*key);
                        }
                    }
                }
            },
            Some(Action::ApprovePlan) => return PlanOutcome::Approve(ApprovalMode::Default),
            Some(Action::ApprovePlanAuto) => {
                return match &self.no_auto {
                    Some(why) => PlanOutcome::Hint(why.clone()),
                    None => PlanOutcome::Approve(ApprovalMode::Auto),
                }
            }
            Some(Action::KeepPlanning) => return PlanOutcome::KeepPlanning(None),
            Some(Action::PlanFeedback) => {
                let mut field = TextArea::default();
                field.set_placeholder_text("what should the plan change? Enter sends it");
                self.feedback = Some(field);
            }
            _ => {}
        }
        PlanOutcome::Stay
    }

    /// A paste: into the field (as one line) while it is open, else ignored.
    pub fn paste(&mut self, text: &str) {
        if let Some(field) = self.feedback.as_mut() {
            let line = text.replace("\r\n", " ").replace(['\n', '\r'], " ");
            field.insert_str(line);
        }
    }

    /// The mouse wheel scrolls the plan.
    pub fn mouse(&mut self, mouse: &MouseEvent) {
        super::text_scroll::wheel(&mut self.scroll, mouse, self.max_scroll.get());
    }

    fn scroll_down(&mut self, lines: u16) {
        self.scroll = self.scroll.saturating_add(lines).min(self.max_scroll.get());
    }
}

/// Keys that mean a line break: the field is one line, so they do nothing there.
fn inserts_newline(key: &KeyEvent) -> bool {
    match key.code {
        KeyCode::Enter | KeyCode::Char('\n' | '\r') => true,
        KeyCode::Char('m' | 'j') => key.modifiers.contains(KeyModifiers::CONTROL),
        _ => false,
    }
}

/// The plan a finished turn offers: the last reply's text of `replies` (the turn's
/// assistant texts, oldest first), when it has any words.
pub fn plan_of<'a>(mut replies: impl DoubleEndedIterator<Item = &'a str>) -> Option<String> {
    replies
        .next_back()
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_string)
}
