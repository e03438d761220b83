//! Language-server figures for BENCHMARKS.md:
//!
//! 1. what an edit costs with no server for its file (`write_file` of a `.txt` file with
//!    the session's language servers on, against the same without them);
//! 2. the time from an edit to its report with pyright on a project of 500 Python files,
//!    first (the server starting and checking the workspace) and then warm;
//! 3. the memory of two servers running (pyright and typescript-language-server), and of
//!    rein's own process.
//!
//! Needs bubblewrap and the servers `.ci/run` installs (`$REIN_LSP_SERVERS`, default
//! `target/lsp-servers`).
//!
//! `cargo bench --bench lsp`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench's unwrap is an assertion

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rein_core::lsp::{Lsp, LspSettings};
use rein_core::sandbox::{Sandbox, SandboxSettings, SandboxState};
use rein_core::tools::ToolContext;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn context(root: &Path, sandbox: Arc<Sandbox>, lsp: Option<Lsp>) -> ToolContext {
    ToolContext {
        root: root.to_path_buf(),
        bash_timeout: Duration::from_secs(60),
        secrets: Vec::new(),
        sandbox,
        todos: Default::default(),
        skills: Default::default(),
        editor: None,
        live: None,
        lsp,
    }
}

async fn write(ctx: &ToolContext, path: &str, content: &str) -> String {
    let args = serde_json::json!({"path": path, "content": content}).to_string();
    let call = rein_core::tools::Toolset::Main
        .prepare("write_file", &args)
        .unwrap();
    call.execute(ctx).await.text
}

async fn replace(ctx: &ToolContext, path: &str, old: &str, new: &str) -> String {
    let args = serde_json::json!({"path": path, "old": old, "new": new}).to_string();
    let call = rein_core::tools::Toolset::Main
        .prepare("str_replace", &args)
        .unwrap();
    call.execute(ctx).await.text
}

/// The resident memory of process `pid`, in KiB.
fn rss_kib(pid: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The summed memory of the processes whose command line holds `needle`, in MiB.
fn servers_mib(needle: &str) -> f64 {
    let mut kib = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(needle) {
            kib += rss_kib(&name);
        }
    }
    kib as f64 / 1024.0
}

fn main() {
    let dir = std::env::var_os("REIN_LSP_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/lsp-servers"));
    let bin = dir.join("node_modules/.bin");
    if !bin.join("pyright-langserver").exists() {
        eprintln!(
            "lsp bench: pyright is not in {} (run .ci/run)",
            dir.display()
        );
        return;
    }
    // The servers are found on PATH, as a user's are.
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    std::env::set_var("PATH", path);
    let project = tempfile::tempdir().unwrap();
    let root = project.path().canonicalize().unwrap();
    let sandbox = Arc::new(Sandbox::detect(
        SandboxSettings::default(),
        &root,
        Vec::new(),
    ));
    if !matches!(sandbox.state(), SandboxState::On { .. }) {
        eprintln!("lsp bench: the sandbox does not run here (bubblewrap)");
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let settings = LspSettings {
        wait: Duration::from_secs(30),
        ..LspSettings::default()
    };
    let lsp = || {
        Lsp::with_cache(
            &settings,
            &root,
            sandbox.clone(),
            Vec::new(),
            cache.path().to_path_buf(),
        )
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        // 1. An edit of a file no server serves.
        let plain = context(&root, sandbox.clone(), None);
        let with = context(&root, sandbox.clone(), lsp());
        let mut times = (Vec::new(), Vec::new());
        for round in 0..5 {
            for (ctx, out) in [(&plain, &mut times.0), (&with, &mut times.1)] {
                let started = Instant::now();
                for i in 0..200 {
                    write(ctx, "notes.txt", &format!("round {round} line {i}\n")).await;
                }
                out.push(started.elapsed().as_secs_f64() * 1e6 / 200.0);
            }
        }
        let (without, on) = (median(times.0), median(times.1));
        println!("| an edit of a file no server serves, servers off | {without:.1} µs |");
        println!("| the same edit, servers on | {on:.1} µs ({:+.1} µs) |", on - without);

        // 2. pyright on 500 files: a chain of modules, each calling the one before.
        for i in 0..500 {
            let body = if i == 0 {
                "def f0(x: int) -> int:\n    return x + 1\n".to_string()
            } else {
                format!(
                    "from m{p} import f{p}\n\n\ndef f{i}(x: int) -> int:\n    return f{p}(x) + 1\n",
                    p = i - 1
                )
            };
            std::fs::write(root.join(format!("m{i}.py")), body).unwrap();
        }
        let ctx = context(&root, sandbox.clone(), lsp());
        let started = Instant::now();
        let report = replace(&ctx, "m250.py", "+ 1", "+ undefined_name").await;
        let cold = started.elapsed().as_secs_f64();
        assert!(report.contains("undefined_name"), "{report}");
        let mut warm = Vec::new();
        for round in 0..6 {
            // A signature change that breaks m251.py, then its repair.
            let (old, new) = if round % 2 == 0 {
                ("def f250(x: int)", "def f250(x: int, y: int)")
            } else {
                ("def f250(x: int, y: int)", "def f250(x: int)")
            };
            let started = Instant::now();
            let report = replace(&ctx, "m250.py", old, new).await;
            warm.push(started.elapsed().as_secs_f64() * 1000.0);
            if round % 2 == 0 {
                assert!(report.contains("m251.py"), "{report}");
            }
        }
        println!(
            "| the first edit of a Python file, 500 files: pyright starts and reports | {cold:.2} s |"
        );
        println!(
            "| an edit that breaks (or repairs) a caller in another file, warm: its report | {:.0} ms |",
            median(warm)
        );

        // 3. Two servers running.
        std::fs::write(root.join("a.ts"), "export const a: number = 1;\n").unwrap();
        let report = write(&ctx, "b.ts", "import { a } from './a';\nconst b: string = a;\n").await;
        assert!(report.contains("typescript"), "{report}");
        let pyright = servers_mib("pyright");
        let ts = servers_mib("typescript-language-server") + servers_mib("tsserver");
        let own = rss_kib("self") as f64 / 1024.0;
        println!("| memory: pyright on 500 files | {pyright:.0} MiB |");
        println!("| memory: typescript-language-server with tsserver | {ts:.0} MiB |");
        println!("| memory: this process, with both running | {own:.1} MiB |");
        drop(ctx);
        drop(with);
    });
}
