//! Step 1: parse and validate a call. Valid JSON, a tool this agent has (one of its own, or
//! an external tool it may call), the right fields; out: the prepared [`Call`], with the
//! hooks' view of it built once, or the error the model reads.

use super::{Call, HookView, ToolEnv};
use crate::conversation::ToolCall;
use crate::tools::external::{ExternalSpec, ExternalTools};
use crate::tools::PreparedCall;

impl ToolEnv<'_> {
    /// Step 1: `call` prepared for this agent, or what is wrong with it.
    pub(super) fn parse<'c>(&self, call: &'c ToolCall) -> Result<Call<'c>, String> {
        let name = call.function.name.as_str();
        let external = external_spec(self.external, name, self.subagent.is_some());
        let prepared = self.prepare(name, external.as_ref(), &call.function.arguments)?;
        let view = self
            .active_hooks()
            .map(|_| HookView::new(call, name, &prepared.args, self.subagent));
        Ok(Call {
            call,
            name,
            external,
            prepared,
            view,
        })
    }

    /// Prepare a call of `name` with `raw` arguments for this agent: one of its tools, an
    /// external tool `external` describes, or an error naming what is wrong.
    pub(super) fn prepare(
        &self,
        name: &str,
        external: Option<&ExternalSpec>,
        raw: &str,
    ) -> Result<PreparedCall, String> {
        match external {
            Some(spec) => crate::tools::prepare_external(spec, raw),
            // Offered as unavailable (a resumed session's tool whose server is gone).
            None if self.external.is_some()
                && self.subagent.is_some()
                && name.starts_with("mcp__") =>
            {
                Err(format!(
                    "Error: {} is not one of your tools (a subagent gets only the MCP tools \
                     the user's config opens to subagents); do without it",
                    crate::tools::printable(name)
                ))
            }
            None if self.external.is_some() && name.starts_with("mcp__") => {
                Err(unknown_mcp_tool(self.external, name))
            }
            None => self.toolset.prepare(name, raw),
        }
    }

    /// The call prepared again with the arguments a hook rewrote (`input`, Claude Code's
    /// field names), or what is wrong with them.
    pub(super) fn reparse(
        &self,
        call: &Call,
        input: &serde_json::Value,
    ) -> Result<PreparedCall, String> {
        let raw = crate::hooks::names::from_claude_input(call.name, input).to_string();
        self.prepare(call.name, call.external.as_ref(), &raw)
            .map_err(|text| format!("{text} (the arguments a hook rewrote)"))
    }
}

impl Call<'_> {
    /// The file a write tool's call writes (its pinned path), when it is one.
    pub(super) fn written_path(&self) -> Option<std::path::PathBuf> {
        [
            crate::tools::write_file::NAME,
            crate::tools::str_replace::NAME,
        ]
        .contains(&self.name)
        .then(|| self.prepared.args.get("path").and_then(|p| p.as_str()))
        .flatten()
        .map(std::path::PathBuf::from)
    }
}

/// The external tool `name` this agent may call, found by its name (listing every tool
/// for each call would describe them all): a subagent only those its servers open to
/// subagents.
fn external_spec(
    external: Option<&dyn ExternalTools>,
    name: &str,
    subagent: bool,
) -> Option<ExternalSpec> {
    external?
        .spec(name)
        .filter(|s| !subagent || s.for_subagents())
}

/// Why `name` (an `mcp__SERVER__TOOL` nothing offers) cannot run: its server runs but has
/// no such tool (and these are its tools), or its server is not running.
fn unknown_mcp_tool(external: Option<&dyn ExternalTools>, name: &str) -> String {
    let server = name
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split("__").next())
        .unwrap_or_default();
    let prefix = format!("mcp__{server}__");
    let siblings: Vec<String> = external
        .map(|e| e.specs())
        .unwrap_or_default()
        .into_iter()
        .filter(|s| !server.is_empty() && s.name.starts_with(&prefix))
        .map(|s| s.name)
        .collect();
    if siblings.is_empty() {
        return format!(
            "Error: {} is not available in this session (its MCP server is not running); \
             do without it",
            crate::tools::printable(name)
        );
    }
    format!(
        "Error: the MCP server {} has no tool {}; its tools are: {}",
        crate::tools::printable(server),
        crate::tools::printable(name),
        siblings.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::ToolResult;
    use crate::tools::external::{ExternalCall, ExternalSource};

    /// A provider whose full listing must not be asked for.
    struct ByNameOnly;

    impl ExternalTools for ByNameOnly {
        fn specs(&self) -> Vec<ExternalSpec> {
            panic!("a call's lookup listed every external tool")
        }

        fn spec(&self, name: &str) -> Option<ExternalSpec> {
            (name == "mcp__a__x").then(|| ExternalSpec {
                name: name.to_string(),
                description: String::new(),
                parameters: serde_json::json!({"type": "object"}),
                source: Some(ExternalSource {
                    server: "a".into(),
                    tool: "x".into(),
                    project: false,
                    subagents: false,
                }),
            })
        }

        fn call(&self, _: &str, _: serde_json::Value) -> ExternalCall {
            Box::pin(async { ToolResult::ok(String::new()) })
        }
    }

    #[test]
    fn a_call_looks_its_external_tool_up_by_name() {
        let external: Option<&dyn ExternalTools> = Some(&ByNameOnly);
        let found = external_spec(external, "mcp__a__x", false);
        assert_eq!(found.map(|s| s.name).as_deref(), Some("mcp__a__x"));
        assert_eq!(external_spec(external, "mcp__a__y", false), None);
        // Not opened to subagents.
        assert_eq!(external_spec(external, "mcp__a__x", true), None);
        assert_eq!(external_spec(None, "mcp__a__x", false), None);
    }
}
