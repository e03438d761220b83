//! The MCP servers as the agent's external tools, and which of them may start.
//!
//! [`McpManager`] is a [`ExternalTools`] provider: the tools its ready servers offer now,
//! and a call by the qualified name (dropping the call's future cancels it: rmcp sends the
//! server `notifications/cancelled`). [`startable`] says which configured servers run:
//! the user's own always, a project's only once the user allowed that server of that
//! project to run that exact command line ([`crate::trust`]); the others are named in a
//! notice with the command that allows them.

use std::path::Path;

use super::{McpManager, Origin, ServerConfig, Transport};
use crate::conversation::ToolResult;
use crate::tools::external::{ExternalCall, ExternalSource, ExternalSpec, ExternalTools};
use crate::trust::TrustStore;

impl ExternalTools for McpManager {
    fn specs(&self) -> Vec<ExternalSpec> {
        let project: Vec<String> = self.project_servers();
        self.tools()
            .into_iter()
            .map(|t| ExternalSpec {
                source: Some(ExternalSource {
                    project: project.contains(&t.server),
                    subagents: t.subagents,
                    server: t.server,
                    tool: t.tool,
                }),
                name: t.name,
                description: t.description,
                parameters: t.parameters,
            })
            .collect()
    }

    fn call(&self, name: &str, args: serde_json::Value) -> ExternalCall {
        let manager = self.clone();
        let name = name.to_string();
        Box::pin(async move {
            match manager
                .call(&name, args, None, std::future::pending::<()>())
                .await
            {
                Ok(out) => out.to_tool_result(),
                Err(e) => ToolResult::error(format!("Error: {name} failed - {e}")),
            }
        })
    }
}

/// What the user approves of a project's server: everything that decides what runs (the
/// command line or URL, the environment it adds, its folder).
pub fn launch(server: &ServerConfig) -> String {
    let mut out = server.summary();
    if let Transport::Stdio {
        env, env_vars, cwd, ..
    } = &server.transport
    {
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
    out
}

/// Which configured servers start for a project, and which wait for the user.
#[derive(Debug, Default)]
pub struct Startable {
    /// The user's own servers, and the project's the user allowed for what they run now.
    pub start: Vec<ServerConfig>,
    /// The project's servers not allowed (yet, or for what they run now), each with what
    /// it would run ([`launch`]).
    pub held: Vec<(ServerConfig, String)>,
    /// A line for each held server: what it would run and how to allow it.
    pub notices: Vec<String>,
}

/// The servers that may start for `project`, and those that wait for the user's approval.
pub fn startable(servers: &[ServerConfig], trust: &TrustStore, project: &Path) -> Startable {
    let mut out = Startable::default();
    for server in servers {
        match &server.origin {
            Origin::Project(file)
                if server.enabled && !trust.is_trusted(project, &server.name, &launch(server)) =>
            {
                out.notices.push(format!(
                    "the project's MCP server `{}` ({}) does not run until you allow it: it \
                     would run `{}` outside rein's sandbox; `/mcp allow {}` in the dashboard \
                     (or `rein mcp allow {}`) allows it for this project",
                    server.name,
                    file.display(),
                    launch(server),
                    server.name,
                    server.name
                ));
                out.held.push((server.clone(), launch(server)));
            }
            _ => out.start.push(server.clone()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn a_projects_server_starts_only_once_allowed_for_its_exact_command_line() {
        let data = tempfile::tempdir().unwrap();
        let project = Path::new("/work/p");
        let user = ServerConfig::stdio("time", "uvx", &["mcp-server-time"]);
        let mut mine = ServerConfig::stdio("db", "node", &["db.js"]);
        mine.origin = Origin::Project(PathBuf::from("/work/p/.rein/config.toml"));
        let servers = vec![user.clone(), mine.clone()];
        let (mut trust, _) = TrustStore::load(data.path());
        let out = startable(&servers, &trust, project);
        assert_eq!(out.start.len(), 1);
        assert_eq!(out.start[0].name, "time", "the user's own always");
        assert_eq!(out.held.len(), 1);
        assert_eq!(out.held[0].1, "node db.js");
        let waiting = out.notices;
        assert!(
            waiting[0].contains("`node db.js`")
                && waiting[0].contains("rein mcp allow db")
                && waiting[0].contains("/mcp allow db"),
            "{}",
            waiting[0]
        );
        trust.trust(project, "db", &launch(&mine)).unwrap();
        let out = startable(&servers, &trust, project);
        assert_eq!(out.start.len(), 2);
        assert!(out.notices.is_empty() && out.held.is_empty());
        // The project changes what the server runs (or its environment): asked again.
        if let Transport::Stdio { env, .. } = &mut mine.transport {
            env.push(("LD_PRELOAD".into(), "/tmp/evil.so".into()));
        }
        let out = startable(&[user.clone(), mine.clone()], &trust, project);
        assert_eq!(out.start.len(), 1);
        assert!(out.notices[0].contains("LD_PRELOAD"), "{}", out.notices[0]);
        // ... or asks for one of the user's variables.
        trust.trust(project, "db", &launch(&mine)).unwrap();
        if let Transport::Stdio { env_vars, .. } = &mut mine.transport {
            env_vars.push("AWS_SECRET_ACCESS_KEY".into());
        }
        let out = startable(&[user, mine], &trust, project);
        assert_eq!(out.start.len(), 1);
        assert!(
            out.notices[0].contains("[gets your AWS_SECRET_ACCESS_KEY]"),
            "{}",
            out.notices[0]
        );
    }
}
