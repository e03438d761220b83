//! Messages sent during a turn: queued for the next turn, delivered with a tool's result,
//! starting the next turn, dropped by an interrupt or withdrawn.

use crate::support;

use std::time::Duration;

use rein_core::agent::{self, AgentCommand, AgentEvent, AgentHandle, TurnOutcome};
use serde_json::json;
use support::agent::{events_until, outcome, turn};
use support::{chunk, Reply, ScriptedServer, Step};

use super::{config, history, next_event};

#[tokio::test]
async fn messages_sent_during_a_turn_are_queued_for_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::sse(vec![
            Step::Data(chunk(
                json!({"role": "assistant", "content": "first "}),
                None,
            )),
            Step::Sleep(Duration::from_millis(300)),
            Step::Data(chunk(json!({"content": "answer"}), Some("stop"))),
            Step::Done,
        ]),
        Reply::text("second answer"),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    handle.send(AgentCommand::UserMessage("one".into()));
    handle.send(AgentCommand::UserMessage("two".into()));
    let mut finished = 0;
    while finished < 2 {
        let e = next_event(&mut handle).await;
        if let AgentEvent::TurnFinished { outcome } = e {
            assert_eq!(outcome, TurnOutcome::Completed);
            finished += 1;
        }
    }
    let req = &server.requests()[1];
    let msgs = history(req);
    assert_eq!(msgs[1]["content"], "one");
    assert_eq!(msgs[2]["content"], "first answer");
    assert_eq!(msgs[3]["content"], "two");
}

/// Send `first`; once its tool call starts (the command runs a while), send `during`; the
/// events until the turn ends.
async fn turn_sending_while_a_tool_runs(
    handle: &mut AgentHandle,
    first: &str,
    during: Vec<AgentCommand>,
) -> Vec<AgentEvent> {
    handle.send(AgentCommand::UserMessage(first.into()));
    let mut events =
        events_until(handle, |e| matches!(e, AgentEvent::ToolCallStarted { .. })).await;
    for command in during {
        handle.send(command);
    }
    events.extend(events_until(handle, |e| matches!(e, AgentEvent::TurnFinished { .. })).await);
    events
}

