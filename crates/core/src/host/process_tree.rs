//! Killing everything a child of rein started, not only its process group.
//!
//! rein starts hooks, `bash` commands, background commands and MCP stdio servers each
//! leading a process group of its own, and kills the group when it is done with them. A
//! process that calls `setsid` (`setsid sleep 1000 &`, a daemon's double fork) leaves the
//! group, and would outlive its hook or command (in the sandbox the pid namespace ends
//! it; with the sandbox off nothing would). So each such child also carries a mark in its
//! environment, [`VAR`], which whatever it starts inherits: [`mark`] puts a new one on the
//! command before it spawns, [`Mark::register`] ties it to the group once the child runs,
//! and [`kill`] (the one way rein kills such a group) sends SIGKILL to the group and then,
//! on Linux, to every process of the user's whose environment carries the mark or whose
//! parent is one of those, found by reading `/proc`, in rounds until a round finds none
//! left (what forked meanwhile is found in the next round). Only processes that started
//! after the group's leader can carry its mark, so only their environments are read: the
//! cost of a kill follows what the child started, not the machine's count of processes
//! (a read of each `/proc/PID/stat`, a few hundred microseconds for 100 processes); it
//! happens once a group is killed, never while it runs.
//!
//! What escapes: on Linux, a process that both clears its environment (`env -i`) and
//! leaves the group after its parent died; on macOS (no `/proc`), anything that left the
//! group: there only the group is killed. A child started under another rein keeps that
//! rein's marks too (the value lists them, `:`-separated), so the outer rein still finds it.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, OnceLock, PoisonError};

/// The environment variable that carries the marks (not a `REIN_*` name: commands never
/// see those, and it is no secret).
pub const VAR: &str = "PROCESS_TREE_OF_REIN";

/// Rounds of looking for marked processes before giving up (each kills what it finds).
#[cfg(target_os = "linux")]
const ROUNDS: usize = 8;

/// The most bytes of a process's environment read when looking for the mark.
#[cfg(target_os = "linux")]
const MAX_ENVIRON: u64 = 1024 * 1024;

/// A group rein started and has not killed yet: its mark, and when its leader started
/// (clock ticks since boot, from `/proc`; 0 where unknown). A process that started before
/// the leader cannot descend from it, so its environment is never read.
#[derive(Clone)]
struct Group {
    mark: String,
    started: u64,
}

/// The groups rein started and has not killed yet, by group id.
fn marks() -> &'static Mutex<HashMap<libc::pid_t, Group>> {
    static MARKS: OnceLock<Mutex<HashMap<libc::pid_t, Group>>> = OnceLock::new();
    MARKS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// A mark put on a command that has not started yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark(String);

