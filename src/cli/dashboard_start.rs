//! Starting the full-screen dashboard: the app state from the settings (session info,
//! keymap, notifications, the first-run setup text), the question about the model's
//! window put to its server in the background (the gauge says so until the answer), the
//! agent and its session, the MCP servers listed for the dashboard to start, the first
//! prompt (`rein "PROMPT"`) handed over to be sent once the session is ready, then
//! `rein::dashboard::run` until it quits; then, on the restored terminal, how to resume the
//! session when it holds a conversation.
//! `rein --demo` does the same against the built-in scripted model.

use super::out::{errln, outln};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use rein::app::attention::{Notifications, NotifyWhen};
use rein::app::keymap_user::UserKeymap;
use rein::app::state::{Cell, NoticeKind, SessionInfo};
use rein::app::App;
use rein_core::config::{Config, Environment, Overrides};
use rein_core::sandbox::Sandbox;
use rein_core::skills::SkillSet;

use super::args::Cli;
use super::runtime;
use rein_core::start::{
    agent_config, ask_window, detect_sandbox, discover_instructions, discover_skills, record_into,
    start_mcp_with, tighten_data_dir, Guidance, Launch,
};

/// The full-screen dashboard. Without a model it still opens, and explains how to set one.
pub(super) fn run_dashboard(launch: Launch, cli: &Cli) -> Result<ExitCode, String> {
    let loaded = launch.hooks();
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
        warnings,
        mode,
    } = guidance;
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return Err(
            "the dashboard needs a terminal; run a prompt headless with `rein -p \"PROMPT\"`"
                .to_string(),
        );
    }
    let info = SessionInfo {
        branch: rein::dashboard::git_branch(&root),
        setup: config
            .model
            .value
            .trim()
            .is_empty()
            .then(|| setup_text(&config)),
        prices: rein::dashboard::usage_prices(&config.prices),
        ..session_info(config.model_name.clone(), &root, &sandbox, &skills)
    };
    let mut app = App::new(info, config.context_window.value);
    app.no_auto = no_auto(&sandbox);
    app.notifications = notifications(&config);
    app.first_prompt = cli.prompt.clone();
    install_keymap(&config, &mut app);
    let (hooks, held) = install_hooks(loaded, &mut app);
    if config.ui_input_history.value {
        // Read off the loop once the dashboard runs (AppEvent::HistoryLoaded).
        app.input_history = Some(rein::dashboard::input_history::path(&config.data_dir));
    }
    let runtime = runtime()?;
    let result = runtime.block_on(async {
        // Asked while the rest starts; the first frame never waits for the answer.
        let window = ask_window(&config);
        app.gauge.asking = window.is_some();
        for line in instructions.summary().iter().chain(&instructions.notices) {
            app.transcript
                .cells
                .push(Cell::notice(NoticeKind::Info, line.clone()));
        }
        app.instructions = instructions.lines();
        // What a person should read before anything is sent: stderr is behind the
        // dashboard's screen, so the transcript says it too.
        for line in warnings.into_iter().chain(changes) {
            app.transcript
                .cells
                .push(Cell::notice(NoticeKind::Error, line));
        }
        for notice in &commands.notices {
            app.transcript
                .cells
                .push(Cell::notice(NoticeKind::Info, notice.clone()));
        }
        app.custom_commands = commands;
        // Listed now, started by the dashboard once its first frame is drawn.
        let (mcp, mcp_notices) = start_mcp_with(&config, &root, false, &trust.store, trust.problem);
        for notice in mcp_notices {
            app.transcript
                .cells
                .push(Cell::notice(NoticeKind::Info, notice));
        }
        let (mcp_manager, mcp_events) = match mcp {
            Some((manager, events)) => (Some(manager), Some(events)),
            None => (None, None),
        };
        // As listed, before they start: a first prompt waits for those starting.
        if let Some(manager) = &mcp_manager {
            app.mcp_servers = manager.states();
        }
        let (agent, sessions) = match agent_config(
            &config,
            root.clone(),
            sandbox,
            policy,
            skills,
            &instructions,
            hooks.clone(),
        ) {
            Ok(mut agent_config) => {
                if let Some(held) = held {
                    // Asked before anything runs: the session starts once answered.
                    hooks.asking();
                    app.hook_trust = Some(rein::app::hook_trust::HookTrust::new(held));
                }
                if let Some(manager) = &mcp_manager {
                    agent_config.external_tools = Some(Arc::new(manager.clone()));
                }
                let resumable = resumed
                    .as_ref()
                    .is_some_and(|r| r.session.message_count > 0);
                let recording = record_into(&config, &root, resumed);
                let session = match recording.session {
                    Ok(mut session) => {
                        if let Some(loaded) = session.resumed.as_mut() {
                            rein::app::resume::restore(&mut app, loaded);
                        }
                        for notice in recording.notices {
                            app.transcript
                                .cells
                                .push(Cell::notice(NoticeKind::Info, notice));
                        }
                        Some(session)
                    }
                    Err(why) => {
                        app.transcript
                            .cells
                            .push(Cell::notice(NoticeKind::Error, why));
                        app.not_recording = true;
                        None
                    }
                };
                let sessions = rein::dashboard::Sessions {
                    data_dir: config.data_dir.clone(),
                    agent_config: agent_config.clone(),
                    current: session.as_ref().map(|s| s.writer.path().to_path_buf()),
                    pick_at_start: cli.resume.as_deref() == Some(""),
                    resumable,
                    window: window.clone(),
                };
                let agent = rein_core::agent::spawn_learning_window(agent_config, session, window)
                    .map_err(|e| e.to_string())?;
                if let Some(mode) = mode {
                    agent.send(rein_core::agent::AgentCommand::SetMode(mode));
                }
                (Some(agent), Some(sessions))
            }
            Err(_) => (None, None),
        };
        let attention = attention(&config);
        let result = rein::dashboard::run(
            app,
            agent,
            attention,
            sessions,
            Some(config),
            mcp_manager.clone().zip(mcp_events),
        )
        .await
        .map_err(|e| format!("terminal error: {e}"));
        if let Some(manager) = mcp_manager {
            manager.shutdown().await;
        }
        result
    });
    runtime.shutdown_timeout(Duration::from_millis(200));
    let ended = result?;
    if let Some(id) = ended.resume {
        outln!("{}", resume_hint(&id, &root));
    }
    Ok(ExitCode::SUCCESS)
}

