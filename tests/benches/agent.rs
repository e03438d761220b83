//! Benchmarks of the harness itself: `cargo bench --bench agent`.
//!
//! 1. SSE ingestion: a local scripted server streams a long reply of one-token content
//!    deltas; the real client parses and assembles it. Reported in tokens (deltas) per second.
//! 2. Delta assembly alone: the same chunks fed to the assembler without a network.
//! 3. Agent step overhead: a zero-latency model (the scripted server answers at once) asks
//!    for a cheap tool call at every step; the time per step is rein's own cost: request
//!    serialisation, HTTP on loopback, parsing, dispatch, the tool, and the events.
//!
//! 4. Hook overhead: the same steps with a no-op PreToolUse and PostToolUse hook (`true`,
//!    matching every tool) against none: what a matching hook adds per tool call (two
//!    process starts). Without hooks nothing is run (the third figure).
//!
//! Each figure is the median of several runs, printed as a Markdown table row.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test's unwrap is an assertion

use rein_test_support as support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use rein_core::agent::stream::Assembler;
use rein_core::agent::{
    self, AgentCommand, AgentConfig, AgentEvent, ClientConfig, LlmClient, Message,
};
use rein_core::permissions::AllowAll;
use rein_core::sandbox::Sandbox;
use rein_core::skills::SkillSet;
use serde_json::json;
use support::{chunk, Reply, ScriptedServer, Step};

const TOKENS: usize = 50_000;
const RUNS: usize = 5;
const STEPS: usize = 200;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn token_chunks() -> Vec<serde_json::Value> {
    (0..TOKENS)
        .map(|i| chunk(json!({ "content": format!("tok{} ", i % 100) }), None))
        .collect()
}

fn long_reply(chunks: &[serde_json::Value]) -> Reply {
    let mut steps: Vec<Step> = chunks.iter().cloned().map(Step::Data).collect();
    steps.push(Step::Data(chunk(json!({}), Some("stop"))));
    steps.push(Step::Done);
    Reply::sse(steps)
}

async fn bench_ingestion(chunks: &[serde_json::Value]) -> (f64, f64) {
    let server = ScriptedServer::start((0..RUNS).map(|_| long_reply(chunks)).collect())
        .await
        .unwrap();
    let client = LlmClient::new(ClientConfig::new(server.base_url(), "", "bench")).unwrap();
    let messages = vec![Message::user("go")];
    let tools = json!([]);
    let bytes: usize = chunks.iter().map(|c| c.to_string().len() + 8).sum();
    let mut rates = Vec::new();
    let mut mbs = Vec::new();
    for _ in 0..RUNS {
        let mut deltas = 0usize;
        let start = Instant::now();
        let reply = client
            .stream_chat(&messages, &tools, &mut |e| {
                // The text pieces (not the flushes between reads).
                if matches!(
                    e,
                    rein_core::agent::client::ClientEvent::Delta(
                        rein_core::agent::stream::StreamDelta::Text(_)
                    )
                ) {
                    deltas += 1;
                }
            })
            .await
            .unwrap();
        let secs = start.elapsed().as_secs_f64();
        assert_eq!(deltas, TOKENS);
        assert!(reply.text.len() > TOKENS * 4);
        rates.push(TOKENS as f64 / secs);
        mbs.push(bytes as f64 / secs / 1e6);
    }
    (median(rates), median(mbs))
}

fn bench_assembly(chunks: &[serde_json::Value]) -> f64 {
    let data: Vec<String> = chunks.iter().map(|c| c.to_string()).collect();
    let mut rates = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let mut a = Assembler::new();
        let mut n = 0usize;
        for d in &data {
            a.push(d, &mut |_| n += 1).unwrap();
        }
        let reply = a.finish();
        let secs = start.elapsed().as_secs_f64();
        assert_eq!(n, TOKENS);
        assert!(!reply.text.is_empty());
        rates.push(TOKENS as f64 / secs);
    }
    median(rates)
}

