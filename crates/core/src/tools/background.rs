//! Background commands: `bash` with `run_in_background`, `bash_output` and `bash_kill`.
//!
//! A dev server, a watcher or a long test run starts like any `bash` command (the same
//! rules, the same sandbox, a session and process group of its own, killed with rein) but
//! the call returns at once with the task's id (`bash-1`, `bash-2`, …) and pid. A task of
//! its own (tokio) reads what the command prints into a bounded buffer (1 MiB of unread
//! output, head and tail, the middle counted) and notes its last line; when the shell
//! exits, what is left is read for a moment and the group is killed, as for `bash`.
//!
//! `bash_output` hands the model what the task printed since its last read, and whether it
//! is still running or how it ended; `bash_kill` ends its whole process group. At most
//! `tools.max_background` run at once. The tasks belong to the session, not to a turn: an
//! interrupt or a compaction leaves them running (the reminder tells the model which are),
//! and [`Background::kill_all`] ends them when the session does (the agent calls it as it
//! stops; the headless front end lists what it killed). Every change (a task started,
//! ended, or printed a new last line, at most once a second) is told as a snapshot of
//! every task to the [`OnChange`] the session gave (the agent sends it on to the front end
//! as its `Background` event): the status line counts the running ones and `/bashes`
//! lists them.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe::Receiver;

use super::bash::{self, Output, ProcessGroup};
use super::{ToolContext, ToolSpec};

pub const OUTPUT_NAME: &str = "bash_output";
pub const KILL_NAME: &str = "bash_kill";

/// `tools.max_background` unless configured.
pub const DEFAULT_MAX_RUNNING: usize = 4;
/// Finished tasks kept for `/bashes` and a late `bash_output`, oldest dropped first.
const KEEP_FINISHED: usize = 16;
/// The longest last line kept for `/bashes`, in characters.
const LAST_LINE_CHARS: usize = 200;
/// How long a start watches the new command before it returns: a command done by then
/// reads as a foreground one would, and a server's first lines (its port, an error) come
/// with the start.
const FIRST_LOOK: Duration = Duration::from_secs(1);
/// The least time between two snapshots sent for new last lines.
const LINE_EVENT_EVERY: Duration = Duration::from_secs(1);

pub fn output_spec() -> ToolSpec {
    by_id(
        OUTPUT_NAME,
        "Read what a background command (bash with run_in_background) printed since you last read it, and whether it is still running or how it ended. Returns at once.",
    )
}

pub fn kill_spec() -> ToolSpec {
    by_id(
        KILL_NAME,
        "Stop a background command (bash with run_in_background) and everything it started.",
    )
}

/// A tool that takes a background task's id.
fn by_id(name: &'static str, description: &'static str) -> ToolSpec {
    ToolSpec {
        name,
        description,
        parameters: json!({
            "type": "object",
            "properties": {
                "id": {
                    "type": "string",
                    "description": "The task's id, as bash gave it (bash-1)."
                }
            },
            "required": ["id"],
            "additionalProperties": false
        }),
    }
}

/// The arguments of `bash_output` and `bash_kill`.
#[derive(Debug, serde::Deserialize)]
pub struct Args {
    pub id: String,
}

/// Where a background task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum TaskState {
    Running,
    /// The shell exited with this code.
    Exited {
        code: i32,
    },
    /// Killed by a signal (not by `bash_kill` or rein).
    Signalled {
        signal: i32,
    },
    /// Stopped by `bash_kill`, `/bashes` or the session's end.
    Stopped,
}

impl TaskState {
    /// How it reads in a tool result or a list.
    pub fn describe(self) -> String {
        match self {
            TaskState::Running => "running".to_string(),
            TaskState::Exited { code } => format!("exited with code {code}"),
            TaskState::Signalled { signal } => format!("killed by signal {signal}"),
            TaskState::Stopped => "stopped".to_string(),
        }
    }
}

/// Who is told of every change: called with a snapshot of every task, oldest first, when
/// one starts, ends, or prints a new last line (at most once a second), never while the
/// tasks are locked.
pub type OnChange = Arc<dyn Fn(Vec<TaskInfo>) + Send + Sync>;

