//! What the Responses reader keeps between events, held by the
//! [`Assembler`](crate::agent::stream::Assembler): the output items seen so far, each with
//! what was shown of it and what is still to come. Apart from the reader, so that the
//! assembler holds it without importing the reader that extends it.

/// What the reader remembers between events: the output items seen so far.
#[derive(Debug, Default)]
pub(in crate::agent::stream) struct Progress {
    pub(super) items: Vec<Item>,
    /// The terminal event (or a whole response) ended the reply: later events are not
    /// read.
    pub(super) ended: bool,
}

/// The kind of an output item, as far as rein cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Message,
    Reasoning,
    FunctionCall,
    /// Anything else (hosted tools): recorded, never a tool call.
    Other,
}

impl Kind {
    pub(super) fn of(kind: &str) -> Kind {
        match kind {
            "message" => Kind::Message,
            "reasoning" => Kind::Reasoning,
            "function_call" => Kind::FunctionCall,
            _ => Kind::Other,
        }
    }
}

/// One output item while it streams.
#[derive(Debug)]
pub(super) struct Item {
    /// The `output_index` it is keyed by (`None` when the server sent none).
    pub(super) output_index: Option<u64>,
    pub(super) kind: Kind,
    /// Its place among the native items pushed ([`Assembler::push_item`](crate::agent::stream::Assembler::push_item)).
    pub(super) slot: usize,
    /// Text was shown for it (deltas, or a `.done` text).
    pub(super) text_shown: bool,
    pub(super) refusal_shown: bool,
    /// A summary delta arrived: `.done` summaries are then not shown again.
    pub(super) summary_streamed: bool,
    /// The summary parts shown, by `summary_index`.
    pub(super) summary_parts: Vec<u64>,
    /// Raw reasoning text was shown for it.
    pub(super) reasoning_text_shown: bool,
    /// A function call's arguments as streamed, and the `.done` value.
    pub(super) arguments: String,
    pub(super) arguments_done: Option<String>,
    pub(super) call_id: Option<String>,
    pub(super) name: Option<String>,
    /// The call was registered with the assembler (at `.added`).
    pub(super) call_started: bool,
    /// The call's arguments went to the assembler (the item is finished).
    pub(super) call_finished: bool,
    /// `response.output_item.done` (or the terminal event's copy) arrived.
    pub(super) finished: bool,
}
