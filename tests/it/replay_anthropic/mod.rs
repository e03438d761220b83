//! Recorded Anthropic Messages API answers replayed against the real agent (issue 27).
//!
//! `tests/provider-samples/native/` holds answers recorded from `POST /v1/messages` and
//! `index.json`, which says for each sample the prompt, the k-th answer (file, status,
//! headers), what a careful client shows for it (`expect.turns`, computed by
//! `ref_anthropic.py`) and the rules the provider applies to the next request
//! (`constraints`). One test per `anthropic-*` sample: the scripted server serves the
//! sample's answers byte for byte, in order, one per request; the agent, speaking
//! `Api::Anthropic`, gets the prompt and runs one turn with the real client and the real
//! tools (the samples' tools, `weather`, `add`, ..., are not rein's: they get an error
//! result and the agent goes on, which is all the next request needs). Then the test
//! checks:
//!
//! - every request went to `/v1/messages` with `x-api-key` and `anthropic-version` (and
//!   no bearer token), and is a Messages request (model, `max_tokens`, `stream`, roles
//!   alternating from a user message, no empty text block);
//! - what rein showed, per answer: text, reasoning, refusal, tool calls, finish reason,
//!   usage (cache reads and writes included); an HTTP error shows a retry or the turn's
//!   error; an error event in the stream shows the error;
//! - how the turn ended: outcome, retries (their delay where the sample says), the error's
//!   words;
//! - every request against every Anthropic rule of the `constraints` table (whichever
//!   sample lists it): each `tool_use` answered by a `tool_result` at the start of the next
//!   user message, in order; at most four `cache_control` blocks; and the thinking blocks
//!   streamed before a call sent back first in its assistant message, their thinking and
//!   signature exactly as streamed (compared by length and SHA-256 with `expect`'s `echo`,
//!   so this file holds no copy of them).
//!
//! A sample whose second answer is the 400 a broken follow-up gets ("thinking dropped",
//! "tool_result missing") is still served that 400: the test checks that the follow-up rein
//! sent keeps the rule, not that the server complained.

use crate::support;

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rein_core::agent::{AgentEvent, TurnOutcome};
use rein_core::conversation::Api;
use serde::Deserialize;
use serde_json::Value;
use support::agent::{agent_config, test_client, turn, API_KEY};
use support::replay::{self, attempts, native_samples_dir, read_index, read_sample};
use support::{Reply, ScriptedServer, Step};

use check::{check_outcome, check_turn, echo_violations, may_think, request_violations};

mod check;
mod checkers;
mod digest;
mod samples;
mod thinking;

const IDLE_TIMEOUT: Duration = Duration::from_secs(10);
/// The thinking budget of a sample whose model thinks.
const THINKING_BUDGET: u64 = 2_048;

#[derive(Debug, Deserialize)]
struct Index {
    constraints: BTreeMap<String, Value>,
    samples: Vec<Sample>,
}

#[derive(Debug, Deserialize)]
struct Sample {
    name: String,
    api: String,
    model: String,
    prompt: String,
    #[serde(default)]
    constraints: Vec<String>,
    responses: Vec<Recorded>,
    expect: Expect,
}

#[derive(Debug, Deserialize)]
struct Recorded {
    file: String,
    status: u16,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
struct Expect {
    turns: Vec<Value>,
    outcome: String,
    retries: usize,
    #[serde(default)]
    error_contains: Vec<String>,
    retry_delay_ms: Option<u64>,
    #[serde(default)]
    refusal_visible: bool,
}

fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| read_index(&native_samples_dir()))
}

fn sample(name: &str) -> &'static Sample {
    index()
        .samples
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no sample {name:?}"))
}

/// The scripted reply for a recorded answer: status, headers and body byte for byte.
fn recorded_reply(recorded: &Recorded) -> Reply {
    replay::recorded_reply(
        &recorded.file,
        recorded.status,
        &recorded.headers,
        read_sample(&native_samples_dir(), &recorded.file),
        |body| vec![Step::Bytes(body)],
    )
}

