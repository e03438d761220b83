//! `hooks.json`: Claude Code's settings shape, read verbatim.
//!
//! ```json
//! {"hooks": {"PreToolUse": [{"matcher": "Bash",
//!                            "hooks": [{"type": "command", "command": "./check.sh",
//!                                       "timeout": 30}]}]}}
//! ```
//!
//! A user pastes the `hooks` block of their Claude settings and it works. rein reads the
//! user's file (beside `config.toml`) and the project's (`.rein/hooks.json`), the user's
//! first. What cannot be used is said, naming the file and the key, and skipped; the rest
//! applies: an event Claude has and rein does not, a hook of another `type` (Claude's
//! `prompt` hooks), a matcher that is not a regular expression. The one key rein adds is
//! `on_failure: "block"`: a PreToolUse hook that crashes or times out then refuses the call
//! (fail closed) instead of letting it go on as Claude Code does.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::matcher::Matcher;

/// The events a hook can be for, by Claude Code's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Event {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PermissionRequest,
    PostToolUse,
    PostToolUseFailure,
    Notification,
    SubagentStart,
    SubagentStop,
    Stop,
    PreCompact,
    PostCompact,
    SessionEnd,
}

impl Event {
    pub const ALL: [Event; 13] = [
        Event::SessionStart,
        Event::UserPromptSubmit,
        Event::PreToolUse,
        Event::PermissionRequest,
        Event::PostToolUse,
        Event::PostToolUseFailure,
        Event::Notification,
        Event::SubagentStart,
        Event::SubagentStop,
        Event::Stop,
        Event::PreCompact,
        Event::PostCompact,
        Event::SessionEnd,
    ];

    /// Claude Code's name (`hook_event_name`).
    pub fn name(self) -> &'static str {
        match self {
            Event::SessionStart => "SessionStart",
            Event::UserPromptSubmit => "UserPromptSubmit",
            Event::PreToolUse => "PreToolUse",
            Event::PermissionRequest => "PermissionRequest",
            Event::PostToolUse => "PostToolUse",
            Event::PostToolUseFailure => "PostToolUseFailure",
            Event::Notification => "Notification",
            Event::SubagentStart => "SubagentStart",
            Event::SubagentStop => "SubagentStop",
            Event::Stop => "Stop",
            Event::PreCompact => "PreCompact",
            Event::PostCompact => "PostCompact",
            Event::SessionEnd => "SessionEnd",
        }
    }

    pub fn from_name(name: &str) -> Option<Event> {
        Event::ALL.into_iter().find(|e| e.name() == name)
    }

    /// What a matcher of this event is matched against: the tool's name for the tool
    /// events, the source or reason for the session's, the agent type for a subagent's,
    /// the trigger for a compaction's; nothing for the others (their matcher is ignored).
    pub fn has_matcher(self) -> bool {
        !matches!(self, Event::UserPromptSubmit | Event::Stop)
    }
}

/// Where a hook was declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// The user's own `hooks.json`: it runs.
    User,
    /// The project's `.rein/hooks.json`: it runs once the user approved it.
    Project,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::User => "user",
            Source::Project => "project",
        }
    }
}

/// What a hook does when it crashes, cannot start or times out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnFailure {
    /// As in Claude Code: the failure is shown, and what it guarded goes on.
    #[default]
    Continue,
    /// Fail closed: a PreToolUse hook's failure refuses the call.
    Block,
}

/// How long a hook may run unless its entry says (`timeout`, in seconds as in Claude Code).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest `timeout` taken: a day.
const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// One command hook, as declared.
#[derive(Debug, Clone)]
pub struct Hook {
    pub event: Event,
    /// The matcher as written (`""`, `*`, `Bash|Write`, `mcp__.*`).
    pub matcher_text: String,
    pub matcher: Matcher,
    /// The shell command line, run with `sh -c` in the project root.
    pub command: String,
    pub timeout: Duration,
    pub on_failure: OnFailure,
    pub source: Source,
    /// The file it came from.
    pub file: PathBuf,
}

/// The hooks of one file, and what in it could not be used.
#[derive(Debug, Default)]
pub struct Parsed {
    pub hooks: Vec<Hook>,
    /// One line each, naming the file and the key.
    pub problems: Vec<String>,
}

