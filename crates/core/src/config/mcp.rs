//! `[mcp_servers.NAME]` tables: the MCP servers a config file declares.
//!
//! Their names are the user's, so they cannot be rows of `file.rs`'s `KEYS`; each table is
//! walked here against [`SERVER_KEYS`], and every error names the file and the key
//! (`mcp_servers.github.command: expected a string`). A server has either `command` (stdio)
//! or `url` (streamable HTTP), never both; stdio-only and HTTP-only keys are refused on the
//! other kind. The layers stack by name: a project's `[mcp_servers.X]` replaces the user's
//! `X` whole (and is then a project server, which must be approved before it runs: the
//! approval pins the table as written, [`ServerConfig::declared`]).
//!
//! In the user's own file a `cwd`, and a `command` with a `/`, must say where they are
//! (absolute, `~/…` or `${project}/…`): relative to the project would load the project's
//! code on the host without anyone naming it (`mcp::spawn` has the whole rule). In a
//! project's file a relative one is the project's, as the user approves it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::table::{
    describe, in_file, is_variable_name, key_part, string, strings, Problem, Table,
};
use super::{ConfigError, Source, MAX_TIMEOUT_SECS};
use crate::mcp::{
    Declared, OAuthClient, Origin, ServerConfig, SubagentTools, Transport, DEFAULT_STARTUP_TIMEOUT,
    DEFAULT_TOOL_TIMEOUT, PROJECT, RELATIVE_COMMAND, RELATIVE_CWD,
};

/// The keys a server table may hold.
const SERVER_KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "env_vars",
    "cwd",
    "url",
    "headers",
    "bearer_token_env",
    "oauth_client_id",
    "oauth_client_secret_env",
    "oauth_client_metadata_url",
    "enabled",
    "startup_timeout_secs",
    "tool_timeout_secs",
    "allow",
    "deny",
    "subagents",
];
const STDIO_ONLY: &[&str] = &["args", "env", "env_vars", "cwd"];
const HTTP_ONLY: &[&str] = &[
    "headers",
    "bearer_token_env",
    "oauth_client_id",
    "oauth_client_secret_env",
    "oauth_client_metadata_url",
];

/// The `mcp_servers` table of one file, in name order.
pub(super) fn read_table(
    value: &toml::Value,
    path: &Path,
    source: &Source,
) -> Result<Vec<ServerConfig>, ConfigError> {
    let table =
        Table::of("mcp_servers", value, "tables [mcp_servers.NAME]").map_err(in_file(path))?;
    let origin = match source {
        Source::ProjectFile(p) => Origin::Project(p.clone()),
        _ => Origin::User(path.to_path_buf()),
    };
    let mut servers = Vec::new();
    for (name, key, value) in table.entries() {
        servers.push(server_table(name, value, &key, origin.clone()).map_err(in_file(path))?);
    }
    Ok(servers)
}

/// Stack two layers' servers: `higher`'s replace `lower`'s of the same name.
pub(super) fn stack(lower: Vec<ServerConfig>, higher: Vec<ServerConfig>) -> Vec<ServerConfig> {
    let mut servers: Vec<ServerConfig> = lower
        .into_iter()
        .filter(|s| !higher.iter().any(|h| h.name == s.name))
        .collect();
    servers.extend(higher);
    servers.sort_by(|a, b| a.name.cmp(&b.name));
    servers
}

