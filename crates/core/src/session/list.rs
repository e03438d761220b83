//! Listing sessions without reading them.
//!
//! Beside every `<id>.jsonl` the writer keeps `<id>.summary.json`: id, title, project,
//! model, start time, message count, and the file length the count belongs to. [`list`]
//! reads only that (and the file's mtime). When the sidecar is missing or unreadable it
//! reads the session file's first line (the meta entry) and nothing more, and the message
//! count is unknown; when the file has grown since the sidecar was written (a crash before
//! the next rewrite), the count is approximate. Every read goes through one counter, so
//! tests can check how little is read ([`list_with_stats`]).

use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::entry::{Entry, Record};
use super::lock::{holder, Holder};
use super::{session_path, sessions_dir, summary_path};

/// Longest sidecar or meta line read; anything bigger is not what rein wrote.
const MAX_READ: u64 = 64 * 1024;
/// Read buffer for the meta line: one small read covers it.
const META_BUFFER: usize = 1024;

/// The summary sidecar's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Sidecar {
    pub id: String,
    #[serde(default)]
    pub title: Option<String>,
    pub project: PathBuf,
    pub model: String,
    pub started: String,
    pub messages: usize,
    /// The session file's length when `messages` was counted.
    pub bytes: u64,
}

/// Replace the sidecar at `path` atomically (a new 0600 file renamed over it).
pub(crate) fn write_sidecar(path: &Path, sidecar: &Sidecar) -> io::Result<()> {
    let json = serde_json::to_vec(sidecar).map_err(io::Error::other)?;
    crate::host::private_fs::replace(path, &json).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot write session summary {}: {e}", path.display()),
        )
    })
}

/// How many messages a listed session holds, as far as listing can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageCount {
    Exact(usize),
    /// The file changed after this count was taken (rein stopped before updating it): at
    /// least this many (shown `40+`).
    Approx(usize),
    /// Only the first line could be read.
    Unknown,
}

impl MessageCount {
    pub fn value(self) -> Option<usize> {
        match self {
            MessageCount::Exact(n) | MessageCount::Approx(n) => Some(n),
            MessageCount::Unknown => None,
        }
    }
}

impl fmt::Display for MessageCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MessageCount::Exact(n) => write!(f, "{n}"),
            MessageCount::Approx(n) => write!(f, "{n}+"),
            MessageCount::Unknown => f.write_str("?"),
        }
    }
}

/// One line of a session list.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSummary {
    pub id: String,
    pub path: PathBuf,
    pub title: Option<String>,
    pub project: PathBuf,
    pub model: String,
    /// RFC 3339, UTC.
    pub started: String,
    /// The session file's modification time.
    pub updated: SystemTime,
    pub messages: MessageCount,
    /// The rein that has it open right now, if one does.
    pub open: Option<Holder>,
}

/// What listing read, for tests and benchmarks.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ListStats {
    pub files_opened: usize,
    pub bytes_read: u64,
}

/// Every session under `data_dir`, most recently updated first. A missing folder is an
/// empty list; a session whose summary and first line are both unreadable is left out.
pub fn list(data_dir: &Path) -> Vec<SessionSummary> {
    list_with_stats(data_dir).0
}

/// [`list`], and how much it read.
pub fn list_with_stats(data_dir: &Path) -> (Vec<SessionSummary>, ListStats) {
    let counter = Counter::default();
    let mut sessions = Vec::new();
    if let Ok(entries) = fs::read_dir(sessions_dir(data_dir)) {
        let mut files = Vec::new();
        // A session with no pid file beside it is open nowhere (a writer writes one when
        // it takes the lock and removes it when it lets go), so only those with one are
        // probed.
        let mut pid_files = HashSet::new();
        for entry in entries.flatten() {
            let path = entry.path();
            match path.extension().and_then(|e| e.to_str()) {
                Some("jsonl") => files.push(path),
                Some("lock") => {
                    pid_files.insert(path.with_extension("jsonl"));
                }
                _ => {}
            }
        }
        for path in files {
            let Ok(meta) = fs::metadata(&path) else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            let updated = meta.modified().unwrap_or(UNIX_EPOCH);
            let summary = from_sidecar(&path, meta.len(), updated, &counter)
                .or_else(|| from_meta_line(&path, updated, &counter));
            sessions.extend(summary.map(|mut s| {
                if pid_files.contains(&path) {
                    s.open = holder(&path);
                }
                s
            }));
        }
    }
    sessions.sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| b.id.cmp(&a.id)));
    let stats = ListStats {
        files_opened: counter.files.get(),
        bytes_read: counter.bytes.get(),
    };
    (sessions, stats)
}

