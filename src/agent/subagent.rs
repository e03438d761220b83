//! A subagent: one `task` call answered in a throwaway context.
//!
//! In: the task's description, and what the main agent shares with it (the model client,
//! the permission policy, the project and its sandbox, the approval flow). It starts a
//! fresh history (its own system prompt from `assets/subagent_prompt.md`, the description
//! as the only user message) and loops like a turn of the main agent: one model step (the
//! same `step::Step` the main agent takes), then the tool calls through the same judging
//! path (`ToolEnv`) with the read-only [`Toolset::Subagent`] (and the MCP tools the user's
//! config opens to subagents, none by default), append the results, until a
//! reply asks for no tools or `subagent.max_steps` model calls are spent. Out: an
//! `Outcome` whose text is its final answer (or what it had, with a note, when it stopped
//! early), the only thing the main history gets. On the way it reports its steps, calls and
//! usage as [`AgentEvent::Subagent`]; its text is not streamed, and its history is not
//! recorded. An interrupt drops the whole future (its request and its running command with
//! it).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::mpsc;

use super::client::LlmClient;
use super::events::{AgentEvent, SubagentEvent, Usage};
use super::inbox::OpenApprovals;
use super::loop_guard::{Answer, Rejected, SameCalls, Stopped, Verdict};
use super::mode::SharedMode;
use super::step::{Reply, Step};
use super::toolcall::ToolEnv;
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

    /// The loop guard ended the task (`stopped`): its result says so, with what it said.
    fn loop_stopped(
        &self,
        task_id: &str,
        steps: u32,
        usage: Usage,
        granted: Vec<Grant>,
        said: &[String],
        stopped: Stopped,
    ) -> Outcome {
        self.report(
            task_id,
            SubagentEvent::Finished {
                steps,
                usage,
                stopped_early: true,
            },
        );
        let mut text = format!("Error: task stopped - {}.", stopped.what("the subagent"));
        if !said.is_empty() {
            text.push_str(" What it said before:\n");
            text.push_str(&said.join("\n\n"));
        }
        Outcome {
            result: ToolResult::error(text),
            granted,
            hook_stop: None,
        }
    }

    /// Answer `description`, as the `task` call `task_id`.
    pub(crate) async fn run(self, task_id: String, description: String) -> Outcome {
        // Its tools are fixed for its run (a server changing its list meanwhile changes
        // nothing here; a call to a tool that went away says so).
        let mut tools_json = tools::specs_json(&Toolset::Subagent.specs());
        if let (Some(provider), serde_json::Value::Array(list)) = (&self.external, &mut tools_json)
        {
            let offered: Vec<_> = provider
                .specs()
                .into_iter()
                .filter(|s| s.for_subagents())
                .collect();
            list.extend(external_tools::specs_json(&offered));
        }
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
        let mut history = vec![
            Message::system(self.system_prompt.clone()),
            Message::user(description),
        ];
        let mut stop_blocks = 0;
        let mut usage = Usage::default();
        let mut granted = Vec::new();
        let mut same_calls = SameCalls::default();
        // What it said along the way: what it has when it stops early.
        let mut said: Vec<String> = Vec::new();
        let max_steps = self.max_steps.max(1);
        let mut steps = 0;
        let finished = |steps, usage, stopped_early| SubagentEvent::Finished {
            steps,
            usage,
            stopped_early,
        };
        let mut step = Step {
            client: &self.client,
            tools_json: &tools_json,
            events: &self.events,
            who: "subagent: ",
            max_tokens: None,
        };
        let window = self.context.window_known.then_some(self.context.window);
        while steps < max_steps {
            steps += 1;
            self.report(&task_id, SubagentEvent::RequestStarted { step: steps });
            self.fit(&mut history, tools_chars);
            step.max_tokens = super::client::output_cap(
                self.client.config(),
                window,
                self.meter.used(&history, tools_chars),
            );
            // Its text is its own business: nothing is streamed, but a reply that repeats
            // itself is stopped as the main agent's is.
            let mut repeats = super::repetition::Repeats::default();
            let stop = tokio::sync::Notify::new();
            let mut on_delta = |delta: super::stream::StreamDelta<'_>| {
                let repeating = match delta {
                    super::stream::StreamDelta::Text(t) => repeats.text(t),
                    super::stream::StreamDelta::Reasoning(r) => repeats.reasoning(r),
                    _ => false,
                };
                if repeating {
                    stop.notify_one();
                }
            };
            let reply = tokio::select! {
                reply = step.run(&history, &mut on_delta) => Some(reply),
                () = stop.notified() => None,
            };
            // The piece that completed the run may have ended the reply too: the same.
            let reply = reply.filter(|_| !repeats.tripped());
            let reply = match reply {
                Some(Ok(reply)) => reply,
                None => {
                    self.report(&task_id, finished(steps, usage, true));
                    let mut text = "Error: task stopped - the subagent's reply kept repeating \
                                    itself (the same few words over and over)."
                        .to_string();
                    if !said.is_empty() {
                        text.push_str(" What it said before:\n");
                        text.push_str(&said.join("\n\n"));
                    }
                    return Outcome {
                        result: ToolResult::error(text),
                        granted,
                        hook_stop: None,
                    };
                }
                Some(Err(e)) => {
                    self.report(&task_id, finished(steps, usage, false));
                    return Outcome {
                        result: ToolResult::error(format!(
                            "Error: task failed - the subagent's request failed: {e}"
                        )),
                        granted,
                        hook_stop: None,
                    };
                }
            };
            if let Some(u) = reply.usage {
                usage.add(&u);
                self.report(&task_id, SubagentEvent::Usage(u));
            }
            if let Some(text) = reply.said() {
                said.push(text.to_string());
            }
            if reply.calls.is_empty() {
                // The user's SubagentStop hooks may keep it going, with their reason.
                let mut fields = serde_json::Map::new();
                fields.insert("stop_hook_active".into(), (stop_blocks > 0).into());
                fields.insert("last_assistant_message".into(), reply.text.clone().into());
                let stop = self.hook(Event::SubagentStop, &task_id, fields).await;
                let (block, hook_stop) = stop.map_or((None, None), |s| (s.block, s.stop));
                if let Some(reason) = block.filter(|_| hook_stop.is_none()) {
                    stop_blocks += 1;
                    if steps < max_steps && stop_blocks < 8 {
                        let (message, _) = reply.into_message(&self.client.config().model);
                        history.push(message);
                        history.push(Message::user(format!(
                            "(from a SubagentStop hook: {reason})"
                        )));
                        continue;
                    }
                }
                self.report(&task_id, finished(steps, usage, false));
                let text = match reply.said() {
                    Some(_) => reply.text,
                    None => "(the subagent finished without an answer)".to_string(),
                };
                return Outcome {
                    result: ToolResult::ok(text),
                    granted,
                    hook_stop,
                };
            }
            if steps == max_steps {
                // Its calls would never be read: no model call is left.
                break;
            }
            // Its reasoning goes back as the main agent's does (DeepSeek and Kimi insist);
            // its refusal, as ever, does not.
            let (message, calls) = Reply {
                refusal: String::new(),
                ..reply
            }
            .into_message(&self.client.config().model);
            history.push(message);
            let mut env = ToolEnv {
                toolset: Toolset::Subagent,
                policy: &*self.policy,
                root: &self.root,
                ctx: &self.ctx,
                events: &self.events,
                subagent: Some(&task_id),
                open: &self.open,
                forms: None,
                spill: &self.spill,
                mode: &self.mode,
                external: self.external.as_deref(),
                looping: None,
                background: None,
                hooks: self.hooks.as_ref(),
                guard: self.hooks.as_ref().map(|h| &*h.hooks),
            };
            for call in &calls {
                self.report(
                    &task_id,
                    SubagentEvent::ToolCallStarted {
                        id: call.id.clone(),
                        name: call.function.name.clone(),
                        args: tools::display_arguments(&call.function.arguments),
                    },
                );
                // The loop guard watches a subagent's calls as the main agent's.
                let (verdict, ticket) = same_calls.next(call);
                env.looping = match verdict {
                    Verdict::Go => None,
                    Verdict::Ask(found) => Some(found),
                    Verdict::Stop(rejections) => {
                        let stopped = Stopped::Rejected(rejections);
                        self.report(
                            &task_id,
                            SubagentEvent::ToolFinished {
                                id: call.id.clone(),
                                name: call.function.name.clone(),
                                result: stopped.not_run(),
                                is_error: true,
                                outcome: crate::conversation::ToolOutcome::Error,
                                duration: std::time::Duration::ZERO,
                            },
                        );
                        return self.loop_stopped(&task_id, steps, usage, granted, &said, stopped);
                    }
                };
                let mut run = env.judge_and_run(None, call).await;
                let answer = if run.ran {
                    Answer::ran(&run.result.text, None)
                } else {
                    Answer::Rejected(Rejected::of(run.result.outcome))
                };
                if let Some(rejections) = same_calls.answered(ticket, answer) {
                    run.result.text.push_str(&rejections.note());
                }
                granted.extend(run.granted);
                let hook_stop = run.hook_stop.clone();
                let ToolResult { outcome, text, .. } = run.result.clone();
                let duration = run.started.elapsed();
                history.push(Message::tool_result(call.id.clone(), run.result));
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
                if let (true, Some(found)) = (run.loop_refused, env.looping) {
                    let stopped = Stopped::Refused(found);
                    return self.loop_stopped(&task_id, steps, usage, granted, &said, stopped);
                }
                // A hook said `continue: false`: the subagent ends here (its other calls
                // are not run), and so does the main turn.
                if let Some(reason) = hook_stop {
                    self.report(&task_id, finished(steps, usage, true));
                    let mut text = format!("Note: the subagent was stopped by a hook: {reason}");
                    if !said.is_empty() {
                        text.push_str(". What it had said so far:\n\n");
                        text.push_str(&said.join("\n\n"));
                    }
                    return Outcome {
                        result: ToolResult::ok(text),
                        granted,
                        hook_stop: Some(reason),
                    };
                }
            }
        }
        self.report(&task_id, finished(steps, usage, true));
        let mut text = format!(
            "Note: the subagent stopped early: it used all {max_steps} of its model calls (subagent.max_steps) before it had an answer."
        );
        if said.is_empty() {
            text.push_str(
                " It reported nothing before it stopped; ask a narrower question or look yourself.",
            );
        } else {
            text.push_str(" What it had said so far:\n\n");
            text.push_str(&said.join("\n\n"));
        }
        Outcome {
            result: ToolResult::ok(text),
            granted,
            hook_stop: None,
        }
    }
}
