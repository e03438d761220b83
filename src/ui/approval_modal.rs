//! The approval modal: a centred layer over the dashboard for the request at the front of
//! the queue.
//!
//! Top to bottom: the title ("Allow `bash`?", "(from a subagent)" when a subagent asks, "1
//! of 3" when the reply asked several), the
//! full command wrapped (or, for a file write, the path and a coloured unified diff; for
//! a tool from an MCP server, "server S · tool T" and the arguments as indented JSON),
//! scrolled by `approvals.scroll`; for a server the project declared, a line saying it
//! runs outside rein's sandbox; the reason; the choices, each saying how far it
//! reaches (the exact session rules from the grants, the project file for "always"); and
//! the one-line "tell rein why" field while it is open. Everything from the model is
//! sanitised. The modal only draws: the keys are the update step's.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Widget};

use super::layout::{centred, framed, lines_shown, modal_width};
use super::sanitize::sanitize;
use super::theme;
use super::wrap::{wrap_into, WrapMode};
use crate::app::approval::{mcp_args_lines, savable};
use crate::app::approval::{Approvals, PendingApproval};
use rein_core::permissions::Grant;

/// What the modal says of a server the project's config declared.
pub const PROJECT_SERVER_NOTE: &str =
    "this server was declared by the project's .rein/config.toml and runs outside rein's sandbox";

/// The widest the modal gets.
const MAX_WIDTH: u16 = 96;

/// The style of a diff line.
fn diff_style(line: &str) -> Style {
    if line.starts_with("+++") || line.starts_with("---") {
        theme::DIFF_FILE
    } else if line.starts_with('+') {
        theme::DIFF_ADD
    } else if line.starts_with('-') {
        theme::DIFF_DEL
    } else if line.starts_with("@@") {
        theme::DIFF_HUNK
    } else {
        theme::TEXT
    }
}

/// The command or the diff, wrapped to `width`.
pub fn body_lines(p: &PendingApproval, width: usize) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let indent = [Span::raw("  ")];
    if let Some(call) = &p.mcp {
        let header = [
            Span::styled("server ", theme::DIM),
            Span::styled(sanitize(&call.server).replace('\n', " "), theme::TITLE),
            Span::styled(" · tool ", theme::DIM),
            Span::styled(sanitize(&call.tool).replace('\n', " "), theme::TITLE),
        ];
        wrap_into(&header, width, &[], &indent, WrapMode::Chars, &mut out);
        for line in mcp_args_lines(&call.args) {
            // Continuations keep the line's own indentation, and two more.
            let depth = line.len() - line.trim_start().len();
            let rest = [Span::raw(" ".repeat(depth + 2))];
            let span = [Span::styled(sanitize(&line).into_owned(), theme::TEXT)];
            wrap_into(&span, width, &[], &rest, WrapMode::Words, &mut out);
        }
        return out;
    }
    match &p.preview {
        Some(diff) => {
            let path = sanitize(p.summary.trim()).replace('\n', " ");
            wrap_into(
                &[Span::styled(path, theme::TITLE)],
                width,
                &[],
                &indent,
                WrapMode::Chars,
                &mut out,
            );
            let diff = sanitize(diff.trim_end());
            for line in diff.split('\n') {
                let span = [Span::styled(line, diff_style(line))];
                wrap_into(&span, width, &[], &[], WrapMode::Chars, &mut out);
            }
        }
        None => {
            let command = sanitize(p.summary.trim_end());
            let mut first = vec![Span::styled("$ ", theme::DIM)];
            for line in command.split('\n') {
                let span = [Span::styled(line, theme::STRONG)];
                wrap_into(&span, width, &first, &indent, WrapMode::Chars, &mut out);
                first = indent.to_vec();
            }
        }
    }
    out
}

/// The choices, each with how far it reaches.
pub fn choice_lines(p: &PendingApproval, width: usize) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let choice = |out: &mut Vec<Line<'static>>, key: &'static str, text: String, style: Style| {
        let first = [Span::styled(key, theme::KEY), Span::raw("  ")];
        let rest = [Span::raw("   ")];
        wrap_into(
            &[Span::styled(text, style)],
            width,
            &first,
            &rest,
            WrapMode::Words,
            out,
        );
    };
    choice(&mut out, "y", "allow once".into(), theme::TEXT);
    if let [Grant::Tool(name)] = p.grants.as_slice() {
        let name = sanitize(name).replace('\n', " ");
        choice(
            &mut out,
            "a",
            format!("allow `{name}` for this session"),
            theme::TEXT,
        );
    } else if !p.grants.is_empty() {
        let rules: Vec<String> = p
            .grants
            .iter()
            .map(|g| sanitize(&g.describe()).replace('\n', " "))
            .collect();
        match rules.as_slice() {
            [one] => choice(
                &mut out,
                "a",
                format!("allow for this session: {one}"),
                theme::TEXT,
            ),
            many => {
                choice(&mut out, "a", "allow for this session:".into(), theme::TEXT);
                for rule in many {
                    wrap_into(
                        &[Span::styled(rule.clone(), theme::TEXT)],
                        width,
                        &[Span::raw("   · ")],
                        &[Span::raw("     ")],
                        WrapMode::Words,
                        &mut out,
                    );
                }
            }
        }
    }
    if p.grants.iter().any(savable) {
        // A command's rule goes to the project's file; a tool's (it runs outside the
        // sandbox) to rein's data folder, where the project cannot write.
        let place = if p.grants.iter().any(|g| matches!(g, Grant::Tool(_))) {
            "keeps the rule in rein's data folder"
        } else {
            "writes the rule to .rein/config.toml"
        };
        choice(
            &mut out,
            "p",
            format!("always allow in this project ({place})"),
            theme::TEXT,
        );
    }
    choice(&mut out, "n", "deny".into(), theme::TEXT);
    choice(&mut out, "e", "deny and tell rein why".into(), theme::TEXT);
    out
}

