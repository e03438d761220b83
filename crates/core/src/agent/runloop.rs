//! The agent task itself: the outer loop over user messages and the inner loop of a turn.
//! Each model call of a turn is a [`Step`] (shared with subagents and compaction); what
//! surrounds it is the main agent's own, each part in its file below: starting a
//! conversation (`start`), the tools offered (`offered_tools`), fitting the context
//! (`fit`), the reminder (`reminders`), streaming the text to the front end (`deltas`),
//! running the reply's tool calls (`tool_calls`), the messages the user sent meanwhile
//! (`queued`), recording (`recording`), the user's own
//! commands (`user_command`), model switches (`switch`) and the window still being asked
//! of the server (`window`). Here: the loops, and the interrupted and failed outcomes.
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

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use tokio::sync::mpsc;

use super::client::{self, LlmClient};
use super::events::{AgentCommand, AgentEvent, TurnOutcome};
use super::inbox::{Inbox, Queued, Wake};
use super::loop_guard::{SameCalls, Stopped};
use super::mode::SharedMode;
use super::repetition::Repeats;
use super::step::Step;
use super::stream::{Assembler, StreamDelta};
use super::AgentConfig;
use crate::context::budget::{self, TokenMeter};
use crate::context::changes::{Change, Snapshot};
use crate::context::history::History;
use crate::context::spill::TurnSpill;
use crate::conversation::{Message, ToolResult};
use crate::hooks::EndReason;
use crate::permissions::ApprovalMode;
use crate::session::{Entry, SessionWriter};
use crate::tools::external::ExternalSpec;
use crate::tools::write_todos::Todo;
use crate::tools::{self, ToolContext};

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
mod switch;
mod tool_calls;
mod user_command;
mod window;

pub use checkpoints::CheckpointSetup;
pub(crate) use checkpoints::Checkpoints;
use deltas::PendingDeltas;
use tool_calls::display_args;

/// What a reminder told: the branch, the plan and the mode.
/// What a reminder told: the branch, the plan, the mode and the background commands.
type Reminded = (Option<String>, Vec<Todo>, ApprovalMode, Vec<String>);

