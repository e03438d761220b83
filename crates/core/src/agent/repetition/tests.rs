//! The watch's tests: what people write is left alone, runaways are found where they
//! start, the verdict does not depend on the pieces, and the shortcuts' savings.

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
    assert_eq!(kept, format!("😀😀😀{CUT_MARK}"));
}

/// A reply's text and reasoning are watched apart: a runaway in either trips the reply
/// and is cut in that stream alone, once.
#[test]
fn text_and_reasoning_are_watched_apart() {
    let runaway = " -l".repeat(4_000);
    let mut repeats = Repeats::default();
    assert!(!repeats.reasoning("thinking about it"));
    assert!(!repeats.text("ls"));
    assert!(!repeats.tripped());
    assert_eq!(repeats.text_cut("ls"), None);
    // Its reasoning runs away: the reasoning alone is cut.
    assert!(repeats.reasoning(&runaway));
    assert!(repeats.tripped());
    assert!(!repeats.reasoning(&runaway));
    let reasoning = format!("thinking about it{runaway}");
    assert_eq!(
        repeats.reasoning_cut(&reasoning),
        Some(format!("thinking about it -l -l -l{CUT_MARK}"))
    );
    assert_eq!(repeats.text_cut("ls"), None);
    // The text runs away too: it is cut on its own.
    assert!(repeats.text(&runaway));
    assert_eq!(
        repeats.text_cut(&format!("ls{runaway}")),
        Some(format!("ls -l -l -l{CUT_MARK}"))
    );
    // The text alone trips a reply as well.
    let mut repeats = Repeats::default();
    assert!(repeats.text(&runaway));
    assert!(repeats.tripped());
    assert_eq!(repeats.reasoning_cut("fine"), None);
}
