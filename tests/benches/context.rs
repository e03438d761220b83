//! The context layers over a long session: `cargo bench --bench context`.
//!
//! A scripted session of 200 model calls (20 user turns of 10 calls: 9 `bash` calls whose
//! outputs range from 600 to 42 000 characters, then a 1 500-character answer) runs
//! through the real agent loop against the scripted server three times: with the layers
//! in a 32 000-token window (cap, stubs, drop and compaction all fire), with them in the
//! default 128 000-token window (cap and stubs are enough), and without them (nothing
//! capped, stubbed, dropped or compacted; the window never fills). Peak context is given
//! as a share of 32k for all three. The server reports usage at 4
//! characters a token and answers compaction requests with a 1 200-character note.
//!
//! Reported from the request bodies the server received: total prompt tokens sent (main
//! and compaction requests), peak context use (the largest main request, and its share of
//! the window), the share of each main request that repeats the previous one's leading
//! messages unchanged (what a provider's prefix cache can reuse; mean over requests, and
//! over all tokens), and how often each layer fired.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test's unwrap is an assertion

use rein_test_support as support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use rein_core::agent::{self, AgentCommand, AgentConfig, AgentEvent, ClientConfig};
use rein_core::context::ContextConfig;
use rein_core::conversation::Api;
use rein_core::permissions::AllowAll;
use rein_core::sandbox::Sandbox;
use rein_core::skills::SkillSet;
use serde_json::{json, Value};
use support::{request_chars, Reply, ScriptedServer};

const TURNS: usize = 20;
const CALLS_PER_TURN: usize = 9;
const WINDOW: u64 = 32_000;
/// Lines of output of the calls, in turn (about 60 characters a line).
const LINES: [usize; 9] = [10, 50, 200, 700, 30, 120, 400, 15, 80];

fn command(i: usize) -> String {
    let lines = LINES[i % LINES.len()];
    format!("seq -f 'build log line %g: compiling a module of the project, all fine' 1 {lines}")
}

