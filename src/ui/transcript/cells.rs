//! A cell's lines: each kind of cell laid out at a width, once per width and version, and
//! kept in its [`RenderCache`] (the tool cells' are in [`super::tool`]). The reply streams
//! as Markdown, re-rendering only what follows its last complete block.

use std::cell::Ref;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::tool::{tool_lines, RESULT_GUTTER};
use crate::app::keymap::{keymap, Action, Mode as KeyMode};
use crate::app::transcript::{
    AssistantCell, CachedRender, Cell, CompactionCell, NoticeCell, NoticeKind, ReasoningCell,
    RenderCache, UserCell, Versioned,
};
use crate::ui::markdown;
use crate::ui::sanitize::sanitize;
use crate::ui::theme;
use crate::ui::wrap::{truncate, wrap_into, WrapMode};

/// The indent of a cell's text under its mark.
pub(super) const INDENT: &str = "  ";

/// The lines of `cell` at `width`, from its cache (filled first when stale).
pub fn cell_lines(cell: &Cell, width: u16) -> Ref<'_, [Line<'static>]> {
    match cell {
        Cell::User(c) => cached(&c.cache, width, c.version(), |out| {
            user_lines(c, width, out)
        }),
        Cell::Assistant(c) => assistant_lines(c, width),
        Cell::Reasoning(c) => cached(&c.cache, width, c.version(), |out| {
            reasoning_lines(c, c.expanded, width, out)
        }),
        Cell::Tool(c) => cached(&c.cache, width, c.version(), |out| {
            tool_lines(c, c.expanded, width, out)
        }),
        Cell::Notice(c) => cached(&c.cache, width, c.version(), |out| {
            notice_lines(c, width, out)
        }),
        Cell::Compaction(c) => cached(&c.cache, width, c.version(), |out| {
            compaction_lines(c, c.expanded, width, out)
        }),
    }
}

/// Whether `cell` has something folded that [`expanded_cell_lines`] lays out whole.
pub fn folded(cell: &Cell) -> bool {
    match cell {
        Cell::Reasoning(c) => !c.expanded,
        Cell::Tool(c) => !c.expanded,
        Cell::Compaction(c) => !c.expanded,
        Cell::User(_) | Cell::Assistant(_) | Cell::Notice(_) => false,
    }
}

/// The lines of a [`folded`] cell at `width` as if it were expanded (the transcript
/// pager's view), laid out anew; any other cell's are its [`cell_lines`].
pub fn expanded_cell_lines(cell: &Cell, width: u16) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    match cell {
        Cell::Reasoning(c) if !c.expanded => reasoning_lines(c, true, width, &mut out),
        Cell::Tool(c) if !c.expanded => tool_lines(c, true, width, &mut out),
        Cell::Compaction(c) if !c.expanded => compaction_lines(c, true, width, &mut out),
        _ => out = cell_lines(cell, width).to_vec(),
    }
    out
}

/// Blank lines between two neighbouring cells: none between tool calls, so a run of them
/// reads as a list.
pub fn gap(above: &Cell, below: &Cell) -> usize {
    match (above, below) {
        (Cell::Tool(_), Cell::Tool(_)) => 0,
        _ => 1,
    }
}

fn cached<'c>(
    cache: &'c RenderCache,
    width: u16,
    key: u64,
    build: impl FnOnce(&mut Vec<Line<'static>>),
) -> Ref<'c, [Line<'static>]> {
    let fresh = matches!(&*cache.0.borrow(), Some(c) if c.width == width && c.version == key);
    if !fresh {
        let mut lines = Vec::new();
        build(&mut lines);
        *cache.0.borrow_mut() = Some(Box::new(CachedRender {
            width,
            version: key,
            lines,
            stable_bytes: 0,
            stable_lines: 0,
            open_fence: None,
            joined: false,
        }));
    }
    Ref::map(cache.0.borrow(), |c| {
        c.as_ref().map_or(&[][..], |c| &c.lines[..])
    })
}

fn assistant_lines(c: &Versioned<AssistantCell>, width: u16) -> Ref<'_, [Line<'static>]> {
    markdown::render_cached(&c.text, width, c.version(), &mut c.cache.0.borrow_mut());
    Ref::map(c.cache.0.borrow(), |c| {
        c.as_ref().map_or(&[][..], |c| &c.lines[..])
    })
}

