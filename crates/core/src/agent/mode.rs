//! The approval mode the agent runs in now, shared by the loop, the inbox and subagents.
//!
//! The front end switches it with [`super::AgentCommand::SetMode`]; the inbox takes the
//! command as soon as it arrives, between turns or in the middle of one, so the change
//! holds from the next tool call judged (an approval already put to the user stays as it
//! is). Auto mode is refused when the sandbox does not work. Every change goes out as
//! [`AgentEvent::ModeChanged`]; the loop records it in the session file
//! (`Entry::Mode`) and tells the model in the next reminder. The decisions themselves are
//! [`crate::permissions::mode`]'s.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc;

use super::events::AgentEvent;
use crate::permissions::mode::auto_unavailable;
use crate::permissions::ApprovalMode;

/// The mode, readable from every task of the agent.
#[derive(Debug, Clone)]
pub(crate) struct SharedMode {
    mode: Arc<AtomicU8>,
    /// Why auto mode cannot be had (the sandbox does not work), or `None`.
    no_auto: Option<String>,
}

fn to_u8(mode: ApprovalMode) -> u8 {
    match mode {
        ApprovalMode::Plan => 0,
        ApprovalMode::Default => 1,
        ApprovalMode::Auto => 2,
    }
}

fn from_u8(n: u8) -> ApprovalMode {
    match n {
        0 => ApprovalMode::Plan,
        2 => ApprovalMode::Auto,
        _ => ApprovalMode::Default,
    }
}

impl SharedMode {
    /// Default mode; `no_auto` is why auto mode is not offered (`None`: the sandbox works).
    pub(crate) fn new(no_auto: Option<String>) -> SharedMode {
        SharedMode {
            mode: Arc::new(AtomicU8::new(to_u8(ApprovalMode::Default))),
            no_auto,
        }
    }

    pub(crate) fn get(&self) -> ApprovalMode {
        from_u8(self.mode.load(Ordering::SeqCst))
    }

    /// Whether commands run in a working sandbox.
    pub(crate) fn sandbox_works(&self) -> bool {
        self.no_auto.is_none()
    }

    /// Switch to `mode`, saying so on `events`; auto without a sandbox is refused with an
    /// error that says why, and the mode stays.
    pub(crate) fn switch(&self, mode: ApprovalMode, events: &mpsc::UnboundedSender<AgentEvent>) {
        if let (ApprovalMode::Auto, Some(reason)) = (mode, &self.no_auto) {
            let _ = events.send(AgentEvent::Error {
                message: format!("{}; still in {} mode", auto_unavailable(reason), self.get()),
            });
            return;
        }
        self.mode.store(to_u8(mode), Ordering::SeqCst);
        let _ = events.send(AgentEvent::ModeChanged { mode });
    }

    /// Set without a word (a resumed session's recorded mode, before anything is sent).
    pub(crate) fn set_quietly(&self, mode: ApprovalMode) {
        self.mode.store(to_u8(mode), Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_is_refused_without_a_sandbox_and_the_mode_stays() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mode = SharedMode::new(Some("bwrap was not found".into()));
        mode.switch(ApprovalMode::Plan, &tx);
        assert_eq!(
            rx.try_recv().unwrap(),
            AgentEvent::ModeChanged {
                mode: ApprovalMode::Plan
            }
        );
        mode.switch(ApprovalMode::Auto, &tx);
        assert_eq!(mode.get(), ApprovalMode::Plan);
        match rx.try_recv().unwrap() {
            AgentEvent::Error { message } => assert_eq!(
                message,
                "auto mode needs the sandbox: bwrap was not found; still in plan mode"
            ),
            other => panic!("{other:?}"),
        }
        let works = SharedMode::new(None);
        works.switch(ApprovalMode::Auto, &tx);
        assert_eq!(works.get(), ApprovalMode::Auto);
        assert_eq!(works.clone().get(), ApprovalMode::Auto, "clones share it");
    }
}
