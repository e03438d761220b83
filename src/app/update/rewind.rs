//! What the rewind layer's outcomes and the rewind's events mean for the dashboard:
//! opening it (Esc twice on an empty input, `/rewind`), the preview, the rewind itself
//! (never while a turn runs), the files' report and the conversation's fork (its message
//! back in the input for editing), and `/diff`.

use std::time::{Duration, Instant};

use crate::app::event::Effect;
use crate::app::rewind::{Preview, RewindOutcome, RewindState, RewindTurn, RewindWhat};
use crate::app::state::App;
use crate::app::transcript::NoticeKind;
use rein_core::checkpoint::{Outcome, RestoreReport};

/// Two Esc presses this close on an empty input open the rewind layer.
pub const DOUBLE_ESC: Duration = Duration::from_millis(800);

/// Said after the first Esc on an empty input.
pub const ESC_AGAIN_HINT: &str = "Esc again to rewind a turn";

/// Said when a rewind is asked for while a turn runs.
const BUSY: &str = "rewinding waits for the turn to end (Esc interrupts it)";

/// Esc while idle: on an empty input, a second press soon after the first opens the layer.
pub fn esc(app: &mut App, now: Instant, effects: &mut Vec<Effect>) {
    if !app.composer.textarea.is_empty() {
        app.hint = None;
        return;
    }
    match app.last_esc.take() {
        Some(first) if now.saturating_duration_since(first) <= DOUBLE_ESC => open(app, effects),
        _ => {
            app.last_esc = Some(now);
            app.hint = Some(ESC_AGAIN_HINT.to_string());
        }
    }
}

/// `/rewind`, or Esc Esc: ask the loop for the session's turns.
pub fn open(app: &mut App, effects: &mut Vec<Effect>) {
    if app.busy() {
        app.hint = Some(BUSY.to_string());
        return;
    }
    app.hint = None;
    effects.push(Effect::OpenRewind);
}

/// The turns came.
pub fn turns(app: &mut App, turns: Result<Vec<RewindTurn>, String>) {
    match turns.map(RewindState::open) {
        Ok(Some(layer)) => {
            app.rewind = Some(layer);
            app.hint = None;
        }
        Ok(None) => app.hint = Some(crate::app::rewind::NOTHING_TO_REWIND.to_string()),
        Err(e) => app.hint = Some(e),
    }
}

/// A key's outcome in the layer.
pub fn outcome(app: &mut App, outcome: RewindOutcome, effects: &mut Vec<Effect>) {
    match outcome {
        RewindOutcome::Stay => {}
        RewindOutcome::Close => app.rewind = None,
        RewindOutcome::Preview { turn, what } => effects.push(Effect::PreviewRewind { turn, what }),
        RewindOutcome::Confirm { .. } if app.busy() => app.hint = Some(BUSY.to_string()),
        RewindOutcome::Confirm { turn, what } => {
            app.rewind = None;
            app.hint = Some(format!("taking back turn {turn} ({})…", what.label()));
            effects.push(Effect::Rewind { turn, what });
        }
    }
}

/// The dry run came.
pub fn preview(app: &mut App, turn: u64, what: RewindWhat, preview: Preview) {
    if let Some(layer) = app.rewind.as_mut() {
        layer.previewed(turn, what, preview);
    }
}

/// The conversation went back: the new session is shown; the message goes back in the
/// input.
pub fn forked(app: &mut App, turn: u64, message: String) {
    app.transcript.notice(
        NoticeKind::Info,
        format!(
            "the conversation went back to before turn {turn}, in a new session (the \
             original is unchanged); your message is back in the input to edit and send"
        ),
    );
    app.composer.set_text(&message);
    if app
        .hint
        .as_deref()
        .is_some_and(|h| h.starts_with("taking back"))
    {
        app.hint = None;
    }
}

/// The agent restored the files.
pub fn rewound(app: &mut App, to_turn: Option<u64>, report: Result<RestoreReport, String>) {
    if app
        .hint
        .as_deref()
        .is_some_and(|h| h.starts_with("taking back"))
    {
        app.hint = None;
    }
    let report = match report {
        Ok(report) => report,
        Err(e) => {
            app.transcript.notice(
                NoticeKind::Error,
                format!("the files could not be rewound: {e}"),
            );
            return;
        }
    };
    let what = match to_turn {
        Some(turn) => format!("files back to before turn {turn}"),
        None => "the last rewind taken back".to_string(),
    };
    app.transcript
        .notice(NoticeKind::Info, summary(&what, &report));
}

/// "files back to before turn 2: restored src/a.rs; removed gen/x.rs; kept src/b.rs
/// (changed since …)".
pub fn summary(what: &str, report: &RestoreReport) -> String {
    if report.paths.is_empty() {
        return format!("{what}: no file needed to change");
    }
    let mut parts: Vec<String> = Vec::new();
    let mut group = |word: &str, pick: &dyn Fn(&Outcome) -> bool| {
        let paths: Vec<String> = report
            .paths
            .iter()
            .filter(|p| pick(&p.outcome))
            .map(|p| p.path.to_string())
            .collect();
        if !paths.is_empty() {
            parts.push(format!("{word} {}", paths.join(", ")));
        }
    };
    group("restored", &|o| matches!(o, Outcome::Restored));
    group("removed", &|o| matches!(o, Outcome::Removed));
    group("already as they were:", &|o| {
        matches!(o, Outcome::Unchanged)
    });
    let mut text = format!("{what}: {}", parts.join("; "));
    for p in &report.paths {
        match &p.outcome {
            Outcome::Kept { why } => text.push_str(&format!("\nkept {}: {why}", p.path)),
            Outcome::Failed { why } => text.push_str(&format!("\nfailed {}: {why}", p.path)),
            _ => {}
        }
    }
    text
}

/// The diff came (`/diff`).
pub fn diff(app: &mut App, diff: Result<String, String>) {
    match diff {
        Ok(text) if text.is_empty() => app
            .transcript
            .notice(NoticeKind::Info, "the session's turns changed no file"),
        Ok(text) => app
            .transcript
            .notice(NoticeKind::Info, text.trim_end().to_string()),
        Err(e) => app
            .transcript
            .notice(NoticeKind::Error, format!("no diff: {e}")),
    }
}
