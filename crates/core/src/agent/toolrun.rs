//! Judging and running one tool call: the path every call takes, the main agent's and a
//! subagent's alike.
//!
//! In: a call from the model and the [`ToolEnv`] of the agent that made it (which tools it
//! may use, the permission policy, the project, where events go). The call is prepared
//! (valid JSON, a tool this agent has, the right fields), judged by the policy, put to the
//! user when the policy asks, and run. Out: a [`ToolRun`] with the result text, and what
//! the user allowed for the session on the way (the caller records it). The result is a
//! [`ToolResult`]: how the call ended, and the text the model reads. Starting and
//! finishing events are the caller's, since a subagent reports its calls differently.

use std::path::Path;
use std::time::Instant;

use tokio::sync::{mpsc, oneshot};

use super::events::{AgentEvent, ApprovalDecision};
use super::inbox::{Inbox, OpenApprovals, OpenForms};
use super::loop_guard::Loop;
use super::mode::SharedMode;
use crate::context::spill::TurnSpill;
use crate::conversation::{ToolCall, ToolResult};
use crate::permissions::mode::{self, ModeDecision};
use crate::permissions::{ApprovalMode, Grant, PermissionPolicy, ToolRequest};
use crate::tools::background::Background;
use crate::tools::external::{ExternalSpec, ExternalTools};
use crate::tools::{BackgroundCall, ToolContext, Toolset};

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

/// The external tool `name` this agent may call, found by its name (listing every tool
/// for each call would describe them all): a subagent only those its servers open to
/// subagents.
fn external_spec(
    external: Option<&dyn ExternalTools>,
    name: &str,
    subagent: bool,
) -> Option<ExternalSpec> {
    external?
        .spec(name)
        .filter(|s| !subagent || s.for_subagents())
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
    /// The user answered yes to the question about this call.
    pub approved: bool,
    /// The tool ran (false: rein rejected the call, or the user refused or interrupted it).
    pub ran: bool,
}

