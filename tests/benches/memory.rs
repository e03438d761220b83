//! Peak memory over the size of the data (issue 12, the memory row): `cargo bench --bench
//! memory`.
//!
//! Each scenario runs in a fresh process of this binary (the parent re-executes itself
//! with the scenario in `REIN_BENCH_MEMORY_CHILD`) and reports that process's peak
//! resident memory (`VmHWM` from `/proc/self/status`). The figure that matters is the
//! peak over a process that did nothing but build the scenario's input (the "base"),
//! divided by the size of the data:
//!
//! 1. The dashboard fed a reply of 1, 5 and 10 MB as 20-byte `TextDelta` events through
//!    the real update step, a frame drawn on a 120×40 `TestBackend` after every 64 KB of
//!    deltas (the redraws are coalesced, as the dashboard's are), and at the end. Two
//!    shapes: Markdown prose (paragraphs, lists, code blocks) and one paragraph of words
//!    without a line break.
//! 2. 1 000 and 10 000 bash rules from a config file in a `RulePolicy` (one command judged,
//!    so the matcher is built): resident bytes per rule over the policy with no rules.
//! 3. `write_file` of 10 and 50 MB: through the tool path (prepare, the permission check,
//!    the approval preview, the write), and through a whole agent turn, the model's call
//!    streamed in 64 KiB pieces by the scripted server running in another process.
//!
//! Figures are printed as Markdown table rows.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test's unwrap is an assertion

use rein_test_support as support;

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::backend::TestBackend;
use ratatui::Terminal;
use rein::app::state::{App, SessionInfo};
use rein::app::update::update_at;
use rein::app::AppEvent;
use rein_core::agent::{AgentCommand, AgentEvent};
use rein_core::config::BashRuleEntry;
use rein_core::permissions::policy::RulePolicy;
use rein_core::permissions::{PermissionPolicy, RuleAction, ToolRequest};
use rein_core::sandbox::Sandbox;
use rein_core::skills::SkillSet;
use rein_core::tools::{ToolContext, Toolset};
use serde_json::json;
use support::{chunk, Reply, ScriptedServer, Step};

const MB: usize = 1024 * 1024;
/// Set in a child process: the scenario it runs.
const CHILD: &str = "REIN_BENCH_MEMORY_CHILD";
/// Set in the agent-turn child: the scripted server's base URL.
const SERVER_URL: &str = "REIN_BENCH_MEMORY_SERVER";
const DELTA: usize = 20;
const FRAME_EVERY: usize = 64 * 1024 / DELTA;

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn hwm() -> u64 {
    status_kib("VmHWM:")
}

fn rss() -> u64 {
    status_kib("VmRSS:")
}

/// Markdown prose of `bytes` bytes: paragraphs, lists, code and quotes in turn.
fn prose(bytes: usize) -> String {
    let blocks = [
        "The parser now keeps tabs inside quoted words. I checked every caller of `parse` and \
         none relied on the old behaviour, except the **legacy** import path, which I left alone.\n\n",
        "- first, the tokenizer\n- then the quoting rules\n  - single quotes\n  - double quotes\n- last, the tests\n\n",
        "```rust\nfn tokenize(input: &str) -> Vec<Token> {\n    let mut out = Vec::new();\n    for (i, c) in input.char_indices() {\n        out.push(Token::new(i, c));\n    }\n    out\n}\n```\n\n",
        "> The old code is kept behind a flag for one release; see [the notes](https://example.com/notes).\n\n",
        "## Next steps\n\n1. run the full suite\n2. update the changelog\n3. open the pull request\n\n",
    ];
    let mut text = String::with_capacity(bytes + 512);
    let mut i = 0;
    while text.len() < bytes {
        text.push_str(blocks[i % blocks.len()]);
        i += 1;
    }
    text.truncate(bytes);
    text
}

/// One paragraph of words, no line break, `bytes` bytes.
fn paragraph(bytes: usize) -> String {
    let words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor ";
    let mut text = words.repeat(bytes / words.len() + 1);
    text.truncate(bytes);
    text
}

