//! The user's hooks (Claude Code's) on a tool call: PreToolUse before it is judged (step
//! 2), PermissionRequest and Notification when it is put to the user (step 5), PostToolUse
//! or PostToolUseFailure on its result (step 7). Each reads the same [`HookView`] of the
//! call, built once when it is parsed and kept in step with its arguments.

use super::{Call, Ended, ToolEnv, ToolRun};
use crate::conversation::{ToolCall, ToolResult};
use crate::hooks::{Combined, Event, Permission};
use crate::permissions::ApprovalMode;

type Fields = serde_json::Map<String, serde_json::Value>;

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
        event: Event,
        subject: Option<&str>,
        mode: ApprovalMode,
        fields: Fields,
    ) -> Option<Combined> {
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

/// The hooks' view of a tool call: its name and input in Claude Code's words, its id, and
/// inside a subagent the agent's id and type. The payload fields every tool hook reads.
#[derive(Clone)]
pub(crate) struct HookView {
    fields: Fields,
}

impl HookView {
    /// The view of `call` to `name` with the arguments `args`, made by `subagent` (its
    /// task's id) or the main agent.
    pub(crate) fn new(
        call: &ToolCall,
        name: &str,
        args: &serde_json::Value,
        subagent: Option<&str>,
    ) -> HookView {
        let mut fields = Fields::new();
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
        HookView { fields }
    }

    /// The call's arguments changed (a hook rewrote them, the path was pinned): its
    /// `tool_input` follows.
    pub(crate) fn set_input(&mut self, name: &str, args: &serde_json::Value) {
        self.fields.insert(
            "tool_input".into(),
            crate::hooks::names::to_claude_input(name, args),
        );
    }

    /// The payload fields, for one hook event.
    pub(crate) fn fields(&self) -> Fields {
        self.fields.clone()
    }

    pub(crate) fn into_fields(self) -> Fields {
        self.fields
    }
}

/// What the PreToolUse hooks left for the later steps.
#[derive(Default)]
pub(super) struct PreHooks {
    /// Their word on the judgement: allow skips the question, ask asks.
    pub permission: Option<(Permission, String)>,
    /// Context for the model, added to the result.
    pub context: Option<String>,
}

/// What the PermissionRequest hooks answered for the user.
pub(super) enum PermissionAnswer {
    /// The call runs, with the arguments a hook rewrote (Claude Code's field names).
    Allow {
        updated_input: Option<serde_json::Value>,
    },
    /// It does not, for `reason`; with `stop`, the turn stops too.
    Deny {
        reason: String,
        stop: Option<String>,
    },
}

impl ToolEnv<'_> {
    /// Step 2: the PreToolUse hooks see the call before it is judged. A block (or a deny,
    /// or a stop) refuses it, `updatedInput` replaces its arguments (checked again), allow
    /// and ask weigh in on the judgement, context reaches the model with the result.
    pub(super) async fn pre_tool_hooks(&self, call: &mut Call<'_>) -> Result<PreHooks, Ended> {
        let (Some(hooks), Some(view)) = (self.active_hooks(), &call.view) else {
            return Ok(PreHooks::default());
        };
        let claude = crate::hooks::names::claude_name(call.name);
        let Some(said) = hooks
            .fire(
                Event::PreToolUse,
                Some(claude),
                self.mode.get(),
                view.fields(),
            )
            .await
        else {
            return Ok(PreHooks::default());
        };
        self.report_hooks(Event::PreToolUse, claude, &said);
        let denied = match &said.permission {
            Some((Permission::Deny, reason)) => Some(reason.clone()),
            _ => None,
        };
        if let Some(reason) = said.block.clone().or(denied).or(said.stop.clone()) {
            return Err(Ended {
                hook_stop: said.stop,
                ..ToolResult::hook_blocked(call.name, &reason).into()
            });
        }
        if let Some(input) = &said.updated_input {
            let prepared = self.reparse(call, input)?;
            call.replace(prepared);
        }
        Ok(PreHooks {
            permission: said.permission,
            context: (!said.context.is_empty()).then(|| said.context.join("\n")),
        })
    }

    /// The PermissionRequest hooks on a call about to be put to the user: allow (with the
    /// arguments it rewrote) or deny with its reason when one decides (never for the loop
    /// guard's question); a `continue: false` refuses the call and stops the turn.
    pub(super) async fn permission_hooks(&self, call: &Call<'_>) -> Option<PermissionAnswer> {
        let hooks = self.active_hooks().filter(|_| self.looping.is_none())?;
        let claude = crate::hooks::names::claude_name(call.name);
        let fields = call.view.as_ref()?.fields();
        let event = Event::PermissionRequest;
        let mut said = hooks
            .fire(event, Some(claude), self.mode.get(), fields)
            .await?;
        // Claude Code's PermissionRequest takes no context: none is said to be added.
        said.context.clear();
        self.report_hooks(event, claude, &said);
        if let Some(reason) = said.stop {
            return Some(PermissionAnswer::Deny {
                reason: reason.clone(),
                stop: Some(reason),
            });
        }
        match (said.block, said.permission) {
            (Some(reason), _) | (None, Some((Permission::Deny, reason))) => {
                Some(PermissionAnswer::Deny { reason, stop: None })
            }
            (None, Some((Permission::Ask, _))) | (None, None) => None,
            (None, Some((Permission::Allow, _))) => Some(PermissionAnswer::Allow {
                updated_input: said.updated_input,
            }),
        }
    }

    /// Notification hooks: rein waits for the user's permission (run on the side; the
    /// question does not wait for them).
    pub(super) fn notify_hooks(&self, name: &str) {
        let Some(hooks) = self.active_hooks().cloned() else {
            return;
        };
        let mode = self.mode.get();
        let message = format!(
            "rein needs your permission to use {}",
            crate::hooks::names::claude_name(name)
        );
        tokio::spawn(async move {
            let mut fields = Fields::new();
            fields.insert("message".into(), message.into());
            fields.insert("notification_type".into(), "permission_prompt".into());
            let event = Event::Notification;
            hooks
                .fire(event, Some("permission_prompt"), mode, fields)
                .await;
        });
    }

    /// Step 7: the PreToolUse hooks' `context` goes with the result, then Claude Code's
    /// PostToolUse (or PostToolUseFailure) hooks read it (`view`: the call as they see
    /// it): a block's reason and any context reach the model with the result.
    pub(super) async fn post_tool_hooks(
        &self,
        name: &str,
        view: Option<HookView>,
        context: Option<String>,
        run: &mut ToolRun,
    ) {
        if let Some(context) = context {
            run.result
                .text
                .push_str(&format!("\n\n(from a PreToolUse hook: {context})"));
        }
        let (Some(hooks), Some(view)) = (self.hooks, view) else {
            return;
        };
        let mode = self.mode.get();
        let Some((event, said)) =
            post_hooks(hooks, mode, name, view.into_fields(), &mut run.result).await
        else {
            return;
        };
        self.report_hooks(event, crate::hooks::names::claude_name(name), &said);
        run.hook_stop = said.stop;
    }

    /// Tell the front end what the hooks of `event` for `subject` said.
    fn report_hooks(&self, event: Event, subject: &str, said: &Combined) {
        for (error, message) in hook_lines(subject, said) {
            self.emit(crate::agent::events::AgentEvent::Hook {
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
    mut fields: Fields,
    result: &mut ToolResult,
) -> Option<(Event, Combined)> {
    let event = if result.outcome.is_error() {
        fields.insert("error".into(), result.text.clone().into());
        Event::PostToolUseFailure
    } else {
        fields.insert(
            "tool_response".into(),
            tool_response(name, &fields, &result.text),
        );
        Event::PostToolUse
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
fn tool_response(name: &str, fields: &Fields, output: &str) -> serde_json::Value {
    let mut response = Fields::new();
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
pub(crate) fn hook_lines(subject: &str, said: &Combined) -> Vec<(bool, String)> {
    let mut lines = Vec::new();
    if let Some(reason) = &said.block {
        lines.push((true, format!("blocked {subject}: {reason}")));
    }
    if let Some((Permission::Deny, reason)) = &said.permission {
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
