//! rein's own stdio transport for rmcp: JSON-RPC messages, one a line, to a server's
//! stdin and from its stdout, read with limits rein chose rather than rmcp's.
//!
//! rmcp's line reader drops a line over 16 MiB, and its parser drops a message nested
//! deeper than serde_json's limit of 128, both without a word: the call they answered
//! waited for its whole timeout, and a `tools/list` answer with one deep schema failed
//! the server's start. Here a line is read into memory up to [`MAX_MESSAGE_BYTES`]; the
//! rest of a longer one streams through a [`Rewriter`] that cuts its long strings and
//! its deep nesting, and so does a line too deep to parse. Either way the call gets its
//! answer at once, cut (the result says how much is left out), and the server stays
//! usable. A line of anything but JSON is skipped, as rmcp does; an answer whose JSON
//! rmcp cannot read becomes an error for the call it answers.
//!
//! A `tools/list` answer is mended tool by tool ([`mend_tools`]): a tool whose input
//! schema is not an object is offered as taking any object (its `_meta` says why, under
//! [`SCHEMA_NOTE`]), and one rein cannot read at all is left out (the answer's `_meta`
//! names it, under [`LEFT_OUT`]), instead of the whole answer failing and the server
//! with it.

use std::future::Future;
use std::sync::Arc;

use process_wrap::tokio::{ChildWrapper, CommandWrap};
use rmcp::model::Tool;
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};

use super::rewrite::{Limits, Rewriter};

/// The longest line read into memory as it is; the rest of a longer one is cut as it is
/// read (16 MiB, rmcp's own limit, and that of its HTTP transport).
pub(super) const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// The deepest nesting kept of a message (serde_json parses at most 128 levels).
const MAX_DEPTH: usize = 100;
/// The limits of a message cut as it is read: a text is cut a little under the result
/// cap, so the note saying how much was left out stays within it.
const CUT: Limits = Limits {
    depth: MAX_DEPTH,
    string: super::result::MAX_RESULT_BYTES - 4096,
    total: MAX_MESSAGE_BYTES,
};
/// The limits of a message read whole but too deep to parse.
const DEEP: Limits = Limits {
    depth: MAX_DEPTH,
    string: usize::MAX,
    total: usize::MAX,
};

/// The key in a mended tool's `_meta` that says why its input schema was replaced.
pub(super) const SCHEMA_NOTE: &str = "rein/schemaNote";
/// The key in a mended `tools/list` answer's `_meta` that lists the tools left out.
pub(super) const LEFT_OUT: &str = "rein/leftOut";

/// A server's stdin and stdout, and the server itself (killed when this is dropped: its
/// command is `kill_on_drop`).
pub(super) struct StdioTransport {
    child: Box<dyn ChildWrapper>,
    lines: Lines<ChildStdout>,
    stdin: Arc<tokio::sync::Mutex<Option<ChildStdin>>>,
}

impl StdioTransport {
    /// Start `command` with its standard streams piped; its stderr is returned to be read.
    pub(super) fn spawn(
        mut command: CommandWrap,
    ) -> std::io::Result<(StdioTransport, Option<ChildStderr>, Option<u32>)> {
        command
            .command_mut()
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = command.spawn()?;
        let pid = child.id();
        let (Some(stdin), Some(stdout)) = (child.stdin().take(), child.stdout().take()) else {
            return Err(std::io::Error::other(
                "the server's stdin or stdout is missing",
            ));
        };
        let stderr = child.stderr().take();
        let transport = StdioTransport {
            child,
            lines: Lines::new(stdout),
            stdin: Arc::new(tokio::sync::Mutex::new(Some(stdin))),
        };
        Ok((transport, stderr, pid))
    }
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn name() -> std::borrow::Cow<'static, str> {
        "stdio".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let stdin = self.stdin.clone();
        async move {
            let mut line = serde_json::to_vec(&item)?;
            line.push(b'\n');
            let mut stdin = stdin.lock().await;
            let Some(stdin) = stdin.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the server's stdin is closed",
                ));
            };
            stdin.write_all(&line).await?;
            stdin.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let message = match self.lines.next().await {
                Line::Whole(line) => decode(&line),
                Line::Cut(json) => parse(&json, false).and_then(message),
                Line::End => return None,
            };
            if message.is_some() {
                return message;
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // The server sees the end of its input and may exit by itself (a server that
        // saves its state does it then); after a grace it is killed when this is dropped,
        // its process group by the manager.
        drop(self.stdin.lock().await.take());
        let _ = tokio::time::timeout(super::connection::KILL_GRACE, self.child.wait()).await;
        Ok(())
    }
}

