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
mod tests {
    use super::*;

    /// Feed `text` in pieces of `size` bytes (at char boundaries); what was found.
    fn feed(text: &str, size: usize) -> Option<Found> {
        feed_sizes(text, &mut |_| size)
    }

    /// Feed `text` in pieces whose sizes `size` gives (moved on to char boundaries).
    fn feed_sizes(text: &str, size: &mut dyn FnMut(usize) -> usize) -> Option<Found> {
        let mut r = Repetition::new();
        let mut rest = text;
        let mut i = 0;
        while !rest.is_empty() {
            let mut at = size(i).clamp(1, rest.len());
            i += 1;
            while !rest.is_char_boundary(at) {
                at += 1;
            }
            let (piece, after) = rest.split_at(at);
            if let Some(found) = r.push(piece) {
                assert_eq!(r.found(), Some(found));
                return Some(found);
            }
            rest = after;
        }
        None
    }

    /// A small deterministic generator (SplitMix64) for the chunk sizes.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) % n
        }
    }

    /// A 256-entry table of `0x00` written 16 a line (1.6 KB).
    fn zero_table() -> String {
        let line = format!("    {}\n", "0x00, ".repeat(16).trim_end());
        format!("static const uint8_t T[256] = {{\n{}}};\n", line.repeat(16))
    }

    /// Base64 of `bytes` zero bytes, in lines of 76 as `base64` writes it.
    fn base64_zeros(bytes: usize) -> String {
        let mut text = "A".repeat(bytes / 3 * 4);
        match bytes % 3 {
            1 => text.push_str("AA=="),
            2 => text.push_str("AAA="),
            _ => {}
        }
        let lines: Vec<&str> = text
            .as_bytes()
            .chunks(76)
            .map(|l| std::str::from_utf8(l).unwrap_or_default())
            .collect();
        lines.join("\n") + "\n"
    }

    /// What people write that repeats exactly, each a few kilobytes at most.
    fn legitimate() -> Vec<(&'static str, String)> {
        let csv = format!("a,b,c,d,e,f,g,h\n{}", "0,0,0,0,0,0,0,0\n".repeat(300));
        let hex = "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n".repeat(100);
        let xxd: String = (0..64)
            .map(|i| {
                format!(
                    "{:08x}: 0000 0000 0000 0000 0000 0000 0000 0000  ................\n",
                    i * 16
                )
            })
            .collect();
        let rows = format!(
            "| a | b | c |\n|---|---|---|\n{}",
            "|   |   |   |\n".repeat(300)
        );
        vec![
            ("a 256-entry table of 0x00", zero_table()),
            ("base64 of a 1 KiB zero file", base64_zeros(1024)),
            (
                "base64 of a 1 KiB zero file, one line",
                "A".repeat(1366) + "==",
            ),
            ("base64 of a 4 KiB zero file", base64_zeros(4096)),
            ("a CSV of zeros", csv),
            ("a hex dump of zeros", hex),
            ("xxd of 1 KiB of zeros", xxd),
            ("empty Markdown table rows", rows),
            ("200 nop lines", "    nop\n".repeat(200)),
            (
                "an array of zeros",
                format!("let t = [{}];\n", "0, ".repeat(2_000)),
            ),
            ("blank lines", "\n".repeat(4_000)),
            ("a rule", "=".repeat(4_000)),
        ]
    }

    #[test]
    fn legitimate_repetitive_data_of_a_few_kilobytes_is_left_alone() {
        for (what, text) in legitimate() {
            assert!(text.len() < MIN_BYTES, "{what}: {}", text.len());
            for size in [1, 3, 16, 64, 1_000, text.len()] {
                assert_eq!(feed(&text, size), None, "{what}, pieces of {size}");
            }
            // Also within a reply, after an introduction and before an ending.
            let reply = format!("Here it is:\n\n```\n{text}```\n\nThat is all.\n");
            assert_eq!(feed(&reply, 7), None, "{what} in a reply");
        }
        // All of them, one after the other with a line between: each run is its own.
        let all: String = legitimate()
            .into_iter()
            .map(|(what, text)| format!("{what}:\n{text}\n"))
            .collect();
        assert!(all.len() > MIN_BYTES);
        assert_eq!(feed(&all, 5), None);
    }

    #[test]
    fn over_the_line_it_is_a_runaway_whatever_it_looks_like() {
        // Base64 of a 64 KiB zero file: 87 KB of `A`, stopped after its first 8 KiB.
        let text = base64_zeros(64 * 1024);
        let found = feed(&text, 100).expect("found");
        assert_eq!(found.start, 0);
        assert_eq!(found.period, 77, "a line of 76 and its newline");
        assert!(found.at <= MIN_BYTES + 77 + CHECK_EVERY, "{found:?}");
        // Two thousand `0x00` lines: found too.
        let line = format!("    {}\n", "0x00, ".repeat(16).trim_end());
        assert!(feed(&line.repeat(2_000), 64).is_some());
    }

    #[test]
    fn a_short_span_over_and_over_is_found_where_it_starts() {
        let intro = "The command is: ```bash\nls";
        let text = format!("{intro}{}", " -l".repeat(20_000));
        for size in [1, 3, 7, 64, 100_000] {
            let found = feed(&text, size).expect("found");
            assert_eq!(found.period, 3, "pieces of {size}");
            // The run of " -l" starts right after the intro (its phase may shift by
            // the period: "l -" repeats too).
            assert!(found.start <= intro.len(), "{found:?}");
            assert!(found.start + 3 > intro.len() - 2, "{found:?}");
        }
        // Found soon after the run is long enough, not at the end of the stream: long
        // before any window fills (8 KiB of " -l" is under 6,000 tokens).
        let mut r = Repetition::new();
        r.push(intro);
        let mut fed = 0;
        while r.push(" -l").is_none() {
            fed += 3;
        }
        assert!(fed >= MIN_BYTES - 3, "{fed}");
        assert!(fed < MIN_BYTES + CHECK_EVERY, "{fed}");
        // It answers once.
        assert_eq!(r.push(&" -l".repeat(100)), None);
    }

    #[test]
    fn long_spans_sentences_and_blank_lines_are_found_too() {
        let sentence = "I will now run the tests to check that everything works. ";
        assert_eq!(
            feed(&sentence.repeat(300), 17).map(|f| f.period),
            Some(sentence.len())
        );
        assert_eq!(feed(&"\n".repeat(10_000), 5).map(|f| f.period), Some(1));
        let block = "fn a() {}\n".repeat(30) + "x".repeat(200).as_str() + "\n";
        let found = feed(&block.repeat(40), 50).expect("found");
        assert_eq!(found.period, block.len());
        // Not over MAX_PERIOD: a span of 600 bytes repeated is left alone.
        let long: String = (0..600)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect::<String>();
        let long = format!("{}\n", &long[..599]);
        assert_eq!(feed(&long.repeat(40), 64), None);
    }

    /// A span of the longest length taken, `MAX_PERIOD` bytes, is found once its run
    /// covers `MIN_BYTES` (the window keeps what that look needs).
    #[test]
    fn a_span_of_the_longest_period_is_found_as_soon_as_its_run_is_long_enough() {
        let span: String = (0..MAX_PERIOD - 1)
            .map(|i| char::from(b'a' + (i * 7 % 26) as u8))
            .chain(std::iter::once('\n'))
            .collect();
        assert_eq!(span.len(), MAX_PERIOD);
        let found = feed(&span.repeat(40), 97).expect("found");
        assert_eq!((found.start, found.period), (0, MAX_PERIOD));
        // Seen at the first look after the run covered MIN_BYTES and one span more.
        assert!(
            found.at <= MIN_BYTES + MAX_PERIOD + CHECK_EVERY,
            "{found:?}"
        );
    }

    /// A run is seen at the first look after it covers `MIN_BYTES`, wherever it starts:
    /// also where the kept bytes were just trimmed (the window holds what a look needs).
    #[test]
    fn a_run_is_seen_at_its_first_look_wherever_the_window_was_trimmed() {
        let mut seed = 7u32;
        let prefix: String = (0..30_000)
            .map(|_| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                char::from(b'a' + ((seed >> 16) % 26) as u8)
            })
            .collect();
        let mut latest = 0;
        for k in 0..60 {
            let start = 9_000 + k * 263;
            let text = format!("{}{}", &prefix[..start], "=".repeat(12_000));
            let found = feed(&text, 61).expect("found");
            assert_eq!((found.start, found.period), (start, 1));
            latest = latest.max(found.at - start);
        }
        assert!(
            latest <= MIN_BYTES + CHECK_EVERY,
            "seen {latest} bytes into a run"
        );
        // The same for a span of the longest period, which a look compares with the one
        // before it.
        let span: String = (0..MAX_PERIOD - 1)
            .map(|i| char::from(b'A' + (i * 7 % 26) as u8))
            .chain(std::iter::once('\n'))
            .collect();
        let mut latest = 0;
        for k in 0..60 {
            let start = 9_000 + k * 263;
            let text = format!("{}{}", &prefix[..start], span.repeat(24));
            let found = feed(&text, 61).expect("found");
            assert_eq!((found.start, found.period), (start, MAX_PERIOD));
            latest = latest.max(found.at - start);
        }
        assert!(
            latest <= MIN_BYTES + MAX_PERIOD + CHECK_EVERY,
            "seen {latest} bytes into a run"
        );
    }

    /// It answers once: after a find, nothing more is looked at or found, however the
    /// stream goes on.
    #[test]
    fn after_a_find_nothing_more_is_found() {
        let mut r = Repetition::new();
        let first = r.push(&"=".repeat(20_000)).expect("found");
        assert_eq!(r.push(&"ab".repeat(10_000)), None);
        assert_eq!(r.push(&"=".repeat(20_000)), None);
        assert_eq!(r.found(), Some(first));
    }

    /// Cheap on a long reply: under `2 * (MIN_BYTES + CHECK_EVERY)` bytes are kept (17
    /// KiB), whatever streams by.
    #[test]
    fn a_long_stream_keeps_at_most_two_windows() {
        let mut r = Repetition::new();
        let mut seed = 11u32;
        let text: String = (0..300_000)
            .map(|_| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                char::from(b'a' + ((seed >> 16) % 26) as u8)
            })
            .collect();
        for piece in text.as_bytes().chunks(1_000) {
            assert_eq!(r.push(std::str::from_utf8(piece).unwrap()), None);
            let kept = r.tail.len();
            assert!(kept < 2 * (MIN_BYTES + CHECK_EVERY), "{kept} bytes kept");
        }
    }

    #[test]
    fn what_people_write_is_left_alone() {
        // A table whose rows differ in a number, a list, code, a rule, an array of zeros.
        let mut table = String::from("| n | square |\n|---|---|\n");
        for i in 0..4_000 {
            table.push_str(&format!("| {i} | {} |\n", i * i));
        }
        assert_eq!(feed(&table, 16), None);
        let list: String = (0..3_000).map(|i| format!("- [ ] item {i}\n")).collect();
        assert_eq!(feed(&list, 16), None);
        let code: String = (0..2_000)
            .map(|i| format!("    assert_eq!(f({i}), {});\n", i + 1))
            .collect();
        assert_eq!(feed(&code, 16), None);
    }

    /// The watch done the slow way: at each look, every period from the shortest, each
    /// run scanned whole (no period ruled out by a shorter one).
    fn reference(text: &str) -> Option<Found> {
        let bytes = text.as_bytes();
        let mut before = 0;
        let mut end = CHECK_EVERY;
        while end <= bytes.len() {
            let s = &bytes[before..end];
            let n = s.len();
            for period in 1..=MAX_PERIOD.min(n / MIN_REPEATS) {
                let needed = MIN_BYTES.max(MIN_REPEATS * period);
                if needed > n || n < MIN_BYTES {
                    break;
                }
                let run = (period..n)
                    .rev()
                    .take_while(|&i| s[i] == s[i - period])
                    .count();
                if run + period >= needed {
                    return Some(Found {
                        start: before + n - run - period,
                        period,
                        at: end,
                    });
                }
            }
            if n >= 2 * WINDOW {
                before = end - WINDOW;
            }
            end += CHECK_EVERY;
        }
        None
    }

    #[test]
    fn the_verdict_and_the_cut_do_not_depend_on_the_pieces() {
        let runaway = |intro: &str, span: &str, n: usize| format!("{intro}{}", span.repeat(n));
        let mut texts: Vec<String> = legitimate().into_iter().map(|(_, t)| t).collect();
        texts.extend([
            runaway("ls", " -l", 4_000),
            runaway("", "A", 9_000),
            runaway("é", "😀", 3_000),
            runaway(&zero_table(), "0x00, ", 2_000),
            runaway(&"x".repeat(5_000), "ab", 6_000),
            base64_zeros(64 * 1024),
            // Just under the line, then something else: never found.
            runaway("", "0, ", MIN_BYTES / 3 - 10) + "done\n",
        ]);
        // Random mixes of the above, cut at random lengths.
        let mut rng = Rng(42);
        for _ in 0..12 {
            let mut mix = String::new();
            for _ in 0..4 {
                let t = &texts[rng.below(texts.len() as u64) as usize];
                let mut cut = rng.below(t.len() as u64 + 1) as usize;
                while !t.is_char_boundary(cut) {
                    cut -= 1;
                }
                mix.push_str(&t[..cut]);
            }
            texts.push(mix);
        }
        for (k, text) in texts.iter().enumerate() {
            let whole = feed(text, text.len().max(1));
            assert_eq!(whole, reference(text), "text {k}, against the slow way");
            assert_eq!(feed(text, 1), whole, "text {k}, one byte a piece");
            for seed in 0..4 {
                let mut rng = Rng(seed * 1_000 + k as u64);
                let sizes = [8, 100, 3_000];
                let max = sizes[seed as usize % 3];
                let found = feed_sizes(text, &mut |_| 1 + rng.below(max) as usize);
                assert_eq!(found, whole, "text {k}, random pieces (seed {seed})");
            }
            if let Some(found) = whole {
                assert_eq!(found.at % CHECK_EVERY, 0);
                assert!(found.keep() <= found.at);
                // The cut keeps the same text whatever the pieces.
                assert!(cut(text, &found).ends_with(CUT_MARK));
            }
        }
    }

    /// Runs just short of the line that change span at once, again and again (so a look
    /// carries a long run of one period into a stretch of another): the same verdict as
    /// the slow way, wherever the changes fall.
    #[test]
    fn runs_that_change_their_span_are_judged_as_the_slow_way_does() {
        let mut rng = Rng(7);
        for k in 0..24 {
            let mut text = String::new();
            for _ in 0..5 {
                let len = 1 + rng.below(24) as usize;
                let span: String = (0..len)
                    .map(|_| char::from(b'a' + rng.below(4) as u8))
                    .collect();
                let bytes = 2_000 + rng.below(7_000) as usize;
                text.push_str(&span.repeat(bytes / len + 1));
            }
            let found = feed(&text, 1 + rng.below(700) as usize);
            assert_eq!(found, reference(&text), "text {k}");
        }
    }

    thread_local! {
        /// Bytes the looks of this thread have compared (each scan's run and its mismatch).
        pub(super) static COMPARED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// Bytes compared, a byte of stream, to feed `text` (none of it a runaway).
    fn compared_a_byte(text: &str) -> f64 {
        COMPARED.with(|c| c.set(0));
        assert_eq!(feed(text, 97), None);
        COMPARED.with(|c| c.get()) as f64 / text.len() as f64
    }

    /// What the shortcuts save, counted as bytes compared: a long run under the line is
    /// scanned once a look and then only in its new bytes (the run carried), the
    /// multiples of a period whose run failed are not scanned (ruled out), nor are the
    /// periods that would fail where a shorter one did (marks). Each of these inputs
    /// costs a few comparisons a byte; without the shortcuts, hundreds.
    #[test]
    fn a_look_compares_a_few_bytes_for_each_new_one() {
        let mut rng = Rng(3);
        let mut noise = |len: usize| -> String {
            (0..len)
                .map(|_| char::from(b'a' + rng.below(26) as u8))
                .collect()
        };
        // Words: the last byte (often a space) recurs at many distances.
        let words: String = (0..40_000)
            .map(|i| if i % 6 == 5 { ' ' } else { 'x' })
            .collect::<String>()
            .chars()
            .zip(noise(40_000).chars())
            .map(|(a, b)| if a == ' ' { ' ' } else { b })
            .collect();
        // Runs of one byte under the line, between lines of other text.
        let mut runs = String::new();
        for k in 0..12 {
            runs.push_str(&"=".repeat(5_000 + k * 97));
            runs.push_str(&noise(300));
        }
        // Zeros broken by a one every 100 to 500 bytes: no period, one in every candidate.
        let mut zeros = String::new();
        let mut rng2 = Rng(5);
        while zeros.len() < 60_000 {
            zeros.push_str(&"0".repeat(100 + rng2.below(400) as usize));
            zeros.push('1');
        }
        // A line repeated, 5 KB at a time, between lines of other text.
        let line = "let value = compute(input, 42); // same\n";
        let mut lines = String::new();
        for _ in 0..12 {
            lines.push_str(&line.repeat(5_000 / line.len()));
            lines.push_str(&noise(300));
        }
        // A run just short of the line that began with the stream: its mismatch is too
        // near the start to mark, and only its multiples being ruled out spares a scan of
        // each longer period.
        let first = format!("x{}{}", "=".repeat(MIN_BYTES - 1), noise(4_000));
        // Coin flips: every other period is a candidate and fails within a few bytes, so
        // a look fills its marks.
        let mut rng3 = Rng(9);
        let flips: String = (0..30_000)
            .map(|_| if rng3.below(2) == 0 { 'a' } else { 'b' })
            .collect();
        let inputs = [
            ("words", words),
            ("runs", runs),
            ("zeros", zeros),
            ("lines", lines),
            ("first", first),
            ("flips", flips),
        ];
        for (name, text) in inputs {
            let cost = compared_a_byte(&text);
            eprintln!("{name}: {cost:.2} bytes compared a byte");
            assert!(cost < 3.0, "{name}: {cost:.2} bytes compared a byte");
        }
    }

    /// A period whose run failed rules out only the multiples its run reaches: where a
    /// look ends `zababa zababa`, the end repeats at 2 for five bytes, and its own period,
    /// 6, is still tried (and found, not 12), whichever of its bytes the look ends on.
    #[test]
    fn a_span_whose_end_repeats_a_shorter_one_is_found_at_its_own_period() {
        let digits = "0123456789".repeat(40);
        for start in 290..=310 {
            let text = format!("{}{}", &digits[..start], "zababa".repeat(2_000));
            let found = feed(&text, 100).expect("found");
            assert_eq!(
                (found.start, found.period),
                (start, 6),
                "after {start} bytes"
            );
            if start == 298 {
                assert_eq!(Some(found), reference(&text));
            }
        }
    }

    /// The run carried from the last look goes on only at its own period: a run of `ab`
    /// just short of the line, then a few more `a`s, is no run of `a`s.
    #[test]
    fn a_run_carried_from_the_last_look_counts_only_at_its_period() {
        let prefix = &"0123456789".repeat(25)[..249];
        let run = "ab".repeat((MIN_BYTES - prefix.len()) / 2) + "a";
        assert_eq!((prefix.len() + run.len()) % CHECK_EVERY, 0);
        let text = format!("{prefix}{run}{}", "a".repeat(CHECK_EVERY));
        assert_eq!(feed(&text, 1), None);
        assert_eq!(reference(&text), None);
        // The `a`s found once they cover the line.
        let text = format!("{prefix}{run}{}", "a".repeat(MIN_BYTES + CHECK_EVERY));
        let found = feed(&text, 64).expect("found");
        assert_eq!(found.period, 1);
        assert_eq!(found.start, prefix.len() + run.len() - 1);
        assert_eq!(Some(found), reference(&text));
    }

    #[test]
    fn a_cut_keeps_the_start_and_a_few_repeats_and_says_so() {
        let text = format!("héllo:{}", " -l".repeat(10_000));
        let found = feed(&text, 10).unwrap();
        let kept = cut(&text, &found);
        assert_eq!(kept, format!("héllo: -l -l -l{CUT_MARK}"));
        // A cut inside a character moves back to its start.
        let emoji = "😀".repeat(4_000);
        let found = feed(&emoji, 10).unwrap();
        assert_eq!(found.period, 4);
        let kept = cut(
            &emoji,
            &Found {
                start: 1,
                period: 4,
                at: 0,
            },
        );
        assert!(kept.starts_with("😀😀😀"), "{kept}");
        assert!(kept.trim_end_matches(CUT_MARK).chars().all(|c| c == '😀'));
    }
}
