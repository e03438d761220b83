//! Issue 25's MCP faults, each reproduced through the real client (rmcp, rein's transports)
//! against `tests/mcp/hostile_server.py` as a real process, over stdio or streamable HTTP,
//! or through the real binary: an answer too big or too deep for one message, a tool
//! schema too deep or not an object, an HTTP error or a huge HTTP answer, stderr without
//! line ends, a server left running when rein dies, and 10,000 tools.
//!
//! The tests of this file run one at a time ([`one_at_a_time`]): one measures the memory
//! of this process.

use crate::support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rein_core::mcp::{McpError, McpEvent, McpManager, ServerConfig, ServerState, Transport};
use serde_json::json;
use support::mcp::{hostile_server, settled, state};

/// A hostile stdio server in `mode`, with a tool timeout far longer than any of these
/// tests may take: a call that finishes early finished by itself.
fn hostile(mode: &str) -> ServerConfig {
    let mut server =
        ServerConfig::stdio(mode, "python3", &[hostile_server().to_str().unwrap(), mode]);
    server.startup_timeout = Duration::from_secs(20);
    server.tool_timeout = Duration::from_secs(60);
    server
}

/// Call `tool` of `mcp` with `args`, never cancelled.
async fn work(
    mcp: &McpManager,
    tool: &str,
    args: serde_json::Value,
) -> Result<rein_core::mcp::McpOutput, McpError> {
    mcp.call(tool, args, None, never()).await
}

fn never() -> std::future::Pending<()> {
    std::future::pending()
}

/// The tests here run one at a time, so one test's memory is not another's.
async fn one_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    LOCK.lock().await
}

async fn started(servers: Vec<ServerConfig>) -> (McpManager, tempfile::TempDir) {
    let root = tempfile::tempdir().unwrap();
    let (mcp, mut events) = McpManager::start(servers, root.path());
    settled(&mut events, &mcp).await;
    (mcp, root)
}

/// Item 1: rmcp's line reader drops a line over 16 MiB without a word, so the call waited
/// for its whole timeout. Now the answer is cut to 4 MiB while it is read, at once, and
/// the server stays usable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_answer_over_16_mib_is_cut_at_once_and_the_server_stays_usable() {
    let _one = one_at_a_time().await;
    let (mcp, _root) = started(vec![hostile("plain")]).await;
    // Waiting for the line rmcp drops would end in the call's timeout, an error.
    let out = work(&mcp, "mcp__plain__work", json!({"bytes": 20 * 1024 * 1024}))
        .await
        .unwrap();
    assert!(out.text.starts_with("xxxx"), "{}", &out.text[..100]);
    assert!(
        out.text.len() <= rein_core::mcp::MAX_RESULT_BYTES + 300,
        "{}",
        out.text.len()
    );
    let tail = &out.text[out.text.len() - 200..];
    assert!(tail.contains("more not shown"), "{tail}");
    // The same server answers the next call.
    let again = work(&mcp, "mcp__plain__work", json!({})).await.unwrap();
    assert_eq!(again.text, "done");
    mcp.shutdown().await;
}

/// Item 2: a tool schema nested 63 levels is more than serde_json's recursion limit (128)
/// with the message around it. rmcp took the line for garbage and never answered
/// `tools/list`: the server "did not start" and every tool was lost. Now the schema is cut
/// where it is too deep, at once, and the other tools stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_schema_nested_too_deep_is_cut_and_the_server_starts_with_every_tool() {
    let _one = one_at_a_time().await;
    let (mcp, _root) = started(vec![hostile("deep_schema")]).await;
    // A `tools/list` never answered would leave it failed at its startup timeout.
    assert_eq!(state(&mcp, "deep_schema"), ServerState::Ready { tools: 2 });
    let deep = mcp.tool("mcp__deep_schema__deep").unwrap();
    assert_eq!(deep.parameters["type"], "object");
    assert!(
        deep.parameters.to_string().contains("nested too deeply"),
        "{}",
        deep.parameters
    );
    let out = work(&mcp, "mcp__deep_schema__work", json!({}))
        .await
        .unwrap();
    assert_eq!(out.text, "done");
    mcp.shutdown().await;
}

/// Item 2's other half: a result nested 200 levels deep hung like item 1. Now it is cut
/// where it is too deep and the call ends at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_nested_200_levels_deep_ends_the_call_at_once() {
    let _one = one_at_a_time().await;
    let (mcp, _root) = started(vec![hostile("plain")]).await;
    // Hung like item 1, the call would end in its timeout, an error.
    let out = work(&mcp, "mcp__plain__work", json!({"depth": 200}))
        .await
        .unwrap();
    assert!(out.text.starts_with("deep"), "{}", out.text);
    let again = work(&mcp, "mcp__plain__work", json!({})).await.unwrap();
    assert_eq!(again.text, "done");
    mcp.shutdown().await;
}

