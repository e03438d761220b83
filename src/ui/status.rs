//! The status line and the key hints: what the agent is doing now and for how long,
//! which model, "not recording" when the session file cannot be written, the prompt-cache hit rate (last request and conversation, once the
//! server reports it), which project and branch, whether the sandbox is on, and when the context
//! count is only estimated because the server sends no usage; and the keys that matter at
//! the moment. The clock is a parameter (`now`), so the line is a pure function
//! of the state and the time.

use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::sanitize::sanitize;
use super::theme;
use super::wrap::{truncate, width};
use crate::app::keymap::{keymap, Action, Mode as KeyMode};
use crate::app::state::Activity;
use crate::app::{App, Layer};
use rein_core::permissions::ApprovalMode;

/// The key hints for this state: (first key, what it does).
pub fn hints(app: &App) -> Vec<(String, String)> {
    let keys = keymap();
    Layer::top(app)
        .footer(app.busy())
        .iter()
        .filter_map(|&(mode, action)| {
            let (label, desc) = keys.hint(mode, action)?;
            let first = label
                .split(['/', ' '])
                .next()
                .unwrap_or_default()
                .to_string();
            Some((first, desc.to_string()))
        })
        .collect()
}

/// The hints as a line that fits `width`: whole hints only.
pub fn hints_line(app: &App, width_avail: usize) -> Line<'static> {
    let mut spans = Vec::new();
    let mut used = 0;
    for (i, (key, what)) in hints(app).into_iter().enumerate() {
        let sep = if i == 0 { "" } else { " · " };
        let w = width(sep) + width(&key) + 1 + width(&what);
        if used + w > width_avail {
            break;
        }
        used += w;
        spans.push(Span::styled(sep, theme::DIM));
        spans.push(Span::styled(key, theme::HINT));
        spans.push(Span::styled(format!(" {what}"), theme::DIM));
    }
    Line::from(spans)
}

/// "3s", "12s", "2m 05s".
pub fn elapsed(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s}s")
    } else {
        format!("{}m {:02}s", s / 60, s % 60)
    }
}

/// Said in place of "ready" while no model is configured (the screen above says how to
/// set one).
pub const NO_MODEL: &str = "○ no model configured: see above";

/// What the agent is doing, as spans: a mark, the words, the time so far. `configured`:
/// a model is set (idle is "ready" only then).
fn activity(a: &Activity, configured: bool, now: Instant) -> Vec<Span<'static>> {
    let since = |t: &Instant| elapsed(now.saturating_duration_since(*t));
    match a {
        Activity::Idle if !configured => vec![Span::styled(NO_MODEL, theme::WARNING)],
        Activity::Idle => vec![Span::styled("● ready", theme::DIM)],
        Activity::Thinking { since: t } => {
            vec![Span::styled(
                format!("◆ thinking {}", since(t)),
                theme::AGENT,
            )]
        }
        Activity::Streaming { since: t } => {
            vec![Span::styled(
                format!("◆ streaming {}", since(t)),
                theme::AGENT,
            )]
        }
        Activity::Tool {
            name,
            detail,
            since: t,
        } => {
            let mut spans = vec![Span::styled(
                format!("▸ running {} for {}", sanitize(name), since(t)),
                theme::AGENT,
            )];
            let detail = sanitize(detail.trim()).replace('\n', " ");
            if !detail.is_empty() {
                spans.push(Span::styled(
                    format!(" · {}", truncate(&detail, 40)),
                    theme::DIM,
                ));
            }
            spans
        }
        Activity::WaitingApproval { since: t } => vec![Span::styled(
            format!("? waiting for approval {}", since(t)),
            theme::WARNING,
        )],
        Activity::Compacting {
            messages, since: t, ..
        } => {
            vec![Span::styled(
                format!("◆ {}… {}", crate::describe::compacting(*messages), since(t)),
                theme::AGENT,
            )]
        }
    }
}

/// The approval mode when it is not the default, with the key that changes it: "plan
/// mode (Shift-Tab)".
fn mode(mode: ApprovalMode) -> Option<Span<'static>> {
    let style = match mode {
        ApprovalMode::Default => return None,
        ApprovalMode::Plan => theme::HINT,
        ApprovalMode::Auto => theme::WARNING,
    };
    let key = keymap()
        .keys_for(KeyMode::Global, Action::CycleMode)
        .and_then(|keys| keys.split('/').next().map(str::to_string));
    let text = match key {
        Some(key) => format!("{mode} mode ({key})"),
        None => format!("{mode} mode"),
    };
    Some(Span::styled(text, style))
}

/// Said when the context count is rein's estimate because the server sends no usage; the
/// short form when the whole does not fit.
pub const CTX_ESTIMATED: &str = "ctx estimated: the server sends no usage";
const CTX_ESTIMATED_SHORT: &str = "ctx estimated";

/// The status line: activity, model, project (branch), sandbox, and whether the context
/// count is estimated.
pub struct StatusLine<'a> {
    pub app: &'a App,
    pub now: Instant,
}

