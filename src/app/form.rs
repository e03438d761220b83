//! An MCP server's form as a layer (elicitation): while forms wait it takes every key,
//! and an answer comes back as [`FormOutcome::Answer`] (the router pops the form and sends
//! the agent an `AgentCommand::FormAnswer` naming its id). A leaf: the forms and their
//! values are all it knows.
//!
//! One field is chosen at a time (Tab, Down / Shift-Tab, Up; PgUp, PgDn by a page). A text
//! or number field takes the keys bound nowhere as typing and pastes (one line, cut at
//! [`MAX_TEXT_CHARS`]); Backspace deletes. A yes/no field toggles with Space or Left and
//! Right; an enum field steps through its choices with Left and Right. Every field starts
//! with the server's default. Ctrl-S sends the answers when every field reads right
//! (`Field::read`), else the first wrong field is chosen and its error shown; Ctrl-D
//! declines; Esc or Ctrl-C cancels. Key repeats and the tail of a paste answer nothing.
//! A form whose call ended is withdrawn by the router ([`Forms::close`]).

use std::collections::VecDeque;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};
use tui_textarea::TextArea;

use super::keymap::{keymap, Action, Mode};
use rein_core::elicitation::{FieldKind, Form, FormAnswer, MAX_TEXT_CHARS};

/// The keymap modes of a form.
pub const MODES: &[Mode] = &[Mode::Form];

/// What the footer names while a form is on top.
pub const FOOTER: &[(Mode, Action)] = &[
    (Mode::Form, Action::FormAccept),
    (Mode::Form, Action::FormDecline),
    (Mode::Form, Action::FormCancel),
    (Mode::Form, Action::FormNext),
];

/// The servers' forms waiting for the user, oldest first (the first is shown).
#[derive(Debug, Default)]
pub struct Forms {
    pub queue: VecDeque<OpenForm>,
}

/// One form and what the user has entered so far.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenForm {
    pub id: String,
    pub form: Form,
    /// One per field, in the form's order.
    pub values: Vec<Value>,
    /// The chosen field.
    pub chosen: usize,
    /// Why the chosen field cannot be sent, after a try.
    pub error: Option<String>,
}

/// What a field holds now.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Typed text (a text or number field).
    Typed(String),
    /// Yes, no, or not set.
    Flag(Option<bool>),
    /// The index of the chosen choice, or none yet.
    Choice(Option<usize>),
}

/// What a key, paste or wheel turn in a form leads to.
#[derive(Debug, Clone, PartialEq)]
pub enum FormOutcome {
    Stay,
    /// The first form is answered: the router pops it and tells the agent.
    Answer(FormAnswer),
}

impl OpenForm {
    /// The form `id`, every field at the server's default.
    pub fn new(id: String, form: Form) -> OpenForm {
        let values = form
            .fields
            .iter()
            .map(|f| match &f.kind {
                FieldKind::Text { default, .. } => {
                    Value::Typed(default.clone().unwrap_or_default())
                }
                FieldKind::Number { default, .. } => Value::Typed(
                    f.default_value()
                        .filter(|_| default.is_some())
                        .map(|v| v.to_string())
                        .unwrap_or_default(),
                ),
                FieldKind::Boolean { default } => Value::Flag(*default),
                FieldKind::Choice { default, .. } => Value::Choice(*default),
            })
            .collect();
        OpenForm {
            id,
            form,
            values,
            chosen: 0,
            error: None,
        }
    }

    /// The answer to send, or the first field that cannot be sent and why.
    pub fn content(&self) -> Result<serde_json::Map<String, serde_json::Value>, (usize, String)> {
        let mut content = serde_json::Map::new();
        for (i, (field, value)) in self.form.fields.iter().zip(&self.values).enumerate() {
            let read = match (value, &field.kind) {
                (Value::Typed(text), _) => field.read(text),
                (Value::Flag(Some(b)), _) => Ok(Some(serde_json::Value::from(*b))),
                (Value::Choice(Some(c)), FieldKind::Choice { choices, .. }) => Ok(choices
                    .get(*c)
                    .map(|c| serde_json::Value::from(c.value.clone()))),
                (Value::Flag(None) | Value::Choice(_), _) if field.required => {
                    Err("is required".to_string())
                }
                (Value::Flag(None) | Value::Choice(_), _) => Ok(None),
            };
            match read {
                Ok(Some(v)) => {
                    content.insert(field.name.clone(), v);
                }
                Ok(None) => {}
                Err(why) => return Err((i, format!("{} {why}", field.label))),
            }
        }
        Ok(content)
    }

    fn step(&mut self, by: isize) {
        let n = self.form.fields.len();
        if n == 0 {
            return;
        }
        let next = self.chosen.saturating_add_signed(by).min(n - 1);
        if next != self.chosen {
            self.chosen = next;
            self.error = None;
        }
    }