/// Item 7: one tool whose `inputSchema` is a string failed the whole server. Now that
/// tool takes any object, its description says why, and the other tools stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_whose_schema_is_a_string_takes_any_object_and_the_others_stay() {
    let _one = one_at_a_time().await;
    let (mcp, _root) = started(vec![hostile("string_schema")]).await;
    assert_eq!(
        state(&mcp, "string_schema"),
        ServerState::Ready { tools: 2 },
        "{mcp:?}"
    );
    let stringy = mcp.tool("mcp__string_schema__stringy").unwrap();
    assert_eq!(
        stringy.parameters,
        json!({"type": "object", "properties": {}})
    );
    let note = stringy.note.unwrap();
    assert!(note.contains("not a JSON object"), "{note}");
    let out = work(&mcp, "mcp__string_schema__stringy", json!({}))
        .await
        .unwrap();
    assert_eq!(out.text, "done");
    mcp.shutdown().await;
}

/// The resident memory of this process, in bytes.
fn resident() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Item 4: a server's stderr was read a line at a time, a line ending only at `\n`: a
/// progress bar drawn with `\r` grew one line without limit (610 MB for 300 MB written).
/// Now `\r` ends a line too and a long line is cut while it is read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stderr_without_newlines_is_read_in_bounded_lines() {
    // This process's memory is the measure: the other modules' tests, which share the test
    // binary, must not run beside it.
    if !support::alone(
        "mcp_faults::stderr_without_newlines_is_read_in_bounded_lines",
        &[],
    ) {
        return;
    }
    let _one = one_at_a_time().await;
    let (mcp, _root) = started(vec![hostile("plain")]).await;
    let before = resident();
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(before));
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let (peak, done) = (peak.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                peak.fetch_max(resident(), std::sync::atomic::Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let out = work(
        &mcp,
        "mcp__plain__work",
        json!({"stderr_bytes": 14 * 7_000_000}),
    )
    .await
    .unwrap();
    assert_eq!(out.text, "done");
    // The flood is read by the time the server dies.
    let died = work(&mcp, "mcp__plain__work", json!({"exit": true}))
        .await
        .unwrap_err();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    sampler.join().unwrap();
    let grew = peak
        .load(std::sync::atomic::Ordering::Relaxed)
        .saturating_sub(before);
    assert!(grew < 40_000_000, "memory grew by {grew} bytes");
    let McpError::ServerExited { stderr, .. } = died else {
        panic!("{died:?}");
    };
    let n = stderr.len();
    assert_eq!(
        stderr[n - 2..],
        ["hostile: flood done", "hostile: crashing mid-call"]
    );
    // Each redraw of the bar is a line of its own.
    assert!(
        stderr[..n - 2].iter().all(|l| l.starts_with("progress ")),
        "{stderr:?}"
    );
}

/// A hostile HTTP server (`hostile_server.py http`) and its URL; killed when dropped.
struct HttpServer {
    child: std::process::Child,
    url: String,
}

impl HttpServer {
    fn start() -> HttpServer {
        HttpServer::start_in("plain")
    }

    /// The server in `mode` (of `hostile_server.py`).
    fn start_in(mode: &str) -> HttpServer {
        use std::io::BufRead;
        let mut child = std::process::Command::new("python3")
            .arg(hostile_server())
            .args(["http", mode])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port: u16 = line.trim().parse().unwrap();
        HttpServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }

    fn config(&self, name: &str) -> ServerConfig {
        let mut server = ServerConfig {
            transport: Transport::Http {
                url: self.url.clone(),
                headers: Vec::new(),
                bearer_token_env: None,
                oauth: Default::default(),
            },
            ..ServerConfig::stdio(name, "unused", &[])
        };
        server.startup_timeout = Duration::from_secs(20);
        server.tool_timeout = Duration::from_secs(60);
        server
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Items 3 and 6: one HTTP 500 marked the server stopped for the whole session, in words
/// with Rust type names ("Transport [rmcp::transport::worker::WorkerTransport<…>] error").
/// Now the call fails with one plain line (the URL, the status, the page's title where
/// rmcp keeps the page) and the next call works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_error_fails_one_call_in_plain_words_and_the_server_stays_usable() {
    let _one = one_at_a_time().await;
    let http = HttpServer::start();
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/mcp", listener.local_addr().unwrap())
    };
    let mut gone = http.config("gone");
    gone.transport = Transport::Http {
        url: closed.clone(),
        headers: Vec::new(),
        bearer_token_env: None,
        oauth: Default::default(),
    };
    let (mcp, _root) = started(vec![http.config("web"), gone]).await;
    assert_eq!(state(&mcp, "web"), ServerState::Ready { tools: 1 });
    // A server that cannot be reached says so, in the same plain words.
    let ServerState::Failed { reason, .. } = state(&mcp, "gone") else {
        panic!("{mcp:?}");
    };
    assert!(
        reason.starts_with(&format!("{closed} could not be reached (")),
        "{reason}"
    );
    let failed = work(&mcp, "mcp__web__work", json!({"status": 500}))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        failed,
        format!(
            "the MCP server \"web\" ({}) answered the call with HTTP 500 Internal Server Error",
            http.url
        )
    );
    // A 4xx page is read by rmcp: its title is the message.
    let failed = work(&mcp, "mcp__web__work", json!({"status": 400}))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        failed,
        format!(
            "the MCP server \"web\" ({}) answered the call with HTTP 400 Bad Request: Upstream exploded",
            http.url
        )
    );
    // An answer too deep for rmcp's parser: that call fails at once, with the reason.
    let failed = work(&mcp, "mcp__web__work", json!({"depth": 200}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        failed.contains("failed the call: ") && failed.contains("recursion limit exceeded"),
        "{failed}"
    );
    assert!(matches!(state(&mcp, "web"), ServerState::Ready { .. }));
    let out = work(&mcp, "mcp__web__work", json!({})).await.unwrap();
    assert_eq!(out.text, "done");
    mcp.shutdown().await;
}

