//! A project's `.mcp.json` (Claude Code's file for MCP servers), read into the same
//! [`ServerConfig`]s as a project's `[mcp_servers.NAME]` tables: the one adapter from that
//! format into rein's own.
//!
//! In: the file at the project's root, `{"mcpServers": {NAME: {...}}}`, each entry either a
//! program (`command`, `args`, `env`; `"type": "stdio"` or no type) or a streamable HTTP
//! endpoint (`"type": "http"`, `url`, `headers`), and the user's environment. `${VAR}` and
//! `${VAR:-default}` in those values are the user's variables, as Claude Code expands them
//! (a `${VAR}` that is not set is an error; `:-` also takes the default for an empty one).
//! Out: the servers, each a project server ([`Origin::Project`] naming the file) held until
//! the user allows it like any project's server, and a sentence per entry that could not be
//! read, naming the file and the key (`.mcp.json: mcpServers.db.args: expected an array of
//! strings`). A bad entry is skipped, not fatal: the file is another tool's, and the rest of
//! it still counts.
//!
//! The expanded entry goes through the same checks as a `[mcp_servers.NAME]` table
//! (`mcp.rs`), so what a server may be is decided in one place. What an approval pins
//! ([`ServerConfig::declared`]) is the entry as written, `${VAR}`s unexpanded: a token that
//! comes from a variable is never written to the trust file nor shown, and listings show the
//! entry as written too ([`ServerConfig::written`]).

use std::path::Path;

use serde_json::Value;

use super::mcp::server_table;
use super::table::{is_variable_name, key_part};
use super::Environment;
use crate::mcp::{Declared, Origin, ServerConfig, Transport};

/// The file's name, at the project's root.
pub const FILE: &str = ".mcp.json";

/// The largest `.mcp.json` read.
const MAX_BYTES: u64 = 1024 * 1024;

/// What a `.mcp.json` gave: its servers in name order, and a sentence per problem.
#[derive(Debug, Default)]
pub(super) struct McpJson {
    pub servers: Vec<ServerConfig>,
    pub problems: Vec<String>,
}

/// The servers of the `.mcp.json` at `path` (none, quietly, when there is no such file).
pub(super) fn read(path: &Path, env: &Environment) -> McpJson {
    let text = match crate::host::safe_fs::read_small_text(path, MAX_BYTES) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return McpJson::default(),
        Err(e) => {
            return McpJson {
                servers: Vec::new(),
                problems: vec![format!("{} was not read: {e}", path.display())],
            }
        }
    };
    parse(&text, path, env)
}

/// The servers `text` (the file at `path`) declares.
fn parse(text: &str, path: &Path, env: &Environment) -> McpJson {
    let mut out = McpJson::default();
    let in_file = |key: &str, problem: &str| format!("{}: {key}: {problem}", path.display());
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(e) => {
            out.problems
                .push(format!("{} is not valid JSON: {e}", path.display()));
            return out;
        }
    };
    let servers = match value.get("mcpServers") {
        Some(Value::Object(servers)) => servers,
        Some(other) => {
            out.problems.push(in_file(
                "mcpServers",
                &format!("expected an object of servers, got {}", what(other)),
            ));
            return out;
        }
        None if value.is_object() => return out,
        None => {
            out.problems.push(format!(
                "{}: expected an object with `mcpServers`, got {}",
                path.display(),
                what(&value)
            ));
            return out;
        }
    };
    for (name, entry) in servers {
        let key = format!("mcpServers.{}", key_part(name));
        match server(name, entry, &key, path, env) {
            Ok(server) => out.servers.push(server),
            Err((key, problem)) => out.problems.push(format!(
                "{}: {key}: {problem}; the server was left out",
                path.display()
            )),
        }
    }
    out.servers.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// One entry as a server, or the key at fault and why.
fn server(
    name: &str,
    entry: &Value,
    key: &str,
    path: &Path,
    env: &Environment,
) -> Result<ServerConfig, (String, String)> {
    let Value::Object(fields) = entry else {
        return Err((
            key.to_string(),
            format!("expected an object, got {}", what(entry)),
        ));
    };
    let at = |field: &str| format!("{key}.{}", key_part(field));
    let kind = match fields.get("type") {
        None => None,
        Some(Value::String(kind)) => Some(kind.as_str()),
        Some(other) => {
            return Err((
                at("type"),
                format!("expected \"stdio\" or \"http\", got {}", what(other)),
            ))
        }
    };
    let http = match kind {
        Some("http") => true,
        Some("stdio") => false,
        None => fields.contains_key("url") && !fields.contains_key("command"),
        Some("sse") => {
            return Err((
                at("type"),
                "\"sse\" servers are not supported: rein speaks MCP's streamable HTTP \
                 (\"type\": \"http\")"
                    .to_string(),
            ))
        }
        Some(other) => {
            return Err((
                at("type"),
                format!("expected \"stdio\" or \"http\", got {other:?}"),
            ))
        }
    };
    let known: &[&str] = if http {
        &["type", "url", "headers"]
    } else {
        &["type", "command", "args", "env"]
    };
    if let Some(unknown) = fields.keys().find(|k| !known.contains(&k.as_str())) {
        let kind = if http { "an http" } else { "a stdio" };
        return Err((
            at(unknown),
            format!(
                "not a key of {kind} server in {FILE} (its keys: {})",
                known.join(", ")
            ),
        ));
    }
    // rein's own table for the entry, `${VAR}`s expanded: checked as any project's table.
    let mut table = toml::Table::new();
    for (field, value) in fields.iter().filter(|(k, _)| k.as_str() != "type") {
        table.insert(field.clone(), to_toml(value, &at(field), env)?);
    }
    let mut server = server_table(
        name,
        &toml::Value::Table(table),
        key,
        Origin::Project(path.to_path_buf()),
    )?;
    // What the user approves, and sees: the entry as written.
    server.written = Some(written(fields, http));
    server.declared = Declared::from_json(entry).unwrap_or_default();
    Ok(server)
}

