//! What a request holds and the window it fits: a new conversation, max output tokens, the
//! reply capped by what is left of a known window, cache markers through a gateway, and
//! waiting for the window's answer before compacting.

use crate::support;

use std::path::Path;
use std::time::Duration;

use rein_core::agent::{self, AgentCommand, AgentEvent, TurnOutcome};
use serde_json::Value;
use support::agent::{events_until, outcome, turn, MODEL};
use support::{Reply, ScriptedServer};

use super::{config, history};

#[tokio::test]
async fn a_new_conversation_forgets_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("first"), Reply::text("second")])
        .await
        .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn(&mut handle, "remember the number 42").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    handle.send(AgentCommand::NewConversation);
    let events = turn(&mut handle, "what was the number?").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let msgs = history(&server.requests()[1]);
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user"]);
    assert_eq!(msgs[1]["content"], "what was the number?");
}

#[tokio::test]
async fn max_output_tokens_is_sent_as_max_tokens_only_when_set() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("short"), Reply::text("long")])
        .await
        .unwrap();
    let mut limited = config(&server, dir.path());
    limited.client.max_output_tokens = Some(64);
    let mut handle = agent::spawn(limited).unwrap();
    turn(&mut handle, "hi").await;
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    turn(&mut handle, "hi").await;
    let requests = server.requests();
    assert_eq!(requests[0]["max_tokens"], 64);
    assert!(requests[1].get("max_tokens").is_none(), "{}", requests[1]);
}

#[tokio::test]
async fn a_known_window_caps_each_reply_at_what_is_left_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("a"),
        Reply::text("b"),
        Reply::text("c"),
        Reply::text("d"),
    ])
    .await
    .unwrap();
    let run = |window: u64, known: bool, auto: bool| {
        let mut c = config(&server, dir.path());
        c.client.auto_output_cap = auto;
        c.context.window = window;
        c.context.window_known = known;
        c
    };
    for c in [
        run(8_192, true, true),
        run(1_000_000, true, true),
        run(8_192, false, true),
        run(8_192, true, false),
    ] {
        let mut handle = agent::spawn(c).unwrap();
        turn(&mut handle, "hi").await;
    }
    let requests = server.requests();
    // A small window: what is left once the request (and a tenth more) is in.
    let small = requests[0]["max_tokens"].as_u64().unwrap();
    assert!((4_000..8_192).contains(&small), "{small}");
    // A large one: at most 32k.
    assert_eq!(requests[1]["max_tokens"], 32_768);
    // A window that is only a default guess, or the cap turned off (0): nothing sent.
    assert!(requests[2].get("max_tokens").is_none(), "{}", requests[2]);
    assert!(requests[3].get("max_tokens").is_none(), "{}", requests[3]);
}

