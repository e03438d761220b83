//! What a hook's run means, by Claude Code's rules, and what several mean together.
//!
//! - Exit 0 is success. stdout that starts with `{` is read as JSON: `continue: false`
//!   (with `stopReason`) stops the turn, `systemMessage` is shown to the user, `decision:
//!   "block"` with `reason` blocks, and `hookSpecificOutput` carries `permissionDecision`
//!   (`allow`, `deny`, `ask`) with `permissionDecisionReason`, `updatedInput` and
//!   `additionalContext`. Other stdout is context for the model on UserPromptSubmit and
//!   SessionStart, and nothing on the others.
//! - Exit 2 blocks where the event can be blocked; stderr is the reason the model (or, for
//!   a prompt, the user) reads.
//! - Any other exit, a signal, a timeout or a hook that cannot start is a non-blocking
//!   error shown to the user, unless the hook says `on_failure: "block"` (PreToolUse).
//!
//! Hooks of one event run together; [`Combined`] is what they say together: any block
//! blocks, deny wins over ask over allow, every context and message is kept in order.

use serde_json::Value;

use super::config::{Event, OnFailure};
use super::run::{Ended, Ran};

/// A permission decision of a PreToolUse (or PermissionRequest) hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Permission {
    Allow,
    Ask,
    Deny,
}

/// What one hook said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Said {
    /// It blocks (exit 2, `decision: "block"`, a deny, or a failure it asked to block on),
    /// with the reason.
    pub block: Option<String>,
    pub permission: Option<(Permission, String)>,
    /// Its `updatedInput` (Claude Code's field names).
    pub updated_input: Option<Value>,
    /// Context for the model.
    pub context: Option<String>,
    /// Shown to the user.
    pub message: Option<String>,
    /// `continue: false`: the turn stops, with this reason.
    pub stop: Option<String>,
    /// A non-blocking error, shown to the user.
    pub error: Option<String>,
}

/// The most characters of one hook's text that go on (its context, the reason of a block
/// or a stop, a message, a decision's reason), and of the context all the hooks of one
/// event add together: a hook may print up to [`super::run::MAX_OUTPUT`], which would not
/// fit a model's window. Past it the text keeps its head and tail, with a mark in between.
pub const MAX_TEXT_CHARS: usize = 10_000;

/// `text` when it is at most `max` characters; else its head and tail, about `max`
/// characters in all, with a mark saying how much of it was cut.
pub fn bound(text: String, max: usize) -> String {
    let Some((head, tail)) = crate::context::spill::cut(&text, max) else {
        return text;
    };
    let total = text.chars().count();
    let cut = total - head.chars().count() - tail.chars().count();
    format!(
        "{head}\n[… {cut} of the hook's {total} characters cut here: rein passes on at most \
         {max} characters of what hooks say …]\n{tail}"
    )
}

/// What `ran`, a hook for `event` declared with `on_failure`, says, each text bounded to
/// [`MAX_TEXT_CHARS`].
pub fn read(event: Event, on_failure: OnFailure, ran: &Ran) -> Said {
    let mut said = read_whole(event, on_failure, ran);
    for text in [
        &mut said.block,
        &mut said.context,
        &mut said.message,
        &mut said.stop,
        &mut said.error,
    ] {
        if let Some(whole) = text.take() {
            *text = Some(bound(whole, MAX_TEXT_CHARS));
        }
    }
    if let Some((_, reason)) = &mut said.permission {
        *reason = bound(std::mem::take(reason), MAX_TEXT_CHARS);
    }
    said
}