impl StatusLine<'_> {
    /// The line for `width` columns. The note on the context count goes before the
    /// sandbox (after it when the sandbox is a warning, which matters more); it shortens,
    /// then goes, when it would be cut, and what follows it is cut as usual.
    pub fn line(&self, width: usize) -> Line<'static> {
        let gauge = &self.app.gauge;
        // Before the first reply every count is a guess (the gauge's `~` says so); the
        // note is for a server that never reports usage.
        if !(gauge.estimated && gauge.no_server_usage) {
            return self.spans(None).0;
        }
        [Some(CTX_ESTIMATED), Some(CTX_ESTIMATED_SHORT)]
            .into_iter()
            .map(|note| self.spans(note))
            .find(|(_, needed)| *needed <= width)
            .map_or_else(|| self.spans(None).0, |(line, _)| line)
    }

    /// The line with `ctx_note`, and the columns it takes up to the end of the note.
    fn spans(&self, ctx_note: Option<&str>) -> (Line<'static>, usize) {
        let info = &self.app.info;
        let sep = || Span::styled(" │ ", theme::DIM);
        let configured = info.setup.is_none();
        let mut spans = activity(&self.app.activity, configured, self.now);
        spans.extend(mode(self.app.mode).into_iter().flat_map(|m| [sep(), m]));
        let running = self
            .app
            .background
            .iter()
            .filter(|t| t.state == rein_core::tools::background::TaskState::Running)
            .count();
        if running > 0 {
            spans.push(sep());
            spans.push(Span::styled(format!("{running} bg"), theme::HINT));
        }
        // What the language servers see in the files the session touched.
        match self.app.diagnostics {
            (0, 0) => {}
            (0, warnings) => {
                spans.push(sep());
                spans.push(Span::styled(format!("{warnings} warn"), theme::DIM));
            }
            (errors, warnings) => {
                spans.push(sep());
                let text = if warnings > 0 {
                    format!("{errors} err {warnings} warn")
                } else {
                    format!("{errors} err")
                };
                spans.push(Span::styled(text, theme::WARNING));
            }
        }
        // Without a model the activity says so already.
        if configured || !info.model.trim().is_empty() {
            spans.push(sep());
            let model = if info.model.trim().is_empty() {
                "no model".to_string()
            } else {
                sanitize(&info.model).into_owned()
            };
            spans.push(Span::styled(model, theme::TEXT));
        }
        if self.app.not_recording {
            spans.push(sep());
            spans.push(Span::styled("not recording", theme::WARNING));
        }
        // Whether the provider's prompt cache works, once the server says what it cached.
        if let Some(cache) = self.app.usage.cache_summary() {
            spans.push(sep());
            spans.push(Span::styled(cache, theme::DIM));
        }
        spans.push(sep());
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        spans.push(Span::styled(
            rein_core::text::shorten_home(&info.project, home.as_deref()),
            theme::TEXT,
        ));
        if let Some(branch) = &info.branch {
            spans.push(Span::styled(format!(" ({})", sanitize(branch)), theme::DIM));
        }
        let note = ctx_note.map(|n| [sep(), Span::styled(n.to_string(), theme::DIM)]);
        let mut needed = 0;
        if info.sandbox_ok {
            if let Some(note) = note.clone() {
                spans.extend(note);
                needed = Line::from(spans.clone()).width();
            }
            spans.push(sep());
            spans.push(Span::styled(
                format!("sandbox {}", info.sandbox),
                theme::DIM,
            ));
        } else {
            spans.push(sep());
            let sandbox = format!("sandbox {}", info.sandbox);
            spans.push(Span::styled(sandbox, theme::WARNING));
            if let Some(note) = note {
                spans.extend(note);
                needed = Line::from(spans.clone()).width();
            }
        }
        (Line::from(spans), needed)
    }
}

impl Widget for StatusLine<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let w = usize::from(area.width);
        let line = self.line(w);
        // Too long: cut the end and show that it was cut.
        if line.width() > w && w > 0 {
            buf.set_line(area.x, area.y, &line, area.width.saturating_sub(1));
            buf.set_string(area.right() - 1, area.y, "…", theme::DIM);
        } else {
            buf.set_line(area.x, area.y, &line, area.width);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_footer_shows_what_matters_now() {
        let mut app = App::new(Default::default(), 1000);
        let idle = hints(&app);
        assert_eq!(idle[0], ("Enter".to_string(), "send".to_string()));
        app.activity = Activity::Thinking {
            since: Instant::now(),
        };
        let busy = hints(&app);
        assert_eq!(
            busy[0],
            ("Esc".to_string(), "interrupt the agent".to_string())
        );
        assert!(!busy.iter().any(|(k, _)| k == "Enter"));
    }

    #[test]
    fn elapsed_is_short() {
        assert_eq!(elapsed(Duration::from_secs(12)), "12s");
        assert_eq!(elapsed(Duration::from_secs(125)), "2m 05s");
    }
}