/// The line printed after the dashboard closes: how to go on with session `id` of the
/// project `root` (named when it is not the folder rein was started in).
fn resume_hint(id: &str, root: &Path) -> String {
    let here = std::env::current_dir()
        .ok()
        .and_then(|d| d.canonicalize().ok())
        .is_some_and(|d| root.canonicalize().is_ok_and(|r| r == d));
    let id = rein_core::text::sanitize::sanitize(id);
    if here {
        format!("Resume this session with: rein --resume {id}")
    } else {
        format!(
            "Resume this session with: rein --resume {id} --cwd {}",
            shell_word(&rein_core::text::sanitize::sanitize(
                &root.display().to_string()
            ))
        )
    }
}

/// `word` as one shell word: as it is when it needs no quoting, else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// `rein --demo`: the dashboard against the built-in scripted model, in a temporary copy
/// of the example project, with the first prompt already sent.
pub(super) fn run_demo() -> Result<ExitCode, String> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return Err("the demo needs a terminal".to_string());
    }
    let runtime = runtime()?;
    let result = runtime.block_on(async {
        let demo = rein_core::demo::Demo::start()
            .await
            .map_err(|e| format!("cannot start the demo: {e}"))?;
        let root = demo.project_dir().to_path_buf();
        let overrides = Overrides {
            base_url: Some(demo.base_url()),
            model: Some(demo.model().to_string()),
            api_key: Some(String::new()),
            context_window: Some(demo.context_window()),
        };
        let env = Environment::from_process();
        let config = Config::load(&root, &overrides, &env).map_err(|e| e.to_string())?;
        tighten_data_dir(&config);
        let sandbox = detect_sandbox(&config, &root, &env);
        let confined = sandbox.not_working_reason().is_none();
        let policy = Arc::new(
            config
                .policy(&root, env.home.as_deref(), confined)
                .map_err(|e| e.to_string())?,
        );
        let skills = discover_skills(&config, &env, &root);
        let info = session_info(format!("{} (demo)", demo.model()), &root, &sandbox, &skills);
        let mut app = App::new(info, demo.context_window());
        app.no_auto = no_auto(&sandbox);
        app.notifications = notifications(&config);
        install_keymap(&config, &mut app);
        let instructions = discover_instructions(&config, &env, &root, &policy, &sandbox);
        // The user's hooks run on the demo's calls too; a project's held ones stay held.
        let loaded = rein_core::hooks::load(&config.user_config_path, &root, &config.data_dir);
        let (hooks, _) = install_hooks(loaded, &mut app);
        let agent = rein_core::agent::spawn(agent_config(
            &config,
            root,
            sandbox,
            policy,
            skills,
            &instructions,
            hooks,
        )?)
        .map_err(|e| e.to_string())?;
        agent.send(rein_core::agent::AgentCommand::UserMessage(
            demo.first_prompt().into(),
        ));
        let result = rein::dashboard::run(app, Some(agent), attention(&config), None, None, None)
            .await
            .map_err(|e| format!("terminal error: {e}"));
        drop(demo);
        result
    });
    runtime.shutdown_timeout(Duration::from_millis(200));
    result.map(|_| ExitCode::SUCCESS)
}

