//! The chat-completions reader against hand-written chunks: text, reasoning, tool
//! calls in pieces, errors, typed content parts, cached tokens, repeated keys and fields
//! of odd types.

use super::*;
use crate::agent::stream::AssembledReply;
use crate::conversation::ToolCall;
use serde_json::json;

fn feed(chunks: &[serde_json::Value]) -> (AssembledReply, String) {
    let mut a = Assembler::new();
    let mut seen = String::new();
    for c in chunks {
        a.push(&c.to_string(), &mut |d| match d {
            StreamDelta::Text(t) => seen.push_str(t),
            StreamDelta::Refusal(t) => {
                seen.push_str("{refusal:");
                seen.push_str(t);
                seen.push('}');
            }
            StreamDelta::Reasoning(r) => {
                seen.push('[');
                seen.push_str(r);
                seen.push(']');
            }
            // The assembler never sends one: the client does, between reads.
            StreamDelta::Flush => seen.push_str("{flush}"),
        })
        .unwrap();
    }
    (a.finish(), seen)
}

fn delta(d: serde_json::Value) -> serde_json::Value {
    json!({"choices":[{"index":0,"delta":d,"finish_reason":null}]})
}

#[test]
fn text_reasoning_finish_and_usage() {
    let (r, seen) = feed(&[
        delta(json!({"role":"assistant","content":""})),
        delta(json!({"reasoning_content":"think"})),
        delta(json!({"reasoning":"more"})),
        delta(json!({"content":"Hel"})),
        delta(json!({"content":"lo"})),
        json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}),
        json!({"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13},"timings":{}}),
    ]);
    assert_eq!(r.text, "Hello");
    assert_eq!(r.reasoning, "thinkmore");
    assert_eq!(seen, "[think][more]Hello");
    assert_eq!(r.finish_reason.as_deref(), Some("stop"));
    assert_eq!(r.usage.unwrap().total_tokens, 13);
    assert!(!r.usage.unwrap().estimated);
}

