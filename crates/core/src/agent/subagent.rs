//! A subagent: one `task` call answered in a throwaway context.
//!
//! In: the task's description, and what the main agent shares with it (the model client,
//! the permission policy, the project and its sandbox, the approval flow). It starts a
//! fresh history (its own system prompt from `crates/core/assets/subagent_prompt.md`, the description
//! as the only user message) and loops as a turn of the main agent does (the same
//! `turn_loop::run`): one model step (the same `step::Step` the main agent takes), then the
//! tool calls through the same path under the same loop guard (`ToolEnv::guarded`) with
//! the read-only [`Toolset::Subagent`] (and the MCP tools the user's config opens to
//! subagents, none by default), append the results, until a
//! reply asks for no tools or `subagent.max_steps` model calls are spent. Out: an
//! `Outcome` whose text is its final answer (or what it had, with a note, when it stopped
//! early), the only thing the main history gets. On the way it reports its steps, calls and
//! usage as [`AgentEvent::Subagent`]; its text is not streamed, and its history is not
//! recorded. An interrupt drops the whole future (its request and its running command with
//! it).

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::mpsc;

use super::client::LlmClient;
use super::events::{AgentEvent, SubagentEvent, Usage};
use super::inbox::OpenApprovals;
use super::loop_guard::{SameCalls, Stopped};
use super::mode::SharedMode;
use super::step::{Reply, Step};
use super::stream::{Assembler, StreamDelta};
use super::toolcall::{Guarded, ToolEnv};
use super::turn_loop::{self, Turn};
use crate::context::budget::TokenMeter;
use crate::context::spill::TurnSpill;
use crate::context::{drop, stubs, ContextConfig};
use crate::conversation::{Message, ToolResult};
use crate::hooks::Event;
use crate::permissions::{Grant, PermissionPolicy};
use crate::skills::SkillSet;
use crate::tools::external::{self as external_tools, ExternalTools};
use crate::tools::{self, ToolContext, Toolset};

/// The subagents' system prompt for a project and its skills. Built once per
/// conversation, like the main one.
pub fn system_prompt(root: &Path, skills: &SkillSet) -> String {
    super::fill_prompt(
        include_str!("../../assets/subagent_prompt.md"),
        root,
        skills,
    )
}

/// Everything a subagent shares with the agent that started it.
pub(crate) struct Subagent {
    pub client: LlmClient,
    pub policy: Arc<dyn PermissionPolicy>,
    pub root: PathBuf,
    pub ctx: ToolContext,
    pub events: mpsc::UnboundedSender<AgentEvent>,
    pub open: OpenApprovals,
    pub max_steps: u32,
    pub system_prompt: String,
    /// The main agent's turn spill: its long results are capped like the main agent's.
    pub spill: TurnSpill,
    /// The main agent's `[context]` settings: its history is stubbed and trimmed like the
    /// main agent's when it outgrows the budget (it is never compacted: it is short-lived).
    pub context: ContextConfig,
    /// The main agent's token accounting (its learnt characters per token).
    pub meter: TokenMeter,
    /// The main agent's approval mode: a subagent runs in it, and follows a switch.
    pub mode: SharedMode,
    /// The main agent's external tools (MCP servers): a subagent is offered those its
    /// servers open to subagents (`mcp_servers.NAME.subagents`; none by default).
    pub external: Option<Arc<dyn ExternalTools>>,
    /// The main agent's hooks: they fire for a subagent's calls too (with its id).
    pub hooks: Option<super::toolcall::HookEnv>,
}

/// How a task ended: the `task` call's result.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub result: ToolResult,
    /// What the user allowed for the session from the subagent's approval requests.
    pub granted: Vec<Grant>,
    /// A hook said `continue: false` inside it (a call's hook, or SubagentStop): the reason,
    /// and the main turn stops too.
    pub hook_stop: Option<String>,
}

impl Outcome {
    pub(crate) fn error(text: String) -> Outcome {
        Outcome {
            result: ToolResult::error(text),
            granted: Vec::new(),
            hook_stop: None,
        }
    }
}

impl Subagent {
    /// Layers 2 and 3 for the subagent's own history, when it is over the budget: stub old
    /// results, then drop the oldest down to the drop target.
    fn fit(&self, history: &mut [Message], tools_chars: usize) {
        let tokens = |h: &[Message]| self.meter.used(h, tools_chars);
        if tokens(history) <= self.context.budget() {
            return;
        }
        let keep_recent = self.context.keep_recent;
        stubs::stub_old_results(history, self.context.stub_chars, keep_recent);
        if tokens(history) > self.context.budget() {
            let target = self.context.drop_target();
            drop::drop_old_results(history, keep_recent, |h| tokens(h) <= target);
        }
    }

