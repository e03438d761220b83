//! A scripted OpenAI-compatible chat-completions server: the model of the tests, the
//! benchmarks and `rein --demo`.
//!
//! `ScriptedServer::start(replies)` binds 127.0.0.1 on a free port and serves plain
//! HTTP/1.1, one request per connection (`Connection: close`). Each
//! `POST /v1/chat/completions` (or `/v1/responses`, `/v1/messages`: the native APIs) is
//! recorded (JSON body, headers, path) and answered with the next `Reply` of the script;
//! when the script runs out the answer is a loud 500.
//! A reply built `with_usage_from_request` gets its usage computed from the body of the
//! request it answers (`Reply::for_request`).
//! `GET /v1/models` lists one model ("scripted"), or what [`ScriptedServer::answer_models`]
//! set, and its requests' headers are kept ([`ScriptedServer::model_list_headers`]);
//! `GET /props` (where llama.cpp says its context
//! window) is a 404 unless [`ScriptedServer::answer_props`] or
//! [`ScriptedServer::hang_props`] set it up (a slow or silent window probe); anything
//! else is a 404. Streaming bodies are
//! close-delimited SSE, written step by step so pauses and cuts happen where the
//! script puts them. Dropping the server stops it and every open connection.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

use super::reply::{Body, Reply, Step};

/// Largest request head (request line + headers) the server accepts.
const MAX_HEAD: usize = 64 * 1024;
/// SSE bytes buffered before they are written out when no pause or cut asks sooner.
const WRITE_CHUNK: usize = 64 * 1024;

/// A running server; dropping it stops it.
pub struct ScriptedServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    task: JoinHandle<()>,
}

/// Answers some requests by their body instead of the script: `Some(reply)` takes the
/// request, `None` leaves it to the next scripted reply.
pub type Router = Arc<dyn Fn(&Value) -> Option<Reply> + Send + Sync>;

#[derive(Default)]
struct State {
    script: VecDeque<Reply>,
    router: Option<Router>,
    requests: Vec<Value>,
    headers: Vec<Vec<(String, String)>>,
    /// The path of each model request (`/v1/chat/completions`, `/v1/responses`,
    /// `/v1/messages`), in arrival order.
    paths: Vec<String>,
    served: usize,
    /// Chat requests being answered right now, and the most there ever were at once.
    open: usize,
    most_open: usize,
    /// How `GET /props` answers: `None` a 404; else the window, after a delay (`None`:
    /// never).
    props: Option<Props>,
    /// `GET /props` requests received.
    probes: usize,
    /// How `GET /v1/models` answers, when not with the one scripted model.
    models: Option<(u16, Value)>,
    /// The headers of each `GET /v1/models` received.
    model_lists: Vec<Vec<(String, String)>>,
}

/// A `/props` answer: llama.cpp's `n_ctx`, after `delay` (`None`: the connection is held
/// open and nothing is ever sent).
#[derive(Debug, Clone, Copy)]
struct Props {
    n_ctx: u64,
    delay: Option<std::time::Duration>,
}

impl ScriptedServer {
    /// Binds 127.0.0.1:0 and starts serving `replies` in order; fails only if no local
    /// port can be bound. Must be called inside a tokio runtime.
    pub async fn start(replies: Vec<Reply>) -> std::io::Result<ScriptedServer> {
        Self::serve(replies, None).await
    }

    /// Like [`start`](Self::start), but `router` sees each chat request first and may
    /// answer it itself (say, every compaction request, wherever it falls in the script);
    /// the requests it answers do not use up the script.
    pub async fn start_routed(
        replies: Vec<Reply>,
        router: Router,
    ) -> std::io::Result<ScriptedServer> {
        Self::serve(replies, Some(router)).await
    }

