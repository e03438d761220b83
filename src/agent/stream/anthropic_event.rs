//! The reader of Anthropic Messages API stream events. Being written (issue 27).

use super::{Assembler, ChunkError, StreamDelta};

impl Assembler {
    /// Feed the `data` of one Anthropic SSE event, or a whole non-streaming message.
    pub(crate) fn push_anthropic(
        &mut self,
        data: &str,
        on_delta: &mut dyn FnMut(StreamDelta<'_>),
    ) -> Result<(), ChunkError> {
        let _ = (data, on_delta);
        Err(ChunkError::Server("not yet".into()))
    }
}
