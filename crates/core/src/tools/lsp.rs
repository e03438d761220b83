//! `lsp`: the model's questions to the session's language servers ([`crate::lsp::navigate`]):
//! definition, references, hover, a file's symbols, a name across the project. Offered once
//! a server runs; judged like `read_file` on its path.

use serde_json::json;

use super::{ToolContext, ToolSpec};
use crate::lsp::navigate::{Question, Spot};

pub const NAME: &str = "lsp";

/// The operations, as the model names them.
const OPERATIONS: &[&str] = &[
    "definition",
    "references",
    "hover",
    "symbols",
    "workspace_symbols",
];

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: include_str!("../../assets/tools/lsp.md"),
        parameters: json!({
            "type": "object",
            "properties": {
                "operation": {"type": "string", "enum": OPERATIONS},
                "path": {
                    "type": "string",
                    "description": "The file, relative to the project root or absolute (all but workspace_symbols)."
                },
                "line": {"type": "integer", "minimum": 1, "description": "1-based line of the name."},
                "symbol": {"type": "string", "description": "The name as written on that line."},
                "column": {"type": "integer", "minimum": 1, "description": "1-based column, instead of symbol."},
                "query": {"type": "string", "description": "The name to find (workspace_symbols)."}
            },
            "required": ["operation"],
            "additionalProperties": false
        }),
    }
}

#[derive(Debug, serde::Deserialize)]
pub struct Args {
    pub operation: String,
    pub path: Option<String>,
    pub line: Option<u32>,
    pub symbol: Option<String>,
    pub column: Option<u32>,
    pub query: Option<String>,
}

pub async fn run(args: Args, ctx: &ToolContext) -> Result<String, String> {
    let Some(lsp) = &ctx.lsp else {
        return Err("no language server runs in this session".into());
    };
    let path = || -> Result<std::path::PathBuf, String> {
        let path = args
            .path
            .as_deref()
            .filter(|p| !p.trim().is_empty())
            .ok_or_else(|| format!("`path` is needed for {}", args.operation))?;
        Ok(ctx.locate(path))
    };
    let spot = || -> Result<Spot, String> {
        let line = args
            .line
            .ok_or_else(|| format!("`line` is needed for {}", args.operation))?;
        if args.symbol.is_none() && args.column.is_none() {
            return Err(format!(
                "give `symbol` (the name as written on line {line}) or `column` for {}",
                args.operation
            ));
        }
        Ok(Spot {
            path: path()?,
            line,
            column: args.column,
            symbol: args.symbol.clone().filter(|s| !s.is_empty()),
        })
    };
    let question = match args.operation.as_str() {
        "definition" => Question::Definition(spot()?),
        "references" => Question::References(spot()?),
        "hover" => Question::Hover(spot()?),
        "symbols" => Question::Symbols(path()?),
        "workspace_symbols" => Question::WorkspaceSymbols(args.query.clone().unwrap_or_default()),
        other => {
            return Err(format!(
                "unknown operation `{other}`; one of {}",
                OPERATIONS.join(", ")
            ))
        }
    };
    lsp.ask(question).await
}
