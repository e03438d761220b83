//! The agent's side of `/model` (issue 10, section 4), against two scripted servers: after
//! a switch the next request goes to the new endpoint with the new model id, key and
//! headers, and the whole history; the `Context` event carries the new window; a
//! conversation too big for the new window is compacted first (by the new model), and a
//! compaction that fails does not stop the switch; a switch sent during a turn waits for
//! its end; the session file records the model, so a resumed session goes on with it
//! (`Config::model_for_resume`, and `rein -p --continue` through the real binary, where
//! `--model` wins).

use crate::support;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rein_core::agent::{
    AgentCommand, AgentConfig, AgentEvent, AgentHandle, ModelSwitch, TurnOutcome,
};
use rein_core::config::{Config, Environment, ModelTarget, Overrides};
use rein_core::session::RecordedModel;
use serde_json::{json, Value};
use support::agent::{
    agent_config, content, events_until, outcome, spawn_recorded, spawn_resumed, test_client, turn,
};
use support::{chunk, prose, Reply, ScriptedServer, Step};
use tempfile::TempDir;

// ---- harness ----------------------------------------------------------------------------

/// A project, a `REIN_HOME` whose `config.toml` has two providers at two scripted servers
/// (`alpha/model-a`, and `beta/model-b` with a key, a header, a 50k window and prices),
/// and a data dir for session files.
struct Fixture {
    project: TempDir,
    rein_home: TempDir,
    home: TempDir,
}

impl Fixture {
    fn new(alpha: &ScriptedServer, beta: &ScriptedServer, beta_window: u64) -> Fixture {
        let f = Fixture {
            project: TempDir::new().unwrap(),
            rein_home: TempDir::new().unwrap(),
            home: TempDir::new().unwrap(),
        };
        std::fs::write(
            f.rein_home.path().join("config.toml"),
            config_toml(&alpha.base_url(), &beta.base_url(), beta_window),
        )
        .unwrap();
        f
    }

    fn config(&self, model: &str) -> Config {
        let env = Environment {
            vars: HashMap::from([
                (
                    "REIN_HOME".to_string(),
                    self.rein_home.path().display().to_string(),
                ),
                ("BETA_KEY".to_string(), "sk-beta".to_string()),
            ]),
            home: Some(self.home.path().to_path_buf()),
        };
        let overrides = Overrides {
            model: Some(model.to_string()),
            ..Overrides::default()
        };
        Config::load(self.project.path(), &overrides, &env).unwrap()
    }

    fn root(&self) -> &Path {
        self.project.path()
    }

    fn data(&self) -> &Path {
        self.rein_home.path()
    }
}

fn config_toml(alpha: &str, beta: &str, beta_window: u64) -> String {
    format!(
        r#"
[providers.alpha]
base_url = "{alpha}"
models = {{ "model-a" = {{ context_window = 128000 }} }}

[providers.beta]
base_url = "{beta}"
api_key_env = "BETA_KEY"
headers = {{ "X-Beta" = "yes" }}
models = {{ "model-b" = {{ context_window = {beta_window}, input_price = 1, output_price = 2 }} }}
"#
    )
}

/// The agent `main.rs` would start on the config's model.
fn agent_for(config: &Config, root: &Path) -> AgentConfig {
    let mut client = test_client(
        config.base_url.value.clone(),
        &config.api_key.value,
        &config.model.value,
    );
    client.name = config.model_name.clone();
    client.extra_headers = config.headers.clone();
    AgentConfig {
        context: rein_core::context::ContextConfig {
            window: config.context_window.value,
            ..Default::default()
        },
        ..agent_config(client, root)
    }
}

/// What the dashboard sends for `target`.
fn switch_to(target: ModelTarget) -> AgentCommand {
    AgentCommand::SetModel(Box::new(ModelSwitch {
        name: target.name,
        model: target.model.value,
        base_url: target.base_url.value,
        api_key: target.api_key.value,
        headers: target.headers,
        window_known: target.context_window.is_known(),
        window: target.context_window.value,
        prices: Some(rein_core::agent::Prices {
            input: 1.0,
            cached_input: None,
            output: 2.0,
            cache_write: None,
        }),
        images: target.images,
        api: Default::default(),
    }))
}

/// Events until the switch is announced and the new count follows it.
async fn switched(handle: &mut AgentHandle) -> Vec<AgentEvent> {
    let mut events = events_until(handle, |e| matches!(e, AgentEvent::ModelSwitched { .. })).await;
    events.extend(events_until(handle, |e| matches!(e, AgentEvent::Context(_))).await);
    events
}

