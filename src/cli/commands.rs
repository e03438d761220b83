//! The subcommands that answer and exit: `rein models`, `rein policy check`, `rein
//! sessions` (and `export ID`), `rein mcp list` / `allow NAME`, `rein config` (and
//! `allow`). Each gets the settings already loaded and prints to stdout, every text that
//! came from outside through `rein_core::text::sanitize`.

use super::out::{errln, out, outln};
use std::path::Path;
use std::process::ExitCode;

use rein_core::config::{Config, Environment, Overrides};
use rein_core::permissions::policy::RulePolicy;
use rein_core::sandbox::Sandbox;

use super::args::{McpCommand, SessionsCommand};
use super::dashboard_start::user_keymap;
use super::runtime;
use rein_core::start::start_mcp;

/// `rein models`: the providers and configured models.
pub(super) fn models(config: &Config) -> ExitCode {
    outln!("{}", config.models_listing());
    ExitCode::SUCCESS
}

/// `rein policy check COMMAND [--json]`: the verdict on a bash command, and why.
pub(super) fn policy_check(
    policy: &RulePolicy,
    command: &str,
    json: bool,
) -> Result<ExitCode, String> {
    let judgement = policy.judge_bash(command);
    if json {
        let text = serde_json::to_string(&judgement).map_err(|e| e.to_string())?;
        outln!("{}", rein_core::text::sanitize::json_line(&text));
    } else {
        let line = format!("{} {}", judgement.action, judgement.reason);
        outln!("{}", rein_core::text::sanitize::sanitize(&line));
    }
    Ok(ExitCode::SUCCESS)
}

/// `rein config`: the project, the sandbox, the keymap and every setting with where it
/// came from.
pub(super) fn config_show(config: &Config, root: &Path, sandbox: &Sandbox) -> ExitCode {
    outln!("project    {}", root.display());
    outln!("sandbox    {}", sandbox.describe());
    let keymap = user_keymap(config);
    for error in &keymap.errors {
        errln!("rein: warning: keymap: {error}");
    }
    outln!("keymap     {}", keymap.source());
    let hooks = rein_core::hooks::load(&config.user_config_path, root, &config.data_dir);
    for notice in &hooks.notices {
        errln!("rein: warning: hooks: {notice}");
    }
    match hooks.hooks.all().as_slice() {
        [] => outln!("hooks      none"),
        all => {
            outln!("hooks      {}", all.len());
            for hook in all {
                outln!("  {}", rein_core::hooks::describe(hook));
            }
        }
    }
    outln!("{}", config.describe());
    outln!("{}", config.lsp_listing());
    ExitCode::SUCCESS
}

/// `rein config allow`: obey the project's `.rein/config.toml` as it is now: a file held
/// because a command may have written it (`config::planted`), and what it says about where
/// requests go and what they carry (`config::routing`), pinned to those exact values.
pub(super) fn config_allow(config: &Config) -> Result<ExitCode, String> {
    let file = &config.project_config_path;
    let reload = || {
        let root = file.parent().and_then(Path::parent).unwrap_or(file);
        Config::load(root, &Overrides::default(), &Environment::from_process())
            .map_err(|e| e.to_string())
    };
    let mut said = String::new();
    let reloaded;
    let config = if config.held_project_config.is_some() {
        let text = rein_core::config::planted::confirm(&config.data_dir, file)?;
        said.push_str(&format!(
            "obeying {} from now on (until it changes); what it says:\n{text}\n",
            file.display()
        ));
        reloaded = reload()?;
        &reloaded
    } else {
        config
    };
    match &config.project_routing {
        Some(routing) if !routing.allowed => {
            rein_core::config::planted::allow_routing(&config.data_dir, file, routing.pinned())?;
            said.push_str(&format!(
                "allowed: rein follows what {} says about where requests go and which key and \
                 headers they carry, as it says it now:",
                file.display()
            ));
            for (key, value) in &routing.shown {
                said.push_str(&format!("\n  {key} = {value}"));
            }
            let now = reload()?;
            let key = match now.api_key.value.as_str() {
                "" => "no key".to_string(),
                _ => format!("the key from {}", now.api_key.source),
            };
            said.push_str(&format!(
                "\nrequests for {} go to {} with {key}\na change to any of these holds them again",
                now.model_name, now.base_url.value
            ));
        }
        Some(_) => said.push_str(&format!(
            "{} is followed already as it is: nothing to allow",
            file.display()
        )),
        None if said.is_empty() && file.exists() => said.push_str(&format!(
            "{} is obeyed already: nothing to allow",
            file.display()
        )),
        None if said.is_empty() => said.push_str(&format!(
            "{} does not exist: nothing to allow",
            file.display()
        )),
        None => {}
    }
    outln!("{}", rein_core::text::sanitize::sanitize(said.trim_end()));
    Ok(ExitCode::SUCCESS)
}

