//! The `[lsp]` section: `enabled`, `diagnostics_wait_ms`, `start_timeout_ms`, and a `[lsp.NAME]` table per
//! language server, which adds a server or changes a default one key by key
//! (`crate::lsp::spec`). Every error names the file and the key
//! (`lsp.ruff.args: expected an array of strings`); a server rein does not know needs
//! `command` and `extensions`.
//!
//! A project's file may not name a program rein runs: its `[lsp.NAME]` tables are held
//! (read, checked, not run; the session says so), and only its `enabled` and the two
//! times count.

use std::collections::BTreeMap;
use std::path::Path;

use super::table::{in_file, is_variable_name, string, strings, Problem, Table};
use super::{ConfigError, Source};
use crate::lsp::spec::ServerSpec;

/// The keys of `[lsp]` that are not server tables.
const SETTINGS: &[&str] = &["enabled", "diagnostics_wait_ms", "start_timeout_ms"];
/// The keys a server table may hold.
const SERVER_KEYS: &[&str] = &[
    "command",
    "args",
    "extensions",
    "env",
    "root_markers",
    "initialization_options",
    "settings",
    "enabled",
];
/// The longest wait for an edit's diagnostics, or for a server to start, one may
/// configure.
pub const MAX_WAIT_MS: u64 = 60_000;

/// One server table as written: the keys it sets.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct ServerTable {
    pub name: String,
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    pub extensions: Option<Vec<String>>,
    pub env: Option<BTreeMap<String, String>>,
    pub root_markers: Option<Vec<String>>,
    pub initialization_options: Option<serde_json::Value>,
    pub settings: Option<serde_json::Value>,
    pub enabled: Option<bool>,
}

/// The `[lsp]` section of one file.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct LspLayer {
    pub enabled: Option<bool>,
    pub wait_ms: Option<u64>,
    pub start_ms: Option<u64>,
    /// The user's server tables.
    pub servers: Vec<ServerTable>,
    /// The names of a project's server tables, which are not run.
    pub held: Vec<String>,
}

impl LspLayer {
    /// This layer over `lower`: its keys win, server tables of one name merge key by key.
    pub fn over(self, lower: LspLayer) -> LspLayer {
        let mut servers = lower.servers;
        for mine in self.servers {
            match servers.iter_mut().find(|s| s.name == mine.name) {
                Some(old) => {
                    let merged = ServerTable {
                        name: mine.name,
                        command: mine.command.or(old.command.take()),
                        args: mine.args.or(old.args.take()),
                        extensions: mine.extensions.or(old.extensions.take()),
                        env: mine.env.or(old.env.take()),
                        root_markers: mine.root_markers.or(old.root_markers.take()),
                        initialization_options: mine
                            .initialization_options
                            .or(old.initialization_options.take()),
                        settings: mine.settings.or(old.settings.take()),
                        enabled: mine.enabled.or(old.enabled),
                    };
                    *old = merged;
                }
                None => servers.push(mine),
            }
        }
        let mut held = lower.held;
        held.extend(self.held);
        LspLayer {
            enabled: self.enabled.or(lower.enabled),
            wait_ms: self.wait_ms.or(lower.wait_ms),
            start_ms: self.start_ms.or(lower.start_ms),
            servers,
            held,
        }
    }

    /// The settings these tables make, over the defaults.
    pub fn settings(self) -> crate::lsp::LspSettings {
        let defaults = crate::lsp::spec::defaults();
        let servers = self
            .servers
            .into_iter()
            .map(|table| {
                let base = defaults.iter().find(|d| d.name == table.name);
                let from_base =
                    |get: fn(&ServerSpec) -> Vec<String>| base.map(get).unwrap_or_default();
                ServerSpec {
                    command: table
                        .command
                        .or_else(|| base.map(|b| b.command.clone()))
                        .unwrap_or_default(),
                    args: table.args.unwrap_or_else(|| from_base(|b| b.args.clone())),
                    extensions: table
                        .extensions
                        .unwrap_or_else(|| from_base(|b| b.extensions.clone())),
                    env: table.env.unwrap_or_default(),
                    root_markers: table
                        .root_markers
                        .unwrap_or_else(|| from_base(|b| b.root_markers.clone())),
                    initialization_options: table.initialization_options,
                    settings: table
                        .settings
                        .or_else(|| base.and_then(|b| b.settings.clone())),
                    enabled: table.enabled.unwrap_or(true),
                    name: table.name,
                }
            })
            .collect();
        crate::lsp::LspSettings {
            enabled: self.enabled.unwrap_or(true),
            servers,
            wait: std::time::Duration::from_millis(
                self.wait_ms
                    .unwrap_or(crate::lsp::DEFAULT_WAIT.as_millis() as u64),
            ),
            held: self.held,
            start_timeout: std::time::Duration::from_millis(
                self.start_ms
                    .unwrap_or(crate::lsp::DEFAULT_START_TIMEOUT.as_millis() as u64),
            ),
        }
    }
}

