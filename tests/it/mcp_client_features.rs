//! The rest of a complete MCP client, through rmcp's real client against the scripted
//! server `tests/mcp/hostile_server.py`: roots (the project folder), sampling declined
//! with a clear error and one notice, progress and log notifications routed to the call
//! in flight (one sanitised line each), and resources listed (told once the server is
//! ready, offered by the dashboard's `@` finder after the files) and read (a 100 MB one
//! cut, a blob described, the server usable after). Through the binary: `@server:uri` attaches
//! a resource to the message, and a `file://` resource naming `.env` is not asked for.
//! Prompts: listed as `/mcp__SERVER__PROMPT` commands with their arguments, fetched with
//! positional or `name=value` arguments (a missing required one named), offered by the
//! dashboard's `/help` and completion list and sent as typed, and run headless.

use crate::support;

use std::path::Path;
use std::time::Duration;

use rein_core::mcp::{McpEvent, McpManager, ServerConfig, ServerState};
use serde_json::{json, Value};
use support::mcp::{hostile_server, settled, state};
use support::{Reply, ScriptedServer};
use tokio::sync::mpsc;

/// The hostile server's path, as text.
fn script() -> String {
    hostile_server().display().to_string()
}

fn scripted(name: &str) -> ServerConfig {
    let mut server = ServerConfig::stdio(name, "python3", &[&script(), "plain"]);
    server.startup_timeout = Duration::from_secs(10);
    server.tool_timeout = Duration::from_secs(20);
    server
}

async fn started(root: &Path) -> (McpManager, mpsc::UnboundedReceiver<McpEvent>) {
    let (mcp, mut events) = McpManager::start(vec![scripted("h")], root);
    settled(&mut events, &mcp).await;
    assert!(
        matches!(state(&mcp, "h"), ServerState::Ready { .. }),
        "{mcp:?}"
    );
    (mcp, events)
}

