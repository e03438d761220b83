//! The agent task itself: the outer loop over user messages and the inner loop of a turn.
//! Each model call of a turn is a [`super::step::Step`] (shared with subagents and
//! compaction); what surrounds it is the main agent's own, each part in its file below: a
//! turn's phases (`turn`: send the request, read the stream, handle the reply, run the tool
//! calls, decide whether to go on), its user message (`user_message`), starting a
//! conversation (`start`), the tools offered (`offered_tools`), fitting the context
//! (`fit`), the reminder (`reminders`), streaming the text to the front end (`deltas`),
//! running the reply's tool calls (`tool_calls`; a run of `task` calls at once, `tasks`),
//! the messages the user sent meanwhile
//! (`queued`), recording (`recording`), the user's own
//! commands (`user_command`), model switches (`switch`) and the window still being asked
//! of the server (`window`). Here: the agent's state and the outer loop.
//!
//! Every await that may take long (a model reply, a running tool or subagent, an approval)
//! goes through the [`Inbox`], which watches the command channel meanwhile: an interrupt
//! drops the awaited future at once (which drops the HTTP request or kills the command's
//! process group), user messages are queued: the next step takes them with its tool results
//! (`queued`), else they start the next turn. Consecutive `task` calls of
//! one reply run at the same time, each a subagent. Whatever happens, each tool call of
//! an assistant message gets exactly one tool message, so the next request is valid (and
//! [`crate::conversation::order`] fills in where a turn ended without a reply). The turn's
//! user message carries the reminder (time, branch, plan, and the files someone else
//! changed between the previous turn's end and this turn's start); when the branch or the
//! plan changes during the turn, the last tool result before the next request carries a
//! fresh one. Both are stored with their message, so each request of a turn extends the
//! previous one byte for byte. Subagents get no reminder: their runs are short and their
//! task says what they need.

use std::ops::ControlFlow;
use std::time::SystemTime;

use tokio::sync::mpsc;

use super::client::LlmClient;
use super::events::{AgentCommand, AgentEvent, Prompt};
use super::inbox::{Inbox, Queued, Wake};
use super::mode::SharedMode;
use super::AgentConfig;
use crate::context::budget::TokenMeter;
use crate::context::changes::Snapshot;
use crate::context::history::History;
use crate::context::spill::TurnSpill;
use crate::hooks::EndReason;
use crate::permissions::ApprovalMode;
use crate::session::Entry;
use crate::tools::write_todos::Todo;
use crate::tools::ToolContext;

mod checkpoints;
mod deltas;
mod failed_reply;
mod fit;
mod hooks;
mod nested;
mod offered_tools;
mod queued;
mod recording;
mod reminders;
mod start;
mod state;
mod switch;
mod tasks;
mod tool_calls;
mod turn;
mod user_command;
mod user_message;
mod window;

pub use checkpoints::CheckpointSetup;
pub(crate) use checkpoints::Checkpoints;
use state::{BetweenTurns, ExternalOffered, NestedInstructions, SessionRecord, TurnStops};

/// What a reminder told: the branch, the plan and the mode.
/// What a reminder told: the branch, the plan, the mode and the background commands.
type Reminded = (Option<String>, Vec<Todo>, ApprovalMode, Vec<String>);

/// A command queued during a turn, as the command it was.
fn queued_command(queued: Queued) -> AgentCommand {
    match queued {
        Queued::Message(prompt) => AgentCommand::UserMessage(prompt),
        Queued::Command(command) => AgentCommand::RunCommand(command),
        Queued::NewConversation => AgentCommand::NewConversation,
        Queued::Rename(title) => AgentCommand::Rename(title),
        Queued::Compact(focus) => AgentCommand::Compact { focus },
        Queued::SetModel(switch) => AgentCommand::SetModel(switch),
        Queued::Rewind(order) => AgentCommand::Rewind(order),
    }
}

impl Drop for Agent {
    /// However the agent ends (a panic, its task aborted), its background commands end
    /// with it.
    fn drop(&mut self) {
        self.background.kill_all();
    }
}

