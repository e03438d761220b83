//! The loop guard around one call, the main agent's and a subagent's alike
//! ([`super::super::loop_guard`]): the call is taken in before it is judged, and told
//! how it was answered after. A call that goes on with a loop of calls that ran is put to
//! the user whatever the mode; the same call rein rejected several times in a row is not
//! judged at all, and a rejected call sent again says how many times in its result.

use super::{ToolEnv, ToolRun};
use crate::agent::inbox::Inbox;
use crate::agent::loop_guard::{Answer, Rejected, SameCalls, Stopped, Verdict};
use crate::conversation::ToolCall;

/// A call that went through the steps under the loop guard.
pub(crate) struct Guarded<T> {
    pub run: ToolRun,
    /// What the call left, as the caller's `after` read it (an edited file's text).
    pub after: Option<T>,
    /// The user refused the call the loop guard put to them: the turn (or the subagent)
    /// ends.
    pub stopped: Option<Stopped>,
}

impl ToolEnv<'_> {
    /// `call` under the loop guard `same_calls`, through the steps ([`Self::judge_and_run`]).
    /// `after` reads what a call that ran left behind (an edit's file), part of its answer
    /// to the guard. `Err`: the same call rein rejected several times in a row, not judged;
    /// the turn (or the subagent) ends.
    pub(crate) async fn guarded<T: AsRef<str>>(
        &mut self,
        same_calls: &mut SameCalls,
        inbox: Option<&mut Inbox>,
        call: &ToolCall,
        after: impl FnOnce(&ToolRun) -> Option<T>,
    ) -> Result<Guarded<T>, Stopped> {
        let (verdict, ticket) = same_calls.next(call);
        self.looping = match verdict {
            Verdict::Go => None,
            Verdict::Ask(found) => Some(found),
            Verdict::Stop(rejections) => {
                same_calls.answered(ticket, Answer::Rejected(rejections.how));
                return Err(Stopped::Rejected(rejections));
            }
        };
        let mut run = self.judge_and_run(inbox, call).await;
        let after = after(&run);
        let answer = if run.ran {
            Answer::ran(&run.result.text, after.as_ref().map(AsRef::as_ref))
        } else {
            Answer::Rejected(Rejected::of(run.result.outcome))
        };
        // A rejected call sent again: its result says how many times.
        if let Some(rejections) = same_calls.answered(ticket, answer) {
            run.result.text.push_str(&rejections.note());
        }
        let stopped = match (run.loop_refused, self.looping) {
            (true, Some(found)) => Some(Stopped::Refused(found)),
            _ => None,
        };
        Ok(Guarded {
            run,
            after,
            stopped,
        })
    }
}
