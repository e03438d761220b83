//! The transcript pane: cells laid out into lines, only as many as the screen shows.
//!
//! Each cell renders to wrapped lines once per width and version and keeps them in its
//! [`RenderCache`]; the version is [`Versioned::version`], which every change to a cell
//! (a status, a result, the `expanded` flag) bumps, so the key is the version alone. A
//! compaction shows its summary line and, folded, the size of its handoff note; expanded,
//! the note itself. Drawing walks up from the last cell, using each cell's cached height, until
//! the window `scroll.from_bottom` lines above the end is covered ([`window`]); the cells
//! above are never touched, so a frame costs the same with 20 cells or 20 000.
//! `from_bottom` is clamped to the real top here, and the clamped value is left in
//! [`Transcript::shown_from_bottom`] for the update step's next scroll.

use std::cell::Ref;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::markdown;
use super::sanitize::sanitize;
use super::theme;
use super::wrap::{spans_width, truncate, wrap_into, WrapMode};
use crate::app::keymap::{keymap, Action, Mode as KeyMode};
use crate::app::transcript::{
    AssistantCell, CachedRender, Cell, CompactionCell, NoticeCell, NoticeKind, ReasoningCell,
    RenderCache, ResultText, SubagentView, ToolCell, ToolStatus, Transcript, UserCell, Versioned,
    FOLDED_RESULT_LINES,
};
/// The indent of a cell's text under its mark.
const INDENT: &str = "  ";
/// The gutter of a tool's result lines.
const RESULT_GUTTER: &str = "  │ ";

