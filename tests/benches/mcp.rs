//! MCP figures for BENCHMARKS.md: the time from `McpManager::start` until three stdio
//! servers (server-everything, server-filesystem, mcp-server-time) are all ready, and the
//! round trip of one `echo` call to server-everything. Needs the servers `.ci/run`
//! installs (`$REIN_MCP_SERVERS`, default `target/mcp-servers`).
//!
//! `cargo bench --bench mcp`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test's unwrap is an assertion

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rein_core::mcp::{McpManager, ServerConfig, ServerState};

fn main() {
    let dir = std::env::var_os("REIN_MCP_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-servers"));
    let everything = dir.join("node_modules/.bin/mcp-server-everything");
    let fs = dir.join("node_modules/.bin/mcp-server-filesystem");
    let python = dir.join("venv/bin/python");
    if ![&everything, &fs, &python].iter().all(|p| p.exists()) {
        eprintln!(
            "mcp bench: the servers are not in {} (run .ci/run)",
            dir.display()
        );
        return;
    }
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let root = std::env::temp_dir();
    let servers = || {
        vec![
            ServerConfig::stdio("everything", everything.to_str().unwrap_or(""), &["stdio"]),
            ServerConfig::stdio(
                "fs",
                fs.to_str().unwrap_or(""),
                &[root.to_str().unwrap_or("/tmp")],
            ),
            ServerConfig::stdio(
                "time",
                python.to_str().unwrap_or(""),
                &["-m", "mcp_server_time"],
            ),
        ]
    };
    runtime.block_on(async {
        let mut ready_ms = Vec::new();
        for _ in 0..5 {
            let started = Instant::now();
            let (mcp, mut events) = McpManager::start(servers(), &root);
            let returned = started.elapsed();
            while !mcp.states().iter().all(|(_, s)| matches!(s, ServerState::Ready { .. })) {
                if mcp.states().iter().any(|(_, s)| matches!(s, ServerState::Failed { .. })) {
                    eprintln!("mcp bench: a server failed: {mcp:?}");
                    return;
                }
                let _ = tokio::time::timeout(Duration::from_millis(100), events.recv()).await;
            }
            ready_ms.push(started.elapsed().as_secs_f64() * 1000.0);
            println!(
                "start() returned in {:.3} ms; three servers ready ({} tools) in {:.0} ms",
                returned.as_secs_f64() * 1000.0,
                mcp.tools().len(),
                ready_ms.last().copied().unwrap_or(0.0)
            );
            mcp.shutdown().await;
        }
        ready_ms.sort_by(f64::total_cmp);
        println!("three stdio servers ready: median {:.0} ms, min {:.0}, max {:.0} (5 runs)",
            ready_ms[2], ready_ms[0], ready_ms[4]);

        let (mcp, mut events) = McpManager::start(servers()[..1].to_vec(), &root);
        while !matches!(mcp.states()[0].1, ServerState::Ready { .. }) {
            let _ = tokio::time::timeout(Duration::from_millis(100), events.recv()).await;
        }
        let args = serde_json::json!({"message": "ping"});
        for _ in 0..20 {
            let _ = mcp.call("mcp__everything__echo", args.clone(), None, std::future::pending()).await;
        }
        let mut calls_us = Vec::new();
        for _ in 0..500 {
            let t = Instant::now();
            let out = mcp.call("mcp__everything__echo", args.clone(), None, std::future::pending()).await;
            calls_us.push(t.elapsed().as_secs_f64() * 1e6);
            if out.is_err() {
                eprintln!("mcp bench: echo failed: {out:?}");
                return;
            }
        }
        calls_us.sort_by(f64::total_cmp);
        println!(
            "one echo call to server-everything: median {:.0} µs, p90 {:.0} µs, max {:.0} µs (500 calls)",
            calls_us[250], calls_us[450], calls_us[499]
        );
        mcp.shutdown().await;
    });
}
