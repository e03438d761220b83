//! The plan review: a centred layer with the plan (Markdown, scrollable), the choices with
//! their keys from the keymap, and the one-line "what to change" field while it is open.
//! Everything from the model is sanitised by the Markdown renderer. The review only
//! draws; its keys are the update step's.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::approval_modal::feedback_field;
use super::layout::{centred, framed, lines_shown, modal_block, modal_width};
use super::theme;
use super::wrap::{wrap_into, WrapMode};
use crate::app::keymap::{keymap, Action, Mode};
use crate::app::plan_review::PlanReview;

/// The widest the review gets.
const MAX_WIDTH: u16 = 100;

/// The choices, each with its keys from the keymap.
pub fn choice_lines(review: &PlanReview, width: usize) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let auto = match &review.no_auto {
        Some(_) => "approve, go on in auto mode (needs the sandbox)",
        None => "approve, go on in auto mode (commands run without asking, in the sandbox)",
    };
    for (action, text) in [
        (
            Action::ApprovePlan,
            "approve, go on in default mode (edits and commands ask as usual)",
        ),
        (Action::ApprovePlanAuto, auto),
        (Action::KeepPlanning, "keep planning"),
        (
            Action::PlanFeedback,
            "keep planning, and say what to change",
        ),
    ] {
        let Some(keys) = keymap().keys_for(Mode::Plan, action) else {
            continue;
        };
        let key = keys.split('/').next().unwrap_or_default().to_string();
        let style = if action == Action::ApprovePlanAuto && review.no_auto.is_some() {
            theme::DIM
        } else {
            theme::TEXT
        };
        let pad = " ".repeat(3usize.saturating_sub(key.chars().count()).max(1));
        let first = [Span::styled(key.clone(), theme::KEY), Span::raw(pad)];
        let rest = [Span::raw(" ".repeat(key.chars().count().max(2) + 1))];
        wrap_into(
            &[Span::styled(text, style)],
            width,
            &first,
            &rest,
            WrapMode::Words,
            &mut out,
        );
    }
    out
}

impl Widget for &PlanReview {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (modal_w, text_w) = modal_width(area.width, MAX_WIDTH);
        let body = super::markdown::render(&self.plan, text_w as u16);
        let choices = choice_lines(self, text_w);
        let field_h: u16 = if self.feedback.is_some() { 3 } else { 0 };
        let fixed = 1 + choices.len() as u16 + field_h;
        let max_h = area.height.saturating_sub(2).max(area.height.min(8));
        let body_room = max_h.saturating_sub(2 + fixed).max(1);
        let body_h = (body.len() as u16).min(body_room).max(1);
        let rect = centred(area, modal_w, 2 + body_h + fixed);
        let max_scroll = body.len().saturating_sub(usize::from(body_h));
        self.max_scroll
            .set(u16::try_from(max_scroll).unwrap_or(u16::MAX));
        let scroll = usize::from(self.scroll).min(max_scroll);
        let mut block = modal_block(Line::from(Span::styled(
            " The plan is ready: approve it? ",
            theme::TITLE,
        )));
        if max_scroll > 0 {
            block = block.title_bottom(lines_shown(scroll, usize::from(body_h), body.len()));
        }
        let inner = framed(block, rect, buf, true);
        if inner.is_empty() {
            return;
        }
        let bottom = inner.bottom();
        let mut y = inner.y;
        for line in body.iter().skip(scroll).take(usize::from(body_h)) {
            if y < bottom {
                buf.set_line(inner.x, y, line, inner.width);
                y += 1;
            }
        }
        y = inner.y + body_h + 1;
        for line in &choices {
            if y < bottom {
                buf.set_line(inner.x, y, line, inner.width);
                y += 1;
            }
        }
        if let Some(field) = &self.feedback {
            feedback_field(
                field,
                " What to change? (Enter sends · Esc goes back) ",
                inner,
                y,
                bottom,
                buf,
            );
        }
    }
}
