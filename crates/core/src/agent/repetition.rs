//! A reply that runs away: the same short span over and over, as a small model does when
//! it loses its way (`ls -l -l -l -l …` until its window is full).
//!
//! [`Repetition`] watches one stream (the text, or the reasoning) as it arrives and says
//! when its newest bytes are one span repeated over and over: a period of at most
//! [`MAX_PERIOD`] bytes, repeated at least [`MIN_REPEATS`] times and covering at least
//! [`MIN_BYTES`] (8 KiB: two to five thousand tokens of the same span, depending on how the
//! model's tokenizer cuts it). What people write stays under that: data that repeats
//! exactly (a 256-entry table of `0x00`, 1.6 KB; base64 of a 4 KiB file of zeros, 5.5 KB;
//! empty table rows; a CSV of zeros; 200 `nop` lines) is a few kilobytes, and a table's
//! rows, a list's items and code's lines differ in something. Base64 of a 64 KiB file of
//! zeros, 87 KB of `A`, is over the line: thousands of tokens that say nothing.
//!
//! The verdict depends on the text alone, never on how it was cut into pieces: the watch
//! looks once every [`CHECK_EVERY`] bytes of the stream (the 256th, the 512th, …, wherever
//! the pieces end), at the same kept bytes, so one byte a piece or the whole reply in one
//! finds the same run at the same place.
//!
//! Cheap: only the last `2 * WINDOW` bytes are kept, and a look tries only the periods at
//! which the last byte appears again (found with memchr), from the shortest, each stopping
//! at its first mismatch from the end; a period whose run failed rules out its multiples
//! (their runs are shorter), so a run of zeros under the line costs one scan a look, not
//! one a period, and the longest run a look found short is carried to the next, which
//! reads only the new bytes of it (`cargo bench --bench stream`: about 2 ns a byte of
//! ordinary text, 9 ns of data that repeats under the line).

/// The longest span taken for a repeat, in bytes.
pub const MAX_PERIOD: usize = 512;
/// The fewest times in a row a span must appear.
pub const MIN_REPEATS: usize = 8;
/// The fewest bytes a repeated run must cover.
pub const MIN_BYTES: usize = 8 * 1024;
/// Bytes of the stream between two looks (looks fall on its multiples).
pub const CHECK_EVERY: usize = 256;
/// Bytes kept of the stream after a trim: enough for the longest run a look can find (a
/// run is found at the first look after it covers what it needs, at most `MIN_BYTES`, so
/// it is shorter than `MIN_BYTES + CHECK_EVERY`), and a multiple of `CHECK_EVERY`, so
/// trimming falls on a look.
const WINDOW: usize = MIN_BYTES + CHECK_EVERY;
/// Mismatch positions a look keeps to rule periods out before scanning them.
const MARKS: usize = 8;
/// Repeats of the span kept when the reply is cut: enough to show what it was doing.
const KEPT_REPEATS: usize = 3;

const _: () = assert!(WINDOW.is_multiple_of(CHECK_EVERY));
const _: () = assert!(MIN_REPEATS * MAX_PERIOD <= MIN_BYTES);

/// A stream found repeating itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// Where the repeated run starts, in bytes from the start of the stream.
    pub start: usize,
    /// The repeated span's length in bytes.
    pub period: usize,
    /// Bytes of the stream read when the watch saw it (a multiple of [`CHECK_EVERY`]).
    pub at: usize,
}

impl Found {
    /// How many bytes of the stream to keep: everything before the run and its first
    /// few repeats.
    pub fn keep(&self) -> usize {
        self.start + KEPT_REPEATS * self.period
    }
}

/// One stream's watch. Feed it every piece; it answers once.
#[derive(Debug, Default)]
pub struct Repetition {
    /// The newest bytes (at most `2 * WINDOW`, trimmed to `WINDOW` when that is reached).
    tail: Vec<u8>,
    /// Bytes of the stream before `tail`.
    before: usize,
    /// Bytes since the last look.
    unchecked: usize,
    /// What was found (after which nothing more is looked at).
    found: Option<Found>,
    /// The longest run the last look found short, as (period, run): the next look (always
    /// `CHECK_EVERY` bytes on) goes on with it instead of scanning it again.
    carried: Option<(usize, usize)>,
}

impl Repetition {
    pub fn new() -> Self {
        Self::default()
    }

    /// Take the next piece of the stream; `Some` once (the piece that completes a
    /// repeated run).
    pub fn push(&mut self, piece: &str) -> Option<Found> {
        if self.found.is_some() || piece.is_empty() {
            return None;
        }
        let mut bytes = piece.as_bytes();
        // Looks fall on the stream's multiples of CHECK_EVERY, wherever the pieces end:
        // a piece is fed up to each one it crosses.
        while !bytes.is_empty() {
            let room = CHECK_EVERY - self.unchecked;
            let (now, rest) = bytes.split_at(room.min(bytes.len()));
            bytes = rest;
            self.tail.extend_from_slice(now);
            self.unchecked += now.len();
            if self.unchecked >= CHECK_EVERY {
                self.unchecked = 0;
                if let Some(found) = self.look() {
                    self.found = Some(found);
                    return Some(found);
                }
                // Trimmed only here, on a look, so every look sees the same bytes.
                if self.tail.len() >= 2 * WINDOW {
                    let drop = self.tail.len() - WINDOW;
                    self.tail.drain(..drop);
                    self.before += drop;
                }
            }
        }
        None
    }

