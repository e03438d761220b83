//! Reading a session file back.
//!
//! Every line is parsed on its own. A line that does not parse is skipped with a notice: the
//! last one is a write cut off by a crash, one in the middle names its line number. Then the
//! entries are replayed in order: messages append to the history, a compaction replaces it,
//! the latest todo list, title and model win, rules accumulate. Finally the history is repaired so
//! it is a valid next request (see [`super::repair`]). A tool result's outcome is as
//! recorded; for one recorded before rein kept outcomes, [`tool_outcome`] guesses it from
//! the text, the only place a result's text is read for what happened.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};

use super::entry::{Entry, Record, SessionMeta};
use super::fold::{result_head, Folded, Shown};
use super::repair::{repair, Repairable};
use crate::checkpoint::{Seen as Recorded, TurnCheckpoints};
use crate::conversation::outcome::SESSION_ENDED_MAY_HAVE_RUN;
use crate::conversation::{Message, ToolOutcome};
use crate::permissions::ApprovalMode;
use crate::permissions::Grant;
use crate::tools::write_todos::Todo;

/// A session as read from its file, ready to resume.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedSession {
    pub path: PathBuf,
    pub meta: SessionMeta,
    /// The latest title, automatic or chosen.
    pub title: Option<String>,
    /// What the model sees next, after the system prompt: compactions applied, cut-off tool
    /// calls answered, no system message.
    pub history: Vec<Message>,
    /// Every message as the user saw it, compactions ignored (cut-off calls answered too).
    /// Loaded with [`Shown::Heads`], a long tool result holds only its head here (its
    /// [`LoadedSession::folds`] entry says so).
    pub transcript: Vec<Message>,
    /// Beside each `transcript` message: for a tool result cut to its head, how many lines
    /// follow and where its entry is in the file ([`super::read_result`] reads it whole).
    pub folds: Vec<Option<Folded>>,
    /// Positions in `transcript` where a compaction replaced the history.
    pub compactions: Vec<usize>,
    /// The position in `history` of the last compaction's handoff note, if it has one.
    pub summary: Option<usize>,
    /// The latest token calibration: request characters and prompt tokens, summed.
    pub calibration: Option<(u64, u64)>,
    /// The latest todo list.
    pub todos: Vec<Todo>,
    /// The rules the user allowed for the session, in order, without repeats.
    pub rules: Vec<Grant>,
    /// The model the session last ran on: its last `model` entry. `None` for a file from
    /// before rein recorded it (the meta's `model` is only the id sent to the server,
    /// without its provider, so a resume cannot tell where it ran).
    pub model: Option<RecordedModel>,
    /// The approval mode the session was last in: its last `mode` entry (`None`: no
    /// entry, a session in default mode or from before modes).
    pub mode: Option<ApprovalMode>,
    /// The external (MCP) tools last offered: its last `tools` entry.
    pub external_tools: Vec<crate::tools::external::ExternalSpec>,
    /// What the user's own commands (`!COMMAND`) printed after the last user message: the
    /// next one carries it to the model.
    pub user_runs: Vec<String>,
    /// How many message entries the file holds.
    pub message_count: usize,
    /// The turns' checkpoints and the rewinds ([`crate::checkpoint`]).
    pub checkpoints: TurnCheckpoints,
    /// Synthetic results added to `history` for calls the session never finished.
    pub synthetic_results: usize,
    /// The folders' instruction files it loaded, and which of them its history holds.
    pub instructions: NestedRecord,
    /// What each finished edit changed (`Entry::EditDiff`), by its call's id, for the
    /// transcript.
    pub edit_diffs: std::collections::HashMap<String, crate::checkpoint::ShortDiff>,
    /// What was skipped or repaired, in words for the user.
    pub notices: Vec<String>,
}

impl LoadedSession {
    pub fn id(&self) -> &str {
        &self.meta.id
    }

    /// The name of the model the session last ran on, when recorded.
    pub fn model_name(&self) -> Option<&str> {
        self.model.as_ref().map(|m| m.name.as_str())
    }
}

/// The instruction files of folders below the project a session loaded
/// (`Entry::Instructions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NestedRecord {
    /// Every one loaded, in order: in force.
    pub loaded: Vec<PathBuf>,
    /// Those whose text the history holds (sent since the last compaction); the rest are
    /// sent again.
    pub sent: Vec<PathBuf>,
}

