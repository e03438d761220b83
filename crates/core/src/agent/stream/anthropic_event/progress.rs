//! What the Anthropic reader keeps between events, held by the
//! [`Assembler`](crate::agent::stream::Assembler): the content blocks so far, the usage and
//! the stop reason until the stream ends. Apart from the reader, so that the assembler
//! holds it without importing the reader that extends it.

use serde_json::Value;

/// What the reader keeps between events of one reply.
#[derive(Debug, Default)]
pub(in crate::agent::stream) struct Progress {
    /// The content blocks so far, in the order they started.
    pub(super) blocks: Vec<Block>,
    pub(super) input_tokens: Option<u64>,
    pub(super) cache_read: Option<u64>,
    pub(super) cache_write: Option<u64>,
    pub(super) output_tokens: Option<u64>,
    /// `message_delta`'s stop reason, until `message_stop` makes it the finish reason.
    pub(super) stop_reason: Option<String>,
    /// The reply was made a refusal already.
    pub(super) refused: bool,
    /// `message_stop` (or a whole message) ended the reply: later events are not read.
    pub(super) ended: bool,
}

#[derive(Debug)]
pub(super) struct Block {
    /// The server's `index`.
    pub(super) index: u64,
    /// Its item among the assembler's (see [`Assembler::item_mut`](crate::agent::stream::Assembler::item_mut)).
    pub(super) item: usize,
    pub(super) kind: Kind,
    /// A `tool_use` block's `input` from its start, the arguments when no delta brings any.
    pub(super) start_input: Option<Value>,
    /// A block the server ran: the `partial_json` of its input so far.
    pub(super) json: String,
    /// A `tool_use` block got its arguments (from deltas, or from `start_input` at its end).
    pub(super) has_arguments: bool,
    /// A thinking block has shown some text.
    pub(super) thought: bool,
    pub(super) closed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Text,
    Thinking,
    RedactedThinking,
    ToolUse,
    /// Run by the server (`server_tool_use`, `web_search_tool_result`, ...), or a kind this
    /// reader does not know: kept whole, never a tool call.
    Server,
}
