//! A reply's two bounds over time and size, through the real binary (`rein -p`) on each of
//! the three APIs (chat completions, Responses, Anthropic) against the scripted server.
//!
//! Keep-alives (SSE comments such as OpenRouter's `: OPENROUTER PROCESSING`, a blank line
//! or a comment byte at a time, Anthropic's `ping`, Responses' `response.in_progress`,
//! chat chunks with an empty delta) show the server is there but are no part of a reply:
//! a stream of nothing else ends with "sent only keep-alives" once
//! `client.keepalive_timeout_secs` (by default two idle timeouts) passes without
//! progress, while keep-alives between real pieces never stop a reply. A reply that grows
//! past `client.max_reply_mb`, or asks for too many calls, is stopped with the bound's
//! words, not retried; its start is kept, the session file stays small and the next turn
//! of the same session works. No test asserts how long anything took: each script is
//! finite (its keep-alives last far longer than the bound), so without the bound a run
//! ends with another error and the test fails.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use rein_core::conversation::Api;
use serde_json::{json, Value};
use support::{chunk, Reply, ScriptedServer, Step};

const APIS: [Api; 3] = [Api::Chat, Api::Responses, Api::Anthropic];

/// A home with a config whose provider `lab` speaks `api` at `server`, with `client`
/// settings, and a project folder.
struct Lab {
    home: tempfile::TempDir,
    project: tempfile::TempDir,
}

impl Lab {
    fn new(server: &ScriptedServer, api: Api, client: &str) -> Lab {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let rein_home = home.path().join("rein-home");
        std::fs::create_dir_all(&rein_home).unwrap();
        std::fs::write(
            rein_home.join("config.toml"),
            format!(
                "model = \"lab/test-model\"\n[sandbox]\nmode = \"off\"\n[client]\nmax_tries = 3\n\
                 {client}\n[providers.lab]\nbase_url = \"{}\"\napi_key_env = \"LAB_KEY\"\n\
                 api = \"{}\"\n",
                server.base_url(),
                api.name()
            ),
        )
        .unwrap();
        Lab { home, project }
    }

    /// `rein -p PROMPT --output-format jsonl` with `more` arguments, to its end.
    async fn run(&self, prompt: &str, more: &[&str]) -> Output {
        let mut command: tokio::process::Command =
            support::rein_in(self.home.path(), self.project.path()).into();
        command
            .env("LAB_KEY", "sk-lab")
            .args(["-p", prompt, "--output-format", "jsonl", "--yes"])
            .args(more)
            .kill_on_drop(true);
        command.output().await.unwrap()
    }

    /// The bytes of every session file.
    fn session_bytes(&self) -> u64 {
        fn walk(dir: &Path, total: &mut u64) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path: PathBuf = entry.path();
                if path.is_dir() {
                    walk(&path, total);
                } else if let Ok(meta) = entry.metadata() {
                    *total += meta.len();
                }
            }
        }
        let mut total = 0;
        walk(&self.home.path().join("rein-home/sessions"), &mut total);
        total
    }
}

