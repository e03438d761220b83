//! A run of `task` calls of one reply, each a [`Subagent`], at the same time: at most
//! `subagent.max_parallel` at once, the rest waiting their turn in order (and saying so).
//!
//! In three phases: each call is started (recorded, put to the loop guard, which counts a
//! task as any call, and to the user's PreToolUse hooks, then handed to a subagent);
//! the subagents are awaited, each one's `ToolFinished` out as soon as it is done, its
//! result capped; then the results are settled in call order (PostToolUse hooks, the
//! rules granted on the way, the loop guard's answer) and appended. An interrupt drops
//! every running subagent, its request and its commands.

use std::sync::Arc;
use std::time::Instant;

use futures_util::stream::{FuturesUnordered, StreamExt};

use super::tool_calls::finished_event;
use super::Agent;
use crate::agent::events::{AgentEvent, SubagentEvent};
use crate::agent::loop_guard::{Answer, Rejected, Stopped, Ticket, Verdict};
use crate::agent::subagent::{self, Subagent};
use crate::agent::toolcall;
use crate::conversation::{Message, ToolCall, ToolResult};
use crate::session::Entry;
use crate::tools::Toolset;

/// A run of `task` calls on its way, a slot each, in call order.
#[derive(Default)]
struct TaskBatch {
    /// Each call's outcome (`None` while its subagent runs, or when it was interrupted).
    results: Vec<Option<subagent::Outcome>>,
    /// Each task's arguments, for the PostToolUse hooks on its result.
    args: Vec<Option<serde_json::Value>>,
    starts: Vec<Instant>,
    /// Each task's loop-guard ticket, and whether it was sent to a subagent.
    tickets: Vec<(Ticket, Option<bool>)>,
}

impl Agent {
    /// Run `task` calls (consecutive ones of one reply) at the same time, each a subagent,
    /// and append their results in call order. Each call's `ToolFinished` goes out as soon
    /// as its subagent is done. False when the user interrupted (which drops every running
    /// subagent, its request and its commands).
    pub(super) async fn run_tasks(&mut self, calls: &[ToolCall]) -> bool {
        let mut batch = TaskBatch::default();
        let running = FuturesUnordered::new();
        // At most `subagent.max_parallel` run at once (a reply of 2,000 `task` calls would
        // otherwise send hundreds of requests in a second); the rest wait their turn, in
        // order, and say so.
        let max = self.config.subagent_max_parallel.max(1);
        let slots = Arc::new(tokio::sync::Semaphore::new(max));
        for (i, call) in calls.iter().enumerate() {
            let Some(description) = self.start_task(call, &mut batch).await else {
                continue;
            };
            if running.len() >= max {
                self.emit(AgentEvent::Subagent {
                    task_id: call.id.clone(),
                    event: SubagentEvent::Queued,
                });
            }
            let run = self.subagent().run(call.id.clone(), description);
            let slots = slots.clone();
            running.push(async move {
                // Held until the subagent is done; never closed.
                let _slot = slots.acquire_owned().await;
                (i, run.await)
            });
        }
        let completed = self.await_tasks(calls, &mut batch, running).await;
        self.settle_tasks(calls, batch, completed).await
    }