    /// Left/Right/Space on the chosen field: the next or previous choice, yes/no.
    fn turn(&mut self, forward: bool) {
        let Some(field) = self.form.fields.get(self.chosen) else {
            return;
        };
        let Some(value) = self.values.get_mut(self.chosen) else {
            return;
        };
        match (value, &field.kind) {
            (Value::Flag(flag), _) => *flag = Some(!flag.unwrap_or(false)),
            (Value::Choice(choice), FieldKind::Choice { choices, .. }) if !choices.is_empty() => {
                let last = choices.len() - 1;
                *choice = Some(match (*choice, forward) {
                    (None, true) => 0,
                    (None, false) => last,
                    (Some(c), true) => (c + 1).min(last),
                    (Some(c), false) => c.saturating_sub(1),
                });
            }
            _ => {}
        }
        self.error = None;
    }

    /// Type `text` into the chosen field, when it is typed into.
    fn type_text(&mut self, text: &str) {
        if let Some(Value::Typed(typed)) = self.values.get_mut(self.chosen) {
            let room = MAX_TEXT_CHARS.saturating_sub(typed.chars().count());
            // One line: a pasted newline is a space; other controls are dropped.
            typed.extend(
                text.chars()
                    .map(|c| {
                        if c == '\n' || c == '\r' || c == '\t' {
                            ' '
                        } else {
                            c
                        }
                    })
                    .filter(|c| !c.is_control())
                    .take(room),
            );
            self.error = None;
        }
    }

    fn backspace(&mut self) {
        if let Some(Value::Typed(typed)) = self.values.get_mut(self.chosen) {
            typed.pop();
            self.error = None;
        }
    }
}

impl Forms {
    /// A form arrived: it waits behind those already open.
    pub fn open(&mut self, id: String, form: Form) {
        self.queue.push_back(OpenForm::new(id, form));
    }

    /// The form `id` is withdrawn (its call ended); true when it was open.
    pub fn close(&mut self, id: &str) -> bool {
        let before = self.queue.len();
        self.queue.retain(|f| f.id != id);
        self.queue.len() != before
    }

    /// A key while a form is on top; `rows` is the terminal's height (a page of fields
    /// is about a third of it).
    pub fn handle_key(&mut self, key: &KeyEvent, rows: u16, input: &TextArea<'_>) -> FormOutcome {
        if matches!(key.kind, KeyEventKind::Release) {
            return FormOutcome::Stay;
        }
        let repeat = key.kind == KeyEventKind::Repeat;
        let Some(open) = self.queue.front_mut() else {
            return FormOutcome::Stay;
        };
        let page = isize::try_from((rows / 3).max(1)).unwrap_or(1);
        match keymap().action(MODES, key, input) {
            // A held key repeats; a repeat is not an answer.
            Some(Action::FormAccept | Action::FormDecline | Action::FormCancel) if repeat => {}
            Some(Action::FormAccept) => match open.content() {
                Ok(content) => return FormOutcome::Answer(FormAnswer::Accept(content)),
                Err((field, why)) => {
                    open.chosen = field;
                    open.error = Some(why);
                }
            },
            Some(Action::FormDecline) => return FormOutcome::Answer(FormAnswer::Decline),
            Some(Action::FormCancel) => return FormOutcome::Answer(FormAnswer::Cancel),
            Some(Action::FormNext) => open.step(1),
            Some(Action::FormPrev) => open.step(-1),
            Some(Action::PageDown) => open.step(page),
            Some(Action::PageUp) => open.step(-page),
            Some(Action::FormChoiceNext) => open.turn(true),
            Some(Action::FormChoicePrev) => open.turn(false),
            Some(_) => {}
            None => match key.code {
                KeyCode::Backspace => open.backspace(),
                KeyCode::Char(' ')
                    if !matches!(open.values.get(open.chosen), Some(Value::Typed(_))) =>
                {
                    open.turn(true)
                }
                KeyCode::Char(c)
                    if !key
                        .modifiers
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
                {
                    open.type_text(&c.to_string())
                }
                _ => {}
            },
        }
        FormOutcome::Stay
    }

    /// A paste goes into the chosen text field, on one line.
    pub fn paste(&mut self, text: &str) {
        if let Some(open) = self.queue.front_mut() {
            open.type_text(text);
        }
    }

    /// The mouse wheel moves between the fields.
    pub fn mouse(&mut self, mouse: &MouseEvent) {
        if let Some(open) = self.queue.front_mut() {
            match mouse.kind {
                MouseEventKind::ScrollUp => open.step(-1),
                MouseEventKind::ScrollDown => open.step(1),
                _ => {}
            }
        }
    }
}