    async fn serve(replies: Vec<Reply>, router: Option<Router>) -> std::io::Result<ScriptedServer> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Mutex::new(State {
            script: replies.into(),
            router,
            ..State::default()
        }));
        let task = tokio::spawn(accept_loop(listener, state.clone()));
        Ok(ScriptedServer { addr, state, task })
    }

    /// `http://127.0.0.1:PORT/v1`
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Bodies of the chat-completions requests so far, parsed as JSON (or a JSON string if not JSON).
    pub fn requests(&self) -> Vec<Value> {
        self.lock().requests.clone()
    }

    /// The path each model request was sent to, in arrival order.
    pub fn request_paths(&self) -> Vec<String> {
        self.lock().paths.clone()
    }

    /// Headers of each chat-completions request, names lower-cased, in arrival order.
    pub fn request_headers(&self) -> Vec<Vec<(String, String)>> {
        self.lock().headers.clone()
    }

    /// Appends a reply to the script.
    pub fn push(&self, reply: Reply) {
        self.lock().script.push_back(reply);
    }

    /// The most chat requests that were being answered at the same time.
    pub fn most_concurrent(&self) -> usize {
        self.lock().most_open
    }

    /// Replies consumed so far.
    pub fn served(&self) -> usize {
        self.lock().served
    }

    /// Replies still waiting in the script.
    pub fn remaining(&self) -> usize {
        self.lock().script.len()
    }

    /// Answer `GET /props` as llama.cpp does, with a context window of `n_ctx` tokens,
    /// `delay` after the request (a slow window probe).
    pub fn answer_props(&self, n_ctx: u64, delay: std::time::Duration) {
        self.lock().props = Some(Props {
            n_ctx,
            delay: Some(delay),
        });
    }

    /// Answer `GET /v1/models` with `status` and `body` from now on.
    pub fn answer_models(&self, status: u16, body: Value) {
        self.lock().models = Some((status, body));
    }

    /// The headers of each `GET /v1/models` received, in arrival order.
    pub fn model_list_headers(&self) -> Vec<Vec<(String, String)>> {
        self.lock().model_lists.clone()
    }

    /// Take `GET /props` requests and never answer them (a server that hangs).
    pub fn hang_props(&self) {
        self.lock().props = Some(Props {
            n_ctx: 0,
            delay: None,
        });
    }

    /// `GET /props` requests received so far.
    pub fn probes(&self) -> usize {
        self.lock().probes
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        // Aborting the accept loop drops its JoinSet, which aborts every connection task.
        self.task.abort();
    }
}

/// A panicking thread must not turn every later lock into a second panic.
fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

async fn accept_loop(listener: TcpListener, state: Arc<Mutex<State>>) {
    let mut connections = JoinSet::new();
    loop {
        while connections.try_join_next().is_some() {}
        let Ok((stream, _)) = listener.accept().await else {
            // Out of file descriptors or similar: let the connections finish first.
            tokio::task::yield_now().await;
            continue;
        };
        connections.spawn(serve_connection(stream, state.clone()));
    }
}

/// A parsed request: method, path without query, lower-cased headers, raw body.
struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

async fn serve_connection(mut stream: TcpStream, state: Arc<Mutex<State>>) {
    // Every write goes out at once, so a cut never discards data still held back by Nagle.
    let _ = stream.set_nodelay(true);
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    if request.method == "GET" && request.path == "/props" {
        let props = {
            let mut s = lock(&state);
            s.probes += 1;
            s.props
        };
        if let Some(props) = props {
            match props.delay {
                Some(delay) => tokio::time::sleep(delay).await,
                None => std::future::pending::<()>().await,
            }
            let body = json!({ "default_generation_settings": { "n_ctx": props.n_ctx } });
            let _ = write_reply(&mut stream, Reply::json(200, body)).await;
            return;
        }
    }
    let chat = is_model_call(&request.path);
    if chat {
        let mut s = lock(&state);
        s.open += 1;
        s.most_open = s.most_open.max(s.open);
    }
    let reply = route(&request, &state);
    // Write errors mean the client went away (an interrupt): that reply simply stops.
    let _ = write_reply(&mut stream, reply).await;
    if chat {
        let mut s = lock(&state);
        s.open = s.open.saturating_sub(1);
    }
}

