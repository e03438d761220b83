//! The secrets the settings know of, for the environment of the commands the model runs.
//!
//! In: the resolved [`Config`] and the [`Environment`] it was read from. Out: a
//! [`CommandEnv`] whose provider keys (the key in use; every explicit key: `--api-key`,
//! `REIN_API_KEY`, `OPENAI_API_KEY`, `api_key` in a file, `~/.agents/env`; the variable
//! of every provider's `api_key_env` that is set; the values of providers' headers whose
//! names look secret, such as `Authorization`) never reach a command under any name, whose
//! other tokens (an MCP server's `bearer_token_env` variable; the values of its
//! secret-named headers and `env` entries) reach one only under a name the user or the
//! project passes through, and which passes `tools.env_passthrough`'s names through.

use super::{Config, Environment};
use crate::sandbox::env::secret_name;
use crate::sandbox::CommandEnv;

impl Config {
    /// What the commands' environment must not hold, and what it passes through.
    pub fn command_env(&self, env: &Environment) -> CommandEnv {
        let mut keys = vec![self.api_key.value.clone()];
        keys.extend(self.inputs.keys.iter().map(|k| k.value.clone()));
        keys.extend(self.inputs.key_vars.values().cloned());
        let provider_headers = self
            .providers
            .iter()
            .flat_map(|p| &p.headers)
            .map(|h| (h.name.as_str(), h.value.value.as_str()))
            .chain(self.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())));
        keys.extend(header_secrets(provider_headers));

        let mut tokens = Vec::new();
        for server in &self.mcp_servers {
            match &server.transport {
                crate::mcp::Transport::Http {
                    headers,
                    bearer_token_env,
                    oauth,
                    ..
                } => {
                    let named = [bearer_token_env, &oauth.client_secret_env];
                    for value in named.into_iter().flatten().filter_map(|v| env.var(v)) {
                        tokens.push(value.trim().to_string());
                    }
                    let named = headers.iter().map(|(n, v)| (n.as_str(), v.as_str()));
                    tokens.extend(header_secrets(named));
                }
                crate::mcp::Transport::Stdio { env: set, .. } => {
                    tokens.extend(
                        set.iter()
                            .filter(|(name, _)| secret_name(name))
                            .map(|(_, value)| value.clone()),
                    );
                }
            }
        }
        CommandEnv::new(keys, tokens, self.env_passthrough.value.clone())
    }
}

/// The values of the headers whose names look secret (`Authorization`, `X-Api-Key`), and
/// of each the part after its scheme (`Bearer TOKEN` gives `TOKEN` too).
fn header_secrets<'a>(headers: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    let mut out = Vec::new();
    for (name, value) in headers {
        if !secret_name(&name.replace('-', "_")) {
            continue;
        }
        let value = value.trim();
        out.push(value.to_string());
        if let Some((_, credential)) = value.split_once(' ') {
            out.push(credential.trim().to_string());
        }
    }
    out
}
