//! Step 6: run the call. The sandbox it runs in (plan mode: the project read-only, so a
//! command the rules allow that writes fails rather than writes), then the work: a
//! background command's start, output or kill, an MCP server's tool (its progress
//! reported, its forms answered by the user), or rein's own tool. An interrupt drops the
//! work (which cancels it). Out: the [`ToolRun`]; after it, a write the user approved is
//! recorded for the hooks' guard.

use std::sync::Arc;
use std::time::Instant;

use super::{Approval, ToolEnv, ToolRun};
use crate::agent::events::AgentEvent;
use crate::agent::inbox::Inbox;
use crate::conversation::{ToolCall, ToolResult};
use crate::permissions::ApprovalMode;
use crate::tools::{BackgroundCall, PreparedCall, ToolContext};

impl ToolEnv<'_> {
    /// Step 6: run `prepared` (of `call`, judged in `mode`, settled by `approval`),
    /// watching `inbox` when there is one.
    pub(super) async fn run(
        &self,
        call: &ToolCall,
        prepared: PreparedCall,
        mode: ApprovalMode,
        approval: Approval,
        inbox: Option<&mut Inbox>,
    ) -> ToolRun {
        let started = Instant::now();
        let sandboxed = self.sandbox_for(mode);
        let work = self.work(call, prepared, sandboxed.as_ref().unwrap_or(self.ctx));
        let result = match inbox {
            Some(inbox) => inbox.run_until(work).await,
            None => Some(work.await),
        };
        ToolRun {
            interrupted: result.is_none(),
            result: result.unwrap_or_else(ToolResult::interrupted),
            started,
            granted: approval.granted,
            loop_refused: false,
            hook_stop: None,
            ran: true,
        }
    }

    /// The sandbox a call judged in `mode` runs in, when it is not the agent's own: plan
    /// mode's, with the project read-only.
    fn sandbox_for(&self, mode: ApprovalMode) -> Option<ToolContext> {
        (mode == ApprovalMode::Plan).then(|| ToolContext {
            sandbox: Arc::new(self.ctx.sandbox.read_only()),
            ..self.ctx.clone()
        })
    }

    /// The work of `prepared`, in `ctx`.
    async fn work(&self, call: &ToolCall, prepared: PreparedCall, ctx: &ToolContext) -> ToolResult {
        if let Some(background) = prepared.background() {
            return self.run_background(background, ctx).await;
        }
        let Some(external) = self.external.filter(|_| prepared.is_external()) else {
            if self.live_output && call.function.name == crate::tools::bash::NAME {
                let live = self.reporter(call, |id, text| AgentEvent::ToolOutput { id, text });
                let ctx = ToolContext {
                    live: Some(crate::tools::Live(live)),
                    ..ctx.clone()
                };
                return prepared.execute(&ctx).await;
            }
            return prepared.execute(ctx).await;
        };
        let report = self.reporter(call, |id, text| AgentEvent::ToolProgress { id, text });
        let aids = crate::tools::external::CallAids {
            report: Some(report),
            ask: self
                .forms
                .map(|forms| crate::agent::forms::desk(self.events, forms)),
        };
        external
            .call_with(&call.function.name, prepared.args, aids)
            .await
    }

    /// What a running `call` has to say, sent as the event `event` makes of its id and
    /// the text.
    fn reporter(
        &self,
        call: &ToolCall,
        event: fn(String, String) -> AgentEvent,
    ) -> crate::tools::external::Report {
        let (events, id) = (self.events.clone(), call.id.clone());
        Arc::new(move |text| {
            let _ = events.send(event(id.clone(), text));
        })
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

    /// A host-tool file whose write the user approved (`written`) and which `result` says
    /// was written: the hooks' guard records it (`crate::consent::host_tools`).
    pub(super) fn approved_write(&self, written: Option<std::path::PathBuf>, result: &ToolResult) {
        if let (Some(guard), Some(path)) = (self.guard, written) {
            if !result.outcome.is_error() {
                guard.approved_write(&path);
            }
        }
    }
}

/// A command's result: its text, and what it printed for the spill file.
fn with_whole(ran: crate::tools::bash::Ran) -> ToolResult {
    let mut result = ToolResult::ok(ran.text);
    result.whole = ran.printed;
    result
}
