//! Context engineering: keeping a long session's history sharp and cheap.
//!
//! Two layers so far, cheapest first. [`spill`] caps a tool result the moment it returns:
//! the model keeps its head and tail, the whole text goes to a spill file it can page
//! through until the user's turn ends. [`stubs`] shortens old tool results once per turn
//! end, so within a turn every request extends the previous one byte for byte (the
//! provider's prefix cache stays intact). Both are plain functions over text and
//! messages; the agent loop decides when they run. What changes within a session (time,
//! branch, plan, files [`changes`] by others) goes into a [`reminder`] appended to each
//! request only, never stored.

pub mod changes;
pub mod git;
pub mod reminder;
pub mod spill;
pub mod stubs;

use std::path::PathBuf;

/// The `[context]` settings the agent runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextConfig {
    /// A tool result longer than this many characters is cut on arrival (head and tail
    /// kept, the note on top).
    pub cap_chars: usize,
    /// At a turn's end, an old tool result longer than this is cut to this many characters.
    pub stub_chars: usize,
    /// The most recent messages (system prompt not counted) that stubbing never touches.
    pub keep_recent: usize,
    /// Where spill files go: `<spill_dir>/<pid>-<turn>/<call id>.txt` (rein passes
    /// `<data dir>/spill`, which the sandbox keeps readable). `None`: results are still
    /// capped, but the whole output is not kept.
    pub spill_dir: Option<PathBuf>,
}

/// `context.cap_chars` unless configured.
pub const DEFAULT_CAP_CHARS: usize = 10_000;
/// `context.stub_chars` unless configured.
pub const DEFAULT_STUB_CHARS: usize = 300;
/// `context.keep_recent` unless configured: about the last two or three tool round trips.
pub const DEFAULT_KEEP_RECENT: usize = 10;

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            cap_chars: DEFAULT_CAP_CHARS,
            stub_chars: DEFAULT_STUB_CHARS,
            keep_recent: DEFAULT_KEEP_RECENT,
            spill_dir: None,
        }
    }
}