/// The `[lsp]` section of the file at `path`.
pub(super) fn read_table(
    value: &toml::Value,
    path: &Path,
    source: &Source,
) -> Result<LspLayer, ConfigError> {
    read(value, matches!(source, Source::ProjectFile(_))).map_err(in_file(path))
}

fn read(value: &toml::Value, project: bool) -> Result<LspLayer, Problem> {
    let table = Table::of("lsp", value, "a table [lsp]")?;
    let mut layer = LspLayer::default();
    for (name, key, value) in table.entries() {
        match name.as_str() {
            "enabled" => {
                layer.enabled = Some(value.as_bool().ok_or_else(|| {
                    (key.clone(), super::table::expected("true or false", value))
                })?);
            }
            "diagnostics_wait_ms" | "start_timeout_ms" => {
                let ms = value
                    .as_integer()
                    .and_then(|n| u64::try_from(n).ok())
                    .filter(|n| *n <= MAX_WAIT_MS)
                    .ok_or_else(|| (key.clone(), super::table::expected_int(0, MAX_WAIT_MS)))?;
                if name == "diagnostics_wait_ms" {
                    layer.wait_ms = Some(ms);
                } else {
                    layer.start_ms = Some(ms);
                }
            }
            _ => {
                let server = server_table(name, value, &key)?;
                if project {
                    layer.held.push(server.name);
                } else {
                    layer.servers.push(server);
                }
            }
        }
    }
    Ok(layer)
}

