//! Reading a server's `requestedSchema` into a [`Form`]: a flat object of primitive
//! fields, bounded and sanitised; anything else is refused with the reason.

use serde_json::Value;

use super::{
    Choice, Field, FieldKind, Form, TextFormat, MAX_CHOICES, MAX_DESCRIPTION_CHARS, MAX_FIELDS,
    MAX_MESSAGE_CHARS, MAX_NAME_CHARS, MAX_TEXT_CHARS, MAX_TITLE_CHARS,
};

/// Server text as shown: control and bidi characters made visible, on one line, cut.
fn shown(text: &str, max: usize) -> String {
    crate::text::clip(
        &crate::text::one_line(&crate::text::sanitize::sanitize(text)),
        max,
    )
}

impl Form {
    /// The form `server` asks for with `message` and `schema` (a JSON Schema object with
    /// `properties` and `required`), the fields in `order` where given (the order they
    /// came in on the wire), else in the schema's. `Err` says, in a sentence for the user,
    /// why rein cannot show it.
    pub fn from_schema(
        server: &str,
        message: &str,
        schema: &Value,
        order: Option<&[String]>,
    ) -> Result<Form, String> {
        let properties = match schema.get("properties") {
            Some(Value::Object(p)) => p,
            None => &serde_json::Map::new(),
            Some(_) => return Err("its schema's properties are not an object".into()),
        };
        if properties.len() > MAX_FIELDS {
            return Err(format!(
                "it asks for {} fields; rein shows at most {MAX_FIELDS}",
                properties.len()
            ));
        }
        let required: Vec<&str> = match schema.get("required") {
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let mut names: Vec<&String> = properties.keys().collect();
        if let Some(order) = order {
            let rank = |name: &str| order.iter().position(|o| o == name).unwrap_or(usize::MAX);
            names.sort_by_key(|n| rank(n));
        }
        let mut fields = Vec::with_capacity(names.len());
        for name in names {
            let Some(property) = properties.get(name) else {
                continue;
            };
            if name.chars().count() > MAX_NAME_CHARS {
                return Err(format!(
                    "a field's name is longer than {MAX_NAME_CHARS} characters"
                ));
            }
            let kind = field_kind(property)
                .map_err(|why| format!("its field {:?} {why}", shown(name, MAX_TITLE_CHARS)))?;
            let title = property.get("title").and_then(Value::as_str);
            fields.push(Field {
                name: name.clone(),
                label: shown(title.unwrap_or(name), MAX_TITLE_CHARS),
                description: property
                    .get("description")
                    .and_then(Value::as_str)
                    .map(|d| shown(d, MAX_DESCRIPTION_CHARS))
                    .filter(|d| !d.is_empty()),
                required: required.contains(&name.as_str()),
                kind,
            });
        }
        Ok(Form {
            server: server.to_string(),
            message: crate::text::clip(
                crate::text::sanitize::sanitize(message).trim(),
                MAX_MESSAGE_CHARS,
            ),
            fields,
        })
    }
}

/// What one property takes; `Err` ends in a phrase ("is an array, which ...").
fn field_kind(property: &Value) -> Result<FieldKind, String> {
    let kind = property.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "string" => {
            if let Some(choices) = choices(property)? {
                let default = property
                    .get("default")
                    .and_then(Value::as_str)
                    .and_then(|d| choices.iter().position(|c| c.value == d));
                return Ok(FieldKind::Choice { choices, default });
            }
            let length = |key: &str| {
                property
                    .get(key)
                    .and_then(Value::as_u64)
                    .map(|n| usize::try_from(n).unwrap_or(usize::MAX).min(MAX_TEXT_CHARS))
            };
            let format = match property.get("format").and_then(Value::as_str) {
                Some("email") => Some(TextFormat::Email),
                Some("uri") => Some(TextFormat::Uri),
                Some("date") => Some(TextFormat::Date),
                Some("date-time") => Some(TextFormat::DateTime),
                _ => None,
            };
            Ok(FieldKind::Text {
                min_length: length("minLength"),
                max_length: length("maxLength"),
                format,
                default: property
                    .get("default")
                    .and_then(Value::as_str)
                    .filter(|d| d.chars().count() <= MAX_TEXT_CHARS)
                    .map(str::to_string),
            })
        }
        "number" | "integer" => {
            let integer = kind == "integer";
            let bound = |key: &str| property.get(key).and_then(Value::as_f64);
            Ok(FieldKind::Number {
                integer,
                minimum: bound("minimum"),
                maximum: bound("maximum"),
                default: property
                    .get("default")
                    .and_then(Value::as_f64)
                    .filter(|n| n.is_finite() && (!integer || n.fract() == 0.0)),
            })
        }
        "boolean" => Ok(FieldKind::Boolean {
            default: property.get("default").and_then(Value::as_bool),
        }),
        "array" => Err("is a multiple choice (an array), which rein's forms do not offer".into()),
        "object" => Err("is a nested object, which rein's forms do not offer".into()),
        "" => Err("has no type".into()),
        other => Err(format!(
            "is of type {:?}, which rein's forms do not offer",
            shown(other, 40)
        )),
    }
}

/// The choices of an enum string (`enum` with `enumNames`, or `oneOf` of `const` and
/// `title`); `None` for a plain string.
fn choices(property: &Value) -> Result<Option<Vec<Choice>>, String> {
    let listed: Vec<(String, Option<&str>)> =
        if let Some(Value::Array(values)) = property.get("enum") {
            let names = property.get("enumNames").and_then(Value::as_array);
            values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let title = names.and_then(|n| n.get(i)).and_then(Value::as_str);
                    (v.as_str().map(str::to_string), title)
                })
                .map(|(v, t)| v.map(|v| (v, t)))
                .collect::<Option<_>>()
                .ok_or("offers a choice that is not a string")?
        } else if let Some(Value::Array(options)) = property.get("oneOf") {
            options
                .iter()
                .map(|o| {
                    let value = o.get("const").and_then(Value::as_str)?;
                    Some((value.to_string(), o.get("title").and_then(Value::as_str)))
                })
                .collect::<Option<_>>()
                .ok_or("offers a choice without a string const")?
        } else {
            return Ok(None);
        };
    if listed.is_empty() {
        return Err("offers no choices".into());
    }
    if listed.len() > MAX_CHOICES {
        return Err(format!(
            "offers {} choices; rein shows at most {MAX_CHOICES}",
            listed.len()
        ));
    }
    Ok(Some(
        listed
            .into_iter()
            .map(|(value, title)| Choice {
                label: shown(title.unwrap_or(&value), MAX_TITLE_CHARS),
                value,
            })
            .collect(),
    ))
}
