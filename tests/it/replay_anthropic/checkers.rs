//! The checkers catching what they are for.

use serde_json::{json, Value};

use super::check::{echo_violations, request_violations};
use super::digest::sha256_16;

/// The checkers catch what they are for: each rule broken once in a request that is
/// otherwise fine.
#[test]
fn the_checkers_catch_what_they_are_for() {
    let good = json!({
        "model": "m", "max_tokens": 10, "stream": true,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "u"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "t", "signature": "s"},
                {"type": "tool_use", "id": "a", "input": {}},
                {"type": "tool_use", "id": "b", "input": {}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "a"},
                {"type": "tool_result", "tool_use_id": "b", "cache_control": {"type": "ephemeral"}}
            ]}
        ]
    });
    assert_eq!(request_violations(&good), Vec::<String>::new());
    let broken = |f: &dyn Fn(&mut Value), rule: &str| {
        let mut r = good.clone();
        f(&mut r);
        let v = request_violations(&r);
        assert!(v.iter().any(|p| p.starts_with(rule)), "{rule}: {v:?}");
    };
    broken(
        &|r| {
            r["messages"][2]["content"]
                .as_array_mut()
                .unwrap()
                .swap(0, 1)
        },
        "anthropic_tool_result_follows",
    );
    broken(
        &|r| {
            r["messages"][2]["content"]
                .as_array_mut()
                .unwrap()
                .insert(0, json!({"type": "text", "text": "x"}));
        },
        "anthropic_tool_result_follows",
    );
    broken(
        &|r| {
            r["messages"].as_array_mut().unwrap().pop();
        },
        "anthropic_tool_result_follows",
    );
    broken(
        &|r| {
            let marker = json!({"type": "ephemeral"});
            r["system"] =
                json!([1, 2, 3, 4]
                    .map(|_| json!({"type": "text", "text": "s", "cache_control": marker})));
        },
        "anthropic_cache_control_max4",
    );
    broken(
        &|r| r["messages"][0]["content"][0]["text"] = json!(""),
        "shape",
    );
    broken(&|r| r["messages"][0]["role"] = json!("assistant"), "shape");
    broken(
        &|r| r["messages"][1]["content"][0]["signature"] = json!(""),
        "anthropic_thinking_echo",
    );
    broken(
        &|r| r["messages"][1]["content"][0] = json!({"type": "redacted_thinking"}),
        "anthropic_thinking_echo",
    );
    broken(
        &|r| {
            r["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
            r["messages"][1]["content"]
                .as_array_mut()
                .unwrap()
                .remove(0);
        },
        "anthropic_thinking_echo",
    );

    let want = json!({
        "tool_calls": [{"id": "a"}],
        "echo": [
            {"type": "thinking", "thinking_len": 1, "signature_len": 1, "signature_sha256_16": sha256_16("s")},
            {"type": "tool_use", "id": "a"}
        ]
    });
    assert_eq!(
        echo_violations(&want, std::slice::from_ref(&good), 1),
        Vec::<String>::new()
    );
    let mut changed = good.clone();
    changed["messages"][1]["content"][0]["signature"] = json!("S");
    assert_eq!(echo_violations(&want, &[changed], 1).len(), 1);
    let mut dropped = good.clone();
    dropped["messages"][1]["content"]
        .as_array_mut()
        .unwrap()
        .remove(0);
    assert!(!echo_violations(&want, &[dropped.clone()], 1).is_empty());
    // Streamed without its signature: it must not go back, nor its message's other
    // thinking.
    let unsigned = json!({
        "tool_calls": [{"id": "a"}],
        "echo": [
            {"type": "redacted_thinking", "data_len": 1, "data_sha256_16": sha256_16("d")},
            {"type": "thinking", "thinking_len": 1, "signature_len": 0, "signature_sha256_16": null},
            {"type": "tool_use", "id": "a"}
        ]
    });
    assert_eq!(
        echo_violations(&unsigned, &[dropped], 1),
        Vec::<String>::new()
    );
    assert_eq!(echo_violations(&unsigned, &[good], 1).len(), 1);
}