/// What `ran` says, its texts as long as the hook made them.
fn read_whole(event: Event, on_failure: OnFailure, ran: &Ran) -> Said {
    let mut said = Said::default();
    let failed = |said: &mut Said, why: String| {
        if on_failure == OnFailure::Block && event == Event::PreToolUse {
            said.block = Some(format!("a hook failed and blocks on failure: {why}"));
        } else {
            said.error = Some(why);
        }
    };
    match &ran.ended {
        Ended::Exit(0) => {}
        Ended::Exit(2) => {
            let reason = ran.stderr.trim();
            let reason = if reason.is_empty() {
                "blocked by a hook (it gave no reason)".to_string()
            } else {
                reason.to_string()
            };
            if blockable(event) {
                said.block = Some(reason);
            } else {
                said.error = Some(reason);
            }
            return said;
        }
        Ended::Exit(code) => {
            failed(
                &mut said,
                with_stderr(format!("exit code {code}"), &ran.stderr),
            );
            return said;
        }
        Ended::Signal(signal) => {
            failed(
                &mut said,
                with_stderr(format!("killed by signal {signal}"), &ran.stderr),
            );
            return said;
        }
        Ended::TimedOut => {
            failed(&mut said, format!("timed out after {:.0?}", ran.took));
            return said;
        }
        Ended::NotStarted(why) => {
            failed(&mut said, why.clone());
            return said;
        }
    }
    let out = ran.stdout.trim();
    if !out.starts_with('{') {
        if !out.is_empty() && matches!(event, Event::UserPromptSubmit | Event::SessionStart) {
            said.context = Some(out.to_string());
        }
        return said;
    }
    let json: Value = match serde_json::from_str(out) {
        Ok(v) => v,
        Err(e) => {
            failed(
                &mut said,
                format!("its output starts with {{ but is not JSON ({e})"),
            );
            return said;
        }
    };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    if json.get("continue") == Some(&Value::Bool(false)) {
        said.stop =
            Some(text(json.get("stopReason")).unwrap_or_else(|| "a hook stopped the turn".into()));
    }
    said.message = text(json.get("systemMessage"));
    // `continue: false` wins over `decision: "block"` (Claude Code): a Stop hook that says
    // both ends the turn rather than keeping the model going.
    if json.get("decision").and_then(Value::as_str) == Some("block")
        && blockable(event)
        && said.stop.is_none()
    {
        said.block =
            Some(text(json.get("reason")).unwrap_or_else(|| "blocked by a hook".to_string()));
    }
    if let Some(specific) = json.get("hookSpecificOutput") {
        // A PermissionRequest hook's deny gives its reason as `decision.message`.
        let reason = text(specific.get("permissionDecisionReason"))
            .or_else(|| text(specific.get("decision").and_then(|d| d.get("message"))))
            .unwrap_or_default();
        let decision = specific
            .get("permissionDecision")
            .or_else(|| specific.get("decision").and_then(|d| d.get("behavior")))
            .and_then(Value::as_str);
        said.permission = match decision {
            Some("allow" | "approve") => Some((Permission::Allow, reason)),
            Some("ask") => Some((Permission::Ask, reason)),
            Some("deny" | "block") => Some((Permission::Deny, reason)),
            _ => None,
        };
        // A PermissionRequest hook's allow carries it as `decision.updatedInput`.
        said.updated_input = specific
            .get("updatedInput")
            .or_else(|| specific.get("decision").and_then(|d| d.get("updatedInput")))
            .filter(|v| v.is_object())
            .cloned();
        said.context = text(specific.get("additionalContext"));
    }
    said
}

/// The events a hook can block (exit 2, `decision: "block"`).
pub fn blockable(event: Event) -> bool {
    matches!(
        event,
        Event::PreToolUse
            | Event::PermissionRequest
            | Event::UserPromptSubmit
            | Event::Stop
            | Event::SubagentStop
            | Event::PostToolUse
            | Event::PostToolUseFailure
    )
}

fn with_stderr(what: String, stderr: &str) -> String {
    match stderr.trim() {
        "" => what,
        err => format!("{what}: {}", crate::text::clip(err, 400)),
    }
}

/// What the hooks of one event said together.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Combined {
    pub block: Option<String>,
    pub permission: Option<(Permission, String)>,
    pub updated_input: Option<Value>,
    pub context: Vec<String>,
    pub messages: Vec<String>,
    pub stop: Option<String>,
    pub errors: Vec<String>,
    /// What kept hooks of the event from running, said the first time only.
    pub held: Vec<super::Hold>,
}

