//! Keeping the history inside the window: the token count, and layers 2 to 4 as the agent
//! runs them (the text work is in [`crate::context`]).
//!
//! Before each request [`Agent::fit_context`] compares the count with the budget
//! (`compact_at` of the window). Under it, nothing changes, so the requests of a turn extend
//! each other byte for byte. Over it, the layers run in order until one is enough: stubs
//! (which otherwise run only when a turn ends), then drops (down to halfway between
//! `compact_to` and `compact_at`, so the next requests extend the dropped history for a
//! while), then a compaction (down to `compact_to`). Each rewrite is recorded in the
//! session file and reported as an event, followed by the new count. While the server is
//! still being asked for the window, none of that is decided on a guess: a request that
//! is not clearly small waits for the answer first (`window.rs`).

use super::Agent;
use crate::agent::events::{AgentEvent, ContextStats, Usage};
use crate::agent::step::Step;
use crate::agent::stream::StreamDelta;
use crate::context::budget::{self, Breakdown};
use crate::context::{compact, drop, spill, stubs};
use crate::conversation::Message;
use crate::session::Entry;

/// A note this many times longer than the room it was given is abandoned mid-stream.
const RUNAWAY_FACTOR: u64 = 3;

/// Characters of the note's wrapper and the acknowledgement after it.
const NOTE_WRAPPER_CHARS: usize = 400;

/// How much of a kept user message the summariser reads.
const KEPT_PREVIEW_CHARS: usize = 2_000;

/// The least room a user message gets, however small the window.
const MIN_MESSAGE_ROOM: usize = 2_000;

/// How a compaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Compaction {
    Done,
    /// Nothing could be summarised; nothing changed.
    Nothing,
    /// The model call failed (the history is unchanged), or the result is still over budget.
    Failed,
    /// The user interrupted; the history is unchanged.
    Interrupted,
}

impl Agent {
    /// Tokens the next request holds (the one number the gauge and thresholds use).
    pub(super) fn used(&self) -> u64 {
        self.meter.used(self.history.messages(), self.tools_chars)
    }

    /// Tell the front end the context's size now (in the window the server's answer
    /// settled on, when one came since the last count).
    pub(super) fn emit_context(&mut self) {
        self.take_window();
        let messages = self.history.messages();
        self.emit(AgentEvent::Context(ContextStats {
            tokens: self.used(),
            window: self.config.context.window,
            compact_at: self.config.context.compact_at,
            estimated: self.meter.estimated(),
            chars_per_token: self.meter.chars_per_token(),
            messages: messages.len(),
            breakdown: Breakdown::of(
                &self.meter,
                messages,
                self.history.summary(),
                self.tools_chars,
                self.instructions_chars,
            ),
        }));
    }

    /// Tokens a compaction's handoff note is given: a twentieth of the window, within
    /// reason.
    fn note_tokens(&self) -> u64 {
        (self.config.context.window / 20).clamp(200, 4000)
    }

    /// Tokens every request holds whatever the history: the system prompt, the tool
    /// schemas, and the wrapper of a handoff note.
    fn fixed_tokens(&self) -> u64 {
        let system = self
            .history
            .messages()
            .first()
            .map_or(0, budget::message_chars);
        self.meter
            .tokens_for(system + self.tools_chars + NOTE_WRAPPER_CHARS)
    }

    /// The most characters the newest user message may have: what the budget leaves once
    /// the rest of the history is compacted to a note (system prompt, tools, note), less a
    /// tenth of the window for the model to work in. At least [`MIN_MESSAGE_ROOM`].
    pub(super) fn user_message_room(&self) -> usize {
        let context = &self.config.context;
        let room = context.budget().saturating_sub(
            self.fixed_tokens()
                .saturating_add(self.note_tokens())
                .saturating_add(context.window / 10),
        );
        self.meter.chars_for(room).max(MIN_MESSAGE_ROOM)
    }

