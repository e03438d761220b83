//! The MCP servers on the dashboard: their states as they report them (a line in the
//! transcript when one is ready or fails, with its stderr tail), `/mcp`'s list, and
//! `/mcp allow NAME` for a project's server that waits for the user (both say what changed
//! since the user allowed it before, key by key).

use crate::app::state::App;
use crate::app::transcript::{Cell, NoticeKind};
use crate::app::Effect;
use crate::mcp::{McpEvent, ServerState, Unapproved};

/// A server's state changed, or it has something to say.
pub fn event(app: &mut App, event: McpEvent) {
    match event {
        McpEvent::ServerState { name, state } => {
            let line = match &state {
                ServerState::Ready { .. } => {
                    Some((NoticeKind::Info, format!("MCP server {name}: {state}")))
                }
                ServerState::Failed { reason, stderr } => {
                    let mut text = format!("MCP server {name} failed: {reason}");
                    for l in stderr.iter().rev().take(5).rev() {
                        text.push_str(&format!("\n  {l}"));
                    }
                    Some((NoticeKind::Error, text))
                }
                _ => None,
            };
            match app.mcp_servers.iter_mut().find(|(n, _)| *n == name) {
                Some((_, s)) => *s = state,
                None => app.mcp_servers.push((name, state)),
            }
            if let Some((kind, text)) = line {
                app.transcript.cells.push(Cell::notice(kind, text));
            }
        }
        McpEvent::Notice { name, message } => app.transcript.cells.push(Cell::notice(
            NoticeKind::Info,
            format!("MCP server {name}: {message}"),
        )),
        McpEvent::Prompts { prompts } => app
            .custom_commands
            .set_mcp(prompts.iter().map(prompt_command).collect()),
    }
}

/// An MCP prompt as a slash command: listed and completed like a custom command; it sends
/// the typed line, which the agent fetches from the server.
pub fn prompt_command(prompt: &crate::mcp::McpPrompt) -> crate::custom_commands::CustomCommand {
    crate::custom_commands::CustomCommand {
        name: prompt.command.clone(),
        description: if prompt.description.is_empty() {
            format!("the prompt {} of {}", prompt.name, prompt.server)
        } else {
            prompt.description.clone()
        },
        argument_hint: prompt.argument_hint(),
        body: String::new(),
        path: std::path::PathBuf::new(),
        label: prompt.server.clone(),
        source: crate::custom_commands::CommandSource::Mcp,
        shadows: Vec::new(),
    }
}

/// `/mcp`: every server and its state.
pub fn list_text(app: &App) -> String {
    if app.mcp_servers.is_empty() {
        return "No MCP servers run in this session: declare them as [mcp_servers.NAME] in \
                config.toml (a project's run once `rein mcp allow NAME` allows them)"
            .to_string();
    }
    let mut out = String::from("MCP servers:");
    for (name, state) in &app.mcp_servers {
        out.push_str(&format!("\n  {name}: {state}"));
        if matches!(state, ServerState::NotAllowed { .. }) {
            out.push_str(&format!(" (/mcp allow {name} allows it for this project)"));
        }
    }
    out
}

/// `/mcp allow NAME`: a project's server that waits is allowed (for this project and what
/// it runs now) and started; the transcript says what it runs. Any other server is left.
pub fn allow(app: &mut App, name: String, effects: &mut Vec<Effect>) {
    let text = match app.mcp_servers.iter().find(|(n, _)| *n == name) {
        None => {
            app.hint = Some(format!(
                "no MCP server named {name} in this session; /mcp lists them"
            ));
            return;
        }
        Some((_, ServerState::NotAllowed { launch, why })) => {
            let mut text = format!(
                "allowing the project's MCP server {name} for this project, as its table \
                 declares it now: it runs `{launch}` outside rein's sandbox, with your \
                 permissions"
            );
            if let Unapproved::Changed(changes) = why {
                text.push_str(" (changed since you allowed it before:");
                for change in changes {
                    text.push_str(&format!("\n  {change}"));
                }
                text.push(')');
            }
            effects.push(Effect::AllowMcp(name));
            text
        }
        Some((_, state)) => format!(
            "the MCP server {name} needs no approval ({state}): your own servers, and a \
             project's you allowed, start by themselves"
        ),
    };
    app.transcript.notice(NoticeKind::Info, text);
}
