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
use serde_json::{json, Value};
use support::agent::{agent_config, test_client, turn, API_KEY};
use support::replay::{
    self, assistant_message, attempts, documented_finish, error_messages, native_samples_dir,
    read_index, read_sample, retries, shown_text, streamed_reasoning, streamed_text, usage_of,
    ExpectedOutcome,
};
use support::{Reply, ScriptedServer, Step};

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
// SHA-256, for `echo`'s digests (no crate for a few lines)
// ---------------------------------------------------------------------------------------

fn sha256_16(text: &str) -> String {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut data = text.as_bytes().to_vec();
    let bits = (data.len() as u64) * 8;
    data.push(0x80);
    while data.len() % 64 != 56 {
        data.push(0);
    }
    data.extend_from_slice(&bits.to_be_bytes());
    for block in data.chunks(64) {
        let mut w = [0u32; 64];
        for (i, word) in block.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let mut v = h;
        for i in 0..64 {
            let s1 = v[4].rotate_right(6) ^ v[4].rotate_right(11) ^ v[4].rotate_right(25);
            let ch = (v[4] & v[5]) ^ (!v[4] & v[6]);
            let t1 = v[7]
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = v[0].rotate_right(2) ^ v[0].rotate_right(13) ^ v[0].rotate_right(22);
            let maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
            let t2 = s0.wrapping_add(maj);
            v = [
                t1.wrapping_add(t2),
                v[0],
                v[1],
                v[2],
                v[3].wrapping_add(t1),
                v[4],
                v[5],
                v[6],
            ];
        }
        for (a, b) in h.iter_mut().zip(v) {
            *a = a.wrapping_add(b);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect::<String>()[..16].to_string()
}

#[test]
fn the_digest_is_sha256() {
    // The digests ref_common.py computes (hashlib.sha256(...).hexdigest()[:16]).
    assert_eq!(sha256_16(""), "e3b0c44298fc1c14");
    assert_eq!(sha256_16("abc"), "ba7816bf8f01cfea");
    assert_eq!(sha256_16(&"a".repeat(200)), "c2a908d98f5df987");
}

// ---------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------

/// What answer `k` should have shown, against its attempt's events.
fn check_turn(
    problems: &mut Vec<String>,
    k: usize,
    want: &Value,
    events: &[&AgentEvent],
    last: bool,
) {
    let turn = format!("answer {}", k + 1);
    if let Some(status) = want["http_status"].as_u64() {
        let retried = matches!(events.last(), Some(AgentEvent::Retrying { .. }));
        let failed = !error_messages(events.iter().copied()).is_empty();
        if last && !failed {
            problems.push(format!(
                "{turn} (HTTP {status}) is the last: no error shown"
            ));
        }
        if !last && !retried {
            problems.push(format!(
                "{turn} (HTTP {status}) is not the last, yet not retried"
            ));
        }
        if !streamed_text(events.iter().copied()).is_empty() || assistant_message(events).is_some()
        {
            problems.push(format!("{turn} (HTTP {status}) showed a reply"));
        }
        return;
    }
    let str_of = |key: &str| want[key].as_str().unwrap_or("").to_string();
    let message = assistant_message(events);
    let shown = shown_text(events);
    let refusal = str_of("refusal");
    let text_seen = if refusal.is_empty() {
        shown.clone()
    } else {
        shown.replacen(&refusal, "", 1)
    };
    if text_seen != str_of("text") {
        problems.push(format!(
            "{turn}: text {text_seen:?} instead of {:?}",
            str_of("text")
        ));
    }
    let reasoning = streamed_reasoning(events.iter().copied());
    if reasoning != str_of("reasoning") {
        problems.push(format!("{turn}: reasoning {reasoning:?}"));
    }
    if !refusal.is_empty() && !shown.contains(&refusal) {
        problems.push(format!("{turn}: refusal {refusal:?} not shown"));
    }
    let started: Vec<Value> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallStarted { id, name, args } => {
                Some(json!({"id": id, "name": name, "args": args}))
            }
            _ => None,
        })
        .collect();
    let wanted: Vec<Value> = want["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let raw = c["arguments"].as_str().unwrap();
            let args = serde_json::from_str(raw).unwrap_or_else(|_| json!(raw));
            json!({"id": c["id"], "name": c["name"], "args": args})
        })
        .collect();
    if started != wanted {
        problems.push(format!("{turn}: calls {started:?} instead of {wanted:?}"));
    }
    if want["error"].is_string() {
        if error_messages(events.iter().copied()).is_empty() {
            problems.push(format!("{turn}: the error in the stream was not shown"));
        }
        if message.is_some() {
            problems.push(format!("{turn}: a failed stream made a finished message"));
        }
        return;
    }
    match message {
        None => problems.push(format!("{turn}: no finished message")),
        Some((_, refused, finish)) => {
            // The sample says Anthropic's word; rein says the documented one.
            let documented = want["finish_reason"]
                .as_str()
                .map(|w| documented_finish(w, !wanted.is_empty(), None));
            if finish != documented.as_deref() {
                problems.push(format!(
                    "{turn}: finish reason {finish:?} instead of {documented:?}"
                ));
            }
            if refused == refusal.is_empty() {
                problems.push(format!("{turn}: refusal flag {refused}"));
            }
        }
    }
    let u = &want["usage"];
    match usage_of(events) {
        None => problems.push(format!("{turn}: no usage shown")),
        Some(got) => {
            let got = json!([
                got.prompt_tokens,
                got.completion_tokens,
                got.total_tokens,
                got.cached_tokens,
                got.cache_write_tokens,
                got.estimated
            ]);
            let wanted = json!([
                u["prompt_tokens"],
                u["completion_tokens"],
                u["total_tokens"],
                u["cache_read_tokens"],
                u["cache_creation_tokens"],
                false
            ]);
            if got != wanted {
                problems.push(format!("{turn}: usage {got} instead of {wanted}"));
            }
        }
    }
}

