//! Benchmarks of split characters, large and endless bodies (issue 12, items 6, 7 and 8):
//! `cargo bench --bench stream`.
//!
//! 1. One SSE event of 1, 10, 20 and 50 MB through the SSE parser alone, fed in 64 KiB
//!    reads as a socket delivers it (median of 3).
//! 2. The same events through the real client from the scripted server on loopback:
//!    HTTP, SSE, the JSON parse of the chunk and assembly (median of 3).
//! 3. Peak memory (VmHWM) of a fresh process of this binary that asks a raw server
//!    answering 500 with an endless body, and one streaming an endless `data:` line, with
//!    the client's default caps; next to the peak of a process that only starts the runtime.
//!
//! 4. The repetition watch (`agent::repetition`) over 8 MB of varied text (a table whose
//!    rows differ) and over 8 MB of data that repeats exactly but stays under the line
//!    (256-entry tables of `0x00` and base64 of 4 KiB of zeros, each after a line of its
//!    own) in pieces as a server streams them, per byte; and how many bytes of a reply
//!    repeating `" -l"` it reads before it stops it.
//!
//! Figures are printed as Markdown table rows.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test's unwrap is an assertion

use rein_test_support as support;

use std::time::{Duration, Instant};

use rein_core::agent::sse::SseParser;
use rein_core::agent::{ClientConfig, LlmClient, Message};
use serde_json::json;
use support::{chunk, Reply, ScriptedServer, Step};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const MB: usize = 1024 * 1024;
const SIZES: [usize; 4] = [1, 10, 20, 50];
const RUNS: usize = 3;
/// Set in the child process: which endless body to ask for.
const CHILD: &str = "REIN_BENCH_STREAM_CHILD";

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// `data: {chunk with `mb` MB of content}\n\n`
fn event(mb: usize) -> Vec<u8> {
    let content = "x".repeat(mb * MB);
    format!(
        "data: {}\n\n",
        chunk(json!({ "content": content }), Some("stop"))
    )
    .into_bytes()
}

fn bench_parser(mb: usize) -> f64 {
    let body = event(mb);
    let times = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            let mut parser = SseParser::new(64 * MB);
            for piece in body.chunks(64 * 1024) {
                parser.feed(piece).unwrap();
            }
            let data = parser.next_event().unwrap();
            let secs = start.elapsed().as_secs_f64();
            assert!(data.len() > mb * MB);
            secs
        })
        .collect();
    median(times)
}

async fn bench_client(mb: usize) -> f64 {
    let content = "x".repeat(mb * MB);
    let reply = || {
        Reply::sse(vec![
            Step::Data(chunk(json!({ "content": content }), Some("stop"))),
            Step::Done,
        ])
    };
    let server = ScriptedServer::start((0..RUNS).map(|_| reply()).collect())
        .await
        .unwrap();
    let mut config = ClientConfig::new(server.base_url(), "", "bench");
    config.max_event_bytes = 64 * MB;
    let client = LlmClient::new(config).unwrap();
    let mut times = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let reply = client
            .stream_chat(&[Message::user("go")], &json!([]), &mut |_| {})
            .await
            .unwrap();
        times.push(start.elapsed().as_secs_f64());
        assert_eq!(reply.text.len(), mb * MB);
    }
    median(times)
}

/// Issue 12, item 6: a reply of `mb` MB of two-byte characters in many small events, with
/// one invalid byte in the first, written in pieces of 65,521 bytes (each flushed on its own, so
/// reads end inside characters). The time to the whole reply, median of 3.
async fn bench_split_characters(mb: usize) -> f64 {
    // 32 × "é" = 64 bytes a token.
    let token = "é".repeat(32);
    let tokens = mb * MB / token.len();
    let mut body = Vec::new();
    for i in 0..tokens {
        let line = format!("data: {}\n\n", chunk(json!({ "content": token }), None));
        let mut bytes = line.into_bytes();
        if i == 0 {
            // Inside the JSON string: the invalid byte becomes U+FFFD.
            let at = bytes
                .windows(2)
                .position(|w| w == "é".as_bytes())
                .unwrap_or(0);
            bytes.insert(at + 2, 0xFF);
        }
        body.extend(bytes);
    }
    body.extend(
        format!(
            "data: {}\n\ndata: [DONE]\n\n",
            chunk(json!({}), Some("stop"))
        )
        .into_bytes(),
    );
    let reply = || {
        let mut steps = Vec::new();
        for piece in body.chunks(65_521) {
            steps.push(Step::Bytes(piece.to_vec()));
            steps.push(Step::Sleep(Duration::ZERO));
        }
        Reply::sse(steps)
    };
    let server = ScriptedServer::start((0..RUNS).map(|_| reply()).collect())
        .await
        .unwrap();
    let client = LlmClient::new(ClientConfig::new(server.base_url(), "", "bench")).unwrap();
    let mut times = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let reply = client
            .stream_chat(&[Message::user("go")], &json!([]), &mut |_| {})
            .await
            .unwrap();
        times.push(start.elapsed().as_secs_f64());
        assert_eq!(
            reply.text.chars().filter(|c| *c == 'é').count(),
            tokens * 32
        );
        assert_eq!(reply.text.chars().filter(|c| *c == '\u{FFFD}').count(), 1);
    }
    median(times)
}

/// A raw server answering every request with `head` and then `filler` forever.
async fn endless_server(head: &'static str, filler: &'static [u8]) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                // The request is small: one read holds its head and body.
                let _ = stream.read(&mut buf).await;
                let block = filler.repeat(64 * 1024 / filler.len());
                if stream.write_all(head.as_bytes()).await.is_ok() {
                    while stream.write_all(&block).await.is_ok() {}
                }
            });
        }
    });
    format!("http://{addr}/v1")
}

