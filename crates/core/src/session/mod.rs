//! Sessions on disk: one append-only JSONL file per conversation, resume, listing, export.
//!
//! A session lives in `<data_dir>/sessions/<id>.jsonl`. The first line is a `meta` entry;
//! every later line is one [`Entry`] as it happened: a committed message, the whole todo
//! list when it changes, a compaction (the history that replaces everything before it), a
//! session-rule approval, or a title. [`SessionWriter`] appends one line per entry (a single
//! write up to 64 KiB) and returns only once the line is in the operating system's hands, so a
//! crash or a `SIGKILL` loses at most the entry being written: a torn last line. Power loss
//! is covered only after [`SessionWriter::sync`].
//!
//! [`load`] reads a file back into a [`LoadedSession`]: the history the model sees next
//! (compactions applied, cut-off tool calls answered with synthetic results, no system
//! prompt: that is always rebuilt fresh), the transcript as the user saw it, the latest todo
//! list, the session rules and the title, reading the file a line at a time. A line that
//! does not parse is skipped with a notice, never a failure. A front end loads with
//! [`Shown::Heads`]: long tool results keep only their first lines in the transcript, and
//! [`read_result`] reads one whole from its entry when the user expands it.
//!
//! Listing must not slow down as sessions pile up, so [`list`] never reads a session file
//! in full: the writer keeps a small `<id>.summary.json` beside each file (rewritten
//! atomically when the title changes, every few messages and on close), and when that is
//! missing only the first line (the meta entry) is read. [`export_markdown`] turns a loaded
//! session into a readable transcript.

mod entry;
mod export;
mod fold;
mod list;
mod lock;
mod reader;
mod repair;
pub mod rewind;
mod writer;

use std::path::{Path, PathBuf};

pub use crate::text::stamp::{new_session_id, now_rfc3339, rfc3339};
pub use entry::{Entry, Record, SessionMeta, StoredGrant};
pub use export::export_markdown;
pub use fold::{read_result, result_head, EntryAt, Folded, Shown, FOLD_MIN_BYTES, HEAD_LINE_BYTES};
pub use list::{
    exact_count, find, latest_for_project, list, list_with_stats, ListStats, MessageCount,
    SessionSummary,
};
pub use lock::{holder, in_use, pid_path, Holder, InUse};
pub use reader::{
    load, load_with, read_records, tool_outcome, LoadedSession, NestedRecord, RecordedModel,
};
pub use repair::{MAY_HAVE_RUN, NOT_RUN};
pub use writer::{title_from_text, SessionWriter, SUMMARY_EVERY};

/// The folder that holds every session file.
pub fn sessions_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("sessions")
}

/// The file of session `id`.
pub fn session_path(data_dir: &Path, id: &str) -> PathBuf {
    sessions_dir(data_dir).join(format!("{id}.jsonl"))
}

/// The summary sidecar that goes with the session file at `session`.
pub fn summary_path(session: &Path) -> PathBuf {
    session.with_extension("summary.json")
}
