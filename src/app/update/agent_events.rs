//! Agent events into the transcript, the status line, the gauge and the approval queue.
//!
//! A turn adds a user cell; deltas grow the live assistant (or reasoning) cell until the
//! reply is complete; each tool call is a cell that goes Running → (WaitingApproval →)
//! Done / Failed / Refused / Interrupted. The end of a turn closes whatever is still live.
//! The gauge starts from the agent's count (`Context`, sent after every reply and every
//! rewrite of the history); what the model will read again and arrives in between (user
//! text, reply deltas, tool results) is added at the rate the agent learnt. While the
//! server is asked for the window the gauge says so (`Gauge::asking`), until
//! `WindowLearnt` (or a model switch) gives the window. A `task` call's
//! cell carries its subagent's progress (steps, its own calls, its usage); none of that
//! reaches the gauge, since only the task's result enters the main conversation.
//!
//! A compaction shows as the `Compacting` activity while the model writes the handoff note,
//! then as a compaction cell (its summary line, the note folded), or an error when it
//! failed; the activity then goes back to what was running before.

use std::time::Instant;

use crate::app::approval::PendingApproval;
use crate::app::state::{Activity, App};
use crate::app::transcript::{
    Cell, NoticeKind, ResultText, SubagentCall, SubagentView, ToolStatus,
};
use crate::app::Effect;
use crate::describe;
use rein_core::agent::{AgentEvent, EventFamily, SubagentEvent, ToolOutcome, TurnOutcome};
use rein_core::text;
use rein_core::tools::task;
use rein_core::tools::write_todos::TodoStatus;

/// Apply one agent event: routed to its family's handler.
pub fn handle(app: &mut App, event: AgentEvent, now: Instant, effects: &mut Vec<Effect>) {
    match event.family() {
        EventFamily::Turn => turn_event(app, event, now, effects),
        EventFamily::Reply => reply_event(app, event, now),
        EventFamily::Tool => tool_event(app, event, now),
        EventFamily::Subagent => {
            if let AgentEvent::Subagent { task_id, event } = event {
                subagent_event(app, &task_id, event, now);
            }
        }
        EventFamily::Approval => approval_needed(app, event, now, effects),
        EventFamily::Form => super::form::event(app, event, effects),
        EventFamily::Context => context_event(app, event, now, effects),
        EventFamily::Notice => notice_event(app, event),
    }
}

/// A session or a turn begins or ends; a model call starts or reports its usage.
fn turn_event(app: &mut App, event: AgentEvent, now: Instant, effects: &mut Vec<Effect>) {
    match event {
        // The dashboard loop keeps track of the session file; nothing on screen changes.
        // A new conversation: its usage starts from nothing.
        AgentEvent::SessionStarted { path, .. } => {
            app.usage.clear();
            // A new conversation has a new file.
            app.not_recording = false;
            effects.push(Effect::Recording(path));
        }
        AgentEvent::TurnStarted { text } => {
            effects.push(Effect::Resumable);
            if let Some(i) = app.composer.queued.iter().position(|q| *q == text) {
                app.composer.queued.remove(i);
            }
            add_chars(app, &text);
            // A custom command shows as typed, with where its prompt came from; big pastes
            // as their placeholders.
            let cell = super::queue::user_cell(app, text);
            app.transcript.cells.push(cell);
            app.activity = Activity::Thinking { since: now };
            app.turn_started = Some(now);
        }
        // The turn's message (the last user cell) shows its attached files as chips.
        AgentEvent::Attached { paths } => {
            let last = app.transcript.cells.iter_mut().rev().find_map(|c| match c {
                Cell::User(u) => Some(u),
                _ => None,
            });
            if let Some(cell) = last {
                cell.mentions = paths;
            }
        }
        // A queued message went to the model with the step's tool results: it leaves the
        // queue, and the transcript shows it there.
        AgentEvent::MessageDelivered { text } => {
            if let Some(i) = app.composer.queued.iter().position(|q| *q == text) {
                app.composer.queued.remove(i);
            }
            add_chars(app, &text);
            let cell = super::queue::user_cell(app, text);
            app.transcript.cells.push(cell);
        }
        AgentEvent::RequestStarted { .. } => app.activity = Activity::Thinking { since: now },
        // The gauge follows the agent's count (`Context`); usage only says whether the
        // server reports it at all.
        AgentEvent::Usage(usage) => {
            app.gauge.no_server_usage = usage.estimated;
            app.usage.record(usage);
        }
        AgentEvent::TurnFinished { outcome } => {
            turn_finished(app, outcome, now);
            super::plan::offer(app, outcome);
            if app.plan_review.is_some() {
                super::question_opened(app, now);
            }
            // A long turn over with nothing queued behind it: call the user back.
            if !app.busy() {
                notify_turn_finished(app, now, effects);
            }
        }
        _ => {}
    }
}

