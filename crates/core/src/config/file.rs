//! rein's own keys in the TOML config files (the user's `config.toml` and the project's
//! `.rein/config.toml`), and the writer of the rules the approval prompt saves.
//!
//! `sources.rs` parses a file into a plain `toml::Table` and hands each top-level entry
//! that is not `[providers]` or `[mcp_servers]` to [`read_entry`], which checks it by hand
//! against [`KEYS`], so each error can name the file and the `section.key` at fault.
//! Unknown keys and sections are errors (a typo must not pass silently), except the
//! sections a later rein will read, which are accepted and ignored.

use std::path::Path;

use super::table::{describe, expected_int, in_file, is_variable_name, string, strings, Table};
use super::{
    BashRuleEntry, ConfigError, Layer, Source, Sourced, MAX_CONTEXT_WINDOW, MAX_TIMEOUT_SECS,
};
use crate::permissions::policy::RuleList;
use crate::permissions::tools::ToolRuleEntry;
use crate::permissions::RuleAction;
use crate::sandbox::SandboxMode;

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
    /// A TOML float strictly between `min` and `max` (an integer is refused, so `1` for
    /// `1.0` never passes silently).
    Float {
        min: f64,
        max: f64,
        store: fn(&mut Layer, Sourced<f64>),
    },
    /// `true` or `false`.
    Bool(fn(&mut Layer, Sourced<bool>)),
    /// An array of strings.
    List(fn(&mut Layer, Sourced<Vec<String>>)),
    /// An array of environment variable names (`[A-Za-z_][A-Za-z0-9_]*`).
    VarNames(fn(&mut Layer, Sourced<Vec<String>>)),
    /// `sandbox.mode`: one of `auto`, `required`, `off`.
    SandboxMode,
    /// `[[permissions.bash]]`: an array of `{ pattern, action }` tables.
    BashRules,
    /// `[[permissions.tools]]`: an array of `{ pattern, action }` tables on tool names.
    ToolRules,
    /// `ui.notifications`: `"unfocused"`, `"always"` or `"never"`; the booleans of older
    /// files still pass (`true` is `"unfocused"`, `false` is `"never"`).
    Notifications,
}

/// One key a config file may hold; `section` is `""` for a top-level key.
struct Key {
    section: &'static str,
    name: &'static str,
    kind: Kind,
}