pub(crate) struct Agent {
    config: AgentConfig,
    client: LlmClient,
    tools_json: serde_json::Value,
    ctx: ToolContext,
    /// The subagents' system prompt, built once too.
    subagent_prompt: String,
    /// The system prompt, the stored messages, and where a handoff note is.
    history: History,
    /// The token accounting behind the gauge and every threshold.
    meter: TokenMeter,
    /// The tool schemas' size in characters (part of every request).
    tools_chars: usize,
    /// The branch, plan and approval mode the last reminder told the model (none yet
    /// this session).
    reminded: Option<Reminded>,
    /// The approval mode, shared with the inbox (which switches it) and subagents.
    mode: SharedMode,
    /// Said once the loop runs: why a resumed session does not go on in its mode.
    mode_notice: Option<String>,
    /// What the user's own commands (`!COMMAND`) printed since the last user message:
    /// the next one carries it to the model.
    user_runs: Vec<String>,
    /// The user's commands run by this agent: names each one's id.
    user_commands: u64,
    /// The turn in which an automatic compaction failed, and the token count then: not
    /// tried again in that turn, nor before the count has grown by a tenth of the window.
    compaction_failed: Option<(u64, u64)>,
    inbox: Inbox,
    events: mpsc::UnboundedSender<AgentEvent>,
    /// The session file, and what it last recorded.
    session: SessionRecord,
    /// User turns started by this agent: names each turn's spill folder.
    turns: u64,
    /// The session's background commands: they outlive turns, and end with the agent.
    background: crate::tools::background::Background,
    /// What stops a turn: the loop guard and the hooks.
    stops: TurnStops,
    /// Context SessionStart hooks gave, for the next turn's message.
    hook_context: Vec<String>,
    /// The running (or last) turn's spill files.
    spill: TurnSpill,
    /// What changed in the project between the last turn and this one.
    between: BetweenTurns,
    /// The instruction files of folders below the project.
    nested: NestedInstructions,
    /// The system prompt's characters that are the project instructions (`/context`).
    instructions_chars: usize,
    /// The external tools offered in this conversation.
    external: ExternalOffered,
    /// The project's files recorded around turns and tool batches.
    checkpoints: Checkpoints,
}

impl Agent {
    fn emit(&self, event: AgentEvent) {
        // A front end that went away is not the agent's problem.
        let _ = self.events.send(event);
    }

    /// The outer loop: wait for a user message, run the turn, repeat.
    pub(crate) async fn run(mut self) {
        self.open_session().await;
        while let Some(prompt) = self.next_message().await {
            self.turn(prompt).await;
            if self.inbox.shutdown {
                break;
            }
        }
        // What is still being taken is recorded before the agent stops; the turn is
        // recorded already: the SessionEnd hooks read the whole session file.
        let _ = self.settle_checkpoint().await;
        self.session_end_hooks(self.inbox.end_reason).await;
        // No background command outlives the session.
        self.background.kill_all();
    }

    /// What the session says and does before its first message: the model it runs on,
    /// its mode, the context gauge, the SessionStart hooks.
    async fn open_session(&mut self) {
        if let Some(dir) = &self.config.context.spill_dir {
            crate::context::spill::sweep_stale(dir, SystemTime::now());
        }
        // A new session, or one resumed on another model than it last ran on, says which
        // model it runs on now (what a later `--continue` resumes on).
        if self.session.recorded_model.as_deref() != Some(self.config.client.name.as_str()) {
            self.record_model();
        }
        if let Some(message) = self.mode_notice.take() {
            self.emit(AgentEvent::Notice { message });
        }
        if self.mode.get() != ApprovalMode::Default {
            self.emit(AgentEvent::ModeChanged {
                mode: self.mode.get(),
            });
        }
        self.emit_context();
        let source = if self.history.len() > 1 {
            "resume"
        } else {
            "startup"
        };
        // The user may be being asked about the project's hooks: the session starts once
        // they answered, with the hooks they allowed.
        self.config.hooks.asked().await;
        self.session_start_hooks(source).await;
        self.checkpoint_warm_up();
    }

    /// What comes between turns, until the next user message: the commands queued during
    /// the last turn first, then what the inbox wakes the agent with. `None`: the session
    /// ends.
    async fn next_message(&mut self) -> Option<Prompt> {
        loop {
            self.inbox.settle();
            self.record_mode();
            if self.inbox.shutdown {
                return None;
            }
            let command = match self.inbox.queued.pop_front() {
                Some(queued) => Some(queued_command(queued)),
                None => match self.inbox.wake().await {
                    // The window is known now: the gauge and the session file say so.
                    Wake::Window => {
                        self.emit_context();
                        continue;
                    }
                    Wake::Command(command) => command,
                },
            };
            if let ControlFlow::Break(message) = self.between_turns(command).await {
                return message;
            }
        }
    }