/// The reply and reasoning as they stream, and the reply complete.
fn reply_event(app: &mut App, event: AgentEvent, now: Instant) {
    match event {
        AgentEvent::TextDelta { text } => {
            add_chars(app, &text);
            append_live(app, Live::Assistant, &text);
            streaming(app, now);
        }
        // Reasoning is shown, never sent back: it does not count.
        AgentEvent::ReasoningDelta { text } => {
            append_live(app, Live::Reasoning, &text);
            streaming(app, now);
        }
        AgentEvent::ReplyCut { text, reasoning } => {
            cut_live(app, text, reasoning);
            finish_live(app);
        }
        AgentEvent::AssistantMessage { text, refusal, .. } => {
            let streamed = finish_live(app);
            if !streamed && !text.is_empty() {
                // The reply came whole, without deltas.
                add_chars(app, &text);
                app.transcript.cells.push(Cell::assistant(text, true));
            }
            if refusal {
                notice(app, NoticeKind::Info, describe::REFUSAL.to_string());
            }
        }
        _ => {}
    }
}

/// A tool call starts (a cell, the status line) or finishes (its mark and result); the
/// plan changes.
fn tool_event(app: &mut App, event: AgentEvent, now: Instant) {
    match event {
        AgentEvent::Background { tasks } => app.background = tasks,
        AgentEvent::Diagnostics {
            errors, warnings, ..
        } => app.diagnostics = (errors, warnings),
        AgentEvent::LanguageServers { servers } => app.lsp_servers = servers,
        AgentEvent::EditDiff { id, diff } => {
            if let Some(cell) = app.transcript.tool_cell_mut(&id) {
                cell.diff = Some(diff);
            }
        }
        AgentEvent::ToolCallStarted { id, name, args } => {
            let key_arg = describe::key_argument(&args);
            app.activity = Activity::Tool {
                detail: tool_detail(app, &name, &key_arg),
                name: name.clone(),
                since: now,
            };
            let is_task = name == task::NAME;
            let mut cell = Cell::tool(id, name, key_arg, now);
            if let (Cell::Tool(tool), true) = (&mut cell, is_task) {
                tool.subagent = Some(SubagentView::default());
            }
            app.transcript.cells.push(cell);
        }
        AgentEvent::ToolFinished {
            id,
            result,
            outcome,
            duration,
            stored,
            ..
        } => {
            add_chars(app, &result);
            if let Some(cell) = app.transcript.tool_cell_mut(&id) {
                let approved = cell.approved || cell.status == ToolStatus::WaitingApproval;
                cell.status = finished_status(outcome, approved);
                cell.progress = None;
                cell.duration = Some(duration);
                cell.result = Some(ResultText::kept(result, stored));
            }
        }
        AgentEvent::ToolProgress { id, text } => {
            if let Some(cell) = app.transcript.tool_cell_mut(&id) {
                if cell.status == ToolStatus::Running {
                    cell.progress = Some(text);
                }
            }
        }
        AgentEvent::TodosUpdated { todos } => app.todos = todos,
        AgentEvent::UserCommandStarted { .. } | AgentEvent::UserCommandFinished { .. } => {
            super::modes::command_event(app, event, now)
        }
        _ => {}
    }
}

