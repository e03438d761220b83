//! Checking what the user typed into a text or number field: the value that would be
//! sent, or why not, in words for the form's error line.

use serde_json::Value;

use super::{number_value, Field, FieldKind, TextFormat};

impl Field {
    /// What `typed` gives for this text or number field: `Ok(None)` for nothing typed in
    /// a field that may stay empty, `Err` why it cannot be sent. A boolean or choice
    /// field is not typed into: its value is the one chosen.
    pub fn read(&self, typed: &str) -> Result<Option<Value>, String> {
        let typed = typed.trim();
        if typed.is_empty() {
            return if self.required {
                Err("is required".into())
            } else {
                Ok(None)
            };
        }
        match &self.kind {
            FieldKind::Text {
                min_length,
                max_length,
                format,
                ..
            } => {
                let chars = typed.chars().count();
                if let Some(min) = min_length.filter(|m| chars < *m) {
                    return Err(format!("needs at least {min} characters"));
                }
                if let Some(max) = max_length.filter(|m| chars > *m) {
                    return Err(format!("takes at most {max} characters"));
                }
                if chars > super::MAX_TEXT_CHARS {
                    return Err(format!(
                        "takes at most {} characters",
                        super::MAX_TEXT_CHARS
                    ));
                }
                if let Some(format) = format {
                    check_format(*format, typed)?;
                }
                Ok(Some(Value::from(typed)))
            }
            FieldKind::Number {
                integer,
                minimum,
                maximum,
                ..
            } => {
                let n: f64 = typed
                    .parse()
                    .ok()
                    .filter(|n: &f64| n.is_finite())
                    .ok_or_else(|| "is not a number".to_string())?;
                if *integer && n.fract() != 0.0 {
                    return Err("must be a whole number".into());
                }
                if let Some(min) = minimum.filter(|m| n < *m) {
                    return Err(format!("must be at least {min}"));
                }
                if let Some(max) = maximum.filter(|m| n > *m) {
                    return Err(format!("must be at most {max}"));
                }
                number_value(n, *integer)
                    .map(Some)
                    .ok_or_else(|| "is not a number".to_string())
            }
            FieldKind::Boolean { .. } | FieldKind::Choice { .. } => {
                Err("is chosen, not typed".into())
            }
        }
    }
}

/// Whether `text` looks like the `format` asks (a light check, as a form's would be).
fn check_format(format: TextFormat, text: &str) -> Result<(), String> {
    let ok = match format {
        TextFormat::Email => text.split_once('@').is_some_and(|(user, host)| {
            !user.is_empty()
                && host.contains('.')
                && !host.starts_with('.')
                && !host.ends_with('.')
                && !text.contains(char::is_whitespace)
                && !host.contains('@')
        }),
        TextFormat::Uri => text.split_once(':').is_some_and(|(scheme, rest)| {
            scheme
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
                && !rest.is_empty()
                && !text.contains(char::is_whitespace)
        }),
        TextFormat::Date => is_date(text),
        TextFormat::DateTime => text
            .split_once(['T', 't'])
            .is_some_and(|(date, time)| is_date(date) && time.len() >= 5),
    };
    if ok {
        return Ok(());
    }
    Err(match format {
        TextFormat::Email => "is not an email address".into(),
        TextFormat::Uri => "is not a URI (scheme:rest)".into(),
        TextFormat::Date => "is not a date (YYYY-MM-DD)".into(),
        TextFormat::DateTime => "is not a date and time (YYYY-MM-DDTHH:MM...)".into(),
    })
}