fn info() -> SessionInfo {
    SessionInfo {
        model: "bench-model".into(),
        project: PathBuf::from("/projects/bench"),
        ..SessionInfo::default()
    }
}

/// The dashboard streams `text`: prints "peak KiB\tbase KiB\tsecs\tframes".
fn dashboard(text: String) {
    let mut app = App::new(info(), 128_000);
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let now = Instant::now();
    update_at(
        &mut app,
        AppEvent::Resize {
            width: 120,
            height: 40,
        },
        now,
    );
    update_at(
        &mut app,
        AppEvent::Agent(AgentEvent::TurnStarted {
            text: "Explain the fix in detail.".into(),
        }),
        now,
    );
    terminal.draw(|f| rein::ui::render(&app, f, now)).unwrap();
    let base = hwm();
    let start = Instant::now();
    let mut frames = 0;
    for (i, piece) in text.as_bytes().chunks(DELTA).enumerate() {
        let piece = std::str::from_utf8(piece).unwrap_or("?").to_string();
        update_at(
            &mut app,
            AppEvent::Agent(AgentEvent::TextDelta { text: piece }),
            now,
        );
        if (i + 1) % FRAME_EVERY == 0 {
            terminal.draw(|f| rein::ui::render(&app, f, now)).unwrap();
            frames += 1;
        }
    }
    update_at(
        &mut app,
        AppEvent::Agent(AgentEvent::AssistantMessage {
            text: String::new(),
            refusal: false,
            finish_reason: Some("stop".into()),
        }),
        now,
    );
    terminal.draw(|f| rein::ui::render(&app, f, now)).unwrap();
    frames += 1;
    let secs = start.elapsed().as_secs_f64();
    println!("{}\t{base}\t{secs:.2}\t{frames}", hwm());
}

fn entries(n: usize) -> Vec<BashRuleEntry> {
    let file = PathBuf::from("/home/someone/projects/bench/.rein/config.toml");
    (0..n)
        .map(|i| BashRuleEntry {
            pattern: format!("deploy-tool-{i} --target staging *"),
            action: if i % 3 == 0 {
                RuleAction::Deny
            } else {
                RuleAction::Allow
            },
            file: file.clone(),
            project: true,
        })
        .collect()
}

/// A policy of `n` config rules: prints "peak KiB\tbase KiB\trss KiB\tbase rss KiB".
fn rules(n: usize) {
    let root = Path::new("/projects/bench");
    let list = entries(n);
    let empty = RulePolicy::new(root, &[], &[], None).unwrap();
    empty.judge_bash("ls -la");
    let (base, base_rss) = (hwm(), rss());
    let policy = RulePolicy::new(root, &list, &[], None).unwrap();
    let judged = policy.judge_bash("deploy-tool-7 --target staging now");
    assert_eq!(judged.action, RuleAction::Allow);
    println!("{}\t{base}\t{}\t{base_rss}", hwm(), rss());
    drop(list);
}

/// The arguments of a `write_file` call of `bytes` bytes of source-like lines.
fn write_args(bytes: usize) -> String {
    let line = "    let value = compute(index, \"some text\").unwrap_or_default();\n";
    let mut content = line.repeat(bytes / line.len() + 1);
    content.truncate(bytes);
    serde_json::to_string(&json!({ "path": "out/big.rs", "content": content })).unwrap()
}

fn tool_context(root: &Path) -> ToolContext {
    ToolContext {
        root: root.to_path_buf(),
        bash_timeout: Duration::from_secs(20),
        secrets: Vec::new(),
        sandbox: Arc::new(Sandbox::off(root)),
        todos: Default::default(),
        skills: Arc::new(SkillSet::empty()),
        editor: None,
        live: None,
        lsp: None,
    }
}

