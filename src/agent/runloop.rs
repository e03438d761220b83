//! The agent task itself: the outer loop over user messages and the inner loop of a turn.
//! Each model call of a turn is a [`Step`] (shared with subagents and compaction); what
//! surrounds it here is the main agent's own: fitting the context, the reminder, streaming
//! the text to the front end, recording, and the interrupted and failed outcomes.
//!
//! Every await that may take long (a model reply, a running tool or subagent, an approval)
//! goes through the [`Inbox`], which watches the command channel meanwhile: an interrupt
//! drops the awaited future at once (which drops the HTTP request or kills the command's
//! process group), user messages are queued for after the turn. Consecutive `task` calls of
//! one reply run at the same time, each a [`Subagent`]. Whatever happens, each tool call of
//! an assistant message gets exactly one tool message, so the next request is valid (and
//! [`crate::conversation::order`] fills in where a turn ended without a reply). The turn's
//! user message carries the reminder (time, branch, plan, and the files someone else
//! changed between the previous turn's end and this turn's start); when the branch or the
//! plan changes during the turn, the last tool result before the next request carries a
//! fresh one. Both are stored with their message, so each request of a turn extends the
//! previous one byte for byte. Subagents get no reminder: their runs are short and their
//! task says what they need.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::sync::mpsc;

use super::client::LlmClient;
use super::events::{AgentCommand, AgentEvent, SubagentEvent, TurnOutcome};
use super::inbox::{Inbox, OpenApprovals, Queued};
use super::mode::SharedMode;
use super::step::Step;
use super::stream::{Assembler, StreamDelta};
use super::subagent::{self, Subagent};
use super::toolrun::{self, ToolEnv};
use super::{system_prompt, AgentConfig, SessionSetup};
use crate::context::budget::{self, TokenMeter};
use crate::context::changes::{Change, Snapshot};
use crate::context::git;
use crate::context::history::History;
use crate::context::reminder::{self, ReminderInput};
use crate::context::spill::TurnSpill;
use crate::conversation::{Message, ToolCall, ToolResult};
use crate::permissions::ApprovalMode;
use crate::session::{Entry, SessionMeta, SessionWriter};
use crate::tools::external::ExternalSpec;
use crate::tools::write_todos::Todo;
use crate::tools::{self, ToolContext, Toolset};

mod fit;
mod switch;
mod user_command;

/// What a reminder told: the branch, the plan and the mode.
type Reminded = (Option<String>, Vec<Todo>, ApprovalMode);

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
    /// The running (or last) turn's spill files.
    spill: TurnSpill,
    /// The project's files as the last turn left them (none before the first turn).
    after_last_turn: Option<Snapshot>,
    /// What someone else changed between the last turn and this one (the reminder says).
    changed: Vec<Change>,
    /// The instruction files changed since the conversation began, not yet told.
    instructions_changed: Vec<PathBuf>,
    /// The system prompt's characters that are the project instructions (`/context`).
    instructions_chars: usize,
    /// Every external tool offered in this conversation (and the resumed session's), for
    /// the history's calls to tools whose servers are gone.
    known_external: Vec<ExternalSpec>,
    /// The external tools last offered, as the session file records them.
    offered_external: Vec<ExternalSpec>,
}