impl ToolEnv<'_> {
    fn emit(&self, event: AgentEvent) {
        let _ = self.events.send(event);
    }

    /// A call on the background commands: start one, read one's output, stop one.
    async fn run_background(&self, call: BackgroundCall<'_>, ctx: &ToolContext) -> ToolResult {
        let Some(background) = self.background else {
            return ToolResult::error(
                "Error: bash failed - run_in_background is not available to a subagent; run \
                 the command in the foreground (it is stopped when it runs too long)",
            );
        };
        let failed =
            |tool: &str, e: String| ToolResult::error(format!("Error: {tool} failed - {e}"));
        match call {
            BackgroundCall::Start(command) => match background.start(command, ctx).await {
                Ok(ran) => with_whole(ran),
                Err(e) => failed(crate::tools::bash::NAME, e),
            },
            BackgroundCall::Output(id) => match background.output(id) {
                Ok(ran) => with_whole(ran),
                Err(e) => failed(crate::tools::background::OUTPUT_NAME, e),
            },
            BackgroundCall::Kill(id) => match background.kill(id) {
                Ok(text) => ToolResult::ok(text),
                Err(e) => failed(crate::tools::background::KILL_NAME, e),
            },
        }
    }

    /// Why the loop guard asks.
    fn loop_reason(&self) -> String {
        match self.looping {
            Some(found) => format!("{}; it may be stuck in a loop", found.already()),
            None => String::new(),
        }
    }

    /// The id an approval (or auto-approval) of `call` goes by. A subagent's call ids come
    /// from its own replies; its task's id keeps them apart from the main agent's.
    fn request_id(&self, call: &ToolCall) -> String {
        match self.subagent {
            Some(task) => format!("{task}/{}", call.id),
            None => call.id.clone(),
        }
    }

    /// Prepare, judge, ask and run `call`. With an inbox, the waits watch it (an interrupt
    /// ends them); a subagent has none: its whole run is dropped on an interrupt.
    /// A result longer than the cap is cut here, as it arrives (layer 1 of [`crate::context`]).
    pub(crate) async fn judge_and_run(
        &self,
        inbox: Option<&mut Inbox>,
        call: &ToolCall,
    ) -> ToolRun {
        let mut run = self.judge_and_run_whole(inbox, call).await;
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

    async fn judge_and_run_whole(&self, mut inbox: Option<&mut Inbox>, call: &ToolCall) -> ToolRun {
        let mut run = ToolRun {
            result: ToolResult::ok(String::new()),
            started: Instant::now(),
            interrupted: false,
            granted: Vec::new(),
            loop_refused: false,
            hook_stop: None,
            approved: false,
            ran: false,
        };
        let name = call.function.name.as_str();
        let external = external_spec(self.external, name, self.subagent.is_some());
        let mut prepared = match self.prepare(name, external.as_ref(), &call.function.arguments) {
            Ok(p) => p,
            Err(text) => {
                run.result = ToolResult::error(text);
                return run;
            }
        };
        // The user's hooks (Claude Code's PreToolUse) see the call before it is judged: a
        // block refuses it, `updatedInput` replaces its arguments (checked again), allow
        // and ask weigh in on the judgement below.
        let mut hook_permission = None;
        let mut hook_context = None;
        if let Some(hooks) = self.hooks.filter(|h| !h.hooks.is_empty()) {
            let fields = tool_fields(call, name, &prepared.args, self.subagent);
            let claude = crate::hooks::names::claude_name(name);
            if let Some(said) = hooks
                .fire(
                    crate::hooks::Event::PreToolUse,
                    Some(claude),
                    self.mode.get(),
                    fields,
                )
                .await
            {
                self.report_hooks(crate::hooks::Event::PreToolUse, claude, &said);
                let denied = match &said.permission {
                    Some((crate::hooks::Permission::Deny, reason)) => Some(reason.clone()),
                    _ => None,
                };
                if let Some(reason) = said.block.clone().or(denied).or(said.stop.clone()) {
                    run.result = ToolResult::hook_blocked(name, &reason);
                    run.hook_stop = said.stop;
                    return run;
                }
                if let Some(input) = &said.updated_input {
                    let raw = crate::hooks::names::from_claude_input(name, input).to_string();
                    prepared = match self.prepare(name, external.as_ref(), &raw) {
                        Ok(p) => p,
                        Err(text) => {
                            run.result =
                                ToolResult::error(format!("{text} (the arguments a hook rewrote)"));
                            return run;
                        }
                    };
                }
                hook_permission = said.permission;
                hook_context = (!said.context.is_empty()).then(|| said.context.join("\n"));
            }
        }
        // The file tools read and write where the path leads, judged as such.
        if let Err(text) = prepared.pin_path(self.root) {
            run.result = ToolResult::error(text);
            return run;
        }
        let verdict = self.policy.check(&ToolRequest {
            tool: &prepared.name,
            args: &prepared.args,
            root: self.root,
        });
        let current = self.mode.get();
        let decision = mode::decide(current, name, verdict, self.mode.sandbox_works());
        let looping = self.looping.is_some();
        // A hook's word: allow skips the question (never a rule's deny or plan mode's
        // refusal, and never the sandbox, which runs the call all the same); ask asks.
        let decision = match (decision, &hook_permission) {
            (ModeDecision::Ask { .. }, Some((crate::hooks::Permission::Allow, reason)))
                if !looping =>
            {
                ModeDecision::AutoApproved {
                    reason: if reason.is_empty() {
                        "a PreToolUse hook allowed it".to_string()
                    } else {
                        format!("a PreToolUse hook allowed it: {reason}")
                    },
                }
            }
            (
                ModeDecision::Run | ModeDecision::AutoApproved { .. },
                Some((crate::hooks::Permission::Ask, reason)),
            ) => ModeDecision::Ask {
                reason: if reason.is_empty() {
                    "a PreToolUse hook asks".to_string()
                } else {
                    format!("a PreToolUse hook asks: {reason}")
                },
                grants: Vec::new(),
            },
            (decision, _) => decision,
        };
        let decision = match decision {
            // The loop guard asks whatever the mode (auto mode too).
            ModeDecision::Run | ModeDecision::AutoApproved { .. } if looping => ModeDecision::Ask {
                reason: self.loop_reason(),
                grants: Vec::new(),
            },
            ModeDecision::Ask { reason, grants } if looping => ModeDecision::Ask {
                reason: format!("{}; {reason}", self.loop_reason()),
                grants,
            },
            other => other,
        };
        match decision {
            ModeDecision::Run => {}
            ModeDecision::Deny { reason } => {
                run.result = ToolResult::denied(name, &reason);
                return run;
            }
            ModeDecision::PlanRefused => {
                run.result = ToolResult::plan_mode(name);
                return run;
            }
            ModeDecision::AutoApproved { reason } => self.emit(AgentEvent::AutoApproved {
                id: self.request_id(call),
                name: name.to_string(),
                summary: prepared.summary(),
                reason,
                subagent: self.subagent.map(str::to_string),
            }),
            ModeDecision::Ask { reason, grants } => {
                // The user's PermissionRequest hooks may answer for them (never the loop
                // guard's question); Notification hooks hear that rein waits.
                match self
                    .permission_hooks(name, call, &prepared.args, looping)
                    .await
                {
                    Some(PermissionAnswer {
                        permission: crate::hooks::Permission::Allow,
                        updated_input,
                        ..
                    }) => {
                        // Its `updatedInput` is what runs, judged again: the hook answers
                        // the question, never a rule's deny or plan mode's refusal.
                        if let Some(input) = updated_input {
                            match self.rewritten(name, external.as_ref(), &input, current) {
                                Ok(p) => prepared = p,
                                Err(result) => {
                                    run.result = result;
                                    return run;
                                }
                            }
                        }
                    }
                    Some(PermissionAnswer {
                        permission: crate::hooks::Permission::Deny,
                        reason,
                        stop,
                        ..
                    }) => {
                        run.result = ToolResult::hook_blocked(name, &reason);
                        run.hook_stop = stop;
                        return run;
                    }
                    _ => {
                        self.notify_hooks(name);
                        let ended = self
                            .ask(
                                &mut inbox, call, name, &prepared, &external, reason, grants,
                                looping, &mut run,
                            )
                            .await;
                        if ended {
                            return run;
                        }
                    }
                }
            }
        }
        run.started = Instant::now();
        run.ran = true;
        self.finish_run(inbox, call, name, prepared, hook_context, current, run)
            .await
    }

    /// The call prepared again with the arguments a PermissionRequest hook rewrote
    /// (`input`, Claude Code's field names) and judged again in `current`: the result to
    /// give instead when they are wrong, or a rule or the mode refuses them.
    fn rewritten(
        &self,
        name: &str,
        external: Option<&ExternalSpec>,
        input: &serde_json::Value,
        current: ApprovalMode,
    ) -> Result<crate::tools::PreparedCall, ToolResult> {
        let raw = crate::hooks::names::from_claude_input(name, input).to_string();
        let prepared = self
            .prepare(name, external, &raw)
            .and_then(|mut p| p.pin_path(self.root).map(|()| p))
            .map_err(|text| ToolResult::error(format!("{text} (the arguments a hook rewrote)")))?;
        let verdict = self.policy.check(&ToolRequest {
            tool: &prepared.name,
            args: &prepared.args,
            root: self.root,
        });
        match mode::decide(current, name, verdict, self.mode.sandbox_works()) {
            ModeDecision::Deny { reason } => Err(ToolResult::denied(name, &reason)),
            ModeDecision::PlanRefused => Err(ToolResult::plan_mode(name)),
            _ => Ok(prepared),
        }
    }

    /// The PermissionRequest hooks on a call about to be put to the user: allow (with the
    /// arguments it rewrote) or deny with its reason when one decides (never for the loop
    /// guard's question); a `continue: false` refuses the call and stops the turn.
    async fn permission_hooks(
        &self,
        name: &str,
        call: &ToolCall,
        args: &serde_json::Value,
        looping: bool,
    ) -> Option<PermissionAnswer> {
        let hooks = self.hooks.filter(|h| !h.hooks.is_empty() && !looping)?;
        let claude = crate::hooks::names::claude_name(name);
        let fields = tool_fields(call, name, args, self.subagent);
        let event = crate::hooks::Event::PermissionRequest;
        let mut said = hooks
            .fire(event, Some(claude), self.mode.get(), fields)
            .await?;
        // Claude Code's PermissionRequest takes no context: none is said to be added.
        said.context.clear();
        self.report_hooks(event, claude, &said);
        let deny = |reason: String, stop: Option<String>| PermissionAnswer {
            permission: crate::hooks::Permission::Deny,
            reason,
            stop,
            updated_input: None,
        };
        if let Some(reason) = said.stop {
            return Some(deny(reason.clone(), Some(reason)));
        }
        match (said.block, said.permission) {
            (Some(reason), _) => Some(deny(reason, None)),
            (None, Some((crate::hooks::Permission::Ask, _))) | (None, None) => None,
            (None, Some((crate::hooks::Permission::Deny, reason))) => Some(deny(reason, None)),
            (None, Some((permission, reason))) => Some(PermissionAnswer {
                permission,
                reason,
                stop: None,
                updated_input: said.updated_input,
            }),
        }
    }

    /// Notification hooks: rein waits for the user's permission (run on the side; the
    /// question does not wait for them).
    fn notify_hooks(&self, name: &str) {
        let Some(hooks) = self.hooks.filter(|h| !h.hooks.is_empty()).cloned() else {
            return;
        };
        let mode = self.mode.get();
        let message = format!(
            "rein needs your permission to use {}",
            crate::hooks::names::claude_name(name)
        );
        tokio::spawn(async move {
            let mut fields = serde_json::Map::new();
            fields.insert("message".into(), message.into());
            fields.insert("notification_type".into(), "permission_prompt".into());
            let event = crate::hooks::Event::Notification;
            hooks
                .fire(event, Some("permission_prompt"), mode, fields)
                .await;
        });
    }

    /// Put the call to the user and wait for the answer (into `run`); true when the call
    /// ends here (refused, interrupted).
    #[allow(clippy::too_many_arguments)]
    async fn ask(
        &self,
        inbox: &mut Option<&mut Inbox>,
        call: &ToolCall,
        name: &str,
        prepared: &crate::tools::PreparedCall,
        external: &Option<ExternalSpec>,
        reason: String,
        grants: Vec<Grant>,
        looping: bool,
        run: &mut ToolRun,
    ) -> bool {
        let id = self.request_id(call);
        // A subagent has no inbox: the main agent's passes the answer on.
        let answer = match self.subagent {
            Some(_) => {
                let (reply, answer) = oneshot::channel();
                if let Ok(mut open) = self.open.lock() {
                    open.insert(id.clone(), reply);
                }
                Some(answer)
            }
            None => None,
        };
        self.emit(AgentEvent::ApprovalNeeded {
            id: id.clone(),
            name: name.to_string(),
            summary: prepared.summary(),
            reason,
            grants: grants.clone(),
            preview: prepared.preview(self.ctx),
            subagent: self.subagent.map(str::to_string),
            repeated: self.looping.map_or(0, |found| found.times),
            period: self.looping.map_or(0, |found| found.period),
            mcp: crate::permissions::tools::McpCall::for_call(name, &prepared.args).map(
                |mut call| {
                    // The configured names, and who declared the server.
                    if let Some(source) = external.as_ref().and_then(|s| s.source.as_ref()) {
                        call.server = source.server.clone();
                        call.tool = source.tool.clone();
                        call.project_server = source.project;
                    }
                    call
                },
            ),
        });
        let decision = match (inbox.as_deref_mut(), answer) {
            (_, Some(answer)) => answer.await.ok(),
            (Some(inbox), None) => inbox.wait_approval(&id).await,
            (None, None) => None,
        };
        if let Ok(mut open) = self.open.lock() {
            open.remove(&id);
        }
        match decision {
            None => {
                run.result = ToolResult::interrupted();
                run.interrupted = true;
                return true;
            }
            Some(ApprovalDecision::Approve) => run.approved = true,
            Some(ApprovalDecision::ApproveForSession) => {
                self.policy.grant(&grants);
                run.granted = grants;
                run.approved = true;
            }
            Some(ApprovalDecision::ApproveForProject) => {
                self.policy.grant(&grants);
                run.approved = true;
                match self.policy.persist(&grants) {
                    Ok(saved) => self.emit(AgentEvent::Notice { message: saved }),
                    Err(e) => self.emit(AgentEvent::Error {
                        message: format!("the rule was not saved: {e}"),
                    }),
                }
                run.granted = grants;
            }
            Some(ApprovalDecision::Deny { feedback }) => {
                run.result = ToolResult::refused(name, feedback.as_deref());
                run.loop_refused = looping;
                return true;
            }
        }
        false
    }

    /// Run the judged call and take its result through the hooks: the rest of
    /// [`Self::judge_and_run_whole`].
    #[allow(clippy::too_many_arguments)]
    async fn finish_run(
        &self,
        inbox: Option<&mut Inbox>,
        call: &ToolCall,
        name: &str,
        prepared: crate::tools::PreparedCall,
        hook_context: Option<String>,
        current: ApprovalMode,
        mut run: ToolRun,
    ) -> ToolRun {
        // Plan mode: commands the rules allow run with the project read-only, so one
        // that writes (an `allow = ["make *"]`) fails rather than writes.
        let read_only;
        let ctx = if current == ApprovalMode::Plan {
            read_only = ToolContext {
                sandbox: std::sync::Arc::new(self.ctx.sandbox.read_only()),
                ..self.ctx.clone()
            };
            &read_only
        } else {
            self.ctx
        };
        // The file a write the user approved writes: a host-tool file's record follows it.
        let approved_write = (run.approved
            && [
                crate::tools::write_file::NAME,
                crate::tools::str_replace::NAME,
            ]
            .contains(&name))
        .then(|| prepared.args.get("path").and_then(|p| p.as_str()))
        .flatten()
        .map(std::path::PathBuf::from);
        // What the PostToolUse hooks read, taken before the arguments go to the tool.
        let post_fields = self
            .hooks
            .filter(|h| !h.hooks.is_empty())
            .map(|_| tool_fields(call, name, &prepared.args, self.subagent));
        let work = async {
            if let Some(call) = prepared.background() {
                return self.run_background(call, ctx).await;
            }
            match self.external.filter(|_| prepared.is_external()) {
                // Dropped on an interrupt, which cancels the call.
                Some(external) => {
                    let (events, id) = (self.events.clone(), call.id.clone());
                    let report: crate::tools::external::Report = std::sync::Arc::new(move |text| {
                        let _ = events.send(AgentEvent::ToolProgress {
                            id: id.clone(),
                            text,
                        });
                    });
                    let aids = crate::tools::external::CallAids {
                        report: Some(report),
                        ask: self
                            .forms
                            .map(|forms| super::forms::desk(self.events, forms)),
                    };
                    external.call_with(name, prepared.args, aids).await
                }
                None => prepared.execute(ctx).await,
            }
        };
        let result = match inbox {
            Some(inbox) => inbox.run_until(work).await,
            None => Some(work.await),
        };
        match result {
            Some(result) => run.result = result,
            None => {
                run.result = ToolResult::interrupted();
                run.interrupted = true;
                return run;
            }
        }
        if let (Some(guard), Some(path)) = (self.guard, approved_write) {
            if !run.result.outcome.is_error() {
                guard.approved_write(&path);
            }
        }
        if let Some(context) = hook_context {
            run.result
                .text
                .push_str(&format!("\n\n(from a PreToolUse hook: {context})"));
        }
        if let (Some(hooks), Some(mut fields)) = (self.hooks, post_fields) {
            self.post_tool_hooks(hooks, name, &mut fields, &mut run)
                .await;
        }
        run
    }

    /// Prepare a call of `name` with `raw` arguments for this agent: one of its tools, an
    /// external tool `external` describes, or an error naming what is wrong.
    fn prepare(
        &self,
        name: &str,
        external: Option<&ExternalSpec>,
        raw: &str,
    ) -> Result<crate::tools::PreparedCall, String> {
        match external {
            Some(spec) => crate::tools::prepare_external(spec, raw),
            // Offered as unavailable (a resumed session's tool whose server is gone).
            None if self.external.is_some()
                && self.subagent.is_some()
                && name.starts_with("mcp__") =>
            {
                Err(format!(
                    "Error: {} is not one of your tools (a subagent gets only the MCP tools \
                     the user's config opens to subagents); do without it",
                    crate::tools::printable(name)
                ))
            }
            None if self.external.is_some() && name.starts_with("mcp__") => {
                Err(unknown_mcp_tool(self.external, name))
            }
            None => self.toolset.prepare(name, raw),
        }
    }

    /// Claude Code's PostToolUse (or PostToolUseFailure) hooks on the result in `run`: a
    /// block's reason and any context reach the model with the result.
    async fn post_tool_hooks(
        &self,
        hooks: &HookEnv,
        name: &str,
        fields: &mut serde_json::Map<String, serde_json::Value>,
        run: &mut ToolRun,
    ) {
        let fields = std::mem::take(fields);
        let mode = self.mode.get();
        let Some((event, said)) = post_hooks(hooks, mode, name, fields, &mut run.result).await
        else {
            return;
        };
        self.report_hooks(event, crate::hooks::names::claude_name(name), &said);
        run.hook_stop = said.stop;
    }

    /// Tell the front end what the hooks of `event` for `subject` said.
    fn report_hooks(
        &self,
        event: crate::hooks::Event,
        subject: &str,
        said: &crate::hooks::Combined,
    ) {
        for (error, message) in hook_lines(subject, said) {
            self.emit(AgentEvent::Hook {
                event: event.name().to_string(),
                message,
                error,
            });
        }
    }
}