fn switch_event(events: &[AgentEvent]) -> &AgentEvent {
    events
        .iter()
        .find(|e| matches!(e, AgentEvent::ModelSwitched { .. }))
        .expect("a ModelSwitched event")
}

fn last_window(events: &[AgentEvent]) -> (u64, u64) {
    events
        .iter()
        .rev()
        .find_map(|e| match e {
            AgentEvent::Context(stats) => Some((stats.window, stats.tokens)),
            _ => None,
        })
        .expect("a Context event")
}

/// Text of every message of a request, joined.
fn all_text(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(content)
        .collect::<Vec<_>>()
        .join("\n")
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// A summariser request: the handoff prompt as system message, no tools.
fn is_compaction(request: &Value) -> bool {
    let first = &request["messages"][0];
    first["role"] == "system"
        && content(first).contains("## Goal")
        && request.get("tools").is_none()
}

fn say(text: &str) -> Reply {
    Reply::text(text).without_usage()
}

const NOTE: &str = "## Goal\nReview the PARSER.\n## What happened\nFour long answers.\n## Files\n- src/parse.rs\n## State\nReviewed.\n## Next\nAsk the next question.";

// ---- the switch -------------------------------------------------------------------------

#[tokio::test]
async fn after_a_switch_the_next_request_goes_to_the_new_model_with_the_history() {
    let alpha = ScriptedServer::start(vec![say("The parser is in SRC-PARSE-RS.")])
        .await
        .unwrap();
    let beta = ScriptedServer::start(vec![say("Model B here."), say("Still model B.")])
        .await
        .unwrap();
    let f = Fixture::new(&alpha, &beta, 50_000);
    let config = f.config("alpha/model-a");
    let (mut handle, path) = spawn_recorded(agent_for(&config, f.root()), f.data());
    let first = turn(&mut handle, "where is the parser?").await;
    assert_eq!(outcome(&first), TurnOutcome::Completed);
    assert_eq!(last_window(&first).0, 128_000);

    let target = config.resolve_model("beta/model-b").unwrap();
    assert!(handle.send(switch_to(target)));
    let events = switched(&mut handle).await;
    match switch_event(&events) {
        AgentEvent::ModelSwitched {
            name,
            model,
            base_url,
            window,
            over_budget,
            prices,
        } => {
            assert_eq!(name, "beta/model-b");
            assert_eq!(model, "model-b");
            assert_eq!(base_url, &beta.base_url());
            assert_eq!(*window, 50_000);
            assert_eq!(*over_budget, None, "a short conversation fits");
            assert_eq!(prices.map(|p| p.output), Some(2.0), "handed back");
        }
        _ => unreachable!(),
    }
    assert_eq!(last_window(&events).0, 50_000, "the gauge's new window");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::CompactionStarted { .. })),
        "nothing to compact: {events:?}"
    );

    let second = turn(&mut handle, "and now?").await;
    assert_eq!(outcome(&second), TurnOutcome::Completed);
    assert_eq!(alpha.requests().len(), 1, "nothing more went to alpha");
    let request = &beta.requests()[0];
    assert_eq!(request["model"], "model-b");
    let text = all_text(request);
    for needle in [
        "where is the parser?",
        "The parser is in SRC-PARSE-RS.",
        "and now?",
    ] {
        assert!(text.contains(needle), "{needle} missing: {text}");
    }
    let headers = &beta.request_headers()[0];
    assert_eq!(header(headers, "authorization"), Some("Bearer sk-beta"));
    assert_eq!(header(headers, "x-beta"), Some("yes"));
    assert_eq!(last_window(&second).0, 50_000);
    handle.send(AgentCommand::Shutdown);
    let _ = handle.task.await;

    // The session file: the model at the start, then the switch.
    let loaded = rein_core::session::load(&path).unwrap();
    assert_eq!(
        loaded.model,
        Some(RecordedModel {
            name: "beta/model-b".into(),
            model: "model-b".into(),
            base_url: beta.base_url(),
            window: 50_000,
        })
    );
    let kinds: Vec<&str> = rein_core::session::read_records(&path)
        .unwrap()
        .0
        .iter()
        .map(|r| r.entry.kind())
        .filter(|k| *k == "model")
        .collect();
    assert_eq!(kinds.len(), 2, "at the start and at the switch");

    // Continued on a config whose model is alpha: the session goes on with beta.
    let config = f.config("alpha/model-a");
    let recorded = loaded
        .model
        .as_ref()
        .map(|m| (m.name.as_str(), m.base_url.as_str()));
    let decision = config.model_for_resume(recorded, false);
    let mut config = config.clone();
    config.set_target(decision.target.expect("beta resolves where it ran"));
    assert!(
        decision.notices[0].contains("continuing on beta/model-b"),
        "{:?}",
        decision.notices
    );
    let mut resumed = spawn_resumed(agent_for(&config, f.root()), loaded, f.data());
    let third = turn(&mut resumed, "still there?").await;
    assert_eq!(outcome(&third), TurnOutcome::Completed);
    assert_eq!(alpha.requests().len(), 1);
    let request = &beta.requests()[1];
    assert_eq!(request["model"], "model-b");
    assert!(all_text(request).contains("where is the parser?"));
    assert_eq!(last_window(&third).0, 50_000);
}