/// Item 3: a 50 MB answer over HTTP did the same. Now that call fails at once, saying the
/// answer was too large, and the server stays usable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_50_mb_http_answer_fails_that_call_and_the_server_stays_usable() {
    let _one = one_at_a_time().await;
    let http = HttpServer::start();
    let (mcp, _root) = started(vec![http.config("web")]).await;
    // The error names the size, not a timeout.
    let failed = work(&mcp, "mcp__web__work", json!({"bytes": 50_000_000}))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        failed,
        format!(
            "the MCP server \"web\" ({}) sent an answer larger than 16.0 MiB, the most rein reads of one answer; the call failed",
            http.url
        )
    );
    let out = work(&mcp, "mcp__web__work", json!({})).await.unwrap();
    assert_eq!(out.text, "done");
    mcp.shutdown().await;
}

/// Whether the process `pid` is alive (not gone, not a zombie).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Wait for `path` to exist (giving up after [`support::GIVE_UP`]).
fn wait_for(path: &Path) {
    let deadline = Instant::now() + support::GIVE_UP;
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `pid` is gone (giving up after [`support::GIVE_UP`]).
fn gone(pid: i32) -> bool {
    let deadline = Instant::now() + support::GIVE_UP;
    while alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// `rein -p` in a fresh home whose config declares the hostile server `slow` in `mode`
/// (writing its pids to the returned file) and lets the model call its `work`.
fn rein_with_slow_server(
    home: &Path,
    project: &Path,
    mode: &str,
    base_url: &str,
) -> (std::process::Child, PathBuf) {
    let pids = home.join("pids");
    std::fs::create_dir_all(home.join("rein-home")).unwrap();
    std::fs::write(
        home.join("rein-home/config.toml"),
        format!(
            "[mcp_servers.slow]\ncommand = \"python3\"\nargs = [{:?}, {mode:?}]\n\
             startup_timeout_secs = 60\ntool_timeout_secs = 120\n\
             env = {{ HOSTILE_PID_FILE = {:?} }}\n\n\
             [[permissions.tools]]\npattern = \"mcp__slow__work\"\naction = \"allow\"\n",
            hostile_server().display().to_string(),
            pids.display().to_string()
        ),
    )
    .unwrap();
    let child = support::rein_in(home, project)
        .args(["-p", "go", "--base-url", base_url, "--model", "m"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    (child, pids)
}

fn pids(file: &Path) -> (i32, i32) {
    let text = std::fs::read_to_string(file).unwrap();
    let mut words = text.split_whitespace().map(|w| w.parse::<i32>().unwrap());
    (words.next().unwrap(), words.next().unwrap())
}

/// Item 5: `rein -p` stopped by SIGTERM while a server is still starting died with the
/// signal's default action (it watched for none yet) and left the server running. Now it
/// kills the server's process group, the server's own children too, and says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signal_while_a_server_starts_kills_its_process_group() {
    let _one = one_at_a_time().await;
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let (mut rein, file) =
        rein_with_slow_server(home.path(), project.path(), "hang", "http://127.0.0.1:9");
    wait_for(&file);
    let (server, helper) = pids(&file);
    // SAFETY: kill only sends a signal to the rein this test started.
    unsafe {
        libc::kill(rein.id() as i32, libc::SIGTERM);
    }
    let status = rein.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut rein.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(143), "{err}");
    assert!(
        err.contains("rein: stopped by SIGTERM while the MCP servers started"),
        "{err}"
    );
    assert!(gone(server), "the server {server} outlived rein");
    assert!(gone(helper), "the server's child {helper} outlived rein");
}

/// Item 5: after a SIGKILL of rein in the middle of a call, the server went on running.
/// Now the server gets a parent-death signal, as a bash command's shell does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_dies_with_rein_killed_in_the_middle_of_a_call() {
    let _one = one_at_a_time().await;
    let model = support::ScriptedServer::start(vec![support::Reply::tool_calls(&[(
        "mcp__slow__work",
        &json!({"sleep": 60}).to_string(),
    )])])
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let (mut rein, file) =
        rein_with_slow_server(home.path(), project.path(), "plain", &model.base_url());
    wait_for(&file.with_extension("call"));
    let (server, helper) = pids(&file);
    rein.kill().unwrap();
    rein.wait().unwrap();
    let server_gone = gone(server);
    // Its own child is in its process group, which only a rein that exits in order
    // kills; the test cleans it up.
    // SAFETY: kill only sends a signal to the helper this test's server started.
    unsafe {
        libc::kill(helper, libc::SIGKILL);
    }
    assert!(server_gone, "the server {server} outlived rein");
}

/// Item 7: 10,000 tools were all sent with every request (about 376k tokens against a
/// 128k window) without a word. Now the user is told, once, how large the server's tool
/// definitions are and how to offer fewer, before the server is reported ready.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_with_very_many_tools_is_warned_about_once() {
    let _one = one_at_a_time().await;
    let root = tempfile::tempdir().unwrap();
    let (mcp, mut events) = McpManager::start(vec![hostile("many")], root.path());
    let mut notices = Vec::new();
    let deadline = tokio::time::Instant::now() + support::GIVE_UP;
    loop {
        let event = tokio::time::timeout_at(deadline, events.recv())
            .await
            .unwrap()
            .unwrap();
        match event {
            McpEvent::Notice { name, message } => notices.push((name, message)),
            McpEvent::ServerState {
                state: ServerState::Ready { tools },
                ..
            } => {
                assert_eq!(tools, 10_001);
                break;
            }
            McpEvent::ServerState { .. }
            | McpEvent::Prompts { .. }
            | McpEvent::Resources { .. } => {}
        }
    }
    assert_eq!(notices.len(), 1, "{notices:?}");
    let (name, message) = &notices[0];
    assert_eq!(name, "many");
    assert!(
        message.starts_with("its 10001 tools take about ")
            && message.contains("k tokens of every request")
            && message.contains("mcp_servers.many.allow"),
        "{message}"
    );
    // A restart lists them again without a second warning.
    mcp.restart("many").unwrap();
    settled(&mut events, &mcp).await;
    assert!(matches!(state(&mcp, "many"), ServerState::Ready { .. }));
    while let Ok(event) = events.try_recv() {
        assert!(!matches!(event, McpEvent::Notice { .. }), "{event:?}");
    }
    mcp.shutdown().await;
}

