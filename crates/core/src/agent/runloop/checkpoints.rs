//! When the agent records the project's files ([`crate::checkpoint`]): as a turn begins,
//! and before and after each batch of tool calls that could change files.
//!
//! The turn's start checkpoint is taken in the background while the model thinks (the
//! first one of a big project takes seconds) and waited for only before the turn's first
//! tool call that could change a file, or at the turn's end. Its entry is recorded then,
//! after the turn's user message. Before a batch, a checkpoint that differs from this
//! session's last one means someone else changed files meanwhile: it is recorded so those
//! changes are never counted as the agent's. After the batch, what differs is the batch's
//! own doing: taken in the background while the model reads the results (at most one
//! checkpoint is in flight; the next batch, the turn's end or a rewind waits for it), then
//! recorded with its paths and told to the front end ([`AgentEvent::FilesChanged`]). A
//! checkpoint that cannot be taken is a notice (once),
//! never a failed turn; files left out of the record are told once each. A session's first
//! checkpoint also keeps the record under its quota ([`Store::maintain`]), in the same
//! background task.
//!
//! The session's first checkpoint starts as the session does ([`Agent::checkpoint_warm_up`],
//! recorded nowhere): a big project's files are recorded while the user writes the first
//! message, and the first turn's own checkpoint is one `git status`. A checkpoint with many
//! files to record (more than [`crate::checkpoint::MANY_FILES`]: a big project's first)
//! says so as it starts and how long it took when done, on the front end's notices. Every
//! wait for one (before a batch, at the turn's end) gives way to an interrupt: the
//! checkpoint goes on in the background and is recorded when next settled; a batch whose
//! checkpoint before it was not waited for is not run.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::task::JoinHandle;

use super::Agent;
use crate::agent::events::AgentEvent;
use crate::checkpoint::{
    CheckpointAt, CheckpointError, CheckpointRecord, RestoreOrder, Rewind, Settings, Store, Taken,
};
use crate::session::Entry;
use crate::tools;

/// Where the record goes and its bounds (`[checkpoints]`).
#[derive(Debug, Clone)]
pub struct CheckpointSetup {
    /// rein's data folder: the record is under `checkpoints/`.
    pub data_dir: PathBuf,
    pub settings: Settings,
}

/// A checkpoint being taken in the background: when it was asked for, and the task that
/// gives the store, the checkpoint and how many old checkpoints the first one of a session
/// pruned to keep the record under its quota.
struct Pending {
    /// `None`: the session's warm-up, recorded nowhere.
    at: Option<CheckpointAt>,
    task: JoinHandle<Result<Settled, CheckpointError>>,
}

/// What a checkpoint task gives: the store, the checkpoint, old checkpoints pruned.
type Settled = (Arc<Store>, Taken, usize);

/// The agent's side of the record.
#[derive(Default)]
pub(crate) struct Checkpoints {
    setup: Option<CheckpointSetup>,
    store: Option<Arc<Store>>,
    /// Said once: checkpoints stopped working.
    failed: bool,
    /// This session's latest checkpoint.
    last: Option<String>,
    /// The turn being recorded (numbers go on across resumes).
    turn: u64,
    /// A start or after-batch checkpoint still being taken (at most one: each waits for
    /// the one before it).
    pending: Option<Pending>,
}

impl Checkpoints {
    /// Checkpoints as `setup` says (none: off), going on from a resumed session's `turn`
    /// and latest checkpoint.
    pub(crate) fn new(setup: Option<CheckpointSetup>, turn: u64, last: Option<String>) -> Self {
        Checkpoints {
            setup: setup.filter(|s| s.settings.enabled),
            turn,
            last,
            ..Checkpoints::default()
        }
    }

    /// A new conversation (`/clear`): turns count from one again.
    pub(crate) fn restart(&mut self) {
        self.turn = 0;
        self.last = None;
        self.pending = None;
    }
}

/// Whether a tool may change the project's files.
pub(super) fn could_change_files(tool: &str) -> bool {
    ![
        tools::read_file::NAME,
        tools::read_skill::NAME,
        tools::write_todos::NAME,
    ]
    .contains(&tool)
}

impl Agent {
    /// A turn begins: the checkpoint before it settled, start taking its own in the
    /// background.
    pub(super) async fn checkpoint_turn_start(&mut self) {
        let _ = self.settle_checkpoint().await;
        if self.checkpoints.setup.is_none() || self.checkpoints.failed {
            return;
        }
        self.checkpoints.turn += 1;
        self.spawn_checkpoint(CheckpointAt::Start);
    }

    /// Take a checkpoint off the agent's way (compared with this session's last).
    fn spawn_checkpoint(&mut self, at: CheckpointAt) {
        self.spawn_take(Some(at));
    }

