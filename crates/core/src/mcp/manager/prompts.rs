//! A ready server's prompts, offered as slash commands `/mcp__SERVER__PROMPT`: listed as
//! the server starts (every page, at most [`MAX_PROMPTS`], names and descriptions cut),
//! and fetched with their arguments when the user runs one. The typed arguments are bound
//! to the prompt's declared ones ([`bind_arguments`]): `name=value` words by name, the
//! other words in order, the last declared argument taking what is left; a required one
//! missing is an error that names it. What a fetch gives ([`prompt_text`]) is the text of
//! the prompt's messages, at most [`MAX_PROMPT_BYTES`]; other content is described, not
//! included.

use rmcp::model::{
    ContentBlock, GetPromptRequestParams, GetPromptResult, PaginatedRequestParams, Prompt,
    ResourceContents, Role,
};
use rmcp::service::RoleClient;
use rmcp::{Peer, ServiceError};

use super::{McpManager, Slot};
use crate::mcp::{names, McpError, ServerState};

/// The most prompts one server's listing keeps.
pub const MAX_PROMPTS: usize = 200;
/// The most arguments of one prompt kept.
const MAX_ARGUMENTS: usize = 32;
/// The longest prompt text sent, in bytes.
pub const MAX_PROMPT_BYTES: usize = 256 * 1024;
/// The most pages a listing asks for.
const MAX_PAGES: usize = 20;

/// One prompt as a slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpPrompt {
    /// `mcp__SERVER__PROMPT` (without the slash), unique.
    pub command: String,
    pub server: String,
    /// Its own name on its server.
    pub name: String,
    /// One line, sanitised.
    pub description: String,
    pub arguments: Vec<McpPromptArgument>,
}

/// One declared argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpPromptArgument {
    pub name: String,
    pub required: bool,
}

impl McpPrompt {
    /// `<file> [focus]`: the arguments as `/help` shows them.
    pub fn argument_hint(&self) -> Option<String> {
        let words: Vec<String> = self
            .arguments
            .iter()
            .map(|a| {
                if a.required {
                    format!("<{}>", a.name)
                } else {
                    format!("[{}]", a.name)
                }
            })
            .collect();
        (!words.is_empty()).then(|| words.join(" "))
    }
}

impl McpManager {
    /// Every ready server's prompts, in command name order.
    pub fn prompts(&self) -> Vec<McpPrompt> {
        ready_prompts(&self.slots())
    }

    /// The prompt offered as `/command` (without the slash).
    pub fn prompt(&self, command: &str) -> Option<McpPrompt> {
        self.prompts().into_iter().find(|p| p.command == command)
    }

    /// The text of the prompt `/command` with the typed `args` bound to its arguments.
    pub async fn get_prompt(&self, command: &str, args: &str) -> Result<String, McpError> {
        let prompt = self.prompt(command).ok_or_else(|| {
            McpError::BadArguments(format!("no MCP server offers the prompt /{command}"))
        })?;
        let arguments = bind_arguments(&prompt, args).map_err(McpError::BadArguments)?;
        let (live, timeout) = self.ready(&prompt.server)?;
        let mut params = GetPromptRequestParams::new(prompt.name.clone());
        if !arguments.is_empty() {
            params = params.with_arguments(arguments);
        }
        let result = tokio::time::timeout(timeout, live.peer.get_prompt(params))
            .await
            .map_err(|_| McpError::Protocol {
                server: prompt.server.clone(),
                message: format!("prompts/get got no answer within {} s", timeout.as_secs()),
            })?
            .map_err(|e| match e {
                ServiceError::McpError(e) => McpError::Rejected {
                    server: prompt.server.clone(),
                    message: crate::text::sanitize::line(&e.message, 500),
                },
                other => McpError::Protocol {
                    server: prompt.server.clone(),
                    message: crate::mcp::http_error::request_failed(
                        &other,
                        live.url.as_deref(),
                        "prompts/get",
                    ),
                },
            })?;
        Ok(prompt_text(&result, MAX_PROMPT_BYTES))
    }
}

/// The slash command of each `(server, prompt)` pair, in order: lowercase (lowered before
/// they are made unique, so two prompts that differ only in case get two commands).
fn commands(pairs: &[(&str, &str)]) -> Vec<String> {
    let lowered: Vec<(String, String)> = pairs
        .iter()
        .map(|(s, p)| (s.to_ascii_lowercase(), p.to_ascii_lowercase()))
        .collect();
    let pairs: Vec<(&str, &str)> = lowered
        .iter()
        .map(|(s, p)| (s.as_str(), p.as_str()))
        .collect();
    names::qualify(&pairs)
}

/// The prompts of every ready server as commands, in command order.
pub(super) fn ready_prompts(slots: &[Slot]) -> Vec<McpPrompt> {
    let mut raw: Vec<(&str, &Prompt)> = slots
        .iter()
        .filter(|s| matches!(s.state, ServerState::Ready { .. }))
        .flat_map(|s| s.prompts.iter().map(move |p| (s.config.name.as_str(), p)))
        .collect();
    raw.sort_by(|a, b| (a.0, &a.1.name).cmp(&(b.0, &b.1.name)));
    let pairs: Vec<(&str, &str)> = raw.iter().map(|(s, p)| (*s, p.name.as_str())).collect();
    let commands = commands(&pairs);
    raw.into_iter()
        .zip(commands)
        .map(|((server, p), command)| McpPrompt {
            command,
            server: server.to_string(),
            name: p.name.clone(),
            description: crate::text::sanitize::line(
                p.description.as_deref().unwrap_or_default(),
                200,
            ),
            arguments: p
                .arguments
                .iter()
                .flatten()
                .take(MAX_ARGUMENTS)
                .map(|a| McpPromptArgument {
                    name: crate::text::sanitize::line(&a.name, 64),
                    required: a.required.unwrap_or(false),
                })
                .collect(),
        })
        .collect()
}

