//! Print mode's standard input, as `cat log | claude -p "why does this fail?"` uses it.
//!
//! In: the prompt as given (`-p PROMPT`, the positional one, `-` or none) and standard
//! input. Out: the prompt the run sends, or why there is none. When stdin is not a
//! terminal it is read: with a prompt, the piped text goes after it in a fenced block;
//! without one (or with `-`), the piped text is the prompt. What is read is held to
//! `context.attach_total_bytes` (what a message's `@` attachments may take together) while
//! it is read: beyond that only its head (40 %) and its tail (60 %, where a log's errors
//! are) are kept, cut at line ends where one is near, with a marker saying how much of
//! it was cut. Nothing waits on a terminal; a pipe nobody writes to (a parent that never
//! closes it) is given [`FIRST_BYTE_WAIT`] to say something when a prompt was given, and
//! the run goes on without it after that, saying so.

use super::out::errln;
use std::collections::VecDeque;
use std::io::{self, IsTerminal, Read};
use std::sync::mpsc;
use std::time::Duration;

/// How long a prompt waits for a pipe's first byte (or its end) before going on without it.
pub(super) const FIRST_BYTE_WAIT: Duration = Duration::from_secs(3);

/// The share of the kept bytes that comes from the head, in percent (as
/// `rein_core::context::spill` keeps a long tool result).
const HEAD_PERCENT: usize = 40;

/// What was read from a pipe: its text (cut in the middle when it was over the cap), its
/// size, and how much of it was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Piped {
    pub(super) text: String,
    pub(super) total_bytes: u64,
    pub(super) cut_bytes: u64,
}

/// The prompt print mode runs, and the piped text to add after it (once a custom
/// command in the prompt is expanded, see [`with_piped`]): `prompt` as given (`""` when
/// none was, `-` to read it from stdin) and stdin, as the module doc says. Notices go to
/// stderr.
pub(super) fn prompt_and_stdin(
    prompt: String,
    cap: usize,
) -> Result<(String, Option<String>), String> {
    let terminal = io::stdin().is_terminal();
    let read = |wait| read_stdin(cap, wait).map_err(|e| format!("cannot read standard input: {e}"));
    if prompt == "-" || (prompt.trim().is_empty() && !terminal) {
        // Stdin is the prompt: waited for as long as it takes (`-p -` reads a terminal too).
        let piped = read(None)?.unwrap_or_else(Piped::empty);
        say_cut(&piped, cap);
        return Ok((piped.text, None));
    }
    if terminal || prompt.trim().is_empty() {
        return Ok((prompt, None));
    }
    let piped = match read(Some(FIRST_BYTE_WAIT)) {
        Ok(piped) => piped,
        // The prompt is there: an unreadable stdin (a closed descriptor) is only said.
        Err(e) => {
            errln!("rein: warning: {e}; going on without it");
            return Ok((prompt, None));
        }
    };
    match piped {
        None => {
            errln!(
                "rein: warning: standard input is a pipe that said nothing for {} s; going on without it (give </dev/null to skip the wait)",
                FIRST_BYTE_WAIT.as_secs()
            );
            Ok((prompt, None))
        }
        Some(piped) if piped.text.trim().is_empty() => Ok((prompt, None)),
        Some(piped) => {
            say_cut(&piped, cap);
            errln!(
                "rein: added {} bytes of standard input to the prompt",
                piped.total_bytes - piped.cut_bytes
            );
            Ok((prompt, Some(piped.text)))
        }
    }
}

impl Piped {
    fn empty() -> Piped {
        Piped {
            text: String::new(),
            total_bytes: 0,
            cut_bytes: 0,
        }
    }
}

/// Say on stderr that piped input was cut, when it was.
fn say_cut(piped: &Piped, cap: usize) {
    if piped.cut_bytes > 0 {
        errln!(
            "rein: warning: standard input was {} bytes: kept its head and tail, {} bytes in all (context.attach_total_bytes = {cap})",
            piped.total_bytes,
            piped.total_bytes - piped.cut_bytes
        );
    }
}

/// The prompt, then the piped text in a fence longer than any run of backticks in it.
pub(super) fn with_piped(prompt: &str, piped: &str) -> String {
    let longest = piped.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let body = piped.strip_suffix('\n').unwrap_or(piped);
    format!(
        "{}\n\nStandard input (piped to rein):\n{fence}\n{body}\n{fence}",
        prompt.trim_end()
    )
}

/// Read stdin on a thread of its own; with `wait`, give up (`None`) when neither a byte nor
/// its end came within it. The thread is left blocked on such a pipe: the process exits
/// around it.
fn read_stdin(cap: usize, wait: Option<Duration>) -> io::Result<Option<Piped>> {
    let (first_tx, first_rx) = mpsc::channel::<()>();
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("rein-stdin".into())
        .spawn(move || {
            let reader = FirstRead {
                inner: io::stdin().lock(),
                first: Some(first_tx),
            };
            let _ = done_tx.send(read_capped(reader, cap));
        })?;
    if let Some(wait) = wait {
        match first_rx.recv_timeout(wait) {
            // Disconnected: the thread ended (its result is waiting).
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => return Ok(None),
        }
    }
    match done_rx.recv() {
        Ok(result) => result.map(Some),
        Err(_) => Err(io::Error::other("the reading thread stopped")),
    }
}

/// A reader that says when its first read returned (a byte, the end or an error).
struct FirstRead<R> {
    inner: R,
    first: Option<mpsc::Sender<()>>,
}

impl<R: Read> Read for FirstRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let result = self.inner.read(buf);
        if let Some(first) = self.first.take() {
            let _ = first.send(());
        }
        result
    }
}