// ---------------------------------------------------------------------------------------
// The replay
// ---------------------------------------------------------------------------------------

/// What a replay saw.
struct Run {
    events: Vec<AgentEvent>,
    requests: Vec<Value>,
    paths: Vec<String>,
    headers: Vec<Vec<(String, String)>>,
    elapsed: Duration,
}

async fn run(sample: &Sample, replies: Vec<Reply>, max_tries: Option<u32>) -> Run {
    let server = ScriptedServer::start(replies).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut client = test_client(server.base_url(), API_KEY, &sample.model);
    client.api = Api::Anthropic;
    client.idle_timeout = IDLE_TIMEOUT;
    let thinks = sample.expect.turns.iter().any(|t| {
        t["provider_state"]
            .as_array()
            .is_some_and(|s| !s.is_empty())
    });
    if thinks {
        client.thinking_budget = Some(THINKING_BUDGET);
    }
    if let Some(tries) = max_tries {
        client.max_tries = tries;
    }
    let mut handle = rein_core::agent::spawn(agent_config(client, dir.path())).unwrap();
    let started = Instant::now();
    let mut events = turn(&mut handle, &sample.prompt).await;
    // Answers left after a completed turn are for the user's next message (the cache
    // samples send the same prompt twice).
    while server.remaining() > 0
        && matches!(
            events.last(),
            Some(AgentEvent::TurnFinished {
                outcome: TurnOutcome::Completed
            })
        )
    {
        events.extend(turn(&mut handle, &sample.prompt).await);
    }
    Run {
        events,
        elapsed: started.elapsed(),
        requests: server.requests(),
        paths: server.request_paths(),
        headers: server.request_headers(),
    }
}

