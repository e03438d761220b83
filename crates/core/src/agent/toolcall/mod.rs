//! One tool call, step by step: the path every call takes, the main agent's and a
//! subagent's alike.
//!
//! In: a call from the model and the [`ToolEnv`] of the agent that made it (which tools it
//! may use, the permission policy, the project, where events go). [`ToolEnv::judge_and_run`]
//! takes it through these steps, top to bottom, each a function with its own outcome:
//!
//! 1. **parse** ([`parse`]): valid JSON, a tool this agent has, the right fields; the
//!    hooks' view of the call ([`HookView`]) is built here, once.
//! 2. **pre-tool hooks** ([`hooks`]): Claude Code's PreToolUse may block the call, rewrite
//!    its input (parsed again), weigh in on the judgement, add context.
//! 3. **pin**: a file tool is judged where its path really leads.
//! 4. **judge** ([`judge`]): the rules, then the approval mode, the pre-tool hooks' word and
//!    the loop guard, into one [`crate::permissions::mode::ModeDecision`].
//! 5. **approve** ([`ask`]): a denial or plan mode's refusal ends the call; an auto-approval
//!    is announced; a question goes to the PermissionRequest hooks, then to the user.
//! 6. **run** ([`run`]): the sandbox it runs in (read-only in plan mode), then the tool, a
//!    background command or an MCP server's tool; an interrupt ends it.
//! 7. **post-tool hooks** ([`hooks`]): a write the user approved is recorded, the pre-tool
//!    hooks' context added, PostToolUse (or PostToolUseFailure) hooks read the result.
//!
//! A step that ends the call early returns [`Ended`], how it ended. Out: a [`ToolRun`] with
//! the result, capped as it arrives (layer 1 of [`crate::context`]), and what the user
//! allowed for the session on the way (the caller records it). Starting and finishing
//! events are the caller's, since a subagent reports its calls differently, and so is the
//! loop guard's count around a call (it sets [`ToolEnv::looping`]).

mod ask;
mod guard;
mod hooks;
mod judge;
mod parse;
mod run;

use std::path::Path;
use std::time::Instant;

use tokio::sync::mpsc;

use super::events::AgentEvent;
use super::inbox::{Inbox, OpenApprovals, OpenForms};
use super::loop_guard::Loop;
use super::mode::SharedMode;
use crate::context::spill::TurnSpill;
use crate::conversation::{ToolCall, ToolResult};
use crate::permissions::{Grant, PermissionPolicy};
use crate::tools::background::Background;
use crate::tools::external::{ExternalSpec, ExternalTools};
use crate::tools::{PreparedCall, ToolContext, Toolset};

pub(crate) use guard::Guarded;
pub(crate) use hooks::{hook_lines, post_hooks, HookEnv, HookView};

/// What a call runs with.
pub(crate) struct ToolEnv<'a> {
    pub toolset: Toolset,
    pub policy: &'a dyn PermissionPolicy,
    pub root: &'a Path,
    pub ctx: &'a ToolContext,
    pub events: &'a mpsc::UnboundedSender<AgentEvent>,
    /// For a subagent: the id of its `task` call. Its approval requests say so, and are
    /// registered in `open` so the answer, a command the main agent's inbox reads, finds
    /// them.
    pub subagent: Option<&'a str>,
    pub open: &'a OpenApprovals,
    /// Where the answers to the servers' forms go (`forms.rs`); `None` for a subagent,
    /// whose servers' forms are declined.
    pub forms: Option<&'a OpenForms>,
    /// Where a result longer than the cap is spilled (this user turn's folder).
    pub spill: &'a TurnSpill,
    /// The approval mode, read when a call is judged.
    pub mode: &'a SharedMode,
    /// Tools from outside rein (MCP servers) this agent may call, if any: the main agent
    /// all of them, a subagent those its servers open to subagents.
    pub external: Option<&'a dyn ExternalTools>,
    /// Set when this call goes on with a loop of calls that ran (the loop guard,
    /// [`super::loop_guard`]): it is put to the user whatever the mode.
    pub looping: Option<Loop>,
    /// The session's background commands; none for a subagent (its `bash` runs in the
    /// foreground only).
    pub background: Option<&'a Background>,
    /// The user's hooks (Claude Code's), when any are configured.
    pub hooks: Option<&'a HookEnv>,
    /// The session's hooks, configured or not: their guard records a host-tool file whose
    /// write the user approved in the question (`crate::consent::host_tools`).
    pub guard: Option<&'a crate::hooks::Hooks>,
    /// Whether a `bash` command's output is reported as it is printed
    /// ([`AgentEvent::ToolOutput`]); the main agent's, when its front end asks.
    pub live_output: bool,
}