/// A model as a session file records it (`Entry::Model`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedModel {
    /// As the user names it (`ollama/qwen3-coder`): what a resume resolves.
    pub name: String,
    /// The id sent to the server.
    pub model: String,
    /// Where it ran.
    pub base_url: String,
    /// Its context window then, in tokens.
    pub window: u64,
}

/// Read a session file, whole. Bad lines are skipped with a notice; only an unreadable
/// file or one without a single valid entry is an error.
pub fn load(path: &Path) -> io::Result<LoadedSession> {
    load_with(path, Shown::Whole)
}

/// A transcript message and its fold, while the file is read.
struct Seen {
    message: Message,
    fold: Option<Folded>,
}

impl Repairable for Seen {
    fn message(&self) -> &Message {
        &self.message
    }

    fn from_message(message: Message) -> Self {
        Seen {
            message,
            fold: None,
        }
    }
}

/// [`load`], keeping of each long tool result in the transcript what `shown` says. The
/// file is read a line at a time (never whole), and under [`Shown::Heads`] a long result
/// is held once, in the history, not in the transcript too.
pub fn load_with(path: &Path, shown: Shown) -> io::Result<LoadedSession> {
    let mut lines = RecordLines::open(path)?;
    let Some(first) = lines.next() else {
        lines.finish()?;
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} holds no session entries", path.display()),
        ));
    };
    let mut meta = None;
    let mut title = None;
    let mut history = Vec::new();
    let mut transcript: Vec<Seen> = Vec::new();
    // The calls of the last assistant message: a folded result's tool, by call id.
    let mut calls: Vec<(String, String)> = Vec::new();
    let mut compactions = Vec::new();
    let mut summary = None;
    let mut calibration = None;
    let mut misplaced = 0;
    let mut todos = Vec::new();
    let mut rules: Vec<Grant> = Vec::new();
    let mut model = None;
    let mut mode = None;
    let mut external_tools = Vec::new();
    let mut user_runs = Vec::new();
    let mut message_count = 0;
    let mut started = std::collections::HashSet::new();
    let mut checkpoints = TurnCheckpoints::default();
    let mut instructions = NestedRecord::default();
    let mut edit_diffs = std::collections::HashMap::new();
    let first_ts = first.1.ts.clone();
    for (offset, record) in std::iter::once(first).chain(lines.by_ref()) {
        match record.entry {
            Entry::Meta(m) => {
                meta.get_or_insert(m);
            }
            Entry::Message { message } => {
                if matches!(message, Message::System { .. }) {
                    continue;
                }
                message_count += 1;
                if let Message::User { content, .. } = &message {
                    // It carried the user's commands run before it.
                    user_runs.clear();
                    checkpoints.push(offset, Recorded::UserMessage(content));
                }
                if let Message::Assistant { tool_calls, .. } = &message {
                    calls = tool_calls
                        .iter()
                        .map(|c| (c.id.clone(), c.function.name.clone()))
                        .collect();
                }
                transcript.push(shown_copy(&message, offset, shown, &calls));
                history.push(message);
            }
            Entry::Todos { todos: list } => todos = list,
            Entry::Compaction {
                history: replacement,
                summary: note,
            } => {
                summary = note.filter(|&i| i < replacement.len());
                history = replacement;
                compactions.push(transcript.len());
                // What the history carried of the folders' instruction files is summarised.
                instructions.sent.clear();
            }
            Entry::Stubbed {
                stub_chars,
                indices,
            } => {
                for i in indices {
                    match history.get_mut(i) {
                        Some(Message::Tool { content, .. }) => {
                            if let Some(short) = crate::context::stubs::stub(content, stub_chars) {
                                *content = short;
                            }
                        }
                        _ => misplaced += 1,
                    }
                }
            }
            Entry::Calibration { chars, tokens } => calibration = Some((chars, tokens)),
            Entry::Dropped { indices } => {
                for i in indices {
                    if !crate::context::drop::drop_at(&mut history, i)
                        && !matches!(history.get(i), Some(Message::Tool { .. }))
                    {
                        misplaced += 1;
                    }
                }
            }
            Entry::CallStarted { id } => {
                started.insert(id);
            }
            Entry::Reminder { text } => {
                // It rode on the message before it; a message that cannot carry one (the
                // line is misplaced) keeps none.
                if let Some(last) = history.last_mut() {
                    if !last.set_reminder(text.clone()) {
                        misplaced += 1;
                    }
                }
                if let Some(last) = transcript.last_mut() {
                    last.message.set_reminder(text);
                }
            }
            Entry::Rule { grant } => {
                let grant = Grant::from(grant);
                if !rules.contains(&grant) {
                    rules.push(grant);
                }
            }
            Entry::Title { title: t, .. } => title = Some(t),
            Entry::Mode { mode: m } => mode = Some(m),
            Entry::Tools { external } => external_tools = external,
            Entry::UserCommand { text, .. } => user_runs.push(text),
            Entry::Checkpoint(c) => checkpoints.push(offset, Recorded::Checkpoint(&c, &record.ts)),
            Entry::Rewind(r) => checkpoints.push(offset, Recorded::Rewind(&r)),
            // Shown where they were delivered; the history has them in the reminder.
            Entry::Delivered { texts } => {
                for text in texts {
                    transcript.push(Seen::from_message(Message::user(text)));
                }
            }
            Entry::EditDiff { id, diff } => {
                edit_diffs.insert(id, diff);
            }
            Entry::Instructions { paths } => {
                for path in paths {
                    if !instructions.loaded.contains(&path) {
                        instructions.loaded.push(path.clone());
                    }
                    if !instructions.sent.contains(&path) {
                        instructions.sent.push(path);
                    }
                }
            }
            Entry::Model {
                name,
                model: id,
                base_url,
                window,
            } => {
                model = (!name.trim().is_empty()).then_some(RecordedModel {
                    name,
                    model: id,
                    base_url,
                    window,
                })
            }
        }
    }
    let mut notices = lines.finish()?;
    let meta = meta.unwrap_or_else(|| {
        notices.push(format!(
            "{} has no meta entry; its project and model are unknown",
            path.display()
        ));
        SessionMeta {
            id: file_id(path),
            project: PathBuf::new(),
            model: String::new(),
            started: first_ts,
            rein_version: String::new(),
            forked_from: None,
        }
    });
    if misplaced > 0 {
        notices.push(format!(
            "{} did not match the history and {} left whole",
            crate::text::plural(misplaced, "trimmed tool result"),
            if misplaced == 1 { "was" } else { "were" }
        ));
    }
    let fixed = repair(&mut history, &started);
    // Repairs never touch a user message, but a note must be one to count.
    let summary = summary.filter(|&i| matches!(history.get(i), Some(Message::User { .. })));
    repair(&mut transcript, &started);
    let (transcript, folds) = transcript.into_iter().map(|s| (s.message, s.fold)).unzip();
    if fixed.synthetic > 0 {
        notices.push(format!(
            "the session ended before {} finished; {} answered with an error so \
             the conversation can go on",
            crate::text::plural(fixed.synthetic, "tool call"),
            if fixed.synthetic == 1 {
                "it is"
            } else {
                "they are"
            }
        ));
    }
    if fixed.orphans > 0 {
        notices.push(format!(
            "{} without a matching call {} dropped from the history",
            crate::text::plural(fixed.orphans, "tool result"),
            if fixed.orphans == 1 { "was" } else { "were" }
        ));
    }
    Ok(LoadedSession {
        path: path.to_path_buf(),
        meta,
        title,
        history,
        transcript,
        folds,
        compactions,
        summary,
        calibration,
        todos,
        rules,
        model,
        mode,
        external_tools,
        user_runs,
        message_count,
        checkpoints,
        synthetic_results: fixed.synthetic,
        instructions,
        edit_diffs,
        notices,
    })
}