/// One line of stdout, read.
enum Line {
    /// Read whole (without its line end).
    Whole(Vec<u8>),
    /// Longer than [`MAX_MESSAGE_BYTES`]: rewritten within [`CUT`] as it was read.
    Cut(Vec<u8>),
    /// The output ended (or could not be read).
    End,
}

/// The lines of a stream, each at most [`MAX_MESSAGE_BYTES`] in memory. Cancel-safe, as
/// rmcp needs (it polls `receive` in a `select!`): whatever was read stays in `self`, and
/// bytes are consumed only after they are kept.
struct Lines<R> {
    read: BufReader<R>,
    line: Vec<u8>,
    cut: Option<Rewriter>,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    fn new(read: R) -> Lines<R> {
        Lines {
            read: BufReader::with_capacity(64 * 1024, read),
            line: Vec::new(),
            cut: None,
        }
    }

    async fn next(&mut self) -> Line {
        loop {
            let (used, ended) = {
                let Ok(available) = self.read.fill_buf().await else {
                    return Line::End;
                };
                if available.is_empty() {
                    return Line::End;
                }
                let newline = memchr::memchr(b'\n', available);
                let piece = &available[..newline.unwrap_or(available.len())];
                if let Some(cut) = &mut self.cut {
                    cut.feed(piece);
                } else if self.line.len() + piece.len() > MAX_MESSAGE_BYTES {
                    let mut cut = Rewriter::new(CUT);
                    cut.feed(&std::mem::take(&mut self.line));
                    cut.feed(piece);
                    self.cut = Some(cut);
                } else {
                    self.line.extend_from_slice(piece);
                }
                (
                    newline.map_or(available.len(), |i| i + 1),
                    newline.is_some(),
                )
            };
            self.read.consume(used);
            if ended {
                return match self.cut.take() {
                    Some(cut) => Line::Cut(cut.finish()),
                    None => Line::Whole(std::mem::take(&mut self.line)),
                };
            }
        }
    }
}

/// A whole line as a message: `None` for what is not one (blank, not JSON).
fn decode(line: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let value = parse(line, true)?;
    // A server's request is read from its own bytes: a form's fields keep the order the
    // server wrote them in (a `Value` sorts an object's keys).
    if value.get("method").is_some() && value.get("id").is_some() {
        if let Ok(request) = serde_json::from_slice(line) {
            return Some(request);
        }
    }
    message(value)
}

/// `line` as JSON; one too deep for serde_json is rewritten within [`DEEP`] first when
/// `deep` allows.
fn parse(line: &[u8], deep: bool) -> Option<Value> {
    match serde_json::from_slice::<Value>(line) {
        Ok(value) => Some(value),
        // serde_json says "recursion limit exceeded" and has no public code for it.
        Err(e) if deep && e.to_string().starts_with("recursion limit exceeded") => {
            let mut rewriter = Rewriter::new(DEEP);
            rewriter.feed(line);
            serde_json::from_slice(&rewriter.finish()).ok()
        }
        Err(_) => None,
    }
}

/// A JSON value as a message for rmcp, its tools mended. An answer (it has an id and no
/// method) rmcp cannot read becomes an error answer, so its call fails at once and says
/// why; anything else it cannot read is skipped.
fn message(mut value: Value) -> Option<RxJsonRpcMessage<RoleClient>> {
    if let Some(result) = value.get_mut("result") {
        mend_tools(result);
    }
    let answer_to = match (value.get("id"), value.get("method")) {
        (Some(id), None) => Some(id.clone()),
        _ => None,
    };
    match serde_json::from_value(value) {
        Ok(message) => Some(message),
        Err(e) => {
            let id = answer_to?;
            serde_json::from_value(json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {"code": -32603, "message": format!("rein could not read the server's answer: {e}")},
            }))
            .ok()
        }
    }
}

