//! A running command's output on its way to a front end that shows it live
//! ([`super::ToolContext::live`]): what came since the last report, at most ten reports a
//! second, each at most [`LIVE_BYTES`] (the tail), as a person reads it elsewhere.

use std::time::{Duration, Instant};

/// At most this often a running command's new output is reported (`ToolContext::live`).
const LIVE_EVERY: Duration = Duration::from_millis(100);
/// The most one report holds: the tail, when more came since the last.
const LIVE_BYTES: usize = 16 * 1024;

/// A running command's output on its way to `ToolContext::live`: what came since the last
/// report, sent when [`LIVE_EVERY`] has passed (the first at once).
pub(crate) struct LiveFeed {
    live: super::Live,
    pending: Vec<u8>,
    last: Option<Instant>,
}

impl LiveFeed {
    pub(crate) fn new(live: super::Live) -> LiveFeed {
        LiveFeed {
            live,
            pending: Vec::new(),
            last: None,
        }
    }

    pub(crate) fn feed(&mut self, data: &[u8]) {
        self.pending.extend_from_slice(data);
        if self.pending.len() > 2 * LIVE_BYTES {
            let cut = self.pending.len() - LIVE_BYTES;
            self.pending.drain(..cut);
        }
        if self.last.is_none_or(|t| t.elapsed() >= LIVE_EVERY) {
            self.flush();
        }
    }

    fn flush(&mut self) {
        // An incomplete character at the end waits for the rest of it.
        let whole = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        if whole == 0 {
            return;
        }
        let text = shown_live(&String::from_utf8_lossy(&self.pending[..whole]));
        self.pending.drain(..whole);
        self.last = Some(Instant::now());
        if !text.is_empty() {
            (self.live.0)(text);
        }
    }
}

/// Output as a person reads it elsewhere: terminal escape sequences (colours, cursor
/// moves) left out, a carriage return a new line, other controls made visible.
fn shown_live(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                // CSI: ESC [ parameters, then one final byte in @..~; OSC (a title, a
                // link): ESC ] up to BEL or ESC \; any other escape drops its next
                // character.
                if chars.next_if_eq(&'[').is_some() {
                    for p in chars.by_ref() {
                        if ('@'..='~').contains(&p) {
                            break;
                        }
                    }
                } else if chars.next_if_eq(&']').is_some() {
                    while let Some(p) = chars.next() {
                        if p == '\u{7}' || (p == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                } else {
                    chars.next();
                }
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\r' => out.push('\n'),
            c => out.push(c),
        }
    }
    crate::text::sanitize::sanitize(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_left_out_and_a_carriage_return_is_a_new_line() {
        assert_eq!(
            shown_live("a\r\nb\rc\u{1b}]0;title\u{7}d\u{1b}]8;;u\u{1b}\\e\u{1}\u{1b}[1;31mf"),
            "a\nb\ncde^Af"
        );
    }

    #[test]
    fn a_report_waits_for_a_whole_character_and_keeps_the_tail_of_a_flood() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let mut feed = LiveFeed::new(super::super::Live({
            let seen = seen.clone();
            std::sync::Arc::new(move |t| seen.lock().unwrap().push(t))
        }));
        // "é" split across two reads: the first report waits for its second byte.
        feed.feed(&[b'a', 0xc3]);
        feed.flush();
        feed.feed(&[0xa9]);
        feed.flush();
        assert_eq!(seen.lock().unwrap().as_slice(), ["a", "é"]);
        // Far more than a report holds, before the next report is due: the tail is kept.
        feed.last = Some(Instant::now());
        feed.feed(&vec![b'x'; 5 * LIVE_BYTES]);
        feed.feed(b"end");
        feed.flush();
        let last = seen.lock().unwrap().last().cloned().unwrap();
        assert!(
            last.len() <= 2 * LIVE_BYTES && last.ends_with("end"),
            "{}",
            last.len()
        );
    }
}
