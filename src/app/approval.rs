//! The approval modal as a layer: while requests wait it takes every key, and an answer
//! comes back as [`ApprovalOutcome::Answer`] (the router pops the request and sends the
//! agent an `AgentCommand::Approval` naming its id; the modal never runs anything itself).
//! A leaf: the queue and the modal's own state are all it knows.
//!
//! States: the choices (`y` once, `a` for the session, `p` always in this project, `n`,
//! Esc or Ctrl-C deny, `e` opens the feedback field), and the one-line feedback field (Enter
//! denies with its text, Esc goes back to the choices). Nothing but an explicit choice
//! approves: unbound keys, key repeats and pastes do nothing. An answer pops the front
//! request; the next one in the queue shows as "2 of 3".
//!
//! A call to a tool from an MCP server carries its arguments; [`mcp_args_lines`] turns
//! them into the indented JSON the modal shows (long strings cut with a marker, very long
//! documents cut after [`ARGS_MAX_LINES`]), and scrolling reaches its end as for a diff.

use std::collections::VecDeque;
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};
use tui_textarea::TextArea;

use super::keymap::{keymap, Action, Mode};
use rein_core::agent::ApprovalDecision;
use rein_core::permissions::Grant;

/// Lines the mouse wheel scrolls the modal by.
const WHEEL_LINES: u16 = 3;

/// Approval requests, answered in the order the model asked.
#[derive(Default)]
pub struct Approvals {
    pub queue: VecDeque<PendingApproval>,
    /// How many requests the current batch had (for "1 of 3"), and how many are answered.
    pub batch_total: usize,
    pub answered: usize,
    /// The one-line "deny and tell the agent why" field, while it is open.
    pub feedback: Option<TextArea<'static>>,
    /// Lines the modal's command or diff is scrolled by.
    pub scroll: u16,
}

/// A question (an approval, the plan review) that opens this soon after a character was
/// typed opened while the user was typing ([`crate::app::state::App::typing_past`]).
pub const TYPING_WINDOW: Duration = Duration::from_millis(1000);
/// A pause this long ends the typing: the next key answers.
pub const TYPING_PAUSE: Duration = Duration::from_millis(500);
/// The hint while the user's keys go past the modal into the input box.
pub const TYPING_HINT: &str =
    "a question opened while you typed: your keys went to the input; pause, then answer it";

/// Whether `key` is typing (a character, Enter, Backspace, Tab), which the guard keeps from
/// answering, rather than a deliberate key such as Esc or a scroll.
pub fn is_typing(key: &KeyEvent) -> bool {
    let chord = key
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    match key.code {
        KeyCode::Char(_) => !chord,
        KeyCode::Enter | KeyCode::Backspace | KeyCode::Tab => true,
        _ => false,
    }
}

/// One approval request waiting for the user; answered by its `id`.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingApproval {
    pub id: String,
    pub tool: String,
    /// The full command, or the path for file writes.
    pub summary: String,
    /// Which part of the command, which rule.
    pub reason: String,
    /// What "allow for the session" (and "always in this project") would add.
    pub grants: Vec<Grant>,
    /// A unified diff of the change, for file writes.
    pub preview: Option<String>,
    /// Set when a subagent asks: the id of its `task` call.
    pub subagent: Option<String>,
    /// For a tool from an MCP server: server, tool, arguments (shown as formatted JSON).
    pub mcp: Option<rein_core::permissions::tools::McpCall>,
}

/// What a key, paste or wheel turn in the modal leads to.
#[derive(Debug, Clone, PartialEq)]
pub enum ApprovalOutcome {
    /// Nothing to tell the router (the modal may have scrolled, or its field changed).
    Stay,
    /// The "deny and say why" field opened (the hint under the input goes).
    FeedbackOpened,
    /// A one-line hint under the input: why this choice is not offered.
    Hint(String),
    /// The front request is answered: the router pops it and tells the agent.
    Answer(ApprovalDecision),
}

/// The keymap modes of the modal: its choices, or its feedback field while that is open.
pub const MODES: &[Mode] = &[Mode::Approval];
/// The keymap modes while the "deny and say why" field is open.
pub const FEEDBACK_MODES: &[Mode] = &[Mode::Feedback];

/// What the footer names while the modal is on top.
pub const FOOTER: &[(Mode, Action)] = &[
    (Mode::Approval, Action::Deny),
    (Mode::Approval, Action::PageDown),
];
/// What the footer names while the feedback field is open.
pub const FEEDBACK_FOOTER: &[(Mode, Action)] = &[
    (Mode::Feedback, Action::SubmitFeedback),
    (Mode::Feedback, Action::CloseFeedback),
];

