//! The `@` file finder on a large project: `cargo bench --bench finder`.
//!
//! A tree of 100 000 files is generated in a temporary folder (plus 20 000 more under a
//! folder that `.gitignore` excludes, and a hidden folder, neither of which may be
//! listed): 1 000 folders three levels deep, 100 files each, with names like a real
//! source tree's. Reported: the first scan (the walk with the ignore rules, median of 3),
//! and the time from a keystroke to the finder's results for realistic queries typed one
//! character at a time (1 to 8 characters), each keystroke the update step's real work:
//! match the query (refining the previous keystroke's matches), rank, take the best 50.
//! Then the same queries matched from scratch, as after Backspace or a paste. Each figure
//! is given as wall time and as the thread's CPU time: on a shared machine the second is
//! the finder's own cost, the first adds the wait for a core.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test's unwrap is an assertion

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rein_core::file_index::matcher::PathMatcher;
use rein_core::file_index::{scan, DEFAULT_CAP};

const TOP: [&str; 10] = [
    "src",
    "lib",
    "tests",
    "docs",
    "crates",
    "tools",
    "app",
    "server",
    "client",
    "vendor_ok",
];
const MID: [&str; 10] = [
    "core", "ui", "net", "model", "parser", "render", "config", "session", "store", "util",
];
const STEMS: [&str; 10] = [
    "state", "update", "handler", "widget", "buffer", "reader", "writer", "index", "layout",
    "event",
];
const EXTS: [&str; 5] = ["rs", "ts", "md", "json", "toml"];
const QUERIES: [&str; 5] = ["state", "srcuistat", "mdlprs", "READ", "layout.r"];

fn generate(root: &Path) -> usize {
    let mut files = 0;
    for (t, top) in TOP.iter().enumerate() {
        for (m, mid) in MID.iter().enumerate() {
            for leaf in 0..10 {
                let dir = root.join(top).join(mid).join(format!("part_{t}{m}{leaf}"));
                std::fs::create_dir_all(&dir).unwrap();
                for f in 0..100 {
                    let name = format!(
                        "{}_{f:02}.{}",
                        STEMS[(f + leaf) % STEMS.len()],
                        EXTS[f % EXTS.len()]
                    );
                    std::fs::write(dir.join(name), "").unwrap();
                    files += 1;
                }
            }
        }
    }
    std::fs::write(root.join("README.md"), "").unwrap();
    files += 1;
    // Excluded: build output and a hidden folder.
    for d in 0..200 {
        let dir = root.join("target").join(format!("build_{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            std::fs::write(dir.join(format!("obj_{f}.o")), "").unwrap();
        }
    }
    std::fs::create_dir_all(root.join(".cache")).unwrap();
    std::fs::write(root.join(".cache/state.json"), "").unwrap();
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    files
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// The CPU time this thread has used: on a machine other work shares, the cost itself,
/// without the time spent waiting for a core.
fn thread_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to write to.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Wall and CPU time of `f`.
fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration, Duration) {
    let (wall, cpu) = (Instant::now(), thread_cpu());
    let out = f();
    (out, wall.elapsed(), thread_cpu().saturating_sub(cpu))
}

const RUNS: usize = 5;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let generated = generate(dir.path());
    let (mut walls, mut cpus) = (Vec::new(), Vec::new());
    let mut index = None;
    for _ in 0..3 {
        let (found, wall, cpu) = timed(|| scan(dir.path(), DEFAULT_CAP));
        walls.push(wall);
        cpus.push(cpu);
        index = Some(found);
    }
    let index = Arc::new(index.unwrap());
    assert_eq!(
        index.files(),
        generated,
        "every generated file, nothing ignored"
    );
    assert!(!index.entries.iter().any(|e| e.path.starts_with("target/")));
    assert!(!index.entries.iter().any(|e| e.path.starts_with(".cache")));
    println!(
        "first scan: {} files, {} entries with folders: median {} wall, {} CPU (of 3)",
        index.files(),
        index.entries.len(),
        ms(median(walls)),
        ms(median(cpus))
    );

    // Each query typed RUNS times; per keystroke the median of the runs.
    let (mut all_wall, mut all_cpu) = (Vec::new(), Vec::new());
    for query in QUERIES {
        let n = query.chars().count();
        let mut per_key: Vec<(Vec<Duration>, Vec<Duration>)> = vec![Default::default(); n];
        let mut totals = vec![0; n];
        for _ in 0..RUNS {
            let mut matcher = PathMatcher::default();
            let mut typed = String::new();
            for (k, c) in query.chars().enumerate() {
                typed.push(c);
                let (found, wall, cpu) = timed(|| matcher.query(&index, &typed, 50));
                per_key[k].0.push(wall);
                per_key[k].1.push(cpu);
                totals[k] = found.total;
            }
        }
        println!("typing {query:?} (median of {RUNS}: wall, CPU):");
        for (k, (walls, cpus)) in per_key.into_iter().enumerate() {
            let typed: String = query.chars().take(k + 1).collect();
            let (wall, cpu) = (median(walls), median(cpus));
            println!(
                "  {typed:>9} {:>6} matches {:>9} {:>9}",
                totals[k],
                ms(wall),
                ms(cpu)
            );
            all_wall.push(wall);
            all_cpu.push(cpu);
        }
    }
    let worst = |v: &[Duration]| v.iter().max().copied().unwrap_or_default();
    println!(
        "per keystroke (typed one character at a time): wall median {}, worst {}; CPU median {}, worst {}",
        ms(median(all_wall.clone())),
        ms(worst(&all_wall)),
        ms(median(all_cpu.clone())),
        ms(worst(&all_cpu))
    );

    let (mut fresh_wall, mut fresh_cpu) = (Vec::new(), Vec::new());
    for query in QUERIES {
        for len in 1..=query.chars().count() {
            let typed: String = query.chars().take(len).collect();
            let (mut w, mut c) = (Vec::new(), Vec::new());
            for _ in 0..RUNS {
                let mut matcher = PathMatcher::default();
                let (_, wall, cpu) = timed(|| matcher.query(&index, &typed, 50));
                w.push(wall);
                c.push(cpu);
            }
            fresh_wall.push(median(w));
            fresh_cpu.push(median(c));
        }
    }
    println!(
        "per query from scratch (Backspace, paste): wall median {}, worst {}; CPU median {}, worst {}",
        ms(median(fresh_wall.clone())),
        ms(worst(&fresh_wall)),
        ms(median(fresh_cpu.clone())),
        ms(worst(&fresh_cpu))
    );
}
