//! The `@` file finder on a large project: `cargo bench --bench finder`.
//!
//! A tree of 100 000 files is generated in a temporary folder (plus 20 000 more under a
//! folder that `.gitignore` excludes, and a hidden folder, neither of which may be
//! listed): 1 000 folders three levels deep, 100 files each, with names like a real
//! source tree's. Reported: the first scan (the walk with the ignore rules, median of 3),
//! and the time from a keystroke to the finder's results for realistic queries typed one
//! character at a time (1 to 8 characters), each keystroke the update step's real work:
//! match the query (refining the previous keystroke's matches), rank, take the best 50.
//! Then the same queries matched from scratch, as after Backspace or a paste.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rein::file_index::matcher::PathMatcher;
use rein::file_index::{scan, DEFAULT_CAP};

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

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let generated = generate(dir.path());
    let mut scans = Vec::new();
    let mut index = None;
    for _ in 0..3 {
        let started = Instant::now();
        let found = scan(dir.path(), DEFAULT_CAP);
        scans.push(started.elapsed());
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
        "first scan: {} files, {} entries with folders: median {} (of 3)",
        index.files(),
        index.entries.len(),
        ms(median(scans))
    );

    let mut worst = Duration::ZERO;
    let mut all = Vec::new();
    for query in QUERIES {
        let mut matcher = PathMatcher::default();
        let mut typed = String::new();
        let mut row = Vec::new();
        for c in query.chars() {
            typed.push(c);
            let started = Instant::now();
            let found = matcher.query(&index, &typed, 50);
            let took = started.elapsed();
            worst = worst.max(took);
            all.push(took);
            row.push(format!(
                "{typed:>9} {:>6} matches {}",
                found.total,
                ms(took)
            ));
        }
        println!("typing {query:?}:");
        for line in row {
            println!("  {line}");
        }
    }
    println!(
        "per keystroke (typed one character at a time): median {}, worst {}",
        ms(median(all)),
        ms(worst)
    );

    let mut fresh = Vec::new();
    for query in QUERIES {
        for len in 1..=query.chars().count() {
            let typed: String = query.chars().take(len).collect();
            let mut matcher = PathMatcher::default();
            let started = Instant::now();
            matcher.query(&index, &typed, 50);
            fresh.push(started.elapsed());
        }
    }
    let worst_fresh = fresh.iter().max().copied().unwrap_or_default();
    println!(
        "per query from scratch (Backspace, paste): median {}, worst {}",
        ms(median(fresh)),
        ms(worst_fresh)
    );
}