/// The hooks declared in `text`, the contents of `file`.
pub fn parse(text: &str, file: &Path, source: Source) -> Parsed {
    let mut out = Parsed::default();
    let at = |key: &str, what: String| format!("{}: {key}: {what}", file.display());
    let root: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            out.problems.push(format!(
                "{}: not JSON ({e}); no hook of it runs",
                file.display()
            ));
            return out;
        }
    };
    // The `hooks` block of Claude's settings, or (pasted alone) the block itself.
    let events = match root.get("hooks") {
        Some(Value::Object(events)) => events,
        Some(_) => {
            out.problems
                .push(at("hooks", "must be an object of events".into()));
            return out;
        }
        None => match &root {
            Value::Object(events) if events.keys().all(|k| Event::from_name(k).is_some()) => events,
            _ => {
                out.problems.push(format!(
                    "{}: no `hooks` object (the shape is Claude Code's: {{\"hooks\": {{\"PreToolUse\": [...]}}}})",
                    file.display()
                ));
                return out;
            }
        },
    };
    for (name, groups) in events {
        let Some(event) = Event::from_name(name) else {
            let known: Vec<&str> = Event::ALL.iter().map(|e| e.name()).collect();
            out.problems.push(at(
                &format!("hooks.{name}"),
                format!(
                    "not an event rein has (it has {}); skipped",
                    known.join(", ")
                ),
            ));
            continue;
        };
        let Value::Array(groups) = groups else {
            out.problems.push(at(
                &format!("hooks.{name}"),
                "must be a list of matcher groups".into(),
            ));
            continue;
        };
        for (g, group) in groups.iter().enumerate() {
            let key = format!("hooks.{name}[{g}]");
            let matcher_text = match group.get("matcher") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(m)) => m.clone(),
                Some(_) => {
                    out.problems
                        .push(at(&format!("{key}.matcher"), "must be a string".into()));
                    continue;
                }
            };
            let matcher = match Matcher::new(&matcher_text) {
                Ok(m) => m,
                Err(e) => {
                    out.problems
                        .push(at(&format!("{key}.matcher"), format!("{e}; skipped")));
                    continue;
                }
            };
            let Some(Value::Array(hooks)) = group.get("hooks") else {
                out.problems.push(at(
                    &format!("{key}.hooks"),
                    "must be a list of hooks".into(),
                ));
                continue;
            };
            for (h, hook) in hooks.iter().enumerate() {
                let key = format!("{key}.hooks[{h}]");
                match command_hook(hook) {
                    Ok((command, timeout, on_failure)) => out.hooks.push(Hook {
                        event,
                        matcher_text: matcher_text.clone(),
                        matcher: matcher.clone(),
                        command,
                        timeout,
                        on_failure,
                        source,
                        file: file.to_path_buf(),
                    }),
                    Err(why) => out.problems.push(at(&key, format!("{why}; skipped"))),
                }
            }
        }
    }
    out
}

/// A hook entry's command, timeout and failure mode.
fn command_hook(hook: &Value) -> Result<(String, Duration, OnFailure), String> {
    match hook.get("type").and_then(Value::as_str) {
        Some("command") => {}
        Some(other) => {
            return Err(format!(
                "type \"{other}\" is not one rein runs (only \"command\")"
            ))
        }
        None => return Err("no \"type\" (rein runs \"command\" hooks)".into()),
    }
    let command = match hook.get("command") {
        Some(Value::String(c)) if !c.trim().is_empty() => c.clone(),
        _ => return Err("no \"command\"".into()),
    };
    let timeout = match hook.get("timeout") {
        None | Some(Value::Null) => DEFAULT_TIMEOUT,
        Some(Value::Number(n)) => match n.as_f64() {
            Some(secs) if secs > 0.0 => Duration::from_secs_f64(secs.min(MAX_TIMEOUT_SECS)),
            _ => return Err("\"timeout\" must be a number of seconds above 0".into()),
        },
        Some(_) => return Err("\"timeout\" must be a number of seconds".into()),
    };
    let on_failure = match hook.get("on_failure").and_then(Value::as_str) {
        None => OnFailure::Continue,
        Some("block") => OnFailure::Block,
        Some("continue") => OnFailure::Continue,
        Some(other) => {
            return Err(format!(
                "\"on_failure\" is \"block\" or \"continue\", not \"{other}\""
            ))
        }
    };
    Ok((command, timeout, on_failure))
}

/// The user's `hooks.json`, beside their `config.toml`.
pub fn user_file(user_config: &Path) -> Option<PathBuf> {
    user_config.parent().map(|dir| dir.join("hooks.json"))
}

/// The project's `.rein/hooks.json`.
pub fn project_file(root: &Path) -> PathBuf {
    root.join(".rein").join("hooks.json")
}

/// The most bytes a `hooks.json` may hold.
pub const MAX_BYTES: u64 = 1024 * 1024;

/// Read and parse `file` when it exists (a missing file is no hooks, and no problem).
pub fn load(file: &Path, source: Source) -> Parsed {
    load_declared(file, source).0
}

