//! Showing a resumed session: its messages become transcript cells again, and its todo
//! list, input history and context estimate come back. [`reset`] clears what belonged to
//! the session shown before (when `/resume` switches sessions).

use std::time::{Duration, Instant};

use crate::app::approval::Approvals;
use crate::app::state::{Activity, App, Gauge};
use crate::app::transcript::{
    Cell, NoticeKind, ResultText, StoredResult, ToolStatus, Transcript, FOLDED_RESULT_LINES,
};
use rein_core::conversation::Message;
use rein_core::session::{tool_outcome, EntryAt, LoadedSession, Shown};
use rein_core::tools::parse_arguments;

/// What a dashboard loads of a session: long tool results as their folded heads (the
/// rest is read back from the file when one is expanded).
pub const SHOWN: Shown = Shown::Heads(FOLDED_RESULT_LINES);

/// Forget the conversation shown: transcript, todo list, gauge and context figures and
/// queued messages. The input's text, the input history (the user's, across sessions), the
/// panes shown and the session info stay.
pub fn reset(app: &mut App) {
    app.transcript = Transcript::default();
    app.todos.clear();
    // The agent of the resumed session counts afresh (and says so with its first
    // `Context`): until then, four characters a token.
    app.gauge = Gauge {
        chars_per_token: rein_core::context::budget::DEFAULT_CHARS_PER_TOKEN,
        ..app.gauge.cleared()
    };
    app.context = None;
    app.context_open = false;
    app.activity = Activity::Idle;
    app.approvals = Approvals::default();
    app.picker = None;
    app.model_picker = None;
    // The pager's measurements are of the old cells; the plan was the old session's.
    app.pager = None;
    app.plan_review = None;
    app.hint = None;
    // The resumed session's agent says its mode when it is not the default.
    app.mode = Default::default();
    // The input history is the user's, across sessions (like a shell's): it stays.
    let composer = &mut app.composer;
    composer.history_pos = None;
    composer.draft.clear();
    composer.queued.clear();
}

/// Fill `app` from `session` (before the dashboard's first frame, or after [`reset`]). Its
/// transcript becomes the cells: it is taken out of `session`, not copied.
pub fn restore(app: &mut App, session: &mut LoadedSession) {
    let now = Instant::now();
    let title = session.title.as_deref().unwrap_or("untitled");
    app.transcript.cells.push(Cell::notice(
        NoticeKind::Info,
        format!(
            "continuing session {} \u{2014} {title} ({} messages)",
            session.id(),
            session.message_count
        ),
    ));
    for notice in &session.notices {
        app.transcript
            .cells
            .push(Cell::notice(NoticeKind::Error, notice.clone()));
    }
    let file: std::sync::Arc<std::path::Path> = std::sync::Arc::from(session.path.as_path());
    let history = std::mem::take(&mut app.composer.history);
    let mut known: std::collections::HashSet<String> = history.iter().cloned().collect();
    let mut added: Vec<String> = Vec::new();
    // The dashboard keeps the transcript as its cells: taken, not copied.
    let transcript = std::mem::take(&mut session.transcript);
    let folds = std::mem::take(&mut session.folds);
    for (i, message) in transcript.into_iter().enumerate() {
        if session.compactions.contains(&i) {
            app.transcript.cells.push(Cell::notice(
                NoticeKind::Info,
                "the history was trimmed or compacted here",
            ));
        }
        match message {
            Message::System { .. } => {}
            Message::User {
                content,
                attachments,
                ..
            } => {
                // Inputs not in the history yet (sessions from before the history file,
                // or with `ui.input_history` off) join it.
                if !known.contains(content.as_str()) {
                    known.insert(content.clone());
                    added.push(content.clone());
                }
                let mut cell = Cell::user(content);
                if let Cell::User(user) = &mut cell {
                    user.mentions = attachments.into_iter().map(|a| a.path).collect();
                }
                app.transcript.cells.push(cell);
            }
            Message::Assistant {
                content,
                tool_calls,
                reasoning,
                refusal,
                ..
            } => {
                // The reasoning it was streamed with shows again, collapsed as it was.
                if let Some(r) = reasoning.filter(|r| !r.text.is_empty()) {
                    app.transcript.cells.push(Cell::reasoning(r.text, true));
                }
                let text = content.filter(|t| !t.is_empty()).or(refusal);
                if let Some(text) = text {
                    app.transcript.cells.push(Cell::assistant(&text, true));
                }
                for call in tool_calls {
                    let args = parse_arguments(&call.function.arguments).unwrap_or_else(|_| {
                        serde_json::Value::String(call.function.arguments.clone())
                    });
                    app.transcript.cells.push(Cell::tool(
                        call.id,
                        call.function.name,
                        crate::describe::key_argument(&args),
                        now,
                    ));
                }
            }
            Message::Tool { .. } => {
                let fold = folds.get(i).copied().flatten();
                restore_result(app, message, fold, &file);
            }
        }
    }
    app.composer.history = history;
    app.composer.history.extend(added);
    // Calls that never got a result (the session ended mid-tool) are not running now; an
    // edit shows what it changed, as it did.
    for cell in app.transcript.cells.iter_mut() {
        if let Cell::Tool(t) = cell {
            if t.status == ToolStatus::Running {
                t.status = ToolStatus::Interrupted;
            }
            if let Some(diff) = session.edit_diffs.remove(&t.id) {
                t.diff = Some(diff);
            }
        }
    }
    app.todos = session.todos.clone();
    let chars: usize = session.history.iter().map(Message::approx_chars).sum();
    app.gauge.reported = 0;
    app.gauge.added_chars = u64::try_from(chars).unwrap_or(u64::MAX);
    app.gauge.estimated = true;
}

/// A resumed result into its call's cell: a call that did not succeed shows as failed,
/// whatever the reason (refused, interrupted, never run); a long result (`fold`) keeps its
/// head, the rest read back from `file` when expanded.
fn restore_result(
    app: &mut App,
    message: Message,
    fold: Option<rein_core::session::Folded>,
    file: &std::sync::Arc<std::path::Path>,
) {
    let Message::Tool { tool_call_id, .. } = &message else {
        return;
    };
    let Some(cell) = app.transcript.tool_cell_mut(tool_call_id) else {
        return;
    };
    // Judged before the text moves into the cell.
    let failed = tool_outcome(&message, &cell.name).is_some_and(|o| o.is_error());
    let Message::Tool { content, .. } = message else {
        return;
    };
    cell.status = if failed {
        ToolStatus::Failed
    } else {
        ToolStatus::Done { approved: false }
    };
    cell.duration = Some(Duration::ZERO);
    cell.result = Some(match fold {
        Some(fold) => ResultText::Stored(Box::new(StoredResult {
            head: content,
            more_lines: fold.more_lines,
            at: EntryAt {
                path: file.clone(),
                offset: fold.offset,
            },
            whole: None,
        })),
        None => ResultText::Whole(content),
    });
}
