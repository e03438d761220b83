//! Why a reply ended, in the words rein documents for every API (the headless JSONL
//! `finish_reason`): chat completions' words, which the native APIs' readers map theirs
//! to. A word no API documents passes as the server sent it.

/// The model ended its reply.
pub const STOP: &str = "stop";
/// The model asked for tool calls.
pub const TOOL_CALLS: &str = "tool_calls";
/// The reply reached the model's output token limit (or the context window's end).
pub const LENGTH: &str = "length";
/// The provider's content filter, or the model's own refusal, stopped the reply.
pub const CONTENT_FILTER: &str = "content_filter";

/// Anthropic's `stop_reason`, in rein's words. `pause_turn` (the server paused a long
/// turn of its own tools) ends rein's turn like `end_turn`.
pub(crate) fn anthropic(stop_reason: &str) -> String {
    match stop_reason {
        "end_turn" | "stop_sequence" | "pause_turn" => STOP,
        "tool_use" => TOOL_CALLS,
        "max_tokens" | "model_context_window_exceeded" => LENGTH,
        "refusal" => CONTENT_FILTER,
        other => other,
    }
    .to_string()
}

/// The Responses API's terminal `status`, in rein's words: a completed reply that called
/// tools (`called`) ends in tool calls; an incomplete one says why in
/// `incomplete_details.reason` (`max_output_tokens`, `content_filter`; none said is the
/// token limit).
pub(crate) fn responses(status: &str, incomplete_reason: Option<&str>, called: bool) -> String {
    match (status, incomplete_reason) {
        ("completed", _) if called => TOOL_CALLS,
        ("completed", _) => STOP,
        ("incomplete", None | Some("max_output_tokens")) => LENGTH,
        ("incomplete", Some("content_filter")) => CONTENT_FILTER,
        ("incomplete", Some(other)) => other,
        (other, _) => other,
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_native_word_has_one_of_rein_s() {
        let documented = [STOP, TOOL_CALLS, LENGTH, CONTENT_FILTER];
        for word in [
            "end_turn",
            "stop_sequence",
            "pause_turn",
            "tool_use",
            "max_tokens",
            "model_context_window_exceeded",
            "refusal",
        ] {
            assert!(documented.contains(&anthropic(word).as_str()), "{word}");
        }
        assert_eq!(anthropic("tool_use"), TOOL_CALLS);
        assert_eq!(anthropic("max_tokens"), LENGTH);
        assert_eq!(anthropic("refusal"), CONTENT_FILTER);
        assert_eq!(anthropic("something_new"), "something_new");
        assert_eq!(responses("completed", None, false), STOP);
        assert_eq!(responses("completed", None, true), TOOL_CALLS);
        assert_eq!(responses("incomplete", None, false), LENGTH);
        assert_eq!(
            responses("incomplete", Some("max_output_tokens"), true),
            LENGTH
        );
        assert_eq!(
            responses("incomplete", Some("content_filter"), false),
            CONTENT_FILTER
        );
    }
}
