//! The reminder the model gets: time, branch, plan, approval mode, the background commands
//! that run (or ended unread), (at a turn's start) the files someone else changed and
//! the instruction files that changed, and the instruction files of folders the agent began
//! to work in (`nested`), after it.
//!
//! The turn's user message carries one; within a turn, when the branch, the plan or the
//! mode changed since the model was last told, the last tool result before the next
//! request carries a fresh one. Both are stored with their message (a mid-turn one also as
//! an `Entry::Reminder`), so each request of a turn extends the previous one byte for
//! byte. What was told is remembered in `Agent::reminded`.

use std::time::SystemTime;

use super::{Agent, Reminded};
use crate::context::git;
use crate::context::reminder::{self, ReminderInput};
use crate::conversation::Message;
use crate::session::Entry;
use crate::tools::background::TaskState;
use crate::tools::write_todos::Todo;

impl Agent {
    /// The reminder's text as things are now: time, branch, plan and (at a turn's start,
    /// `with_changes`) the files someone else changed. Remembers what it told.
    pub(super) fn reminder(&mut self, with_changes: bool) -> String {
        let state = self.reminded_state();
        self.reminder_of(state, with_changes)
    }

    /// The branch, the plan and the mode as they are now: what a reminder reports.
    pub(super) fn reminded_state(&self) -> Reminded {
        (
            git::git_branch(&self.config.root),
            self.todos(),
            self.mode.get(),
            self.background_lines(),
        )
    }

    /// The background commands as the reminder lists them: running ones, and those that
    /// ended with output the model has not read.
    fn background_lines(&self) -> Vec<String> {
        self.background
            .snapshot()
            .into_iter()
            .filter(|t| t.state == TaskState::Running || t.unread)
            .map(|t| {
                format!(
                    "{} `{}`: {}",
                    t.id,
                    crate::text::clip(&t.command, 80),
                    t.state.describe()
                )
            })
            .collect()
    }

    /// The session's todo list, as it is now.
    pub(super) fn todos(&self) -> Vec<Todo> {
        match self.ctx.todos.lock() {
            Ok(list) => list.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The reminder's text for `branch` and `todos`; remembers what it told.
    pub(super) fn reminder_of(&mut self, state: Reminded, with_changes: bool) -> String {
        let (branch, todos, mode, background) = state;
        // Plan and auto are said every time; default only when it is a change.
        let was = self.reminded.as_ref().map(|r| r.2);
        let mode_line = match mode.reminder() {
            Some(line) => Some(line.to_string()),
            None if was.is_some_and(|was| was != mode) => Some(format!(
                "approval mode: default again (was {}): actions that need approval are put \
                 to the user",
                was.unwrap_or_default()
            )),
            None => None,
        };
        let text = reminder::text(ReminderInput {
            now: SystemTime::now(),
            branch: branch.as_deref(),
            todos: &todos,
            changed: if with_changes {
                &self.between.changed
            } else {
                &[]
            },
            instructions_changed: if with_changes {
                &self.between.instructions_changed
            } else {
                &[]
            },
            mode: mode_line.as_deref(),
            background: &background,
        });
        self.reminded = Some((branch, todos, mode, background));
        text
    }

    /// Within a turn: when the branch or the plan changed since the model was last told
    /// (or a compaction summarised the reminder away), the last tool result carries a
    /// fresh reminder (stored with it, so later requests
    /// repeat the same bytes).
    pub(super) fn remind_if_changed(&mut self) {
        // A tool result, or a handoff note that ends a mid-turn compaction.
        match self.history.messages().last() {
            Some(Message::Tool { .. }) => {}
            Some(Message::User { reminder: None, .. }) => {}
            _ => return,
        }
        let state = self.reminded_state();
        // The background commands ride along but are no reason of their own: the model
        // started them, and each result says how they stand. Folders' instruction files
        // waiting to go out are one.
        let told = self.reminded.as_ref().map(|(b, t, m, _)| (b, t, m));
        let nested = self.nested_text();
        if told == Some((&state.0, &state.1, &state.2)) && nested.is_none() {
            return;
        }
        let mut text = self.reminder_of(state, false);
        if let Some(nested) = &nested {
            // The files first: the reminder's note stays the last words the model reads.
            text = format!("{}\n\n{text}", nested.trim_end());
        }
        if let Some(last) = self.history.last_mut() {
            if last.set_reminder(text.clone()) {
                self.record(Entry::Reminder { text });
                if nested.is_some() {
                    self.nested_sent();
                }
            }
        }
    }
}