/// Read `reader` to its end keeping at most `cap` bytes: all of it when it fits, else its
/// head and tail around a marker that says how much was cut. Invalid UTF-8 is replaced.
pub(super) fn read_capped(mut reader: impl Read, cap: usize) -> io::Result<Piped> {
    let head_max = cap * HEAD_PERCENT / 100;
    let tail_max = cap - head_max;
    let mut head = Vec::new();
    let mut tail: VecDeque<u8> = VecDeque::new();
    let mut total: u64 = 0;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        total = total.saturating_add(n as u64);
        let mut chunk = &buf[..n];
        if head.len() < head_max {
            let take = (head_max - head.len()).min(chunk.len());
            head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        tail.extend(chunk);
        if tail.len() > tail_max {
            tail.drain(..tail.len() - tail_max);
        }
    }
    let tail: Vec<u8> = tail.into();
    let kept = (head.len() + tail.len()) as u64;
    if total <= kept {
        head.extend_from_slice(&tail);
        return Ok(Piped {
            text: String::from_utf8_lossy(&head).into_owned(),
            total_bytes: total,
            cut_bytes: 0,
        });
    }
    let head = line_head(&head);
    let tail = line_tail(&tail);
    let cut = total - (head.len() + tail.len()) as u64;
    let mut text = String::from_utf8_lossy(head).into_owned();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!(
        "[… {cut} of {total} bytes of standard input cut from the middle: rein keeps {cap} bytes of piped input (context.attach_total_bytes), its head and its tail.]\n"
    ));
    text.push_str(&String::from_utf8_lossy(tail));
    Ok(Piped {
        text,
        total_bytes: total,
        cut_bytes: cut,
    })
}

/// The head ending after a line end when one lies in its second half (else whole), and
/// never in the middle of a character.
fn line_head(head: &[u8]) -> &[u8] {
    let whole = without_split_end(head);
    match whole.iter().rposition(|&b| b == b'\n') {
        Some(nl) if nl + 1 >= whole.len() / 2 => &whole[..nl + 1],
        _ => whole,
    }
}

/// `bytes` without a UTF-8 character its end cuts short.
fn without_split_end(bytes: &[u8]) -> &[u8] {
    for back in 1..=bytes.len().min(4) {
        let byte = bytes[bytes.len() - back];
        if byte & 0b1100_0000 != 0b1000_0000 {
            let needs = match byte {
                0xF0.. => 4,
                0xE0.. => 3,
                0xC0.. => 2,
                _ => 1,
            };
            return if needs > back {
                &bytes[..bytes.len() - back]
            } else {
                bytes
            };
        }
    }
    bytes
}

/// The tail starting after a line end when one lies in its first half (else whole), and
/// never in the middle of a character.
fn line_tail(tail: &[u8]) -> &[u8] {
    let start = tail
        .iter()
        .take(4)
        .position(|&b| b & 0b1100_0000 != 0b1000_0000)
        .unwrap_or(0);
    let tail = &tail[start..];
    match tail.iter().position(|&b| b == b'\n') {
        Some(nl) if nl < tail.len() / 2 => &tail[nl + 1..],
        _ => tail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_within_the_cap_comes_whole() {
        let piped = read_capped("one\ntwo\n".as_bytes(), 100).unwrap();
        assert_eq!(piped.text, "one\ntwo\n");
        assert_eq!((piped.total_bytes, piped.cut_bytes), (8, 0));
        // Exactly the cap is not cut either.
        let exact = "x".repeat(100);
        assert_eq!(read_capped(exact.as_bytes(), 100).unwrap().text, exact);
    }

    #[test]
    fn input_over_the_cap_keeps_head_and_tail_at_line_ends_and_says_how_much_went() {
        let lines: String = (0..1000).map(|n| format!("line {n:04}\n")).collect();
        let piped = read_capped(lines.as_bytes(), 200).unwrap();
        assert_eq!(piped.total_bytes, 10_000);
        assert!(piped.text.starts_with("line 0000\n"), "{}", piped.text);
        assert!(piped.text.ends_with("line 0999\n"), "{}", piped.text);
        // Whole lines on both sides of the marker.
        let marker = piped
            .text
            .lines()
            .find(|l| l.starts_with("[… "))
            .expect("a marker");
        let kept = piped.text.len() - marker.len() - 1;
        assert_eq!(piped.cut_bytes, 10_000 - kept as u64);
        assert!((150..=200).contains(&kept), "kept {kept}");
        assert!(
            marker.contains(&format!("{} of 10000 bytes", piped.cut_bytes)),
            "{marker}"
        );
        assert!(piped.text.lines().all(|l| l == marker || l.len() == 9));
    }

    #[test]
    fn a_cut_never_splits_a_character() {
        let text = "é".repeat(500);
        // 101: the tail (61 bytes) starts inside a character; 103: the head (41) ends in one.
        for cap in [101, 103] {
            let piped = read_capped(text.as_bytes(), cap).unwrap();
            assert!(!piped.text.contains('\u{FFFD}'), "{cap}: {}", piped.text);
            assert!(piped.text.starts_with('é') && piped.text.ends_with('é'));
            assert!(piped.cut_bytes > 0);
        }
    }

    #[test]
    fn the_fence_outlasts_the_backticks_inside() {
        let prompt = with_piped("why? ", "a ```` b\n");
        assert_eq!(
            prompt,
            "why?\n\nStandard input (piped to rein):\n`````\na ```` b\n`````"
        );
        assert!(with_piped("q", "plain").contains("\n```\nplain\n```"));
    }
}
