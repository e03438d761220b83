//! What approving a project's server pins: its whole `[mcp_servers.NAME]` table as written,
//! and, when the project changed it since, what changed, key by key.
//!
//! A project's server runs only once the user allowed it, and what the user allowed must
//! be everything that decides what runs and what is sent: the command line, the
//! environment, the folder, the URL, the headers, the variable a token is read from, and
//! the settings around them (`enabled`, the timeouts, `allow`/`deny`, `subagents`). So the
//! approval is the table itself, not a summary of some of its fields: [`Declared`] is the
//! table in a canonical form (keys sorted at every level, values as JSON), built from the
//! parsed TOML, so writing `env` inline or as `[mcp_servers.x.env]` is the same table and
//! a key a later rein adds is pinned without anyone listing it here.
//!
//! [`Declared::changes`] words the difference between the approved table and the current
//! one, one line a key (nested tables one line a key of theirs):
//! `bearer_token_env: (unset) -> "GITHUB_TOKEN"`, `env.LD_PRELOAD: (unset) -> "/tmp/x.so"`.
//! [`Declared::lines`] is the table as `key = value` lines, for what `rein mcp allow`
//! approves. Values are written the way TOML writes them.
//!
//! The approval also pins the project files the table names ([`named_paths`]): a
//! server's table says `command = "python3"`, `args = ["mcp_tools.py"]`, and what runs is
//! `mcp_tools.py`, which the model can rewrite without touching the table. So the paths
//! inside the project that its `command` (when it has a `/` in it or `${project}`), its
//! `args` (and the values of `--flag=value` ones) and its `env` values name, relative
//! ones taken from its folder (`cwd`, else the project), are pinned with their contents
//! ([`crate::consent::file_pin::Pins`]), and checked each time the server is about to start.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{ServerConfig, Transport, PROJECT};

/// The paths inside `project` (relative to it) that the stdio server `config` names, each
/// once; none for an HTTP server.
pub fn named_paths(config: &ServerConfig, project: &Path) -> Vec<PathBuf> {
    let Transport::Stdio {
        command,
        args,
        env,
        cwd,
        ..
    } = &config.transport
    else {
        return Vec::new();
    };
    let expand = |text: &str| text.replace(PROJECT, &project.to_string_lossy());
    // Its folder: relative ones are the project's (a user's relative `cwd` is refused).
    let folder = match cwd {
        Some(dir) => {
            let dir = expand(&dir.to_string_lossy());
            if dir.starts_with('~') {
                None
            } else {
                Some(project.join(dir))
            }
        }
        None => Some(project.to_path_buf()),
    };
    let mut words: Vec<&str> = Vec::new();
    if command.contains('/') || command.contains(PROJECT) {
        words.push(command);
    }
    words.extend(args.iter().map(String::as_str));
    words.extend(env.iter().map(|(_, v)| v.as_str()));
    let mut out: Vec<PathBuf> = Vec::new();
    for word in words {
        let word = expand(word);
        let text = match word.split_once('=') {
            Some((flag, value)) if flag.starts_with('-') => value,
            _ => word.as_str(),
        };
        if text.is_empty() || text.starts_with('-') || text.starts_with('~') || text.contains("://")
        {
            continue;
        }
        let path = Path::new(text);
        let Some(base) = (if path.is_absolute() {
            Some(project)
        } else {
            folder.as_deref()
        }) else {
            continue;
        };
        if let Some(rel) = crate::consent::file_pin::inside(&base.join(path), project) {
            if !out.contains(&rel) {
                out.push(rel);
            }
        }
    }
    out
}

/// A server's table as declared, in canonical form (see the module doc).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Declared(Map<String, Value>);

impl Declared {
    /// The canonical form of a parsed `[mcp_servers.NAME]` table.
    pub fn from_toml(table: &toml::Table) -> Declared {
        Declared(object(table.iter().map(|(k, v)| (k.clone(), json(v)))))
    }

    /// A table kept as JSON (the trust file's); `None` when it is not an object.
    pub fn from_json(value: &Value) -> Option<Declared> {
        let Value::Object(map) = canonical(value) else {
            return None;
        };
        Some(Declared(map))
    }

    /// The table as JSON, for the trust file.
    pub fn to_json(&self) -> Value {
        Value::Object(self.0.clone())
    }

    /// `key = value`, one line a key, in key order.
    pub fn lines(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|(k, v)| format!("{} = {}", key(k), toml_text(v)))
            .collect()
    }

    /// What changed from `before` to `self`, one line a changed key, in key order:
    /// `key: old -> new`, `(unset)` for a key one of them lacks. Empty when equal.
    pub fn changes(&self, before: &Declared) -> Vec<String> {
        let mut out = Vec::new();
        diff("", &before.0, &self.0, &mut out);
        out
    }
}

fn diff(
    prefix: &str,
    before: &Map<String, Value>,
    now: &Map<String, Value>,
    out: &mut Vec<String>,
) {
    let mut keys: Vec<&String> = before.keys().chain(now.keys()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        let path = format!("{prefix}{}", key(k));
        match (before.get(k), now.get(k)) {
            (Some(Value::Object(a)), Some(Value::Object(b))) => {
                diff(&format!("{path}."), a, b, out);
            }
            (a, b) if a != b => {
                let show = |v: Option<&Value>| v.map_or("(unset)".to_string(), toml_text);
                out.push(format!("{path}: {} -> {}", show(a), show(b)));
            }
            _ => {}
        }
    }
}

