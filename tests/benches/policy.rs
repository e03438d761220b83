//! Benchmarks of the safety layers: `cargo bench --bench policy`.
//!
//! 1. Judging bash commands: parse + rules for a mix of typical and hostile command lines,
//!    in commands per second and microseconds per command.
//! 2. The sandbox's cost per command: the real `bash` tool running `true` unsandboxed and
//!    under bubblewrap (skipped, and said so, where bwrap cannot run).
//!
//! Each figure is the median of several runs, printed as a Markdown table row.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test's unwrap is an assertion

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rein_core::permissions::bash::judge;
use rein_core::permissions::rules::BashRules;
use rein_core::sandbox::{Sandbox, SandboxSettings, SandboxState};
use rein_core::skills::SkillSet;
use rein_core::tools::bash::{run, Args};
use rein_core::tools::ToolContext;

const RUNS: usize = 5;

const COMMANDS: &[&str] = &[
    "ls -la",
    "git status --short",
    "cargo test --workspace 2>&1 | tail -n 40",
    "grep -rn \"fn main\" src | head -20",
    "find . -name '*.rs' -not -path './target/*' | xargs wc -l | sort -n | tail",
    "cd crates/core && cargo check --all-targets",
    "for f in $(ls src); do echo \"$f\"; done",
    "if [ -f Cargo.toml ]; then cat Cargo.toml; else echo none; fi",
    "python3 -c 'import sys; print(sys.version)'",
    "echo $(echo $(echo $(rm -rf /tmp/x)))",
    "bash -c \"timeout 5 env FOO=1 nice -n 5 sh -c 'ls; rm x'\"",
    "cat <<EOF > out.txt\nline $(date)\nEOF",
];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn bench_judge() -> (f64, f64) {
    let rules = BashRules::new(BashRules::defaults()).expect("the default rules compile");
    let rounds = 2_000;
    let mut rates = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let mut denied = 0;
        for _ in 0..rounds {
            for c in COMMANDS {
                if judge(c, &rules).action == rein_core::permissions::RuleAction::Deny {
                    denied += 1;
                }
            }
        }
        assert_eq!(denied, 2 * rounds, "the two hostile lines are denied");
        rates.push((rounds * COMMANDS.len()) as f64 / start.elapsed().as_secs_f64());
    }
    let rate = median(rates);
    (rate, 1e6 / rate)
}

async fn bench_spawn(ctx: &ToolContext) -> f64 {
    let n = 30;
    let mut per = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        for _ in 0..n {
            let out = run(
                Args {
                    command: "true".into(),
                    run_in_background: None,
                },
                ctx,
            )
            .await
            .expect("true runs");
            assert_eq!(out.text, "(no output)");
        }
        per.push(start.elapsed().as_secs_f64() * 1e3 / n as f64);
    }
    median(per)
}

fn context(root: &Path, sandbox: Sandbox) -> ToolContext {
    ToolContext {
        root: root.to_path_buf(),
        bash_timeout: Duration::from_secs(10),
        secrets: Vec::new(),
        sandbox: Arc::new(sandbox),
        todos: Default::default(),
        skills: Arc::new(SkillSet::empty()),
        editor: None,
        live: None,
        lsp: None,
    }
}

fn main() {
    let (rate, us) = bench_judge();
    let project = tempfile::tempdir().expect("a temp dir");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let plain = runtime.block_on(bench_spawn(&context(
        project.path(),
        Sandbox::off(project.path()),
    )));
    let sandbox = Sandbox::detect(SandboxSettings::default(), project.path(), Vec::new());
    let sandboxed = match sandbox.state() {
        SandboxState::On { .. } => {
            let ms = runtime.block_on(bench_spawn(&context(project.path(), sandbox)));
            format!("{ms:.2} ms/command")
        }
        _ => format!("skipped: the sandbox is {}", sandbox.describe()),
    };
    println!("| benchmark | result |");
    println!("|---|---|");
    println!(
        "| judging a bash command line (parse + rules), mix of {} typical and hostile lines (median of {RUNS}) | {rate:.0} commands/s ({us:.1} µs/command) |",
        COMMANDS.len()
    );
    println!("| `bash` tool running `true`, no sandbox (median of {RUNS} × 30) | {plain:.2} ms/command |");
    println!(
        "| `bash` tool running `true` under bubblewrap (median of {RUNS} × 30) | {sandboxed} |"
    );
}
