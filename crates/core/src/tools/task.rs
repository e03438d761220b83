//! `task`: hand a standalone question to a subagent (see `crate::agent::subagent`).
//!
//! Only the schema and the arguments live here: the dispatcher validates a `task` call like
//! any other, and the agent loop runs it, since a subagent needs the model client. The
//! [`Toolset`](super::Toolset) of a subagent leaves `task` out, so subagents do not nest.

use serde::Deserialize;
use serde_json::json;

use super::ToolSpec;

pub const NAME: &str = "task";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: include_str!("../../assets/tools/task.md"),
        parameters: json!({
            "type": "object",
            "properties": {
                "description": {
                    "type": "string",
                    "description": "The whole question for the subagent, standalone: what to find, where to look, what the answer should contain."
                }
            },
            "required": ["description"],
            "additionalProperties": false
        }),
    }
}

#[derive(Debug, Deserialize)]
pub struct Args {
    pub description: String,
}