    fn report(&self, task_id: &str, event: SubagentEvent) {
        let _ = self.events.send(AgentEvent::Subagent {
            task_id: task_id.to_string(),
            event,
        });
    }

    /// The user's hooks of `event` for this subagent (`task_id`), with `fields`; what they
    /// said (each line also told the user).
    async fn hook(
        &self,
        event: Event,
        task_id: &str,
        mut fields: serde_json::Map<String, serde_json::Value>,
    ) -> Option<crate::hooks::Combined> {
        let hooks = self.hooks.as_ref()?;
        fields.insert("agent_id".into(), task_id.into());
        fields.insert("agent_type".into(), "task".into());
        let mut said = hooks
            .fire(event, Some("task"), self.mode.get(), fields)
            .await?;
        if event == Event::SubagentStop {
            // Claude Code's SubagentStop takes no context: none is said to be added.
            said.context.clear();
        }
        let subject = if event == Event::SubagentStop {
            "the subagent's stop"
        } else {
            "the subagent"
        };
        for (error, message) in super::toolcall::hook_lines(subject, &said) {
            let _ = self.events.send(AgentEvent::Hook {
                event: event.name().to_string(),
                message,
                error,
            });
        }
        Some(said)
    }

    /// The tools it is offered: rein's read-only ones, and the MCP tools the user's config
    /// opens to subagents. Fixed for its run (a server changing its list meanwhile changes
    /// nothing here; a call to a tool that went away says so).
    fn offered_tools(&self) -> serde_json::Value {
        // `lsp` while a language server runs.
        let lsp = self.ctx.lsp.as_ref().is_some_and(|l| l.any_running());
        let own: Vec<_> = Toolset::Subagent
            .specs()
            .into_iter()
            .filter(|s| lsp || s.name != tools::lsp::NAME)
            .collect();
        let mut tools_json = tools::specs_json(&own);
        if let (Some(provider), serde_json::Value::Array(list)) = (&self.external, &mut tools_json)
        {
            let offered: Vec<_> = provider
                .specs()
                .into_iter()
                .filter(|s| s.for_subagents())
                .collect();
            list.extend(external_tools::specs_json(&offered));
        }
        tools_json
    }

    /// The path its calls take ([`ToolEnv`]), as the task `task_id`.
    fn tool_env<'a>(&'a self, task_id: &'a str) -> ToolEnv<'a> {
        ToolEnv {
            toolset: Toolset::Subagent,
            policy: &*self.policy,
            root: &self.root,
            ctx: &self.ctx,
            events: &self.events,
            subagent: Some(task_id),
            open: &self.open,
            forms: None,
            spill: &self.spill,
            mode: &self.mode,
            external: self.external.as_deref(),
            looping: None,
            background: None,
            hooks: self.hooks.as_ref(),
            guard: self.hooks.as_ref().map(|h| &*h.hooks),
            live_output: false,
        }
    }

    /// Answer `description`, as the `task` call `task_id`: model calls and tool runs, as
    /// a turn of the main agent, until a reply asks for no tools or the steps run out.
    pub(crate) async fn run(self, task_id: String, description: String) -> Outcome {
        let tools_json = self.offered_tools();
        let tools_chars = tools_json.to_string().len();
        // The user's SubagentStart hooks; their context rides with the question.
        let start = self
            .hook(Event::SubagentStart, &task_id, Default::default())
            .await;
        let description = match start.map(|s| s.context).filter(|c| !c.is_empty()) {
            Some(context) => format!(
                "{description}\n\n(from the user's hooks: {})",
                context.join("\n")
            ),
            None => description,
        };
        let task = Task::new(task_id, &self.system_prompt, description);
        let step = Step {
            client: &self.client,
            tools_json: &tools_json,
            events: &self.events,
            who: "subagent: ",
            max_tokens: None,
        };
        let max_steps = self.max_steps.max(1);
        let mut turn = SubagentTurn {
            subagent: &self,
            task,
            step,
            tools_chars,
            max_steps,
        };
        turn_loop::run(&mut turn, max_steps).await
    }

    /// The steps ran out before it had an answer: what it said so far is the result.
    fn out_of_steps(&self, task: &mut Task, max_steps: u32) -> Outcome {
        let mut text = format!(
            "Note: the subagent stopped early: it used all {max_steps} of its model calls (subagent.max_steps) before it had an answer."
        );
        if task.said.is_empty() {
            text.push_str(
                " It reported nothing before it stopped; ask a narrower question or look yourself.",
            );
        } else {
            text.push_str(" What it had said so far:\n\n");
            text.push_str(&task.said.join("\n\n"));
        }
        self.end(task, true, ToolResult::ok(text), None)
    }