impl Combined {
    /// Add what one more hook said: blocks and stops joined, the strictest permission
    /// kept (deny > ask > allow), the first `updatedInput` of a hook that allows or asks
    /// (Claude Code puts the rewritten call to the user on ask) or decides nothing.
    pub fn add(&mut self, said: Said) {
        let join = |into: &mut Option<String>, more: Option<String>| {
            if let Some(more) = more {
                *into = Some(match into.take() {
                    Some(before) => format!("{before}\n{more}"),
                    None => more,
                });
            }
        };
        join(&mut self.block, said.block);
        join(&mut self.stop, said.stop);
        if let Some((p, reason)) = said.permission {
            if self.permission.as_ref().is_none_or(|(q, _)| p > *q) {
                self.permission = Some((p, reason));
            }
            if p != Permission::Deny && self.updated_input.is_none() {
                self.updated_input = said.updated_input;
            }
        } else if self.updated_input.is_none() {
            self.updated_input = said.updated_input;
        }
        // Together, the event's context stays within the bound too: what comes past it is
        // cut down to the room left (a mark alone when none is).
        if let Some(context) = said.context {
            let used: usize = self.context.iter().map(|c| c.chars().count()).sum();
            let room = MAX_TEXT_CHARS.saturating_sub(used);
            self.context.push(bound(context, room));
        }
        self.messages.extend(said.message);
        self.errors.extend(said.error);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ran(ended: Ended, stdout: &str, stderr: &str) -> Ran {
        Ran {
            ended,
            stdout: stdout.into(),
            stderr: stderr.into(),
            took: Duration::from_secs(1),
        }
    }

    #[test]
    fn exit_codes_by_claude_codes_rules() {
        let pre = |r: &Ran| read(Event::PreToolUse, OnFailure::Continue, r);
        assert_eq!(
            pre(&ran(Ended::Exit(2), "", "no force pushes\n"))
                .block
                .as_deref(),
            Some("no force pushes")
        );
        let one = pre(&ran(Ended::Exit(1), "", "boom"));
        assert_eq!(
            (one.block, one.error.as_deref()),
            (None, Some("exit code 1: boom"))
        );
        // Exit 2 on an event that cannot be blocked is an error shown, not a block.
        let end = read(
            Event::SessionEnd,
            OnFailure::Continue,
            &ran(Ended::Exit(2), "", "x"),
        );
        assert_eq!((end.block, end.error.as_deref()), (None, Some("x")));
        // Plain stdout is context only where Claude Code makes it so.
        let prompt = read(
            Event::UserPromptSubmit,
            OnFailure::Continue,
            &ran(Ended::Exit(0), "today is a holiday\n", ""),
        );
        assert_eq!(prompt.context.as_deref(), Some("today is a holiday"));
        assert_eq!(
            pre(&ran(Ended::Exit(0), "just logging\n", "")),
            Said::default()
        );
        // Failing closed, where asked.
        let closed = read(
            Event::PreToolUse,
            OnFailure::Block,
            &ran(Ended::TimedOut, "", ""),
        );
        assert!(closed.block.unwrap().contains("timed out"));
        let open = pre(&ran(Ended::TimedOut, "", ""));
        assert!(open.block.is_none() && open.error.unwrap().contains("timed out"));
    }

    #[test]
    fn a_long_reason_keeps_its_head_and_tail_and_says_how_much_was_cut() {
        let long = format!("{}{}", "a".repeat(6_000), "b".repeat(6_000));
        let said = read(
            Event::PreToolUse,
            OnFailure::Continue,
            &ran(Ended::Exit(2), "", &long),
        );
        let block = said.block.unwrap();
        assert!(
            block.contains("\n[… 2000 of the hook's 12000 characters cut here: rein passes on at most 10000 characters of what hooks say …]\n"),
            "{}",
            &block[..200]
        );
        let head = block.chars().take_while(|c| *c == 'a').count();
        let tail = block.chars().rev().take_while(|c| *c == 'b').count();
        assert_eq!(head + tail, MAX_TEXT_CHARS);
        assert_eq!(bound("short".into(), 5), "short");
    }

    #[test]
    fn json_output_fields() {
        let said = read(
            Event::PreToolUse,
            OnFailure::Continue,
            &ran(
                Ended::Exit(0),
                r#"{"systemMessage": "checked", "hookSpecificOutput": {"hookEventName": "PreToolUse",
                   "permissionDecision": "deny", "permissionDecisionReason": "not on main",
                   "additionalContext": "use a branch"}}"#,
                "",
            ),
        );
        assert_eq!(
            said.permission,
            Some((Permission::Deny, "not on main".into()))
        );
        assert_eq!(said.message.as_deref(), Some("checked"));
        let ask = read(
            Event::PreToolUse,
            OnFailure::Continue,
            &ran(
                Ended::Exit(0),
                r#"{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "a push"}}"#,
                "",
            ),
        );
        assert_eq!(ask.permission, Some((Permission::Ask, "a push".into())));
        assert_eq!(said.context.as_deref(), Some("use a branch"));
        let stop = read(
            Event::Stop,
            OnFailure::Continue,
            &ran(
                Ended::Exit(0),
                r#"{"decision": "block", "reason": "run the tests first", "continue": false, "stopReason": "enough"}"#,
                "",
            ),
        );
        // continue: false takes precedence over the block.
        assert_eq!(stop.block, None);
        assert_eq!(stop.stop.as_deref(), Some("enough"));
        let block = read(
            Event::Stop,
            OnFailure::Continue,
            &ran(
                Ended::Exit(0),
                r#"{"decision": "block", "reason": "run the tests first"}"#,
                "",
            ),
        );
        assert_eq!(block.block.as_deref(), Some("run the tests first"));
        let request = read(
            Event::PermissionRequest,
            OnFailure::Continue,
            &ran(
                Ended::Exit(0),
                r#"{"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                   "decision": {"behavior": "deny", "message": "not while I am away"}}}"#,
                "",
            ),
        );
        assert_eq!(
            request.permission,
            Some((Permission::Deny, "not while I am away".into()))
        );
        let rewrite = read(
            Event::PermissionRequest,
            OnFailure::Continue,
            &ran(
                Ended::Exit(0),
                r#"{"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                   "decision": {"behavior": "allow", "updatedInput": {"command": "ls"}}}}"#,
                "",
            ),
        );
        assert_eq!(rewrite.permission, Some((Permission::Allow, String::new())));
        assert_eq!(
            rewrite.updated_input,
            Some(serde_json::json!({"command": "ls"}))
        );
        let broken = read(
            Event::PreToolUse,
            OnFailure::Continue,
            &ran(Ended::Exit(0), "{not json", ""),
        );
        assert!(broken.error.unwrap().contains("not JSON"));
    }

    #[test]
    fn together_deny_beats_ask_beats_allow_and_the_first_of_equals_stays() {
        let mut all = Combined::default();
        let says = |p: Permission, r: &str| Said {
            permission: Some((p, r.into())),
            ..Said::default()
        };
        all.add(says(Permission::Allow, "fine"));
        all.add(says(Permission::Ask, "check"));
        assert_eq!(all.permission, Some((Permission::Ask, "check".into())));
        all.add(says(Permission::Deny, "no"));
        all.add(says(Permission::Allow, "fine again"));
        all.add(says(Permission::Deny, "no again"));
        assert_eq!(all.permission, Some((Permission::Deny, "no".into())));
        all.add(Said {
            block: Some("a".into()),
            ..Said::default()
        });
        all.add(Said {
            block: Some("b".into()),
            ..Said::default()
        });
        assert_eq!(all.block.as_deref(), Some("a\nb"));
    }

    #[test]
    fn an_updated_input_counts_with_allow_and_ask_not_deny() {
        let says = |p: Permission, command: &str| Said {
            permission: Some((p, String::new())),
            updated_input: Some(serde_json::json!({ "command": command })),
            ..Said::default()
        };
        let mut ask = Combined::default();
        ask.add(says(Permission::Deny, "from a deny"));
        ask.add(says(Permission::Ask, "from an ask"));
        ask.add(says(Permission::Allow, "from an allow"));
        assert_eq!(
            ask.updated_input,
            Some(serde_json::json!({"command": "from an ask"}))
        );
        assert_eq!(ask.permission, Some((Permission::Deny, String::new())));
    }
}
