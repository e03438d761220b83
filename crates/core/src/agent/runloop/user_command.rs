//! The user's own commands (`!COMMAND`) and recording the approval mode.
//!
//! A command the user typed after `!` runs between turns (one sent during a turn waits
//! for its end, like a message), as the user: judged by the same rules as the model's
//! `bash` calls, where a `deny` refuses it and an `ask` needs no approval (the user typed
//! it, which is the approval), and run by the same `bash` tool, so the sandbox (read-only
//! in plan mode), the timeout and the output cap all hold. It is reported as
//! [`AgentEvent::UserCommandStarted`] and [`AgentEvent::UserCommandFinished`], recorded
//! (`Entry::UserCommand`), and its output waits in `user_runs` until the next user
//! message, which carries it to the model in front of the user's words: no message of its
//! own, so the order rules ([`crate::conversation::order`]) hold as they are and the
//! request is the same bytes after a resume. A long output is capped like a tool result;
//! the whole goes to the next turn's spill folder.

use std::time::Instant;

use super::Agent;
use crate::agent::events::AgentEvent;
use crate::context::spill::TurnSpill;
use crate::conversation::ToolOutcome;
use crate::permissions::{ApprovalMode, ToolRequest, Verdict};
use crate::session::Entry;
use crate::tools::bash;

/// What the model reads about a command the user ran: the command and its output, in a
/// fence no line of the output can close.
pub(crate) fn user_run_text(command: &str, output: &str) -> String {
    let longest = output
        .lines()
        .map(|l| l.trim_start().chars().take_while(|&c| c == '`').count())
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let command = command.trim();
    format!("I ran this command myself:\n{fence}\n$ {command}\n{output}\n{fence}")
}

impl Agent {
    /// Run `command` as the user typed it, and keep its output for the next message.
    pub(super) async fn run_user_command(&mut self, command: String) {
        self.user_commands += 1;
        let id = format!("user-{}", self.user_commands);
        let started = Instant::now();
        self.emit(AgentEvent::UserCommandStarted {
            id: id.clone(),
            command: command.clone(),
        });
        let finish = |agent: &mut Agent, output: String, outcome: ToolOutcome| {
            agent.emit(AgentEvent::UserCommandFinished {
                id: id.clone(),
                command: command.clone(),
                output,
                outcome,
                duration: started.elapsed(),
            });
        };
        let args = serde_json::json!({ "command": command });
        let verdict = self.config.policy.check(&ToolRequest {
            tool: "bash",
            args: &args,
            root: &self.config.root,
        });
        if let Verdict::Deny { reason } = verdict {
            let output = format!("denied by the permission rules ({reason}); it did not run");
            finish(self, output, ToolOutcome::Denied);
            return;
        }
        let mut ctx = self.ctx.clone();
        if self.mode.get() == ApprovalMode::Plan {
            ctx.sandbox = std::sync::Arc::new(ctx.sandbox.read_only());
        }
        let run = bash::run(
            bash::Args {
                command: command.clone(),
                run_in_background: None,
            },
            &ctx,
        );
        let (output, printed, outcome) = match self.inbox.run_until(run).await {
            Some(Ok(ran)) => (ran.text, ran.printed, ToolOutcome::Ok),
            Some(Err(output)) => (output, None, ToolOutcome::Error),
            None => {
                let output = "interrupted by the user".to_string();
                finish(self, output, ToolOutcome::Interrupted);
                return;
            }
        };
        // The next turn's spill folder: the model may page through the whole in it.
        let spill = TurnSpill::new(&self.config.context, self.turns + 1);
        let (output, capped) = spill.cap_keeping(&id, output, printed);
        if let Some(capped) = capped {
            self.emit(AgentEvent::Notice {
                message: crate::context::spill::summary(&format!("`{}`", command.trim()), &capped),
            });
        }
        let text = user_run_text(&command, &output);
        self.record(Entry::UserCommand {
            command: command.clone(),
            text: text.clone(),
        });
        self.user_runs.push(text);
        finish(self, output, outcome);
    }

    /// Record the mode when it is not what the session file last says.
    pub(super) fn record_mode(&mut self) {
        let mode = self.mode.get();
        if mode != self.session.recorded_mode {
            self.session.recorded_mode = mode;
            self.record(Entry::Mode { mode });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fence_outlasts_any_in_the_output() {
        assert_eq!(
            user_run_text("git status ", "clean"),
            "I ran this command myself:\n```\n$ git status\nclean\n```"
        );
        let text = user_run_text("cat a.md", "```rust\nx\n````");
        assert!(text.contains("\n`````\n$ cat a.md\n"), "{text}");
        assert!(text.ends_with("\n`````"), "{text}");
    }
}