    /// Start the task `call` (its slot in `batch`): the question for its subagent, or
    /// `None` when it does not run (the loop guard stopped it or the turn, it is invalid, a
    /// hook blocked it), its result in its slot already.
    async fn start_task(&mut self, call: &ToolCall, batch: &mut TaskBatch) -> Option<String> {
        self.call_started(call);
        let started = Instant::now();
        batch.starts.push(started);
        // The loop guard counts tasks as any call: the same task asked for again with
        // the same answer, or the same invalid one, is not run.
        let (verdict, ticket) = self.stops.same_calls.next(call);
        let stopped = match verdict {
            Verdict::Go => None,
            Verdict::Ask(found) => Some(Stopped::Task(found)),
            Verdict::Stop(rejections) => Some(Stopped::Rejected(rejections)),
        };
        let not_run = match stopped.filter(|_| self.stops.loop_stopped.is_none()) {
            Some(stopped) => {
                self.stops.loop_stopped = Some(stopped);
                Some(stopped.not_run())
            }
            None => self.stops.loop_stopped.is_some().then(|| {
                "Error: not run - the turn was stopped before this call started.".to_string()
            }),
        };
        if let Some(text) = not_run {
            let outcome = subagent::Outcome::error(text);
            self.emit(finished_event(call, &outcome.result, started));
            batch.results.push(Some(outcome));
            batch.args.push(None);
            batch.tickets.push((ticket, None));
            return None;
        }
        // A task only reads, and each of its subagent's calls is judged on its own,
        // so the task itself needs no permission.
        let prepared = Toolset::Main.prepare(&call.function.name, &call.function.arguments);
        // The user's PreToolUse hooks judge a task as Claude Code's judge `Task`.
        let blocked = match &prepared {
            Ok(p) => self.task_hook(call, &p.args).await,
            Err(_) => None,
        };
        let prepared = match blocked {
            Some(reason) => Err(format!("Error: task was blocked by a hook: {reason}")),
            None => prepared,
        };
        batch
            .args
            .push(prepared.as_ref().ok().map(|p| p.args.clone()));
        batch.tickets.push((ticket, Some(prepared.is_ok())));
        match prepared {
            Ok(prepared) => {
                batch.results.push(None);
                Some(prepared.task_description().unwrap_or_default().to_string())
            }
            Err(text) => {
                let outcome = subagent::Outcome::error(text);
                self.emit(finished_event(call, &outcome.result, started));
                batch.results.push(Some(outcome));
                None
            }
        }
    }

    /// Wait for the `running` subagents, each one's result capped and its `ToolFinished`
    /// out as soon as it is done, into its slot. False when the user interrupted.
    async fn await_tasks<F>(
        &mut self,
        calls: &[ToolCall],
        batch: &mut TaskBatch,
        mut running: FuturesUnordered<F>,
    ) -> bool
    where
        F: std::future::Future<Output = (usize, subagent::Outcome)>,
    {
        let events = self.events.clone();
        let spill = self.spill.clone();
        let (slots, starts) = (&mut batch.results, &batch.starts);
        let all = async {
            while let Some((i, mut outcome)) = running.next().await {
                outcome.result.text = toolcall::cap_reporting(
                    &spill,
                    Some(&events),
                    &calls[i].id,
                    &calls[i],
                    outcome.result.text,
                    outcome.result.whole.take(),
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
        completed
    }

    /// The batch's results in call order, through the user's PostToolUse hooks, with the
    /// rules granted on the way and the loop guard's answer, appended (an interrupted one
    /// as interrupted). False when the turn stops here.
    async fn settle_tasks(
        &mut self,
        calls: &[ToolCall],
        mut batch: TaskBatch,
        completed: bool,
    ) -> bool {
        let mut stopped = None;
        for (i, call) in calls.iter().enumerate() {
            let Some(mut outcome) = batch.results[i].take() else {
                self.finish_tool(call, ToolResult::interrupted(), batch.starts[i]);
                continue;
            };
            // Its result event is out already.
            if let Some(stop) = outcome.hook_stop.take() {
                stopped = Some(stop);
            }
            // The user's PostToolUse hooks on what the subagent answered.
            if let Some(stop) = self
                .task_post_hooks(call, batch.args[i].as_ref(), &mut outcome.result)
                .await
            {
                stopped = Some(stop);
            }
            for grant in &outcome.granted {
                self.record(Entry::rule(grant));
            }
            // The loop guard hears how each task went (not those it stopped).
            let (ticket, ran) = batch.tickets[i];
            let answer = ran.map(|ran| match ran {
                true => Answer::ran(&outcome.result.text, None),
                false => Answer::Rejected(Rejected::of(outcome.result.outcome)),
            });
            if let Some(rejections) = answer.and_then(|a| self.stops.same_calls.answered(ticket, a))
            {
                outcome.result.text.push_str(&rejections.note());
            }
            self.push(Message::tool_result(call.id.clone(), outcome.result));
        }
        match stopped {
            Some(reason) => {
                self.stops.hook_stopped = Some(reason);
                false
            }
            None => completed && self.stops.loop_stopped.is_none(),
        }
    }

    /// A subagent that shares this agent's client, rules, sandbox and approvals.
    pub(super) fn subagent(&self) -> Subagent {
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
            hooks: self.hook_env(),
        }
    }
}
