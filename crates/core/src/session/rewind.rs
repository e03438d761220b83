//! Taking turns back: a session's files (`--code`), its conversation (`--conversation`) or
//! both, and taking the last rewind back (`--undo`). `rein rewind` and the dashboard's
//! `/rewind` both come here.
//!
//! In: a session file and the project's record ([`crate::checkpoint::Store`]). The code
//! part restores the paths the session's turns changed from turn N on
//! ([`crate::checkpoint::TurnCheckpoints::steps_to`]), never one someone else changed
//! since (unless forced), and records a [`Rewind`] entry so `--undo` can put them back.
//! The conversation part copies the session up to just before turn N's user message into a
//! new session, which becomes the project's latest (the one `--continue` picks); the
//! original stays as it was. With both, the rewind entry goes to the new session, so its
//! `--undo` finds it. A dry run restores nothing and writes no session.

use std::path::{Path, PathBuf};

use crate::checkpoint::{RestoreOrder, RestoreReport, Rewind, Store, TurnCheckpoints, TurnInfo};
use crate::session::{self, Entry, LoadedSession, SessionWriter, Shown};

/// What to take back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// To just before turn N began.
    Turn(u64),
    /// The last rewind.
    Undo,
}

/// A rewind as asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub target: Target,
    pub code: bool,
    pub conversation: bool,
    pub dry_run: bool,
    pub force: bool,
}

/// A conversation taken back: the new session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forked {
    pub id: String,
    pub path: PathBuf,
    /// The user's message of the turn taken back (for the input box).
    pub message: String,
}

/// What a rewind did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    pub report: Option<RestoreReport>,
    pub forked: Option<Forked>,
}

/// The turns of a loaded session that have a checkpoint.
pub fn turns(loaded: &LoadedSession) -> &[TurnInfo] {
    &loaded.checkpoints.turns
}

/// Carry out `request` on the session at `path` in the project of `store`.
pub fn rewind(
    data_dir: &Path,
    path: &Path,
    store: &Store,
    request: Request,
) -> Result<Done, String> {
    let loaded = session::load(path).map_err(|e| e.to_string())?;
    let checkpoints = &loaded.checkpoints;
    let (steps, turn) = match request.target {
        Target::Undo => (
            checkpoints
                .undo_steps()
                .ok_or("this session has no rewind to undo")?,
            None,
        ),
        Target::Turn(n) => {
            let turn = find_turn(checkpoints, n)?;
            (checkpoints.steps_to(turn), Some(turn))
        }
    };
    let conversation = request.conversation && turn.is_some();
    if request.dry_run {
        let report = if request.code || !conversation {
            Some(
                store
                    .restore(&steps, request.force, true, None)
                    .map_err(|e| e.to_string())?,
            )
        } else {
            None
        };
        return Ok(Done {
            report,
            forked: None,
        });
    }
    // The session the rewind is recorded in: a new one for a conversation rewind, else
    // this one, which must not be open in another rein.
    let (mut writer, forked) = match turn.filter(|_| conversation) {
        Some(turn) => {
            let (writer, forked) = fork_at(data_dir, path, turn)?;
            (Some(writer), Some(forked))
        }
        None if request.code || !conversation => {
            let writer =
                SessionWriter::open_append(path).map_err(|e| match session::in_use(&e) {
                    Some(_) => format!(
                        "{e}; rewind it from that rein (/rewind), or close it and try again"
                    ),
                    None => e.to_string(),
                })?;
            (Some(writer), None)
        }
        None => (None, None),
    };
    let report = if request.code || !conversation {
        let made_after = turn.and_then(|t| crate::text::stamp::parse_rfc3339(&t.time));
        let report = store
            .restore(&steps, request.force, false, made_after)
            .map_err(|e| e.to_string())?;
        if let Some(writer) = writer.as_mut() {
            let rewind = Rewind {
                to_turn: turn.map(|t| t.turn),
                before: report.before.clone(),
                after: report.after.clone(),
                paths: report.changed(),
            };
            writer.append(&Entry::Rewind(rewind)).map_err(|e| {
                format!("the files were restored, but the session could not record it: {e}")
            })?;
        }
        Some(report)
    } else {
        None
    };
    if let Some(writer) = writer {
        let _ = writer.close();
    }
    Ok(Done { report, forked })
}

/// Turn `n` of a session's checkpoints, or an error that says which turns there are.
pub fn find_turn(checkpoints: &TurnCheckpoints, n: u64) -> Result<&TurnInfo, String> {
    checkpoints.turn(n).ok_or_else(|| {
        match (checkpoints.turns.first(), checkpoints.turns.last()) {
            (Some(first), Some(last)) => format!(
                "turn {n} has no checkpoint; this session's turns go from {} to {} (`rein rewind --list`)",
                first.turn, last.turn
            ),
            _ => "this session has no checkpoints (they are recorded from rein 0.x on, with git installed)"
                .to_string(),
        }
    })
}

/// What the files part of taking back turn `n` of the session at `path` restores, for the
/// agent that holds the session to carry out ([`crate::agent::AgentCommand::Rewind`]).
pub fn order(path: &Path, n: u64) -> Result<RestoreOrder, String> {
    let loaded = session::load(path).map_err(|e| e.to_string())?;
    let turn = find_turn(&loaded.checkpoints, n)?;
    Ok(RestoreOrder {
        to_turn: Some(n),
        steps: loaded.checkpoints.steps_to(turn),
        made_after: crate::text::stamp::parse_rfc3339(&turn.time),
        force: false,
    })
}

/// The conversation part of taking back turn `n`: a new session holding the session at
/// `path` up to just before that turn's message (the original is only read).
pub fn fork(data_dir: &Path, path: &Path, n: u64) -> Result<Forked, String> {
    let loaded = session::load(path).map_err(|e| e.to_string())?;
    let turn = find_turn(&loaded.checkpoints, n)?;
    let (writer, forked) = fork_at(data_dir, path, turn)?;
    writer
        .close()
        .map_err(|e| format!("cannot finish the new session: {e}"))?;
    Ok(forked)
}

/// A new session holding the session at `path` up to just before `turn`, open for writing.
fn fork_at(
    data_dir: &Path,
    path: &Path,
    turn: &TurnInfo,
) -> Result<(SessionWriter, Forked), String> {
    let (writer, _) = SessionWriter::fork_before(data_dir, path, turn.offset, Shown::Whole)
        .map_err(|e| format!("cannot copy the conversation: {e}"))?;
    let forked = Forked {
        id: writer.id().to_string(),
        path: writer.path().to_path_buf(),
        message: turn.message.clone(),
    };
    Ok((writer, forked))
}

/// What the session at `path` changed from turn `since` on (from its first turn without
/// one), as a unified diff; empty when nothing.
pub fn diff(path: &Path, store: &Store, since: Option<u64>) -> Result<String, String> {
    let loaded = session::load(path).map_err(|e| e.to_string())?;
    let checkpoints = &loaded.checkpoints;
    let turn = match since {
        Some(n) => find_turn(checkpoints, n)?,
        None => match checkpoints.turns.first() {
            Some(first) => first,
            None => return Ok(String::new()),
        },
    };
    let diffs = store
        .diff(&checkpoints.steps_to(turn))
        .map_err(|e| e.to_string())?;
    Ok(diffs.into_iter().map(|d| d.text).collect())
}
