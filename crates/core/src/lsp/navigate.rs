//! The model's questions to a language server (the `lsp` tool): where a name is defined,
//! where it is used, what it is (hover), a file's outline, a name across the project.
//! Answers are paths and lines the model can read next, bounded ([`MAX_SHOWN`] places,
//! [`MAX_HOVER`] characters of hover text); the server's answers are parsed with
//! `lsp-types`, and one of another shape is said to be so, never a crash.

use std::path::{Path, PathBuf};
use std::time::Duration;

use lsp_types::{
    DocumentSymbol, DocumentSymbolResponse, GotoDefinitionResponse, Hover, HoverContents, Location,
    MarkedString, OneOf, WorkspaceSymbolResponse,
};
use serde_json::{json, Value};

use super::{server, Lsp, Running};

/// The most places listed in one answer.
pub const MAX_SHOWN: usize = 50;
/// The most characters of hover text.
pub const MAX_HOVER: usize = 4000;
/// How long a question may take.
const TIMEOUT: Duration = Duration::from_secs(15);

/// What the model asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Question {
    Definition(Spot),
    References(Spot),
    Hover(Spot),
    Symbols(PathBuf),
    WorkspaceSymbols(String),
}

/// A place in a file: 1-based line, and the column (1-based, in characters) or the name
/// on that line to find it by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spot {
    pub path: PathBuf,
    pub line: u32,
    pub column: Option<u32>,
    pub symbol: Option<String>,
}

impl Lsp {
    /// The answer to `question`, as the model reads it.
    pub async fn ask(&self, question: Question) -> Result<String, String> {
        match question {
            Question::WorkspaceSymbols(query) => self.workspace_symbols(&query).await,
            Question::Symbols(path) => {
                let (running, _) = self.opened(&path).await?;
                let answer = running
                    .server
                    .request(
                        "textDocument/documentSymbol",
                        json!({"textDocument": {"uri": server::uri(&path)}}),
                        TIMEOUT,
                    )
                    .await?;
                Ok(self.outline(&path, answer))
            }
            Question::Definition(spot) | Question::References(spot) | Question::Hover(spot)
                if spot.line == 0 =>
            {
                Err("lines are numbered from 1".into())
            }
            Question::Definition(spot) => {
                let (running, position) = self.position(&spot).await?;
                let answer = running
                    .server
                    .request("textDocument/definition", position, TIMEOUT)
                    .await?;
                let places = match serde_json::from_value::<Option<GotoDefinitionResponse>>(answer)
                {
                    Ok(None) => Vec::new(),
                    Ok(Some(GotoDefinitionResponse::Scalar(l))) => vec![l],
                    Ok(Some(GotoDefinitionResponse::Array(ls))) => ls,
                    Ok(Some(GotoDefinitionResponse::Link(links))) => links
                        .into_iter()
                        .map(|l| Location {
                            uri: l.target_uri,
                            range: l.target_selection_range,
                        })
                        .collect(),
                    Err(_) => return Err(strange("definition")),
                };
                Ok(self.places("defined", &places))
            }
            Question::References(spot) => {
                let (running, mut position) = self.position(&spot).await?;
                position["context"] = json!({"includeDeclaration": true});
                let answer = running
                    .server
                    .request("textDocument/references", position, TIMEOUT)
                    .await?;
                let places: Vec<Location> = serde_json::from_value::<Option<Vec<Location>>>(answer)
                    .map_err(|_| strange("references"))?
                    .unwrap_or_default();
                Ok(self.places("used", &places))
            }
            Question::Hover(spot) => {
                let (running, position) = self.position(&spot).await?;
                let answer = running
                    .server
                    .request("textDocument/hover", position, TIMEOUT)
                    .await?;
                let hover = serde_json::from_value::<Option<Hover>>(answer)
                    .map_err(|_| strange("hover"))?;
                Ok(match hover {
                    None => "The server has nothing to say about that place.".into(),
                    Some(hover) => hover_text(hover.contents),
                })
            }
        }
    }

    /// The running server of `path` with the file open in it (opened from disk now if
    /// need be), and its text.
    async fn opened(&self, path: &Path) -> Result<(std::sync::Arc<Running>, String), String> {
        let text = crate::host::safe_fs::read_text_exactly(path, super::MAX_OPEN_BYTES)
            .ok_or_else(|| format!("{} cannot be read as text", self.shown(path)))?;
        let running = match self.server_for(path).await {
            Ok(Some(running)) => running,
            Ok(None) => return Err(format!("no language server serves {}", self.shown(path))),
            Err(why) => return Err(why),
        };
        let mut docs = running.docs.lock().await;
        if !docs.contains_key(path) {
            super::open(&running.server, path, &text, 1);
            running.told(path, &text);
            docs.insert(path.to_path_buf(), 1);
        }
        drop(docs);
        Ok((running, text))
    }

