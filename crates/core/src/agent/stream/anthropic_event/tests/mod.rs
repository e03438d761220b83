//! The Anthropic reader against hand-written events: errors busy or not, blocks that
//! contradict themselves, thinking, redacted thinking, text and calls in one reply, the
//! server's own blocks, refusals, a whole message and the stop that ends the reply. The
//! recorded provider samples are read in `samples`.

use super::*;
use crate::agent::stream::AssembledReply;
use serde_json::json;

mod samples;

/// What one reply showed, piece by piece.
#[derive(Debug, Default)]
struct Shown {
    text: String,
    reasoning: String,
    refusal: String,
}

fn push_all(a: &mut Assembler, events: &[Value]) -> (Shown, Result<(), ChunkError>) {
    let mut shown = Shown::default();
    for e in events {
        let r = a.push_anthropic(&e.to_string(), &mut |d| match d {
            StreamDelta::Text(t) => shown.text.push_str(t),
            StreamDelta::Reasoning(t) => shown.reasoning.push_str(t),
            StreamDelta::Refusal(t) => shown.refusal.push_str(t),
            StreamDelta::Flush => {}
        });
        if r.is_err() {
            return (shown, r);
        }
    }
    (shown, Ok(()))
}

fn start(index: u64, block: Value) -> Value {
    json!({"type": "content_block_start", "index": index, "content_block": block})
}

fn delta(index: u64, delta: Value) -> Value {
    json!({"type": "content_block_delta", "index": index, "delta": delta})
}

fn stop(index: u64) -> Value {
    json!({"type": "content_block_stop", "index": index})
}