/// Claude Code's PostToolUse (or PostToolUseFailure, when `result` is an error) hooks on
/// `name`'s call (`fields`: its payload fields) in `mode`: a block's reason and any context
/// are added to `result` for the model. What they said, to report; `None` when none ran.
pub(crate) async fn post_hooks(
    hooks: &HookEnv,
    mode: ApprovalMode,
    name: &str,
    mut fields: serde_json::Map<String, serde_json::Value>,
    result: &mut ToolResult,
) -> Option<(crate::hooks::Event, crate::hooks::Combined)> {
    let event = if result.outcome.is_error() {
        fields.insert("error".into(), result.text.clone().into());
        crate::hooks::Event::PostToolUseFailure
    } else {
        fields.insert(
            "tool_response".into(),
            tool_response(name, &fields, &result.text),
        );
        crate::hooks::Event::PostToolUse
    };
    let claude = crate::hooks::names::claude_name(name);
    let said = hooks.fire(event, Some(claude), mode, fields).await?;
    let mut notes: Vec<String> = said.block.iter().cloned().collect();
    notes.extend(said.context.iter().cloned());
    if !notes.is_empty() {
        result.text.push_str(&format!(
            "\n\n(from a {} hook: {})",
            event.name(),
            notes.join("\n")
        ));
    }
    Some((event, said))
}