    /// One model call on the task's history (fitted to the budget first); its text is not
    /// streamed, but a reply that repeats itself is stopped as the main agent's is. `Err`:
    /// how the task ends (the reply repeated itself, the request failed).
    async fn request(
        &self,
        task: &mut Task,
        step: &mut Step<'_>,
        tools_chars: usize,
    ) -> Result<Reply, Outcome> {
        self.report(&task.id, SubagentEvent::RequestStarted { step: task.steps });
        self.fit(&mut task.history, tools_chars);
        let window = self.context.window_known.then_some(self.context.window);
        step.max_tokens = super::client::output_cap(
            self.client.config(),
            window,
            self.meter.used(&task.history, tools_chars),
        );
        let mut repeats = super::repetition::Repeats::default();
        let mut on_delta = |delta: StreamDelta<'_>| match delta {
            StreamDelta::Text(t) => repeats.text(t),
            StreamDelta::Reasoning(r) => repeats.reasoning(r),
            _ => false,
        };
        let reply = step
            .run_stoppable(&task.history, &mut Assembler::new(), &mut on_delta)
            .await;
        // The piece that completed the run may have ended the reply too: the same.
        match reply.filter(|_| !repeats.tripped()) {
            Some(Ok(reply)) => {
                if let Some(u) = reply.usage {
                    task.usage.add(&u);
                    self.report(&task.id, SubagentEvent::Usage(u));
                }
                if let Some(text) = reply.said() {
                    task.said.push(text.to_string());
                }
                Ok(reply)
            }
            None => {
                let mut text = "Error: task stopped - the subagent's reply kept repeating \
                                itself (the same few words over and over)."
                    .to_string();
                if !task.said.is_empty() {
                    text.push_str(" What it said before:\n");
                    text.push_str(&task.said.join("\n\n"));
                }
                Err(self.end(task, true, ToolResult::error(text), None))
            }
            Some(Err(e)) => {
                let text = format!("Error: task failed - the subagent's request failed: {e}");
                Err(self.end(task, false, ToolResult::error(text), None))
            }
        }
    }

    /// A reply that asked for no tools is the task's answer, unless the user's
    /// SubagentStop hooks keep it going, with their reason.
    async fn reply_without_calls(
        &self,
        task: &mut Task,
        reply: Reply,
        max_steps: u32,
    ) -> ControlFlow<Outcome> {
        let mut fields = serde_json::Map::new();
        fields.insert("stop_hook_active".into(), (task.stop_blocks > 0).into());
        fields.insert("last_assistant_message".into(), reply.text.clone().into());
        let stop = self.hook(Event::SubagentStop, &task.id, fields).await;
        let (block, hook_stop) = stop.map_or((None, None), |s| (s.block, s.stop));
        if let Some(reason) = block.filter(|_| hook_stop.is_none()) {
            task.stop_blocks += 1;
            if task.steps < max_steps && task.stop_blocks < 8 {
                let (message, _) = reply.into_message(&self.client.config().model);
                task.history.push(message);
                task.history.push(Message::user(format!(
                    "(from a SubagentStop hook: {reason})"
                )));
                return ControlFlow::Continue(());
            }
        }
        let text = match reply.said() {
            Some(_) => reply.text,
            None => "(the subagent finished without an answer)".to_string(),
        };
        ControlFlow::Break(self.end(task, false, ToolResult::ok(text), hook_stop))
    }

    /// The reply's tool calls, one by one under the loop guard, through the same path as
    /// the main agent's ([`ToolEnv::guarded`]), their results appended. `Break`: the task
    /// ends (the loop guard or a hook stopped it).
    async fn run_calls(&self, task: &mut Task, reply: Reply) -> ControlFlow<Outcome> {
        // Its reasoning goes back as the main agent's does (DeepSeek and Kimi insist);
        // its refusal, as ever, does not.
        let (message, calls) = Reply {
            refusal: String::new(),
            ..reply
        }
        .into_message(&self.client.config().model);
        task.history.push(message);
        let task_id = task.id.clone();
        let mut env = self.tool_env(&task_id);
        for call in &calls {
            self.report(
                &task_id,
                SubagentEvent::ToolCallStarted {
                    id: call.id.clone(),
                    name: call.function.name.clone(),
                    args: tools::display_arguments(&call.function.arguments),
                },
            );
            let guarded = env
                .guarded(&mut task.same_calls, None, call, |_| None::<String>)
                .await;
            let Guarded { run, stopped, .. } = match guarded {
                Ok(guarded) => guarded,
                Err(stopped) => {
                    self.report(&task_id, not_run_event(call, stopped.not_run()));
                    return ControlFlow::Break(self.loop_stopped(task, stopped));
                }
            };
            task.granted.extend(run.granted);
            let hook_stop = run.hook_stop.clone();
            let ToolResult { outcome, text, .. } = run.result.clone();
            let duration = run.started.elapsed();
            task.history
                .push(Message::tool_result(call.id.clone(), run.result));
            self.report(
                &task_id,
                SubagentEvent::ToolFinished {
                    id: call.id.clone(),
                    name: call.function.name.clone(),
                    result: text,
                    is_error: outcome.is_error(),
                    outcome,
                    duration,
                },
            );
            // The user refused the call the loop guard put to them: the subagent ends.
            if let Some(stopped) = stopped {
                return ControlFlow::Break(self.loop_stopped(task, stopped));
            }
            // A hook said `continue: false`: the subagent ends here (its other calls
            // are not run), and so does the main turn.
            if let Some(reason) = hook_stop {
                let mut text = format!("Note: the subagent was stopped by a hook: {reason}");
                if !task.said.is_empty() {
                    text.push_str(". What it had said so far:\n\n");
                    text.push_str(&task.said.join("\n\n"));
                }
                let outcome = self.end(task, true, ToolResult::ok(text), Some(reason));
                return ControlFlow::Break(outcome);
            }
        }
        ControlFlow::Continue(())
    }

    /// The loop guard ended the task (`stopped`): its result says so, with what it said.
    fn loop_stopped(&self, task: &mut Task, stopped: Stopped) -> Outcome {
        let mut text = format!("Error: task stopped - {}.", stopped.what("the subagent"));
        if !task.said.is_empty() {
            text.push_str(" What it said before:\n");
            text.push_str(&task.said.join("\n\n"));
        }
        self.end(task, true, ToolResult::error(text), None)
    }

    /// The task ends with `result` (`stopped_early`: before it had an answer): the front
    /// end hears how many steps it took and what it used.
    fn end(
        &self,
        task: &mut Task,
        stopped_early: bool,
        result: ToolResult,
        hook_stop: Option<String>,
    ) -> Outcome {
        self.report(
            &task.id,
            SubagentEvent::Finished {
                steps: task.steps,
                usage: task.usage,
                stopped_early,
            },
        );
        Outcome {
            result,
            granted: std::mem::take(&mut task.granted),
            hook_stop,
        }
    }
}