/// `prompts/list`, every page (at most [`MAX_PROMPTS`]).
pub(super) async fn list_prompts(peer: &Peer<RoleClient>) -> Result<Vec<Prompt>, ServiceError> {
    let mut out = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_PAGES {
        let params = PaginatedRequestParams::default().with_cursor(cursor.take());
        let page = peer.list_prompts(Some(params)).await?;
        out.extend(page.prompts);
        out.truncate(MAX_PROMPTS);
        match page.next_cursor {
            Some(next) if out.len() < MAX_PROMPTS => cursor = Some(next),
            _ => break,
        }
    }
    Ok(out)
}

/// The typed `args` bound to `prompt`'s declared arguments (see the module doc).
pub fn bind_arguments(
    prompt: &McpPrompt,
    args: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let mut bound = serde_json::Map::new();
    let mut positional = Vec::new();
    for word in args.split_whitespace() {
        match word.split_once('=') {
            Some((name, value)) if prompt.arguments.iter().any(|a| a.name == name) => {
                bound.insert(name.to_string(), value.into());
            }
            _ => positional.push(word),
        }
    }
    let open: Vec<&McpPromptArgument> = prompt
        .arguments
        .iter()
        .filter(|a| !bound.contains_key(&a.name))
        .collect();
    let mut words = positional.into_iter();
    for (i, argument) in open.iter().enumerate() {
        let value = if i + 1 == open.len() {
            words.by_ref().collect::<Vec<_>>().join(" ")
        } else {
            words.next().unwrap_or_default().to_string()
        };
        if !value.is_empty() {
            bound.insert(argument.name.clone(), value.into());
        }
    }
    if words.next().is_some() || (open.is_empty() && !args.trim().is_empty() && bound.is_empty()) {
        return Err(format!(
            "/{} takes {}; got more words than that",
            prompt.command,
            prompt
                .argument_hint()
                .unwrap_or_else(|| "no arguments".into())
        ));
    }
    let missing: Vec<&str> = prompt
        .arguments
        .iter()
        .filter(|a| a.required && !bound.contains_key(&a.name))
        .map(|a| a.name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "/{} needs the argument{} {} (usage: /{} {}; name=value works too)",
            prompt.command,
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            prompt.command,
            prompt.argument_hint().unwrap_or_default()
        ));
    }
    Ok(bound)
}

/// The text of a fetched prompt: its messages' text, an assistant's marked, other content
/// described; at most `max` bytes.
pub fn prompt_text(result: &GetPromptResult, max: usize) -> String {
    let mut parts = Vec::new();
    for message in &result.messages {
        let text = match &message.content {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Image(i) => {
                format!(
                    "(an image, {}, not included)",
                    crate::text::sanitize::line(&i.mime_type, 80)
                )
            }
            ContentBlock::Audio(a) => {
                format!(
                    "(audio, {}, not included)",
                    crate::text::sanitize::line(&a.mime_type, 80)
                )
            }
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    format!(
                        "(resource {})\n{text}",
                        crate::text::sanitize::line(uri, 200)
                    )
                }
                ResourceContents::BlobResourceContents { uri, .. } => {
                    format!(
                        "(binary resource {}, not included)",
                        crate::text::sanitize::line(uri, 200)
                    )
                }
                _ => "(a resource of a kind rein does not know, not included)".to_string(),
            },
            ContentBlock::ResourceLink(l) => format!(
                "(resource link {})",
                crate::text::sanitize::line(&l.uri, 200)
            ),
            _ => "(content of a kind rein does not know, not included)".to_string(),
        };
        parts.push(match message.role {
            Role::Assistant => format!("(assistant) {text}"),
            _ => text,
        });
    }
    let mut text = parts.join("\n\n");
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("\n[cut: the prompt is longer than rein sends]");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review() -> McpPrompt {
        McpPrompt {
            command: "mcp__h__review".into(),
            server: "h".into(),
            name: "review".into(),
            description: String::new(),
            arguments: vec![
                McpPromptArgument {
                    name: "file".into(),
                    required: true,
                },
                McpPromptArgument {
                    name: "focus".into(),
                    required: false,
                },
            ],
        }
    }

    #[test]
    fn commands_are_lowercase_and_distinct_when_names_differ_only_in_case() {
        let made = commands(&[("Docs", "Review"), ("docs", "review"), ("docs", "summary")]);
        assert_eq!(made[2], "mcp__docs__summary");
        assert!(
            made.iter().all(|c| *c == c.to_ascii_lowercase()),
            "{made:?}"
        );
        assert_ne!(made[0], made[1], "{made:?}");
    }

    #[test]
    fn arguments_bind_in_order_by_name_and_say_what_is_missing() {
        let p = review();
        let bound = bind_arguments(&p, "src/main.rs error handling").unwrap();
        assert_eq!(bound["file"], "src/main.rs");
        assert_eq!(bound["focus"], "error handling");
        let bound = bind_arguments(&p, "focus=speed a.rs").unwrap();
        assert_eq!(
            (&bound["file"], &bound["focus"]),
            (&"a.rs".into(), &"speed".into())
        );
        let missing = bind_arguments(&p, "").unwrap_err();
        assert_eq!(
            missing,
            "/mcp__h__review needs the argument file (usage: /mcp__h__review <file> [focus]; name=value works too)"
        );
        let none = McpPrompt {
            arguments: Vec::new(),
            ..review()
        };
        assert!(bind_arguments(&none, "").unwrap().is_empty());
        assert!(bind_arguments(&none, "extra")
            .unwrap_err()
            .contains("no arguments"));
    }
}