/// An approval request: its call waits, and it joins the queue (opening the modal, with a
/// desktop notification when the queue was empty and [`crate::app::attention`] says so).
fn approval_needed(app: &mut App, event: AgentEvent, now: Instant, effects: &mut Vec<Effect>) {
    if let AgentEvent::AutoApproved { id, subagent, .. } = &event {
        // A subagent's calls show their marks only; the main agent's cell says it.
        if subagent.is_none() {
            super::modes::auto_approved(app, id);
        }
        return;
    }
    let AgentEvent::ApprovalNeeded {
        id,
        name,
        summary,
        reason,
        grants,
        preview,
        subagent,
        mcp,
        // The reason says it: "the model made this same call N times in a row".
        repeated: _,
        period: _,
    } = event
    else {
        return;
    };
    let waiting = match &subagent {
        Some(task_id) => app
            .transcript
            .subagent_call_mut(task_id, &id)
            .map(|call| &mut call.status),
        None => app
            .transcript
            .tool_cell_mut(&id)
            .map(|cell| &mut cell.status),
    };
    if let Some(status) = waiting {
        *status = ToolStatus::WaitingApproval;
    }
    let notifies = app.notifications.approval_notifies(app.focused);
    let approvals = &mut app.approvals;
    let opens = approvals.queue.is_empty();
    if opens {
        approvals.batch_total = 1;
        approvals.answered = 0;
        approvals.scroll = 0;
        approvals.feedback = None;
        app.activity = Activity::WaitingApproval { since: now };
        if notifies {
            effects.push(Effect::Notify {
                message: notification(&summary),
            });
        }
    } else {
        approvals.batch_total += 1;
    }
    approvals.queue.push_back(PendingApproval {
        id,
        tool: name,
        summary,
        reason,
        grants,
        preview,
        subagent,
        mcp,
    });
    if opens {
        super::question_opened(app, now);
    }
}

/// The history trimmed, a result capped or dropped, a compaction, the context's count, a
/// model switch.
fn context_event(app: &mut App, event: AgentEvent, now: Instant, effects: &mut Vec<Effect>) {
    match event {
        AgentEvent::ContextTrimmed {
            stubbed,
            before_chars,
            after_chars,
        } => notice(
            app,
            NoticeKind::Info,
            rein_core::context::stubs::summary(stubbed, before_chars, after_chars),
        ),
        AgentEvent::ResultCapped { name, capped, .. } => notice(
            app,
            NoticeKind::Info,
            rein_core::context::spill::summary(&name, &capped),
        ),
        AgentEvent::ResultsDropped {
            dropped,
            before_tokens,
            after_tokens,
        } => notice(
            app,
            NoticeKind::Info,
            rein_core::context::drop::summary(dropped, before_tokens, after_tokens),
        ),
        AgentEvent::Context(stats) => {
            app.gauge.apply(&stats);
            app.context = Some(stats);
        }
        AgentEvent::WindowLearnt { window, url } => {
            app.gauge.learnt(window);
            effects.push(Effect::WindowKnown { window, url });
        }
        AgentEvent::ModelSwitched {
            name,
            window,
            over_budget,
            prices,
            ..
        } => {
            app.gauge.learnt(window);
            effects.push(Effect::ModelInUse {
                name: name.clone(),
                window,
            });
            let text = rein_core::agent::model_switched_text(&name, window, over_budget);
            super::model_switch::switched(app, name, prices, text);
        }
        AgentEvent::InstructionsLoaded { files, notices } => {
            if !files.is_empty() {
                let text = format!("project instructions from {}", files.join(", "));
                notice(app, NoticeKind::Info, text);
            }
            for line in &notices {
                notice(app, NoticeKind::Info, line.clone());
            }
            app.instructions = files.into_iter().chain(notices).collect();
            // A new conversation has loaded no folder's files yet.
            app.nested_instructions.clear();
        }
        AgentEvent::CompactionStarted { .. }
        | AgentEvent::Compacted { .. }
        | AgentEvent::CompactionFailed { .. } => compaction_event(app, event, now),
        _ => {}
    }
}

