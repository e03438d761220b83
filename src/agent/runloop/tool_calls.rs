//! Running the tool calls of one reply and keeping their results.
//!
//! A call is recorded as started before it runs (so a resume after a crash knows it may
//! have done its work), judged and run (`toolcall`), and answered by exactly
//! one tool message, with its `ToolFinished` event; rules the user granted on the way and
//! a new todo list are recorded too. Consecutive `task` calls run at the same time, each a
//! [`Subagent`], at most `subagent.max_parallel` at once, their results appended in call
//! order. An interrupt answers what did not finish as interrupted.

use std::sync::Arc;
use std::time::Instant;

use futures_util::stream::{FuturesUnordered, StreamExt};

use super::Agent;
use crate::agent::events::{AgentEvent, SubagentEvent};
use crate::agent::loop_guard::{Answer, Rejected, Stopped, Verdict};
use crate::agent::subagent::{self, Subagent};
use crate::agent::toolcall::{self, Guarded, ToolEnv, ToolRun};
use crate::conversation::{Message, ToolCall, ToolResult};
use crate::session::Entry;
use crate::tools::{self, Toolset};

impl Agent {
    /// A call starts: on disk before it runs (after a crash, resuming knows it may have done
    /// its work), then to the front end.
    fn call_started(&mut self, call: &ToolCall) {
        self.record(Entry::CallStarted {
            id: call.id.clone(),
        });
        self.emit(AgentEvent::ToolCallStarted {
            id: call.id.clone(),
            name: call.function.name.clone(),
            args: display_args(&call.function.arguments),
        });
    }

    /// Judge and run one tool call under the loop guard and append its result. False when
    /// the turn stops here (the user interrupted, the loop guard or a hook stopped it).
    pub(super) async fn run_tool(&mut self, call: &ToolCall) -> bool {
        self.call_started(call);
        let hook_env = self.hook_env();
        let open = self.inbox.open.clone();
        let forms = self.inbox.forms.clone();
        let mut env = ToolEnv {
            toolset: Toolset::Main,
            policy: &*self.config.policy,
            root: &self.config.root,
            ctx: &self.ctx,
            events: &self.events,
            subagent: None,
            open: &open,
            forms: Some(&forms),
            spill: &self.spill,
            mode: &self.mode,
            external: self.config.external_tools.as_deref(),
            looping: None,
            background: Some(&self.background),
            hooks: hook_env.as_ref(),
            guard: Some(&self.config.hooks),
        };
        // What an edit left: part of its answer for the loop guard, and its diff below.
        let edited = edit_target(call, &self.config.root);
        let before = edited.as_deref().map(read_text);
        let after = |run: &ToolRun| {
            let accepted = !run.result.outcome.is_error();
            edited.as_deref().filter(|_| accepted).and_then(read_text)
        };
        let guarded = env
            .guarded(
                &mut self.stops.same_calls,
                Some(&mut self.inbox),
                call,
                after,
            )
            .await;
        let Guarded {
            run,
            after,
            stopped,
        } = match guarded {
            Ok(guarded) => guarded,
            // The same call rein rejected several times in a row: not judged again.
            Err(stopped) => {
                self.finish_tool(call, ToolResult::error(stopped.not_run()), Instant::now());
                self.stops.loop_stopped = Some(stopped);
                return false;
            }
        };
        let accepted = !run.result.outcome.is_error();
        if let Some(reason) = &run.hook_stop {
            self.stops.hook_stopped = Some(reason.clone());
        }
        if stopped.is_some() {
            self.stops.loop_stopped = stopped;
        }
        self.record_mode();
        for grant in &run.granted {
            self.record(Entry::rule(grant));
        }
        let go_on = !run.interrupted && !run.loop_refused && run.hook_stop.is_none();
        self.finish_tool(call, run.result, run.started);
        if accepted {
            // A file in a folder with instruction files of its own: they go out next.
            self.load_nested(call);
        }
        // What an edit changed, for its cell: the file before and after, diffed.
        if let (Some(Some(before)), Some(after)) = (before, after) {
            self.edit_diff(call, &before, &after);
        }
        if call.function.name == tools::write_todos::NAME && accepted {
            let todos = self.todos();
            self.record(Entry::todos(todos.clone()));
            self.emit(AgentEvent::TodosUpdated { todos });
        }
        go_on
    }

    /// The diff of an edit by `call` from `before` to `after`, recorded and shown in its
    /// cell.
    fn edit_diff(&mut self, call: &ToolCall, before: &str, after: &str) {
        if let Some(diff) = crate::checkpoint::diff::short(before, after, EDIT_DIFF_LINES) {
            self.record(Entry::EditDiff {
                id: call.id.clone(),
                diff: diff.clone(),
            });
            self.emit(AgentEvent::EditDiff {
                id: call.id.clone(),
                diff,
            });
        }
    }