/// How the turn ended, against the sample's `expect`.
fn check_outcome(
    problems: &mut Vec<String>,
    sample: &Sample,
    events: &[AgentEvent],
    elapsed: Duration,
) {
    let expect = &sample.expect;
    let outcome = ExpectedOutcome {
        outcome: &expect.outcome,
        retries: expect.retries,
        retry_delay_ms: expect.retry_delay_ms,
        error_contains: &expect.error_contains,
        ..ExpectedOutcome::default()
    };
    replay::check_outcome(problems, &outcome, events, elapsed);
}

fn kind(block: &Value) -> &str {
    block["type"].as_str().unwrap_or("")
}

/// Whether a request with these messages may have thinking on: not when it ends with
/// tool results whose assistant message does not open with a thinking block.
fn may_think(messages: &[Value]) -> bool {
    let [.., assistant, last] = messages else {
        return true;
    };
    let answers_calls = last["role"] == "user" && kind(&last["content"][0]) == "tool_result";
    !answers_calls
        || matches!(
            kind(&assistant["content"][0]),
            "thinking" | "redacted_thinking"
        )
}

/// Whether a thinking echo entry (of `expect`) can go back: a thinking block streamed
/// with a signature, a redacted one with its data.
fn replayable(entry: &Value) -> bool {
    match entry["type"].as_str() {
        Some("thinking") => entry["signature_len"].as_u64().is_some_and(|n| n > 0),
        Some("redacted_thinking") => entry["data_len"].as_u64().is_some_and(|n| n > 0),
        _ => true,
    }
}

