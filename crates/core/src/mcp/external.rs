//! The MCP servers as the agent's external tools, and which of them may start.
//!
//! [`McpManager`] is a [`ExternalTools`] provider: the tools its ready servers offer now
//! (and one of them found by its qualified name), and a call by that name (dropping the
//! call's future cancels it: rmcp sends the server `notifications/cancelled`). [`startable`] says which configured servers run:
//! the user's own always, a project's only once the user allowed that server of that
//! project as its whole table declares it now ([`crate::consent::trust`], [`super::pin`]); the
//! others are named in a notice with what they would run, what changed since the user
//! allowed them (key by key), and the command that allows them.

use std::path::Path;

use super::{Declared, Held, McpManager, Origin, ServerConfig, Transport, Unapproved};
use crate::consent::file_pin::Pins;
use crate::consent::trust::{Approved, TrustStore};
use crate::conversation::ToolResult;
use crate::tools::external::{
    CallAids, ExternalCall, ExternalPrompt, ExternalRead, ExternalSource, ExternalSpec,
    ExternalTools,
};

impl ExternalTools for McpManager {
    fn specs(&self) -> Vec<ExternalSpec> {
        let project: Vec<String> = self.project_servers();
        self.tools()
            .into_iter()
            .map(|t| external_spec(t, &project))
            .collect()
    }

    fn spec(&self, name: &str) -> Option<ExternalSpec> {
        let tool = self.tool(name)?;
        Some(external_spec(tool, &self.project_servers()))
    }

    fn prompt(&self, command: &str, args: &str) -> Option<ExternalPrompt> {
        self.prompt(command)?;
        let (manager, command, args) = (self.clone(), command.to_string(), args.to_string());
        Some(Box::pin(async move {
            manager
                .get_prompt(&command, &args)
                .await
                .map_err(|e| e.to_string())
        }))
    }

    fn read_resource(&self, server: &str, uri: &str, max_bytes: usize) -> Option<ExternalRead> {
        if !self.has_server(server) {
            return None;
        }
        let (manager, server, uri) = (self.clone(), server.to_string(), uri.to_string());
        Some(Box::pin(async move {
            manager
                .read_resource(&server, &uri, max_bytes)
                .await
                .map(|read| (read.text, read.cut))
                .map_err(|e| e.to_string())
        }))
    }

    fn call(&self, name: &str, args: serde_json::Value) -> ExternalCall {
        self.call_with(name, args, CallAids::default())
    }

    /// The call as the agent makes it: its result or its error as the model reads it, its
    /// progress and log lines to `aids.report` (the latest at most every
    /// `REPORT_EVERY`), the server's forms to `aids.ask`.
    fn call_with(&self, name: &str, args: serde_json::Value, aids: CallAids) -> ExternalCall {
        let manager = self.clone();
        let name = name.to_string();
        Box::pin(async move {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let progress = aids.report.is_some().then_some(tx);
            let call = manager.call_asking(
                &name,
                args,
                progress,
                aids.ask,
                std::future::pending::<()>(),
            );
            tokio::pin!(call);
            // The latest line waits for its turn: at most one report per REPORT_EVERY,
            // however fast the server sends.
            let mut pending: Option<String> = None;
            let mut next = tokio::time::Instant::now();
            let outcome = loop {
                tokio::select! {
                    outcome = &mut call => break outcome,
                    Some(update) = rx.recv() => pending = Some(progress_line(&update)),
                    () = tokio::time::sleep_until(next), if pending.is_some() => {
                        if let (Some(line), Some(report)) = (pending.take(), &aids.report) {
                            report(line);
                        }
                        next = tokio::time::Instant::now() + REPORT_EVERY;
                    }
                }
            };
            match outcome {
                Ok(out) => out.to_tool_result(),
                Err(e) => ToolResult::error(format!("Error: {name} failed - {e}")),
            }
        })
    }
}