/// How a call went.
pub(crate) struct ToolRun {
    /// How it ended, and the text the model reads.
    pub result: ToolResult,
    /// When the tool itself started (not counting the time the user took to decide).
    pub started: Instant,
    /// The user interrupted: the turn stops.
    pub interrupted: bool,
    /// What the user allowed for the session while approving this call.
    pub granted: Vec<Grant>,
    /// The user refused a call the loop guard put to them: the turn stops.
    pub loop_refused: bool,
    /// A hook said `continue: false`: the turn stops, for this reason.
    pub hook_stop: Option<String>,
    /// The tool ran (false: rein rejected the call, or the user refused or interrupted it).
    pub ran: bool,
}

/// How a call ended before its tool ran: the outcome of a step that stops it.
pub(crate) struct Ended {
    result: ToolResult,
    /// A hook said `continue: false`, for this reason.
    hook_stop: Option<String>,
    /// The user interrupted the question.
    interrupted: bool,
    /// The user refused the call the loop guard put to them.
    loop_refused: bool,
}

impl From<ToolResult> for Ended {
    fn from(result: ToolResult) -> Ended {
        Ended {
            result,
            hook_stop: None,
            interrupted: false,
            loop_refused: false,
        }
    }
}

impl From<String> for Ended {
    /// What is wrong with the call (its arguments, its tool), as the model reads it.
    fn from(text: String) -> Ended {
        ToolResult::error(text).into()
    }
}

impl Ended {
    fn into_run(self, started: Instant) -> ToolRun {
        ToolRun {
            result: self.result,
            started,
            interrupted: self.interrupted,
            granted: Vec::new(),
            loop_refused: self.loop_refused,
            hook_stop: self.hook_stop,
            ran: false,
        }
    }
}

/// How the judgement was settled, for a call that goes on to run.
#[derive(Default)]
pub(crate) struct Approval {
    /// The user answered yes to the question about it.
    approved: bool,
    /// What the user allowed for the session on the way.
    granted: Vec<Grant>,
}

/// A call on its way through the steps.
pub(crate) struct Call<'c> {
    call: &'c ToolCall,
    /// The tool's name, as the model gave it.
    name: &'c str,
    /// The external tool it calls, when it is one this agent may call.
    external: Option<ExternalSpec>,
    /// Its validated arguments: what is judged and what runs.
    prepared: PreparedCall,
    /// The hooks' view of it, kept in step with `prepared`; `None` without hooks.
    view: Option<HookView>,
}

impl Call<'_> {
    /// `prepared` in place of the call's arguments (a hook rewrote them): the hooks' view
    /// follows.
    fn replace(&mut self, prepared: PreparedCall) {
        self.prepared = prepared;
        if let Some(view) = &mut self.view {
            view.set_input(self.name, &self.prepared.args);
        }
    }

    /// Step 3: a file tool's path pinned where it leads (the hooks' view follows).
    fn pin(&mut self, root: &Path) -> Result<(), String> {
        self.prepared.pin_path(root)?;
        if let Some(view) = &mut self.view {
            view.set_input(self.name, &self.prepared.args);
        }
        Ok(())
    }
}