/// `write_file` through the tool path, the file there already (so the preview diffs two
/// big texts): prints "peak KiB\tbase KiB\tsecs".
fn tool_write(bytes: usize) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("out")).unwrap();
    std::fs::write(root.join("out/big.rs"), "fn old() {}\n".repeat(bytes / 12)).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ctx = tool_context(&root);
    let policy = RulePolicy::new(&root, &[], &[], None).unwrap();
    let raw = write_args(bytes);
    let base = hwm();
    let start = Instant::now();
    let mut call = Toolset::Main.prepare("write_file", &raw).unwrap();
    call.pin_path(&root).unwrap();
    let _verdict = policy.check(&ToolRequest {
        tool: &call.name,
        args: &call.args,
        root: &root,
    });
    // What the approval prompt shows (the rules ask for writes outside the project; here
    // the preview is made whatever they say, as the worst case).
    let preview = call.preview(&ctx);
    let result = runtime.block_on(call.execute(&ctx));
    let secs = start.elapsed().as_secs_f64();
    assert!(!result.outcome.is_error(), "{result:?}");
    assert_eq!(
        std::fs::metadata(root.join("out/big.rs")).unwrap().len() as usize,
        bytes
    );
    drop(preview);
    println!("{}\t{base}\t{secs:.2}", hwm());
}

/// The scripted server's reply: a `write_file` call of `bytes` bytes in 64 KiB pieces.
fn write_reply(bytes: usize) -> Reply {
    let args = write_args(bytes);
    let mut steps = vec![Step::Data(chunk(
        json!({ "role": "assistant", "content": null, "tool_calls": [{
            "index": 0, "id": "call_1", "type": "function",
            "function": { "name": "write_file", "arguments": "" },
        }] }),
        None,
    ))];
    let mut rest = args.as_str();
    while !rest.is_empty() {
        let mut cut = rest.len().min(64 * 1024);
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let (piece, tail) = rest.split_at(cut);
        steps.push(Step::Data(chunk(
            json!({ "tool_calls": [{ "index": 0, "function": { "arguments": piece } }] }),
            None,
        )));
        rest = tail;
    }
    steps.push(Step::Data(chunk(json!({}), Some("tool_calls"))));
    steps.push(Step::Done);
    Reply::sse(steps)
}

/// In a child: serve the write reply then a short answer; print the URL, then wait for
/// stdin to close.
fn server(bytes: usize) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let server = ScriptedServer::start(vec![write_reply(bytes), Reply::text("Done.")])
            .await
            .unwrap();
        println!("{}", server.base_url());
        let _ = tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            let _ = std::io::stdin().read_line(&mut line);
        })
        .await;
    });
}

/// A whole agent turn against the server at `REIN_BENCH_MEMORY_SERVER`, recorded to a
/// session file: prints "peak KiB\tbase KiB\tsecs".
fn agent_write(bytes: usize) {
    let url = std::env::var(SERVER_URL).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    std::fs::create_dir(&root).unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut config = support::agent::agent_config(
            support::agent::test_client(url, support::agent::API_KEY, support::agent::MODEL),
            &root,
        );
        config.client.max_event_bytes = 16 * MB;
        let (mut handle, _path) = support::agent::spawn_recorded(config, &data);
        let base = hwm();
        let start = Instant::now();
        assert!(handle.send(AgentCommand::UserMessage("write it".into())));
        let mut ok = false;
        while let Some(event) = handle.events.recv().await {
            match event {
                AgentEvent::ToolFinished { is_error, .. } => ok = !is_error,
                AgentEvent::TurnFinished { .. } => break,
                _ => {}
            }
        }
        let secs = start.elapsed().as_secs_f64();
        assert!(ok, "the write failed");
        let written = std::fs::metadata(root.join("out/big.rs")).unwrap().len() as usize;
        assert_eq!(written, bytes);
        println!("{}\t{base}\t{secs:.2}", hwm());
    });
}