    /// What was found, if anything.
    pub fn found(&self) -> Option<Found> {
        self.found
    }

    /// The shortest span the end of the tail repeats, when it repeats enough.
    fn look(&mut self) -> Option<Found> {
        let s = &self.tail;
        let n = s.len();
        let end = self.before + n;
        let carried = self.carried.take();
        // The longest run found short at this look.
        let mut longest_short: Option<(usize, usize)> = None;
        if n < MIN_BYTES {
            return None;
        }
        let longest = MAX_PERIOD.min(n / MIN_REPEATS);
        let (&last, before) = s.split_last()?;
        // Periods ruled out by a shorter one whose run failed.
        let mut ruled_out = [false; MAX_PERIOD + 1];
        // Where the runs that failed met their mismatch (the byte and the one a period
        // before it): a longer run must match there too, checked before any scan.
        let mut marks = [0usize; MARKS];
        let mut marked = 0;
        // Only a period whose byte before the end equals the last byte can repeat: found
        // with memchr, nearest first (the shortest periods).
        let from = before.len().saturating_sub(longest);
        for at in memchr::memrchr_iter(last, &before[from..]) {
            let period = before.len() - (from + at);
            if ruled_out[period] {
                continue;
            }
            let needed = MIN_BYTES.max(MIN_REPEATS * period);
            if needed > n {
                // Longer periods need even more.
                break;
            }
            // The run must reach back to `n - needed + period`: every mark from there on
            // must repeat at this period.
            let reach = n - needed + period;
            if marks[..marked]
                .iter()
                .any(|&x| x >= reach && s[x] != s[x - period])
            {
                continue;
            }
            // Bytes from the end that equal the byte one period before them, up to what
            // is needed: `run + period` bytes then repeat the span.
            let scan = |from: usize| {
                let run = (from..n)
                    .rev()
                    .take(needed - period)
                    .take_while(|&i| s[i] == s[i - period])
                    .count();
                #[cfg(test)]
                tests::COMPARED.with(|c| c.set(c.get() + run + 1));
                run
            };
            let run = match carried {
                // The last look's run at this period, if the new bytes go on with it.
                Some((p, run)) if p == period => match scan(n - CHECK_EVERY) {
                    CHECK_EVERY => (run + CHECK_EVERY).min(needed - period),
                    fresh => fresh,
                },
                _ => scan(period),
            };
            if run + period >= needed {
                // Where the run really starts (it may reach further back than needed).
                let mut first = n - run - period;
                while first > 0 && s[first - 1] == s[first - 1 + period] {
                    first -= 1;
                }
                return Some(Found {
                    start: self.before + first,
                    period,
                    at: end,
                });
            }
            if longest_short.is_none_or(|(_, longest)| run > longest) {
                longest_short = Some((period, run));
            }
            let mismatch = n - 1 - run;
            for x in [mismatch, mismatch - period] {
                if marked < MARKS && x >= MAX_PERIOD {
                    marks[marked] = x;
                    marked += 1;
                }
            }
            // A multiple q of this period that its run reaches (q <= run + period) fails
            // earlier still: the byte q before the first mismatch's echo differs too.
            let mut multiple = 2 * period;
            while multiple <= MAX_PERIOD.min(run + period) {
                ruled_out[multiple] = true;
                multiple += period;
            }
        }
        self.carried = longest_short;
        None
    }
}

/// `text` cut to what `found` keeps (at a character boundary), with a mark saying so.
pub fn cut(text: &str, found: &Found) -> String {
    let mut keep = found.keep().min(text.len());
    while !text.is_char_boundary(keep) {
        keep -= 1;
    }
    let mut out = text[..keep].to_string();
    out.push_str(CUT_MARK);
    out
}

/// What ends a reply cut for repeating itself.
pub const CUT_MARK: &str = " [… cut: the reply kept repeating this]";

/// A reply's two streams watched: its text and its reasoning.
#[derive(Debug, Default)]
pub struct Repeats {
    text: Repetition,
    reasoning: Repetition,
}

impl Repeats {
    /// The next piece of the text; true when it completes a repeated run.
    pub fn text(&mut self, piece: &str) -> bool {
        self.text.push(piece).is_some()
    }

    /// The next piece of the reasoning; true when it completes a repeated run.
    pub fn reasoning(&mut self, piece: &str) -> bool {
        self.reasoning.push(piece).is_some()
    }

    /// Whether either stream was found repeating itself (whether or not the reply ended
    /// in the same piece).
    pub fn tripped(&self) -> bool {
        self.text.found.is_some() || self.reasoning.found.is_some()
    }

    /// The text as streamed, cut where it started repeating; `None` when it did not.
    pub fn text_cut(&self, text: &str) -> Option<String> {
        self.text.found.map(|found| cut(text, &found))
    }

    /// The reasoning as streamed, cut where it started repeating; `None` when it did not.
    pub fn reasoning_cut(&self, reasoning: &str) -> Option<String> {
        self.reasoning.found.map(|found| cut(reasoning, &found))
    }
}

#[cfg(test)]
mod tests;