/// The shape of a Messages request and every Anthropic rule of the constraints table;
/// each violation named by its rule.
fn request_violations(request: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if !request["max_tokens"].is_u64() || request["stream"] != true {
        out.push("shape: max_tokens and stream: true are required".into());
    }
    let Some(messages) = request["messages"].as_array() else {
        out.push("shape: no messages".into());
        return out;
    };
    for (i, m) in messages.iter().enumerate() {
        let want = if i % 2 == 0 { "user" } else { "assistant" };
        if m["role"] != want {
            out.push(format!("shape: messages[{i}] is {}, not {want}", m["role"]));
        }
        if m["content"].as_array().is_none_or(|c| c.is_empty()) {
            out.push(format!("shape: messages[{i}] has no content blocks"));
        }
    }
    fn empty_texts(value: &Value, found: &mut usize) {
        match value {
            Value::Object(o) => {
                if o.get("type") == Some(&json!("text"))
                    && o.get("text")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                {
                    *found += 1;
                }
                o.values().for_each(|v| empty_texts(v, found));
            }
            Value::Array(items) => items.iter().for_each(|v| empty_texts(v, found)),
            _ => {}
        }
    }
    let mut empty = 0;
    empty_texts(request, &mut empty);
    if empty > 0 {
        out.push(format!("shape: {empty} empty text block(s)"));
    }
    // anthropic_thinking_echo: a thinking block the API can verify (a signature), a
    // redacted one with its data; with thinking on, a request that ends in tool results
    // has its last assistant message open with thinking.
    for (i, m) in messages.iter().enumerate() {
        for block in m["content"].as_array().into_iter().flatten() {
            let empty = |key: &str| block[key].as_str().is_none_or(str::is_empty);
            let bad = match kind(block) {
                "thinking" => empty("signature"),
                "redacted_thinking" => empty("data"),
                _ => false,
            };
            if bad {
                out.push(format!(
                    "anthropic_thinking_echo: messages[{i}] holds {block}: Invalid `signature` in `thinking` block"
                ));
            }
        }
    }
    if request.get("thinking").is_some() && !may_think(messages) {
        out.push(
            "anthropic_thinking_echo: thinking is on, and the final assistant message does not open with a thinking block"
                .into(),
        );
    }
    // anthropic_cache_control_max4
    let markers = request.to_string().matches("\"cache_control\"").count();
    if markers > 4 {
        out.push(format!(
            "anthropic_cache_control_max4: {markers} cache_control blocks"
        ));
    }
    // anthropic_tool_result_follows
    for (i, m) in messages.iter().enumerate() {
        if m["role"] != "assistant" {
            continue;
        }
        let uses: Vec<&Value> = m["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| kind(b) == "tool_use")
            .map(|b| &b["id"])
            .collect();
        if uses.is_empty() {
            continue;
        }
        let next: Vec<&Value> = messages
            .get(i + 1)
            .filter(|n| n["role"] == "user")
            .and_then(|n| n["content"].as_array())
            .map(|c| {
                c.iter()
                    .take_while(|b| kind(b) == "tool_result")
                    .map(|b| &b["tool_use_id"])
                    .collect()
            })
            .unwrap_or_default();
        if next != uses {
            out.push(format!(
                "anthropic_tool_result_follows: messages[{i}] calls {uses:?}, the next message opens with results for {next:?}"
            ));
        }
    }
    out
}

/// anthropic_thinking_echo: the assistant message that made answer `k`'s calls, in every
/// later request, opens with the blocks `echo` lists, as streamed.
/// (`first` is the number of the first of `requests`, for the messages.)
fn echo_violations(want: &Value, requests: &[Value], first: usize) -> Vec<String> {
    let mut out = Vec::new();
    let (Some(echo), Some(first_call)) = (
        want["echo"].as_array(),
        want["tool_calls"][0]["id"].as_str(),
    ) else {
        return out;
    };
    for (j, request) in requests.iter().enumerate() {
        let Some(message) = request["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|m| {
                m["role"] == "assistant"
                    && m["content"]
                        .as_array()
                        .is_some_and(|c| c.iter().any(|b| b["id"] == first_call))
            })
        else {
            continue;
        };
        let blocks: Vec<&Value> = message["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| kind(b) != "text")
            .collect();
        // A block the API cannot verify (streamed without its signature or data) cannot
        // go back, and the message then goes without any of its thinking.
        if !echo.iter().all(replayable) {
            if blocks
                .iter()
                .any(|b| matches!(kind(b), "thinking" | "redacted_thinking"))
            {
                out.push(format!(
                    "anthropic_thinking_echo: request {}: thinking that cannot be verified went back: {}",
                    j + first,
                    short(message)
                ));
            }
            continue;
        }
        for (e, block) in echo.iter().zip(
            blocks
                .iter()
                .copied()
                .chain(std::iter::repeat(&Value::Null)),
        ) {
            let ok = match e["type"].as_str() {
                Some("thinking") => {
                    let thinking = block["thinking"].as_str().unwrap_or("");
                    let signature = block["signature"].as_str().unwrap_or("");
                    kind(block) == "thinking"
                        && e["thinking_len"] == thinking.chars().count()
                        && e["signature_len"] == signature.chars().count()
                        && e["signature_sha256_16"] == sha256_16(signature)
                }
                Some("redacted_thinking") => {
                    let data = block["data"].as_str().unwrap_or("");
                    kind(block) == "redacted_thinking"
                        && e["data_len"] == data.chars().count()
                        && e["data_sha256_16"] == sha256_16(data)
                }
                Some("tool_use") => kind(block) == "tool_use" && block["id"] == e["id"],
                _ => false,
            };
            if !ok {
                out.push(format!(
                    "anthropic_thinking_echo: request {}: {} sent where the stream had {e}",
                    j + first,
                    short(block)
                ));
            }
        }
        if !message["content"][0]["type"]
            .as_str()
            .is_some_and(|t| t == "thinking" || t == "redacted_thinking")
        {
            out.push(format!(
                "anthropic_thinking_echo: request {}: the assistant message does not open with thinking",
                j + first
            ));
        }
    }
    out
}

fn short(v: &Value) -> String {
    let text = v.to_string();
    text.chars().take(120).collect()
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

rein_test_support::replay_tests! {
    text => "anthropic-text",
    tool_then_text => "anthropic-tool-then-text",
    parallel_tools_then_text => "anthropic-parallel-tools-then-text",
    thinking_text => "anthropic-thinking-text",
    cache_control_tool => "anthropic-cache-control-tool",
    cache_write_then_read => "anthropic-cache-write-then-read",
    refusal => "anthropic-refusal",
    overloaded_error_event => "anthropic-overloaded-error-event",
    overloaded_midstream => "anthropic-overloaded-midstream",
    thinking_dropped_400 => "anthropic-thinking-dropped-400",
    tool_result_missing_400 => "anthropic-tool-result-missing-400",
    cache_control_max4_400 => "anthropic-cache-control-max4-400",
    invalid_key_401 => "anthropic-401-invalid-key",
    model_404 => "anthropic-404-model",
    retry_after_429_then_ok => "anthropic-429-retry-after-then-ok",
    web_search_server_tool => "anthropic-web-search-server-tool",
}

#[test]
fn every_anthropic_sample_has_a_test() {
    let ours: Vec<&str> = index()
        .samples
        .iter()
        .filter(|s| s.api == "anthropic-messages")
        .map(|s| s.name.as_str())
        .collect();
    let mut tested = TESTED.to_vec();
    tested.sort_unstable();
    let mut all = ours.clone();
    all.sort_unstable();
    assert_eq!(tested, all);
}

/// An overload before anything was shown is tried again, as an HTTP 529 is: the error
/// event of a 200 stream, then a 529, then the recorded text.
#[tokio::test]
async fn an_overload_before_any_text_is_retried() {
    let text = sample("anthropic-text");
    let overloaded = &sample("anthropic-overloaded-error-event").responses[0];
    let replies = vec![
        recorded_reply(overloaded),
        Reply::plain(
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )
        .with_header("content-type", "application/json"),
        recorded_reply(&text.responses[0]),
    ];
    let run = run(text, replies, None).await;
    let retried = retries(&run.events);
    assert_eq!(retried.len(), 2, "{retried:?}");
    assert!(
        retried
            .iter()
            .all(|(_, reason)| reason.contains("Overloaded")),
        "{retried:?}"
    );
    assert!(
        error_messages(&run.events).is_empty(),
        "{:?}",
        error_messages(&run.events)
    );
    let attempts = attempts(&run.events);
    let mut problems = Vec::new();
    check_turn(&mut problems, 2, &text.expect.turns[0], &attempts[2], true);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(run.requests.len(), 3);
    assert_eq!(
        run.requests[0], run.requests[2],
        "a retry sends the same request"
    );
}

/// The checkers catch what they are for: each rule broken once in a request that is
/// otherwise fine.
#[test]
fn the_checkers_catch_what_they_are_for() {
    let good = json!({
        "model": "m", "max_tokens": 10, "stream": true,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "u"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "t", "signature": "s"},
                {"type": "tool_use", "id": "a", "input": {}},
                {"type": "tool_use", "id": "b", "input": {}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "a"},
                {"type": "tool_result", "tool_use_id": "b", "cache_control": {"type": "ephemeral"}}
            ]}
        ]
    });
    assert_eq!(request_violations(&good), Vec::<String>::new());
    let broken = |f: &dyn Fn(&mut Value), rule: &str| {
        let mut r = good.clone();
        f(&mut r);
        let v = request_violations(&r);
        assert!(v.iter().any(|p| p.starts_with(rule)), "{rule}: {v:?}");
    };
    broken(
        &|r| {
            r["messages"][2]["content"]
                .as_array_mut()
                .unwrap()
                .swap(0, 1)
        },
        "anthropic_tool_result_follows",
    );
    broken(
        &|r| {
            r["messages"][2]["content"]
                .as_array_mut()
                .unwrap()
                .insert(0, json!({"type": "text", "text": "x"}));
        },
        "anthropic_tool_result_follows",
    );
    broken(
        &|r| {
            r["messages"].as_array_mut().unwrap().pop();
        },
        "anthropic_tool_result_follows",
    );
    broken(
        &|r| {
            let marker = json!({"type": "ephemeral"});
            r["system"] =
                json!([1, 2, 3, 4]
                    .map(|_| json!({"type": "text", "text": "s", "cache_control": marker})));
        },
        "anthropic_cache_control_max4",
    );
    broken(
        &|r| r["messages"][0]["content"][0]["text"] = json!(""),
        "shape",
    );
    broken(&|r| r["messages"][0]["role"] = json!("assistant"), "shape");
    broken(
        &|r| r["messages"][1]["content"][0]["signature"] = json!(""),
        "anthropic_thinking_echo",
    );
    broken(
        &|r| r["messages"][1]["content"][0] = json!({"type": "redacted_thinking"}),
        "anthropic_thinking_echo",
    );
    broken(
        &|r| {
            r["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
            r["messages"][1]["content"]
                .as_array_mut()
                .unwrap()
                .remove(0);
        },
        "anthropic_thinking_echo",
    );

    let want = json!({
        "tool_calls": [{"id": "a"}],
        "echo": [
            {"type": "thinking", "thinking_len": 1, "signature_len": 1, "signature_sha256_16": sha256_16("s")},
            {"type": "tool_use", "id": "a"}
        ]
    });
    assert_eq!(
        echo_violations(&want, std::slice::from_ref(&good), 1),
        Vec::<String>::new()
    );
    let mut changed = good.clone();
    changed["messages"][1]["content"][0]["signature"] = json!("S");
    assert_eq!(echo_violations(&want, &[changed], 1).len(), 1);
    let mut dropped = good.clone();
    dropped["messages"][1]["content"]
        .as_array_mut()
        .unwrap()
        .remove(0);
    assert!(!echo_violations(&want, &[dropped.clone()], 1).is_empty());
    // Streamed without its signature: it must not go back, nor its message's other
    // thinking.
    let unsigned = json!({
        "tool_calls": [{"id": "a"}],
        "echo": [
            {"type": "redacted_thinking", "data_len": 1, "data_sha256_16": sha256_16("d")},
            {"type": "thinking", "thinking_len": 1, "signature_len": 0, "signature_sha256_16": null},
            {"type": "tool_use", "id": "a"}
        ]
    });
    assert_eq!(
        echo_violations(&unsigned, &[dropped], 1),
        Vec::<String>::new()
    );
    assert_eq!(echo_violations(&unsigned, &[good], 1).len(), 1);
}

