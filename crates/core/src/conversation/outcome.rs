//! How a tool call ended ([`ToolOutcome`]), and the text the model reads about it
//! ([`ToolResult`]).
//!
//! The outcome is what front ends and resumed sessions go by: the dashboard's status marks,
//! the headless `outcome` field, a session file's tool results. When rein rather than the
//! tool decides how a call ends (a rule denied it, the user refused it, an interrupt, a
//! session that ended first), the sentence the model reads is written here, once, by the
//! [`ToolResult`] constructor of that outcome; nobody reads it back to learn what happened.

use super::Image;
use serde::{Deserialize, Serialize};

/// How a tool call ended. Serialised as its snake_case name (`"denied"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolOutcome {
    /// The tool ran and succeeded.
    Ok,
    /// The tool failed, or the call could not be run as made (bad arguments, a tool this
    /// agent does not have, a path it may not use).
    Error,
    /// A permission rule denied it.
    Denied,
    /// The user refused it when asked (with their reason, if they gave one).
    Refused,
    /// Plan mode refused it: it writes, or would need approval.
    PlanMode,
    /// The user interrupted it while it ran or waited for approval.
    Interrupted,
    /// It never started: the turn was interrupted, or the session ended, before it did.
    NotRun,
    /// It had started when the session ended, and rein has no result for it: it may have
    /// done its work.
    MayHaveRun,
}

impl ToolOutcome {
    /// Everything but [`ToolOutcome::Ok`] is an error to the model (the `is_error` flag).
    pub fn is_error(self) -> bool {
        self != ToolOutcome::Ok
    }
}

/// A call's result: how it ended, the text the model reads, and the images it carries
/// (an MCP tool's screenshot; sent to models that take images, described in `text` for
/// every model).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    pub outcome: ToolOutcome,
    pub text: String,
    pub images: Vec<Image>,
    /// What a spill file keeps when `text` is cut, where that differs from `text`: the
    /// exact bytes a command printed, without the status line rein adds to the model's text
    /// or its trimming. `None` keeps `text`. Never recorded: the session holds `text`.
    pub whole: Option<String>,
}

/// The text of a call that never started because the session ended first.
pub const SESSION_ENDED_NOT_RUN: &str =
    "Error: not run: the session ended before this call finished.";
/// The text of a call that had started when the session ended: it may have done its work,
/// so the model must not take it for one that never ran.
pub const SESSION_ENDED_MAY_HAVE_RUN: &str = "Error: this call was running (or waiting for \
approval) when the session ended, and rein has no result for it: it may have completed, \
partly or fully. Check its effects before you repeat it.";

impl ToolResult {
    /// The tool succeeded with `text`.
    pub fn ok(text: impl Into<String>) -> ToolResult {
        ToolResult {
            outcome: ToolOutcome::Ok,
            images: Vec::new(),
            whole: None,
            text: text.into(),
        }
    }

    /// The tool failed (or the call could not be run) with `text`.
    pub fn error(text: impl Into<String>) -> ToolResult {
        ToolResult {
            outcome: ToolOutcome::Error,
            images: Vec::new(),
            whole: None,
            text: text.into(),
        }
    }

    /// A tool's own `Ok`/`Err` result.
    pub fn from_tool(result: Result<String, String>) -> ToolResult {
        match result {
            Ok(text) => ToolResult::ok(text),
            Err(text) => ToolResult::error(text),
        }
    }

    /// A permission rule denied the call to `tool`, for `reason`.
    pub fn denied(tool: &str, reason: &str) -> ToolResult {
        ToolResult {
            outcome: ToolOutcome::Denied,
            images: Vec::new(),
            whole: None,
            text: format!(
                "Error: {tool} was denied by the permission rules ({reason}). Do not retry it; choose another way or ask the user."
            ),
        }
    }

    /// A hook (Claude Code's PreToolUse) refused the call to `tool`, for `reason`.
    pub fn hook_blocked(tool: &str, reason: &str) -> ToolResult {
        ToolResult {
            outcome: ToolOutcome::Denied,
            images: Vec::new(),
            whole: None,
            text: format!("Error: {tool} was blocked by a hook: {reason}"),
        }
    }

    /// The user refused the call to `tool`; their words, when they gave any, are passed on.
    pub fn refused(tool: &str, feedback: Option<&str>) -> ToolResult {
        let mut text = format!("Error: {tool} was not run: approval was refused");
        match feedback.map(str::trim).filter(|f| !f.is_empty()) {
            Some(f) => text.push_str(&format!(" ({f})")),
            None => text.push_str(" by the user"),
        }
        text.push_str(
            ". Do not retry the same action; choose another way or explain what you need.",
        );
        ToolResult {
            outcome: ToolOutcome::Refused,
            images: Vec::new(),
            whole: None,
            text,
        }
    }

    /// Plan mode refused the call to `tool`: it writes, or would need approval.
    pub fn plan_mode(tool: &str) -> ToolResult {
        ToolResult {
            outcome: ToolOutcome::PlanMode,
            images: Vec::new(),
            whole: None,
            text: format!(
                "Error: {tool} was not run: rein is in plan mode, where nothing that writes \
                 runs (no file edits, no command that needs approval); read, explore with \
                 allowed commands, and answer with a plan (the user switches modes with \
                 Shift+Tab)."
            ),
        }
    }

    /// The user interrupted the call while it ran or waited for approval.
    pub fn interrupted() -> ToolResult {
        ToolResult {
            outcome: ToolOutcome::Interrupted,
            images: Vec::new(),
            whole: None,
            text: "Error: interrupted by the user before this tool finished.".to_string(),
        }
    }

    /// The user interrupted the turn before this call started.
    pub fn not_run() -> ToolResult {
        ToolResult {
            outcome: ToolOutcome::NotRun,
            images: Vec::new(),
            whole: None,
            text: "Error: not run: the user interrupted the turn before this call started."
                .to_string(),
        }
    }

    /// The session ended before the call had a result: it may have run when it had
    /// `started`, else it never did.
    pub fn session_ended(started: bool) -> ToolResult {
        if started {
            ToolResult {
                outcome: ToolOutcome::MayHaveRun,
                images: Vec::new(),
                whole: None,
                text: SESSION_ENDED_MAY_HAVE_RUN.to_string(),
            }
        } else {
            ToolResult {
                outcome: ToolOutcome::NotRun,
                images: Vec::new(),
                whole: None,
                text: SESSION_ENDED_NOT_RUN.to_string(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_serialise_as_their_names() {
        for (outcome, name) in [
            (ToolOutcome::Ok, "ok"),
            (ToolOutcome::Denied, "denied"),
            (ToolOutcome::PlanMode, "plan_mode"),
            (ToolOutcome::Refused, "refused"),
            (ToolOutcome::NotRun, "not_run"),
            (ToolOutcome::MayHaveRun, "may_have_run"),
        ] {
            let json = serde_json::to_value(outcome).unwrap();
            assert_eq!(json, serde_json::json!(name));
            assert_eq!(
                serde_json::from_value::<ToolOutcome>(json).unwrap(),
                outcome
            );
        }
        assert!(!ToolOutcome::Ok.is_error());
        assert!(ToolOutcome::Interrupted.is_error());
    }

    #[test]
    fn a_refusal_passes_the_users_words_on() {
        let with = ToolResult::refused("bash", Some("  use the test db  "));
        assert_eq!(with.outcome, ToolOutcome::Refused);
        assert!(with.text.contains("(use the test db)."), "{}", with.text);
        let without = ToolResult::refused("bash", Some(" "));
        assert!(
            without.text.contains("refused by the user."),
            "{}",
            without.text
        );
    }
}
