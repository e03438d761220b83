//! The session file as the agent writes it: every committed message (with where the file
//! holds it, for a front end that reads a long result back), every other entry, and the
//! session's title. A write that fails stops the recording at a clean point, said once
//! ([`AgentEvent::RecordingStopped`]); the work goes on unrecorded.

use super::Agent;
use crate::agent::events::AgentEvent;
use crate::conversation::Message;
use crate::session::{Entry, EntryAt, SessionWriter};

impl Agent {
    /// Record `message` and append it to the history; where the session file holds it.
    pub(super) fn push(&mut self, message: Message) -> Option<EntryAt> {
        let offset = self.recording(|w| w.append_message(&message)).flatten();
        self.history.push(message);
        let writer = self.session.recorder.as_ref()?;
        Some(EntryAt {
            path: std::sync::Arc::from(writer.path()),
            offset: offset?,
        })
    }

    /// Write one entry to the session file; a failure is reported once and the session
    /// goes on unrecorded rather than stopping the work. After the first failed write
    /// nothing more is appended: entries that would still fit (a full disk takes small
    /// ones) would leave holes a resume could not see, so the file stops at a clean point
    /// and says as much as it holds.
    pub(super) fn record(&mut self, entry: Entry) {
        self.recording(|w| w.append(&entry));
    }

    /// Run `write` on the session writer unless recording stopped; its value, or `None`
    /// when it failed (which stops recording, said once) or nothing is recorded.
    pub(super) fn recording<T>(
        &mut self,
        write: impl FnOnce(&mut SessionWriter) -> std::io::Result<T>,
    ) -> Option<T> {
        if self.session.recorder_failed {
            return None;
        }
        let writer = self.session.recorder.as_mut()?;
        match write(writer) {
            Ok(value) => Some(value),
            Err(e) => {
                self.session.recorder_failed = true;
                let message = format!(
                    "the session file {} cannot be written ({e}); recording stopped here, \
                     so resuming it goes on from this point, without what follows",
                    writer.path().display()
                );
                self.emit(AgentEvent::RecordingStopped { message });
                None
            }
        }
    }

    /// Title the session file.
    pub(super) fn rename(&mut self, title: &str) {
        let result = match self.session.recorder.as_mut() {
            Some(writer) => writer.rename(title).map(|()| writer.id().to_string()),
            None => {
                self.emit(AgentEvent::Notice {
                    message: "this conversation is not recorded, so it has no name".to_string(),
                });
                return;
            }
        };
        match result {
            Ok(id) => self.emit(AgentEvent::Notice {
                message: format!("session {id} is now called \"{}\"", title.trim()),
            }),
            Err(e) => self.emit(AgentEvent::Error {
                message: format!("the session could not be renamed: {e}"),
            }),
        }
    }
}
