//! Context engineering: keeping a long session's history sharp and cheap.
//!
//! Four layers, cheapest first, each used only when the ones before were not enough.
//! [`spill`] caps a tool result the moment it returns: the model keeps its head and tail,
//! the whole text goes to a spill file it can page through until the user's turn ends.
//! [`stubs`] shortens old tool results once per turn end, so within a turn every request
//! extends the previous one byte for byte (the provider's prefix cache stays intact).
//! When the [`budget`]'s estimate is still over `compact_at` of the window before a
//! request, [`mod@drop`] replaces old results by one-line notes, and when even that is not
//! enough, [`compact`] has the model write a handoff note that replaces all but the last
//! few messages ([`history`] knows which message is that note). All of them are plain
//! functions over text and messages; the agent loop decides when they run and makes the
//! model call. What changes within a session (time, branch, plan, files [`changes`] by
//! others) goes into a [`reminder`] appended to each request only, never stored.

pub mod budget;
pub mod changes;
pub mod compact;
pub mod drop;
pub mod git;
pub mod history;
pub mod reminder;
pub mod spill;
pub mod stubs;

use std::path::PathBuf;

/// The `[context]` settings the agent runs with.
#[derive(Debug, Clone, PartialEq)]
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
    /// The model's context window in tokens.
    pub window: u64,
    /// The window is known, not a default guess: the server reported it, or the user set
    /// it. Only then is a request sent an output cap by default
    /// ([`crate::agent::client::output_cap`]).
    pub window_known: bool,
    /// The share of the window (0 to 1) over which old results are dropped and, if that is
    /// not enough, the history is compacted.
    pub compact_at: f64,
    /// The share of the window a compacted history may fill at most.
    pub compact_to: f64,
    /// The model that writes handoff notes; empty: the agent's own model.
    pub compact_model: String,
    /// The most bytes of one file a `@path` mention attaches to a message.
    pub attach_max_bytes: usize,
    /// The most bytes all of a message's attachments take together.
    pub attach_total_bytes: usize,
}

/// `context.cap_chars` unless configured.
pub const DEFAULT_CAP_CHARS: usize = 10_000;
/// `context.stub_chars` unless configured.
pub const DEFAULT_STUB_CHARS: usize = 300;
/// `context.keep_recent` unless configured: about the last two or three tool round trips.
pub const DEFAULT_KEEP_RECENT: usize = 10;
/// `context_window` unless configured.
pub const DEFAULT_WINDOW: u64 = 128_000;
/// `context.compact_at` unless configured.
pub const DEFAULT_COMPACT_AT: f64 = 0.85;
/// `context.attach_max_bytes` unless configured.
pub const DEFAULT_ATTACH_MAX_BYTES: usize = 64 * 1024;
/// `context.attach_total_bytes` unless configured.
pub const DEFAULT_ATTACH_TOTAL_BYTES: usize = 256 * 1024;
/// `context.compact_to` unless configured.
pub const DEFAULT_COMPACT_TO: f64 = 0.35;

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            cap_chars: DEFAULT_CAP_CHARS,
            stub_chars: DEFAULT_STUB_CHARS,
            keep_recent: DEFAULT_KEEP_RECENT,
            spill_dir: None,
            window: DEFAULT_WINDOW,
            window_known: false,
            compact_at: DEFAULT_COMPACT_AT,
            compact_to: DEFAULT_COMPACT_TO,
            compact_model: String::new(),
            attach_max_bytes: DEFAULT_ATTACH_MAX_BYTES,
            attach_total_bytes: DEFAULT_ATTACH_TOTAL_BYTES,
        }
    }
}

impl ContextConfig {
    /// Tokens over which old results are dropped, then the history compacted.
    pub fn budget(&self) -> u64 {
        share(self.window, self.compact_at)
    }

    /// Tokens a compacted history may fill at most.
    pub fn compact_target(&self) -> u64 {
        share(self.window, self.compact_to)
    }

    /// Tokens the drop layer brings the estimate down to: halfway between `compact_to` and
    /// `compact_at`, so the requests after a drop extend it for a while instead of each
    /// dropping one more result (which would change the cached prefix every time).
    pub fn drop_target(&self) -> u64 {
        share(self.window, (self.compact_at + self.compact_to) / 2.0)
    }
}

/// `fraction` of `window`, rounded down.
fn share(window: u64, fraction: f64) -> u64 {
    (window as f64 * fraction.clamp(0.0, 1.0)) as u64
}

/// A count in a few characters for notices: 950 → "950", 41_234 → "41k", 1_250_000 →
/// "1.2M".
pub fn short_count(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=999_999 => format!("{}k", n / 1000),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}
