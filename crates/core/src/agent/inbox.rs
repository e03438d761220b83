//! The command channel, watched while the agent awaits something else.
//!
//! Every await that may take long (a model reply, a running tool or subagent, an approval)
//! goes through the [`Inbox`]: an interrupt drops the awaited future at once (which drops
//! the HTTP request or kills the command's process group) and the messages queued during
//! the turn, user messages and other requests are queued (the turn's next step takes the
//! messages at the front, `super::runloop`; the rest wait for its end), a withdrawn one
//! leaves the queue, and an approval answer (a command naming the
//! request's id) reaches the request it names: the main agent's, which the inbox itself
//! waits for, or a running subagent's, passed on through the one-shot channel the subagent
//! registered in [`OpenApprovals`] (the channel stays inside the agent). While the server
//! is being asked for the context window the inbox watches that question too: the answer
//! is reported ([`AgentEvent::WindowLearnt`]) the moment it arrives, and kept in
//! `learnt` for the agent to take in before its next count or decision
//! ([`super::window`]). An MCP server's form is answered the same way: the answer
//! names the form's id and goes to the call waiting in [`OpenForms`].

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, oneshot};

use super::events::{AgentCommand, AgentEvent, ApprovalDecision, ModelSwitch};
use super::mode::SharedMode;
use super::window::{self, Answer, WindowWatch};
use crate::elicitation::FormAnswer;
use crate::hooks::EndReason;

/// The approval requests of running subagents, by request id: where the answer goes.
/// Dropping a sender (an interrupt clears them all) leaves its subagent's request
/// unanswered, which the subagent takes as an interruption.
pub(crate) type OpenApprovals = Arc<Mutex<HashMap<String, oneshot::Sender<ApprovalDecision>>>>;

/// The servers' forms open now, by id: where the user's answer goes. Dropping a sender
/// (the call ended) answers the server `cancel`.
pub(crate) type OpenForms = Arc<Mutex<HashMap<String, oneshot::Sender<FormAnswer>>>>;

/// What waits for the running turn to end.
pub(crate) enum Queued {
    Message(super::events::Prompt),
    /// A command the user runs themselves (`!COMMAND`).
    Command(String),
    NewConversation,
    Rename(String),
    Compact(Option<String>),
    SetModel(Box<ModelSwitch>),
    Rewind(Box<crate::checkpoint::RestoreOrder>),
}

/// What woke the agent between turns.
pub(crate) enum Wake {
    /// A command (`None`: every sender is gone).
    Command(Option<AgentCommand>),
    /// The window's answer arrived (it is in `learnt`).
    Window,
}

/// The window question the inbox watches: its channel, and the window that stands when
/// the server says nothing.
pub(crate) struct OpenQuestion {
    pub(crate) watch: WindowWatch,
    pub(crate) configured: u64,
}

/// The command channel, watched while the agent awaits something else.
pub(crate) struct Inbox {
    pub(crate) rx: mpsc::UnboundedReceiver<AgentCommand>,
    /// User messages (and new-conversation requests) sent during a turn, carried out in
    /// order when it ends.
    pub(crate) queued: VecDeque<Queued>,
    /// Set once a shutdown was asked for or every sender is gone.
    pub(crate) shutdown: bool,
    /// Why, for the SessionEnd hooks (the first reason given counts).
    pub(crate) end_reason: EndReason,
    /// Approval requests of running subagents, by id: an answer that arrives as a command
    /// is passed on to the subagent that waits for it.
    pub(crate) open: OpenApprovals,
    /// The servers' forms open now: an answer that arrives as a command goes to the call
    /// that waits for it.
    pub(crate) forms: OpenForms,
    /// The approval mode: a switch takes effect the moment it arrives, mid-turn too.
    pub(crate) mode: SharedMode,
    /// Where a switch is reported.
    pub(crate) events: mpsc::UnboundedSender<AgentEvent>,
    /// The server is being asked for the window (`None`: the window is known).
    pub(crate) window: Option<OpenQuestion>,
    /// The window the answer settled on, not yet taken in by the agent.
    pub(crate) learnt: Option<u64>,
}