/// Everything a run printed, stdout then stderr.
fn printed(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The role chunk every chat stream starts with (dropped in the native APIs, which open
/// with their own first event).
fn opening() -> Step {
    Step::Data(chunk(json!({"role": "assistant", "content": ""}), None))
}

/// A text piece, told in the reply's API when it is served.
fn text(piece: &str) -> Step {
    Step::Data(chunk(json!({"content": piece}), None))
}

/// The end of a reply: the finish, the usage and `[DONE]` (each API's own end events
/// when served in a native API).
fn ending() -> Vec<Step> {
    vec![
        Step::Data(chunk(json!({}), Some("stop"))),
        Step::Data(support::usage_chunk(100, 10)),
        Step::Done,
    ]
}

/// One keep-alive of `kind` in `api`, and the pause after it.
fn keep_alive(kind: &str, api: Api) -> Vec<Step> {
    let pause = |ms| Step::Sleep(Duration::from_millis(ms));
    match kind {
        "comment" => vec![Step::Raw(": OPENROUTER PROCESSING\n\n".into()), pause(300)],
        "blank byte" => vec![Step::Raw("\n".into()), pause(400)],
        // One byte of a comment line that never ends.
        "comment byte" => vec![Step::Raw(".".into()), pause(400)],
        "status" => match api {
            Api::Chat => vec![
                Step::Data(chunk(json!({}), None)),
                Step::Data(chunk(json!({"role": "assistant"}), None)),
                Step::Data(chunk(json!({"content": ""}), None)),
                pause(300),
            ],
            Api::Responses => vec![
                Step::Raw(
                    "event: response.in_progress\ndata: {\"type\":\"response.in_progress\",\
                     \"response\":{\"id\":\"resp_1\",\"object\":\"response\",\
                     \"status\":\"in_progress\",\"output\":[],\"usage\":null}}\n\n"
                        .into(),
                ),
                pause(300),
            ],
            Api::Anthropic => vec![
                Step::Raw("event: ping\ndata: {\"type\": \"ping\"}\n\n".into()),
                pause(300),
            ],
        },
        other => panic!("no keep-alive {other}"),
    }
}

/// Keep-alives of `kind` for far longer than any bound here (about two minutes), then
/// the stream closes without a reply.
fn only_keep_alives(kind: &str, api: Api) -> Reply {
    let mut steps = vec![opening()];
    if kind == "comment byte" {
        steps.push(Step::Raw(":".into()));
    }
    for _ in 0..300 {
        steps.extend(keep_alive(kind, api));
    }
    Reply::sse(steps).in_api(api)
}

const KINDS: [&str; 4] = ["comment", "blank byte", "comment byte", "status"];

/// Each keep-alive kind alone, on each API: the run ends with the keep-alive error (after
/// `client.keepalive_timeout_secs`, or two idle timeouts when it is not set), exits 1,
/// and is not retried.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alives_alone_end_the_reply_on_every_api() {
    let mut runs = tokio::task::JoinSet::new();
    for api in APIS {
        for kind in KINDS {
            // The comments alone on each API also go without a keep-alive setting: two
            // idle timeouts then.
            let settings: &[&str] = if kind == "comment" {
                &[
                    "idle_timeout_secs = 2",
                    "idle_timeout_secs = 2\nkeepalive_timeout_secs = 3",
                ]
            } else {
                &["idle_timeout_secs = 2\nkeepalive_timeout_secs = 3"]
            };
            for &client in settings {
                runs.spawn(async move {
                    let server = ScriptedServer::start(vec![only_keep_alives(kind, api)])
                        .await
                        .unwrap();
                    let lab = Lab::new(&server, api, client);
                    let out = lab.run("hello", &[]).await;
                    (api, kind, client, out, server.request_paths().len())
                });
            }
        }
    }
    while let Some(run) = runs.join_next().await {
        let (api, kind, client, out, requests) = run.unwrap();
        let all = printed(&out);
        let at = format!("{api:?}, {kind}, {client:?}: {all}");
        assert_eq!(out.status.code(), Some(1), "{at}");
        assert!(
            all.contains("sent only keep-alives, no part of the reply")
                && all.contains("client.keepalive_timeout_secs"),
            "{at}"
        );
        let bound = if client.contains("keepalive") {
            "3 s"
        } else {
            "4 s"
        };
        assert!(all.contains(&format!("for {bound}")), "{at}");
        assert_eq!(requests, 1, "not retried: {at}");
    }
}

/// Keep-alives of every kind between real pieces, the reply as a whole far longer than
/// the keep-alive timeout: the reply comes whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alives_between_pieces_never_stop_a_reply() {
    let mut runs = tokio::task::JoinSet::new();
    for api in APIS {
        runs.spawn(async move {
            let mut steps = vec![opening()];
            let words = ["Slow ", "but ", "steady ", "wins ", "the ", "race."];
            for (n, word) in words.iter().enumerate() {
                // About 1.3 s of keep-alives before each piece: 8 s in all, against a
                // keep-alive timeout of 3 s.
                for kind in ["comment", "status", "blank byte"] {
                    steps.extend(keep_alive(kind, api));
                    steps.extend(keep_alive(kind, api));
                }
                if n == 3 {
                    // A comment line that ends, sent a byte at a time.
                    steps.push(Step::Raw(":".into()));
                    steps.extend(keep_alive("comment byte", api));
                    steps.push(Step::Raw("\n\n".into()));
                }
                steps.push(text(word));
            }
            steps.extend(ending());
            let server = ScriptedServer::start(vec![Reply::sse(steps).in_api(api)])
                .await
                .unwrap();
            let lab = Lab::new(
                &server,
                api,
                "idle_timeout_secs = 2\nkeepalive_timeout_secs = 3",
            );
            (api, lab.run("hello", &[]).await)
        });
    }
    while let Some(run) = runs.join_next().await {
        let (api, out) = run.unwrap();
        let all = printed(&out);
        assert!(out.status.success(), "{api:?}: {all}");
        assert!(
            all.contains("Slow but steady wins the race."),
            "{api:?}: {all}"
        );
    }
}