/// `YYYY-MM-DD` with a month 1-12 and a day 1-31.
fn is_date(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return false;
    };
    let digits = |s: &str, n: usize| s.len() == n && s.chars().all(|c| c.is_ascii_digit());
    digits(y, 4)
        && digits(m, 2)
        && digits(d, 2)
        && (1..=12).contains(&m.parse::<u32>().unwrap_or(0))
        && (1..=31).contains(&d.parse::<u32>().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elicitation::Form;

    fn form(schema: serde_json::Value) -> Form {
        match Form::from_schema("s", "m", &schema, None) {
            Ok(form) => form,
            Err(why) => panic!("{why}"),
        }
    }

    #[test]
    fn typed_values_are_checked_against_the_field() {
        let f = form(serde_json::json!({"type": "object", "properties": {
            "email": {"type": "string", "format": "email"},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "name": {"type": "string", "minLength": 2, "maxLength": 4},
            "day": {"type": "string", "format": "date"},
        }, "required": ["age"]}));
        let field = |n: &str| f.fields.iter().find(|x| x.name == n).cloned();
        let (email, age, name, day) = (field("email"), field("age"), field("name"), field("day"));
        let (Some(email), Some(age), Some(name), Some(day)) = (email, age, name, day) else {
            panic!("fields missing");
        };
        assert_eq!(email.read("a@b.io"), Ok(Some(Value::from("a@b.io"))));
        assert!(email.read("a@b").is_err());
        assert_eq!(email.read(""), Ok(None));
        assert_eq!(age.read(""), Err("is required".into()));
        assert_eq!(age.read("42"), Ok(Some(Value::from(42))));
        assert!(age.read("4.5").is_err());
        assert!(age.read("151").is_err());
        assert!(age.read("NaN").is_err());
        assert!(name.read("a").is_err());
        assert!(name.read("abcde").is_err());
        assert_eq!(day.read("2025-02-30"), Ok(Some(Value::from("2025-02-30"))));
        assert!(day.read("2025-13-01").is_err());
    }

    #[test]
    fn defaults_answer_only_when_every_required_field_has_one() {
        let f = form(serde_json::json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
            "verified": {"type": "boolean", "default": true},
            "note": {"type": "string"},
        }, "required": ["name"]}));
        let content = f.defaults().unwrap_or_default();
        assert_eq!(
            Value::Object(content),
            serde_json::json!({"name": "John Doe", "age": 30, "score": 95.5,
                "status": "active", "verified": true})
        );
        let g = form(serde_json::json!({"type": "object", "properties": {
            "note": {"type": "string"}}, "required": ["note"]}));
        assert_eq!(g.defaults(), None);
        assert_eq!(g.required_without_default(3), vec!["note"]);
    }

    #[test]
    fn unsupported_and_oversized_schemas_are_refused_with_the_reason() {
        let nested = serde_json::json!({"type": "object", "properties": {
            "deep": {"type": "object", "properties": {"x": {"type": "string"}}}}});
        let why = Form::from_schema("s", "m", &nested, None)
            .err()
            .unwrap_or_default();
        assert!(why.contains("nested object"), "{why}");
        let many: serde_json::Map<String, Value> = (0..1001)
            .map(|i| (format!("f{i}"), serde_json::json!({"type": "string"})))
            .collect();
        let big = serde_json::json!({"type": "object", "properties": many});
        let why = Form::from_schema("s", "m", &big, None)
            .err()
            .unwrap_or_default();
        assert!(why.contains("1001 fields"), "{why}");
    }

    #[test]
    fn server_text_is_sanitised_and_cut() {
        let f = form(serde_json::json!({"type": "object", "properties": {
            "x": {"type": "string", "title": "\u{1b}[31mred\u{1b}[0m", "description": "d".repeat(5000)}}}));
        assert_eq!(f.fields[0].label, "^[[31mred^[[0m");
        assert!(f.fields[0]
            .description
            .as_ref()
            .is_some_and(|d| d.chars().count() <= 501));
        let long = Form::from_schema(
            "s",
            &"\u{1b}]52;c;x\u{7}".repeat(1000),
            &serde_json::json!({}),
            None,
        );
        let Ok(long) = long else { panic!("refused") };
        assert!(!long.message.contains('\u{1b}'));
        assert!(long.message.chars().count() <= 2001);
    }
}
