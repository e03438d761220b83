//! MCP servers as tool providers: the client side of the Model Context Protocol, over
//! rmcp (the protocol's official Rust SDK).
//!
//! In: the [`ServerConfig`]s the config files declare (`[mcp_servers.NAME]`, see
//! `config/mcp.rs`) and the project root. Out: an [`McpManager`] handle and a channel of
//! [`McpEvent`]s. The front ends and the agent use only this API:
//!
//! ```text
//! let (mcp, events) = McpManager::start(config.mcp_servers.clone(), &root); // returns at once
//! mcp.states()            // [(name, Starting | Ready{tools} | Failed{reason, stderr} | Disabled | Stopped)]
//! mcp.tools()             // Vec<McpTool>: mcp__SERVER__TOOL, description, parameters, annotations
//! mcp.call(&name, args, Some(progress_tx), cancelled).await  // Result<McpOutput, McpError>
//! output.to_tool_result() // rein's ToolResult; an McpError is ToolResult::error(e.to_string())
//! mcp.restart("github")   // stop, start again, in the background
//! mcp.shutdown().await    // every process group gone (SIGTERM, SIGKILL after 2 s)
//! ```
//!
//! Every enabled server starts concurrently in a task of its own (`manager.rs`): a stdio
//! server is a child process in its own process group, killed by the kernel if rein dies
//! first, with stderr captured in bounded lines (the last 20 go with a failure) and its
//! stdout read by rein's own transport (`stdio.rs`: a line over 16 MiB or too deep to
//! parse is cut as it is read, `rewrite.rs`; a listing's unreadable tools are mended or
//! left out), started as `spawn.rs` decides (a user's server in a neutral
//! folder of its own, `workdir.rs`, the project only where its table names it with
//! `${project}`, its program found in the absolute folders of `PATH`), an HTTP server a streamable HTTP session with its headers and
//! a bearer token read from the variable `bearer_token_env` names. `startup_timeout`
//! covers initialize and the first `tools/list` (every page). `tools/list_changed`
//! re-lists; over HTTP the tools are also re-listed once shortly after connecting, since
//! the server's early notification can be lost there. Each change of a server's state is
//! one [`McpEvent::ServerState`]; a server that fails or dies is reported once, with its
//! stderr tail, and can be restarted.
//!
//! The model sees `mcp__SERVER__TOOL` names (`names.rs`: sanitised, at most 64
//! characters, a hash suffix on clashes), the server's description, and its input schema
//! made acceptable to strict providers (`schema.rs`); a schema that cannot be fixed is
//! replaced by "any object" and the tool's description says so ([`McpTool::note`]).
//! Only the tools the server's `allow`/`deny` globs offer are listed or callable.
//!
//! A call waits at most `tool_timeout` without a result or a progress notification;
//! progress goes to the caller's channel; cancelling sends `notifications/cancelled`. The
//! result becomes text (`result.rs`), capped at 4 MiB. A server that dies under a call
//! fails that call with its stderr tail and is marked failed; the manager stays usable.
//! Over HTTP a failed request (an error status, an answer over 16 MiB) fails only that
//! call, in plain words (`http_error.rs`). A server whose tool definitions take more than
//! about 25k tokens of every request is reported once, in a notice.
//! Dropping the last handle kills every server's process group too.
//!
//! Which of a project's servers may start is `external.rs`'s [`external::startable`]
//! (an approval pins the whole table, `pin.rs`); the manager only lists the held ones.
//! Not here (the agent integration's part): permission rules on calls, the `/mcp` view,
//! and sessions' record of tools.

mod config;
mod connection;
mod elicit;
pub mod external;
mod http_error;
mod manager;
pub mod names;
pub mod oauth;
pub mod pin;
pub mod result;
mod rewrite;
pub mod schema;
mod spawn;
mod stdio;
mod workdir;

pub use config::{
    OAuthClient, Origin, ServerConfig, SubagentTools, Transport, DEFAULT_STARTUP_TIMEOUT,
    DEFAULT_TOOL_TIMEOUT,
};
pub use connection::{group_alive, log_line, LOG_LINE_CHARS, NO_SAMPLING};
pub use manager::prompts::{bind_arguments, McpPrompt, McpPromptArgument, MAX_PROMPT_BYTES};
pub use manager::resources::{McpResource, ResourceText, MAX_LISTED as MAX_LISTED_RESOURCES};
pub use manager::McpManager;
pub use pin::Declared;
pub use result::{McpOutput, MAX_RESULT_BYTES};
pub use spawn::{BASE_ENV, PROJECT, RELATIVE_COMMAND, RELATIVE_CWD};

/// A server's state, as `/mcp` and `rein mcp list` will show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    /// Its process or session is being started, or it is in its handshake.
    Starting,
    /// Connected; `tools` of its tools are offered.
    Ready { tools: usize },
    /// It did not start, or it died: why, and its last stderr lines (stdio servers).
    Failed { reason: String, stderr: Vec<String> },
    /// `enabled = false`.
    Disabled,
    /// A project's server the user has not allowed (yet, or for the table it declares
    /// now): what it would run, and why it waits. It starts only once allowed
    /// ([`McpManager::allow`]).
    NotAllowed { launch: String, why: Unapproved },
    /// An HTTP server that answered 401 and rein has no token for it (or the token was
    /// refused and could not be renewed): `rein mcp login NAME`, or the dashboard's `/mcp
    /// login NAME`, logs in.
    NeedsLogin { name: String },
    /// Stopped by [`McpManager::shutdown`].
    Stopped,
}

