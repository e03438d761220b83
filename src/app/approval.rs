//! The approval modal as a layer: while requests wait it takes every key, and answers go
//! out as an [`AgentCommand::Approval`] effect naming the request's id (the loop sends it;
//! the modal never runs anything itself).
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

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};
use tui_textarea::TextArea;

use super::agent_events::{subagent_call_mut, tool_cell_mut, tool_detail};
use super::event::Effect;
use super::keymap::{keymap, Action, Mode};
use super::state::{Activity, App, ToolStatus};
use crate::agent::{AgentCommand, ApprovalDecision};
use crate::permissions::Grant;

/// Lines the mouse wheel scrolls the modal by.
const WHEEL_LINES: u16 = 3;

/// A key while the modal is up.
pub fn handle_key(app: &mut App, key: KeyEvent, now: Instant, effects: &mut Vec<Effect>) {
    let Some(front) = app.approvals.queue.front() else {
        return;
    };
    let feedback_open = app.approvals.feedback.is_some();
    // A held key repeats; a repeat is not a choice.
    if key.kind == KeyEventKind::Release || (key.kind == KeyEventKind::Repeat && !feedback_open) {
        return;
    }
    let mode = if feedback_open {
        Mode::Feedback
    } else {
        Mode::Approval
    };
    let action = keymap()
        .lookup(&[mode], &key)
        .find(|b| b.applies(app))
        .map(|b| b.action);
    let page = page(app);
    match action {
        Some(Action::Deny) => answer(app, ApprovalDecision::Deny { feedback: None }, now, effects),
        Some(Action::PageUp) => scroll_up(app, page),
        Some(Action::PageDown) => scroll_down(app, page),
        Some(Action::ScrollUp) => scroll_up(app, 1),
        Some(Action::ScrollDown) => scroll_down(app, 1),
        _ if feedback_open => match action {
            Some(Action::SubmitFeedback) => {
                let text = app
                    .approvals
                    .feedback
                    .as_ref()
                    .map(|f| f.lines().join(" ").trim().to_string())
                    .unwrap_or_default();
                let feedback = (!text.is_empty()).then_some(text);
                answer(app, ApprovalDecision::Deny { feedback }, now, effects);
            }
            Some(Action::CloseFeedback) => app.approvals.feedback = None,
            Some(_) => {}
            None => {
                if !inserts_newline(&key) {
                    if let Some(field) = app.approvals.feedback.as_mut() {
                        field.input(key);
                    }
                }
            }
        },
        Some(Action::Approve) => answer(app, ApprovalDecision::Approve, now, effects),
        Some(Action::ApproveSession) => {
            if front.grants.is_empty() {
                app.hint =
                    Some("this request cannot be allowed for the session: y allows it once".into());
            } else {
                answer(app, ApprovalDecision::ApproveForSession, now, effects);
            }
        }
        Some(Action::ApproveProject) => {
            if front.grants.iter().any(savable) {
                answer(app, ApprovalDecision::ApproveForProject, now, effects);
            } else {
                let instead = if front.grants.is_empty() {
                    "y allows this once"
                } else {
                    "a allows this for the session, y once"
                };
                app.hint = Some(format!(
                    "only commands and MCP tools can be allowed for the project: {instead}"
                ));
            }
        }
        Some(Action::DenyWithFeedback) => {
            let mut field = TextArea::default();
            field.set_placeholder_text("why not? Enter denies with this, Esc goes back");
            app.approvals.feedback = Some(field);
            app.hint = None;
        }
        _ => {}
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

/// A paste while the modal is up: into the feedback field (as one line), else ignored.
pub fn paste(app: &mut App, text: &str) {
    if let Some(field) = app.approvals.feedback.as_mut() {
        let line = text.replace("\r\n", " ").replace(['\n', '\r'], " ");
        field.insert_str(line);
    }
}

/// The mouse wheel scrolls the modal's text.
pub fn mouse(app: &mut App, mouse: MouseEvent) {
    match mouse.kind {
        MouseEventKind::ScrollUp => scroll_up(app, WHEEL_LINES),
        MouseEventKind::ScrollDown => scroll_down(app, WHEEL_LINES),
        _ => {}
    }
}

/// Answer the front request: pop it, count it, note the decision on its tool cell.
pub fn answer(app: &mut App, decision: ApprovalDecision, now: Instant, effects: &mut Vec<Effect>) {
    let Some(request) = app.approvals.queue.pop_front() else {
        return;
    };
    let approvals = &mut app.approvals;
    approvals.answered += 1;
    approvals.scroll = 0;
    approvals.feedback = None;
    app.hint = None;
    let approved = !matches!(decision, ApprovalDecision::Deny { .. });
    let mut detail = None;
    if let Some(task_id) = &request.subagent {
        if let Some(call) = subagent_call_mut(app, task_id, &request.id) {
            call.status = if approved {
                ToolStatus::Running
            } else {
                ToolStatus::Refused
            };
        }
    } else if let Some(cell) = tool_cell_mut(app, &request.id) {
        // The agent's result settles the status; until then the call runs or was refused.
        cell.status = if approved {
            ToolStatus::Running
        } else {
            ToolStatus::Refused
        };
        cell.approved = approved;
        detail = Some((cell.name.clone(), cell.key_arg.clone()));
    }
    app.activity = if !app.approvals.queue.is_empty() {
        Activity::WaitingApproval { since: now }
    } else if approved {
        let (name, key_arg) = detail.unwrap_or_else(|| (request.tool.clone(), String::new()));
        Activity::Tool {
            detail: tool_detail(app, &name, &key_arg),
            name,
            since: now,
        }
    } else {
        Activity::Thinking { since: now }
    };
    effects.push(Effect::Agent(AgentCommand::Approval {
        id: request.id,
        decision,
    }));
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
fn page(app: &App) -> u16 {
    (app.size.1 / 2).saturating_sub(4).max(1)
}

/// The lines the modal's text has (summary and diff), a bound for scrolling.
fn content_lines(app: &App) -> u16 {
    app.approvals.queue.front().map_or(0, |r| {
        // The modal's text width at most (it is at most 96 wide, 4 of them frame).
        let width = usize::from(app.size.0.clamp(34, 96) - 8).max(1);
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

fn scroll_up(app: &mut App, lines: u16) {
    app.approvals.scroll = app.approvals.scroll.saturating_sub(lines);
}

fn scroll_down(app: &mut App, lines: u16) {
    let max = content_lines(app);
    app.approvals.scroll = app.approvals.scroll.saturating_add(lines).min(max);
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
