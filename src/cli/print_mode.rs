//! Print mode (`rein -p PROMPT`): the prompt (piped stdin added to it, or from stdin for
//! `-` or none: [`super::piped`]; `/init` or a custom command expanded), what the run
//! starts with said on stderr, the model's window asked of its server in the background,
//! the MCP servers waited for, then one headless run (`rein::headless`) whose exit code is
//! the process's. A clearly small prompt goes before the window's answer (see
//! `rein_core::agent::window`).

use super::out::{errln, outln};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use rein::headless::{self, HeadlessOptions, OutputFormat};

use super::args::{Cli, Format};
use super::headless_runtime;
use rein_core::start::{agent_config, ask_window, record_into, start_mcp_with, Guidance, Launch};

/// Run `prompt` headless and exit with its code.
pub(super) fn run(launch: Launch, cli: &Cli, prompt: String) -> Result<ExitCode, String> {
    let hooks = launch.hooks();
    let Launch {
        config,
        root,
        sandbox,
        policy,
        trust,
        guidance,
        resumed,
    } = launch;
    let Guidance {
        skills,
        instructions,
        commands,
        changes,
        mode,
        ..
    } = guidance;
    let cap = usize::try_from(config.attach_total_bytes.value).unwrap_or(usize::MAX);
    let (prompt, piped) = super::piped::prompt_and_stdin(prompt, cap)?;
    if prompt.trim().is_empty() {
        return Err(
            "the prompt is empty: give it after -p, on its own (rein -p \"PROMPT\"), or on standard input"
                .to_string(),
        );
    }
    for notice in &commands.notices {
        errln!("rein: warning: {notice}");
    }
    // `/init` and `/name args` of a custom command: their prompt, as the dashboard sends it.
    use rein::app::commands::{init_prompt, parse, SlashCommand, INIT_FROM};
    // `/mcp__SERVER__PROMPT args`: an MCP server's prompt, known once the servers started
    // (the agent fetches it).
    let mut mcp_prompt = None;
    let prompt = match (parse(&prompt), commands.expand(&prompt)) {
        (Some(SlashCommand::Init(notes)), _) => {
            errln!("rein: /init expanded from {INIT_FROM}");
            init_prompt(notes.as_deref())
        }
        (_, Some(expansion)) => {
            errln!(
                "rein: /{} expanded from {}",
                expansion.command.name,
                expansion.command.label
            );
            if let Some(hides) = expansion.command.hides_users() {
                errln!("rein: warning: {hides}");
            }
            if expansion.cut {
                errln!(
                    "rein: warning: {}",
                    rein::app::update::send::cut_notice(&expansion.command.label)
                );
            }
            expansion.text
        }
        (Some(SlashCommand::Unknown(name)), None) if name.starts_with("/mcp__") => {
            mcp_prompt = Some(name);
            prompt
        }
        // Any other command is the dashboard's (or no command at all): refused, as the
        // dashboard refuses an unknown one, rather than sent to the model as a message.
        (Some(SlashCommand::Unknown(name)), None) => {
            return Err(format!(
                "unknown command {name}: headless runs /init and custom commands (the dashboard's /help lists them)"
            ));
        }
        (Some(_), None) => {
            let name = prompt.split_whitespace().next().unwrap_or_default();
            return Err(format!(
                "{name} is one of the dashboard's commands; headless runs /init and custom commands"
            ));
        }
        (None, None) => prompt,
    };
    let prompt = match piped {
        Some(piped) => super::piped::with_piped(&prompt, &piped),
        None => prompt,
    };
    if let Some(warning) = sandbox.warning() {
        errln!("rein: warning: {warning}");
    }
    if let Some(summary) = instructions.summary() {
        errln!("rein: {summary}");
    }
    for notice in instructions.notices.iter().chain(&changes) {
        errln!("rein: warning: {notice}");
    }
    // Headless, a project's hooks the user has not approved are held (a notice says so).
    for notice in &hooks.notices {
        errln!("rein: {notice}");
    }
    let agent_config = agent_config(
        &config,
        root.clone(),
        sandbox,
        policy,
        skills,
        &instructions,
        Arc::new(hooks.hooks),
    )?;
    let recording = record_into(&config, &root, resumed);
    let continued = recording
        .session
        .as_ref()
        .ok()
        .and_then(|s| s.resumed.as_ref());
    if let Some(loaded) = continued {
        errln!(
            "rein: continuing session {} ({} messages)",
            loaded.id(),
            loaded.message_count
        );
        for notice in loaded.notices.iter().chain(&recording.notices) {
            errln!("rein: {notice}");
        }
    }
    let session = recording
        .session
        .inspect_err(|why| errln!("rein: warning: {why}"))
        .ok();
    let session_id = session.as_ref().map(|s| s.writer.id().to_string());
    let runtime = headless_runtime()?;
    let mut agent_config = agent_config;
    // Asked while the MCP servers start (on this one thread, between their steps).
    let window = {
        let _inside = runtime.enter();
        ask_window(&config)
    };
    let mcp = runtime.block_on(async {
        let (started, notices) = start_mcp_with(&config, &root, false, &trust.store, trust.problem);
        for notice in &notices {
            errln!("rein: warning: {notice}");
        }
        let Some((manager, mut events)) = started else {
            return Ok((None, Vec::new()));
        };
        // A person may be at the terminal: a refused token or a wider scope opens the
        // browser once (the URL on stderr).
        manager.allow_browser_login();
        manager.launch();
        // A signal while the servers start, before the run watches for one: their process
        // groups are killed, and rein stops as the run would.
        let mut states = Vec::new();
        let signal = tokio::select! {
            () = wait_for_mcp(&mut events, &manager, &mut states) => None,
            _ = tokio::signal::ctrl_c() => Some("SIGINT"),
            signal = rein_core::host::signals::termination() => Some(signal),
        };
        match signal {
            None => Ok((Some(manager), states)),
            Some(signal) => {
                manager.shutdown().await;
                Err(signal)
            }
        }
    });
    let (mcp, mcp_states) = match mcp {
        Ok(mcp) => mcp,
        Err(signal) => {
            errln!("rein: stopped by {signal} while the MCP servers started");
            let ending = headless::result::Ending::Signal(signal);
            if cli.output_format != Format::Text {
                let result = headless::result::Tally::new(session_id).result(&ending, None);
                if let Ok(line) = serde_json::to_string(&result) {
                    outln!("{}", rein_core::text::sanitize::json_line(&line));
                }
            }
            return Ok(ExitCode::from(
                u8::try_from(ending.exit_code()).unwrap_or(1),
            ));
        }
    };
    if let Some(name) = mcp_prompt {
        let command = name.trim_start_matches('/');
        match mcp.as_ref().and_then(|m| m.prompt(command)) {
            Some(prompt) => errln!(
                "rein: {name} is the prompt {} of the MCP server {}",
                prompt.name,
                prompt.server
            ),
            None => {
                if let Some(manager) = &mcp {
                    runtime.block_on(manager.shutdown());
                }
                return Err(format!(
                    "unknown command {name}: no ready MCP server offers that prompt (headless runs /init, custom commands and MCP prompts)"
                ));
            }
        }
    }
    if let Some(manager) = &mcp {
        agent_config.external_tools = Some(Arc::new(manager.clone()));
    }
    let options = HeadlessOptions {
        prompt,
        format: match cli.output_format {
            Format::Text => OutputFormat::Text,
            Format::Json => OutputFormat::Json,
            Format::Jsonl => OutputFormat::Jsonl,
        },
        yes: cli.yes,
        prices: rein::dashboard::usage_prices(&config.prices),
        mode,
        before: mcp_states,
    };
    let code = runtime.block_on(async {
        let code = headless::run_learning_window(agent_config, options, session, window).await;
        if let Some(manager) = mcp {
            manager.shutdown().await;
        }
        code
    });
    if let Some(id) = session_id {
        errln!("rein: session {id} (continue it with --resume {id})");
    }
    // Do not wait for stray blocking work (a stuck read) on the way out.
    runtime.shutdown_timeout(Duration::from_millis(200));
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// Headless: wait until no server is starting any more (each has its own startup
/// timeout), so the first request already offers their tools; say which are ready and
/// which failed (on stderr, and as `mcp_server` events into `states`, which the `jsonl`
/// stream prints after its `init` event).
pub(super) async fn wait_for_mcp(
    events: &mut tokio::sync::mpsc::UnboundedReceiver<rein_core::mcp::McpEvent>,
    manager: &rein_core::mcp::McpManager,
    states: &mut Vec<serde_json::Value>,
) {
    use rein_core::mcp::{McpEvent, ServerState};
    let starting = |m: &rein_core::mcp::McpManager| {
        m.states().iter().any(|(_, s)| *s == ServerState::Starting)
    };
    let mut waiting = true;
    loop {
        // Once none starts, what is already sent is still said (a notice comes just
        // before its server's state, which is set before either is sent).
        let event = if waiting && starting(manager) {
            match tokio::time::timeout(Duration::from_secs(120), events.recv()).await {
                Ok(Some(event)) => event,
                _ => break,
            }
        } else {
            waiting = false;
            match events.try_recv() {
                Ok(event) => event,
                Err(_) => break,
            }
        };
        let (name, state) = match event {
            McpEvent::ServerState { name, state } => (name, state),
            McpEvent::Notice { name, message } => {
                errln!(
                    "rein: warning: MCP server {name}: {}",
                    rein_core::text::sanitize::sanitize(&message)
                );
                continue;
            }
            McpEvent::Prompts { .. } | McpEvent::Resources { .. } => continue,
        };
        let mut line = serde_json::json!({"type": "mcp_server", "name": name});
        match &state {
            ServerState::Ready { tools } => {
                errln!("rein: MCP server {name} ready ({tools} tools)");
                line["state"] = "ready".into();
                line["tools"] = (*tools).into();
            }
            ServerState::Failed { reason, stderr } => {
                errln!("rein: warning: MCP server {name} failed: {reason}");
                for l in stderr.iter().rev().take(5).rev() {
                    errln!("rein:   {}", rein_core::text::sanitize::sanitize(l));
                }
                line["state"] = "failed".into();
                line["reason"] = reason.clone().into();
                line["stderr"] = stderr.clone().into();
            }
            ServerState::NeedsLogin { .. } => {
                let command = format!("rein mcp login {name}");
                errln!(
                    "rein: warning: MCP server {name} needs a login (OAuth); run `{command}`, then run rein again"
                );
                line["state"] = "needs_login".into();
                line["command"] = command.into();
            }
            _ => continue,
        }
        states.push(line);
    }
}
