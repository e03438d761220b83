//! Servers that send too much, forever, or in odd shapes (issue 12, items 7 and 8): the real
//! client against the scripted server, or against a raw TCP server written here that sends
//! whatever a hostile or broken server might. Timings are in the `stream` benchmark; these
//! tests assert what happens and that it ends.

use crate::support;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rein_core::agent::{
    self, AgentEvent, ClientConfig, ClientError, LlmClient, Message, TurnOutcome,
};
use serde_json::json;
use support::agent::{errors, outcome, scripted_config, test_client, turn};
use support::{chunk, Reply, ScriptedServer, Step};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const MB: usize = 1024 * 1024;

/// A raw server: each connection's request is read whole, then `respond` writes what it
/// likes; `written` counts the body bytes it got out.
struct RawServer {
    addr: SocketAddr,
    written: Arc<AtomicU64>,
    connections: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl RawServer {
    async fn start<F, Fut>(respond: F) -> RawServer
    where
        F: Fn(TcpStream, Arc<AtomicU64>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let written = Arc::new(AtomicU64::new(0));
        let connections = Arc::new(AtomicU64::new(0));
        let (w, c) = (written.clone(), connections.clone());
        let task = tokio::spawn(async move {
            let mut open = tokio::task::JoinSet::new();
            while let Ok((mut stream, _)) = listener.accept().await {
                c.fetch_add(1, Ordering::Relaxed);
                if read_request(&mut stream).await {
                    open.spawn(respond(stream, w.clone()));
                }
            }
        });
        RawServer {
            addr,
            written,
            connections,
            task,
        }
    }

    fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    fn written(&self) -> usize {
        self.written.load(Ordering::Relaxed) as usize
    }
}

/// Reads a request head and its Content-Length body; false if the client went away.
async fn read_request(stream: &mut TcpStream) -> bool {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + length {
                return true;
            }
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// Writes `head` and `first`, then `filler` again and again until the client goes away.
async fn endless(
    mut stream: TcpStream,
    written: Arc<AtomicU64>,
    head: &str,
    first: &[u8],
    filler: &[u8],
) {
    if stream.write_all(head.as_bytes()).await.is_err() || stream.write_all(first).await.is_err() {
        return;
    }
    let block = filler.repeat((64 * 1024 / filler.len()).max(1));
    while stream.write_all(&block).await.is_ok() {
        written.fetch_add(block.len() as u64, Ordering::Relaxed);
    }
}

const SSE_HEAD: &str =
    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";

fn client_for(base_url: String, tune: impl FnOnce(&mut ClientConfig)) -> LlmClient {
    let mut config = test_client(base_url, "", "m");
    config.idle_timeout = Duration::from_secs(10);
    tune(&mut config);
    LlmClient::new(config).unwrap()
}

/// One reply from `client`, with the text it streamed.
async fn ask(
    client: &LlmClient,
) -> (
    Result<rein_core::agent::stream::AssembledReply, ClientError>,
    String,
) {
    let mut shown = String::new();
    let reply = tokio::time::timeout(
        support::GIVE_UP,
        client.stream_chat(&[Message::user("go")], &json!([]), &mut |e| {
            if let rein_core::agent::client::ClientEvent::Delta(
                rein_core::agent::stream::StreamDelta::Text(t),
            ) = e
            {
                shown.push_str(t);
            }
        }),
    )
    .await
    .expect("the reply ended");
    (reply, shown)
}

#[tokio::test]
async fn a_20_mb_event_arrives_whole() {
    let big = "x".repeat(20 * MB);
    let server = ScriptedServer::start(vec![Reply::sse(vec![
        Step::Data(chunk(json!({"role": "assistant", "content": big}), None)),
        Step::Data(chunk(json!({}), Some("stop"))),
        Step::Done,
    ])])
    .await
    .unwrap();
    let client = client_for(server.base_url(), |c| c.max_event_bytes = 32 * MB);
    let (reply, shown) = ask(&client).await;
    let reply = reply.unwrap();
    assert_eq!(reply.text.len(), 20 * MB);
    assert_eq!(shown.len(), 20 * MB);
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn an_event_over_the_cap_is_a_clear_error_and_the_session_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let big = "y".repeat(2 * MB);
    let server = ScriptedServer::start(vec![
        Reply::sse(vec![
            Step::Data(chunk(
                json!({"role": "assistant", "content": "Hello "}),
                None,
            )),
            Step::Data(chunk(json!({"content": big}), None)),
            Step::Data(chunk(json!({}), Some("stop"))),
            Step::Done,
        ]),
        // Before any text: still not retried, the server would send it again.
        Reply::sse(vec![Step::Data(chunk(json!({"content": big}), None))]),
        Reply::text("Back to normal."),
    ])
    .await
    .unwrap();
    let mut config = scripted_config(&server, dir.path());
    config.client.max_event_bytes = MB;
    let mut handle = agent::spawn(config).unwrap();

    let events = turn(&mut handle, "first").await;
    assert_eq!(outcome(&events), TurnOutcome::Failed);
    let errs = errors(&events);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].contains("one event from the model server exceeded 1 MB"),
        "{}",
        errs[0]
    );
    assert_eq!(server.served(), 1, "text was shown, so no retry");