/// A call's `tool_response` as Claude Code's PostToolUse hooks read it: `output` for every
/// tool (what the model reads), `stdout`/`stderr`/`interrupted` for Bash (rein hands the
/// model one stream, so `stdout` is all of it), `filePath` and `success` for the file
/// tools (Write, Edit, Read).
fn tool_response(
    name: &str,
    fields: &serde_json::Map<String, serde_json::Value>,
    output: &str,
) -> serde_json::Value {
    let mut response = serde_json::Map::new();
    response.insert("output".into(), output.into());
    match name {
        "bash" => {
            response.insert("stdout".into(), output.into());
            response.insert("stderr".into(), "".into());
            response.insert("interrupted".into(), false.into());
        }
        "write_file" | "str_replace" | "read_file" => {
            if let Some(path) = fields
                .get("tool_input")
                .and_then(|input| input.get("file_path"))
            {
                response.insert("filePath".into(), path.clone());
            }
            response.insert("success".into(), true.into());
        }
        _ => {}
    }
    serde_json::Value::Object(response)
}

/// What hooks said, a line each for the user (blocks, denials, stops, their messages,
/// context added, failures), `true` for what needs noticing. `subject`: what they judged
/// (a tool's name, or the event's).
pub(crate) fn hook_lines(subject: &str, said: &crate::hooks::Combined) -> Vec<(bool, String)> {
    let mut lines = Vec::new();
    if let Some(reason) = &said.block {
        lines.push((true, format!("blocked {subject}: {reason}")));
    }
    if let Some((crate::hooks::Permission::Deny, reason)) = &said.permission {
        lines.push((true, format!("denied {subject}: {reason}")));
    }
    if let Some(reason) = &said.stop {
        lines.push((true, format!("stopped the turn: {reason}")));
    }
    for message in &said.messages {
        lines.push((false, message.clone()));
    }
    if !said.context.is_empty() {
        lines.push((false, "added context for the model".to_string()));
    }
    for error in &said.errors {
        lines.push((true, format!("failed: {error}")));
    }
    for hold in &said.held {
        lines.push((true, hold.to_string()));
    }
    lines
}

