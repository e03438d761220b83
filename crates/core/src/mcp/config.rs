//! One configured MCP server, as the config files declare it (`[mcp_servers.NAME]`,
//! parsed and checked in `config/mcp.rs`) and as [`McpManager`](super::McpManager) starts it.
//!
//! A server is a program rein starts and talks to over its stdin and stdout
//! ([`Transport::Stdio`]), or an endpoint it reaches over streamable HTTP
//! ([`Transport::Http`]). Which of its tools are offered is [`ServerConfig::offers`]: the
//! `allow` globs (none: every tool), minus the `deny` globs (deny wins).

use std::path::PathBuf;
use std::time::Duration;

use globset::{Glob, GlobSet, GlobSetBuilder};

use super::Declared;

/// `startup_timeout_secs` when unset: initialize and the first `tools/list` together.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// `tool_timeout_secs` when unset: a call that sends nothing (no result, no progress) for
/// this long fails.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// Where a server was declared: a project's servers are programs a cloned repository
/// names, which the user has to approve before they run (the integration's part).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The user's own `config.toml`.
    User(PathBuf),
    /// The project's `.rein/config.toml`.
    Project(PathBuf),
}

impl Origin {
    /// The file the server is declared in.
    pub fn path(&self) -> &std::path::Path {
        match self {
            Origin::User(path) | Origin::Project(path) => path,
        }
    }
}

/// How rein reaches a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking JSON-RPC on stdin/stdout (stderr is kept for errors).
    Stdio {
        command: String,
        args: Vec<String>,
        /// Set in the server's environment, in the file's order (after what it gets of
        /// rein's).
        env: Vec<(String, String)>,
        /// Variables of rein's environment passed on by name, besides the few every
        /// server gets (`PATH`, `HOME`, the locale, …; see `connection::BASE_ENV`).
        env_vars: Vec<String>,
        /// The working directory as written (`~/…` and `${project}` are expanded at
        /// start). Unset: a neutral folder for the user's servers, the project for a
        /// project's; a relative one is the project's folder for a project's server and
        /// refused in the user's file (see `spawn.rs`).
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP.
    Http {
        url: String,
        /// Extra headers, in the file's order.
        headers: Vec<(String, String)>,
        /// The NAME of the environment variable that holds the bearer token (read when
        /// connecting; the token itself is never in a file).
        bearer_token_env: Option<String>,
        /// A client registered beforehand for its OAuth login (`oauth_client_id`,
        /// `oauth_client_secret_env`); without one rein registers itself (`oauth/`).
        oauth: OAuthClient,
    },
}

/// A pre-registered OAuth client: its ID, and the NAME of the environment variable that
/// holds its secret (read when logging in; the secret itself is never in a file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthClient {
    pub client_id: Option<String>,
    pub client_secret_env: Option<String>,
    /// `oauth_client_metadata_url`: the https URL of a client ID metadata document that
    /// describes rein, used as the client ID where the authorization server supports
    /// such documents (instead of registering).
    pub client_metadata_url: Option<String>,
}

/// One `[mcp_servers.NAME]` table, checked.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The table's name: `[A-Za-z0-9_-]+`.
    pub name: String,
    pub transport: Transport,
    /// `enabled = false` keeps the declaration but never starts the server.
    pub enabled: bool,
    pub startup_timeout: Duration,
    pub tool_timeout: Duration,
    /// Globs over the server's own tool names; empty: every tool.
    pub allow: Vec<String>,
    /// Globs over the server's own tool names; they win over `allow`.
    pub deny: Vec<String>,
    /// Which of its offered tools subagents get (`subagents = …`; none by default).
    pub subagents: SubagentTools,
    pub origin: Origin,
    /// The table as written, canonical: what approving a project's server pins.
    pub declared: Declared,
    /// For a server from a `.mcp.json`: its transport as written there, `${VAR}`s
    /// unexpanded, which listings show (`transport` is what runs: an expanded value may be
    /// a token). `None`: `transport` is as written.
    pub written: Option<Transport>,
}

/// Which of a server's tools the `task` tool's subagents are offered. Subagents explore:
/// by default they get no MCP tool, and a user who wants them to opens what they need.
/// Whatever is offered, every call is still judged by the permission rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum SubagentTools {
    /// `subagents = false` (the default): none.
    #[default]
    None,
    /// `subagents = true`: every tool the server offers.
    All,
    /// `subagents = "read_only"`: the tools the server marks `readOnlyHint`.
    ReadOnly,
    /// `subagents = ["search_*", …]`: the offered tools these globs match.
    Only(Vec<String>),
}