impl std::fmt::Display for ServerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerState::Starting => f.write_str("starting"),
            ServerState::Ready { tools: 1 } => f.write_str("ready, 1 tool"),
            ServerState::Ready { tools } => write!(f, "ready, {tools} tools"),
            ServerState::Failed { reason, .. } => write!(f, "failed: {reason}"),
            ServerState::Disabled => f.write_str("disabled"),
            ServerState::NotAllowed { launch, why } => match why {
                Unapproved::New => write!(
                    f,
                    "not allowed yet: the project declares it; it would run `{launch}` outside \
                     rein's sandbox"
                ),
                Unapproved::Changed(changes) => write!(
                    f,
                    "not allowed since the project changed it ({}); it would run `{launch}` \
                     outside rein's sandbox",
                    changes.join("; ")
                ),
                Unapproved::OlderApproval => write!(
                    f,
                    "not allowed again yet: you allowed it with an older rein, which pinned only \
                     its command line; it would run `{launch}` outside rein's sandbox"
                ),
                Unapproved::FilesUnpinned(files) => write!(
                    f,
                    "not allowed again yet: you allowed it with an older rein, which did not pin \
                     the project files it runs ({}); it would run `{launch}` outside rein's \
                     sandbox",
                    files.join("; ")
                ),
            },
            ServerState::NeedsLogin { name } => write!(
                f,
                "needs login: the server asks for an OAuth login; `rein mcp login {name}` in a shell, or /mcp login {name} in the dashboard, logs in"
            ),
            ServerState::Stopped => f.write_str("stopped"),
        }
    }
}

/// Why a project's server waits for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unapproved {
    /// The user never allowed it for this project.
    New,
    /// The user allowed another table, or the project files it names changed since: what
    /// changed, one line a key (`bearer_token_env: (unset) -> "GITHUB_TOKEN"`, see
    /// [`Declared::changes`]) or a file (`file mcp_tools.py: changed`).
    Changed(Vec<String>),
    /// The user allowed it with an older rein, which pinned only its command line.
    OlderApproval,
    /// The user allowed its table with an older rein, which did not pin the project files
    /// it names (these, there now).
    FilesUnpinned(Vec<String>),
}

/// A project's server that waits for the user: its table, what it would run (the one
/// line [`external::launch`] gives), and why it waits.
#[derive(Debug, Clone)]
pub struct Held {
    pub config: ServerConfig,
    pub launch: String,
    pub why: Unapproved,
}

/// What the manager reports to the front ends.
#[derive(Debug, Clone, PartialEq)]
pub enum McpEvent {
    /// A server's state changed (a re-list that changes its tools is a new `Ready`).
    ServerState { name: String, state: ServerState },
    /// Something worth a line that changes no state (a failed re-list).
    Notice { name: String, message: String },
    /// The prompts every ready server offers now, as slash commands (after any server's
    /// state changed).
    Prompts { prompts: Vec<McpPrompt> },
    /// The resources every ready server listed (at most [`MAX_LISTED_RESOURCES`] each),
    /// for the `@` finder (after any server's state changed, or one listed them).
    Resources { resources: Vec<McpResource> },
}

/// A progress notification of a call in flight, or a log line of its server while it
/// runs (`log`: then `progress` is 0 and `message` the line, `LEVEL: text`). A message
/// is one sanitised line of at most [`LOG_LINE_CHARS`] characters.
#[derive(Debug, Clone, PartialEq)]
pub struct McpProgress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
    pub log: bool,
}

/// The server's hints about a tool (untrusted: a server may claim anything). The defaults
/// when a server says nothing are the protocol's: not read-only, destructive, not
/// idempotent, open world.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpAnnotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

/// One tool as the model is offered it.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    /// `mcp__SERVER__TOOL`, unique, `[A-Za-z0-9_-]{1,64}`.
    pub name: String,
    /// The server's configured name.
    pub server: String,
    /// The tool's own name on its server (what the call sends).
    pub tool: String,
    pub title: Option<String>,
    /// The server's description (plus [`note`](Self::note), when there is one).
    pub description: String,
    /// The input schema, simplified for strict providers.
    pub parameters: serde_json::Value,
    pub annotations: McpAnnotations,
    /// Set when the server's schema could not be used and "any object" is sent instead.
    pub note: Option<String>,
    /// Subagents are offered it too (the server's `subagents` setting).
    pub subagents: bool,
}

/// Why a call did not give a result. The text is for the model and the user alike.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McpError {
    #[error("no MCP tool named {0:?} is offered")]
    UnknownTool(String),
    #[error("no MCP server named {0:?} is configured")]
    UnknownServer(String),
    #[error("the MCP server {server:?} is not ready ({state})")]
    NotReady { server: String, state: ServerState },
    #[error("{0}")]
    BadArguments(String),
    #[error("the MCP server {server:?} sent nothing for {secs} s while running {tool:?}; the call was cancelled (raise mcp_servers.{server}.tool_timeout_secs if it needs longer)")]
    Timeout {
        server: String,
        tool: String,
        secs: u64,
    },
    #[error("cancelled: the user interrupted the call")]
    Cancelled,
    #[error("the MCP server {server:?} refused the call: {message}")]
    Rejected { server: String, message: String },
    #[error("the MCP server {server:?} stopped during the call{}", stderr_tail(.stderr))]
    ServerExited { server: String, stderr: Vec<String> },
    #[error("the MCP server {server:?} broke the protocol: {message}")]
    Protocol { server: String, message: String },
    /// One HTTP request failed (an error status, an answer too large, no connection);
    /// the server stays ready for the next call.
    #[error("the MCP server {server:?} ({url}) {problem}")]
    Http {
        server: String,
        url: String,
        problem: String,
    },
}

fn stderr_tail(lines: &[String]) -> String {
    match lines.last() {
        Some(last) => format!("; its last stderr line: {last}"),
        None => String::new(),
    }
}
