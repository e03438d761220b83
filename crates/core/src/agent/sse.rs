//! Server-sent events: the bytes of a `text/event-stream` body in, the `data` of each event
//! out.
//!
//! Linear in the input: each byte is looked at once when it arrives (a search for the next
//! line end over the new bytes only), a line is copied into a buffer only while it is
//! incomplete, and an event's data grows by appending. Lines end with `\n`, `\r\n` or a
//! lone `\r`, also when the `\r` ends one read and the `\n` starts the next. Lines are
//! decoded from bytes one at a time, so a character split across reads joins up and an
//! invalid byte becomes U+FFFD. `data:` with or without one space after the colon adds a
//! line to the event's data (several are joined by `\n`); `event:`, `id:`, `retry:`, other
//! fields and `:` comments are ignored; a blank line dispatches the event; a leading byte
//! order mark is skipped. At the end of the body an event without its blank line is
//! dropped, as the HTML specification says (and as the `eventsource-stream` crate rein
//! used before did): a body that stops there was cut.
//!
//! One event (its data plus the line being read) may hold at most `max_event` bytes; past
//! that [`SseParser::feed`] fails with [`TooLarge`], so an endless line costs bounded
//! memory and time instead of a core forever.

use std::collections::VecDeque;

/// The most bytes one event may hold by default: 16 MiB, far above any chat-completions
/// chunk (a whole file's content in one tool-call argument is a few MB at most).
pub const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// An event (or a line) grew past the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("one event from the server exceeded {}", size(*.limit))]
pub struct TooLarge {
    pub limit: usize,
}

/// An incremental SSE parser; feed it bytes as they arrive, take events as they complete.
#[derive(Debug)]
pub struct SseParser {
    /// The current line, while it is incomplete.
    line: Vec<u8>,
    /// The current event's data, each `data` line followed by `\n`.
    data: String,
    /// The last byte seen was a `\r`: a `\n` right after it ends nothing more.
    after_cr: bool,
    /// No line has ended yet (a byte order mark may open the stream).
    first_line: bool,
    ready: VecDeque<String>,
    max_event: usize,
}

impl Default for SseParser {
    fn default() -> Self {
        SseParser::new(MAX_EVENT_BYTES)
    }
}

impl SseParser {
    /// A parser whose events may hold at most `max_event` bytes.
    pub fn new(max_event: usize) -> Self {
        SseParser {
            line: Vec::new(),
            data: String::new(),
            after_cr: false,
            first_line: true,
            ready: VecDeque::new(),
            max_event,
        }
    }

    /// Parse `bytes`; the events they complete wait for [`next_event`](Self::next_event).
    pub fn feed(&mut self, bytes: &[u8]) -> Result<(), TooLarge> {
        let mut rest = bytes;
        while !rest.is_empty() {
            if std::mem::take(&mut self.after_cr) && rest[0] == b'\n' {
                rest = &rest[1..];
                continue;
            }
            let Some(end) = memchr::memchr2(b'\n', b'\r', rest) else {
                self.check(rest.len())?;
                self.line.extend_from_slice(rest);
                break;
            };
            self.check(end)?;
            self.after_cr = rest[end] == b'\r';
            if self.line.is_empty() {
                self.end_line(&rest[..end]);
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(&rest[..end]);
                self.end_line(&line);
                line.clear();
                self.line = line;
            }
            rest = &rest[end + 1..];
        }
        Ok(())
    }

    /// The data of the next complete event, oldest first.
    pub fn next_event(&mut self) -> Option<String> {
        self.ready.pop_front()
    }

    /// Fails when `more` bytes on the current line would take the event past the limit.
    fn check(&self, more: usize) -> Result<(), TooLarge> {
        let size = self
            .data
            .len()
            .saturating_add(self.line.len())
            .saturating_add(more);
        if size > self.max_event {
            Err(TooLarge {
                limit: self.max_event,
            })
        } else {
            Ok(())
        }
    }

