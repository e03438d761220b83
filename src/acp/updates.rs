//! The agent's events as the editor's `session/update`s.
//!
//! [`Translator`] follows one session's events in order and says what the client is to be
//! told: the reply and the reasoning as chunks, each tool call announced (pending), running
//! and finished (its output as text, an edit as a diff), the todo list as a plan, a mode
//! switch, the context's fill. Approvals and the turn's end are the session's own
//! ([`super::session`]); the rest (usage totals, stubs, background lists) the editor has no
//! place for.
//!
//! Pure but for one read: a whole-file write's diff, when the write is asked about, needs
//! the file as it was, which the caller's `before` reads (bounded, [`Translator::asked`]);
//! one that is not asked about gets the diff the agent took around the write.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, CurrentModeUpdate, Diff, Plan, PlanEntry, PlanEntryPriority,
    PlanEntryStatus, SessionUpdate, TextContent, ToolCallContent, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, UsageUpdate,
};
use rein_core::agent::{AgentEvent, SubagentEvent};
use rein_core::checkpoint::diff::{DiffKind, ShortDiff};
use rein_core::conversation::ToolOutcome;
use rein_core::permissions::ApprovalMode;
use rein_core::tools::write_todos::{Todo, TodoStatus};

use super::tool_call;

/// How much of a call's output is sent as its content: the last this many bytes of what it
/// printed while it ran; at the end, its head and tail of this many characters in all, as
/// the model got it.
pub const OUTPUT_BYTES: usize = 64 * 1024;

/// A call announced and not yet finished.
#[derive(Debug, Clone)]
struct Open {
    /// The file it edits, for an edit.
    path: Option<PathBuf>,
    /// The change it makes, for an edit, once known.
    diff: Option<Diff>,
    /// A whole-file write's new content, until its diff is known.
    new_text: Option<String>,
    /// What it printed so far (an MCP tool's progress lines), up to [`OUTPUT_BYTES`].
    progress: String,
}

/// One session's events, followed in order.
#[derive(Debug)]
pub struct Translator {
    root: PathBuf,
    open: HashMap<String, Open>,
    /// Writes that finished before their diff came.
    written: HashMap<String, Open>,
}

/// A text chunk of the reply or of the reasoning.
fn chunk(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
}

/// The mode's id as the editor knows it (`session/set_mode`).
pub fn mode_id(mode: ApprovalMode) -> &'static str {
    mode.name()
}

/// The todo list as the editor's plan.
pub fn plan(todos: &[Todo]) -> Plan {
    Plan::new(
        todos
            .iter()
            .map(|t| {
                let (status, content) = match t.status {
                    TodoStatus::Pending => (PlanEntryStatus::Pending, &t.content),
                    TodoStatus::InProgress => (
                        PlanEntryStatus::InProgress,
                        t.active_form.as_ref().unwrap_or(&t.content),
                    ),
                    TodoStatus::Completed => (PlanEntryStatus::Completed, &t.content),
                };
                PlanEntry::new(content.clone(), PlanEntryPriority::Medium, status)
            })
            .collect(),
    )
}

/// `text` cut to about `max` characters as a spilled output is cut (its head and tail,
/// at line ends where they are near, [`rein_core::context::spill::cut`]), with a line that
/// says how much was left out.
pub fn bounded(text: &str, max: usize) -> String {
    match rein_core::context::spill::cut(text, max) {
        None => text.to_string(),
        Some((head, tail)) => format!(
            "{head}\n[… {} bytes left out …]\n{tail}",
            text.len() - head.len() - tail.len()
        ),
    }
}

/// An edit's short diff as the text before and after: its context lines in both, removed
/// lines before, added lines after, a gap as `…` in both.
pub fn snippets(diff: &ShortDiff) -> (String, String) {
    let (mut old, mut new) = (String::new(), String::new());
    for line in &diff.lines {
        let (to_old, to_new, text) = match line.kind {
            DiffKind::Context => (true, true, line.text.as_str()),
            DiffKind::Removed => (true, false, line.text.as_str()),
            DiffKind::Added => (false, true, line.text.as_str()),
            DiffKind::Gap => (true, true, "…"),
        };
        for (wanted, out) in [(to_old, &mut old), (to_new, &mut new)] {
            if wanted {
                out.push_str(text);
                out.push('\n');
            }
        }
    }
    (old, new)
}

