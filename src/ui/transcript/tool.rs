//! A tool call's cell: one compact line with its status mark, its result folded to
//! [`FOLDED_RESULT_LINES`] under a gutter unless expanded, and for a `task` call its
//! subagent's steps and calls. An edit (`write_file`, `str_replace`) adds its counts to the
//! line (`+3 -1`) and its short diff under the result: removed lines red, added green, a
//! line of context around, a new file all added.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::cells::{wrap_text, INDENT};
use crate::app::transcript::{ResultText, SubagentView, ToolCell, ToolStatus, FOLDED_RESULT_LINES};
use crate::ui::sanitize::sanitize;
use crate::ui::theme;
use crate::ui::wrap::{spans_width, truncate, WrapMode};
use rein_core::checkpoint::{DiffKind, ShortDiff};

/// The gutter of a tool's result lines.
pub(super) const RESULT_GUTTER: &str = "  │ ";

/// The mark and style of a tool call's status.
pub fn status_mark(status: &ToolStatus) -> (&'static str, Style) {
    match status {
        ToolStatus::Running => ("▸", theme::AGENT),
        ToolStatus::WaitingApproval => ("?", theme::WARNING),
        ToolStatus::Done { .. } => ("✓", theme::SUCCESS),
        ToolStatus::Failed => ("✗", theme::ERROR),
        ToolStatus::Refused => ("⊘", theme::ERROR),
        ToolStatus::Interrupted => ("⏹", theme::WARNING),
    }
}

/// A tool call: one line (mark, name, key argument, verdict, duration), then its result
/// folded to [`FOLDED_RESULT_LINES`] lines unless expanded.
pub(super) fn tool_lines(c: &ToolCell, expanded: bool, width: u16, out: &mut Vec<Line<'static>>) {
    let w = usize::from(width);
    let (mark, mark_style) = status_mark(&c.status);
    let mut tail: Vec<Span<'static>> = Vec::new();
    if matches!(c.status, ToolStatus::Done { approved: true }) {
        tail.push(Span::styled(" · approved", theme::DIM));
    }
    if let Some(note) = &c.note {
        tail.push(Span::styled(format!(" · {note}"), theme::HINT));
    }
    match c.status {
        ToolStatus::WaitingApproval => {
            tail.push(Span::styled(" · waiting for approval", theme::WARNING))
        }
        ToolStatus::Refused => tail.push(Span::styled(" · refused", theme::ERROR)),
        ToolStatus::Interrupted => tail.push(Span::styled(" · interrupted", theme::WARNING)),
        _ => {}
    }
    if let Some(view) = &c.subagent {
        if view.finished {
            tail.push(Span::styled(subagent_summary(view), theme::DIM));
        }
    }
    if let Some(diff) = &c.diff {
        tail.extend(diff_counts(diff));
    }
    if let Some(d) = c.duration {
        tail.push(Span::styled(
            format!(" · {}", rein_core::text::duration(d)),
            theme::DIM,
        ));
    }
    let name = sanitize(&c.name).into_owned();
    let head_width = 2 + crate::ui::wrap::width(&name);
    let room = w.saturating_sub(head_width + spans_width(&tail) + 1);
    let arg = sanitize(c.key_arg.trim()).replace('\n', "↵");
    let mut spans = vec![
        Span::styled(mark, mark_style),
        Span::raw(" "),
        Span::styled(name, theme::STRONG),
    ];
    if !arg.is_empty() && room > 0 {
        spans.push(Span::raw(" "));
        spans.push(Span::styled(truncate(&arg, room), theme::TEXT));
    }
    spans.extend(tail);
    out.push(Line::from(spans));
    if let (Some(progress), ToolStatus::Running) = (&c.progress, &c.status) {
        let room = w
            .saturating_sub(crate::ui::wrap::width(RESULT_GUTTER))
            .max(1);
        let line = sanitize(progress).replace('\n', " ");
        out.push(Line::from(vec![
            Span::styled(RESULT_GUTTER, theme::DIM),
            Span::styled(truncate(&line, room), theme::DIM),
        ]));
    }
    if let Some(view) = &c.subagent {
        subagent_lines(view, c, expanded, w, out);
    }
    result_lines(c, expanded, width, out);
    if let Some(diff) = &c.diff {
        diff_lines(diff, expanded, w, out);
    }
}

