//! A reply that repeats itself: the same short span over and over, as a small model does
//! when it loses its way (`ls -l -l -l -l …` until its window is full).
//!
//! [`Repetition`] watches one stream (the text, or the reasoning) as it arrives and says
//! when its newest bytes are one span repeated many times in a row: a period of at most
//! [`MAX_PERIOD`] bytes, repeated at least [`MIN_REPEATS`] times and covering at least
//! [`MIN_BYTES`]. What people write never does that: a table's rows, a list's items and
//! code's lines differ in something (a number, a name), and the runs that do repeat
//! exactly (a rule of `=`, an array of zeros, blank lines) are far shorter than a kilobyte.
//!
//! Cheap and incremental: only the last `WINDOW` bytes are kept, and they are looked at
//! once every `CHECK_EVERY` new bytes. A look tries only the periods at which the last
//! byte appears again (found with memchr), from the shortest, each stopping at its first
//! mismatch from the end: ordinary text costs a few nanoseconds per byte streamed
//! (`cargo bench --bench stream`).

/// The longest span taken for a repeat, in bytes.
pub const MAX_PERIOD: usize = 512;
/// The fewest times in a row a span must appear.
pub const MIN_REPEATS: usize = 8;
/// The fewest bytes a repeated run must cover.
pub const MIN_BYTES: usize = 1_200;
/// Bytes kept of the stream: enough for the longest span's repeats.
const WINDOW: usize = MAX_PERIOD * MIN_REPEATS + MAX_PERIOD;
/// New bytes between two looks.
const CHECK_EVERY: usize = 64;
/// Repeats of the span kept when the reply is cut: enough to show what it was doing.
const KEPT_REPEATS: usize = 3;

