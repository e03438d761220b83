//! Appending to a session file.
//!
//! Each entry becomes one line (the entry and its `\n`) on a file opened for appending,
//! written through a buffer: an entry up to 64 KiB in a single write, a longer one (a
//! long reply or result) streamed so it is never in memory twice. Once
//! [`SessionWriter::append`] returns the entry is in the operating system's hands: a crash
//! or `SIGKILL` of rein loses at most the entry being written, seen on load as a torn last
//! line. Surviving power loss takes
//! [`SessionWriter::sync`] as well. A failed write is rolled back to the last whole line when
//! the file allows it, and otherwise the next line starts on a fresh line, so one failure
//! never spoils the entries after it. Nothing here panics; every failure is returned.
//!
//! The writer never stores the system prompt: a system message is skipped, and a leading
//! one is taken off a compaction's history. The first user message names the session (an
//! automatic `title` entry) unless it already has a name. The summary sidecar that
//! [`super::list`] reads is rewritten when the title changes, every [`SUMMARY_EVERY`]
//! messages, and on [`SessionWriter::close`] or drop.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::entry::{Entry, Record, SessionMeta};
use super::fold::Shown;
use super::list::{write_sidecar, Sidecar};
use super::lock;
use super::reader::{load_with, LoadedSession};
use super::{session_path, sessions_dir, summary_path};
use crate::conversation::Message;
use crate::text::stamp::{new_session_id, now_rfc3339};

/// The summary sidecar is rewritten at least once every this many messages.
pub const SUMMARY_EVERY: usize = 16;
/// Longest automatic title, in characters.
const TITLE_CHARS: usize = 60;

/// Appends entries to one session file.
#[derive(Debug)]
pub struct SessionWriter {
    file: File,
    path: PathBuf,
    meta: SessionMeta,
    title: Option<String>,
    messages: usize,
    /// Messages written since the sidecar was last rewritten.
    unsummarised: usize,
    /// Entries written since the sidecar was last rewritten.
    summary_stale: bool,
    /// Length of the file up to its last whole line, as far as this writer knows.
    len: u64,
    /// A failed write may have left part of a line that could not be cut off.
    torn: bool,
    /// Let go as a killed process would: no last summary, the pid file left behind.
    abandoned: bool,
}

/// A record to write, borrowing its entry.
#[derive(Serialize)]
struct RecordOut<'a, E> {
    ts: &'a str,
    #[serde(flatten)]
    entry: &'a E,
}

/// A message entry, borrowing its message: the same line as [`Entry::Message`].
#[derive(Serialize)]
#[serde(tag = "type", rename = "message")]
struct MessageOut<'a> {
    message: &'a Message,
}

/// The buffer an entry is written through: an entry up to this size is one write.
const WRITE_BUFFER: usize = 64 << 10;

