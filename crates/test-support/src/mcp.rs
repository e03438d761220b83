//! Where the real MCP servers the tests use are installed (`.ci/run` puts them in
//! `target/mcp-servers`, or `$REIN_MCP_SERVERS`), and the rule for a missing one: the
//! test says so and passes, unless `REIN_MCP=1` (set by `.ci/run`) makes it a failure.
//! Also the waits the manager's tests share: every server out of `Starting`, a state.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rein_core::mcp::{McpEvent, McpManager, ServerState};
use tokio::sync::mpsc;

/// Wait for every server to leave `Starting` (giving up after [`crate::GIVE_UP`]).
pub async fn settled(events: &mut mpsc::UnboundedReceiver<McpEvent>, mcp: &McpManager) {
    let deadline = Instant::now() + crate::GIVE_UP;
    while mcp
        .states()
        .iter()
        .any(|(_, s)| *s == ServerState::Starting)
    {
        assert!(Instant::now() < deadline, "servers still starting: {mcp:?}");
        let _ = tokio::time::timeout(Duration::from_millis(200), events.recv()).await;
    }
}

/// The state of the server `name`.
pub fn state(mcp: &McpManager, name: &str) -> ServerState {
    mcp.states()
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, s)| s)
        .unwrap_or_else(|| panic!("no server {name}: {mcp:?}"))
}

/// The scripted hostile MCP server (`tests/mcp/hostile_server.py`, run by `python3`).
pub fn hostile_server() -> PathBuf {
    crate::repository().join("tests/mcp/hostile_server.py")
}

/// The folder the servers are installed in.
pub fn servers_dir() -> PathBuf {
    std::env::var_os("REIN_MCP_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::repository().join("target/mcp-servers"))
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
