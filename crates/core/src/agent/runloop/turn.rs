//! One user turn, in phases: open the turn (the user message, `user_message`), then
//! [`turn_loop::run`] (the loop subagents run too) per model call: send the request and read the streamed reply (`request`), handle the reply
//! (`take_reply`), then either run its tool calls (`run_calls`) or, for a reply that asks
//! for none, hear the Stop hooks (`reply_without_calls`); each of those decides whether
//! the turn goes on. `agent.max_steps` model calls end it all the same.
//!
//! Whatever happens, each tool call of an assistant message gets exactly one tool message
//! (`not_run` for those an interrupt kept from running), and a reply that did not complete
//! keeps the text the user already saw (`keep_partial`).

use std::ops::ControlFlow;
use std::time::Instant;

use super::deltas::PendingDeltas;
use super::tool_calls::display_args;
use super::{checkpoints, Agent};
use crate::agent::client::{self, ClientError};
use crate::agent::events::{AgentEvent, Prompt, TurnOutcome};
use crate::agent::repetition::Repeats;
use crate::agent::step::{Reply, Step};
use crate::agent::stream::{Assembler, StreamDelta};
use crate::agent::turn_loop::{self, Turn};
use crate::context::budget;
use crate::conversation::{Message, ToolCall, ToolResult};
use crate::tools;

/// Stop hooks that block in a row before the turn ends all the same (a Stop hook that
/// always blocks would otherwise loop until `agent.max_steps`).
const MAX_STOP_BLOCKS: u32 = 8;

/// A turn of the main agent, for [`turn_loop::run`].
struct MainTurn<'a> {
    agent: &'a mut Agent,
    /// Stop hooks that kept the turn going, in a row.
    stop_blocks: u32,
}

impl Turn for MainTurn<'_> {
    type Outcome = TurnOutcome;

    async fn request(&mut self, step: u32) -> Result<Reply, TurnOutcome> {
        self.agent.request(step).await
    }

    async fn on_reply(&mut self, reply: Reply, _last: bool) -> ControlFlow<TurnOutcome> {
        let (shown, stopped_short, calls) = self.agent.take_reply(reply);
        if calls.is_empty() {
            self.agent
                .reply_without_calls(&shown, stopped_short, &mut self.stop_blocks)
                .await
        } else {
            self.agent.run_calls(&calls).await
        }
    }

    fn out_of_steps(&mut self) -> TurnOutcome {
        self.agent.emit(AgentEvent::Notice {
            message: format!(
                "stopped after {} model calls in one turn (agent.max_steps); send a message to go on",
                self.agent.config.max_steps
            ),
        });
        TurnOutcome::StepLimit
    }
}

/// What a model call ended with: `None` when the user interrupted it, `Some(None)` when
/// it was stopped for repeating itself, else the reply or the error that ended it.
type Streamed = Option<Option<Result<Reply, ClientError>>>;

impl Agent {
    /// One user turn: model calls and tool runs until a reply asks for no tools
    /// ([`turn_loop::run`], the loop subagents run too).
    pub(super) async fn run_turn(&mut self, prompt: Prompt) -> TurnOutcome {
        if let Err(outcome) = self.open_turn(prompt).await {
            return outcome;
        }
        let max_steps = self.config.max_steps;
        let mut turn = MainTurn {
            agent: self,
            stop_blocks: 0,
        };
        turn_loop::run(&mut turn, max_steps).await
    }

    /// Send the request of model call `step` (the context fitted, from the second on the
    /// reminder and the messages the user sent meanwhile) and read its reply. `Err`: how
    /// the turn ends (interrupted, failed, repeating itself).
    async fn request(&mut self, step: u32) -> Result<Reply, TurnOutcome> {
        if !self.fit_context().await {
            self.keep_partial(String::new(), "interrupted by the user");
            return Err(TurnOutcome::Interrupted);
        }
        if step > 1 {
            self.remind_if_changed();
            self.deliver_queued().await;
        }
        // After any fitting, so a front end sees the compaction before the request.
        self.emit(AgentEvent::RequestStarted { step });
        let request_chars = budget::request_chars(self.history.messages(), self.tools_chars);
        let request_messages = self.history.len();
        let reply = self.stream_reply().await?;
        if let Some(usage) = reply.usage {
            if !usage.estimated {
                self.meter
                    .observe(request_chars, usage.prompt_tokens, request_messages);
            }
            self.emit(AgentEvent::Usage(usage));
        }
        Ok(reply)
    }