#[tokio::test]
async fn claude_through_a_gateway_gets_cache_markers_on_the_stable_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", r#"{"command":"echo hi"}"#)]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let mut claude = config(&server, dir.path());
    claude.client.model = "anthropic/claude-sonnet-4.5".into();
    let mut handle = agent::spawn(claude).unwrap();
    turn(&mut handle, "say hi").await;
    let requests = server.requests();
    let marked = |m: &Value| {
        m["content"].as_array().is_some_and(|parts| {
            parts
                .iter()
                .any(|p| p["cache_control"]["type"] == "ephemeral")
        })
    };
    // The system message and the last two user or tool messages carry the marker; the
    // marked text is the whole content, reminder included.
    let first = requests[0]["messages"].as_array().unwrap();
    assert!(marked(&first[0]) && marked(&first[1]), "{first:?}");
    assert!(first[1]["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("say hi\n\n(rein context"));
    let second = requests[1]["messages"].as_array().unwrap();
    let flags: Vec<bool> = second.iter().map(marked).collect();
    assert_eq!(flags, [true, true, false, true], "{second:?}");
    // Another model gets plain strings.
    let plain = ScriptedServer::start(vec![Reply::text("ok")])
        .await
        .unwrap();
    let mut handle = agent::spawn(config(&plain, dir.path())).unwrap();
    turn(&mut handle, "hi").await;
    assert!(plain.requests()[0]["messages"][0]["content"].is_string());
}

// ---- the window asked of the server in the background ------------------------------------

/// The settings for `server` with no window configured: the server is asked for it
/// (`GET /props` first), as `rein` asks when it starts.
fn unconfigured_target(server: &ScriptedServer, home: &Path) -> rein_core::config::ModelTarget {
    let env = rein_core::config::Environment {
        vars: std::collections::HashMap::from([(
            "REIN_HOME".to_string(),
            home.join("rein-home").display().to_string(),
        )]),
        home: Some(home.to_path_buf()),
    };
    let overrides = rein_core::config::Overrides {
        base_url: Some(server.base_url()),
        model: Some(MODEL.to_string()),
        ..Default::default()
    };
    let config = rein_core::config::Config::load(home, &overrides, &env).unwrap();
    assert_ne!(config.discovery, rein_core::config::Discovery::None);
    config.target()
}

fn learnt(events: &[AgentEvent]) -> Option<(u64, Option<String>)> {
    events.iter().find_map(|e| match e {
        AgentEvent::WindowLearnt { window, url } => Some((*window, url.clone())),
        _ => None,
    })
}

#[tokio::test]
async fn a_small_first_message_goes_before_a_slow_window_answer() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![Reply::text("hello back")])
        .await
        .unwrap();
    server.answer_props(8_192, Duration::ZERO);
    let target = unconfigured_target(&server, dir.path());
    // The question stays open until the test answers it, after the turn: no clock decides
    // what comes first. A turn that waited for the answer would wait `ANSWER_WAIT`, give
    // up and say so (a `WindowLearnt` without a URL) inside the turn.
    let (answer, watch) = rein_core::agent::window::channel();
    let mut handle =
        agent::spawn_learning_window(config(&server, dir.path()), None, Some(watch)).unwrap();
    let events = turn(&mut handle, "hello").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    assert_eq!(learnt(&events), None, "the turn waited for the window");
    assert_eq!(server.requests().len(), 1);

    // The answer (the server's own, asked as `discover::ask` asks it; the limit is a
    // guard against a hang) comes while the agent waits for the next message: said, then
    // counted.
    let found =
        rein_core::config::discover::context_window_within(&target, Duration::from_secs(120))
            .await
            .expect("the server says its window");
    assert_eq!(server.probes(), 1, "the server was asked");
    answer
        .send(rein_core::agent::window::WindowProbe::Answered(
            rein_core::agent::window::Answer::Reported {
                tokens: found.tokens,
                url: found.url,
            },
        ))
        .unwrap();
    let later = events_until(&mut handle, |e| matches!(e, AgentEvent::Context(_))).await;
    let (window, url) = learnt(&later).expect("the window was learnt");
    assert_eq!(window, 8_192);
    assert!(url.unwrap_or_default().ends_with("/props"));
    assert!(matches!(later.last(), Some(AgentEvent::Context(s)) if s.window == 8_192));
    handle.shut_down().await;
}

