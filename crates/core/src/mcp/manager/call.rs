//! A call to a ready server's tool: the tool found by the name the model knows, its
//! arguments checked (an object, or none), the request sent and timed by rein (the
//! server's `tool_timeout` without a result or a progress report, the time a form of the
//! call's is open not counted), progress routed to the caller, and the answer converted
//! (`result.rs`). While it runs, the server's forms go to whoever the caller
//! gave to answer them (`elicit.rs`). A cancel sends the server `notifications/cancelled`; a
//! connection that ends under the call marks the server failed.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use rmcp::ServiceError;
use tokio::sync::{mpsc, watch};

use super::{lock, Live, McpManager};
use crate::mcp::elicit;
use crate::mcp::http_error::HttpProblem;
use crate::mcp::result::{self, McpOutput};
use crate::mcp::{McpError, McpProgress, McpTool, ServerState};
use crate::tools::external::AskUser;

impl McpManager {
    /// Call the tool the model knows as `name` with `arguments` (an object, or null for
    /// none). Progress notifications go to `progress`; when `cancel` completes first, the
    /// server is sent `notifications/cancelled` and the call ends with
    /// [`McpError::Cancelled`]. The server's `tool_timeout` applies to the time without a
    /// result or progress.
    pub async fn call(
        &self,
        name: &str,
        arguments: serde_json::Value,
        progress: Option<mpsc::UnboundedSender<McpProgress>>,
        cancel: impl Future<Output = ()>,
    ) -> Result<McpOutput, McpError> {
        self.call_asking(name, arguments, progress, None, cancel)
            .await
    }

