//! The tools the main agent offers: rein's own, then the external ones (MCP servers) as
//! they are at a turn's start.
//!
//! In: the external tools now (`ExternalTools::specs`), and every one this conversation
//! (or the resumed session) offered before. Out: the
//! request's `tools` (and their size, part of every request's count), and an
//! `Entry::Tools` in the session file when the offer changed. A tool whose server went
//! away stays offered, marked unavailable, while the history has a call to it, so that
//! call stays valid against the request's tools. Within a turn the offer never changes.

use std::collections::HashSet;

use super::Agent;
use crate::agent::AgentConfig;
use crate::conversation::Message;
use crate::session::Entry;
use crate::tools::external::ExternalSpec;
use crate::tools::{self, Toolset};

impl Agent {
    /// At a turn's start: offer the external tools as they are now (a server came up or
    /// went away). Within a turn the tools never change, so its requests extend each
    /// other byte for byte; when they do change, the next request's prefix differs from
    /// the tools on, as it must.
    pub(super) fn refresh_tools(&mut self) {
        if self.config.external_tools.is_some() {
            self.refresh_external();
        }
        // The `lsp` tool, once a language server runs (or the history called it).
        let lsp = self.config.lsp.as_ref().is_some_and(|l| l.any_running())
            || self.called_tool_names().contains(tools::lsp::NAME);
        let now = tools_json(&self.config, &self.external.offered, lsp);
        if now != self.tools_json {
            self.tools_chars = now.to_string().len();
            self.tools_json = now;
            // The last usage report counted the old tools.
            self.meter.history_rewritten();
        }
    }

    /// The external tools as they are now, recorded when the offer changed.
    fn refresh_external(&mut self) {
        let Some(provider) = &self.config.external_tools else {
            return;
        };
        let current = provider.specs();
        for spec in &current {
            match self.external.known.iter_mut().find(|k| k.name == spec.name) {
                Some(known) => *known = spec.clone(),
                None => self.external.known.push(spec.clone()),
            }
        }
        // Tools the history called whose servers are gone stay, marked unavailable.
        let gone: Vec<&ExternalSpec> = self
            .external
            .known
            .iter()
            .filter(|k| !current.iter().any(|c| c.name == k.name))
            .collect();
        let mut offered = current.clone();
        if !gone.is_empty() {
            let called = self.called_tool_names();
            offered.extend(
                gone.into_iter()
                    .filter(|k| called.contains(k.name.as_str()))
                    .map(unavailable),
            );
        }
        if offered != self.external.offered {
            self.record(Entry::Tools {
                external: offered.clone(),
            });
            self.external.offered = offered;
        }
    }

    /// The names of the tools the history's assistant messages called.
    pub(super) fn called_tool_names(&self) -> HashSet<&str> {
        self.history
            .messages()
            .iter()
            .filter_map(|m| match m {
                Message::Assistant { tool_calls, .. } => Some(tool_calls),
                _ => None,
            })
            .flatten()
            .map(|c| c.function.name.as_str())
            .collect()
    }
}

/// The `tools` of the main agent's requests: rein's own (`lsp` only when `lsp`), then
/// `external`.
pub(super) fn tools_json(
    config: &AgentConfig,
    external: &[ExternalSpec],
    lsp: bool,
) -> serde_json::Value {
    let own: Vec<_> = Toolset::Main
        .specs()
        .into_iter()
        .filter(|s| lsp || s.name != tools::lsp::NAME)
        .collect();
    let serde_json::Value::Array(mut list) = tools::specs_json(&own) else {
        return serde_json::Value::Array(Vec::new());
    };
    if config.external_tools.is_some() {
        list.extend(tools::external::specs_json(external));
    }
    serde_json::Value::Array(list)
}

/// What an external tool that is gone says of itself (its schema kept, so the history's
/// calls to it stay valid against the request's tools).
fn unavailable(spec: &ExternalSpec) -> ExternalSpec {
    if spec.description.starts_with(UNAVAILABLE) {
        return spec.clone();
    }
    ExternalSpec {
        description: format!("{UNAVAILABLE} {}", spec.description),
        ..spec.clone()
    }
}

/// How the description of an external tool that is gone begins.
const UNAVAILABLE: &str =
    "(Not available in this session: its MCP server is not running. Do not call it.)";