/// Item 7 through the real binary: `rein -p` says it on stderr before the run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rein_p_warns_about_a_server_with_very_many_tools() {
    let _one = one_at_a_time().await;
    let model = support::ScriptedServer::start(vec![support::Reply::text("ok")])
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let (rein, _) = rein_with_slow_server(home.path(), project.path(), "many", &model.base_url());
    let out = rein.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let warning = err
        .lines()
        .find(|l| l.starts_with("rein: warning: MCP server slow: its 10001 tools take about "))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(warning.contains("mcp_servers.slow.allow"), "{warning}");
    let ready = err.find("MCP server slow ready").unwrap();
    assert!(err.find(warning).unwrap() < ready, "{err}");
}

/// Item 7 over HTTP, where rmcp reads the listing itself: it is asked for again as it is
/// and mended the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_too_a_tool_whose_schema_is_a_string_takes_any_object() {
    let _one = one_at_a_time().await;
    let http = HttpServer::start_in("string_schema");
    let (mcp, _root) = started(vec![http.config("web")]).await;
    assert_eq!(
        state(&mcp, "web"),
        ServerState::Ready { tools: 2 },
        "{mcp:?}"
    );
    let stringy = mcp.tool("mcp__web__stringy").unwrap();
    assert!(stringy.note.unwrap().contains("not a JSON object"));
    let out = work(&mcp, "mcp__web__stringy", json!({})).await.unwrap();
    assert_eq!(out.text, "done");
    mcp.shutdown().await;
}
