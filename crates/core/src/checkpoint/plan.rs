//! A session's checkpoints as its file records them, and what a rewind restores.
//!
//! The agent writes a [`CheckpointRecord`] when a turn starts, before a batch of tool calls
//! that could change files (only when the files changed since its previous one: someone
//! else did that) and after the batch (with the paths the batch changed). A rewind writes a
//! [`Rewind`]. [`TurnCheckpoints::from_records`] reads them back in order: the turns, and
//! the segments (a batch, or a rewind, with the checkpoint before and after it).
//!
//! Rewinding to turn N restores only paths this session changed from turn N on: each to
//! its state before the first change (the `base` of the first segment that changed it) and
//! only if it is still as this session last left it (the `after` of the last segment that
//! changed it, a rewind included); see [`super::restore`].

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::{RelPath, Skipped};

/// When a checkpoint was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointAt {
    /// Before the turn's user message: what `--to N` goes back to.
    Start,
    /// Before a batch of tool calls, when someone else changed files since the last one.
    Before,
    /// After a batch of tool calls: `changed` is what the batch changed.
    After,
}

/// A checkpoint in a session file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointRecord {
    pub turn: u64,
    pub at: CheckpointAt,
    pub commit: String,
    /// Paths (relative to the project) the batch changed (`After` only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<RelPath>,
    /// What this checkpoint left out for the first time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Skipped>,
}

/// A restore in a session file: the checkpoints around it and the paths it wrote or
/// removed (what `--undo` puts back).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rewind {
    /// The turn it went back to; `None` for an undo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_turn: Option<u64>,
    pub before: String,
    pub after: String,
    pub paths: Vec<RelPath>,
}

/// One turn that has a start checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnInfo {
    pub turn: u64,
    /// The checkpoint just before the turn began.
    pub start: String,
    /// When it began (RFC 3339).
    pub time: String,
    /// The user's message (its first line: [`TurnInfo::headline`]).
    pub message: String,
    /// What the turn's tool calls changed.
    pub changed: BTreeSet<RelPath>,
    /// Where the turn begins in the session file (its start checkpoint or its user
    /// message, whichever came first): a conversation rewind keeps what is before it.
    pub offset: u64,
}

/// Changes made by this session between two of its checkpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Where its record is in the session file.
    pub offset: u64,
    pub base: String,
    pub after: String,
    pub changed: Vec<RelPath>,
}

/// A restore the dashboard asks the agent for (it holds the session file to record it in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreOrder {
    /// The turn gone back to (`None`: an undo).
    pub to_turn: Option<u64>,
    pub steps: Vec<PathStep>,
    /// Folders made after this and left empty are removed too.
    pub made_after: Option<std::time::SystemTime>,
    pub force: bool,
}

/// One path a restore may put back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathStep {
    pub path: RelPath,
    /// The checkpoint whose version goes back (absent there: the file is removed).
    pub target: String,
    /// The checkpoint holding the version this session last left: a file that is not
    /// that version any more was changed by someone else, and is kept.
    pub expected: String,
}

/// A session's checkpoints, read from its records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnCheckpoints {
    pub turns: Vec<TurnInfo>,
    pub segments: Vec<Segment>,
    /// The rewinds, in order, with the offset of their record.
    pub rewinds: Vec<(u64, Rewind)>,
    /// This session's latest checkpoint.
    pub latest: Option<String>,
    /// The last user message not yet matched with a turn: its offset and text.
    unclaimed: Option<(u64, String)>,
    /// A turn whose start was recorded before its user message came.
    waiting: bool,
}

