//! The agent task itself: the outer loop over user messages and the inner loop of a turn.
//!
//! Every await that may take long (a model reply, a running tool, an approval) goes through
//! the [`Inbox`], which watches the command channel meanwhile: an interrupt drops the
//! awaited future at once (which drops the HTTP request or kills the command's process
//! group), user messages are queued for after the turn. Whatever happens, each tool call of
//! an assistant message gets exactly one tool message, so the next request is valid.

use std::collections::VecDeque;
use std::future::Future;
use std::path::PathBuf;
use std::time::Instant;

use tokio::sync::{mpsc, oneshot};

use super::client::{ClientEvent, LlmClient};
use super::events::{AgentCommand, AgentEvent, ApprovalDecision, ApprovalReply, TurnOutcome};
use super::messages::{Message, ToolCall};
use super::stream::StreamDelta;
use super::{system_prompt, AgentConfig, SessionSetup};
use crate::permissions::{ToolRequest, Verdict};
use crate::session::{Entry, SessionMeta, SessionWriter};
use crate::tools::{self, ToolContext, ToolSpec};

const INTERRUPTED: &str = "Error: interrupted by the user before this tool finished.";
const NOT_RUN: &str = "Error: not run: the user interrupted the turn before this call started.";

/// What waits for the running turn to end.
enum Queued {
    Message(String),
    NewConversation,
    Rename(String),
}

/// The command channel, watched while the agent awaits something else.
struct Inbox {
    rx: mpsc::UnboundedReceiver<AgentCommand>,
    /// User messages (and new-conversation requests) sent during a turn, carried out in
    /// order when it ends.
    queued: VecDeque<Queued>,
    /// Set once a shutdown was asked for or every sender is gone.
    shutdown: bool,
}

impl Inbox {
    /// Await `fut` unless the user interrupts first (`None`; the future is dropped).
    async fn run_until<F: Future>(&mut self, fut: F) -> Option<F::Output> {
        let mut fut = std::pin::pin!(fut);
        loop {
            tokio::select! {
                biased;
                out = &mut fut => return Some(out),
                cmd = self.rx.recv() => {
                    if self.take(cmd) {
                        return None;
                    }
                }
            }
        }
    }

    /// Wait for the answer to approval request `id`, from its reply channel or as a
    /// command; `None` on interrupt.
    async fn wait_approval(
        &mut self,
        id: &str,
        mut reply: oneshot::Receiver<ApprovalDecision>,
    ) -> Option<ApprovalDecision> {
        // Once every copy of the reply channel is dropped unanswered, only a command can
        // answer (a front end may answer that way and drop the channel).
        let mut reply_open = true;
        loop {
            tokio::select! {
                answer = &mut reply, if reply_open => match answer {
                    Ok(decision) => return Some(decision),
                    Err(_) => reply_open = false,
                },
                cmd = self.rx.recv() => match cmd {
                    Some(AgentCommand::Approval { id: got, decision }) if got == id => {
                        return Some(decision)
                    }
                    cmd => {
                        if self.take(cmd) {
                            return None;
                        }
                    }
                },
            }
        }
    }

    /// Between turns: take in what arrived while no turn ran. Interrupts and answers
    /// that arrive then have nothing to act on and are dropped, so they cannot hit the
    /// next turn.
    fn settle(&mut self) {
        loop {
            match self.rx.try_recv() {
                Ok(AgentCommand::UserMessage(text)) => self.queued.push_back(Queued::Message(text)),
                Ok(AgentCommand::NewConversation) => self.queued.push_back(Queued::NewConversation),
                Ok(AgentCommand::Rename(title)) => self.queued.push_back(Queued::Rename(title)),
                Ok(AgentCommand::Shutdown) | Err(mpsc::error::TryRecvError::Disconnected) => {
                    self.shutdown = true;
                    return;
                }
                Ok(AgentCommand::Interrupt | AgentCommand::Approval { .. }) => {}
                Err(mpsc::error::TryRecvError::Empty) => return,
            }
        }
    }