/// A writer that counts the bytes that reached it.
struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl SessionWriter {
    /// Start a new session file under `data_dir` and write its meta line. Should the id be
    /// taken already, a fresh one is drawn; [`SessionWriter::meta`] has the one used.
    pub fn create(data_dir: &Path, meta: SessionMeta) -> io::Result<SessionWriter> {
        let dir = sessions_dir(data_dir);
        crate::host::private_fs::own_dir(&dir).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot create the sessions folder {}: {e}", dir.display()),
            )
        })?;
        let mut meta = meta;
        let mut attempts = 0;
        let (file, path) = loop {
            let path = session_path(data_dir, &meta.id);
            match private_options().create_new(true).open(&path) {
                Ok(file) => break (file, path),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 8 => {
                    attempts += 1;
                    meta.id = new_session_id();
                }
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("cannot create session file {}: {e}", path.display()),
                    ))
                }
            }
        };
        lock::acquire(&file, &path)?;
        let mut writer = SessionWriter {
            file,
            path,
            meta: meta.clone(),
            title: None,
            messages: 0,
            unsummarised: 0,
            summary_stale: true,
            len: 0,
            torn: false,
            abandoned: false,
        };
        writer.write_entry(&Entry::Meta(meta))?;
        writer.write_summary()?;
        Ok(writer)
    }

    /// Continue an existing session file. Reads the whole file once (for the title and the
    /// message count); use [`SessionWriter::resume`] to get what was read as well.
    pub fn open_append(path: &Path) -> io::Result<SessionWriter> {
        Self::resume(path).map(|(writer, _)| writer)
    }

    /// Load a session and open it for appending: the usual way to resume. The file is
    /// locked before it is read, so nothing another writer appends can slip in between;
    /// when another writer has it, the error says who (see [`lock::in_use`]).
    pub fn resume(path: &Path) -> io::Result<(SessionWriter, LoadedSession)> {
        Self::resume_with(path, Shown::Whole)
    }

    /// [`SessionWriter::resume`], keeping of long tool results in the transcript what
    /// `shown` says.
    pub fn resume_with(path: &Path, shown: Shown) -> io::Result<(SessionWriter, LoadedSession)> {
        let file = Self::open_locked(path)?;
        let loaded = load_with(path, shown)?;
        let writer = Self::on_file(file, &loaded)?;
        Ok((writer, loaded))
    }

    /// Open the file of a session already loaded (locking it; [`SessionWriter::resume`]
    /// is the safer way, as it locks before reading). A torn last line is cut off first
    /// (or, if it is a whole entry short only of its `\n`, ended), so new lines start
    /// clean.
    pub fn append_to(loaded: &LoadedSession) -> io::Result<SessionWriter> {
        let file = Self::open_locked(&loaded.path)?;
        Self::on_file(file, loaded)
    }

    /// Continue session `path` in a new session under `data_dir`: a copy of every whole
    /// line it has so far under a new id (the meta names the original in `forked_from`),
    /// titled as the original with "(fork)" after it. The original is only read, so this
    /// works while another rein has it open.
    pub fn fork(data_dir: &Path, path: &Path) -> io::Result<(SessionWriter, LoadedSession)> {
        Self::fork_with(data_dir, path, Shown::Whole)
    }

    /// [`SessionWriter::fork`], keeping of long tool results in the transcript what
    /// `shown` says.
    pub fn fork_with(
        data_dir: &Path,
        path: &Path,
        shown: Shown,
    ) -> io::Result<(SessionWriter, LoadedSession)> {
        Self::fork_part(data_dir, path, u64::MAX, "fork", shown)
    }

    /// A new session holding the lines of session `path` that start before byte `offset`
    /// (a conversation taken back to before a turn: see
    /// [`crate::checkpoint::TurnInfo::offset`]), titled as the original with "(rewound)"
    /// after it. The original is only read.
    pub fn fork_before(
        data_dir: &Path,
        path: &Path,
        offset: u64,
        shown: Shown,
    ) -> io::Result<(SessionWriter, LoadedSession)> {
        Self::fork_part(data_dir, path, offset, "rewound", shown)
    }

    fn fork_part(
        data_dir: &Path,
        path: &Path,
        offset: u64,
        label: &str,
        shown: Shown,
    ) -> io::Result<(SessionWriter, LoadedSession)> {
        let original = load_with(path, Shown::Heads(0))?;
        let mut meta = SessionMeta::new(original.meta.project.clone(), original.meta.model.clone());
        meta.forked_from = Some(original.meta.id.clone());
        let mut writer = Self::create(data_dir, meta)?;
        let copied = copy_body(path, &mut writer.file, offset).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot write session file {}: {e}", writer.path.display()),
            )
        })?;
        writer.len += copied;
        let title = original
            .title
            .as_deref()
            .map_or_else(|| format!("({label})"), |t| format!("{t} ({label})"));
        writer.append(&Entry::Title { title, auto: true })?;
        let loaded = load_with(&writer.path, shown)?;
        writer.messages = loaded.message_count;
        Ok((writer, loaded))
    }

    fn open_locked(path: &Path) -> io::Result<File> {
        let context = |e: io::Error| {
            if lock::in_use(&e).is_some() {
                return e;
            }
            io::Error::new(
                e.kind(),
                format!("cannot append to session file {}: {e}", path.display()),
            )
        };
        let file = private_options().read(true).open(path).map_err(context)?;
        lock::acquire(&file, path).map_err(context)?;
        Ok(file)
    }

    fn on_file(mut file: File, loaded: &LoadedSession) -> io::Result<SessionWriter> {
        let path = loaded.path.clone();
        let len = end_cleanly(&mut file).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot append to session file {}: {e}", path.display()),
            )
        })?;
        Ok(SessionWriter {
            file,
            path,
            meta: loaded.meta.clone(),
            title: loaded.title.clone(),
            messages: loaded.message_count,
            unsummarised: 0,
            summary_stale: true,
            len,
            torn: false,
            abandoned: false,
        })
    }

    /// Write one entry. A system message is skipped (the system prompt is rebuilt on resume)
    /// and a meta entry is refused (only [`SessionWriter::create`] writes it).
    pub fn append(&mut self, entry: &Entry) -> io::Result<()> {
        match entry {
            Entry::Message { message } => return self.append_message(message).map(|_| ()),
            Entry::Meta(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the meta entry is written once, when the session is created",
                ))
            }
            Entry::Compaction { history, summary }
                if matches!(history.first(), Some(Message::System { .. })) =>
            {
                return self.write_entry(&Entry::Compaction {
                    history: history[1..].to_vec(),
                    summary: summary.and_then(|i| i.checked_sub(1)),
                })
            }
            _ => {}
        }
        self.write_entry(entry)?;
        if let Entry::Title { title, .. } = entry {
            self.title = Some(title.clone());
            self.refresh_summary();
        }
        Ok(())
    }

    /// Write a message entry (as [`SessionWriter::append`] does, without taking the
    /// message): where its line starts in the file, when known. A system message is
    /// skipped (`None`).
    pub fn append_message(&mut self, message: &Message) -> io::Result<Option<u64>> {
        if matches!(message, Message::System { .. }) {
            return Ok(None);
        }
        let at = self.write_record(&MessageOut { message }, "message")?;
        self.messages += 1;
        self.unsummarised += 1;
        if let (Message::User { content, .. }, None) = (message, &self.title) {
            let title = title_from_text(content);
            if !title.is_empty() {
                self.write_entry(&Entry::Title {
                    title: title.clone(),
                    auto: true,
                })?;
                self.title = Some(title);
                self.refresh_summary();
            }
        }
        if self.unsummarised >= SUMMARY_EVERY {
            self.refresh_summary();
        }
        Ok(at)
    }

    /// Name the session (`/rename`). Whitespace runs become single spaces.
    pub fn rename(&mut self, title: &str) -> io::Result<()> {
        let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
        if title.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a session title cannot be empty",
            ));
        }
        self.append(&Entry::title(title))
    }

    /// Push what was written down to the disk (`fsync` of the data).
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    /// Sync the file and bring the summary sidecar up to date.
    pub fn close(mut self) -> io::Result<()> {
        self.sync()?;
        self.write_summary()
    }

    /// Close the file as a `SIGKILL` would: the lock goes (the kernel drops it), but the
    /// summary is not brought up to date and the pid file stays. For crash tests.
    #[doc(hidden)]
    pub fn abandon(mut self) {
        self.abandoned = true;
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    pub fn id(&self) -> &str {
        &self.meta.id
    }

    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// Message entries in the file, including those from before a resume.
    pub fn message_count(&self) -> usize {
        self.messages
    }

    fn write_entry(&mut self, entry: &Entry) -> io::Result<()> {
        self.write_record(entry, entry.kind()).map(|_| ())
    }

    /// Write one line: `entry` (an [`Entry`], or a borrowed form that serialises as one)
    /// under a timestamp. Streamed to the file through a buffer, so a long entry is never
    /// in memory twice; one up to [`WRITE_BUFFER`] bytes goes in a single write. A failure
    /// cuts off whatever part of the line made it. Returns the offset the line starts at
    /// (unknown after a torn write that could not be cut off).
    fn write_record<E: Serialize>(&mut self, entry: &E, kind: &str) -> io::Result<Option<u64>> {
        let ts = now_rfc3339();
        let torn = self.torn;
        let start = (!torn).then_some(self.len);
        let mut out = io::BufWriter::with_capacity(
            WRITE_BUFFER,
            Counting {
                inner: &self.file,
                bytes: 0,
            },
        );
        let written = (|| {
            if torn {
                out.write_all(b"\n")?;
            }
            serde_json::to_writer(&mut out, &RecordOut { ts: &ts, entry }).map_err(|e| {
                if e.is_io() {
                    io::Error::from(e)
                } else {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("cannot store a {kind} entry: {e}"),
                    )
                }
            })?;
            out.write_all(b"\n")?;
            out.flush()
        })();
        let bytes = out.get_ref().bytes;
        // Nothing is left in the buffer to write on drop: flushed, or given up.
        let _ = out.into_parts();
        match written {
            Ok(()) => {
                if torn {
                    let guess = self.len + bytes;
                    self.len = self.file.metadata().map_or(guess, |m| m.len());
                    self.torn = false;
                } else {
                    self.len += bytes;
                }
                self.summary_stale = true;
                Ok(start)
            }
            Err(e) => {
                // Cut off whatever part of the line made it, so the next one starts clean.
                if bytes > 0 && self.file.set_len(self.len).is_err() {
                    self.torn = true;
                }
                if e.kind() == io::ErrorKind::InvalidInput {
                    return Err(e);
                }
                Err(io::Error::new(
                    e.kind(),
                    format!("cannot write to session file {}: {e}", self.path.display()),
                ))
            }
        }
    }

    /// Rewrite the sidecar now if it can be done; a failure leaves it stale, to be tried
    /// again at the next chance and reported by [`SessionWriter::close`].
    fn refresh_summary(&mut self) {
        let _ = self.write_summary();
    }

    fn write_summary(&mut self) -> io::Result<()> {
        if !self.summary_stale {
            return Ok(());
        }
        let sidecar = Sidecar {
            id: self.meta.id.clone(),
            title: self.title.clone(),
            project: self.meta.project.clone(),
            model: self.meta.model.clone(),
            started: self.meta.started.clone(),
            messages: self.messages,
            bytes: self.len,
        };
        write_sidecar(&summary_path(&self.path), &sidecar)?;
        self.unsummarised = 0;
        self.summary_stale = false;
        Ok(())
    }
}

