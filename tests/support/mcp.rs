//! Where the real MCP servers the tests use are installed (`.ci/run` puts them in
//! `target/mcp-servers`, or `$REIN_MCP_SERVERS`), and the rule for a missing one: the
//! test says so and passes, unless `REIN_MCP=1` (set by `.ci/run`) makes it a failure.

use std::path::{Path, PathBuf};

/// The folder the servers are installed in.
pub fn servers_dir() -> PathBuf {
    std::env::var_os("REIN_MCP_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-servers"))
}

/// The installed program at `relative` in the servers folder, or `None` (and a line
/// saying why) when it is missing and `REIN_MCP` is not set.
pub fn installed(relative: &str) -> Option<PathBuf> {
    let path = servers_dir().join(relative);
    if path.exists() {
        return Some(path);
    }
    if std::env::var("REIN_MCP").is_ok_and(|v| v == "1") {
        panic!("REIN_MCP=1 but {} is missing", path.display());
    }
    eprintln!("skipped: {} is not installed (run .ci/run)", path.display());
    None
}