fn end(reason: &str) -> [Value; 2] {
    [
        json!({"type": "message_delta", "delta": {"stop_reason": reason}, "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ]
}

#[test]
fn error_events_busy_or_not() {
    for (kind, busy) in [
        ("overloaded_error", true),
        ("rate_limit_error", true),
        ("api_error", true),
        ("invalid_request_error", false),
        ("authentication_error", false),
    ] {
        let mut a = Assembler::new();
        let event = json!({"type": "error", "error": {"type": kind, "message": "Nope"}});
        let err = a
            .push_anthropic(&format!("{event}     "), &mut |_| {})
            .unwrap_err();
        assert_eq!(matches!(err, ChunkError::Busy(_)), busy, "{kind}: {err:?}");
        assert_eq!(err.to_string(), format!("Nope ({kind})"));
        assert!(busy || matches!(err, ChunkError::Server(_)));
    }
    // A message that names its type already does not name it twice; one without a type
    // is said as it came.
    let mut a = Assembler::new();
    let event =
        json!({"type": "error", "error": {"type": "api_error", "message": "api_error: down"}});
    let err = a
        .push_anthropic(&event.to_string(), &mut |_| {})
        .unwrap_err();
    assert_eq!(err, ChunkError::Busy("api_error: down".into()));
    let event = json!({"type": "error", "error": {"message": "Odd"}});
    let err = a
        .push_anthropic(&event.to_string(), &mut |_| {})
        .unwrap_err();
    assert_eq!(err, ChunkError::Server("Odd".into()));
    let mut a = Assembler::new();
    assert!(matches!(
        a.push_anthropic("{not json", &mut |_| {}),
        Err(ChunkError::Malformed { .. })
    ));
    for odd in ["[1,2]", "\"ping\"", "{\"no\":\"type\"}", "7"] {
        assert!(matches!(
            a.push_anthropic(odd, &mut |_| {}),
            Err(ChunkError::Unexpected { .. })
        ));
    }
    // Events it does not know, and pings, are nothing.
    assert_eq!(a.push_anthropic(r#"{"type":"ping"}"#, &mut |_| {}), Ok(()));
    assert_eq!(
        a.push_anthropic(r#"{"type":"new_thing"}"#, &mut |_| {}),
        Ok(())
    );
    assert!(!a.started());
}

#[test]
fn blocks_that_contradict_themselves_are_errors() {
    let mut a = Assembler::new();
    let (_, r) = push_all(
        &mut a,
        &[
            start(0, json!({"type": "text", "text": ""})),
            start(0, json!({"type": "text"})),
        ],
    );
    assert!(matches!(r, Err(ChunkError::Unexpected { .. })), "{r:?}");
    let mut a = Assembler::new();
    let (_, r) = push_all(
        &mut a,
        &[start(0, json!({"type": "tool_use", "name": "f"}))],
    );
    assert!(matches!(r, Err(ChunkError::Unexpected { .. })), "{r:?}");
    let mut a = Assembler::new();
    let (_, r) = push_all(
        &mut a,
        &[json!({"type": "content_block_delta", "delta": {}})],
    );
    assert!(matches!(r, Err(ChunkError::Unexpected { .. })), "{r:?}");
    // A delta for a block never started is ignored.
    let mut a = Assembler::new();
    let (shown, r) = push_all(
        &mut a,
        &[delta(5, json!({"type": "text_delta", "text": "x"}))],
    );
    assert_eq!((shown.text.as_str(), r), ("", Ok(())));
}

/// Two thinking blocks (one only a signature), a redacted one, text, two calls (one
/// whose arguments come only in its start block): shown, kept and called as they came.
#[test]
fn thinking_redacted_text_and_calls_in_one_reply() {
    let mut a = Assembler::new();
    let mut events = vec![
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 10, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 5, "output_tokens": 1}}}),
        start(
            0,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
        ),
        delta(0, json!({"type": "thinking_delta", "thinking": "first"})),
        delta(0, json!({"type": "signature_delta", "signature": "S1"})),
        stop(0),
        start(1, json!({"type": "redacted_thinking", "data": "ENC"})),
        stop(1),
        start(
            2,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
        ),
        delta(2, json!({"type": "signature_delta", "signature": "S2"})),
        stop(2),
        start(
            3,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
        ),
        delta(3, json!({"type": "thinking_delta", "thinking": "second"})),
        delta(3, json!({"type": "signature_delta", "signature": "S3"})),
        stop(3),
        start(4, json!({"type": "text", "text": ""})),
        delta(4, json!({"type": "text_delta", "text": "Let me"})),
        delta(4, json!({"type": "text_delta", "text": " look."})),
        stop(4),
        start(
            5,
            json!({"type": "tool_use", "id": "toolu_a", "name": "bash", "input": {}}),
        ),
        delta(5, json!({"type": "input_json_delta", "partial_json": ""})),
        delta(
            5,
            json!({"type": "input_json_delta", "partial_json": "{\"command\":"}),
        ),
        delta(
            5,
            json!({"type": "input_json_delta", "partial_json": " \"ls\"}"}),
        ),
        stop(5),
        start(
            6,
            json!({"type": "tool_use", "id": "toolu_b", "name": "read", "input": {"path": "x"}}),
        ),
        stop(6),
    ];
    events.extend(end("tool_use"));
    let (shown, r) = push_all(&mut a, &events[..events.len() - 1]);
    assert_eq!(r, Ok(()));
    assert_eq!(a.finish_reason(), None, "no finish before message_stop");
    push_all(&mut a, &events[events.len() - 1..]).1.unwrap();
    let reply = a.finish();
    assert_eq!(shown.reasoning, "first\n\nsecond");
    assert_eq!(reply.reasoning, "first\n\nsecond");
    assert_eq!(shown.text, "Let me look.");
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(
        reply.tool_calls,
        [
            crate::conversation::ToolCall::new("toolu_a", "bash", "{\"command\": \"ls\"}"),
            crate::conversation::ToolCall::new("toolu_b", "read", "{\"path\":\"x\"}"),
        ]
    );
    assert_eq!(
        reply.reasoning_details,
        [
            json!({"type": "thinking", "thinking": "first", "signature": "S1"}),
            json!({"type": "redacted_thinking", "data": "ENC"}),
            json!({"type": "thinking", "thinking": "", "signature": "S2"}),
            json!({"type": "thinking", "thinking": "second", "signature": "S3"}),
            json!({"type": "text"}),
            json!({"type": "tool_use", "id": "toolu_a"}),
            json!({"type": "tool_use", "id": "toolu_b"}),
        ]
    );
    let state = reply.reasoning_state().unwrap();
    assert_eq!(state.api, Some(Api::Anthropic));
    // message_delta's usage had only the output: the input side stays message_start's.
    let u = reply.usage.unwrap();
    assert_eq!(
        (u.prompt_tokens, u.completion_tokens, u.total_tokens),
        (115, 9, 124)
    );
    assert_eq!(
        (u.cached_tokens, u.cache_write_tokens),
        (Some(100), Some(5))
    );
}

/// A block the server ran keeps the input its deltas built and is never a call; a
/// citation is nothing to show.
#[test]
fn server_blocks_are_kept_whole_and_never_called() {
    let mut a = Assembler::new();
    let mut events = vec![
        start(
            0,
            json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}),
        ),
        delta(
            0,
            json!({"type": "input_json_delta", "partial_json": "{\"query\": "}),
        ),
        delta(
            0,
            json!({"type": "input_json_delta", "partial_json": "\"tokyo\"}"}),
        ),
        stop(0),
        start(
            1,
            json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [{"type": "web_search_result", "encrypted_content": "E"}]}),
        ),
        stop(1),
        start(2, json!({"type": "text", "text": "", "citations": []})),
        delta(
            2,
            json!({"type": "citations_delta", "citation": {"cited_text": "c"}}),
        ),
        delta(2, json!({"type": "text_delta", "text": "14M"})),
        stop(2),
    ];
    events.extend(end("end_turn"));
    push_all(&mut a, &events).1.unwrap();
    let reply = a.finish();
    assert!(reply.tool_calls.is_empty());
    assert_eq!(reply.text, "14M");
    assert_eq!(
        reply.reasoning_details[0],
        json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "tokyo"}})
    );
    assert_eq!(
        reply.reasoning_details[1]["content"][0]["encrypted_content"],
        "E"
    );
    assert_eq!(reply.reasoning_details[2], json!({"type": "text"}));
}