    let events = turn(&mut handle, "second").await;
    assert_eq!(outcome(&events), TurnOutcome::Failed);
    assert!(errors(&events)[0].contains("exceeded 1 MB"));
    assert!(!events
        .iter()
        .any(|e| matches!(e, AgentEvent::Retrying { .. })));
    assert_eq!(server.served(), 2);

    let events = turn(&mut handle, "third").await;
    assert_eq!(outcome(&events), TurnOutcome::Completed);
}

#[tokio::test]
async fn an_endless_data_line_ends_at_the_cap() {
    let server = RawServer::start(|stream, written| async move {
        endless(
            stream,
            written,
            SSE_HEAD,
            b"data: {\"choices\":[{\"delta\":{\"content\":\"",
            b"z",
        )
        .await
    })
    .await;
    let client = client_for(server.base_url(), |c| c.max_event_bytes = MB);
    let (reply, _) = ask(&client).await;
    assert_eq!(
        reply.unwrap_err(),
        ClientError::TooLarge {
            what: "one event from the model server",
            limit: MB
        }
    );
    assert_eq!(server.connections.load(Ordering::Relaxed), 1, "not retried");
    // The client stopped reading at the cap: what the server got out is the cap plus
    // what the sockets buffer, not an ever-growing body.
    assert!(
        server.written() < 40 * MB,
        "{} bytes written",
        server.written()
    );
}

#[tokio::test]
async fn an_endless_line_of_comments_or_blank_lines_is_not_an_event() {
    // Keep-alive comments by the thousand are not a too-large event, and nothing grows.
    // Bounded here by the server stopping after a while; the reply then is an honest
    // "broke off" (one that goes on ends at the keep-alive bound: the next test).
    let server = RawServer::start(|mut stream, written| async move {
        let _ = stream.write_all(SSE_HEAD.as_bytes()).await;
        for _ in 0..200 {
            if stream
                .write_all(&b": ping\n\n\n\r\r\n".repeat(1000))
                .await
                .is_err()
            {
                return;
            }
            written.fetch_add(1, Ordering::Relaxed);
        }
    })
    .await;
    let client = client_for(server.base_url(), |c| {
        c.max_event_bytes = 1024;
        c.max_tries = 1;
    });
    let (reply, _) = ask(&client).await;
    assert!(matches!(reply, Err(ClientError::StreamCut(_))), "{reply:?}");
}

/// Keep-alives written as fast as the server can, so that a read never waits: the
/// keep-alive bound still ends the reply. The server writes until the client hangs up, or
/// gives up after 8 GB of pings (without the bound the reply would end there as "broke
/// off"): a count of work, not a clock.
#[tokio::test]
async fn a_flood_of_keep_alives_ends_at_the_keepalive_bound() {
    const BATCHES: usize = 10_000_000;
    let server = RawServer::start(|mut stream, written| async move {
        let _ = stream.write_all(SSE_HEAD.as_bytes()).await;
        let batch = b": ping\n\n".repeat(100);
        for _ in 0..BATCHES {
            if stream.write_all(&batch).await.is_err() {
                return;
            }
            written.fetch_add(1, Ordering::Relaxed);
        }
    })
    .await;
    let client = client_for(server.base_url(), |c| {
        c.idle_timeout = Duration::from_secs(1);
        c.keepalive_timeout = Some(Duration::from_secs(2));
        c.max_tries = 3;
    });
    let (reply, _) = ask(&client).await;
    assert_eq!(reply, Err(ClientError::KeptAlive(Duration::from_secs(2))));
    assert_eq!(server.connections.load(Ordering::Relaxed), 1, "not retried");
}