    /// The server of `spot`'s file and the request's `textDocument` and `position`.
    async fn position(&self, spot: &Spot) -> Result<(std::sync::Arc<Running>, Value), String> {
        let (running, text) = self.opened(&spot.path).await?;
        let Some(line) = text.lines().nth(spot.line as usize - 1) else {
            return Err(format!(
                "{} has {} lines, not {}",
                self.shown(&spot.path),
                text.lines().count(),
                spot.line
            ));
        };
        let chars = match (&spot.symbol, spot.column) {
            (Some(symbol), _) => match line.find(symbol.as_str()) {
                Some(at) => line[..at].chars().count(),
                None => {
                    return Err(format!(
                        "`{symbol}` is not on line {} of {}, which reads: {}",
                        spot.line,
                        self.shown(&spot.path),
                        line.trim()
                    ))
                }
            },
            (None, Some(column)) => column.saturating_sub(1) as usize,
            (None, None) => line.len() - line.trim_start().len(),
        };
        // The protocol counts UTF-16 code units.
        let utf16: usize = line.chars().take(chars).map(char::len_utf16).sum();
        Ok((
            running,
            json!({
                "textDocument": {"uri": server::uri(&spot.path)},
                "position": {"line": spot.line - 1, "character": utf16},
            }),
        ))
    }

    /// A `file://` location as `path:line:col`.
    fn place(&self, location: &Location) -> String {
        let path = server::path_of(location.uri.as_str())
            .map(|p| self.shown(&p))
            .unwrap_or_else(|| location.uri.as_str().to_string());
        format!(
            "{path}:{}:{}",
            location.range.start.line.saturating_add(1),
            location.range.start.character.saturating_add(1)
        )
    }

    fn places(&self, what: &str, places: &[Location]) -> String {
        if places.is_empty() {
            return format!("The server found no place where it is {what}.");
        }
        let mut out = format!(
            "{} {}:",
            if places.len() == 1 {
                "1 place".to_string()
            } else {
                format!("{} places", places.len())
            },
            if what == "defined" {
                "of definition"
            } else {
                "where it is used"
            }
        );
        for location in places.iter().take(MAX_SHOWN) {
            out.push('\n');
            out.push_str(&self.place(location));
        }
        if places.len() > MAX_SHOWN {
            out.push_str(&format!("\n… and {} more", places.len() - MAX_SHOWN));
        }
        out
    }

    /// A file's outline, nested symbols indented.
    fn outline(&self, path: &Path, answer: Value) -> String {
        let mut lines = Vec::new();
        match serde_json::from_value::<Option<DocumentSymbolResponse>>(answer) {
            Ok(Some(DocumentSymbolResponse::Nested(symbols))) => nested(&symbols, 0, &mut lines),
            Ok(Some(DocumentSymbolResponse::Flat(symbols))) => {
                for s in symbols {
                    lines.push(format!(
                        "{} {} (line {})",
                        kind(s.kind),
                        s.name,
                        s.location.range.start.line.saturating_add(1)
                    ));
                }
            }
            Ok(None) => {}
            Err(_) => return strange("documentSymbol"),
        }
        if lines.is_empty() {
            return format!("The server lists no symbols in {}.", self.shown(path));
        }
        let total = lines.len();
        let mut out = format!("{}:\n", self.shown(path));
        out.push_str(
            &lines
                .into_iter()
                .take(MAX_SHOWN * 4)
                .collect::<Vec<_>>()
                .join("\n"),
        );
        if total > MAX_SHOWN * 4 {
            out.push_str(&format!("\n… and {} more", total - MAX_SHOWN * 4));
        }
        out
    }

