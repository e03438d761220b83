//! Semantic styles, all from the terminal's own ANSI palette (no RGB), so the dashboard
//! follows the user's colour scheme and works on light and dark backgrounds alike.
//!
//! Panes ask for a meaning (`DIM` for secondary text, `ERROR` for failures), never for a
//! colour; changing the look means changing this file only.

use ratatui::style::{Color, Modifier, Style};

/// Ordinary text: the terminal's own foreground.
pub const TEXT: Style = Style::new();
/// Secondary text: timings, URLs, borders, folded output.
pub const DIM: Style = Style::new().add_modifier(Modifier::DIM);
/// Hints and keys the user can press.
pub const HINT: Style = Style::new().fg(Color::Cyan);
/// Something went well: a finished tool, a low gauge.
pub const SUCCESS: Style = Style::new().fg(Color::Green);
/// Something failed.
pub const ERROR: Style = Style::new().fg(Color::Red);
/// Needs attention: a waiting approval, a sandbox that is off, a filling gauge.
pub const WARNING: Style = Style::new().fg(Color::Yellow);
/// The agent itself: its activity, its markers.
pub const AGENT: Style = Style::new().fg(Color::Magenta);
/// What the user wrote.
pub const USER: Style = Style::new().add_modifier(Modifier::BOLD);
/// The marker in front of the user's messages.
pub const USER_MARKER: Style = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
/// The model's reasoning.
pub const REASONING: Style = Style::new()
    .add_modifier(Modifier::DIM)
    .add_modifier(Modifier::ITALIC);

/// Markdown: headings, emphasis, code, links, quotes.
pub const HEADING: Style = Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD);
pub const EMPHASIS: Style = Style::new().add_modifier(Modifier::ITALIC);
pub const STRONG: Style = Style::new().add_modifier(Modifier::BOLD);
pub const STRIKE: Style = Style::new().add_modifier(Modifier::CROSSED_OUT);
pub const INLINE_CODE: Style = Style::new().fg(Color::Cyan);
pub const CODE_BLOCK: Style = Style::new().fg(Color::Cyan);
pub const CODE_GUTTER: Style = DIM;
pub const LINK_TEXT: Style = Style::new()
    .fg(Color::Blue)
    .add_modifier(Modifier::UNDERLINED);
pub const LINK_URL: Style = DIM;
pub const QUOTE: Style = Style::new().fg(Color::Green).add_modifier(Modifier::ITALIC);
pub const LIST_MARKER: Style = Style::new().fg(Color::Magenta);
pub const RULE: Style = DIM;

/// Diffs in the approval modal.
pub const DIFF_ADD: Style = Style::new().fg(Color::Green);
pub const DIFF_DEL: Style = Style::new().fg(Color::Red);
pub const DIFF_HUNK: Style = Style::new().fg(Color::Cyan);
pub const DIFF_FILE: Style = Style::new().add_modifier(Modifier::BOLD);

/// Panes: borders and titles.
pub const BORDER: Style = DIM;
pub const TITLE: Style = Style::new().add_modifier(Modifier::BOLD);
/// The modal's frame, which must stand out from the dashboard under it.
pub const MODAL_BORDER: Style = Style::new().fg(Color::Yellow);
/// A key in a list of choices (`y`, `a`, `n`).
pub const KEY: Style = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);

/// A part's share of the context (the `/context` layer's bars).
pub const SHARE_BAR: Style = Style::new().fg(Color::Blue);

/// The characters of a path the `@` finder's query matched.
pub const FINDER_MATCH: Style = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
/// A file the user attached with `@path`, in the transcript: a chip, not the file.
pub const MENTION: Style = Style::new()
    .fg(Color::Cyan)
    .add_modifier(Modifier::REVERSED);

/// The selected row of a list (the session picker).
pub const SELECTED: Style = Style::new().add_modifier(Modifier::REVERSED);

/// The todo list.
pub const TODO_DONE: Style = Style::new()
    .add_modifier(Modifier::DIM)
    .add_modifier(Modifier::CROSSED_OUT);
pub const TODO_ACTIVE: Style = Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD);
pub const TODO_PENDING: Style = TEXT;

/// The gauge's colour for a fill ratio: green, then yellow from 60 % (or the threshold if
/// lower), red from the compaction threshold `compact_at` (85 % by default).
pub fn gauge(ratio: f64, compact_at: f64) -> Style {
    if ratio < 0.60_f64.min(compact_at) {
        SUCCESS
    } else if ratio < compact_at {
        WARNING
    } else {
        ERROR
    }
}