/// What the PermissionRequest hooks answered for the user.
struct PermissionAnswer {
    permission: crate::hooks::Permission,
    reason: String,
    /// `continue: false`: the turn stops, for this reason.
    stop: Option<String>,
    /// An allowing hook's `updatedInput` (Claude Code's field names).
    updated_input: Option<serde_json::Value>,
}

/// The hooks in force for an agent, and the session they report on.
#[derive(Clone)]
pub(crate) struct HookEnv {
    pub hooks: std::sync::Arc<crate::hooks::Hooks>,
    pub session_id: String,
    pub transcript: String,
}

impl HookEnv {
    /// [`crate::hooks::Hooks::fire`] with this session's common fields, in `mode`.
    pub(crate) async fn fire(
        &self,
        event: crate::hooks::Event,
        subject: Option<&str>,
        mode: ApprovalMode,
        fields: serde_json::Map<String, serde_json::Value>,
    ) -> Option<crate::hooks::Combined> {
        let common = crate::hooks::Common {
            session_id: self.session_id.clone(),
            transcript_path: self.transcript.clone(),
            permission_mode: match mode {
                ApprovalMode::Default => "default",
                ApprovalMode::Plan => "plan",
                ApprovalMode::Auto => "bypassPermissions",
            }
            .to_string(),
        };
        self.hooks.fire(event, subject, &common, fields).await
    }
}