/// A compaction begins (the `Compacting` activity), ends (its cell) or fails.
fn compaction_event(app: &mut App, event: AgentEvent, now: Instant) {
    match event {
        AgentEvent::CompactionStarted { messages, .. } => {
            let in_turn = match app.activity {
                Activity::Idle => false,
                Activity::Compacting { in_turn, .. } => in_turn,
                _ => true,
            };
            app.activity = Activity::Compacting {
                messages,
                in_turn,
                since: now,
            };
        }
        AgentEvent::Compacted {
            auto,
            before_tokens,
            after_tokens,
            summarised,
            kept,
            note,
            ..
        } => {
            let summary =
                rein_core::context::compact::summary(before_tokens, after_tokens, summarised, kept);
            app.transcript
                .cells
                .push(Cell::compaction(auto, summary, note));
            compaction_over(app, now);
        }
        AgentEvent::CompactionFailed { message } => {
            notice(app, NoticeKind::Error, message);
            compaction_over(app, now);
        }
        _ => {}
    }
}

/// Retries, notices and errors, as notice cells.
fn notice_event(app: &mut App, event: AgentEvent) {
    match event {
        AgentEvent::Retrying {
            attempt,
            max_attempts,
            delay,
            reason,
        } => notice(
            app,
            NoticeKind::Retry,
            describe::retry(attempt, max_attempts, delay, &reason),
        ),
        AgentEvent::Notice { message } => notice(app, NoticeKind::Info, message),
        AgentEvent::ModeChanged { mode } => super::modes::changed(app, mode),
        AgentEvent::Error { message } => notice(app, NoticeKind::Error, message),
        AgentEvent::Hook {
            event,
            message,
            error,
        } => {
            let kind = if error {
                NoticeKind::Error
            } else {
                NoticeKind::Info
            };
            notice(app, kind, format!("hook {event}: {message}"));
        }
        AgentEvent::RecordingStopped { message } => {
            app.not_recording = true;
            notice(app, NoticeKind::Error, message);
        }
        AgentEvent::Rewound { to_turn, report } => super::rewind::rewound(app, to_turn, report),
        AgentEvent::InstructionsAdded { files, notices } => {
            if !files.is_empty() {
                notice(app, NoticeKind::Info, describe::instructions_added(&files));
            }
            for line in &notices {
                notice(app, NoticeKind::Info, line.clone());
            }
            // `/memory` lists them after the system prompt's.
            app.nested_instructions
                .extend(files.into_iter().chain(notices));
        }
        _ => {}
    }
}

fn notice(app: &mut App, kind: NoticeKind, text: String) {
    app.transcript.cells.push(Cell::notice(kind, text));
}

/// After a compaction: back to thinking when a turn (or a queued message) waits for it,
/// else idle.
fn compaction_over(app: &mut App, now: Instant) {
    if let Activity::Compacting { in_turn, .. } = app.activity {
        app.activity = if in_turn || !app.composer.queued.is_empty() {
            Activity::Thinking { since: now }
        } else {
            Activity::Idle
        };
    }
}

fn add_chars(app: &mut App, text: &str) {
    let chars = text.chars().count() as u64;
    app.gauge.added_chars = app.gauge.added_chars.saturating_add(chars);
}

fn streaming(app: &mut App, now: Instant) {
    if !matches!(app.activity, Activity::Streaming { .. }) {
        app.activity = Activity::Streaming { since: now };
    }
}

#[derive(Clone, Copy)]
enum Live {
    Assistant,
    Reasoning,
}

/// Append to the live cell of this kind when it is the last cell; otherwise start one.
fn append_live(app: &mut App, kind: Live, text: &str) {
    let cells = &mut app.transcript.cells;
    match (kind, cells.last_mut()) {
        (Live::Assistant, Some(Cell::Assistant(cell))) if !cell.finished => {
            cell.text.push_str(text);
        }
        (Live::Reasoning, Some(Cell::Reasoning(cell))) if !cell.finished => {
            cell.text.push_str(text);
        }
        (Live::Assistant, _) => cells.push(Cell::assistant(text, false)),
        (Live::Reasoning, _) => cells.push(Cell::reasoning(text, false)),
    }
}