    /// [`call`](Self::call), with `ask` to put the server's forms to while the call runs
    /// (without it, they are declined); a form still open when the call ends is closed
    /// and the server answered `cancel`.
    pub async fn call_asking(
        &self,
        name: &str,
        arguments: serde_json::Value,
        progress: Option<mpsc::UnboundedSender<McpProgress>>,
        ask: Option<Arc<dyn AskUser>>,
        cancel: impl Future<Output = ()>,
    ) -> Result<McpOutput, McpError> {
        let tool = self
            .tool(name)
            .ok_or_else(|| McpError::UnknownTool(name.to_string()))?;
        let (live, timeout, generation) = {
            let slots = self.slots();
            let slot = slots
                .iter()
                .find(|s| s.config.name == tool.server)
                .ok_or_else(|| McpError::UnknownTool(name.to_string()))?;
            if !slot.config.offers(&tool.tool) {
                return Err(McpError::UnknownTool(name.to_string()));
            }
            match (&slot.state, &slot.live) {
                (ServerState::Ready { .. }, Some(live)) => {
                    (live.clone(), slot.config.tool_timeout, slot.generation)
                }
                (state, _) => {
                    return Err(McpError::NotReady {
                        server: tool.server.clone(),
                        state: state.clone(),
                    })
                }
            }
        };
        let arguments = match arguments {
            serde_json::Value::Object(map) => Some(map),
            serde_json::Value::Null => None,
            other => {
                return Err(McpError::BadArguments(format!(
                    "the arguments must be a JSON object, got {other}"
                )))
            }
        };
        let mut params = CallToolRequestParams::new(tool.tool.clone());
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        // Before the request: the server may ask at once. Its forms are watched: while one
        // is open the call's clock stops (the user is filling it in; the server waits).
        let forms_open = watch::channel(0usize);
        let _route = ask.map(|ask| {
            let watched: Arc<dyn AskUser> =
                Arc::new(elicit::Watched::new(ask, forms_open.0.clone()));
            elicit::register(&live.forms, watched)
        });
        let mut forms_open = forms_open.1;
        // rein keeps the clock itself: `timeout` without a result or a progress report,
        // not counting the time a form is open.
        let handle = live
            .peer
            .send_cancellable_request(
                ClientRequest::CallToolRequest(CallToolRequest::new(params)),
                PeerRequestOptions::no_options(),
            )
            .await
            .map_err(|e| self.call_failed(&tool, &live, generation, e, timeout))?;
        let token = handle.progress_token.0.clone();
        let (heard_tx, mut heard) = mpsc::unbounded_channel();
        lock(&live.progress).insert(token.clone(), heard_tx);
        let (id, peer) = (handle.id.clone(), handle.peer.clone());
        let mut closed = live.closed.clone();
        let response = handle.await_response();
        tokio::pin!(response);
        tokio::pin!(cancel);
        let mut deadline = tokio::time::Instant::now() + timeout;
        let outcome = loop {
            let asking = *forms_open.borrow() > 0;
            tokio::select! {
                response = &mut response => break match response {
                    Ok(ServerResult::CallToolResult(r)) => Ok(result::convert(&r, result::MAX_RESULT_BYTES)),
                    Ok(_) => Err(McpError::Protocol {
                        server: tool.server.clone(),
                        message: "the server answered tools/call with something else".into(),
                    }),
                    Err(e) => Err(self.call_failed(&tool, &live, generation, e, timeout)),
                },
                () = &mut cancel => {
                    let _ = peer
                        .notify_cancelled(CancelledNotificationParam::new(Some(id), Some("the user interrupted".into())))
                        .await;
                    break Err(McpError::Cancelled);
                }
                // The watch's guard is dropped in here: the call's future stays `Send`.
                () = async { let _ = closed.wait_for(|c| *c).await; } => {
                    break Err(self.exited(&tool.server, &live, generation));
                }
                // A progress report (or a log line) restarts the clock.
                Some(update) = heard.recv() => {
                    deadline = tokio::time::Instant::now() + timeout;
                    if let Some(sender) = &progress {
                        let _ = sender.send(update);
                    }
                }
                // A form opened or closed: the clock starts again from its close.
                Ok(()) = forms_open.changed() => {
                    deadline = tokio::time::Instant::now() + timeout;
                }
                () = tokio::time::sleep_until(deadline), if !asking => {
                    let _ = peer
                        .notify_cancelled(CancelledNotificationParam::new(Some(id), Some("timed out".into())))
                        .await;
                    break Err(McpError::Timeout {
                        server: tool.server.clone(),
                        tool: tool.tool.clone(),
                        secs: timeout.as_secs(),
                    });
                }
            }
        };
        lock(&live.progress).remove(&token);
        outcome
    }

    /// The error for a failed request; a closed transport marks the server failed.
    fn call_failed(
        &self,
        tool: &McpTool,
        live: &Live,
        generation: u64,
        error: ServiceError,
        timeout: Duration,
    ) -> McpError {
        match error {
            ServiceError::Timeout { .. } => McpError::Timeout {
                server: tool.server.clone(),
                tool: tool.tool.clone(),
                secs: timeout.as_secs(),
            },
            ServiceError::McpError(e) => McpError::Rejected {
                server: tool.server.clone(),
                message: e.message.to_string(),
            },
            // Over HTTP a failed POST is that call's failure; the session goes on (a
            // server that is gone fails each call the same way).
            ServiceError::TransportSend(e) if live.url.is_some() => McpError::Http {
                server: tool.server.clone(),
                url: live.url.clone().unwrap_or_default(),
                problem: HttpProblem::of(&e).describe("the call"),
            },
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                self.exited(&tool.server, live, generation)
            }
            other => McpError::Protocol {
                server: tool.server.clone(),
                message: other.to_string(),
            },
        }
    }

    /// The server's connection ended under a call: it is marked failed.
    fn exited(&self, server: &str, live: &Live, generation: u64) -> McpError {
        let stderr = live.stderr.lines();
        let reason = "the connection to the server ended (it exited or closed its output)";
        self.set_state(
            server,
            generation,
            ServerState::Failed {
                reason: reason.into(),
                stderr: stderr.clone(),
            },
        );
        McpError::ServerExited {
            server: server.to_string(),
            stderr,
        }
    }
}
