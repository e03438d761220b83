//! What the bench reads of a process: CPU time, memory, bytes written, and the figures'
//! units.

use std::time::Duration;

use super::Session;

/// CPU time of the whole process (every thread, live or exited), in clock ticks' resolution.
pub(super) fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    // The command name may hold spaces; the fields after its closing ')' start at field 3.
    let fields: Vec<&str> = stat[stat.rfind(')').expect("a stat line") + 2..]
        .split(' ')
        .collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
    Duration::from_nanos(ticks * 1_000_000_000 / per_second)
}

/// CPU time of the live threads to the nanosecond (`/proc/PID/task/*/schedstat`); `None`
/// where the kernel does not keep it.
pub(super) fn cpu_time_ns(pid: u32) -> Option<Duration> {
    let mut total = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let text = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
        total += text.split(' ').next()?.parse::<u64>().ok()?;
    }
    Some(Duration::from_nanos(total))
}

/// CPU time of the process's main thread (the dashboard's loop: update, render, terminal
/// writes) to the nanosecond; the rest of [`cpu_time_ns`] is the agent's runtime (HTTP,
/// SSE, chunk JSON) and the helpers.
pub(super) fn main_thread_ns(pid: u32) -> Option<Duration> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/schedstat")).ok()?;
    Some(Duration::from_nanos(text.split(' ').next()?.parse().ok()?))
}

/// A `/proc/PID/status` field in kB, e.g. `VmRSS`.
pub(super) fn status_kb(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// Bytes the process has written (terminal output, mostly); `None` if unreadable.
pub(super) fn written_bytes(pid: u32) -> Option<u64> {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("wchar: "))?
        .parse()
        .ok()
}

pub(super) fn rein_pid(session: &Session) -> u32 {
    let pid = session.pane_pid();
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    // Or rein under valgrind (REIN_BENCH_BINARY a wrapper that execs it), for a profile.
    let comm = comm.trim();
    assert!(
        comm == "rein" || comm.starts_with("callgrind"),
        "pane pid {pid} is not rein: {comm}"
    );
    pid
}

pub(super) fn mib(kb: u64) -> String {
    format!("{:.1} MiB", kb as f64 / 1024.0)
}

pub(super) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub(super) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}
