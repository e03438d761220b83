//! The user's hooks (Claude Code's, `crate::hooks`) at the turn's and the session's events:
//! SessionStart and SessionEnd (at `/clear` and whenever the session ends: `AgentHandle::end`),
//! UserPromptSubmit, Stop, PreCompact and PostCompact (the
//! tool events fire in `toolcall`, for subagents too). With no hook configured none of this
//! runs anything.

use super::Agent;
use crate::agent::events::AgentEvent;
use crate::agent::toolcall::{self, HookEnv, HookView};
use crate::hooks::{Combined, EndReason, Event};

/// SessionEnd hooks that take longer than this are said to be waited for.
const END_NOTICE: std::time::Duration = std::time::Duration::from_secs(1);

impl Agent {
    /// The UserPromptSubmit hooks on `prompt`: what they said, `None` when none ran.
    pub(super) async fn prompt_hooks(&self, prompt: &str) -> Option<Combined> {
        let env = self.hook_env()?;
        let mut fields = serde_json::Map::new();
        fields.insert("prompt".into(), prompt.into());
        let event = Event::UserPromptSubmit;
        let said = env.fire(event, None, self.mode.get(), fields).await?;
        self.report_hooks(event, &said);
        Some(said)
    }

    /// The Stop hooks as the model finishes with `last` (`active`: a Stop hook already
    /// kept this turn going): the reason to go on, when one blocks.
    pub(super) async fn stop_hooks(&self, last: &str, active: bool) -> Option<String> {
        let env = self.hook_env()?;
        let mut fields = serde_json::Map::new();
        fields.insert("stop_hook_active".into(), active.into());
        fields.insert("last_assistant_message".into(), last.into());
        let event = Event::Stop;
        let mut said = env.fire(event, None, self.mode.get(), fields).await?;
        // Claude Code's Stop takes no context: none is said to be added.
        said.context.clear();
        self.report_hooks(event, &said);
        said.block
    }

    /// Tell the front end what the hooks of a turn event said: a Stop hook's block kept
    /// the turn going; a prompt's block is said by the caller, which keeps the prompt back.
    fn report_hooks(&self, event: Event, said: &Combined) {
        let mut quiet = said.clone();
        let block = quiet.block.take();
        let mut lines = toolcall::hook_lines(event.name(), &quiet);
        match (event, block) {
            (Event::Stop, Some(reason)) => {
                lines.insert(0, (false, format!("kept the turn going: {reason}")));
            }
            (Event::PreToolUse, Some(reason)) => {
                lines.insert(0, (true, format!("blocked Task: {reason}")));
            }
            _ => {}
        }
        for (error, message) in lines {
            self.emit(AgentEvent::Hook {
                event: event.name().to_string(),
                message,
                error,
            });
        }
    }

    /// The hooks and this session's ids for them; `None` when no hook is configured.
    pub(super) fn hook_env(&self) -> Option<HookEnv> {
        if self.config.hooks.is_empty() {
            return None;
        }
        let (session_id, transcript) = match &self.session.recorder {
            Some(writer) => (writer.id().to_string(), writer.path().display().to_string()),
            None => (String::new(), String::new()),
        };
        Some(HookEnv {
            hooks: self.config.hooks.clone(),
            session_id,
            transcript,
        })
    }

    /// The PreToolUse hooks on a `task` call (the calls of other tools fire theirs in
    /// `toolcall`): the reason when one blocks or denies it.
    pub(super) async fn task_hook(
        &self,
        call: &crate::conversation::ToolCall,
        args: &serde_json::Value,
    ) -> Option<String> {
        let env = self.hook_env()?;
        let fields = HookView::new(call, "task", args, None).into_fields();
        let event = Event::PreToolUse;
        let said = env
            .fire(event, Some("Task"), self.mode.get(), fields)
            .await?;
        self.report_hooks(event, &said);
        match said.permission {
            Some((crate::hooks::Permission::Deny, reason)) => Some(reason),
            _ => said.block.or(said.stop),
        }
    }

    /// The PostToolUse (PostToolUseFailure) hooks on a task's `result`, its call `call` with
    /// `args` (`None`: it never started, and no hook runs): their notes join the result;
    /// a hook's `continue: false` comes back, to stop the turn.
    pub(super) async fn task_post_hooks(
        &self,
        call: &crate::conversation::ToolCall,
        args: Option<&serde_json::Value>,
        result: &mut crate::conversation::ToolResult,
    ) -> Option<String> {
        let env = self.hook_env()?;
        let fields = HookView::new(call, "task", args?, None).into_fields();
        let (event, said) =
            toolcall::post_hooks(&env, self.mode.get(), "task", fields, result).await?;
        for (error, message) in toolcall::hook_lines("Task", &said) {
            self.emit(AgentEvent::Hook {
                event: event.name().to_string(),
                message,
                error,
            });
        }
        said.stop
    }

    /// The SessionStart hooks (`source`: startup, resume, clear or compact): their context
    /// waits for the next turn's message.
    pub(super) async fn session_start_hooks(&mut self, source: &str) {
        let Some(env) = self.hook_env() else {
            return;
        };
        let mut fields = serde_json::Map::new();
        fields.insert("source".into(), source.into());
        let event = Event::SessionStart;
        if let Some(said) = env.fire(event, Some(source), self.mode.get(), fields).await {
            self.report_hooks(event, &said);
            self.hook_context.extend(said.context);
        }
    }

    /// The SessionEnd hooks for `reason`; what they say is only shown. Each is bounded by
    /// its timeout; when they take longer than [`END_NOTICE`], a notice says what rein
    /// waits for and for how long at most (at exit, the front end prints it).
    pub(super) async fn session_end_hooks(&self, reason: EndReason) {
        let Some(longest) = self.config.hooks.end_timeout(reason) else {
            return;
        };
        let name = reason.name();
        let fire = self.simple_hooks(Event::SessionEnd, Some(name), [("reason", name)]);
        let mut fire = std::pin::pin!(fire);
        tokio::select! {
            () = &mut fire => return,
            () = tokio::time::sleep(END_NOTICE) => {}
        }
        self.emit(AgentEvent::Notice {
            message: format!(
                "waiting for the SessionEnd hooks to finish (at most {}, their timeout)",
                crate::text::duration(longest)
            ),
        });
        fire.await;
    }

    /// The PreCompact or PostCompact hooks (`trigger`: manual or auto).
    pub(super) async fn compact_hooks(&self, event: Event, trigger: &str, focus: Option<&str>) {
        let mut fields = serde_json::Map::new();
        fields.insert("trigger".into(), trigger.into());
        fields.insert(
            "custom_instructions".into(),
            focus.unwrap_or_default().into(),
        );
        let Some(env) = self.hook_env() else {
            return;
        };
        if let Some(said) = env
            .fire(event, Some(trigger), self.mode.get(), fields)
            .await
        {
            self.report_hooks(event, &said);
        }
    }

    /// Hooks of `event` whose word is only shown.
    async fn simple_hooks<const N: usize>(
        &self,
        event: Event,
        subject: Option<&str>,
        fields: [(&str, &str); N],
    ) {
        let Some(env) = self.hook_env() else {
            return;
        };
        let fields = fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::from(v)))
            .collect();
        if let Some(said) = env.fire(event, subject, self.mode.get(), fields).await {
            self.report_hooks(event, &said);
        }
    }
}
