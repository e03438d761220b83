//! A streamed reply: a wire reader takes the provider's events apart, the assembler puts
//! their pieces together into text/reasoning deltas and one finished reply.
//!
//! Pure and synchronous, so the benchmark and the tests drive it without a network. The
//! reader for chat-completions chunks is `chat_chunk` ([`Assembler::push`]), with
//! `common_chunk` reading the common chunk (a piece of text) without serde; the
//! `assembler` knows no wire format, so readers for other wire APIs feed the same one.
//! `error_text` words a server's error as one line, from inside a stream or from a failed
//! response's body; `finish` maps the native APIs' stop reasons to rein's finish reasons.

mod anthropic_event;
mod assembler;
mod chat_chunk;
mod common_chunk;
mod error_text;
pub mod finish;
mod responses_event;
mod surrogates;

pub use assembler::{
    AssembledReply, Assembler, Overflow, StreamDelta, MAX_REPLY_BYTES, MAX_REPLY_CALLS,
    MAX_REPLY_PARTS,
};
pub use error_text::{body_error_message, error_message};

/// Why a chunk could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChunkError {
    /// The server reported an error inside the stream.
    #[error("{0}")]
    Server(String),
    /// The server reported, inside the stream, an error that says to try again (a rate
    /// limit, an overload): retried when nothing was shown yet.
    #[error("{0}")]
    Busy(String),
    /// The chunk was not JSON at all.
    #[error("the server sent a chunk that is not valid JSON ({detail}): {snippet}")]
    Malformed { detail: String, snippet: String },
    /// The chunk was JSON, but not shaped like a chat-completions chunk.
    #[error("the server sent a chunk rein cannot read ({detail}): {snippet}")]
    Unexpected { detail: String, snippet: String },
}