/// One server table `name`, met at `key`, checked (`.mcp.json`'s entries come here too, as
/// the same table).
pub(super) fn server_table(
    name: &str,
    value: &toml::Value,
    key: &str,
    origin: Origin,
) -> Result<ServerConfig, Problem> {
    if !super::table::is_server_name(name) {
        return Err((
            key.to_string(),
            "a server name may only have letters, digits, `_` and `-` (it is part of its tools' names)"
                .into(),
        ));
    }
    let table = Table::of(key, value, &format!("a table [{key}]"))?;
    let entries = table.entries;
    let at = |entry: &str| table.key_of(entry);
    if let Some(unknown) = entries.keys().find(|k| !SERVER_KEYS.contains(&k.as_str())) {
        return Err((
            at(unknown),
            format!("unknown key (known keys: {})", SERVER_KEYS.join(", ")),
        ));
    }
    let is_http = match (entries.get("command"), entries.get("url")) {
        (Some(_), Some(_)) => {
            return Err((
                key.to_string(),
                "has both `command` and `url`; a server is either a program (command) or an HTTP endpoint (url)".into(),
            ))
        }
        (None, None) => {
            return Err((
                key.to_string(),
                "needs `command` (a program to start) or `url` (a streamable HTTP endpoint)".into(),
            ))
        }
        (_, url) => url.is_some(),
    };
    let (wrong, kind) = if is_http {
        (
            STDIO_ONLY,
            "`url` (HTTP) server; it is for `command` servers",
        )
    } else {
        (
            HTTP_ONLY,
            "`command` (stdio) server; it is for `url` servers",
        )
    };
    if let Some(k) = entries.keys().find(|k| wrong.contains(&k.as_str())) {
        return Err((at(k), format!("not used by a {kind}")));
    }
    let get = |entry: &str| table.get(entry);
    // The user's own servers take no path relative to something implicit (`mcp::spawn`).
    let users = matches!(origin, Origin::User(_));

    let transport = if is_http {
        let (k, v) = get("url").ok_or_else(|| (at("url"), "missing".to_string()))?;
        let url = string(v).map_err(|p| (k.clone(), p))?.trim().to_string();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err((
                k,
                format!("expected an http:// or https:// URL, got {url:?}"),
            ));
        }
        let headers = match get("headers") {
            Some((k, v)) => string_table(v, &k)?,
            None => Vec::new(),
        };
        for (header, value) in &headers {
            let hk = format!("{}.{}", at("headers"), key_part(header));
            if reqwest::header::HeaderName::from_bytes(header.as_bytes()).is_err() {
                return Err((hk, "not a valid HTTP header name".into()));
            }
            if reqwest::header::HeaderValue::from_str(value).is_err() {
                return Err((hk, "not a valid HTTP header value".into()));
            }
        }
        let bearer_token_env = match get("bearer_token_env") {
            Some((k, v)) => {
                let var = string(v).map_err(|p| (k.clone(), p))?.trim().to_string();
                if !is_variable_name(&var) {
                    return Err((
                        k,
                        format!("expected the NAME of an environment variable (the token stays out of the file), got {var:?}"),
                    ));
                }
                Some(var)
            }
            None => None,
        };
        let oauth = oauth_client(&table)?;
        Transport::Http {
            url,
            headers,
            bearer_token_env,
            oauth,
        }
    } else {
        let (k, v) = get("command").ok_or_else(|| (at("command"), "missing".to_string()))?;
        let command = string(v).map_err(|p| (k.clone(), p))?;
        if command.trim().is_empty() {
            return Err((k, "the command is empty".into()));
        }
        if users && command.contains('/') && !explicit(&command) {
            return Err((k, RELATIVE_COMMAND.into()));
        }
        let args = match get("args") {
            Some((k, v)) => strings(v).map_err(|p| (k, p))?,
            None => Vec::new(),
        };
        let env = match get("env") {
            Some((k, v)) => string_table(v, &k)?,
            None => Vec::new(),
        };
        for (var, _) in &env {
            if !is_variable_name(var) {
                return Err((
                    format!("{}.{}", at("env"), key_part(var)),
                    "not a valid environment variable name".into(),
                ));
            }
        }
        let env_vars = match get("env_vars") {
            Some((k, v)) => {
                let names = strings(v).map_err(|p| (k.clone(), p))?;
                if let Some(bad) = names.iter().find(|n| !is_variable_name(n)) {
                    return Err((
                        k,
                        format!("{bad:?} is not an environment variable name (env_vars names the variables of yours the server gets)"),
                    ));
                }
                names
            }
            None => Vec::new(),
        };
        let cwd = match get("cwd") {
            Some((k, v)) => {
                let dir = string(v).map_err(|p| (k.clone(), p))?;
                if users && !explicit(&dir) {
                    return Err((k, RELATIVE_CWD.into()));
                }
                Some(PathBuf::from(dir))
            }
            None => None,
        };
        Transport::Stdio {
            command,
            args,
            env,
            env_vars,
            cwd,
        }
    };
    let enabled = match get("enabled") {
        Some((_, toml::Value::Boolean(b))) => *b,
        Some((k, v)) => return Err((k, format!("expected true or false, got {}", describe(v)))),
        None => true,
    };
    let secs = |entry: &str, default: Duration| match get(entry) {
        Some((_, toml::Value::Integer(n))) if (1..=MAX_TIMEOUT_SECS as i64).contains(n) => {
            Ok(Duration::from_secs(*n as u64))
        }
        Some((k, v)) => Err((
            k,
            format!(
                "expected an integer from 1 to {MAX_TIMEOUT_SECS}, got {}",
                describe(v)
            ),
        )),
        None => Ok(default),
    };
    let globs = |entry: &str| -> Result<Vec<String>, Problem> {
        let Some((k, v)) = get(entry) else {
            return Ok(Vec::new());
        };
        let list = strings(v).map_err(|p| (k.clone(), p))?;
        for pattern in &list {
            globset::Glob::new(pattern)
                .map_err(|e| (k.clone(), format!("{pattern:?} is not a valid glob: {e}")))?;
        }
        Ok(list)
    };
    Ok(ServerConfig {
        name: name.to_string(),
        transport,
        enabled,
        startup_timeout: secs("startup_timeout_secs", DEFAULT_STARTUP_TIMEOUT)?,
        tool_timeout: secs("tool_timeout_secs", DEFAULT_TOOL_TIMEOUT)?,
        allow: globs("allow")?,
        deny: globs("deny")?,
        subagents: match get("subagents") {
            None | Some((_, toml::Value::Boolean(false))) => SubagentTools::None,
            Some((_, toml::Value::Boolean(true))) => SubagentTools::All,
            Some((_, toml::Value::String(s))) if s == "read_only" => SubagentTools::ReadOnly,
            Some((_, toml::Value::Array(_))) => SubagentTools::Only(globs("subagents")?),
            Some((k, v)) => {
                return Err((
                    k,
                    format!(
                        "expected true, false, \"read_only\" or a list of tool-name globs, got {}",
                        describe(v)
                    ),
                ))
            }
        },
        origin,
        declared: Declared::from_toml(entries),
        written: None,
    })
}