impl Mark {
    /// The child started and leads the group `pgid`: [`kill`] on that group finds what
    /// the child started by this mark.
    pub fn register(self, pgid: libc::pid_t) {
        if pgid > 1 {
            #[cfg(target_os = "linux")]
            let started = linux::started(pgid).unwrap_or(0);
            #[cfg(not(target_os = "linux"))]
            let started = 0;
            marks()
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(
                    pgid,
                    Group {
                        mark: self.0,
                        started,
                    },
                );
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A new mark (unique to this rein: its pid, the time it first marked, a count), set in
/// `cmd`'s environment after the marks rein itself carries.
pub fn mark(cmd: &mut tokio::process::Command) -> Mark {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static STARTED: OnceLock<u128> = OnceLock::new();
    let started = STARTED.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    });
    let mark = format!(
        "{}.{started:x}.{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let value = match std::env::var(VAR) {
        Ok(outer) if !outer.is_empty() => format!("{outer}:{mark}"),
        _ => mark.clone(),
    };
    cmd.env(VAR, value);
    Mark(mark)
}

/// Send `signal` to the group `pgid` and to every process its mark is found on (and their
/// children). SIGKILL is sent in rounds until none is left, and the group's mark is then
/// forgotten; another signal is sent once (a polite first step before a SIGKILL).
pub fn signal(pgid: libc::pid_t, signal: libc::c_int) {
    if pgid <= 1 {
        return;
    }
    // SAFETY: killpg only sends a signal; `pgid` > 1 can be neither our group (0) nor init's.
    unsafe {
        libc::killpg(pgid, signal);
    }
    signal_left(pgid, signal);
}

/// The group `pgid` is gone (its members ended): SIGKILL what they started that left it,
/// and forget its mark.
pub fn kill_left(pgid: libc::pid_t) {
    if pgid > 1 {
        signal_left(pgid, libc::SIGKILL);
    }
}

/// [`signal`] without the signal to the group itself.
fn signal_left(pgid: libc::pid_t, signal: libc::c_int) {
    let mark = {
        let mut marks = marks().lock().unwrap_or_else(PoisonError::into_inner);
        if signal == libc::SIGKILL {
            marks.remove(&pgid)
        } else {
            marks.get(&pgid).cloned()
        }
    };
    #[cfg(target_os = "linux")]
    linux::signal_marked(pgid, mark.as_ref(), signal);
    #[cfg(not(target_os = "linux"))]
    let _ = mark;
}

/// SIGKILL the group `pgid` and everything its members started (see the module's story).
pub fn kill(pgid: libc::pid_t) {
    signal(pgid, libc::SIGKILL);
}

/// The live processes (not zombies) of the user's whose environment carries `mark`, or
/// which are in the group `pgid`, or descend from one of those. Empty where `/proc`
/// cannot be read.
pub fn members(pgid: libc::pid_t, mark: &str) -> Vec<libc::pid_t> {
    #[cfg(target_os = "linux")]
    {
        let group = Group {
            mark: mark.to_string(),
            started: linux::started(pgid).unwrap_or(0),
        };
        let mut out: Vec<libc::pid_t> = linux::doomed(pgid, Some(&group)).into_iter().collect();
        out.sort_unstable();
        out
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (pgid, mark);
        Vec::new()
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use super::*;
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;

    /// One process as `/proc/PID/stat` tells it.
    struct Proc {
        pid: libc::pid_t,
        ppid: libc::pid_t,
        pgid: libc::pid_t,
        zombie: bool,
        /// When it started, in clock ticks since boot.
        started: u64,
    }

    /// Fields of a `/proc/PID/stat` line after the command's name (which may hold spaces
    /// and parentheses): state, ppid, pgrp, ... (the 22nd field of the line is the 20th
    /// of these, the start time).
    fn after_name(stat: &str) -> Option<std::str::SplitWhitespace<'_>> {
        stat.rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace())
    }