fn child(kind: &str) {
    let mut parts = kind.split(':');
    let what = parts.next().unwrap_or("");
    let arg = parts.next().unwrap_or("");
    let n: usize = parts.next().unwrap_or(arg).parse().unwrap_or(0);
    match what {
        "prose" => dashboard(prose(n * MB)),
        "paragraph" => dashboard(paragraph(n * MB)),
        "rules" => rules(n),
        "tool" => tool_write(n * MB),
        "server" => server(n * MB),
        "agent" => agent_write(n * MB),
        _ => println!("{}", hwm()),
    }
}

/// Run this binary as a child for `kind`; its tab-separated figures.
fn in_child(kind: &str, env: &[(&str, &str)]) -> Vec<f64> {
    let exe = std::env::current_exe().unwrap();
    let mut command = std::process::Command::new(exe);
    command.env(CHILD, kind);
    for (k, v) in env {
        command.env(k, v);
    }
    let out = command.output().unwrap();
    if !out.status.success() {
        eprintln!("{kind}: {}", String::from_utf8_lossy(&out.stderr));
    }
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .split('\t')
        .map(|f| f.parse().unwrap_or(0.0))
        .collect()
}

/// The agent-turn scenario, with the server in its own process.
fn agent_in_child(mb: usize) -> Vec<f64> {
    let exe = std::env::current_exe().unwrap();
    let mut server = std::process::Command::new(exe)
        .env(CHILD, format!("server:{mb}"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = String::new();
    if let Some(out) = server.stdout.take() {
        let _ = std::io::BufReader::new(out).read_line(&mut url);
    }
    let figures = in_child(&format!("agent:{mb}"), &[(SERVER_URL, url.trim())]);
    drop(server.stdin.take());
    let _ = server.wait();
    figures
}

fn mib(kib: f64) -> f64 {
    kib / 1024.0
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument picks scenarios by name.
    if let Ok(kind) = std::env::var(CHILD) {
        child(&kind);
        return;
    }
    let filter = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let wanted = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    let started = in_child("base", &[]);
    println!("A process that only starts: {:.1} MiB.", mib(started[0]));
    println!();

    if wanted("dashboard") {
        println!("| reply streamed into the dashboard | peak RSS | over the base | × the reply | time | frames |");
        println!("|---|---|---|---|---|---|");
        for shape in ["prose", "paragraph"] {
            for mb in [1, 5, 10] {
                let f = in_child(&format!("{shape}:{mb}"), &[]);
                let over = mib(f[0] - f[1]);
                println!(
                    "| {shape}, {mb} MB | {:.1} MiB | {over:.1} MiB | {:.1}× | {:.2} s | {} |",
                    mib(f[0]),
                    over / mb as f64,
                    f[2],
                    f[3]
                );
            }
        }
        println!();
    }
    if wanted("rules") {
        println!("| bash rules from a config file | peak RSS | resident over no rules | per rule | peak over no rules, per rule |");
        println!("|---|---|---|---|---|");
        for n in [1_000, 10_000] {
            let f = in_child(&format!("rules:{n}"), &[]);
            let resident = (f[2] - f[3]) * 1024.0;
            let peak = (f[0] - f[1]) * 1024.0;
            println!(
                "| {n} | {:.1} MiB | {:.1} MiB | {:.0} bytes | {:.0} bytes |",
                mib(f[0]),
                resident / (1024.0 * 1024.0),
                resident / n as f64,
                peak / n as f64
            );
        }
        println!();
    }
    if wanted("write") {
        println!("| `write_file` of | path | peak RSS | over the base | × the content | time |");
        println!("|---|---|---|---|---|---|");
        for mb in [10, 50] {
            for (path, f) in [
                (
                    "the tool: prepare, check, preview, write",
                    in_child(&format!("tool:{mb}"), &[]),
                ),
                ("a whole agent turn, recorded", agent_in_child(mb)),
            ] {
                let over = mib(f[0] - f[1]);
                println!(
                    "| {mb} MB | {path} | {:.1} MiB | {over:.1} MiB | {:.1}× | {:.2} s |",
                    mib(f[0]),
                    over / mb as f64,
                    f[2]
                );
            }
        }
    }
}