impl Agent {
    pub(crate) fn new(
        config: AgentConfig,
        client: LlmClient,
        rx: mpsc::UnboundedReceiver<AgentCommand>,
        events: mpsc::UnboundedSender<AgentEvent>,
        session: Option<SessionSetup>,
    ) -> Self {
        let tools_json = tools_json(&config, &[]);
        let ctx = config.tool_context();
        let (system_prompt, subagent_prompt, instructions_chars) = prompts(&config);
        // Built once: every request of the session sends the same bytes (prompt caching).
        let mut history = History::new(system_prompt.clone());
        let mut meter = TokenMeter::new();
        let (recorder, session_dir, resumed) = match session {
            Some(s) => (Some(s.writer), Some(s.data_dir), s.resumed),
            None => (None, None, None),
        };
        let recorded_model = resumed
            .as_ref()
            .and_then(|r| r.model_name().map(str::to_string));
        // The external tools the resumed session offered: those its history called are
        // still offered (as unavailable) when their servers are gone.
        let known_external = resumed
            .as_ref()
            .map(|r| r.external_tools.clone())
            .unwrap_or_default();
        let no_auto = config
            .sandbox
            .not_working_reason()
            .map(|reason| reason.to_string());
        let mode = SharedMode::new(no_auto.clone());
        let recorded_mode = resumed.as_ref().and_then(|r| r.mode).unwrap_or_default();
        let mut mode_notice = None;
        match (recorded_mode, &no_auto) {
            (ApprovalMode::Auto, Some(reason)) => {
                mode_notice = Some(format!(
                    "the session was in auto mode; it goes on in default mode: {}",
                    crate::permissions::mode::auto_unavailable(reason)
                ));
            }
            (recorded, _) => mode.set_quietly(recorded),
        }
        let user_runs = resumed
            .as_ref()
            .map(|r| r.user_runs.clone())
            .unwrap_or_default();
        if let Some(resumed) = resumed {
            // The system prompt is always fresh (this directory, these skills); the rest is
            // the session as it was.
            history = History::restore(system_prompt.clone(), resumed.history, resumed.summary);
            if let Some((chars, tokens)) = resumed.calibration {
                meter = TokenMeter::with_rate(chars, tokens);
            }
            match ctx.todos.lock() {
                Ok(mut list) => *list = resumed.todos,
                Err(poisoned) => *poisoned.into_inner() = resumed.todos,
            }
            config.policy.forget_session_grants();
            config.policy.grant(&resumed.rules);
        }
        let tools_chars = tools_json.to_string().len();
        Agent {
            config,
            client,
            tools_json,
            recorded_rate: meter.rate(),
            meter,
            tools_chars,
            reminded: None,
            compaction_failed: None,
            ctx,
            subagent_prompt,
            history,
            inbox: Inbox {
                rx,
                queued: VecDeque::new(),
                shutdown: false,
                open: OpenApprovals::default(),
                mode: mode.clone(),
                events: events.clone(),
            },
            mode,
            recorded_mode,
            mode_notice,
            user_runs,
            user_commands: 0,
            events,
            recorder,
            session_dir,
            recorder_failed: false,
            recorded_model,
            turns: 0,
            spill: TurnSpill::unlimited(),
            after_last_turn: None,
            changed: Vec::new(),
            instructions_changed: Vec::new(),
            instructions_chars,
            offered_external: known_external.clone(),
            known_external,
        }
    }

    /// At a turn's start: offer the external tools as they are now (a server came up or
    /// went away). Within a turn the tools never change, so its requests extend each
    /// other byte for byte; when they do change, the next request's prefix differs from
    /// the tools on, as it must.
    fn refresh_tools(&mut self) {
        let Some(provider) = &self.config.external_tools else {
            return;
        };
        let current = provider.specs();
        for spec in &current {
            match self.known_external.iter_mut().find(|k| k.name == spec.name) {
                Some(known) => *known = spec.clone(),
                None => self.known_external.push(spec.clone()),
            }
        }
        // Tools the history called whose servers are gone stay, marked unavailable.
        let gone: Vec<&ExternalSpec> = self
            .known_external
            .iter()
            .filter(|k| !current.iter().any(|c| c.name == k.name))
            .collect();
        let mut offered = current.clone();
        if !gone.is_empty() {
            let called = self.called_tool_names();
            offered.extend(
                gone.into_iter()
                    .filter(|k| called.contains(k.name.as_str()))
                    .map(unavailable),
            );
        }
        if offered != self.offered_external {
            self.record(Entry::Tools {
                external: offered.clone(),
            });
            self.offered_external = offered;
        }
        let now = tools_json(&self.config, &self.offered_external);
        if now != self.tools_json {
            self.tools_chars = now.to_string().len();
            self.tools_json = now;
            // The last usage report counted the old tools.
            self.meter.history_rewritten();
        }
    }

