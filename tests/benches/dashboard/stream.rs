//! Streaming a reply into the dashboard.

use rein_test_support as support;

use std::path::Path;
use std::time::{Duration, Instant};

use support::{Reply, ScriptedServer};

use super::measure::{cpu_time, cpu_time_ns, main_thread_ns, rein_pid, status_kb, written_bytes};
use super::replies::{long_reply, sized_reply};
use super::{Dirs, Session, Shape, Stream, TmuxServer, IDLE, MARKER, MODEL, STARTUP_POLL};
/// Coarser while streaming, so the bench's own `capture-pane` calls take less CPU from rein.
const STREAM_POLL: Duration = Duration::from_millis(20);

/// One fresh rein, one prompt, the long reply; with `idle`, then 5 s of nothing.
pub(super) fn stream(
    tmux: &TmuxServer,
    binary: &Path,
    runtime: &tokio::runtime::Runtime,
    text: &str,
    paced: bool,
    idle: bool,
) -> Stream {
    stream_reply(tmux, binary, runtime, long_reply(text, paced), paced, idle)
}

/// [`stream`] of a given reply (and its chunk count).
pub(super) fn stream_reply(
    tmux: &TmuxServer,
    binary: &Path,
    runtime: &tokio::runtime::Runtime,
    (reply, chunks): (Reply, usize),
    paced: bool,
    idle: bool,
) -> Stream {
    let server = runtime
        .block_on(ScriptedServer::start(vec![reply]))
        .expect("the scripted server starts");
    let dirs = Dirs::new();
    let name = if paced { "stream-paced" } else { "stream" };
    let session = Session::start(tmux, name, &dirs.rein_command(binary, &server.base_url()));
    session.wait_for(MODEL, STARTUP_POLL);
    let pid = rein_pid(&session);
    // Let the startup settle, so its work is not counted as streaming.
    std::thread::sleep(Duration::from_millis(300));

    let (cpu0, wrote0, start) = (cpu_time(pid), written_bytes(pid), Instant::now());
    let split0 = main_thread_ns(pid).zip(cpu_time_ns(pid));
    session.send_line("please write the long reply");
    let seen = session.wait_for(MARKER, STREAM_POLL);
    let (cpu1, wrote1) = (cpu_time(pid), written_bytes(pid));
    let split1 = main_thread_ns(pid).zip(cpu_time_ns(pid));
    let split = split0
        .zip(split1)
        .map(|((m0, a0), (m1, a1))| (m1.saturating_sub(m0), a1.saturating_sub(a0)));
    let hwm_kb = status_kb(pid, "VmHWM");
    let rss_kb = status_kb(pid, "VmRSS");

    let (mut idle_cpu, mut idle_cpu_ns) = (None, None);
    if idle {
        std::thread::sleep(Duration::from_secs(1));
        let (a, a_ns) = (cpu_time(pid), cpu_time_ns(pid));
        std::thread::sleep(IDLE);
        let (b, b_ns) = (cpu_time(pid), cpu_time_ns(pid));
        idle_cpu = Some(b - a);
        idle_cpu_ns = a_ns.zip(b_ns).map(|(a, b)| b.saturating_sub(a));
    }
    Stream {
        chunks,
        cpu: cpu1 - cpu0,
        wall: seen - start,
        written: wrote0.zip(wrote1).map(|(a, b)| b - a),
        hwm_kb,
        rss_kb,
        idle_cpu,
        idle_cpu_ns,
        split,
    }
}

pub(super) fn stream_row(label: &str, s: &Stream) {
    let written = s
        .written
        .map(|b| format!(", {:.1} MB written", b as f64 / 1e6))
        .unwrap_or_default();
    // Threads that ended while streaming (the blocking pool's) are missing from the live
    // threads' total; the rest is the agent's runtime.
    let split = s
        .split
        .map(|(main, all)| {
            format!(
                "; the dashboard's thread {:.3} s, the others {:.3} s",
                main.as_secs_f64(),
                all.saturating_sub(main).as_secs_f64()
            )
        })
        .unwrap_or_default();
    println!(
        "| {label} | {:.2} s CPU, {:.2} s wall ({:.0} chunks/s{written}{split}) | ≤ 0.5 s CPU |",
        s.cpu.as_secs_f64(),
        s.wall.as_secs_f64(),
        s.chunks as f64 / s.wall.as_secs_f64(),
    );
}

/// Peak memory after long replies, with and without paragraph breaks (issue 16, item 4):
/// rows of (reply, VmHWM in kB).
pub(super) fn long_replies(
    tmux: &TmuxServer,
    binary: &Path,
    runtime: &tokio::runtime::Runtime,
    only: &str,
) -> Vec<(String, u64)> {
    [
        (300_000, Shape::Lines),
        (300_000, Shape::OneLine),
        (1_200_000, Shape::Paragraphs),
        (1_200_000, Shape::Lines),
        (1_200_000, Shape::OneLine),
    ]
    .iter()
    .filter(|(chars, shape)| only.is_empty() || only == format!("{chars}-{}", shape.word()))
    .map(|&(chars, shape)| {
        let run = stream(
            tmux,
            binary,
            runtime,
            &sized_reply(chars, shape),
            false,
            false,
        );
        let shape = match shape {
            Shape::Paragraphs => "with paragraph breaks",
            Shape::Lines => "short lines, no blank line",
            Shape::OneLine => "one line",
        };
        (format!("{chars} characters, {shape}"), run.hwm_kb)
    })
    .collect()
}
