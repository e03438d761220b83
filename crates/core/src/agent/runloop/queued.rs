//! Messages the user sent while the turn ran, delivered at the next step as Claude Code
//! delivers them: with the tool results.
//!
//! Before each request after the first, the messages at the front of the inbox's queue
//! (`super::super::inbox::Inbox::take_messages`) ride on the step's last tool result, in
//! its reminder slot after any reminder already there
//! ([`crate::context::reminder::with_user_messages`]), and are stored and recorded with it
//! (an `Entry::Reminder`), so each request still extends the previous one byte for byte and
//! the order every server accepts holds (a user message right after a tool result is
//! refused by some). Each goes through the user's UserPromptSubmit hooks first, as a turn's
//! message does: one they block is not sent (the user is told why); the files it mentions
//! (`@path`) follow it, as they follow a turn's message. The front end hears
//! [`AgentEvent::MessageDelivered`] for each, and shows the message where the model got it.
//! A step that does not end in a tool result (the first, one after a Stop hook or a
//! compaction) leaves them queued; what no step takes starts the next turn.

use super::Agent;
use crate::agent::events::AgentEvent;
use crate::context::reminder::with_user_messages;
use crate::conversation::Message;
use crate::session::Entry;

impl Agent {
    /// Give the model the messages queued during the turn with the last tool result.
    pub(super) async fn deliver_queued(&mut self) {
        if !matches!(self.history.messages().last(), Some(Message::Tool { .. })) {
            return;
        }
        let taken = self.inbox.take_messages();
        if taken.is_empty() {
            return;
        }
        let mut sent = Vec::new();
        let mut shown = Vec::new();
        let mut attached = Vec::new();
        for text in taken {
            let mut with_context = text.clone();
            if let Some(said) = self.prompt_hooks(&text).await {
                if let Some(reason) = said.block.or(said.stop) {
                    self.emit(AgentEvent::Hook {
                        event: crate::hooks::Event::UserPromptSubmit.name().to_string(),
                        message: format!("the message was not sent: {reason}"),
                        error: true,
                    });
                    continue;
                }
                if !said.context.is_empty() {
                    with_context.push_str(&format!(
                        "\n(from the user's hooks: {})",
                        said.context.join("\n")
                    ));
                }
            }
            // The files it mentions ride with it, as with a turn's message.
            let files = self.attach_mentions(&text).await;
            for file in &files.files {
                with_context.push_str("\n\n");
                with_context.push_str(&file.text);
            }
            sent.push(self.fit_user_message(with_context, 0));
            attached.push(files);
            shown.push(text);
        }
        if sent.is_empty() {
            return;
        }
        let Some(last) = self.history.last_mut() else {
            return;
        };
        let text = with_user_messages(last.reminder(), &sent);
        if last.set_reminder(text.clone()) {
            self.record(Entry::Reminder { text });
            self.record(Entry::Delivered {
                texts: shown.clone(),
            });
            for (text, files) in shown.into_iter().zip(attached) {
                self.emit(AgentEvent::MessageDelivered { text });
                let paths: Vec<String> = files.files.into_iter().map(|a| a.path).collect();
                if !paths.is_empty() {
                    self.emit(AgentEvent::Attached { paths });
                }
                for message in files.notices {
                    self.emit(AgentEvent::Notice { message });
                }
            }
        }
    }
}