    /// Handle a command that arrived mid-turn; true when the turn must stop.
    fn take(&mut self, cmd: Option<AgentCommand>) -> bool {
        match cmd {
            None | Some(AgentCommand::Shutdown) => {
                self.shutdown = true;
                true
            }
            Some(AgentCommand::Interrupt) => true,
            Some(AgentCommand::UserMessage(text)) => {
                self.queued.push_back(Queued::Message(text));
                false
            }
            Some(AgentCommand::NewConversation) => {
                self.queued.push_back(Queued::NewConversation);
                false
            }
            Some(AgentCommand::Rename(title)) => {
                self.queued.push_back(Queued::Rename(title));
                false
            }
            // An answer to a request that is no longer open.
            Some(AgentCommand::Approval { .. }) => false,
        }
    }
}

pub(crate) struct Agent {
    config: AgentConfig,
    client: LlmClient,
    specs: Vec<ToolSpec>,
    tools_json: serde_json::Value,
    ctx: ToolContext,
    /// Built once: every request of the session sends the same bytes (prompt caching).
    system_prompt: String,
    history: Vec<Message>,
    inbox: Inbox,
    events: mpsc::UnboundedSender<AgentEvent>,
    /// The session file every committed message, todo list and rule goes to.
    recorder: Option<SessionWriter>,
    /// Where a new conversation's session file goes.
    session_dir: Option<PathBuf>,
    /// Set once a write failed: the user hears about it once, not per entry.
    recorder_failed: bool,
}

impl Agent {
    pub(crate) fn new(
        config: AgentConfig,
        client: LlmClient,
        rx: mpsc::UnboundedReceiver<AgentCommand>,
        events: mpsc::UnboundedSender<AgentEvent>,
        session: Option<SessionSetup>,
    ) -> Self {
        let specs = tools::all_specs();
        let tools_json = tools::specs_json(&specs);
        let ctx = config.tool_context();
        let system_prompt = system_prompt(&config.root, &config.skills);
        let mut history = vec![Message::system(system_prompt.clone())];
        let (recorder, session_dir, resumed) = match session {
            Some(s) => (Some(s.writer), Some(s.data_dir), s.resumed),
            None => (None, None, None),
        };
        if let Some(resumed) = resumed {
            // The system prompt is always fresh (this directory, these skills); the rest is
            // the session as it was.
            history.extend(resumed.history);
            match ctx.todos.lock() {
                Ok(mut list) => *list = resumed.todos,
                Err(poisoned) => *poisoned.into_inner() = resumed.todos,
            }
            config.policy.grant(&resumed.rules);
        }
        Agent {
            config,
            client,
            specs,
            tools_json,
            ctx,
            system_prompt,
            history,
            inbox: Inbox {
                rx,
                queued: VecDeque::new(),
                shutdown: false,
            },
            events,
            recorder,
            session_dir,
            recorder_failed: false,
        }
    }

    /// Append `message` to the history and to the session file.
    fn push(&mut self, message: Message) {
        self.record(Entry::message(message.clone()));
        self.history.push(message);
    }

    /// Write one entry to the session file; a failure is reported once and the session
    /// goes on unrecorded rather than stopping the work.
    fn record(&mut self, entry: Entry) {
        let Some(writer) = self.recorder.as_mut() else {
            return;
        };
        if let Err(e) = writer.append(&entry) {
            if !self.recorder_failed {
                self.recorder_failed = true;
                let message = format!(
                    "the session file {} cannot be written ({e}); this conversation will not be resumable",
                    writer.path().display()
                );
                self.emit(AgentEvent::Error { message });
            }
        }
    }

    fn emit(&self, event: AgentEvent) {
        // A front end that went away is not the agent's problem.
        let _ = self.events.send(event);
    }