/// Wrap `text` line by line: `first` before the first screen line, `rest` before the
/// others.
pub(super) fn wrap_text(
    text: &str,
    style: Style,
    width: u16,
    first: &[Span<'static>],
    rest: &[Span<'static>],
    mode: WrapMode,
    out: &mut Vec<Line<'static>>,
) {
    let clean = sanitize(text);
    let mut prefix = first;
    for line in clean.split('\n') {
        wrap_into(
            &[Span::styled(line, style)],
            usize::from(width),
            prefix,
            rest,
            mode,
            out,
        );
        prefix = rest;
    }
}

/// The user's message; each attached file's `@path` is a chip (the file never shows).
fn user_lines(c: &UserCell, width: u16, out: &mut Vec<Line<'static>>) {
    let first = [Span::styled("› ", theme::USER_MARKER)];
    let rest = [Span::raw(INDENT)];
    user_text(c, width, &first, &rest, out);
    if let Some(from) = &c.expanded_from {
        let note = format!("expanded from {from}");
        let indent = [Span::raw(INDENT)];
        wrap_text(
            &note,
            theme::DIM,
            width,
            &indent,
            &indent,
            WrapMode::Words,
            out,
        );
    }
}

/// The user's words, each attached mention (`@path`) a chip.
fn user_text(
    c: &UserCell,
    width: u16,
    first: &[Span<'static>],
    rest: &[Span<'static>],
    out: &mut Vec<Line<'static>>,
) {
    if c.mentions.is_empty() {
        wrap_text(
            c.text.trim_end(),
            theme::USER,
            width,
            first,
            rest,
            WrapMode::Words,
            out,
        );
        return;
    }
    let clean = sanitize(c.text.trim_end());
    let mut prefix: &[Span<'static>] = first;
    for line in clean.split('\n') {
        let mut spans = Vec::new();
        let mut at = 0;
        for (range, path) in rein_core::conversation::mention::mentions(line) {
            if !c.mentions.iter().any(|m| m == path) {
                continue;
            }
            spans.push(Span::styled(&line[at..range.start], theme::USER));
            spans.push(Span::styled(&line[range.clone()], theme::MENTION));
            at = range.end;
        }
        spans.push(Span::styled(&line[at..], theme::USER));
        wrap_into(
            &spans,
            usize::from(width),
            prefix,
            rest,
            WrapMode::Words,
            out,
        );
        prefix = rest;
    }
}

fn reasoning_lines(c: &ReasoningCell, expanded: bool, width: u16, out: &mut Vec<Line<'static>>) {
    let text = c.text.trim();
    if expanded {
        let first = [Span::styled("∴ ", theme::REASONING)];
        let rest = [Span::raw(INDENT)];
        wrap_text(
            text,
            theme::REASONING,
            width,
            &first,
            &rest,
            WrapMode::Words,
            out,
        );
        return;
    }
    let n = text.lines().count();
    let plural = if n == 1 { "" } else { "s" };
    let key = keymap()
        .keys_for(KeyMode::Global, Action::ToggleReasoning)
        .and_then(|keys| keys.split('/').next().map(str::to_string))
        .unwrap_or_else(|| "Alt-R".to_string());
    let summary = format!("∴ thinking… ({n} line{plural}, {key})");
    out.push(Line::styled(
        truncate(&summary, usize::from(width)),
        theme::REASONING,
    ));
}

fn notice_lines(c: &NoticeCell, width: u16, out: &mut Vec<Line<'static>>) {
    let (mark, style) = match c.kind {
        NoticeKind::Info => ("• ", theme::DIM),
        NoticeKind::Retry => ("↻ ", theme::WARNING),
        NoticeKind::Error => ("✗ ", theme::ERROR),
        NoticeKind::Interrupted => ("⏹ ", theme::WARNING),
    };
    let first = [Span::styled(mark, style)];
    let rest = [Span::raw(INDENT)];
    wrap_text(
        c.text.trim_end(),
        style,
        width,
        &first,
        &rest,
        WrapMode::Words,
        out,
    );
}

/// A compaction: its summary, then its handoff note folded to one line ("▸ handoff note
/// (24 lines, Ctrl-O)"), or the whole note under a gutter when expanded.
fn compaction_lines(c: &CompactionCell, expanded: bool, width: u16, out: &mut Vec<Line<'static>>) {
    let w = usize::from(width);
    let summary = if c.auto {
        format!("{} · automatic", c.summary.trim())
    } else {
        c.summary.trim().to_string()
    };
    let first = [Span::styled("⇊ ", theme::AGENT)];
    let rest = [Span::raw(INDENT)];
    wrap_text(
        &summary,
        theme::TEXT,
        width,
        &first,
        &rest,
        WrapMode::Words,
        out,
    );
    let note = c.note.trim();
    if note.is_empty() {
        return;
    }
    if expanded {
        out.push(Line::from(vec![
            Span::raw(INDENT),
            Span::styled(truncate("▾ handoff note", w.saturating_sub(2)), theme::DIM),
        ]));
        let gutter = [Span::styled(RESULT_GUTTER, theme::DIM)];
        wrap_text(
            note,
            theme::TEXT,
            width,
            &gutter,
            &gutter,
            WrapMode::Words,
            out,
        );
        return;
    }
    let n = note.lines().count();
    let plural = if n == 1 { "" } else { "s" };
    let key = keymap()
        .keys_for(KeyMode::Global, Action::ToggleToolOutput)
        .and_then(|keys| keys.split('/').next().map(str::to_string))
        .unwrap_or_else(|| "Ctrl-O".to_string());
    let text = format!("▸ handoff note ({n} line{plural}, {key})");
    out.push(Line::from(vec![
        Span::raw(INDENT),
        Span::styled(truncate(&text, w.saturating_sub(2)), theme::HINT),
    ]));
}