    fn end_line(&mut self, mut line: &[u8]) {
        if std::mem::take(&mut self.first_line) {
            line = line.strip_prefix("\u{FEFF}".as_bytes()).unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch();
            return;
        }
        let (name, value) = match memchr::memchr(b':', line) {
            // A comment.
            Some(0) => return,
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        if name == b"data" {
            // Room for the line and its `\n` at once: the buffer is new for each event.
            self.data.reserve(value.len() + 1);
            // The validator behind `from_utf8` reads ASCII a word at a time; the lossy one
            // (for the rare line that is not UTF-8) a byte at a time.
            match std::str::from_utf8(value) {
                Ok(text) => self.data.push_str(text),
                Err(_) => self.data.push_str(&String::from_utf8_lossy(value)),
            }
            self.data.push('\n');
        }
    }

    fn dispatch(&mut self) {
        if self.data.is_empty() {
            return;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop();
        self.ready.push_back(data);
    }
}

/// A byte count in words for messages: "16 MB", "512 KB", "100 bytes".
pub(crate) fn size(bytes: usize) -> String {
    const MB: usize = 1024 * 1024;
    if bytes >= MB && bytes.is_multiple_of(MB) {
        format!("{} MB", bytes / MB)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every event from `pieces` fed one after another.
    fn events(pieces: &[&[u8]]) -> Vec<String> {
        let mut p = SseParser::default();
        let mut out = Vec::new();
        for piece in pieces {
            p.feed(piece).unwrap();
            while let Some(e) = p.next_event() {
                out.push(e);
            }
        }
        out
    }

    #[test]
    fn line_endings_of_every_kind_also_split_across_reads() {
        assert_eq!(events(&[b"data: a\n\ndata: b\r\n\r\n"]), ["a", "b"]);
        assert_eq!(events(&[b"data: a\r\rdata: b\r\r"]), ["a", "b"]);
        // `\r` ends one read, `\n` starts the next: one line end, not two.
        assert_eq!(
            events(&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]),
            ["a\nb"]
        );
        assert_eq!(events(&[b"da", b"ta: x", b"y\n", b"\n"]), ["xy"]);
        // The `\n` alone in a read of one byte: still one line end, and the next `\n`
        // (another read) is the blank line that dispatches.
        assert_eq!(events(&[b"data: a\r", b"\n", b"\n"]), ["a"]);
        assert_eq!(
            events(&[b"data: a\r", b"\n", b"data: b\r", b"\n", b"\r", b"\n"]),
            ["a\nb"]
        );
        assert_eq!(events(&[b"data: a\r", b"\n", b"\r", b"\n", b"\n"]), ["a"]);
    }

    #[test]
    fn only_a_field_named_data_adds_data() {
        assert_eq!(
            events(&[b"datax: no\ndat: no\nDATA: no\nxdata: no\ndata: yes\n\n"]),
            ["yes"]
        );
        assert_eq!(events(&[b"datax: no\n\n"]), Vec::<String>::new());
        assert_eq!(events(&[b"datax\n\n"]), Vec::<String>::new());
        // The field name ends at the first colon: `data:x: y` is data `x: y`.
        assert_eq!(events(&[b"data:x: y\n\n"]), ["x: y"]);
    }

    #[test]
    fn fields_comments_and_data_lines() {
        assert_eq!(events(&[b"data:nospace\n\n"]), ["nospace"]);
        assert_eq!(events(&[b"data:  two spaces\n\n"]), [" two spaces"]);
        assert_eq!(events(&[b"data: one\ndata: two\n\n"]), ["one\ntwo"]);
        assert_eq!(
            events(&[b": ping\n\nevent: x\nid: 7\nretry: 100\ndata: d\nother: o\n\n"]),
            ["d"]
        );
        // Events without data are not dispatched; `data` alone is an empty line of data.
        assert_eq!(events(&[b"event: x\n\n\n\ndata\ndata: y\n\n"]), ["\ny"]);
        assert_eq!(events(&[b"\xEF\xBB\xBFdata: bom\n\n"]), ["bom"]);
        assert_eq!(events(&[b"data: {\"a\":1}"]), Vec::<String>::new());
        assert_eq!(events(&[b"data: a\n"]), Vec::<String>::new());
    }

    #[test]
    fn split_characters_join_and_invalid_bytes_are_replaced() {
        let euro = "€".as_bytes();
        assert_eq!(
            events(&[b"data: ", &euro[..1], &euro[1..2], &euro[2..], b"x\n\n"]),
            ["€x"]
        );
        assert_eq!(events(&[b"data: a\xFFb\n\n"]), ["a\u{FFFD}b"]);
    }

    #[test]
    fn an_event_or_a_line_over_the_limit_fails() {
        let mut p = SseParser::new(10);
        p.feed(b"data: 1234\n\n").unwrap();
        assert_eq!(p.next_event().as_deref(), Some("1234"));
        assert_eq!(p.feed(b"data: 12345"), Err(TooLarge { limit: 10 }));
        let mut p = SseParser::new(10);
        p.feed(b"data: 1\ndata: 2\n").unwrap();
        assert!(p.feed(b"data: 3\n").is_err());
        let mut p = SseParser::new(1024);
        let mut fed = 0;
        let err = loop {
            match p.feed(&[b'x'; 100]) {
                Ok(()) => fed += 100,
                Err(e) => break e,
            }
        };
        assert_eq!(fed, 1000);
        assert_eq!(err.to_string(), "one event from the server exceeded 1 KB");
    }

    /// The default limit is 16 MiB: a line of that many bytes is taken, one byte more is
    /// refused, and the message names the limit as the user reads it.
    #[test]
    fn the_default_limit_is_sixteen_mebibytes() {
        let mut p = SseParser::default();
        p.feed(b"data: ").unwrap();
        p.feed(&vec![b'x'; MAX_EVENT_BYTES - 6]).unwrap();
        let err = p.feed(b"x").unwrap_err();
        assert_eq!(err.limit, 16 * 1024 * 1024);
        assert_eq!(err.to_string(), "one event from the server exceeded 16 MB");
    }

    #[test]
    fn sizes_in_words() {
        assert_eq!(size(16 * 1024 * 1024), "16 MB");
        assert_eq!(size(3 * 1024 * 1024 + 1024), "3073 KB");
        assert_eq!(size(512 * 1024), "512 KB");
        assert_eq!(size(1024), "1 KB");
        assert_eq!(size(2049), "2049 bytes");
        assert_eq!(size(1536), "1536 bytes");
        assert_eq!(size(100), "100 bytes");
        assert_eq!(size(0), "0 bytes");
    }

    #[test]
    fn a_big_event_in_small_reads_is_whole() {
        let body = format!("data: {}\n\n", "ü".repeat(100_000));
        let pieces: Vec<&[u8]> = body.as_bytes().chunks(7).collect();
        let got = events(&pieces);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0], "ü".repeat(100_000));
    }
}