/// One `[lsp.NAME]` table, checked.
fn server_table(name: &str, value: &toml::Value, key: &str) -> Result<ServerTable, Problem> {
    if !super::table::is_server_name(name) {
        return Err((
            key.to_string(),
            format!(
                "a server name may only have letters, digits, `_` and `-` (the settings of [lsp] are {})",
                SETTINGS.join(", ")
            ),
        ));
    }
    let table = Table::of(key, value, &format!("a table [{key}]"))?;
    let mut out = ServerTable {
        name: name.to_string(),
        ..ServerTable::default()
    };
    for (entry, k, v) in table.entries() {
        let err = |p: String| (k.clone(), p);
        match entry.as_str() {
            "command" => {
                let c = string(v).map_err(err)?;
                if c.trim().is_empty() {
                    return Err((k, "the command is empty".into()));
                }
                if c.contains('/') && !Path::new(&c).is_absolute() && !c.starts_with("~/") {
                    return Err((
                        k,
                        "a command with a `/` must be an absolute path (or start with ~/): relative to the project would run the project's program".into(),
                    ));
                }
                out.command = Some(match c.strip_prefix("~/") {
                    Some(rest) => std::env::var_os("HOME")
                        .map(|h| Path::new(&h).join(rest).to_string_lossy().into_owned())
                        .unwrap_or(c),
                    None => c,
                });
            }
            "args" => out.args = Some(strings(v).map_err(err)?),
            "extensions" => {
                let list = strings(v).map_err(err)?;
                out.extensions = Some(
                    list.into_iter()
                        .map(|e| e.trim().trim_start_matches('.').to_string())
                        .filter(|e| !e.is_empty())
                        .collect(),
                );
            }
            "root_markers" => out.root_markers = Some(strings(v).map_err(err)?),
            "env" => {
                let t = Table::of(&k, v, "a table of NAME = \"value\"")?;
                let mut env = BTreeMap::new();
                for (var, vk, vv) in t.entries() {
                    if !is_variable_name(var) {
                        return Err((vk, "not a variable name".into()));
                    }
                    env.insert(var.clone(), string(vv).map_err(|p| (vk.clone(), p))?);
                }
                out.env = Some(env);
            }
            "initialization_options" | "settings" => {
                let json = serde_json::to_value(v).map_err(|e| err(e.to_string()))?;
                if entry == "settings" {
                    out.settings = Some(json);
                } else {
                    out.initialization_options = Some(json);
                }
            }
            "enabled" => {
                out.enabled = Some(
                    v.as_bool()
                        .ok_or_else(|| err(super::table::expected("true or false", v)))?,
                );
            }
            _ => {
                return Err((
                    k,
                    format!("unknown key (known keys: {})", SERVER_KEYS.join(", ")),
                ))
            }
        }
    }
    // A server rein does not know needs what the defaults would give.
    if !crate::lsp::spec::defaults().iter().any(|d| d.name == name) {
        if out.command.is_none() {
            return Err((
                table.key_of("command"),
                "missing (a server rein does not know needs its command)".into(),
            ));
        }
        if out.extensions.as_ref().is_none_or(Vec::is_empty) {
            return Err((
                table.key_of("extensions"),
                "missing (which files it serves, e.g. [\"py\"])".into(),
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, project: bool) -> Result<LspLayer, Problem> {
        let value: toml::Table = text.parse().unwrap();
        read(&value["lsp"], project)
    }

    #[test]
    fn servers_are_read_and_merged_over_the_defaults() {
        let layer = parse(
            r#"
[lsp]
diagnostics_wait_ms = 5000
[lsp.pyright]
enabled = false
[lsp.ruff]
command = "ruff"
args = ["server"]
extensions = [".py"]
env = { RUFF_CACHE_DIR = "/tmp/r" }
settings = { ruff = { lint = { select = ["E"] } } }
"#,
            false,
        )
        .unwrap();
        let settings = layer.settings();
        assert_eq!(settings.wait, std::time::Duration::from_millis(5000));
        let pyright = settings
            .servers
            .iter()
            .find(|s| s.name == "pyright")
            .unwrap();
        assert!(!pyright.enabled);
        assert_eq!(pyright.command, "pyright-langserver", "the default's");
        let ruff = settings.servers.iter().find(|s| s.name == "ruff").unwrap();
        assert_eq!(ruff.extensions, ["py"]);
        assert_eq!(ruff.env["RUFF_CACHE_DIR"], "/tmp/r");
        assert_eq!(
            ruff.settings.as_ref().unwrap()["ruff"]["lint"]["select"][0],
            "E"
        );
    }

    #[test]
    fn bad_tables_name_their_key() {
        let cases = [
            ("[lsp]\ndiagnostics_wait_ms = -1", "lsp.diagnostics_wait_ms"),
            ("[lsp]\nenabled = 1", "lsp.enabled"),
            ("[lsp.x]\nargs = 3", "lsp.x.args"),
            ("[lsp.x]\ncolor = true", "lsp.x.color"),
            ("[lsp.x]\ncommand = \"bin/x\"", "lsp.x.command"),
            ("[lsp.x]\nextensions = [\"x\"]", "lsp.x.command"),
            ("[lsp.x]\ncommand = \"x\"", "lsp.x.extensions"),
            ("[lsp.\"a b\"]\ncommand = \"x\"", "lsp.\"a b\""),
            ("[lsp.x]\nenv = { \"1x\" = \"y\" }", "lsp.x.env.1x"),
        ];
        for (text, key) in cases {
            let (at, problem) = parse(text, false).unwrap_err();
            assert_eq!(at, key, "{text}: {problem}");
        }
    }

    #[test]
    fn a_projects_servers_are_held_and_its_settings_count() {
        let project = parse(
            "[lsp]\nenabled = false\n[lsp.evil]\ncommand = \"/bin/sh\"\nextensions = [\"py\"]",
            true,
        )
        .unwrap();
        let user = parse("[lsp]\nenabled = true\ndiagnostics_wait_ms = 100", false).unwrap();
        let settings = project.over(user).settings();
        assert!(!settings.enabled);
        assert_eq!(settings.wait, std::time::Duration::from_millis(100));
        assert!(settings.servers.is_empty());
        assert_eq!(settings.held, ["evil"]);
    }
}
