//! The turn's first phase: the user's text becomes the message the model gets.
//!
//! `/mcp__SERVER__PROMPT args` is replaced by the server's prompt; the UserPromptSubmit
//! hooks may block it (nothing is sent) or add context; what the user's own commands
//! printed goes first; the files and the servers' resources it mentions ride with it
//! (`@path`, `@server:uri`), and so do the folders' instruction files waiting and the
//! reminder. The message is fitted to the window (which may wait for the server's answer)
//! and pushed; the turn's loop guard and stops start afresh.

use std::sync::Arc;

use super::Agent;
use crate::agent::events::{AgentEvent, Prompt, TurnOutcome};
use crate::context::budget;
use crate::conversation::Message;

impl Agent {
    /// Phase 1 of a turn: the user's `prompt` sent as the turn's user message. `Err`: how
    /// the turn ends before any request (the prompt could not be had, a hook blocked it,
    /// the user interrupted the wait for the window).
    pub(super) async fn open_turn(&mut self, prompt: Prompt) -> Result<(), TurnOutcome> {
        let Prompt { text, images } = prompt;
        let (sent, hooks_context) = self.prompt_for_model(&text).await?;
        let attached = self.attach_mentions(&sent).await;
        let paths: Vec<String> = attached.files.iter().map(|a| a.path.clone()).collect();
        let ready = self
            .push_user_message(&sent, attached.files, images, hooks_context)
            .await;
        self.stops.reset();
        self.emit(AgentEvent::TurnStarted { text });
        if !paths.is_empty() {
            self.emit(AgentEvent::Attached { paths });
        }
        for message in attached.notices {
            self.emit(AgentEvent::Notice { message });
        }
        if !ready {
            self.keep_partial(String::new(), "interrupted by the user");
            return Err(TurnOutcome::Interrupted);
        }
        Ok(())
    }

    /// What the model gets of `text` (an MCP prompt's text, or `text`), and the context
    /// the SessionStart and UserPromptSubmit hooks give it. `Err`: it is not sent.
    async fn prompt_for_model(
        &mut self,
        text: &str,
    ) -> Result<(String, Option<String>), TurnOutcome> {
        // `/mcp__SERVER__PROMPT args`: the server's prompt is what the model gets (the
        // transcript keeps what was typed); one that cannot be had sends nothing.
        let sent = match self.mcp_prompt(text).await {
            Some(Ok(prompt)) => prompt,
            Some(Err(message)) => {
                self.emit(AgentEvent::Error { message });
                return Err(TurnOutcome::Failed);
            }
            None => text.to_string(),
        };
        // The user's UserPromptSubmit hooks see the prompt first: a block keeps it from
        // the model (the user sees why); their context rides with the reminder.
        let mut context = std::mem::take(&mut self.hook_context);
        if let Some(said) = self.prompt_hooks(&sent).await {
            if let Some(reason) = said.block.or(said.stop) {
                self.emit(AgentEvent::Hook {
                    event: crate::hooks::Event::UserPromptSubmit.name().to_string(),
                    message: format!("the prompt was not sent: {reason}"),
                    error: true,
                });
                return Err(TurnOutcome::Failed);
            }
            context.extend(said.context);
        }
        Ok((sent, (!context.is_empty()).then(|| context.join("\n"))))
    }

    /// The user message of `sent` with its `files`, its `images` and the reminder, fitted
    /// to the window and pushed; false when the user interrupted the wait for the window.
    async fn push_user_message(
        &mut self,
        sent: &str,
        files: Vec<crate::conversation::Attachment>,
        images: Vec<crate::conversation::Image>,
        hooks_context: Option<String>,
    ) -> bool {
        // The reminder rides in the user's message (a history that ends without a reply,
        // say a resumed session whose process died, gets a note before it on the wire).
        // What the user's own commands printed since the last message goes first.
        let mut content = std::mem::take(&mut self.user_runs).join("\n\n");
        if !content.is_empty() {
            content.push_str("\n\n");
        }
        content.push_str(sent);
        // The files it mentions ride in it too, stored with it (a resumed session sends the
        // same bytes).
        let mut message = Message::user(content)
            .with_attachments(files)
            .with_images(images);
        let mut reminder = self.reminder(true);
        // Folders' instruction files waiting since the last turn (or a compaction).
        let nested = self.nested_text();
        if let Some(nested) = &nested {
            // The files first: the reminder's note stays the last words the model reads.
            reminder = format!("{}\n\n{reminder}", nested.trim_end());
        }
        message.set_reminder(reminder.clone());
        // How much of the message the model gets depends on the window: unless the request
        // is clearly small, that waits for the server's answer.
        let hooks_chars = hooks_context.as_ref().map_or(0, String::len);
        let ready = self
            .settle_window(budget::message_chars(&message) + hooks_chars)
            .await;
        // The hooks' context (each hook's already bounded) takes at most half the room the
        // window leaves a message, and the message's own text what is left beside it.
        if let Some(context) = hooks_context {
            let context = crate::hooks::outcome::bound(context, self.user_message_room() / 2);
            reminder.push_str(&format!("\n(from the user's hooks: {context})"));
            message.set_reminder(reminder);
        }
        let beside = message.reminder_chars();
        if let Message::User { content, .. } = &mut message {
            let whole = std::mem::take(content);
            *content = self.fit_user_message(whole, beside);
        }
        self.push(message);
        if nested.is_some() {
            self.nested_sent();
        }
        ready
    }

