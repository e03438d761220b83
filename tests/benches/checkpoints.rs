//! Checkpoints of generated trees: `cargo bench --bench checkpoints`.
//!
//! For trees of 20 000 and 100 000 files (a git repository, every file tracked; 100 files
//! a folder, 200 to 2 000 bytes each), through the real record (`rein_core::checkpoint::Store`,
//! real git): the first checkpoint (everything hashed), a checkpoint of the unchanged tree
//! (median of 15), one after a small change (3 files edited, 1 added, 1 removed; median of
//! 15), and the record's growth on disk (blocks, not lengths) for those changes. Also, per size, restoring the
//! small change. Targets (issue 24): unchanged 20 000 files ≤ 50 ms, 100 000 ≤ 0.5 s, the
//! first checkpoint of 100 000 ≤ 10 s, growth per turn following what changed.
//!
//! Then the turn overhead through the real agent (scripted server, no latency) in a
//! 2 000-file repository: 30 turns that each write a file then answer, and 30 text-only
//! turns, with checkpoints on and off (median of 5 runs each).
//!
//! `REIN_BENCH_SIZES=20000` runs one size only (`0`: none, the turn overhead only).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test's unwrap is an assertion

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use rein_test_support as support;

use rein_core::agent::{self, AgentCommand, AgentEvent, CheckpointSetup, ClientConfig};
use rein_core::checkpoint::{PathStep, Settings, Store};
use support::{Reply, ScriptedServer};

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "b")
        .env("GIT_AUTHOR_EMAIL", "b@b")
        .env("GIT_COMMITTER_NAME", "b")
        .env("GIT_COMMITTER_EMAIL", "b@b")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn generate(root: &Path, files: usize) {
    for i in 0..files {
        let dir = root.join(format!("src/m{}/d{}", i / 10_000, i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&dir).expect("mkdir");
        }
        let len = 200 + (i * 7919) % 1800;
        let line = format!("// file {i}: generated for the checkpoint bench\n");
        let body: String = line.repeat(len / line.len() + 1);
        std::fs::write(dir.join(format!("f{i}.rs")), &body[..len]).expect("write");
    }
}

fn du(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(m) = e.metadata() else { continue };
            if m.is_dir() {
                stack.push(e.path());
            } else {
                // What the disk holds: a small loose object takes a whole block.
                total += std::os::unix::fs::MetadataExt::blocks(&m) * 512;
            }
        }
    }
    total
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn bench(files: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().canonicalize().expect("canonical");
    let root = base.join("project");
    let data = base.join("data");
    std::fs::create_dir_all(&root).expect("mkdir");
    generate(&root, files);
    git(&root, &["init", "-q"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "generated"]);
    let store = Store::open(&data, &root, Settings::default()).expect("store");
    // The tree as a project's is: written some time ago, not still being written back.
    let _ = Command::new("sync").status();
    std::thread::sleep(Duration::from_secs(2));

    let started = Instant::now();
    let first = store.take(None).expect("first checkpoint");
    let first_time = started.elapsed();
    let record = store.record().to_path_buf();
    let first_size = du(&record);

    let mut unchanged = Vec::new();
    for _ in 0..15 {
        let started = Instant::now();
        let taken = store.take(Some(&first.commit)).expect("checkpoint");
        unchanged.push(started.elapsed());
        assert_eq!(taken.commit, first.commit);
    }

    let mut small = Vec::new();
    let mut growth = Vec::new();
    let mut last = first.commit.clone();
    for round in 0..15 {
        for k in 0..3 {
            let i = (round * 31 + k * 1009) % files;
            let path = root.join(format!("src/m{}/d{}/f{i}.rs", i / 10_000, i / 100));
            let mut body = std::fs::read(&path).expect("read");
            body.extend_from_slice(format!("// edit {round}\n").as_bytes());
            std::fs::write(&path, body).expect("write");
        }
        std::fs::write(root.join(format!("src/new{round}.rs")), "// new\n").expect("write");
        if round > 0 {
            std::fs::remove_file(root.join(format!("src/new{}.rs", round - 1))).expect("rm");
        }
        let size_before = du(&record);
        let started = Instant::now();
        let taken = store.take(Some(&last)).expect("checkpoint");
        small.push(started.elapsed());
        growth.push(du(&record).saturating_sub(size_before));
        assert!(!taken.changed.is_empty());
        last = taken.commit;
    }
    growth.sort_unstable();

    let steps: Vec<PathStep> = store
        .changed_between(&first.commit, &last)
        .expect("diff")
        .into_iter()
        .map(|path| PathStep {
            path,
            target: first.commit.clone(),
            expected: last.clone(),
        })
        .collect();
    let started = Instant::now();
    let report = store.restore(&steps, false, false, None).expect("restore");
    let restore_time = started.elapsed();

    println!("{files} files:");
    println!(
        "  first checkpoint        {:>10}   record {:.1} MiB",
        ms(first_time),
        first_size as f64 / 1048576.0
    );
    println!("  unchanged (median)      {:>10}", ms(median(unchanged)));
    println!(
        "  small change (median)   {:>10}   record growth median {} KiB",
        ms(median(small)),
        growth[growth.len() / 2] / 1024
    );
    println!(
        "  restore {} paths        {:>10}",
        report.paths.len(),
        ms(restore_time)
    );
}