/// Reads one request; `None` if the client closed early or sent something unreadable.
async fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::with_capacity(4096);
    let head_end = loop {
        if let Some(pos) = find(&buf, b"\r\n\r\n") {
            break pos;
        }
        if buf.len() > MAX_HEAD || read_more(stream, &mut buf).await? == 0 {
            return None;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split_whitespace();
    let method = request_line.next()?.to_string();
    let target = request_line.next()?;
    let path = target.split('?').next().unwrap_or(target).to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let body_start = head_end + 4;
    while buf.len() < body_start + length {
        if read_more(stream, &mut buf).await? == 0 {
            return None;
        }
    }
    let body = buf[body_start..body_start + length].to_vec();
    Some(Request {
        method,
        path,
        headers,
        body,
    })
}

async fn read_more(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<usize> {
    let mut chunk = [0u8; 8192];
    let n = stream.read(&mut chunk).await.ok()?;
    buf.extend_from_slice(&chunk[..n]);
    Some(n)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Picks the reply; a chat request is recorded and consumes the script under one lock,
/// so `requests()[i]` is always the request that got reply `i`, and the reply is fitted
/// to that request (`Reply::for_request`).
fn route(request: &Request, state: &Mutex<State>) -> Reply {
    match (request.method.as_str(), request.path.as_str()) {
        ("POST", path) if is_model_call(path) => {
            let body = serde_json::from_slice(&request.body).unwrap_or_else(|_| {
                Value::String(String::from_utf8_lossy(&request.body).into_owned())
            });
            let mut state = lock(state);
            let number = state.requests.len() + 1;
            let routed = state.router.as_ref().and_then(|router| router(&body));
            let reply = match routed.or_else(|| state.script.pop_front()) {
                Some(reply) => {
                    state.served += 1;
                    reply.for_request(&body)
                }
                None => Reply::error(
                    500,
                    &format!("scripted server: no reply left for request {number}"),
                ),
            };
            state.requests.push(body);
            state.headers.push(request.headers.clone());
            state.paths.push(request.path.clone());
            reply
        }
        ("GET", "/v1/models") => {
            let mut state = lock(state);
            state.model_lists.push(request.headers.clone());
            match state.models.clone() {
                Some((200, body)) => Reply::json(200, body),
                Some((status, body)) => Reply::error(status, &body.to_string()),
                None => Reply::json(
                    200,
                    json!({ "object": "list", "data": [{ "id": "scripted", "object": "model" }] }),
                ),
            }
        }
        (method, path) => Reply::error(
            404,
            &format!("scripted server: no route for {method} {path}"),
        ),
    }
}

/// A request for a model's reply, in any of the APIs rein speaks: chat completions, the
/// Responses API, Anthropic's Messages. All three are scripted and recorded alike.
fn is_model_call(path: &str) -> bool {
    matches!(
        path,
        "/v1/chat/completions" | "/v1/responses" | "/v1/messages"
    )
}

async fn write_reply(stream: &mut TcpStream, reply: Reply) -> std::io::Result<()> {
    let (content_type, fixed_body) = match &reply.body {
        Body::Sse(_) => ("text/event-stream", None),
        Body::Json(v) => ("application/json", Some(v.to_string().into_bytes())),
        Body::Text(t) => ("text/plain; charset=utf-8", Some(t.clone().into_bytes())),
    };
    let mut out = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
    let has = |name: &str| {
        reply
            .headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case(name))
    };
    if !has("content-type") {
        out.push_str(&format!("content-type: {content_type}\r\n"));
    }
    match &fixed_body {
        Some(body) => out.push_str(&format!("content-length: {}\r\n", body.len())),
        None if !has("cache-control") => out.push_str("cache-control: no-cache\r\n"),
        None => {}
    }
    out.push_str("connection: close\r\n");
    for (k, v) in &reply.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    let mut buf = out.into_bytes();

    if let Some(body) = fixed_body {
        buf.extend_from_slice(&body);
        stream.write_all(&buf).await?;
        return stream.shutdown().await;
    }
    let Body::Sse(steps) = reply.body else {
        return Ok(());
    };
    for step in steps {
        match step {
            Step::Data(v) => {
                buf.extend_from_slice(b"data: ");
                serde_json::to_writer(&mut buf, &v)?;
                buf.extend_from_slice(b"\n\n");
            }
            Step::Raw(s) => buf.extend_from_slice(s.as_bytes()),
            Step::Bytes(b) => buf.extend_from_slice(&b),
            Step::Done => buf.extend_from_slice(b"data: [DONE]\n\n"),
            Step::Sleep(d) => {
                stream.write_all(&buf).await?;
                buf.clear();
                // No pause: a write of its own (the timer would round zero up to its
                // millisecond tick, pacing a stream of many small writes).
                if d.is_zero() {
                    tokio::task::yield_now().await;
                } else {
                    tokio::time::sleep(d).await;
                }
            }
            Step::Cut => {
                stream.write_all(&buf).await?;
                // Zero linger turns the close into a reset: the client sees an error, not a clean end.
                stream.set_zero_linger()?;
                return Ok(());
            }
        }
        if buf.len() >= WRITE_CHUNK {
            stream.write_all(&buf).await?;
            buf.clear();
        }
    }
    stream.write_all(&buf).await?;
    stream.shutdown().await
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

#[cfg(test)]
mod tests {
    use super::super::reply::request_chars;
    use super::*;

    /// POSTs `body` and returns the `usage` of every data event that has one.
    async fn usages(server: &ScriptedServer, body: &Value) -> Vec<Value> {
        let text = reqwest::Client::new()
            .post(format!("{}/chat/completions", server.base_url()))
            .json(body)
            .send()
            .await
            .expect("request reaches the scripted server")
            .text()
            .await
            .expect("whole SSE body");
        assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
        text.split("\n\n")
            .filter_map(|event| event.strip_prefix("data: "))
            .filter_map(|data| serde_json::from_str::<Value>(data).ok())
            .filter_map(|event| event.get("usage").filter(|u| !u.is_null()).cloned())
            .collect()
    }

    #[tokio::test]
    async fn usage_from_request_is_computed_from_the_body_being_answered() {
        let first = json!({
            "model": "m",
            "messages": [
                { "role": "system", "content": "You are terse." },
                { "role": "user", "content": "Fix the test, please." },
            ],
            "tools": [{ "type": "function", "function": { "name": "bash" } }],
        });
        let second = json!({
            "model": "m",
            "messages": [
                { "role": "user", "content": "hi" },
                { "role": "assistant", "content": null, "tool_calls": [
                    { "id": "c", "type": "function",
                      "function": { "name": "bash", "arguments": "{\"command\":\"ls\"}" } },
                ] },
                { "role": "tool", "tool_call_id": "c", "content": "a.txt" },
            ],
        });
        let server = ScriptedServer::start(vec![
            Reply::text("ok").with_usage_from_request(3.0),
            Reply::text("ok")
                .with_usage(0, 42)
                .with_usage_from_request(2.5),
            Reply::text("fixed").with_usage(7, 8),
        ])
        .await
        .unwrap();

        let chars = request_chars(&first);
        let prompt = (chars as f64 / 3.0).ceil() as u64;
        assert_eq!(
            usages(&server, &first).await,
            vec![json!({ "prompt_tokens": prompt, "completion_tokens": 10,
                         "total_tokens": prompt + 10 })]
        );

        // 2+8 + (4+16+24+8) + (5+16+8) = 91 chars; at 2.5 per token, ceil(36.4) = 37.
        assert_eq!(request_chars(&second), 91);
        assert_eq!(
            usages(&server, &second).await,
            vec![json!({ "prompt_tokens": 37, "completion_tokens": 42, "total_tokens": 79 })]
        );

        // A reply with fixed usage ignores the request.
        assert_eq!(
            usages(&server, &second).await,
            vec![json!({ "prompt_tokens": 7, "completion_tokens": 8, "total_tokens": 15 })]
        );
        assert_eq!(server.requests(), vec![first, second.clone(), second]);
        assert_eq!(server.served(), 3);
    }
}