    /// When the process `pid` started, in clock ticks since boot.
    pub(super) fn started(pid: libc::pid_t) -> Option<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        after_name(&stat)?.nth(19)?.parse().ok()
    }

    /// Every process of this user's that `/proc` shows.
    fn processes() -> Vec<Proc> {
        // SAFETY: geteuid takes nothing and cannot fail.
        let uid = unsafe { libc::geteuid() };
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<libc::pid_t>().ok())
            else {
                continue;
            };
            if !entry.metadata().is_ok_and(|m| m.uid() == uid) {
                continue;
            }
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            let Some(mut fields) = after_name(&stat) else {
                continue;
            };
            let state = fields.next().unwrap_or_default();
            let ppid = fields.next().and_then(|f| f.parse().ok()).unwrap_or(0);
            let pgid = fields.next().and_then(|f| f.parse().ok()).unwrap_or(0);
            let started = fields.nth(16).and_then(|f| f.parse().ok()).unwrap_or(0);
            out.push(Proc {
                pid,
                ppid,
                pgid,
                zombie: state == "Z" || state == "X",
                started,
            });
        }
        out
    }

    /// Whether the environment of `pid` carries `mark` in [`VAR`] (read up to
    /// [`MAX_ENVIRON`] bytes).
    fn carries(pid: libc::pid_t, mark: &str) -> bool {
        let Ok(file) = std::fs::File::open(format!("/proc/{pid}/environ")) else {
            return false;
        };
        let mut environ = Vec::new();
        if file.take(MAX_ENVIRON).read_to_end(&mut environ).is_err() {
            return false;
        }
        let prefix = format!("{VAR}=");
        environ.split(|&b| b == 0).any(|entry| {
            entry
                .strip_prefix(prefix.as_bytes())
                .is_some_and(|value| value.split(|&b| b == b':').any(|m| m == mark.as_bytes()))
        })
    }

    /// The live processes to end: the group's, the marked ones, and their descendants;
    /// never rein itself.
    pub(super) fn doomed(pgid: libc::pid_t, group: Option<&Group>) -> HashSet<libc::pid_t> {
        // SAFETY: getpid takes nothing and cannot fail.
        let me = unsafe { libc::getpid() };
        let all = processes();
        let mut doomed: HashSet<libc::pid_t> = all
            .iter()
            .filter(|p| {
                p.pgid == pgid
                    || group.is_some_and(|g| p.started >= g.started && carries(p.pid, &g.mark))
            })
            .map(|p| p.pid)
            .collect();
        loop {
            let before = doomed.len();
            for p in &all {
                if doomed.contains(&p.ppid) {
                    doomed.insert(p.pid);
                }
            }
            if doomed.len() == before {
                break;
            }
        }
        let zombies: HashSet<libc::pid_t> =
            all.iter().filter(|p| p.zombie).map(|p| p.pid).collect();
        doomed.retain(|pid| *pid > 1 && *pid != me && !zombies.contains(pid));
        doomed
    }

    /// Send `signal` to what [`doomed`] finds; SIGKILL again while any is left, up to
    /// [`ROUNDS`] times.
    pub(super) fn signal_marked(pgid: libc::pid_t, group: Option<&Group>, signal: libc::c_int) {
        let rounds = if signal == libc::SIGKILL { ROUNDS } else { 1 };
        for _ in 0..rounds {
            let doomed = doomed(pgid, group);
            if doomed.is_empty() {
                return;
            }
            for pid in doomed {
                // SAFETY: kill only sends a signal, to a process > 1 that is not rein.
                unsafe {
                    libc::kill(pid, signal);
                }
            }
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Whether `pid` is gone (or a zombie).
    fn gone(pid: libc::pid_t) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        }
    }

    /// A shell in a group of its own whose child leaves the group with `setsid` and whose
    /// grandchild is orphaned (a double fork): killing the group kills both.
    #[tokio::test]
    async fn what_left_the_group_with_setsid_dies_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        let mut cmd = tokio::process::Command::new("sh");
        cmd.arg("-c")
            .arg(format!(
                "setsid sh -c 'echo $$ >> {p}; sleep 300' & \
                 (setsid sh -c 'sleep 300 & echo $! >> {p}' &); \
                 sleep 300",
                p = pids.display()
            ))
            .kill_on_drop(true);
        let mark = mark(&mut cmd);
        // SAFETY: setsid is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        let mut child = cmd.spawn().unwrap();
        let pgid = libc::pid_t::try_from(child.id().unwrap()).unwrap();
        mark.clone().register(pgid);
        let mut escaped: Vec<libc::pid_t> = Vec::new();
        for _ in 0..500 {
            escaped = std::fs::read_to_string(&pids)
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.trim().parse().ok())
                .collect();
            if escaped.len() == 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(escaped.len(), 2, "the escapes did not start");
        let members = members(pgid, mark.as_str());
        for pid in &escaped {
            assert!(members.contains(pid), "{pid} not found among {members:?}");
        }
        kill(pgid);
        let _ = child.wait().await;
        let mut left = escaped.clone();
        for _ in 0..500 {
            left.retain(|pid| !gone(*pid));
            if left.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(left.is_empty(), "outlived their group: {left:?}");
    }

    /// The start time read from `/proc` orders a parent before its child: the filter that
    /// spares older processes' environments would otherwise skip a real descendant.
    #[tokio::test]
    async fn a_child_starts_after_its_parent() {
        let me = libc::pid_t::try_from(std::process::id()).unwrap();
        let mut child = tokio::process::Command::new("sleep")
            .arg("5")
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let pid = libc::pid_t::try_from(child.id().unwrap()).unwrap();
        let (parent, started) = (linux::started(me).unwrap(), linux::started(pid).unwrap());
        assert!(parent > 0 && started >= parent, "{parent} then {started}");
        let _ = child.kill().await;
    }
}
