//! The index and the checkers themselves: a checker for every constraint, the in-repository
//! copy of the samples, and the checkers catching what they are for.

use std::path::Path;

use super::check::{echo_violations, order_violations};
use super::stream::{details_signatures, details_text, split_events, streamed_state};
use super::{index, ExpectedCall};

// ---------------------------------------------------------------------------------------
// The index itself
// ---------------------------------------------------------------------------------------

/// The rules the checkers above implement, by their names in the `constraints` table.
const CHECKED_RULES: &[&str] = &[
    "no_user_after_tool",
    "no_consecutive_user",
    "echo_reasoning_content",
    "echo_reasoning_details",
    "echo_extra_content",
];

#[test]
fn every_constraint_has_a_checker() {
    let table = &index().constraints;
    for (name, info) in table {
        assert!(
            CHECKED_RULES.contains(&name.as_str()),
            "no checker for the constraint {name:?} ({})",
            info.rule
        );
    }
    for sample in &index().samples {
        for name in &sample.constraints {
            assert!(
                table.contains_key(name),
                "{}: the constraint {name:?} is not in the table",
                sample.name
            );
        }
        let completed = sample.expect.outcome == "completed";
        assert_eq!(
            sample.expect.exit_code == 0,
            completed,
            "{}: exit code {} for outcome {:?}",
            sample.name,
            sample.expect.exit_code,
            sample.expect.outcome
        );
    }
}

/// The in-repository copy must hold what the shared set holds (when that is here to
/// compare with: on a fresh machine only the copy exists, and the replays use it).
#[test]
fn in_repo_copy_matches_the_shared_samples() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let copy = manifest.join("tests/provider-samples");
    let shared = manifest.join("../shared/provider-samples");
    assert!(
        copy.join("index.json").is_file(),
        "the samples must be copied into {}",
        copy.display()
    );
    if !shared.join("index.json").is_file() {
        eprintln!("no {} to compare the copy with", shared.display());
        return;
    }
    let mut files = vec!["index.json".to_string()];
    for sample in &index().samples {
        files.extend(sample.responses.iter().map(|r| r.file.clone()));
    }
    let stale: Vec<&String> = files
        .iter()
        .filter(|file| std::fs::read(copy.join(file)).ok() != std::fs::read(shared.join(file)).ok())
        .collect();
    assert!(
        stale.is_empty(),
        "tests/provider-samples differs from {} in {stale:?}: copy the shared samples again",
        shared.display()
    );
}

#[test]
fn the_checkers_catch_what_they_are_for() {
    use serde_json::json;
    let call =
        json!({"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}});
    let good = vec![
        json!({"role": "system", "content": "s"}),
        json!({"role": "user", "content": "hi\n<system-reminder>\nx\n</system-reminder>"}),
        json!({"role": "assistant", "content": null, "tool_calls": [call]}),
        json!({"role": "tool", "tool_call_id": "c1", "content": "40 C"}),
    ];
    assert!(
        order_violations(&good).is_empty(),
        "{:?}",
        order_violations(&good)
    );

    let mut reminder_after_tool = good.clone();
    reminder_after_tool
        .push(json!({"role": "user", "content": "<system-reminder>\nx\n</system-reminder>"}));
    let found = order_violations(&reminder_after_tool).join("\n");
    assert!(
        found.contains("no_user_after_tool") && found.contains("no_reminder_message"),
        "{found}"
    );

    let two_users = vec![
        json!({"role": "system", "content": "s"}),
        json!({"role": "user", "content": "hi"}),
        json!({"role": "user", "content": "again"}),
    ];
    assert!(order_violations(&two_users)
        .join("\n")
        .contains("no_consecutive_user"));

    let unanswered = vec![good[0].clone(), good[1].clone(), good[2].clone()];
    assert!(order_violations(&unanswered)
        .join("\n")
        .contains("tool_results_follow_calls"));

    let body = concat!(
        ": OPENROUTER PROCESSING\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"a\",",
        "\"reasoning_details\":[{\"type\":\"reasoning.text\",\"text\":\"a\",\"index\":0}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"b\",",
        "\"reasoning_details\":[{\"type\":\"reasoning.text\",\"text\":\"b\",\"signature\":\"sig\",\"index\":0}],",
        "\"tool_calls\":[{\"id\":\"c1\",\"extra_content\":{\"google\":{\"thought_signature\":\"t\"}},",
        "\"function\":{\"name\":\"weather\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: [DONE]\n\n",
    );
    let state = streamed_state(body);
    assert_eq!(state.reasoning_content, "ab");
    assert_eq!(details_text(&state.reasoning_details), "ab");
    assert_eq!(details_signatures(&state.reasoning_details), ["sig"]);
    assert_eq!(state.extra_content.len(), 1);
    let made = [ExpectedCall {
        id: "c1".into(),
        name: "weather".into(),
        arguments: "{}".into(),
    }];
    let bare = &good[2];
    let found = echo_violations(bare, &made, &state).join("\n");
    for rule in [
        "echo_reasoning_content",
        "echo_reasoning_details",
        "echo_extra_content",
    ] {
        assert!(found.contains(rule), "{rule} not caught: {found}");
    }
    let echoed = json!({
        "role": "assistant", "content": null, "reasoning_content": "ab",
        "reasoning_details": state.reasoning_details,
        "tool_calls": [{"id": "c1", "type": "function",
            "extra_content": {"google": {"thought_signature": "t"}},
            "function": {"name": "weather", "arguments": "{}"}}],
    });
    assert!(echo_violations(&echoed, &made, &state).is_empty());

    assert_eq!(
        split_events(b"a\n\nb\r\n\r\nc").concat(),
        b"a\n\nb\r\n\r\nc"
    );
    assert_eq!(split_events(b"a\n\nb\r\n\r\nc").len(), 3);
}