    /// A name across the project, from every running server.
    async fn workspace_symbols(&self, query: &str) -> Result<String, String> {
        if query.trim().is_empty() {
            return Err("`query` is empty; give (part of) the name to find".into());
        }
        let running = self.running().await;
        if running.is_empty() {
            return Err(
                "no language server runs yet: read or edit a file of the language first".into(),
            );
        }
        let mut found = Vec::new();
        for r in running {
            let Ok(answer) = r
                .server
                .request("workspace/symbol", json!({"query": query}), TIMEOUT)
                .await
            else {
                continue;
            };
            match serde_json::from_value::<Option<WorkspaceSymbolResponse>>(answer) {
                Ok(Some(WorkspaceSymbolResponse::Flat(symbols))) => {
                    for s in symbols {
                        found.push(format!(
                            "{} {} {}",
                            kind(s.kind),
                            s.name,
                            self.place(&s.location)
                        ));
                    }
                }
                Ok(Some(WorkspaceSymbolResponse::Nested(symbols))) => {
                    for s in symbols {
                        let at = match &s.location {
                            OneOf::Left(l) => self.place(l),
                            OneOf::Right(w) => server::path_of(w.uri.as_str())
                                .map(|p| self.shown(&p))
                                .unwrap_or_default(),
                        };
                        found.push(format!("{} {} {at}", kind(s.kind), s.name));
                    }
                }
                _ => {}
            }
        }
        if found.is_empty() {
            return Ok(format!("No symbol matches `{query}`."));
        }
        let total = found.len();
        let mut out = found
            .into_iter()
            .take(MAX_SHOWN)
            .collect::<Vec<_>>()
            .join("\n");
        if total > MAX_SHOWN {
            out.push_str(&format!("\n… and {} more", total - MAX_SHOWN));
        }
        Ok(out)
    }
}

/// A document's nested symbols as indented lines.
fn nested(symbols: &[DocumentSymbol], depth: usize, out: &mut Vec<String>) {
    for s in symbols {
        out.push(format!(
            "{}{} {} (line {})",
            "  ".repeat(depth.min(8)),
            kind(s.kind),
            s.name,
            s.selection_range.start.line.saturating_add(1)
        ));
        if let Some(children) = &s.children {
            nested(children, depth + 1, out);
        }
    }
}

/// A symbol kind in words (`class`, `function`).
fn kind(kind: lsp_types::SymbolKind) -> String {
    format!("{kind:?}").to_lowercase()
}

/// The text of a hover, bounded.
fn hover_text(contents: HoverContents) -> String {
    let marked = |m: MarkedString| match m {
        MarkedString::String(s) => s,
        MarkedString::LanguageString(l) => format!("```{}\n{}\n```", l.language, l.value),
    };
    let text = match contents {
        HoverContents::Scalar(m) => marked(m),
        HoverContents::Array(list) => list
            .into_iter()
            .map(marked)
            .collect::<Vec<_>>()
            .join("\n\n"),
        HoverContents::Markup(m) => m.value,
    };
    let text = text.trim();
    if text.chars().count() <= MAX_HOVER {
        return text.to_string();
    }
    let cut: String = text.chars().take(MAX_HOVER).collect();
    format!("{cut}\n[… the rest of the hover text left out]")
}

/// The answer when a server's reply to `method` is not of the protocol's shape.
fn strange(method: &str) -> String {
    format!("the server's answer to {method} was not of the protocol's shape")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hover_text_of_each_shape_is_bounded() {
        let plain: HoverContents = serde_json::from_value(json!("def f(x)")).unwrap();
        assert_eq!(hover_text(plain), "def f(x)");
        let code: HoverContents =
            serde_json::from_value(json!([{"language": "python", "value": "def f(x)"}, "doc"]))
                .unwrap();
        assert_eq!(hover_text(code), "```python\ndef f(x)\n```\n\ndoc");
        let long: HoverContents = serde_json::from_value(
            json!({"kind": "markdown", "value": "x".repeat(MAX_HOVER + 10)}),
        )
        .unwrap();
        let text = hover_text(long);
        assert!(text.ends_with("left out]") && text.len() < MAX_HOVER + 100);
    }

    #[test]
    fn nested_symbols_are_indented() {
        let symbols: Vec<DocumentSymbol> = serde_json::from_value(json!([{
            "name": "Shape", "kind": 5,
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}},
            "selectionRange": {"start": {"line": 0, "character": 6}, "end": {"line": 0, "character": 11}},
            "children": [{
                "name": "area", "kind": 6,
                "range": {"start": {"line": 2, "character": 4}, "end": {"line": 3, "character": 0}},
                "selectionRange": {"start": {"line": 2, "character": 8}, "end": {"line": 2, "character": 12}},
            }],
        }]))
        .unwrap();
        let mut lines = Vec::new();
        nested(&symbols, 0, &mut lines);
        assert_eq!(lines, ["class Shape (line 1)", "  method area (line 3)"]);
    }
}