    /// As the session starts: the record opened and the files recorded in the background
    /// while the user writes, so a big project's first checkpoint is (mostly) done before
    /// the first turn needs its own, which then costs one `git status`. Recorded nowhere.
    pub(super) fn checkpoint_warm_up(&mut self) {
        if self.checkpoints.setup.is_some()
            && self.checkpoints.store.is_none()
            && self.checkpoints.pending.is_none()
        {
            self.spawn_take(None);
        }
    }

    fn spawn_take(&mut self, at: Option<CheckpointAt>) {
        let Some(setup) = self.checkpoints.setup.clone() else {
            return;
        };
        let store = self.checkpoints.store.clone();
        let root = self.config.root.clone();
        let since = self.checkpoints.last.clone();
        let events = self.events.clone();
        let task = tokio::task::spawn_blocking(move || {
            let (store, first) = match store {
                Some(store) => (store, false),
                None => (
                    Arc::new(Store::open(&setup.data_dir, &root, setup.settings)?),
                    true,
                ),
            };
            let taken = take_said(&store, since.as_deref(), &events)?;
            // Once a session: keep the record under its quota (while the model thinks).
            let pruned = if first {
                store.maintain().map(|m| m.pruned).unwrap_or(0)
            } else {
                0
            };
            Ok((store, taken, pruned))
        });
        self.checkpoints.pending = Some(Pending { at, task });
    }

    /// Wait for the checkpoint being taken, if any, and record it. True when it was still
    /// being taken: it is then as fresh as a new one would be.
    pub(super) async fn settle_checkpoint(&mut self) -> bool {
        let Some(pending) = self.checkpoints.pending.take() else {
            return false;
        };
        let waited = !pending.task.is_finished();
        let result = pending.task.await;
        self.settled(pending.at, result, waited)
    }

    /// [`Agent::settle_checkpoint`], unless the user interrupts first: then `None`, and the
    /// checkpoint goes on in the background (settled next time).
    async fn settle_checkpoint_or_interrupt(&mut self) -> Option<bool> {
        let Some(mut pending) = self.checkpoints.pending.take() else {
            return Some(false);
        };
        let waited = !pending.task.is_finished();
        match self.inbox.run_until(&mut pending.task).await {
            Some(result) => Some(self.settled(pending.at, result, waited)),
            None => {
                self.checkpoints.pending = Some(pending);
                None
            }
        }
    }

    /// Record a checkpoint task's result (`waited`: it was still being taken when asked
    /// for, returned as it is).
    fn settled(
        &mut self,
        at: Option<CheckpointAt>,
        result: Result<Result<Settled, CheckpointError>, tokio::task::JoinError>,
        waited: bool,
    ) -> bool {
        let result = match result {
            Ok(result) => result,
            Err(e) => Err(CheckpointError::Git {
                command: "status".to_string(),
                message: format!("the checkpoint task failed: {e}"),
            }),
        };
        match result {
            Ok((store, taken, pruned)) => {
                self.checkpoints.store = Some(store);
                if pruned > 0 {
                    self.emit(AgentEvent::Notice {
                        message: format!(
                            "the project's checkpoint record was over its quota \
                             (checkpoints.quota_mib): its {pruned} oldest checkpoints were pruned"
                        ),
                    });
                }
                match at {
                    None => {}
                    Some(CheckpointAt::After) => self.batch_changed(taken),
                    // Before a batch: recorded only when someone else changed files.
                    Some(CheckpointAt::Before)
                        if self.checkpoints.last.as_deref() != Some(taken.commit.as_str()) =>
                    {
                        self.record_checkpoint(CheckpointAt::Before, taken);
                    }
                    Some(CheckpointAt::Before) => {}
                    Some(CheckpointAt::Start) => self.record_checkpoint(CheckpointAt::Start, taken),
                }
                waited
            }
            Err(e) => {
                self.checkpoint_failed(e);
                false
            }
        }
    }

    /// Before a batch of tool calls that could change files: false when the user
    /// interrupted the wait (the batch is not run).
    pub(super) async fn checkpoint_before_batch(&mut self) -> bool {
        // One that finished while the agent waited for it is the state now.
        match self.settle_checkpoint_or_interrupt().await {
            None => return false,
            Some(true) => return true,
            Some(false) => {}
        }
        if self.checkpoints.store.is_none() || self.checkpoints.failed {
            return true;
        }
        self.spawn_checkpoint(CheckpointAt::Before);
        self.settle_checkpoint_or_interrupt().await.is_some()
    }

    /// After a batch of tool calls that could change files: what it changed, taken in the
    /// background while the model goes on (settled before the next batch or turn).
    pub(super) fn checkpoint_after_batch(&mut self) {
        if self.checkpoints.store.is_some() && !self.checkpoints.failed {
            self.spawn_checkpoint(CheckpointAt::After);
        }
    }

