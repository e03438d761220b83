//! The TOML config files: the user's `config.toml` and the project's `.rein/config.toml`.
//!
//! A file is parsed into a plain `toml::Table` and walked by hand against [`KEYS`], so each
//! error can name the file and the `section.key` at fault. Unknown keys and sections are
//! errors (a typo must not pass silently), except the sections a later rein will read,
//! which are accepted and ignored. A missing file yields an empty layer.

use std::path::Path;

use super::{ConfigError, Layer, Source, Sourced};

/// How a key's value is checked, and where it goes once it passes.
#[derive(Clone, Copy)]
enum Kind {
    /// Any string (an empty one included).
    Text(fn(&mut Layer, Sourced<String>)),
    /// An integer in `min..=max`.
    Int {
        min: u64,
        max: u64,
        store: fn(&mut Layer, Sourced<u64>),
    },
}

/// One key a config file may hold; `section` is `""` for a top-level key.
struct Key {
    section: &'static str,
    name: &'static str,
    kind: Kind,
}

/// The largest value an integer setting stored as `u32` may take.
const U32_MAX: u64 = u32::MAX as u64;
/// The longest timeout a setting may ask for: one day (longer ones overflow clocks and
/// are never meant).
pub(super) const MAX_TIMEOUT_SECS: u64 = 86_400;
/// The largest context window accepted: far beyond any model, small enough for arithmetic.
pub(super) const MAX_CONTEXT_WINDOW: u64 = 1_000_000_000;

/// Every key the config files may hold. Adding a setting to the files is one row here.
const KEYS: &[Key] = &[
    Key {
        section: "",
        name: "base_url",
        kind: Kind::Text(|l, v| l.base_url = Some(v)),
    },
    Key {
        section: "",
        name: "api_key",
        kind: Kind::Text(|l, v| l.api_key = Some(v)),
    },
    Key {
        section: "",
        name: "model",
        kind: Kind::Text(|l, v| l.model = Some(v)),
    },
    Key {
        section: "",
        name: "context_window",
        kind: Kind::Int {
            min: 1,
            max: MAX_CONTEXT_WINDOW,
            store: |l, v| l.context_window = Some(v),
        },
    },
    Key {
        section: "client",
        name: "idle_timeout_secs",
        kind: Kind::Int {
            min: 1,
            max: MAX_TIMEOUT_SECS,
            store: |l, v| l.idle_timeout_secs = Some(v),
        },
    },
    Key {
        section: "client",
        name: "connect_timeout_secs",
        kind: Kind::Int {
            min: 1,
            max: MAX_TIMEOUT_SECS,
            store: |l, v| l.connect_timeout_secs = Some(v),
        },
    },
    Key {
        section: "client",
        name: "max_tries",
        kind: Kind::Int {
            min: 1,
            max: 10,
            store: |l, v| l.max_tries = Some(narrow(v)),
        },
    },
    Key {
        section: "tools",
        name: "bash_timeout_secs",
        kind: Kind::Int {
            min: 1,
            max: MAX_TIMEOUT_SECS,
            store: |l, v| l.bash_timeout_secs = Some(v),
        },
    },
    Key {
        section: "agent",
        name: "max_steps",
        kind: Kind::Int {
            min: 1,
            max: U32_MAX,
            store: |l, v| l.max_steps = Some(narrow(v)),
        },
    },
];

/// Sections a later rein reads. Their contents are accepted and ignored, so a config
/// written for a newer version still loads.
const RESERVED_SECTIONS: &[&str] = &["permissions", "sandbox", "context", "subagent", "ui"];

/// Read one config file into a layer whose values carry `source`. A missing file is an
/// empty layer.
pub(super) fn read(path: &Path, source: &Source) -> Result<Layer, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Layer::default()),
        Err(error) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                error,
            })
        }
    };
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| syntax_error(path, &text, &e))?;
    walk(&table, path, source)
}

/// Check every entry of a parsed file against [`KEYS`] and collect the values.
fn walk(table: &toml::Table, path: &Path, source: &Source) -> Result<Layer, ConfigError> {
    let mut layer = Layer::default();
    for (name, value) in table {
        if let Some(key) = find("", name) {
            store(key, value, path, source, &mut layer)?;
            continue;
        }
        let is_section = sections().contains(&name.as_str());
        if !is_section && !RESERVED_SECTIONS.contains(&name.as_str()) {
            return Err(unknown_top_level(path, name, value));
        }
        let Some(entries) = value.as_table() else {
            return Err(ConfigError::Value {
                path: path.to_path_buf(),
                key: name.clone(),
                problem: format!("expected a table [{name}], got {}", describe(value)),
            });
        };
        if !is_section {
            continue;
        }
        for (entry, value) in entries {
            let key = find(name, entry).ok_or_else(|| ConfigError::UnknownKey {
                path: path.to_path_buf(),
                key: format!("{name}.{entry}"),
                known: format!("known keys in [{name}]: {}", key_names(name)),
            })?;
            store(key, value, path, source, &mut layer)?;
        }
    }
    Ok(layer)
}