    /// The server's prompt when `text` is `/COMMAND args` of an MCP prompt (its text, or
    /// why it could not be had); `None` for any other text.
    async fn mcp_prompt(&self, text: &str) -> Option<Result<String, String>> {
        let external = self.config.external_tools.as_ref()?;
        let trimmed = text.trim();
        let first = trimmed.split_whitespace().next()?;
        let command = first.strip_prefix('/')?;
        let fetch = external.prompt(command, trimmed[first.len()..].trim())?;
        Some(
            fetch
                .await
                .map_err(|why| format!("the prompt /{command} was not sent: {why}")),
        )
    }

    /// The files `text` mentions, read off the async threads ([`crate::agent::attach`]).
    pub(super) async fn attach_mentions(&self, text: &str) -> crate::agent::attach::Attached {
        if crate::conversation::mention::mentions(text).is_empty() {
            return crate::agent::attach::Attached::default();
        }
        let limits = crate::agent::attach::AttachLimits {
            per_file: self.config.context.attach_max_bytes,
            total: self.config.context.attach_total_bytes,
        };
        let (text, root, policy) = (
            text.to_string(),
            self.config.root.clone(),
            Arc::clone(&self.config.policy),
        );
        let (files_text, files_root, files_policy) = (text.clone(), root.clone(), policy.clone());
        let mut attached = tokio::task::spawn_blocking(move || {
            crate::agent::attach::attach(&files_text, &files_root, files_policy.as_ref(), limits)
        })
        .await
        .unwrap_or_else(|e| crate::agent::attach::Attached {
            files: Vec::new(),
            notices: vec![format!("the mentioned files could not be attached: {e}")],
        });
        if let Some(external) = &self.config.external_tools {
            self.attach_resources(
                &text,
                external.as_ref(),
                &mut attached,
                limits,
                &root,
                policy.as_ref(),
            )
            .await;
        }
        attached
    }

    /// The servers' resources `text` mentions (`@server:uri`), read through them within
    /// what the files left of the limits ([`crate::agent::attach::resource_block`]).
    async fn attach_resources(
        &self,
        text: &str,
        external: &dyn crate::tools::external::ExternalTools,
        attached: &mut crate::agent::attach::Attached,
        limits: crate::agent::attach::AttachLimits,
        root: &std::path::Path,
        policy: &dyn crate::permissions::PermissionPolicy,
    ) {
        use crate::agent::attach;
        let used: usize = attached.files.iter().map(|a| a.text.len()).sum();
        let mut left = limits.total.saturating_sub(used);
        for (_, path) in crate::conversation::mention::mentions(text) {
            let Some((server, uri)) = attach::resource_mention(path) else {
                continue;
            };
            if attached.files.iter().any(|a| a.path == path) {
                continue;
            }
            let Some(read) = external.read_resource(server, uri, limits.per_file.min(left)) else {
                continue;
            };
            if let Some(why) = attach::resource_refused(uri, root, policy) {
                attached
                    .notices
                    .push(format!("@{path} was not attached: {why}"));
                continue;
            }
            if left < attach::min_part(limits) {
                attached.notices.push(format!(
                    "@{path} was not attached: the message's attachments already take \
                     context.attach_total_bytes ({} bytes)",
                    limits.total
                ));
                continue;
            }
            match read.await {
                Ok((content, cut)) => {
                    left = left.saturating_sub(content.len());
                    attached.files.push(crate::conversation::Attachment {
                        path: path.to_string(),
                        text: attach::resource_block(server, uri, &content, cut),
                    });
                }
                Err(why) => attached
                    .notices
                    .push(format!("@{path} was not attached: {why}")),
            }
        }
    }
}