    /// Stream the reply to the history as it is, its text and reasoning to the front end;
    /// a reply that repeats itself is stopped (see `repetition`).
    async fn stream_reply(&mut self) -> Result<Reply, TurnOutcome> {
        // What streamed is kept in the assembler (for an interrupt or a failure), not
        // copied here.
        let mut assembler = Assembler::new();
        let mut pending = PendingDeltas::new(self.events.clone());
        let mut repeats = Repeats::default();
        let mut on_delta = |delta: StreamDelta<'_>| match delta {
            // A refusal is the reply: shown as text, recorded as a refusal.
            StreamDelta::Text(t) | StreamDelta::Refusal(t) => {
                pending.text(t);
                repeats.text(t)
            }
            StreamDelta::Reasoning(r) => {
                pending.reasoning(r);
                repeats.reasoning(r)
            }
            StreamDelta::Flush => {
                pending.flush();
                false
            }
        };
        let context = &self.config.context;
        let model_step = Step {
            client: &self.client,
            tools_json: &self.tools_json,
            events: &self.events,
            who: "",
            max_tokens: client::output_cap(
                self.client.config(),
                context.window_known.then_some(context.window),
                self.used(),
            ),
        };
        let history = self.history.messages();
        let request = model_step.run_stoppable(history, &mut assembler, &mut on_delta);
        let result = self.inbox.run_until(request).await;
        // Whatever streamed before an interrupt or a failure is shown too.
        on_delta(StreamDelta::Flush);
        self.read_reply(result, &mut assembler, &repeats)
    }

    /// What the streamed `result` makes of the turn: its reply, or how the turn ends.
    fn read_reply(
        &mut self,
        result: Streamed,
        assembler: &mut Assembler,
        repeats: &Repeats,
    ) -> Result<Reply, TurnOutcome> {
        let reply = match result {
            // Stopped mid-stream, or the piece that completed the run ended the reply
            // too: the verdict is the text's, not the stream's timing.
            Some(finished) if repeats.tripped() => {
                // A reply that ended took its text out of the assembler.
                let (streamed, reasoning) = match finished {
                    Some(Ok(reply)) => {
                        let reasoning = reply.reasoning.map(|r| r.text).unwrap_or_default();
                        (reply.text + &reply.refusal, reasoning)
                    }
                    _ => (assembler.take_streamed(), assembler.reasoning().to_string()),
                };
                let reasoning = repeats.reasoning_cut(&reasoning);
                self.stop_repeating(repeats, streamed, reasoning);
                return Err(TurnOutcome::Failed);
            }
            Some(reply) => reply,
            None => None,
        };
        match reply {
            None => {
                self.keep_partial(assembler.take_streamed(), "interrupted by the user");
                Err(TurnOutcome::Interrupted)
            }
            Some(Err(error)) => {
                self.request_failed(error, assembler);
                Err(TurnOutcome::Failed)
            }
            Some(Ok(reply)) => Ok(reply),
        }
    }

    /// The reply shown and kept: what the user saw of it, why it stopped short (for a
    /// reply without calls), and its tool calls.
    fn take_reply(&mut self, reply: Reply) -> (String, Option<&'static str>, Vec<ToolCall>) {
        let shown = reply.shown().to_string();
        self.emit(AgentEvent::AssistantMessage {
            text: shown.clone(),
            finish_reason: reply.finish_reason.clone(),
            refusal: reply.is_refusal(),
        });
        let stopped_short = reply.stopped_short();
        for tool in reply.hosted_tools() {
            self.emit(AgentEvent::Notice {
                message: format!(
                    "the server ran its own tool {tool} in this reply (rein did not run it)"
                ),
            });
        }
        let (message, calls) = reply.into_message(&self.client.config().model);
        self.push(message);
        self.emit_context();
        (shown, stopped_short, calls)
    }

    /// A reply that asked for no tools ends the turn, unless the user's Stop hooks keep
    /// the model going, with their reason (`stop_blocks`: how many did so in a row).
    async fn reply_without_calls(
        &mut self,
        shown: &str,
        stopped_short: Option<&'static str>,
        stop_blocks: &mut u32,
    ) -> ControlFlow<TurnOutcome> {
        if let Some(reason) = self.stop_hooks(shown, *stop_blocks > 0).await {
            *stop_blocks += 1;
            if *stop_blocks >= MAX_STOP_BLOCKS {
                self.emit(AgentEvent::Notice {
                    message: format!(
                        "a Stop hook kept the turn going {MAX_STOP_BLOCKS} times in a row; \
                         the turn ends here"
                    ),
                });
                return ControlFlow::Break(TurnOutcome::Completed);
            }
            self.push(Message::user(format!("(from a Stop hook: {reason})")));
            return ControlFlow::Continue(());
        }
        if let Some(why) = stopped_short {
            self.emit(AgentEvent::Notice {
                message: why.to_string(),
            });
        }
        ControlFlow::Break(TurnOutcome::Completed)
    }

    /// Run the reply's tool calls (the window known first when it has tasks, the files
    /// recorded around a batch that may change them), then decide whether the turn goes
    /// on: not when a hook or the loop guard stopped it, or the user interrupted.
    async fn run_calls(&mut self, calls: &[ToolCall]) -> ControlFlow<TurnOutcome> {
        // A subagent budgets its own history on the window it is given: not on a guess.
        let tasks_in_reply = calls.iter().any(|c| c.function.name == tools::task::NAME);
        if tasks_in_reply && !self.wait_for_window().await {
            self.not_run(calls);
            return ControlFlow::Break(TurnOutcome::Interrupted);
        }
        let changes_files = calls
            .iter()
            .any(|c| checkpoints::could_change_files(&c.function.name));
        if changes_files && !self.checkpoint_before_batch().await {
            self.not_run(calls);
            return ControlFlow::Break(TurnOutcome::Interrupted);
        }
        let completed = self.run_batch(calls).await;
        if changes_files {
            self.checkpoint_after_batch();
        }
        if let Some(reason) = self.stops.hook_stopped.take() {
            self.emit(AgentEvent::Notice {
                message: format!("the turn was stopped by a hook: {reason}"),
            });
            return ControlFlow::Break(TurnOutcome::Completed);
        }
        if let Some(stopped) = self.stops.loop_stopped.take() {
            self.emit(AgentEvent::Notice {
                message: stopped.notice(),
            });
            return ControlFlow::Break(TurnOutcome::Failed);
        }
        match completed {
            true => ControlFlow::Continue(()),
            false => ControlFlow::Break(TurnOutcome::Interrupted),
        }
    }

    /// Run `calls` in order, a run of `task` calls at once and anything else one by one;
    /// false when one stopped the turn (the calls after it get their `not_run` result).
    async fn run_batch(&mut self, calls: &[ToolCall]) -> bool {
        let mut i = 0;
        while i < calls.len() {
            let tasks = calls[i..]
                .iter()
                .take_while(|c| c.function.name == tools::task::NAME)
                .count();
            let completed = if tasks > 0 {
                self.run_tasks(&calls[i..i + tasks]).await
            } else {
                self.run_tool(&calls[i]).await
            };
            i += tasks.max(1);
            if !completed {
                self.not_run(&calls[i..]);
                return false;
            }
        }
        true
    }

    /// Calls of an interrupted reply that never ran: each gets its result all the same.
    fn not_run(&mut self, calls: &[ToolCall]) {
        for rest in calls {
            self.emit(AgentEvent::ToolCallStarted {
                id: rest.id.clone(),
                name: rest.function.name.clone(),
                args: display_args(&rest.function.arguments),
            });
            self.finish_tool(rest, ToolResult::not_run(), Instant::now());
        }
    }

    /// The reply repeated itself and was stopped: the front end's copy and the history
    /// keep its start, cut and marked, and the user is told.
    fn stop_repeating(&mut self, repeats: &Repeats, streamed: String, reasoning: Option<String>) {
        let text = repeats.text_cut(&streamed);
        self.emit(AgentEvent::ReplyCut {
            text: text.clone(),
            reasoning,
        });
        self.keep_partial(
            text.unwrap_or(streamed),
            "stopped: the reply repeats itself",
        );
        self.emit(AgentEvent::Error {
            message: "stopped: the reply repeats itself (the same few words over and over); \
                      its start is kept. Ask again, or try another model"
                .to_string(),
        });
    }

    /// Close a reply that did not complete. The text the user already saw is kept, so the
    /// history matches the screen; with none, a short note stands in, so user and assistant
    /// messages still alternate (strict chat templates insist).
    pub(super) fn keep_partial(&mut self, partial: String, why: &str) {
        let text = if partial.is_empty() {
            format!("(no reply: {why})")
        } else {
            partial
        };
        self.push(Message::assistant(text, Vec::new()));
    }
}