/// Check `value` against `key`'s kind and put it in `layer`.
fn store(
    key: &Key,
    value: &toml::Value,
    path: &Path,
    source: &Source,
    layer: &mut Layer,
) -> Result<(), ConfigError> {
    let problem = match (key.kind, value) {
        (Kind::Text(set), toml::Value::String(s)) => {
            set(layer, Sourced::new(s.clone(), source.clone()));
            return Ok(());
        }
        (Kind::Text(_), _) => format!("expected a string, got {}", describe(value)),
        (Kind::Int { min, max, store }, toml::Value::Integer(n)) => {
            match u64::try_from(*n).ok().filter(|n| (min..=max).contains(n)) {
                Some(n) => {
                    store(layer, Sourced::new(n, source.clone()));
                    return Ok(());
                }
                None => format!("expected {}, got {n}", expected_int(min, max)),
            }
        }
        (Kind::Int { min, max, .. }, _) => {
            format!(
                "expected {}, got {}",
                expected_int(min, max),
                describe(value)
            )
        }
    };
    let key = match key.section {
        "" => key.name.to_string(),
        section => format!("{section}.{}", key.name),
    };
    Err(ConfigError::Value {
        path: path.to_path_buf(),
        key,
        problem,
    })
}

/// What an integer key accepts, in words: "a positive integer" or "an integer from 1 to 10".
pub(super) fn expected_int(min: u64, max: u64) -> String {
    if min == 1 && max == u64::MAX {
        "a positive integer".to_string()
    } else {
        format!("an integer from {min} to {max}")
    }
}

fn find(section: &str, name: &str) -> Option<&'static Key> {
    KEYS.iter()
        .find(|key| key.section == section && key.name == name)
}

/// The sections [`KEYS`] uses, in table order.
fn sections() -> Vec<&'static str> {
    let mut sections: Vec<&'static str> = Vec::new();
    for key in KEYS {
        if !key.section.is_empty() && !sections.contains(&key.section) {
            sections.push(key.section);
        }
    }
    sections
}

fn key_names(section: &str) -> String {
    let names: Vec<&str> = KEYS
        .iter()
        .filter(|key| key.section == section)
        .map(|key| key.name)
        .collect();
    names.join(", ")
}

fn section_list() -> String {
    let names: Vec<String> = sections().iter().map(|s| format!("[{s}]")).collect();
    names.join(", ")
}

fn unknown_top_level(path: &Path, name: &str, value: &toml::Value) -> ConfigError {
    if value.is_table() {
        ConfigError::UnknownSection {
            path: path.to_path_buf(),
            section: name.to_string(),
            known: format!("known sections: {}", section_list()),
        }
    } else {
        ConfigError::UnknownKey {
            path: path.to_path_buf(),
            key: name.to_string(),
            known: format!(
                "known top-level keys: {}; sections: {}",
                key_names(""),
                section_list()
            ),
        }
    }
}

/// A TOML value in words for an error message: `string "abc"`, `float 1.5`, `a table`.
fn describe(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => format!("string {s:?}"),
        toml::Value::Integer(n) => format!("integer {n}"),
        toml::Value::Float(_) => format!("float {value}"),
        toml::Value::Boolean(b) => format!("boolean {b}"),
        toml::Value::Datetime(d) => format!("date-time {d}"),
        toml::Value::Array(_) => "an array".to_string(),
        toml::Value::Table(_) => "a table".to_string(),
    }
}

/// toml's own `Display` spans several lines with a source excerpt; keep its message on one
/// line and add the line number from the error's span.
fn syntax_error(path: &Path, text: &str, error: &toml::de::Error) -> ConfigError {
    let message = error
        .message()
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    let line = error.span().map(|span| {
        let before = &text.as_bytes()[..span.start.min(text.len())];
        before.iter().filter(|&&b| b == b'\n').count() + 1
    });
    ConfigError::Syntax {
        path: path.to_path_buf(),
        message,
        line,
    }
}

/// Values bound for a `u32` setting were checked against [`U32_MAX`] or less.
fn narrow(v: Sourced<u64>) -> Sourced<u32> {
    Sourced::new(u32::try_from(v.value).unwrap_or(u32::MAX), v.source)
}