/// " · +3 -1": the lines an edit added and removed (a new file only adds).
fn diff_counts(diff: &ShortDiff) -> Vec<Span<'static>> {
    let mut spans = vec![Span::styled(" · ", theme::DIM)];
    if diff.added > 0 || diff.removed == 0 {
        spans.push(Span::styled(format!("+{}", diff.added), theme::DIFF_ADD));
    }
    if diff.removed > 0 {
        if diff.added > 0 {
            spans.push(Span::raw(" "));
        }
        spans.push(Span::styled(format!("-{}", diff.removed), theme::DIFF_DEL));
    }
    spans
}

/// Diff lines a folded edit shows.
pub const FOLDED_DIFF_LINES: usize = 8;

/// An edit's changed lines under its result: removed in red, added in green, a line of
/// context around, `⋯` between changes far apart; folded to [`FOLDED_DIFF_LINES`].
fn diff_lines(diff: &ShortDiff, expanded: bool, w: usize, out: &mut Vec<Line<'static>>) {
    let shown = if expanded {
        diff.lines.len()
    } else {
        FOLDED_DIFF_LINES.min(diff.lines.len())
    };
    let room = w
        .saturating_sub(crate::ui::wrap::width(RESULT_GUTTER) + 2)
        .max(1);
    for line in &diff.lines[..shown] {
        let (sign, style) = match line.kind {
            DiffKind::Added => ("+ ", theme::DIFF_ADD),
            DiffKind::Removed => ("- ", theme::DIFF_DEL),
            DiffKind::Context => ("  ", theme::DIM),
            DiffKind::Gap => ("⋯ ", theme::DIM),
        };
        let text = sanitize(&line.text).replace('\t', "    ");
        out.push(Line::from(vec![
            Span::styled(RESULT_GUTTER, theme::DIM),
            Span::styled(sign, style),
            Span::styled(truncate(&text, room), style),
        ]));
    }
    let more = diff.lines.len() - shown + diff.more;
    if more > 0 {
        let hint = if shown < diff.lines.len() {
            format!(
                "… {more} more diff line{} (Ctrl-O)",
                if more == 1 { "" } else { "s" }
            )
        } else {
            format!(
                "… {more} more diff line{}",
                if more == 1 { "" } else { "s" }
            )
        };
        out.push(Line::from(vec![
            Span::raw(INDENT),
            Span::styled(truncate(&hint, w.saturating_sub(2)), theme::HINT),
        ]));
    }
}

/// A tool call's result under its line: whole when expanded, else its first lines.
fn result_lines<'a>(c: &'a ToolCell, expanded: bool, width: u16, out: &mut Vec<Line<'static>>) {
    let w = usize::from(width);
    let Some(result) = &c.result else {
        return;
    };
    let trim = |t: &'a str| t.trim_end_matches(['\n', '\r', ' ', '\t']);
    let style = if c.status == ToolStatus::Failed {
        theme::ERROR
    } else {
        theme::DIM
    };
    let gutter = [Span::styled(RESULT_GUTTER, theme::DIM)];
    if let (true, Some(whole)) = (expanded, result.whole()) {
        let whole = trim(whole);
        if !whole.is_empty() {
            wrap_text(whole, style, width, &gutter, &gutter, WrapMode::Chars, out);
        }
        return;
    }
    // Folded, or expanded while the rest of a stored result is read (or could not be).
    let (text, stored_more) = match result {
        ResultText::Whole(text) => (trim(text), 0),
        ResultText::Stored(stored) => (stored.head.as_str(), stored.more_lines),
    };
    if text.is_empty() && stored_more == 0 {
        return;
    }
    let room = w
        .saturating_sub(crate::ui::wrap::width(RESULT_GUTTER))
        .max(1);
    let mut lines = text.split('\n');
    for line in lines.by_ref().take(FOLDED_RESULT_LINES) {
        let clean = sanitize(line.strip_suffix('\r').unwrap_or(line));
        out.push(Line::from(vec![
            gutter[0].clone(),
            Span::styled(truncate(&clean, room), style),
        ]));
    }
    let more = lines.count() + stored_more;
    let plural = if more == 1 { "" } else { "s" };
    let (text, hint) = match result {
        // (The pager shows a result not read back as folded, its hint unchanged.)
        ResultText::Stored(stored) if c.expanded => match &stored.whole {
            Some(Err(why)) => (why.clone(), theme::ERROR),
            _ => (format!("… reading {more} more line{plural}"), theme::HINT),
        },
        _ if more > 0 => (format!("… {more} more line{plural} (Ctrl-O)"), theme::HINT),
        _ => return,
    };
    out.push(Line::from(vec![
        Span::raw(INDENT),
        Span::styled(truncate(&text, w.saturating_sub(2)), hint),
    ]));
}