/// A reply whose finish came, then only keep-alives from a server that does not close:
/// the reply is whole, and kept, once the keep-alive timeout passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alives_after_the_finish_leave_the_reply_whole() {
    let mut runs = tokio::task::JoinSet::new();
    for api in APIS {
        runs.spawn(async move {
            let mut steps = vec![opening(), text("All "), text("done.")];
            // The finish and the usage (the native APIs' end events), then no `[DONE]`
            // and no close for a long while.
            let end = if api == Api::Chat { 2 } else { 3 };
            steps.extend(ending().into_iter().take(end));
            for _ in 0..300 {
                steps.extend(keep_alive("comment", api));
            }
            let server = ScriptedServer::start(vec![Reply::sse(steps).in_api(api)])
                .await
                .unwrap();
            let lab = Lab::new(
                &server,
                api,
                "idle_timeout_secs = 1\nkeepalive_timeout_secs = 2",
            );
            (api, lab.run("hello", &[]).await)
        });
    }
    while let Some(run) = runs.join_next().await {
        let (api, out) = run.unwrap();
        let all = printed(&out);
        assert!(out.status.success(), "{api:?}: {all}");
        assert!(all.contains("All done."), "{api:?}: {all}");
    }
}

/// Prose of `bytes` in pieces of about 5 KB: every word numbered, so it never repeats
/// itself (the runaway guard stays quiet).
fn huge_text(bytes: usize) -> Vec<Step> {
    let prose = support::prose("Huge", bytes);
    let mut steps = Vec::new();
    let mut rest = prose.as_str();
    while !rest.is_empty() {
        let mut at = rest.len().min(5000);
        while !rest.is_char_boundary(at) {
            at += 1;
        }
        let (piece, after) = rest.split_at(at);
        steps.push(text(piece));
        rest = after;
    }
    steps
}

/// A reply of 3 MB against `client.max_reply_mb = 1`, on each API: the run fails with
/// the bound's words, one request (no retry), the session file small; the next turn of
/// the same session (`--continue`) works and sends the start of the cut reply, marked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_past_the_bound_is_cut_and_the_session_goes_on() {
    let mut runs = tokio::task::JoinSet::new();
    for api in APIS {
        runs.spawn(async move {
            let mut steps = vec![opening()];
            steps.extend(huge_text(3 * 1024 * 1024));
            steps.extend(ending());
            let server = ScriptedServer::start(vec![
                Reply::sse(steps).in_api(api),
                Reply::text("Second run done.").in_api(api),
            ])
            .await
            .unwrap();
            let lab = Lab::new(&server, api, "max_reply_mb = 1");
            let first = lab.run("write a lot", &[]).await;
            let session_bytes = lab.session_bytes();
            let second = lab.run("again", &["--continue"]).await;
            (api, first, session_bytes, second, server.requests())
        });
    }
    while let Some(run) = runs.join_next().await {
        let (api, first, session_bytes, second, requests) = run.unwrap();
        let all = printed(&first);
        let at = format!("{api:?}");
        assert_eq!(
            first.status.code(),
            Some(1),
            "{at}: {}",
            &all[all.len().saturating_sub(2000)..]
        );
        assert!(
            all.contains("the reply exceeded 1 MB (client.max_reply_mb)"),
            "{at}: {}",
            &all[all.len().saturating_sub(2000)..]
        );
        assert!(
            session_bytes < 200_000,
            "{at}: the session file holds {session_bytes} bytes"
        );
        let all = printed(&second);
        assert!(second.status.success(), "{at}: {all}");
        assert!(all.contains("Second run done."), "{at}: {all}");
        // Two requests: the first turn's (not retried) and the second's, which carries the
        // start of the cut reply, marked, and not the rest.
        assert_eq!(requests.len(), 2, "{at}");
        let sent = requests[1].to_string();
        assert!(sent.contains("Huge lorem-ipsum"), "{at}");
        assert!(
            sent.contains("cut: the reply grew past what rein keeps of one"),
            "{at}"
        );
        assert!(
            sent.len() < 100_000,
            "{at}: the second request has {} bytes",
            sent.len()
        );
    }
}