/// A key as TOML writes it: bare when it can be, quoted otherwise.
fn key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_string()
    } else {
        Value::String(k.to_string()).to_string()
    }
}

/// A value as TOML writes it (strings quoted and escaped, inline arrays and tables).
fn toml_text(value: &Value) -> String {
    match value {
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(toml_text).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) if map.is_empty() => "{}".to_string(),
        Value::Object(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{} = {}", key(k), toml_text(v)))
                .collect();
            format!("{{ {} }}", entries.join(", "))
        }
        other => other.to_string(),
    }
}

/// An object with its keys in order (serde_json's map may keep insertion order).
fn object(entries: impl Iterator<Item = (String, Value)>) -> Map<String, Value> {
    let mut entries: Vec<(String, Value)> = entries.collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries.into_iter().collect()
}

fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            Value::Object(object(map.iter().map(|(k, v)| (k.clone(), canonical(v)))))
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

fn json(value: &toml::Value) -> Value {
    match value {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(n) => Value::from(*n),
        // A float JSON cannot hold (NaN, infinities) is kept as its TOML text.
        toml::Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Value::Number)
            .unwrap_or_else(|| Value::String(f.to_string())),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(items) => Value::Array(items.iter().map(json).collect()),
        toml::Value::Table(table) => {
            Value::Object(object(table.iter().map(|(k, v)| (k.clone(), json(v)))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_a_server_runs_are_named_from_its_folder() {
        let project = Path::new("/p");
        let mut server = ServerConfig::stdio(
            "t",
            "python3",
            &[
                "mcp_tools.py",
                "--config=conf/a.toml",
                "-v",
                "${project}/lib/x.py",
                "/etc/x",
            ],
        );
        let named = |s: &ServerConfig| -> Vec<String> {
            named_paths(s, project)
                .iter()
                .map(|p| p.display().to_string())
                .collect()
        };
        assert_eq!(named(&server), ["mcp_tools.py", "conf/a.toml", "lib/x.py"]);
        if let Transport::Stdio {
            cwd, command, env, ..
        } = &mut server.transport
        {
            *cwd = Some(PathBuf::from("tools"));
            *command = "./run.sh".into();
            env.push(("NODE_OPTIONS".into(), "--require=./hook.js".into()));
        }
        assert_eq!(
            named(&server),
            [
                "tools/run.sh",
                "tools/mcp_tools.py",
                "tools/conf/a.toml",
                "lib/x.py",
                "tools/hook.js"
            ]
        );
    }

    fn table(text: &str) -> Declared {
        Declared::from_toml(&text.parse::<toml::Table>().unwrap())
    }

    #[test]
    fn the_same_table_written_another_way_is_the_same_pin() {
        let inline = table("url = \"https://h/mcp\"\nheaders = { B = \"2\", A = \"1\" }\n");
        let section = table("url = \"https://h/mcp\"\n[headers]\nA = \"1\"\nB = \"2\"\n");
        assert_eq!(inline, section);
        assert_ne!(
            inline,
            table("url = \"https://h/mcp\"\nheaders = { A = \"1\" }\n")
        );
        // Through the trust file and back.
        assert_eq!(Declared::from_json(&inline.to_json()), Some(inline.clone()));
        assert_eq!(Declared::from_json(&Value::String("x".into())), None);
    }

    #[test]
    fn changes_are_worded_key_by_key() {
        let approved =
            table("url = \"https://docs.example/mcp\"\nheaders = { X-Client = \"rein\" }\n");
        let now = table(
            "url = \"https://docs.example/mcp\"\nheaders = { X-Client = \"rein\", \"X Two\" = \"2\" }\n\
             bearer_token_env = \"GITHUB_TOKEN\"\ntool_timeout_secs = 5\n",
        );
        assert_eq!(
            now.changes(&approved),
            [
                "bearer_token_env: (unset) -> \"GITHUB_TOKEN\"",
                "headers.\"X Two\": (unset) -> \"2\"",
                "tool_timeout_secs: (unset) -> 5",
            ]
        );
        assert!(now.changes(&now).is_empty());
        let stdio =
            table("command = \"node\"\nargs = [\"a.js\"]\nenv = { A = \"1\" }\nenabled = true\n");
        let edited = table("command = \"node\"\nargs = [\"b.js\", \"--x\"]\nenv = { }\n");
        assert_eq!(
            edited.changes(&stdio),
            [
                "args: [\"a.js\"] -> [\"b.js\", \"--x\"]",
                "enabled: true -> (unset)",
                "env.A: \"1\" -> (unset)",
            ]
        );
        // A key that is a table on one side only is shown whole.
        let odd = table("command = \"node\"\nargs = [\"a.js\"]\nenv = \"x\"\nenabled = true\n");
        assert_eq!(odd.changes(&stdio), ["env: { A = \"1\" } -> \"x\""]);
    }

    #[test]
    fn lines_are_the_table_as_toml_writes_it() {
        let t = table(
            "command = \"npx\"\nargs = [\"-y\", \"say \\\"hi\\\"\"]\nenv = { NODE_ENV = \"production\" }\n\
             subagents = false\nstartup_timeout_secs = 20\n",
        );
        assert_eq!(
            t.lines(),
            [
                "args = [\"-y\", \"say \\\"hi\\\"\"]",
                "command = \"npx\"",
                "env = { NODE_ENV = \"production\" }",
                "startup_timeout_secs = 20",
                "subagents = false",
            ]
        );
    }
}
