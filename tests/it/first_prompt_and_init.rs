//! The dashboard's side of a Claude Code or Codex user's habits: the prompt given on the
//! command line (`rein "PROMPT"`) sent as if typed, held while the question about a
//! project's hooks is open; and `/init`, whose prompt goes to the model and whose
//! `write_file` of AGENTS.md goes through the real permission check to the approval
//! modal. (The binary's side is in `tests/it/print_mode_cli.rs` and `tests/it/tmux_e2e/`.)

use crate::support;

use std::sync::Arc;

use crossterm::event::KeyCode;
use rein::app::hook_trust::HookTrust;
use rein::app::layer::Layer;
use rein::app::state::{App, Cell, SessionInfo};
use rein::app::{AppEvent, Effect};
use rein_core::agent::{AgentCommand, AgentEvent};
use rein_core::permissions::policy::RulePolicy;
use serde_json::json;
use support::app::Script;
use support::app::{app, sent};
use support::{Reply, ScriptedServer};

/// A project whose `.rein/hooks.json` is held for the user's answer, and the question.
fn held_hooks() -> (tempfile::TempDir, tempfile::TempDir, HookTrust) {
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".rein")).unwrap();
    std::fs::write(
        project.path().join(".rein/hooks.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch x"}]}]}}"#,
    )
    .unwrap();
    let loaded = rein_core::hooks::load(
        &data.path().join("config.toml"),
        project.path(),
        data.path(),
    );
    let held = loaded.held.expect("the project's hooks are held");
    (project, data, HookTrust::new(held))
}

#[test]
fn a_command_line_prompt_is_sent_as_if_typed() {
    let mut s = Script::with(app());
    let effects = s.at(AppEvent::Prompt("explain the parser".into()));
    assert_eq!(sent(&effects), ["explain the parser"]);
    assert!(s.app.composer.textarea.is_empty());
    // It went into the input history as typed input does.
    s.plain(KeyCode::Up);
    assert_eq!(s.app.composer.text(), "explain the parser");
}

#[test]
fn a_command_line_prompt_waits_for_the_answer_about_the_projects_hooks() {
    for (key, allowed) in [('a', true), ('n', false)] {
        let (_project, _data, trust) = held_hooks();
        let mut s = Script::with(app());
        s.app.hook_trust = Some(trust);
        let effects = s.at(AppEvent::Prompt("fix the flaky test".into()));
        assert!(effects.is_empty(), "sent before the answer: {effects:?}");
        assert_eq!(Layer::top(&s.app), Layer::Hooks);
        // Keys that do not answer the question do not send it either.
        assert!(s.plain(KeyCode::Enter).is_empty());

        let effects = s.plain(KeyCode::Char(key));
        // The answer first (the loop admits the hooks, or lets the session start), then
        // the prompt, so a project hook the user allowed sees it.
        match (allowed, effects.as_slice()) {
            (true, [Effect::AllowHooks(_), Effect::Agent(AgentCommand::UserMessage(text))])
            | (false, [Effect::HooksAnswered, Effect::Agent(AgentCommand::UserMessage(text))]) => {
                assert_eq!(text, "fix the flaky test")
            }
            _ => panic!("answered {key}: {effects:?}"),
        }
        assert_eq!(Layer::top(&s.app), Layer::Main);
        assert!(s.app.first_prompt.is_none());
        // Asked again later (`/hooks allow`): nothing is left to send.
        if !allowed {
            s.send("/hooks allow");
            assert!(sent(&s.plain(KeyCode::Char('n'))).is_empty());
        }
    }
}

#[test]
fn a_command_line_prompt_can_be_a_command() {
    let mut s = Script::with(app());
    let effects = s.at(AppEvent::Prompt("/init".into()));
    let [prompt] = sent(&effects).try_into().expect("one message");
    assert!(prompt.contains("AGENTS.md"), "{prompt}");
    // Without a model it stays in the input box, and the hint says why.
    let mut setup = Script::with(App::new(
        SessionInfo {
            setup: Some("No model is configured yet.".into()),
            ..SessionInfo::default()
        },
        128_000,
    ));
    assert!(setup.at(AppEvent::Prompt("hello".into())).is_empty());
    assert_eq!(setup.app.composer.text(), "hello");
    assert!(setup.app.hint.as_deref().unwrap().contains("no model"));
}