async fn bench_steps() -> (f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("small.txt"), "one\ntwo\nthree\n").unwrap();
    let args = [
        json!({"path": "small.txt"}).to_string(),
        json!({"path": "small.txt", "offset": 2}).to_string(),
    ];
    let mut per_step = Vec::new();
    let mut per_turn_text = Vec::new();
    for _ in 0..RUNS {
        let mut replies: Vec<Reply> = (0..STEPS)
            // Calls alternate between two offsets: the same call again and again would be
            // put to the user by the loop guard.
            .map(|i| Reply::tool_calls(&[("read_file", args[i % 2].as_str())]))
            .collect();
        replies.push(Reply::text("done"));
        let server = ScriptedServer::start(replies).await.unwrap();
        let mut cfg = ClientConfig::new(server.base_url(), "", "bench");
        cfg.max_tries = 1;
        let mut handle = agent::spawn(AgentConfig {
            client: cfg,
            root: dir.path().to_path_buf(),
            bash_timeout: Duration::from_secs(10),
            max_steps: STEPS as u32 + 1,
            subagent_max_steps: 12,
            subagent_max_parallel: 4,
            max_background: 4,
            hooks: Default::default(),
            instructions: Default::default(),
            policy: Arc::new(AllowAll),
            sandbox: Arc::new(Sandbox::off(dir.path())),
            skills: Arc::new(SkillSet::empty()),
            context: Default::default(),
            external_tools: None,
            checkpoints: None,
            editor: None,
            live_output: false,
            lsp: None,
        })
        .unwrap();
        let start = Instant::now();
        handle.send(AgentCommand::UserMessage("go".into()));
        let mut tools = 0;
        while let Some(e) = handle.events.recv().await {
            match e {
                AgentEvent::ToolFinished { is_error, .. } => {
                    assert!(!is_error);
                    tools += 1;
                }
                AgentEvent::TurnFinished { .. } => break,
                _ => {}
            }
        }
        assert_eq!(tools, STEPS);
        per_step.push(start.elapsed().as_secs_f64() * 1e6 / (STEPS + 1) as f64);

        // Text-only turns on a fresh agent: one model call each, no tools.
        drop(handle);
        let turns = 50;
        let server =
            ScriptedServer::start((0..turns).map(|_| Reply::text("short answer")).collect())
                .await
                .unwrap();
        let mut handle = agent::spawn(AgentConfig {
            client: ClientConfig::new(server.base_url(), "", "bench"),
            root: dir.path().to_path_buf(),
            bash_timeout: Duration::from_secs(10),
            max_steps: 2,
            subagent_max_steps: 12,
            subagent_max_parallel: 4,
            max_background: 4,
            hooks: Default::default(),
            instructions: Default::default(),
            policy: Arc::new(AllowAll),
            sandbox: Arc::new(Sandbox::off(dir.path())),
            skills: Arc::new(SkillSet::empty()),
            context: Default::default(),
            external_tools: None,
            checkpoints: None,
            editor: None,
            live_output: false,
            lsp: None,
        })
        .unwrap();
        let start = Instant::now();
        for _ in 0..turns {
            handle.send(AgentCommand::UserMessage("again".into()));
            while let Some(e) = handle.events.recv().await {
                if matches!(e, AgentEvent::TurnFinished { .. }) {
                    break;
                }
            }
        }
        per_turn_text.push(start.elapsed().as_secs_f64() * 1e6 / turns as f64);
    }
    (median(per_step), median(per_turn_text))
}

/// µs per step of `steps` read_file steps, with `hooks` in force (median of 3).
async fn hook_steps(hooks: Arc<rein_core::hooks::Hooks>, steps: usize) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("small.txt"), "one\ntwo\nthree\n").unwrap();
    let args = [
        json!({"path": "small.txt"}).to_string(),
        json!({"path": "small.txt", "offset": 2}).to_string(),
    ];
    let mut per_step = Vec::new();
    for _ in 0..3 {
        let mut replies: Vec<Reply> = (0..steps)
            // Calls alternate between two offsets: the same call again and again would be
            // put to the user by the loop guard.
            .map(|i| Reply::tool_calls(&[("read_file", args[i % 2].as_str())]))
            .collect();
        replies.push(Reply::text("done"));
        let server = ScriptedServer::start(replies).await.unwrap();
        let mut cfg = ClientConfig::new(server.base_url(), "", "bench");
        cfg.max_tries = 1;
        let mut config = support::agent::agent_config(cfg, dir.path());
        config.max_steps = steps as u32 + 1;
        config.hooks = hooks.clone();
        let mut handle = agent::spawn(config).unwrap();
        let start = Instant::now();
        handle.send(AgentCommand::UserMessage("go".into()));
        while let Some(e) = handle.events.recv().await {
            if matches!(e, AgentEvent::TurnFinished { .. }) {
                break;
            }
        }
        per_step.push(start.elapsed().as_secs_f64() * 1e6 / (steps + 1) as f64);
    }
    median(per_step)
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is accepted and ignored.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    // First, while this process is small: a hook is started with fork (its own session,
    // its parent-death signal), whose cost grows with the parent's memory.
    let root = tempfile::tempdir().unwrap();
    let parsed = rein_core::hooks::config::parse(
        r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "true"}]}],
                      "PostToolUse": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#,
        &root.path().join("hooks.json"),
        rein_core::hooks::Source::User,
    );
    let with = Arc::new(rein_core::hooks::Hooks::new(parsed.hooks, root.path()));
    let none = Arc::new(rein_core::hooks::Hooks::default());
    let without_us = runtime.block_on(hook_steps(none, 100));
    let with_us = runtime.block_on(hook_steps(with, 100));
    let chunks = token_chunks();
    let (tps, mbs) = runtime.block_on(bench_ingestion(&chunks));
    let assembly = bench_assembly(&chunks);
    let (step_us, text_turn_us) = runtime.block_on(bench_steps());
    println!("| benchmark | result |");
    println!("|---|---|");
    println!(
        "| SSE ingestion through the client, {TOKENS} one-token deltas (median of {RUNS}) | {:.0} tokens/s ({mbs:.1} MB/s of SSE) |",
        tps
    );
    println!(
        "| delta assembly alone, no network (median of {RUNS}) | {:.0} tokens/s |",
        assembly
    );
    println!(
        "| agent step with a zero-latency model: request + read_file + events, {STEPS} steps (median of {RUNS}) | {step_us:.0} µs/step |"
    );
    println!(
        "| text-only turn with a zero-latency model, 50 turns (median of {RUNS}) | {text_turn_us:.0} µs/turn |"
    );
    println!("| agent step, no hooks, 100 steps (median of 3) | {without_us:.0} µs/step |");
    println!(
        "| agent step with a no-op PreToolUse and PostToolUse hook (`true`), 100 steps (median of 3) | {with_us:.0} µs/step ({:.0} µs more: two hook runs) |",
        with_us - without_us
    );
}
