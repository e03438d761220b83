//! The common chunk, read without serde: one choice whose delta is a piece of text.
//!
//! Nearly every chunk of a reply is `{"id":…,"object":…,"created":…,"model":…,
//! "choices":[{"index":0,"delta":{"content":"a few characters"},"finish_reason":null}]}`.
//! serde_json's typed parse of it costs about 4 000 instructions, most of them finding the
//! ends of the dozen short strings and matching field names; in the paced stream of the
//! dashboard bench that was two thirds of the agent's work. This reader walks the bytes
//! once and answers only for that shape: text (or nothing) in `content`, a
//! `finish_reason`, any other field skipped as the typed parse skips it. For anything
//! else (reasoning, tool calls, usage, an error, a second choice, a key twice, an escape
//! in a key or in a skipped string, a JSON error of any kind) it gives up and the typed
//! parse reads the chunk, so what it accepts it reads exactly as that parse would (a test
//! checks both on every recorded provider stream and on variants of the common chunk).
//! The escapes of a `content` string are decoded by serde_json.

use std::borrow::Cow;

/// What the common chunk says.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Common<'a> {
    /// The delta's `content`, when the chunk has a delta for choice 0 with a string there.
    pub content: Option<Cow<'a, str>>,
    /// Choice 0's `finish_reason`, when it is a string.
    pub finish_reason: Option<&'a str>,
}

/// The bytes that end a run of a string's ordinary bytes: the quote, the backslash and
/// the control characters (not allowed in a JSON string).
static SPECIAL: [bool; 256] = {
    let mut table = [false; 256];
    let mut c = 0;
    while c < 0x20 {
        table[c] = true;
        c += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Every byte 1, for the eight-at-a-time tests below.
const ONES: u64 = u64::from_le_bytes([1; 8]);

/// The high bit of each byte of `word` whose byte is zero, set for the first such byte
/// (bytes after it may be flagged falsely, through the borrow, which the caller never
/// reads: it takes the lowest).
fn zero_bytes(word: u64) -> u64 {
    word.wrapping_sub(ONES) & !word & (ONES * 0x80)
}

/// The first byte of `bytes` at or after `i` that ends a run of a string's ordinary bytes
/// ([`SPECIAL`]), looked for eight bytes at a time; `None` when there is none.
fn special_from(bytes: &[u8], mut i: usize) -> Option<usize> {
    while let Some(eight) = bytes.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let word = u64::from_le_bytes(*eight);
        // A quote, a backslash, or a byte below 0x20 (its subtraction borrows and its
        // high bit is clear), flagged in the byte's high bit; the lowest flag is exact.
        let flags = zero_bytes(word ^ (ONES * u64::from(b'"')))
            | zero_bytes(word ^ (ONES * u64::from(b'\\')))
            | (word.wrapping_sub(ONES * 0x20) & !word & (ONES * 0x80));
        if flags != 0 {
            return Some(i + (flags.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    let found = bytes
        .get(i..)?
        .iter()
        .position(|&c| SPECIAL[usize::from(c)])?;
    Some(i + found)
}

/// The frame of the last common chunk read: its bytes before and after the text of its
/// `content`. A server writes every chunk of a reply in the same frame (the same id,
/// model, creation time and fields in the same order; most recorded streams do), so a
/// chunk that is that frame around a string without escapes is the common chunk with
/// that text, known after two comparisons and a look at the text, without reading the
/// rest again: the reader's walk over the frame's bytes is the same, and a string
/// without a quote, backslash or control character ends where the frame's closing quote
/// is. Only a frame without a finish reason is kept (the last chunk of a reply is the one
/// that differs).
#[derive(Default)]
pub(crate) struct Frame {
    /// The frame is known (an empty one matches nothing).
    known: bool,
    before: String,
    after: String,
}

/// The frame is a cache: an assembler's debug form (which the tests compare between the
/// two readers) does not show it.
impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Frame")
    }
}

impl Frame {
    /// Read `data` if it is the common chunk, through this frame when it fits, else
    /// through [`read`] (learning its frame); `None` sends it to the typed parse.
    pub(super) fn read<'a>(&mut self, data: &'a str) -> Option<Common<'a>> {
        if let Some(text) = self.text(data) {
            return Some(Common {
                content: Some(Cow::Borrowed(text)),
                finish_reason: None,
            });
        }
        let common = read(data)?;
        self.learn(data, &common);
        Some(common)
    }

    /// The text of `data` when `data` is this frame around a string without escapes.
    fn text<'a>(&self, data: &'a str) -> Option<&'a str> {
        if !self.known {
            return None;
        }
        let text = data
            .strip_prefix(self.before.as_str())?
            .strip_suffix(self.after.as_str())?;
        special_from(text.as_bytes(), 0).is_none().then_some(text)
    }

    /// Keep `data`'s frame, when [`read`] found a text without escapes and no finish
    /// reason in it.
    fn learn(&mut self, data: &str, common: &Common<'_>) {
        let Some(Cow::Borrowed(text)) = &common.content else {
            return;
        };
        if common.finish_reason.is_some() {
            return;
        }
        // The text borrows from `data`: its place there.
        let start = (text.as_ptr() as usize).wrapping_sub(data.as_ptr() as usize);
        let end = start.wrapping_add(text.len());
        let (Some(before), Some(after)) = (data.get(..start), data.get(end..)) else {
            return;
        };
        self.before.clear();
        self.before.push_str(before);
        self.after.clear();
        self.after.push_str(after);
        self.known = true;
    }
}

