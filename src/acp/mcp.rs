//! The MCP servers an editor passes with `session/new` (or `session/load`): the user's own
//! servers, configured in the editor, so they start as the user's `config.toml` servers
//! do: a stdio server in a neutral folder (never the project, whose files could steer
//! it), with the environment the editor gives; an HTTP server with its headers. A name
//! rein's own config already uses keeps rein's server; SSE servers are not spoken.

use std::path::PathBuf;

use agent_client_protocol::v1::schema::McpServer;
use rein_core::mcp::{ServerConfig, Transport};

/// A server name as rein's config allows it (`[A-Za-z0-9_-]+`).
fn name(raw: &str) -> String {
    let cleaned = rein_core::mcp::names::sanitize(raw);
    if cleaned.is_empty() {
        "editor".to_string()
    } else {
        cleaned
    }
}

/// The editor's servers as rein's, and what was left out, a line each.
pub fn servers(
    from_editor: &[McpServer],
    configured: &[ServerConfig],
) -> (Vec<ServerConfig>, Vec<String>) {
    let mut out: Vec<ServerConfig> = Vec::new();
    let mut notices = Vec::new();
    let origin = rein_core::mcp::Origin::User(PathBuf::from("(the editor)"));
    for server in from_editor {
        let (raw, config) = match server {
            McpServer::Stdio(s) => {
                let command = s.command.to_string_lossy().into_owned();
                let args: Vec<&str> = s.args.iter().map(String::as_str).collect();
                let mut config = ServerConfig::stdio(&name(&s.name), &command, &args);
                if let Transport::Stdio { env, .. } = &mut config.transport {
                    *env = s
                        .env
                        .iter()
                        .map(|v| (v.name.clone(), v.value.clone()))
                        .collect();
                }
                (&s.name, config)
            }
            McpServer::Http(s) => {
                let mut config = ServerConfig::stdio(&name(&s.name), "", &[]);
                config.transport = Transport::Http {
                    url: s.url.clone(),
                    headers: s
                        .headers
                        .iter()
                        .map(|h| (h.name.clone(), h.value.clone()))
                        .collect(),
                    bearer_token_env: None,
                    oauth: Default::default(),
                };
                (&s.name, config)
            }
            McpServer::Sse(s) => {
                notices.push(format!(
                    "the editor's MCP server {:?} speaks SSE, which rein does not; it was left out",
                    s.name
                ));
                continue;
            }
            _ => {
                notices.push("an MCP server of a kind rein does not know was left out".to_string());
                continue;
            }
        };
        let mut config = config;
        config.origin = origin.clone();
        if configured.iter().chain(&out).any(|c| c.name == config.name) {
            notices.push(format!(
                "the editor's MCP server {raw:?} has the name of one rein already runs; rein's own was kept"
            ));
            continue;
        }
        out.push(config);
    }
    (out, notices)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        EnvVariable, HttpHeader, McpServerHttp, McpServerSse, McpServerStdio,
    };

    #[test]
    fn the_editors_servers_start_as_the_users() {
        let given = vec![
            McpServer::Stdio(
                McpServerStdio::new("files server", "/usr/bin/mcp-files")
                    .args(vec!["--root".into(), "/x".into()])
                    .env(vec![EnvVariable::new("TOKEN", "t")]),
            ),
            McpServer::Http(
                McpServerHttp::new("docs", "https://docs.example/mcp")
                    .headers(vec![HttpHeader::new("X-Key", "k")]),
            ),
            McpServer::Sse(McpServerSse::new("old", "https://old.example/sse")),
            McpServer::Http(McpServerHttp::new("mine", "https://other.example/mcp")),
        ];
        let configured = vec![ServerConfig::stdio("mine", "my-server", &[])];
        let (servers, notices) = servers(&given, &configured);
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["files_server", "docs"]);
        match &servers[0].transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
                ..
            } => {
                assert_eq!(command, "/usr/bin/mcp-files");
                assert_eq!(args, &["--root", "/x"]);
                assert_eq!(env, &[("TOKEN".to_string(), "t".to_string())]);
                assert_eq!(cwd, &None, "a neutral folder, not the project");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(servers[0].origin, rein_core::mcp::Origin::User(_)));
        match &servers[1].transport {
            Transport::Http { url, headers, .. } => {
                assert_eq!(url, "https://docs.example/mcp");
                assert_eq!(headers, &[("X-Key".to_string(), "k".to_string())]);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(notices.len(), 2, "{notices:?}");
        assert!(notices[0].contains("SSE") && notices[1].contains("rein's own was kept"));
    }
}