impl Approvals {
    /// A key while the modal is up; `size` is the terminal's (a page is about half of it),
    /// `input` the input box, which the keymap's conditions read.
    pub fn handle_key(
        &mut self,
        key: &KeyEvent,
        size: (u16, u16),
        input: &TextArea<'_>,
    ) -> ApprovalOutcome {
        let Some(front) = self.queue.front() else {
            return ApprovalOutcome::Stay;
        };
        let feedback_open = self.feedback.is_some();
        // A held key repeats; a repeat is not a choice.
        if key.kind == KeyEventKind::Release || (key.kind == KeyEventKind::Repeat && !feedback_open)
        {
            return ApprovalOutcome::Stay;
        }
        let modes = if feedback_open { FEEDBACK_MODES } else { MODES };
        let action = keymap().action(modes, key, input);
        let page = page(size);
        match action {
            Some(Action::Deny) => {
                return ApprovalOutcome::Answer(ApprovalDecision::Deny { feedback: None })
            }
            Some(Action::PageUp) => self.scroll_up(page),
            Some(Action::PageDown) => self.scroll_down(page, size),
            Some(Action::ScrollUp) => self.scroll_up(1),
            Some(Action::ScrollDown) => self.scroll_down(1, size),
            _ if feedback_open => match action {
                Some(Action::SubmitFeedback) => {
                    let text = self
                        .feedback
                        .as_ref()
                        .map(|f| f.lines().join(" ").trim().to_string())
                        .unwrap_or_default();
                    let feedback = (!text.is_empty()).then_some(text);
                    return ApprovalOutcome::Answer(ApprovalDecision::Deny { feedback });
                }
                Some(Action::CloseFeedback) => self.feedback = None,
                Some(_) => {}
                None => {
                    if !inserts_newline(key) {
                        if let Some(field) = self.feedback.as_mut() {
                            field.input(*key);
                        }
                    }
                }
            },
            Some(Action::Approve) => return ApprovalOutcome::Answer(ApprovalDecision::Approve),
            Some(Action::ApproveSession) => {
                return if front.grants.is_empty() {
                    ApprovalOutcome::Hint(
                        "this request cannot be allowed for the session: y allows it once".into(),
                    )
                } else {
                    ApprovalOutcome::Answer(ApprovalDecision::ApproveForSession)
                };
            }
            Some(Action::ApproveProject) => {
                if front.grants.iter().any(savable) {
                    return ApprovalOutcome::Answer(ApprovalDecision::ApproveForProject);
                }
                let instead = if front.grants.is_empty() {
                    "y allows this once"
                } else {
                    "a allows this for the session, y once"
                };
                return ApprovalOutcome::Hint(format!(
                    "only commands and MCP tools can be allowed for the project: {instead}"
                ));
            }
            Some(Action::DenyWithFeedback) => {
                let mut field = TextArea::default();
                field.set_placeholder_text("why not? Enter denies with this, Esc goes back");
                self.feedback = Some(field);
                return ApprovalOutcome::FeedbackOpened;
            }
            _ => {}
        }
        ApprovalOutcome::Stay
    }

    /// A paste while the modal is up: into the feedback field (as one line), else ignored.
    pub fn paste(&mut self, text: &str) {
        if let Some(field) = self.feedback.as_mut() {
            let line = text.replace("\r\n", " ").replace(['\n', '\r'], " ");
            field.insert_str(line);
        }
    }

    /// The mouse wheel scrolls the modal's text.
    pub fn mouse(&mut self, mouse: &MouseEvent, size: (u16, u16)) {
        match mouse.kind {
            MouseEventKind::ScrollUp => self.scroll_up(WHEEL_LINES),
            MouseEventKind::ScrollDown => self.scroll_down(WHEEL_LINES, size),
            _ => {}
        }
    }

    /// The front request is answered: pop it (the next shows as "2 of 3"), and the modal's
    /// scroll and field start over.
    pub fn pop_answered(&mut self) -> Option<PendingApproval> {
        let request = self.queue.pop_front()?;
        self.answered += 1;
        self.scroll = 0;
        self.feedback = None;
        Some(request)
    }