async fn call(mcp: &McpManager, args: Value) -> String {
    mcp.call("mcp__h__work", args, None, std::future::pending())
        .await
        .unwrap()
        .text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roots_are_the_project_folder_and_sampling_is_declined_once_told() {
    let project = tempfile::tempdir().unwrap();
    let (mcp, mut events) = started(project.path()).await;

    let roots: Value = serde_json::from_str(&call(&mcp, json!({"ask_roots": true})).await).unwrap();
    let listed = roots["result"]["roots"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{roots}");
    assert_eq!(
        listed[0]["uri"],
        format!("file://{}", project.path().display())
    );

    for _ in 0..2 {
        let answer: Value =
            serde_json::from_str(&call(&mcp, json!({"ask_sampling": true})).await).unwrap();
        assert_eq!(answer["error"]["code"], -32601, "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("rein does not offer sampling"),
            "{answer}"
        );
    }
    // The user hears of it once, however often the server asks.
    let mut notices = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let McpEvent::Notice { name, message } = event {
            notices.push((name, message));
        }
    }
    let sampling: Vec<_> = notices
        .iter()
        .filter(|(_, m)| m.contains("sampling"))
        .collect();
    assert_eq!(sampling.len(), 1, "{notices:?}");
    assert_eq!(sampling[0].0, "h");
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_and_log_notifications_reach_the_call_as_clean_lines() {
    let project = tempfile::tempdir().unwrap();
    let (mcp, _events) = started(project.path()).await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let out = mcp
        .call(
            "mcp__h__work",
            json!({"notes": 2000}),
            Some(tx),
            std::future::pending(),
        )
        .await
        .unwrap();
    assert_eq!(out.text, "done");
    let mut got = Vec::new();
    while let Ok(p) = rx.try_recv() {
        got.push(p);
    }
    let (logs, progress): (Vec<_>, Vec<_>) = got.into_iter().partition(|p| p.log);
    // rmcp hands notifications on as they come, beside the result: most arrive before the
    // call ends, none after (the route is gone with the call).
    assert!(
        progress.len() > 100 && progress.len() <= 2000,
        "{}",
        progress.len()
    );
    assert!(logs.len() > 100 && logs.len() <= 2000, "{}", logs.len());
    assert!(progress
        .iter()
        .all(|p| p.total == Some(2000.0) && p.progress >= 1.0));
    assert!(logs[0]
        .message
        .as_deref()
        .unwrap()
        .starts_with("info hostile: log "));
    for line in logs
        .iter()
        .chain(&progress)
        .map(|p| p.message.as_deref().unwrap())
    {
        assert!(!line.contains('\u{1b}'), "{line:?}");
        // One line of at most LOG_LINE_CHARS, and `…` where it was cut.
        assert_eq!(
            line.chars().count(),
            rein_core::mcp::LOG_LINE_CHARS + 1,
            "{line:?}"
        );
        assert!(line.ends_with('…'));
    }
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_are_listed_and_read_within_a_limit() {
    let project = tempfile::tempdir().unwrap();
    let (mcp, mut events) = started(project.path()).await;
    // Listed once the server is ready, for the dashboard's `@` finder.
    let told = loop {
        let event = tokio::time::timeout(support::GIVE_UP, events.recv())
            .await
            .expect("the resources are told")
            .unwrap();
        if let McpEvent::Resources { resources } = event {
            if !resources.is_empty() {
                break resources;
            }
        }
    };
    let mentions: Vec<String> = told.iter().filter_map(|r| r.mention()).collect();
    assert_eq!(mentions, ["h:mem://notes", "h:mem://huge", "h:mem://logo"]);
    assert_eq!(mcp.listed_resources(), told);
    let listed = mcp.resources("h").await.unwrap();
    let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["mem://notes", "mem://huge", "mem://logo"]);

    let notes = mcp.read_resource("h", "mem://notes", 1000).await.unwrap();
    assert_eq!(notes.text, "the notes say hello");
    assert!(!notes.cut);

    let logo = mcp.read_resource("h", "mem://logo", 1000).await.unwrap();
    assert!(
        logo.text
            .starts_with("(binary content of mem://logo, image/png, about "),
        "{}",
        logo.text
    );
    assert!(!logo.text.contains("iVBOR"));

    // 100 MB on one line: cut as it is read, then to the limit asked for.
    let huge = mcp
        .read_resource("h", "mem://huge", 64 * 1024)
        .await
        .unwrap();
    assert!(huge.cut);
    assert_eq!(huge.text.len(), 64 * 1024);
    assert!(huge.text.bytes().all(|b| b == b'y'));

    let missing = mcp
        .read_resource("h", "mem://nothing", 1000)
        .await
        .unwrap_err();
    assert!(
        missing.to_string().contains("no such resource"),
        "{missing}"
    );
    assert!(mcp
        .read_resource("nobody", "mem://notes", 10)
        .await
        .is_err());
    // The server is still there for the next request.
    assert_eq!(call(&mcp, json!({})).await, "done");
    // A server that says its resources changed has them listed again.
    call(&mcp, json!({"add_resource": "mem://new"})).await;
    let told = loop {
        let event = tokio::time::timeout(support::GIVE_UP, events.recv())
            .await
            .expect("the new listing is told")
            .unwrap();
        if let McpEvent::Resources { resources } = event {
            if resources.len() == 4 {
                break resources;
            }
        }
    };
    assert_eq!(told[3].uri, "mem://new");
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_mention_attaches_it_and_a_sensitive_file_uri_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join(".env"), "TOKEN=secret\n").unwrap();
    std::fs::create_dir_all(home.path().join("rein-home")).unwrap();
    std::fs::write(
        home.path().join("rein-home/config.toml"),
        format!(
            "[context]\nattach_max_bytes = 4000\n\n[mcp_servers.h]\ncommand = \"python3\"\nargs = [{:?}, \"plain\"]\n",
            script()
        ),
    )
    .unwrap();
    let server = ScriptedServer::start(vec![Reply::text("read them")])
        .await
        .unwrap();
    let env_uri = format!("file://{}/.env", project.path().display());
    let prompt = format!("look at @h:mem://notes, @h:mem://huge and @h:{env_uri} please");
    let out = support::rein_in(home.path(), project.path())
        .args([
            "-p",
            &prompt,
            "--base-url",
            &server.base_url(),
            "--model",
            "m",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let requests = server.requests();
    let sent = requests[0]["messages"].to_string();
    assert!(
        sent.contains(r#"<resource server=\"h\" uri=\"mem://notes\" attached_by=\"user\">\nthe notes say hello\n</resource>"#),
        "{sent}"
    );
    // The 100 MB resource: its first 4000 bytes, and a line saying it was cut.
    assert!(
        sent.contains(&"y".repeat(4000)),
        "the huge resource is attached, cut"
    );
    assert!(!sent.contains(&"y".repeat(4001)));
    assert!(sent.contains("[cut: only the first 4000 bytes are attached"));
    // `.env` named by a file:// URI is judged as the path: not asked for, the user told.
    assert!(!sent.contains("file says"), "{sent}");
    assert!(
        err.contains(&format!("@h:{env_uri} was not attached")),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_flood_is_a_few_bounded_progress_events_headless() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("rein-home")).unwrap();
    std::fs::write(
        home.path().join("rein-home/config.toml"),
        format!(
            "[mcp_servers.h]\ncommand = \"python3\"\nargs = [{:?}, \"plain\"]\n\n\
             [[permissions.tools]]\npattern = \"mcp__h__work\"\naction = \"allow\"\n",
            script()
        ),
    )
    .unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("mcp__h__work", &json!({"notes": 3000}).to_string())]),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let out = support::rein_in(home.path(), project.path())
        .args([
            "-p",
            "work",
            "--output-format",
            "jsonl",
            "--base-url",
            &server.base_url(),
            "--model",
            "m",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let events: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let call_id = events
        .iter()
        .find(|e| e["type"] == "tool_call_started")
        .map(|e| e["id"].clone())
        .expect("the call started");
    let progress: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_progress")
        .collect();
    // 6,000 notifications: a few reports of the latest, each one clean line.
    assert!(!progress.is_empty(), "{stdout}");
    assert!(progress.len() < 600, "{} reports", progress.len());
    for p in &progress {
        assert_eq!(p["id"], call_id);
        let text = p["text"].as_str().unwrap();
        assert!(
            text.chars().count() <= rein_core::mcp::LOG_LINE_CHARS + 1,
            "{text}"
        );
        assert!(!text.contains('\u{1b}') && !text.contains('\n'), "{text:?}");
    }
    // The result still reaches the model.
    let sent = server.requests()[1]["messages"].to_string();
    assert!(sent.contains("done"), "{sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_are_commands_with_their_arguments() {
    let project = tempfile::tempdir().unwrap();
    let (mcp, _events) = started(project.path()).await;
    let prompts = mcp.prompts();
    let commands: Vec<&str> = prompts.iter().map(|p| p.command.as_str()).collect();
    assert_eq!(commands, ["mcp__h__picture", "mcp__h__review"]);
    assert_eq!(
        prompts[1].argument_hint().as_deref(),
        Some("<file> [focus]")
    );
    assert_eq!(
        mcp.get_prompt("mcp__h__review", "src/lib.rs error paths")
            .await
            .unwrap(),
        "Review src/lib.rs for error paths"
    );
    assert_eq!(
        mcp.get_prompt("mcp__h__review", "focus=speed a.rs")
            .await
            .unwrap(),
        "Review a.rs for speed"
    );
    let missing = mcp.get_prompt("mcp__h__review", "").await.unwrap_err();
    assert!(
        missing.to_string().contains("needs the argument file"),
        "{missing}"
    );
    // An image is described, not sent.
    let picture = mcp.get_prompt("mcp__h__picture", "").await.unwrap();
    assert_eq!(
        picture,
        "(an image, image/png, not included)\n\ndescribe it"
    );
    mcp.shutdown().await;
}

#[test]
fn the_dashboard_lists_prompts_and_sends_one_as_typed() {
    use rein::app::state::{App, SessionInfo};
    use rein::app::{AppEvent, Effect};
    let prompt = rein_core::mcp::McpPrompt {
        command: "mcp__h__review".into(),
        server: "h".into(),
        name: "review".into(),
        description: "review a file".into(),
        arguments: vec![rein_core::mcp::McpPromptArgument {
            name: "file".into(),
            required: true,
        }],
    };
    let mut s = support::app::Script::with(App::new(SessionInfo::default(), 128_000));
    s.at(AppEvent::Mcp(McpEvent::Prompts {
        prompts: vec![prompt],
    }));
    // The files' commands read again (/clear) keep the servers' prompts.
    s.at(AppEvent::CommandsLoaded(
        rein_core::custom_commands::CommandSet::empty(),
    ));
    s.send("/help");
    let help = s
        .app
        .help
        .take()
        .expect("the help is open")
        .lines
        .join("\n");
    assert!(
        help.contains("/mcp__h__review <file>  review a file  (MCP server: h)"),
        "{help}"
    );
    s.type_text("/mcp__h__r");
    let offered = s
        .app
        .slash_menu
        .matches(&s.app.composer.textarea, &s.app.custom_commands);
    assert!(
        offered
            .iter()
            .any(|e| e.name == "/mcp__h__review" && e.source.as_deref() == Some("MCP server h")),
        "{offered:?}"
    );
    rein::app::input::clear(&mut s.app.composer.textarea);
    let effects = s.send("/mcp__h__review src/main.rs");
    assert!(
        effects.iter().any(|e| matches!(e,
            Effect::Agent(rein_core::agent::AgentCommand::UserMessage(text)) if text == "/mcp__h__review src/main.rs")),
        "{effects:?}"
    );
}

#[test]
fn the_finder_offers_resources_after_files_and_inserts_a_mention() {
    use crossterm::event::KeyCode;
    use rein::app::state::{App, SessionInfo};
    use rein::app::AppEvent;
    use rein_core::file_index::FileIndex;
    let mut s = support::app::Script::with(App::new(SessionInfo::default(), 128_000));
    let resource = |uri: &str| rein_core::mcp::McpResource {
        server: "h".into(),
        uri: uri.into(),
        name: uri.into(),
        description: None,
        mime_type: None,
    };
    // Told before the files are indexed: kept, and listed once they are.
    s.at(AppEvent::Mcp(McpEvent::Resources {
        resources: vec![
            resource("mem://notes"),
            resource("mem://with space"),
            resource("mem://logo"),
        ],
    }));
    s.at(AppEvent::FilesIndexed(Box::new(FileIndex::of_paths(
        "/p",
        &["notes.md", "src/"],
    ))));
    s.type_text("read @mem");
    let mut offered: Vec<String> = {
        let list = s.app.finder.open.as_ref().expect("the finder is open");
        let index = s.app.finder.index.as_ref().unwrap();
        list.matches
            .hits
            .iter()
            .map(|h| index.entries[h.entry].path.clone())
            .collect()
    };
    offered.sort();
    assert_eq!(
        offered,
        ["h:mem://logo", "h:mem://notes"],
        "a URI with a space is not offered"
    );
    s.type_text("://no");
    s.plain(KeyCode::Tab);
    assert_eq!(s.input(), "read @h:mem://notes ");
    // A server gone: its resources go from the list, the files stay.
    s.at(AppEvent::Mcp(McpEvent::Resources {
        resources: Vec::new(),
    }));
    s.type_text("@notes");
    let list = s.app.finder.open.as_ref().expect("the finder is open");
    let index = s.app.finder.index.as_ref().unwrap();
    let paths: Vec<&str> = list
        .matches
        .hits
        .iter()
        .map(|h| index.entries[h.entry].path.as_str())
        .collect();
    assert_eq!(paths, ["notes.md"]);
}

/// `/mcp` says what else each server offers: its prompts and its resources.
#[test]
fn slash_mcp_counts_each_servers_prompts_and_resources() {
    use rein::app::state::{App, Cell, SessionInfo};
    use rein::app::AppEvent;
    let mut s = support::app::Script::with(App::new(SessionInfo::default(), 128_000));
    s.at(AppEvent::Mcp(McpEvent::ServerState {
        name: "h".into(),
        state: ServerState::Ready { tools: 1 },
    }));
    s.at(AppEvent::Mcp(McpEvent::Prompts {
        prompts: vec![rein_core::mcp::McpPrompt {
            command: "mcp__h__review".into(),
            server: "h".into(),
            name: "review".into(),
            description: String::new(),
            arguments: Vec::new(),
        }],
    }));
    let resource = |uri: &str| rein_core::mcp::McpResource {
        server: "h".into(),
        uri: uri.into(),
        name: uri.into(),
        description: None,
        mime_type: None,
    };
    s.at(AppEvent::Mcp(McpEvent::Resources {
        resources: vec![resource("mem://a"), resource("mem://b")],
    }));
    s.send("/mcp");
    // The servers' layer opens over the listing; Esc closes it.
    s.plain(crossterm::event::KeyCode::Esc);
    let listing = s
        .app
        .transcript
        .cells
        .iter()
        .rev()
        .find_map(|c| match c {
            Cell::Notice(n) if n.text.starts_with("MCP servers:") => Some(n.text.clone()),
            _ => None,
        })
        .expect("the listing");
    assert!(
        listing.contains("h: ready, 1 tool, 1 prompt (/mcp__h__…), 2 resources (@h:…)"),
        "{listing}"
    );
}

fn prompt_run(home: &Path, project: &Path, prompt: &str, base_url: &str) -> std::process::Output {
    support::rein_in(home, project)
        .args(["-p", prompt, "--base-url", base_url, "--model", "m"])
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_runs_headless_and_a_bad_one_sends_nothing() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("rein-home")).unwrap();
    std::fs::write(
        home.path().join("rein-home/config.toml"),
        format!(
            "[mcp_servers.h]\ncommand = \"python3\"\nargs = [{:?}, \"plain\"]\n",
            script()
        ),
    )
    .unwrap();
    let server = ScriptedServer::start(vec![Reply::text("reviewed")])
        .await
        .unwrap();
    let out = prompt_run(
        home.path(),
        project.path(),
        "/mcp__h__review src/main.rs speed",
        &server.base_url(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let sent = server.requests()[0]["messages"].to_string();
    assert!(sent.contains("Review src/main.rs for speed"), "{sent}");
    assert!(!sent.contains("/mcp__h__review"), "{sent}");

    // A required argument missing: said, and nothing goes to the model.
    let out = prompt_run(
        home.path(),
        project.path(),
        "/mcp__h__review",
        &server.base_url(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("needs the argument file"), "{err}");
    // A prompt no server offers is an unknown command.
    let out = prompt_run(
        home.path(),
        project.path(),
        "/mcp__h__nothing",
        &server.base_url(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("unknown command /mcp__h__nothing"), "{err}");
    assert_eq!(
        server.requests().len(),
        1,
        "only the first run reached the model"
    );
}

/// A server with 5,002 prompts (descriptions holding escape sequences and 1,000 more
/// characters) and one whose text is 1 MB: at most `MAX_PROMPTS` are kept, each
/// description one clean line of at most 200 characters, and the huge one is cut to
/// `MAX_PROMPT_BYTES` with a mark; the server stays usable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_prompts_and_a_huge_one_are_bounded() {
    let project = tempfile::tempdir().unwrap();
    let mut config = ServerConfig::stdio("h", "python3", &[&script(), "prompts"]);
    config.startup_timeout = Duration::from_secs(20);
    config.tool_timeout = Duration::from_secs(20);
    let (mcp, mut events) = McpManager::start(vec![config], project.path());
    settled(&mut events, &mcp).await;
    let prompts = mcp.prompts();
    assert_eq!(prompts.len(), 200, "at most MAX_PROMPTS are kept");
    for p in &prompts {
        assert!(p.description.chars().count() <= 201, "{}", p.description);
        assert!(!p.description.contains('\u{1b}'), "{:?}", p.description);
    }
    let huge = mcp.get_prompt("mcp__h__huge", "").await.unwrap();
    assert!(
        huge.len() <= rein_core::mcp::MAX_PROMPT_BYTES + 100,
        "{}",
        huge.len()
    );
    assert!(huge.ends_with("[cut: the prompt is longer than rein sends]"));
    assert_eq!(call(&mcp, json!({})).await, "done");
    mcp.shutdown().await;
}
