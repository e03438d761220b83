//! The command line's flags and subcommands, as clap reads them: the flags that start a
//! front end (print mode, the project, the model and its endpoint, the approval mode, the
//! session to continue), the first prompt (`rein "PROMPT"`, or print mode's), and the
//! subcommands that answer and exit (`config`, `models`, `policy`, `sessions`, `mcp`, ...).
//! A first word that names a subcommand is the subcommand, as in Claude Code: `rein config`
//! prints the settings, and a prompt that is only such a word goes after `--` or `-p`.
//! `start_mode` checks the one pair of flags that only make sense together with the
//! sandbox.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use rein_core::permissions::ApprovalMode;
use rein_core::sandbox::Sandbox;

/// rein: a terminal coding agent for any OpenAI-compatible model.
#[derive(Debug, Parser)]
#[command(name = "rein", version, about, long_about = None)]
pub(crate) struct Cli {
    /// Run one prompt headless and exit: PROMPT here or as the positional prompt ("-"
    /// reads the prompt from stdin); piped stdin is added to it, or is the prompt when
    /// none is given.
    #[arg(
        short = 'p',
        long = "print",
        value_name = "PROMPT",
        num_args = 0..=1,
        default_missing_value = ""
    )]
    pub(super) print: Option<String>,

    /// The first message: the dashboard sends it once the session is ready (with -p, the
    /// prompt to run headless). A word that names a subcommand is that subcommand.
    #[arg(value_name = "PROMPT")]
    pub(super) prompt: Option<String>,

    /// The project directory (default: the current directory).
    #[arg(long, value_name = "DIR", global = true)]
    pub(super) cwd: Option<PathBuf>,

    /// Headless output: the reply as text, one JSON object at the end (json), or one JSON
    /// object per agent event (jsonl, also spelled stream-json).
    #[arg(long, value_enum, default_value = "text")]
    pub(super) output_format: Format,

    /// Headless: approve every action that would ask for approval. Where the sandbox
    /// works this is --mode auto (sandboxed commands are auto-approved, and shown so).
    #[arg(long)]
    pub(super) yes: bool,

    /// The approval mode to start in: plan (read and explore only, nothing that writes
    /// runs), default, or auto (sandboxed commands that would ask run without asking;
    /// needs a working sandbox). A resumed session goes on in its own mode without it.
    #[arg(long, value_enum, value_name = "MODE")]
    pub(super) mode: Option<ModeArg>,

    /// Open the dashboard on a built-in scripted model and a small example project: see
    /// every part of rein without an API key.
    #[arg(long, conflicts_with_all = ["print", "prompt", "base_url", "model"])]
    pub(super) demo: bool,

    /// Continue the latest session of this project.
    #[arg(long = "continue", short = 'c', conflicts_with = "resume")]
    pub(super) continue_session: bool,

    /// Continue session ID (an id or a unique prefix of one; `rein sessions` lists them).
    /// Without an ID the dashboard opens with a session picker.
    #[arg(
        short = 'r',
        long,
        value_name = "ID",
        num_args = 0..=1,
        default_missing_value = ""
    )]
    pub(super) resume: Option<String>,

    /// With --continue or --resume: go on in a copy of the session (a new id), leaving
    /// the original as it is; the way to continue a session another rein has open.
    #[arg(long)]
    pub(super) fork: bool,

    /// The chat-completions endpoint, e.g. http://127.0.0.1:8080/v1.
    #[arg(long, value_name = "URL", global = true)]
    pub(super) base_url: Option<String>,

    /// The model: a name the endpoint knows, or PROVIDER/MODEL (e.g. ollama/qwen3-coder,
    /// openrouter/anthropic/claude-sonnet-4.5; `rein models` lists the providers).
    #[arg(long, value_name = "NAME", global = true)]
    pub(super) model: Option<String>,

    /// The model's context window in tokens.
    #[arg(long, value_name = "TOKENS", global = true)]
    pub(super) context_window: Option<u64>,

    #[command(subcommand)]
    pub(super) command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub(super) enum Command {
    /// Serve an editor over the Agent Client Protocol (JSON-RPC on stdin and stdout):
    /// Zed, JetBrains IDEs, Neovim and Emacs clients start `rein acp` as their agent.
    Acp,
    /// Print the resolved settings and where each came from (or confirm the project's).
    Config {
        #[command(subcommand)]
        command: Option<ConfigCommand>,
    },
    /// List the providers and configured models (the current one marked).
    Models,
    /// Inspect the permission rules.
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// List the recorded sessions, newest first (or export one).
    Sessions {
        #[command(subcommand)]
        command: Option<SessionsCommand>,
    },
    /// The MCP servers: list them, or allow one the project declares.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// The hooks (Claude Code's hooks.json): list them with their source and trust,
    /// approve the project's, or run the ones an event matches on a payload.
    Hooks {
        #[command(subcommand)]
        command: Option<HooksCommand>,
    },
    /// The project's host-tool files (.cargo/config.toml, .envrc, .npmrc, ...): list what
    /// changed since rein recorded them (a change holds hooks and the servers that start
    /// in the project), or take them as they are now.
    Steering {
        #[command(subcommand)]
        command: Option<SteeringCommand>,
    },
    /// Take turns back: the project's files as they were before turn N, the conversation
    /// from before it (a new session), or both; or list the turns, or undo the last rewind.
    #[command(group(clap::ArgGroup::new("what").required(true).args(["list", "to", "undo"])))]
    Rewind {
        /// List the session's turns: time, the first line of the message, the files changed.
        #[arg(long)]
        list: bool,
        /// Go back to just before turn N began.
        #[arg(long, value_name = "N")]
        to: Option<u64>,
        /// Take the last rewind back (a checkpoint is taken before every restore).
        #[arg(long, conflicts_with_all = ["to", "list", "conversation"])]
        undo: bool,
        /// With --to: only the project's files.
        #[arg(long, requires = "to", conflicts_with = "conversation")]
        code: bool,
        /// With --to: only the conversation (a new session, the project's latest).
        #[arg(long, requires = "to")]
        conversation: bool,
        /// Say what would change and change nothing.
        #[arg(long, conflicts_with = "list")]
        dry_run: bool,
        /// Also put back files someone changed since the session last wrote them.
        #[arg(long, conflicts_with = "list")]
        force: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// The session (an id or a unique prefix; default: the project's latest).
        #[arg(long, value_name = "ID")]
        resume: Option<String>,
    },
    /// Print what the agent changed in the session (or since turn N) as a unified diff,
    /// from the checkpoints, whatever tool made the change.
    Diff {
        /// Only the changes from turn N on.
        #[arg(long, value_name = "N")]
        since: Option<u64>,
        /// The session (an id or a unique prefix; default: the project's latest).
        #[arg(long, value_name = "ID")]
        resume: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub(super) enum ConfigCommand {
    /// Obey this folder's `.rein/config.toml` as it is now: after rein held it because a
    /// command may have written it, and where it sends requests (`base_url`, `api_key`,
    /// `[providers]`, a model's provider). A later change holds it again.
    Allow,
}

#[derive(Debug, Subcommand)]
pub(super) enum McpCommand {
    /// Start the configured servers and list them with their state and tools.
    List,
    /// Allow the project's server NAME to run as it declares it (remembered for this
    /// project and that exact table: a change to any key asks again).
    Allow {
        /// The server's name, as in `[mcp_servers.NAME]`.
        name: String,
    },
    /// Log in to the HTTP server NAME with OAuth in the browser (the URL is printed too);
    /// the tokens are kept in rein's data folder, for that server's URL only.
    Login {
        /// The server's name, as in `[mcp_servers.NAME]`.
        name: String,
    },
    /// Forget the OAuth tokens of the server NAME.
    Logout {
        /// The server's name, as in `[mcp_servers.NAME]`.
        name: String,
    },
}

#[derive(Debug, Subcommand)]
pub(super) enum HooksCommand {
    /// Approve the project's .rein/hooks.json as it is now, with the project files its
    /// commands name (they run as you, outside the sandbox; a change to the file or to one
    /// of those files holds them again).
    Allow,
    /// Run the hooks EVENT matches on the JSON payload in FILE (Claude Code's fields) and
    /// print what they decided.
    Test {
        /// The event, by Claude Code's name (PreToolUse, Stop, ...).
        event: String,
        /// A file holding the payload's JSON object (its tool_name picks the matcher).
        #[arg(long, value_name = "FILE")]
        payload: std::path::PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub(super) enum SteeringCommand {
    /// Take the project's host-tool files as they are now: hooks, and servers that start
    /// in the project, run again with them.
    Allow,
}

#[derive(Debug, Subcommand)]
pub(super) enum SessionsCommand {
    /// Print session ID as Markdown.
    Export {
        /// A session id or a unique prefix of one.
        id: String,
    },
}

#[derive(Debug, Subcommand)]
pub(super) enum PolicyCommand {
    /// Judge a bash command as the agent would: prints `allow`, `ask` or `deny` and why.
    Check {
        /// The command line, as the model would send it.
        command: String,
        /// Print the verdict, the reason and every part as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum ModeArg {
    Plan,
    Default,
    Auto,
}

impl From<ModeArg> for ApprovalMode {
    fn from(mode: ModeArg) -> ApprovalMode {
        match mode {
            ModeArg::Plan => ApprovalMode::Plan,
            ModeArg::Default => ApprovalMode::Default,
            ModeArg::Auto => ApprovalMode::Auto,
        }
    }
}

/// The mode to start in: `--mode`, or for headless `--yes` where the sandbox works (auto).
/// `--mode auto` without a working sandbox, and `--yes` with another mode, are errors.
pub(super) fn start_mode(cli: &Cli, sandbox: &Sandbox) -> Result<Option<ApprovalMode>, String> {
    let mode = cli.mode.map(ApprovalMode::from);
    if cli.yes && cli.print.is_some() {
        if let Some(other) = mode.filter(|m| *m != ApprovalMode::Auto) {
            return Err(format!(
                "--yes approves what would ask, which is --mode auto; it cannot go with --mode {other}"
            ));
        }
        // Without a sandbox --yes keeps its old meaning: every question approved.
        return Ok(sandbox.works().then_some(ApprovalMode::Auto));
    }
    if let (Some(ApprovalMode::Auto), Some(reason)) = (mode, sandbox.not_working_reason()) {
        return Err(format!(
            "--mode auto: {}",
            rein_core::permissions::mode::auto_unavailable(reason)
        ));
    }
    Ok(mode)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum Format {
    Text,
    /// One JSON object when the run ends (Claude Code's `--output-format json`).
    Json,
    /// One JSON object per event, from `system`/`init` to `result`.
    #[value(alias = "stream-json")]
    Jsonl,
}

impl Cli {
    /// The prompt of print mode (`-p`), or `None` for the dashboard: `-p PROMPT`, else the
    /// positional prompt, else empty (piped stdin may be the prompt). Both at once is an
    /// error.
    pub(super) fn print_prompt(&self) -> Result<Option<String>, String> {
        let Some(flag) = &self.print else {
            return Ok(None);
        };
        match (flag.is_empty(), &self.prompt) {
            (false, Some(_)) => {
                Err("two prompts: give the prompt after -p or on its own, not both".to_string())
            }
            (false, None) => Ok(Some(flag.clone())),
            (true, positional) => Ok(Some(positional.clone().unwrap_or_default())),
        }
    }
}