/// Why auto mode is not offered here, or `None` when the sandbox works.
pub(super) fn no_auto(sandbox: &Sandbox) -> Option<String> {
    sandbox
        .not_working_reason()
        .map(rein_core::permissions::mode::auto_unavailable)
}

/// What the dashboard shows of a run: the model, the project, the sandbox and the skills
/// (no branch, setup text or prices: the callers add those they have).
pub(super) fn session_info(
    model: String,
    root: &Path,
    sandbox: &Sandbox,
    skills: &SkillSet,
) -> SessionInfo {
    SessionInfo {
        model,
        project: root.to_path_buf(),
        branch: None,
        sandbox: sandbox.describe(),
        sandbox_ok: sandbox.warning().is_none(),
        setup: None,
        skills: skill_list(skills),
        skill_notices: skills.notices.clone(),
        prices: None,
    }
}

/// (name, description) per skill, for `/skills`.
pub(super) fn skill_list(skills: &SkillSet) -> Vec<(String, String)> {
    skills
        .iter()
        .map(|s| (s.name.clone(), s.description.clone()))
        .collect()
}

pub(super) fn attention(config: &Config) -> rein::dashboard::Attention {
    rein::dashboard::Attention {
        bell: config.ui_bell.value,
        notifications: config.ui_notifications.value != "never",
    }
}

/// When the dashboard notifies (`ui.notifications`, `ui.notify_after_secs`).
pub(super) fn notifications(config: &Config) -> Notifications {
    Notifications {
        when: NotifyWhen::from_name(&config.ui_notifications.value).unwrap_or_default(),
        after: Duration::from_secs(config.ui_notify_after_secs.value),
    }
}

/// The keymap in force: the built-in one with the user's `keymap.toml` (beside
/// `config.toml`) merged in.
pub(super) fn user_keymap(config: &Config) -> UserKeymap {
    let builtin = rein::app::keymap::builtin();
    match rein::app::keymap_user::path_beside(&config.user_config_path) {
        Some(path) => rein::app::keymap_user::load(&path, builtin),
        None => UserKeymap::builtin(builtin),
    }
}

/// Load the user's keymap and put it in force; its problems go to stderr now and, for
/// the dashboard, into the transcript (`app`).
pub(super) fn install_keymap(config: &Config, app: &mut App) {
    let loaded = user_keymap(config);
    for error in &loaded.errors {
        errln!("rein: warning: keymap: {error}");
        app.transcript
            .cells
            .push(Cell::notice(NoticeKind::Error, format!("keymap: {error}")));
    }
    rein::app::keymap::install(loaded.keymap);
}

/// The hooks that run here (shared with the agent), for `/hooks`; what is said about them
/// (held project hooks, lines that cannot be used) goes into the transcript too. The
/// project's held hooks come back for the question about them.
fn install_hooks(
    loaded: rein_core::hooks::Loaded,
    app: &mut App,
) -> (Arc<rein_core::hooks::Hooks>, Option<rein_core::hooks::Held>) {
    app.hooks = loaded
        .hooks
        .all()
        .iter()
        .map(rein_core::hooks::describe)
        .collect();
    for notice in &loaded.notices {
        app.transcript
            .cells
            .push(Cell::notice(NoticeKind::Error, format!("hooks: {notice}")));
    }
    app.hook_notices = loaded.notices;
    (Arc::new(loaded.hooks), loaded.held)
}

/// The first-run explanation shown when no model is configured.
pub(super) fn setup_text(config: &Config) -> String {
    format!(
        "No model is configured yet.\n\n\
         rein talks to any OpenAI-compatible chat-completions endpoint. Tell it which one:\n\n\
         • a known provider: rein --model ollama/qwen3-coder, or with its key in the\n\
         \x20                   environment, OPENROUTER_API_KEY=... rein --model openrouter/MODEL\n\
         \x20                   (`rein models` lists the providers)\n\
         • for this shell:   export REIN_BASE_URL=http://127.0.0.1:8080/v1 REIN_MODEL=my-model\n\
         \x20                   (and REIN_API_KEY=... for hosted APIs)\n\
         • for good: put `model = \"...\"` (and `base_url = \"...\"`) in {}\n\
         • once:      rein --model NAME --base-url URL\n\n\
         Then start rein again. `rein config` shows what is set and where it came from.\n\
         Ctrl-D (or Ctrl-C twice) quits.",
        config.user_config_path.display()
    )
}
