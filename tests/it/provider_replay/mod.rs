//! Recorded provider responses replayed against the real agent.
//!
//! `tests/provider-samples/` holds responses recorded from real chat-completions servers
//! (OpenAI, Azure, OpenRouter, Groq, DeepSeek, Mistral, Gemini, vLLM, llama.cpp, Ollama, ...)
//! and `index.json`, which says for each sample the user's prompt, the k-th response (file,
//! status, headers, how it was written: whole, a few bytes at a time, or with pauses between
//! events), what a careful client shows for it (`expect`) and which rules the provider
//! applies to the request that follows (`constraints`). The copy in the repository keeps the
//! tests hermetic; `in_repo_copy_matches_the_shared_samples` notices when it drifts from
//! `../shared/provider-samples`, where the samples are maintained.
//!
//! One test per sample: the scripted server serves the sample's responses byte for byte, in
//! order, one per HTTP request; the agent gets the prompt and runs one turn with the real
//! client and the real tools (the samples' tools, `get_capital`, `weather`, ..., are not
//! rein's, so they get an error result and the agent goes on, which is all the next request
//! needs). Then the test checks:
//!
//! - what rein showed, per response: the text (the streamed deltas, or the finished
//!   message's text when nothing streamed), the reasoning, a refusal, the tool calls, the
//!   finish reason and the usage (the server's figures, or `estimated` when it sent none);
//!   a response the server refused (an HTTP error) shows a retry or the turn's error;
//! - how the turn ended: the outcome, the number of retries (their delay and reason where
//!   the sample says), and on failure an error of one line that says what the sample
//!   requires (`error_contains`) and not what it forbids (`error_excludes`);
//! - every request rein sent, against every rule of the `constraints` table (whichever
//!   sample lists it: a request one server accepts must be acceptable to all), plus the
//!   shape those rules assume: the system prompt first, each tool call answered by one tool
//!   message in call order, no message that is only a `<system-reminder>`, and the reasoning
//!   state the provider streamed (`reasoning_content`, `reasoning_details`, a tool call's
//!   `extra_content`, taken from the sample's own stream) sent back on the assistant message
//!   that made the calls.
//!
//! A test collects every problem with its sample and fails listing them all. Besides the
//! per-sample tests: one replays a sample in 7-byte pieces that cut a UTF-8 sequence in two
//! (the `bytes:7` sample is all ASCII), and a few check the index and the checkers.
//! Text is compared exactly, with one exception: an expected text made only of whitespace
//! (Kimi streams "   " next to its tool call) is met by any whitespace-only text, none
//! included, since a front end showing nothing shows the same.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;
use support::agent::{agent_config, test_client, turn, API_KEY};
use support::replay::{attempts, read_index};
use support::ScriptedServer;

use check::{check_outcome, check_request, check_turn};
use stream::{details_text, read_body, recorded_reply, short, streamed_state};

mod check;
mod checkers;
mod samples;
mod stream;

/// How long a test's stream may stay silent unless the sample sets `idle_timeout_secs`: short
/// enough that a stall fails within the harness's 30 s deadline.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a test's stream may send only keep-alives: the samples are paced by the
/// harness (`delay_ms` after every event), not as their servers sent them, so a sample's
/// comments may take longer than five of its idle timeouts; still within the deadline.
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------------------
// The sample index
// ---------------------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
struct Index {
    constraints: BTreeMap<String, ConstraintInfo>,
    samples: Vec<Sample>,
}

#[derive(Debug, Deserialize)]
struct ConstraintInfo {
    rule: String,
}

#[derive(Debug, Deserialize)]
struct Sample {
    name: String,
    model: String,
    prompt: String,
    #[serde(default)]
    constraints: Vec<String>,
    #[serde(default)]
    config: SampleConfig,
    responses: Vec<Recorded>,
    expect: Expect,
}

/// Settings a sample needs. Unknown keys fail the parse, so none is silently ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SampleConfig {
    #[serde(default)]
    client: ClientOverrides,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClientOverrides {
    idle_timeout_secs: Option<u64>,
    max_tries: Option<u32>,
}

/// One recorded response: the body's file, its status and headers, how to write it.
#[derive(Debug, Deserialize)]
struct Recorded {
    file: String,
    status: u16,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// `bytes:N`: written N bytes at a time.
    chunking: Option<String>,
    /// A pause before each SSE event after the first.
    delay_ms: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct Expect {
    turns: Vec<ExpectedTurn>,
    outcome: String,
    exit_code: i32,
    retries: usize,
    #[serde(default)]
    error_contains: Vec<String>,
    #[serde(default)]
    error_excludes: Vec<String>,
    #[serde(default)]
    retry_reason_contains: Vec<String>,
    retry_delay_ms: Option<u64>,
}

/// What the k-th response should show: `http_status` alone for a refused request, the
/// rest for a reply.
#[derive(Debug, Deserialize)]
struct ExpectedTurn {
    http_status: Option<u16>,
    #[serde(default)]
    text: String,
    #[serde(default)]
    reasoning: String,
    #[serde(default)]
    refusal: String,
    #[serde(default)]
    tool_calls: Vec<ExpectedCall>,
    finish_reason: Option<String>,
    usage: Option<ExpectedUsage>,
    error: Option<String>,
    #[serde(default)]
    provider_state: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct ExpectedCall {
    id: String,
    name: String,
    arguments: String,
}

#[derive(Debug, Deserialize)]
struct ExpectedUsage {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
}

/// The samples: the copy in the repository, else the shared set next to the repository.
fn samples_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        manifest.join("tests/provider-samples"),
        manifest.join("../shared/provider-samples"),
    ];
    candidates
        .iter()
        .find(|dir| dir.join("index.json").is_file())
        .cloned()
        .unwrap_or_else(|| {
            panic!("no provider samples: neither {candidates:?} holds an index.json")
        })
}

fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| read_index(&samples_dir()))
}

fn sample(name: &str) -> &'static Sample {
    index()
        .samples
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no sample {name:?} in index.json"))
}

// ---------------------------------------------------------------------------------------
// What the sample's own stream carries (the state a provider wants back)
// ---------------------------------------------------------------------------------------

/// The provider state one streamed reply carries: what a client must send back.
#[derive(Debug, Default)]
struct StreamedState {
    /// `delta.reasoning_content`, concatenated.
    reasoning_content: String,
    /// `delta.reasoning_details`, merged by `index`.
    reasoning_details: Vec<Value>,
    /// Each tool call's `extra_content`, by call id.
    extra_content: Vec<(String, Value)>,
}

impl StreamedState {
    /// The names `provider_state` uses for what this stream carries.
    fn names(&self) -> BTreeSet<String> {
        let mut names = BTreeSet::new();
        if !self.reasoning_content.is_empty() {
            names.insert("reasoning_content".to_string());
        }
        if !self.reasoning_details.is_empty() {
            names.insert("reasoning_details".to_string());
        }
        if !self.extra_content.is_empty() {
            names.insert("tool_calls[].extra_content".to_string());
        }
        names
    }
}

// ---------------------------------------------------------------------------------------
// The replay
// ---------------------------------------------------------------------------------------

/// Replays sample `name` and fails listing every problem found.
async fn replay(name: &str) {
    replay_in(name, None).await;
}

/// [`replay`], with every stream written as `pieces` says (`bytes:N`) when given.
async fn replay_in(name: &str, pieces: Option<&str>) {
    let sample = sample(name);
    let expect = &sample.expect;
    assert_eq!(
        sample.responses.len(),
        expect.turns.len(),
        "{name}: index.json has one expected turn per response"
    );
    let states: Vec<StreamedState> = sample
        .responses
        .iter()
        .map(|r| match r.status {
            200 => streamed_state(&String::from_utf8_lossy(&read_body(&r.file))),
            _ => StreamedState::default(),
        })
        .collect();
    for (k, (state, turn)) in states.iter().zip(&expect.turns).enumerate() {
        let listed: BTreeSet<String> = turn.provider_state.iter().cloned().collect();
        assert_eq!(
            state.names(),
            listed,
            "{name}: response {} streams other provider state than index.json lists",
            k + 1
        );
        // The state read from the stream is the reasoning the sample expects to be shown.
        let details = details_text(&state.reasoning_details);
        for (what, streamed) in [
            ("reasoning_content", &state.reasoning_content),
            ("reasoning_details text", &details),
        ] {
            assert!(
                streamed.is_empty() || *streamed == turn.reasoning,
                "{name}: response {} streams {what} {} but expects reasoning {}",
                k + 1,
                short(streamed),
                short(&turn.reasoning)
            );
        }
    }

    let replies = sample
        .responses
        .iter()
        .map(|r| recorded_reply(r, pieces))
        .collect();
    let server = ScriptedServer::start(replies)
        .await
        .expect("the scripted server binds a local port");
    let dir = tempfile::tempdir().expect("a temporary project directory");
    let mut client = test_client(server.base_url(), API_KEY, &sample.model);
    client.idle_timeout = sample
        .config
        .client
        .idle_timeout_secs
        .map_or(IDLE_TIMEOUT, Duration::from_secs);
    client.keepalive_timeout = Some(KEEPALIVE_TIMEOUT);
    if let Some(tries) = sample.config.client.max_tries {
        client.max_tries = tries;
    }
    let mut handle =
        rein_core::agent::spawn(agent_config(client, dir.path())).expect("the agent starts");
    let started = Instant::now();
    let events = turn(&mut handle, &sample.prompt).await;
    let elapsed = started.elapsed();
    let requests = server.requests();

    let mut problems = Vec::new();
    if requests.len() != sample.responses.len() {
        problems.push(format!(
            "rein sent {} requests for {} recorded responses",
            requests.len(),
            sample.responses.len()
        ));
    }
    let attempts = attempts(&events);
    if attempts.len() != sample.responses.len() {
        problems.push(format!(
            "the events show {} requests for {} recorded responses",
            attempts.len(),
            sample.responses.len()
        ));
    }
    for (k, (expected, events)) in expect.turns.iter().zip(&attempts).enumerate() {
        let last = k + 1 == expect.turns.len();
        check_turn(&mut problems, k, expected, events, last);
    }
    check_outcome(&mut problems, expect, &events, elapsed);
    for (j, request) in requests.iter().enumerate() {
        check_request(&mut problems, sample, &states, j, request);
    }

    if !problems.is_empty() {
        let listed = if sample.constraints.is_empty() {
            String::new()
        } else {
            format!(" (the provider enforces {})", sample.constraints.join(", "))
        };
        panic!(
            "sample {name}{listed}: {} problem(s)\n  - {}\n",
            problems.len(),
            problems.join("\n  - ")
        );
    }
}