/// A refusal: the explanation when there is one; else the text that streamed (not
/// shown twice); else the bare word.
#[test]
fn refusals_with_and_without_an_explanation() {
    let refusal_end = |details: Value| {
        vec![
            json!({"type": "message_delta", "delta": {"stop_reason": "refusal", "stop_details": details}}),
            json!({"type": "message_stop"}),
        ]
    };
    let mut a = Assembler::new();
    let (shown, _) = push_all(&mut a, &refusal_end(json!({"explanation": "Not that."})));
    let reply = a.finish();
    assert_eq!(
        (shown.refusal.as_str(), reply.refusal.as_str()),
        ("Not that.", "Not that.")
    );
    assert_eq!(reply.finish_reason.as_deref(), Some("content_filter"));

    let mut a = Assembler::new();
    let mut events = vec![
        start(0, json!({"type": "text", "text": ""})),
        delta(0, json!({"type": "text_delta", "text": "I can't help."})),
    ];
    events.extend(refusal_end(json!(null)));
    let (shown, _) = push_all(&mut a, &events);
    let reply = a.finish();
    assert_eq!(shown.text, "I can't help.");
    assert_eq!(shown.refusal, "", "the text is not shown a second time");
    assert_eq!(
        (reply.text.as_str(), reply.refusal.as_str()),
        ("I can't help.", "I can't help.")
    );

    let mut a = Assembler::new();
    let (shown, _) = push_all(&mut a, &refusal_end(json!({})));
    assert_eq!(shown.refusal, "refusal");
    assert_eq!(a.finish().refusal, "refusal");
}

/// A whole message (a server that did not stream): blocks, calls from `input`, usage,
/// finish.
#[test]
fn a_whole_message_reads_like_its_stream() {
    let mut a = Assembler::new();
    let message = json!({"type": "message", "role": "assistant", "content": [
        {"type": "thinking", "thinking": "hm", "signature": "SIG"},
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "toolu_x", "name": "read", "input": {"path": "a"}}
    ], "stop_reason": "tool_use", "usage": {"input_tokens": 3, "output_tokens": 4}});
    let (shown, r) = push_all(&mut a, &[message]);
    r.unwrap();
    let reply = a.finish();
    assert_eq!(
        (shown.reasoning.as_str(), shown.text.as_str()),
        ("hm", "Reading.")
    );
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(reply.tool_calls[0].function.arguments, "{\"path\":\"a\"}");
    assert_eq!(
        reply.reasoning_details,
        [
            json!({"type": "thinking", "thinking": "hm", "signature": "SIG"}),
            json!({"type": "text"}),
            json!({"type": "tool_use", "id": "toolu_x"}),
        ]
    );
    assert_eq!(
        reply.usage.unwrap().cached_tokens,
        None,
        "the server did not say"
    );
}

/// `message_stop` ends the reply: a delta, a block, an error or a second stop after it
/// changes nothing. Each stop reason is said in rein's words.
#[test]
fn the_reply_ends_at_message_stop_and_says_why_in_reins_words() {
    for (stop_reason, reason) in [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("tool_use", "tool_calls"),
        ("max_tokens", "length"),
        ("refusal", "content_filter"),
    ] {
        let mut a = Assembler::new();
        let mut events = vec![
            start(0, json!({"type": "text", "text": ""})),
            delta(0, json!({"type": "text_delta", "text": "kept"})),
            stop(0),
        ];
        events.extend(end(stop_reason));
        events.extend([
            delta(0, json!({"type": "text_delta", "text": "LATE"})),
            start(
                1,
                json!({"type": "tool_use", "id": "toolu_9", "name": "bash", "input": {}}),
            ),
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "late"}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}}),
            json!({"type": "message_stop"}),
        ]);
        let (shown, result) = push_all(&mut a, &events);
        assert_eq!(result, Ok(()), "{stop_reason}");
        let reply = a.finish();
        assert!(!shown.text.contains("LATE"), "{stop_reason}");
        assert!(!reply.text.contains("LATE"), "{stop_reason}");
        assert!(reply.tool_calls.is_empty(), "{stop_reason}");
        assert_eq!(
            reply.finish_reason.as_deref(),
            Some(reason),
            "{stop_reason}"
        );
    }
}