/// Nested objects and arrays a skipped value may hold before the reader gives up.
const MAX_DEPTH: usize = 16;

/// Read `data` if it is the common chunk; `None` sends it to the typed parse.
pub(super) fn read(data: &str) -> Option<Common<'_>> {
    let mut s = Scan { s: data, i: 0 };
    let mut common = Common::default();
    let mut seen_choices = false;
    s.object(|s, key| match key {
        "choices" => {
            if std::mem::replace(&mut seen_choices, true) {
                return None;
            }
            if s.null() {
                return Some(());
            }
            s.eat(b'[')?;
            if s.eat(b']').is_some() {
                return Some(());
            }
            common = s.choice()?;
            // A second choice goes to the typed parse.
            s.eat(b']')
        }
        // Present only as null here (the typed parse reads them otherwise).
        "usage" | "error" | "timings" => s.null().then_some(()),
        _ => s.skip_value(0),
    })?;
    s.ws();
    (s.i == data.len()).then_some(common)
}

/// A cursor over the chunk's text.
struct Scan<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Scan<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.s.as_bytes()
    }

    fn ws(&mut self) {
        while matches!(self.bytes().get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    /// The byte `c`, after white space (chunks seldom have any, so it is looked for only
    /// when `c` is not next).
    fn eat(&mut self, c: u8) -> Option<()> {
        if self.bytes().get(self.i) != Some(&c) {
            self.ws();
            if self.bytes().get(self.i) != Some(&c) {
                return None;
            }
        }
        self.i += 1;
        Some(())
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.bytes().get(self.i).copied()
    }

    /// The literal `word` (`null`, `true`, `false`), after white space.
    fn literal(&mut self, word: &str) -> bool {
        self.ws();
        let found = self
            .bytes()
            .get(self.i..)
            .is_some_and(|rest| rest.starts_with(word.as_bytes()));
        if found {
            self.i += word.len();
        }
        found
    }

    fn null(&mut self) -> bool {
        self.literal("null")
    }

    /// A string: its text between the quotes as written, and whether it holds an escape.
    fn raw_string(&mut self) -> Option<(&'a str, bool)> {
        self.eat(b'"')?;
        let start = self.i;
        let mut escaped = false;
        let bytes = self.bytes();
        loop {
            self.i = special_from(bytes, self.i)?;
            match *bytes.get(self.i)? {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    // The escaped byte is never the closing quote; serde_json checks the
                    // escape itself where one is decoded.
                    self.i += 2;
                }
                // A control character is not allowed in a JSON string.
                _ => return None,
            }
        }
        let raw = self.s.get(start..self.i)?;
        self.i += 1;
        Some((raw, escaped))
    }

    /// A string without escapes (a key, a skipped value, a finish reason).
    fn plain_string(&mut self) -> Option<&'a str> {
        match self.raw_string()? {
            (raw, false) => Some(raw),
            _ => None,
        }
    }

    /// A string's value, its escapes decoded by serde_json.
    fn text(&mut self) -> Option<Cow<'a, str>> {
        self.ws();
        let quote = self.i;
        match self.raw_string()? {
            (raw, false) => Some(Cow::Borrowed(raw)),
            (_, true) => serde_json::from_str::<String>(self.s.get(quote..self.i)?)
                .ok()
                .map(Cow::Owned),
        }
    }

    /// An object, each key handed to `field` with the cursor before its value (which
    /// `field` must read). Keys with escapes give up.
    fn object(&mut self, mut field: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            let key = self.plain_string()?;
            self.eat(b':')?;
            field(self, key)?;
            if self.eat(b',').is_none() {
                return self.eat(b'}');
            }
        }
    }

    /// Choice 0 of the common chunk: its index 0 (or none), a delta of text, a finish
    /// reason.
    fn choice(&mut self) -> Option<Common<'a>> {
        let mut common = Common::default();
        // The known keys seen so far (a key twice goes to the typed parse).
        let mut seen = [false; 4];
        let mut first = |slot: usize| (!std::mem::replace(&mut seen[slot], true)).then_some(());
        self.object(|s, key| match key {
            "index" => {
                first(0)?;
                (s.null() || s.literal("0")).then_some(())
            }
            "delta" => {
                first(1)?;
                if !s.null() {
                    common.content = s.delta()?;
                }
                Some(())
            }
            // A whole message (a server that ignored `stream`): the typed parse.
            "message" => {
                first(2)?;
                s.null().then_some(())
            }
            "finish_reason" => {
                first(3)?;
                if !s.null() {
                    common.finish_reason = Some(s.plain_string()?);
                }
                Some(())
            }
            _ => s.skip_value(0),
        })?;
        Some(common)
    }

    /// A delta whose only known field with a value is `content`, a string (or null).
    fn delta(&mut self) -> Option<Option<Cow<'a, str>>> {
        let mut content = None;
        let mut seen_content = false;
        self.object(|s, key| match key {
            "content" => {
                if std::mem::replace(&mut seen_content, true) {
                    return None;
                }
                if !s.null() {
                    content = Some(s.text()?);
                }
                Some(())
            }
            // Read by the typed parse whenever they hold anything.
            "reasoning_content" | "reasoning" | "reasoning_details" | "refusal" | "tool_calls" => {
                s.null().then_some(())
            }
            _ => s.skip_value(0),
        })?;
        Some(content)
    }

    /// Any JSON value, checked as serde_json checks it, and not kept.
    fn skip_value(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' => self.plain_string().map(drop),
            b'{' => self.object(|s, _| s.skip_value(depth + 1)),
            b'[' => {
                self.eat(b'[')?;
                if self.eat(b']').is_some() {
                    return Some(());
                }
                loop {
                    self.skip_value(depth + 1)?;
                    if self.eat(b',').is_none() {
                        return self.eat(b']');
                    }
                }
            }
            b't' => self.literal("true").then_some(()),
            b'f' => self.literal("false").then_some(()),
            b'n' => self.null().then_some(()),
            _ => self.number(),
        }
    }

    /// A number as JSON writes it: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    fn number(&mut self) -> Option<()> {
        let b = self.bytes();
        let digits = |i: &mut usize| {
            let start = *i;
            while b.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            *i > start
        };
        let mut i = self.i;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        match b.get(i)? {
            b'0' => i += 1,
            b'1'..=b'9' => {
                digits(&mut i);
            }
            _ => return None,
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            if !digits(&mut i) {
                return None;
            }
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if !digits(&mut i) {
                return None;
            }
        }
        self.i = i;
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::stream::{Assembler, ChunkError};

    /// What feeding `data` to a new assembler does: the deltas, the assembler after, and
    /// the result.
    fn feed(data: &str, typed_only: bool) -> (Vec<String>, String, Result<(), ChunkError>) {
        feed_into(&mut Assembler::default(), data, typed_only)
    }

    /// What feeding `data` to `a` does.
    fn feed_into(
        a: &mut Assembler,
        data: &str,
        typed_only: bool,
    ) -> (Vec<String>, String, Result<(), ChunkError>) {
        let mut deltas = Vec::new();
        let mut on_delta = |d: crate::agent::stream::StreamDelta<'_>| deltas.push(format!("{d:?}"));
        let result = if typed_only {
            a.push_typed(data, &mut on_delta)
        } else {
            a.push(data, &mut on_delta)
        };
        (deltas, format!("{a:?}"), result)
    }

    /// `data` gives the same deltas, state and result both ways.
    fn same_both_ways(data: &str) {
        assert_eq!(feed(data, false), feed(data, true), "{data}");
    }

    const COMMON: &str = r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1752169304,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi \"there\"\n","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}"#;

    #[test]
    fn the_common_chunk_is_read_here_and_as_the_typed_parse_reads_it() {
        let c = read(COMMON).expect("the common chunk");
        assert_eq!(c.content.as_deref(), Some("Hi \"there\"\n"));
        assert_eq!(c.finish_reason, None);
        let plain = r#"{"choices":[{"delta":{"content":"abcd"},"finish_reason":null,"index":0}],"created":0,"id":"chatcmpl-1","model":"scripted","object":"chat.completion.chunk"}"#;
        assert!(matches!(
            read(plain).and_then(|c| c.content),
            Some(Cow::Borrowed("abcd"))
        ));
        let end = r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#;
        assert_eq!(read(end).and_then(|c| c.finish_reason), Some("stop"));
        for data in [COMMON, plain, end] {
            same_both_ways(data);
        }
    }

    /// The chunks (`data` of each event but `[DONE]`) of every recorded provider stream,
    /// a list per stream.
    fn recorded_streams() -> Vec<Vec<String>> {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/provider-samples");
        let mut streams = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "sse") {
                continue;
            }
            let body = std::fs::read_to_string(&path).unwrap_or_default();
            streams.push(
                body.lines()
                    .filter_map(|line| line.strip_prefix("data:"))
                    .map(|data| data.strip_prefix(' ').unwrap_or(data))
                    .filter(|data| *data != "[DONE]")
                    .map(str::to_string)
                    .collect(),
            );
        }
        streams
    }

    /// Every chunk of every recorded provider stream: what this reader accepts it reads
    /// as the typed parse does, and the rest goes there.
    #[test]
    fn every_recorded_chunk_reads_the_same_both_ways() {
        let (mut chunks, mut common) = (0, 0);
        for data in recorded_streams().iter().flatten() {
            chunks += 1;
            common += usize::from(read(data).is_some());
            same_both_ways(data);
        }
        assert!(chunks > 300, "{chunks} chunks");
        assert!(
            common * 3 > chunks,
            "most text chunks are common: {common} of {chunks}"
        );
    }

    /// Each chunk of `chunks` fed in order to one assembler through the frame and to
    /// another through the typed parse alone: the same deltas, state and result after
    /// every chunk. Returns how many chunks the frame read.
    fn same_in_order(chunks: &[&str]) -> usize {
        let (mut framed, mut typed) = (Assembler::default(), Assembler::default());
        let mut hits = 0;
        for data in chunks {
            hits += usize::from(framed.frame.text(data).is_some());
            assert_eq!(
                feed_into(&mut framed, data, false),
                feed_into(&mut typed, data, true),
                "{data}"
            );
        }
        hits
    }

    /// Every recorded stream, in order: the frame reads the same as the typed parse, and
    /// it reads most text chunks of the streams whose chunks share their frame.
    #[test]
    fn recorded_streams_read_the_same_through_the_frame() {
        let (mut chunks, mut hits) = (0, 0);
        for stream in recorded_streams() {
            let data: Vec<&str> = stream.iter().map(String::as_str).collect();
            chunks += data.len();
            hits += same_in_order(&data);
        }
        // 542 of 2 822 when written: most text chunks of most providers (the tool-call
        // pieces, reasoning and the streams that vary a field per chunk are read in full).
        assert!(chunks > 2_000 && hits > 500, "{hits} of {chunks} chunks");
    }

    /// A known frame around texts it must not take (a quote, a backslash, a control
    /// character, what closes the string early), around the empty text, and chunks that
    /// share only its start or its end: the same as the typed parse, in order.
    #[test]
    fn the_frame_takes_only_a_plain_text() {
        let frame = |text: &str| {
            format!(
                r#"{{"id":"c","choices":[{{"index":0,"delta":{{"content":"{text}"}},"finish_reason":null}}],"model":"m"}}"#
            )
        };
        let plain = frame("abcd");
        let mut cases = vec![plain.clone(), plain.clone()];
        for text in [
            "",
            "é漢🦀",
            r#"a"b"#,
            r#"a\"b"#,
            r#"a\nb"#,
            r#"a\"#,
            "a\u{1}b",
            "a\tb",
            r#"a"}}],"model":"m"}"#,
            r#"x","reasoning_content":"r"#,
            r#"x","tool_calls":[{"index":0,"function":{"name":"bash"}}],"x":"#,
            r#"a"},"finish_reason":"stop","x":{"y":""#,
        ] {
            cases.push(frame(text));
            cases.push(plain.clone());
        }
        cases.push(plain.replace(r#""model":"m"}"#, r#""model":"n"}"#));
        cases.push(plain.replace(r#"{"id":"c""#, r#"{"id":"d""#));
        cases.push(plain.replace(r#""finish_reason":null"#, r#""finish_reason":"stop""#));
        cases.push(plain.clone());
        let refs: Vec<&str> = cases.iter().map(String::as_str).collect();
        // The plain chunk after the first is read through the frame every time.
        let hits = same_in_order(&refs);
        assert!(hits >= 14, "{hits}");
    }

    /// The eight-at-a-time search finds what a byte-at-a-time one finds, at every start,
    /// in strings of every length with the special bytes, their neighbours (`!`, `#`,
    /// `[`, `]`, a space, 0x7f) and UTF-8 bytes at random places.
    #[test]
    fn the_special_byte_search_agrees_with_a_byte_at_a_time() {
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let pool = [
            b'"', b'\\', 0, 1, 0x1f, b' ', b'!', b'#', b'[', b']', 0x7f, 0x80, 0xc3, 0xa9, 0xff,
        ];
        for round in 0..20_000 {
            let len = (next() % 40) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|_| match next() % 4 {
                    0 => pool[(next() % pool.len() as u64) as usize],
                    _ => b'a' + (next() % 26) as u8,
                })
                .collect();
            for start in 0..=len + 1 {
                let naive = bytes
                    .get(start..)
                    .and_then(|rest| rest.iter().position(|&c| SPECIAL[usize::from(c)]))
                    .map(|p| start + p);
                assert_eq!(
                    special_from(&bytes, start),
                    naive,
                    "round {round}, {bytes:?} from {start}"
                );
            }
        }
    }

    /// Variants of the common chunk, each read the same way both ways: shapes this
    /// reader takes, and shapes it must leave to the typed parse (some of them errors).
    #[test]
    fn variants_read_the_same_both_ways() {
        let choice = |inner: &str| format!(r#"{{"id":"x","choices":[{inner}],"created":1}}"#);
        let delta = |inner: &str| {
            choice(&format!(
                r#"{{"index":0,"delta":{inner},"finish_reason":null}}"#
            ))
        };
        let mut cases: Vec<String> = vec![
            // White space, order, nulls.
            " {\n \"choices\" : [ { \"delta\" : { \"content\" : \"a\" } , \"index\" : 0 } ] } \n".into(),
            r#"{"choices":null}"#.into(),
            r#"{"choices":[]}"#.into(),
            r#"{}"#.into(),
            r#"{"choices":[{"index":null,"delta":{"content":"a"}}]}"#.into(),
            r#"{"choices":[{"index":1,"delta":{"content":"a"}}]}"#.into(),
            r#"{"choices":[{"index":0,"delta":null,"finish_reason":"length"}]}"#.into(),
            r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"whole"}}]}"#.into(),
            r#"{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}"#.into(),
            r#"{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}"#.into(),
            r#"{"choices":[{"delta":{"content":"a"}}],"choices":[{"delta":{"content":"b"}}]}"#.into(),
            r#"{"choices":[{"delta":{"content":"a"},"delta":{"content":"b"}}]}"#.into(),
            r#"{"choices":[{"index":0,"index":0,"delta":{"content":"a"}}]}"#.into(),
            r#"{"choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"prompt_tokens":3,"completion_tokens":1}}"#.into(),
            r#"{"choices":[],"error":{"message":"overloaded"}}"#.into(),
            r#"{"choices":[],"error":null,"usage":null,"timings":null}"#.into(),
            r#"{"choices":[],"timings":{"cache_n":12}}"#.into(),
            r#"{"choices":[{"index":0,"finish_reason":"st\u006fp"}]}"#.into(),
            r#"{"choi\u0063es":[{"delta":{"content":"a"}}]}"#.into(),
            r#"{"model":"a\"b","choices":[{"delta":{"content":"a"}}]}"#.into(),
            // Not a chunk, not JSON, cut short, trailing bytes.
            r#"[]"#.into(),
            r#""text""#.into(),
            r#"{"choices":[{"delta":{"content":"a"}}]} x"#.into(),
            r#"{"choices":[{"delta":{"content":"a"}}]}}"#.into(),
            "{\"choices\":[{\"delta\":{\"content\":\"a\u{1}b\"}}]}".into(),
        ];
        for content in [
            r#""""#,
            r#"null"#,
            r#""\u00e9\ud83e\udd80""#,
            r#""\ud800""#,
            r#""\x""#,
            r#"["a"]"#,
            r#"[{"type":"text","text":"a"}]"#,
            r#"7"#,
            r#""tab\there""#,
            r#""ünïcödé 漢字""#,
        ] {
            cases.push(delta(&format!(r#"{{"content":{content}}}"#)));
        }
        for field in [
            "reasoning_content",
            "reasoning",
            "reasoning_details",
            "refusal",
            "tool_calls",
        ] {
            cases.push(delta(&format!(r#"{{"content":"a","{field}":null}}"#)));
            cases.push(delta(&format!(r#"{{"content":"a","{field}":"r"}}"#)));
        }
        cases.push(delta(
            r#"{"tool_calls":[{"index":0,"id":"c1","function":{"name":"bash","arguments":"{}"}}]}"#,
        ));
        for value in [
            "0",
            "-0",
            "12",
            "-3.5e+7",
            "1E9",
            "01",
            "1.",
            "-",
            "1e",
            ".5",
            "+1",
            "true",
            "false",
            "nul",
            "tru",
            "[]",
            "[1,[2,{\"a\":null}]]",
            "[1,]",
            "{\"a\":1,}",
            "{}",
            "\"s\"",
            "[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]",
        ] {
            cases.push(choice(&format!(
                r#"{{"index":0,"delta":{{"content":"a"}},"logprobs":{value}}}"#
            )));
            cases.push(format!(
                r#"{{"created":{value},"choices":[{{"delta":{{"content":"a"}}}}]}}"#
            ));
        }
        // Deeper than serde_json's recursion limit (an error there, so not read here).
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        cases.push(format!(
            r#"{{"x":{deep},"choices":[{{"delta":{{"content":"a"}}}}]}}"#
        ));
        // A hostile depth: no stack runs out (the reader stops at MAX_DEPTH).
        let hostile = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(read(&format!(r#"{{"x":{hostile},"choices":[]}}"#)), None);
        // Every prefix of the common chunk (a chunk cut anywhere is not JSON).
        for end in 0..COMMON.len() {
            if COMMON.is_char_boundary(end) {
                cases.push(COMMON[..end].to_string());
            }
        }
        for case in &cases {
            same_both_ways(case);
        }
    }

    /// The reader itself takes white space between tokens, every number and literal JSON
    /// writes, and a skipped value nested to MAX_DEPTH (arrays or objects), and stops one
    /// deeper: a hostile depth of objects runs no stack out either.
    #[test]
    fn the_reader_takes_white_space_every_scalar_and_nesting_to_its_depth() {
        let skipped =
            |value: &str| format!(r#"{{"x":{value},"choices":[{{"delta":{{"content":"a"}}}}]}}"#);
        let taken = |data: &str| read(data).and_then(|c| c.content).is_some();
        assert!(taken(
            " {\n \"choices\" : [ { \"delta\" : { \"content\" : \"a\" } , \"index\" : 0 } ] } \n"
        ));
        for scalar in [
            "0", "-0", "7", "-12", "0.5", "-3.25e+7", "1E9", "2e-3", "6.02E23", "true", "false",
            "null",
        ] {
            assert!(taken(&skipped(scalar)), "{scalar}");
            assert!(taken(&skipped(&format!("[{scalar},{scalar}]"))), "{scalar}");
        }
        let arrays = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        let objects = |n: usize| format!("{}1{}", r#"{"a":"#.repeat(n), "}".repeat(n));
        assert!(taken(&skipped(&arrays(MAX_DEPTH))));
        assert!(taken(&skipped(&objects(MAX_DEPTH))));
        for deeper in [
            arrays(MAX_DEPTH + 1),
            objects(MAX_DEPTH + 1),
            objects(100_000),
        ] {
            assert_eq!(read(&skipped(&deeper)), None);
        }
    }
}