#[tokio::test]
async fn a_large_history_waits_for_the_window_before_it_is_compacted() {
    let dir = tempfile::tempdir().unwrap();
    // The first reply is long (10 000 tokens at four characters a token): the history
    // fits the default 128k window, not the server's 8k.
    let server = ScriptedServer::start(vec![
        // (Numbered sentences: one repeated exactly would be stopped as a runaway.)
        Reply::text(
            &(0..2_700)
                .map(|i| format!("a reply {i:04}. "))
                .collect::<String>(),
        )
        .with_usage_from_request(4.0),
        // The long answer is summarised in two pieces (each must fit the 8k window).
        Reply::text("the handoff note: a long answer").with_usage_from_request(4.0),
        Reply::text("the handoff note: a long answer was given").with_usage_from_request(4.0),
        Reply::text("going on").with_usage_from_request(4.0),
    ])
    .await
    .unwrap();
    server.answer_props(8_192, Duration::ZERO);
    let target = unconfigured_target(&server, dir.path());
    // The question stays open until the test answers it: no clock decides what comes
    // first (the answer a `rein` would get from this server comes once the second message
    // is sent, so a turn that did not wait for it would most likely compact nothing).
    let (answer, watch) = rein_core::agent::window::channel();
    let mut handle =
        agent::spawn_learning_window(config(&server, dir.path()), None, Some(watch)).unwrap();
    let first = turn(&mut handle, "tell me everything").await;
    assert_eq!(outcome(&first), TurnOutcome::Completed);
    assert_eq!(
        learnt(&first),
        None,
        "the first message went before the answer"
    );

    // The server's own answer, asked as `discover::ask` asks it (the limit is a guard
    // against a hang).
    let found =
        rein_core::config::discover::context_window_within(&target, Duration::from_secs(120))
            .await
            .expect("the server says its window");
    // The message first, then the answer: the turn, which fits the message before it
    // starts, has only the answer to wait for.
    assert!(handle.send(AgentCommand::UserMessage("go on".into())));
    answer
        .send(rein_core::agent::window::WindowProbe::Answered(
            rein_core::agent::window::Answer::Reported {
                tokens: found.tokens,
                url: found.url,
            },
        ))
        .unwrap();
    let second = events_until(&mut handle, |e| {
        matches!(e, AgentEvent::TurnFinished { .. })
    })
    .await;
    assert_eq!(outcome(&second), TurnOutcome::Completed, "{second:#?}");
    let position = |wanted: fn(&AgentEvent) -> bool| second.iter().position(wanted);
    let learnt_at = position(|e| matches!(e, AgentEvent::WindowLearnt { window: 8_192, .. }))
        .expect("the window was learnt in the second turn");
    let compacted_at = position(|e| matches!(e, AgentEvent::CompactionStarted { auto: true, .. }))
        .unwrap_or_else(|| panic!("no compaction: {second:#?}"));
    let requested_at =
        position(|e| matches!(e, AgentEvent::RequestStarted { .. })).expect("a request");
    assert!(learnt_at < compacted_at, "{second:#?}");
    assert!(compacted_at < requested_at, "{second:#?}");
    // The main request after the compaction fits the learnt window's budget.
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let last = requests[3].to_string();
    assert!(last.len() < 8_192 * 4, "{} characters", last.len());
    handle.shut_down().await;
}

#[tokio::test]
async fn compact_waits_for_the_window_it_is_a_share_of() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text("a reply").with_usage_from_request(4.0),
        Reply::text("the handoff note").with_usage_from_request(4.0),
    ])
    .await
    .unwrap();
    server.answer_props(16_384, Duration::from_millis(800));
    let watch = rein_core::config::discover::ask(unconfigured_target(&server, dir.path()));
    let mut handle =
        agent::spawn_learning_window(config(&server, dir.path()), None, watch).unwrap();
    let first = turn(&mut handle, "hi").await;
    assert_eq!(learnt(&first), None);
    assert!(handle.send(AgentCommand::Compact { focus: None }));
    let events = events_until(&mut handle, |e| {
        matches!(
            e,
            AgentEvent::Compacted { .. } | AgentEvent::CompactionFailed { .. }
        )
    })
    .await;
    let learnt_at = events
        .iter()
        .position(|e| matches!(e, AgentEvent::WindowLearnt { window: 16_384, .. }))
        .unwrap_or_else(|| panic!("no window learnt: {events:#?}"));
    let started_at = events
        .iter()
        .position(|e| matches!(e, AgentEvent::CompactionStarted { .. }))
        .unwrap_or_else(|| panic!("no compaction: {events:#?}"));
    assert!(learnt_at < started_at, "{events:#?}");
    handle.shut_down().await;
}