/// A tool call's payload fields for Claude Code's tool hooks: its name and input in Claude
/// Code's words, its id, and inside a subagent the agent's id and type.
pub(crate) fn tool_fields(
    call: &ToolCall,
    name: &str,
    args: &serde_json::Value,
    subagent: Option<&str>,
) -> serde_json::Map<String, serde_json::Value> {
    let mut fields = serde_json::Map::new();
    fields.insert(
        "tool_name".into(),
        crate::hooks::names::claude_name(name).into(),
    );
    fields.insert(
        "tool_input".into(),
        crate::hooks::names::to_claude_input(name, args),
    );
    fields.insert("tool_use_id".into(), call.id.clone().into());
    if let Some(task) = subagent {
        fields.insert("agent_id".into(), task.into());
        fields.insert("agent_type".into(), "task".into());
    }
    fields
}

/// A command's result: its text, and what it printed for the spill file.
fn with_whole(ran: crate::tools::bash::Ran) -> ToolResult {
    let mut result = ToolResult::ok(ran.text);
    result.whole = ran.printed;
    result
}

/// Why `name` (an `mcp__SERVER__TOOL` nothing offers) cannot run: its server runs but has
/// no such tool (and these are its tools), or its server is not running.
fn unknown_mcp_tool(external: Option<&dyn ExternalTools>, name: &str) -> String {
    let server = name
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split("__").next())
        .unwrap_or_default();
    let prefix = format!("mcp__{server}__");
    let siblings: Vec<String> = external
        .map(|e| e.specs())
        .unwrap_or_default()
        .into_iter()
        .filter(|s| !server.is_empty() && s.name.starts_with(&prefix))
        .map(|s| s.name)
        .collect();
    if siblings.is_empty() {
        return format!(
            "Error: {} is not available in this session (its MCP server is not running); \
             do without it",
            crate::tools::printable(name)
        );
    }
    format!(
        "Error: the MCP server {} has no tool {}; its tools are: {}",
        crate::tools::printable(server),
        crate::tools::printable(name),
        siblings.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::external::{ExternalCall, ExternalSource};

    /// A provider whose full listing must not be asked for.
    struct ByNameOnly;

    impl ExternalTools for ByNameOnly {
        fn specs(&self) -> Vec<ExternalSpec> {
            panic!("a call's lookup listed every external tool")
        }

        fn spec(&self, name: &str) -> Option<ExternalSpec> {
            (name == "mcp__a__x").then(|| ExternalSpec {
                name: name.to_string(),
                description: String::new(),
                parameters: serde_json::json!({"type": "object"}),
                source: Some(ExternalSource {
                    server: "a".into(),
                    tool: "x".into(),
                    project: false,
                    subagents: false,
                }),
            })
        }

        fn call(&self, _: &str, _: serde_json::Value) -> ExternalCall {
            Box::pin(async { ToolResult::ok(String::new()) })
        }
    }

    #[test]
    fn a_call_looks_its_external_tool_up_by_name() {
        let external: Option<&dyn ExternalTools> = Some(&ByNameOnly);
        let found = external_spec(external, "mcp__a__x", false);
        assert_eq!(found.map(|s| s.name).as_deref(), Some("mcp__a__x"));
        assert_eq!(external_spec(external, "mcp__a__y", false), None);
        // Not opened to subagents.
        assert_eq!(external_spec(external, "mcp__a__x", true), None);
        assert_eq!(external_spec(None, "mcp__a__x", false), None);
    }
}
