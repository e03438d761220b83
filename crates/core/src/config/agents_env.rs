//! The reference harness's `~/.agents/env`, the lowest layer above the defaults.
//!
//! It is a shell-style file of `KEY=value` lines. rein reads `BASE_URL`, `API_KEY`, `MODEL`
//! and `CONTEXT_WINDOW`, tolerates `export ` prefixes, quotes, blank lines and `#`
//! comments, and ignores every other key and any line it cannot make sense of, since the
//! file belongs to another program. An empty value counts as unset. A missing file is an
//! empty layer.

use std::path::Path;

use super::{positive_int, ConfigError, Layer, Source, Sourced};

/// Read `path` into a layer whose values carry [`Source::AgentsEnv`].
pub(super) fn read(path: &Path) -> Result<Layer, ConfigError> {
    match crate::host::safe_fs::read_small_text(path, super::MAX_CONFIG_BYTES) {
        Ok(text) => parse(&text, path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Layer::default()),
        Err(error) => Err(ConfigError::Read {
            path: path.to_path_buf(),
            error,
        }),
    }
}

fn parse(text: &str, path: &Path) -> Result<Layer, ConfigError> {
    let mut layer = Layer::default();
    let source = Source::AgentsEnv(path.to_path_buf());
    for (key, value) in text.lines().filter_map(assignment) {
        if value.is_empty() {
            continue;
        }
        let sourced = |v| Some(Sourced::new(v, source.clone()));
        match key {
            "BASE_URL" => layer.base_url = sourced(value.to_string()),
            "API_KEY" => layer.api_key = sourced(value.to_string()),
            "MODEL" => layer.model = sourced(value.to_string()),
            "CONTEXT_WINDOW" => {
                let n = positive_int(value).map_err(|problem| ConfigError::AgentsEnv {
                    path: path.to_path_buf(),
                    key: key.to_string(),
                    problem,
                })?;
                layer.context_window = Some(Sourced::new(n, source.clone()));
            }
            _ => {}
        }
    }
    Ok(layer)
}

/// `KEY=value` from one line, or `None` for blank lines, comments and anything else.
fn assignment(line: &str) -> Option<(&str, &str)> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let line = match line.strip_prefix("export") {
        Some(rest) if rest.starts_with(char::is_whitespace) => rest.trim_start(),
        _ => line,
    };
    let (key, value) = line.split_once('=')?;
    Some((key.trim(), unquote(value.trim())))
}

/// The value without surrounding quotes, or without a trailing ` # comment` when unquoted.
fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(rest) = value.strip_prefix(quote) {
            if let Some(end) = rest.find(quote) {
                return &rest[..end];
            }
        }
    }
    let end = value
        .char_indices()
        .find(|&(i, c)| c == '#' && value[..i].ends_with(char::is_whitespace))
        .map_or(value.len(), |(i, _)| i);
    value[..end].trim_end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignment_handles_export_quotes_and_comments() {
        assert_eq!(assignment("  # a comment"), None);
        assert_eq!(assignment(""), None);
        assert_eq!(assignment("not an assignment"), None);
        assert_eq!(assignment("MODEL=gpt"), Some(("MODEL", "gpt")));
        assert_eq!(assignment("export MODEL=gpt"), Some(("MODEL", "gpt")));
        assert_eq!(assignment("export\tMODEL='a b'"), Some(("MODEL", "a b")));
        assert_eq!(assignment("MODEL=\"x#y\" # note"), Some(("MODEL", "x#y")));
        assert_eq!(assignment("MODEL=x#y # note"), Some(("MODEL", "x#y")));
        assert_eq!(assignment("exported=1"), Some(("exported", "1")));
        assert_eq!(
            assignment("MODEL=\"unterminated"),
            Some(("MODEL", "\"unterminated"))
        );
    }
}