/// An Anthropic stream for the scripted server: `blocks` (each a content block's start
/// and its deltas) between `message_start` and the stop reason.
fn anthropic_stream(blocks: Vec<(Value, Vec<Value>)>, stop_reason: &str) -> Reply {
    let mut events = vec![json!({"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
        "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}})];
    for (index, (start, deltas)) in blocks.into_iter().enumerate() {
        events.push(json!({"type": "content_block_start", "index": index, "content_block": start}));
        for delta in deltas {
            events.push(json!({"type": "content_block_delta", "index": index, "delta": delta}));
        }
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events.push(
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason},
        "usage": {"output_tokens": 5}}),
    );
    events.push(json!({"type": "message_stop"}));
    Reply::sse(events.into_iter().map(Step::Data).collect())
}

fn text_answer(text: &str) -> Reply {
    anthropic_stream(
        vec![(
            json!({"type": "text", "text": ""}),
            vec![json!({"type": "text_delta", "text": text})],
        )],
        "end_turn",
    )
}

/// What Anthropic answers a request that breaks its thinking rules: 400, as the service
/// words it (a thinking block without a valid signature; thinking on while the last
/// assistant message, whose calls are being answered, does not open with thinking).
fn anthropic_rules() -> support::Router {
    std::sync::Arc::new(|request: &Value| {
        let problems: Vec<String> = request_violations(request)
            .into_iter()
            .filter(|p| p.starts_with("anthropic_thinking_echo"))
            .collect();
        let first = problems.first()?;
        let message = if first.contains("signature") {
            "messages.1.content.0: Invalid `signature` in `thinking` block"
        } else {
            "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block"
        };
        Some(Reply::plain(
            400,
            &json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
                .to_string(),
        ))
    })
}

/// Issue 42: a thinking block whose `signature_delta` never came (and a redacted one
/// without its data) was sent back with `"signature": ""`, and Anthropic refused that
/// request and every later one. Through the real agent and client against a server that
/// answers 400 as Anthropic does: the call's follow-up, the next turn, and the session
/// resumed from its file (which keeps the block as it streamed) all go through; signed
/// thinking of another reply still goes back as it streamed.
#[tokio::test]
async fn thinking_without_a_signature_never_poisons_the_session() {
    let call = |id: &str, command: &str| {
        (
            json!({"type": "tool_use", "id": id, "name": "bash", "input": {}}),
            vec![json!({"type": "input_json_delta",
                "partial_json": json!({"command": command}).to_string()})],
        )
    };
    let thinking = |text: &str, signature: Option<&str>| {
        let mut deltas = vec![json!({"type": "thinking_delta", "thinking": text})];
        if let Some(signature) = signature {
            deltas.push(json!({"type": "signature_delta", "signature": signature}));
        }
        (
            json!({"type": "thinking", "thinking": "", "signature": ""}),
            deltas,
        )
    };
    let server = ScriptedServer::start_routed(
        vec![
            // Turn 1: signed thinking, then a call.
            anthropic_stream(
                vec![
                    thinking("plan", Some("SIGNED-1")),
                    call("toolu_1", "echo one"),
                ],
                "tool_use",
            ),
            text_answer("One done."),
            // Turn 2: a signed block, one whose signature never came, a redacted block
            // without data, then a call.
            anthropic_stream(
                vec![
                    thinking("signed part", Some("SIGNED-2")),
                    thinking("unsigned part", None),
                    (json!({"type": "redacted_thinking"}), vec![]),
                    call("toolu_2", "echo two"),
                ],
                "tool_use",
            ),
            text_answer("Two done."),
            text_answer("Three done."),
            text_answer("Resumed."),
        ],
        anthropic_rules(),
    )
    .await
    .unwrap();
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let config = || {
        let mut client = test_client(server.base_url(), API_KEY, "claude-sonnet-4-5");
        client.api = Api::Anthropic;
        client.idle_timeout = IDLE_TIMEOUT;
        client.thinking_budget = Some(THINKING_BUDGET);
        agent_config(client, project.path())
    };
    let (mut agent, path) = support::agent::spawn_recorded(config(), data.path());
    for (prompt, said) in [
        ("one", "One done."),
        ("two", "Two done."),
        ("three", "Three done."),
    ] {
        let events = turn(&mut agent, prompt).await;
        assert!(
            error_messages(&events).is_empty(),
            "{prompt}: {:?}",
            error_messages(&events)
        );
        assert!(
            streamed_text(&events).ends_with(said),
            "{prompt}: {events:#?}"
        );
    }
    agent.shut_down().await;
    // The session file keeps the reply as it streamed, the empty signature too (an older
    // rein's file holds the same); resumed from it, nothing of it goes back.
    let file = std::fs::read_to_string(&path).unwrap();
    assert!(file.contains(r#""signature":"""#), "{file}");
    let loaded = rein_core::session::load(&path).unwrap();
    let mut agent = support::agent::spawn_resumed(config(), loaded, data.path());
    let events = turn(&mut agent, "four").await;
    assert!(
        error_messages(&events).is_empty(),
        "{:?}",
        error_messages(&events)
    );
    assert_eq!(streamed_text(&events), "Resumed.");

    let requests = server.requests();
    assert_eq!(requests.len(), 6, "no request refused and retried");
    for (j, request) in requests.iter().enumerate() {
        assert_eq!(
            request_violations(request),
            Vec::<String>::new(),
            "request {}",
            j + 1
        );
    }
    // Turn 1's signed thinking goes back, as streamed, in every later request.
    for request in &requests[1..] {
        assert_eq!(
            request["messages"][1]["content"][0]["signature"],
            "SIGNED-1"
        );
    }
    // Turn 2's follow-up: its message without any of its thinking, and thinking off for
    // that request alone (the API's rule while those calls are answered).
    let follow_up = &requests[3];
    let last_assistant = &follow_up["messages"].as_array().unwrap()[5];
    let kinds: Vec<&str> = last_assistant["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(kind)
        .collect();
    assert_eq!(kinds, ["tool_use"], "{follow_up:#}");
    assert!(follow_up.get("thinking").is_none());
    assert!(!follow_up.to_string().contains("SIGNED-2"));
    for request in [
        &requests[0],
        &requests[1],
        &requests[2],
        &requests[4],
        &requests[5],
    ] {
        assert!(request.get("thinking").is_some(), "{request:#}");
    }
}