const TURNS: usize = 30;

/// Milliseconds per turn of `TURNS` turns, each writing a file first when `writes`.
async fn turns(root: &Path, data: &Path, checkpoints: bool, writes: bool) -> f64 {
    let mut replies = Vec::new();
    for i in 0..TURNS {
        if writes {
            let args = serde_json::json!({"path": format!("out/t{i}.txt"), "content": "x\n"});
            replies.push(Reply::tool_calls(&[("write_file", &args.to_string())]));
        }
        replies.push(Reply::text("done"));
    }
    let server = ScriptedServer::start(replies).await.expect("server");
    let mut config =
        support::agent::agent_config(ClientConfig::new(server.base_url(), "", "bench"), root);
    config.checkpoints = checkpoints.then(|| CheckpointSetup {
        data_dir: data.to_path_buf(),
        settings: Settings::default(),
    });
    let mut handle = agent::spawn(config).expect("agent");
    let started = Instant::now();
    for _ in 0..TURNS {
        handle.send(AgentCommand::UserMessage("go".into()));
        while let Some(e) = handle.events.recv().await {
            if matches!(e, AgentEvent::TurnFinished { .. }) {
                break;
            }
        }
    }
    started.elapsed().as_secs_f64() * 1000.0 / TURNS as f64
}

fn turn_overhead() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().canonicalize().expect("canonical");
    let root = base.join("project");
    std::fs::create_dir_all(&root).expect("mkdir");
    generate(&root, 2_000);
    git(&root, &["init", "-q"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "generated"]);
    let data = base.join("data");
    // The record exists already, as in a project used before.
    Store::open(&data, &root, Settings::default())
        .and_then(|s| s.take(None))
        .expect("first checkpoint");
    println!("turn overhead, 2000-file repository, {TURNS} turns (median of 5):");
    for writes in [true, false] {
        let mut on = Vec::new();
        let mut off = Vec::new();
        for _ in 0..5 {
            off.push(runtime.block_on(turns(&root, &data, false, writes)));
            on.push(runtime.block_on(turns(&root, &data, true, writes)));
            let _ = std::fs::remove_dir_all(root.join("out"));
        }
        let med = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        println!(
            "  {:<28} checkpoints off {:>6.2} ms/turn   on {:>6.2} ms/turn",
            if writes {
                "a write_file, then a reply"
            } else {
                "a reply only"
            },
            med(off),
            med(on)
        );
    }
}

fn main() {
    let sizes: Vec<usize> = std::env::var("REIN_BENCH_SIZES")
        .ok()
        .map(|v| {
            v.split(',')
                .filter_map(|s| s.trim().parse().ok())
                .filter(|&n| n > 0)
                .collect()
        })
        .unwrap_or_else(|| vec![20_000, 100_000]);
    for files in sizes {
        bench(files);
    }
    turn_overhead();
}