/// The largest value an integer setting stored as `u32` may take.
const U32_MAX: u64 = u32::MAX as u64;

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
        name: "keepalive_timeout_secs",
        kind: Kind::Int {
            min: 1,
            max: MAX_TIMEOUT_SECS,
            store: |l, v| l.keepalive_timeout_secs = Some(v),
        },
    },
    Key {
        section: "client",
        name: "max_reply_mb",
        kind: Kind::Int {
            min: 1,
            max: 1024,
            store: |l, v| l.max_reply_mb = Some(v),
        },
    },
    Key {
        section: "client",
        name: "window_timeout_secs",
        kind: Kind::Int {
            min: 1,
            // A question asked at start and waited for by `rein config`: five minutes at
            // most, whoever set it (a project's file too).
            max: 300,
            store: |l, v| l.window_timeout_secs = Some(v),
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
        section: "client",
        name: "max_output_tokens",
        kind: Kind::Int {
            min: 0,
            max: 1_000_000,
            store: |l, v| l.max_output_tokens = Some(v),
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
        section: "tools",
        name: "env_passthrough",
        kind: Kind::VarNames(|l, v| l.env_passthrough = Some(v)),
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
    Key {
        section: "subagent",
        name: "max_steps",
        kind: Kind::Int {
            min: 1,
            max: U32_MAX,
            store: |l, v| l.subagent_max_steps = Some(narrow(v)),
        },
    },
    Key {
        section: "tools",
        name: "max_background",
        kind: Kind::Int {
            min: 1,
            max: 32,
            store: |l, v| l.max_background = Some(narrow(v)),
        },
    },
    Key {
        section: "subagent",
        name: "max_parallel",
        kind: Kind::Int {
            min: 1,
            max: 64,
            store: |l, v| l.subagent_max_parallel = Some(narrow(v)),
        },
    },
    Key {
        section: "instructions",
        name: "max_bytes",
        kind: Kind::Int {
            min: 0,
            max: 1024 * 1024,
            store: |l, v| l.instructions_max_bytes = Some(v),
        },
    },
    Key {
        section: "context",
        name: "cap_chars",
        kind: Kind::Int {
            min: 1_000,
            max: MAX_CONTEXT_WINDOW,
            store: |l, v| l.cap_chars = Some(v),
        },
    },
    Key {
        section: "context",
        name: "attach_max_bytes",
        kind: Kind::Int {
            min: 0,
            max: 16 * 1024 * 1024,
            store: |l, v| l.attach_max_bytes = Some(v),
        },
    },
    Key {
        section: "context",
        name: "attach_total_bytes",
        kind: Kind::Int {
            min: 0,
            max: 64 * 1024 * 1024,
            store: |l, v| l.attach_total_bytes = Some(v),
        },
    },
    Key {
        section: "context",
        name: "stub_chars",
        kind: Kind::Int {
            min: 0,
            max: MAX_CONTEXT_WINDOW,
            store: |l, v| l.stub_chars = Some(v),
        },
    },
    Key {
        section: "context",
        name: "keep_recent",
        kind: Kind::Int {
            min: 0,
            max: U32_MAX,
            store: |l, v| l.keep_recent = Some(v),
        },
    },
    Key {
        section: "context",
        name: "compact_at",
        kind: Kind::Float {
            min: 0.0,
            max: 1.0,
            store: |l, v| l.compact_at = Some(v),
        },
    },
    Key {
        section: "context",
        name: "compact_to",
        kind: Kind::Float {
            min: 0.0,
            max: 1.0,
            store: |l, v| l.compact_to = Some(v),
        },
    },
    Key {
        section: "context",
        name: "compact_model",
        kind: Kind::Text(|l, v| l.compact_model = Some(v)),
    },
    Key {
        section: "permissions",
        name: "bash",
        kind: Kind::BashRules,
    },
    Key {
        section: "permissions",
        name: "tools",
        kind: Kind::ToolRules,
    },
    Key {
        section: "permissions",
        name: "sensitive_reads",
        kind: Kind::List(|l, v| l.sensitive_reads = Some(v)),
    },
    Key {
        section: "sandbox",
        name: "mode",
        kind: Kind::SandboxMode,
    },
    Key {
        section: "sandbox",
        name: "network",
        kind: Kind::Bool(|l, v| l.sandbox_network = Some(v)),
    },
    Key {
        section: "sandbox",
        name: "writable",
        kind: Kind::List(|l, v| l.sandbox_writable = Some(v)),
    },
    Key {
        section: "sandbox",
        name: "hide_secrets",
        kind: Kind::Bool(|l, v| l.sandbox_hide_secrets = Some(v)),
    },
    Key {
        section: "checkpoints",
        name: "enabled",
        kind: Kind::Bool(|l, v| l.checkpoints_enabled = Some(v)),
    },
    Key {
        section: "checkpoints",
        name: "max_file_mib",
        kind: Kind::Int {
            min: 1,
            max: 64 * 1024,
            store: |l, v| l.checkpoints_max_file_mib = Some(v),
        },
    },
    Key {
        section: "checkpoints",
        name: "max_folder_files",
        kind: Kind::Int {
            min: 1,
            max: U32_MAX,
            store: |l, v| l.checkpoints_max_folder_files = Some(v),
        },
    },
    Key {
        section: "checkpoints",
        name: "quota_mib",
        kind: Kind::Int {
            min: 16,
            max: 16 * 1024 * 1024,
            store: |l, v| l.checkpoints_quota_mib = Some(v),
        },
    },
    Key {
        section: "ui",
        name: "bell",
        kind: Kind::Bool(|l, v| l.ui_bell = Some(v)),
    },
    Key {
        section: "ui",
        name: "input_history",
        kind: Kind::Bool(|l, v| l.ui_input_history = Some(v)),
    },
    Key {
        section: "ui",
        name: "notifications",
        kind: Kind::Notifications,
    },
    Key {
        section: "ui",
        name: "notify_after_secs",
        kind: Kind::Int {
            min: 0,
            max: MAX_TIMEOUT_SECS,
            store: |l, v| l.ui_notify_after_secs = Some(v),
        },
    },
];

/// Sections a later rein reads. Their contents are accepted and ignored, so a config
/// written for a newer version still loads.
const RESERVED_SECTIONS: &[&str] = &[];

/// Sections only the user's own file may set: a project must not loosen its own sandbox.
const USER_ONLY_SECTIONS: &[&str] = &["sandbox"];

/// One top-level entry of a file that is not another reader's table (`[providers]`,
/// `[mcp_servers]`), checked against [`KEYS`] and put in `layer`: a top-level key, a
/// section and its keys, or a reserved section (ignored). Anything else is an unknown key
/// or section.
pub(super) fn read_entry(
    name: &str,
    value: &toml::Value,
    path: &Path,
    source: &Source,
    layer: &mut Layer,
) -> Result<(), ConfigError> {
    if let Some(key) = find("", name) {
        return store(key, value, path, source, layer);
    }
    let is_section = sections().contains(&name);
    if !is_section && !RESERVED_SECTIONS.contains(&name) {
        return Err(unknown_top_level(path, name, value));
    }
    let section = Table::of(name, value, &format!("a table [{name}]")).map_err(in_file(path))?;
    if !is_section {
        return Ok(());
    }
    if USER_ONLY_SECTIONS.contains(&name) {
        if let Source::ProjectFile(_) = source {
            return Err(ConfigError::Value {
                path: path.to_path_buf(),
                key: format!("[{name}]"),
                problem: format!(
                    "[{name}] may only be set in your own config.toml, not in a project's (a project must not loosen its own sandbox)"
                ),
            });
        }
    }
    // The key as written (an unknown one unquoted), not as `Table::entries` quotes it.
    for (entry, value) in section.entries {
        let key = find(name, entry).ok_or_else(|| ConfigError::UnknownKey {
            path: path.to_path_buf(),
            key: format!("{name}.{entry}"),
            known: format!("known keys in [{name}]: {}", key_names(name)),
        })?;
        store(key, value, path, source, layer)?;
    }
    Ok(())
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
        (Kind::Text(set), _) => match string(value) {
            Ok(s) => {
                set(layer, Sourced::new(s, source.clone()));
                return Ok(());
            }
            Err(problem) => problem,
        },
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
        (Kind::Float { min, max, store }, toml::Value::Float(x)) if *x > min && *x < max => {
            store(layer, Sourced::new(*x, source.clone()));
            return Ok(());
        }
        (Kind::Float { min, max, .. }, _) => {
            format!(
                "expected {}, got {}",
                expected_float(min, max),
                describe(value)
            )
        }
        (Kind::Bool(store), toml::Value::Boolean(b)) => {
            store(layer, Sourced::new(*b, source.clone()));
            return Ok(());
        }
        (Kind::Bool(_), _) => format!("expected true or false, got {}", describe(value)),
        (Kind::List(store), _) => match strings(value) {
            Ok(list) => {
                store(layer, Sourced::new(list, source.clone()));
                return Ok(());
            }
            Err(problem) => problem,
        },
        (Kind::VarNames(store), toml::Value::Array(items)) => {
            let names: Option<Vec<String>> = items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect();
            match names {
                Some(names) => match names.iter().find(|n| !is_variable_name(n)) {
                    None => {
                        store(layer, Sourced::new(names, source.clone()));
                        return Ok(());
                    }
                    Some(bad) => format!("{bad:?} is not an environment variable name"),
                },
                None => format!(
                    "expected an array of variable names, got {}",
                    describe(value)
                ),
            }
        }
        (Kind::VarNames(_), _) => format!(
            "expected an array of variable names, got {}",
            describe(value)
        ),
        (Kind::SandboxMode, toml::Value::String(s)) => match s.as_str() {
            "auto" | "required" | "off" => {
                let mode = match s.as_str() {
                    "required" => SandboxMode::Required,
                    "off" => SandboxMode::Off,
                    _ => SandboxMode::Auto,
                };
                layer.sandbox_mode = Some(Sourced::new(mode, source.clone()));
                return Ok(());
            }
            other => format!("expected \"auto\", \"required\" or \"off\", got {other:?}"),
        },
        (Kind::SandboxMode, _) => format!(
            "expected \"auto\", \"required\" or \"off\", got {}",
            describe(value)
        ),
        (Kind::BashRules, toml::Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let rule = bash_rule(item, path, source).map_err(|(field, problem)| {
                    ConfigError::Value {
                        path: path.to_path_buf(),
                        key: format!("permissions.bash[{i}]{field}"),
                        problem,
                    }
                })?;
                layer.bash_rules.push(rule);
            }
            return Ok(());
        }
        (Kind::ToolRules, toml::Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let rule = bash_rule(item, path, source).map_err(|(field, problem)| {
                    ConfigError::Value {
                        path: path.to_path_buf(),
                        key: format!("permissions.tools[{i}]{field}"),
                        problem,
                    }
                })?;
                layer.tool_rules.push(ToolRuleEntry {
                    pattern: rule.pattern,
                    action: rule.action,
                    file: rule.file,
                    project: rule.project,
                });
            }
            return Ok(());
        }
        (Kind::ToolRules, _) => format!(
            "expected [[permissions.tools]] tables with `pattern` and `action`, got {}",
            describe(value)
        ),
        (Kind::Notifications, toml::Value::String(s))
            if super::NOTIFY_WHEN.contains(&s.as_str()) =>
        {
            layer.ui_notifications = Some(Sourced::new(s.clone(), source.clone()));
            return Ok(());
        }
        (Kind::Notifications, toml::Value::Boolean(b)) => {
            let when = if *b { "unfocused" } else { "never" };
            layer.ui_notifications = Some(Sourced::new(when.to_string(), source.clone()));
            return Ok(());
        }
        (Kind::Notifications, toml::Value::String(s)) => {
            format!("expected \"unfocused\", \"always\" or \"never\", got {s:?}")
        }
        (Kind::Notifications, _) => format!(
            "expected \"unfocused\", \"always\" or \"never\", got {}",
            describe(value)
        ),
        (Kind::BashRules, _) => format!(
            "expected [[permissions.bash]] tables with `pattern` and `action`, got {}",
            describe(value)
        ),
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

/// One `[[permissions.bash]]` or `[[permissions.tools]]` table; the error names the field (`.pattern`) and the problem.
fn bash_rule(
    item: &toml::Value,
    path: &Path,
    source: &Source,
) -> Result<BashRuleEntry, (String, String)> {
    // Its keys are named after the rule's (`permissions.bash[2].pattern`), as written.
    let table = Table::of("", item, "a table with `pattern` and `action`")?.entries;
    for key in table.keys() {
        if key != "pattern" && key != "action" {
            return Err((
                format!(".{key}"),
                "unknown key (a rule has `pattern` and `action`)".to_string(),
            ));
        }
    }
    let pattern = match table.get("pattern") {
        Some(toml::Value::String(p)) if !p.trim().is_empty() => p.clone(),
        Some(toml::Value::String(_)) => {
            return Err((".pattern".into(), "the pattern is empty".into()));
        }
        Some(other) => {
            return Err((
                ".pattern".into(),
                format!("expected a string, got {}", describe(other)),
            ));
        }
        None => return Err((".pattern".into(), "missing".into())),
    };
    let action = match table.get("action") {
        Some(toml::Value::String(a)) => match a.as_str() {
            "allow" => RuleAction::Allow,
            "ask" => RuleAction::Ask,
            "deny" => RuleAction::Deny,
            other => {
                return Err((
                    ".action".into(),
                    format!("expected \"allow\", \"ask\" or \"deny\", got {other:?}"),
                ))
            }
        },
        Some(other) => {
            return Err((
                ".action".into(),
                format!("expected a string, got {}", describe(other)),
            ));
        }
        None => return Err((".action".into(), "missing".into())),
    };
    Ok(BashRuleEntry {
        pattern,
        action,
        file: path.to_path_buf(),
        project: matches!(source, Source::ProjectFile(_)),
    })
}

/// What a float key accepts, in words: "a number between 0 and 1 (exclusive)".
fn expected_float(min: f64, max: f64) -> String {
    format!("a number between {min} and {max} (exclusive)")
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
    let mut names: Vec<String> = sections().iter().map(|s| format!("[{s}]")).collect();
    names.push("[providers.NAME]".to_string());
    names.push("[mcp_servers.NAME]".to_string());
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

/// Values bound for a `u32` setting were checked against [`U32_MAX`] or less.
fn narrow(v: Sourced<u64>) -> Sourced<u32> {
    Sourced::new(u32::try_from(v.value).unwrap_or(u32::MAX), v.source)
}

/// Append an allow rule for each (list, pattern) to the config file at `path` (the
/// project's `.rein/config.toml`; the approval prompt's "always allow in this project"),
/// in its list (`[[permissions.bash]]` or `[[permissions.tools]]`), creating the file and
/// its folder if needed (see [`crate::host::private_fs::replace`]). A file that exists but cannot be read is left alone: rewriting it
/// from nothing would lose it.
pub fn save_allow_rules(path: &Path, rules: &[(RuleList, &str)]) -> Result<(), String> {
    let mut text = match crate::host::safe_fs::read_small_text(path, super::MAX_CONFIG_BYTES) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    for (list, pattern) in rules {
        text.push_str(&format!(
            "\n# Allowed from the approval prompt.\n[[{}]]\npattern = {}\naction = \"allow\"\n",
            list.table(),
            toml::Value::String(pattern.to_string())
        ));
    }
    // The user's alone (0600, a new `.rein/` 0700), and never written through a link: a
    // cloned repository's `.rein/config.toml` that points elsewhere is refused.
    crate::host::private_fs::replace(path, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}
