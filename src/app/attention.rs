//! When the dashboard calls the user back: an approval that starts waiting, a long turn
//! that ends, weighed against whether the terminal has the focus.
//!
//! The terminal reports focus changes (crossterm's focus reporting, `AppEvent::Focus`);
//! `app.focused` stays `None` while it never has (a terminal without focus reporting).
//! [`Notifications`] is the setting (`ui.notifications`, `ui.notify_after_secs`):
//!
//! | `ui.notifications` | approval waits                  | turn of ≥ N s ends |
//! |--------------------|---------------------------------|--------------------|
//! | `unfocused`        | unless the terminal has focus   | when it has not    |
//! | `always`           | yes                             | yes                |
//! | `never`            | the bell only (`ui.bell`)       | no                 |
//!
//! With `unfocused` and a terminal that never reported focus, approvals notify as they
//! always did and turns do not (the focus is unknown). The update step only decides; the
//! loop rings the bell and posts the OSC 9 notification (`Effect::Notify`, `ui.bell`).

use std::time::{Duration, Instant};

use super::event::Effect;
use super::state::{App, Cell};
use crate::describe;

/// The default of `ui.notify_after_secs`: a turn shorter than this ends without a call.
pub const DEFAULT_NOTIFY_AFTER: Duration = Duration::from_secs(5);

/// `ui.notifications`: when a waiting approval or a finished turn notifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NotifyWhen {
    /// When the terminal does not have the focus (the default).
    #[default]
    Unfocused,
    /// Whatever the focus.
    Always,
    /// Never a desktop notification (the bell still rings for approvals, if `ui.bell`).
    Never,
}

impl NotifyWhen {
    /// The setting's value as the config file has it (`config::NOTIFY_WHEN`); `None` for
    /// anything else.
    pub fn from_name(name: &str) -> Option<NotifyWhen> {
        [NotifyWhen::Unfocused, NotifyWhen::Always, NotifyWhen::Never]
            .into_iter()
            .find(|w| w.name() == name)
    }

    /// The setting's value in the config file.
    pub fn name(self) -> &'static str {
        match self {
            NotifyWhen::Unfocused => "unfocused",
            NotifyWhen::Always => "always",
            NotifyWhen::Never => "never",
        }
    }
}

/// The notification settings the update step decides with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notifications {
    pub when: NotifyWhen,
    /// A turn that took at least this long notifies when it ends.
    pub after: Duration,
}

impl Default for Notifications {
    fn default() -> Self {
        Notifications {
            when: NotifyWhen::default(),
            after: DEFAULT_NOTIFY_AFTER,
        }
    }
}

/// An approval starts waiting: whether to notify.
pub fn approval_notifies(app: &App) -> bool {
    match app.notifications.when {
        NotifyWhen::Always | NotifyWhen::Never => true,
        NotifyWhen::Unfocused => app.focused != Some(true),
    }
}

/// The turn that began at `app.turn_started` ended at `now` and nothing waits to run:
/// notify when it was long and the setting and the focus say so.
pub fn turn_finished(app: &mut App, now: Instant, effects: &mut Vec<Effect>) {
    let Some(started) = app.turn_started.take() else {
        return;
    };
    let took = now.saturating_duration_since(started);
    if took < app.notifications.after {
        return;
    }
    let notify = match app.notifications.when {
        NotifyWhen::Always => true,
        NotifyWhen::Unfocused => app.focused == Some(false),
        NotifyWhen::Never => false,
    };
    if notify {
        effects.push(Effect::Notify {
            message: done_message(app, took),
        });
    }
}

/// "rein is done (42s): the reply's first line".
fn done_message(app: &App, took: Duration) -> String {
    let reply = app.transcript.cells.iter().rev().find_map(|c| match c {
        Cell::Assistant(a) if !a.text.trim().is_empty() => Some(a.text.as_str()),
        Cell::User(_) => Some(""),
        _ => None,
    });
    let secs = took.as_secs();
    let took = if secs < 60 {
        format!("{secs}s")
    } else {
        format!("{}m {:02}s", secs / 60, secs % 60)
    };
    match reply.filter(|r| !r.is_empty()) {
        Some(reply) => format!(
            "rein is done ({took}): {}",
            describe::clip(&describe::one_line(reply), 120)
        ),
        None => format!("rein is done ({took})"),
    }
}