    /// The user's message as the model gets it, beside `beside` characters that ride with
    /// it (its reminder, with what the hooks added). One that alone does not fit the window
    /// is never summarised away: it is cut like a big tool result (head and tail kept, the
    /// whole in this turn's spill folder for the model to page), and the transcript says
    /// so.
    pub(super) fn fit_user_message(&mut self, text: String, beside: usize) -> String {
        let room = self
            .user_message_room()
            .saturating_sub(beside)
            .max(MIN_MESSAGE_ROOM);
        let (text, capped) = self.spill.cap_message("user-message", text, room);
        if let Some(capped) = capped {
            let whole = match &capped.spill {
                Some(path) => format!(
                    "the whole message is in {} for it to page through during this turn",
                    path.display()
                ),
                None => "the whole message could not be kept for it".to_string(),
            };
            self.emit(AgentEvent::Notice {
                message: format!(
                    "your message is {} characters (about {} tokens), more than the model's \
                     {}-token window has room for next to the system prompt and tools: the \
                     model gets its first and last {} characters; {whole}",
                    capped.total_chars,
                    crate::context::short_count(self.meter.tokens_for(capped.total_chars)),
                    crate::context::short_count(self.config.context.window),
                    capped.kept_chars,
                ),
            });
        }
        text
    }

    /// Make the next request fit the budget, cheapest layer first. False when the user
    /// interrupted a compaction.
    pub(super) async fn fit_context(&mut self) -> bool {
        if !self.settle_window(0).await {
            return false;
        }
        let budget = self.config.context.budget();
        if self.used() <= budget {
            return true;
        }
        self.stub_old_results();
        if self.used() <= budget {
            return true;
        }
        self.drop_old_results();
        if self.used() <= budget {
            return true;
        }
        if let Some((turn, tokens)) = self.compaction_failed {
            // Tried and failed: not again in the same turn, nor before the conversation has
            // grown by a tenth of the window (a model that cannot write the note would
            // otherwise cost every message a failed attempt). The request goes as it is.
            let grown = self.used() >= tokens.saturating_add(self.config.context.window / 10);
            if turn == self.turns || !grown {
                return true;
            }
        }
        match self.compact(None, true).await {
            Compaction::Interrupted => false,
            Compaction::Failed | Compaction::Nothing => {
                self.compaction_failed = Some((self.turns, self.used()));
                true
            }
            Compaction::Done => {
                self.compaction_failed = None;
                true
            }
        }
    }

    /// Layer 2: stub old tool results (at a turn's end, or when the window calls for it).
    pub(super) fn stub_old_results(&mut self) {
        let (stub_chars, keep_recent) = (
            self.config.context.stub_chars,
            self.config.context.keep_recent,
        );
        let Some(trimmed) =
            stubs::stub_old_results(self.history.messages_mut(), stub_chars, keep_recent)
        else {
            return;
        };
        self.meter.history_rewritten();
        self.record(Entry::Stubbed {
            stub_chars,
            indices: stored_positions(&trimmed.indices),
        });
        self.emit(AgentEvent::ContextTrimmed {
            stubbed: trimmed.stubbed,
            before_chars: trimmed.before_chars,
            after_chars: trimmed.after_chars,
        });
    }

    /// Layer 3: replace the oldest tool results by a note until the estimate is down to
    /// the drop target, never within the most recent messages.
    fn drop_old_results(&mut self) {
        let target = self.config.context.drop_target();
        let keep_recent = self.config.context.keep_recent;
        let before = self.used();
        let meter = self.meter.clone();
        let extra = self.tools_chars;
        let fits = |h: &[Message]| meter.tokens_for(budget::messages_chars(h) + extra) <= target;
        let Some(dropped) = drop::drop_old_results(self.history.messages_mut(), keep_recent, fits)
        else {
            return;
        };
        self.meter.history_rewritten();
        self.record(Entry::Dropped {
            indices: stored_positions(&dropped.indices),
        });
        self.emit(AgentEvent::ResultsDropped {
            dropped: dropped.indices.len(),
            before_tokens: before,
            after_tokens: self.used(),
        });
    }

    /// `/compact [focus]`: the whole conversation becomes a handoff note.
    pub(super) async fn compact_on_demand(&mut self, focus: Option<String>) {
        if self.history.stored().is_empty() {
            self.emit(AgentEvent::Notice {
                message: "nothing to compact yet: the conversation is empty".to_string(),
            });
            return;
        }
        // The note's length and the pieces' size are shares of the window.
        if !self.wait_for_window().await {
            self.emit(AgentEvent::CompactionFailed {
                message: "compaction interrupted; the conversation is unchanged".to_string(),
            });
            return;
        }
        if self.compact(focus, false).await == Compaction::Done {
            // A fresh start for the automatic attempts too.
            self.compaction_failed = None;
        }
        self.emit_context();
    }

