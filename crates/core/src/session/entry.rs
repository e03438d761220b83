//! The lines of a session file.
//!
//! Each line is one [`Record`]: a `ts` (RFC 3339, UTC) and an [`Entry`] tagged by `type`.
//! Messages are [`Message`]'s serde form: the chat wire format's role, content and tool
//! calls, plus what rein keeps beside them (a message's reminder, an assistant message's
//! reasoning state, refusal and model). Session rules are stored through [`StoredGrant`], a mirror
//! of [`Grant`] that can be read back.

use crate::text::stamp;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::conversation::Message;
use crate::permissions::{ApprovalMode, Grant};
use crate::tools::write_todos::Todo;

/// One line of a session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// When the entry was written, RFC 3339 in UTC.
    pub ts: String,
    #[serde(flatten)]
    pub entry: Entry,
}

/// What a line records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Entry {
    /// The first line: who, where and when.
    Meta(SessionMeta),
    /// A committed message of the conversation (never the system prompt).
    Message { message: Message },
    /// The whole todo list after a change.
    Todos { todos: Vec<Todo> },
    /// The history that replaces everything before it (the system prompt left out), and
    /// the position in it of the compaction's handoff note, if it has one.
    Compaction {
        history: Vec<Message>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<usize>,
    },
    /// Old tool results cut to `stub_chars` characters (layer 2): their positions in the
    /// history as it stands (the system prompt left out).
    Stubbed {
        stub_chars: usize,
        indices: Vec<usize>,
    },
    /// What the token count learnt from the server so far: request characters and the
    /// prompt tokens counted for them, summed (a resumed session starts calibrated).
    Calibration { chars: u64, tokens: u64 },
    /// Old tool results replaced by the "dropped" note (layer 3): their positions in the
    /// history as it stands (the system prompt left out).
    Dropped { indices: Vec<usize> },
    /// A tool call began (before its permission check): after a crash, a call with this
    /// entry but no result may have done its work.
    CallStarted { id: String },
    /// A reminder attached to the message before it (a tool result, when the branch or the
    /// plan changed during a turn).
    Reminder { text: String },
    /// The user allowed something for the rest of the session.
    Rule { grant: StoredGrant },
    /// A name for the session: automatic from the first user message, or a rename.
    Title {
        title: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        auto: bool,
    },
    /// The model the conversation runs on from here: written when a session starts or
    /// resumes on a model other than the one last recorded, and at every `/model` switch.
    /// `name` is the model as the user names it (`ollama/qwen3-coder`, what `--model`
    /// takes and a resumed session is resolved by); `model` the id sent to `base_url`;
    /// `window` the context window in tokens.
    Model {
        name: String,
        model: String,
        base_url: String,
        window: u64,
    },
    /// The approval mode from here (a switch; a new session starts in default mode, so
    /// a file without this entry is in default mode). A resumed session goes on in it.
    Mode { mode: ApprovalMode },
    /// The user ran `command` themselves (`!COMMAND`); `text` is what the model reads of
    /// it, folded into the next user message (the message entry then holds it). Entries
    /// after the last user message are still waiting for one.
    UserCommand { command: String, text: String },
    /// The tools from outside rein (MCP servers) offered from here on, whole: a resumed
    /// session whose servers changed can still offer the ones its history called.
    Tools {
        external: Vec<crate::tools::external::ExternalSpec>,
    },
    /// The project's files recorded ([`crate::checkpoint`]): a turn's start, or before or
    /// after a batch of tool calls that could change files.
    Checkpoint(crate::checkpoint::CheckpointRecord),
    /// Files put back as a checkpoint had them (`rein rewind`, `/rewind`): what `--undo`
    /// takes back.
    Rewind(crate::checkpoint::Rewind),
    /// The instruction files of folders below the project (`sub/AGENTS.md`) whose text the
    /// message before this entry carried to the model (in its reminder): they are in force
    /// from here, and a resumed session does not send them again (unless a compaction
    /// after this entry summarised them away; see `crate::instructions::nested`).
    Instructions { paths: Vec<PathBuf> },
    /// What the finished edit `id` (`write_file`, `str_replace`) changed in its file, as
    /// its transcript cell showed it: a resumed transcript shows it again.
    EditDiff {
        id: String,
        diff: crate::checkpoint::ShortDiff,
    },
    /// Messages the user sent while the turn ran, delivered with the tool result before
    /// this entry (in its reminder, `Entry::Reminder`): a resumed transcript shows them
    /// there, as the dashboard did. Not part of the history (the reminder is).
    Delivered { texts: Vec<String> },
}

impl Entry {
    pub fn message(message: Message) -> Entry {
        Entry::Message { message }
    }

    pub fn todos(todos: Vec<Todo>) -> Entry {
        Entry::Todos { todos }
    }

    /// A history that replaces everything before it, without a handoff note.
    pub fn compaction(history: Vec<Message>) -> Entry {
        Entry::Compaction {
            history,
            summary: None,
        }
    }

    /// A compacted history whose handoff note is at `summary`.
    pub fn compacted(history: Vec<Message>, summary: usize) -> Entry {
        Entry::Compaction {
            history,
            summary: Some(summary),
        }
    }

    pub fn rule(grant: &Grant) -> Entry {
        Entry::Rule {
            grant: grant.into(),
        }
    }

    /// A rename by the user.
    pub fn title(title: impl Into<String>) -> Entry {
        Entry::Title {
            title: title.into(),
            auto: false,
        }
    }