#[test]
fn init_sends_its_prompt_and_shows_what_was_typed() {
    let mut s = Script::with(app());
    let effects = s.send("/init  the fixtures live in testdata/");
    let [prompt] = sent(&effects).try_into().expect("one message");
    assert_eq!(
        prompt,
        rein::app::commands::init_prompt(Some("the fixtures live in testdata/"))
    );
    for needle in [
        "build",
        "single test",
        "Architecture",
        "CLAUDE.md",
        "improve it instead of starting over",
        "write_file at AGENTS.md",
        "The user adds: the fixtures live in testdata/",
    ] {
        assert!(prompt.contains(needle), "{needle} missing from {prompt}");
    }
    s.agent(AgentEvent::TurnStarted {
        text: prompt.clone(),
    });
    let user = s.app.transcript.cells.iter().find_map(|c| match c {
        Cell::User(u) => Some(u),
        _ => None,
    });
    let user = user.expect("a user cell");
    assert_eq!(user.text, "/init  the fixtures live in testdata/");
    assert_eq!(user.expanded_from.as_deref(), Some("rein's /init prompt"));
    assert!(rein::app::commands::help_text().contains("/init [NOTES]"));
    // A custom command cannot take the name.
    assert!(rein::app::commands::is_builtin("init"));
}

/// The whole of `/init` below the screen: its prompt reaches the model, the model explores
/// and calls write_file on AGENTS.md, the real permission check asks (an instruction file,
/// though inside the project), and the dashboard opens the approval modal for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_reaches_the_model_and_its_agents_md_waits_for_approval() {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("Makefile"), "test:\n\tcargo test\n").unwrap();
    let content = "# AGENTS.md\n\n- Test: `make test`\n";
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &json!({"command": "cat Makefile"}).to_string())]),
        Reply::tool_calls(&[(
            "write_file",
            &json!({"path": "AGENTS.md", "content": content}).to_string(),
        )]),
        Reply::text("Wrote AGENTS.md with the test command."),
    ])
    .await
    .unwrap();
    let mut config = support::agent::scripted_config(&server, project.path());
    config.policy = Arc::new(RulePolicy::new(project.path(), &[], &[], None).unwrap());
    let mut handle = rein_core::agent::spawn(config).unwrap();

    let mut s = Script::with(app());
    let effects = s.send("/init");
    let [prompt] = sent(&effects).try_into().expect("one message");
    assert!(handle.send(AgentCommand::UserMessage(prompt.clone().into())));
    let events = support::agent::events_until(&mut handle, |e| {
        matches!(e, AgentEvent::ApprovalNeeded { .. })
    })
    .await;
    let Some(AgentEvent::ApprovalNeeded {
        id, name, reason, ..
    }) = events.last().cloned()
    else {
        panic!("no approval: {events:?}")
    };
    assert_eq!(name, "write_file");
    assert!(reason.contains("is an instruction file"), "{reason}");
    assert!(
        !project.path().join("AGENTS.md").exists(),
        "written unasked"
    );
    // The model read the project first (`cat` is allowed without asking).
    assert!(events.iter().any(
        |e| matches!(e, AgentEvent::ToolFinished { result, .. } if result.contains("cargo test"))
    ));
    let first = &server.requests()[0];
    let user = support::agent::stored_messages(first)
        .into_iter()
        .rfind(|m| m["role"] == "user")
        .unwrap();
    assert_eq!(support::agent::content(&user), prompt);

    // On the dashboard: the modal for it, on top.
    for event in events {
        s.agent(event);
    }
    assert_eq!(Layer::top(&s.app), Layer::Approval);
    let effects = s.plain(KeyCode::Char('y'));
    let answer = effects
        .iter()
        .find_map(|e| match e {
            Effect::Agent(command @ AgentCommand::Approval { .. }) => Some(command.clone()),
            _ => None,
        })
        .expect("an answer");
    assert!(matches!(&answer, AgentCommand::Approval { id: i, .. } if *i == id));
    assert!(handle.send(answer));
    support::agent::events_until(&mut handle, |e| {
        matches!(e, AgentEvent::TurnFinished { .. })
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(project.path().join("AGENTS.md")).unwrap(),
        content
    );
}

#[test]
fn a_command_line_prompt_waits_for_the_mcp_servers_to_start() {
    use rein_core::mcp::{McpEvent, ServerState};
    let mut s = Script::with(app());
    s.app.mcp_servers = vec![
        ("github".into(), ServerState::Starting),
        ("time".into(), ServerState::Starting),
        ("off".into(), ServerState::Disabled),
    ];
    assert!(s.at(AppEvent::Prompt("list my issues".into())).is_empty());
    assert!(s.app.hint.as_deref().unwrap().contains("MCP servers"));
    let state = |name: &str, state| {
        AppEvent::Mcp(McpEvent::ServerState {
            name: name.into(),
            state,
        })
    };
    assert!(sent(&s.at(state("github", ServerState::Ready { tools: 3 }))).is_empty());
    // The last one up (or failed): the prompt goes, and the hint is gone.
    let effects = s.at(state(
        "time",
        ServerState::Failed {
            reason: "exited".into(),
            stderr: Vec::new(),
        },
    ));
    assert_eq!(sent(&effects), ["list my issues"]);
    assert_eq!(s.app.hint, None);
    assert!(sent(&s.at(state("github", ServerState::Starting))).is_empty());
}
