//! The context gauge: tokens in the window over the model's limit, always visible.
//!
//! A ratatui [`Gauge`] coloured by band (green below 60 %, yellow below the compaction
//! threshold, red beyond), with that threshold (the agent's `compact_at`, 85 % unless
//! configured) marked by a `│` in the bar, and a label such as `42% · 53.7k/128k` (`~` in
//! front when the count is rein's estimate). While the model's server is still being
//! asked for the window there is no share to draw: the gauge says
//! `window: asking the server…` (shortened where the space is narrow) until it knows.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::{Gauge as GaugeWidget, Widget};

use super::theme;
use super::wrap::width;
use crate::app::state::Gauge;

/// A token count in a few characters: `950`, `53.7k`, `128k`, `1.2M`.
pub use rein_core::text::tokens;

/// What the gauge says while the server is asked for the window.
pub const ASKING: &str = "window: asking the server…";
/// The same where the space is narrow.
const ASKING_SHORT: &str = "window: asking…";

/// `42% · 53.7k/128k`, with `~` in front when estimated; [`ASKING`] while the window is
/// not known.
pub fn label(g: &Gauge) -> String {
    if g.asking {
        return ASKING.to_string();
    }
    let pct = (g.used() as f64 * 100.0 / g.limit as f64).round();
    let approx = if g.estimated { "~" } else { "" };
    format!("{approx}{pct}% · {}/{}", tokens(g.used()), tokens(g.limit))
}

impl Widget for &Gauge {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.is_empty() {
            return;
        }
        if self.asking {
            let prefix = "ctx ";
            let room = usize::from(area.width).saturating_sub(width(prefix));
            let text = if room >= width(ASKING) {
                ASKING
            } else {
                ASKING_SHORT
            };
            buf.set_stringn(area.x, area.y, prefix, area.width.into(), theme::DIM);
            let x = area.x + (width(prefix) as u16).min(area.width);
            buf.set_stringn(x, area.y, text, room, theme::DIM);
            return;
        }
        let ratio = self.ratio();
        let style = theme::gauge(ratio, self.compact_at);
        let text = label(self);
        let label_w = width(&text) as u16;
        let prefix = "ctx ";
        let prefix_w = width(prefix) as u16;
        // The bar gets what is left, if that is enough to read.
        let bar_w = area.width.saturating_sub(label_w + prefix_w + 1);
        let mut x = area.x;
        if bar_w >= 5 {
            buf.set_string(x, area.y, prefix, theme::DIM);
            x += prefix_w;
            let bar = Rect::new(x, area.y, bar_w, 1);
            GaugeWidget::default()
                .gauge_style(style)
                .ratio(ratio)
                .use_unicode(true)
                .label(Span::raw(""))
                .render(bar, buf);
            // ratatui leaves a gap in the fill where its (here empty) label would go.
            let end = bar.x + (f64::from(bar_w) * ratio).floor() as u16;
            let label_col = bar.x + bar_w / 2;
            if label_col < end {
                buf[(label_col, area.y)]
                    .set_symbol(ratatui::symbols::block::FULL)
                    .set_style(style);
            }
            // The empty part as a dim track, so the bar's length shows on any background.
            for cx in end..bar.right() {
                let cell = &mut buf[(cx, area.y)];
                if cx > end || cell.symbol() == " " {
                    cell.set_symbol("░").set_style(theme::DIM);
                }
            }
            let mark = bar.x + (f64::from(bar_w) * self.compact_at).round() as u16;
            if mark < bar.right() {
                buf[(mark, area.y)]
                    .set_symbol("│")
                    .set_style(theme::WARNING);
            }
            x += bar_w + 1;
        }
        buf.set_string(x, area.y, text, style);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_are_short() {
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(53_700), "53.7k");
        assert_eq!(tokens(128_000), "128k");
        assert_eq!(tokens(1_200_000), "1.2M");
    }

    #[test]
    fn the_mark_follows_the_agents_threshold() {
        let mark_at = |compact_at: f64| {
            let mut g = Gauge::new(100_000);
            g.compact_at = compact_at;
            let area = Rect::new(0, 0, 40, 1);
            let mut buf = Buffer::empty(area);
            (&g).render(area, &mut buf);
            (0..40).find(|&x| buf[(x, 0)].symbol() == "│")
        };
        let (low, high) = (mark_at(0.5).unwrap(), mark_at(0.85).unwrap());
        assert!(low < high, "{low} {high}");
    }

    #[test]
    fn while_the_window_is_asked_the_gauge_says_so() {
        let mut g = Gauge::new(128_000);
        g.asking = true;
        assert_eq!(label(&g), ASKING);
        let row = |w: u16| {
            let area = Rect::new(0, 0, w, 1);
            let mut buf = Buffer::empty(area);
            (&g).render(area, &mut buf);
            (0..w)
                .map(|x| buf[(x, 0)].symbol().to_string())
                .collect::<String>()
        };
        assert_eq!(row(40).trim(), "ctx window: asking the server…");
        assert_eq!(row(24).trim(), "ctx window: asking…");
        g.learnt(8_192);
        assert_eq!(label(&g), "0% · 0/8.2k");
    }

    #[test]
    fn label_says_percent_and_counts() {
        let mut g = Gauge::new(128_000);
        g.reported = 53_760;
        assert_eq!(label(&g), "42% · 53.8k/128k");
        g.estimated = true;
        assert_eq!(label(&g), "~42% · 53.8k/128k");
    }
}