/// A call whose arguments come only in its start block's `input` has them once its block
/// ends, before the reply does: they count as held, and the reply made progress.
#[test]
fn a_call_takes_its_start_input_when_its_block_ends() {
    let mut a = Assembler::new();
    let events = [
        start(
            0,
            json!({"type": "tool_use", "id": "toolu_a", "name": "read", "input": {"path": "x"}}),
        ),
        stop(0),
    ];
    push_all(&mut a, &events[..1]).1.unwrap();
    let (held, progress) = (a.held(), a.progress());
    push_all(&mut a, &events[1..]).1.unwrap();
    assert_eq!(a.held(), held + r#"{"path":"x"}"#.len());
    assert!(a.progress() > progress);
    // The end of the reply adds them no second time.
    let held = a.held();
    push_all(&mut a, &end("tool_use")).1.unwrap();
    assert_eq!(a.held(), held);
    assert_eq!(
        a.finish().tool_calls,
        [crate::conversation::ToolCall::new(
            "toolu_a",
            "read",
            "{\"path\":\"x\"}"
        )]
    );
}

/// Content blocks are keyed by their `index`: with several calls open at once, each
/// argument piece and each start `input` goes to the call of its block, whatever block
/// started or ended last.
#[test]
fn calls_open_at_once_each_take_their_own_arguments() {
    let mut a = Assembler::new();
    let mut events = vec![
        start(
            0,
            json!({"type": "tool_use", "id": "toolu_a", "name": "read", "input": {"path": "x"}}),
        ),
        start(
            1,
            json!({"type": "tool_use", "id": "toolu_b", "name": "bash", "input": {}}),
        ),
        delta(
            1,
            json!({"type": "input_json_delta", "partial_json": "{\"command\":"}),
        ),
        start(
            2,
            json!({"type": "tool_use", "id": "toolu_c", "name": "grep", "input": {}}),
        ),
        delta(
            2,
            json!({"type": "input_json_delta", "partial_json": "{\"pattern\":\"y\"}"}),
        ),
        delta(
            1,
            json!({"type": "input_json_delta", "partial_json": "\"ls\"}"}),
        ),
        stop(2),
        stop(1),
        stop(0),
    ];
    events.extend(end("tool_use"));
    push_all(&mut a, &events).1.unwrap();
    assert_eq!(
        a.finish().tool_calls,
        [
            crate::conversation::ToolCall::new("toolu_a", "read", "{\"path\":\"x\"}"),
            crate::conversation::ToolCall::new("toolu_b", "bash", "{\"command\":\"ls\"}"),
            crate::conversation::ToolCall::new("toolu_c", "grep", "{\"pattern\":\"y\"}"),
        ]
    );
}

/// A delta that does not fit its block's kind changes nothing: a redacted thinking
/// block goes back to the server exactly as it came, and text gets no thinking.
#[test]
fn a_delta_of_another_kind_leaves_its_block_alone() {
    let mut a = Assembler::new();
    let mut events = vec![
        start(0, json!({"type": "redacted_thinking", "data": "ENC"})),
        delta(0, json!({"type": "input_json_delta", "partial_json": "{}"})),
        delta(0, json!({"type": "text_delta", "text": "no"})),
        stop(0),
        start(1, json!({"type": "text", "text": ""})),
        delta(1, json!({"type": "thinking_delta", "thinking": "no"})),
        delta(1, json!({"type": "text_delta", "text": "yes"})),
        stop(1),
    ];
    events.extend(end("end_turn"));
    let (shown, r) = push_all(&mut a, &events);
    r.unwrap();
    assert_eq!((shown.text.as_str(), shown.reasoning.as_str()), ("yes", ""));
    assert_eq!(
        a.finish().reasoning_details,
        [
            json!({"type": "redacted_thinking", "data": "ENC"}),
            json!({"type": "text"}),
        ]
    );
}

/// A server that slices text by UTF-16 units can end one `text_delta` with an emoji's
/// high half and start the next with its low half: the two come out as the one emoji.
#[test]
fn an_emoji_split_across_two_deltas_comes_out_whole() {
    let mut a = Assembler::new();
    let mut shown = String::new();
    let mut on = |d: StreamDelta<'_>| {
        if let StreamDelta::Text(t) = d {
            shown.push_str(t);
        }
    };
    for data in [
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi \ud83d"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\ude00 there"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_stop"}"#,
    ] {
        a.push_anthropic(data, &mut on).unwrap();
    }
    assert_eq!(shown, "hi \u{1F600} there");
    assert_eq!(a.finish().text, "hi \u{1F600} there");
}