/// How the tool result `message` (of a call to `tool`) ended: as its session file
/// recorded it, or, for a result written before rein recorded outcomes, guessed from its
/// text as rein's front ends guessed then. `None` for a message that is no tool result.
pub fn tool_outcome(message: &Message, tool: &str) -> Option<ToolOutcome> {
    let Message::Tool {
        content, outcome, ..
    } = message
    else {
        return None;
    };
    Some(outcome.unwrap_or_else(|| guess_outcome(tool, content)))
}

/// The outcome the wording of an older rein's result gives away.
fn guess_outcome(tool: &str, text: &str) -> ToolOutcome {
    let Some(rest) = text.strip_prefix("Error:") else {
        return ToolOutcome::Ok;
    };
    let about_tool = |what: &str| rest.starts_with(&format!(" {tool} {what}"));
    if about_tool("was denied") {
        ToolOutcome::Denied
    } else if about_tool("was not run") {
        ToolOutcome::Refused
    } else if rest.starts_with(" not run:") {
        ToolOutcome::NotRun
    } else if text == SESSION_ENDED_MAY_HAVE_RUN {
        ToolOutcome::MayHaveRun
    } else if rest.contains("interrupted by the user") {
        ToolOutcome::Interrupted
    } else {
        ToolOutcome::Error
    }
}