impl ServerConfig {
    /// A stdio server with the defaults, declared in the user's file; for tests and
    /// benches (the files go through `config/mcp.rs`). Its `declared` table holds the
    /// command and the arguments.
    pub fn stdio(name: &str, command: &str, args: &[&str]) -> ServerConfig {
        let mut table = toml::Table::new();
        table.insert("command".into(), command.into());
        if !args.is_empty() {
            table.insert("args".into(), args.to_vec().into());
        }
        ServerConfig {
            name: name.to_string(),
            transport: Transport::Stdio {
                command: command.to_string(),
                args: args.iter().map(|a| a.to_string()).collect(),
                env: Vec::new(),
                env_vars: Vec::new(),
                cwd: None,
            },
            enabled: true,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
            allow: Vec::new(),
            deny: Vec::new(),
            subagents: SubagentTools::None,
            origin: Origin::User(PathBuf::from("config.toml")),
            declared: Declared::from_toml(&table),
            written: None,
        }
    }

    /// Whether the server's tool `tool` is offered: it matches an `allow` glob (or there
    /// are none) and no `deny` glob.
    pub fn offers(&self, tool: &str) -> bool {
        let allowed = self.allow.is_empty() || globs(&self.allow).is_match(tool);
        allowed && !globs(&self.deny).is_match(tool)
    }

    /// Whether subagents are offered the server's tool `tool` (which the server marks
    /// read-only or not): only an offered one, and only as `subagents` says.
    pub fn offers_subagents(&self, tool: &str, read_only: bool) -> bool {
        self.offers(tool)
            && match &self.subagents {
                SubagentTools::None => false,
                SubagentTools::All => true,
                SubagentTools::ReadOnly => read_only,
                SubagentTools::Only(patterns) => globs(patterns).is_match(tool),
            }
    }

    /// The transport as the file writes it, for listings: what [`Self::written`] holds,
    /// else `transport`.
    pub fn shown(&self) -> &Transport {
        self.written.as_ref().unwrap_or(&self.transport)
    }

    /// The command line or URL in one line, as written, for listings and the approval
    /// prompt.
    pub fn summary(&self) -> String {
        match self.shown() {
            Transport::Stdio { command, args, .. } => {
                let mut words = vec![command.as_str()];
                words.extend(args.iter().map(String::as_str));
                shlex::try_join(words.iter().copied()).unwrap_or_else(|_| words.join(" "))
            }
            Transport::Http { url, .. } => url.clone(),
        }
    }
}

/// A glob set from patterns already checked by the config parser; one that fails to
/// build (it cannot, after the check) matches nothing.
fn globs(patterns: &[String]) -> GlobSet {
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        if let Ok(glob) = Glob::new(pattern) {
            set.add(glob);
        }
    }
    set.build().unwrap_or_else(|_| GlobSet::empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_wins_over_allow_and_no_allow_offers_all() {
        let mut server = ServerConfig::stdio("fs", "x", &[]);
        assert!(server.offers("read_file"));
        server.allow = vec!["read_*".into(), "list_directory".into()];
        server.deny = vec!["*_media_file".into()];
        assert!(server.offers("read_file"));
        assert!(server.offers("list_directory"));
        assert!(!server.offers("write_file"));
        assert!(!server.offers("read_media_file"));
    }

    #[test]
    fn subagents_get_nothing_unless_the_config_says_so() {
        let mut server = ServerConfig::stdio("fs", "x", &[]);
        server.deny = vec!["write_*".into()];
        assert!(
            !server.offers_subagents("read_file", true),
            "none by default"
        );
        server.subagents = SubagentTools::All;
        assert!(server.offers_subagents("read_file", false));
        assert!(
            !server.offers_subagents("write_file", true),
            "deny still wins"
        );
        server.subagents = SubagentTools::ReadOnly;
        assert!(server.offers_subagents("read_file", true));
        assert!(!server.offers_subagents("move_file", false));
        server.subagents = SubagentTools::Only(vec!["read_*".into(), "search".into()]);
        assert!(server.offers_subagents("read_text_file", false));
        assert!(server.offers_subagents("search", false));
        assert!(!server.offers_subagents("move_file", true));
    }

    #[test]
    fn summary_quotes_arguments_with_spaces() {
        let server = ServerConfig::stdio("fs", "npx", &["-y", "server", "/a dir"]);
        assert_eq!(server.summary(), "npx -y server '/a dir'");
    }
}