/// Stop hooks that block in a row before the turn ends all the same (a Stop hook that
/// always blocks would otherwise loop until `agent.max_steps`).
const MAX_STOP_BLOCKS: u32 = 8;

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
    /// The mode the session file last recorded (default for a new one).
    recorded_mode: ApprovalMode,
    /// Said once the loop runs: why a resumed session does not go on in its mode.
    mode_notice: Option<String>,
    /// What the user's own commands (`!COMMAND`) printed since the last user message:
    /// the next one carries it to the model.
    user_runs: Vec<String>,
    /// The user's commands run by this agent: names each one's id.
    user_commands: u64,
    /// The calibration last written to the session file.
    recorded_rate: Option<(u64, u64)>,
    /// The turn in which an automatic compaction failed, and the token count then: not
    /// tried again in that turn, nor before the count has grown by a tenth of the window.
    compaction_failed: Option<(u64, u64)>,
    inbox: Inbox,
    events: mpsc::UnboundedSender<AgentEvent>,
    /// The session file every committed message, todo list and rule goes to.
    recorder: Option<SessionWriter>,
    /// Where a new conversation's session file goes.
    session_dir: Option<PathBuf>,
    /// Set once a write failed: the user hears about it once, not per entry.
    recorder_failed: bool,
    /// The model the resumed session last recorded (see `Entry::Model`), if any.
    recorded_model: Option<String>,
    /// User turns started by this agent: names each turn's spill folder.
    turns: u64,
    /// The session's background commands: they outlive turns, and end with the agent.
    background: crate::tools::background::Background,
    /// The loop guard's memory of the last calls of this turn.
    same_calls: SameCalls,
    /// Set when the loop guard ended the turn: the user refused the call it asked about,
    /// or the model sent again a call rein rejected several times in a row.
    loop_stopped: Option<Stopped>,
    /// Set when a hook said `continue: false` (its reason): the turn stops.
    hook_stopped: Option<String>,
    /// Context SessionStart hooks gave, for the next turn's message.
    hook_context: Vec<String>,
    /// The running (or last) turn's spill files.
    spill: TurnSpill,
    /// The project's files as the last turn left them (none before the first turn).
    after_last_turn: Option<Snapshot>,
    /// What someone else changed between the last turn and this one (the reminder says).
    changed: Vec<Change>,
    /// The instruction files changed since the conversation began, not yet told.
    instructions_changed: Vec<PathBuf>,
    /// The instruction files of folders below the project loaded so far (`nested`).
    nested: crate::instructions::Nested,
    /// Those loaded (or to send again) whose text waits for the next reminder.
    nested_pending: crate::instructions::nested::Found,
    /// The system prompt's characters that are the project instructions (`/context`).
    instructions_chars: usize,
    /// Every external tool offered in this conversation (and the resumed session's), for
    /// the history's calls to tools whose servers are gone.
    known_external: Vec<ExternalSpec>,
    /// The external tools last offered, as the session file records them.
    offered_external: Vec<ExternalSpec>,
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
        if let Some(dir) = &self.config.context.spill_dir {
            crate::context::spill::sweep_stale(dir, SystemTime::now());
        }
        // A new session, or one resumed on another model than it last ran on, says which
        // model it runs on now (what a later `--continue` resumes on).
        if self.recorded_model.as_deref() != Some(self.config.client.name.as_str()) {
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
        loop {
            self.inbox.settle();
            self.record_mode();
            if self.inbox.shutdown {
                break;
            }
            let text = match self.inbox.queued.pop_front() {
                Some(Queued::Message(text)) => text,
                Some(Queued::NewConversation) => {
                    let _ = self.settle_checkpoint().await;
                    self.session_end_hooks(EndReason::Clear).await;
                    self.new_conversation();
                    self.session_start_hooks("clear").await;
                    continue;
                }
                Some(Queued::Command(command)) => {
                    self.run_user_command(command).await;
                    continue;
                }
                Some(Queued::Rename(title)) => {
                    self.rename(&title);
                    continue;
                }
                Some(Queued::Compact(focus)) => {
                    self.compact_on_demand(focus).await;
                    continue;
                }
                Some(Queued::SetModel(switch)) => {
                    self.switch_model(*switch).await;
                    continue;
                }
                Some(Queued::Rewind(order)) => {
                    self.rewind_files(*order).await;
                    continue;
                }
                None => match self.inbox.wake().await {
                    // The window is known now: the gauge and the session file say so.
                    Wake::Window => {
                        self.emit_context();
                        continue;
                    }
                    Wake::Command(command) => match command {
                        None | Some(AgentCommand::Shutdown) => {
                            self.inbox.end(EndReason::Other);
                            break;
                        }
                        Some(AgentCommand::End(reason)) => {
                            self.inbox.end(reason);
                            break;
                        }
                        Some(AgentCommand::UserMessage(text)) => text,
                        Some(AgentCommand::RunCommand(command)) => {
                            self.run_user_command(command).await;
                            continue;
                        }
                        Some(AgentCommand::SetMode(mode)) => {
                            self.mode.switch(mode, &self.events);
                            continue;
                        }
                        Some(AgentCommand::NewConversation) => {
                            let _ = self.settle_checkpoint().await;
                            self.session_end_hooks(EndReason::Clear).await;
                            self.new_conversation();
                            self.session_start_hooks("clear").await;
                            continue;
                        }
                        Some(AgentCommand::Rename(title)) => {
                            self.rename(&title);
                            continue;
                        }
                        Some(AgentCommand::Compact { focus }) => {
                            self.compact_on_demand(focus).await;
                            continue;
                        }
                        Some(AgentCommand::SetModel(switch)) => {
                            self.switch_model(*switch).await;
                            continue;
                        }
                        Some(AgentCommand::Rewind(order)) => {
                            self.rewind_files(*order).await;
                            continue;
                        }
                        Some(
                            AgentCommand::Interrupt
                            | AgentCommand::Approval { .. }
                            | AgentCommand::FormAnswer { .. }
                            | AgentCommand::Withdraw { .. },
                        ) => continue,
                    },
                },
            };
            self.turns += 1;
            self.refresh_tools();
            self.spill = TurnSpill::new(&self.config.context, self.turns);
            self.changed = match &self.after_last_turn {
                Some(before) => before.changes_to(&Snapshot::take(&self.config.root)),
                None => Vec::new(),
            };
            self.instructions_changed = self.config.instructions.changed();
            if !self.instructions_changed.is_empty() {
                // Named once, as instructions (not also as a changed file).
                let root = &self.config.root;
                let named = &self.instructions_changed;
                self.changed
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
            let outcome = self.run_turn(text).await;
            self.checkpoint_turn_end().await;
            // Whatever changed during the turn is the agent's own doing.
            self.after_last_turn = Some(Snapshot::take(&self.config.root));
            self.end_turn();
            self.emit_context();
            self.tell_running_background();
            self.emit(AgentEvent::TurnFinished { outcome });
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
            if self.recorded_rate != Some((chars, tokens)) {
                self.recorded_rate = Some((chars, tokens));
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

    /// One user turn: model calls and tool runs until a reply asks for no tools.
    async fn run_turn(&mut self, text: String) -> TurnOutcome {
        // `/mcp__SERVER__PROMPT args`: the server's prompt is what the model gets (the
        // transcript keeps what was typed); one that cannot be had sends nothing.
        let sent = match self.mcp_prompt(&text).await {
            Some(Ok(prompt)) => prompt,
            Some(Err(message)) => {
                self.emit(AgentEvent::Error { message });
                return TurnOutcome::Failed;
            }
            None => text.clone(),
        };
        // The user's UserPromptSubmit hooks see the prompt first: a block keeps it from
        // the model (the user sees why); their context rides with the reminder.
        let mut prompt_context = None;
        let session_context = std::mem::take(&mut self.hook_context);
        if !session_context.is_empty() {
            prompt_context = Some(session_context.join("\n"));
        }
        if let Some(said) = self.prompt_hooks(&sent).await {
            if let Some(reason) = said.block.or(said.stop) {
                self.emit(AgentEvent::Hook {
                    event: crate::hooks::Event::UserPromptSubmit.name().to_string(),
                    message: format!("the prompt was not sent: {reason}"),
                    error: true,
                });
                return TurnOutcome::Failed;
            }
            if !said.context.is_empty() {
                let mut all: Vec<String> = prompt_context.take().into_iter().collect();
                all.extend(said.context);
                prompt_context = Some(all.join("\n"));
            }
        }
        // The reminder rides in the user's message (a history that ends without a reply,
        // say a resumed session whose process died, gets a note before it on the wire).
        // What the user's own commands printed since the last message goes first.
        let mut content = std::mem::take(&mut self.user_runs).join("\n\n");
        if !content.is_empty() {
            content.push_str("\n\n");
        }
        content.push_str(&sent);
        // The files it mentions ride in it too, stored with it (a resumed session sends the
        // same bytes).
        let attached = self.attach_mentions(&sent).await;
        let paths: Vec<String> = attached.files.iter().map(|a| a.path.clone()).collect();
        let mut message = Message::user(content).with_attachments(attached.files);
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
        let hooks_chars = prompt_context.as_ref().map_or(0, String::len);
        let ready = self
            .settle_window(budget::message_chars(&message) + hooks_chars)
            .await;
        // The hooks' context (each hook's already bounded) takes at most half the room the
        // window leaves a message, and the message's own text what is left beside it.
        if let Some(context) = prompt_context {
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
        self.same_calls.reset();
        self.loop_stopped = None;
        self.hook_stopped = None;
        self.emit(AgentEvent::TurnStarted { text });
        if !paths.is_empty() {
            self.emit(AgentEvent::Attached { paths });
        }
        for message in attached.notices {
            self.emit(AgentEvent::Notice { message });
        }
        if !ready {
            self.keep_partial(String::new(), "interrupted by the user");
            return TurnOutcome::Interrupted;
        }
        // Stop hooks that kept the turn going, in a row.
        let mut stop_blocks = 0;
        for step in 1..=self.config.max_steps.max(1) {
            // What streamed is kept in the assembler (for an interrupt or a failure), not
            // copied here.
            let mut assembler = Assembler::new();
            let mut pending = PendingDeltas::new(self.events.clone());
            // A reply that repeats itself is stopped (see `repetition`).
            let mut repeats = Repeats::default();
            let stop = tokio::sync::Notify::new();
            let mut on_delta = |delta: StreamDelta<'_>| match delta {
                // A refusal is the reply: shown as text, recorded as a refusal.
                StreamDelta::Text(t) | StreamDelta::Refusal(t) => {
                    pending.text(t);
                    if repeats.text(t) {
                        stop.notify_one();
                    }
                }
                StreamDelta::Reasoning(r) => {
                    pending.reasoning(r);
                    if repeats.reasoning(r) {
                        stop.notify_one();
                    }
                }
                StreamDelta::Flush => pending.flush(),
            };
            if !self.fit_context().await {
                self.keep_partial(String::new(), "interrupted by the user");
                return TurnOutcome::Interrupted;
            }
            if step > 1 {
                self.remind_if_changed();
                self.deliver_queued().await;
            }
            // After any fitting, so a front end sees the compaction before the request.
            self.emit(AgentEvent::RequestStarted { step });
            let request_chars = budget::request_chars(self.history.messages(), self.tools_chars);
            let request_messages = self.history.len();
            let context = &self.config.context;
            let model_step = Step {
                client: &self.client,
                tools_json: &self.tools_json,
                events: &self.events,
                who: "",
                max_tokens: client::output_cap(
                    self.client.config(),
                    context.window_known.then_some(context.window),
                    self.used(),
                ),
            };
            let request = async {
                tokio::select! {
                    reply = model_step.run_into(
                        self.history.messages(),
                        &mut assembler,
                        &mut on_delta,
                    ) => Some(reply),
                    () = stop.notified() => None,
                }
            };
            let result = self.inbox.run_until(request).await;
            // Whatever streamed before an interrupt or a failure is shown too.
            on_delta(StreamDelta::Flush);
            let reply = match result {
                // Stopped mid-stream, or the piece that completed the run ended the reply
                // too: the verdict is the text's, not the stream's timing.
                Some(finished) if repeats.tripped() => {
                    // A reply that ended took its text out of the assembler.
                    let (streamed, reasoning) = match finished {
                        Some(Ok(reply)) => {
                            let reasoning = reply.reasoning.map(|r| r.text).unwrap_or_default();
                            (reply.text + &reply.refusal, reasoning)
                        }
                        _ => (assembler.take_streamed(), assembler.reasoning().to_string()),
                    };
                    let reasoning = repeats.reasoning_cut(&reasoning);
                    self.stop_repeating(&repeats, streamed, reasoning);
                    return TurnOutcome::Failed;
                }
                Some(reply) => reply,
                None => None,
            };
            let reply = match reply {
                None => {
                    self.keep_partial(assembler.take_streamed(), "interrupted by the user");
                    return TurnOutcome::Interrupted;
                }
                Some(Err(error)) => {
                    self.request_failed(error, &mut assembler);
                    return TurnOutcome::Failed;
                }
                Some(Ok(reply)) => reply,
            };
            if let Some(usage) = reply.usage {
                if !usage.estimated {
                    self.meter
                        .observe(request_chars, usage.prompt_tokens, request_messages);
                }
                self.emit(AgentEvent::Usage(usage));
            }
            let shown = reply.shown().to_string();
            self.emit(AgentEvent::AssistantMessage {
                text: shown.clone(),
                finish_reason: reply.finish_reason.clone(),
                refusal: reply.is_refusal(),
            });
            let stopped_short = reply.stopped_short();
            for tool in reply.hosted_tools() {
                self.emit(AgentEvent::Notice {
                    message: format!(
                        "the server ran its own tool {tool} in this reply (rein did not run it)"
                    ),
                });
            }
            let (message, calls) = reply.into_message(&self.client.config().model);
            self.push(message);
            self.emit_context();
            if calls.is_empty() {
                // The user's Stop hooks may keep the model going, with their reason.
                if let Some(reason) = self.stop_hooks(&shown, stop_blocks > 0).await {
                    stop_blocks += 1;
                    if stop_blocks >= MAX_STOP_BLOCKS {
                        self.emit(AgentEvent::Notice {
                            message: format!(
                                "a Stop hook kept the turn going {MAX_STOP_BLOCKS} times in a row; \
                                 the turn ends here"
                            ),
                        });
                        return TurnOutcome::Completed;
                    }
                    self.push(Message::user(format!("(from a Stop hook: {reason})")));
                    continue;
                }
                if let Some(why) = stopped_short {
                    self.emit(AgentEvent::Notice {
                        message: why.to_string(),
                    });
                }
                return TurnOutcome::Completed;
            }
            // A subagent budgets its own history on the window it is given: not on a guess.
            let tasks_in_reply = calls.iter().any(|c| c.function.name == tools::task::NAME);
            if tasks_in_reply && !self.wait_for_window().await {
                self.not_run(&calls);
                return TurnOutcome::Interrupted;
            }
            let changes_files = calls
                .iter()
                .any(|c| checkpoints::could_change_files(&c.function.name));
            if changes_files && !self.checkpoint_before_batch().await {
                self.not_run(&calls);
                return TurnOutcome::Interrupted;
            }
            let mut interrupted = false;
            let mut i = 0;
            while i < calls.len() {
                // A run of `task` calls goes at once; anything else one by one.
                let tasks = calls[i..]
                    .iter()
                    .take_while(|c| c.function.name == tools::task::NAME)
                    .count();
                let completed = if tasks > 0 {
                    self.run_tasks(&calls[i..i + tasks]).await
                } else {
                    self.run_tool(&calls[i]).await
                };
                i += tasks.max(1);
                if !completed {
                    self.not_run(&calls[i..]);
                    interrupted = true;
                    break;
                }
            }
            if changes_files {
                self.checkpoint_after_batch();
            }
            if let Some(reason) = self.hook_stopped.take() {
                self.emit(AgentEvent::Notice {
                    message: format!("the turn was stopped by a hook: {reason}"),
                });
                return TurnOutcome::Completed;
            }
            if let Some(stopped) = self.loop_stopped.take() {
                self.emit(AgentEvent::Notice {
                    message: stopped.notice(),
                });
                return TurnOutcome::Failed;
            }
            if interrupted {
                return TurnOutcome::Interrupted;
            }
        }
        self.emit(AgentEvent::Notice {
            message: format!(
                "stopped after {} model calls in one turn (agent.max_steps); send a message to go on",
                self.config.max_steps
            ),
        });
        TurnOutcome::StepLimit
    }

    /// Calls of an interrupted reply that never ran: each gets its result all the same.
    fn not_run(&mut self, calls: &[crate::conversation::ToolCall]) {
        for rest in calls {
            self.emit(AgentEvent::ToolCallStarted {
                id: rest.id.clone(),
                name: rest.function.name.clone(),
                args: display_args(&rest.function.arguments),
            });
            self.finish_tool(rest, ToolResult::not_run(), Instant::now());
        }
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

    /// The files `text` mentions, read off the async threads ([`super::attach`]).
    async fn attach_mentions(&self, text: &str) -> super::attach::Attached {
        if crate::conversation::mention::mentions(text).is_empty() {
            return super::attach::Attached::default();
        }
        let limits = super::attach::AttachLimits {
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
            super::attach::attach(&files_text, &files_root, files_policy.as_ref(), limits)
        })
        .await
        .unwrap_or_else(|e| super::attach::Attached {
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
    /// what the files left of the limits ([`super::attach::resource_block`]).
    async fn attach_resources(
        &self,
        text: &str,
        external: &dyn crate::tools::external::ExternalTools,
        attached: &mut super::attach::Attached,
        limits: super::attach::AttachLimits,
        root: &std::path::Path,
        policy: &dyn crate::permissions::PermissionPolicy,
    ) {
        use super::attach;
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

    /// Close a reply that did not complete. The text the user already saw is kept, so the
    /// history matches the screen; with none, a short note stands in, so user and assistant
    /// messages still alternate (strict chat templates insist).
    /// The reply repeated itself and was stopped: the front end's copy and the history
    /// keep its start, cut and marked, and the user is told.
    fn stop_repeating(&mut self, repeats: &Repeats, streamed: String, reasoning: Option<String>) {
        let text = repeats.text_cut(&streamed);
        self.emit(AgentEvent::ReplyCut {
            text: text.clone(),
            reasoning,
        });
        self.keep_partial(
            text.unwrap_or(streamed),
            "stopped: the reply repeats itself",
        );
        self.emit(AgentEvent::Error {
            message: "stopped: the reply repeats itself (the same few words over and over); \
                      its start is kept. Ask again, or try another model"
                .to_string(),
        });
    }

    fn keep_partial(&mut self, partial: String, why: &str) {
        let text = if partial.is_empty() {
            format!("(no reply: {why})")
        } else {
            partial
        };
        self.push(Message::assistant(text, Vec::new()));
    }
}