/// What the transcript keeps of `message` (its entry at `offset`): a copy, or for a long
/// tool result under [`Shown::Heads`], its head, its outcome decided from the whole text.
fn shown_copy(message: &Message, offset: u64, shown: Shown, calls: &[(String, String)]) -> Seen {
    let whole = || Seen {
        message: message.clone(),
        fold: None,
    };
    let (Shown::Heads(lines), Message::Tool { tool_call_id, .. }) = (shown, message) else {
        return whole();
    };
    let Message::Tool { content, .. } = message else {
        return whole();
    };
    let Some((head, more_lines)) = result_head(content, lines) else {
        return whole();
    };
    let tool = calls
        .iter()
        .find(|(id, _)| id == tool_call_id)
        .map_or("", |(_, name)| name.as_str());
    Seen {
        message: Message::Tool {
            tool_call_id: tool_call_id.clone(),
            content: head,
            reminder: None,
            outcome: tool_outcome(message, tool),
            images: Vec::new(),
        },
        fold: Some(Folded { more_lines, offset }),
    }
}

/// Every valid line of a session file in order, and a notice for each skipped line.
pub fn read_records(path: &Path) -> io::Result<(Vec<Record>, Vec<String>)> {
    let mut lines = RecordLines::open(path)?;
    let records = lines.by_ref().map(|(_, record)| record).collect();
    Ok((records, lines.finish()?))
}

/// The valid lines of a session file with the byte offset each starts at, read a line at
/// a time; [`RecordLines::finish`] gives a notice for each line skipped (or the read
/// error that ended it).
struct RecordLines<R> {
    input: R,
    path: PathBuf,
    line: Vec<u8>,
    offset: u64,
    number: usize,
    /// A line that did not parse: the last one was cut off by a crash, one with lines
    /// after it is named by its number (known once another line comes).
    bad: Option<(usize, serde_json::Error)>,
    notices: Vec<String>,
    failed: Option<io::Error>,
}

impl RecordLines<BufReader<File>> {
    fn open(path: &Path) -> io::Result<Self> {
        let file = File::open(path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot read session file {}: {e}", path.display()),
            )
        })?;
        Ok(RecordLines::new(
            BufReader::with_capacity(64 << 10, file),
            path,
        ))
    }
}

impl<R: BufRead> RecordLines<R> {
    fn new(input: R, path: &Path) -> Self {
        RecordLines {
            input,
            path: path.to_path_buf(),
            line: Vec::new(),
            offset: 0,
            number: 0,
            bad: None,
            notices: Vec::new(),
            failed: None,
        }
    }

    /// The notices for the lines skipped, or the error that stopped the reading.
    fn finish(mut self) -> io::Result<Vec<String>> {
        if let Some(e) = self.failed {
            return Err(io::Error::new(
                e.kind(),
                format!("cannot read session file {}: {e}", self.path.display()),
            ));
        }
        if self.bad.is_some() {
            self.notices.push(format!(
                "the last entry of {} was cut off and was skipped",
                self.path.display()
            ));
        }
        Ok(self.notices)
    }
}

impl<R: BufRead> Iterator for RecordLines<R> {
    type Item = (u64, Record);

    fn next(&mut self) -> Option<(u64, Record)> {
        loop {
            self.line.clear();
            let n = match self.input.read_until(b'\n', &mut self.line) {
                Ok(0) => return None,
                Ok(n) => n,
                Err(e) => {
                    self.failed = Some(e);
                    return None;
                }
            };
            let at = self.offset;
            self.offset += n as u64;
            self.number += 1;
            if is_blank(&self.line) {
                continue;
            }
            if let Some((i, e)) = self.bad.take() {
                self.notices.push(skipped(i, &self.path, &e));
            }
            match serde_json::from_slice::<Record>(&self.line) {
                Ok(record) => return Some((at, record)),
                Err(e) => self.bad = Some((self.number, e)),
            }
        }
    }
}