/// The live reply's text and reasoning cut back to what the agent kept of them. The
/// render cache, which takes a cell's text to only grow, starts again.
fn cut_live(app: &mut App, text: Option<String>, reasoning: Option<String>) {
    for cell in current_turn(app) {
        cell.cache().0.borrow_mut().take();
        match cell {
            Cell::Assistant(c) if !c.finished => {
                if let Some(text) = &text {
                    c.text.clone_from(text);
                }
            }
            Cell::Reasoning(c) if !c.finished => {
                if let Some(reasoning) = &reasoning {
                    c.text.clone_from(reasoning);
                }
            }
            _ => {}
        }
    }
}

/// The cells of the running turn, newest first: back to its user message.
fn current_turn(app: &mut App) -> impl Iterator<Item = &mut Cell> {
    app.transcript
        .cells
        .iter_mut()
        .rev()
        .take_while(|c| !matches!(c, Cell::User(_)))
}

/// Mark the live assistant and reasoning cells finished. True when there was a live
/// assistant cell (the reply was streamed).
fn finish_live(app: &mut App) -> bool {
    let mut assistant = false;
    for cell in current_turn(app) {
        match cell {
            // Done growing: the slack of the growth goes back.
            Cell::Assistant(c) if !c.finished => {
                let c: &mut crate::app::transcript::AssistantCell = c;
                c.finished = true;
                c.text.shrink_to_fit();
                assistant = true;
            }
            Cell::Reasoning(c) if !c.finished => {
                let c: &mut crate::app::transcript::ReasoningCell = c;
                c.finished = true;
                c.text.shrink_to_fit();
            }
            _ => {}
        }
    }
    assistant
}

fn turn_finished(app: &mut App, outcome: TurnOutcome, now: Instant) {
    // A message queued during the turn starts the next one at once.
    app.activity = if app.composer.queued.is_empty() {
        Activity::Idle
    } else {
        Activity::Thinking { since: now }
    };
    finish_live(app);
    for cell in current_turn(app) {
        if let Cell::Tool(tool) = cell {
            if matches!(
                tool.status,
                ToolStatus::Running | ToolStatus::WaitingApproval
            ) {
                tool.status = ToolStatus::Interrupted;
            }
            for call in tool.subagent.iter_mut().flat_map(|v| v.calls.iter_mut()) {
                if matches!(
                    call.status,
                    ToolStatus::Running | ToolStatus::WaitingApproval
                ) {
                    call.status = ToolStatus::Interrupted;
                }
            }
        }
    }
    if outcome == TurnOutcome::Interrupted {
        notice(app, NoticeKind::Interrupted, "interrupted".to_string());
    }
    // Requests of a finished turn can no longer be answered.
    let approvals = &mut app.approvals;
    approvals.queue.clear();
    approvals.feedback = None;
    approvals.scroll = 0;
}

/// A subagent's progress, onto its `task` cell.
fn subagent_event(app: &mut App, task_id: &str, event: SubagentEvent, now: Instant) {
    if let SubagentEvent::ToolCallStarted { name, args, .. } = &event {
        app.activity = Activity::Tool {
            detail: format!("subagent: {name} {}", describe::key_argument(args)),
            name: task::NAME.to_string(),
            since: now,
        };
    }
    let Some(cell) = app.transcript.tool_cell_mut(task_id) else {
        return;
    };
    let view = cell.subagent.get_or_insert_with(SubagentView::default);
    view.queued = matches!(event, SubagentEvent::Queued);
    match event {
        SubagentEvent::Queued => {}
        SubagentEvent::RequestStarted { step } => view.steps = step,
        SubagentEvent::ToolCallStarted { id, name, args } => view.calls.push(SubagentCall {
            id,
            key_arg: describe::key_argument(&args),
            name,
            status: ToolStatus::Running,
        }),
        SubagentEvent::ToolFinished { id, outcome, .. } => {
            if let Some(call) = view.calls.iter_mut().rev().find(|c| c.id == id) {
                let approved = call.status == ToolStatus::WaitingApproval;
                call.status = finished_status(outcome, approved);
            }
        }
        SubagentEvent::Usage(usage) => view.usage.add(&usage),
        SubagentEvent::Finished {
            steps,
            usage,
            stopped_early,
        } => {
            view.steps = steps;
            view.usage = usage;
            view.stopped_early = stopped_early;
            view.finished = true;
        }
    }
}

