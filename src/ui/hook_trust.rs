//! The question about a project's held hooks (`crate::app::hook_trust`): what the file
//! would run, every command in full, and the keys.
//!
//! Top to bottom: that these commands would run as the user, outside the sandbox; the
//! file, and whether it changed since the user allowed it; each hook's event, matcher and
//! timeout, then its command (sanitized, wrapped at any character so nothing is hidden);
//! the file's lines that cannot be used; what each answer means; the keys. A text taller
//! than the screen scrolls (the keys line stays).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::layout::{keys_line, scrolling_text_modal};
use super::sanitize::sanitize;
use super::theme;
use super::wrap::{wrap_into, wrap_text, WrapMode};
use crate::app::hook_trust::{HookTrust, FOOTER};
use rein_core::hooks::OnFailure;

/// The widest the question gets.
const MAX_WIDTH: u16 = 96;

/// The question's text at `text_w` columns (the keys line not included).
pub fn body_lines(trust: &HookTrust, text_w: usize) -> Vec<Line<'static>> {
    let held = &trust.held;
    let mut out = Vec::new();
    let words =
        |text: String, style, out: &mut Vec<Line<'static>>| wrap_text(text, style, text_w, out);
    let n = held.hooks.len();
    words(
        format!(
            "This project's hooks would run {} command{} as you, outside rein's sandbox:",
            n,
            if n == 1 { "" } else { "s" }
        ),
        theme::STRONG,
        &mut out,
    );
    words(
        sanitize(&held.file.display().to_string()).into_owned(),
        theme::DIM,
        &mut out,
    );
    if held.changed {
        // Why they are asked about again: the file, or a file their commands run.
        let why = match &held.why {
            rein_core::hooks::HeldWhy::Changed | rein_core::hooks::HeldWhy::New => {
                "The file changed since you allowed it.".to_string()
            }
            other => format!("Held: {other}."),
        };
        words(sanitize(&why).into_owned(), theme::WARNING, &mut out);
    }
    for hook in &held.hooks {
        out.push(Line::default());
        let mut what = hook.event.name().to_string();
        if !hook.matcher_text.is_empty() {
            what.push_str(&format!(" [{}]", sanitize(&hook.matcher_text)));
        }
        what.push_str(&format!(" · timeout {}s", hook.timeout.as_secs_f64()));
        if hook.on_failure == OnFailure::Block {
            what.push_str(" · blocks on failure");
        }
        words(what, theme::TEXT, &mut out);
        // The command in full: every line, every character.
        for line in sanitize(&hook.command).split('\n') {
            wrap_into(
                &[Span::styled(line.to_string(), theme::CODE_BLOCK)],
                text_w,
                &[Span::styled("  $ ", theme::DIM)],
                &[Span::raw("    ")],
                WrapMode::Chars,
                &mut out,
            );
        }
    }
    let files = held.file_lines();
    if !files.is_empty() {
        out.push(Line::default());
        words(
            "The project files they run, pinned as they are now:".to_string(),
            theme::TEXT,
            &mut out,
        );
        for file in files {
            words(format!("  {}", sanitize(&file)), theme::DIM, &mut out);
        }
    }
    if !held.problems.is_empty() {
        out.push(Line::default());
        for problem in &held.problems {
            words(sanitize(problem).into_owned(), theme::DIM, &mut out);
        }
    }
    out.push(Line::default());
    words(
        "Allowed, they run in this project until the file or a file they run changes. Held, \
         none of them runs in this session."
            .to_string(),
        theme::DIM,
        &mut out,
    );
    out
}

impl Widget for &HookTrust {
    fn render(self, area: Rect, buf: &mut Buffer) {
        scrolling_text_modal(
            area,
            buf,
            MAX_WIDTH,
            Span::styled(" Project hooks ", theme::TITLE),
            self.scroll,
            |text_w| body_lines(self, text_w),
            |text_w| keys_line(FOOTER, text_w, "a allow · n keep held"),
        );
    }
}