/// `oauth_client_id` and `oauth_client_secret_env`: a client registered with the server's
/// authorization server beforehand. The secret stays in the environment; a secret without
/// an ID is refused.
fn oauth_client(table: &Table) -> Result<OAuthClient, Problem> {
    let get = |entry: &str| table.get(entry);
    let client_id = match get("oauth_client_id") {
        Some((k, v)) => {
            let id = string(v).map_err(|p| (k.clone(), p))?.trim().to_string();
            if id.is_empty() {
                return Err((k, "the client ID is empty".into()));
            }
            Some(id)
        }
        None => None,
    };
    let client_secret_env = match get("oauth_client_secret_env") {
        Some((k, v)) => {
            let var = string(v).map_err(|p| (k.clone(), p))?.trim().to_string();
            if !is_variable_name(&var) {
                return Err((
                    k,
                    format!("expected the NAME of an environment variable (the secret stays out of the file), got {var:?}"),
                ));
            }
            if client_id.is_none() {
                return Err((k, "a client secret needs its `oauth_client_id`".into()));
            }
            Some(var)
        }
        None => None,
    };
    let client_metadata_url = match get("oauth_client_metadata_url") {
        Some((k, v)) => {
            let url = string(v).map_err(|p| (k.clone(), p))?.trim().to_string();
            let usable = reqwest::Url::parse(&url)
                .is_ok_and(|u| u.scheme() == "https" && u.path() != "/" && !u.path().is_empty());
            if !usable {
                return Err((
                    k,
                    format!("expected the https:// URL of a client metadata document (with a path), got {url:?}"),
                ));
            }
            Some(url)
        }
        None => None,
    };
    Ok(OAuthClient {
        client_id,
        client_secret_env,
        client_metadata_url,
    })
}

/// A path that says where it is: absolute, from `~`, or from `${project}`.
fn explicit(path: &str) -> bool {
    path.starts_with('/') || path == "~" || path.starts_with("~/") || path.starts_with(PROJECT)
}