/// `text` capped on arrival (layer 1), its whole (or `whole`, when given) kept in the spill
/// file `file`; when it was cut and `events` is given, a [`AgentEvent::ResultCapped`] for
/// `call` says so.
pub(crate) fn cap_reporting(
    spill: &TurnSpill,
    events: Option<&mpsc::UnboundedSender<AgentEvent>>,
    file: &str,
    call: &ToolCall,
    text: String,
    whole: Option<String>,
) -> String {
    let (text, capped) = spill.cap_keeping(file, text, whole);
    if let (Some(capped), Some(events)) = (capped, events) {
        let _ = events.send(AgentEvent::ResultCapped {
            id: call.id.clone(),
            name: call.function.name.clone(),
            capped,
        });
    }
    text
}

impl ToolEnv<'_> {
    /// Take `call` through the steps, and cap its result. With an inbox, the waits watch
    /// it (an interrupt ends them); a subagent has none: its whole run is dropped on an
    /// interrupt.
    pub(crate) async fn judge_and_run(
        &self,
        inbox: Option<&mut Inbox>,
        call: &ToolCall,
    ) -> ToolRun {
        let began = Instant::now();
        let mut run = match self.steps(inbox, call).await {
            Ok(run) => run,
            Err(ended) => ended.into_run(began),
        };
        let name = match self.subagent {
            Some(task) => format!("{task}-{}", call.id),
            None => call.id.clone(),
        };
        // Only the main agent's results are reported: a subagent's history is its own.
        let events = self.subagent.is_none().then_some(self.events);
        let whole = run.result.whole.take();
        run.result.text = cap_reporting(self.spill, events, &name, call, run.result.text, whole);
        run
    }

    /// The steps of one call, top to bottom (see the module's story).
    async fn steps(
        &self,
        mut inbox: Option<&mut Inbox>,
        call: &ToolCall,
    ) -> Result<ToolRun, Ended> {
        // 1. Valid JSON, a tool this agent has, the right fields.
        let mut call = self.parse(call)?;
        // 2. PreToolUse hooks: block, rewrite, allow or ask, context.
        let pre = self.pre_tool_hooks(&mut call).await?;
        // 3. The file tools read and write where the path leads, judged as such.
        call.pin(self.root)?;
        // 4. The rules, the approval mode, the hooks' word, the loop guard.
        let mode = self.mode.get();
        let verdict = self.judge(&call, mode, pre.permission.as_ref());
        // 5. What the verdict leaves to the PermissionRequest hooks and the user.
        let approval = self.approve(verdict, &mut call, mode, &mut inbox).await?;
        // 6. The sandbox and the run.
        if self.subagent.is_none() {
            self.emit(AgentEvent::ToolRunning {
                id: call.call.id.clone(),
            });
        }
        let written = approval.approved.then(|| call.written_path()).flatten();
        let mut run = self
            .run(call.call, call.prepared, mode, approval, inbox)
            .await;
        if run.interrupted {
            return Ok(run);
        }
        // 7. What follows the run: the approved write's record, the hooks.
        self.approved_write(written, &run.result);
        self.post_tool_hooks(call.name, call.view, pre.context, &mut run)
            .await;
        Ok(run)
    }

    fn emit(&self, event: AgentEvent) {
        let _ = self.events.send(event);
    }

    /// The id an approval (or auto-approval) of `call` goes by. A subagent's call ids come
    /// from its own replies; its task's id keeps them apart from the main agent's.
    fn request_id(&self, call: &ToolCall) -> String {
        match self.subagent {
            Some(task) => format!("{task}/{}", call.id),
            None => call.id.clone(),
        }
    }

    /// The hooks in force when any are configured.
    fn active_hooks(&self) -> Option<&HookEnv> {
        self.hooks.filter(|h| !h.hooks.is_empty())
    }
}