impl Drop for SessionWriter {
    fn drop(&mut self) {
        if self.abandoned {
            return;
        }
        let _ = self.write_summary();
        // The lock itself goes when the file closes, just after this.
        lock::release(&self.path);
    }
}

/// A title from the first user message: whitespace collapsed, at most 60 characters,
/// cut at a word when one ends near the limit.
pub fn title_from_text(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= TITLE_CHARS {
        return flat;
    }
    let cut: String = flat.chars().take(TITLE_CHARS - 1).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i >= TITLE_CHARS * 2 / 3 => &cut[..i],
        _ => cut.as_str(),
    };
    format!("{}…", cut.trim_end())
}

/// Make sure the file ends with a whole line and return its length. A last line without
/// its `\n` is ended when it is a whole entry and cut off when it is not.
fn end_cleanly(file: &mut File) -> io::Result<u64> {
    let len = file.metadata()?.len();
    if len == 0 || last_byte(file, len)? == b'\n' {
        return Ok(len);
    }
    let start = line_start(file, len)?;
    let mut tail = Vec::new();
    file.seek(SeekFrom::Start(start))?;
    Read::by_ref(file)
        .take(len - start)
        .read_to_end(&mut tail)?;
    if serde_json::from_slice::<Record>(&tail).is_ok() {
        file.write_all(b"\n")?;
        Ok(len + 1)
    } else {
        file.set_len(start)?;
        Ok(start)
    }
}

