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
//! always did and turns do not (the focus is unknown). This leaf only decides, from what
//! it is given; the router turns a decision into `Effect::Notify`, and the loop rings the
//! bell and posts the OSC 9 notification (`ui.bell`).

use std::time::Duration;

use rein_core::text;

/// The default of `ui.notify_after_secs`: a turn shorter than this ends without a call.
pub const DEFAULT_NOTIFY_AFTER: Duration =
    Duration::from_secs(rein_core::config::DEFAULT_NOTIFY_AFTER_SECS);

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

impl Notifications {
    /// An approval starts waiting, the terminal's focus as it last reported: whether to
    /// notify.
    pub fn approval_notifies(&self, focused: Option<bool>) -> bool {
        match self.when {
            NotifyWhen::Always | NotifyWhen::Never => true,
            NotifyWhen::Unfocused => focused != Some(true),
        }
    }

    /// A turn that took `took` ended and nothing waits to run: the notification to post,
    /// when it was long and the setting and the focus say so. `reply` is the turn's reply,
    /// if it had one: its first line goes in the message.
    pub fn turn_finished(
        &self,
        focused: Option<bool>,
        took: Duration,
        reply: Option<&str>,
    ) -> Option<String> {
        if took < self.after {
            return None;
        }
        let notify = match self.when {
            NotifyWhen::Always => true,
            NotifyWhen::Unfocused => focused == Some(false),
            NotifyWhen::Never => false,
        };
        notify.then(|| done_message(took, reply))
    }
}

/// "rein is done (42s): the reply's first line".
fn done_message(took: Duration, reply: Option<&str>) -> String {
    let secs = took.as_secs();
    let took = if secs < 60 {
        format!("{secs}s")
    } else {
        format!("{}m {:02}s", secs / 60, secs % 60)
    };
    match reply.filter(|r| !r.is_empty()) {
        Some(reply) => format!(
            "rein is done ({took}): {}",
            text::clip(&text::one_line(reply), 120)
        ),
        None => format!("rein is done ({took})"),
    }
}