    /// Run `task` calls (consecutive ones of one reply) at the same time, each a subagent,
    /// and append their results in call order. Each call's `ToolFinished` goes out as soon
    /// as its subagent is done. False when the user interrupted (which drops every running
    /// subagent, its request and its commands).
    pub(super) async fn run_tasks(&mut self, calls: &[ToolCall]) -> bool {
        let mut results: Vec<Option<subagent::Outcome>> = Vec::new();
        // Each task's arguments, for the PostToolUse hooks on its result.
        let mut task_args = Vec::new();
        let mut starts = Vec::new();
        // Each task's loop-guard ticket, and whether it was sent to a subagent.
        let mut tickets = Vec::new();
        let mut running = FuturesUnordered::new();
        // At most `subagent.max_parallel` run at once (a reply of 2,000 `task` calls would
        // otherwise send hundreds of requests in a second); the rest wait their turn, in
        // order, and say so.
        let max = self.config.subagent_max_parallel.max(1);
        let slots = Arc::new(tokio::sync::Semaphore::new(max));
        for (i, call) in calls.iter().enumerate() {
            self.call_started(call);
            starts.push(Instant::now());
            // The loop guard counts tasks as any call: the same task asked for again with
            // the same answer, or the same invalid one, is not run.
            let (verdict, ticket) = self.stops.same_calls.next(call);
            let stopped = match verdict {
                Verdict::Go => None,
                Verdict::Ask(found) => Some(Stopped::Task(found)),
                Verdict::Stop(rejections) => Some(Stopped::Rejected(rejections)),
            };
            if let Some(stopped) = stopped.filter(|_| self.stops.loop_stopped.is_none()) {
                self.stops.loop_stopped = Some(stopped);
                let outcome = subagent::Outcome::error(stopped.not_run());
                self.emit(finished_event(call, &outcome.result, starts[i]));
                results.push(Some(outcome));
                task_args.push(None);
                tickets.push((ticket, None));
                continue;
            }
            if self.stops.loop_stopped.is_some() {
                let outcome = subagent::Outcome::error(
                    "Error: not run - the turn was stopped before this call started.".to_string(),
                );
                self.emit(finished_event(call, &outcome.result, starts[i]));
                results.push(Some(outcome));
                task_args.push(None);
                tickets.push((ticket, None));
                continue;
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
            task_args.push(prepared.as_ref().ok().map(|p| p.args.clone()));
            tickets.push((ticket, Some(prepared.is_ok())));
            match prepared {
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
        let mut stopped = None;
        for (i, call) in calls.iter().enumerate() {
            match results[i].take() {
                // Its result event is out already.
                Some(mut outcome) => {
                    if let Some(stop) = outcome.hook_stop.take() {
                        stopped = Some(stop);
                    }
                    // The user's PostToolUse hooks on what the subagent answered.
                    if let Some(stop) = self
                        .task_post_hooks(call, task_args[i].as_ref(), &mut outcome.result)
                        .await
                    {
                        stopped = Some(stop);
                    }
                    for grant in &outcome.granted {
                        self.record(Entry::rule(grant));
                    }
                    // The loop guard hears how each task went (not those it stopped).
                    let (ticket, ran) = tickets[i];
                    let answer = ran.map(|ran| match ran {
                        true => Answer::ran(&outcome.result.text, None),
                        false => Answer::Rejected(Rejected::of(outcome.result.outcome)),
                    });
                    if let Some(rejections) =
                        answer.and_then(|a| self.stops.same_calls.answered(ticket, a))
                    {
                        outcome.result.text.push_str(&rejections.note());
                    }
                    self.push(Message::tool_result(call.id.clone(), outcome.result));
                }
                None => self.finish_tool(call, ToolResult::interrupted(), starts[i]),
            }
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

    pub(super) fn finish_tool(&mut self, call: &ToolCall, result: ToolResult, started: Instant) {
        let mut event = finished_event(call, &result, started);
        let at = self.push(Message::tool_result(call.id.clone(), result));
        if let AgentEvent::ToolFinished { stored, .. } = &mut event {
            *stored = at;
        }
        self.emit(event);
    }
}

/// The `ToolFinished` event of `call`, which `result` ended and which began at `started`.
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

/// The most lines an edit's diff keeps for its cell.
const EDIT_DIFF_LINES: usize = 200;
/// Files larger than this get no diff in their cell.
const EDIT_DIFF_BYTES: u64 = 512 * 1024;

/// The file a `write_file` or `str_replace` call edits, resolved as the tool resolves it.
fn edit_target(call: &ToolCall, root: &std::path::Path) -> Option<std::path::PathBuf> {
    if ![tools::write_file::NAME, tools::str_replace::NAME].contains(&call.function.name.as_str()) {
        return None;
    }
    let args: serde_json::Value = serde_json::from_str(&call.function.arguments).ok()?;
    let path = args.get("path")?.as_str()?;
    crate::safe_fs::resolve(std::path::Path::new(path), root).ok()
}

/// The text of the file at `path` (at most [`EDIT_DIFF_BYTES`]; empty when there is no
/// file); `None` when it is larger, not UTF-8 or unreadable.
fn read_text(path: &std::path::Path) -> Option<String> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(String::new()),
        _ => crate::safe_fs::read_small_text(path, EDIT_DIFF_BYTES).ok(),
    }
}

/// A call's arguments for display: the parsed object, or the raw text when it is not JSON,
/// long strings cut ([`tools::display_arguments`]).
pub(super) fn display_args(raw: &str) -> serde_json::Value {
    tools::display_arguments(raw)
}