    /// The lines the modal's text has (summary and diff), a bound for scrolling.
    fn content_lines(&self, size: (u16, u16)) -> u16 {
        self.queue.front().map_or(0, |r| {
            // The modal's text width at most (it is at most 96 wide, 4 of them frame).
            let width = usize::from(size.0.clamp(34, 96) - 8).max(1);
            let mcp = r.mcp.as_ref().map_or(0, |call| {
                mcp_args_lines(&call.args)
                    .iter()
                    .map(|line| 1 + line.chars().count() / width)
                    .sum::<usize>()
                    + 1
            });
            let lines = r.summary.lines().count()
                + r.reason.lines().count()
                + r.preview.as_deref().map_or(0, |p| p.lines().count())
                + mcp;
            u16::try_from(lines).unwrap_or(u16::MAX)
        })
    }

    fn scroll_up(&mut self, lines: u16) {
        self.scroll = self.scroll.saturating_sub(lines);
    }

    fn scroll_down(&mut self, lines: u16, size: (u16, u16)) {
        let max = self.content_lines(size);
        self.scroll = self.scroll.saturating_add(lines).min(max);
    }
}

/// Keys that mean a line break (the text area's Ctrl-M, and Ctrl-J, which breaks lines in
/// the input box): the feedback field is one line, so they do nothing there.
fn inserts_newline(key: &KeyEvent) -> bool {
    match key.code {
        KeyCode::Enter | KeyCode::Char('\n' | '\r') => true,
        KeyCode::Char('m' | 'j') => key.modifiers.contains(KeyModifiers::CONTROL),
        _ => false,
    }
}

/// Whether "always allow in this project" can save `grant` (a command or tool rule).
pub fn savable(grant: &Grant) -> bool {
    matches!(grant, Grant::Bash(_) | Grant::Tool(_))
}

/// The longest string argument shown whole, in characters; longer ones are cut.
pub const ARGS_STRING_MAX: usize = 300;
/// The most lines of arguments shown; the rest is counted in a last line.
pub const ARGS_MAX_LINES: usize = 1000;

/// An MCP call's arguments as indented JSON, one entry a line: strings longer than
/// [`ARGS_STRING_MAX`] characters end in "… [N more characters]", and past
/// [`ARGS_MAX_LINES`] lines a last line says how many were left out.
pub fn mcp_args_lines(args: &serde_json::Value) -> Vec<String> {
    let cut = cut_strings(args);
    let text = serde_json::to_string_pretty(&cut).unwrap_or_else(|_| cut.to_string());
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.len() > ARGS_MAX_LINES {
        let left = lines.len() - ARGS_MAX_LINES;
        lines.truncate(ARGS_MAX_LINES);
        lines.push(format!("… [{left} more lines]"));
    }
    lines
}

fn cut_strings(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) => match s.char_indices().nth(ARGS_STRING_MAX) {
            Some((end, _)) => {
                let more = s[end..].chars().count();
                Value::String(format!("{}… [{more} more characters]", &s[..end]))
            }
            None => value.clone(),
        },
        Value::Array(items) => Value::Array(items.iter().map(cut_strings).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), cut_strings(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A page of the modal: about half the terminal.
fn page(size: (u16, u16)) -> u16 {
    (size.1 / 2).saturating_sub(4).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_are_indented_json_with_long_strings_cut() {
        let long = "é".repeat(ARGS_STRING_MAX + 25);
        let lines = mcp_args_lines(&json!({"a": {"b": [1, "x"]}, "long": long}));
        assert_eq!(lines[0], "{");
        assert_eq!(lines[1], "  \"a\": {");
        assert_eq!(lines[2], "    \"b\": [");
        assert_eq!(lines[3], "      1,");
        let cut = lines.iter().find(|l| l.contains("\"long\"")).unwrap();
        assert_eq!(
            *cut,
            format!(
                "  \"long\": \"{}… [25 more characters]\"",
                "é".repeat(ARGS_STRING_MAX)
            )
        );
        assert_eq!(lines.last().map(String::as_str), Some("}"));
        // A string of exactly the limit is whole; newlines stay escaped on one line.
        let whole = "x".repeat(ARGS_STRING_MAX);
        assert_eq!(mcp_args_lines(&json!(whole)), [format!("\"{whole}\"")]);
        assert_eq!(
            mcp_args_lines(&json!({"t": "a\nb"})),
            ["{", "  \"t\": \"a\\nb\"", "}"]
        );
    }

    #[test]
    fn very_long_arguments_stop_after_the_line_limit() {
        let items: Vec<u32> = (0..2000).collect();
        let lines = mcp_args_lines(&json!(items));
        assert_eq!(lines.len(), ARGS_MAX_LINES + 1);
        // 2000 items and two brackets.
        assert_eq!(
            lines.last().map(String::as_str),
            Some(format!("… [{} more lines]", 2002 - ARGS_MAX_LINES).as_str())
        );
    }
}