#[tokio::test]
async fn odd_line_endings_and_data_lines_as_servers_send_them() {
    let event = |content: &str| chunk(json!({ "content": content }), None).to_string();
    let split = format!("data: {}\r", event("c"));
    let server = ScriptedServer::start(vec![Reply::sse(vec![
        // CR only.
        Step::Raw(format!("data: {}\r\r", event("a"))),
        // CRLF, without a space after the colon.
        Step::Raw(format!("data:{}\r\n\r\n", event("b"))),
        // CR at the end of one read, LF at the start of the next, twice.
        Step::Bytes(split.into_bytes()),
        Step::Sleep(Duration::from_millis(30)),
        Step::Raw("\n\r".into()),
        Step::Sleep(Duration::from_millis(30)),
        Step::Raw("\n".into()),
        // One chunk over two data lines (joined by a newline, which JSON allows), with a
        // comment and the fields rein ignores in between.
        Step::Raw(
            ": note\nevent: message\nid: 4\nretry: 10\ndata: {\"choices\":[{\"index\":0,\ndata: \"delta\":{\"content\":\"d\"}}]}\n\n"
                .into(),
        ),
        // A character split across reads.
        Step::Bytes(b"data: {\"choices\":[{\"delta\":{\"content\":\"\xE2\x82".to_vec()),
        Step::Sleep(Duration::from_millis(30)),
        Step::Bytes(b"\xAC\"},\"finish_reason\":\"stop\"}]}\n\n".to_vec()),
        Step::Done,
    ])])
    .await
    .unwrap();
    let client = client_for(server.base_url(), |_| {});
    let (reply, shown) = ask(&client).await;
    let reply = reply.unwrap();
    assert_eq!(reply.text, "abcd€");
    assert_eq!(shown, "abcd€");
}

#[tokio::test]
async fn a_stalled_stream_still_times_out() {
    let server = RawServer::start(|mut stream, _| async move {
        let first = format!(
            "{SSE_HEAD}data: {}\n\n",
            chunk(json!({"content": "so far"}), None)
        );
        let _ = stream.write_all(first.as_bytes()).await;
        tokio::time::sleep(Duration::from_secs(60)).await;
    })
    .await;
    let client = client_for(server.base_url(), |c| {
        c.idle_timeout = Duration::from_millis(300)
    });
    let (reply, shown) = ask(&client).await;
    assert_eq!(shown, "so far");
    assert_eq!(
        reply.unwrap_err(),
        ClientError::Stalled(Duration::from_millis(300))
    );
}

#[tokio::test]
async fn an_endless_error_body_is_read_up_to_its_cap() {
    let server = RawServer::start(|stream, written| async move {
        endless(
            stream,
            written,
            "HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n",
            b"",
            b"something broke. ",
        )
        .await
    })
    .await;
    let client = client_for(server.base_url(), |c| c.max_tries = 2);
    let (reply, _) = ask(&client).await;
    let Err(ClientError::Http { status, message }) = reply else {
        panic!("{reply:?}");
    };
    assert_eq!(status, 500);
    assert!(
        message.starts_with("Internal Server Error: something broke. something"),
        "{message}"
    );
    assert!(message.chars().count() < 700, "one line, cut: {message}");
    assert_eq!(
        server.connections.load(Ordering::Relaxed),
        2,
        "retried as a 500 is"
    );
    assert!(
        server.written() < 2 * 40 * MB,
        "{} bytes written",
        server.written()
    );
}

#[tokio::test]
async fn an_endless_json_answer_ends_at_its_cap() {
    let server = RawServer::start(|stream, written| async move {
        endless(
            stream,
            written,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n",
            b"{\"choices\":[{\"message\":{\"content\":\"",
            b"w",
        )
        .await
    })
    .await;
    let client = client_for(server.base_url(), |c| c.max_body_bytes = 2 * MB);
    let (reply, _) = ask(&client).await;
    let err = reply.unwrap_err();
    assert_eq!(
        err.to_string(),
        "the model server's answer (not streamed) exceeded 2 MB, the most rein reads; the reply was stopped there"
    );
    assert_eq!(server.connections.load(Ordering::Relaxed), 1, "not retried");

    // A Content-Length over the cap is refused before the body is read.
    let server = ScriptedServer::start(vec![Reply::json(
        200,
        json!({"choices":[{"message":{"content": "v".repeat(3 * MB)}}]}),
    )])
    .await
    .unwrap();
    let client = client_for(server.base_url(), |c| c.max_body_bytes = 2 * MB);
    let (reply, _) = ask(&client).await;
    assert!(
        matches!(reply, Err(ClientError::TooLarge { .. })),
        "{reply:?}"
    );
    // Under the cap it is read as before.
    let server = ScriptedServer::start(vec![Reply::json(
        200,
        json!({"choices":[{"message":{"content": "v".repeat(MB)},"finish_reason":"stop"}]}),
    )])
    .await
    .unwrap();
    let client = client_for(server.base_url(), |c| c.max_body_bytes = 2 * MB);
    assert_eq!(ask(&client).await.0.unwrap().text.len(), MB);
}