/// The least time between two progress reports of one call.
const REPORT_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// A progress or log notification as the running tool's line shows it: `3/10 message`,
/// `3 message`, or the log line; at most [`crate::mcp::LOG_LINE_CHARS`] characters and `…`.
pub fn progress_line(update: &crate::mcp::McpProgress) -> String {
    let message = update.message.as_deref().unwrap_or_default();
    if update.log {
        return message.to_string();
    }
    let number = |n: f64| {
        if n.fract() == 0.0 && n.abs() < 1e15 {
            format!("{}", n as i64)
        } else {
            format!("{n:.1}")
        }
    };
    let count = match update.total {
        Some(total) => format!("{}/{}", number(update.progress), number(total)),
        None => number(update.progress),
    };
    if message.is_empty() {
        count
    } else {
        crate::text::sanitize::line(&format!("{count} {message}"), crate::mcp::LOG_LINE_CHARS)
    }
}

/// What the agent knows of an MCP tool; `project` names the servers a project declared.
fn external_spec(t: crate::mcp::McpTool, project: &[String]) -> ExternalSpec {
    ExternalSpec {
        source: Some(ExternalSource {
            project: project.contains(&t.server),
            subagents: t.subagents,
            server: t.server,
            tool: t.tool,
        }),
        name: t.name,
        description: t.description,
        parameters: t.parameters,
    }
}

/// A project's server in one line, for the notice and the listings: the command line and
/// what decides what it runs (the environment it adds, the variables of yours it gets,
/// its folder), or the URL and what is sent (its headers, the variable its token comes
/// from). What an approval pins is the whole table ([`ServerConfig::declared`]).
pub fn launch(server: &ServerConfig) -> String {
    let mut out = server.summary();
    match server.shown() {
        Transport::Stdio {
            env, env_vars, cwd, ..
        } => {
            for (key, value) in env {
                out.push_str(&format!(" [env {key}={value}]"));
            }
            if !env_vars.is_empty() {
                // Which of the user's variables (tokens, say) it would read.
                out.push_str(&format!(" [gets your {}]", env_vars.join(", ")));
            }
            if let Some(cwd) = cwd {
                out.push_str(&format!(" [in {}]", cwd.display()));
            }
        }
        Transport::Http {
            headers,
            bearer_token_env,
            ..
        } => {
            for (key, value) in headers {
                out.push_str(&format!(" [header {key}: {value}]"));
            }
            if let Some(var) = bearer_token_env {
                out.push_str(&format!(" [sends your token from {var}]"));
            }
        }
    }
    out
}

/// Which configured servers start for a project, and which wait for the user.
#[derive(Debug, Default)]
pub struct Startable {
    /// The user's own servers, and the project's the user allowed as declared now.
    pub start: Vec<ServerConfig>,
    /// The project's servers not allowed (yet, or for what they declare now).
    pub held: Vec<Held>,
    /// A line for each held server: what it would run, what changed, how to allow it.
    pub notices: Vec<String>,
}

/// Why the project's `server` waits, or `None` when the user allowed its table as it is
/// and the project files it names are as they were then ([`super::pin::named_paths`]; a
/// file that changed is a change like a key's: `file mcp_tools.py: changed`).
pub fn unapproved(server: &ServerConfig, trust: &TrustStore, project: &Path) -> Option<Unapproved> {
    let lines = |changes: Vec<crate::consent::file_pin::PinChange>| -> Vec<String> {
        changes.iter().map(ToString::to_string).collect()
    };
    match trust.approved(project, &server.name) {
        None => Some(Unapproved::New),
        Some(Approved::OlderForm) => Some(Unapproved::OlderApproval),
        Some(Approved::Table(table, files)) => match Declared::from_json(table) {
            Some(before) if before == server.declared => {
                let paths = super::pin::named_paths(server, project);
                match files {
                    Some(pins) => {
                        let changes = pins.changes(project, &paths);
                        (!changes.is_empty()).then(|| Unapproved::Changed(lines(changes)))
                    }
                    // Approved before rein pinned files: only a table naming none holds.
                    None => {
                        let there = Pins::default().changes(project, &paths);
                        (!there.is_empty()).then(|| Unapproved::FilesUnpinned(lines(there)))
                    }
                }
            }
            Some(before) => Some(Unapproved::Changed(server.declared.changes(&before))),
            // Not a table: nothing the user can have approved.
            None => Some(Unapproved::New),
        },
    }
}