    /// Layer 4: have the model write a handoff note for the older part of the history and
    /// keep only the note and the most recent messages (none when `auto` is false). On
    /// any failure the history stays as it was.
    pub(super) async fn compact(&mut self, focus: Option<String>, auto: bool) -> Compaction {
        // The user's PreCompact and PostCompact hooks around it, and SessionStart
        // (`compact`) after: the conversation goes on from the note.
        let trigger = if auto { "auto" } else { "manual" };
        let event = crate::hooks::Event::PreCompact;
        self.compact_hooks(event, trigger, focus.as_deref()).await;
        let done = self.compact_history(focus.clone(), auto).await;
        if done == Compaction::Done {
            let event = crate::hooks::Event::PostCompact;
            self.compact_hooks(event, trigger, focus.as_deref()).await;
            self.session_start_hooks("compact").await;
        }
        done
    }

    /// [`Self::compact`] itself, without the hooks.
    async fn compact_history(&mut self, focus: Option<String>, auto: bool) -> Compaction {
        let context = self.config.context.clone();
        let note_tokens = self.note_tokens();
        let fixed = self.fixed_tokens();
        let messages = self.history.messages();
        // An automatic compaction never summarises the newest user message (what the
        // model is working on): it is kept after the note, and the tail is what fits
        // beside it. `/compact` summarises everything, as asked.
        let newest_user = messages
            .iter()
            .rposition(|m| matches!(m, Message::User { .. }))
            .filter(|&u| u >= 1 && self.history.summary() != Some(u))
            .filter(|_| auto);
        let start = if auto {
            let tail = context
                .compact_target()
                .saturating_sub(fixed.saturating_add(note_tokens));
            let start = compact::tail_start(messages, 1, self.meter.chars_for(tail));
            match newest_user {
                // The tail would leave it out: it is kept on its own, and the tail is
                // what fits after it in the room left.
                Some(u) if u < start => {
                    let own = self.meter.tokens_for(budget::message_chars(&messages[u]));
                    let rest = self.meter.chars_for(tail.saturating_sub(own));
                    compact::tail_start(messages, u + 1, rest)
                }
                _ => start,
            }
        } else {
            messages.len()
        };
        // The kept user message, when the tail starts after it.
        let kept_user = newest_user.filter(|&u| u < start);
        // What the note replaces: everything before the tail but the kept user message.
        // The summariser still reads that message, shortened (it follows the note whole),
        // so the note knows what the work is for.
        let mut part = messages[1..start].to_vec();
        if let Some(Message::User { content, .. }) = kept_user.and_then(|u| part.get_mut(u - 1)) {
            if let Some((head, tail)) = spill::cut(content, KEPT_PREVIEW_CHARS) {
                let cut = content.chars().count() - head.chars().count() - tail.chars().count();
                *content = format!(
                    "{head}\n[… {cut} characters left out here: this message follows your note \
                     whole]\n{tail}"
                );
            }
        }
        if part.len() <= usize::from(kept_user.is_some()) {
            self.emit(AgentEvent::CompactionFailed {
                message: "nothing to compact: the conversation is already short, and the system \
                          prompt and tool schemas take most of the window"
                    .to_string(),
            });
            return Compaction::Nothing;
        }
        let earlier_note = self.history.summary().filter(|&i| i < start).map(|i| i - 1);
        let prompt = compact::prompt(compact::words_for(note_tokens));
        // Each piece, with the prompt and the note so far, must fit the summariser's window
        // (taken to be the agent's) with room for the new note.
        let piece_tokens = context
            .budget()
            .saturating_sub(self.meter.tokens_for(prompt.len()) + 2 * note_tokens)
            .max(500);
        let pieces = compact::pieces(&part, earlier_note, self.meter.chars_for(piece_tokens));
        let summarised = part.len() - usize::from(kept_user.is_some());
        let before = self.used();
        self.emit(AgentEvent::CompactionStarted {
            auto,
            messages: summarised,
            pieces: pieces.len(),
        });
        let client = if context.compact_model.is_empty() {
            self.client.clone()
        } else {
            self.client.with_model(&context.compact_model)
        };
        let no_tools = serde_json::Value::Array(Vec::new());
        let events = self.events.clone();
        let step = Step {
            client: &client,
            tools_json: &no_tools,
            events: &events,
            who: "compaction: ",
            // A note that runs away is stopped below, by its length.
            max_tokens: client.config().max_output_tokens,
        };
        // A note this long is a model rambling (a small one may repeat its input until its
        // output limit): stop reading rather than wait for minutes.
        let runaway_chars = self.meter.chars_for(note_tokens * RUNAWAY_FACTOR).max(4000);
        let mut note: Option<String> = None;
        let mut usage = Usage::default();
        let count = pieces.len();
        for (i, piece) in pieces.iter().enumerate() {
            let request =
                compact::request(&prompt, piece, i, count, note.as_deref(), focus.as_deref());
            let runaway = tokio::sync::Notify::new();
            let mut written = 0usize;
            let mut on_delta = |delta: StreamDelta<'_>| {
                if let StreamDelta::Text(text) = delta {
                    written += text.len();
                    if written > runaway_chars {
                        runaway.notify_one();
                    }
                }
            };
            let bounded = async {
                tokio::select! {
                    reply = step.run(&request, &mut on_delta) => Some(reply),
                    () = runaway.notified() => None,
                }
            };
            let result = match self.inbox.run_until(bounded).await {
                Some(None) => {
                    self.emit(AgentEvent::CompactionFailed {
                        message: format!(
                            "compaction failed: the handoff note ran past {} tokens, far longer \
                             than asked; the conversation is unchanged",
                            self.meter.tokens_for(runaway_chars)
                        ),
                    });
                    return Compaction::Failed;
                }
                Some(Some(reply)) => Some(reply),
                None => None,
            };
            let reply = match result {
                None => {
                    self.emit(AgentEvent::CompactionFailed {
                        message: "compaction interrupted; the conversation is unchanged"
                            .to_string(),
                    });
                    return Compaction::Interrupted;
                }
                Some(Err(e)) => {
                    self.emit(AgentEvent::CompactionFailed {
                        message: format!("compaction failed: {e}; the conversation is unchanged"),
                    });
                    return Compaction::Failed;
                }
                Some(Ok(reply)) => reply,
            };
            if let Some(u) = reply.usage {
                usage.add(&u);
            }
            if reply.said().is_none() {
                self.emit(AgentEvent::CompactionFailed {
                    message: "compaction failed: the model wrote an empty handoff note; the \
                              conversation is unchanged"
                        .to_string(),
                });
                return Compaction::Failed;
            }
            if crate::agent::step::stopped_at_limit(reply.finish_reason.as_deref()) {
                self.emit(AgentEvent::Notice {
                    message: "the handoff note was cut off by the model's output token limit"
                        .to_string(),
                });
            }
            note = Some(reply.text);
        }
        let note = note.unwrap_or_default();
        let messages = self.history.messages();
        let tail: Vec<Message> = kept_user
            .map(|u| messages[u].clone())
            .into_iter()
            .chain(messages[start..].iter().cloned())
            .collect();
        let kept = tail.len();
        let mut rest = compact::compacted(&note, &tail);
        if auto && tail.is_empty() {
            // Mid-turn with nothing kept, the note is the request's last message: an
            // acknowledgement after it would leave the model to continue its own reply.
            rest.truncate(1);
        }
        // What the compacted conversation would hold. A note that leaves it over the budget
        // (or, when the budget called for it, no smaller) is no use and is thrown away;
        // `/compact` on a short conversation may grow it a little, as asked.
        let after = self.meter.tokens_for(
            budget::message_chars(&self.history.messages()[0])
                + budget::messages_chars(&rest)
                + self.tools_chars,
        );
        if after > context.budget() || (auto && after >= before) {
            self.emit(AgentEvent::CompactionFailed {
                message: format!(
                    "compaction failed: the handoff note came out too long ({} tokens; the \
                     conversation would hold {after} of {} tokens); the conversation is \
                     unchanged",
                    self.meter.tokens_for(note.len()),
                    context.window
                ),
            });
            return Compaction::Failed;
        }
        self.history.replace(rest, Some(0));
        // The reminder may have been summarised away: the next tool result tells again,
        // with the folders' instruction files in force.
        self.reminded = None;
        self.resend_nested();
        self.meter.history_rewritten();
        self.record(Entry::compacted(self.history.stored().to_vec(), 0));
        self.emit(AgentEvent::Compacted {
            auto,
            before_tokens: before,
            after_tokens: after,
            summarised,
            kept,
            pieces: count,
            note,
            usage,
        });
        self.emit_context();
        Compaction::Done
    }
}

/// Positions in the agent's history (system prompt at 0) as positions in the stored part.
fn stored_positions(indices: &[usize]) -> Vec<usize> {
    indices.iter().filter_map(|i| i.checked_sub(1)).collect()
}
