//! Running the tool calls of one reply and keeping their results.
//!
//! A call is recorded as started before it runs (so a resume after a crash knows it may
//! have done its work), judged and run (`toolcall`), and answered by exactly
//! one tool message, with its `ToolFinished` event; rules the user granted on the way and
//! a new todo list are recorded too. Consecutive `task` calls run at the same time, each a
//! subagent (`tasks`). An interrupt answers what did not finish as interrupted.

use std::time::Instant;

use super::Agent;
use crate::agent::events::AgentEvent;
use crate::agent::toolcall::{Guarded, ToolEnv, ToolRun};
use crate::conversation::{Message, ToolCall, ToolResult};
use crate::session::Entry;
use crate::tools::{self, Toolset};

impl Agent {
    /// A call starts: on disk before it runs (after a crash, resuming knows it may have done
    /// its work), then to the front end.
    pub(super) fn call_started(&mut self, call: &ToolCall) {
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
            live_output: self.config.live_output,
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

    pub(super) fn finish_tool(
        &mut self,
        call: &ToolCall,
        mut result: ToolResult,
        started: Instant,
    ) {
        // What a language server found late about an earlier edit rides on this result.
        if let Some(late) = self.config.lsp.as_ref().and_then(|l| l.late()) {
            result.text.push_str("\n\n");
            result.text.push_str(&late);
        }
        let mut event = finished_event(call, &result, started);
        let at = self.push(Message::tool_result(call.id.clone(), result));
        if let AgentEvent::ToolFinished { stored, .. } = &mut event {
            *stored = at;
        }
        self.emit(event);
        // What the language servers have to tell the user (one that could not start), and
        // the errors and warnings of the files touched, when they changed.
        let Some(lsp) = self.config.lsp.clone() else {
            return;
        };
        for message in lsp.take_notices() {
            self.emit(AgentEvent::Notice { message });
        }
        if let Some(servers) = lsp.servers_changed() {
            self.emit(AgentEvent::LanguageServers { servers });
        }
        if let Some(counts) = lsp.counts_changed() {
            self.emit(AgentEvent::Diagnostics {
                errors: counts.errors,
                warnings: counts.warnings,
                files: counts.files,
            });
        }
    }
}

/// The `ToolFinished` event of `call`, which `result` ended and which began at `started`.
pub(super) fn finished_event(call: &ToolCall, result: &ToolResult, started: Instant) -> AgentEvent {
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
    crate::host::safe_fs::resolve(std::path::Path::new(path), root).ok()
}

/// The text of the file at `path` (at most [`EDIT_DIFF_BYTES`]; empty when there is no
/// file); `None` when it is larger, not UTF-8 or unreadable.
fn read_text(path: &std::path::Path) -> Option<String> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(String::new()),
        _ => crate::host::safe_fs::read_small_text(path, EDIT_DIFF_BYTES).ok(),
    }
}

/// A call's arguments for display: the parsed object, or the raw text when it is not JSON,
/// long strings cut ([`tools::display_arguments`]).
pub(super) fn display_args(raw: &str) -> serde_json::Value {
    tools::display_arguments(raw)
}