impl Translator {
    pub fn new(root: &Path) -> Translator {
        Translator {
            root: root.to_path_buf(),
            open: HashMap::new(),
            written: HashMap::new(),
        }
    }

    /// The content a call shows: its diff, then `text` when there is some.
    fn content(open: Option<&Open>, text: &str) -> Vec<ToolCallContent> {
        let mut content: Vec<ToolCallContent> = open
            .and_then(|o| o.diff.clone())
            .map(ToolCallContent::Diff)
            .into_iter()
            .collect();
        if !text.is_empty() {
            content.push(ToolCallContent::from(ContentBlock::Text(TextContent::new(
                bounded(text, OUTPUT_BYTES),
            ))));
        }
        content
    }

    /// What `event` tells the editor, in order.
    pub fn updates(&mut self, event: &AgentEvent) -> Vec<SessionUpdate> {
        match event {
            AgentEvent::TextDelta { text } if !text.is_empty() => {
                vec![SessionUpdate::AgentMessageChunk(chunk(text))]
            }
            AgentEvent::ReasoningDelta { text } if !text.is_empty() => {
                vec![SessionUpdate::AgentThoughtChunk(chunk(text))]
            }
            AgentEvent::ToolCallStarted { id, name, args } => {
                // A whole-file write's old text is read when it is asked about (the file is
                // as it was until the answer) or comes with its diff once written.
                let diff = tool_call::proposed_diff(name, args, &self.root, None)
                    .filter(|_| name != rein_core::tools::write_file::NAME);
                let path = match name.as_str() {
                    rein_core::tools::write_file::NAME | rein_core::tools::str_replace::NAME => {
                        args.get("path")
                            .and_then(|p| p.as_str())
                            .map(|p| tool_call::absolute(&self.root, p))
                    }
                    _ => None,
                };
                let call = tool_call::announce(id, name, args, &self.root, diff.clone());
                self.open.insert(
                    id.clone(),
                    Open {
                        path,
                        diff,
                        new_text: match name.as_str() {
                            rein_core::tools::write_file::NAME => args
                                .get("content")
                                .and_then(|c| c.as_str())
                                .map(str::to_string),
                            _ => None,
                        },
                        progress: String::new(),
                    },
                );
                vec![SessionUpdate::ToolCall(call)]
            }
            AgentEvent::ToolRunning { id } if self.open.contains_key(id) => {
                vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    id.clone(),
                    ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
                ))]
            }
            AgentEvent::ToolProgress { id, text } | AgentEvent::ToolOutput { id, text } => {
                let Some(open) = self.open.get_mut(id) else {
                    return Vec::new();
                };
                open.progress.push_str(text);
                // An MCP server's progress comes a line at a time; a command's output as
                // it was printed.
                if matches!(event, AgentEvent::ToolProgress { .. }) {
                    open.progress.push('\n');
                }
                if open.progress.len() > OUTPUT_BYTES {
                    let mut cut = open.progress.len() - OUTPUT_BYTES;
                    while !open.progress.is_char_boundary(cut) {
                        cut += 1;
                    }
                    open.progress.drain(..cut);
                }
                let content = Self::content(Some(open), &open.progress);
                vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    id.clone(),
                    ToolCallUpdateFields::new().content(content),
                ))]
            }
            AgentEvent::ToolFinished {
                id,
                result,
                outcome,
                ..
            } => {
                let open = self.open.remove(id);
                // A write that went through without a question: its diff follows.
                if let Some(o) = open
                    .as_ref()
                    .filter(|o| o.path.is_some() && o.diff.is_none())
                {
                    self.written.insert(id.clone(), o.clone());
                }
                let status = if *outcome == ToolOutcome::Ok {
                    ToolCallStatus::Completed
                } else {
                    ToolCallStatus::Failed
                };
                // An edit that went through shows its diff; its "done" line adds nothing.
                let edited = open.as_ref().is_some_and(|o| o.diff.is_some());
                let text = if edited && status == ToolCallStatus::Completed {
                    ""
                } else {
                    result.as_str()
                };
                vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    id.clone(),
                    ToolCallUpdateFields::new()
                        .status(status)
                        .content(Self::content(open.as_ref(), text))
                        .raw_output(serde_json::Value::String(bounded(result, OUTPUT_BYTES))),
                ))]
            }
            AgentEvent::EditDiff { id, diff } => {
                let Some(path) = self.written.remove(id).and_then(|o| o.path) else {
                    return Vec::new();
                };
                let (old, new) = snippets(diff);
                let diff = Diff::new(path, new).old_text(old);
                vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    id.clone(),
                    ToolCallUpdateFields::new().content(vec![ToolCallContent::Diff(diff)]),
                ))]
            }
            // A subagent's calls, each its own call in the editor, named for its task
            // (`TASK/CALL`, the id its questions go by); they run without a separate
            // running update.
            AgentEvent::Subagent { task_id, event } => match event {
                SubagentEvent::ToolCallStarted { id, name, args } => {
                    let mut call = tool_call::announce(
                        &format!("{task_id}/{id}"),
                        name,
                        args,
                        &self.root,
                        tool_call::proposed_diff(name, args, &self.root, None)
                            .filter(|_| name != rein_core::tools::write_file::NAME),
                    );
                    call.title = format!("subagent: {}", call.title);
                    vec![SessionUpdate::ToolCall(call)]
                }
                SubagentEvent::ToolFinished {
                    id,
                    result,
                    outcome,
                    ..
                } => {
                    let status = if *outcome == ToolOutcome::Ok {
                        ToolCallStatus::Completed
                    } else {
                        ToolCallStatus::Failed
                    };
                    vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                        format!("{task_id}/{id}"),
                        ToolCallUpdateFields::new()
                            .status(status)
                            .content(Self::content(None, result)),
                    ))]
                }
                _ => Vec::new(),
            },
            AgentEvent::TodosUpdated { todos } => vec![SessionUpdate::Plan(plan(todos))],
            AgentEvent::ModeChanged { mode } => vec![SessionUpdate::CurrentModeUpdate(
                CurrentModeUpdate::new(mode_id(*mode)),
            )],
            AgentEvent::Context(stats) if stats.window > 0 => {
                vec![SessionUpdate::UsageUpdate(UsageUpdate::new(
                    stats.tokens,
                    stats.window,
                ))]
            }
            AgentEvent::Error { message } | AgentEvent::RecordingStopped { message } => {
                vec![SessionUpdate::AgentMessageChunk(chunk(&format!(
                    "\n\n**rein:** {message}\n"
                )))]
            }
            AgentEvent::Notice { message } | AgentEvent::CompactionFailed { message } => {
                vec![SessionUpdate::AgentThoughtChunk(chunk(&format!(
                    "\nrein: {message}\n"
                )))]
            }
            AgentEvent::Retrying {
                attempt,
                max_attempts,
                reason,
                ..
            } => vec![SessionUpdate::AgentThoughtChunk(chunk(&format!(
                "\nrein: retrying ({attempt}/{max_attempts}): {reason}\n"
            )))],
            AgentEvent::Hook {
                message,
                error: true,
                event,
            } => vec![SessionUpdate::AgentThoughtChunk(chunk(&format!(
                "\nrein: {event} hook: {message}\n"
            )))],
            _ => Vec::new(),
        }
    }

    /// The call `id` is about to be asked about: a whole-file write's diff, now that the
    /// file is as it was (it waits for the answer), read by `before`.
    pub fn asked(
        &mut self,
        id: &str,
        before: &dyn Fn(&Path) -> Option<String>,
    ) -> Option<SessionUpdate> {
        let open = self.open.get_mut(id)?;
        let (path, new_text) = (open.path.clone()?, open.new_text.take()?);
        let diff = Diff::new(path.clone(), new_text).old_text(before(&path));
        open.diff = Some(diff.clone());
        Some(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            id.to_string(),
            ToolCallUpdateFields::new().content(vec![ToolCallContent::Diff(diff)]),
        )))
    }

    /// The calls announced and not finished (a turn that ends leaves none).
    pub fn open_calls(&self) -> usize {
        self.open.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    fn sent(updates: &[SessionUpdate]) -> Vec<serde_json::Value> {
        updates
            .iter()
            .map(|u| serde_json::to_value(u).unwrap())
            .collect()
    }

    #[test]
    fn a_call_is_announced_runs_and_finishes_with_its_output() {
        let mut t = Translator::new(Path::new("/p"));
        let started = AgentEvent::ToolCallStarted {
            id: "c1".into(),
            name: "bash".into(),
            args: json!({"command": "cargo test"}),
        };
        let u = sent(&t.updates(&started));
        assert_eq!(u[0]["sessionUpdate"], "tool_call");
        assert!(u[0].get("status").is_none_or(|s| s == "pending"));
        assert_eq!(u[0]["kind"], "execute");
        assert_eq!(u[0]["title"], "cargo test");
        let u = sent(&t.updates(&AgentEvent::ToolRunning { id: "c1".into() }));
        assert_eq!(u[0]["sessionUpdate"], "tool_call_update");
        assert_eq!(u[0]["status"], "in_progress");
        let finished = AgentEvent::ToolFinished {
            id: "c1".into(),
            name: "bash".into(),
            result: "test result: ok".into(),
            is_error: false,
            outcome: ToolOutcome::Ok,
            duration: Duration::from_millis(5),
            stored: None,
        };
        let u = sent(&t.updates(&finished));
        assert_eq!(u[0]["status"], "completed");
        assert_eq!(u[0]["content"][0]["type"], "content");
        assert_eq!(u[0]["content"][0]["content"]["text"], "test result: ok");
        assert_eq!(t.open_calls(), 0);
    }

    #[test]
    fn an_edit_shows_its_diff_and_a_failure_says_why() {
        let mut t = Translator::new(Path::new("/p"));
        let before = |p: &Path| (p == Path::new("/p/a.txt")).then(|| "old\n".to_string());
        let started = AgentEvent::ToolCallStarted {
            id: "w".into(),
            name: "write_file".into(),
            args: json!({"path": "a.txt", "content": "new\n"}),
        };
        // Announced without a diff: the file's old text is not read yet.
        let u = sent(&t.updates(&started));
        assert!(u[0].get("content").is_none_or(|c| c == &json!([])), "{u:?}");
        // Asked about: the file is as it was, the diff is whole.
        let asked = serde_json::to_value(t.asked("w", &before).unwrap()).unwrap();
        assert_eq!(asked["content"][0]["type"], "diff");
        assert_eq!(asked["content"][0]["path"], "/p/a.txt");
        assert_eq!(asked["content"][0]["oldText"], "old\n");
        assert_eq!(asked["content"][0]["newText"], "new\n");
        let refused = AgentEvent::ToolFinished {
            id: "w".into(),
            name: "write_file".into(),
            result: "the user refused it".into(),
            is_error: true,
            outcome: ToolOutcome::Refused,
            duration: Duration::ZERO,
            stored: None,
        };
        let u = sent(&t.updates(&refused));
        assert_eq!(u[0]["status"], "failed");
        assert_eq!(u[0]["content"][0]["type"], "diff");
        assert_eq!(u[0]["content"][1]["content"]["text"], "the user refused it");
    }

    #[test]
    fn a_write_not_asked_about_gets_the_agents_diff() {
        use rein_core::checkpoint::diff::DiffLine;
        let mut t = Translator::new(Path::new("/p"));
        t.updates(&AgentEvent::ToolCallStarted {
            id: "w".into(),
            name: "write_file".into(),
            args: json!({"path": "a.txt", "content": "a\nB\nc\n"}),
        });
        t.updates(&AgentEvent::ToolFinished {
            id: "w".into(),
            name: "write_file".into(),
            result: "wrote a.txt".into(),
            is_error: false,
            outcome: ToolOutcome::Ok,
            duration: Duration::ZERO,
            stored: None,
        });
        let line = |kind, text: &str| DiffLine {
            kind,
            text: text.into(),
        };
        let diff = ShortDiff {
            added: 1,
            removed: 1,
            lines: vec![
                line(DiffKind::Context, "a"),
                line(DiffKind::Removed, "b"),
                line(DiffKind::Added, "B"),
                line(DiffKind::Gap, ""),
                line(DiffKind::Context, "z"),
            ],
            more: 0,
        };
        let u = sent(&t.updates(&AgentEvent::EditDiff {
            id: "w".into(),
            diff,
        }));
        assert_eq!(u[0]["content"][0]["type"], "diff");
        assert_eq!(u[0]["content"][0]["path"], "/p/a.txt");
        assert_eq!(u[0]["content"][0]["oldText"], "a\nb\n…\nz\n");
        assert_eq!(u[0]["content"][0]["newText"], "a\nB\n…\nz\n");
        // Said once.
        assert!(t
            .updates(&AgentEvent::EditDiff {
                id: "w".into(),
                diff: ShortDiff {
                    added: 0,
                    removed: 0,
                    lines: vec![],
                    more: 0
                }
            })
            .is_empty());
    }

    #[test]
    fn the_reply_reasoning_todos_mode_and_context_are_told() {
        let mut t = Translator::new(Path::new("/p"));
        let u = sent(&t.updates(&AgentEvent::TextDelta { text: "Hi".into() }));
        assert_eq!(u[0]["sessionUpdate"], "agent_message_chunk");
        assert_eq!(u[0]["content"]["text"], "Hi");
        let u = sent(&t.updates(&AgentEvent::ReasoningDelta { text: "hm".into() }));
        assert_eq!(u[0]["sessionUpdate"], "agent_thought_chunk");
        let todos = vec![
            Todo {
                content: "Read the parser".into(),
                status: TodoStatus::Completed,
                active_form: None,
            },
            Todo {
                content: "Fix the bug".into(),
                status: TodoStatus::InProgress,
                active_form: Some("Fixing the bug".into()),
            },
        ];
        let u = sent(&t.updates(&AgentEvent::TodosUpdated { todos }));
        assert_eq!(u[0]["sessionUpdate"], "plan");
        assert_eq!(u[0]["entries"][0]["status"], "completed");
        assert_eq!(u[0]["entries"][1]["content"], "Fixing the bug");
        assert_eq!(u[0]["entries"][1]["status"], "in_progress");
        let u = sent(&t.updates(&AgentEvent::ModeChanged {
            mode: ApprovalMode::Plan,
        }));
        assert_eq!(u[0]["sessionUpdate"], "current_mode_update");
        assert_eq!(u[0]["currentModeId"], "plan");
        // An event the editor has no place for says nothing.
        assert!(t
            .updates(&AgentEvent::RequestStarted { step: 1 })
            .is_empty());
    }

    #[test]
    fn a_subagents_calls_are_calls_of_their_own_named_for_the_task() {
        let mut t = Translator::new(Path::new("/p"));
        let started = AgentEvent::Subagent {
            task_id: "t1".into(),
            event: SubagentEvent::ToolCallStarted {
                id: "c1".into(),
                name: "read_file".into(),
                args: json!({"path": "a.rs"}),
            },
        };
        let u = sent(&t.updates(&started));
        assert_eq!(u[0]["toolCallId"], "t1/c1");
        assert_eq!(u[0]["title"], "subagent: Read a.rs");
        assert_eq!(u[0]["kind"], "read");
        let finished = AgentEvent::Subagent {
            task_id: "t1".into(),
            event: SubagentEvent::ToolFinished {
                id: "c1".into(),
                name: "read_file".into(),
                result: "fn a() {}".into(),
                is_error: false,
                outcome: ToolOutcome::Ok,
                duration: Duration::ZERO,
            },
        };
        let u = sent(&t.updates(&finished));
        assert_eq!(u[0]["toolCallId"], "t1/c1");
        assert_eq!(u[0]["status"], "completed");
        assert_eq!(u[0]["content"][0]["content"]["text"], "fn a() {}");
    }

    #[test]
    fn long_output_keeps_its_head_and_tail_within_the_bound() {
        let text = "é".repeat(2 * OUTPUT_BYTES);
        let cut = bounded(&text, OUTPUT_BYTES);
        assert!(cut.chars().count() <= OUTPUT_BYTES + 64, "{}", cut.len());
        assert!(cut.len() < text.len());
        assert!(cut.starts_with('é') && cut.ends_with('é'));
        assert!(cut.contains("bytes left out"));
        assert_eq!(bounded("short", 10), "short");
    }
}