/// The texts of the `MessageDelivered` events.
fn delivered(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageDelivered { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_sent_while_a_tool_runs_reaches_the_model_with_its_result() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "bash",
            &json!({"command": "sleep 1; echo built"}).to_string(),
        )]),
        Reply::text("Built, and the linter is next as you asked."),
    ])
    .await
    .unwrap();
    std::fs::write(dir.path().join("lint.md"), "lint rule: no tabs\n").unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    let events = turn_sending_while_a_tool_runs(
        &mut handle,
        "build it",
        vec![AgentCommand::UserMessage(
            "then run the linter, see @lint.md".into(),
        )],
    )
    .await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    assert_eq!(delivered(&events), ["then run the linter, see @lint.md"]);
    // The file it mentions goes with it, and the front end hears so right after.
    let delivered_at = events
        .iter()
        .position(|e| matches!(e, AgentEvent::MessageDelivered { .. }))
        .unwrap();
    assert!(
        matches!(&events[delivered_at + 1], AgentEvent::Attached { paths } if paths == &["lint.md"]),
        "{events:?}"
    );
    // Delivered before the second request, in the same turn: no turn of its own.
    let at = |want: &dyn Fn(&AgentEvent) -> bool| events.iter().position(want).unwrap();
    assert!(
        at(&|e| matches!(e, AgentEvent::MessageDelivered { .. }))
            < at(&|e| matches!(e, AgentEvent::RequestStarted { step: 2 }))
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, AgentEvent::TurnStarted { .. }))
            .count(),
        1
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "one turn, two steps");
    let messages = requests[1]["messages"].as_array().unwrap();
    rein_core::conversation::order::check(messages).unwrap_or_else(|e| panic!("{e}"));
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "tool", "it rides on the result, not after it");
    let text = last["content"].as_str().unwrap();
    let result_at = text.find("built").expect("the result");
    let note_at = text
        .find(rein_core::context::reminder::USER_WROTE)
        .expect("the note");
    assert!(result_at < note_at, "{text}");
    assert!(
        text.contains(&format!(
            "{}\nthen run the linter, see @lint.md",
            rein_core::context::reminder::USER_WROTE
        )),
        "{text}"
    );
    assert!(text.contains("lint rule: no tabs"), "{text}");
    assert!(
        !messages
            .iter()
            .any(|m| m["role"] == "user" && m["content"].as_str().unwrap_or("").contains("linter")),
        "not a user message of its own"
    );
    // Later requests carry the same bytes: the next turn's first request repeats them.
    server.push(Reply::text("Linted."));
    turn(&mut handle, "and now?").await;
    let next = server.requests();
    assert_eq!(next[2]["messages"][3], messages[3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_sent_during_the_last_step_starts_the_next_turn() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "bash",
            &json!({"command": "sleep 1; echo counted"}).to_string(),
        )]),
        // The message arrives after this step's request went out: no step comes after
        // this reply, so the message starts a turn of its own.
        Reply::sse(vec![
            Step::Data(chunk(
                json!({"role": "assistant", "content": "There are "}),
                None,
            )),
            Step::Sleep(Duration::from_millis(400)),
            Step::Data(chunk(json!({"content": "three files."}), Some("stop"))),
            Step::Done,
        ]),
        Reply::text("The largest is main.rs."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    handle.send(AgentCommand::UserMessage("count the files".into()));
    events_until(&mut handle, |e| {
        matches!(e, AgentEvent::RequestStarted { step: 2 })
    })
    .await;
    handle.send(AgentCommand::UserMessage("which is largest?".into()));
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::TurnStarted { .. })).await;
    assert!(delivered(&events).is_empty(), "{events:?}");
    assert!(
        matches!(events.last(), Some(AgentEvent::TurnStarted { text }) if text == "which is largest?")
    );
    events_until(&mut handle, |e| {
        matches!(e, AgentEvent::TurnFinished { .. })
    })
    .await;
    let requests = server.requests();
    let messages = requests[2]["messages"].as_array().unwrap();
    rein_core::conversation::order::check(messages).unwrap_or_else(|e| panic!("{e}"));
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    assert!(last["content"]
        .as_str()
        .unwrap()
        .starts_with("which is largest?"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_drops_the_queue_and_a_withdrawn_message_never_goes() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "bash",
            &json!({"command": "sleep 1; echo first"}).to_string(),
        )]),
        Reply::tool_calls(&[(
            "bash",
            &json!({"command": "sleep 1; echo second"}).to_string(),
        )]),
        Reply::text("Done with the second."),
    ])
    .await
    .unwrap();
    let mut handle = agent::spawn(config(&server, dir.path())).unwrap();
    // Interrupted: what was queued is dropped (the dashboard gives it back to its user).
    let events = turn_sending_while_a_tool_runs(
        &mut handle,
        "start the first",
        vec![
            AgentCommand::UserMessage("queued then dropped".into()),
            AgentCommand::Interrupt,
        ],
    )
    .await;
    assert_eq!(outcome(&events), TurnOutcome::Interrupted);
    // Withdrawn: of two queued, only the other goes.
    let events = turn_sending_while_a_tool_runs(
        &mut handle,
        "start the second",
        vec![
            AgentCommand::UserMessage("keep this one".into()),
            AgentCommand::UserMessage("take this back".into()),
            AgentCommand::Withdraw {
                text: "take this back".into(),
                command: false,
            },
        ],
    )
    .await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    assert_eq!(delivered(&events), ["keep this one"]);
    assert!(
        matches!(events.first(), Some(AgentEvent::TurnStarted { text }) if text == "start the second"),
        "the dropped message started no turn: {events:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let all = serde_json::to_string(&requests).unwrap();
    assert!(!all.contains("queued then dropped"));
    assert!(!all.contains("take this back"));
    assert!(all.contains("keep this one"));
}

/// A message with images sent while a tool runs does not ride on the result (a result's
/// reminder carries only text): it starts the next turn, its images after its words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_with_images_sent_during_a_turn_starts_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("bash", &json!({"command": "sleep 1"}).to_string())]),
        Reply::text("Slept."),
        Reply::text("A dialog box."),
    ])
    .await
    .unwrap();
    let mut config = config(&server, dir.path());
    config.client.images = true;
    let mut handle = agent::spawn(config).unwrap();
    let shot = rein_core::conversation::Image {
        mime_type: "image/png".into(),
        data: "iVBORw0KGgo=".into(),
    };
    let with_image = AgentCommand::UserMessage(rein_core::agent::Prompt {
        text: "and what is this [Image #1: png, 8 B]".into(),
        images: vec![shot],
    });
    let events = turn_sending_while_a_tool_runs(&mut handle, "sleep", vec![with_image]).await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    assert!(delivered(&events).is_empty(), "{events:?}");
    let events = events_until(&mut handle, |e| {
        matches!(e, AgentEvent::TurnFinished { .. })
    })
    .await;
    assert!(events.iter().any(
        |e| matches!(e, AgentEvent::TurnStarted { text } if text.starts_with("and what is this"))
    ));
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "two turns");
    assert!(!requests[1].to_string().contains("and what is this"));
    let messages = requests[2]["messages"].as_array().unwrap();
    rein_core::conversation::order::check(messages).unwrap_or_else(|e| panic!("{e}"));
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    assert!(last["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("and what is this [Image #1: png, 8 B]"));
    assert_eq!(
        last["content"][1]["image_url"]["url"],
        "data:image/png;base64,iVBORw0KGgo="
    );
}
