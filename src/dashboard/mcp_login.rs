//! The loop's side of `/mcp login NAME` and `/mcp logout NAME`: the server's login
//! settings from the session's config, the login run in a task of its own (the browser may
//! take minutes; the loop never waits), its authorization URL and notes sent back as
//! [`McpLoginStep`]s on the background channel, and its end. A logout removes the token
//! file at once. The update step shows the steps and restarts the server.

use std::collections::VecDeque;

use tokio::sync::mpsc;

use super::Loop;
use crate::app::event::{AppEvent, McpLoginStep};
use rein_core::mcp::oauth::{self, Prompt, Target};

/// The dashboard's [`Prompt`]: each line becomes a step the transcript shows.
struct StepPrompt {
    name: String,
    events: mpsc::UnboundedSender<AppEvent>,
}

impl StepPrompt {
    fn send(&self, step: McpLoginStep) {
        let _ = self.events.send(AppEvent::McpLogin {
            name: self.name.clone(),
            step,
        });
    }
}

impl Prompt for StepPrompt {
    fn url(&self, url: &str) {
        self.send(McpLoginStep::Url(url.to_string()));
    }

    fn note(&self, text: &str) {
        self.send(McpLoginStep::Note(text.to_string()));
    }
}

/// The login settings of the session's server `name`, or why it has none.
fn target(ctx: &Loop<'_>, name: &str) -> Result<Target, String> {
    let mcp = ctx
        .mcp
        .as_ref()
        .ok_or("no MCP server runs in this session")?;
    let data_dir = ctx
        .config
        .as_deref()
        .map(|c| c.data_dir.clone())
        .ok_or("this session keeps no data folder, so it keeps no login")?;
    let server = mcp
        .config(name)
        .ok_or_else(|| format!("no MCP server named {name} is configured"))?;
    Target::for_login(&server, &data_dir)
}

/// Start the login to `name` in the background; its steps and its end come back as
/// [`AppEvent::McpLogin`].
pub(super) fn login(ctx: &Loop<'_>, name: String, pending: &mut VecDeque<AppEvent>) {
    let target = match target(ctx, &name) {
        Ok(target) => target,
        Err(why) => {
            pending.push_back(AppEvent::McpLogin {
                name,
                step: McpLoginStep::Finished(Err(why)),
            });
            return;
        }
    };
    let prompt = StepPrompt {
        name,
        events: ctx.background.clone(),
    };
    tokio::spawn(async move {
        let outcome = oauth::login(&target, &prompt).await;
        prompt.send(McpLoginStep::Finished(outcome));
    });
}

/// Forget `name`'s tokens now.
pub(super) fn logout(ctx: &Loop<'_>, name: String, pending: &mut VecDeque<AppEvent>) {
    let result = target(ctx, &name).and_then(|target| oauth::logout(&target));
    pending.push_back(AppEvent::McpLogin {
        name,
        step: McpLoginStep::LoggedOut(result),
    });
}
