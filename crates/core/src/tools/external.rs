//! Tools that come from outside rein (MCP servers): what the agent needs of them, so that
//! the agent loop does not depend on where they come from.
//!
//! A provider of external tools lists the tools it has now ([`ExternalTools::specs`]: a
//! name the model calls, a description and a JSON Schema), finds one by its name
//! ([`ExternalTools::spec`], what each call looks up) and runs one
//! ([`ExternalTools::call`]). The agent offers them after its own tools, judges every call
//! through the permission policy by its name like any other, and runs it through the
//! provider; the result goes through the same cap, spill, stub and drop layers as every
//! tool result. Dropping the future of a call cancels it (an interrupt does that).

use std::future::Future;
use std::pin::Pin;

use crate::elicitation::{Form, FormAnswer};

/// One external tool as the model sees it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ExternalSpec {
    /// The name the model calls (`mcp__SERVER__TOOL`): `[A-Za-z0-9_-]`, at most 64.
    pub name: String,
    pub description: String,
    /// A JSON Schema of the arguments (an object schema).
    pub parameters: serde_json::Value,
    /// Where it comes from, for the approval prompt (not sent to the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ExternalSource>,
}

/// The server an external tool comes from, as the user configured it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExternalSource {
    /// The server's configured name.
    pub server: String,
    /// The tool's own name on its server.
    pub tool: String,
    /// The project, not the user, declared the server.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub project: bool,
    /// Subagents are offered it too (the server's `subagents` setting).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub subagents: bool,
}

impl ExternalSpec {
    /// Whether the `task` tool's subagents are offered it.
    pub fn for_subagents(&self) -> bool {
        self.source.as_ref().is_some_and(|s| s.subagents)
    }
}

/// The future of one external call: its result (the text the model reads, an error it
/// reads, and the images the result carries).
pub type ExternalCall = Pin<Box<dyn Future<Output = crate::conversation::ToolResult> + Send>>;

/// Where a running external call's progress lines go.
pub type Report = std::sync::Arc<dyn Fn(String) + Send + Sync>;

/// The future of one read of an external resource: its text for the model (at most the
/// limit asked for) and whether it was cut, or why it could not be read.
pub type ExternalRead = Pin<Box<dyn Future<Output = Result<(String, bool), String>> + Send>>;

/// The future of one fetched prompt: the text the user's message becomes, or why there is
/// none (a required argument missing, the server's refusal).
pub type ExternalPrompt = Pin<Box<dyn Future<Output = Result<String, String>> + Send>>;

/// A source of external tools (the MCP servers of a session).
pub trait ExternalTools: Send + Sync {
    /// The prompt offered as the slash command `/command`, fetched with the typed `args`;
    /// `None` when the source offers no such command. The default offers none.
    fn prompt(&self, command: &str, args: &str) -> Option<ExternalPrompt> {
        let _ = (command, args);
        None
    }
    /// Read the resource `uri` of the source `server` (an `@server:uri` mention), as text
    /// of at most `max_bytes`; `None` when no source of that name is configured (the
    /// mention is then only text). The default has none.
    fn read_resource(&self, server: &str, uri: &str, max_bytes: usize) -> Option<ExternalRead> {
        let _ = (server, uri, max_bytes);
        None
    }
    /// The tools it offers now, in a stable order; no two share a name.
    fn specs(&self) -> Vec<ExternalSpec>;
    /// The tool `name` as [`specs`](Self::specs) would list it, when it offers one: what
    /// every call looks up, so a provider that can find one tool without describing all
    /// of them should. The default looks through `specs`.
    fn spec(&self, name: &str) -> Option<ExternalSpec> {
        self.specs().into_iter().find(|s| s.name == name)
    }
    /// Run the tool `name` with the argument object `args`.
    fn call(&self, name: &str, args: serde_json::Value) -> ExternalCall;
    /// [`call`](Self::call) with `aids`: where its progress lines go and who the server's
    /// forms (MCP elicitation) are put to. The default uses neither: nothing is reported
    /// and the server's forms are declined.
    fn call_with(&self, name: &str, args: serde_json::Value, aids: CallAids) -> ExternalCall {
        let _ = aids;
        self.call(name, args)
    }
}

/// What a running external call may use besides its arguments.
#[derive(Clone, Default)]
pub struct CallAids {
    /// Where its progress lines go (one line at a time, at most about ten a second, the
    /// latest kept).
    pub report: Option<Report>,
    /// Who the server's forms are put to while it runs.
    pub ask: Option<std::sync::Arc<dyn AskUser>>,
}

/// The answer to a form, once the user gives it ([`FormAnswer::Cancel`] when no one
/// can). Dropping it withdraws the form from the front end.
pub type FormWait = Pin<Box<dyn Future<Output = FormAnswer> + Send>>;

/// Who a running external call puts a server's questions to: the agent, which passes
/// them to its front end as events and waits for the answer by id.
pub trait AskUser: Send + Sync {
    /// Put `form` to the user.
    fn ask(&self, form: Form) -> FormWait;
    /// Tell the user something about the call's server in a line (a form it asked for
    /// that rein could not show, and declined).
    fn tell(&self, message: String);
}

/// The `tools` entries of `specs`, in the form of [`super::specs_json`]'s.
pub fn specs_json(specs: &[ExternalSpec]) -> Vec<serde_json::Value> {
    specs
        .iter()
        .map(|s| super::function_json(&s.name, &s.description, &s.parameters))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Two;

    impl ExternalTools for Two {
        fn specs(&self) -> Vec<ExternalSpec> {
            ["mcp__a__x", "mcp__a__y"]
                .map(|name| ExternalSpec {
                    name: name.to_string(),
                    description: String::new(),
                    parameters: serde_json::json!({"type": "object"}),
                    source: None,
                })
                .to_vec()
        }

        fn call(&self, _: &str, _: serde_json::Value) -> ExternalCall {
            Box::pin(async { crate::conversation::ToolResult::ok(String::new()) })
        }
    }

    #[test]
    fn the_default_lookup_finds_one_spec_by_name() {
        assert_eq!(
            Two.spec("mcp__a__y").map(|s| s.name).as_deref(),
            Some("mcp__a__y")
        );
        assert_eq!(Two.spec("mcp__a__z"), None);
    }
}