#[test]
fn a_resume_goes_on_with_the_recorded_model_unless_it_leads_elsewhere_or_model_is_given() {
    let alpha_url = "http://127.0.0.1:9/v1";
    let beta_url = "http://127.0.0.1:10/v1";
    let rein_home = TempDir::new().unwrap();
    std::fs::write(
        rein_home.path().join("config.toml"),
        config_toml(alpha_url, beta_url, 50_000),
    )
    .unwrap();
    let project = TempDir::new().unwrap();
    let env = Environment {
        vars: HashMap::from([(
            "REIN_HOME".to_string(),
            rein_home.path().display().to_string(),
        )]),
        home: None,
    };
    let load = |model: &str| {
        let overrides = Overrides {
            model: Some(model.to_string()),
            ..Overrides::default()
        };
        Config::load(project.path(), &overrides, &env).unwrap()
    };
    let config = load("alpha/model-a");

    // The same model, or none recorded (a file from an older rein): nothing to decide.
    for recorded in [None, Some(("alpha/model-a", alpha_url))] {
        let d = config.model_for_resume(recorded, false);
        assert!(d.target.is_none() && d.notices.is_empty(), "{d:?}");
    }
    // Recorded beta: beta, with its window and key settings.
    let d = config.model_for_resume(Some(("beta/model-b", &format!("{beta_url}/"))), false);
    let target = d.target.expect("a switch");
    assert_eq!(target.model.value, "model-b");
    assert_eq!(target.context_window.value, 50_000);
    // --model on the command line wins.
    let d = config.model_for_resume(Some(("beta/model-b", beta_url)), true);
    assert!(d.target.is_none());
    assert_eq!(
        d.notices,
        ["this session last ran on beta/model-b; --model names another; using alpha/model-a"]
    );
    // The name now leads to another endpoint (the provider was removed or moved): the
    // conversation is not sent there.
    let d = config.model_for_resume(Some(("beta/model-b", "http://10.9.9.9:8080/v1")), false);
    assert!(d.target.is_none());
    assert!(
        d.notices[0]
            .contains("now leads to http://127.0.0.1:10/v1 instead of http://10.9.9.9:8080/v1"),
        "{:?}",
        d.notices
    );
    // A name that does not resolve at all.
    let d = config.model_for_resume(Some(("alpha/", alpha_url)), false);
    assert!(d.target.is_none());
    assert!(
        d.notices[0].contains("does not resolve any more"),
        "{:?}",
        d.notices
    );
}

