//! Carrying out a slash command on the dashboard ([`crate::app::commands`] parses it).

use crate::app::commands::{
    help_text_with, skills_text, BashesAction, HooksAction, McpAction, SlashCommand,
};
use crate::app::help::HelpView;
use crate::app::keymap::{keymap, Action, Mode};
use crate::app::state::{Activity, App};
use crate::app::transcript::{NoticeKind, Transcript};
use crate::app::Effect;
use rein_core::agent::AgentCommand;
use rein_core::permissions::ApprovalMode;

/// Carry out a command.
pub fn run(app: &mut App, command: SlashCommand, effects: &mut Vec<Effect>) {
    match command {
        SlashCommand::Help => {
            app.help = Some(HelpView::new(&help_text_with(&app.custom_commands)));
            app.hint = None;
        }
        SlashCommand::Clear => {
            if app.busy() {
                let esc = keymap()
                    .keys_for(Mode::Global, Action::Interrupt)
                    .unwrap_or_else(|| "Esc".to_string());
                app.hint = Some(format!(
                    "/clear waits for the turn to end ({esc} interrupts it)"
                ));
                return;
            }
            // A new conversation: the screen, the plan and the gauge start over, and so does
            // the agent's history.
            app.transcript = Transcript::default();
            app.pager = None;
            app.todos.clear();
            app.gauge = app.gauge.cleared();
            effects.push(Effect::Agent(AgentCommand::NewConversation));
            // Custom command files added or changed since the start count from here on.
            effects.push(Effect::ReloadCommands);
        }
        SlashCommand::Rewind => super::rewind::open(app, effects),
        SlashCommand::Diff => effects.push(Effect::ShowDiff),
        // A prompt for the model: `super::send::submit` sends it, as a custom command's.
        SlashCommand::Init(_) => {}
        SlashCommand::Resume => {
            if app.busy() {
                app.hint = Some(crate::app::picker::busy_hint());
            } else {
                effects.push(Effect::OpenPicker);
            }
        }
        SlashCommand::Model(Some(name)) => super::model_switch::begin(app, &name, effects),
        SlashCommand::Model(None) => {
            if app.info.setup.is_some() {
                app.hint = Some(crate::app::state::SETUP_HINT.to_string());
            } else {
                effects.push(Effect::ListModels);
            }
        }
        SlashCommand::Todos => app.show_todos = !app.show_todos,
        SlashCommand::Rename(title) => {
            if title.is_empty() {
                app.hint = Some("/rename needs a name: /rename fix the flaky test".to_string());
            } else {
                effects.push(Effect::Agent(AgentCommand::Rename(title)));
            }
        }
        SlashCommand::Context => {
            app.context_open = true;
            app.hint = None;
        }
        SlashCommand::Compact(focus) => {
            // The agent queues it while it works; say when it will run.
            let queued = match app.activity {
                Activity::Idle => None,
                Activity::Compacting { .. } => {
                    Some("compaction queued: it runs when this one ends")
                }
                _ => Some("compaction queued: it runs when this turn ends"),
            };
            if let Some(text) = queued {
                app.transcript.notice(NoticeKind::Info, text);
            }
            effects.push(Effect::Agent(AgentCommand::Compact { focus }));
        }
        SlashCommand::Memory => {
            let mut text = if app.instructions.is_empty() {
                "No project instructions: rein reads AGENTS.md and CLAUDE.md from every folder \
                 from the repository's root down to the project, and yours from ~/.agents/ \
                 (or ~/.claude/CLAUDE.md, ~/.codex/AGENTS.md) and rein's config folder, at the \
                 start of a session."
                    .to_string()
            } else {
                let mut out = String::from("Project instructions in the system prompt:");
                for line in &app.instructions {
                    out.push_str(&format!("\n  {line}"));
                }
                out
            };
            if !app.nested_instructions.is_empty() {
                text.push_str("\nLoaded for the folders worked in (sent with a message):");
                for line in &app.nested_instructions {
                    text.push_str(&format!("\n  {line}"));
                }
            }
            app.transcript.notice(NoticeKind::Info, text);
        }
        SlashCommand::Skills => {
            let text = skills_text(&app.info.skills, &app.info.skill_notices);
            app.transcript.notice(NoticeKind::Info, text);
        }
        SlashCommand::Cost => {
            let text = cost_text(app);
            app.transcript.notice(NoticeKind::Info, text);
        }
        SlashCommand::Mcp(McpAction::Restart(name)) => super::mcp::restart(app, name, effects),
        SlashCommand::Mcp(McpAction::Allow(name)) => super::mcp::allow(app, name, effects),
        SlashCommand::Mcp(McpAction::Login(name)) => super::mcp::login(app, name, effects),
        SlashCommand::Mcp(McpAction::Logout(name)) => super::mcp::logout(app, name, effects),
        SlashCommand::Mcp(McpAction::Unknown(words)) => {
            app.hint = Some(format!(
                "/mcp {words}: expected /mcp, /mcp restart NAME, /mcp allow NAME, /mcp login NAME or /mcp logout NAME"
            ));
        }
        SlashCommand::Hooks(HooksAction::List) => super::hooks::list(app),
        SlashCommand::Hooks(HooksAction::Allow) => super::hooks::ask_again(app, effects),
        SlashCommand::Hooks(HooksAction::Unknown(words)) => {
            app.hint = Some(format!("/hooks {words}: expected /hooks or /hooks allow"));
        }
        SlashCommand::Lsp => {
            let text = lsp_text(app);
            app.transcript.notice(NoticeKind::Info, text);
        }
        SlashCommand::Bashes(BashesAction::List) => {
            let text = bashes_text(app);
            app.transcript.notice(NoticeKind::Info, text);
        }
        SlashCommand::Bashes(BashesAction::Kill(id)) => effects.push(Effect::KillBackground(id)),
        SlashCommand::Bashes(BashesAction::Unknown(words)) => {
            app.hint = Some(format!(
                "/bashes {words}: expected /bashes, /bashes kill ID or /bashes kill all"
            ));
        }
        SlashCommand::Mcp(McpAction::List) => {
            // The listing stays in the transcript; the layer over it acts on a server.
            let text = super::mcp::list_text(app);
            app.transcript.notice(NoticeKind::Info, text);
            if !app.mcp_servers.is_empty() {
                app.mcp_panel = Some(crate::app::mcp_panel::McpPanel::default());
            }
        }
        SlashCommand::Mode(None) => {
            let text = format!(
                "{}; /mode plan|default|auto or Shift+Tab switches it",
                app.mode.describe()
            );
            app.transcript.notice(NoticeKind::Info, text);
        }
        SlashCommand::Mode(Some(name)) => match name.parse::<ApprovalMode>() {
            Ok(ApprovalMode::Auto) if app.no_auto.is_some() => app.hint = app.no_auto.clone(),
            Ok(mode) => super::modes::set(app, mode, effects),
            Err(e) => app.hint = Some(e.to_string()),
        },
        SlashCommand::Quit => effects.push(Effect::Quit),
        SlashCommand::Unknown(name) => {
            app.hint = Some(format!("unknown command {name}; /help lists them"));
        }
    }
}