fn last_byte(file: &mut File, len: u64) -> io::Result<u8> {
    let mut b = [0u8; 1];
    file.seek(SeekFrom::Start(len - 1))?;
    file.read_exact(&mut b)?;
    Ok(b[0])
}

/// Where the last line starts: just after the last `\n` before `len`, or 0.
fn line_start(file: &mut File, len: u64) -> io::Result<u64> {
    const CHUNK: u64 = 8192;
    let mut end = len;
    let mut buf = vec![0u8; CHUNK as usize];
    while end > 0 {
        let start = end.saturating_sub(CHUNK);
        let n = (end - start) as usize;
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf[..n])?;
        if let Some(i) = buf[..n].iter().rposition(|b| *b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

/// Session files may hold code and secrets: only the user may read them (0600).
fn private_options() -> OpenOptions {
    let mut options = crate::host::private_fs::options();
    options.append(true).create(false);
    options
}

/// Copy every whole line of the session file at `path` after its first (the meta line)
/// to `to`, a line at a time; the bytes copied.
fn copy_body(path: &Path, to: &mut File, until: u64) -> io::Result<u64> {
    let mut from = BufReader::with_capacity(64 << 10, File::open(path)?);
    let mut out = io::BufWriter::with_capacity(64 << 10, to);
    let (mut line, mut copied, mut first, mut at) = (Vec::new(), 0u64, true, 0u64);
    loop {
        line.clear();
        if at >= until || from.read_until(b'\n', &mut line)? == 0 || line.last() != Some(&b'\n') {
            break;
        }
        at += line.len() as u64;
        if !std::mem::take(&mut first) {
            out.write_all(&line)?;
            copied += line.len() as u64;
        }
    }
    out.flush()?;
    Ok(copied)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn titles_are_flat_and_short() {
        assert_eq!(title_from_text("  fix\n the   build "), "fix the build");
        let long =
            "Please refactor the permission checker so that every rule has a reason attached";
        let t = title_from_text(long);
        assert!(t.chars().count() <= TITLE_CHARS, "{t}");
        assert_eq!(
            t,
            "Please refactor the permission checker so that every rule…"
        );
        let one_word = "x".repeat(100);
        assert_eq!(title_from_text(&one_word).chars().count(), TITLE_CHARS);
        assert_eq!(title_from_text("ééé"), "ééé");
    }

    #[test]
    fn the_last_line_is_made_whole_before_appending() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let whole = "{\"ts\":\"t\",\"type\":\"title\",\"title\":\"a\"}";
        for (content, expect) in [
            (format!("{whole}\n{whole}"), format!("{whole}\n{whole}\n")),
            (
                format!("{whole}\n{{\"ts\":\"t\",\"ty"),
                format!("{whole}\n"),
            ),
            ("{\"ts".to_string(), String::new()),
            (format!("{whole}\n"), format!("{whole}\n")),
        ] {
            fs::write(&path, &content).unwrap();
            let mut f = OpenOptions::new()
                .read(true)
                .append(true)
                .open(&path)
                .unwrap();
            let len = end_cleanly(&mut f).unwrap();
            let now = fs::read_to_string(&path).unwrap();
            assert_eq!(now, expect, "from {content:?}");
            assert_eq!(len, now.len() as u64);
        }
    }
}