/// [`load`], and the file as JSON (what an approval of a project's hooks pins; `None` when
/// it is missing, cannot be read or is not JSON). The file is read once, bounded, and only
/// when it is a regular file: a link to `/dev/zero` or a named pipe is refused, never read.
pub fn load_declared(file: &Path, source: Source) -> (Parsed, Option<Value>) {
    match crate::host::safe_fs::read_small_text(file, MAX_BYTES) {
        Ok(text) => {
            let declared = serde_json::from_str(&text).ok();
            (parse(&text, file, source), declared)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Parsed::default(), None),
        Err(e) => (
            Parsed {
                hooks: Vec::new(),
                problems: vec![format!(
                    "{}: cannot be read ({e}); no hook of it runs",
                    file.display()
                )],
            },
            None,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Parsed {
        parse(text, Path::new("/p/.rein/hooks.json"), Source::Project)
    }

    #[test]
    fn claude_codes_settings_shape_is_read_verbatim() {
        let p = parsed(
            r#"{"permissions": {"allow": []}, "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [
                        {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/check.sh", "timeout": 30},
                        {"type": "command", "command": "guard", "on_failure": "block"}]},
                    {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "fmt"}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "again", "timeout": 1.5}]}]
            }}"#,
        );
        assert_eq!(p.problems, Vec::<String>::new());
        let summary: Vec<_> = p
            .hooks
            .iter()
            .map(|h| {
                (
                    h.event,
                    h.matcher_text.as_str(),
                    h.command.as_str(),
                    h.timeout,
                    h.on_failure,
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (
                    Event::PreToolUse,
                    "Bash",
                    "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/check.sh",
                    Duration::from_secs(30),
                    OnFailure::Continue
                ),
                (
                    Event::PreToolUse,
                    "Bash",
                    "guard",
                    DEFAULT_TIMEOUT,
                    OnFailure::Block
                ),
                (
                    Event::PreToolUse,
                    "Write|Edit",
                    "fmt",
                    DEFAULT_TIMEOUT,
                    OnFailure::Continue
                ),
                (
                    Event::Stop,
                    "",
                    "again",
                    Duration::from_millis(1500),
                    OnFailure::Continue
                ),
            ]
        );
        // The block alone, pasted without its `hooks` key, is read too.
        let alone = parsed(r#"{"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}"#);
        assert_eq!(alone.hooks.len(), 1);
    }

    #[test]
    fn a_file_is_read_up_to_a_mebibyte_and_a_missing_one_is_no_hooks() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hooks.json");
        let hooks = r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#;
        let padded = |n: usize| format!("{hooks}{}", " ".repeat(n - hooks.len()));
        std::fs::write(&file, padded(1 << 20)).unwrap();
        let p = load(&file, Source::User);
        assert_eq!(
            (p.hooks.len(), p.problems.len()),
            (1, 0),
            "{:?}",
            p.problems
        );
        std::fs::write(&file, padded((1 << 20) + 1)).unwrap();
        let p = load(&file, Source::User);
        assert_eq!(p.hooks.len(), 0);
        assert!(p.problems[0].contains("cannot be read"), "{:?}", p.problems);
        // A missing file is no hooks, and no problem.
        let p = load(&dir.path().join("missing.json"), Source::User);
        assert_eq!(
            (p.hooks.len(), p.problems.len()),
            (0, 0),
            "{:?}",
            p.problems
        );
    }

    #[test]
    fn what_cannot_be_used_is_named_by_file_and_key_and_the_rest_applies() {
        let p = parsed(
            r#"{"hooks": {
                "Setup": [{"hooks": [{"type": "command", "command": "x"}]}],
                "PreToolUse": [
                    {"matcher": "(", "hooks": [{"type": "command", "command": "x"}]},
                    {"matcher": "Bash", "hooks": [
                        {"type": "prompt", "prompt": "is it safe?"},
                        {"type": "command", "command": "x", "timeout": 0},
                        {"type": "command", "command": " \t"},
                        {"type": "command", "command": "ok"}]}],
                "Stop": {"hooks": []}
            }}"#,
        );
        assert_eq!(p.hooks.len(), 1);
        assert_eq!(p.hooks[0].command, "ok");
        let problems = p.problems.join("\n");
        for expected in [
            "/p/.rein/hooks.json: hooks.Setup: not an event rein has",
            "/p/.rein/hooks.json: hooks.PreToolUse[0].matcher: ",
            "/p/.rein/hooks.json: hooks.PreToolUse[1].hooks[0]: type \"prompt\" is not one rein runs",
            "/p/.rein/hooks.json: hooks.PreToolUse[1].hooks[1]: \"timeout\" must be a number of seconds above 0",
            "/p/.rein/hooks.json: hooks.PreToolUse[1].hooks[2]: no \"command\"",
            "/p/.rein/hooks.json: hooks.Stop: must be a list of matcher groups",
        ] {
            assert!(problems.contains(expected), "{expected}\n---\n{problems}");
        }
        assert!(parsed("not json").problems[0].contains("not JSON"));
        assert!(parsed("{\"x\": 1}").problems[0].contains("no `hooks` object"));
    }
}