/// Mend the result of a `tools/list` answer tool by tool (see the module's story); any
/// other result is left as it is. The manager mends a listing that reached it unread
/// (over HTTP) the same way.
pub(super) fn mend_tools(result: &mut Value) {
    let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
        return;
    };
    let mut left_out = Vec::new();
    tools.retain_mut(|tool| {
        let name = tool.get("name").and_then(Value::as_str).map_or_else(
            || "(a tool without a name)".to_string(),
            |n| format!("{n:?}"),
        );
        let Some(object) = tool.as_object_mut() else {
            left_out.push(format!("{name}: not a JSON object"));
            return false;
        };
        let what = match object.get("inputSchema") {
            Some(Value::Object(_)) => None,
            Some(Value::String(_)) => Some("a string"),
            Some(Value::Array(_)) => Some("an array"),
            Some(Value::Null) | None => Some("missing"),
            Some(_) => Some("a number or boolean"),
        };
        if let Some(what) = what {
            object.insert("inputSchema".into(), json!({"type": "object"}));
            let meta = object.entry("_meta").or_insert_with(|| json!({}));
            if !meta.is_object() {
                *meta = json!({});
            }
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(
                    SCHEMA_NOTE.into(),
                    json!(format!("its input schema is {what}, not a JSON object")),
                );
            }
        }
        if object.get("outputSchema").is_some_and(|s| !s.is_object()) {
            object.remove("outputSchema");
        }
        match serde_json::from_value::<Tool>(Value::Object(object.clone())) {
            Ok(_) => true,
            Err(e) => {
                left_out.push(format!("{name}: {e}"));
                false
            }
        }
    });
    if left_out.is_empty() {
        return;
    }
    if let Some(result) = result.as_object_mut() {
        let meta = result.entry("_meta").or_insert_with(|| json!({}));
        if !meta.is_object() {
            *meta = json!({});
        }
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(LEFT_OUT.into(), json!(left_out));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{JsonRpcMessage, ServerResult};

    fn answer(line: &str) -> ServerResult {
        match decode(line.as_bytes()) {
            Some(JsonRpcMessage::Response(r)) => r.result,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn tools_rein_cannot_use_are_mended_or_left_out() {
        let listed = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            {"name": "fine", "inputSchema": {"type": "object"}},
            {"name": "stringy", "inputSchema": "object"},
            {"name": "nameless", "inputSchema": {}, "annotations": "oops"},
            {"inputSchema": {}},
            7,
        ]}});
        let ServerResult::ListToolsResult(list) = answer(&listed.to_string()) else {
            panic!("not a tools/list answer");
        };
        let names: Vec<&str> = list.tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["fine", "stringy"]);
        let note = list.tools[1]
            .meta
            .as_ref()
            .unwrap()
            .0
            .get(SCHEMA_NOTE)
            .unwrap();
        assert_eq!(note, "its input schema is a string, not a JSON object");
        let left_out = &list.meta.unwrap().0[LEFT_OUT];
        assert_eq!(left_out.as_array().unwrap().len(), 3, "{left_out}");
        assert!(left_out[0].as_str().unwrap().starts_with("\"nameless\": "));
    }

    #[test]
    fn an_answer_rmcp_cannot_read_fails_its_call_and_garbage_is_skipped() {
        assert!(decode(b"not json").is_none());
        assert!(decode(b"  \r").is_none());
        match decode(br#"{"jsonrpc": "2.0", "id": 4, "error": 5}"#) {
            Some(JsonRpcMessage::Error(e)) => {
                assert!(e.error.message.starts_with("rein could not read"), "{e:?}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn lines_over_the_limit_are_cut_as_they_are_read() {
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}}]}}}}\n",
            "z".repeat(MAX_MESSAGE_BYTES + 10)
        );
        let input = format!("{big}{{\"jsonrpc\":\"2.0\",\"id\":10,\"result\":{{}}}}\n");
        let mut lines = Lines::new(input.as_bytes());
        let Line::Cut(json) = lines.next().await else {
            panic!("not cut");
        };
        assert!(json.len() < CUT.string + 1000);
        let Some(JsonRpcMessage::Response(r)) = parse(&json, false).and_then(message) else {
            panic!("not an answer");
        };
        let ServerResult::CallToolResult(result) = r.result else {
            panic!("not a call's result");
        };
        let text = &result.content[0].as_text().unwrap().text;
        assert!(
            text.ends_with("more not shown: rein cut this text as it read the server's answer]")
        );
        assert!(matches!(lines.next().await, Line::Whole(_)));
        assert!(matches!(lines.next().await, Line::End));
    }
}
