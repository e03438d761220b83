//! The `/context` layer: where the context window's tokens go, from the agent's last
//! count (`app.context`), redrawn with every new one while it is open.
//!
//! Top to bottom: the tokens in the window, of how many, and the share (`~` in front while
//! they are estimated); the compaction threshold as a share and in tokens; one row per part
//! of a request (system prompt, tool schemas, user messages, assistant messages, tool
//! results, handoff note, reminders) with its tokens, its share of the whole and a bar; how
//! the figures are measured (the characters per token, learnt from the server's usage
//! reports or assumed) and how many messages the history holds; the keys. Before the first
//! count it says there are no figures yet. It only draws: the keys are the update step's.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::gauge::tokens;
use super::layout::{centred, framed, modal_width};
use super::theme;
use super::wrap::{truncate, width, wrap_into, wrap_text, WrapMode};
use crate::app::keymap::{keymap, Action, Mode as KeyMode};
use rein_core::agent::{ContextStats, Prices, UsageTotals};

/// The widest the modal gets.
const MAX_WIDTH: u16 = 72;
/// The widest a share bar gets.
const MAX_BAR: usize = 24;
/// Columns of a part's name ("assistant messages").
const NAME_W: usize = 18;
/// Columns of a token count ("12.5k") and of a share ("100%").
const TOKENS_W: usize = 6;
const SHARE_W: usize = 4;

/// The layer over the dashboard, for the last count (`None` before the first).
pub struct ContextModal<'a> {
    pub stats: Option<&'a ContextStats>,
    /// The conversation's usage: the prompt cache's hit rate and, with prices, the cost.
    pub usage: &'a UsageTotals,
    pub prices: Option<Prices>,
}