    /// The names of the tools the history's assistant messages called.
    fn called_tool_names(&self) -> std::collections::HashSet<&str> {
        self.history
            .messages()
            .iter()
            .filter_map(|m| match m {
                Message::Assistant { tool_calls, .. } => Some(tool_calls),
                _ => None,
            })
            .flatten()
            .map(|c| c.function.name.as_str())
            .collect()
    }

    /// Append `message` to the history and to the session file.
    /// Record `message` and append it to the history; where the session file holds it.
    fn push(&mut self, message: Message) -> Option<crate::session::EntryAt> {
        let offset = self.recording(|w| w.append_message(&message)).flatten();
        self.history.push(message);
        let writer = self.recorder.as_ref()?;
        Some(crate::session::EntryAt {
            path: std::sync::Arc::from(writer.path()),
            offset: offset?,
        })
    }

    /// Write one entry to the session file; a failure is reported once and the session
    /// goes on unrecorded rather than stopping the work.
    /// After the first failed write nothing more is appended: entries that would still
    /// fit (a full disk takes small ones) would leave holes a resume could not see, so the
    /// file stops at a clean point and says as much as it holds.
    fn record(&mut self, entry: Entry) {
        self.recording(|w| w.append(&entry));
    }

    /// Run `write` on the session writer unless recording stopped; its value, or `None`
    /// when it failed (which stops recording, said once) or nothing is recorded.
    fn recording<T>(
        &mut self,
        write: impl FnOnce(&mut SessionWriter) -> std::io::Result<T>,
    ) -> Option<T> {
        if self.recorder_failed {
            return None;
        }
        let writer = self.recorder.as_mut()?;
        match write(writer) {
            Ok(value) => Some(value),
            Err(e) => {
                self.recorder_failed = true;
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
        loop {
            self.inbox.settle();
            self.record_mode();
            if self.inbox.shutdown {
                break;
            }
            let text = match self.inbox.queued.pop_front() {
                Some(Queued::Message(text)) => text,
                Some(Queued::NewConversation) => {
                    self.new_conversation();
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
                None => match self.inbox.rx.recv().await {
                    None | Some(AgentCommand::Shutdown) => break,
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
                        self.new_conversation();
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
                    Some(AgentCommand::Interrupt | AgentCommand::Approval { .. }) => continue,
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
            let outcome = self.run_turn(text).await;
            // Whatever changed during the turn is the agent's own doing.
            self.after_last_turn = Some(Snapshot::take(&self.config.root));
            self.end_turn();
            self.emit_context();
            self.emit(AgentEvent::TurnFinished { outcome });
            if self.inbox.shutdown {
                break;
            }
        }
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

    /// Title the session file.
    fn rename(&mut self, title: &str) {
        let result = match self.recorder.as_mut() {
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

    /// Start over: only the system prompt remains, the plan is empty, and a recorded
    /// conversation continues in a new session file.
    fn new_conversation(&mut self) {
        self.config.policy.forget_session_grants();
        if let (Some(dir), Some(old)) = (self.session_dir.clone(), self.recorder.take()) {
            let meta = SessionMeta::new(self.config.root.clone(), self.config.client.model.clone());
            let _ = old.close();
            match SessionWriter::create(&dir, meta) {
                Ok(writer) => {
                    self.emit(AgentEvent::SessionStarted {
                        id: writer.id().to_string(),
                        path: writer.path().to_path_buf(),
                    });
                    self.recorder = Some(writer);
                    self.recorder_failed = false;
                    self.record_model();
                    // The new file starts in default mode: say the mode if it is another.
                    self.recorded_mode = ApprovalMode::Default;
                    self.record_mode();
                }
                Err(e) => self.emit(AgentEvent::Error {
                    message: format!(
                        "a new session file cannot be created ({e}); this conversation will not be resumable"
                    ),
                }),
            }
        }
        // The new conversation reads the instruction files again (they may have changed).
        self.config.instructions = self.config.instructions.reload();
        let (system_prompt, subagent_prompt, instructions_chars) = prompts(&self.config);
        self.history = History::new(system_prompt);
        self.subagent_prompt = subagent_prompt;
        self.instructions_chars = instructions_chars;
        self.emit(AgentEvent::InstructionsLoaded {
            files: self.config.instructions.labels(),
            notices: self.config.instructions.notices.clone(),
        });
        self.reminded = None;
        self.user_runs.clear();
        self.meter.history_rewritten();
        // The new session file learns the rate again at this turn's end.
        self.recorded_rate = None;
        self.compaction_failed = None;
        self.emit_context();
        // A new conversation remembers no file, so none is reported as changed.
        self.after_last_turn = None;
        match self.ctx.todos.lock() {
            Ok(mut list) => list.clear(),
            Err(poisoned) => poisoned.into_inner().clear(),
        }
    }

    /// One user turn: model calls and tool runs until a reply asks for no tools.
    async fn run_turn(&mut self, text: String) -> TurnOutcome {
        // The reminder rides in the user's message (a history that ends without a reply,
        // say a resumed session whose process died, gets a note before it on the wire).
        // What the user's own commands printed since the last message goes first.
        let mut content = std::mem::take(&mut self.user_runs).join("\n\n");
        if !content.is_empty() {
            content.push_str("\n\n");
        }
        content.push_str(&text);
        // The files it mentions ride in it too, stored with it (a resumed session sends the
        // same bytes).
        let attached = self.attach_mentions(&text).await;
        let paths: Vec<String> = attached.files.iter().map(|a| a.path.clone()).collect();
        let mut message =
            Message::user(self.fit_user_message(content)).with_attachments(attached.files);
        message.set_reminder(self.reminder(true));
        self.push(message);
        self.emit(AgentEvent::TurnStarted { text });
        if !paths.is_empty() {
            self.emit(AgentEvent::Attached { paths });
        }
        for message in attached.notices {
            self.emit(AgentEvent::Notice { message });
        }
        for step in 1..=self.config.max_steps.max(1) {
            // What streamed is kept in the assembler (for an interrupt or a failure), not
            // copied here.
            let mut assembler = Assembler::new();
            let mut pending = PendingDeltas::new(self.events.clone());
            let mut on_delta = |delta: StreamDelta<'_>| match delta {
                // A refusal is the reply: shown as text, recorded as a refusal.
                StreamDelta::Text(t) | StreamDelta::Refusal(t) => pending.text(t),
                StreamDelta::Reasoning(r) => pending.reasoning(r),
                StreamDelta::Flush => pending.flush(),
            };
            if !self.fit_context().await {
                self.keep_partial(String::new(), "interrupted by the user");
                return TurnOutcome::Interrupted;
            }
            if step > 1 {
                self.remind_if_changed();
            }
            // After any fitting, so a front end sees the compaction before the request.
            self.emit(AgentEvent::RequestStarted { step });
            let request_chars = budget::request_chars(self.history.messages(), self.tools_chars);
            let request_messages = self.history.len();
            let model_step = Step {
                client: &self.client,
                tools_json: &self.tools_json,
                events: &self.events,
                who: "",
            };
            let result = self
                .inbox
                .run_until(model_step.run_into(
                    self.history.messages(),
                    &mut assembler,
                    &mut on_delta,
                ))
                .await;
            // Whatever streamed before an interrupt or a failure is shown too.
            on_delta(StreamDelta::Flush);
            let reply = match result {
                None => {
                    self.keep_partial(assembler.take_streamed(), "interrupted by the user");
                    return TurnOutcome::Interrupted;
                }
                Some(Err(error)) => {
                    let message = error.to_string();
                    let partial = assembler.take_streamed();
                    self.keep_partial(partial, &format!("the request failed: {message}"));
                    self.emit(AgentEvent::Error { message });
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
            self.emit(AgentEvent::AssistantMessage {
                text: reply.shown().to_string(),
                finish_reason: reply.finish_reason.clone(),
                refusal: reply.is_refusal(),
            });
            let cut_off = reply.cut_off();
            let (message, calls) = reply.into_message(&self.client.config().model);
            self.push(message);
            self.emit_context();
            if calls.is_empty() {
                if cut_off {
                    self.emit(AgentEvent::Notice {
                        message: "the reply was cut off by the model's output token limit"
                            .to_string(),
                    });
                }
                return TurnOutcome::Completed;
            }
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
                    for rest in &calls[i..] {
                        self.emit(AgentEvent::ToolCallStarted {
                            id: rest.id.clone(),
                            name: rest.function.name.clone(),
                            args: display_args(&rest.function.arguments),
                        });
                        self.finish_tool(rest, ToolResult::not_run(), Instant::now());
                    }
                    return TurnOutcome::Interrupted;
                }
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
        tokio::task::spawn_blocking(move || {
            super::attach::attach(&text, &root, policy.as_ref(), limits)
        })
        .await
        .unwrap_or_else(|e| super::attach::Attached {
            files: Vec::new(),
            notices: vec![format!("the mentioned files could not be attached: {e}")],
        })
    }

    /// The reminder's text as things are now: time, branch, plan and (at a turn's start,
    /// `with_changes`) the files someone else changed. Remembers what it told.
    fn reminder(&mut self, with_changes: bool) -> String {
        let state = self.reminded_state();
        self.reminder_of(state, with_changes)
    }

    /// The branch, the plan and the mode as they are now: what a reminder reports.
    fn reminded_state(&self) -> Reminded {
        (
            git::git_branch(&self.config.root),
            self.todos(),
            self.mode.get(),
        )
    }

    /// The session's todo list, as it is now.
    fn todos(&self) -> Vec<Todo> {
        match self.ctx.todos.lock() {
            Ok(list) => list.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The reminder's text for `branch` and `todos`; remembers what it told.
    fn reminder_of(&mut self, state: Reminded, with_changes: bool) -> String {
        let (branch, todos, mode) = state;
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
            changed: if with_changes { &self.changed } else { &[] },
            instructions_changed: if with_changes {
                &self.instructions_changed
            } else {
                &[]
            },
            mode: mode_line.as_deref(),
        });
        self.reminded = Some((branch, todos, mode));
        text
    }

    /// Within a turn: when the branch or the plan changed since the model was last told
    /// (or a compaction summarised the reminder away), the last tool result carries a
    /// fresh reminder (stored with it, so later requests
    /// repeat the same bytes).
    fn remind_if_changed(&mut self) {
        // A tool result, or a handoff note that ends a mid-turn compaction.
        match self.history.messages().last() {
            Some(Message::Tool { .. }) => {}
            Some(Message::User { reminder: None, .. }) => {}
            _ => return,
        }
        let state = self.reminded_state();
        if self.reminded.as_ref() == Some(&state) {
            return;
        }
        let text = self.reminder_of(state, false);
        if let Some(last) = self.history.last_mut() {
            if last.set_reminder(text.clone()) {
                self.record(Entry::Reminder { text });
            }
        }
    }

    /// Close a reply that did not complete. The text the user already saw is kept, so the
    /// history matches the screen; with none, a short note stands in, so user and assistant
    /// messages still alternate (strict chat templates insist).
    fn keep_partial(&mut self, partial: String, why: &str) {
        let text = if partial.is_empty() {
            format!("(no reply: {why})")
        } else {
            partial
        };
        self.push(Message::assistant(text, Vec::new()));
    }

    /// Judge and run one tool call and append its result. False when the user interrupted.
    async fn run_tool(&mut self, call: &ToolCall) -> bool {
        // On disk before it runs: after a crash, resuming knows it may have done its work.
        self.record(Entry::CallStarted {
            id: call.id.clone(),
        });
        self.emit(AgentEvent::ToolCallStarted {
            id: call.id.clone(),
            name: call.function.name.clone(),
            args: display_args(&call.function.arguments),
        });
        let open = self.inbox.open.clone();
        let env = ToolEnv {
            toolset: Toolset::Main,
            policy: &*self.config.policy,
            root: &self.config.root,
            ctx: &self.ctx,
            events: &self.events,
            subagent: None,
            open: &open,
            spill: &self.spill,
            mode: &self.mode,
            external: self.config.external_tools.as_deref(),
        };
        let run = env.judge_and_run(Some(&mut self.inbox), call).await;
        self.record_mode();
        for grant in &run.granted {
            self.record(Entry::rule(grant));
        }
        let accepted = !run.result.outcome.is_error();
        self.finish_tool(call, run.result, run.started);
        if call.function.name == tools::write_todos::NAME && accepted {
            let todos = self.todos();
            self.record(Entry::todos(todos.clone()));
            self.emit(AgentEvent::TodosUpdated { todos });
        }
        !run.interrupted
    }

    /// Run `task` calls (consecutive ones of one reply) at the same time, each a subagent,
    /// and append their results in call order. Each call's `ToolFinished` goes out as soon
    /// as its subagent is done. False when the user interrupted (which drops every running
    /// subagent, its request and its commands).
    async fn run_tasks(&mut self, calls: &[ToolCall]) -> bool {
        let mut results: Vec<Option<subagent::Outcome>> = Vec::new();
        let mut starts = Vec::new();
        let mut running = FuturesUnordered::new();
        // At most `subagent.max_parallel` run at once (a reply of 2,000 `task` calls would
        // otherwise send hundreds of requests in a second); the rest wait their turn, in
        // order, and say so.
        let max = self.config.subagent_max_parallel.max(1);
        let slots = Arc::new(tokio::sync::Semaphore::new(max));
        for (i, call) in calls.iter().enumerate() {
            self.record(Entry::CallStarted {
                id: call.id.clone(),
            });
            self.emit(AgentEvent::ToolCallStarted {
                id: call.id.clone(),
                name: call.function.name.clone(),
                args: display_args(&call.function.arguments),
            });
            starts.push(Instant::now());
            // A task only reads, and each of its subagent's calls is judged on its own,
            // so the task itself needs no permission.
            match Toolset::Main.prepare(&call.function.name, &call.function.arguments) {
                Ok(prepared) => {
                    let description = prepared.task_description().unwrap_or_default();
                    if running.len() >= max {
                        self.emit(AgentEvent::Subagent {
                            task_id: call.id.clone(),
                            event: SubagentEvent::Queued,
                        });
                    }
                    let run = self
                        .subagent()
                        .run(call.id.clone(), description.to_string());
                    let slots = slots.clone();
                    running.push(async move {
                        // Held until the subagent is done; never closed.
                        let _slot = slots.acquire_owned().await;
                        (i, run.await)
                    });
                    results.push(None);
                }
                Err(text) => {
                    let outcome = subagent::Outcome::error(text);
                    self.emit(finished_event(call, &outcome.result, starts[i]));
                    results.push(Some(outcome));
                }
            }
        }
        let events = self.events.clone();
        let spill = self.spill.clone();
        let slots = &mut results;
        let all = async {
            while let Some((i, mut outcome)) = running.next().await {
                outcome.result.text = toolrun::cap_reporting(
                    &spill,
                    Some(&events),
                    &calls[i].id,
                    &calls[i],
                    outcome.result.text,
                );
                let _ = events.send(finished_event(&calls[i], &outcome.result, starts[i]));
                slots[i] = Some(outcome);
            }
        };
        let completed = self.inbox.run_until(all).await.is_some();
        // No subagent runs now: requests an interrupt left unanswered are void.
        if let Ok(mut open) = self.inbox.open.lock() {
            open.clear();
        }
        for (i, call) in calls.iter().enumerate() {
            match results[i].take() {
                // Its result event is out already.
                Some(outcome) => {
                    for grant in &outcome.granted {
                        self.record(Entry::rule(grant));
                    }
                    self.push(Message::tool_result(call.id.clone(), outcome.result));
                }
                None => self.finish_tool(call, ToolResult::interrupted(), starts[i]),
            }
        }
        completed
    }

    /// A subagent that shares this agent's client, rules, sandbox and approvals.
    fn subagent(&self) -> Subagent {
        Subagent {
            client: self.client.clone(),
            policy: self.config.policy.clone(),
            root: self.config.root.clone(),
            ctx: self.ctx.clone(),
            events: self.events.clone(),
            open: self.inbox.open.clone(),
            max_steps: self.config.subagent_max_steps,
            system_prompt: self.subagent_prompt.clone(),
            spill: self.spill.clone(),
            context: self.config.context.clone(),
            meter: {
                let mut meter = self.meter.clone();
                meter.history_rewritten();
                meter
            },
            mode: self.mode.clone(),
            external: self.config.external_tools.clone(),
        }
    }

    fn finish_tool(&mut self, call: &ToolCall, result: ToolResult, started: Instant) {
        let mut event = finished_event(call, &result, started);
        let at = self.push(Message::tool_result(call.id.clone(), result));
        if let AgentEvent::ToolFinished { stored, .. } = &mut event {
            *stored = at;
        }
        self.emit(event);
    }
}

/// The `ToolFinished` event of `call`, which `result` ended and which began at `started`.
/// The `tools` of the main agent's requests: rein's own, then `external`.
fn tools_json(config: &AgentConfig, external: &[ExternalSpec]) -> serde_json::Value {
    let serde_json::Value::Array(mut list) = tools::specs_json(&Toolset::Main.specs()) else {
        return serde_json::Value::Array(Vec::new());
    };
    if config.external_tools.is_some() {
        list.extend(tools::external::specs_json(external));
    }
    serde_json::Value::Array(list)
}

/// What an external tool that is gone says of itself (its schema kept, so the history's
/// calls to it stay valid against the request's tools).
fn unavailable(spec: &ExternalSpec) -> ExternalSpec {
    if spec.description.starts_with(UNAVAILABLE) {
        return spec.clone();
    }
    ExternalSpec {
        description: format!("{UNAVAILABLE} {}", spec.description),
        ..spec.clone()
    }
}

/// How the description of an external tool that is gone begins.
const UNAVAILABLE: &str =
    "(Not available in this session: its MCP server is not running. Do not call it.)";

/// The main agent's and a subagent's system prompts for `config`, each with the project
/// instructions after it, and how many characters of the main one the instructions take.
/// Built once per conversation: every request of it sends the same bytes (prompt caching).
fn prompts(config: &AgentConfig) -> (String, String, usize) {
    let section = config.instructions.prompt_section();
    let base = system_prompt(&config.root, &config.skills);
    let base_chars = base.len();
    let main = super::with_instructions(base, &section);
    let instructions_chars = main.len() - base_chars;
    let sub = super::with_instructions(
        subagent::system_prompt(&config.root, &config.skills),
        &section,
    );
    (main, sub, instructions_chars)
}

fn finished_event(call: &ToolCall, result: &ToolResult, started: Instant) -> AgentEvent {
    AgentEvent::ToolFinished {
        id: call.id.clone(),
        name: call.function.name.clone(),
        result: result.text.clone(),
        is_error: result.outcome.is_error(),
        outcome: result.outcome,
        duration: started.elapsed(),
        stored: None,
    }
}

/// A call's arguments for display: the parsed object, or the raw text when it is not JSON,
/// long strings cut ([`tools::display_arguments`]).
fn display_args(raw: &str) -> serde_json::Value {
    tools::display_arguments(raw)
}

/// The reply's visible pieces on their way to the front end: those of one network read
/// go as one event, so a stream of small chunks costs a cross-thread wake-up per read, not
/// per chunk. Text and reasoning keep their order: a switch from one to the other sends
/// what came before it.
struct PendingDeltas {
    events: mpsc::UnboundedSender<AgentEvent>,
    text: String,
    reasoning: String,
}

impl PendingDeltas {
    fn new(events: mpsc::UnboundedSender<AgentEvent>) -> PendingDeltas {
        PendingDeltas {
            events,
            text: String::new(),
            reasoning: String::new(),
        }
    }

    fn text(&mut self, piece: &str) {
        if !self.reasoning.is_empty() {
            self.flush();
        }
        self.text.push_str(piece);
    }

    fn reasoning(&mut self, piece: &str) {
        if !self.text.is_empty() {
            self.flush();
        }
        self.reasoning.push_str(piece);
    }

    fn flush(&mut self) {
        if !self.text.is_empty() {
            let text = std::mem::take(&mut self.text);
            let _ = self.events.send(AgentEvent::TextDelta { text });
        }
        if !self.reasoning.is_empty() {
            let text = std::mem::take(&mut self.reasoning);
            let _ = self.events.send(AgentEvent::ReasoningDelta { text });
        }
    }
}