    /// What a batch changed: told to the front end and recorded.
    fn batch_changed(&mut self, taken: Taken) {
        if !taken.changed.is_empty() {
            // What a command changed reaches the language servers (an edit's file is
            // known to them already, and skipped).
            if let Some(lsp) = &self.config.lsp {
                lsp.changed_on_disk(
                    taken
                        .changed
                        .iter()
                        .map(|p| p.as_path().to_path_buf())
                        .collect(),
                );
            }
            self.emit(AgentEvent::FilesChanged {
                turn: self.checkpoints.turn,
                paths: taken.changed.clone(),
            });
        }
        if self.checkpoints.last.as_deref() != Some(taken.commit.as_str()) {
            self.record_checkpoint(CheckpointAt::After, taken);
        }
    }

    /// The turn ended: the checkpoint still being taken (its start, or its last batch's
    /// after) is recorded before the front end hears the turn is over, so a session file
    /// never ends without it. With a model that takes any time to answer it is done by
    /// then. An interrupt stops the wait (not the checkpoint, recorded when next settled).
    pub(super) async fn checkpoint_turn_end(&mut self) {
        let _ = self.settle_checkpoint_or_interrupt().await;
    }

    /// Put files back as `order` says (`/rewind`) and record it, so `--undo` finds it.
    pub(super) async fn rewind_files(&mut self, order: RestoreOrder) {
        let _ = self.settle_checkpoint().await;
        let to_turn = order.to_turn;
        let report = match self.store().await {
            Ok(store) => tokio::task::spawn_blocking(move || {
                store.restore(&order.steps, order.force, false, order.made_after)
            })
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| r.map_err(|e| e.to_string())),
            Err(e) => Err(e),
        };
        if let Ok(report) = &report {
            self.checkpoints.last = Some(report.after.clone());
            self.record(Entry::Rewind(Rewind {
                to_turn,
                before: report.before.clone(),
                after: report.after.clone(),
                paths: report.changed(),
            }));
        }
        self.emit(AgentEvent::Rewound { to_turn, report });
    }

    /// The project's record, opened now if no checkpoint opened it yet.
    async fn store(&mut self) -> Result<Arc<Store>, String> {
        if let Some(store) = &self.checkpoints.store {
            return Ok(store.clone());
        }
        let setup = self
            .checkpoints
            .setup
            .clone()
            .ok_or("checkpoints are off (checkpoints.enabled = false)")?;
        let root = self.config.root.clone();
        let store = tokio::task::spawn_blocking(move || {
            Store::open(&setup.data_dir, &root, setup.settings).map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| e.to_string())??;
        let store = Arc::new(store);
        self.checkpoints.store = Some(store.clone());
        Ok(store)
    }

    fn record_checkpoint(&mut self, at: CheckpointAt, taken: Taken) {
        if !taken.skipped.is_empty() {
            let list: Vec<String> = taken.skipped.iter().map(ToString::to_string).collect();
            self.emit(AgentEvent::Notice {
                message: format!("checkpoints leave out: {}", list.join(", ")),
            });
        }
        self.checkpoints.last = Some(taken.commit.clone());
        self.record(Entry::Checkpoint(CheckpointRecord {
            turn: self.checkpoints.turn,
            at,
            commit: taken.commit,
            changed: if at == CheckpointAt::After {
                taken.changed
            } else {
                Vec::new()
            },
            skipped: taken.skipped,
        }));
    }

    fn checkpoint_failed(&mut self, error: CheckpointError) {
        if std::mem::replace(&mut self.checkpoints.failed, true) {
            return;
        }
        self.emit(AgentEvent::Notice {
            message: format!(
                "checkpoints are off for this session, so its turns cannot be rewound: {error}"
            ),
        });
    }
}

/// A checkpoint by `store`, said on `events` when it has many files to record: as it
/// starts, and how long it took.
fn take_said(
    store: &Store,
    since: Option<&str>,
    events: &tokio::sync::mpsc::UnboundedSender<AgentEvent>,
) -> Result<Taken, CheckpointError> {
    let started = std::time::Instant::now();
    let mut many = None;
    let taken = store.take_noting(since, &mut |files| {
        many = Some(files);
        let _ = events.send(AgentEvent::Notice {
            message: format!(
                "taking a checkpoint of {} new or changed files (the first one of a big \
                 project records every file; tools that change files wait for it)…",
                grouped(files)
            ),
        });
    })?;
    if let Some(files) = many {
        let _ = events.send(AgentEvent::Notice {
            message: format!(
                "checkpoint of {} files taken in {:.1} s",
                grouped(files),
                started.elapsed().as_secs_f64()
            ),
        });
    }
    Ok(taken)
}

/// `n` with its thousands apart: 200,000.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(super::grouped(7), "7");
        assert_eq!(super::grouped(10_001), "10,001");
        assert_eq!(super::grouped(200_000), "200,000");
        assert_eq!(super::grouped(1_234_567), "1,234,567");
    }
}
