//! The command channel, watched while the agent awaits something else.
//!
//! Every await that may take long (a model reply, a running tool or subagent, an approval)
//! goes through the [`Inbox`]: an interrupt drops the awaited future at once (which drops
//! the HTTP request or kills the command's process group), user messages and other
//! requests are queued for after the turn, and an approval answer (a command naming the
//! request's id) reaches the request it names: the main agent's, which the inbox itself
//! waits for, or a running subagent's, passed on through the one-shot channel the subagent
//! registered in [`OpenApprovals`] (the channel stays inside the agent).

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, oneshot};

use super::events::{AgentCommand, AgentEvent, ApprovalDecision, ModelSwitch};
use super::mode::SharedMode;

/// The approval requests of running subagents, by request id: where the answer goes.
/// Dropping a sender (an interrupt clears them all) leaves its subagent's request
/// unanswered, which the subagent takes as an interruption.
pub(crate) type OpenApprovals = Arc<Mutex<HashMap<String, oneshot::Sender<ApprovalDecision>>>>;

/// What waits for the running turn to end.
pub(crate) enum Queued {
    Message(String),
    /// A command the user runs themselves (`!COMMAND`).
    Command(String),
    NewConversation,
    Rename(String),
    Compact(Option<String>),
    SetModel(Box<ModelSwitch>),
}

/// The command channel, watched while the agent awaits something else.
pub(crate) struct Inbox {
    pub(crate) rx: mpsc::UnboundedReceiver<AgentCommand>,
    /// User messages (and new-conversation requests) sent during a turn, carried out in
    /// order when it ends.
    pub(crate) queued: VecDeque<Queued>,
    /// Set once a shutdown was asked for or every sender is gone.
    pub(crate) shutdown: bool,
    /// Approval requests of running subagents, by id: an answer that arrives as a command
    /// is passed on to the subagent that waits for it.
    pub(crate) open: OpenApprovals,
    /// The approval mode: a switch takes effect the moment it arrives, mid-turn too.
    pub(crate) mode: SharedMode,
    /// Where a switch is reported.
    pub(crate) events: mpsc::UnboundedSender<AgentEvent>,
}

impl Inbox {
    /// Await `fut` unless the user interrupts first (`None`; the future is dropped).
    pub(crate) async fn run_until<F: Future>(&mut self, fut: F) -> Option<F::Output> {
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

    /// Wait for the answer to the main agent's approval request `id`; `None` on an
    /// interrupt, a shutdown, or when the front end is gone.
    pub(crate) async fn wait_approval(&mut self, id: &str) -> Option<ApprovalDecision> {
        loop {
            match self.rx.recv().await {
                Some(AgentCommand::Approval { id: got, decision }) if got == id => {
                    return Some(decision)
                }
                cmd => {
                    if self.take(cmd) {
                        return None;
                    }
                }
            }
        }
    }

    /// Between turns: take in what arrived while no turn ran. Interrupts and answers
    /// that arrive then have nothing to act on and are dropped, so they cannot hit the
    /// next turn.
    pub(crate) fn settle(&mut self) {
        loop {
            match self.rx.try_recv() {
                Ok(AgentCommand::UserMessage(text)) => self.queued.push_back(Queued::Message(text)),
                Ok(AgentCommand::RunCommand(text)) => self.queued.push_back(Queued::Command(text)),
                Ok(AgentCommand::SetMode(mode)) => self.mode.switch(mode, &self.events),
                Ok(AgentCommand::NewConversation) => self.queued.push_back(Queued::NewConversation),
                Ok(AgentCommand::Rename(title)) => self.queued.push_back(Queued::Rename(title)),
                Ok(AgentCommand::Compact { focus }) => {
                    self.queued.push_back(Queued::Compact(focus))
                }
                Ok(AgentCommand::SetModel(switch)) => {
                    self.queued.push_back(Queued::SetModel(switch))
                }
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
            Some(AgentCommand::RunCommand(text)) => {
                self.queued.push_back(Queued::Command(text));
                false
            }
            Some(AgentCommand::SetMode(mode)) => {
                self.mode.switch(mode, &self.events);
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
            Some(AgentCommand::Compact { focus }) => {
                self.queued.push_back(Queued::Compact(focus));
                false
            }
            Some(AgentCommand::SetModel(switch)) => {
                self.queued.push_back(Queued::SetModel(switch));
                false
            }
            Some(AgentCommand::Approval { id, decision }) => {
                // A subagent's request; any other is no longer open.
                let reply = self.open.lock().ok().and_then(|mut open| open.remove(&id));
                if let Some(reply) = reply {
                    let _ = reply.send(decision);
                }
                false
            }
        }
    }
}