/// A stream found repeating itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// Where the repeated run starts, in bytes from the start of the stream.
    pub start: usize,
    /// The repeated span's length in bytes.
    pub period: usize,
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
        // A piece longer than the window: only its end matters, but the look happens at
        // every CHECK_EVERY boundary it crosses, so feed it in steps.
        while !bytes.is_empty() {
            let room = CHECK_EVERY - self.unchecked;
            let (now, rest) = bytes.split_at(room.min(bytes.len()));
            bytes = rest;
            self.tail.extend_from_slice(now);
            self.unchecked += now.len();
            if self.tail.len() >= 2 * WINDOW {
                let drop = self.tail.len() - WINDOW;
                self.tail.drain(..drop);
                self.before += drop;
            }
            if self.unchecked >= CHECK_EVERY {
                self.unchecked = 0;
                if let Some(found) = self.look() {
                    self.found = Some(found);
                    return Some(found);
                }
            }
        }
        None
    }

    /// The shortest span the end of the tail repeats, when it repeats enough.
    fn look(&self) -> Option<Found> {
        let s = &self.tail;
        let n = s.len();
        let longest = MAX_PERIOD.min(n / MIN_REPEATS);
        let (&last, before) = s.split_last()?;
        // Only a period whose byte before the end equals the last byte can repeat: found
        // with memchr, nearest first (the shortest periods).
        let from = before.len().saturating_sub(longest);
        for at in memchr::memrchr_iter(last, &before[from..]) {
            let period = before.len() - (from + at);
            let needed = MIN_BYTES.max(MIN_REPEATS * period);
            if needed > n {
                // Longer periods need even more.
                break;
            }
            // Bytes from the end that equal the byte one period before them, up to what
            // is needed: `run + period` bytes then repeat the span.
            let run = (period..n)
                .rev()
                .take(needed - period)
                .take_while(|&i| s[i] == s[i - period])
                .count();
            if run + period >= needed {
                // Where the run really starts (it may reach further back than needed).
                let mut first = n - run - period;
                while first > 0 && s[first - 1] == s[first - 1 + period] {
                    first -= 1;
                }
                return Some(Found {
                    start: self.before + first,
                    period,
                });
            }
        }
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
mod tests {
    use super::*;

    /// Feed `text` in pieces of `size` bytes (at char boundaries); what was found.
    fn feed(text: &str, size: usize) -> Option<Found> {
        let mut r = Repetition::new();
        let mut rest = text;
        while !rest.is_empty() {
            let mut at = size.min(rest.len());
            while !rest.is_char_boundary(at) {
                at += 1;
            }
            let (piece, after) = rest.split_at(at);
            if let Some(found) = r.push(piece) {
                return Some(found);
            }
            rest = after;
        }
        None
    }

    #[test]
    fn a_short_span_over_and_over_is_found_where_it_starts() {
        let intro = "The command is: ```bash\nls";
        let text = format!("{intro}{}", " -l".repeat(2_000));
        for size in [1, 3, 7, 64, 100_000] {
            let found = feed(&text, size).expect("found");
            assert_eq!(found.period, 3, "pieces of {size}");
            // The run of " -l" starts right after the intro (its phase may shift by
            // the period: "l -" repeats too).
            assert!(found.start <= intro.len(), "{found:?}");
            assert!(found.start + 3 > intro.len() - 2, "{found:?}");
        }
        // Found soon after the run is long enough, not at the end of the stream.
        let mut r = Repetition::new();
        r.push(intro);
        let mut fed = 0;
        while r.push(" -l").is_none() {
            fed += 3;
        }
        assert!(fed < MIN_BYTES + CHECK_EVERY, "{fed}");
        // It answers once.
        assert_eq!(r.push(&" -l".repeat(100)), None);
    }

    #[test]
    fn long_spans_sentences_and_blank_lines_are_found_too() {
        let sentence = "I will now run the tests to check that everything works. ";
        assert_eq!(
            feed(&sentence.repeat(30), 17).map(|f| f.period),
            Some(sentence.len())
        );
        assert_eq!(feed(&"\n".repeat(1_300), 5).map(|f| f.period), Some(1));
        let block = "fn a() {}\n".repeat(30) + "x".repeat(200).as_str() + "\n";
        let found = feed(&block.repeat(10), 50).expect("found");
        assert_eq!(found.period, block.len());
        // Not over MAX_PERIOD: a span of 600 bytes repeated is left alone.
        let long: String = (0..600)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect::<String>();
        let long = format!("{}\n", &long[..599]);
        assert_eq!(feed(&long.repeat(10), 64), None);
    }

    #[test]
    fn what_people_write_is_left_alone() {
        // A table whose rows differ in a number, a list, code, a rule, an array of zeros.
        let mut table = String::from("| n | square |\n|---|---|\n");
        for i in 0..400 {
            table.push_str(&format!("| {i} | {} |\n", i * i));
        }
        assert_eq!(feed(&table, 16), None);
        let list: String = (0..300).map(|i| format!("- [ ] item {i}\n")).collect();
        assert_eq!(feed(&list, 16), None);
        let code: String = (0..200)
            .map(|i| format!("    assert_eq!(f({i}), {});\n", i + 1))
            .collect();
        assert_eq!(feed(&code, 16), None);
        let zeros = format!("let t = [{}];\n", "0, ".repeat(256));
        let rule = format!("{}\nTitle\n{}\n", "=".repeat(120), "=".repeat(120));
        assert_eq!(feed(&format!("{zeros}{rule}{zeros}"), 16), None);
        // Identical lines, but fewer than a kilobyte of them.
        assert_eq!(feed(&"}\n".repeat(40), 16), None);
        assert_eq!(feed(&"| - | - |\n".repeat(20), 16), None);
    }

    #[test]
    fn a_cut_keeps_the_start_and_a_few_repeats_and_says_so() {
        let text = format!("héllo:{}", " -l".repeat(1_000));
        let found = feed(&text, 10).unwrap();
        let kept = cut(&text, &found);
        assert_eq!(kept, format!("héllo: -l -l -l{CUT_MARK}"));
        // A cut inside a character moves back to its start.
        let emoji = "😀".repeat(400);
        let found = feed(&emoji, 10).unwrap();
        assert_eq!(found.period, 4);
        let kept = cut(
            &emoji,
            &Found {
                start: 1,
                period: 4,
            },
        );
        assert!(kept.starts_with("😀😀😀"), "{kept}");
        assert!(kept.trim_end_matches(CUT_MARK).chars().all(|c| c == '😀'));
    }
}