/// What one record of a session file says, for [`TurnCheckpoints::push`].
pub enum Seen<'a> {
    /// A checkpoint, and when it was recorded.
    Checkpoint(&'a CheckpointRecord, &'a str),
    Rewind(&'a Rewind),
    /// A user message's text.
    UserMessage(&'a str),
}

impl TurnCheckpoints {
    /// Read the checkpoints of a session from its records, in order, each with the byte
    /// offset its line starts at.
    pub fn from_records<'a>(records: impl IntoIterator<Item = (u64, Seen<'a>)>) -> TurnCheckpoints {
        let mut out = TurnCheckpoints::default();
        for (offset, seen) in records {
            out.push(offset, seen);
        }
        out
    }

    /// The next record of the session file, which starts at byte `offset`.
    ///
    /// A turn's start checkpoint may be recorded before its user message or, when it took
    /// a while, after it (the agent waits for it only before the first tool call): a turn
    /// begins at whichever of the two comes first.
    pub fn push(&mut self, offset: u64, seen: Seen<'_>) {
        match seen {
            Seen::Checkpoint(record, time) => {
                match record.at {
                    CheckpointAt::Start => {
                        let (offset, message) = match self.unclaimed.take() {
                            Some((at, text)) => (at, text),
                            None => (offset, String::new()),
                        };
                        self.waiting = message.is_empty();
                        self.turns.push(TurnInfo {
                            turn: record.turn,
                            start: record.commit.clone(),
                            time: time.to_string(),
                            message,
                            changed: BTreeSet::new(),
                            offset,
                        });
                    }
                    CheckpointAt::Before => {}
                    CheckpointAt::After => {
                        if let Some(base) = &self.latest {
                            self.segments.push(Segment {
                                offset,
                                base: base.clone(),
                                after: record.commit.clone(),
                                changed: record.changed.clone(),
                            });
                        }
                        if let Some(turn) =
                            self.turns.iter_mut().rev().find(|t| t.turn == record.turn)
                        {
                            turn.changed.extend(record.changed.iter().cloned());
                        }
                    }
                }
                self.latest = Some(record.commit.clone());
            }
            Seen::Rewind(rewind) => {
                self.segments.push(Segment {
                    offset,
                    base: rewind.before.clone(),
                    after: rewind.after.clone(),
                    changed: rewind.paths.clone(),
                });
                self.rewinds.push((offset, rewind.clone()));
                self.latest = Some(rewind.after.clone());
            }
            Seen::UserMessage(text) => {
                if std::mem::take(&mut self.waiting) {
                    if let Some(turn) = self.turns.last_mut() {
                        turn.message = text.to_string();
                    }
                } else {
                    self.unclaimed = Some((offset, text.to_string()));
                }
            }
        }
    }

    /// The turn numbered `turn`.
    pub fn turn(&self, turn: u64) -> Option<&TurnInfo> {
        self.turns.iter().rev().find(|t| t.turn == turn)
    }

    /// The highest turn number recorded (0: none).
    pub fn last_turn(&self) -> u64 {
        self.turns.iter().map(|t| t.turn).max().unwrap_or(0)
    }

    /// What going back to before turn `turn` restores: every path changed from then on.
    pub fn steps_to(&self, turn: &TurnInfo) -> Vec<PathStep> {
        let mut first: BTreeMap<&RelPath, &str> = BTreeMap::new();
        let mut last: BTreeMap<&RelPath, &str> = BTreeMap::new();
        for segment in self.segments.iter().filter(|s| s.offset > turn.offset) {
            for path in &segment.changed {
                first.entry(path).or_insert(&segment.base);
                last.insert(path, &segment.after);
            }
        }
        first
            .into_iter()
            .map(|(path, target)| PathStep {
                path: path.clone(),
                target: target.to_string(),
                expected: last.get(path).copied().unwrap_or(target).to_string(),
            })
            .collect()
    }

    /// What taking back the last rewind restores.
    pub fn undo_steps(&self) -> Option<Vec<PathStep>> {
        let (_, rewind) = self.rewinds.last()?;
        Some(
            rewind
                .paths
                .iter()
                .map(|path| PathStep {
                    path: path.clone(),
                    target: rewind.before.clone(),
                    expected: rewind.after.clone(),
                })
                .collect(),
        )
    }
}

impl TurnInfo {
    /// The first line of the user's message, at most 80 characters.
    pub fn headline(&self) -> String {
        first_line(&self.message)
    }
}