/// The `/cost` text: the main agent's tokens in this conversation, what the prompt cache
/// took, and the cost when the model's prices are configured.
pub fn cost_text(app: &App) -> String {
    let usage = &app.usage;
    if usage.calls == 0 {
        return "no model calls yet in this conversation".to_string();
    }
    let mut out = usage.tokens_line();
    for line in usage.describe(app.info.prices) {
        out.push('\n');
        out.push_str(&line);
    }
    if app.info.prices.is_none() {
        out.push_str(
            "\nno prices configured for this model ([providers.NAME.models.MODEL] input_price, \
             cached_input_price, output_price)",
        );
    }
    out
}

/// `/bashes`: each background command, running ones first, with its state and last line.
fn bashes_text(app: &App) -> String {
    use rein_core::tools::background::TaskState;
    if app.background.is_empty() {
        return "No background commands: the model starts one with bash and \
                run_in_background (a dev server, a watcher); they stop when the session ends"
            .to_string();
    }
    let mut tasks: Vec<_> = app.background.iter().collect();
    tasks.sort_by_key(|t| t.state != TaskState::Running);
    let running = tasks
        .iter()
        .filter(|t| t.state == TaskState::Running)
        .count();
    let mut out = format!(
        "Background commands ({running} running; /bashes kill ID stops one, /bashes kill all):"
    );
    for t in tasks {
        out.push_str(&format!(
            "\n  {} {} (pid {}): {}",
            t.id,
            t.state.describe(),
            t.pid,
            rein_core::text::clip(&rein_core::text::one_line(&t.command), 80)
        ));
        if !t.last_line.is_empty() {
            out.push_str(&format!("\n      {}", t.last_line));
        }
    }
    out
}

/// `/lsp`'s listing: each language server started, its folder, its state and its last
/// word (sanitised: it is a program's text).
fn lsp_text(app: &App) -> String {
    if app.lsp_servers.is_empty() {
        return "No language server has started in this session. One starts when the model reads or edits a file of its language; `rein config` lists those found.".to_string();
    }
    let mut out = String::from("Language servers:");
    for server in &app.lsp_servers {
        let clean = |text: &str| rein_core::text::sanitize::sanitize(text).into_owned();
        out.push_str(&format!(
            "\n  {} ({}): {}",
            clean(&server.name),
            clean(&server.root),
            clean(&server.state)
        ));
        if let Some(note) = &server.note {
            let note: String = note.chars().take(200).collect();
            out.push_str(&format!("\n    last: {}", clean(&note)));
        }
    }
    let (errors, warnings) = app.diagnostics;
    out.push_str(&format!(
        "\nIn the files this session touched: {errors} errors, {warnings} warnings."
    ));
    out
}