/// One task as the front end shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskInfo {
    pub id: String,
    pub command: String,
    pub pid: u32,
    pub state: TaskState,
    /// The last line it printed (a `\r` progress line's latest state), cut.
    pub last_line: String,
    /// It printed something the model has not read yet.
    pub unread: bool,
}

struct Task {
    info: TaskInfo,
    pgid: libc::pid_t,
    started: Instant,
    unread: Output,
    /// The end of the last line, still being written.
    partial: String,
}

#[derive(Default)]
struct Registry {
    next: u32,
    tasks: Vec<Task>,
    /// When the last snapshot for a new last line went out.
    line_event: Option<Instant>,
    /// Set when a new last line is waiting for its snapshot.
    line_pending: bool,
}

struct Shared {
    registry: Mutex<Registry>,
    on_change: Option<OnChange>,
    max_running: usize,
}

/// The session's background tasks. Cloning shares them.
#[derive(Clone)]
pub struct Background {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Background {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Background")
            .field("tasks", &self.snapshot())
            .finish()
    }
}

impl Background {
    /// No tasks yet; snapshots go to `on_change` (none: nobody is told), at most
    /// `max_running` at once.
    pub fn new(on_change: Option<OnChange>, max_running: usize) -> Self {
        Background {
            shared: Arc::new(Shared {
                registry: Mutex::new(Registry::default()),
                on_change,
                max_running: max_running.max(1),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Registry> {
        self.shared.lock()
    }

    /// Every task, oldest first.
    pub fn snapshot(&self) -> Vec<TaskInfo> {
        self.lock().tasks.iter().map(|t| t.info.clone()).collect()
    }

    /// The tasks still running.
    pub fn running(&self) -> Vec<TaskInfo> {
        self.snapshot()
            .into_iter()
            .filter(|t| t.state == TaskState::Running)
            .collect()
    }

    /// Start `command` in the background and watch it for its first moments
    /// (`FIRST_LOOK`, a second): the tool result says how it started (a command that is done by
    /// then gives its output and how it ended, as `bash` would; one still running, what it
    /// printed so far), or why it could not start.
    pub async fn start(&self, command: &str, ctx: &ToolContext) -> Result<bash::Ran, String> {
        let id = self.spawn(command, ctx)?;
        let deadline = Instant::now() + FIRST_LOOK;
        while Instant::now() < deadline && self.state_of(&id) == Some(TaskState::Running) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let mut first = self.output(&id)?;
        let pid = self
            .snapshot()
            .into_iter()
            .find(|t| t.id == id)
            .map_or(0, |t| t.pid);
        first.text = match self.state_of(&id) {
            Some(TaskState::Running) => format!(
                "Started {id} (pid {pid}) in the background: `{command}`. Read what it prints \
                 with bash_output {{\"id\": \"{id}\"}}; stop it with bash_kill. It keeps \
                 running after this turn until stopped or the session ends. Its first second:\n{}",
                first.text
            ),
            _ => format!(
                "{id} (pid {pid}) was done within its first second:\n{}",
                first.text
            ),
        };
        Ok(first)
    }

    fn state_of(&self, id: &str) -> Option<TaskState> {
        self.lock()
            .tasks
            .iter()
            .find(|t| t.info.id == id)
            .map(|t| t.info.state)
    }

    /// Start `command`: its id.
    fn spawn(&self, command: &str, ctx: &ToolContext) -> Result<String, String> {
        let running = self.running().len();
        if running >= self.shared.max_running {
            return Err(format!(
                "{running} background commands are running, the most at once \
                 (tools.max_background); stop one with bash_kill or wait for one to end"
            ));
        }
        let (group, pipe) = bash::spawn_shell(command, ctx)?;
        let pid = u32::try_from(group.pgid).unwrap_or_default();
        let id = {
            let mut registry = self.lock();
            registry.next += 1;
            let id = format!("bash-{}", registry.next);
            registry.tasks.push(Task {
                info: TaskInfo {
                    id: id.clone(),
                    command: command.to_string(),
                    pid,
                    state: TaskState::Running,
                    last_line: String::new(),
                    unread: false,
                },
                pgid: group.pgid,
                started: Instant::now(),
                unread: Output::default(),
                partial: String::new(),
            });
            let finished: Vec<usize> = (0..registry.tasks.len())
                .filter(|&i| registry.tasks[i].info.state != TaskState::Running)
                .collect();
            if finished.len() > KEEP_FINISHED {
                registry.tasks.remove(finished[0]);
            }
            id
        };
        self.shared.send_snapshot();
        tokio::spawn(watch(self.shared.clone(), id.clone(), group, pipe));
        Ok(id)
    }

    /// What task `id` printed since the last read, and how it stands: the text the model
    /// reads, and what was printed when that differs.
    pub fn output(&self, id: &str) -> Result<bash::Ran, String> {
        let mut registry = self.lock();
        let Some(task) = registry.tasks.iter_mut().find(|t| t.info.id == id) else {
            return Err(unknown(id, &registry));
        };
        let printed = std::mem::take(&mut task.unread).render();
        let was_unread = std::mem::replace(&mut task.info.unread, false);
        let state = match task.info.state {
            TaskState::Running => format!(
                "[{id} is still running, for {}]",
                crate::text::duration(task.started.elapsed())
            ),
            other => format!("[{id} {}]", other.describe()),
        };
        let body = printed.trim_end();
        let text = if body.is_empty() {
            format!("(no new output)\n{state}")
        } else {
            format!("{body}\n{state}")
        };
        drop(registry);
        if was_unread {
            self.shared.send_snapshot();
        }
        Ok(bash::Ran {
            printed: (!printed.is_empty()).then_some(printed),
            text,
        })
    }

    /// Stop task `id` and everything it started.
    pub fn kill(&self, id: &str) -> Result<String, String> {
        let registry = self.lock();
        let Some(task) = registry.tasks.iter().find(|t| t.info.id == id) else {
            return Err(unknown(id, &registry));
        };
        if task.info.state != TaskState::Running {
            return Ok(format!(
                "{id} was not running ({}); nothing to stop",
                task.info.state.describe()
            ));
        }
        let pgid = task.pgid;
        drop(registry);
        self.shared.stop(id, pgid);
        Ok(format!(
            "{id} was stopped (its whole process group killed); bash_output {{\"id\": \"{id}\"}} \
             reads what it printed before"
        ))
    }

    /// Stop every running task (the session ends): those that were running.
    pub fn kill_all(&self) -> Vec<TaskInfo> {
        let running: Vec<(TaskInfo, libc::pid_t)> = self
            .lock()
            .tasks
            .iter()
            .filter(|t| t.info.state == TaskState::Running)
            .map(|t| (t.info.clone(), t.pgid))
            .collect();
        for (info, pgid) in &running {
            self.shared.stop(&info.id, *pgid);
        }
        running.into_iter().map(|(info, _)| info).collect()
    }
}

/// "no task X", with the ids there are.
fn unknown(id: &str, registry: &Registry) -> String {
    let ids: Vec<&str> = registry.tasks.iter().map(|t| t.info.id.as_str()).collect();
    if ids.is_empty() {
        format!(
            "there is no background task {}; none was started (bash with run_in_background starts one)",
            super::printable(id)
        )
    } else {
        format!(
            "there is no background task {}; the tasks are: {}",
            super::printable(id),
            ids.join(", ")
        )
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Mark `id` stopped and kill its group (the watching task then sees the shell end).
    fn stop(&self, id: &str, pgid: libc::pid_t) {
        if let Some(task) = self.lock().tasks.iter_mut().find(|t| t.info.id == id) {
            if task.info.state == TaskState::Running {
                task.info.state = TaskState::Stopped;
            }
        }
        // The group and what left it (`pgid` came from `ProcessGroup`, which refuses ids
        // below 2).
        crate::host::process_tree::kill(pgid);
        self.send_snapshot();
    }

    fn send_snapshot(&self) {
        let Some(on_change) = &self.on_change else {
            return;
        };
        let tasks = {
            let mut registry = self.lock();
            registry.line_event = Some(Instant::now());
            registry.line_pending = false;
            registry.tasks.iter().map(|t| t.info.clone()).collect()
        };
        on_change(tasks);
    }

    /// `data` printed by task `id`.
    fn printed(&self, id: &str, data: &[u8]) {
        let send = {
            let mut registry = self.lock();
            let Some(task) = registry.tasks.iter_mut().find(|t| t.info.id == id) else {
                return;
            };
            task.unread.push(data);
            let first_unread = !std::mem::replace(&mut task.info.unread, true);
            let line_changed = task.note_lines(data);
            let due = registry
                .line_event
                .is_none_or(|at| at.elapsed() >= LINE_EVENT_EVERY);
            if line_changed {
                registry.line_pending = true;
            }
            first_unread || (registry.line_pending && due)
        };
        if send {
            self.send_snapshot();
        }
    }

    /// Task `id`'s shell ended with `state` (unless it was stopped).
    fn ended(&self, id: &str, state: TaskState) {
        if let Some(task) = self.lock().tasks.iter_mut().find(|t| t.info.id == id) {
            if task.info.state == TaskState::Running {
                task.info.state = state;
            }
            if !task.partial.trim().is_empty() {
                task.info.last_line = cut_line(&task.partial);
            }
        }
        self.send_snapshot();
    }
}

impl Task {
    /// Take in `data` for the last line; true when a whole new line ended in it.
    fn note_lines(&mut self, data: &[u8]) -> bool {
        let text = String::from_utf8_lossy(data);
        let mut changed = false;
        for (i, piece) in text.split(['\n', '\r']).enumerate() {
            if i > 0 {
                // A line ended before this piece.
                if !self.partial.trim().is_empty() {
                    self.info.last_line = cut_line(&self.partial);
                    changed = true;
                }
                self.partial.clear();
            }
            if self.partial.len() < 4 * LAST_LINE_CHARS {
                self.partial.push_str(piece);
            }
        }
        changed
    }
}

fn cut_line(line: &str) -> String {
    let line = crate::text::sanitize::sanitize(line.trim());
    match line.char_indices().nth(LAST_LINE_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.into_owned(),
    }
}

/// Read what task `id` prints until its shell exits; then what is left for a moment, and
/// kill its group (children it left behind would hold the pipe and outlive it).
async fn watch(shared: Arc<Shared>, id: String, mut group: ProcessGroup, mut pipe: Receiver) {
    let mut buf = vec![0u8; bash::READ_CHUNK];
    let mut eof = false;
    let status = loop {
        tokio::select! {
            read = pipe.read(&mut buf), if !eof => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => shared.printed(&id, &buf[..n]),
            },
            status = group.child.wait() => break status,
        }
    };
    if !eof {
        let stop = tokio::time::Instant::now() + bash::GRACE;
        loop {
            tokio::select! {
                read = pipe.read(&mut buf) => match read {
                    Ok(0) | Err(_) => break,
                    Ok(n) => shared.printed(&id, &buf[..n]),
                },
                _ = tokio::time::sleep_until(stop) => break,
            }
        }
    }
    group.kill();
    let state = match status {
        Ok(status) => {
            use std::os::unix::process::ExitStatusExt;
            match (status.code(), status.signal()) {
                (Some(code), _) => TaskState::Exited { code },
                (None, Some(signal)) => TaskState::Signalled { signal },
                (None, None) => TaskState::Exited { code: -1 },
            }
        }
        Err(_) => TaskState::Exited { code: -1 },
    };
    shared.ended(&id, state);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_context;

    async fn until(background: &Background, id: &str, done: impl Fn(&TaskInfo) -> bool) {
        for _ in 0..500 {
            if background.snapshot().iter().any(|t| t.id == id && done(t)) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("{id} never got there: {:?}", background.snapshot());
    }

    #[tokio::test]
    async fn a_task_runs_on_its_output_is_read_by_id_and_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path(), Duration::from_secs(5));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let on_change: OnChange = Arc::new(move |tasks| {
            let _ = tx.send(tasks);
        });
        let background = Background::new(Some(on_change), 4);
        let started = background
            .start("echo one; sleep 1.5; echo two; exit 3", &ctx)
            .await
            .unwrap();
        // Its first second comes with the start.
        assert!(
            started.text.starts_with("Started bash-1 (pid "),
            "{}",
            started.text
        );
        assert!(
            started
                .text
                .ends_with("Its first second:\none\n[bash-1 is still running, for 1.0s]"),
            "{}",
            started.text
        );
        let again = background.output("bash-1").unwrap();
        assert!(again.text.starts_with("(no new output)"), "{}", again.text);
        until(&background, "bash-1", |t| t.state != TaskState::Running).await;
        let last = background.output("bash-1").unwrap();
        assert_eq!(last.text, "two\n[bash-1 exited with code 3]");
        assert_eq!(last.printed.as_deref(), Some("two\n"));
        // The front end heard of each change.
        let mut snapshots = Vec::new();
        while let Ok(tasks) = rx.try_recv() {
            snapshots.push(tasks);
        }
        assert!(snapshots.len() >= 3, "{snapshots:?}");
        let end = snapshots.last().unwrap();
        assert_eq!(end[0].state, TaskState::Exited { code: 3 });
        assert_eq!(end[0].last_line, "two");
    }

    /// The front end hears of a task's first output at once, of a new last line at most
    /// once a `LINE_EVENT_EVERY` (a line that came sooner goes with the next output once
    /// due), and of nothing else while the task prints without ending a line.
    #[tokio::test]
    async fn the_front_end_hears_of_first_output_and_new_lines_not_of_every_write() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path(), Duration::from_secs(5));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let on_change: OnChange = Arc::new(move |tasks| {
            let _ = tx.send(tasks);
        });
        let background = Background::new(Some(on_change), 4);
        // `spawn`, not `start`: nothing reads its output, so it stays unread.
        let id = background
            .spawn(
                "echo one; sleep 1.5; echo two; while :; do sleep 0.3; printf .; done",
                &ctx,
            )
            .unwrap();
        let task = |tasks: &[TaskInfo]| tasks.iter().find(|t| t.id == id).cloned();
        async fn next(
            rx: &mut tokio::sync::mpsc::UnboundedReceiver<Vec<TaskInfo>>,
        ) -> Vec<TaskInfo> {
            // A guard against a hang, not a claim about speed.
            tokio::time::timeout(Duration::from_secs(120), rx.recv())
                .await
                .expect("no snapshot came")
                .expect("the channel is open")
        }
        loop {
            let tasks = next(&mut rx).await;
            if task(&tasks).is_some_and(|t| t.unread) {
                break;
            }
        }
        loop {
            let tasks = next(&mut rx).await;
            if task(&tasks).is_some_and(|t| t.last_line == "two") {
                break;
            }
        }
        // The dots end no line: for a while after, nothing more is told (a check that
        // something does not happen, so a short wait of its own).
        tokio::time::sleep(Duration::from_millis(1600)).await;
        let more: Vec<Vec<TaskInfo>> = std::iter::from_fn(|| rx.try_recv().ok()).collect();
        assert!(more.is_empty(), "told of writes that end no line: {more:?}");
        background.kill(&id).unwrap();
    }

    /// Finished tasks are kept for `/bashes` and a late `bash_output`, up to
    /// `KEEP_FINISHED`: a new start drops the oldest finished one beyond it, never a
    /// running one.
    #[tokio::test]
    async fn the_oldest_finished_tasks_go_beyond_the_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path(), Duration::from_secs(5));
        let background = Background::new(None, 4);
        let total = KEEP_FINISHED + 3;
        for n in 1..=total {
            background.start("true", &ctx).await.unwrap();
            until(&background, &format!("bash-{n}"), |t| {
                t.state != TaskState::Running
            })
            .await;
        }
        let ids: Vec<String> = background.snapshot().into_iter().map(|t| t.id).collect();
        // Each start kept KEEP_FINISHED finished ones beside the new one, which then ended.
        assert_eq!(ids.len(), KEEP_FINISHED + 1, "{ids:?}");
        let first_kept = total - KEEP_FINISHED;
        let expected: Vec<String> = (first_kept..=total).map(|n| format!("bash-{n}")).collect();
        assert_eq!(ids, expected);
        assert!(background.output("bash-1").is_err());
    }

    #[tokio::test]
    async fn kill_ends_the_whole_group_and_the_cap_holds() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path(), Duration::from_secs(5));
        let background = Background::new(None, 2);
        background
            .start("sleep 100 & echo $! > child.pid; wait", &ctx)
            .await
            .unwrap();
        background.start("sleep 100", &ctx).await.unwrap();
        let third = background.start("sleep 100", &ctx).await.unwrap_err();
        assert!(
            third.contains("2 background commands are running"),
            "{third}"
        );
        let pid_file = dir.path().join("child.pid");
        for _ in 0..200 {
            if std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n')) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let child: libc::pid_t = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let said = background.kill("bash-1").unwrap();
        assert!(said.contains("bash-1 was stopped"), "{said}");
        until(&background, "bash-1", |t| t.state == TaskState::Stopped).await;
        for _ in 0..200 {
            // SAFETY: signal 0 only checks that the process exists.
            if unsafe { libc::kill(child, 0) } != 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // SAFETY: as above.
        assert_ne!(unsafe { libc::kill(child, 0) }, 0, "the child survived");
        assert!(background.kill("bash-1").unwrap().contains("not running"));
        assert!(background
            .kill("bash-9")
            .unwrap_err()
            .contains("bash-1, bash-2"));
        // A slot is free again; the session's end stops the rest.
        background.start("sleep 100", &ctx).await.unwrap();
        let stopped: Vec<String> = background.kill_all().into_iter().map(|t| t.id).collect();
        assert_eq!(stopped, ["bash-2", "bash-3"]);
        assert!(background.running().is_empty());
    }

    #[tokio::test]
    async fn a_command_done_within_its_first_second_reads_as_a_foreground_one() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path(), Duration::from_secs(5));
        let background = Background::new(None, 4);
        let ran = background.start("ls; echo done", &ctx).await.unwrap();
        assert_eq!(
            ran.text,
            "bash-1 (pid ".to_string()
                + &background.snapshot()[0].pid.to_string()
                + ") was done within its first second:\ndone\n[bash-1 exited with code 0]"
        );
        assert!(background.running().is_empty());
    }

    #[test]
    fn last_lines_follow_newlines_and_carriage_returns() {
        let mut task = Task {
            info: TaskInfo {
                id: "bash-1".into(),
                command: "x".into(),
                pid: 2,
                state: TaskState::Running,
                last_line: String::new(),
                unread: false,
            },
            pgid: 2,
            started: Instant::now(),
            unread: Output::default(),
            partial: String::new(),
        };
        assert!(!task.note_lines(b"compiling"));
        assert!(task.note_lines(b" a\nprogress 10%\rprogress 50%\r"));
        assert_eq!(task.info.last_line, "progress 50%");
        assert!(!task.note_lines(b"\n\n"));
        assert_eq!(task.info.last_line, "progress 50%");
        task.note_lines(format!("{}\n", "x".repeat(500)).as_bytes());
        assert_eq!(task.info.last_line.chars().count(), LAST_LINE_CHARS + 1);
        // A line that comes in pieces is one line.
        assert!(!task.note_lines(b"cargo"));
        assert!(task.note_lines(b" build\n"));
        assert_eq!(task.info.last_line, "cargo build");
        // Long enough to be cut, in pieces of wide characters: still a full last line.
        for _ in 0..4 {
            task.note_lines("€".repeat(60).as_bytes());
        }
        task.note_lines(b"\n");
        assert_eq!(task.info.last_line.chars().count(), LAST_LINE_CHARS + 1);
    }
}
