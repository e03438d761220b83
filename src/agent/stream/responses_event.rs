//! The reader of OpenAI Responses API stream events. Being written (issue 27).

use super::{Assembler, ChunkError, StreamDelta};

impl Assembler {
    /// Feed the `data` of one Responses SSE event, or a whole non-streaming response.
    pub(crate) fn push_responses(
        &mut self,
        data: &str,
        on_delta: &mut dyn FnMut(StreamDelta<'_>),
    ) -> Result<(), ChunkError> {
        let _ = (data, on_delta);
        Err(ChunkError::Server("not yet".into()))
    }
}