/// `value` without its `cache_control` markers.
fn unmarked(value: &Value) -> Value {
    match value {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| *k != "cache_control")
                .map(|(k, v)| (k.clone(), unmarked(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(unmarked).collect()),
        other => other.clone(),
    }
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// What every request of a run must be, whatever the sample: the endpoint, the headers,
/// the shape and the rules.
fn check_requests(problems: &mut Vec<String>, sample: &Sample, run: &Run) {
    for (j, path) in run.paths.iter().enumerate() {
        if path != "/v1/messages" {
            problems.push(format!("request {} went to {path}", j + 1));
        }
    }
    for (j, headers) in run.headers.iter().enumerate() {
        if header(headers, "x-api-key") != Some(API_KEY) {
            problems.push(format!(
                "request {}: x-api-key {:?}",
                j + 1,
                header(headers, "x-api-key")
            ));
        }
        if header(headers, "anthropic-version") != Some("2023-06-01") {
            problems.push(format!("request {}: no anthropic-version", j + 1));
        }
        if header(headers, "authorization").is_some() {
            problems.push(format!("request {}: a bearer token besides the key", j + 1));
        }
    }
    for (j, request) in run.requests.iter().enumerate() {
        if request["model"] != sample.model.as_str() {
            problems.push(format!("request {}: model {}", j + 1, request["model"]));
        }
        for v in request_violations(request) {
            problems.push(format!("request {}: {v}", j + 1));
        }
        let thinking = request.get("thinking").is_some();
        let thinks = sample.expect.turns.iter().any(|t| {
            t["provider_state"]
                .as_array()
                .is_some_and(|s| !s.is_empty())
        });
        // Thinking is on for a model that thinks, unless the request ends with the
        // results of calls whose thinking could not go back (the API takes it then only
        // with thinking off).
        let messages = request["messages"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        let wanted = thinks && may_think(messages);
        if thinking != wanted {
            problems.push(format!(
                "request {}: thinking {thinking}, the model thinks: {thinks}",
                j + 1
            ));
        }
        if let Some(budget) = request["thinking"]["budget_tokens"].as_u64() {
            if request["max_tokens"].as_u64().is_none_or(|m| m <= budget) {
                problems.push(format!(
                    "request {}: max_tokens not above the budget",
                    j + 1
                ));
            }
        }
    }
    // Each request extends the one before (the cache markers aside), and the tools and
    // the system prompt, marked in both, are the same bytes: what was written to the cache
    // is read back.
    for pair in run.requests.windows(2) {
        let (before, after) = (unmarked(&pair[0]), unmarked(&pair[1]));
        let (Some(old), Some(new)) = (before["messages"].as_array(), after["messages"].as_array())
        else {
            continue;
        };
        if new.len() < old.len() || new[..old.len()] != old[..] {
            problems.push("a request does not extend the one before it".into());
        }
        for key in ["system", "tools"] {
            if pair[0].get(key) != pair[1].get(key) {
                problems.push(format!("the {key} changed between requests"));
            }
        }
    }
    // Each turn's own echo, in the requests after it.
    for (k, want) in sample.expect.turns.iter().enumerate() {
        if let Some(later) = run.requests.get(k + 1..) {
            problems.extend(echo_violations(want, later, k + 2));
        }
    }
    // A call answered in the next request: it must be there, after the call's turn.
    for (k, want) in sample.expect.turns.iter().enumerate() {
        let calls = want["tool_calls"].as_array().cloned().unwrap_or_default();
        if calls.is_empty() {
            continue;
        }
        let Some(next) = run.requests.get(k + 1) else {
            continue;
        };
        let ids: Vec<&Value> = calls.iter().map(|c| &c["id"]).collect();
        let answered = next["messages"].as_array().into_iter().flatten().any(|m| {
            m["role"] == "user"
                && m["content"].as_array().is_some_and(|c| {
                    c.iter()
                        .map(|b| &b["tool_use_id"])
                        .take(ids.len())
                        .eq(ids.iter().copied())
                })
        });
        if !answered {
            problems.push(format!(
                "request {}: the calls {ids:?} are not answered",
                k + 2
            ));
        }
    }
}

/// Replays sample `name` and fails listing every problem found.
async fn replay(name: &str) {
    let sample = sample(name);
    assert_eq!(sample.api, "anthropic-messages");
    assert_eq!(sample.responses.len(), sample.expect.turns.len());
    for c in &sample.constraints {
        assert!(
            index().constraints.contains_key(c),
            "{name}: constraint {c} not in the table"
        );
    }
    let replies = sample.responses.iter().map(recorded_reply).collect();
    // One recorded answer to an overload rein retries: the sample's single attempt.
    let max_tries = (name == "anthropic-overloaded-error-event").then_some(1);
    let run = run(sample, replies, max_tries).await;

    let mut problems = Vec::new();
    if run.requests.len() != sample.responses.len() {
        problems.push(format!(
            "{} requests for {} recorded answers",
            run.requests.len(),
            sample.responses.len()
        ));
    }
    let attempts = attempts(&run.events);
    if attempts.len() != sample.responses.len() {
        problems.push(format!("the events show {} requests", attempts.len()));
    }
    for (k, (want, events)) in sample.expect.turns.iter().zip(&attempts).enumerate() {
        check_turn(
            &mut problems,
            k,
            want,
            events,
            k + 1 == sample.expect.turns.len(),
        );
    }
    if sample.expect.refusal_visible {
        let refused = run
            .events
            .iter()
            .any(|e| matches!(e, AgentEvent::AssistantMessage { refusal: true, .. }));
        if !refused {
            problems.push("the refusal is not marked as one".into());
        }
    }
    check_outcome(&mut problems, sample, &run.events, run.elapsed);
    check_requests(&mut problems, sample, &run);
    assert!(
        problems.is_empty(),
        "sample {name} ({}): {} problem(s)\n  - {}\n",
        sample.constraints.join(", "),
        problems.len(),
        problems.join("\n  - ")
    );
}