/// The first line of `text`, at most 80 characters.
fn first_line(text: &str) -> String {
    crate::text::clip(crate::text::first_text_line(text), 80)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cp(turn: u64, at: CheckpointAt, commit: &str, changed: &[&str]) -> CheckpointRecord {
        CheckpointRecord {
            turn,
            at,
            commit: commit.to_string(),
            changed: changed.iter().map(|s| RelPath::from(*s)).collect(),
            skipped: Vec::new(),
        }
    }

    #[test]
    fn a_path_goes_back_to_before_its_first_change_and_is_expected_as_last_left() {
        use CheckpointAt::*;
        let records = [
            cp(1, Start, "s1", &[]),
            cp(1, After, "a1", &["x", "y"]),
            cp(2, Start, "s2", &[]),
            // Someone else changed files between the turns and before the batch.
            cp(2, Before, "b2", &[]),
            cp(2, After, "a2", &["y", "z"]),
            cp(3, Start, "s3", &[]),
        ];
        // Each turn's user message is recorded before its start checkpoint.
        let mut seen: Vec<(u64, Seen)> = Vec::new();
        for (i, r) in records.iter().enumerate() {
            if r.at == Start {
                let text = if i == 0 {
                    "\n  first ask\nmore"
                } else {
                    "next"
                };
                seen.push((seen.len() as u64, Seen::UserMessage(text)));
            }
            seen.push((seen.len() as u64, Seen::Checkpoint(r, "t")));
        }
        let cps = TurnCheckpoints::from_records(seen);
        assert_eq!(cps.last_turn(), 3);
        assert_eq!(cps.turns[0].headline(), "first ask");
        // A turn begins at its user message.
        assert_eq!((cps.turns[0].offset, cps.turns[1].offset), (0, 3));
        assert_eq!(cps.latest.as_deref(), Some("s3"));
        assert_eq!(
            cps.turns[1].changed.iter().collect::<Vec<_>>(),
            [&RelPath::from("y"), &RelPath::from("z")]
        );
        let step = |p: &str, t: &str, e: &str| PathStep {
            path: p.into(),
            target: t.into(),
            expected: e.into(),
        };
        assert_eq!(
            cps.steps_to(cps.turn(1).unwrap()),
            [
                step("x", "s1", "a1"),
                step("y", "s1", "a2"),
                step("z", "b2", "a2")
            ]
        );
        assert_eq!(
            cps.steps_to(cps.turn(2).unwrap()),
            [step("y", "b2", "a2"), step("z", "b2", "a2")]
        );
        assert!(cps.steps_to(cps.turn(3).unwrap()).is_empty());
        assert_eq!(cps.undo_steps(), None);
    }

    #[test]
    fn a_rewind_is_this_sessions_last_write_and_what_undo_takes_back() {
        use CheckpointAt::*;
        let records = [
            cp(1, Start, "s1", &[]),
            cp(1, After, "a1", &["x"]),
            cp(2, Start, "s2", &[]),
            cp(2, After, "a2", &["x", "y"]),
        ];
        let rewind = Rewind {
            to_turn: Some(2),
            before: "r0".into(),
            after: "r1".into(),
            paths: vec!["x".into(), "y".into()],
        };
        let mut seen: Vec<(u64, Seen)> = records
            .iter()
            .enumerate()
            .map(|(i, r)| (i as u64, Seen::Checkpoint(r, "t")))
            .collect();
        seen.push((4, Seen::Rewind(&rewind)));
        let cps = TurnCheckpoints::from_records(seen);
        let steps = cps.steps_to(cps.turn(1).unwrap());
        assert_eq!(steps[0].path, RelPath::from("x"));
        assert_eq!(
            (steps[0].target.as_str(), steps[0].expected.as_str()),
            ("s1", "r1")
        );
        assert_eq!(
            (steps[1].target.as_str(), steps[1].expected.as_str()),
            ("s2", "r1")
        );
        let undo = cps.undo_steps().unwrap();
        assert_eq!(undo.len(), 2);
        assert_eq!(
            (undo[1].target.as_str(), undo[1].expected.as_str()),
            ("r0", "r1")
        );
    }
}
