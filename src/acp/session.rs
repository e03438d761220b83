//! One ACP session: one rein agent, its events told to the editor, its questions asked
//! there, its prompts answered when their turn ends.
//!
//! A prompt goes to the agent at once, as the dashboard sends one: while a turn runs the
//! agent queues it, and the turn's next step takes it (or it starts the next turn). Each
//! prompt is answered when the turn that took it ends, with the turn's stop reason. A
//! cancel interrupts the turn (its commands' process groups are killed) and answers every
//! prompt it holds `cancelled`. An `ask` becomes `session/request_permission`, asked on a
//! task of its own so the session keeps telling the editor what happens meanwhile.

use std::collections::VecDeque;
use std::path::Path;

use agent_client_protocol::v1::schema::{
    AvailableCommandsUpdate, ContentBlock, ContentChunk, PromptResponse, RequestPermissionOutcome,
    RequestPermissionRequest, SessionNotification, SessionUpdate, StopReason, TextContent,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::Client;
use rein_core::agent::{AgentCommand, AgentEvent, Prompt, TurnOutcome};
use rein_core::custom_commands::CommandSet;
use rein_core::mcp::McpEvent;
use rein_core::permissions::{ApprovalMode, Grant};
use tokio::sync::mpsc;

use super::permission::{self, Rejected};
use super::start::Started;
use super::updates::Translator;

/// The most bytes of a file read for the diff of a whole-file write.
const BEFORE_BYTES: u64 = 1024 * 1024;

/// What the connection asks of a session.
pub enum ToSession {
    /// A prompt's text and images, and where its answer goes.
    Prompt {
        prompt: Prompt,
        responder: Box<Responder<PromptResponse>>,
    },
    /// `session/cancel`.
    Cancel,
    /// `session/set_mode`.
    SetMode(ApprovalMode),
}

/// The file at `path` as it is, for a diff (`None`: none, not text, too big, or reached
/// through a link). Opened as the file tools open one, never through a link and without
/// blocking on a pipe (a project's `a.txt -> /dev/zero` or `-> ~/.ssh/id_rsa` shows no old
/// text), and read no further than the bound.
fn before(path: &Path) -> Option<String> {
    rein_core::host::safe_fs::read_text_exactly(path, BEFORE_BYTES)
}

/// How a turn that ended so answers its prompts.
fn stop_reason(outcome: TurnOutcome, cancelled: bool, refused: bool, cut: bool) -> StopReason {
    match outcome {
        _ if cancelled => StopReason::Cancelled,
        TurnOutcome::Interrupted => StopReason::Cancelled,
        TurnOutcome::StepLimit => StopReason::MaxTurnRequests,
        _ if refused => StopReason::Refusal,
        _ if cut => StopReason::MaxTokens,
        TurnOutcome::Completed | TurnOutcome::Failed => StopReason::EndTurn,
    }
}

/// The most events taken at once, and the most text one merged chunk holds.
const BATCH_EVENTS: usize = 512;
const MERGED_BYTES: usize = 64 * 1024;

/// `first` and the events already waiting behind it, in order, with adjacent reply (and
/// reasoning) pieces merged into one: a fast stream becomes a few updates, not one per
/// token, and a slow one is sent as it comes.
fn batch(first: AgentEvent, events: &mut mpsc::UnboundedReceiver<AgentEvent>) -> Vec<AgentEvent> {
    let mut out = vec![first];
    while out.len() < BATCH_EVENTS {
        let Ok(next) = events.try_recv() else { break };
        let left = match out.last_mut() {
            Some(last) => join(last, next),
            None => Some(next),
        };
        out.extend(left);
    }
    out
}

/// `next` joined to `piece` when both are pieces of the reply (or both of the reasoning)
/// and the two fit in one chunk; otherwise `next` back.
fn join(piece: &mut AgentEvent, next: AgentEvent) -> Option<AgentEvent> {
    match (piece, next) {
        (AgentEvent::TextDelta { text }, AgentEvent::TextDelta { text: more })
        | (AgentEvent::ReasoningDelta { text }, AgentEvent::ReasoningDelta { text: more })
            if text.len() + more.len() <= MERGED_BYTES =>
        {
            text.push_str(&more);
            None
        }
        (_, next) => Some(next),
    }
}

/// How long a piece of the reply waits for the next before it is sent: a frame of the
/// editor's, so a fast stream is a few updates and a slow one shows as it comes.
const HOLD: std::time::Duration = std::time::Duration::from_millis(16);

/// A piece of the reply (or of the reasoning) waiting for the next, until its moment.
#[derive(Default)]
struct Held(Option<(AgentEvent, tokio::time::Instant)>);

impl Held {
    /// Take `event` in when it is a piece that can wait (joined to the one waiting, when of
    /// the same kind); otherwise give it back, to be sent after what waits.
    fn hold(&mut self, event: AgentEvent) -> Option<AgentEvent> {
        if !matches!(
            event,
            AgentEvent::TextDelta { .. } | AgentEvent::ReasoningDelta { .. }
        ) {
            return Some(event);
        }
        match &mut self.0 {
            Some((piece, _)) => join(piece, event),
            None => {
                self.0 = Some((event, tokio::time::Instant::now() + HOLD));
                None
            }
        }
    }

    fn is_some(&self) -> bool {
        self.0.is_some()
    }

    fn take(&mut self) -> Option<AgentEvent> {
        self.0.take().map(|(event, _)| event)
    }

    /// Its moment (never, when nothing waits).
    async fn due(&self) {
        match &self.0 {
            Some((_, at)) => tokio::time::sleep_until(*at).await,
            None => std::future::pending().await,
        }
    }
}

/// Answer every prompt in `responders` with `reason`.
fn answer_all(responders: impl IntoIterator<Item = Responder<PromptResponse>>, reason: StopReason) {
    for responder in responders {
        let _ = responder.respond(PromptResponse::new(reason));
    }
}

/// Put `request` to the editor on a task of its own; its answer comes back on `answers`
/// as the call `call` asking for `grants` (no answer: the client went away or refused the
/// request, taken as a cancel). The handle withdraws the question.
fn ask(
    cx: &ConnectionTo<Client>,
    request: RequestPermissionRequest,
    answers: &mpsc::UnboundedSender<Answered>,
    call: String,
    grants: Vec<Grant>,
    review: bool,
) -> agent_client_protocol::RequestCancellationHandle {
    let sent = cx.send_request(request);
    let handle = sent.cancellation_handle();
    let answers = answers.clone();
    tokio::spawn(async move {
        let outcome = sent
            .block_task()
            .await
            .map_or(RequestPermissionOutcome::Cancelled, |r| r.outcome);
        let _ = answers.send(Answered {
            id: call,
            grants,
            outcome,
            review,
        });
    });
    handle
}

/// An answer from the editor to one of the agent's questions.
struct Answered {
    id: String,
    grants: Vec<Grant>,
    outcome: RequestPermissionOutcome,
    /// The answer to plan mode's review, not to a tool call's question.
    review: bool,
}

/// Run the session until the agent ends or the connection drops its sender.
pub async fn run(
    started: Started,
    cx: ConnectionTo<Client>,
    mut inbox: mpsc::UnboundedReceiver<ToSession>,
) {
    let Started {
        id,
        root,
        mut handle,
        mut commands,
        skills,
        mcp_events,
        mcp,
        mode,
        sandbox_works,
        ..
    } = started;
    // Plan mode's review: the mode now, the turn's last reply, the review's open call.
    let mut mode = mode;
    let mut last_reply: Option<String> = None;
    let mut review: Option<String> = None;
    let mut reviews = 0u32;
    let mut mcp_events = mcp_events.unwrap_or_else(|| mpsc::unbounded_channel().1);
    let mut translator = Translator::new(&root);
    let mut rejected = Rejected::default();
    // Prompts sent and not yet taken by a turn, oldest first; those the running turn took.
    let mut waiting: VecDeque<Responder<PromptResponse>> = VecDeque::new();
    let mut taken: Vec<Responder<PromptResponse>> = Vec::new();
    let (mut cancelled, mut refused, mut cut) = (false, false, false);
    let (answers_tx, mut answers) = mpsc::unbounded_channel::<Answered>();
    let mut held_piece = Held::default();
    // The questions asked of the editor this turn, which a cancel withdraws.
    let mut asking: Vec<agent_client_protocol::RequestCancellationHandle> = Vec::new();
    let notify = |update| {
        let _ = cx.send_notification(SessionNotification::new(id.clone(), update));
    };
    let offer = |commands: &CommandSet| {
        SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(
            super::commands::available(commands, &skills),
        ))
    };
    // What an event tells the editor, sent.
    let tell = |translator: &mut Translator, event: Option<AgentEvent>| {
        for update in event.iter().flat_map(|e| translator.updates(e)) {
            notify(update);
        }
    };
    notify(offer(&commands));
    // Prompts held until the MCP servers have started (each within its startup timeout),
    // so the first turn already offers their tools, as print mode does.
    let mut held: VecDeque<(Prompt, Box<Responder<PromptResponse>>)> = VecDeque::new();
    let starting = |mcp: &Option<rein_core::mcp::McpManager>| {
        mcp.as_ref().is_some_and(|m| {
            m.states()
                .iter()
                .any(|(_, s)| *s == rein_core::mcp::ServerState::Starting)
        })
    };
    loop {
        if !held.is_empty() && !starting(&mcp) {
            for (prompt, responder) in held.drain(..) {
                if handle.send(AgentCommand::UserMessage(prompt)) {
                    waiting.push_back(*responder);
                } else {
                    let _ = responder.respond_with_internal_error("the agent has stopped");
                }
            }
        }
        tokio::select! {
            command = inbox.recv() => match command {
                Some(ToSession::Prompt { mut prompt, responder }) => {
                    prompt.text = super::commands::expand(&prompt.text, &commands, &skills);
                    held.push_back((prompt, responder));
                }
                Some(ToSession::Cancel) => {
                    // The editor's questions still open are withdrawn ($/cancel_request):
                    // their answers no longer decide anything.
                    for question in asking.drain(..) {
                        let _ = question.cancel();
                    }
                    answer_all(held.drain(..).map(|(_, r)| *r), StopReason::Cancelled);
                    if let Some(call) = review.take() {
                        // The turn is over; only the review was open.
                        notify(SessionUpdate::ToolCallUpdate(super::plan::answered(&call, false)));
                        answer_all(taken.drain(..), StopReason::Cancelled);
                    } else if !waiting.is_empty() || !taken.is_empty() {
                        cancelled = true;
                        handle.send(AgentCommand::Interrupt);
                    }
                }
                Some(ToSession::SetMode(mode)) => {
                    handle.send(AgentCommand::SetMode(mode));
                }
                None => break,
            },
            Some(news) = mcp_events.recv() => {
                // An MCP server's prompts join the slash commands.
                if let McpEvent::Prompts { prompts } = news {
                    commands.set_mcp(prompts.iter().map(crate::app::update::mcp::prompt_command).collect());
                    notify(offer(&commands));
                }
            }
            () = held_piece.due(), if held_piece.is_some() => {
                tell(&mut translator, held_piece.take());
            }
            answer = answers.recv() => {
                let Some(Answered { id: call, grants, outcome, review: is_review }) = answer else { continue };
                if is_review {
                    if review.as_deref() != Some(call.as_str()) {
                        continue;
                    }
                    review = None;
                    let chosen = super::plan::decision(&outcome);
                    notify(SessionUpdate::ToolCallUpdate(super::plan::answered(&call, chosen.is_some())));
                    match chosen {
                        // Approved: the mode switches and the model goes ahead, within the
                        // same prompt, whose answer waits for that turn.
                        Some(to) => {
                            handle.send(AgentCommand::SetMode(to));
                            handle.send(AgentCommand::UserMessage(super::plan::APPROVED_MESSAGE.into()));
                        }
                        None => {
                            let reason = if matches!(outcome, RequestPermissionOutcome::Cancelled) {
                                StopReason::Cancelled
                            } else {
                                StopReason::EndTurn
                            };
                            answer_all(taken.drain(..), reason);
                        }
                    }
                    continue;
                }
                let (decision, reject_always) = permission::decision(&outcome);
                if reject_always {
                    rejected.add(&grants);
                }
                if matches!(outcome, RequestPermissionOutcome::Cancelled) {
                    cancelled = true;
                    handle.send(AgentCommand::Interrupt);
                }
                handle.send(AgentCommand::Approval { id: call, decision });
            }
            event = handle.events.recv() => {
                let Some(first) = event else { break };
                for event in batch(first, &mut handle.events) {
                    // A piece of the reply waits a moment for the next (one update for a
                    // fast stream); anything else sends what waits first.
                    let event = match held_piece.hold(event) {
                        Some(event) => event,
                        None => continue,
                    };
                    tell(&mut translator, held_piece.take());
                    match &event {
                        AgentEvent::ModeChanged { mode: now } => mode = *now,
                        AgentEvent::TurnStarted { .. } | AgentEvent::MessageDelivered { .. } => {
                            last_reply = None;
                            taken.extend(waiting.pop_front());
                        }
                        AgentEvent::AssistantMessage { text, refusal, finish_reason } => {
                            if !text.trim().is_empty() {
                                last_reply = Some(text.trim().to_string());
                            }
                            refused |= *refusal;
                            cut |= finish_reason.as_deref() == Some("length");
                        }
                        AgentEvent::ApprovalNeeded { id: call, summary, reason, grants, .. } => {
                            if let Some(decision) = rejected.answer(grants) {
                                handle.send(AgentCommand::Approval { id: call.clone(), decision });
                                continue;
                            }
                            // A whole-file write's diff, now that the file waits for the answer.
                            if let Some(update) = translator.asked(call, &before) {
                                notify(update);
                            }
                            let request = RequestPermissionRequest::new(
                                id.clone(),
                                permission::question(call, summary, reason),
                                permission::options(grants),
                            );
                            asking.push(ask(&cx, request, &answers_tx, call.clone(), grants.clone(), false));
                        }
                        AgentEvent::FormRequested { id: form_id, form } => {
                            // The protocol has no stable form yet: declined, and said so, so the
                            // server's tool goes on rather than waiting for an answer that
                            // cannot come.
                            handle.send(AgentCommand::FormAnswer {
                                id: form_id.clone(),
                                answer: rein_core::elicitation::FormAnswer::Decline,
                            });
                            notify(SessionUpdate::AgentThoughtChunk(ContentChunk::new(
                                ContentBlock::Text(TextContent::new(format!(
                                    "\nrein: the MCP server {} asked for a form, which the editor cannot show yet; declined\n",
                                    form.server
                                ))),
                            )));
                            continue;
                        }
                        AgentEvent::TurnFinished { outcome } => {
                            // Plan mode's review, as the dashboard offers it: a completed turn
                            // with a plan and nothing queued behind it.
                            let plan = last_reply.take().filter(|_| {
                                mode == ApprovalMode::Plan
                                    && *outcome == TurnOutcome::Completed
                                    && !cancelled
                                    && waiting.is_empty()
                                    && held.is_empty()
                                    && !taken.is_empty()
                            });
                            if let Some(plan) = plan {
                                reviews += 1;
                                let call = format!("plan-review-{reviews}");
                                notify(SessionUpdate::ToolCall(super::plan::announce(&call, &plan)));
                                let request = RequestPermissionRequest::new(
                                    id.clone(),
                                    permission::question(&call, "Ready to code?", ""),
                                    super::plan::options(sandbox_works),
                                );
                                asking.push(ask(&cx, request, &answers_tx, call.clone(), Vec::new(), true));
                                review = Some(call);
                                (refused, cut) = (false, false);
                                continue;
                            }
                            answer_all(taken.drain(..), stop_reason(*outcome, cancelled, refused, cut));
                            (cancelled, refused, cut) = (false, false, false);
                            asking.clear();
                            continue;
                        }
                        _ => {}
                    }
                    tell(&mut translator, Some(event));
                }
            }
        }
    }
    tell(&mut translator, held_piece.take());
    // The agent ended, or the connection is closing: whatever still waits gets an answer,
    // and the agent's processes end with it.
    answer_all(
        held.drain(..)
            .map(|(_, r)| *r)
            .chain(waiting.drain(..))
            .chain(taken.drain(..)),
        StopReason::Cancelled,
    );
    handle.send(AgentCommand::Interrupt);
    handle.background.kill_all();
    handle.send(AgentCommand::Shutdown);
    if let Some(mcp) = mcp {
        mcp.shutdown().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turns_outcome_is_its_prompts_stop_reason() {
        use TurnOutcome::*;
        assert_eq!(
            stop_reason(Completed, false, false, false),
            StopReason::EndTurn
        );
        assert_eq!(
            stop_reason(Interrupted, false, false, false),
            StopReason::Cancelled
        );
        assert_eq!(
            stop_reason(Completed, true, false, false),
            StopReason::Cancelled
        );
        assert_eq!(
            stop_reason(StepLimit, false, false, false),
            StopReason::MaxTurnRequests
        );
        assert_eq!(
            stop_reason(Completed, false, true, false),
            StopReason::Refusal
        );
        assert_eq!(
            stop_reason(Completed, false, false, true),
            StopReason::MaxTokens
        );
        assert_eq!(
            stop_reason(Failed, false, false, false),
            StopReason::EndTurn
        );
    }

    #[test]
    fn waiting_pieces_of_the_reply_go_as_one() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let text = |t: &str| AgentEvent::TextDelta { text: t.into() };
        let thought = |t: &str| AgentEvent::ReasoningDelta { text: t.into() };
        for event in [text("b"), thought("x"), thought("y"), text("c"), text("d")] {
            tx.send(event).unwrap();
        }
        tx.send(AgentEvent::RequestStarted { step: 2 }).unwrap();
        tx.send(text("e")).unwrap();
        assert_eq!(
            batch(text("a"), &mut rx),
            [
                text("ab"),
                thought("xy"),
                text("cd"),
                AgentEvent::RequestStarted { step: 2 },
                text("e")
            ]
        );
        // Nothing waiting: the piece goes as it is.
        assert_eq!(batch(text("f"), &mut rx), [text("f")]);
    }

    #[tokio::test]
    async fn a_piece_of_the_reply_waits_for_the_next_and_anything_else_goes_through() {
        let text = |t: &str| AgentEvent::TextDelta { text: t.into() };
        let mut held = Held::default();
        assert_eq!(held.hold(text("a")), None);
        assert_eq!(held.hold(text("b")), None);
        let other = AgentEvent::ReasoningDelta { text: "x".into() };
        assert_eq!(held.hold(other.clone()), Some(other));
        let step = AgentEvent::RequestStarted { step: 1 };
        assert_eq!(held.hold(step.clone()), Some(step));
        assert!(held.is_some());
        // Its moment comes: a frame later, not never.
        held.due().await;
        assert_eq!(held.take(), Some(text("ab")));
        assert!(!held.is_some());
    }

    #[test]
    fn a_diff_reads_only_a_text_file_within_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "old\n").unwrap();
        assert_eq!(before(&file).as_deref(), Some("old\n"));
        assert_eq!(before(&dir.path().join("missing")), None);
        assert_eq!(before(dir.path()), None);
        std::fs::write(&file, [0xff, 0xfe]).unwrap();
        assert_eq!(before(&file), None);
        // A hostile project's links and pipes: nothing read through them, nothing blocks.
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "key\n").unwrap();
        std::os::unix::fs::symlink(&secret, dir.path().join("to-secret")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero")).unwrap();
        assert_eq!(before(&dir.path().join("to-secret")), None);
        assert_eq!(before(&dir.path().join("zero")), None);
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(before(&fifo), None);
    }
}
