//! The Responses reader on streams that carry only part of the usual events: texts,
//! refusals, summaries and arguments that come only as `.done` events, calls whose id or
//! name comes late or that have no `output_index`, items that never end, a surrogate
//! pair split across events, and the usage total and error codes as servers write them.

use super::*;

/// A `.done` event that follows no delta shows its text, refusal or summary even when
/// the item never ends; a summary that streamed shows no `.done` part; a call's
/// `.done` arguments win over its deltas.
#[test]
fn done_events_alone_are_shown_and_kept() {
    let ev = |t: &str, rest: Value| {
        let mut v = rest;
        v["type"] = json!(t);
        v
    };
    let (r, reply, shown) = feed(&[
        ev(
            "response.output_text.done",
            json!({"output_index":0,"text":"hi"}),
        ),
        ev(
            "response.refusal.delta",
            json!({"output_index":1,"delta":"no"}),
        ),
        ev(
            "response.refusal.done",
            json!({"output_index":2,"refusal":"never"}),
        ),
        ev(
            "response.reasoning_summary_text.done",
            json!({"output_index":3,"summary_index":0,"text":"sum"}),
        ),
        // A summary that streamed: its other part's `.done` is not shown.
        ev(
            "response.reasoning_summary_text.delta",
            json!({"output_index":4,"summary_index":0,"delta":"x"}),
        ),
        ev(
            "response.reasoning_summary_text.done",
            json!({"output_index":4,"summary_index":1,"text":"y"}),
        ),
        ev(
            "response.output_item.added",
            json!({"output_index":5,"item":{"type":"function_call","call_id":"call_1","name":"bash","arguments":""}}),
        ),
        ev(
            "response.function_call_arguments.delta",
            json!({"output_index":5,"delta":"{\"a\":"}),
        ),
        ev(
            "response.function_call_arguments.done",
            json!({"output_index":5,"arguments":"{\"a\":1}"}),
        ),
        ev(
            "response.completed",
            json!({"response":{"status":"completed"}}),
        ),
    ]);
    assert_eq!(r, Ok(()));
    assert_eq!(shown, "hi{no}{never}[sum][\n\n][x]");
    assert_eq!(reply.text, "hi");
    assert_eq!(reply.refusal, "nonever");
    assert_eq!(
        reply.tool_calls,
        [ToolCall::new("call_1", "bash", "{\"a\":1}")]
    );
}

/// An emoji's two UTF-16 halves in two events' strings are joined into it.
#[test]
fn a_surrogate_pair_split_across_events_is_joined() {
    let mut a = Assembler::new();
    let mut shown = String::new();
    for data in [
        r#"{"type":"response.output_text.delta","output_index":0,"delta":"a \ud83d"}"#,
        r#"{"type":"response.output_text.delta","output_index":0,"delta":"\ude00 b"}"#,
    ] {
        let r = a.push_responses(data, &mut |d| {
            if let StreamDelta::Text(t) = d {
                shown.push_str(t);
            }
        });
        assert_eq!(r, Ok(()), "{data}");
    }
    assert_eq!(shown, "a \u{1F600} b");
}

/// A call is registered when its item is added: the reply has started and its name
/// counts among the bytes held. A message item added is no call.
#[test]
fn a_call_is_registered_when_its_item_is_added() {
    let added = |item: Value| {
        let mut a = Assembler::new();
        let event = json!({"type":"response.output_item.added","output_index":0,"item":item});
        assert_eq!(a.push_responses(&event.to_string(), &mut |_| {}), Ok(()));
        a
    };
    let call = |name: &str| {
        added(json!({"type":"function_call","call_id":"call_1","name":name,"arguments":""}))
    };
    let (short, long) = (call("bash"), call("a_much_longer_name"));
    assert!(short.started() && long.started());
    assert_eq!(
        long.held() - short.held(),
        "a_much_longer_name".len() - "bash".len()
    );
    let message = added(json!({"type":"message","id":"msg_1","content":[]}));
    assert!(!message.started());
}

/// A call's id or name that comes only with its `.done` item is the call's, and a call
/// without `output_index` is one call all the same.
#[test]
fn a_calls_id_and_name_may_come_late_and_its_index_not_at_all() {
    let added = |index: Option<u64>, item: Value| {
        let mut e = json!({"type":"response.output_item.added","item":item});
        if let Some(i) = index {
            e["output_index"] = json!(i);
        }
        e
    };
    let done =
        |item: Value| json!({"type":"response.output_item.done","output_index":0,"item":item});
    let completed = json!({"type":"response.completed","response":{"status":"completed"}});
    let whole = json!({"type":"function_call","call_id":"call_1","name":"bash","arguments":"{}"});
    for first in [
        json!({"type":"function_call","name":"bash","arguments":""}),
        json!({"type":"function_call","call_id":"call_1","arguments":""}),
    ] {
        let (r, reply, _) = feed(&[added(Some(0), first.clone()), done(whole.clone())]);
        assert_eq!(r, Ok(()));
        assert_eq!(
            reply.tool_calls,
            [ToolCall::new("call_1", "bash", "{}")],
            "{first}"
        );
    }
    let (_, reply, _) = feed(&[
        added(
            None,
            json!({"type":"function_call","call_id":"call_1","name":"bash"}),
        ),
        json!({"type":"response.function_call_arguments.delta","delta":"{}"}),
        completed,
    ]);
    assert_eq!(reply.tool_calls, [ToolCall::new("call_1", "bash", "{}")]);
}

/// An item that never ends is kept as it was added: a reasoning item whole (without
/// its id), an item without a type as an unknown one.
#[test]
fn items_that_never_end_are_kept_as_added() {
    let (r, reply, _) = feed(&[
        json!({"type":"response.output_item.added","output_index":0,
            "item":{"type":"reasoning","id":"rs_1","encrypted_content":"E","summary":[]}}),
        json!({"type":"response.output_item.added","output_index":1,"item":{"id":"x_1"}}),
        json!({"type":"response.completed","response":{"status":"completed"}}),
    ]);
    assert_eq!(r, Ok(()));
    assert_eq!(
        reply.reasoning_details,
        [
            json!({"type":"reasoning","encrypted_content":"E","summary":[]}),
            json!({"type":"unknown"}),
        ]
    );
}

/// The usage's total is the server's, unless it is zero (then input and output added).
#[test]
fn the_usage_total_is_the_servers_unless_zero() {
    for (total, want) in [(9, 9), (0, 7)] {
        let (_, reply, _) = feed(&[
            json!({"type":"response.completed","response":{"status":"completed",
            "usage":{"input_tokens":3,"output_tokens":4,"total_tokens":total}}}),
        ]);
        assert_eq!(reply.usage.map(|u| u.total_tokens), Some(want), "{total}");
    }
}

/// An error's code is added to its message only when the message does not already say
/// it.
#[test]
fn an_error_code_the_message_says_is_not_repeated() {
    let (r, _, _) =
        feed(&[json!({"type":"error","code":"server_error","message":"server_error: try again"})]);
    assert_eq!(r, Err(ChunkError::Busy("server_error: try again".into())));
}
