//! A form an MCP server asks the user to fill in (`elicitation/create`), as plain data.
//!
//! In: the server's configured name, its message and its `requestedSchema` (JSON), read
//! by [`Form::from_schema`] (`schema.rs`): a flat object of strings, numbers, integers,
//! booleans and single-choice enums, with titles, descriptions, bounds, formats and
//! defaults. Everything the server wrote is bounded and sanitised on the way in (a form of
//! at most [`MAX_FIELDS`] fields, texts cut to a few hundred characters, no escape
//! sequences), and anything else (a nested object, an array, a multi-select) is refused
//! with the reason, which rein answers with `decline`. Out: a [`Form`] the front ends lay
//! out, and a [`FormAnswer`] (accept with the content, decline, cancel) that goes back to
//! the server. `value.rs` checks what the user typed against a field
//! ([`Field::read`]), and [`Form::defaults`] is the headless answer of SEP-1034: accept
//! with every default when each required field has one.
//!
//! The form crosses the agent's event channel ([`crate::agent::AgentEvent::FormRequested`])
//! and its answer comes back by id, as an approval's does.

mod schema;
mod value;

use serde::Serialize;

/// The most fields a form may have; a larger one is declined.
pub const MAX_FIELDS: usize = 1_000;
/// The most characters of the server's message that are shown.
pub const MAX_MESSAGE_CHARS: usize = 2_000;
/// The most characters of a field's title (or name) that are shown.
pub const MAX_TITLE_CHARS: usize = 120;
/// The most characters of a field's description that are shown.
pub const MAX_DESCRIPTION_CHARS: usize = 500;
/// The longest field name accepted (it is the key the answer goes back under).
pub const MAX_NAME_CHARS: usize = 200;
/// The most choices an enum field may offer; a larger one is declined.
pub const MAX_CHOICES: usize = 500;
/// The longest text a text field takes (a default or what the user types).
pub const MAX_TEXT_CHARS: usize = 10_000;
/// The largest `requestedSchema` read, in bytes of JSON.
pub const MAX_SCHEMA_BYTES: usize = 4 * 1024 * 1024;

/// A server's form: who asks, what for, and the fields, in the server's order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Form {
    /// The server's configured name (rein's, not the server's own words).
    pub server: String,
    /// The server's message, sanitised and cut to [`MAX_MESSAGE_CHARS`].
    pub message: String,
    pub fields: Vec<Field>,
}

/// One field of a [`Form`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Field {
    /// The key the answer goes back under, exactly as the server named it (shown only
    /// through [`Field::label`]).
    pub name: String,
    /// What is shown for it: the server's title, else its name, sanitised and cut.
    pub label: String,
    /// The server's description, sanitised and cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub required: bool,
    pub kind: FieldKind,
}

/// What a field takes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FieldKind {
    /// A line of text.
    Text {
        #[serde(skip_serializing_if = "Option::is_none")]
        min_length: Option<usize>,
        #[serde(skip_serializing_if = "Option::is_none")]
        max_length: Option<usize>,
        #[serde(skip_serializing_if = "Option::is_none")]
        format: Option<TextFormat>,
        #[serde(skip_serializing_if = "Option::is_none")]
        default: Option<String>,
    },
    /// A number; with `integer`, a whole one.
    Number {
        integer: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        minimum: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        maximum: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        default: Option<f64>,
    },
    /// Yes or no.
    Boolean {
        #[serde(skip_serializing_if = "Option::is_none")]
        default: Option<bool>,
    },
    /// One of a list of values; `default` is an index into `choices`.
    Choice {
        choices: Vec<Choice>,
        #[serde(skip_serializing_if = "Option::is_none")]
        default: Option<usize>,
    },
}

/// One value an enum field offers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Choice {
    /// What goes back to the server.
    pub value: String,
    /// What is shown (its title, else the value), sanitised and cut.
    pub label: String,
}

/// The string formats rein checks (others are taken as plain text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TextFormat {
    Email,
    Uri,
    Date,
    DateTime,
}

/// The user's answer to a form.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", content = "content", rename_all = "snake_case")]
pub enum FormAnswer {
    /// Send these values (only the fields that have one).
    Accept(serde_json::Map<String, serde_json::Value>),
    /// The user said no.
    Decline,
    /// Dismissed without a choice (Esc, an interrupt, the call ended, no one to ask).
    Cancel,
}

impl Field {
    /// The field's default as the value that would be sent, when it has one.
    pub fn default_value(&self) -> Option<serde_json::Value> {
        match &self.kind {
            FieldKind::Text { default, .. } => default.clone().map(serde_json::Value::from),
            FieldKind::Number {
                integer, default, ..
            } => default.and_then(|n| number_value(n, *integer)),
            FieldKind::Boolean { default } => default.map(serde_json::Value::from),
            FieldKind::Choice { choices, default } => default
                .and_then(|i| choices.get(i))
                .map(|c| serde_json::Value::from(c.value.clone())),
        }
    }
}

impl Form {
    /// SEP-1034's headless answer: every field's default, when each required field has
    /// one; `None` when some required field has none (the form needs a person).
    pub fn defaults(&self) -> Option<serde_json::Map<String, serde_json::Value>> {
        let mut content = serde_json::Map::new();
        for field in &self.fields {
            match field.default_value() {
                Some(value) => {
                    content.insert(field.name.clone(), value);
                }
                None if field.required => return None,
                None => {}
            }
        }
        Some(content)
    }

    /// The labels of the required fields that have no default (what stops a headless
    /// accept), at most `max` of them.
    pub fn required_without_default(&self, max: usize) -> Vec<&str> {
        self.fields
            .iter()
            .filter(|f| f.required && f.default_value().is_none())
            .take(max)
            .map(|f| f.label.as_str())
            .collect()
    }
}

/// `n` as JSON: a whole number as an integer when `integer` (or when it is whole).
pub(crate) fn number_value(n: f64, integer: bool) -> Option<serde_json::Value> {
    if !n.is_finite() {
        return None;
    }
    if (integer || n.fract() == 0.0) && n.abs() < 9.0e15 {
        return Some(serde_json::Value::from(n as i64));
    }
    serde_json::Number::from_f64(n).map(serde_json::Value::Number)
}