/// A tool call whose arguments come in 16-byte pieces past the bound (some 70,000
/// deltas), and a reply of 1,100 calls: each stops with its bound's words on each API.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_calls_are_bounded_in_size_and_in_number() {
    let mut runs = tokio::task::JoinSet::new();
    for api in APIS {
        runs.spawn(async move {
            let mut steps = vec![opening()];
            let call = |index: usize, id: String, name: &str, arguments: &str| {
                Step::Data(chunk(
                    json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                        "function": {"name": name, "arguments": arguments}}]}),
                    None,
                ))
            };
            steps.push(call(0, "call_big".into(), "write_file", "{\"path\":\"a\",\"content\":\""));
            let piece = "0123456789abcdef";
            for n in 0..(1024 * 1024 / piece.len() + 4096) {
                steps.push(Step::Data(chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": format!("{piece}{}", n % 10)}}]}),
                    None,
                )));
            }
            steps.push(Step::Data(chunk(json!({}), Some("tool_calls"))));
            steps.push(Step::Done);
            let big = Reply::sse(steps).in_api(api);
            let mut steps = vec![opening()];
            for n in 0..1100 {
                steps.push(call(n, format!("call_{n}"), "read_file", "{\"path\":\"a\"}"));
            }
            steps.push(Step::Data(chunk(json!({}), Some("tool_calls"))));
            steps.push(Step::Done);
            let many = Reply::sse(steps).in_api(api);
            let server = ScriptedServer::start(vec![big, many]).await.unwrap();
            let lab = Lab::new(&server, api, "max_reply_mb = 1");
            let big = lab.run("write", &[]).await;
            let many = lab.run("read", &["--continue"]).await;
            (api, big, many, server.request_paths().len(), lab.session_bytes())
        });
    }
    while let Some(run) = runs.join_next().await {
        let (api, big, many, requests, session_bytes) = run.unwrap();
        let all = printed(&big);
        assert_eq!(big.status.code(), Some(1), "{api:?}: {all}");
        assert!(
            all.contains("the reply exceeded 1 MB (client.max_reply_mb)"),
            "{api:?}: {all}"
        );
        let all = printed(&many);
        assert_eq!(many.status.code(), Some(1), "{api:?}: {all}");
        assert!(
            all.contains("the reply asked for more than 1024 tool calls"),
            "{api:?}: {all}"
        );
        assert_eq!(requests, 2, "{api:?}: neither is retried");
        assert!(
            session_bytes < 200_000,
            "{api:?}: {session_bytes} bytes of sessions"
        );
    }
}

/// Too many parts: Responses output items or Anthropic content blocks by the thousand
/// (each a new place to keep), or chat `reasoning_details` entries, stop the reply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_of_endless_parts_is_stopped() {
    let mut runs = tokio::task::JoinSet::new();
    for api in APIS {
        runs.spawn(async move {
            let mut steps = vec![opening()];
            for n in 0..5000 {
                steps.push(match api {
                    Api::Chat => Step::Data(chunk(
                        json!({"reasoning_details": [{"type": "reasoning.encrypted", "index": n, "data": format!("d{n}")}]}),
                        None,
                    )),
                    Api::Responses => raw(json!({
                        "type": "response.output_item.added", "output_index": n,
                        "item": {"type": "web_search_call", "id": format!("ws_{n}"), "status": "completed"},
                    })),
                    Api::Anthropic => raw(json!({
                        "type": "content_block_start", "index": n,
                        "content_block": {"type": "text", "text": ""},
                    })),
                });
            }
            steps.extend(ending());
            let server = ScriptedServer::start(vec![Reply::sse(steps).in_api(api)])
                .await
                .unwrap();
            let lab = Lab::new(&server, api, "");
            (api, lab.run("hello", &[]).await)
        });
    }
    while let Some(run) = runs.join_next().await {
        let (api, out) = run.unwrap();
        let all = printed(&out);
        assert_eq!(out.status.code(), Some(1), "{api:?}: {all}");
        assert!(
            all.contains("the reply had more than 4096 parts"),
            "{api:?}: {all}"
        );
    }
}

/// An event already in a native API's form, sent as it is (`Step::Data` would be read as
/// a chat chunk and told again).
fn raw(event: Value) -> Step {
    Step::Raw(format!("data: {event}\n\n"))
}