#[tokio::test]
async fn a_key_twice_in_a_chunk_does_not_fail_the_turn() {
    // The last value wins, as in JavaScript's JSON.parse.
    let server = ScriptedServer::start(vec![Reply::sse(vec![
        Step::Raw(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\",\"content\":\"b\"}}]}\n\n"
                .into(),
        ),
        Step::Raw(
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"x\",\"finish_reason\":\"stop\"}]}\n\n"
                .into(),
        ),
        Step::Done,
    ])])
    .await
    .unwrap();
    let client = client_for(server.base_url(), |_| {});
    let reply = ask(&client).await.0.unwrap();
    assert_eq!(reply.text, "b");
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn an_emoji_split_into_utf16_halves_across_events_is_joined() {
    // What a JavaScript server slicing its text by UTF-16 index sends: an emoji's two
    // surrogate halves in two events (each alone refused by a strict JSON parser), then a
    // lone half that has no partner.
    let event = |content: &str| {
        format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{content}\"}}}}]}}\n\n"
        )
    };
    let server = ScriptedServer::start(vec![Reply::sse(vec![
        Step::Raw(event(r"smile \ud83d")),
        Step::Raw(event(r"\ude00 and")),
        Step::Raw(event(r" a lone \ud83d half")),
        Step::Raw(
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
                .into(),
        ),
        Step::Done,
    ])])
    .await
    .unwrap();
    let client = client_for(server.base_url(), |_| {});
    let (reply, shown) = ask(&client).await;
    let reply = reply.unwrap();
    assert_eq!(reply.text, "smile \u{1F600} and a lone \u{FFFD} half");
    assert_eq!(shown, reply.text);
}

#[tokio::test]
async fn a_gzip_encoded_stream_nobody_asked_for_is_decoded() {
    use std::io::Write;
    let body = format!(
        "data: {}\n\ndata: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        chunk(json!({"role": "assistant", "content": "Zipped "}), None),
        chunk(json!({"content": "ünïcode"}), None),
        chunk(json!({}), Some("stop")),
    );
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(body.as_bytes()).unwrap();
    let zipped = encoder.finish().unwrap();
    let server = RawServer::start(move |mut stream, _| {
        let zipped = zipped.clone();
        async move {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-encoding: gzip\r\nconnection: close\r\n\r\n";
            let (first, second) = zipped.split_at(zipped.len() / 2);
            let _ = stream.write_all(head.as_bytes()).await;
            let _ = stream.write_all(first).await;
            tokio::time::sleep(Duration::from_millis(30)).await;
            let _ = stream.write_all(second).await;
        }
    })
    .await;
    let client = client_for(server.base_url(), |_| {});
    let (reply, shown) = ask(&client).await;
    assert_eq!(reply.unwrap().text, "Zipped ünïcode");
    assert_eq!(shown, "Zipped ünïcode");
}

/// A plain-HTTP server that answers whatever arrives with a 400, as many do when a TLS
/// handshake comes in.
async fn answers_400() -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                if stream.read(&mut buf).await.unwrap_or(0) > 0 {
                    let _ = stream
                        .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 11\r\nconnection: close\r\n\r\nBad Request")
                        .await;
                }
            });
        }
    });
    (addr, task)
}

#[tokio::test]
async fn https_to_a_plain_http_port_says_so_quickly() {
    let (addr, task) = answers_400().await;
    let scripted = ScriptedServer::start(vec![]).await.unwrap();
    for (what, addr) in [
        ("answers 400", addr),
        ("waits for a request", scripted.addr()),
    ] {
        let client = client_for(format!("https://{addr}/v1"), |c| {
            c.base_backoff = Duration::from_millis(500);
            c.connect_timeout = Duration::from_secs(3);
        });
        // Not found out, the second would end in the connect timeout with other words.
        let (reply, _) = ask(&client).await;
        let err = reply.unwrap_err().to_string();
        assert!(
            err.contains(&format!(
                "the server at {addr} answered plain HTTP to an https:// URL; use http://"
            )),
            "{what}: {err}"
        );
    }
    task.abort();
}