/// The most recently updated session of `project` (`rein --continue`).
pub fn latest_for_project(data_dir: &Path, project: &Path) -> Option<SessionSummary> {
    let canonical = fs::canonicalize(project).ok();
    list(data_dir)
        .into_iter()
        .find(|s| s.project == project || Some(&s.project) == canonical.as_ref())
}

/// The file of session `id`, or of the one session whose id starts with `id`.
pub fn find(data_dir: &Path, id: &str) -> io::Result<PathBuf> {
    let dir = sessions_dir(data_dir);
    if id.is_empty() || id.contains(['/', '\\']) || id.starts_with('.') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("\"{id}\" is not a session id; `rein sessions` lists them"),
        ));
    }
    let exact = session_path(data_dir, id);
    if exact.is_file() {
        return Ok(exact);
    }
    let mut matches: Vec<String> = fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let stem = name.strip_suffix(".jsonl")?;
            stem.starts_with(id).then(|| stem.to_string())
        })
        .collect();
    matches.sort();
    match matches.len() {
        0 => Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "no session \"{id}\" in {}; `rein sessions` lists them",
                dir.display()
            ),
        )),
        1 => Ok(session_path(data_dir, &matches[0])),
        n => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "\"{id}\" matches {n} sessions ({}); give more of the id",
                matches.join(", ")
            ),
        )),
    }
}

fn from_sidecar(
    session: &Path,
    len: u64,
    updated: SystemTime,
    counter: &Counter,
) -> Option<SessionSummary> {
    let s = read_sidecar(session, counter)?;
    if Some(s.id.as_str()) != session.file_stem().and_then(|s| s.to_str()) {
        return None;
    }
    Some(SessionSummary {
        messages: if s.bytes == len {
            MessageCount::Exact(s.messages)
        } else {
            MessageCount::Approx(s.messages)
        },
        id: s.id,
        path: session.to_path_buf(),
        title: s.title,
        project: s.project,
        model: s.model,
        started: s.started,
        updated,
        open: None,
    })
}

fn from_meta_line(
    session: &Path,
    updated: SystemTime,
    counter: &Counter,
) -> Option<SessionSummary> {
    let file = counter.open(session).ok()?;
    let mut reader = BufReader::with_capacity(META_BUFFER, file.take(MAX_READ));
    let mut line = Vec::new();
    reader.read_until(b'\n', &mut line).ok()?;
    let Record {
        entry: Entry::Meta(meta),
        ..
    } = serde_json::from_slice(&line).ok()?
    else {
        return None;
    };
    Some(SessionSummary {
        id: meta.id,
        path: session.to_path_buf(),
        title: None,
        project: meta.project,
        model: meta.model,
        started: meta.started,
        updated,
        messages: MessageCount::Unknown,
        open: None,
    })
}

/// The most of a session file [`exact_count`] reads.
pub const MAX_COUNT_READ: u64 = 32 << 20;

/// What a line of a message entry starts with, after its time stamp: rein writes every
/// record as `{"ts":"…","type":"…",…}`.
const MESSAGE_TAG: &[u8] = br#""type":"message""#;

/// The count of a listed session made exact, for the session picker, which shows few: the
/// sidecar's count plus the message entries written after it (only that tail of the file
/// is read; the whole file when there is no sidecar or the file is shorter than it says).
/// A count already exact, or a tail longer than `MAX_COUNT_READ` (32 MiB) or unreadable,
/// is left as it is.
pub fn exact_count(summary: &SessionSummary) -> MessageCount {
    let counter = Counter::default();
    let (base, from) = match summary.messages {
        MessageCount::Exact(_) => return summary.messages,
        MessageCount::Approx(_) => {
            let sidecar = read_sidecar(&summary.path, &counter);
            let len = fs::metadata(&summary.path).map(|m| m.len()).unwrap_or(0);
            match sidecar {
                Some(s) if s.bytes <= len => (s.messages, s.bytes),
                _ => (0, 0),
            }
        }
        MessageCount::Unknown => (0, 0),
    };
    match count_messages_from(&summary.path, from, &counter) {
        Some(n) => MessageCount::Exact(base + n),
        None => summary.messages,
    }
}