/// "3.6", or "4" for a whole number.
fn rate(chars_per_token: f64) -> String {
    let r = (chars_per_token * 10.0).round() / 10.0;
    if r.fract() == 0.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

/// `part` of `whole` as a percentage: "42%", "<1%" for a sliver, "0%" for nothing.
fn percent(part: u64, whole: u64) -> String {
    if part == 0 || whole == 0 {
        return "0%".to_string();
    }
    let pct = part as f64 * 100.0 / whole as f64;
    if pct < 0.5 {
        "<1%".to_string()
    } else {
        format!("{pct:.0}%")
    }
}

/// `text` right-aligned in `w` columns.
fn right(text: &str, w: usize) -> String {
    format!("{text:>w$}")
}

/// The parts of a request, named, in the order they are sent.
fn parts(stats: &ContextStats) -> [(&'static str, u64); 9] {
    let b = &stats.breakdown;
    [
        ("system prompt", b.system),
        ("AGENTS.md files", b.instructions),
        ("tool schemas", b.tools),
        ("user messages", b.user),
        ("assistant messages", b.assistant),
        ("reasoning", b.reasoning),
        ("tool results", b.tool_results),
        ("handoff note", b.summary),
        ("reminders", b.reminder),
    ]
}

/// The modal's text for `stats` at `text_w` columns (the keys line not included).
pub fn body_lines(
    stats: Option<&ContextStats>,
    usage: &UsageTotals,
    prices: Option<Prices>,
    text_w: usize,
) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let Some(stats) = stats else {
        wrap_into(
            &[Span::styled(
                "No figures yet: the agent counts the context when it starts and after every reply.",
                theme::DIM,
            )],
            text_w,
            &[],
            &[],
            WrapMode::Words,
            &mut out,
        );
        return out;
    };
    let window = stats.window.max(1);
    let ratio = (stats.tokens as f64 / window as f64).min(1.0);
    let compact_at = if stats.compact_at.is_finite() {
        stats.compact_at.clamp(0.0, 1.0)
    } else {
        rein_core::context::DEFAULT_COMPACT_AT
    };
    let approx = if stats.estimated { "~" } else { "" };
    let total = format!(
        "{approx}{} of {} tokens · {approx}{}",
        tokens(stats.tokens),
        tokens(window),
        percent(stats.tokens, window)
    );
    let words =
        |text: String, style, out: &mut Vec<Line<'static>>| wrap_text(text, style, text_w, out);
    words(
        total,
        theme::gauge(ratio, compact_at).patch(theme::STRONG),
        &mut out,
    );
    let threshold = (window as f64 * compact_at) as u64;
    words(
        format!(
            "compaction at {:.0}% · {} tokens",
            compact_at * 100.0,
            tokens(threshold)
        ),
        theme::DIM,
        &mut out,
    );
    out.push(Line::default());

    let parts = parts(stats);
    let whole: u64 = parts.iter().map(|(_, n)| n).sum();
    let fixed = NAME_W + 2 + TOKENS_W + 2 + SHARE_W;
    let bar_room = text_w.saturating_sub(fixed + 2).min(MAX_BAR);
    let name_w = NAME_W.min(text_w.saturating_sub(TOKENS_W + SHARE_W + 4).max(1));
    for (name, n) in parts {
        let mut spans = vec![
            Span::styled(
                format!("{:<name_w$}", truncate(name, name_w)),
                if n == 0 { theme::DIM } else { theme::TEXT },
            ),
            Span::raw("  "),
            Span::styled(right(&tokens(n), TOKENS_W), theme::TEXT),
            Span::raw("  "),
            Span::styled(right(&percent(n, whole), SHARE_W), theme::DIM),
        ];
        if bar_room >= 4 && n > 0 {
            let filled = ((n as f64 / whole.max(1) as f64) * bar_room as f64).round() as usize;
            // A sliver still shows, thinner than a whole cell.
            let bar = if filled == 0 {
                "▏".to_string()
            } else {
                "█".repeat(filled)
            };
            spans.push(Span::raw("  "));
            spans.push(Span::styled(bar, theme::SHARE_BAR));
        }
        out.push(Line::from(spans));
    }
    out.push(Line::default());

    let measured = if stats.estimated {
        format!(
            "at {} characters a token, estimated: the server has not reported usage",
            rate(stats.chars_per_token)
        )
    } else {
        format!(
            "at {} characters a token, learnt from the server's usage reports",
            rate(stats.chars_per_token)
        )
    };
    words(measured, theme::DIM, &mut out);
    let plural = if stats.messages == 1 { "" } else { "s" };
    words(
        format!(
            "{} message{plural} in the history, the system prompt included",
            stats.messages
        ),
        theme::DIM,
        &mut out,
    );
    for line in usage.describe(prices) {
        words(line, theme::DIM, &mut out);
    }
    out
}

/// The keys line: "Esc/q/Ctrl-C close", from the keymap.
fn keys_line(text_w: usize) -> Line<'static> {
    let (keys, desc) = keymap()
        .hint(KeyMode::Context, Action::CloseContext)
        .map(|(k, d)| (k, d.to_string()))
        .unwrap_or_else(|| ("Esc".to_string(), "close".to_string()));
    let keys = truncate(&keys, text_w);
    let desc = truncate(&format!(" {desc}"), text_w.saturating_sub(width(&keys)));
    Line::from(vec![
        Span::styled(keys, theme::HINT),
        Span::styled(desc, theme::DIM),
    ])
}

impl Widget for ContextModal<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (modal_w, text_w) = modal_width(area.width, MAX_WIDTH);
        let body = body_lines(self.stats, self.usage, self.prices, text_w);
        // Borders 2, a blank line above the body, one above the keys, the keys.
        let wanted = u16::try_from(body.len())
            .unwrap_or(u16::MAX)
            .saturating_add(5);
        let rect = centred(area, modal_w, wanted);
        let block = super::layout::modal_block(Span::styled(" Context window ", theme::TITLE));
        let inner = framed(block, rect, buf, true);
        if inner.is_empty() {
            return;
        }
        let bottom = inner.bottom();
        // The keys take the last row; the body gets what is above it.
        let keys_y = bottom.saturating_sub(1);
        let top = inner.y + u16::from(inner.height > 3);
        for (y, line) in (top..keys_y).zip(&body) {
            buf.set_line(inner.x, y, line, inner.width);
        }
        buf.set_line(
            inner.x,
            keys_y,
            &keys_line(usize::from(inner.width)),
            inner.width,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_percentages_are_short() {
        assert_eq!(rate(4.0), "4");
        assert_eq!(rate(3.61), "3.6");
        assert_eq!(percent(0, 100), "0%");
        assert_eq!(percent(1, 1000), "<1%");
        assert_eq!(percent(42, 100), "42%");
    }
}