    /// A command between turns (`None`: every sender is gone). `Break`: a user message,
    /// or `None` when the session ends; `Continue`: done, wait for the next.
    async fn between_turns(
        &mut self,
        command: Option<AgentCommand>,
    ) -> ControlFlow<Option<Prompt>> {
        match command {
            None | Some(AgentCommand::Shutdown) => {
                self.inbox.end(EndReason::Other);
                return ControlFlow::Break(None);
            }
            Some(AgentCommand::End(reason)) => {
                self.inbox.end(reason);
                return ControlFlow::Break(None);
            }
            Some(AgentCommand::UserMessage(prompt)) => return ControlFlow::Break(Some(prompt)),
            Some(AgentCommand::RunCommand(command)) => self.run_user_command(command).await,
            Some(AgentCommand::SetMode(mode)) => self.mode.switch(mode, &self.events),
            Some(AgentCommand::NewConversation) => {
                let _ = self.settle_checkpoint().await;
                self.session_end_hooks(EndReason::Clear).await;
                self.new_conversation();
                self.session_start_hooks("clear").await;
            }
            Some(AgentCommand::Rename(title)) => self.rename(&title),
            Some(AgentCommand::Compact { focus }) => self.compact_on_demand(focus).await,
            Some(AgentCommand::SetModel(switch)) => self.switch_model(*switch).await,
            Some(AgentCommand::Rewind(order)) => self.rewind_files(*order).await,
            Some(
                AgentCommand::Interrupt
                | AgentCommand::Approval { .. }
                | AgentCommand::FormAnswer { .. }
                | AgentCommand::Withdraw { .. },
            ) => {}
        }
        ControlFlow::Continue(())
    }

    /// One user turn around `prompt`: what changed since the last one, the checkpoints
    /// around it, and what follows it.
    async fn turn(&mut self, prompt: Prompt) {
        self.turns += 1;
        self.refresh_tools();
        self.spill = TurnSpill::new(&self.config.context, self.turns);
        self.between.changed = match &self.between.after_last_turn {
            Some(before) => before.changes_to(&Snapshot::take(&self.config.root)),
            None => Vec::new(),
        };
        self.between.instructions_changed = self.config.instructions.changed();
        if !self.between.instructions_changed.is_empty() {
            // Named once, as instructions (not also as a changed file).
            let root = &self.config.root;
            let named = &self.between.instructions_changed;
            self.between
                .changed
                .retain(|c| !named.contains(&root.join(&c.path)));
            let list: Vec<String> = named.iter().map(|p| p.display().to_string()).collect();
            self.emit(AgentEvent::Notice {
                message: format!(
                    "{} changed: the conversation keeps the instructions it started \
                     with; /clear (or a new session) reads them again",
                    list.join(", ")
                ),
            });
        }
        self.checkpoint_turn_start().await;
        let outcome = self.run_turn(prompt).await;
        self.checkpoint_turn_end().await;
        // Whatever changed during the turn is the agent's own doing.
        self.between.after_last_turn = Some(Snapshot::take(&self.config.root));
        self.end_turn();
        self.emit_context();
        self.tell_running_background();
        self.emit(AgentEvent::TurnFinished { outcome });
    }

    /// A turn that ends with background commands running says so.
    fn tell_running_background(&mut self) {
        let running = self.background.running();
        if running.is_empty() {
            return;
        }
        let list: Vec<String> = running
            .iter()
            .map(|t| format!("{} `{}`", t.id, crate::text::clip(&t.command, 60)))
            .collect();
        self.emit(AgentEvent::Notice {
            message: format!(
                "{} background command{} still running: {} (they run until stopped, /bashes, \
                 or the session ends)",
                running.len(),
                if running.len() == 1 { "" } else { "s" },
                list.join(", ")
            ),
        });
    }

    /// The work between turns: stub old tool results (recording the history the model
    /// will see next, so a resumed session continues from it) and remove the turn's spill
    /// files. Never between the requests of one turn: those extend each other byte for byte.
    fn end_turn(&mut self) {
        self.record_mode();
        self.stub_old_results();
        // What the server taught the token count, so a resumed session starts calibrated.
        if let Some((chars, tokens)) = self.meter.rate() {
            if self.session.recorded_rate != Some((chars, tokens)) {
                self.session.recorded_rate = Some((chars, tokens));
                self.record(Entry::Calibration { chars, tokens });
            }
        }
        if let Err(e) = self.spill.remove() {
            let dir = self.spill.dir().map(|d| d.display().to_string());
            self.emit(AgentEvent::Notice {
                message: format!(
                    "the spill folder {} could not be removed: {e}",
                    dir.unwrap_or_default()
                ),
            });
        }
    }
}