fn read_sidecar(session: &Path, counter: &Counter) -> Option<Sidecar> {
    let mut bytes = Vec::new();
    counter
        .open(&summary_path(session))
        .ok()?
        .take(MAX_READ)
        .read_to_end(&mut bytes)
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The message entries among the whole lines of `session` from byte `from` (a line's
/// start); `None` past [`MAX_COUNT_READ`] or when it cannot be read. Only each line's
/// first bytes are looked at, so a long line costs its reading alone.
fn count_messages_from(session: &Path, from: u64, counter: &Counter) -> Option<usize> {
    use std::io::Seek;
    let mut file = counter.open(session).ok()?;
    file.file.seek(io::SeekFrom::Start(from)).ok()?;
    let mut reader = file.take(MAX_COUNT_READ + 1);
    let mut buf = vec![0u8; 64 << 10];
    let mut head: Vec<u8> = Vec::with_capacity(64);
    let (mut count, mut read) = (0usize, 0u64);
    loop {
        let n = reader.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        read += n as u64;
        if read > MAX_COUNT_READ {
            return None;
        }
        for &byte in &buf[..n] {
            if byte == b'\n' {
                if head.windows(MESSAGE_TAG.len()).any(|w| w == MESSAGE_TAG) {
                    count += 1;
                }
                head.clear();
            } else if head.len() < 64 {
                head.push(byte);
            }
        }
    }
    // A last line without its end is no whole entry.
    Some(count)
}

/// Counts the files listing opens and the bytes it reads from them.
#[derive(Default)]
struct Counter {
    files: Cell<usize>,
    bytes: Cell<u64>,
}

impl Counter {
    fn open(&self, path: &Path) -> io::Result<Counted<'_>> {
        let file = File::open(path)?;
        self.files.set(self.files.get() + 1);
        Ok(Counted {
            file,
            bytes: &self.bytes,
        })
    }
}

struct Counted<'a> {
    file: File,
    bytes: &'a Cell<u64>,
}

impl Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(buf)?;
        self.bytes.set(self.bytes.get() + n as u64);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A count the sidecar no longer covers is made exact from the tail written after it,
    /// reading only that; a file without a sidecar is counted whole; a torn last line is
    /// no message.
    #[test]
    fn an_approximate_or_unknown_count_is_made_exact_from_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("s1.jsonl");
        let line = |kind: &str| {
            format!("{{\"ts\":\"2026-01-01T00:00:00Z\",\"type\":\"{kind}\",\"x\":1}}\n")
        };
        let head = format!("{}{}{}", line("meta"), line("message"), line("title"));
        // A tool result whose text says "type":"message" well past its start.
        let long = format!(
            "{{\"ts\":\"t\",\"type\":\"todos\",\"todos\":\"{}\\\"type\\\":\\\"message\\\"\"}}\n",
            "x".repeat(200)
        );
        let tail = [line("message"), line("rule"), line("message"), long].concat();
        fs::write(
            &session,
            format!("{head}{tail}{{\"ts\":\"t\",\"type\":\"message\""),
        )
        .unwrap();
        let sidecar = Sidecar {
            id: "s1".into(),
            title: Some("t".into()),
            project: "/p".into(),
            model: "m".into(),
            started: "t".into(),
            messages: 1,
            bytes: head.len() as u64,
        };
        write_sidecar(&summary_path(&session), &sidecar).unwrap();
        let mut summary = SessionSummary {
            id: "s1".into(),
            path: session.clone(),
            title: None,
            project: "/p".into(),
            model: "m".into(),
            started: "t".into(),
            updated: SystemTime::now(),
            messages: MessageCount::Approx(1),
            open: None,
        };
        assert_eq!(exact_count(&summary), MessageCount::Exact(3));
        summary.messages = MessageCount::Unknown;
        assert_eq!(exact_count(&summary), MessageCount::Exact(3));
        summary.messages = MessageCount::Exact(7);
        assert_eq!(exact_count(&summary), MessageCount::Exact(7));
        // The sidecar says more than the file holds (it was cut): the whole file counts.
        let mut longer = sidecar;
        longer.bytes = 1 << 20;
        longer.messages = 40;
        write_sidecar(&summary_path(&session), &longer).unwrap();
        summary.messages = MessageCount::Approx(40);
        assert_eq!(exact_count(&summary), MessageCount::Exact(3));
    }

    #[test]
    fn counts_print_how_sure_they_are() {
        assert_eq!(MessageCount::Exact(3).to_string(), "3");
        assert_eq!(MessageCount::Approx(3).to_string(), "3+");
        assert_eq!(MessageCount::Unknown.to_string(), "?");
        assert_eq!(MessageCount::Unknown.value(), None);
    }

    #[test]
    fn a_sidecar_for_another_id_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("a.jsonl");
        fs::write(&session, "").unwrap();
        let sidecar = Sidecar {
            id: "b".into(),
            title: None,
            project: "/p".into(),
            model: "m".into(),
            started: "t".into(),
            messages: 1,
            bytes: 0,
        };
        write_sidecar(&summary_path(&session), &sidecar).unwrap();
        let counter = Counter::default();
        assert!(from_sidecar(&session, 0, UNIX_EPOCH, &counter).is_none());
        assert_eq!(counter.files.get(), 1);
    }
}
