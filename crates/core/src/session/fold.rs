//! Long tool results as a screen keeps them: their first lines, and where the rest is.
//!
//! A result is shown folded to a few lines until the user expands it, and the session
//! file already holds all of it, so a front end need not: [`load_with`](super::load_with)
//! with [`Shown::Heads`] keeps only a long result's head in the transcript (with
//! [`Folded`]: how many lines follow and where its entry starts), and [`read_result`]
//! reads the whole result back from that entry when it is expanded. [`result_head`] is the
//! one cut, for results loaded from a file and for those that arrive live.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use super::entry::{Entry, Record};
use crate::conversation::Message;

/// Results up to this size are kept whole: reading them back would save nothing.
pub const FOLD_MIN_BYTES: usize = 1024;

/// A head line is cut here (a folded line shows one screen row of it).
pub const HEAD_LINE_BYTES: usize = 1024;

/// The longest session line [`read_result`] reads (a result is capped far below this).
const MAX_LINE_BYTES: u64 = 256 << 20;

/// What the transcript of a loaded session keeps of a long tool result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// All of it (an export).
    Whole,
    /// The first `n` lines of a result longer than [`FOLD_MIN_BYTES`] (what a screen
    /// shows folded); the rest stays in the file.
    Heads(usize),
}

/// A transcript tool result cut to its head: how many lines follow the head, and where
/// the result's entry starts in the session file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Folded {
    pub more_lines: usize,
    pub offset: u64,
}

/// Where an entry's line starts: its session file and the byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryAt {
    pub path: Arc<Path>,
    pub offset: u64,
}

/// `text` cut to its first `lines` lines (each at most [`HEAD_LINE_BYTES`]), trailing
/// blank space first trimmed as a folded view trims it, and how many lines follow;
/// `None` when the text is short enough to keep whole or the head would be all of it.
pub fn result_head(text: &str, lines: usize) -> Option<(String, usize)> {
    if text.len() <= FOLD_MIN_BYTES {
        return None;
    }
    let trimmed = text.trim_end_matches(['\n', '\r', ' ', '\t']);
    let mut all = trimmed.split('\n');
    let mut head = String::new();
    let mut cut = false;
    for (i, line) in all.by_ref().take(lines).enumerate() {
        if i > 0 {
            head.push('\n');
        }
        let end = floor_char_boundary(line, HEAD_LINE_BYTES);
        cut |= end < line.len();
        head.push_str(&line[..end]);
    }
    let more = all.count();
    (cut || more > 0).then_some((head, more))
}

/// The largest char boundary of `s` at or below `at`.
fn floor_char_boundary(s: &str, at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    (0..=at).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0)
}

/// The whole text of the result of call `id` whose entry starts at byte `offset` of the
/// session file `path`; an error in words when the file cannot be read there or holds
/// something else at that place (it was replaced or cut).
pub fn read_result(path: &Path, offset: u64, id: &str) -> Result<String, String> {
    let fail = |why: String| {
        format!(
            "cannot read the rest of this result from {}: {why}",
            path.display()
        )
    };
    let line = read_line_at(path, offset).map_err(|e| fail(e.to_string()))?;
    let record: Record = serde_json::from_slice(&line)
        .map_err(|_| fail(format!("no session entry starts at byte {offset}")))?;
    match record.entry {
        Entry::Message {
            message:
                Message::Tool {
                    tool_call_id,
                    content,
                    ..
                },
        } if tool_call_id == id => Ok(content),
        _ => Err(fail(format!(
            "the entry at byte {offset} is not this call's result"
        ))),
    }
}

fn read_line_at(path: &Path, offset: u64) -> io::Result<Vec<u8>> {
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(offset))?;
    let mut line = Vec::new();
    BufReader::new(file.take(MAX_LINE_BYTES)).read_until(b'\n', &mut line)?;
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_results_stay_whole_and_long_ones_keep_their_first_lines() {
        assert_eq!(result_head("a\nb\nc\nd\ne", 3), None, "short: whole");
        let long: String = (0..300).map(|i| format!("line {i}\n")).collect();
        let (head, more) = result_head(&long, 3).unwrap();
        assert_eq!(head, "line 0\nline 1\nline 2");
        assert_eq!(more, 297, "the trailing newline is no line of its own");
        // One long line: its head is cut at a character boundary.
        let wide = "é".repeat(2000);
        let (head, more) = result_head(&wide, 3).unwrap();
        assert_eq!(more, 0);
        assert!(head.len() <= HEAD_LINE_BYTES && wide.starts_with(&head));
    }

    #[test]
    fn a_result_is_read_back_from_its_entry_and_a_wrong_place_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let user = "{\"ts\":\"t\",\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n";
        let tool = "{\"ts\":\"t\",\"type\":\"message\",\"message\":{\"role\":\"tool\",\
                    \"tool_call_id\":\"c1\",\"content\":\"all\\nof it\"}}\n";
        std::fs::write(&path, format!("{user}{tool}")).unwrap();
        let at = user.len() as u64;
        assert_eq!(read_result(&path, at, "c1").unwrap(), "all\nof it");
        let other = read_result(&path, at, "c2").unwrap_err();
        assert!(other.contains("not this call's result"), "{other}");
        let inside = read_result(&path, at + 3, "c1").unwrap_err();
        assert!(
            inside.contains("no session entry starts at byte"),
            "{inside}"
        );
        let gone = read_result(&dir.path().join("gone.jsonl"), 0, "c1").unwrap_err();
        assert!(
            gone.starts_with("cannot read the rest of this result from"),
            "{gone}"
        );
    }
}