    /// The outer loop: wait for a user message, run the turn, repeat.
    pub(crate) async fn run(mut self) {
        loop {
            self.inbox.settle();
            if self.inbox.shutdown {
                break;
            }
            let text = match self.inbox.queued.pop_front() {
                Some(Queued::Message(text)) => text,
                Some(Queued::NewConversation) => {
                    self.new_conversation();
                    continue;
                }
                Some(Queued::Rename(title)) => {
                    self.rename(&title);
                    continue;
                }
                None => match self.inbox.rx.recv().await {
                    None | Some(AgentCommand::Shutdown) => break,
                    Some(AgentCommand::UserMessage(text)) => text,
                    Some(AgentCommand::NewConversation) => {
                        self.new_conversation();
                        continue;
                    }
                    Some(AgentCommand::Rename(title)) => {
                        self.rename(&title);
                        continue;
                    }
                    Some(AgentCommand::Interrupt | AgentCommand::Approval { .. }) => continue,
                },
            };
            let outcome = self.run_turn(text).await;
            self.emit(AgentEvent::TurnFinished { outcome });
            if self.inbox.shutdown {
                break;
            }
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
        if let (Some(dir), Some(old)) = (self.session_dir.clone(), self.recorder.take()) {
            let meta = SessionMeta::new(self.config.root.clone(), self.config.client.model.clone());
            let _ = old.close();
            match SessionWriter::create(&dir, meta) {
                Ok(writer) => self.recorder = Some(writer),
                Err(e) => self.emit(AgentEvent::Error {
                    message: format!(
                        "a new session file cannot be created ({e}); this conversation will not be resumable"
                    ),
                }),
            }
        }
        self.history = vec![Message::system(self.system_prompt.clone())];
        match self.ctx.todos.lock() {
            Ok(mut list) => list.clear(),
            Err(poisoned) => poisoned.into_inner().clear(),
        }
    }

    /// One user turn: model calls and tool runs until a reply asks for no tools.
    async fn run_turn(&mut self, text: String) -> TurnOutcome {
        self.push(Message::user(text.clone()));
        self.emit(AgentEvent::TurnStarted { text });
        for step in 1..=self.config.max_steps.max(1) {
            self.emit(AgentEvent::RequestStarted { step });
            let mut partial = String::new();
            let events = self.events.clone();
            let mut on_event = |event: ClientEvent<'_>| {
                let out = match event {
                    ClientEvent::Delta(StreamDelta::Text(t)) => {
                        partial.push_str(t);
                        AgentEvent::TextDelta {
                            text: t.to_string(),
                        }
                    }
                    ClientEvent::Delta(StreamDelta::Reasoning(r)) => AgentEvent::ReasoningDelta {
                        text: r.to_string(),
                    },
                    ClientEvent::Retrying {
                        attempt,
                        max_attempts,
                        delay,
                        reason,
                    } => AgentEvent::Retrying {
                        attempt,
                        max_attempts,
                        delay,
                        reason,
                    },
                };
                let _ = events.send(out);
            };
            let result = self
                .inbox
                .run_until(
                    self.client
                        .stream_chat(&self.history, &self.tools_json, &mut on_event),
                )
                .await;
            let reply = match result {
                None => {
                    self.keep_partial(partial, "interrupted by the user");
                    return TurnOutcome::Interrupted;
                }
                Some(Err(error)) => {
                    let message = error.to_string();
                    self.keep_partial(partial, &format!("the request failed: {message}"));
                    self.emit(AgentEvent::Error { message });
                    return TurnOutcome::Failed;
                }
                Some(Ok(reply)) => reply,
            };
            if let Some(usage) = reply.usage {
                self.emit(AgentEvent::Usage(usage));
            }
            self.emit(AgentEvent::AssistantMessage {
                text: reply.text.clone(),
                finish_reason: reply.finish_reason.clone(),
            });
            let calls = reply.tool_calls;
            self.push(Message::assistant(reply.text, calls.clone()));
            if calls.is_empty() {
                if reply.finish_reason.as_deref() == Some("length") {
                    self.emit(AgentEvent::Notice {
                        message: "the reply was cut off by the model's output token limit"
                            .to_string(),
                    });
                }
                return TurnOutcome::Completed;
            }
            for (i, call) in calls.iter().enumerate() {
                if !self.run_tool(call).await {
                    for rest in &calls[i + 1..] {
                        self.emit(AgentEvent::ToolCallStarted {
                            id: rest.id.clone(),
                            name: rest.function.name.clone(),
                            args: display_args(&rest.function.arguments),
                        });
                        self.finish_tool(rest, Err(NOT_RUN.to_string()), Instant::now());
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
        let mut started = Instant::now();
        let name = call.function.name.as_str();
        self.emit(AgentEvent::ToolCallStarted {
            id: call.id.clone(),
            name: name.to_string(),
            args: display_args(&call.function.arguments),
        });
        let prepared = match tools::prepare(&self.specs, name, &call.function.arguments) {
            Ok(p) => p,
            Err(text) => {
                self.finish_tool(call, Err(text), started);
                return true;
            }
        };
        let verdict = self.config.policy.check(&ToolRequest {
            tool: prepared.name,
            args: &prepared.args,
            root: &self.config.root,
        });
        match verdict {
            Verdict::Allow => {}
            Verdict::Deny { reason } => {
                let text = format!(
                    "Error: {name} was denied by the permission rules ({reason}). Do not retry it; choose another way or ask the user."
                );
                self.finish_tool(call, Err(text), started);
                return true;
            }
            Verdict::Ask { reason, grants } => {
                let (reply, answer) = ApprovalReply::channel();
                self.emit(AgentEvent::ApprovalNeeded {
                    id: call.id.clone(),
                    name: name.to_string(),
                    summary: prepared.summary(),
                    reason,
                    grants: grants.clone(),
                    preview: prepared.preview(&self.ctx),
                    reply,
                });
                match self.inbox.wait_approval(&call.id, answer).await {
                    None => {
                        self.finish_tool(call, Err(INTERRUPTED.to_string()), started);
                        return false;
                    }
                    Some(ApprovalDecision::Approve) => {}
                    Some(ApprovalDecision::ApproveForSession) => {
                        self.config.policy.grant(&grants);
                        for grant in &grants {
                            self.record(Entry::rule(grant));
                        }
                    }
                    Some(ApprovalDecision::ApproveForProject) => {
                        self.config.policy.grant(&grants);
                        for grant in &grants {
                            self.record(Entry::rule(grant));
                        }
                        match self.config.policy.persist(&grants) {
                            Ok(saved) => self.emit(AgentEvent::Notice { message: saved }),
                            Err(e) => self.emit(AgentEvent::Error {
                                message: format!("the rule was not saved: {e}"),
                            }),
                        }
                    }
                    Some(ApprovalDecision::Deny { feedback }) => {
                        let mut text = format!("Error: {name} was not run: approval was refused");
                        match feedback.filter(|f| !f.trim().is_empty()) {
                            Some(f) => text.push_str(&format!(" ({})", f.trim())),
                            None => text.push_str(" by the user"),
                        }
                        text.push_str(". Do not retry the same action; choose another way or explain what you need.");
                        self.finish_tool(call, Err(text), started);
                        return true;
                    }
                }
            }
        }
        // The duration shown is the tool's own, not the time the user took to decide.
        started = Instant::now();
        let updates_todos = prepared.name == tools::write_todos::NAME;
        match self.inbox.run_until(prepared.execute(&self.ctx)).await {
            Some(result) => {
                let accepted = result.is_ok();
                self.finish_tool(call, result, started);
                if updates_todos && accepted {
                    let todos = match self.ctx.todos.lock() {
                        Ok(list) => list.clone(),
                        Err(poisoned) => poisoned.into_inner().clone(),
                    };
                    self.record(Entry::todos(todos.clone()));
                    self.emit(AgentEvent::TodosUpdated { todos });
                }
                true
            }
            None => {
                self.finish_tool(call, Err(INTERRUPTED.to_string()), started);
                false
            }
        }
    }

    fn finish_tool(&mut self, call: &ToolCall, result: Result<String, String>, started: Instant) {
        let (content, is_error) = match result {
            Ok(text) => (text, false),
            Err(text) => (text, true),
        };
        self.push(Message::tool(call.id.clone(), content.clone()));
        self.emit(AgentEvent::ToolFinished {
            id: call.id.clone(),
            name: call.function.name.clone(),
            result: content,
            is_error,
            duration: started.elapsed(),
        });
    }
}

/// A call's arguments for display: the parsed object, or the raw text when it is not JSON.
fn display_args(raw: &str) -> serde_json::Value {
    tools::parse_arguments(raw).unwrap_or_else(|_| serde_json::Value::String(raw.to_string()))
}
