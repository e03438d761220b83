//! `config.example.toml` goes through the real loader, so the example never drifts from the
//! code: it must parse, every value in it must equal the default, and every setting rein
//! has must be documented in it (commented-out keys included).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::support::write;
use rein_core::config::{Config, Environment, Overrides, Source};
use tempfile::TempDir;

fn example_text() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.toml");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The example with every commented-out `# key = value` line (and `# [[table]]` and
/// `# [mcp_servers.NAME]` header) switched on.
fn uncommented(text: &str) -> String {
    text.lines()
        .map(|line| match line.strip_prefix("# ") {
            Some(rest) if is_assignment(rest) || is_array_table(rest) || is_mcp_server(rest) => {
                rest
            }
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A server's table header, MCP's or a language server's.
fn is_mcp_server(line: &str) -> bool {
    (line.starts_with("[mcp_servers.") || line.starts_with("[lsp.")) && line.ends_with(']')
}

fn is_array_table(line: &str) -> bool {
    line.starts_with("[[") && line.ends_with("]]")
}

/// The example without its `[sandbox]` section, which only the user's own file may hold.
fn without_sandbox(text: &str) -> String {
    let mut out = Vec::new();
    let mut skipping = false;
    for line in text.lines() {
        if line.starts_with('[') {
            skipping = line == "[sandbox]";
        }
        if !skipping {
            out.push(line);
        }
    }
    out.join("\n")
}

fn is_assignment(line: &str) -> bool {
    line.split_once(" = ").is_some_and(|(key, _)| {
        !key.is_empty() && key.chars().all(|c| c.is_ascii_lowercase() || c == '_')
    })
}

/// A project root and a `REIN_HOME`, both temp dirs, and an empty home (no
/// `~/.agents/env`), so nothing of the real machine is read.
struct Dirs {
    root: TempDir,
    rein_home: TempDir,
    home: TempDir,
}

impl Dirs {
    fn new() -> Self {
        Dirs {
            root: TempDir::new().unwrap(),
            rein_home: TempDir::new().unwrap(),
            home: TempDir::new().unwrap(),
        }
    }

    fn user_file(&self) -> PathBuf {
        self.rein_home.path().join("config.toml")
    }

    fn project_file(&self) -> PathBuf {
        self.root.path().join(".rein").join("config.toml")
    }

    fn load(&self) -> Config {
        let env = Environment {
            vars: HashMap::from([(
                "REIN_HOME".to_string(),
                self.rein_home.path().display().to_string(),
            )]),
            home: Some(self.home.path().to_path_buf()),
        };
        Config::load(self.root.path(), &Overrides::default(), &env)
            .unwrap_or_else(|e| panic!("config.example.toml does not load: {e}"))
    }
}

fn assert_same_values(example: &Config, defaults: &Config) {
    assert_eq!(example.base_url.value, defaults.base_url.value);
    assert_eq!(example.api_key.value, defaults.api_key.value);
    assert_eq!(example.model.value, defaults.model.value);
    assert_eq!(example.context_window.value, defaults.context_window.value);
    assert_eq!(
        example.idle_timeout_secs.value,
        defaults.idle_timeout_secs.value
    );
    assert_eq!(
        example.connect_timeout_secs.value,
        defaults.connect_timeout_secs.value
    );
    assert_eq!(example.max_tries.value, defaults.max_tries.value);
    assert_eq!(
        example.keepalive_timeout_secs.value,
        defaults.keepalive_timeout_secs.value
    );
    assert_eq!(example.max_reply_mb.value, defaults.max_reply_mb.value);
    assert_eq!(
        example.bash_timeout_secs.value,
        defaults.bash_timeout_secs.value
    );
    assert_eq!(example.max_steps.value, defaults.max_steps.value);
    assert_eq!(
        example.subagent_max_steps.value,
        defaults.subagent_max_steps.value
    );
    assert_eq!(example.cap_chars.value, defaults.cap_chars.value);
    assert_eq!(example.stub_chars.value, defaults.stub_chars.value);
    assert_eq!(example.keep_recent.value, defaults.keep_recent.value);
    assert_eq!(example.compact_at.value, defaults.compact_at.value);
    assert_eq!(example.compact_to.value, defaults.compact_to.value);
    assert_eq!(example.compact_model.value, defaults.compact_model.value);
    assert_eq!(example.bash_rules, defaults.bash_rules);
    assert!(example.mcp_servers.is_empty() && defaults.mcp_servers.is_empty());
    assert_eq!(
        example.sensitive_reads.value,
        defaults.sensitive_reads.value
    );
    assert_eq!(example.sandbox_mode.value, defaults.sandbox_mode.value);
    assert_eq!(
        example.sandbox_network.value,
        defaults.sandbox_network.value
    );
    assert_eq!(
        example.sandbox_writable.value,
        defaults.sandbox_writable.value
    );
    assert_eq!(example.ui_bell.value, defaults.ui_bell.value);
    assert_eq!(
        example.ui_notifications.value,
        defaults.ui_notifications.value
    );
    assert_eq!(
        example.ui_notify_after_secs.value,
        defaults.ui_notify_after_secs.value
    );
}

#[test]
fn example_as_user_file_holds_the_defaults() {
    let defaults = Dirs::new().load();
    let dirs = Dirs::new();
    write(&dirs.user_file(), &example_text());
    let example = dirs.load();
    assert_same_values(&example, &defaults);

    // Every key set in the example was read from it; api_key is commented out.
    let file = Source::UserFile(dirs.user_file());
    for source in [
        &example.base_url.source,
        &example.model.source,
        &example.context_window.source,
        &example.idle_timeout_secs.source,
        &example.connect_timeout_secs.source,
        &example.bash_timeout_secs.source,
    ] {
        assert_eq!(source, &file);
    }
    assert_eq!(example.max_tries.source, file);
    assert_eq!(example.max_steps.source, file);
    assert_eq!(example.subagent_max_steps.source, file);
    assert_eq!(example.cap_chars.source, file);
    assert_eq!(example.stub_chars.source, file);
    assert_eq!(example.keep_recent.source, file);
    assert_eq!(example.compact_at.source, file);
    assert_eq!(example.compact_to.source, file);
    assert_eq!(example.compact_model.source, file);
    assert_eq!(example.sensitive_reads.source, file);
    assert_eq!(example.sandbox_mode.source, file);
    assert_eq!(example.sandbox_network.source, file);
    assert_eq!(example.sandbox_writable.source, file);
    assert_eq!(example.api_key.source, Source::Default);
}

#[test]
fn example_as_project_file_holds_the_defaults() {
    let defaults = Dirs::new().load();
    let dirs = Dirs::new();
    write(&dirs.project_file(), &without_sandbox(&example_text()));
    let example = dirs.load();
    assert_same_values(&example, &defaults);
    assert_eq!(
        example.model.source,
        Source::ProjectFile(dirs.project_file())
    );
}

#[test]
fn every_documented_key_is_accepted_and_every_setting_is_documented() {
    let dirs = Dirs::new();
    let text = uncommented(&example_text());
    assert!(
        text.lines().any(|l| l.starts_with("api_key = ")),
        "the example should document api_key (commented out)"
    );
    write(&dirs.user_file(), &text);
    let config = dirs.load();
    let servers: Vec<(&str, String)> = config
        .mcp_servers
        .iter()
        .map(|s| (s.name.as_str(), s.summary()))
        .collect();
    assert_eq!(
        servers,
        [
            (
                "filesystem",
                "npx -y @modelcontextprotocol/server-filesystem '${project}'".to_string()
            ),
            ("remote", "https://mcp.example.com/mcp".to_string())
        ]
    );

    // `describe` lists every setting; with all keys switched on, each one must come from
    // the file, so a setting missing from the example fails here.
    let file = format!("({})", dirs.user_file().display());
    let description = config.describe();
    let settings: Vec<&str> = description
        .lines()
        .filter(|l| {
            ![
                "user config",
                "project config",
                "project .mcp.json",
                "data dir",
            ]
            .iter()
            .any(|p| l.starts_with(p))
        })
        .collect();
    assert!(settings.len() >= 9, "{description}");
    for line in settings {
        assert!(
            line.ends_with(&file),
            "not documented in the example: {line}"
        );
    }
}