#[tokio::test]
async fn a_conversation_too_big_for_the_new_window_is_compacted_first_by_the_new_model() {
    // Four answers of 16 000 characters: 16k tokens at 4 a token, over the budget of a
    // 16k window (85 %), well under the first one's 128k.
    let alpha = ScriptedServer::start(
        (1..=4)
            .map(|i| say(&prose(&format!("ANSWER-{i}"), 16_000)))
            .collect(),
    )
    .await
    .unwrap();
    let beta = ScriptedServer::start_routed(
        vec![say("Fits now.")],
        Arc::new(|request: &Value| is_compaction(request).then(|| say(NOTE))),
    )
    .await
    .unwrap();
    let f = Fixture::new(&alpha, &beta, 16_000);
    let config = f.config("alpha/model-a");
    let mut agent = agent_for(&config, f.root());
    // A summariser at alpha's endpoint: not asked at beta's.
    agent.context.compact_model = "tiny-summariser".into();
    let mut handle = rein_core::agent::spawn(agent).unwrap();
    for i in 1..=4 {
        let events = turn(&mut handle, &format!("QUESTION-{i}: tell me more")).await;
        assert_eq!(outcome(&events), TurnOutcome::Completed);
    }
    handle.send(switch_to(config.resolve_model("beta/model-b").unwrap()));
    let events = switched(&mut handle).await;
    let compacted = events
        .iter()
        .position(|e| matches!(e, AgentEvent::Compacted { auto: true, .. }))
        .unwrap_or_else(|| panic!("compacted first: {events:?}"));
    let announced = events
        .iter()
        .position(|e| matches!(e, AgentEvent::ModelSwitched { .. }))
        .unwrap();
    assert!(compacted < announced);
    assert!(matches!(
        switch_event(&events),
        AgentEvent::ModelSwitched {
            over_budget: None,
            ..
        }
    ));
    let (window, tokens) = last_window(&events);
    assert_eq!(window, 16_000);
    assert!(tokens <= 13_600, "under the new budget: {tokens}");
    assert!(
        events.iter().any(|e| matches!(
            e,
            AgentEvent::Notice { message } if message.contains("compact_model tiny-summariser")
        )),
        "{events:?}"
    );
    // The summariser was the new model; the old one only answered the four turns.
    assert_eq!(alpha.requests().len(), 4);
    let requests = beta.requests();
    assert!(is_compaction(&requests[0]), "{:.300}", requests[0]);
    assert_eq!(requests[0]["model"], "model-b");

    let next = turn(&mut handle, "QUESTION-5: and then?").await;
    assert_eq!(outcome(&next), TurnOutcome::Completed);
    let request = beta.requests().last().cloned().unwrap();
    let text = all_text(&request);
    assert!(text.contains("Review the PARSER."), "the note: {text:.600}");
    assert!(
        !text.contains("ANSWER-1"),
        "the old answers are summarised away"
    );
    assert!(text.contains("QUESTION-5"));
}

#[tokio::test]
async fn a_compaction_that_fails_does_not_stop_the_switch() {
    let alpha = ScriptedServer::start(
        (1..=4)
            .map(|i| say(&prose(&format!("ANSWER-{i}"), 16_000)))
            .collect(),
    )
    .await
    .unwrap();
    let beta = ScriptedServer::start_routed(
        vec![say("Answered anyway.")],
        Arc::new(|request: &Value| {
            is_compaction(request).then(|| Reply::error(500, "summariser down"))
        }),
    )
    .await
    .unwrap();
    let f = Fixture::new(&alpha, &beta, 16_000);
    let config = f.config("alpha/model-a");
    let mut agent = agent_for(&config, f.root());
    agent.client.max_tries = 1;
    let mut handle = rein_core::agent::spawn(agent).unwrap();
    for i in 1..=4 {
        turn(&mut handle, &format!("QUESTION-{i}: tell me more")).await;
    }
    handle.send(switch_to(config.resolve_model("beta/model-b").unwrap()));
    let events = switched(&mut handle).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::CompactionFailed { .. })),
        "{events:?}"
    );
    match switch_event(&events) {
        AgentEvent::ModelSwitched {
            over_budget: Some(over),
            window,
            name,
            ..
        } => {
            assert_eq!(*window, 16_000);
            assert_eq!(over.budget, 13_600);
            assert!(over.tokens > over.budget, "{over:?}");
            let text = rein_core::agent::model_switched_text(name, *window, Some(*over));
            assert!(text.contains("over the new window's budget"), "{text}");
        }
        other => panic!("expected over budget: {other:?}"),
    }
    // The switch stands: the next turn goes to beta.
    let next = turn(&mut handle, "QUESTION-5: go on").await;
    assert_eq!(outcome(&next), TurnOutcome::Completed);
    assert_eq!(alpha.requests().len(), 4);
    let chat = beta.requests().last().cloned().unwrap();
    assert!(!is_compaction(&chat));
    assert_eq!(chat["model"], "model-b");
}