/// " · 3 model calls · 1.2k tokens": what a finished subagent spent.
fn subagent_summary(view: &SubagentView) -> String {
    let spent = crate::describe::subagent_spent(view.steps, &view.usage, view.stopped_early);
    format!(" · {spent}")
}

/// Under a `task` call: its subagent's calls when expanded, and while it runs, its
/// current step (the running call, or the model call it waits for).
fn subagent_lines(
    view: &SubagentView,
    c: &ToolCell,
    expanded: bool,
    w: usize,
    out: &mut Vec<Line<'static>>,
) {
    let running =
        matches!(c.status, ToolStatus::Running | ToolStatus::WaitingApproval) && !view.finished;
    let call_line = |mark: Span<'static>, name: &str, arg: &str, tail: &str| {
        let name = sanitize(name).into_owned();
        let arg = sanitize(arg.trim()).replace('\n', "↵");
        let used = 6 + crate::ui::wrap::width(&name) + crate::ui::wrap::width(tail);
        let mut spans = vec![
            Span::styled("  ↳ ", theme::DIM),
            mark,
            Span::raw(" "),
            Span::styled(name, theme::STRONG),
        ];
        let room = w.saturating_sub(used + 1);
        if !arg.is_empty() && room > 0 {
            spans.push(Span::raw(" "));
            spans.push(Span::styled(truncate(&arg, room), theme::TEXT));
        }
        if !tail.is_empty() {
            spans.push(Span::styled(tail.to_string(), theme::DIM));
        }
        Line::from(spans)
    };
    if expanded {
        for call in &view.calls {
            let (mark, style) = status_mark(&call.status);
            let tail = match call.status {
                ToolStatus::WaitingApproval => " · waiting for approval",
                ToolStatus::Refused => " · refused",
                ToolStatus::Interrupted => " · interrupted",
                _ => "",
            };
            out.push(call_line(
                Span::styled(mark, style),
                &call.name,
                &call.key_arg,
                tail,
            ));
        }
    }
    if !running {
        return;
    }
    if view.queued {
        out.push(Line::from(vec![
            Span::styled("  ↳ ", theme::DIM),
            Span::styled(
                truncate(crate::describe::SUBAGENT_QUEUED, w.saturating_sub(4)),
                theme::DIM,
            ),
        ]));
        return;
    }
    let step = format!("step {}", view.steps.max(1));
    match view.calls.last() {
        Some(call)
            if matches!(
                call.status,
                ToolStatus::Running | ToolStatus::WaitingApproval
            ) =>
        {
            if !expanded {
                let (mark, style) = status_mark(&call.status);
                let tail = if call.status == ToolStatus::WaitingApproval {
                    format!(" · {step} · waiting for approval")
                } else {
                    format!(" · {step}")
                };
                out.push(call_line(
                    Span::styled(mark, style),
                    &call.name,
                    &call.key_arg,
                    &tail,
                ));
            }
        }
        _ => out.push(Line::from(vec![
            Span::styled("  ↳ ", theme::DIM),
            Span::styled(
                truncate(&format!("thinking… ({step})"), w.saturating_sub(4)),
                theme::DIM,
            ),
        ])),
    }
}
