//! The MCP client against real servers: the protocol's reference servers from npm
//! (`@modelcontextprotocol/server-everything` over stdio and streamable HTTP,
//! `server-filesystem`), a Python one from PyPI (`mcp-server-time`), and hostile scripts
//! (`tests/mcp/hostile_server.py`). The registry servers live in `$REIN_MCP_SERVERS`
//! (`target/mcp-servers` by default; `.ci/run` installs them there): where they are
//! missing a test says so and passes, unless `REIN_MCP=1` (set by `.ci/run`) makes that a
//! failure.

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use rein_core::mcp::{
    group_alive, Held, McpError, McpEvent, McpManager, ServerConfig, ServerState, SubagentTools,
    Transport, Unapproved,
};
use serde_json::json;
use support::mcp::{installed, servers_dir, settled, state};
use tokio::sync::mpsc;

fn hostile(mode: &str) -> ServerConfig {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/hostile_server.py");
    let mut server = ServerConfig::stdio(mode, "python3", &[script.to_str().unwrap(), mode]);
    server.startup_timeout = Duration::from_secs(5);
    server.tool_timeout = Duration::from_secs(5);
    server
}

fn never() -> std::future::Pending<()> {
    std::future::pending()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_stdio() {
    let Some(bin) = installed("node_modules/.bin/mcp-server-everything") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let server = ServerConfig::stdio("everything", bin.to_str().unwrap(), &["stdio"]);
    let (mcp, mut events) = McpManager::start(vec![server], root.path());
    // start() never waits: the server is still starting.
    assert_eq!(state(&mcp, "everything"), ServerState::Starting);
    settled(&mut events, &mcp).await;
    let ServerState::Ready { tools } = state(&mcp, "everything") else {
        panic!("{mcp:?}");
    };
    let listed = mcp.tools();
    assert_eq!(listed.len(), tools);
    let echo = listed
        .iter()
        .find(|t| t.name == "mcp__everything__echo")
        .unwrap();
    assert_eq!(echo.tool, "echo");
    assert!(echo.annotations.read_only);
    assert_eq!(echo.parameters["type"], "object");
    assert!(echo.parameters["properties"]["message"].is_object());
    // The hyphenated names stay valid function names.
    assert!(listed
        .iter()
        .any(|t| t.name == "mcp__everything__get-tiny-image"));

    let out = mcp
        .call(
            "mcp__everything__echo",
            json!({"message": "hi from rein"}),
            None,
            never(),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "Echo: hi from rein");
    assert!(!out.is_error);

    let image = mcp
        .call("mcp__everything__get-tiny-image", json!({}), None, never())
        .await
        .unwrap();
    assert!(image.text.contains("[image: image/png, "), "{}", image.text);
    assert!(
        image.text.len() < 500,
        "no base64 in the text: {}",
        image.text
    );

    let bad = mcp
        .call(
            "mcp__everything__get-sum",
            json!({"a": "one", "b": 2}),
            None,
            never(),
        )
        .await;
    match bad {
        Ok(out) => assert!(out.is_error && out.to_tool_result().text.starts_with("Error: ")),
        Err(McpError::Rejected { .. }) => {}
        other => panic!("{other:?}"),
    }

    // A long-running tool reports progress, which reaches the caller's channel.
    let (tx, mut rx) = mpsc::unbounded_channel();
    let out = mcp
        .call(
            "mcp__everything__trigger-long-running-operation",
            json!({"duration": 2, "steps": 2}),
            Some(tx),
            never(),
        )
        .await
        .unwrap();
    assert!(
        out.text.contains("Long running operation completed"),
        "{}",
        out.text
    );
    let mut steps = Vec::new();
    while let Ok(p) = rx.try_recv() {
        // Its log lines come on the same channel (it logs when it reads rein's roots).
        if !p.log {
            steps.push(p.progress);
        }
    }
    // The last step's notification races the result (and progress after the result is
    // dropped), so only the first one is certain.
    assert_eq!(steps.first(), Some(&1.0), "{steps:?}");
    assert!(
        steps.len() <= 2 && steps.windows(2).all(|w| w[0] < w[1]),
        "{steps:?}"
    );

    // Cancelled mid-call: the call ends at once (a 10 s operation, whose end would be an
    // answer, not `Cancelled`), the server stays usable.
    let cancelled = mcp
        .call(
            "mcp__everything__trigger-long-running-operation",
            json!({"duration": 10, "steps": 5}),
            None,
            tokio::time::sleep(Duration::from_millis(500)),
        )
        .await;
    assert_eq!(cancelled, Err(McpError::Cancelled));
    let again = mcp
        .call(
            "mcp__everything__echo",
            json!({"message": "still here"}),
            None,
            never(),
        )
        .await
        .unwrap();
    assert_eq!(again.text, "Echo: still here");

    assert!(matches!(
        mcp.call("mcp__everything__nope", json!({}), None, never())
            .await,
        Err(McpError::UnknownTool(_))
    ));

    // Shutdown leaves no process of the server's group.
    let pgid = mcp.process_group("everything").unwrap();
    assert!(group_alive(pgid));
    mcp.shutdown().await;
    assert!(!group_alive(pgid), "process group {pgid} is still alive");
    assert_eq!(state(&mcp, "everything"), ServerState::Stopped);
    assert!(mcp.tools().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_and_deny_choose_the_offered_tools_and_restart_works() {
    let Some(bin) = installed("node_modules/.bin/mcp-server-everything") else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let mut server = ServerConfig::stdio("ev", bin.to_str().unwrap(), &["stdio"]);
    server.allow = vec!["get-*".into(), "echo".into()];
    server.deny = vec!["get-env".into()];
    let (mcp, mut events) = McpManager::start(vec![server], root.path());
    settled(&mut events, &mcp).await;
    let names: Vec<String> = mcp.tools().into_iter().map(|t| t.tool).collect();
    assert!(names.contains(&"echo".to_string()));
    assert!(names.contains(&"get-sum".to_string()));
    assert!(!names.contains(&"get-env".to_string()));
    assert!(names.iter().all(|n| n == "echo" || n.starts_with("get-")));

    let first = mcp.process_group("ev").unwrap();
    mcp.restart("ev").unwrap();
    assert_eq!(state(&mcp, "ev"), ServerState::Starting);
    settled(&mut events, &mcp).await;
    assert!(matches!(state(&mcp, "ev"), ServerState::Ready { .. }));
    let second = mcp.process_group("ev").unwrap();
    assert_ne!(first, second);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(
        !group_alive(first),
        "the old server's group is gone after a restart"
    );
    assert_eq!(
        mcp.restart("nope"),
        Err(McpError::UnknownServer("nope".into()))
    );
    // Dropping the last handle kills the server's group too.
    drop(mcp);
    let deadline = Instant::now() + support::GIVE_UP;
    while group_alive(second) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!group_alive(second));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_streamable_http_with_a_bearer_token() {
    let Some(_) = installed("node_modules/.bin/mcp-server-everything") else {
        return;
    };
    // The token's variable is in the environment this test starts with, in a process of its
    // own: setting it here would change the environment of the tests running beside it.
    if !support::alone(
        "mcp_servers::server_everything_over_streamable_http_with_a_bearer_token",
        &[("REIN_TEST_MCP_TOKEN_HTTP", "s3cr3t")],
    ) {
        return;
    }
    let script =
        servers_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut node = tokio::process::Command::new("node")
        .arg(&script)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + support::GIVE_UP;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the HTTP server did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let http = |name: &str, var: &str| ServerConfig {
        transport: Transport::Http {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: vec![("X-Client".into(), "rein-test".into())],
            bearer_token_env: Some(var.into()),
            oauth: Default::default(),
        },
        ..ServerConfig::stdio(name, "unused", &[])
    };
    let root = tempfile::tempdir().unwrap();
    let (mcp, mut events) = McpManager::start(
        vec![
            http("remote", "REIN_TEST_MCP_TOKEN_HTTP"),
            http("notoken", "REIN_TEST_MCP_TOKEN_UNSET"),
        ],
        root.path(),
    );
    settled(&mut events, &mcp).await;
    assert!(
        matches!(state(&mcp, "remote"), ServerState::Ready { .. }),
        "{mcp:?}"
    );
    match state(&mcp, "notoken") {
        ServerState::Failed { reason, .. } => assert_eq!(
            reason,
            "the environment variable REIN_TEST_MCP_TOKEN_UNSET (bearer_token_env) is not set"
        ),
        other => panic!("{other:?}"),
    }
    let out = mcp
        .call(
            "mcp__remote__echo",
            json!({"message": "over http"}),
            None,
            never(),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "Echo: over http");
    let (tx, mut rx) = mpsc::unbounded_channel();
    mcp.call(
        "mcp__remote__trigger-long-running-operation",
        json!({"duration": 1, "steps": 2}),
        Some(tx),
        never(),
    )
    .await
    .unwrap();
    assert!(rx.try_recv().is_ok(), "progress arrives over HTTP too");
    mcp.shutdown().await;
    let _ = node.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_filesystem_and_the_python_time_server() {
    let (Some(fs), Some(python)) = (
        installed("node_modules/.bin/mcp-server-filesystem"),
        installed("venv/bin/python"),
    ) else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("hello.txt"), "hi").unwrap();
    std::fs::create_dir(root.path().join("sub")).unwrap();
    let dir = root.path().canonicalize().unwrap();
    // docs/mcp.md's way: the project named in the arguments, not taken from the folder.
    let mut fs = ServerConfig::stdio("fs", fs.to_str().unwrap(), &["${project}"]);
    // Subagents get the tools the server marks read-only.
    fs.subagents = SubagentTools::ReadOnly;
    let servers = vec![
        fs,
        ServerConfig::stdio("time", python.to_str().unwrap(), &["-m", "mcp_server_time"]),
    ];
    let (mcp, mut events) = McpManager::start(servers, &dir);
    settled(&mut events, &mcp).await;
    for name in ["fs", "time"] {
        let state = state(&mcp, name);
        assert!(
            matches!(state, ServerState::Ready { .. }),
            "{name} did not start: {state:?}"
        );
    }
    let for_subagents = |name: &str| {
        mcp.tools()
            .into_iter()
            .find(|t| t.name == name)
            .map(|t| t.subagents)
    };
    assert_eq!(for_subagents("mcp__fs__read_text_file"), Some(true));
    assert_eq!(for_subagents("mcp__fs__list_directory"), Some(true));
    assert_eq!(for_subagents("mcp__fs__write_file"), Some(false));
    assert_eq!(for_subagents("mcp__fs__move_file"), Some(false));
    assert_eq!(
        for_subagents("mcp__time__get_current_time"),
        Some(false),
        "none by default"
    );
    let out = mcp
        .call(
            "mcp__fs__list_directory",
            json!({"path": dir.to_str().unwrap()}),
            None,
            never(),
        )
        .await
        .unwrap();
    assert!(out.text.contains("[FILE] hello.txt"), "{}", out.text);
    assert!(out.text.contains("[DIR] sub"), "{}", out.text);

    let out = mcp
        .call(
            "mcp__time__get_current_time",
            json!({"timezone": "Asia/Tokyo"}),
            None,
            never(),
        )
        .await
        .unwrap();
    assert!(
        out.text.contains("\"timezone\": \"Asia/Tokyo\""),
        "{}",
        out.text
    );
    let bad = mcp
        .call(
            "mcp__time__get_current_time",
            json!({"timezone": "Mars/Olympus"}),
            None,
            never(),
        )
        .await
        .unwrap();
    assert!(
        bad.is_error && bad.text.contains("Invalid timezone"),
        "{}",
        bad.text
    );
    // The Python SDK's schema keeps only what strict providers take.
    let tool = mcp
        .tools()
        .into_iter()
        .find(|t| t.name == "mcp__time__convert_time")
        .unwrap();
    assert!(tool.parameters.get("title").is_none());
    assert_eq!(tool.parameters["required"].as_array().unwrap().len(), 3);
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_servers_fail_clearly_and_leave_the_manager_usable() {
    let root = tempfile::tempdir().unwrap();
    // Startups run concurrently: a server that takes all of its ten minutes to start
    // (listed first) holds none of the others back.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/hostile_server.py");
    let mut held = ServerConfig::stdio("held", "python3", &[script.to_str().unwrap(), "hang"]);
    held.startup_timeout = Duration::from_secs(600);
    let (first, _events) = McpManager::start(vec![held, hostile("garbage")], root.path());
    // A guard against a hang, not a claim about speed.
    let deadline = Instant::now() + support::GIVE_UP;
    while state(&first, "garbage") == ServerState::Starting {
        assert!(
            Instant::now() < deadline,
            "garbage waited for held: {first:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(state(&first, "garbage"), ServerState::Ready { tools: 1 });
    assert_eq!(state(&first, "held"), ServerState::Starting);
    first.shutdown().await;

    let mut hang = hostile("hang");
    hang.startup_timeout = Duration::from_secs(1);
    let servers = vec![
        hang,
        hostile("garbage"),
        hostile("exit"),
        hostile("big"),
        hostile("pages"),
    ];
    let (mcp, mut events) = McpManager::start(servers, root.path());
    settled(&mut events, &mcp).await;

    match state(&mcp, "hang") {
        ServerState::Failed { reason, stderr } => {
            assert!(reason.contains("did not start within 1 s"), "{reason}");
            assert!(reason.contains("mcp_servers.hang.startup_timeout_secs"));
            assert_eq!(stderr, ["hostile: stuck before initialize"]);
        }
        other => panic!("{other:?}"),
    }
    // Garbage on stdout is skipped; the server still works.
    let out = mcp
        .call("mcp__garbage__work", json!({}), None, never())
        .await
        .unwrap();
    assert_eq!(out.text, "done");

    // Dying mid-call: a clear error with the stderr tail, the server marked failed.
    let died = mcp
        .call("mcp__exit__work", json!({}), None, never())
        .await
        .unwrap_err();
    assert!(matches!(died, McpError::ServerExited { .. }), "{died:?}");
    assert!(
        died.to_string().contains("hostile: crashing mid-call"),
        "{died}"
    );
    assert!(matches!(state(&mcp, "exit"), ServerState::Failed { .. }));
    assert!(mcp.tools().iter().all(|t| t.server != "exit"));
    // ...and restartable.
    mcp.restart("exit").unwrap();
    settled(&mut events, &mcp).await;
    assert!(matches!(
        state(&mcp, "exit"),
        ServerState::Ready { tools: 1 }
    ));

    // 10 MB of text: capped while converting.
    let big = mcp
        .call("mcp__big__work", json!({}), None, never())
        .await
        .unwrap();
    assert!(big.text.len() <= rein_core::mcp::MAX_RESULT_BYTES + 200);
    assert!(big.omitted_bytes > 5 * 1024 * 1024);
    assert!(big.text.ends_with("the result was over 4.0 MiB]"));

    // Three pages of tools/list.
    let paged: Vec<String> = mcp
        .tools()
        .into_iter()
        .filter(|t| t.server == "pages")
        .map(|t| t.tool)
        .collect();
    assert_eq!(paged, ["a", "b", "c"]);

    let groups: Vec<u32> = ["garbage", "exit", "big", "pages"]
        .iter()
        .filter_map(|n| mcp.process_group(n))
        .collect();
    assert_eq!(groups.len(), 4);
    mcp.shutdown().await;
    for pgid in groups {
        assert!(!group_alive(pgid));
    }
}

/// A stdio server gets the variables programs need and those its table names or sets,
/// not the rest of rein's environment (API keys, tokens).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_gets_only_the_environment_it_is_given() {
    let Some(bin) = installed("node_modules/.bin/mcp-server-everything") else {
        return;
    };
    // Cargo sets both for every test process: one is named, one is not.
    assert!(std::env::var("CARGO_MANIFEST_DIR").is_ok() && std::env::var("CARGO_PKG_NAME").is_ok());
    let root = tempfile::tempdir().unwrap();
    let mut server = ServerConfig::stdio("ev", bin.to_str().unwrap(), &["stdio"]);
    server.allow = vec!["get-env".into()];
    if let Transport::Stdio { env, env_vars, .. } = &mut server.transport {
        env.push(("SET_BY_TABLE".into(), "yes".into()));
        env_vars.push("CARGO_MANIFEST_DIR".into());
    }
    let (mcp, mut events) = McpManager::start(vec![server], root.path());
    settled(&mut events, &mcp).await;
    let out = mcp
        .call("mcp__ev__get-env", json!({}), None, never())
        .await
        .unwrap();
    let got: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&out.text).unwrap();
    assert_eq!(got["SET_BY_TABLE"], "yes");
    assert_eq!(
        got["CARGO_MANIFEST_DIR"].as_str(),
        std::env::var("CARGO_MANIFEST_DIR").ok().as_deref()
    );
    // PATH as rein has it, but only its absolute folders.
    let path = std::env::var_os("PATH").unwrap_or_default();
    let absolute: Vec<_> = std::env::split_paths(&path)
        .filter(|p| p.is_absolute())
        .collect();
    let absolute = std::env::join_paths(absolute).unwrap();
    assert_eq!(got["PATH"].as_str(), absolute.to_str());
    assert!(!got.contains_key("CARGO_PKG_NAME"), "{:?}", got.keys());
    assert!(
        got.keys()
            .all(|k| !k.starts_with("REIN_") && !k.starts_with("OPENAI_")),
        "{:?}",
        got.keys()
    );
    mcp.shutdown().await;
}

/// `notifications/tools/list_changed`: the server is listed again, its new tool offered and
/// callable, and the change reported as a new `Ready` with the new count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_changes_its_tools_is_listed_again() {
    let root = tempfile::tempdir().unwrap();
    let (mcp, mut events) = McpManager::start(vec![hostile("changes")], root.path());
    settled(&mut events, &mcp).await;
    assert_eq!(state(&mcp, "changes"), ServerState::Ready { tools: 1 });
    let names =
        |mcp: &McpManager| -> Vec<String> { mcp.tools().into_iter().map(|t| t.name).collect() };
    assert_eq!(names(&mcp), ["mcp__changes__work"]);
    // The call makes the server add a tool and say so.
    let out = mcp
        .call("mcp__changes__work", json!({}), None, never())
        .await
        .unwrap();
    assert_eq!(out.text, "done");
    let reported = tokio::time::timeout(support::GIVE_UP, async {
        loop {
            match events.recv().await {
                Some(McpEvent::ServerState { name, state }) if name == "changes" => break state,
                Some(_) => {}
                None => panic!("the events ended"),
            }
        }
    })
    .await
    .expect("a new state after tools/list_changed");
    assert_eq!(reported, ServerState::Ready { tools: 2 });
    assert_eq!(names(&mcp), ["mcp__changes__added", "mcp__changes__work"]);
    let out = mcp
        .call("mcp__changes__added", json!({}), None, never())
        .await
        .unwrap();
    assert_eq!(out.text, "done");
    mcp.shutdown().await;
}

/// `/clear`'s part: every running server is stopped (its process group gone) and started
/// again; a held server stays held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_all_gives_fresh_servers_and_leaves_held_ones() {
    let root = tempfile::tempdir().unwrap();
    let held = hostile("garbage");
    let (mcp, mut events) = McpManager::prepare(
        vec![hostile("changes")],
        vec![Held {
            config: held,
            launch: "python3 hostile_server.py garbage".into(),
            why: Unapproved::New,
        }],
        root.path(),
        None,
    );
    // Prepared, not launched: nothing runs yet.
    assert_eq!(mcp.process_group("changes"), None);
    mcp.launch();
    settled(&mut events, &mcp).await;
    let first = mcp.process_group("changes").unwrap();
    mcp.restart_all();
    settled(&mut events, &mcp).await;
    assert!(matches!(state(&mcp, "changes"), ServerState::Ready { .. }));
    assert_ne!(mcp.process_group("changes").unwrap(), first);
    assert!(matches!(
        state(&mcp, "garbage"),
        ServerState::NotAllowed { .. }
    ));
    let deadline = Instant::now() + support::GIVE_UP;
    while group_alive(first) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!group_alive(first), "the old server's group is gone");
    mcp.shutdown().await;
}