#[tokio::test]
async fn a_switch_sent_during_a_turn_waits_for_its_end() {
    let slow = Reply::sse(vec![
        Step::Data(chunk(json!({ "role": "assistant", "content": "" }), None)),
        Step::Sleep(Duration::from_millis(400)),
        Step::Data(chunk(json!({ "content": "slow answer" }), None)),
        Step::Data(chunk(json!({}), Some("stop"))),
        Step::Done,
    ]);
    let alpha = ScriptedServer::start(vec![slow]).await.unwrap();
    let beta = ScriptedServer::start(vec![say("from beta")]).await.unwrap();
    let f = Fixture::new(&alpha, &beta, 50_000);
    let config = f.config("alpha/model-a");
    let mut handle = rein_core::agent::spawn(agent_for(&config, f.root())).unwrap();
    handle.send(AgentCommand::UserMessage("first".into()));
    events_until(&mut handle, |e| {
        matches!(e, AgentEvent::RequestStarted { .. })
    })
    .await;
    handle.send(switch_to(config.resolve_model("beta/model-b").unwrap()));
    handle.send(AgentCommand::UserMessage("second".into()));
    let first = events_until(&mut handle, |e| {
        matches!(e, AgentEvent::TurnFinished { .. })
    })
    .await;
    assert!(
        !first
            .iter()
            .any(|e| matches!(e, AgentEvent::ModelSwitched { .. })),
        "not during the turn: {first:?}"
    );
    assert_eq!(outcome(&first), TurnOutcome::Completed);
    let rest = events_until(&mut handle, |e| {
        matches!(e, AgentEvent::TurnFinished { .. })
    })
    .await;
    let switched_at = rest
        .iter()
        .position(|e| matches!(e, AgentEvent::ModelSwitched { .. }))
        .expect("switched between the turns");
    let second_at = rest
        .iter()
        .position(|e| matches!(e, AgentEvent::TurnStarted { .. }))
        .unwrap();
    assert!(switched_at < second_at, "{rest:?}");
    assert_eq!(alpha.requests().len(), 1);
    assert_eq!(beta.requests().len(), 1);
    assert!(all_text(&beta.requests()[0]).contains("slow answer"));
}

// ---- the real binary: `rein -p --continue` ----------------------------------------------

fn rein(home: &Path, project: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rein"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("REIN_HOME", home.join("rein-home"))
        .env("BETA_KEY", "sk-beta")
        .arg("--cwd")
        .arg(project)
        .stdin(std::process::Stdio::null());
    cmd
}

fn run(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().expect("rein runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "rein failed: {stderr}");
    stderr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_continue_goes_on_with_the_recorded_model_and_model_wins() {
    let alpha = ScriptedServer::start(vec![say("alpha one"), say("alpha two")])
        .await
        .unwrap();
    let beta = ScriptedServer::start(vec![say("beta three"), say("beta four")])
        .await
        .unwrap();
    let home = TempDir::new().unwrap();
    let project = TempDir::new().unwrap();
    std::fs::create_dir_all(home.path().join("rein-home")).unwrap();
    // The configured model is beta; the first run picks alpha with --model.
    std::fs::write(
        home.path().join("rein-home").join("config.toml"),
        format!(
            "model = \"beta/model-b\"\n{}",
            config_toml(&alpha.base_url(), &beta.base_url(), 50_000)
        ),
    )
    .unwrap();
    let (h, p) = (home.path().to_path_buf(), project.path().to_path_buf());
    let runs = tokio::task::spawn_blocking(move || {
        let one = run(rein(&h, &p).args(["-p", "one", "--model", "alpha/model-a"]));
        let two = run(rein(&h, &p).args(["-p", "two", "--continue"]));
        let three =
            run(rein(&h, &p).args(["-p", "three", "--continue", "--model", "beta/model-b"]));
        let four = run(rein(&h, &p).args(["-p", "four", "--continue"]));
        [one, two, three, four]
    })
    .await
    .unwrap();
    // Two: on alpha, the session's model, not the configured beta.
    assert!(
        runs[1].contains("continuing on alpha/model-a, the model this session last ran on"),
        "{}",
        runs[1]
    );
    let alpha_requests = alpha.requests();
    assert_eq!(alpha_requests.len(), 2, "one and two");
    assert!(all_text(&alpha_requests[1]).contains("alpha one"));
    // Three: --model wins, and says so; the history goes along.
    assert!(
        runs[2].contains(
            "this session last ran on alpha/model-a; --model names another; using beta/model-b"
        ),
        "{}",
        runs[2]
    );
    let beta_requests = beta.requests();
    assert_eq!(beta_requests.len(), 2, "three and four");
    assert_eq!(beta_requests[0]["model"], "model-b");
    let text = all_text(&beta_requests[0]);
    assert!(text.contains("one") && text.contains("alpha two") && text.contains("three"));
    // Four: the session now last ran on beta, which is also the configured model.
    assert!(!runs[3].contains("last ran on"), "{}", runs[3]);
    assert!(all_text(&beta_requests[1]).contains("beta three"));
}