/// The mark of a call that ended with `outcome` (`approved`: the user allowed it).
fn finished_status(outcome: ToolOutcome, approved: bool) -> ToolStatus {
    match outcome {
        ToolOutcome::Ok => ToolStatus::Done { approved },
        ToolOutcome::Error => ToolStatus::Failed,
        ToolOutcome::Denied | ToolOutcome::Refused | ToolOutcome::PlanMode => ToolStatus::Refused,
        ToolOutcome::Interrupted | ToolOutcome::NotRun | ToolOutcome::MayHaveRun => {
            ToolStatus::Interrupted
        }
    }
}

/// What the status line says a running tool does: the plan's in-progress step when there
/// is one, else the tool and its argument.
pub fn tool_detail(app: &App, name: &str, key_arg: &str) -> String {
    app.todos
        .iter()
        .find(|t| t.status == TodoStatus::InProgress)
        .and_then(|t| t.active_form.clone())
        .unwrap_or_else(|| format!("{name} {key_arg}"))
}

/// The turn that began at `app.turn_started` ended at `now` and nothing waits to run:
/// notify when it was long and the setting and the focus say so.
fn notify_turn_finished(app: &mut App, now: Instant, effects: &mut Vec<Effect>) {
    let Some(started) = app.turn_started.take() else {
        return;
    };
    let took = now.saturating_duration_since(started);
    // The turn's reply: the last assistant text after the last user message.
    let reply = app.transcript.cells.iter().rev().find_map(|c| match c {
        Cell::Assistant(a) if !a.text.trim().is_empty() => Some(a.text.as_str()),
        Cell::User(_) => Some(""),
        _ => None,
    });
    if let Some(message) = app.notifications.turn_finished(app.focused, took, reply) {
        effects.push(Effect::Notify { message });
    }
}

/// The desktop notification when the approval modal opens.
fn notification(summary: &str) -> String {
    const MAX: usize = 120;
    let line = text::clip(&text::one_line(summary), MAX);
    format!("rein asks for approval: {line}")
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use rein_core::agent::AgentEvent;

    use crate::app::event::{AppEvent, Effect};
    use crate::app::state::{App, SessionInfo};
    use crate::app::update::update;

    fn effects_of(event: AgentEvent) -> Vec<Effect> {
        let mut app = App::new(SessionInfo::default(), 1000);
        update(&mut app, AppEvent::Agent(event))
    }

    /// What the dashboard loop keeps beside the app (the session file, whether it is worth
    /// resuming, the model and window an agent restarted later runs on) comes from the
    /// update step as effects: the loop never reads an agent event itself.
    #[test]
    fn the_loops_own_state_changes_come_back_as_effects() {
        let path = PathBuf::from("/data/sessions/s.jsonl");
        let effects = effects_of(AgentEvent::SessionStarted {
            id: "s".to_string(),
            path: path.clone(),
        });
        assert!(
            effects
                .iter()
                .any(|e| matches!(e, Effect::Recording(p) if *p == path)),
            "{effects:?}"
        );
        let effects = effects_of(AgentEvent::TurnStarted {
            text: "hi".to_string(),
        });
        assert!(
            effects.iter().any(|e| matches!(e, Effect::Resumable)),
            "{effects:?}"
        );
        let effects = effects_of(AgentEvent::ModelSwitched {
            name: "fast".to_string(),
            model: "m".to_string(),
            base_url: "http://127.0.0.1:1/v1".to_string(),
            window: 32_000,
            over_budget: None,
            prices: None,
        });
        assert!(
            effects.iter().any(|e| matches!(
                e,
                Effect::ModelInUse { name, window: 32_000 } if name == "fast"
            )),
            "{effects:?}"
        );
        let effects = effects_of(AgentEvent::WindowLearnt {
            window: 64_000,
            url: Some("http://127.0.0.1:1/v1/models".to_string()),
        });
        assert!(
            effects.iter().any(|e| matches!(
                e,
                Effect::WindowKnown {
                    window: 64_000,
                    url: Some(_)
                }
            )),
            "{effects:?}"
        );
    }
}
