//! One loop for the agent and its subagents: model calls, each answered by its tool calls'
//! results, until a reply asks for no tools (and no Stop hook keeps it going), something
//! ends the turn, or `max_steps` model calls are spent.
//!
//! What differs is the [`Turn`]'s: the main agent ([`super::runloop`]) fits its context,
//! adds the reminder, streams the text to the front end, records, and runs `task` calls at
//! once; a subagent ([`super::subagent`]) streams nothing, keeps its own history and usage,
//! and does not run the calls of its last step (no model call is left to read them). What
//! is the same is this loop, a step ([`super::step::Step::run_stoppable`], which stops a
//! reply that repeats itself), and the path every call takes under the loop guard
//! ([`super::toolcall::ToolEnv::guarded`]).

use std::future::Future;
use std::ops::ControlFlow;

use super::step::Reply;

/// A turn of the main agent, or a subagent's task: what the loop does at each step.
pub(crate) trait Turn {
    /// How the turn ended.
    type Outcome;

    /// Send the request of model call `step` (from 1) and read its reply. `Err`: how the
    /// turn ends (interrupted, failed, a reply that repeats itself).
    fn request(&mut self, step: u32) -> impl Future<Output = Result<Reply, Self::Outcome>> + Send;

    /// What `reply` (of the last model call allowed when `last`) makes of the turn: run its
    /// tool calls and go on, or end it (a reply without calls, a call that stopped it).
    fn on_reply(
        &mut self,
        reply: Reply,
        last: bool,
    ) -> impl Future<Output = ControlFlow<Self::Outcome>> + Send;

    /// The model calls ran out before a reply ended the turn.
    fn out_of_steps(&mut self) -> Self::Outcome;
}

/// Run `turn`, at most `max_steps` model calls (at least one).
pub(crate) async fn run<T: Turn>(turn: &mut T, max_steps: u32) -> T::Outcome {
    let max_steps = max_steps.max(1);
    for step in 1..=max_steps {
        let reply = match turn.request(step).await {
            Ok(reply) => reply,
            Err(outcome) => return outcome,
        };
        if let ControlFlow::Break(outcome) = turn.on_reply(reply, step == max_steps).await {
            return outcome;
        }
    }
    turn.out_of_steps()
}