fn vm_hwm_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// In the child: ask the endless server of `kind` once, print "error\tVmHWM in KiB\tsecs".
fn child(kind: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (head, filler): (&'static str, &'static [u8]) = match kind {
            "500" => (
                "HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\n\r\n",
                b"something broke. ",
            ),
            "line" => (
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: ",
                b"z",
            ),
            _ => {
                println!("-\t{}\t0", vm_hwm_kib());
                return;
            }
        };
        let base_url = endless_server(head, filler).await;
        let mut config = ClientConfig::new(base_url, "", "bench");
        config.max_tries = 1;
        let client = LlmClient::new(config).unwrap();
        let start = Instant::now();
        let result = tokio::time::timeout(
            Duration::from_secs(60),
            client.stream_chat(&[Message::user("go")], &json!([]), &mut |_| {}),
        )
        .await;
        let secs = start.elapsed().as_secs_f64();
        let error = match result {
            Ok(Err(e)) => e.to_string(),
            other => format!("unexpected: {other:?}"),
        };
        let error: String = error.chars().take(90).collect();
        println!("{error}\t{}\t{secs:.2}", vm_hwm_kib());
    });
}

/// Runs this binary as a child for `kind`: (error, peak KiB, seconds).
fn in_child(kind: &str) -> (String, u64, String) {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .env(CHILD, kind)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let mut fields = text.trim().split('\t');
    let error = fields.next().unwrap_or("").to_string();
    let kib = fields.next().and_then(|k| k.parse().ok()).unwrap_or(0);
    let secs = fields.next().unwrap_or("").to_string();
    (error, kib, secs)
}

fn bench_repetition() {
    use rein_core::agent::repetition::Repetition;
    let mut table = String::new();
    let mut i = 0u64;
    while table.len() < 8 * MB {
        table.push_str(&format!("| {i} | {} | row {} |\n", i * i, i % 7));
        i += 1;
    }
    // Exact repeats under the line: a zero table, base64 of zeros, each after its title.
    let line = format!("    {}\n", "0x00, ".repeat(16).trim_end());
    let zeros = line.repeat(16);
    let base64 = format!("{}AA==\n", "A".repeat(5460));
    let mut data = String::new();
    let mut i = 0u64;
    while data.len() < 8 * MB {
        data.push_str(&format!("table {i}:\n{zeros}base64 {i}:\n{base64}"));
        i += 1;
    }
    println!(
        "| repetition watch over 8 MB, pieces of | a table whose rows differ (median of {RUNS}) | per byte | zero tables and base64 of zeros (median of {RUNS}) | per byte |"
    );
    println!("|---|---|---|---|---|");
    let time = |text: &str, piece: usize| {
        let times = (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                let mut watch = Repetition::new();
                for part in text.as_bytes().chunks(piece) {
                    let part = std::str::from_utf8(part).unwrap();
                    assert!(watch.push(part).is_none());
                }
                start.elapsed().as_secs_f64()
            })
            .collect();
        median(times)
    };
    for piece in [4, 16, 64] {
        let (a, b) = (time(&table, piece), time(&data, piece));
        println!(
            "| {piece} bytes | {:.1} ms | {:.1} ns | {:.1} ms | {:.1} ns |",
            a * 1e3,
            a * 1e9 / table.len() as f64,
            b * 1e3,
            b * 1e9 / data.len() as f64
        );
    }
    let mut watch = Repetition::new();
    watch.push("The command is: ```bash\nls");
    let mut fed = 0;
    while watch.push(" -l").is_none() {
        fed += 3;
    }
    println!("| a reply repeating \" -l\" | stopped after {fed} bytes of it | | | |");
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is accepted and ignored.
    if let Ok(kind) = std::env::var(CHILD) {
        child(&kind);
        return;
    }
    println!("| one SSE event of | parser alone, 64 KiB reads (median of {RUNS}) | through the client from the scripted server (median of {RUNS}) |");
    println!("|---|---|---|");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    for mb in SIZES {
        let parser = bench_parser(mb);
        let client = runtime.block_on(bench_client(mb));
        println!(
            "| {mb} MB | {:.1} ms ({:.0} MB/s) | {:.0} ms ({:.0} MB/s) |",
            parser * 1e3,
            mb as f64 / parser,
            client * 1e3,
            mb as f64 / client
        );
    }
    println!();
    println!("| reply of two-byte characters in 64-byte events, one invalid byte, writes of 65,521 bytes | through the client (median of {RUNS}) |");
    println!("|---|---|");
    for mb in [1, 2, 4, 8] {
        let secs = runtime.block_on(bench_split_characters(mb));
        println!(
            "| {mb} MB | {:.0} ms ({:.0} MB/s) |",
            secs * 1e3,
            mb as f64 / secs
        );
    }
    println!();
    bench_repetition();
    println!();
    println!("| endless body (default caps) | outcome | time | peak RSS (VmHWM) |");
    println!("|---|---|---|---|");
    let (_, base, _) = in_child("baseline");
    println!(
        "| none: the runtime started, no request | - | - | {:.1} MiB |",
        base as f64 / 1024.0
    );
    for (what, kind) in [
        ("HTTP 500, text without end", "500"),
        ("200 SSE, one `data:` line without end", "line"),
    ] {
        let (error, kib, secs) = in_child(kind);
        println!(
            "| {what} | {error} … | {secs} s | {:.1} MiB |",
            kib as f64 / 1024.0
        );
    }
}