fn skipped(number: usize, path: &Path, e: &serde_json::Error) -> String {
    format!(
        "line {number} of {} is not a valid session entry and was skipped ({e})",
        path.display()
    )
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

fn file_id(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn blank_lines_are_ignored_and_bad_ones_are_named() {
        let text = b"\n{\"ts\":\"t\",\"type\":\"title\",\"title\":\"a\"}\n\nnot json\n\
                     {\"ts\":\"t\",\"type\":\"title\",\"title\":\"b\"}\n{\"ts\":\"t\",\"ty";
        let mut lines = RecordLines::new(&text[..], Path::new("s.jsonl"));
        let records: Vec<(u64, Record)> = lines.by_ref().collect();
        let notices = lines.finish().unwrap();
        assert_eq!(records[0].0, 1, "the offset after the blank first line");
        assert_eq!(records.len(), 2);
        assert_eq!(notices.len(), 2, "{notices:?}");
        assert!(notices[0].starts_with("line 4 of s.jsonl"), "{notices:?}");
        assert_eq!(
            notices[1],
            "the last entry of s.jsonl was cut off and was skipped"
        );
    }

    #[test]
    fn the_last_model_entry_wins_and_older_files_have_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("20260101-000000-abcdef.jsonl");
        let meta = "{\"ts\":\"t\",\"type\":\"meta\",\"id\":\"x\",\"project\":\"/p\",\
                    \"model\":\"qwen3-coder\",\"started\":\"t\",\"rein_version\":\"0.1.0\"}\n";
        let user = "{\"ts\":\"t\",\"type\":\"message\",\
                    \"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n";
        // A file from before rein recorded the model: only the meta's id, which says
        // nothing about the provider.
        fs::write(&path, format!("{meta}{user}")).unwrap();
        let old = load(&path).unwrap();
        assert_eq!(old.model, None);
        assert_eq!(old.meta.model, "qwen3-coder");
        let model = |name: &str, window: u64| {
            format!(
                "{{\"ts\":\"t\",\"type\":\"model\",\"name\":\"{name}\",\"model\":\"m\",\
                 \"base_url\":\"http://h/v1\",\"window\":{window}}}\n"
            )
        };
        fs::write(
            &path,
            format!(
                "{meta}{}{user}{}",
                model("ollama/qwen3-coder", 32768),
                model("lab/big", 65536)
            ),
        )
        .unwrap();
        let new = load(&path).unwrap();
        assert_eq!(new.model_name(), Some("lab/big"));
        assert_eq!(new.model.map(|m| m.window), Some(65536));
        assert_eq!(new.message_count, 1, "a model entry is no message");
        assert!(new.notices.is_empty(), "{:?}", new.notices);
    }

    #[test]
    fn an_older_results_outcome_is_guessed_from_its_words() {
        let guess = |text: &str| tool_outcome(&Message::tool("c", text), "bash");
        for (text, outcome) in [
            ("a.txt b.txt", ToolOutcome::Ok),
            ("was interrupted by the user at 3pm", ToolOutcome::Ok),
            ("Error: exit code 1", ToolOutcome::Error),
            (
                "Error: bash was denied by the permission rules (rm).",
                ToolOutcome::Denied,
            ),
            (
                "Error: bash was not run: approval was refused by the user.",
                ToolOutcome::Refused,
            ),
            (
                "Error: interrupted by the user before this tool finished.",
                ToolOutcome::Interrupted,
            ),
            (
                "Error: not run: the user interrupted the turn before this call started.",
                ToolOutcome::NotRun,
            ),
            (SESSION_ENDED_MAY_HAVE_RUN, ToolOutcome::MayHaveRun),
        ] {
            assert_eq!(guess(text), Some(outcome), "{text}");
        }
        // A recorded outcome wins over any wording, and only results have one.
        let denied = Message::tool_result(
            "c",
            crate::conversation::ToolResult {
                outcome: ToolOutcome::Denied,
                text: "reworded".into(),
                images: Vec::new(),
                whole: None,
            },
        );
        assert_eq!(tool_outcome(&denied, "bash"), Some(ToolOutcome::Denied));
        assert_eq!(tool_outcome(&Message::user("Error: x"), "bash"), None);
    }

    #[test]
    fn a_file_without_meta_still_loads_with_a_notice() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("20260101-000000-abcdef.jsonl");
        fs::write(
            &path,
            "{\"ts\":\"2026-01-01T00:00:00.000Z\",\"type\":\"message\",\
             \"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
        )
        .unwrap();
        let s = load(&path).unwrap();
        assert_eq!(s.meta.id, "20260101-000000-abcdef");
        assert_eq!(s.history, vec![Message::user("hi")]);
        assert!(s.notices[0].contains("no meta entry"), "{:?}", s.notices);
        fs::write(&path, "garbage").unwrap();
        assert_eq!(load(&path).unwrap_err().kind(), io::ErrorKind::InvalidData);
    }
}