/// Approve the project's `server` for `project` in `trust` as its table declares it now,
/// with the project files it names as they are now (`rein mcp allow`, `/mcp allow`): the
/// files pinned, a line each.
pub fn approve(
    server: &ServerConfig,
    project: &Path,
    trust: &mut TrustStore,
) -> Result<Vec<String>, String> {
    let pins = Pins::take(project, &super::pin::named_paths(server, project));
    trust
        .trust_pinned(project, &server.name, &server.declared.to_json(), &pins)
        .map_err(|e| format!("the approval was not saved: {e}"))?;
    Ok(pins.lines())
}

/// The servers that may start for `project`, and those that wait for the user's approval.
pub fn startable(servers: &[ServerConfig], trust: &TrustStore, project: &Path) -> Startable {
    let mut out = Startable::default();
    for server in servers {
        let Origin::Project(file) = &server.origin else {
            out.start.push(server.clone());
            continue;
        };
        let why = match unapproved(server, trust, project) {
            Some(why) if server.enabled => why,
            _ => {
                out.start.push(server.clone());
                continue;
            }
        };
        let launch = launch(server);
        let status = match &why {
            Unapproved::New => "does not run until you allow it".to_string(),
            Unapproved::Changed(changes) => format!(
                "changed since you allowed it ({}) and does not run until you allow it again",
                changes.join("; ")
            ),
            Unapproved::OlderApproval => "was allowed by an older rein, which pinned only its \
                command line, and does not run until you allow it again"
                .to_string(),
            Unapproved::FilesUnpinned(files) => format!(
                "was allowed by an older rein, which did not pin the project files it runs \
                 ({}), and does not run until you allow it again",
                files.join("; ")
            ),
        };
        out.notices.push(format!(
            "the project's MCP server `{}` ({}) {status}: it would run `{launch}` outside \
             rein's sandbox; `/mcp allow {}` in the dashboard (or `rein mcp allow {}`) allows \
             it for this project",
            server.name,
            file.display(),
            server.name,
            server.name
        ));
        out.held.push(Held {
            config: server.clone(),
            launch,
            why,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn project(server: ServerConfig) -> ServerConfig {
        ServerConfig {
            origin: Origin::Project(PathBuf::from("/work/p/.rein/config.toml")),
            ..server
        }
    }

    #[test]
    fn the_line_says_what_decides_what_runs_and_what_is_sent() {
        let mut db = ServerConfig::stdio("db", "node", &["db.js"]);
        if let Transport::Stdio {
            env, env_vars, cwd, ..
        } = &mut db.transport
        {
            env.push(("LD_PRELOAD".into(), "/tmp/x.so".into()));
            env_vars.push("AWS_SECRET_ACCESS_KEY".into());
            *cwd = Some(PathBuf::from("tools"));
        }
        assert_eq!(
            launch(&db),
            "node db.js [env LD_PRELOAD=/tmp/x.so] [gets your AWS_SECRET_ACCESS_KEY] [in tools]"
        );
        let docs = ServerConfig {
            transport: Transport::Http {
                url: "https://docs.example/mcp".into(),
                headers: vec![("X-Client".into(), "rein".into())],
                bearer_token_env: Some("GITHUB_TOKEN".into()),
                oauth: Default::default(),
            },
            ..ServerConfig::stdio("docs", "unused", &[])
        };
        assert_eq!(
            launch(&docs),
            "https://docs.example/mcp [header X-Client: rein] [sends your token from GITHUB_TOKEN]"
        );
    }

    #[test]
    fn the_users_servers_and_disabled_ones_are_never_held() {
        let data = tempfile::tempdir().unwrap();
        let (trust, _) = TrustStore::load(data.path());
        let mut off = project(ServerConfig::stdio("off", "node", &["x.js"]));
        off.enabled = false;
        let servers = vec![
            ServerConfig::stdio("time", "uvx", &["mcp-server-time"]),
            off,
            project(ServerConfig::stdio("db", "node", &["db.js"])),
        ];
        let out = startable(&servers, &trust, Path::new("/work/p"));
        let started: Vec<&str> = out.start.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(started, ["time", "off"]);
        assert_eq!(out.held.len(), 1);
        assert_eq!(out.held[0].launch, "node db.js");
        assert!(
            out.notices[0]
                .contains("`db` (/work/p/.rein/config.toml) does not run until you allow it")
                && out.notices[0].contains("/mcp allow db"),
            "{}",
            out.notices[0]
        );
    }
}
