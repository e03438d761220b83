//! One model step: the part of a turn the main agent and a subagent share.
//!
//! In: the history as it is now, the tool schemas, and a sink for the reply's visible
//! pieces ([`StreamDelta`]: text, reasoning, refusal) while it streams. The history is sent
//! as [`crate::conversation::wire`] writes it; a retry goes out as
//! [`AgentEvent::Retrying`], its reason prefixed with who asked. Out: the [`Reply`] (the
//! text, a refusal, the reasoning and provider state to send back, the tool calls, the
//! finish reason, the usage), or the [`ClientError`] that ended the stream. What happens
//! around a step is each caller's own: the main agent fits the context, adds the reminder,
//! records, streams the text to the user and runs `task` calls in parallel
//! ([`super::runloop`]); a subagent streams nothing, counts its usage and keeps to its step
//! limit ([`super::subagent`]). Both step in [`super::turn_loop::run`] and run the calls
//! through [`super::toolcall::ToolEnv::guarded`].
//! A compaction's summary requests are steps too, with no tools. Cancel a step by dropping
//! its future.

use tokio::sync::mpsc;

use super::client::{ClientError, ClientEvent, LlmClient};
use super::events::{AgentEvent, Usage};
use super::stream::{finish, AssembledReply, Assembler, StreamDelta};
use crate::conversation::{Message, Reasoning, ToolCall};

/// What one step is sent with.
pub(crate) struct Step<'a> {
    pub client: &'a LlmClient,
    /// The JSON array of the tool schemas offered (the same every step).
    pub tools_json: &'a serde_json::Value,
    /// Where a retry is reported.
    pub events: &'a mpsc::UnboundedSender<AgentEvent>,
    /// What a retry's reason starts with: "" for the main agent, "subagent: " for one.
    pub who: &'a str,
    /// Sent as `max_tokens` (none: not sent); see [`super::client::output_cap`].
    pub max_tokens: Option<u64>,
}

/// A model reply after its stream ended.
#[derive(Debug)]
pub(crate) struct Reply {
    pub text: String,
    /// The refusal the model gave instead of an answer (empty when none).
    pub refusal: String,
    /// The reasoning and provider state that go back with the message.
    pub reasoning: Option<Reasoning>,
    /// The tool calls it asked for, in order.
    pub calls: Vec<ToolCall>,
    pub finish_reason: Option<String>,
    /// The server's usage, when it sent one.
    pub usage: Option<Usage>,
}