/// A subagent's task, for [`turn_loop::run`].
struct SubagentTurn<'a> {
    subagent: &'a Subagent,
    task: Task,
    step: Step<'a>,
    /// The offered tools' schemas, in characters.
    tools_chars: usize,
    max_steps: u32,
}

impl Turn for SubagentTurn<'_> {
    type Outcome = Outcome;

    async fn request(&mut self, step: u32) -> Result<Reply, Outcome> {
        self.task.steps = step;
        let (task, model_step) = (&mut self.task, &mut self.step);
        self.subagent
            .request(task, model_step, self.tools_chars)
            .await
    }

    async fn on_reply(&mut self, reply: Reply, last: bool) -> ControlFlow<Outcome> {
        let task = &mut self.task;
        if reply.calls.is_empty() {
            self.subagent
                .reply_without_calls(task, reply, self.max_steps)
                .await
        } else if last {
            // Its calls would never be read: no model call is left.
            ControlFlow::Break(self.out_of_steps())
        } else {
            self.subagent.run_calls(task, reply).await
        }
    }

    fn out_of_steps(&mut self) -> Outcome {
        self.subagent.out_of_steps(&mut self.task, self.max_steps)
    }
}

/// A running task's own state.
struct Task {
    /// The id of its `task` call.
    id: String,
    history: Vec<Message>,
    usage: Usage,
    /// What the user allowed for the session from its approval requests.
    granted: Vec<Grant>,
    /// The loop guard's memory of its calls.
    same_calls: SameCalls,
    /// What it said along the way: what it has when it stops early.
    said: Vec<String>,
    /// Model calls made.
    steps: u32,
    /// SubagentStop hooks that kept it going, in a row.
    stop_blocks: u32,
}

impl Task {
    /// A fresh history: the subagents' system prompt, and the task's description.
    fn new(id: String, system_prompt: &str, description: String) -> Task {
        Task {
            id,
            history: vec![
                Message::system(system_prompt.to_string()),
                Message::user(description),
            ],
            usage: Usage::default(),
            granted: Vec::new(),
            same_calls: SameCalls::default(),
            said: Vec::new(),
            steps: 0,
            stop_blocks: 0,
        }
    }
}

/// The `ToolFinished` report of a call the loop guard did not run (`text`: why).
fn not_run_event(call: &crate::conversation::ToolCall, text: String) -> SubagentEvent {
    SubagentEvent::ToolFinished {
        id: call.id.clone(),
        name: call.function.name.clone(),
        result: text,
        is_error: true,
        outcome: crate::conversation::ToolOutcome::Error,
        duration: std::time::Duration::ZERO,
    }
}