/// The lines of `cell` at `width`, from its cache (filled first when stale).
pub fn cell_lines(cell: &Cell, width: u16) -> Ref<'_, [Line<'static>]> {
    match cell {
        Cell::User(c) => cached(&c.cache, width, c.version(), |out| {
            user_lines(c, width, out)
        }),
        Cell::Assistant(c) => assistant_lines(c, width),
        Cell::Reasoning(c) => cached(&c.cache, width, c.version(), |out| {
            reasoning_lines(c, width, out)
        }),
        Cell::Tool(c) => cached(&c.cache, width, c.version(), |out| {
            tool_lines(c, width, out)
        }),
        Cell::Notice(c) => cached(&c.cache, width, c.version(), |out| {
            notice_lines(c, width, out)
        }),
        Cell::Compaction(c) => cached(&c.cache, width, c.version(), |out| {
            compaction_lines(c, width, out)
        }),
    }
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
fn wrap_text(
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
        for (range, path) in crate::conversation::mention::mentions(line) {
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

fn reasoning_lines(c: &ReasoningCell, width: u16, out: &mut Vec<Line<'static>>) {
    let text = c.text.trim();
    if c.expanded {
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
fn compaction_lines(c: &CompactionCell, width: u16, out: &mut Vec<Line<'static>>) {
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
    if c.expanded {
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
fn tool_lines<'a>(c: &'a ToolCell, width: u16, out: &mut Vec<Line<'static>>) {
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
    if let Some(d) = c.duration {
        tail.push(Span::styled(
            format!(" · {}", crate::describe::duration(d)),
            theme::DIM,
        ));
    }
    let name = sanitize(&c.name).into_owned();
    let head_width = 2 + super::wrap::width(&name);
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
    if let Some(view) = &c.subagent {
        subagent_lines(view, c, w, out);
    }

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
    if let (true, Some(whole)) = (c.expanded, result.whole()) {
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
    let room = w.saturating_sub(super::wrap::width(RESULT_GUTTER)).max(1);
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
fn subagent_lines(view: &SubagentView, c: &ToolCell, w: usize, out: &mut Vec<Line<'static>>) {
    let running =
        matches!(c.status, ToolStatus::Running | ToolStatus::WaitingApproval) && !view.finished;
    let call_line = |mark: Span<'static>, name: &str, arg: &str, tail: &str| {
        let name = sanitize(name).into_owned();
        let arg = sanitize(arg.trim()).replace('\n', "↵");
        let used = 6 + super::wrap::width(&name) + super::wrap::width(tail);
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
    if c.expanded {
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
            if !c.expanded {
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

/// Which part of the transcript a view shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The topmost cell drawn.
    pub first: usize,
    /// Lines of that cell's block (its gap above, then its lines) above the view.
    pub skip: usize,
    /// `from_bottom`, clamped to what the transcript holds.
    pub from_bottom: usize,
}

/// The window of `height` lines ending `from_bottom` lines above the end of `count`
/// blocks, walking up from the last block and asking `block_height(i)` only for the
/// blocks it needs. A transcript shorter than the view starts at its top.
pub fn window(
    count: usize,
    height: usize,
    from_bottom: usize,
    mut block_height: impl FnMut(usize) -> usize,
) -> Window {
    let needed = from_bottom.saturating_add(height);
    let mut acc = 0usize;
    let mut first = count;
    while first > 0 && acc < needed {
        first -= 1;
        acc += block_height(first);
    }
    let from_bottom = if acc < needed {
        from_bottom.min(acc.saturating_sub(height))
    } else {
        from_bottom
    };
    Window {
        first,
        skip: acc.saturating_sub(from_bottom + height),
        from_bottom,
    }
}

/// The window of `height` lines starting `from_top` lines below the top of `count`
/// blocks, walking down from the first block and asking `block_height(i)` only for the
/// blocks down to the view's bottom (and one more, to know whether the end is near).
/// Returns it with `from_top` clamped when the end came first, and, when the walk
/// reached the end, how many lines are below the view.
pub fn window_from_top(
    count: usize,
    height: usize,
    from_top: usize,
    mut block_height: impl FnMut(usize) -> usize,
) -> (Window, usize, Option<usize>) {
    let needed = from_top.saturating_add(height);
    let mut heights = Vec::new();
    let mut acc = 0usize;
    while heights.len() < count && acc <= needed {
        let h = block_height(heights.len());
        heights.push(h);
        acc += h;
    }
    let reached_end = heights.len() == count;
    let from_top = if reached_end {
        from_top.min(acc.saturating_sub(height))
    } else {
        from_top
    };
    // The block holding line `from_top`.
    let mut above = 0usize;
    let mut first = 0usize;
    while first + 1 < heights.len() && above + heights[first] <= from_top {
        above += heights[first];
        first += 1;
    }
    let below = reached_end.then(|| acc.saturating_sub(from_top + height));
    (
        Window {
            first,
            skip: from_top - above.min(from_top),
            from_bottom: below.unwrap_or(0),
        },
        from_top,
        below,
    )
}

/// The block of cell `i`: the gap above it, then its lines.
fn block_height(cells: &[Cell], i: usize, width: u16) -> usize {
    let gap = if i > 0 {
        gap(&cells[i - 1], &cells[i])
    } else {
        0
    };
    gap + cell_lines(&cells[i], width).len()
}

impl Widget for &Transcript {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.is_empty() {
            return;
        }
        let cells = &self.cells;
        let width = area.width;
        let height = usize::from(area.height);
        // Anchored at the top, the label cannot count what lies below without laying it
        // all out: it says so without a number until the view nears the end.
        let (win, label) = match self.scroll.from_top {
            Some(n) => {
                let (win, from_top, below) =
                    window_from_top(cells.len(), height, n, |i| block_height(cells, i, width));
                self.shown_from_top.set(Some(from_top));
                self.shown_from_bottom.set(below);
                let label = match below {
                    Some(0) => None,
                    Some(b) => Some(format!(" ↓ {b} more lines (End) ")),
                    None => Some(" ↓ more (End) ".to_string()),
                };
                (win, label)
            }
            None => {
                let win = window(cells.len(), height, self.scroll.from_bottom, |i| {
                    block_height(cells, i, width)
                });
                self.shown_from_top.set(None);
                self.shown_from_bottom.set(Some(win.from_bottom));
                let label = (win.from_bottom > 0)
                    .then(|| format!(" ↓ {} more lines (End) ", win.from_bottom));
                (win, label)
            }
        };
        let mut skip = win.skip;
        let mut y = area.top();
        for i in win.first..cells.len() {
            let gap = if i > 0 {
                gap(&cells[i - 1], &cells[i])
            } else {
                0
            };
            for _ in 0..gap {
                if skip > 0 {
                    skip -= 1;
                } else {
                    y += 1;
                }
            }
            if y >= area.bottom() {
                break;
            }
            let lines = cell_lines(&cells[i], width);
            // Skipping into a slice is free, however long the cell.
            let from = skip.min(lines.len());
            skip -= from;
            let room = usize::from(area.bottom() - y);
            for line in lines[from..].iter().take(room) {
                buf.set_line(area.left(), y, line, width);
                y += 1;
            }
        }
        if let Some(label) = label {
            let w = super::wrap::width(&label) as u16;
            if w <= area.width {
                buf.set_string(
                    area.right() - w,
                    area.bottom() - 1,
                    label,
                    theme::HINT.add_modifier(ratatui::style::Modifier::REVERSED),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn window_at_the_bottom_touches_only_visible_blocks() {
        let mut asked = Vec::new();
        let win = window(20_000, 10, 0, |i| {
            asked.push(i);
            3
        });
        assert_eq!(asked, [19_999, 19_998, 19_997, 19_996]);
        assert_eq!(
            win,
            Window {
                first: 19_996,
                skip: 2,
                from_bottom: 0
            }
        );
    }

    #[test]
    fn window_scrolled_up() {
        // Blocks of 5 lines; a view of 4 ending 12 lines above the end needs the last 16
        // lines: blocks 16..20 (20 lines), the first 4 of them above the view.
        let win = window(20, 4, 12, |_| 5);
        assert_eq!(
            win,
            Window {
                first: 16,
                skip: 4,
                from_bottom: 12
            }
        );
    }

    #[test]
    fn window_clamps_past_the_top() {
        let win = window(3, 4, 1_000, |_| 2);
        assert_eq!(
            win,
            Window {
                first: 0,
                skip: 0,
                from_bottom: 2
            }
        );
        // Shorter than the view: starts at the top.
        let win = window(2, 10, 0, |_| 2);
        assert_eq!(
            win,
            Window {
                first: 0,
                skip: 0,
                from_bottom: 0
            }
        );
    }

    #[test]
    fn tool_cell_folds_its_result() {
        let mut cell = Cell::tool("1", "bash", "cargo test", Instant::now());
        if let Cell::Tool(t) = &mut cell {
            t.status = ToolStatus::Done { approved: true };
            t.duration = Some(Duration::from_millis(1234));
            t.result = Some("a\nb\nc\nd\ne\n".into());
        }
        assert_eq!(
            texts(&cell_lines(&cell, 40)),
            [
                "✓ bash cargo test · approved · 1.2s",
                "  │ a",
                "  │ b",
                "  │ c",
                "  … 2 more lines (Ctrl-O)"
            ]
        );
        // Expanding changes the key, so the cache is not reused.
        if let Cell::Tool(t) = &mut cell {
            t.expanded = true;
        }
        assert_eq!(cell_lines(&cell, 40).len(), 6);
    }

    #[test]
    fn long_key_argument_is_cut_to_the_line() {
        let cell = Cell::tool("1", "bash", "x".repeat(100), Instant::now());
        let lines = cell_lines(&cell, 30);
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].width(), 30);
        assert!(texts(&lines)[0].ends_with('…'));
    }

    #[test]
    fn reasoning_collapses_to_one_line() {
        let mut cell = Cell::reasoning("one\ntwo\nthree", true);
        assert_eq!(
            texts(&cell_lines(&cell, 60)),
            ["∴ thinking… (3 lines, Alt-R)"]
        );
        if let Cell::Reasoning(r) = &mut cell {
            r.expanded = true;
        }
        assert_eq!(texts(&cell_lines(&cell, 60)), ["∴ one", "  two", "  three"]);
    }

    #[test]
    fn caches_are_kept_per_width() {
        let cell = Cell::user("hello there, this wraps at a small width");
        let a = cell_lines(&cell, 12).len();
        let b = cell_lines(&cell, 80).len();
        assert!(a > b);
        if let Cell::User(u) = &cell {
            assert_eq!(u.cache.0.borrow().as_ref().unwrap().width, 80);
        }
    }

    #[test]
    fn a_window_from_the_top_asks_only_for_the_blocks_down_to_the_view() {
        // 1 000 blocks of 3 lines; a view of 10 lines 7 lines below the top.
        let mut asked = 0;
        let (win, from_top, below) = window_from_top(1000, 10, 7, |_| {
            asked += 1;
            3
        });
        assert!(asked <= 7, "{asked} blocks measured");
        assert_eq!((win.first, win.skip, from_top, below), (2, 1, 7, None));
        // Near the end: clamped, and what is below is counted.
        let (win, from_top, below) = window_from_top(4, 10, 50, |_| 3);
        assert_eq!((from_top, below), (2, Some(0)));
        assert_eq!((win.first, win.skip), (0, 2));
        let (_, from_top, below) = window_from_top(4, 10, 1, |_| 3);
        assert_eq!((from_top, below), (1, Some(1)));
        // Shorter than the view.
        let (win, from_top, below) = window_from_top(2, 10, 5, |_| 3);
        assert_eq!((win.first, win.skip, from_top, below), (0, 0, 0, Some(0)));
    }
}