/// `rein sessions` and `rein sessions export ID`.
pub(super) fn sessions_command(
    config: &Config,
    command: Option<&SessionsCommand>,
) -> Result<ExitCode, String> {
    match command {
        Some(SessionsCommand::Export { id }) => {
            let path = rein_core::session::find(&config.data_dir, id).map_err(|e| e.to_string())?;
            let loaded = rein_core::session::load(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            // Model text and tool output are in it: shown, never obeyed by the terminal.
            let markdown = rein_core::session::export_markdown(&loaded);
            out!("{}", rein_core::text::sanitize::sanitize(&markdown));
        }
        None => {
            let sessions = rein_core::session::list(&config.data_dir);
            if sessions.is_empty() {
                outln!(
                    "no sessions yet (they are kept in {})",
                    rein_core::session::sessions_dir(&config.data_dir).display()
                );
            }
            for s in sessions {
                // Exact, as the picker shows it: the file's tail read where the summary
                // is behind it (`40+` when that tail is too long to read).
                let messages = rein_core::session::exact_count(&s);
                let title = s.title.as_deref().unwrap_or("(untitled)");
                let open = s.open.map(|h| format!("  ({h})")).unwrap_or_default();
                outln!(
                    "{}  {:>5} msgs  {}  {}  {}{open}",
                    s.id,
                    messages.to_string(),
                    s.started.get(..16).unwrap_or(&s.started).replace('T', " "),
                    rein_core::text::sanitize::sanitize(&s.project.display().to_string()),
                    rein_core::text::sanitize::sanitize(title)
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The OAuth settings of the configured HTTP server `name`, or why it has none.
fn oauth_target(
    config: &Config,
    root: &Path,
    name: &str,
) -> Result<rein_core::mcp::oauth::Target, String> {
    let Some(server) = config.mcp_servers.iter().find(|s| s.name == name) else {
        return Err(format!(
            "no MCP server named {name} is configured (`rein mcp list` lists them)"
        ));
    };
    if matches!(server.origin, rein_core::mcp::Origin::Project(_)) {
        let (trust, _) = rein_core::consent::trust::TrustStore::load(&config.data_dir);
        if rein_core::mcp::external::unapproved(server, &trust, root).is_some() {
            return Err(format!(
                "{name} is the project's server and you have not allowed it as it is declared now; `rein mcp allow {name}` first"
            ));
        }
    }
    rein_core::mcp::oauth::Target::for_login(server, &config.data_dir)
}

/// `rein mcp list` and `rein mcp allow NAME`.
pub(super) fn mcp_command(
    config: &Config,
    root: &Path,
    command: &McpCommand,
) -> Result<ExitCode, String> {
    match command {
        McpCommand::Login { name } => {
            let target = oauth_target(config, root, name)?;
            let runtime = runtime()?;
            let outcome = runtime.block_on(rein_core::mcp::oauth::login(
                &target,
                &rein_core::mcp::oauth::StderrPrompt,
            ))?;
            match outcome {
                rein_core::mcp::oauth::LoginOutcome::LoggedIn => outln!(
                    "logged in to {name} ({}); the tokens are in {}",
                    target.url,
                    target.store().path().display()
                ),
                rein_core::mcp::oauth::LoginOutcome::NotNeeded => {
                    outln!("{name} ({}) answers without a login", target.url)
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Logout { name } => {
            let target = oauth_target(config, root, name)?;
            if rein_core::mcp::oauth::logout(&target)? {
                outln!(
                    "logged out of {name}: {} removed",
                    target.store().path().display()
                );
            } else {
                outln!("{name} had no login to forget");
            }
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Allow { name } => {
            let Some(server) = config.mcp_servers.iter().find(|s| &s.name == name) else {
                return Err(format!(
                    "no MCP server named {name} is configured (`rein mcp list` lists them)"
                ));
            };
            if !matches!(server.origin, rein_core::mcp::Origin::Project(_)) {
                outln!(
                    "{name} is declared in your own config ({}): it needs no approval",
                    server.origin.path().display()
                );
                return Ok(ExitCode::SUCCESS);
            }
            let (mut trust, _) = rein_core::consent::trust::TrustStore::load(&config.data_dir);
            let why = rein_core::mcp::external::unapproved(server, &trust, root);
            let files = rein_core::mcp::external::approve(server, root, &mut trust)?;
            // What is approved is the whole table: say it, key by key, and what changed.
            let mut said = format!(
                "allowed: the project's MCP server {name} may run `{}` outside rein's sandbox, \
                 in {}, as {} declares it now:",
                rein_core::mcp::external::launch(server),
                root.display(),
                server.origin.path().display()
            );
            for line in server.declared.lines() {
                said.push_str(&format!("\n  {line}"));
            }
            if !files.is_empty() {
                said.push_str("\nwith the project files it names, as they are now:");
                for line in &files {
                    said.push_str(&format!("\n  {line}"));
                }
            }
            match why {
                Some(rein_core::mcp::Unapproved::Changed(changes)) => {
                    said.push_str("\nchanged since you allowed it before:");
                    for change in changes {
                        said.push_str(&format!("\n  {change}"));
                    }
                }
                None => said.push_str("\n(it was allowed as it is already)"),
                Some(_) => {}
            }
            said.push_str("\na change to any of these keys or files asks again");
            outln!("{}", rein_core::text::sanitize::sanitize(&said));
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::List => {
            if config.mcp_servers.is_empty() {
                outln!("no MCP servers are configured ([mcp_servers.NAME] in config.toml; see docs/mcp.md)");
                return Ok(ExitCode::SUCCESS);
            }
            let runtime = runtime()?;
            runtime.block_on(async {
                let (started, notices) = start_mcp(config, root, true);
                for notice in &notices {
                    outln!("{}", rein_core::text::sanitize::sanitize(notice));
                }
                if let Some((manager, mut events)) = started {
                    while manager
                        .states()
                        .iter()
                        .any(|(_, s)| *s == rein_core::mcp::ServerState::Starting)
                    {
                        if events.recv().await.is_none() {
                            break;
                        }
                    }
                    let tools = manager.tools();
                    for (name, state) in manager.states() {
                        outln!(
                            "{name}: {}",
                            rein_core::text::sanitize::sanitize(&state.to_string())
                        );
                        for tool in tools.iter().filter(|t| t.server == name) {
                            outln!("  {}", tool.name);
                        }
                    }
                    manager.shutdown().await;
                }
            });
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `rein hooks`: every hook with its source (and the project's held ones said);
/// `rein hooks allow`: approve the project's; `rein hooks test EVENT --payload FILE`.
pub(super) fn hooks_command(
    config: &Config,
    root: &Path,
    command: Option<&super::args::HooksCommand>,
) -> Result<ExitCode, String> {
    use super::args::HooksCommand;
    match command {
        None => {
            let loaded = rein_core::hooks::load(&config.user_config_path, root, &config.data_dir);
            for notice in &loaded.notices {
                errln!("rein: {notice}");
            }
            if loaded.hooks.is_empty() {
                outln!(
                    "no hooks run here: put Claude Code's `hooks` block in {}",
                    rein_core::hooks::config::user_file(&config.user_config_path)
                        .unwrap_or_default()
                        .display()
                );
            }
            for hook in loaded.hooks.all().iter() {
                outln!("{}", rein_core::hooks::describe(hook));
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(HooksCommand::Allow) => {
            let allowed = rein_core::hooks::allow_project(root, &config.data_dir)?;
            let mut said = format!(
                "allowed: the project's hooks run as you, outside rein's sandbox, in {}, as {} \
                 declares them now:",
                root.display(),
                rein_core::hooks::config::project_file(root).display()
            );
            for line in &allowed.hooks {
                said.push_str(&format!("\n  {line}"));
            }
            if allowed.files.is_empty() {
                said.push_str("\nthey name no file of the project");
            } else {
                said.push_str("\nwith the project files they run, as they are now:");
                for line in &allowed.files {
                    said.push_str(&format!("\n  {line}"));
                }
            }
            said.push_str("\na change to the file or to any of these files holds them again");
            outln!("{}", rein_core::text::sanitize::sanitize(&said));
            Ok(ExitCode::SUCCESS)
        }
        Some(HooksCommand::Test { event, payload }) => {
            let Some(event) = rein_core::hooks::Event::from_name(event) else {
                let known: Vec<&str> = rein_core::hooks::Event::ALL
                    .iter()
                    .map(|e| e.name())
                    .collect();
                return Err(format!(
                    "no event {event}; the events are {}",
                    known.join(", ")
                ));
            };
            let text = std::fs::read_to_string(payload)
                .map_err(|e| format!("{}: {e}", payload.display()))?;
            let fields: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text)
                .map_err(|e| format!("{}: not a JSON object ({e})", payload.display()))?;
            let subject = ["tool_name", "source", "reason", "trigger", "agent_type"]
                .iter()
                .find_map(|k| fields.get(*k).and_then(|v| v.as_str()))
                .map(str::to_string);
            let loaded = rein_core::hooks::load(&config.user_config_path, root, &config.data_dir);
            for notice in &loaded.notices {
                errln!("rein: {notice}");
            }
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            let common = rein_core::hooks::Common {
                permission_mode: "default".into(),
                ..Default::default()
            };
            let said = runtime.block_on(loaded.hooks.fire(
                event,
                subject.as_deref(),
                &common,
                fields,
            ));
            let Some(said) = said else {
                outln!("no hook matches {}", event.name());
                return Ok(ExitCode::SUCCESS);
            };
            outln!("{}", hooks_decision(&said));
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `rein steering`: the project's host-tool files that changed since rein recorded them;
/// `rein steering allow` (`allow`): take them as they are now.
pub(super) fn steering_command(
    config: &Config,
    root: &Path,
    allow: bool,
) -> Result<ExitCode, String> {
    let record = config
        .data_dir
        .join(rein_core::consent::host_tools::FILE_NAME);
    if !allow {
        let changes = rein_core::consent::host_tools::check(&config.data_dir, root);
        if changes.is_empty() {
            outln!(
                "the host-tool files of {} are as rein recorded them ({})",
                root.display(),
                record.display()
            );
        }
        for change in &changes {
            outln!(
                "{}",
                rein_core::text::sanitize::sanitize(&change.to_string())
            );
        }
        if !changes.is_empty() {
            outln!(
                "hooks, and MCP servers that start in the project, are held until you check \
                 them and run `{}`",
                rein_core::consent::host_tools::ALLOW_COMMAND
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let (changes, files) = rein_core::consent::host_tools::accept(&config.data_dir, root)
        .map_err(|e| format!("{} was not written: {e}", record.display()))?;
    let mut said = String::new();
    if changes.is_empty() {
        said.push_str("nothing had changed; ");
    }
    for change in &changes {
        said.push_str(&format!("taken as it is: {change}\n"));
    }
    if files.is_empty() {
        said.push_str(&format!(
            "recorded: {} has none of the host-tool files",
            root.display()
        ));
    } else {
        said.push_str(&format!("recorded, in {}:", root.display()));
        for line in &files {
            said.push_str(&format!("\n  {line}"));
        }
    }
    outln!("{}", rein_core::text::sanitize::sanitize(&said));
    Ok(ExitCode::SUCCESS)
}

/// What hooks decided, as JSON (`rein hooks test`).
fn hooks_decision(said: &rein_core::hooks::Combined) -> String {
    let permission = said.permission.as_ref().map(|(p, reason)| {
        serde_json::json!({
            "decision": match p {
                rein_core::hooks::Permission::Allow => "allow",
                rein_core::hooks::Permission::Ask => "ask",
                rein_core::hooks::Permission::Deny => "deny",
            },
            "reason": reason,
        })
    });
    serde_json::to_string_pretty(&serde_json::json!({
        "block": said.block,
        "permission": permission,
        "updated_input": said.updated_input,
        "context": said.context,
        "messages": said.messages,
        "stop": said.stop,
        "errors": said.errors,
    }))
    .unwrap_or_default()
}
