//! The walk every table of a config file shares, below the readers of its parts (`file.rs`
//! for the fixed keys, `providers.rs` for `[providers.NAME]`, `mcp.rs` for
//! `[mcp_servers.NAME]`), so none of them needs another.
//!
//! In: a `toml::Value` met at a dotted key. Out: a [`Table`] whose entries come with their
//! own dotted keys (`providers.openrouter.headers."X-Title"`, a name quoted where TOML
//! would quote it), or a [`Problem`]: the key at fault and what is wrong with it, in the
//! words every reader uses (`expected a string, got integer 3`). [`in_file`] turns a
//! problem into the [`ConfigError`] that names the file.

use std::path::Path;

use super::ConfigError;

/// What is wrong, and where: the dotted key at fault and the problem in words.
pub(super) type Problem = (String, String);

/// A table of a config file, met at a dotted key.
pub(super) struct Table<'a> {
    /// The dotted key of the table itself.
    pub key: String,
    pub entries: &'a toml::Table,
}

impl<'a> Table<'a> {
    /// `value`, met at `key`, as a table; anything else is the problem "expected `what`,
    /// got" what it is.
    pub fn of(key: &str, value: &'a toml::Value, what: &str) -> Result<Table<'a>, Problem> {
        match value.as_table() {
            Some(entries) => Ok(Table {
                key: key.to_string(),
                entries,
            }),
            None => Err((key.to_string(), expected(what, value))),
        }
    }

    /// The dotted key of the entry `name`.
    pub fn key_of(&self, name: &str) -> String {
        format!("{}.{}", self.key, key_part(name))
    }

    /// Each entry, in name order (as `toml` keeps a table), as (name, its dotted key,
    /// value).
    pub fn entries(&self) -> impl Iterator<Item = (&'a String, String, &'a toml::Value)> + '_ {
        self.entries
            .iter()
            .map(|(name, value)| (name, self.key_of(name), value))
    }

    /// The entry `name` with its dotted key, when the table has one.
    pub fn get(&self, name: &str) -> Option<(String, &'a toml::Value)> {
        self.entries.get(name).map(|v| (self.key_of(name), v))
    }
}

/// A problem of the file at `path`, as the error that names the file and the key.
pub(super) fn in_file(path: &Path) -> impl Fn(Problem) -> ConfigError + '_ {
    move |(key, problem)| ConfigError::Value {
        path: path.to_path_buf(),
        key,
        problem,
    }
}

/// "expected `what`, got" what `value` is.
pub(super) fn expected(what: &str, value: &toml::Value) -> String {
    format!("expected {what}, got {}", describe(value))
}

/// A string value.
pub(super) fn string(value: &toml::Value) -> Result<String, String> {
    value
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| expected("a string", value))
}

/// An array of strings.
pub(super) fn strings(value: &toml::Value) -> Result<Vec<String>, String> {
    let wrong = || expected("an array of strings", value);
    value
        .as_array()
        .ok_or_else(wrong)?
        .iter()
        .map(|v| v.as_str().map(str::to_string).ok_or_else(wrong))
        .collect()
}

/// A TOML value in words for an error message: `string "abc"`, `float 1.5`, `a table`.
pub(super) fn describe(value: &toml::Value) -> String {
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

/// A table key as TOML would write it in a dotted key: bare when it can be, else quoted.
pub(super) fn key_part(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        name.to_string()
    } else {
        format!("{name:?}")
    }
}

/// What an integer key accepts, in words: "a positive integer" or "an integer from 1 to 10".
pub(super) fn expected_int(min: u64, max: u64) -> String {
    if min == 1 && max == u64::MAX {
        "a positive integer".to_string()
    } else {
        format!("an integer from {min} to {max}")
    }
}

/// Whether `name` can name a server (`[A-Za-z0-9_-]+`): an MCP server's, whose tools carry
/// it, or a language server's.
pub(super) fn is_server_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Whether `name` can name an environment variable: `[A-Za-z_][A-Za-z0-9_]*`.
pub(super) fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_carry_their_dotted_keys_and_problems_name_the_key() {
        let value: toml::Value = toml::from_str("plain = 1\n\"a b\" = \"x\"").unwrap();
        let table = Table::of("t", &value, "a table").unwrap();
        let keys: Vec<String> = table.entries().map(|(_, key, _)| key).collect();
        assert_eq!(keys, ["t.\"a b\"", "t.plain"]);
        assert_eq!(
            table.get("plain").map(|(k, _)| k).as_deref(),
            Some("t.plain")
        );
        let not_a_table = toml::Value::Integer(3);
        let Err(problem) = Table::of("t.x", &not_a_table, "a table [t.x]") else {
            panic!("an integer is not a table");
        };
        assert_eq!(
            problem,
            (
                "t.x".to_string(),
                "expected a table [t.x], got integer 3".to_string()
            )
        );
        assert_eq!(
            string(&not_a_table).unwrap_err(),
            "expected a string, got integer 3"
        );
    }

    #[test]
    fn key_parts_are_quoted_only_when_toml_needs_it() {
        assert_eq!(key_part("openrouter"), "openrouter");
        assert_eq!(key_part("X-Title"), "X-Title");
        assert_eq!(key_part("anthropic/claude"), "\"anthropic/claude\"");
        assert_eq!(key_part("llama.cpp"), "\"llama.cpp\"");
    }

    #[test]
    fn variable_names() {
        assert!(is_variable_name("OPENROUTER_API_KEY"));
        assert!(is_variable_name("_x1"));
        assert!(!is_variable_name("1X"));
        assert!(!is_variable_name("sk-abc"));
        assert!(!is_variable_name(""));
    }
}