/// Words of prose; every eighth is numbered, so no span repeats eight times over (a reply
/// that does is stopped as a runaway, `rein_core::agent::repetition`).
fn prose(words: usize, seed: usize) -> String {
    (0..words)
        .map(|i| {
            let word = [
                "the", "parser", "now", "reads", "each", "token", "once", "and",
            ][(i + seed) % 8];
            if (i + seed) % 8 == 5 {
                format!("{word}{}", i / 8)
            } else {
                word.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn script() -> Vec<Reply> {
    let mut replies = Vec::new();
    for turn in 0..TURNS {
        for call in 0..CALLS_PER_TURN {
            let i = turn * CALLS_PER_TURN + call;
            let args = json!({ "command": command(i) }).to_string();
            replies.push(
                Reply::text_then_tool_calls(&prose(35, i), &[("bash", &args)])
                    .with_usage_from_request(4.0),
            );
        }
        replies.push(Reply::text(&prose(260, turn)).with_usage_from_request(4.0));
    }
    replies
}

fn is_compaction(request: &Value) -> bool {
    request["messages"][0]["content"]
        .as_str()
        .is_some_and(|s| s.contains("handoff note for a coding agent"))
}

#[derive(Default)]
struct Stats {
    main_requests: usize,
    compaction_requests: usize,
    total_tokens: u64,
    peak_tokens: u64,
    mean_prefix_share: f64,
    token_prefix_share: f64,
    /// Input tokens billed with a prefix cache (cached tokens at a tenth), as sent.
    billed: f64,
    /// The same for the old placement (a trailing reminder message, rebuilt from the
    /// requests sent), to show what the reminder's place costs the cache.
    billed_old_placement: f64,
    stubbed: usize,
    dropped: usize,
    compactions: usize,
    wall: Duration,
}

fn tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4)
}

fn message_chars(message: &Value) -> usize {
    request_chars(&json!({ "messages": [message] }))
}

/// The bench's agent: `client`, tools in `root`, everything allowed, no sandbox, `context`.
fn bench_config(
    client: ClientConfig,
    root: &std::path::Path,
    context: ContextConfig,
) -> AgentConfig {
    AgentConfig {
        client,
        root: root.to_path_buf(),
        bash_timeout: Duration::from_secs(20),
        max_steps: 50,
        subagent_max_steps: 12,
        subagent_max_parallel: 4,
        max_background: 4,
        hooks: Default::default(),
        instructions: Default::default(),
        policy: Arc::new(AllowAll),
        sandbox: Arc::new(Sandbox::off(root)),
        skills: Arc::new(SkillSet::empty()),
        context,
        external_tools: None,
        checkpoints: None,
        editor: None,
        live_output: false,
        lsp: None,
    }
}

/// The session with the layers in a `window`-token window, or without any (`None`).
async fn session(layers: Option<u64>) -> Stats {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let note = prose(170, 3);
    let server = ScriptedServer::start_routed(
        script(),
        Arc::new(move |request: &Value| {
            is_compaction(request).then(|| Reply::text(&note).with_usage_from_request(4.0))
        }),
    )
    .await
    .unwrap();
    let context = if let Some(window) = layers {
        ContextConfig {
            window,
            spill_dir: Some(spill.path().to_path_buf()),
            ..ContextConfig::default()
        }
    } else {
        ContextConfig {
            cap_chars: usize::MAX,
            stub_chars: usize::MAX,
            window: u64::MAX / 2,
            spill_dir: None,
            ..ContextConfig::default()
        }
    };
    let config = bench_config(
        ClientConfig::new(server.base_url(), "", "bench"),
        project.path(),
        context,
    );
    let mut handle = agent::spawn(config).unwrap();
    let mut stats = Stats::default();
    let start = Instant::now();
    for turn in 0..TURNS {
        handle.send(AgentCommand::UserMessage(
            format!("turn {turn}: build the project and tell me what you see").into(),
        ));
        loop {
            match handle.events.recv().await.expect("agent alive") {
                AgentEvent::ContextTrimmed { .. } => stats.stubbed += 1,
                AgentEvent::ResultsDropped { .. } => stats.dropped += 1,
                AgentEvent::Compacted { .. } => stats.compactions += 1,
                AgentEvent::Error { message } => panic!("{message}"),
                AgentEvent::TurnFinished { .. } => break,
                _ => {}
            }
        }
    }
    stats.wall = start.elapsed();
    let requests = server.requests();
    let mut previous: Option<&Vec<Value>> = None;
    let (mut share_sum, mut prefix_chars, mut all_chars) = (0.0, 0usize, 0usize);
    for request in &requests {
        let size = request_chars(request);
        stats.total_tokens += tokens(size);
        if is_compaction(request) {
            stats.compaction_requests += 1;
            continue;
        }
        stats.main_requests += 1;
        stats.peak_tokens = stats.peak_tokens.max(tokens(size));
        let messages = request["messages"].as_array().unwrap();
        if let Some(before) = previous {
            let same: usize = messages
                .iter()
                .zip(before.iter())
                .take_while(|(a, b)| a == b)
                .map(|(m, _)| message_chars(m))
                .sum();
            share_sum += same as f64 / size as f64;
            prefix_chars += same;
            all_chars += size;
        }
        previous = Some(messages);
    }
    stats.billed = billed(&requests, |m| m.to_vec());
    stats.billed_old_placement = billed(&requests, old_placement);
    let pairs = stats.main_requests.saturating_sub(1).max(1) as f64;
    stats.mean_prefix_share = share_sum / pairs;
    stats.token_prefix_share = prefix_chars as f64 / all_chars.max(1) as f64;
    stats
}

/// Where a reminder begins inside a content.
const REMINDER: &str = "\n\n(rein context, not part of the request:";

/// A request's messages as the seed sent them: every reminder out of the content it rode
/// in, and the newest one as a trailing user message of its own.
fn old_placement(messages: &[Value]) -> Vec<Value> {
    let mut newest = String::new();
    let mut out: Vec<Value> = messages
        .iter()
        .map(|m| {
            let mut m = m.clone();
            if let Some(c) = m["content"].as_str() {
                if let Some(i) = c.find(REMINDER) {
                    newest = c[i + 2..].to_string();
                    m["content"] = Value::String(c[..i].to_string());
                }
            }
            m
        })
        .collect();
    out.push(json!({ "role": "user", "content": format!("<system-reminder>\n{newest}\n</system-reminder>") }));
    out
}

/// Input tokens billed over the session when a provider caches byte-identical prefixes:
/// each main request's prompt (tool schemas, then its messages, as written by `shape`)
/// pays in full for what differs from the previous main request's and a tenth for the
/// common leading bytes; compaction requests pay in full.
fn billed(requests: &[Value], shape: impl Fn(&[Value]) -> Vec<Value>) -> f64 {
    let mut previous: Option<String> = None;
    let mut total = 0.0;
    for request in requests {
        if is_compaction(request) {
            total += tokens(request_chars(request)) as f64;
            continue;
        }
        let messages = shape(request["messages"].as_array().unwrap());
        let prompt = format!("{}{}", request["tools"], Value::Array(messages));
        let cached = previous.as_deref().map_or(0, |p| {
            p.bytes()
                .zip(prompt.bytes())
                .take_while(|(a, b)| a == b)
                .count()
        });
        total += tokens(prompt.len() - cached) as f64 + tokens(cached) as f64 / 10.0;
        previous = Some(prompt);
    }
    total
}

fn row(label: &str, s: &Stats) -> String {
    format!(
        "| {label} | {} + {} | {:.2} M | {:.3} M | {:.3} M | {:.1}k ({:.0} % of 32k) | {:.1} % | {:.1} % | {} / {} / {} | {:.1} s |",
        s.main_requests,
        s.compaction_requests,
        s.total_tokens as f64 / 1e6,
        s.billed / 1e6,
        s.billed_old_placement / 1e6,
        s.peak_tokens as f64 / 1000.0,
        s.peak_tokens as f64 * 100.0 / WINDOW as f64,
        s.mean_prefix_share * 100.0,
        s.token_prefix_share * 100.0,
        s.stubbed,
        s.dropped,
        s.compactions,
        s.wall.as_secs_f64(),
    )
}

/// The same session (layers on, in a `window`-token window) with the model spoken to in
/// `api`: the scripted replies told in its events. The request bodies the server got.
async fn api_session(api: Api, window: u64) -> Vec<Value> {
    let project = tempfile::tempdir().unwrap();
    let spill = tempfile::tempdir().unwrap();
    let note = prose(170, 3);
    let replies = script().into_iter().map(|r| r.in_api(api)).collect();
    let server = ScriptedServer::start_routed(
        replies,
        Arc::new(move |request: &Value| {
            any_compaction(request)
                .then(|| Reply::text(&note).with_usage_from_request(4.0).in_api(api))
        }),
    )
    .await
    .unwrap();
    let mut client = ClientConfig::new(server.base_url(), "", "bench");
    client.api = api;
    client.cache_key = Some("bench-session".into());
    let context = ContextConfig {
        window,
        spill_dir: Some(spill.path().to_path_buf()),
        ..ContextConfig::default()
    };
    let config = bench_config(client, project.path(), context);
    let mut handle = agent::spawn(config).unwrap();
    for turn in 0..TURNS {
        handle.send(AgentCommand::UserMessage(
            format!("turn {turn}: build the project and tell me what you see").into(),
        ));
        loop {
            match handle.events.recv().await.expect("agent alive") {
                AgentEvent::Error { message } => panic!("{api:?}: {message}"),
                AgentEvent::TurnFinished { .. } => break,
                _ => {}
            }
        }
    }
    server.requests()
}

/// A compaction request in any API (its system prompt asks for the handoff note).
fn any_compaction(request: &Value) -> bool {
    request
        .to_string()
        .contains("handoff note for a coding agent")
}

/// What a request's prompt is, in the order a provider reads it: the tools, then the
/// system prompt and the conversation in that API's fields.
fn prompt_text(request: &Value, api: Api) -> String {
    match api {
        Api::Chat => format!("{}{}", request["tools"], request["messages"]),
        Api::Responses => format!(
            "{}{}{}",
            request["tools"], request["instructions"], request["input"]
        ),
        Api::Anthropic => format!(
            "{}{}{}",
            request["tools"], request["system"], request["messages"]
        ),
    }
}

/// Input tokens billed over a session with the API's caching rule, compaction requests in
/// full. Chat completions and the Responses API (OpenAI's automatic prefix cache): the
/// leading bytes a request shares with the previous one at a tenth, the rest in full.
/// Anthropic: only what the client marks is cached; a request reads at a tenth the longest
/// prefix ending at one of its `cache_control` marks that an earlier request wrote, writes
/// the rest up to its last mark at 1.25 times the input price, and pays the tail in full.
/// Returns (billed, of which read from the cache, of which written to it), in tokens.
fn billed_with_rule(requests: &[Value], api: Api) -> (f64, u64, u64) {
    let (mut total, mut read, mut written) = (0.0, 0u64, 0u64);
    let mut previous: Option<String> = None;
    let mut marked: std::collections::HashSet<u64> = std::collections::HashSet::new();
    for request in requests {
        let prompt = prompt_text(request, api);
        if any_compaction(request) {
            total += tokens(prompt.len()) as f64;
            continue;
        }
        match api {
            Api::Chat | Api::Responses => {
                let cached = previous.as_deref().map_or(0, |p| {
                    p.bytes()
                        .zip(prompt.bytes())
                        .take_while(|(a, b)| a == b)
                        .count()
                });
                read += tokens(cached);
                total += tokens(prompt.len() - cached) as f64 + tokens(cached) as f64 / 10.0;
                previous = Some(prompt);
            }
            Api::Anthropic => {
                let hash = |text: &str| {
                    use std::hash::{Hash, Hasher};
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    text.hash(&mut h);
                    h.finish()
                };
                // The marks are not content: a block cached with a mark is read back by a
                // request where it has none. The prompt without them, and where each was.
                let (prompt, marks) = without_marks(&prompt);
                let hit = marks
                    .iter()
                    .rev()
                    .find(|&&at| marked.contains(&hash(&prompt[..at])))
                    .copied()
                    .unwrap_or(0);
                let last = marks.last().copied().unwrap_or(0).max(hit);
                read += tokens(hit);
                written += tokens(last - hit);
                total += tokens(hit) as f64 / 10.0
                    + tokens(last - hit) as f64 * 1.25
                    + tokens(prompt.len() - last) as f64;
                marked.extend(marks.iter().map(|&at| hash(&prompt[..at])));
            }
        }
    }
    (total, read, written)
}

/// `prompt` without its `"cache_control":{...},` marks, and the places they were at.
fn without_marks(prompt: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(prompt.len());
    let mut marks = Vec::new();
    let mut rest = prompt;
    while let Some(at) = rest.find("\"cache_control\":{") {
        out.push_str(&rest[..at]);
        marks.push(out.len());
        let after = &rest[at..];
        let end = after.find('}').map_or(after.len(), |i| i + 1);
        rest = after[end..].strip_prefix(',').unwrap_or(&after[end..]);
    }
    out.push_str(rest);
    // A mark caches the prefix through the block it is on: its end is where the block's
    // object closes.
    let marks = marks.into_iter().map(|at| block_end(&out, at)).collect();
    (out, marks)
}

/// Where the JSON object that `at` is inside of ends (after its `}`).
fn block_end(text: &str, at: usize) -> usize {
    let (mut depth, mut in_string, mut escaped) = (1usize, false, false);
    for (i, c) in text[at..].char_indices() {
        match (in_string, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (true, false, '"') => in_string = false,
            (true, false, _) => {}
            (false, _, '"') => in_string = true,
            (false, _, '{') => depth += 1,
            (false, _, '}') => {
                depth -= 1;
                if depth == 0 {
                    return at + i + 1;
                }
            }
            _ => {}
        }
    }
    text.len()
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    if std::env::args().any(|a| a == "apis") {
        println!("| API | window | requests (main + compaction) | prompt tokens sent | billed-equivalent input | read from the cache | written to it (Anthropic) |");
        println!("|---|---|---|---|---|---|---|");
        for window in [WINDOW, 128_000] {
            for api in Api::ALL {
                let requests = runtime.block_on(api_session(api, window));
                let compactions = requests.iter().filter(|r| any_compaction(r)).count();
                let sent: u64 = requests
                    .iter()
                    .map(|r| tokens(prompt_text(r, api).len()))
                    .sum();
                let (billed, read, written) = billed_with_rule(&requests, api);
                println!(
                    "| {} | {}k | {} + {compactions} | {:.2} M | {:.3} M | {:.2} M | {:.2} M |",
                    api.name(),
                    window / 1000,
                    requests.len() - compactions,
                    sent as f64 / 1e6,
                    billed / 1e6,
                    read as f64 / 1e6,
                    written as f64 / 1e6,
                );
            }
        }
        return;
    }
    let with = runtime.block_on(session(Some(WINDOW)));
    let roomy = runtime.block_on(session(Some(128_000)));
    let without = runtime.block_on(session(None));
    println!("| layers | requests (main + compaction) | prompt tokens sent | billed-equivalent input (cached at 1/10) | same, reminder as its own last message | peak context | prefix repeated (mean) | prefix repeated (all tokens) | stubs / drops / compactions | wall |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    println!("{}", row("with, 32k window", &with));
    println!("{}", row("with, 128k window", &roomy));
    println!("{}", row("without", &without));
}