    /// The `type` tag, for messages about a line.
    pub fn kind(&self) -> &'static str {
        match self {
            Entry::Meta(_) => "meta",
            Entry::Message { .. } => "message",
            Entry::Todos { .. } => "todos",
            Entry::Compaction { .. } => "compaction",
            Entry::Stubbed { .. } => "stubbed",
            Entry::Dropped { .. } => "dropped",
            Entry::Calibration { .. } => "calibration",
            Entry::Reminder { .. } => "reminder",
            Entry::CallStarted { .. } => "call_started",
            Entry::Rule { .. } => "rule",
            Entry::Title { .. } => "title",
            Entry::Model { .. } => "model",
            Entry::Mode { .. } => "mode",
            Entry::UserCommand { .. } => "user_command",
            Entry::Tools { .. } => "tools",
            Entry::Checkpoint(_) => "checkpoint",
            Entry::Rewind(_) => "rewind",
            Entry::Instructions { .. } => "instructions",
            Entry::EditDiff { .. } => "edit_diff",
            Entry::Delivered { .. } => "delivered",
        }
    }
}

/// Who, where and when: the first line of every session file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionMeta {
    pub id: String,
    /// The project directory the session ran in.
    pub project: PathBuf,
    pub model: String,
    /// RFC 3339, UTC.
    pub started: String,
    /// The rein version that started the session.
    pub rein_version: String,
    /// The session this one was copied from (`--fork`, or `/resume` of a session open
    /// elsewhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<String>,
}

impl SessionMeta {
    /// A new session of `model` in `project`, starting now, with a fresh id.
    pub fn new(project: impl Into<PathBuf>, model: impl Into<String>) -> SessionMeta {
        SessionMeta {
            id: stamp::new_session_id(),
            project: project.into(),
            model: model.into(),
            started: stamp::now_rfc3339(),
            rein_version: env!("CARGO_PKG_VERSION").to_string(),
            forked_from: None,
        }
    }
}

/// A session rule as stored: the same `{kind, value}` shape [`Grant`] serialises to, but
/// readable back.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum StoredGrant {
    Bash(String),
    Write(PathBuf),
    Read(PathBuf),
    /// An MCP tool allowed by name (files from before MCP hold none).
    Tool(String),
}

impl From<&Grant> for StoredGrant {
    fn from(grant: &Grant) -> StoredGrant {
        match grant {
            Grant::Bash(pattern) => StoredGrant::Bash(pattern.clone()),
            Grant::Write(path) => StoredGrant::Write(path.clone()),
            Grant::Read(path) => StoredGrant::Read(path.clone()),
            Grant::Tool(name) => StoredGrant::Tool(name.clone()),
        }
    }
}

impl From<StoredGrant> for Grant {
    fn from(grant: StoredGrant) -> Grant {
        match grant {
            StoredGrant::Bash(pattern) => Grant::Bash(pattern),
            StoredGrant::Write(path) => Grant::Write(path),
            StoredGrant::Read(path) => Grant::Read(path),
            StoredGrant::Tool(name) => Grant::Tool(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stored_grant_has_the_shape_grant_serialises_to() {
        for grant in [
            Grant::Bash("cargo test *".into()),
            Grant::Write("/p/src".into()),
            Grant::Read("/etc/hosts".into()),
            Grant::Tool("mcp__github__create_issue".into()),
        ] {
            let stored = StoredGrant::from(&grant);
            assert_eq!(
                serde_json::to_value(&stored).unwrap(),
                serde_json::to_value(&grant).unwrap()
            );
            assert_eq!(Grant::from(stored), grant);
        }
    }

    #[test]
    fn rule_lines_from_before_tool_grants_still_read_and_tool_grants_round_trip() {
        let old = r#"{"ts":"2026-01-01T00:00:00.000Z","type":"rule","grant":{"kind":"bash","value":"make *"}}"#;
        let r: Record = serde_json::from_str(old).unwrap();
        assert_eq!(
            r.entry,
            Entry::Rule {
                grant: StoredGrant::Bash("make *".into())
            }
        );
        let line =
            serde_json::to_string(&Entry::rule(&Grant::Tool("mcp__time__now".into()))).unwrap();
        assert_eq!(
            line,
            r#"{"type":"rule","grant":{"kind":"tool","value":"mcp__time__now"}}"#
        );
        let back: Entry = serde_json::from_str(&line).unwrap();
        assert_eq!(
            back,
            Entry::Rule {
                grant: StoredGrant::Tool("mcp__time__now".into())
            }
        );
    }

    #[test]
    fn a_record_is_one_flat_object_tagged_by_type() {
        let r = Record {
            ts: "2026-11-30T03:15:00.000Z".into(),
            entry: Entry::message(Message::user("hi")),
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(
            v,
            json!({"ts":"2026-11-30T03:15:00.000Z","type":"message",
                   "message":{"role":"user","content":"hi"}})
        );
        assert_eq!(serde_json::from_value::<Record>(v).unwrap(), r);
        let t = serde_json::to_value(Entry::title("x")).unwrap();
        assert_eq!(t, json!({"type":"title","title":"x"}));
        let m = Entry::Model {
            name: "ollama/qwen3-coder".into(),
            model: "qwen3-coder".into(),
            base_url: "http://127.0.0.1:11434/v1".into(),
            window: 32_768,
        };
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(
            v,
            json!({"type":"model","name":"ollama/qwen3-coder","model":"qwen3-coder",
                   "base_url":"http://127.0.0.1:11434/v1","window":32768})
        );
        assert_eq!(serde_json::from_value::<Entry>(v).unwrap(), m);
    }
}
