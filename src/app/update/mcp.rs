//! The MCP servers on the dashboard: their states as they report them (a line in the
//! transcript when one is ready or fails, with its stderr tail), `/mcp`'s list, and
//! `/mcp allow NAME` for a project's server that waits for the user (both say what changed
//! since the user allowed it before, key by key), and `/mcp login NAME` / `/mcp logout
//! NAME` for an HTTP server's OAuth login: the login runs off the loop
//! ([`Effect::LoginMcp`]), its steps come back as [`McpLoginStep`]s (the authorization URL
//! and notes as transcript lines, capped, attributed to the server), and a login or logout
//! that ends well restarts the server, so its tools appear (or it needs a login again).

use crate::app::event::McpLoginStep;
use crate::app::state::App;
use crate::app::transcript::{Cell, NoticeKind};
use crate::app::Effect;
use rein_core::mcp::oauth::LoginOutcome;
use rein_core::mcp::{McpEvent, ServerState, Unapproved};

/// A server's state changed, or it has something to say.
pub fn event(app: &mut App, event: McpEvent) {
    match event {
        McpEvent::ServerState { name, state } => {
            let line = match &state {
                ServerState::Ready { .. } | ServerState::NeedsLogin { .. } => {
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
        McpEvent::Resources { resources } => app
            .finder
            .set_resources(resources.iter().filter_map(|r| r.mention()).collect()),
        McpEvent::Prompts { prompts } => app
            .custom_commands
            .set_mcp(prompts.iter().map(prompt_command).collect()),
    }
}

/// An MCP prompt as a slash command: listed and completed like a custom command; it sends
/// the typed line, which the agent fetches from the server.
pub fn prompt_command(
    prompt: &rein_core::mcp::McpPrompt,
) -> rein_core::custom_commands::CustomCommand {
    rein_core::custom_commands::CustomCommand {
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
        source: rein_core::custom_commands::CommandSource::Mcp,
        shadows: Vec::new(),
        hides_user: None,
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
        out.push_str(&offers(app, name));
    }
    out
}

/// A key in the MCP servers' layer: close it, or act on the selected server as the
/// `/mcp` subcommand of the same name does (the layer closes, so the transcript shows what
/// the action says).
pub fn panel(
    app: &mut App,
    outcome: crate::app::mcp_panel::McpPanelOutcome,
    effects: &mut Vec<Effect>,
) {
    use crate::app::mcp_panel::McpPanelOutcome;
    let selected = app.mcp_panel.as_ref().map_or(0, |p| p.selected);
    let Some(name) = app.mcp_servers.get(selected).map(|(n, _)| n.clone()) else {
        app.mcp_panel = None;
        return;
    };
    match outcome {
        McpPanelOutcome::Stay => return,
        McpPanelOutcome::Close => {}
        McpPanelOutcome::Login => login(app, name, effects),
        McpPanelOutcome::Logout => logout(app, name, effects),
        McpPanelOutcome::Allow => allow(app, name, effects),
        McpPanelOutcome::Restart => restart(app, name, effects),
    }
    app.mcp_panel = None;
}

/// `/mcp restart NAME`: said, and the loop restarts it.
pub fn restart(app: &mut App, name: String, effects: &mut Vec<Effect>) {
    app.transcript.cells.push(Cell::notice(
        NoticeKind::Info,
        format!("restarting the MCP server {name}"),
    ));
    effects.push(Effect::RestartMcp(name));
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

/// The most characters of an authorization URL shown (the authorization server makes it).
const MAX_URL_CHARS: usize = 4096;
/// The most characters of one note of a login shown.
const MAX_NOTE_CHARS: usize = 1024;

/// `text`, cut to `max` characters (an ellipsis says so).
fn capped(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// `/mcp login NAME`: start an OAuth login for the server, unless one runs already or the
/// server cannot start (disabled, or a project's not allowed yet).
pub fn login(app: &mut App, name: String, effects: &mut Vec<Effect>) {
    let hint = match app.mcp_servers.iter().find(|(n, _)| *n == name) {
        None => Some(format!(
            "no MCP server named {name} in this session; /mcp lists them"
        )),
        Some((_, ServerState::NotAllowed { .. })) => Some(format!(
            "{name} is the project's server and waits for you: /mcp allow {name} first"
        )),
        Some((_, ServerState::Disabled)) => Some(format!(
            "the MCP server {name} is disabled (enabled = false)"
        )),
        Some(_) if app.mcp_logins.contains(&name) => Some(format!(
            "a login to {name} is under way: finish it in the browser"
        )),
        Some(_) => None,
    };
    if let Some(hint) = hint {
        app.hint = Some(hint);
        return;
    }
    app.transcript.notice(
        NoticeKind::Info,
        format!(
            "logging in to the MCP server {name} (OAuth): rein opens the authorization page in \
             your browser; the dashboard goes on meanwhile"
        ),
    );
    app.mcp_logins.push(name.clone());
    effects.push(Effect::LoginMcp(name));
}

/// `/mcp logout NAME`: forget the server's tokens (the loop says whether there were any).
pub fn logout(app: &mut App, name: String, effects: &mut Vec<Effect>) {
    if !app.mcp_servers.iter().any(|(n, _)| *n == name) {
        app.hint = Some(format!(
            "no MCP server named {name} in this session; /mcp lists them"
        ));
        return;
    }
    effects.push(Effect::LogoutMcp(name));
}

/// A step of a login or logout of the server `name`.
pub fn login_step(app: &mut App, name: String, step: McpLoginStep, effects: &mut Vec<Effect>) {
    let (kind, text) = match step {
        McpLoginStep::Url(url) => (
            NoticeKind::Info,
            format!(
                "MCP server {name}: open this URL in a browser to log in (rein tries to open \
                 it):\n  {}",
                capped(&url, MAX_URL_CHARS)
            ),
        ),
        McpLoginStep::Note(note) => (
            NoticeKind::Info,
            format!("MCP server {name} login: {}", capped(&note, MAX_NOTE_CHARS)),
        ),
        McpLoginStep::Finished(outcome) => {
            app.mcp_logins.retain(|n| *n != name);
            match outcome {
                Ok(LoginOutcome::LoggedIn) => {
                    effects.push(Effect::RestartMcp(name.clone()));
                    (
                        NoticeKind::Info,
                        format!("logged in to the MCP server {name}; restarting it"),
                    )
                }
                Ok(LoginOutcome::NotNeeded) => (
                    NoticeKind::Info,
                    format!("the MCP server {name} answers without a login"),
                ),
                Err(why) => (
                    NoticeKind::Error,
                    format!(
                        "the login to the MCP server {name} failed: {}",
                        capped(&why, MAX_NOTE_CHARS)
                    ),
                ),
            }
        }
        McpLoginStep::LoggedOut(Ok(true)) => {
            effects.push(Effect::RestartMcp(name.clone()));
            (
                NoticeKind::Info,
                format!(
                    "logged out of the MCP server {name}: its tokens are forgotten; restarting it"
                ),
            )
        }
        McpLoginStep::LoggedOut(Ok(false)) => (
            NoticeKind::Info,
            format!("the MCP server {name} had no login to forget"),
        ),
        McpLoginStep::LoggedOut(Err(why)) => (
            NoticeKind::Error,
            format!("the logout of the MCP server {name} failed: {why}"),
        ),
    };
    app.transcript.notice(kind, text);
}

/// What the server `name` offers besides its tools, as `/mcp` says it: `, 1 prompt
/// (/mcp__docs__…), 2 resources (@docs:…)`; empty when nothing.
pub fn offers(app: &App, name: &str) -> String {
    let mut out = String::new();
    // Counted in place: the layer draws this every frame.
    let prompts = app
        .custom_commands
        .iter()
        .filter(|c| c.source == rein_core::custom_commands::CommandSource::Mcp && c.label == name)
        .count();
    if prompts > 0 {
        out.push_str(&format!(
            ", {prompts} prompt{} (/mcp__{}__…)",
            if prompts == 1 { "" } else { "s" },
            name.to_ascii_lowercase()
        ));
    }
    let prefix = format!("{name}:");
    let resources = app
        .finder
        .resources()
        .iter()
        .filter(|r| r.starts_with(&prefix))
        .count();
    if resources > 0 {
        out.push_str(&format!(
            ", {resources} resource{} (@{name}:…)",
            if resources == 1 { "" } else { "s" }
        ));
    }
    out
}
