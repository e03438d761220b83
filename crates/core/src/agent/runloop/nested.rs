//! The instruction files of folders below the project, as the agent works there
//! ([`crate::instructions::nested`]): found after a file tool touched a file in such a
//! folder, said to the user, and sent to the model with the next message the agent adds
//! anyway (the reminder of the last tool result before the next request, or of the next
//! turn's message; see `reminders`), never in the system prompt, whose bytes the provider
//! cached. What was sent is recorded (`Entry::Instructions`) after the message that carried
//! it, so a resumed session neither loses nor repeats it; a compaction that summarised the
//! messages away queues the files to be sent again.

use super::Agent;
use crate::agent::events::AgentEvent;
use crate::conversation::ToolCall;
use crate::instructions::nested::{self, Found, Nested};
use crate::session::Entry;
use crate::tools;

impl Agent {
    /// After a file tool's call ran: the instruction files of the folders down to the file
    /// it touched that were not loaded yet wait for the next reminder, and the user hears
    /// of them. Only `read_file`, `write_file` and `str_replace` count.
    pub(super) fn load_nested(&mut self, call: &ToolCall) {
        let name = call.function.name.as_str();
        if ![
            tools::read_file::NAME,
            tools::write_file::NAME,
            tools::str_replace::NAME,
        ]
        .contains(&name)
        {
            return;
        }
        let Ok(args) = serde_json::from_str::<serde_json::Value>(&call.function.arguments) else {
            return;
        };
        let Some(path) = args.get("path").and_then(|p| p.as_str()) else {
            return;
        };
        let found = self
            .config
            .instructions
            .nested_for(&mut self.nested.loaded, path);
        if found.files.is_empty() && found.notices.is_empty() {
            return;
        }
        self.protect_imports(&found.files);
        self.emit(AgentEvent::InstructionsAdded {
            files: found.files.iter().map(|f| f.label()).collect(),
            notices: found.notices.clone(),
        });
        self.queue_nested(found);
    }

    /// The files among `files` that an instruction file imports steer later sessions as
    /// instruction files do: from now on writing one asks, and commands cannot write it.
    pub(super) fn protect_imports(&self, files: &[crate::instructions::InstructionFile]) {
        let imported: Vec<std::path::PathBuf> = files
            .iter()
            .filter(|f| f.imported_by.is_some())
            .map(|f| f.path.clone())
            .collect();
        if imported.is_empty() {
            return;
        }
        self.config
            .policy
            .add_steering_files(&imported, crate::consent::steering::Kind::Instructions);
        self.config.sandbox.add_steering_files(&imported);
    }

    /// `found` waits for the next reminder.
    fn queue_nested(&mut self, found: Found) {
        let pending = &mut self.nested.pending;
        for path in found.loaded {
            if !pending.loaded.contains(&path) {
                pending.loaded.push(path);
            }
        }
        for file in found.files {
            if !pending.files.iter().any(|f| f.path == file.path) {
                pending.files.push(file);
            }
        }
    }

    /// The text of the files waiting, for the reminder the caller is about to attach;
    /// `None` when none waits. Call [`Self::nested_sent`] once that message is recorded.
    pub(super) fn nested_text(&self) -> Option<String> {
        let text = nested::section(&self.nested.pending.files);
        (!text.is_empty()).then_some(text)
    }

    /// The files that waited went out with the message just recorded: the session file
    /// says so, and none waits now.
    pub(super) fn nested_sent(&mut self) {
        let sent = std::mem::take(&mut self.nested.pending);
        if !sent.loaded.is_empty() {
            self.record(Entry::Instructions { paths: sent.loaded });
        }
    }

    /// A compaction summarised the history: the folders' files in force are read again,
    /// to go out with the next reminder.
    pub(super) fn resend_nested(&mut self) {
        let again = self
            .config
            .instructions
            .nested_again(self.nested.loaded.loaded());
        self.nested.pending = Found::default();
        for notice in &again.notices {
            self.emit(AgentEvent::Notice {
                message: notice.clone(),
            });
        }
        self.queue_nested(again);
    }

    /// A new conversation (`/clear`) has loaded no folder's files.
    pub(super) fn forget_nested(&mut self) {
        self.nested.loaded = Nested::default();
        self.nested.pending = Found::default();
    }
}
