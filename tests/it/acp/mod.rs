//! `rein acp` as an editor drives it: the real binary on a pipe, a scripted JSON-RPC
//! client on the other end, the scripted model server behind it.
//!
//! - [`turns`]: a turn with a tool call, permissions both ways, an edit as a diff, the
//!   todo list as a plan, cancel, modes.
//! - [`sessions`]: a session kept across editor restarts, shared with the terminal.
//! - [`editor`]: the editor's MCP servers.
//! - [`prompts`]: images in a prompt.
//! - [`protocol`]: initialize, bad input, a client that goes away.
//! - [`acpx`]: the same through acpx, a real client from npm.

use crate::support;

use std::path::Path;
use std::process::Stdio;

use serde_json::{json, Value};
use support::ScriptedServer;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

mod acpx;
mod editor;
mod prompts;
mod protocol;
mod sessions;
mod turns;

/// The binary as `rein acp` for `server`'s model, with an isolated home; its working
/// folder is `home` (each session names its own project).
fn command(home: &Path, server: &ScriptedServer) -> Command {
    acp_with(home, &["--base-url", &server.base_url(), "--model", "m"])
}

/// `rein ARGS acp` with an isolated home, its pipes the test's.
fn acp_with(home: &Path, args: &[&str]) -> Command {
    let mut cmd = support::rein_command(home);
    cmd.current_dir(home)
        .args(args)
        .arg("acp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// `toml` as the user's config file.
fn user_config(home: &Path, toml: &str) {
    std::fs::create_dir_all(home.join("rein-home")).unwrap();
    std::fs::write(home.join("rein-home/config.toml"), toml).unwrap();
}

/// An editor's end of the connection: requests out, and everything that came in, in order.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    next: u64,
    /// Every message rein sent, in order.
    seen: Vec<Value>,
}

/// How the client answers rein's own requests (`session/request_permission`).
type Answer<'a> = &'a mut dyn FnMut(&Value) -> Value;

impl Client {
    fn start(mut cmd: Command) -> Client {
        let mut child = cmd.spawn().expect("rein acp starts");
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Client {
            child,
            stdin,
            lines,
            next: 0,
            seen: Vec::new(),
        }
    }

    async fn write(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// Send a request; its id.
    async fn send(&mut self, method: &str, params: Value) -> u64 {
        self.next += 1;
        let id = self.next;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.write(&line.to_string()).await;
        id
    }

    async fn notify(&mut self, method: &str, params: Value) {
        let line = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.write(&line.to_string()).await;
    }

    /// The next message from rein (`None`: its stdout closed).
    async fn next_message(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(support::GIVE_UP, self.lines.next_line())
            .await
            .expect("rein said something in time")
            .expect("stdout readable")?;
        let value: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carries JSON-RPC only: {line:?}: {e}"));
        self.seen.push(value.clone());
        Some(value)
    }

    /// Read until the response to `id`, answering rein's requests with `answer`.
    async fn response(&mut self, id: u64, answer: Answer<'_>) -> Value {
        loop {
            let message = self.next_message().await.expect("rein answered");
            if message.get("method").is_some() {
                if let Some(request_id) = message.get("id").cloned() {
                    let result = answer(&message);
                    let line = json!({"jsonrpc": "2.0", "id": request_id, "result": result});
                    self.write(&line.to_string()).await;
                }
                continue;
            }
            if message["id"] == id {
                return message;
            }
        }
    }

    /// Read until a tool call is running (its `in_progress` update); nothing may be asked
    /// meanwhile.
    async fn until_running(&mut self) {
        loop {
            let message = self.next_message().await.expect("rein is running");
            assert!(message.get("id").is_none(), "nothing is asked: {message}");
            if message["params"]["update"]["status"] == "in_progress" {
                return;
            }
        }
    }

    /// A request and its response, answering nothing else.
    async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params).await;
        self.response(id, &mut |m| panic!("unexpected request {m}"))
            .await
    }

    async fn initialize(&mut self) -> Value {
        self.call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .await
    }

    /// A new session in `project`: its id.
    async fn new_session(&mut self, project: &Path) -> String {
        let r = self
            .call("session/new", json!({"cwd": project, "mcpServers": []}))
            .await;
        r["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("a session: {r}"))
            .to_string()
    }

    /// The `session/update`s seen so far, of this kind.
    fn updates(&self, kind: &str) -> Vec<Value> {
        self.seen
            .iter()
            .filter(|m| m["method"] == "session/update")
            .map(|m| m["params"]["update"].clone())
            .filter(|u| u["sessionUpdate"] == kind)
            .collect()
    }

    /// The reply's text as the chunks told it.
    fn reply_text(&self) -> String {
        self.updates("agent_message_chunk")
            .iter()
            .filter_map(|u| u["content"]["text"].as_str().map(str::to_string))
            .collect()
    }

    /// Close stdin (the editor went away) and wait for rein to exit.
    async fn close(mut self) -> std::process::ExitStatus {
        self.stdin.take();
        tokio::time::timeout(support::GIVE_UP, self.child.wait())
            .await
            .expect("rein exits when the editor goes away")
            .unwrap()
    }
}

/// The option the question offers of this kind.
fn option(request: &Value, kind: &str) -> String {
    request["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in {request}"))["optionId"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The answer choosing the option of `kind`.
fn choose(request: &Value, kind: &str) -> Value {
    json!({"outcome": {"outcome": "selected", "optionId": option(request, kind)}})
}