/// The entry's transport as written, `${VAR}`s unexpanded (the checked, expanded one has
/// the same shape), for listings.
fn written(fields: &serde_json::Map<String, Value>, http: bool) -> Transport {
    let text = |field: &str| {
        fields
            .get(field)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let pairs = |field: &str| -> Vec<(String, String)> {
        fields
            .get(field)
            .and_then(Value::as_object)
            .map(|map| {
                map.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default()
    };
    if http {
        Transport::Http {
            url: text("url"),
            headers: pairs("headers"),
            bearer_token_env: None,
            oauth: Default::default(),
        }
    } else {
        Transport::Stdio {
            command: text("command"),
            args: fields
                .get("args")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|v| v.as_str().unwrap_or_default().to_string())
                        .collect()
                })
                .unwrap_or_default(),
            env: pairs("env"),
            env_vars: Vec::new(),
            cwd: None,
        }
    }
}

/// A JSON value of an entry as TOML, its strings' `${VAR}`s expanded from `env`; `key` is
/// where it is, for the error.
fn to_toml(value: &Value, key: &str, env: &Environment) -> Result<toml::Value, (String, String)> {
    Ok(match value {
        Value::String(s) => toml::Value::String(expand(s, env).map_err(|p| (key.to_string(), p))?),
        Value::Bool(b) => toml::Value::Boolean(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => toml::Value::Integer(i),
            None => toml::Value::Float(n.as_f64().unwrap_or_default()),
        },
        Value::Array(items) => toml::Value::Array(
            items
                .iter()
                .map(|v| to_toml(v, key, env))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => {
            let mut table = toml::Table::new();
            for (k, v) in map {
                table.insert(
                    k.clone(),
                    to_toml(v, &format!("{key}.{}", key_part(k)), env)?,
                );
            }
            toml::Value::Table(table)
        }
        Value::Null => return Err((key.to_string(), "expected a value, got null".to_string())),
    })
}

/// `text` with `${VAR}` and `${VAR:-default}` put in from `env`. `$` not followed by `{`,
/// and `${` without its `}`, stay as they are.
fn expand(text: &str, env: &Environment) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[at..]);
            return Ok(out);
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        if !is_variable_name(name) {
            return Err(format!(
                "`${{{inner}}}` does not name an environment variable"
            ));
        }
        match (env.vars.get(name).map(String::as_str), default) {
            (Some(v), Some(_)) if !v.is_empty() => out.push_str(v),
            (_, Some(default)) => out.push_str(default),
            (Some(v), None) => out.push_str(v),
            (None, None) => {
                return Err(format!(
                    "the environment variable {name} is not set (`${{{name}:-default}}` gives a default)"
                ))
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A JSON value in words for an error message: `string "abc"`, `number 3`, `an array`.
fn what(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "an array".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(vars: &[(&str, &str)]) -> Environment {
        Environment {
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<HashMap<_, _>>(),
            home: None,
        }
    }

    fn parsed(text: &str, vars: &[(&str, &str)]) -> McpJson {
        parse(text, Path::new("/p/.mcp.json"), &env(vars))
    }

    #[test]
    fn stdio_and_http_servers_with_variables_expanded_and_shown_as_written() {
        let got = parsed(
            r#"{"mcpServers": {
                "db": {"command": "${TOOLS:-/opt/tools}/db-mcp", "args": ["--dsn", "${DSN}"],
                       "env": {"TOKEN": "${DB_TOKEN}", "MODE": "${MODE:-ro}"}},
                "docs": {"type": "http", "url": "https://${HOST}/mcp",
                         "headers": {"Authorization": "Bearer ${API_KEY}"}},
                "plain": {"type": "stdio", "command": "node", "args": ["server.js"]}
            }}"#,
            &[
                ("DSN", "pg://x"),
                ("DB_TOKEN", "s3cret"),
                ("MODE", ""),
                ("HOST", "docs.example"),
                ("API_KEY", "k-123"),
            ],
        );
        assert!(got.problems.is_empty(), "{:?}", got.problems);
        let names: Vec<&str> = got.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["db", "docs", "plain"]);
        let db = &got.servers[0];
        assert_eq!(
            db.transport,
            Transport::Stdio {
                command: "/opt/tools/db-mcp".into(),
                args: vec!["--dsn".into(), "pg://x".into()],
                env: vec![
                    ("MODE".into(), "ro".into()),
                    ("TOKEN".into(), "s3cret".into())
                ],
                env_vars: Vec::new(),
                cwd: None,
            }
        );
        assert_eq!(db.origin, Origin::Project("/p/.mcp.json".into()));
        // Listings and the approval show the entry as written: no token.
        assert_eq!(db.summary(), "'${TOOLS:-/opt/tools}/db-mcp' --dsn '${DSN}'");
        let line = crate::mcp::external::launch(db);
        assert!(
            line.contains("[env TOKEN=${DB_TOKEN}]") && !line.contains("s3cret"),
            "{line}"
        );
        let docs = &got.servers[1];
        assert_eq!(
            docs.transport,
            Transport::Http {
                url: "https://docs.example/mcp".into(),
                headers: vec![("Authorization".into(), "Bearer k-123".into())],
                bearer_token_env: None,
                oauth: Default::default(),
            }
        );
        assert!(!crate::mcp::external::launch(docs).contains("k-123"));
        // The approval pins the entry as written, `type` and all.
        let pinned = docs.declared.lines().join("\n");
        assert!(pinned.contains("type = \"http\""), "{pinned}");
        assert!(
            pinned.contains("${API_KEY}") && !pinned.contains("k-123"),
            "{pinned}"
        );
        // The same entry with another value for a variable pins the same table.
        let again = parsed(
            r#"{"mcpServers": {"docs": {"type": "http", "url": "https://${HOST}/mcp",
                "headers": {"Authorization": "Bearer ${API_KEY}"}}}}"#,
            &[("HOST", "docs.example"), ("API_KEY", "other")],
        );
        assert_eq!(again.servers[0].declared, docs.declared);
    }

    #[test]
    fn a_bad_entry_is_left_out_naming_the_file_and_the_key_and_the_rest_counts() {
        let got = parsed(
            r#"{"mcpServers": {
                "good": {"command": "node"},
                "unset": {"command": "node", "args": ["${NOPE}"]},
                "sse": {"type": "sse", "url": "https://h/sse"},
                "odd": {"command": "node", "cwd": "/tmp"},
                "typed": {"command": "node", "args": [1]},
                "both": {"command": "node", "url": "https://h"},
                "bad name": {"command": "node"},
                "notobj": 3,
                "weird": {"command": "node", "args": ["${A-B}"]}
            }}"#,
            &[],
        );
        let names: Vec<&str> = got.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["good"]);
        // In the file's order.
        let want = [
            "mcpServers.unset.args: the environment variable NOPE is not set",
            "mcpServers.sse.type: \"sse\" servers are not supported",
            "mcpServers.odd.cwd: not a key of a stdio server in .mcp.json (its keys: type, command, args, env)",
            "mcpServers.typed.args: expected an array of strings",
            "mcpServers.both.url: not a key of a stdio server in .mcp.json",
            "mcpServers.\"bad name\": a server name may only have",
            "mcpServers.notobj: expected an object, got number 3",
            "mcpServers.weird.args: `${A-B}` does not name an environment variable",
        ];
        assert_eq!(got.problems.len(), want.len(), "{:#?}", got.problems);
        for (problem, want) in got.problems.iter().zip(want) {
            assert!(
                problem.starts_with(&format!("/p/.mcp.json: {want}")),
                "{problem} should start with {want}"
            );
            assert!(problem.ends_with("the server was left out"), "{problem}");
        }
        // The whole file wrong: one problem, no servers.
        let got = parsed("{\"mcpServers\": [", &[]);
        assert!(got.servers.is_empty());
        assert!(got.problems[0].starts_with("/p/.mcp.json is not valid JSON"));
        let got = parsed("{\"mcpServers\": []}", &[]);
        assert_eq!(
            got.problems,
            ["/p/.mcp.json: mcpServers: expected an object of servers, got an array"]
        );
        assert!(parsed("{}", &[]).problems.is_empty());
    }

    #[test]
    fn expansion_follows_claude_codes_rules() {
        let e = env(&[("A", "1"), ("EMPTY", "")]);
        assert_eq!(expand("x${A}y${A}", &e).unwrap(), "x1y1");
        assert_eq!(expand("${EMPTY}", &e).unwrap(), "");
        assert_eq!(expand("${EMPTY:-d}", &e).unwrap(), "d");
        assert_eq!(expand("${B:-}", &e).unwrap(), "");
        assert_eq!(expand("${B:-a:-b}", &e).unwrap(), "a:-b");
        assert_eq!(expand("$A and ${A", &e).unwrap(), "$A and ${A");
        assert_eq!(
            expand("${project}", &env(&[])).unwrap_err(),
            "the environment variable project is not set (`${project:-default}` gives a default)"
        );
    }
}