#[test]
fn tool_calls_by_index_in_pieces() {
    let (r, _) = feed(&[
        delta(
            json!({"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"bash","arguments":""}}]}),
        ),
        delta(json!({"tool_calls":[{"index":0,"function":{"arguments":"{\"comm"}}]})),
        delta(
            json!({"tool_calls":[{"index":1,"id":"b","function":{"name":"read_file","arguments":"{\"path\":"}}]}),
        ),
        delta(json!({"tool_calls":[{"index":0,"function":{"arguments":"and\":\"ls\"}"}}]})),
        delta(json!({"tool_calls":[{"index":1,"function":{"arguments":"\"x\"}"}}]})),
    ]);
    assert_eq!(r.tool_calls.len(), 2);
    assert_eq!(
        r.tool_calls[0],
        ToolCall::new("a", "bash", "{\"command\":\"ls\"}")
    );
    assert_eq!(
        r.tool_calls[1],
        ToolCall::new("b", "read_file", "{\"path\":\"x\"}")
    );
}

#[test]
fn calls_all_at_index_zero_with_distinct_ids_and_object_arguments() {
    let (r, _) = feed(&[
        delta(
            json!({"tool_calls":[{"index":0,"id":"a","function":{"name":"bash","arguments":{"command":"ls"}}}]}),
        ),
        delta(
            json!({"tool_calls":[{"index":0,"id":"b","function":{"name":"bash","arguments":"{}"}}]}),
        ),
    ]);
    assert_eq!(r.tool_calls.len(), 2);
    assert_eq!(r.tool_calls[0].function.arguments, "{\"command\":\"ls\"}");
    assert_eq!(r.tool_calls[1].id, "b");
}

#[test]
fn ids_repeated_and_missing_index_and_missing_id() {
    let (r, _) = feed(&[
        delta(
            json!({"tool_calls":[{"id":"x1","function":{"name":"bash","arguments":"{\"command\""}}]}),
        ),
        delta(json!({"tool_calls":[{"id":"x1","function":{"arguments":":\"pwd\"}"}}]})),
        delta(json!({"tool_calls":[{"index":3,"function":{"name":"read_file","arguments":"{}"}}]})),
    ]);
    assert_eq!(
        r.tool_calls[0],
        ToolCall::new("x1", "bash", "{\"command\":\"pwd\"}")
    );
    assert_eq!(r.tool_calls[1].function.name, "read_file");
    assert!(r.tool_calls[1].id.starts_with("call_rein_"));
}

#[test]
fn error_object_in_stream_and_malformed_chunk() {
    let mut a = Assembler::new();
    let err = a
        .push(
            r#"{"error":{"message":"model overloaded","code":503}}"#,
            &mut |_| {},
        )
        .unwrap_err();
    assert_eq!(err, ChunkError::Server("model overloaded".into()));
    let err = a.push("{not json", &mut |_| {}).unwrap_err();
    assert!(matches!(err, ChunkError::Malformed { .. }));
}

#[test]
fn whole_message_from_a_non_streaming_server() {
    let (r, _) = feed(&[
        json!({"choices":[{"index":0,"message":{"role":"assistant","content":"hi","tool_calls":[{"id":"q","type":"function","function":{"name":"bash","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}),
    ]);
    assert_eq!(r.text, "hi");
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.usage.unwrap().total_tokens, 2);
}

#[test]
fn typed_content_parts_refusals_and_provider_state() {
    let (r, seen) = feed(&[
        delta(json!({"content":[{"type":"thinking","thinking":[{"type":"text","text":"hm"}]}]})),
        delta(json!({"content":[{"type":"text","text":"A"}, "B"]})),
        delta(json!({"refusal":"no"})),
    ]);
    assert_eq!((r.reasoning.as_str(), r.text.as_str()), ("hm", "AB"));
    assert_eq!(
        r.reasoning_field, None,
        "thinking parts are not a wire field"
    );
    assert_eq!(r.refusal, "no");
    assert_eq!(seen, "[hm]AB{refusal:no}");

    // OpenRouter: `reasoning` and `reasoning_details` carry the same text once.
    let piece = |text: &str| {
        delta(
            json!({"reasoning": text, "reasoning_details":[{"type":"reasoning.text","text":text,"format":"f","index":0}]}),
        )
    };
    let (r, seen) = feed(&[
        piece("one "),
        piece("two"),
        delta(json!({"reasoning_details":[{"type":"reasoning.text","signature":"SIG","index":0}]})),
        delta(json!({"reasoning_details":[{"type":"reasoning.encrypted","data":"ENC","index":1}]})),
        delta(
            json!({"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":{"google":{"thought_signature":"T"}}}]}),
        ),
    ]);
    assert_eq!(seen, "[one ][two]");
    assert_eq!(r.reasoning_field.as_deref(), Some("reasoning"));
    assert_eq!(
        r.reasoning_details,
        vec![
            json!({"type":"reasoning.text","text":"one two","format":"f","index":0,"signature":"SIG"}),
            json!({"type":"reasoning.encrypted","data":"ENC","index":1}),
        ]
    );
    assert_eq!(
        r.tool_calls[0].extra["extra_content"]["google"]["thought_signature"],
        "T"
    );
    assert!(!r.tool_calls[0].extra.contains_key("type"));
    // Details alone (no reasoning string) are shown as reasoning.
    let (_, seen) = feed(&[delta(
        json!({"reasoning_details":[{"type":"reasoning.text","text":"only","index":0}]}),
    )]);
    assert_eq!(seen, "[only]");
}

#[test]
fn cached_prompt_tokens_wherever_the_server_reports_them() {
    let usage = |u: serde_json::Value, extra: serde_json::Value| {
        let mut chunk = json!({"choices":[], "usage": u});
        if let serde_json::Value::Object(o) = extra {
            chunk.as_object_mut().unwrap().extend(o);
        }
        feed(&[chunk]).0.usage.unwrap().cached_tokens
    };
    let base = |k: &str, v: serde_json::Value| {
        let mut u = json!({"prompt_tokens":100,"completion_tokens":1});
        u[k] = v;
        u
    };
    assert_eq!(
        usage(
            base("prompt_tokens_details", json!({"cached_tokens":80})),
            json!({})
        ),
        Some(80)
    );
    assert_eq!(
        usage(base("prompt_cache_hit_tokens", json!(64)), json!({})),
        Some(64)
    );
    assert_eq!(
        usage(base("cache_read_input_tokens", json!(50)), json!({})),
        Some(50)
    );
    assert_eq!(
        usage(base("x", json!(0)), json!({"timings":{"cache_n":90}})),
        Some(90)
    );
    assert_eq!(usage(base("x", json!(0)), json!({})), None);
}

/// A server that reports more cached tokens than prompt tokens (seen from gateways
/// that count the cache across requests): the cached figure is cut to the prompt, so
/// the hit rate stays at most 100 % and the cost never counts a negative uncached part.
#[test]
fn cached_tokens_above_the_prompt_are_cut_to_the_prompt() {
    let reply = |chunk: serde_json::Value| feed(&[chunk]).0.usage.unwrap();
    for cached in [
        json!({"prompt_tokens":100,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":150}}),
        json!({"prompt_tokens":100,"completion_tokens":1,"prompt_cache_hit_tokens":101}),
        json!({"prompt_tokens":100,"completion_tokens":1,"cache_read_input_tokens":1000}),
    ] {
        let u = reply(json!({"choices":[], "usage": cached}));
        assert_eq!(u.cached_tokens, Some(100), "{u:?}");
        assert_eq!(u.hit_rate(), Some(1.0));
    }
    // llama.cpp's `timings.cache_n` likewise.
    let u = reply(
        json!({"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":1},"timings":{"cache_n":90}}),
    );
    assert_eq!(u.cached_tokens, Some(40));
    // No prompt figure at all: nothing of it can have been cached.
    let u = reply(
        json!({"choices":[],"usage":{"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":5}}}),
    );
    assert_eq!((u.prompt_tokens, u.cached_tokens), (0, Some(0)));
    let mut totals = crate::agent::usage::UsageTotals::default();
    totals.record(reply(json!({"choices":[], "usage": {"prompt_tokens":100,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":150}}})));
    assert_eq!(
        totals.cache_summary().as_deref(),
        Some("cache 100% · session 100%")
    );
}

#[test]
fn a_key_twice_in_one_object_takes_its_last_value() {
    let mut a = Assembler::new();
    let mut seen = String::new();
    let mut on = |d: StreamDelta<'_>| {
        if let StreamDelta::Text(t) = d {
            seen.push_str(t)
        }
    };
    a.push(
        r#"{"choices":[{"delta":{"content":"a","content":"b"},"index":0,"index":0}]}"#,
        &mut on,
    )
    .unwrap();
    a.push(
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","name":"g","arguments":"{}"}}]}}],"usage":{"prompt_tokens":1,"prompt_tokens":2}}"#,
        &mut on,
    )
    .unwrap();
    let r = a.finish();
    assert_eq!(seen, "b");
    assert_eq!(r.tool_calls[0].function.name, "g");
    assert_eq!(r.usage.unwrap().prompt_tokens, 2);
}

#[test]
fn text_with_escapes_and_fields_of_odd_types() {
    // Escaped text is decoded (it cannot borrow from the data); a `content` or
    // `reasoning` that is a number, a boolean or an object carries no text and is no
    // error, as when these fields were read as JSON values.
    let (r, seen) = feed(&[
        delta(json!({"content":"a\n\"é\"\t\u{1F980}"})),
        delta(json!({"reasoning":"why\n"})),
        delta(json!({"content":7,"reasoning":{"effort":"high"}})),
        delta(json!({"content":true,"reasoning":false})),
        delta(json!({"content":{"type":"text","text":"no"},"reasoning":[1]})),
        delta(json!({"content":3.5,"reasoning":-2})),
    ]);
    assert_eq!(seen, "a\n\"é\"\t\u{1F980}[why\n]");
    assert_eq!(r.text, "a\n\"é\"\t\u{1F980}");
    assert_eq!(r.reasoning, "why\n");
    // The same through the value path (a key twice), where strings arrive owned.
    let mut a = Assembler::new();
    let mut seen = String::new();
    a.push(
        r#"{"choices":[{"delta":{"content":"x","content":"y\u00e9","reasoning_content":"r"}}],"choices":[{"delta":{"content":"z","reasoning":"q"}}]}"#,
        &mut |d| match d {
            StreamDelta::Text(t) => seen.push_str(t),
            StreamDelta::Reasoning(t) => seen.push_str(&format!("[{t}]")),
            _ => {}
        },
    )
    .unwrap();
    assert_eq!(seen, "[q]z");
}

#[test]
fn which_field_carries_the_reasoning_when_one_is_empty() {
    // An empty `reasoning_content` beside a `reasoning` with text: the text is kept,
    // and its field is the one named.
    let (r, seen) = feed(&[delta(json!({"reasoning_content":"","reasoning":"think"}))]);
    assert_eq!((seen.as_str(), r.reasoning.as_str()), ("[think]", "think"));
    assert_eq!(r.reasoning_field.as_deref(), Some("reasoning"));
    // An empty `reasoning` first names no field: the field is the one with the text.
    let (r, _) = feed(&[
        delta(json!({"reasoning":""})),
        delta(json!({"reasoning_content":"x"})),
    ]);
    assert_eq!(r.reasoning_field.as_deref(), Some("reasoning_content"));
}

#[test]
fn a_refusal_part_in_typed_content_is_a_refusal() {
    let (r, seen) = feed(&[delta(
        json!({"content":[{"type":"refusal","refusal":"I can't"},{"type":"text","text":"."}]}),
    )]);
    assert_eq!(seen, "{refusal:I can't}.");
    assert_eq!(r.refusal, "I can't");
    assert_eq!(r.text, ".");
}

#[test]
fn calls_without_index_and_a_call_with_no_arguments() {
    // No index: the id names the call; a piece with neither continues the latest.
    let (r, _) = feed(&[
        delta(
            json!({"tool_calls":[{"id":"a","function":{"name":"bash","arguments":"{\"command\""}}]}),
        ),
        delta(json!({"tool_calls":[{"function":{"arguments":":\"ls\"}"}}]})),
        // A call with a name and no arguments at all is a call.
        delta(json!({"tool_calls":[{"id":"b","function":{"name":"list_models"}}]})),
    ]);
    assert_eq!(
        r.tool_calls,
        [
            ToolCall::new("a", "bash", "{\"command\":\"ls\"}"),
            ToolCall::new("b", "list_models", ""),
        ]
    );
}

#[test]
fn reasoning_details_merge_by_index_and_type_and_keep_their_signature() {
    let detail = |d: serde_json::Value| delta(json!({ "reasoning_details": [d] }));
    let (r, _) = feed(&[
        detail(json!({"type":"reasoning.text","text":"a","index":0,"signature":"S1"})),
        // Same type, another index: an entry of its own.
        detail(json!({"type":"reasoning.text","text":"b","index":1})),
        // Index 0 again: its text continues, a new signature replaces the old, an
        // empty one does not.
        detail(json!({"type":"reasoning.text","text":"c","index":0,"signature":"S2"})),
        detail(json!({"type":"reasoning.text","index":0,"signature":""})),
    ]);
    assert_eq!(
        r.reasoning_details,
        vec![
            json!({"type":"reasoning.text","text":"ac","index":0,"signature":"S2"}),
            json!({"type":"reasoning.text","text":"b","index":1}),
        ]
    );
}

#[test]
fn valid_json_of_another_shape_is_not_called_invalid_json() {
    let mut a = Assembler::new();
    let err = a.push(r#"{"choices":"nope"}"#, &mut |_| {}).unwrap_err();
    assert!(matches!(err, ChunkError::Unexpected { .. }), "{err}");
    assert!(!err.to_string().contains("not valid JSON"));
}

/// A server that slices text by UTF-16 units can end one chunk's `content` with an
/// emoji's high half and start the next with its low half: the two come out as the one
/// emoji, through the common chunk's reader and through serde alike.
#[test]
fn an_emoji_split_across_two_chunks_comes_out_whole() {
    let chunks = [
        r#"{"choices":[{"index":0,"delta":{"content":"hi \ud83d"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"\ude00 there"}}]}"#,
    ];
    let mut a = Assembler::new();
    let mut shown = String::new();
    for c in chunks {
        a.push(c, &mut |d| {
            if let StreamDelta::Text(t) = d {
                shown.push_str(t);
            }
        })
        .unwrap();
    }
    assert_eq!(shown, "hi \u{1F600} there");
    assert_eq!(a.finish().text, "hi \u{1F600} there");
    let mut a = Assembler::new();
    for c in chunks {
        a.push_typed(c, &mut |_| {}).unwrap();
    }
    assert_eq!(a.finish().text, "hi \u{1F600} there");
}