impl Widget for &Approvals {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let Some(p) = self.queue.front() else {
            return;
        };
        let (modal_w, text_w) = modal_width(area.width, MAX_WIDTH);
        let body = body_lines(p, text_w);
        let mut reason = Vec::new();
        let reason_text = sanitize(p.reason.trim()).replace('\n', " ");
        if !reason_text.is_empty() {
            wrap_into(
                &[Span::styled(reason_text, theme::WARNING)],
                text_w,
                &[Span::styled("why ", theme::DIM)],
                &[Span::raw("    ")],
                WrapMode::Words,
                &mut reason,
            );
        }
        if p.mcp.as_ref().is_some_and(|c| c.project_server) {
            wrap_into(
                &[Span::styled(PROJECT_SERVER_NOTE, theme::WARNING)],
                text_w,
                &[Span::styled("note ", theme::DIM)],
                &[Span::raw("     ")],
                WrapMode::Words,
                &mut reason,
            );
        }
        let choices = choice_lines(p, text_w);
        let feedback_h: u16 = if self.feedback.is_some() { 3 } else { 0 };
        let fixed = reason.len() as u16 + 1 + choices.len() as u16 + 1 + feedback_h;
        // Borders plus the body; the body shrinks (and scrolls) to keep the rest visible.
        let max_h = area.height.saturating_sub(2).max(area.height.min(8));
        let body_room = max_h.saturating_sub(2 + fixed).max(1);
        let body_h = (body.len() as u16).min(body_room).max(1);
        let modal_h = 2 + body_h + fixed;
        let rect = centred(area, modal_w, modal_h);

        let tool = sanitize(&p.tool).into_owned();
        let mut title = vec![
            Span::styled(" Allow ", theme::TITLE),
            Span::styled(format!("`{tool}`"), theme::TITLE.patch(theme::AGENT)),
            Span::styled("? ", theme::TITLE),
        ];
        if p.subagent.is_some() {
            title.push(Span::styled("(from a subagent) ", theme::DIM));
        }
        let mut block = super::layout::modal_block(Line::from(title));
        if self.batch_total > 1 {
            block = block.title(
                Line::from(Span::styled(
                    format!(" {} of {} ", self.answered + 1, self.batch_total),
                    theme::DIM,
                ))
                .right_aligned(),
            );
        }
        let max_scroll = body.len().saturating_sub(usize::from(body_h));
        let scroll = usize::from(self.scroll).min(max_scroll);
        if max_scroll > 0 {
            block = block.title_bottom(lines_shown(scroll, usize::from(body_h), body.len()));
        }
        let inner = framed(block, rect, buf, true);
        if inner.is_empty() {
            return;
        }
        let mut y = inner.y;
        let bottom = inner.bottom();
        let mut put = |line: &Line<'_>, y: &mut u16| {
            if *y < bottom {
                buf.set_line(inner.x, *y, line, inner.width);
                *y += 1;
            }
        };
        for line in body.iter().skip(scroll).take(usize::from(body_h)) {
            put(line, &mut y);
        }
        y = y.max(inner.y + body_h);
        y += 1;
        for line in &reason {
            put(line, &mut y);
        }
        y += 1;
        for line in &choices {
            put(line, &mut y);
        }
        if let Some(field) = &self.feedback {
            feedback_field(
                field,
                " Why? (Enter sends · Esc goes back) ",
                inner,
                y,
                bottom,
                buf,
            );
        }
    }
}

/// The one-line field a modal opens for words (the approval's "why?", the plan review's
/// "what to change?"): a box titled `title`, 3 rows from `y` across `inner`, drawn only
/// when those rows fit above `bottom`.
pub(super) fn feedback_field(
    field: &tui_textarea::TextArea<'_>,
    title: &'static str,
    inner: Rect,
    y: u16,
    bottom: u16,
    buf: &mut Buffer,
) {
    let area = Rect {
        x: inner.x,
        y,
        width: inner.width,
        height: 3.min(bottom.saturating_sub(y)),
    };
    if area.height < 3 {
        return;
    }
    let frame = Block::default()
        .borders(Borders::ALL)
        .border_style(theme::HINT)
        .title(Span::styled(title, theme::HINT));
    let field_area = frame.inner(area);
    frame.render(area, buf);
    let field_area = Rect {
        x: field_area.x + 1,
        width: field_area.width.saturating_sub(1),
        ..field_area
    };
    field.render(field_area, buf);
}

#[cfg(test)]
mod tests {
    use crate::app::keymap::{keymap, Action, Mode};

    /// The modal names its keys; the keymap must bind them to what the modal says.
    #[test]
    fn the_choices_match_the_keymap() {
        for (key, action) in [
            ("y", Action::Approve),
            ("a", Action::ApproveSession),
            ("p", Action::ApproveProject),
            ("n", Action::Deny),
            ("e", Action::DenyWithFeedback),
        ] {
            let keys = keymap()
                .keys_for(Mode::Approval, action)
                .unwrap_or_default();
            assert!(
                keys.split('/').any(|k| k == key),
                "{key} is not bound to {action:?}: {keys}"
            );
        }
    }
}