/// The open question's answer; never returns while there is none.
async fn next_answer(question: &mut Option<OpenQuestion>) -> Answer {
    match question {
        Some(open) => window::answer(&mut open.watch).await,
        None => std::future::pending().await,
    }
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
                answer = next_answer(&mut self.window) => self.answered(answer),
            }
        }
    }

    /// Between turns: the next command, or the window's answer.
    pub(crate) async fn wake(&mut self) -> Wake {
        tokio::select! {
            cmd = self.rx.recv() => Wake::Command(cmd),
            answer = next_answer(&mut self.window) => {
                self.answered(answer);
                Wake::Window
            }
        }
    }

    /// Wait for the window's answer (at most [`window::ANSWER_WAIT`]), taking commands
    /// meanwhile as a turn does; false when the user interrupted (or the agent is shutting
    /// down). At once when no question is open.
    pub(crate) async fn wait_window(&mut self) -> bool {
        if self.window.is_none() {
            return true;
        }
        let limit = tokio::time::sleep(window::ANSWER_WAIT);
        let mut limit = std::pin::pin!(limit);
        loop {
            tokio::select! {
                biased;
                answer = next_answer(&mut self.window) => {
                    self.answered(answer);
                    return true;
                }
                cmd = self.rx.recv() => {
                    if self.take(cmd) {
                        return false;
                    }
                }
                () = &mut limit => {
                    self.answered(Answer::Silent);
                    return true;
                }
            }
        }
    }

    /// Forget the question (a `/model` switch brought its own window).
    pub(crate) fn drop_question(&mut self) {
        self.window = None;
        self.learnt = None;
    }

    /// The question is over: say which window holds from now on, and keep it for the
    /// agent.
    fn answered(&mut self, answer: Answer) {
        let Some(open) = self.window.take() else {
            return;
        };
        let (window, url) = match answer {
            Answer::Reported { tokens, url } if tokens > 0 => (tokens, Some(url)),
            _ => (open.configured, None),
        };
        self.learnt = Some(window);
        let _ = self.events.send(AgentEvent::WindowLearnt { window, url });
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
                Ok(AgentCommand::Rewind(order)) => self.queued.push_back(Queued::Rewind(order)),
                Ok(AgentCommand::End(reason)) => {
                    self.end(reason);
                    return;
                }
                Ok(AgentCommand::Shutdown) | Err(mpsc::error::TryRecvError::Disconnected) => {
                    self.end(EndReason::Other);
                    return;
                }
                Ok(AgentCommand::Withdraw { text, command }) => self.withdraw(&text, command),
                // The front end saw a turn running: what it queued goes back to its user.
                Ok(AgentCommand::Interrupt) => self.drop_sent(),
                Ok(AgentCommand::Approval { .. } | AgentCommand::FormAnswer { .. }) => {}
                Err(mpsc::error::TryRecvError::Empty) => return,
            }
        }
    }

    /// The session ends for `reason` (unless it already ends for another).
    pub(crate) fn end(&mut self, reason: EndReason) {
        if !self.shutdown {
            self.shutdown = true;
            self.end_reason = reason;
        }
    }

    /// The messages and `!COMMAND`s the user sent during the turn, dropped on an
    /// interrupt: none of them starts a turn by itself (the dashboard puts them back in
    /// the input).
    fn drop_sent(&mut self) {
        self.queued
            .retain(|q| !matches!(q, Queued::Message(_) | Queued::Command(_)));
    }

    /// Take the last queued message with this text (or `!COMMAND` of this command) out of
    /// the queue, if it is still there.
    fn withdraw(&mut self, text: &str, command: bool) {
        let found = self.queued.iter().rposition(|q| match q {
            Queued::Message(m) => !command && m.text == text,
            Queued::Command(c) => command && c == text,
            _ => false,
        });
        if let Some(i) = found {
            self.queued.remove(i);
        }
    }

    /// The messages at the front of the queue (none when something else comes first, a
    /// `!COMMAND` or a `/compact`, which must keep its place, or a message with images,
    /// which a tool result's reminder cannot carry): what the turn's next step takes.
    pub(crate) fn take_messages(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(Queued::Message(m)) = self.queued.front() {
            if !m.images.is_empty() {
                break;
            }
            if let Some(Queued::Message(prompt)) = self.queued.pop_front() {
                out.push(prompt.text);
            }
        }
        out
    }

    /// Handle a command that arrived mid-turn; true when the turn must stop.
    fn take(&mut self, cmd: Option<AgentCommand>) -> bool {
        match cmd {
            None | Some(AgentCommand::Shutdown) => {
                self.end(EndReason::Other);
                true
            }
            Some(AgentCommand::End(reason)) => {
                self.end(reason);
                true
            }
            Some(AgentCommand::Interrupt) => {
                self.drop_sent();
                true
            }
            Some(AgentCommand::Withdraw { text, command }) => {
                self.withdraw(&text, command);
                false
            }
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
            Some(AgentCommand::Rewind(order)) => {
                self.queued.push_back(Queued::Rewind(order));
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
            Some(AgentCommand::FormAnswer { id, answer }) => {
                let reply = self.forms.lock().ok().and_then(|mut open| open.remove(&id));
                if let Some(reply) = reply {
                    let _ = reply.send(answer);
                }
                false
            }
        }
    }
}
