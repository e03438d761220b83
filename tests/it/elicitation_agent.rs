//! A server's form through the real agent loop: an external call that asks (as an MCP
//! call does, `ExternalTools::call_with`) makes the agent emit `FormRequested`; the
//! front end's `FormAnswer` naming its id reaches the call; an interrupt while the form is
//! open ends the call and closes the form (`FormClosed`), so no turn waits on a form.

use crate::support;

use std::sync::Arc;

use rein_core::agent::{self, AgentCommand, AgentEvent, TurnOutcome};
use rein_core::elicitation::{Form, FormAnswer};
use rein_core::tools::external::{
    CallAids, ExternalCall, ExternalSource, ExternalSpec, ExternalTools,
};
use serde_json::{json, Value};
use support::agent::{events_until, outcome, scripted_config, tool_results};
use support::{Reply, ScriptedServer};

/// A provider whose one tool, `mcp__fake__ask`, asks for a form and answers with what
/// the user said.
struct Asking;

impl ExternalTools for Asking {
    fn specs(&self) -> Vec<ExternalSpec> {
        vec![ExternalSpec {
            name: "mcp__fake__ask".into(),
            description: "asks the user".into(),
            parameters: json!({"type": "object"}),
            source: Some(ExternalSource {
                server: "fake".into(),
                tool: "ask".into(),
                project: false,
                subagents: false,
            }),
        }]
    }

    fn call(&self, _: &str, _: Value) -> ExternalCall {
        Box::pin(async { rein_core::conversation::ToolResult::ok("nobody to ask".to_string()) })
    }

    fn call_with(&self, _: &str, _: Value, aids: CallAids) -> ExternalCall {
        let Some(ask) = aids.ask else {
            return self.call("", Value::Null);
        };
        let form = Form::from_schema(
            "fake",
            "Pick a colour",
            &json!({"type": "object", "properties": {"colour": {"type": "string"}}}),
            None,
        )
        .expect("a form");
        Box::pin(async move {
            let answer = ask.ask(form).await;
            rein_core::conversation::ToolResult::ok(format!("{answer:?}"))
        })
    }
}

async fn started(replies: Vec<Reply>) -> (ScriptedServer, tempfile::TempDir, agent::AgentHandle) {
    let server = ScriptedServer::start(replies).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = scripted_config(&server, dir.path());
    config.external_tools = Some(Arc::new(Asking));
    let handle = agent::spawn(config).expect("the agent starts");
    (server, dir, handle)
}

fn form_id(events: &[AgentEvent]) -> String {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::FormRequested { id, form } => {
                assert_eq!(form.server, "fake");
                Some(id.clone())
            }
            _ => None,
        })
        .expect("a FormRequested event")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answer_to_a_form_reaches_the_call_by_its_id() {
    let (_server, _dir, mut handle) = started(vec![
        Reply::tool_calls(&[("mcp__fake__ask", "{}")]),
        Reply::text("thanks"),
    ])
    .await;
    handle.send(AgentCommand::UserMessage("go".into()));
    let events = events_until(&mut handle, |e| {
        matches!(e, AgentEvent::FormRequested { .. })
    })
    .await;
    let id = form_id(&events);
    // An answer to another id is dropped; the form stays open.
    handle.send(AgentCommand::FormAnswer {
        id: "form-0".into(),
        answer: FormAnswer::Decline,
    });
    let content = json!({"colour": "teal"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    handle.send(AgentCommand::FormAnswer {
        id,
        answer: FormAnswer::Accept(content),
    });
    let events = events_until(&mut handle, |e| {
        matches!(e, AgentEvent::TurnFinished { .. })
    })
    .await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
    let results = tool_results(&events);
    assert!(results[0].1.contains("teal"), "{results:?}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::FormClosed { .. })),
        "an answered form is not withdrawn"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_closes_the_open_form_and_ends_the_turn() {
    let (_server, _dir, mut handle) =
        started(vec![Reply::tool_calls(&[("mcp__fake__ask", "{}")])]).await;
    handle.send(AgentCommand::UserMessage("go".into()));
    let events = events_until(&mut handle, |e| {
        matches!(e, AgentEvent::FormRequested { .. })
    })
    .await;
    let id = form_id(&events);
    handle.send(AgentCommand::Interrupt);
    let events = events_until(&mut handle, |e| {
        matches!(e, AgentEvent::TurnFinished { .. })
    })
    .await;
    assert_eq!(outcome(&events), TurnOutcome::Interrupted);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::FormClosed { id: closed } if *closed == id)),
        "{events:?}"
    );
}