impl Step<'_> {
    /// Send `history`, stream the reply (its visible pieces to `on_delta`) and read it.
    pub(crate) async fn run(
        &self,
        history: &[Message],
        on_delta: &mut (dyn FnMut(StreamDelta<'_>) + Send),
    ) -> Result<Reply, ClientError> {
        self.run_into(history, &mut Assembler::new(), on_delta)
            .await
    }

    /// [`Step::run_into`], stopped as soon as `on_delta` says so (it returns true: a reply
    /// that repeats itself, see [`super::repetition`]); `None` then.
    pub(crate) async fn run_stoppable(
        &self,
        history: &[Message],
        assembler: &mut Assembler,
        on_delta: &mut (dyn FnMut(StreamDelta<'_>) -> bool + Send),
    ) -> Option<Result<Reply, ClientError>> {
        let stop = tokio::sync::Notify::new();
        let mut forward = |delta: StreamDelta<'_>| {
            if on_delta(delta) {
                stop.notify_one();
            }
        };
        tokio::select! {
            reply = self.run_into(history, assembler, &mut forward) => Some(reply),
            () = stop.notified() => None,
        }
    }

    /// [`Step::run`], the reply assembled in `assembler` (which keeps what streamed when
    /// the step fails or is dropped).
    pub(crate) async fn run_into(
        &self,
        history: &[Message],
        assembler: &mut Assembler,
        on_delta: &mut (dyn FnMut(StreamDelta<'_>) + Send),
    ) -> Result<Reply, ClientError> {
        let (events, who) = (self.events, self.who);
        let mut on_event = |event: ClientEvent<'_>| match event {
            ClientEvent::Delta(delta) => on_delta(delta),
            retry => {
                if let Some(out) = retry.retrying(who) {
                    let _ = events.send(out);
                }
            }
        };
        let reply = self
            .client
            .stream_chat_capped(
                history,
                self.tools_json,
                self.max_tokens,
                assembler,
                &mut on_event,
            )
            .await?;
        Ok(Reply::from(reply))
    }
}

impl From<AssembledReply> for Reply {
    fn from(reply: AssembledReply) -> Reply {
        Reply {
            reasoning: reply.reasoning_state(),
            text: reply.text,
            refusal: reply.refusal,
            calls: reply.tool_calls,
            finish_reason: reply.finish_reason,
            usage: reply.usage,
        }
    }
}

impl Reply {
    /// The tools the server ran itself during this reply (a native API's hosted tools:
    /// the Responses API's `web_search_call`, Anthropic's `server_tool_use`), by name, in
    /// order. rein never runs them; the user is told they ran.
    pub(crate) fn hosted_tools(&self) -> Vec<String> {
        let Some(reasoning) = self.reasoning.as_ref() else {
            return Vec::new();
        };
        reasoning
            .details
            .iter()
            .filter_map(|item| {
                let kind = item.get("type").and_then(serde_json::Value::as_str)?;
                match reasoning.api? {
                    crate::conversation::Api::Responses => kind
                        .strip_suffix("_call")
                        .filter(|name| *name != "function")
                        .map(str::to_string),
                    crate::conversation::Api::Anthropic => (kind == "server_tool_use")
                        .then(|| item.get("name").and_then(serde_json::Value::as_str))
                        .flatten()
                        .map(str::to_string),
                    crate::conversation::Api::Chat => None,
                }
            })
            .collect()
    }

    /// The model refused.
    pub(crate) fn is_refusal(&self) -> bool {
        !self.refusal.is_empty()
    }

    /// What the user sees as the reply: its text, or the refusal when that is all it gave.
    pub(crate) fn shown(&self) -> &str {
        if self.is_refusal() && self.text.is_empty() {
            &self.refusal
        } else {
            &self.text
        }
    }

    /// The reply's text with its blank edges trimmed; `None` when it said nothing.
    pub(crate) fn said(&self) -> Option<&str> {
        Some(self.text.trim()).filter(|t| !t.is_empty())
    }

    /// Why a reply that asked for no tools stopped short, in words for the user: the
    /// model's output token limit, or the provider's content filter (a refusal says so
    /// itself). `None` when it ended as the model chose.
    pub(crate) fn stopped_short(&self) -> Option<&'static str> {
        if !self.calls.is_empty() {
            return None;
        }
        let reason = self.finish_reason.as_deref();
        if stopped_at_limit(reason) {
            return Some("the reply was cut off by the model's output token limit");
        }
        if reason == Some(finish::CONTENT_FILTER) && !self.is_refusal() {
            return Some("the reply was stopped by the provider's content filter");
        }
        None
    }

    /// The assistant message to keep, as `model` wrote it: its text, calls, reasoning and
    /// refusal (a refusal with no text goes on the wire as the content). Returns the calls
    /// too, the caller's to run.
    pub(crate) fn into_message(self, model: &str) -> (Message, Vec<ToolCall>) {
        let calls = self.calls;
        let message = Message::assistant(self.text, calls.clone())
            .with_reasoning(self.reasoning)
            .with_refusal(Some(self.refusal))
            .from_model(model);
        (message, calls)
    }
}

/// Whether a finish reason says the reply stopped at the output token limit: `length`
/// (every API's readers say it so, see [`finish`]), or Anthropic's `max_tokens` from a
/// chat-completions gateway that passes Anthropic's word on.
pub(crate) fn stopped_at_limit(finish_reason: Option<&str>) -> bool {
    matches!(finish_reason, Some(finish::LENGTH | "max_tokens"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(text: &str, refusal: &str, calls: usize, finish: Option<&str>) -> Reply {
        Reply::from(AssembledReply {
            text: text.into(),
            refusal: refusal.into(),
            tool_calls: (0..calls)
                .map(|i| ToolCall::new(format!("c{i}"), "bash", "{}"))
                .collect(),
            finish_reason: finish.map(str::to_string),
            ..AssembledReply::default()
        })
    }

    #[test]
    fn a_refusal_is_shown_only_when_there_is_no_text() {
        assert_eq!(reply("", "no", 0, None).shown(), "no");
        assert_eq!(reply("hi", "no", 0, None).shown(), "hi");
        assert_eq!(reply("hi", "", 0, None).shown(), "hi");
        assert!(!reply("hi", "", 0, None).is_refusal());
    }

    #[test]
    fn hosted_tools_are_named_from_the_native_items() {
        use crate::conversation::{Api, Reasoning};
        use serde_json::json;
        let with = |api, details| {
            let mut r = reply("", "", 0, None);
            r.reasoning = Some(Reasoning {
                details,
                api: Some(api),
                ..Reasoning::default()
            });
            r
        };
        let responses = with(
            Api::Responses,
            vec![
                json!({"type": "reasoning", "encrypted_content": "e"}),
                json!({"type": "web_search_call", "status": "completed"}),
                json!({"type": "function_call", "call_id": "c"}),
                json!({"type": "message"}),
            ],
        );
        assert_eq!(responses.hosted_tools(), ["web_search"]);
        let anthropic = with(
            Api::Anthropic,
            vec![
                json!({"type": "thinking", "signature": "s"}),
                json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"}),
                json!({"type": "tool_use", "id": "t"}),
            ],
        );
        assert_eq!(anthropic.hosted_tools(), ["web_search"]);
        assert!(reply("a", "", 0, None).hosted_tools().is_empty());
    }

    #[test]
    fn blank_text_says_nothing() {
        assert_eq!(reply(" \n", "", 0, None).said(), None);
        assert_eq!(reply(" done \n", "", 0, None).said(), Some("done"));
    }

    #[test]
    fn stopped_short_only_without_calls_and_for_the_right_reason() {
        let limit = Some("the reply was cut off by the model's output token limit");
        let filter = Some("the reply was stopped by the provider's content filter");
        assert_eq!(reply("a", "", 0, Some("length")).stopped_short(), limit);
        assert_eq!(reply("a", "", 0, Some("max_tokens")).stopped_short(), limit);
        assert_eq!(
            reply("a", "", 0, Some("content_filter")).stopped_short(),
            filter
        );
        assert_eq!(
            reply("", "", 0, Some("content_filter")).stopped_short(),
            filter
        );
        // A refusal says why itself.
        assert_eq!(
            reply("", "no", 0, Some("content_filter")).stopped_short(),
            None
        );
        assert_eq!(reply("a", "", 1, Some("length")).stopped_short(), None);
        assert_eq!(reply("a", "", 0, Some("stop")).stopped_short(), None);
        assert_eq!(reply("a", "", 0, Some("tool_calls")).stopped_short(), None);
        assert_eq!(reply("a", "", 0, None).stopped_short(), None);
    }

    #[test]
    fn the_message_keeps_text_calls_refusal_and_model() {
        let (message, calls) = reply("", "no", 2, None).into_message("m");
        assert_eq!(calls.len(), 2);
        match message {
            Message::Assistant {
                content,
                tool_calls,
                refusal,
                model,
                ..
            } => {
                assert_eq!(content, None);
                assert_eq!(tool_calls, calls);
                assert_eq!(refusal.as_deref(), Some("no"));
                assert_eq!(model.as_deref(), Some("m"));
            }
            other => panic!("not an assistant message: {other:?}"),
        }
    }
}