/// `{ NAME = "value", … }`, in name order.
fn string_table(value: &toml::Value, key: &str) -> Result<Vec<(String, String)>, Problem> {
    let table = Table::of(key, value, "a table of strings { NAME = \"value\" }")?;
    table
        .entries()
        .map(|(name, key, v)| Ok((name.clone(), string(v).map_err(|p| (key, p))?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<ServerConfig>, String> {
        let table: toml::Table = text.parse().map_err(|e| format!("{e}"))?;
        let path = Path::new("/home/u/.config/rein/config.toml");
        let source = Source::UserFile(path.to_path_buf());
        match table.get("mcp_servers") {
            Some(v) => read_table(v, path, &source).map_err(|e| e.to_string()),
            None => Ok(Vec::new()),
        }
    }

    fn error(text: &str) -> String {
        match parse(text) {
            Ok(servers) => panic!("expected an error, got {servers:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn a_stdio_and_an_http_server_with_every_key() {
        let servers = parse(
            r#"
[mcp_servers.fs]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "${project}"]
env = { NODE_ENV = "production", B = "2" }
env_vars = ["GITHUB_TOKEN"]
cwd = "${project}/tools"
allow = ["read_*", "list_directory"]
deny = ["read_media_file"]
startup_timeout_secs = 20

[mcp_servers.github]
url = "https://api.example.com/mcp/"
headers = { X-Client = "rein" }
bearer_token_env = "GITHUB_TOKEN"
enabled = false
tool_timeout_secs = 120
subagents = "read_only"
"#,
        )
        .unwrap();
        assert_eq!(servers.len(), 2);
        let fs = &servers[0];
        assert_eq!(fs.name, "fs");
        assert_eq!(
            fs.transport,
            Transport::Stdio {
                command: "npx".into(),
                args: vec![
                    "-y".into(),
                    "@modelcontextprotocol/server-filesystem".into(),
                    "${project}".into()
                ],
                env: vec![
                    ("B".into(), "2".into()),
                    ("NODE_ENV".into(), "production".into())
                ],
                env_vars: vec!["GITHUB_TOKEN".into()],
                cwd: Some(PathBuf::from("${project}/tools")),
            }
        );
        assert!(fs.enabled);
        assert_eq!(fs.startup_timeout, Duration::from_secs(20));
        assert_eq!(fs.tool_timeout, DEFAULT_TOOL_TIMEOUT);
        assert!(fs.offers("read_text_file") && !fs.offers("read_media_file"));
        assert_eq!(
            fs.origin,
            Origin::User(PathBuf::from("/home/u/.config/rein/config.toml"))
        );
        let gh = &servers[1];
        assert_eq!(
            gh.transport,
            Transport::Http {
                url: "https://api.example.com/mcp/".into(),
                headers: vec![("X-Client".into(), "rein".into())],
                bearer_token_env: Some("GITHUB_TOKEN".into()),
                oauth: Default::default(),
            }
        );
        assert_eq!(fs.subagents, SubagentTools::None, "none unless said");
        assert_eq!(gh.subagents, SubagentTools::ReadOnly);
        assert!(!gh.enabled);
        assert_eq!(gh.startup_timeout, DEFAULT_STARTUP_TIMEOUT);
        assert_eq!(gh.tool_timeout, Duration::from_secs(120));
    }

    #[test]
    fn errors_name_the_file_and_the_key() {
        let file = "/home/u/.config/rein/config.toml";
        assert_eq!(
            error("[mcp_servers.github]\ncommand = 3"),
            format!("{file}: key `mcp_servers.github.command`: expected a string, got integer 3")
        );
        assert!(
            error("[mcp_servers.x]\ncommand = \"a\"\nurl = \"http://h\"")
                .contains("key `mcp_servers.x`: has both `command` and `url`")
        );
        assert!(error("[mcp_servers.x]\nenabled = true")
            .contains("key `mcp_servers.x`: needs `command`"));
        assert!(error("[mcp_servers.x]\ncommand = \"a\"\ncomand = \"b\"")
            .contains("key `mcp_servers.x.comand`: unknown key"));
        assert!(error("[mcp_servers.x]\nurl = \"ftp://h\"")
            .contains("key `mcp_servers.x.url`: expected an http:// or https:// URL"));
        assert!(error("[mcp_servers.x]\nurl = \"http://h\"\nargs = []")
            .contains("key `mcp_servers.x.args`: not used by a `url` (HTTP) server"));
        assert!(error("[mcp_servers.x]\ncommand = \"a\"\nheaders = {}")
            .contains("key `mcp_servers.x.headers`: not used by a `command` (stdio) server"));
        assert!(
            error("[mcp_servers.x]\nurl = \"http://h\"\nbearer_token_env = \"ghp_abc def\"")
                .contains("key `mcp_servers.x.bearer_token_env`: expected the NAME")
        );
        assert!(error("[mcp_servers.x]\ncommand = \"a\"\nargs = [\"a\", 1]")
            .contains("key `mcp_servers.x.args`: expected an array of strings"));
        assert!(error("[mcp_servers.x]\ncommand = \"a\"\nenv = { A = 1 }")
            .contains("key `mcp_servers.x.env.A`: expected a string, got integer 1"));
        assert!(error("[mcp_servers.x]\ncommand = \"a\"\ntool_timeout_secs = 0")
            .contains("key `mcp_servers.x.tool_timeout_secs`: expected an integer from 1 to 86400, got integer 0"));
        assert!(error("[mcp_servers.x]\ncommand = \"a\"\ndeny = [\"a[\"]")
            .contains("key `mcp_servers.x.deny`: \"a[\" is not a valid glob"));
        assert!(error("[mcp_servers.\"my server\"]\ncommand = \"a\"")
            .contains("key `mcp_servers.\"my server\"`: a server name may only have"));
        assert!(
            error("[mcp_servers.x]\nurl = \"http://h\"\nheaders = { \"a b\" = \"v\" }")
                .contains("key `mcp_servers.x.headers.\"a b\"`: not a valid HTTP header name")
        );
        assert!(error("[mcp_servers.x]\ncommand = \"a\"\nsubagents = \"yes\"")
            .contains("key `mcp_servers.x.subagents`: expected true, false, \"read_only\" or a list of tool-name globs, got string"));
        assert!(
            error("[mcp_servers.x]\ncommand = \"a\"\nsubagents = [\"a[\"]")
                .contains("key `mcp_servers.x.subagents`: \"a[\" is not a valid glob")
        );
        assert!(
            error("[mcp_servers.x]\ncommand = \"a\"\nenv_vars = [\"A B\"]").contains(
                "key `mcp_servers.x.env_vars`: \"A B\" is not an environment variable name"
            )
        );
        assert!(
            error("[mcp_servers.x]\nurl = \"http://h\"\nenv_vars = [\"A\"]")
                .contains("key `mcp_servers.x.env_vars`: not used by a `url` (HTTP) server")
        );
        assert!(error("mcp_servers = 1").contains("key `mcp_servers`: expected tables"));
        assert!(error("[mcp_servers]\nx = 1").contains("key `mcp_servers.x`: expected a table"));
    }

    #[test]
    fn a_project_server_replaces_the_users_of_the_same_name() {
        let user =
            parse("[mcp_servers.a]\ncommand = \"u\"\n[mcp_servers.b]\ncommand = \"u\"").unwrap();
        let table: toml::Table =
            "[mcp_servers.b]\ncommand = \"p\"\n[mcp_servers.c]\ncommand = \"p\""
                .parse()
                .unwrap();
        let path = Path::new("/p/.rein/config.toml");
        let project = read_table(
            &table["mcp_servers"],
            path,
            &Source::ProjectFile(path.into()),
        )
        .unwrap();
        let all = stack(user, project);
        let names: Vec<_> = all.iter().map(|s| (s.name.as_str(), s.summary())).collect();
        assert_eq!(
            names,
            [("a", "u".into()), ("b", "p".into()), ("c", "p".into())]
        );
        assert_eq!(all[1].origin, Origin::Project(path.into()));
        assert!(matches!(all[0].origin, Origin::User(_)));
    }
}
